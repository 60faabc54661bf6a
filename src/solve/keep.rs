//! What a solve keeps so that it can be stopped and resumed: the strategies of the bound
//! being solved, the systems of the current evaluation already solved (their values), and
//! the refinement state of systems part-way through ([`Refinement`]).
//!
//! The single-position components of an evaluation are not kept: they are exact means,
//! recomputed on resumption from the kept systems below them. The state is handed to a
//! sink (the generator writes it to a checkpoint file) when the run is stopping, and at
//! most once every `every` while it runs; a resumed solve does exactly what the
//! uninterrupted one would have done. Nothing kept is trusted: a kept value or strategy
//! that is wrong can only make the final certificate fail, never pass.
//!
//! Kept states are written from borrowed data ([`BoundStateRef`]) so that a periodic save
//! copies nothing, and read back as owned data ([`BoundState`]); both have the same
//! postcard encoding (a slice and a vector encode alike).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::ser::SerializeSeq;
use serde::{Deserialize, Serialize, Serializer};

use super::linear::Refinement;
use super::{Bound, SolveStats, Strategies};
use crate::graph::Graph;
use crate::guess::Value;

/// A system solved in the current evaluation: its positions in the order the evaluation
/// found them, and their exact values.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct SolvedSystem {
    /// The component's positions.
    pub members: Vec<u32>,
    /// Their exact values, in the same order.
    pub values: Vec<Value>,
}

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
    /// Systems solved.
    pub solved: Vec<SolvedSystem>,
    /// Systems part-way through.
    pub running: Vec<RunningSystem>,
}

/// A solve of one bound between two steps: enough to go on from there.
#[derive(Clone, Debug, Deserialize)]
pub struct BoundState {
    /// The bound being solved.
    pub bound: Bound,
    /// What the solve did so far.
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

/// A system's values, serialised as a sequence: read from the node values at its
/// members, or already in order.
#[derive(Clone, Copy)]
enum Values<'a> {
    At { members: &'a [u32], x: &'a [Value] },
    InOrder(&'a [Value]),
}

impl Serialize for Values<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Values::At { members, x } => {
                let mut seq = s.serialize_seq(Some(members.len()))?;
                for &m in *members {
                    seq.serialize_element(&x[m as usize])?;
                }
                seq.end()
            }
            Values::InOrder(values) => values.serialize(s),
        }
    }
}

/// A solved system, borrowed: encodes as [`SolvedSystem`].
#[derive(Serialize, Clone, Copy)]
pub struct SolvedRef<'a> {
    members: &'a [u32],
    values: Values<'a>,
}

impl<'a> SolvedRef<'a> {
    /// The system of positions `members`, whose values are in `x`.
    pub fn new(members: &'a [u32], x: &'a [Value]) -> SolvedRef<'a> {
        SolvedRef {
            members,
            values: Values::At { members, x },
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
    /// Systems solved.
    pub solved: Vec<SolvedRef<'a>>,
    /// Systems part-way through.
    pub running: Vec<RunningRef<'a>>,
}

/// A bound's state, borrowed: encodes as [`BoundState`].
#[derive(Serialize)]
pub struct BoundStateRef<'a> {
    /// The bound being solved.
    pub bound: Bound,
    /// What the solve did so far.
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
            && self.evaluation.solved.iter().all(|s| {
                s.members.len() == s.values.len() && s.members.iter().all(|&m| (m as usize) < n)
            })
    }

    /// The same state, borrowed (for writing).
    pub fn as_ref(&self) -> BoundStateRef<'_> {
        BoundStateRef {
            bound: self.bound,
            stats: &self.stats,
            strategies: &self.strategies,
            white_levels: &self.white_levels,
            black_levels: &self.black_levels,
            evaluation: EvalStateRef {
                solved: self
                    .evaluation
                    .solved
                    .iter()
                    .map(|s| SolvedRef {
                        members: &s.members,
                        values: Values::InOrder(&s.values),
                    })
                    .collect(),
                running: self
                    .evaluation
                    .running
                    .iter()
                    .map(|r| RunningRef {
                        members: &r.members,
                        refinement: &r.refinement,
                    })
                    .collect(),
            },
        }
    }
}

/// Where a solve's state goes: to a sink when the run is stopping, and at most once every
/// `every` while it runs.
pub struct Keeper<'a> {
    stop: &'a (dyn Fn() -> bool + Sync),
    every: Option<Duration>,
    last: Mutex<Instant>,
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
            last: Mutex::new(Instant::now()),
            sink,
        }
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
        self.every.is_some_and(|every| {
            self.last
                .lock()
                .map(|last| last.elapsed() >= every)
                .unwrap_or(false)
        })
    }

    /// Hand a state to the sink (and restart the period).
    pub fn keep(&self, state: &BoundStateRef<'_>) {
        (self.sink)(state);
        if let Ok(mut last) = self.last.lock() {
            *last = Instant::now();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
        };
        let members = [2u32, 0];
        let state = BoundStateRef {
            bound: Bound::Beta,
            stats: &stats,
            strategies: &strategies,
            white_levels: &[4, 5, 6],
            black_levels: &[7, 8, 9],
            evaluation: EvalStateRef {
                solved: vec![SolvedRef::new(&members, &x)],
                running: vec![RunningRef {
                    members: &[1],
                    refinement: &refinement,
                }],
            },
        };
        let bytes = postcard::to_allocvec(&state).unwrap();
        let back: BoundState = postcard::from_bytes(&bytes).unwrap();
        assert_eq!(back.bound, Bound::Beta);
        assert_eq!(back.stats.float_sweeps, 12);
        assert_eq!(back.strategies, strategies);
        assert_eq!(back.white_levels, vec![4, 5, 6]);
        assert_eq!(
            back.evaluation.solved,
            vec![SolvedSystem {
                members: vec![2, 0],
                values: vec![v(5, 9), v(1, 3)],
            }]
        );
        assert_eq!(back.evaluation.running[0].refinement, refinement);
        // And back again: the owned state re-encodes to the same bytes.
        assert_eq!(postcard::to_allocvec(&back.as_ref()).unwrap(), bytes);
    }
}
