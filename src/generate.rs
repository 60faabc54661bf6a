//! The generation pipeline as named, timed stages: index → graph → iterate (kernel and
//! guesses) until the guesses form a Richman function → per-class report.
//!
//! All classes of a board are iterated jointly (promotions and captures link them), which is
//! how the published iteration count is defined.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};
use std::time::Instant;

use num_traits::{One, Zero};
use serde::Serialize;

use crate::certificate::{self, Certificate, UNREACHED};
use crate::checkpoint;
use crate::error::Error;
use crate::geometry::Board;
use crate::graph::Graph;
use crate::guess::{Guesses, Value};
use crate::index::Index;
use crate::kernel::Kernel;
use crate::position::{Material, Position};
use crate::resources;

/// How a run is configured.
#[derive(Clone, Debug)]
pub struct Options {
    /// The board.
    pub board: Board,
    /// Stop after this many iterations even if the guesses have not converged.
    pub max_iterations: Option<u32>,
    /// Test whether the guesses form a Richman function once they have not changed for
    /// this many iterations. A Richman function never changes again, so this finds it at
    /// most this many iterations late; the result does not depend on it (the first Richman
    /// iteration is the last change).
    pub check_every: u32,
    /// Also run the Richman test at every multiple of this many iterations (0: never), to
    /// record how many equations fail as the run goes (`convergence.csv`). Like
    /// `check_every`, it changes no value and no first Richman iteration.
    pub measure_every: u32,
    /// Look for positions whose guesses are proved final (by the certificate on the game of
    /// the kernel's live options) after this many iterations (0: never), then after twice
    /// as many, and so on up to eight times as many; retire from the kernel those that no
    /// unproved position needs. Retired positions keep their final guesses; no value, last
    /// change or first Richman iteration depends on this.
    pub retire_every: u32,
}

impl Options {
    /// Defaults for a board: no cap, a Richman test after 16 quiet iterations and at every
    /// 256th iteration, looks for positions to retire at iterations 32, 96 and 224, then
    /// every 256 iterations.
    pub fn new(board: Board) -> Options {
        Options {
            board,
            max_iterations: None,
            check_every: 16,
            measure_every: 256,
            retire_every: 32,
        }
    }
}

/// What a run reports as it goes (progress bars, logs). Every method has a no-op default.
pub trait Observer: Sync {
    /// A named stage starts.
    fn stage(&self, _name: &str) {}
    /// A stage ended after `seconds`.
    fn stage_done(&self, _name: &str, _seconds: f64) {}
    /// Iteration `n` is done; `changed` guesses changed; values use `bits` fraction bits.
    fn iteration(&self, _n: u32, _changed: usize, _bits: usize) {}
    /// A Richman test ran at iteration `n` and found `violations` failing equations
    /// (a lower bound when the cheap filter already failed).
    fn richman_test(&self, _n: u32, _violations: usize) {}
    /// Something the user should know (a checkpoint skipped, a run resumed).
    fn notice(&self, _text: &str) {}
}

/// An observer that reports nothing.
pub struct Silent;
impl Observer for Silent {}

/// Per-class results.
#[derive(Clone, Debug, Serialize)]
pub struct ClassReport {
    /// Number of positions before symmetry reduction.
    pub positions: usize,
    /// Number of positions after symmetry reduction (what is computed and stored).
    pub canonical_positions: usize,
    /// The largest iteration at which a guess of this class changed: from there on the
    /// class's guesses never change again.
    pub stable_at: u32,
    /// The largest denominator among the class's values, in decimal.
    pub max_denominator: String,
    /// Number of decimal digits of `max_denominator`.
    pub max_denominator_digits: usize,
    /// How many times a guess of this class changed over the run (each one is a new
    /// simplest rational computed).
    pub guess_changes: u64,
    /// Positions of the class whose Richman equation fails (null if the run did not
    /// converge; a converged run has none).
    pub violations: Option<usize>,
    /// α = s proved for every position of the class (null if the run did not converge).
    pub certified_alpha: Option<bool>,
    /// β = s proved for every position of the class.
    pub certified_beta: Option<bool>,
    /// Number of quiescent positions (min_b s(P_b) = max_w s(P_w)), after symmetry.
    pub quiescent: Option<usize>,
    /// Largest progress level in White's closure T among the class's positions.
    pub max_level_white: Option<u32>,
    /// Largest progress level in Black's closure T′.
    pub max_level_black: Option<u32>,
}

