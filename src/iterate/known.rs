//! The iterate method knowing the answer: the exact values come from the caller (the
//! generator solves them first with the solve method, about a second on 8x8), then αₙ and βₙ are iterated exactly as in the
//! study, but instead of computing every intermediate guess, each position's last change is
//! found as the first n at which αₙ, βₙ lie strictly inside the Stern–Brocot cell of its
//! value ([`super::settle`]). Same first Richman iteration, same per-class `stable_at`, same
//! tables; positions whose last change is found are dropped from the kernel
//! ([`Kernel::compact`]) once no unsettled position needs them, so that the iteration runs
//! on a dense array of the few positions still needed (on 8x8 about 51,000 of 220,000
//! from iteration 320 on).

use std::time::Instant;

use super::kernel::Kernel;
use super::settle::Settling;
use super::{Exact, Iteration, IterationRecord, Outcome, Run, Settings, Timings, class_totals};
use crate::error::Error;
use crate::graph::Graph;
use crate::index::Index;
use crate::progress::{Control, Observer, timed};
use crate::resources;
use crate::value::Value;

/// Look for positions to drop after this many iterations, then this many more each time.
const RETIRE_EVERY: u32 = 64;

/// The iteration with known exact values `exact`, found in `solve_seconds`.
pub(super) fn run(
    index: &Index,
    graph: &Graph,
    options: &Settings,
    obs: &dyn Observer,
    control: &Control<'_>,
    exact: Exact,
    solve_seconds: f64,
) -> Result<Run, Error> {
    let board = index.board();
    let mut timings = Timings {
        solve: solve_seconds,
        ..Timings::default()
    };
    let classes = index.classes().len();
    let positions = graph.positions();
    let class_of: Vec<u8> = (0..positions).map(|i| index.class_of(i) as u8).collect();
    let width = super::guessing::initial_width(options.max_iterations);
    resources::check(
        super::memory::estimate_compacted_bytes(
            positions + 2,
            graph.nodes(),
            graph.edge_count(),
            width,
        ),
        &format!("iterating {board}"),
    )?;
    let mut kernel = Kernel::new(graph, width);
    let values: Vec<&Value> = exact.values.values().iter().collect();
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
            if control.stopping() {
                return Ok(true);
            }
            super::guessing::check_widening(&kernel, board, |width| {
                super::memory::estimate_compacted_bytes(
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
    timings.certify = exact.certify_seconds;
    let settled_counts = class_totals(&history, classes);
    let kernel_stats = super::guessing::kernel_stats(&kernel, graph);
    let Exact {
        values,
        certificate,
        ..
    } = exact;
    // A capped run has not found every last change: it publishes neither values nor
    // tables.
    let certificate = first_richman.is_some().then_some(certificate);
    Ok(Run::Finished(Box::new(Outcome {
        values,
        certificate,
        iteration: Iteration {
            first_richman_iteration: first_richman,
            iterations_run: kernel.iteration(),
            history,
            settled: true,
            richman_tests: Vec::new(),
            kernel: kernel_stats,
            last_change,
            guess_changes: None,
            settled_counts: Some(settled_counts),
            timings,
        },
    })))
}
