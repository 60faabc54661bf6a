//! The study's own path: the α/β kernel and the guesses, iterated until the guesses form
//! a Richman function, with retirement of proved positions, checkpoints and interruption.
//! This is the reference the other paths must agree with to the byte.

use std::path::{Path, PathBuf};
use std::time::Instant;

use super::checkpoint;
use super::guesses::Guesses;
use super::kernel::Kernel;
use super::{
    Iteration, IterationRecord, KernelStats, Outcome, RichmanTest, Run, Settings, Timings,
    class_totals,
};
use crate::certificate;
use crate::error::Error;
use crate::geometry::Board;
use crate::graph::Graph;
use crate::index::Index;
use crate::progress::{Control, Observer, timed};
use crate::resources;
use crate::value::Images;

/// Which positions are proved final, and when to look again.
///
/// A look builds the game of the kernel's live options and takes the positions whose
/// guesses its certificate proves final ([`certificate::proved_final`]); the kernel then
/// retires those that no unproved position needs. Each look doubles the wait before the
/// next, up to [`MAX_WAIT_LOOKS`] intervals: the early iterations are cheap (few limbs),
/// and a look costs about as much as ten late iterations.
struct Retirement {
    proved: Vec<bool>,
    /// Per class, the first look at which every position of the class was proved.
    proved_at: Vec<Option<u32>>,
    every: u32,
    wait: u32,
    next_look: u32,
}

/// The longest wait between two looks for positions to retire, in look intervals.
const MAX_WAIT_LOOKS: u32 = 8;

impl Retirement {
    /// Looks every `every` iterations (0: never).
    fn new(positions: usize, classes: usize, every: u32) -> Retirement {
        Retirement {
            proved: vec![false; positions],
            proved_at: vec![None; classes],
            every,
            wait: every,
            next_look: every,
        }
    }

    /// At the kernel's iteration: if a look is due, prove what can be, retire what that
    /// allows.
    fn look(&mut self, kernel: &mut Kernel, guesses: &Guesses, class_of: &[u8]) {
        let n = kernel.iteration();
        if self.every == 0 || n < self.next_look {
            return;
        }
        let now = certificate::proved_final(guesses, &kernel.live_game());
        let mut newly = false;
        for (p, now) in self.proved.iter_mut().zip(now) {
            newly |= now && !*p;
            *p |= now;
        }
        if newly {
            kernel.retire(&self.proved);
        }
        self.wait = (2 * self.wait).min(MAX_WAIT_LOOKS * self.every);
        self.next_look = n + self.wait;
        let mut all = vec![true; self.proved_at.len()];
        for (&c, &p) in class_of.iter().zip(&self.proved) {
            all[c as usize] &= p;
        }
        for (at, all) in self.proved_at.iter_mut().zip(all) {
            if all && at.is_none() {
                *at = Some(n);
            }
        }
    }
}

/// Before the kernel widens its values: refuse, with the estimate, a widening that would
/// not fit in memory. `estimate` gives the run's bytes at a width in limbs.
pub(super) fn check_widening(
    kernel: &Kernel,
    board: Board,
    estimate: impl Fn(usize) -> u64,
) -> Result<(), Error> {
    if !kernel.needs_widening() {
        return Ok(());
    }
    let wider = kernel.next_width();
    resources::check(
        estimate(wider),
        &format!(
            "iteration {} of {board} ({} bits per value)",
            kernel.iteration() + 1,
            64 * wider - 1
        ),
    )
}

/// What the kernel's shortcuts achieved (no classes proved: the caller adds them).
pub(super) fn kernel_stats(kernel: &Kernel, graph: &Graph) -> KernelStats {
    let (live_white, live_black) = kernel.live_options();
    let [frozen_alpha, frozen_beta] = kernel.frozen_counts();
    KernelStats {
        options: graph.edge_count() - 4,
        live_options: live_white + live_black,
        frozen_alpha,
        frozen_beta,
        limbs: kernel.width(),
        retired: kernel.retired(),
        proved_at: Default::default(),
    }
}

/// Initial number of limbs per value: enough for `iterations` if known, else 1024 bits.
pub fn initial_width(max_iterations: Option<u32>) -> usize {
    let bits = max_iterations.unwrap_or(1023) as usize + 1;
    bits.div_ceil(64).max(2)
}

