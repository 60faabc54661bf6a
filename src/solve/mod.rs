//! The second method (`--method solve`): exact values from fixed strategies, whose cost
//! follows the size of the answer rather than the length of the study's iteration.
//!
//! 1. [`approx`]: floating-point value iteration gives approximate values;
//! 2. [`strategy::from_approx`]: one White and one Black move per position, near-greedy
//!    with the lowest progress level;
//! 3. [`evaluate`]: the exact values of the chain those moves make (strongly connected
//!    components from the sinks up, each an exact mean or an exact linear solve);
//! 4. [`strategy::improve`]: switch every move that is strictly worse than the best by the
//!    exact values, and go back to 3 until nothing switches (then every equation holds);
//! 5. the certificate (SPEC §2) on the result: T covering every x > 0 proves x = α, T′
//!    covering every x < 1 proves x = β. If the side asked for is not proved, the moves are
//!    re-chosen by the certificate's levels and the loop goes on.
//!
//! The proof does not care where a candidate comes from: floating point only proposes,
//! exact arithmetic and the certificate decide. α and β are solved apart (infinite play
//! counting 0, resp. 1) when one candidate does not prove both.

pub mod approx;
pub mod evaluate;
pub mod keep;
pub mod linear;
pub mod strategy;

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::certificate::{self, Certificate};
use crate::graph::Graph;
use crate::guess::{Guesses, Value};

pub use evaluate::EvalStats;
pub use keep::{BoundState, BoundStateRef, Keeper};

use keep::{EvalState, EvalStateRef, SolvedRef};
pub use strategy::Strategies;

/// Which limit a solve aims at: α (play that never ends counts as a win for Black) or β
/// (it counts as a win for White).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// The least Richman function, limit of αₙ.
    Alpha,
    /// The greatest Richman function, limit of βₙ.
    Beta,
}

/// One round of evaluation and improvement.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Round {
    /// The exact evaluation of the strategies.
    pub evaluation: EvalStats,
    /// White moves switched to strictly better ones after it.
    pub white_switches: usize,
    /// Black moves switched.
    pub black_switches: usize,
    /// Seconds for the evaluation.
    pub evaluate_seconds: f64,
    /// Seconds for the improvement check.
    pub improve_seconds: f64,
}

/// What a solve did, for `summary.json`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SolveStats {
    /// The limit aimed at.
    pub bound: Bound,
    /// Floating-point sweeps.
    pub float_sweeps: u32,
    /// The largest change in the last sweep.
    pub float_last_change: f64,
    /// Seconds of floating-point iteration.
    pub float_seconds: f64,
    /// Seconds choosing the first strategies.
    pub strategy_seconds: f64,
    /// Evaluation and improvement rounds, in order.
    pub rounds: Vec<Round>,
    /// Certificates run (one, unless the moves had to be re-chosen by levels).
    pub certificates: u32,
    /// Seconds of certificates.
    pub certify_seconds: f64,
}

/// A solve's result: exact values proved (by `certificate`) to be α or β as asked.
pub struct Candidate {
    /// The exact value of every node, with fixed-point images for the certificate.
    pub guesses: Guesses,
    /// The certificate of the values on the whole game.
    pub certificate: Certificate,
    /// Statistics.
    pub stats: SolveStats,
    /// The final strategies (with their tie-break levels): from them a resumed run
    /// re-evaluates this bound without solving it again.
    pub strategies: Strategies,
    /// White's and Black's tie-break levels of the first strategies.
    pub levels: (Vec<u32>, Vec<u32>),
}

impl Candidate {
    /// The state to resume this bound from: its final strategies.
    pub fn kept(&self) -> BoundStateRef<'_> {
        BoundStateRef {
            stats: &self.stats,
            strategies: &self.strategies,
            white_levels: &self.levels.0,
            black_levels: &self.levels.1,
            evaluation: EvalStateRef::default(),
        }
    }

    /// The exact value of position `p`.
    pub fn value(&self, p: usize) -> &Value {
        self.guesses.value(p)
    }

    /// The exact values of the first `n` nodes (the positions), in order.
    pub fn values(&self, n: usize) -> Vec<Value> {
        (0..n).map(|p| self.value(p).clone()).collect()
    }
}

