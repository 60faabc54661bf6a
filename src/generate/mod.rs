//! The generation pipeline as named, timed stages: index → graph → a method → certificate
//! → per-class report. Two methods make the candidate values:
//!
//! - [`Method::Iterate`] (`generate/iterate.rs`; `generate/settling.rs` when the values
//!   are solved first): the study's α/β iteration with simplest-rational guesses until
//!   they form a Richman function; it reproduces the published 2644. All classes of a
//!   board are iterated jointly (promotions and captures link them), which is how the
//!   published iteration count is defined.
//! - [`Method::Solve`] (`generate/by_solving.rs`): exact linear solves under fixed strategies,
//!   improved until every equation holds ([`mod@crate::solve`]); its cost follows the size of
//!   the answer, so it reaches boards the iteration cannot.
//!
//! Either way the certificate proves the values; on the boards both reach they agree to the
//! byte.

mod by_solving;
mod iterate;
mod settling;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use num_traits::{One, Zero};
use serde::Serialize;

use crate::certificate::{Certificate, UNREACHED};
use crate::error::Error;
use crate::geometry::Board;
use crate::graph::Graph;
use crate::guess::{Guesses, Value};
use crate::index::Index;
use crate::kernel::Kernel;
use crate::position::{Material, Position};
use crate::solve::SolveStats;

/// How the candidate values are made (the certificate proves them either way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// The study's α/β iteration with simplest-rational guesses (reproduces 2644).
    #[default]
    Iterate,
    /// Exact linear solves under fixed strategies, improved until every equation holds.
    Solve,
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Method::Iterate => "iterate",
            Method::Solve => "solve",
        })
    }
}