/// Where a run starts: iteration 0, or a checkpoint's state and interval.
struct Start {
    kernel: Kernel,
    guesses: Guesses,
    quiet: u32,
    history: Vec<IterationRecord>,
    every: Option<u32>,
}

/// The state a run starts from: iteration 0, or the newest valid checkpoint.
fn starting_state(
    board: Board,
    settings: &Settings,
    obs: &dyn Observer,
    control: &Control<'_>,
    graph: &Graph,
) -> Result<Start, Error> {
    if let (true, Some(dir)) = (control.resume, &control.checkpoint_dir) {
        let (state, refused) = checkpoint::newest(dir, board, graph.nodes())?;
        for e in refused {
            obs.notice(&format!("skipping {e}"));
        }
        if let Some(st) = state {
            obs.notice(&format!("resuming from iteration {}", st.n));
            if let Some(cap) = settings.max_iterations.filter(|&cap| st.n >= cap) {
                obs.notice(&format!(
                    "the checkpoint is at iteration {}: --max-iterations {cap} has already \
                     been reached, so no iteration is run (give --max-iterations above {} to \
                     go on)",
                    st.n, st.n
                ));
            }
            let kernel = Kernel::restore(graph, st.n, st.width, st.rows);
            let guesses = Guesses::restore(st.values, st.last_change, st.width);
            return Ok(Start {
                kernel,
                guesses,
                quiet: st.quiet,
                history: st.history,
                every: Some(st.every),
            });
        }
        obs.notice("no checkpoint to resume from: starting at iteration 0");
    }
    let kernel = Kernel::new(graph, initial_width(settings.max_iterations));
    let guesses = Guesses::new(graph.nodes(), kernel.width());
    Ok(Start {
        kernel,
        guesses,
        quiet: 0,
        history: Vec::new(),
        every: None,
    })
}

fn save_checkpoint(
    dir: &Path,
    board: Board,
    kernel: &Kernel,
    guesses: &Guesses,
    quiet: u32,
    history: &[IterationRecord],
    every: u32,
) -> Result<PathBuf, Error> {
    let nodes = kernel.rows().len() / (2 * kernel.width());
    let state = checkpoint::State {
        board,
        n: kernel.iteration(),
        width: kernel.width(),
        rows: kernel.rows().to_vec(),
        values: (0..nodes).map(|i| guesses.value(i).clone()).collect(),
        last_change: (0..nodes).map(|i| guesses.last_change(i)).collect(),
        quiet,
        history: history.to_vec(),
        every,
    };
    checkpoint::save(dir, &state)
}

