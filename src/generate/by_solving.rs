//! The solve method (`--method solve`) as pipeline stages: index → graph → α by exact
//! solves under improving strategies ([`crate::solve`]) → β too, only if α's certificate
//! does not also prove β → per-class report. The certificate of each candidate is part of
//! its solve: no value leaves here unproved.

use std::sync::atomic::Ordering as AtomicOrdering;
use std::time::Instant;

use num_traits::Zero;

use super::{
    Control, Method, Observer, Options, Run, Solution, Timings, UpperBound, class_reports, timed,
};
use crate::error::Error;
use crate::graph::Graph;
use crate::index::Index;
use crate::resources;
use crate::solve::{self, Bound, Candidate, Event, Settings, SolveError};

/// Solve one bound, reporting progress to `obs` and stopping when `control` says so.
fn solve_bound(
    graph: &Graph,
    bound: Bound,
    obs: &dyn Observer,
    control: &Control<'_>,
) -> Result<Candidate, SolveError> {
    let name = match bound {
        Bound::Alpha => "alpha",
        Bound::Beta => "beta",
    };
    let progress = |event: Event<'_>| {
        match event {
            Event::Stage(stage) => obs.notice_detail(&format!("{name}: {stage}")),
            Event::Round(r) => obs.notice_detail(&format!(
                "{name}: exact evaluation {:.2} s ({} components, {} systems, largest {} \
                 positions, {} bits); {} White and {} Black moves switched",
                r.evaluate_seconds,
                r.evaluation.components,
                r.evaluation.systems,
                r.evaluation.largest,
                r.evaluation.max_bits,
                r.white_switches,
                r.black_switches
            )),
            Event::Components { done, total } => obs.components(done, total),
        }
        !control
            .stop
            .is_some_and(|s| s.load(AtomicOrdering::Relaxed))
    };
    solve::solve_bound(graph, bound, &Settings::default(), &progress)
}

/// Add a solve's stage seconds to the run's.
fn add_timings(t: &mut Timings, s: &solve::SolveStats) {
    t.float += s.float_seconds;
    t.strategies += s.strategy_seconds;
    t.exact += s.rounds.iter().map(|r| r.evaluate_seconds).sum::<f64>();
    t.improve += s.rounds.iter().map(|r| r.improve_seconds).sum::<f64>();
    t.certify += s.certify_seconds;
}

/// The solve method's run on one board. Errors: too little memory, a board where no proof
/// was reached, or an interruption (reported as [`Run::Interrupted`]).
pub(super) fn run(
    options: &Options,
    obs: &dyn Observer,
    control: &Control<'_>,
) -> Result<Run, Error> {
    let board = options.board;
    let guessed = crate::index::estimate_positions(board);
    let what = format!("solving {board}");
    let squares = board.len();
    resources::check(
        resources::estimate_solve_bytes(guessed, 20 * guessed, squares),
        &what,
    )?;
    let mut timings = Timings::default();
    let index = timed(obs, "index", &mut timings.index, || Index::new(board));
    let graph = timed(obs, "graph", &mut timings.graph, || Graph::new(&index));
    resources::check(
        resources::estimate_solve_bytes(graph.nodes(), graph.edge_count(), squares),
        &what,
    )?;
    let started = Instant::now();
    let interrupted = || Run::Interrupted {
        n: 0,
        checkpoint: None,
    };
    let failed = |bound: Bound, why: String| {
        Error::Uncertified(format!(
            "the solve method reached no proof of {bound:?} on {board}: {why}"
        ))
    };
    obs.stage("solve");
    let alpha = match solve_bound(&graph, Bound::Alpha, obs, control) {
        Ok(c) => c,
        Err(SolveError::Stopped) => return Ok(interrupted()),
        Err(SolveError::Failed(why)) => return Err(failed(Bound::Alpha, why)),
    };
    add_timings(&mut timings, &alpha.stats);
    let mut stats = vec![alpha.stats.clone()];
    // α's certificate proves β too unless some x < 1 lies outside T′: then β is solved
    // apart, and the positions where it differs are reported.
    let mut alpha_below_beta = Vec::new();
    let mut upper = None;
    if !solve::proves(&alpha.certificate, Bound::Beta) {
        let beta = match solve_bound(&graph, Bound::Beta, obs, control) {
            Ok(c) => c,
            Err(SolveError::Stopped) => return Ok(interrupted()),
            Err(SolveError::Failed(why)) => return Err(failed(Bound::Beta, why)),
        };
        add_timings(&mut timings, &beta.stats);
        stats.push(beta.stats.clone());
        alpha_below_beta = (0..graph.positions())
            .filter(|&p| alpha.value(p) != beta.value(p))
            .map(|p| (p as u32, beta.value(p).clone()))
            .collect();
        upper = Some(UpperBound {
            guesses: beta.guesses,
            certificate: beta.certificate,
        });
    }
    timings.solve = started.elapsed().as_secs_f64();
    obs.stage_done("solve", timings.solve);
    let mut reports = class_reports(&index, &alpha.guesses, Some(&alpha.certificate), None, None);
    let beta_reports = upper
        .as_ref()
        .map(|u| class_reports(&index, &u.guesses, Some(&u.certificate), None, None));
    for (c, (_, report)) in reports.iter_mut().enumerate() {
        let range = index.class_range(c);
        report.alpha_below_beta = Some(
            alpha_below_beta
                .iter()
                .filter(|(p, _)| range.contains(&(*p as usize)))
                .count(),
        );
        // β and its T′ come from β's own certificate where β was solved apart.
        if let Some((_, beta)) = beta_reports.as_ref().map(|b| &b[c]) {
            report.certified_beta = beta.certified_beta;
            report.max_level_black = beta.max_level_black;
        }
    }
    debug_assert!(alpha_below_beta.iter().all(|(_, b)| !b.is_zero()));
    Ok(Run::Finished(Box::new(Solution {
        board,
        method: Method::Solve,
        index,
        graph,
        guesses: alpha.guesses,
        kernel: None,
        first_richman_iteration: None,
        iterations_run: 0,
        classes: reports,
        history: Vec::new(),
        settled: false,
        richman_tests: Vec::new(),
        timings,
        certificate: Some(alpha.certificate),
        kernel_stats: None,
        solve_stats: Some(stats),
        alpha_below_beta,
        beta: upper,
    })))
}