/// How a run is configured.
#[derive(Clone, Debug)]
pub struct Options {
    /// The board.
    pub board: Board,
    /// How the values are made.
    pub method: Method,
    /// Stop after this many iterations even if the guesses have not converged.
    pub max_iterations: Option<u32>,
    /// The iterate method: compute every intermediate guess (the study's own way) instead
    /// of solving the exact values first and finding each position's last change by
    /// comparing αₙ, βₙ with the Stern–Brocot parents of its value ([`crate::settle`]).
    /// Checkpoints and resumption use this path.
    pub guesses: bool,
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
            method: Method::Iterate,
            guesses: false,
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
    /// A line of detail on a long stage (the solve method's rounds), for the progress
    /// display only.
    fn notice_detail(&self, _text: &str) {}
    /// The solve method's exact evaluation has solved `done` of `total` components.
    fn components(&self, _done: usize, _total: usize) {}
    /// The solve method is refining a system of `positions` positions, now at `bits` bits.
    fn refinement(&self, _positions: usize, _bits: u64) {}
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
    /// class's guesses never change again (null for the solve method, which has no
    /// iterations).
    pub stable_at: Option<u32>,
    /// The largest denominator among the class's values, in decimal.
    pub max_denominator: String,
    /// Number of decimal digits of `max_denominator`.
    pub max_denominator_digits: usize,
    /// How many times a guess of this class changed over the run (each one is a new
    /// simplest rational computed; null for the solve method).
    pub guess_changes: Option<u64>,
    /// Positions of the class whose guess reached its final value during the run (the
    /// iteration with known exact values; null otherwise: positions of value 0 start there).
    pub settled: Option<u64>,
    /// Positions of the class whose α and β differ (the solve method computes both where
    /// one candidate does not prove them equal; null for the iterate method).
    pub alpha_below_beta: Option<usize>,
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

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Seconds spent in each stage. The stages of the method that did not run are left out of
/// `summary.json`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Timings {
    /// Enumerating and indexing positions.
    pub index: f64,
    /// Building the game graph.
    pub graph: f64,
    /// The α/β iteration with guess tracking.
    #[serde(skip_serializing_if = "is_zero")]
    pub iterate: f64,
    /// Kernel steps, with the per-position guess membership test (part of `iterate`).
    #[serde(skip_serializing_if = "is_zero")]
    pub kernel: f64,
    /// Recomputing the guesses that fell out of [αₙ, βₙ] (part of `iterate`).
    #[serde(skip_serializing_if = "is_zero")]
    pub guess_updates: f64,
    /// Richman tests (part of `iterate`).
    #[serde(skip_serializing_if = "is_zero")]
    pub richman_tests: f64,
    /// The certificate: exact equations and both closures (for the solve method: the
    /// certificates of its candidates, part of `solve`).
    pub certify: f64,
    /// The Stern–Brocot parents of every exact value and their fixed-point images, before
    /// the iteration without guesses.
    #[serde(skip_serializing_if = "is_zero")]
    pub parents: f64,
    /// Looking for positions to retire (part of `iterate`; on the default path, compacting
    /// the kernel).
    #[serde(skip_serializing_if = "is_zero")]
    pub retirement: f64,
    /// The solve method, everything after the graph.
    #[serde(skip_serializing_if = "is_zero")]
    pub solve: f64,
    /// Floating-point value iteration (part of `solve`).
    #[serde(skip_serializing_if = "is_zero")]
    pub float: f64,
    /// Choosing the first strategies (part of `solve`).
    #[serde(skip_serializing_if = "is_zero")]
    pub strategies: f64,
    /// Exact evaluations of the strategies (part of `solve`).
    #[serde(skip_serializing_if = "is_zero")]
    pub exact: f64,
    /// Exact checks for better moves (part of `solve`).
    #[serde(skip_serializing_if = "is_zero")]
    pub improve: f64,
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
    /// options, see [`crate::certificate::proved_final`]). Classes not proved before the end are
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
    /// The method that made the values.
    pub method: Method,
    /// The position index.
    pub index: Index,
    /// The game graph.
    pub graph: Graph,
    /// The final guesses (the values, when converged; α where α < β).
    pub guesses: Guesses,
    /// The kernel with the final αₙ, βₙ of every position (the guessing path; the default
    /// path drops the positions it no longer needs from its kernel, and the solve method has
    /// none).
    pub kernel: Option<Kernel>,
    /// The first n at which sₙ is a Richman function, if the run got there (None for the
    /// solve method, which has no iterations).
    pub first_richman_iteration: Option<u32>,
    /// How many iterations ran (0 for the solve method).
    pub iterations_run: u32,
    /// Per-class results, in [`Material::ALL`] order.
    pub classes: Vec<(Material, ClassReport)>,
    /// Guess changes per iteration (or, when `settled`, positions whose guess reached its
    /// final value at that iteration).
    pub history: Vec<IterationRecord>,
    /// Whether the iteration ran knowing the exact values (no intermediate guesses; see
    /// [`crate::settle`]).
    pub settled: bool,
    /// The Richman tests of this run, in order (a resumed run has only those made after
    /// the resumption).
    pub richman_tests: Vec<RichmanTest>,
    /// Stage timings.
    pub timings: Timings,
    /// The certificate, when the run converged (for the solve method: of the values it
    /// keeps, which are α where α < β).
    pub certificate: Option<Certificate>,
    /// The kernel's shortcuts (the iterate method).
    pub kernel_stats: Option<KernelStats>,
    /// What the solve method did (its α solve, and its β solve if one was needed).
    pub solve_stats: Option<Vec<SolveStats>>,
    /// Positions whose α is below their β, with β (the solve method; empty when α = β
    /// everywhere, which the certificate then proves).
    pub alpha_below_beta: Vec<(u32, Value)>,
    /// β solved apart, when the certificate of α (`guesses`, `certificate`) did not also
    /// prove it (the solve method; None otherwise).
    pub beta: Option<UpperBound>,
}

/// β where it had to be solved apart from α: its exact values and the certificate that
/// proves them (its T′ levels are the ones stored with β).
pub struct UpperBound {
    /// β of every node.
    pub guesses: Guesses,
    /// The certificate of those values: its T′ covers every position with β < 1.
    pub certificate: Certificate,
}

impl Solution {
    /// Whether the values were proved to form a Richman function (the iterate method's
    /// guesses converged; the solve method always gets there or fails).
    pub fn converged(&self) -> bool {
        self.certificate.is_some()
    }

