//! What a solve keeps so that it can be stopped and resumed: the strategies of the bound
//! being solved, the exact values of every position the current evaluation has solved
//! (whole levels of the condensation, and the systems finished in the level under way),
//! and the refinement state of systems part-way through ([`Refinement`]).
//!
//! The state is handed to a sink (the generator writes it to a checkpoint file) when the
//! run is stopping, and at most once every `every` while it runs; a resumed solve does
//! what the uninterrupted one would have done from there (stopped just before its
//! certificate, with every value kept, it checks the final moves once more: one more
//! round in its statistics, the same values). Nothing kept is trusted: a kept
//! value or strategy that is wrong can only make the final certificate fail, never pass.
//!
//! Kept states are written from borrowed data ([`BoundStateRef`]) so that a save copies
//! nothing, and read back as owned data ([`BoundState`]); both have the same postcard
//! encoding (a slice and a vector encode alike).

use std::time::Duration;

use serde::ser::SerializeSeq;
use serde::{Deserialize, Serialize, Serializer};

use super::linear::Refinement;
use super::{SolveStats, Strategies};
use crate::graph::Graph;
use crate::progress::SaveClock;
use crate::value::Value;

/// A system part-way through its refinement.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct RunningSystem {
    /// The component's positions.
    pub members: Vec<u32>,
    /// The refinement state to continue from.
    pub refinement: Refinement,
}

/// What the evaluation of the current strategies has done.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
pub struct EvalState {
    /// Positions solved, with their exact values.
    pub solved: Vec<(u32, Value)>,
    /// Systems part-way through.
    pub running: Vec<RunningSystem>,
}

/// A solve of one bound between two steps: enough to go on from there.
#[derive(Clone, Debug, Deserialize)]
pub struct BoundState {
    /// What the solve did so far (and which bound it solves).
    pub stats: SolveStats,
    /// The current strategies.
    pub strategies: Strategies,
    /// The tie-break levels of White's moves (from the first strategies).
    pub white_levels: Vec<u32>,
    /// The tie-break levels of Black's moves.
    pub black_levels: Vec<u32>,
    /// The evaluation of the current strategies so far.
    pub evaluation: EvalState,
}

/// Solved positions, borrowed: encodes as `Vec<(u32, Value)>`.
pub enum SolvedRef<'a> {
    /// The positions of `parts` (a few lists), with their values read from `x`.
    At {
        /// Lists of positions.
        parts: Vec<&'a [u32]>,
        /// The value of every node.
        x: &'a [Value],
    },
    /// Pairs already made.
    Pairs(&'a [(u32, Value)]),
}

impl Default for SolvedRef<'_> {
    fn default() -> Self {
        SolvedRef::Pairs(&[])
    }
}

impl Serialize for SolvedRef<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            SolvedRef::At { parts, x } => {
                let len = parts.iter().map(|p| p.len()).sum();
                let mut seq = s.serialize_seq(Some(len))?;
                for &p in parts.iter().flat_map(|part| part.iter()) {
                    seq.serialize_element(&(p, &x[p as usize]))?;
                }
                seq.end()
            }
            SolvedRef::Pairs(pairs) => pairs.serialize(s),
        }
    }
}

/// A running system, borrowed: encodes as [`RunningSystem`].
#[derive(Serialize)]
pub struct RunningRef<'a> {
    /// The component's positions.
    pub members: &'a [u32],
    /// Its refinement state.
    pub refinement: &'a Refinement,
}

/// An evaluation's progress, borrowed: encodes as [`EvalState`].
#[derive(Serialize, Default)]
pub struct EvalStateRef<'a> {
    /// Positions solved.
    pub solved: SolvedRef<'a>,
    /// Systems part-way through.
    pub running: Vec<RunningRef<'a>>,
}

/// A bound's state, borrowed: encodes as [`BoundState`].
#[derive(Serialize)]
pub struct BoundStateRef<'a> {
    /// What the solve did so far (and which bound it solves).
    pub stats: &'a SolveStats,
    /// The current strategies.
    pub strategies: &'a Strategies,
    /// White's tie-break levels.
    pub white_levels: &'a [u32],
    /// Black's tie-break levels.
    pub black_levels: &'a [u32],
    /// The evaluation so far.
    pub evaluation: EvalStateRef<'a>,
}

impl BoundState {
    /// Whether the state can belong to a solve on `graph`: one White and one Black option
    /// of each position as strategies, one level per node. (Whether its values are right
    /// is for the certificate to say.)
    pub fn fits(&self, graph: &Graph) -> bool {
        let n = graph.positions();
        let chosen = |choices: &[u32], white: bool| {
            choices.len() == n
                && choices.iter().enumerate().all(|(p, t)| {
                    let options = if white {
                        graph.white(p)
                    } else {
                        graph.black(p)
                    };
                    options.contains(t)
                })
        };
        chosen(&self.strategies.white, true)
            && chosen(&self.strategies.black, false)
            && self.white_levels.len() == graph.nodes()
            && self.black_levels.len() == graph.nodes()
            && self
                .evaluation
                .solved
                .iter()
                .all(|(p, _)| (*p as usize) < n)
            && self
                .evaluation
                .running
                .iter()
                .all(|r| r.members.iter().all(|&m| (m as usize) < n))
    }

