//! The second method (`--method solve`): exact values from strategies, whose cost follows
//! the size of the answer rather than the length of the study's iteration. It takes the game
//! graph of one or more materials and the values of its terminal nodes (the king captures,
//! and the exits into materials solved before: α's values for α, β's for β).
//!
//! α is the value of a reachability game: White maximises the chance of reaching a
//! terminal that pays (play that never ends pays 0), Black minimises it. β is the same game
//! with the roles turned: Black maximises the chance of reaching a terminal that costs
//! White (play that never ends pays 1). So each bound has a *reacher* (White for α, Black
//! for β) and an *opponent*. The solve:
//!
//! 1. [`approx`]: floating-point value iteration gives approximate values;
//! 2. [`strategy::from_approx`]: one White and one Black move per position, near-greedy
//!    with the lowest progress level;
//! 3. the opponent's best reply to the reacher's moves, exactly: first the positions from
//!    which the opponent can keep the play away from every paying terminal forever
//!    ([`strategy::hold_off`]; worth the bound's stuck value, 0 for α), then the
//!    opponent's strategy improvement on the rest, where every strategy of the opponent
//!    ends the play with probability 1, so that switching to strictly better moves
//!    converges to its optimum: each round an exact evaluation ([`evaluate`]: strongly
//!    connected components from the sinks up, each an exact mean or an exact linear solve);
//! 4. the reacher switches every move strictly worse than its best by those values, and
//!    3 runs again, until the reacher switches nothing. Against best replies a switch to
//!    strictly better moves never lowers the reacher's values and raises them where it
//!    switches (the values before the switch are a sub-solution of the new chain, and 0 on
//!    whatever it cannot leave), so no strategy repeats and the loop ends; at its end the
//!    values are a fixed point that the reacher's strategy guarantees: the bound itself.
//! 5. the certificate (SPEC §2) on the result: T covering every x > 0 proves x = α, T′
//!    covering every x < 1 proves x = β.
//!
//! The proof does not care where a candidate comes from: floating point only proposes,
//! exact arithmetic and the certificate decide.

pub mod approx;
pub mod checkpoint;
pub mod evaluate;
pub mod keep;
pub mod linear;
pub mod memory;
pub mod run;
pub mod spill;
pub mod strategy;

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::boundary::Terminals;
use crate::certificate::{self, Certificate, Start};
use crate::graph::Graph;
use crate::value::{Images, Value};

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

impl Bound {
    /// The value of play that never ends (and of a position from which the chain of fixed
    /// strategies cannot reach a terminal worth anything else): 0 for α, 1 for β.
    pub fn stuck_value(self) -> Value {
        match self {
            Bound::Alpha => Value::zero(),
            Bound::Beta => Value::one(),
        }
    }

    /// Whether White is the side reaching for the terminals (α), rather than Black (β).
    pub fn white_reaches(self) -> bool {
        self == Bound::Alpha
    }
}

/// One evaluation and what was switched after it.
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
    /// Certificates run (one per solve).
    pub certificates: u32,
    /// Seconds of certificates.
    pub certify_seconds: f64,
}

