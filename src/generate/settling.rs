//! The iterate method knowing the answer: the exact values are solved first
//! ([`crate::solve`], about a second on 8x8), then αₙ and βₙ are iterated exactly as in the
//! study, but instead of computing every intermediate guess, each position's last change is
//! found as the first n at which αₙ, βₙ lie strictly inside the Stern–Brocot cell of its
//! value ([`crate::settle`]). Same first Richman iteration, same per-class `stable_at`, same
//! tables; positions whose last change is found are dropped from the kernel
//! ([`Kernel::compact`]) once no unsettled position needs them, so that the iteration runs
//! on a dense array of the few positions still needed (on 8x8 about 51,000 of 220,000
//! from iteration 320 on).

use std::sync::atomic::Ordering as AtomicOrdering;
use std::time::Instant;

use super::{
    Control, IterationRecord, Method, Observer, Options, Run, Solution, Timings, class_reports,
    timed,
};
use crate::error::Error;
use crate::graph::Graph;
use crate::guess::Value;
use crate::index::Index;
use crate::kernel::Kernel;
use crate::resources;
use crate::settle::Settling;
use crate::solve::{self, Bound, Candidate, Settings, SolveError};

/// Look for positions to drop after this many iterations, then this many more each time.
const RETIRE_EVERY: u32 = 64;

/// The exact values, if the solve method proves them (α = β everywhere); None otherwise
/// (the caller falls back to the guesses), Err if stopped.
pub(super) fn exact_values(
    graph: &Graph,
    obs: &dyn Observer,
    control: &Control<'_>,
) -> Result<Option<Candidate>, ()> {
    let go_on = |_: solve::Event<'_>| {
        !control
            .stop
            .is_some_and(|s| s.load(AtomicOrdering::Relaxed))
    };
    match solve::solve_bound(graph, Bound::Alpha, &Settings::default(), &go_on) {
        Ok(c) if c.certificate.certified() => Ok(Some(c)),
        Ok(_) => {
            obs.notice("alpha < beta somewhere: computing the guesses instead");
            Ok(None)
        }
        Err(SolveError::Failed(why)) => {
            obs.notice(&format!(
                "no exact values ({why}): computing the guesses instead"
            ));
            Ok(None)
        }
        Err(SolveError::Stopped) => Err(()),
    }
}

/// The iteration with known exact values `exact`, after `timings.solve` seconds of solving.
pub(super) fn run(
    options: &Options,
    obs: &dyn Observer,
    control: &Control<'_>,
    index: Index,
    graph: Graph,
    exact: Candidate,
    mut timings: Timings,
) -> Result<Run, Error> {
    let classes = index.classes().len();
    let positions = graph.positions();
    let class_of: Vec<u8> = (0..positions).map(|i| index.class_of(i) as u8).collect();
    let mut kernel = Kernel::new(
        &graph,
        super::iterate::initial_width(options.max_iterations),
    );
    let values: Vec<&Value> = (0..graph.nodes()).map(|i| exact.guesses.value(i)).collect();
    let mut settling = timed(obs, "parents", &mut timings.parents, || {
        Settling::new(&values, kernel.width())
    });
    let mut settled: Vec<bool> = (0..positions)
        .map(|p| settling.final_from_start(p))
        .collect();
    let mut open = settled.iter().filter(|&&s| !s).count();
    // The kernel's position numbers → the graph's (the kernel drops positions no longer
    // needed, see below).
    let mut original: Vec<u32> = (0..positions as u32).collect();
    let mut last_change = vec![0u32; graph.nodes()];
    let mut history = Vec::new();
    let (mut kernel_seconds, mut retire_seconds, mut iterate_seconds) = (0.0, 0.0, 0.0);
    let mut next_retire = RETIRE_EVERY;
    let stopped = timed(obs, "iterate", &mut iterate_seconds, || {
        loop {
            let n = kernel.iteration();
            if open == 0 || options.max_iterations.is_some_and(|m| n >= m) {
                return Ok(false);
            }
            if control
                .stop
                .is_some_and(|s| s.load(AtomicOrdering::Relaxed))
            {
                return Ok(true);
            }
            super::iterate::check_widening(&kernel, options.board, |width| {
                resources::estimate_compacted_bytes(
                    kernel.nodes(),
                    graph.nodes(),
                    graph.edge_count(),
                    width,
                )
            })?;
            if kernel.ensure_capacity() {
                settling.sync_width(kernel.width(), |i| i >= positions || !settled[i]);
            }
            let t = Instant::now();
            let out = kernel.step(|f| {
                let p = original[f.node] as usize;
                !settled[p] && settling.inside(p, f)
            });
            kernel_seconds += t.elapsed().as_secs_f64();
            let n = kernel.iteration();
            let mut changed = vec![0u32; classes];
            for &p in &out {
                let p = original[p as usize];
                settled[p as usize] = true;
                last_change[p as usize] = n;
                changed[class_of[p as usize] as usize] += 1;
            }
            open -= out.len();
            history.push(IterationRecord { n, changed });
            if n >= next_retire {
                let t = Instant::now();
                let sought: Vec<bool> = original.iter().map(|&p| !settled[p as usize]).collect();
                let kept = kernel.compact(&sought);
                original = kept.iter().map(|&k| original[k as usize]).collect();
                retire_seconds += t.elapsed().as_secs_f64();
                next_retire = n + RETIRE_EVERY;
            }
            obs.iteration(n, out.len(), kernel.fraction_bits());
        }
    })?;
    if stopped {
        return Ok(Run::Interrupted {
            n: kernel.iteration(),
            checkpoint: None,
        });
    }
    let first_richman =
        (open == 0).then(|| last_change[..positions].iter().copied().max().unwrap_or(0));
    timings.iterate = iterate_seconds;
    timings.kernel = kernel_seconds;
    timings.retirement = retire_seconds;
    // The certificate ran inside the solve stage (and its seconds are part of it).
    timings.certify = exact.stats.certify_seconds;
    let Candidate {
        mut guesses,
        certificate,
        ..
    } = exact;
    guesses.set_last_changes(last_change);
    let stable_at = super::stable_at(&index, &guesses);
    let settled_count = super::class_totals(&history, classes);
    // A capped run has not found every last change: it publishes neither values nor
    // tables.
    let certificate = first_richman.is_some().then_some(certificate);
    let mut reports = class_reports(
        &index,
        &guesses,
        certificate.as_ref(),
        Some(&stable_at),
        None,
    );
    for (c, (_, r)) in reports.iter_mut().enumerate() {
        r.settled = Some(settled_count[c]);
    }
    let kernel_stats = super::iterate::kernel_stats(&kernel, &graph);
    Ok(Run::Finished(Box::new(Solution {
        board: options.board,
        method: Method::Iterate,
        index,
        graph,
        iterations_run: kernel.iteration(),
        kernel: None,
        guesses,
        first_richman_iteration: first_richman,
        classes: reports,
        history,
        settled: true,
        richman_tests: Vec::new(),
        timings,
        certificate,
        kernel_stats: Some(kernel_stats),
        solve_stats: None,
        alpha_below_beta: Vec::new(),
        beta: None,
    })))
}
