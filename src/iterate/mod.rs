//! The study's method (`--method iterate`): αₙ and βₙ iterated exactly for all positions of
//! a set of materials jointly (the study's published iteration counts are defined so), each
//! value guessed as the simplest rational between them, until the guesses satisfy every
//! equation. It reproduces the first Richman iteration 2644 on 8x8.
//!
//! Two paths, the same answer:
//! - [`guessing`]: the study's own way ([`kernel`] ⇄ [`guesses`]), with retirement of
//!   proved positions, checkpoints ([`checkpoint`]) and interruption;
//! - [`known`] (the default): the exact values are known first (the caller solves them,
//!   [`ExactValues`]), then the iteration only finds each position's last change, from the
//!   Stern–Brocot parents of its value ([`settle`]).
//!
//! Either way the method hands back candidate values, which the certificate proves, and
//! the record of the iteration ([`Iteration`], written as `convergence.csv` by
//! [`convergence`]).

pub mod checkpoint;
pub mod convergence;
pub mod guesses;
pub mod guessing;
pub mod kernel;
pub mod known;
pub mod memory;
pub mod settle;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::certificate::Certificate;
use crate::error::Error;
use crate::graph::Graph;
use crate::index::Index;
use crate::progress::{Control, Observer};
use crate::value::Images;

/// How the iteration runs.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Stop after this many iterations even if the guesses have not converged.
    pub max_iterations: Option<u32>,
    /// Compute every intermediate guess (the study's own way) instead of solving the exact
    /// values first and finding each position's last change from their Stern–Brocot
    /// parents ([`settle`]). Checkpoints and resumption use this path.
    pub guesses: bool,
    /// Test whether the guesses form a Richman function once they have not changed for
    /// this many iterations. A Richman function never changes again, so this finds it at
    /// most this many iterations late; the result does not depend on it.
    pub check_every: u32,
    /// Also run the Richman test at every multiple of this many iterations (0: never), to
    /// record how many equations fail as the run goes (`convergence.csv`).
    pub measure_every: u32,
    /// Look for positions whose guesses are proved final after this many iterations (0:
    /// never), then after twice as many, and so on up to eight times as many; retire from
    /// the kernel those that no unproved position needs. No result depends on this.
    pub retire_every: u32,
    /// Save a checkpoint every this many iterations, when stopped, and at the cap (None:
    /// never, unless the checkpoint resumed from carries an interval).
    pub checkpoint_every: Option<u32>,
}

impl Default for Settings {
    /// No cap, a Richman test after 16 quiet iterations and at every 256th, looks for
    /// positions to retire at iterations 32, 96 and 224, then every 256.
    fn default() -> Settings {
        Settings {
            max_iterations: None,
            guesses: false,
            check_every: 16,
            measure_every: 256,
            retire_every: 32,
            checkpoint_every: None,
        }
    }
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
    /// options, see [`crate::certificate::proved_final`]). Classes not proved before the
    /// end are missing.
    pub proved_at: BTreeMap<String, u32>,
}

/// Per-iteration record: how many guesses changed, per class.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct IterationRecord {
    /// The iteration n.
    pub n: u32,
    /// Guesses that changed at n (or positions that settled), per class in index order.
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

/// Seconds in the iteration's stages.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    /// The whole α/β iteration.
    pub iterate: f64,
    /// Kernel steps, with the per-position membership or settling test.
    pub kernel: f64,
    /// Recomputing the guesses that fell out of [αₙ, βₙ] (the guessing path).
    pub guess_updates: f64,
    /// Richman tests (the guessing path).
    pub richman_tests: f64,
    /// The certificate.
    pub certify: f64,
    /// The Stern–Brocot parents of every exact value (the default path).
    pub parents: f64,
    /// Looking for positions to retire, or compacting the kernel.
    pub retirement: f64,
    /// Solving the exact values first (the default path).
    pub solve: f64,
}