    /// Whether every value kept is proved exact: α = s = β everywhere by one certificate,
    /// or (where β had to be solved apart) α by `certificate` and β by `beta`'s.
    pub fn certified(&self) -> bool {
        use crate::solve::{Bound, proves};
        match (&self.certificate, self.beta_certificate()) {
            (Some(alpha), Some(beta)) => proves(alpha, Bound::Alpha) && proves(beta, Bound::Beta),
            _ => false,
        }
    }

    /// The certificate that answers for β: β's own where β was solved apart.
    pub fn beta_certificate(&self) -> Option<&Certificate> {
        match &self.beta {
            Some(upper) => Some(&upper.certificate),
            None => self.certificate.as_ref(),
        }
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

/// Checkpoints, resumption and interruption of a run (all off by default).
#[derive(Debug, Default)]
pub struct Control<'a> {
    /// Where checkpoints are saved and looked for (`DIR/FxR`).
    pub checkpoint_dir: Option<PathBuf>,
    /// Save a checkpoint every this many iterations, when stopped, and at the cap (None:
    /// never, unless the checkpoint resumed from carries an interval).
    pub checkpoint_every: Option<u32>,
    /// The solve method: also save its state every this many seconds while it runs (it
    /// always saves it when stopped, if `checkpoint_dir` is set).
    pub checkpoint_seconds: Option<u64>,
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

/// Per class, the largest last change of its positions: where its guesses stopped
/// changing.
fn stable_at(index: &Index, guesses: &Guesses) -> Vec<u32> {
    (0..index.classes().len())
        .map(|c| {
            index
                .class_range(c)
                .map(|i| guesses.last_change(i))
                .max()
                .unwrap_or(0)
        })
        .collect()
}

/// Per class, the sum of the per-iteration counts of `history`.
fn class_totals(history: &[IterationRecord], classes: usize) -> Vec<u64> {
    (0..classes)
        .map(|c| history.iter().map(|r| r.changed[c] as u64).sum())
        .collect()
}

/// The per-class reports of a run: `stable_at` and `changes` per class where the method has
/// them (the iterate method).
fn class_reports(
    index: &Index,
    guesses: &Guesses,
    cert: Option<&Certificate>,
    stable_at: Option<&[u32]>,
    changes: Option<&[u64]>,
) -> Vec<(Material, ClassReport)> {
    index
        .classes()
        .iter()
        .enumerate()
        .map(|(c, ci)| {
            let range = index.class_range(c);
            let max_den = range
                .clone()
                .map(|i| guesses.value(i).denom().clone())
                .max()
                .unwrap_or_else(One::one);
            let max_den = if max_den.is_zero() {
                "1".to_string()
            } else {
                max_den.to_string()
            };
            let in_class = |list: &[u32]| {
                list.iter()
                    .filter(|&&p| index.class_of(p as usize) == c)
                    .count()
            };
            let max_level = |levels: &[u32]| {
                range
                    .clone()
                    .map(|i| levels[i])
                    .filter(|&l| l != UNREACHED)
                    .max()
                    .unwrap_or(0)
            };
            let report = ClassReport {
                guess_changes: changes.map(|x| x[c]),
                settled: None,
                alpha_below_beta: None,
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
                stable_at: stable_at.map(|x| x[c]),
                max_denominator_digits: max_den.len(),
                max_denominator: max_den,
            };
            (ci.material(), report)
        })
        .collect()
}

/// Run the whole pipeline on one board.
pub fn solve(options: &Options, obs: &dyn Observer) -> Solution {
    match solve_with(options, obs, &Control::default()) {
        Ok(Run::Finished(sol)) => *sol,
        Ok(Run::Interrupted { .. }) => unreachable!("without a stop flag a run never stops"),
        Err(e) => panic!("{} failed: {e}", options.board),
    }
}

/// Run the whole pipeline on one board with checkpoints, resumption and a stop flag.
/// Errors: an unusable checkpoint on resume, a failed save, too little memory, or (the
/// solve method) a board where no proof was reached.
pub fn solve_with(
    options: &Options,
    obs: &dyn Observer,
    control: &Control<'_>,
) -> Result<Run, Error> {
    match options.method {
        Method::Iterate => iterate::run(options, obs, control),
        Method::Solve => by_solving::run(options, obs, control),
    }
}