/// Tuning of a solve.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Stop the floating-point iteration once a sweep moves no value by more than this.
    pub float_tolerance: f64,
    /// ... or after this many sweeps.
    pub max_sweeps: u32,
    /// Moves within this of the best approximate value count as near-greedy.
    pub near: f64,
    /// Give up after this many evaluation rounds.
    pub max_rounds: u32,
    /// Give up after this many certificates that do not prove the side asked for.
    pub max_certificates: u32,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            float_tolerance: 1e-15,
            max_sweeps: 100_000,
            near: 1e-12,
            max_rounds: 200,
            max_certificates: 4,
        }
    }
}

/// Progress of a solve, for display. The callback answers whether to go on.
pub enum Event<'a> {
    /// A stage starts.
    Stage(&'a str),
    /// A round finished.
    Round(&'a Round),
    /// A large system's refinement has reached `bits` bits of scale (systems of at least
    /// [`evaluate::REPORTED_SYSTEM`] positions, after each round).
    Refinement {
        /// Positions of the system.
        positions: usize,
        /// Bits of the scale so far.
        bits: u64,
    },
    /// An exact evaluation has solved `done` of `total` components.
    Components {
        /// Components solved.
        done: usize,
        /// Components of the chain.
        total: usize,
    },
}

/// Why a solve returned no values.
#[derive(Debug)]
pub enum SolveError {
    /// The progress callback asked to stop.
    Stopped,
    /// No proof was reached (the reason); never a wrong value instead.
    Failed(String),
}

impl From<String> for SolveError {
    fn from(why: String) -> SolveError {
        SolveError::Failed(why)
    }
}

/// The progress callback: told of each [`Event`], answers whether to go on.
pub type Progress<'a> = dyn Fn(Event<'_>) -> bool + Sync + 'a;

/// The exact values of every position as [`Guesses`] (fixed-point images wide enough for
/// most comparisons to be decided without rationals), taking them over without a copy.
pub fn guesses_of(values: Vec<Value>) -> Guesses {
    let bits = values.iter().map(|v| v.denom().bits()).max().unwrap_or(1) as usize;
    Guesses::from_values(values, (2 * bits / 64 + 2).clamp(2, 8))
}

/// Whether `cert` proves that its values are the limit `bound`.
pub fn proves(cert: &Certificate, bound: Bound) -> bool {
    cert.violations.is_empty()
        && match bound {
            Bound::Alpha => cert.alpha_failures.is_empty(),
            Bound::Beta => cert.beta_failures.is_empty(),
        }
}

/// Solve for the limit `bound` exactly, with a certificate that proves it (or an error
/// saying why no proof was reached; never an unproved value).
pub fn solve_bound(
    graph: &Graph,
    bound: Bound,
    settings: &Settings,
    progress: &Progress<'_>,
) -> Result<Candidate, SolveError> {
    solve_bound_kept(graph, bound, settings, progress, None, &Keeper::none())
}