/// Seconds spent in each stage.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Timings {
    /// Enumerating and indexing positions.
    pub index: f64,
    /// Building the game graph.
    pub graph: f64,
    /// The α/β iteration with guess tracking.
    pub iterate: f64,
    /// Kernel steps, with the per-position guess membership test (part of `iterate`).
    pub kernel: f64,
    /// Recomputing the guesses that fell out of [αₙ, βₙ] (part of `iterate`).
    pub guess_updates: f64,
    /// Richman tests (part of `iterate`).
    pub richman_tests: f64,
    /// The certificate: exact equations and both closures.
    pub certify: f64,
    /// Looking for positions to retire (part of `iterate`).
    pub retirement: f64,
}

/// What the kernel's shortcuts achieved by the end of the run.
#[derive(Clone, Debug, Default, Serialize)]
pub struct KernelStats {
    /// Options in the game graph (White's and Black's, after merging symmetric targets).
    pub options: usize,
    /// Options still live at the end (the others were proved never to be best again).
    pub live_options: usize,
    /// Positions whose α is proved constant and no longer computed.
    pub frozen_alpha: usize,
    /// Positions whose β is proved constant and no longer computed.
    pub frozen_beta: usize,
    /// Limbs per value at the end (fraction bits = 64 · limbs − 1).
    pub limbs: usize,
    /// Positions retired by the end: their values proved final and needed by no
    /// unproved position, so no longer computed.
    pub retired: usize,
    /// Per class, the iteration at which this process had proved the guesses of all the
    /// class's positions final (by the certificate on the game of the kernel's live
    /// options, see [`certificate::proved_final`]). Classes not proved before the end are
    /// missing.
    pub proved_at: BTreeMap<String, u32>,
}

/// Per-iteration record: how many guesses changed, per class.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IterationRecord {
    /// The iteration n.
    pub n: u32,
    /// Guesses that changed at n, per class in [`Material::ALL`] order.
    pub changed: Vec<u32>,
}

/// One Richman test during the run: how many equations failed, per class.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RichmanTest {
    /// The iteration n at which sₙ was tested.
    pub n: u32,
    /// Positions whose equation (or symmetry) failed, per class in the index's order.
    pub violations: Vec<u32>,
}

/// A finished (or capped) run: the graph, the guesses, and the report.
pub struct Solution {
    /// The board.
    pub board: Board,
    /// The position index.
    pub index: Index,
    /// The game graph.
    pub graph: Graph,
    /// The final guesses (the values, when converged).
    pub guesses: Guesses,
    /// The kernel with the final αₙ, βₙ.
    pub kernel: Kernel,
    /// The first n at which sₙ is a Richman function, if the run got there.
    pub first_richman_iteration: Option<u32>,
    /// How many iterations ran.
    pub iterations_run: u32,
    /// Per-class results, in [`Material::ALL`] order.
    pub classes: Vec<(Material, ClassReport)>,
    /// Guess changes per iteration.
    pub history: Vec<IterationRecord>,
    /// The Richman tests of this run, in order (a resumed run has only those made after
    /// the resumption).
    pub richman_tests: Vec<RichmanTest>,
    /// Stage timings.
    pub timings: Timings,
    /// The certificate, when the run converged.
    pub certificate: Option<Certificate>,
    /// The kernel's shortcuts.
    pub kernel_stats: KernelStats,
}

impl Solution {
    /// Whether the guesses were proved to form a Richman function.
    pub fn converged(&self) -> bool {
        self.first_richman_iteration.is_some()
    }