impl SolveStats {
    /// The parts of the solve stage by name, for the run's report (the certificates are
    /// every method's stage, counted apart).
    pub fn stages(&self) -> [(&'static str, f64); 4] {
        [
            ("float", self.float_seconds),
            ("strategies", self.strategy_seconds),
            (
                "exact",
                self.rounds.iter().map(|r| r.evaluate_seconds).sum(),
            ),
            (
                "improve",
                self.rounds.iter().map(|r| r.improve_seconds).sum(),
            ),
        ]
    }
}

/// A solve's result: exact values proved (by `certificate`) to be α or β as asked.
pub struct Candidate {
    /// The exact value of every node (terminal nodes included), with fixed-point images
    /// for the certificate.
    pub values: Images,
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
        &self.values.values()[p]
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
    /// Give up after this many exact evaluations.
    pub max_rounds: u32,
    /// Where and when the exact evaluations move numerators out of the heap (never if
    /// None).
    pub filing: Option<spill::Filing>,
    /// The other bound's values by node, where known (β solved apart after α): values
    /// solved equal to them take their copies ([`evaluate::evaluate_kept`]).
    pub twins: Option<std::sync::Arc<[Option<Value>]>>,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            float_tolerance: 1e-15,
            max_sweeps: 100_000,
            near: 1e-12,
            max_rounds: 10_000,
            filing: None,
            twins: None,
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
    /// An exact evaluation given the other bound's values ([`Settings::twins`]) took
    /// this many of them where its own came out equal.
    Twins {
        /// Values taken.
        shared: usize,
    },
    /// An exact evaluation has moved numerators out of the heap ([`spill::Filing`]).
    Paged {
        /// Bytes of numerators moved.
        bytes: u64,
        /// Values that took the pages of an equal value instead of their own.
        copies: u64,
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

/// Whether `cert` proves that its values are the limit `bound`.
pub fn proves(cert: &Certificate, bound: Bound) -> bool {
    cert.violations.is_empty()
        && match bound {
            Bound::Alpha => cert.alpha_failures.is_empty(),
            Bound::Beta => cert.beta_failures.is_empty(),
        }
}

/// A game to solve: its graph and the values of its terminal nodes for the bound solved
/// (one per node of [`Graph::terminals`]: 1 for the win, 0 for the loss, the exits' α or
/// β).
#[derive(Clone, Copy)]
pub struct Game<'a> {
    /// The graph.
    pub graph: &'a Graph,
    /// The terminal nodes' values, in node order.
    pub terminals: &'a [Value],
    /// The terminal nodes' levels in T and T′.
    pub start: &'a Start,
}

impl<'a> Game<'a> {
    /// The game of `bound` on `graph`, whose terminal nodes are worth `terminals`.
    pub fn of(terminals: &'a Terminals, graph: &'a Graph, bound: Bound) -> Game<'a> {
        let values = match bound {
            Bound::Alpha => &terminals.alpha,
            Bound::Beta => &terminals.beta,
        };
        assert_eq!(
            values.len(),
            graph.terminals().len(),
            "one value per terminal"
        );
        Game {
            graph,
            terminals: values,
            start: &terminals.start,
        }
    }

