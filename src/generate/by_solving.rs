//! The solve method (`--method solve`) as pipeline stages: index → graph → α by exact
//! solves under improving strategies ([`crate::solve`]) → β too, only if α's certificate
//! does not also prove β → per-class report. The certificate of each candidate is part of
//! its solve: no value leaves here unproved.
//!
//! A stopped run (Ctrl-C, SIGTERM) saves what its solve has kept ([`crate::solve::keep`])
//! as `solve.ckpt` in the board's directory, and with `checkpoint_seconds` also saves it
//! that often while it runs; `resume` continues from it ([`crate::solve_checkpoint`]).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::Ordering as AtomicOrdering;
use std::time::{Duration, Instant};

use num_traits::Zero;

use super::{
    Control, Method, Observer, Options, Run, Solution, Timings, UpperBound, class_reports, timed,
};
use crate::error::Error;
use crate::geometry::Board;
use crate::graph::Graph;
use crate::index::Index;
use crate::resources;
use crate::solve::{
    self, Bound, BoundState, BoundStateRef, Candidate, Event, Keeper, Settings, SolveError,
};
use crate::solve_checkpoint;

/// Where a solve run's checkpoints go, and the last one written.
struct Checkpoints<'a> {
    dir: Option<&'a Path>,
    board: Board,
    graph: &'a Graph,
    obs: &'a dyn Observer,
    saved: Mutex<Option<PathBuf>>,
}

impl Checkpoints<'_> {
    /// Save `states` (α's, then β's if it is being solved); a failure is a notice, and the
    /// run goes on.
    fn save(&self, states: &[&BoundStateRef<'_>]) {
        let Some(dir) = self.dir else {
            return;
        };
        // One save at a time (systems refined in parallel may both find a save due).
        let Ok(mut saved) = self.saved.lock() else {
            return;
        };
        match solve_checkpoint::save(dir, self.board, self.graph, states) {
            Ok(path) => *saved = Some(path),
            Err(e) => self.obs.notice(&format!("checkpoint not saved: {e}")),
        }
    }

    fn last(&self) -> Option<PathBuf> {
        self.saved.lock().ok().and_then(|s| s.clone())
    }
}

/// A line about a state resumed from.
fn resumed_notice(name: &str, state: &BoundState) -> String {
    format!(
        "{name}: resumed after {} exact evaluations, with {} positions of the current one \
         solved and {} systems part-way",
        state.stats.rounds.len(),
        state.evaluation.solved.len(),
        state.evaluation.running.len()
    )
}

/// Solve one bound, reporting progress to `obs`, stopping when `control` says so, from
/// `from` if given; its states go to `keep` (with `before`, α's final state, ahead of β's).
fn solve_bound(
    graph: &Graph,
    bound: Bound,
    obs: &dyn Observer,
    control: &Control<'_>,
    from: Option<BoundState>,
    keep: &Checkpoints<'_>,
    before: Option<&BoundStateRef<'_>>,
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
            Event::Refinement { positions, bits } => obs.refinement(positions, bits),
        }
        true
    };
    let stopping = || {
        control
            .stop
            .is_some_and(|s| s.load(AtomicOrdering::Relaxed))
    };
    let sink = |state: &BoundStateRef<'_>| match before {
        Some(alpha) => keep.save(&[alpha, state]),
        None => keep.save(&[state]),
    };
    let every = control.checkpoint_seconds.map(Duration::from_secs);
    let keeper = Keeper::new(&stopping, every, &sink);
    if let Some(state) = &from {
        obs.notice(&resumed_notice(name, state));
    }
    solve::solve_bound_kept(graph, bound, &Settings::default(), &progress, from, &keeper)
}

/// Add a solve's stage seconds to the run's.
fn add_timings(t: &mut Timings, s: &solve::SolveStats) {
    t.float += s.float_seconds;
    t.strategies += s.strategy_seconds;
    t.exact += s.rounds.iter().map(|r| r.evaluate_seconds).sum::<f64>();
    t.improve += s.rounds.iter().map(|r| r.improve_seconds).sum::<f64>();
    t.certify += s.certify_seconds;
}

/// With `control.resume`, the states kept in the board's checkpoint (none if there is no
/// checkpoint) and its path.
fn states_to_resume(
    control: &Control<'_>,
    board: Board,
    graph: &Graph,
    obs: &dyn Observer,
) -> Result<(Vec<BoundState>, Option<PathBuf>), Error> {
    let Some(dir) = control.checkpoint_dir.as_deref().filter(|_| control.resume) else {
        return Ok((Vec::new(), None));
    };
    match solve_checkpoint::load(dir, board, graph)? {
        Some(states) => Ok((states, Some(solve_checkpoint::path(dir)))),
        None => {
            obs.notice("no checkpoint to resume from: solving from the start");
            Ok((Vec::new(), None))
        }
    }
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
    let dir = control.checkpoint_dir.as_deref();
    let (kept, resumed_from) = states_to_resume(control, board, &graph, obs)?;
    let mut kept = kept.into_iter();
    let keep = Checkpoints {
        dir,
        board,
        graph: &graph,
        obs,
        saved: Mutex::new(None),
    };
    let started = Instant::now();
    // Stopped before saving anything new, a resumed run leaves the state it resumed from.
    let interrupted = || Run::Interrupted {
        n: 0,
        checkpoint: keep.last().or_else(|| resumed_from.clone()),
    };
    let failed = |bound: Bound, why: String| {
        Error::Uncertified(format!(
            "the solve method reached no proof of {bound:?} on {board}: {why}"
        ))
    };
    obs.stage("solve");
    let alpha = match solve_bound(&graph, Bound::Alpha, obs, control, kept.next(), &keep, None) {
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
        let before = alpha.kept();
        let from = kept.next();
        let beta = match solve_bound(
            &graph,
            Bound::Beta,
            obs,
            control,
            from,
            &keep,
            Some(&before),
        ) {
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