    /// The state with `evaluation` in place of its own, borrowed (for writing).
    pub fn kept<'a>(&'a self, evaluation: EvalStateRef<'a>) -> BoundStateRef<'a> {
        BoundStateRef {
            stats: &self.stats,
            strategies: &self.strategies,
            white_levels: &self.white_levels,
            black_levels: &self.black_levels,
            evaluation,
        }
    }

    /// The same state, borrowed (for writing).
    pub fn as_ref(&self) -> BoundStateRef<'_> {
        self.kept(EvalStateRef {
            solved: SolvedRef::Pairs(&self.evaluation.solved),
            running: self
                .evaluation
                .running
                .iter()
                .map(|r| RunningRef {
                    members: &r.members,
                    refinement: &r.refinement,
                })
                .collect(),
        })
    }
}

/// Where a solve's state goes: to a sink when the run is stopping, and at most once every
/// `every` while it runs.
pub struct Keeper<'a> {
    stop: &'a (dyn Fn() -> bool + Sync),
    every: Option<Duration>,
    own: SaveClock,
    shared: Option<&'a SaveClock>,
    sink: &'a (dyn Fn(&BoundStateRef<'_>) + Sync),
}

impl<'a> Keeper<'a> {
    /// Keep states in `sink` when `stop` says the run is stopping, and every `every`.
    pub fn new(
        stop: &'a (dyn Fn() -> bool + Sync),
        every: Option<Duration>,
        sink: &'a (dyn Fn(&BoundStateRef<'_>) + Sync),
    ) -> Keeper<'a> {
        Keeper {
            stop,
            every,
            own: SaveClock::default(),
            shared: None,
            sink,
        }
    }

    /// [`Keeper::new`] with the period counted on `clock`, shared with other solves.
    pub fn with_clock(
        stop: &'a (dyn Fn() -> bool + Sync),
        every: Option<Duration>,
        clock: &'a SaveClock,
        sink: &'a (dyn Fn(&BoundStateRef<'_>) + Sync),
    ) -> Keeper<'a> {
        Keeper {
            shared: Some(clock),
            ..Keeper::new(stop, every, sink)
        }
    }

    fn clock(&self) -> &SaveClock {
        self.shared.unwrap_or(&self.own)
    }

    /// A keeper that never stops a run and keeps nothing.
    pub fn none() -> Keeper<'static> {
        Keeper::new(&|| false, None, &|_| {})
    }

    /// Whether the run is stopping.
    pub fn stopping(&self) -> bool {
        (self.stop)()
    }

    /// Whether a periodic save is due.
    pub fn due(&self) -> bool {
        self.every.is_some_and(|every| self.clock().due(every))
    }

    /// Hand a state to the sink (and restart the period).
    pub fn keep(&self, state: &BoundStateRef<'_>) {
        (self.sink)(state);
        self.clock().restart();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solve::Bound;
    use crate::solve::linear::LinearStats;
    use num_bigint::BigInt;

    fn v(n: u64, d: u64) -> Value {
        Value::new(n.into(), d.into())
    }

    #[test]
    fn borrowed_states_decode_as_owned_ones() {
        let x = vec![v(1, 3), v(2, 7), v(5, 9), v(0, 1)];
        let strategies = Strategies {
            white: vec![1, 2, 0],
            black: vec![3, 3, 1],
        };
        let stats = SolveStats {
            bound: Bound::Beta,
            float_sweeps: 12,
            float_last_change: 1e-16,
            float_seconds: 0.5,
            strategy_seconds: 0.25,
            rounds: Vec::new(),
            certificates: 1,
            certify_seconds: 0.125,
        };
        let refinement = Refinement {
            y: vec![BigInt::from(-5) << 300, BigInt::from(7)],
            r: vec![BigInt::from(3), BigInt::from(-1)],
            k: 96,
            step: 40,
            next_try: 120,
            stalled: 1,
            stats: LinearStats {
                rounds: 3,
                sweeps: 90,
                bits: 0,
                attempts: 1,
            },
            pending: Some(44),
        };
        let (first, second) = ([2u32, 0], [1u32]);
        let state = BoundStateRef {
            stats: &stats,
            strategies: &strategies,
            white_levels: &[4, 5, 6],
            black_levels: &[7, 8, 9],
            evaluation: EvalStateRef {
                solved: SolvedRef::At {
                    parts: vec![&first, &second],
                    x: &x,
                },
                running: vec![RunningRef {
                    members: &[1],
                    refinement: &refinement,
                }],
            },
        };
        let bytes = postcard::to_allocvec(&state).unwrap();
        let back: BoundState = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back.stats.bound, Bound::Beta);
        assert_eq!(back.stats.float_sweeps, 12);
        assert_eq!(back.strategies, strategies);
        assert_eq!(back.white_levels, vec![4, 5, 6]);
        assert_eq!(
            back.evaluation.solved,
            vec![(2, v(5, 9)), (0, v(1, 3)), (1, v(2, 7))]
        );
        assert_eq!(back.evaluation.running[0].refinement, refinement);
        // And back again: the owned state re-encodes to the same bytes.
        assert_eq!(postcard::to_allocvec(&back.as_ref()).unwrap(), bytes);
    }
}