    /// A game whose only terminal nodes are the two king captures.
    pub fn closed(graph: &'a Graph) -> Game<'a> {
        assert!(graph.exits().is_empty(), "the graph has exits");
        static CLOSED: std::sync::OnceLock<Terminals> = std::sync::OnceLock::new();
        let t = CLOSED.get_or_init(Terminals::closed);
        Game {
            graph,
            terminals: &t.alpha,
            start: &t.start,
        }
    }

    /// The value of terminal node `t`.
    pub fn terminal(&self, t: usize) -> &Value {
        &self.terminals[t - self.graph.positions()]
    }
}

/// Solve for the limit `bound` exactly, with a certificate that proves it (or an error
/// saying why no proof was reached; never an unproved value).
pub fn solve_bound(
    game: Game<'_>,
    bound: Bound,
    settings: &Settings,
    progress: &Progress<'_>,
) -> Result<Candidate, SolveError> {
    solve_bound_kept(game, bound, settings, progress, None, &Keeper::none())
}

/// The first strategies of a solve: floating-point values, then near-greedy moves with the
/// lowest progress level.
fn first_strategies(
    game: Game<'_>,
    bound: Bound,
    settings: &Settings,
    go_on: &dyn Fn(Event<'_>) -> Result<(), SolveError>,
    stopping: &(dyn Fn() -> bool + Sync),
) -> Result<BoundState, SolveError> {
    go_on(Event::Stage("float"))?;
    let t = Instant::now();
    let approx = approx::iterate_unless(
        game,
        bound,
        settings.float_tolerance,
        settings.max_sweeps,
        stopping,
    )
    .ok_or(SolveError::Stopped)?;
    let float_seconds = t.elapsed().as_secs_f64();
    go_on(Event::Stage("strategies"))?;
    let t = Instant::now();
    let (strategies, lw, lb) = strategy::from_approx(game, &approx.values, settings.near);
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
    game: Game<'_>,
    bound: Bound,
    settings: &Settings,
    progress: &Progress<'_>,
    from: Option<BoundState>,
    keeper: &Keeper<'_>,
) -> Result<Candidate, SolveError> {
    let graph = game.graph;
    let go_on = |event: Event<'_>| {
        if progress(event) && !keeper.stopping() {
            Ok(())
        } else {
            Err(SolveError::Stopped)
        }
    };
    let mut now = match from {
        Some(state) if state.stats.bound == bound && state.fits(graph) => state,
        _ => first_strategies(game, bound, settings, &go_on, &|| keeper.stopping())?,
    };
    if let Err(stop) = go_on(Event::Stage("exact")) {
        keeper.keep(&now.kept(EvalStateRef::default()));
        return Err(stop);
    }
    let values = improve_until_optimal(game, settings, &mut now, progress, keeper)?;
    if let Err(stop) = go_on(Event::Stage("certify")) {
        // Every value is known: a resumed run takes them all back, finds no better move
        // (one more round in its statistics) and certifies.
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
    let values = Images::of(values);
    let cert = certificate::certify_from(&values, graph, game.start);
    now.stats.certify_seconds += t.elapsed().as_secs_f64();
    now.stats.certificates += 1;
    if !proves(&cert, bound) {
        return Err(SolveError::Failed(format!(
            "the values the strategy improvement ended with are not proved to be {bound:?} \
             ({} equations fail, {} positions outside T, {} outside T')",
            cert.violations.len(),
            cert.alpha_failures.len(),
            cert.beta_failures.len()
        )));
    }
    Ok(Candidate {
        values,
        certificate: cert,
        stats: now.stats,
        strategies: now.strategies,
        levels: (now.white_levels, now.black_levels),
    })
}

/// Evaluate the strategies of `now` (the first evaluation from `now`'s kept evaluation)
/// and record the round; returns the exact value of every node.
fn evaluate_round(
    game: Game<'_>,
    now: &mut BoundState,
    progress: &Progress<'_>,
    keeper: &Keeper<'_>,
    settings: &Settings,
) -> Result<(Vec<Value>, EvalStats, f64), SolveError> {
    let t = Instant::now();
    let from = std::mem::take(&mut now.evaluation);
    let (values, evaluation) = {
        let save = |evaluation: EvalStateRef<'_>| keeper.keep(&now.kept(evaluation));
        evaluate::evaluate_kept(
            game,
            &now.strategies,
            now.stats.bound,
            progress,
            from,
            keeper,
            &save,
            settings.filing.as_ref(),
            settings.twins.as_deref(),
        )?
    };
    Ok((values, evaluation, t.elapsed().as_secs_f64()))
}

/// Steps 3 and 4 of the module comment: the opponent's best reply by its own strategy
/// improvement, then the reacher's switches, until the reacher switches nothing. Returns
/// the exact values of every node, which are then the bound.
fn improve_until_optimal(
    game: Game<'_>,
    settings: &Settings,
    now: &mut BoundState,
    progress: &Progress<'_>,
    keeper: &Keeper<'_>,
) -> Result<Vec<Value>, SolveError> {
    let graph = game.graph;
    let white_reaches = now.stats.bound.white_reaches();
    loop {
        // The opponent's moves where it can hold the play off every paying terminal.
        strategy::hold_off(game, &mut now.strategies, now.stats.bound);
        let (values, evaluation, evaluate_seconds) =
            evaluate_round(game, now, progress, keeper, settings)?;
        let t = Instant::now();
        let exact = strategy::Exact::new(values.iter());
        // The opponent first: its reply must be optimal before the reacher moves on.
        let (choices, levels) = if white_reaches {
            (&mut now.strategies.black, &now.black_levels)
        } else {
            (&mut now.strategies.white, &now.white_levels)
        };
        let mut switched = strategy::switch(graph, &exact, choices, !white_reaches, levels);
        let opponent = switched;
        if opponent == 0 {
            let (choices, levels) = if white_reaches {
                (&mut now.strategies.white, &now.white_levels)
            } else {
                (&mut now.strategies.black, &now.black_levels)
            };
            switched = strategy::switch(graph, &exact, choices, white_reaches, levels);
        }
        let reacher = switched - opponent;
        let (white_switches, black_switches) = if white_reaches {
            (reacher, opponent)
        } else {
            (opponent, reacher)
        };
        let round = Round {
            evaluation,
            white_switches,
            black_switches,
            evaluate_seconds,
            improve_seconds: t.elapsed().as_secs_f64(),
        };
        let go_on = progress(Event::Round(&round)) && !keeper.stopping();
        now.stats.rounds.push(round);
        if switched == 0 {
            return Ok(values);
        }
        if now.stats.rounds.len() as u32 >= settings.max_rounds {
            return Err(SolveError::Failed(format!(
                "strategy improvement did not settle in {} evaluations",
                settings.max_rounds
            )));
        }
        if !go_on {
            // The improved strategies, to be evaluated on resumption.
            keeper.keep(&now.kept(EvalStateRef::default()));
            return Err(SolveError::Stopped);
        }
    }
}