/// The guessing path on the positions of `index` with checkpoints, resumption and a stop
/// flag. Errors come from checkpoints and resources only (an unusable checkpoint on
/// resume, a failed save, too little memory).
pub(super) fn run(
    index: &Index,
    graph: &Graph,
    options: &Settings,
    obs: &dyn Observer,
    control: &Control<'_>,
) -> Result<Run, Error> {
    let board = index.board();
    let mut timings = Timings::default();
    let classes = index.classes().len();
    let class_of: Vec<u8> = (0..graph.positions())
        .map(|i| index.class_of(i) as u8)
        .collect();

    let Start {
        mut kernel,
        mut guesses,
        mut quiet,
        mut history,
        every: saved_every,
    } = starting_state(board, options, obs, control, graph)?;
    let every = options.checkpoint_every.or(saved_every);
    let mut first_richman = None;
    let mut richman_tests = Vec::new();
    let mut test_seconds = 0.0;
    let (mut kernel_seconds, mut update_seconds) = (0.0, 0.0);
    let mut retirement = Retirement::new(graph.positions(), classes, options.retire_every);
    let mut retire_seconds = 0.0;
    let mut iterate_seconds = 0.0;
    let stopped = timed(obs, "iterate", &mut iterate_seconds, || {
        loop {
            let n = kernel.iteration();
            if control.stopping() {
                let saved = match (&control.checkpoint_dir, every) {
                    (Some(dir), Some(e)) => Some(save_checkpoint(
                        dir, board, &kernel, &guesses, quiet, &history, e,
                    )?),
                    _ => None,
                };
                return Ok(Some(saved));
            }
            let measure = options.measure_every > 0 && n.is_multiple_of(options.measure_every);
            if n > 0 && (quiet >= options.check_every.max(1) || measure) {
                if quiet >= options.check_every.max(1) {
                    quiet = 0;
                }
                let t = Instant::now();
                let bad = certificate::violations(&guesses, graph);
                test_seconds += t.elapsed().as_secs_f64();
                obs.richman_test(n, bad.len());
                let mut per_class = vec![0u32; classes];
                for &p in &bad {
                    per_class[class_of[p as usize] as usize] += 1;
                }
                richman_tests.push(RichmanTest {
                    n,
                    violations: per_class,
                });
                if bad.is_empty() {
                    first_richman = Some(
                        (0..graph.positions())
                            .map(|i| guesses.last_change(i))
                            .max()
                            .unwrap_or(0),
                    );
                    return Ok(None);
                }
            }
            if options.max_iterations.is_some_and(|m| n >= m) {
                // A capped run can be continued later with a higher cap.
                if let (Some(dir), Some(e)) = (&control.checkpoint_dir, every)
                    && !(e > 0 && n.is_multiple_of(e))
                {
                    save_checkpoint(dir, board, &kernel, &guesses, quiet, &history, e)?;
                }
                return Ok(None);
            }
            check_widening(&kernel, board, |width| {
                super::memory::estimate_bytes(graph.nodes(), graph.edge_count(), width)
            })?;
            if kernel.ensure_capacity() {
                guesses.sync_width(&kernel);
            }
            let t = Instant::now();
            // A guess proved final cannot leave its interval: no need to look.
            let proved = &retirement.proved;
            let out = kernel.step(|f| !proved[f.node] && guesses.falls_out(f));
            kernel_seconds += t.elapsed().as_secs_f64();
            let t = Instant::now();
            guesses.update(&kernel, &out);
            quiet = if out.is_empty() { quiet + 1 } else { 0 };
            update_seconds += t.elapsed().as_secs_f64();
            let mut changed = vec![0u32; classes];
            for &p in &out {
                changed[class_of[p as usize] as usize] += 1;
            }
            history.push(IterationRecord {
                n: kernel.iteration(),
                changed,
            });
            let t = Instant::now();
            retirement.look(&mut kernel, &guesses, &class_of);
            retire_seconds += t.elapsed().as_secs_f64();
            obs.iteration(kernel.iteration(), out.len(), kernel.fraction_bits());
            if let (Some(dir), Some(e)) = (&control.checkpoint_dir, every)
                && e > 0
                && kernel.iteration().is_multiple_of(e)
            {
                save_checkpoint(dir, board, &kernel, &guesses, quiet, &history, e)?;
            }
        }
    })?;
    if let Some(checkpoint) = stopped {
        return Ok(Run::Interrupted {
            n: kernel.iteration(),
            checkpoint,
        });
    }
    timings.iterate = iterate_seconds;
    timings.richman_tests = test_seconds;
    timings.retirement = retire_seconds;
    timings.kernel = kernel_seconds;
    timings.guess_updates = update_seconds;

    let mut certify_seconds = 0.0;
    let certificate = first_richman.map(|_| {
        timed(obs, "certify", &mut certify_seconds, || {
            certificate::certify(&guesses, graph)
        })
    });
    timings.certify = certify_seconds;

    let mut kernel_stats = kernel_stats(&kernel, graph);
    kernel_stats.proved_at = index
        .classes()
        .iter()
        .zip(&retirement.proved_at)
        .filter_map(|(ci, at)| Some((ci.material().to_string(), (*at)?)))
        .collect();
    let nodes = graph.nodes();
    let last_change = (0..nodes).map(|i| guesses.last_change(i)).collect();
    let width = kernel.width().min(8);
    let values = Images::new(guesses.into_values(), width);
    let guess_changes = class_totals(&history, classes);
    Ok(Run::Finished(Box::new(Outcome {
        values,
        certificate,
        iteration: Iteration {
            first_richman_iteration: first_richman,
            iterations_run: kernel.iteration(),
            history,
            settled: false,
            richman_tests,
            kernel: kernel_stats,
            last_change,
            guess_changes: Some(guess_changes),
            settled_counts: None,
            timings,
        },
    })))
}