    /// Whether every value is proved exact (α = s = β everywhere).
    pub fn certified(&self) -> bool {
        self.certificate
            .as_ref()
            .is_some_and(Certificate::certified)
    }

    /// The value (final guess) of a position with a white extra piece or bare kings.
    pub fn value(&self, pos: &Position) -> Option<&Value> {
        self.index.index_of(pos).map(|i| self.guesses.value(i))
    }
}

fn timed<T>(obs: &dyn Observer, name: &str, seconds: &mut f64, f: impl FnOnce() -> T) -> T {
    obs.stage(name);
    let t = Instant::now();
    let out = f();
    *seconds = t.elapsed().as_secs_f64();
    obs.stage_done(name, *seconds);
    out
}

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

/// Initial number of limbs per value: enough for `iterations` if known, else 1024 bits.
fn initial_width(max_iterations: Option<u32>) -> usize {
    let bits = max_iterations.unwrap_or(1023) as usize + 1;
    bits.div_ceil(64).max(2)
}

/// Checkpoints, resumption and interruption of a run (all off by default).
#[derive(Debug, Default)]
pub struct Control<'a> {
    /// Where checkpoints are saved and looked for (`DIR/FxR`).
    pub checkpoint_dir: Option<PathBuf>,
    /// Save a checkpoint every this many iterations, when stopped, and at the cap (None:
    /// never, unless the checkpoint resumed from carries an interval).
    pub checkpoint_every: Option<u32>,
    /// Start from the newest valid checkpoint in `checkpoint_dir` (from iteration 0 if
    /// there is none).
    pub resume: bool,
    /// Checked between iterations; once set, the run saves a checkpoint (if checkpoints
    /// are on) and stops.
    pub stop: Option<&'a AtomicBool>,
}

/// How a controlled run ended.
pub enum Run {
    /// It ran to the end (converged or capped).
    Finished(Box<Solution>),
    /// It was stopped at iteration `n`; the checkpoint saved then, if any.
    Interrupted {
        /// The iteration reached.
        n: u32,
        /// The checkpoint written at `n`.
        checkpoint: Option<PathBuf>,
    },
}