impl Timings {
    /// The method's own stages by name, for the run's report (the certificate is every
    /// method's stage, counted apart).
    pub fn stages(&self) -> [(&'static str, f64); 7] {
        [
            ("iterate", self.iterate),
            ("kernel", self.kernel),
            ("guess_updates", self.guess_updates),
            ("richman_tests", self.richman_tests),
            ("parents", self.parents),
            ("retirement", self.retirement),
            ("solve", self.solve),
        ]
    }
}

/// The record of an iteration run.
#[derive(Clone, Debug, Default)]
pub struct Iteration {
    /// The first n at which sₙ is a Richman function, if the run got there.
    pub first_richman_iteration: Option<u32>,
    /// How many iterations ran.
    pub iterations_run: u32,
    /// Guess changes per iteration (or, when `settled`, positions whose guess reached its
    /// final value at that iteration).
    pub history: Vec<IterationRecord>,
    /// Whether the iteration ran knowing the exact values (no intermediate guesses).
    pub settled: bool,
    /// The Richman tests of this run, in order (a resumed run has only those made after
    /// the resumption).
    pub richman_tests: Vec<RichmanTest>,
    /// The kernel's shortcuts.
    pub kernel: KernelStats,
    /// Per node, the iteration of its guess's last change.
    pub last_change: Vec<u32>,
    /// Per class, how many guesses changed over the run (the guessing path).
    pub guess_changes: Option<Vec<u64>>,
    /// Per class, positions whose guess reached its final value during the run (the
    /// default path).
    pub settled_counts: Option<Vec<u64>>,
    /// Seconds per stage.
    pub timings: Timings,
}

impl Iteration {
    /// Per class of `index`, the largest last change of its positions: where its guesses
    /// stopped changing.
    pub fn stable_at(&self, index: &Index) -> Vec<u32> {
        (0..index.classes().len())
            .map(|c| {
                index
                    .class_range(c)
                    .map(|i| self.last_change[i])
                    .max()
                    .unwrap_or(0)
            })
            .collect()
    }
}

/// Per class, the sum of the per-iteration counts of `history`.
fn class_totals(history: &[IterationRecord], classes: usize) -> Vec<u64> {
    (0..classes)
        .map(|c| history.iter().map(|r| r.changed[c] as u64).sum())
        .collect()
}

/// The iteration's candidate values: α = β = s of every node when the run converged
/// (`certificate` then proves them), the record of the run.
pub struct Outcome {
    /// The final guesses of every node (terminal nodes included).
    pub values: Images,
    /// The certificate, when the run converged (None when capped before).
    pub certificate: Option<Certificate>,
    /// The record.
    pub iteration: Iteration,
}

/// How a run of the iteration ended.
pub enum Run {
    /// It ran to the end (converged or capped).
    Finished(Box<Outcome>),
    /// It was stopped at iteration `n`; the checkpoint saved then, if any.
    Interrupted {
        /// The iteration reached.
        n: u32,
        /// The checkpoint written at `n`.
        checkpoint: Option<PathBuf>,
    },
}

/// Proved exact values of a closed game, which spare the iteration its guesses.
pub struct Exact {
    /// The exact value of every node (terminal nodes included), with fixed-point images.
    pub values: Images,
    /// Their certificate (α = β everywhere).
    pub certificate: Certificate,
    /// The seconds the certificate took (part of finding the values).
    pub certify_seconds: f64,
}

/// What the caller found of the exact values before the iteration
/// ([`wants_exact_values`]).
pub enum ExactValues {
    /// Proved values (α = β everywhere) and the seconds it took to find them.
    Solved(Box<Exact>, f64),
    /// None to be had (α < β somewhere, or no proof): the guesses are computed.
    Unproved,
    /// The run was asked to stop while they were being found.
    Stopped,
    /// Not asked for ([`wants_exact_values`] said no).
    NotAsked,
}

/// Whether [`run`] can use exact values found first: not when every intermediate guess is
/// asked for, nor with checkpoints or a resumption (those keep the guessing path, whose
/// state they hold).
pub fn wants_exact_values(settings: &Settings, control: &Control<'_>) -> bool {
    !settings.guesses && settings.checkpoint_every.is_none() && !control.resume
}

/// Run the iteration on `graph` (the positions of `index`, whose graph has no exits: the
/// study iterates its materials jointly). Errors come from checkpoints and resources only.
pub fn run(
    index: &Index,
    graph: &Graph,
    settings: &Settings,
    obs: &dyn Observer,
    control: &Control<'_>,
    exact: ExactValues,
) -> Result<Run, Error> {
    if !graph.exits().is_empty() {
        return Err(Error::Usage(
            "the iterate method runs on closed sets of materials only (the study's \
             three-piece materials); use --method solve for materials that lead elsewhere"
                .into(),
        ));
    }
    // Knowing the exact values, the iteration needs no guesses.
    match exact {
        ExactValues::Solved(exact, seconds) => {
            known::run(index, graph, settings, obs, control, *exact, seconds)
        }
        ExactValues::Stopped => Ok(Run::Interrupted {
            n: 0,
            checkpoint: None,
        }),
        ExactValues::Unproved | ExactValues::NotAsked => {
            guessing::run(index, graph, settings, obs, control)
        }
    }
}