/// The first strategies of a solve: floating-point values, then near-greedy moves with the
/// lowest progress level.
fn first_strategies(
    graph: &Graph,
    bound: Bound,
    settings: &Settings,
    go_on: &dyn Fn(Event<'_>) -> Result<(), SolveError>,
) -> Result<BoundState, SolveError> {
    go_on(Event::Stage("float"))?;
    let t = Instant::now();
    let approx = approx::iterate(graph, bound, settings.float_tolerance, settings.max_sweeps);
    let float_seconds = t.elapsed().as_secs_f64();
    go_on(Event::Stage("strategies"))?;
    let t = Instant::now();
    let (strategies, lw, lb) = strategy::from_approx(graph, &approx.values, settings.near);
    Ok(BoundState {
        stats: SolveStats {
            bound,
            float_sweeps: approx.sweeps,
            float_last_change: approx.last_change,
            float_seconds,
            strategy_seconds: t.elapsed().as_secs_f64(),
            rounds: Vec::new(),
            certificates: 0,
            certify_seconds: 0.0,
        },
        strategies,
        white_levels: lw,
        black_levels: lb,
        evaluation: EvalState::default(),
    })
}

/// [`solve_bound`], resuming from `from` (a state kept by an earlier run of the same
/// bound on the same graph; see [`BoundState::fits`]) and handing its state to `keeper`
/// when the run is stopping and whenever a save is due.
pub fn solve_bound_kept(
    graph: &Graph,
    bound: Bound,
    settings: &Settings,
    progress: &Progress<'_>,
    from: Option<BoundState>,
    keeper: &Keeper<'_>,
) -> Result<Candidate, SolveError> {
    let go_on = |event: Event<'_>| {
        if progress(event) && !keeper.stopping() {
            Ok(())
        } else {
            Err(SolveError::Stopped)
        }
    };
    let mut now = match from {
        Some(state) if state.stats.bound == bound && state.fits(graph) => state,
        _ => first_strategies(graph, bound, settings, &go_on)?,
    };
    loop {
        if let Err(stop) = go_on(Event::Stage("exact")) {
            keeper.keep(&now.kept(EvalStateRef::default()));
            return Err(stop);
        }
        let values = improve_until_richman(graph, settings, &mut now, progress, keeper)?;
        if let Err(stop) = go_on(Event::Stage("certify")) {
            // Every value is known: a resumed run takes them all back, finds no better
            // move (one more round in its statistics) and certifies.
            let all: Vec<u32> = (0..graph.positions() as u32).collect();
            keeper.keep(&now.kept(EvalStateRef {
                solved: SolvedRef::At {
                    parts: vec![&all],
                    x: &values,
                },
                running: Vec::new(),
            }));
            return Err(stop);
        }
        let t = Instant::now();
        let mut values = values;
        values.truncate(graph.positions());
        let guesses = guesses_of(values);
        let cert = certificate::certify(&guesses, graph);
        now.stats.certify_seconds += t.elapsed().as_secs_f64();
        now.stats.certificates += 1;
        if proves(&cert, bound) {
            return Ok(Candidate {
                guesses,
                certificate: cert,
                stats: now.stats,
                strategies: now.strategies,
                levels: (now.white_levels, now.black_levels),
            });
        }
        if !cert.violations.is_empty() {
            return Err(SolveError::Failed(format!(
                "{} equations fail on values the solver took for a Richman function",
                cert.violations.len()
            )));
        }
        if now.stats.certificates >= settings.max_certificates {
            return Err(SolveError::Failed(format!(
                "after {} certificates the values are still not proved to be {bound:?}",
                now.stats.certificates
            )));
        }
        let exact = strategy::Exact::new((0..graph.nodes()).map(|i| guesses.value(i)));
        now.strategies = strategy::from_certificate(graph, &exact, &cert, &now.strategies);
    }
}

/// Evaluate and improve `now`'s strategies until no move switches (the first evaluation
/// from `now`'s kept evaluation); returns the exact values of every node.
fn improve_until_richman(
    graph: &Graph,
    settings: &Settings,
    now: &mut BoundState,
    progress: &Progress<'_>,
    keeper: &Keeper<'_>,
) -> Result<Vec<Value>, SolveError> {
    loop {
        if now.stats.rounds.len() as u32 >= settings.max_rounds {
            return Err(SolveError::Failed(format!(
                "strategy improvement did not settle in {} rounds",
                settings.max_rounds
            )));
        }
        let t = Instant::now();
        let from = std::mem::take(&mut now.evaluation);
        let (values, evaluation) = {
            let save = |evaluation: EvalStateRef<'_>| keeper.keep(&now.kept(evaluation));
            evaluate::evaluate_kept(
                graph,
                &now.strategies,
                now.stats.bound,
                progress,
                from,
                keeper,
                &save,
            )?
        };
        let evaluate_seconds = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let exact = strategy::Exact::new(values.iter());
        let (white_switches, black_switches) = strategy::improve(
            graph,
            &exact,
            &mut now.strategies,
            &now.white_levels,
            &now.black_levels,
        );
        let round = Round {
            evaluation,
            white_switches,
            black_switches,
            evaluate_seconds,
            improve_seconds: t.elapsed().as_secs_f64(),
        };
        let go_on = progress(Event::Round(&round)) && !keeper.stopping();
        now.stats.rounds.push(round);
        if white_switches + black_switches == 0 {
            return Ok(values);
        }
        if !go_on {
            // The improved strategies, to be evaluated on resumption.
            keeper.keep(&now.kept(EvalStateRef::default()));
            return Err(SolveError::Stopped);
        }
    }
}