/// Run the whole pipeline on one board.
pub fn solve(options: &Options, obs: &dyn Observer) -> Solution {
    match solve_with(options, obs, &Control::default()) {
        Ok(Run::Finished(sol)) => *sol,
        _ => unreachable!("without checkpoints or a stop flag a run neither fails nor stops"),
    }
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
    options: &Options,
    obs: &dyn Observer,
    control: &Control<'_>,
    graph: &Graph,
) -> Result<Start, Error> {
    if let (true, Some(dir)) = (control.resume, &control.checkpoint_dir) {
        let (state, refused) = checkpoint::newest(dir, options.board, graph.nodes())?;
        for e in refused {
            obs.notice(&format!("skipping {e}"));
        }
        if let Some(st) = state {
            obs.notice(&format!("resuming from iteration {}", st.n));
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
    let kernel = Kernel::new(graph, initial_width(options.max_iterations));
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

/// Run the whole pipeline on one board with checkpoints, resumption and a stop flag.
/// Errors come from checkpoints only (an unusable one on resume, a failed save).
pub fn solve_with(
    options: &Options,
    obs: &dyn Observer,
    control: &Control<'_>,
) -> Result<Run, Error> {
    let mut timings = Timings::default();
    let width = initial_width(options.max_iterations);
    let guessed_nodes = crate::index::estimate_positions(options.board);
    resources::check(
        resources::estimate_bytes(guessed_nodes, 20 * guessed_nodes, width),
        &format!("generating {}", options.board),
    )?;
    let index = timed(obs, "index", &mut timings.index, || {
        Index::new(options.board)
    });
    let graph = timed(obs, "graph", &mut timings.graph, || Graph::new(&index));
    let needs = |width: usize| resources::estimate_bytes(graph.nodes(), graph.edge_count(), width);
    resources::check(needs(width), &format!("generating {}", options.board))?;
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
    } = starting_state(options, obs, control, &graph)?;
    let every = control.checkpoint_every.or(saved_every);
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
            if control
                .stop
                .is_some_and(|s| s.load(AtomicOrdering::Relaxed))
            {
                let saved = match (&control.checkpoint_dir, every) {
                    (Some(dir), Some(e)) => Some(save_checkpoint(
                        dir,
                        options.board,
                        &kernel,
                        &guesses,
                        quiet,
                        &history,
                        e,
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
                let bad = certificate::violations(&guesses, &graph);
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
                    save_checkpoint(dir, options.board, &kernel, &guesses, quiet, &history, e)?;
                }
                return Ok(None);
            }
            if kernel.needs_widening() {
                let wider = kernel.next_width();
                resources::check(
                    needs(wider),
                    &format!(
                        "iteration {} of {} ({} bits per value)",
                        n + 1,
                        options.board,
                        64 * wider - 1
                    ),
                )?;
            }
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
                save_checkpoint(dir, options.board, &kernel, &guesses, quiet, &history, e)?;
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
            certificate::certify(&guesses, &graph)
        })
    });
    timings.certify = certify_seconds;

    let (live_white, live_black) = kernel.live_options();
    let [frozen_alpha, frozen_beta] = kernel.frozen_counts();
    let kernel_stats = KernelStats {
        options: graph.edge_count() - 4,
        live_options: live_white + live_black,
        frozen_alpha,
        frozen_beta,
        limbs: kernel.width(),
        retired: kernel.retired(),
        proved_at: index
            .classes()
            .iter()
            .zip(&retirement.proved_at)
            .filter_map(|(ci, at)| Some((ci.material().to_string(), (*at)?)))
            .collect(),
    };
    let reports = index
        .classes()
        .iter()
        .enumerate()
        .map(|(c, ci)| {
            let range = index.class_range(c);
            let stable_at = range
                .clone()
                .map(|i| guesses.last_change(i))
                .max()
                .unwrap_or(0);
            let max_den = range
                .map(|i| guesses.value(i).denom().clone())
                .max()
                .unwrap_or_else(One::one);
            let max_den = if max_den.is_zero() {
                "1".to_string()
            } else {
                max_den.to_string()
            };
            let cert = certificate.as_ref();
            let in_class = |list: &[u32]| {
                list.iter()
                    .filter(|&&p| index.class_of(p as usize) == c)
                    .count()
            };
            let max_level = |levels: &[u32]| {
                index
                    .class_range(c)
                    .map(|i| levels[i])
                    .filter(|&l| l != UNREACHED)
                    .max()
                    .unwrap_or(0)
            };
            let guess_changes = history.iter().map(|r| r.changed[c] as u64).sum();
            let report = ClassReport {
                guess_changes,
                violations: cert.map(|x| in_class(&x.violations)),
                certified_alpha: cert
                    .map(|x| in_class(&x.violations) == 0 && in_class(&x.alpha_failures) == 0),
                certified_beta: cert
                    .map(|x| in_class(&x.violations) == 0 && in_class(&x.beta_failures) == 0),
                quiescent: cert.map(|x| in_class(&x.quiescent)),
                max_level_white: cert.map(|x| max_level(&x.white_levels)),
                max_level_black: cert.map(|x| max_level(&x.black_levels)),
                positions: ci.raw_count(),
                canonical_positions: ci.len(),
                stable_at,
                max_denominator_digits: max_den.len(),
                max_denominator: max_den,
            };
            (ci.material(), report)
        })
        .collect();
    Ok(Run::Finished(Box::new(Solution {
        board: options.board,
        index,
        graph,
        iterations_run: kernel.iteration(),
        kernel,
        guesses,
        first_richman_iteration: first_richman,
        classes: reports,
        history,
        richman_tests,
        timings,
        certificate,
        kernel_stats,
    })))
}
