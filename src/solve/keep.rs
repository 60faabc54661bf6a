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

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use num_bigint::BigUint;
use num_traits::Zero;
use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};
use serde::ser::{SerializeSeq, SerializeTuple};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::linear::Refinement;
use super::{SolveStats, Strategies};
use crate::graph::Graph;
use crate::progress::SaveClock;
use crate::value::shared::Denominators;
use crate::value::{Value, split};

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
    /// Positions solved, with their exact values (sharing their denominators' copies).
    #[serde(deserialize_with = "solved_values")]
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

/// Solved positions, borrowed: encodes as [`EvalState::solved`] decodes (see
/// [`SolvedRef::serialize`]).
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

impl SolvedRef<'_> {
    /// The solved positions with their values, in the order they are kept.
    fn entries(&self) -> Box<dyn Iterator<Item = (u32, &Value)> + '_> {
        match self {
            SolvedRef::At { parts, x } => Box::new(
                parts
                    .iter()
                    .flat_map(|part| part.iter())
                    .map(|&p| (p, &x[p as usize])),
            ),
            SolvedRef::Pairs(pairs) => Box::new(pairs.iter().map(|(p, v)| (*p, v))),
        }
    }

    fn len(&self) -> usize {
        match self {
            SolvedRef::At { parts, .. } => parts.iter().map(|p| p.len()).sum(),
            SolvedRef::Pairs(pairs) => pairs.len(),
        }
    }
}

impl Serialize for SolvedRef<'_> {
    /// Each distinct denominator once, then `(position, numerator, denominator's number)`
    /// for every solved position: with four men most values share a denominator of
    /// thousands of digits, which the pairs of version 3 wrote once per value (8x8 KNvKP's
    /// checkpoint was about twice its numerators, 19.5 GB).
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // Values share their denominators' odd parts: the address finds a copy seen
        // before, the digits an equal one held apart (compared once per copy).
        type Denominator<'d> = (&'d BigUint, u32);
        let mut by_copy: HashMap<(*const BigUint, u32), u32> = HashMap::new();
        let mut by_digits: HashMap<Denominator<'_>, u32> = HashMap::new();
        let mut denominators: Vec<Denominator<'_>> = Vec::new();
        for (_, v) in self.entries() {
            let copy: *const BigUint = &**v.shared_odd();
            if by_copy.contains_key(&(copy, v.twos())) {
                continue;
            }
            let number = *by_digits
                .entry((v.shared_odd(), v.twos()))
                .or_insert_with(|| {
                    denominators.push((v.shared_odd(), v.twos()));
                    (denominators.len() - 1) as u32
                });
            by_copy.insert((copy, v.twos()), number);
        }
        /// The denominators whole, each made from its odd part as it is written.
        struct Whole<'s, 'd>(&'s [Denominator<'d>]);
        impl Serialize for Whole<'_, '_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(self.0.len()))?;
                for &(odd, twos) in self.0 {
                    seq.serialize_element(&(odd << twos))?;
                }
                seq.end()
            }
        }
        /// The triples, numbering each denominator by its copy.
        struct Triples<'s, 'a> {
            solved: &'s SolvedRef<'a>,
            by_copy: &'s HashMap<(*const BigUint, u32), u32>,
        }
        impl Serialize for Triples<'_, '_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(self.solved.len()))?;
                for (p, v) in self.solved.entries() {
                    let copy: *const BigUint = &**v.shared_odd();
                    let number = self.by_copy[&(copy, v.twos())];
                    seq.serialize_element(&(p, v.numer(), number))?;
                }
                seq.end()
            }
        }
        let mut tuple = s.serialize_tuple(2)?;
        tuple.serialize_element(&Whole(&denominators))?;
        tuple.serialize_element(&Triples {
            solved: self,
            by_copy: &by_copy,
        })?;
        tuple.end()
    }
}

/// Decodes what [`SolvedRef`] encodes: the values hold one copy of each denominator.
fn solved_values<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(u32, Value)>, D::Error> {
    /// The denominators, then the triples that number them.
    struct Solved;
    impl<'de> Visitor<'de> for Solved {
        type Value = Vec<(u32, Value)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("denominators, then (position, numerator, denominator) triples")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let denominators: Vec<BigUint> = seq
                .next_element()?
                .ok_or_else(|| de::Error::invalid_length(0, &self))?;
            if denominators.iter().any(Zero::is_zero) {
                return Err(de::Error::custom("a zero denominator"));
            }
            // One copy of each odd part: d and d·2ᵏ share d's digits.
            let mut odd_parts: HashSet<Arc<BigUint>> = HashSet::new();
            let denominators: Vec<(Arc<BigUint>, u32)> = denominators
                .into_iter()
                .map(|d| {
                    let (odd, twos) = split(d);
                    match odd_parts.get(&odd) {
                        Some(one) => (one.clone(), twos),
                        None => {
                            odd_parts.insert(odd.clone());
                            (odd, twos)
                        }
                    }
                })
                .collect();
            seq.next_element_seed(Triples(&denominators))?
                .ok_or_else(|| de::Error::invalid_length(1, &self))
        }
    }
    /// The triples, given the denominators they number.
    struct Triples<'a>(&'a [(Arc<BigUint>, u32)]);
    impl<'de> DeserializeSeed<'de> for Triples<'_> {
        type Value = Vec<(u32, Value)>;
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_seq(self)
        }
    }
    impl<'de> Visitor<'de> for Triples<'_> {
        type Value = Vec<(u32, Value)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("(position, numerator, denominator) triples")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
            while let Some((p, numer, number)) = seq.next_element::<(u32, BigUint, u32)>()? {
                let (odd, twos) = self
                    .0
                    .get(number as usize)
                    .ok_or_else(|| de::Error::custom("a denominator number out of range"))?;
                out.push((p, Value::from_parts(numer, odd.clone(), *twos)));
            }
            Ok(out)
        }
    }
    d.deserialize_tuple(2, Solved)
}

/// Decodes the pairs `(position, value)` of checkpoint version 3, each value with its own
/// denominator, giving the values one copy of each denominator as they are read: the
/// decoded state takes what version 4's would, not twice that.
pub fn solved_pairs_shared<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<(u32, Value)>, D::Error> {
    /// The pairs.
    struct Pairs;
    impl<'de> Visitor<'de> for Pairs {
        type Value = Vec<(u32, Value)>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("(position, value) pairs")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let denominators = Denominators::new();
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
            while let Some((p, v)) = seq.next_element::<(u32, Value)>()? {
                out.push((p, denominators.share(v)));
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Pairs)
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

    #[test]
    fn each_denominator_is_kept_once_and_decoded_as_one_copy() {
        // Forty values over 3^300 (476 bits): thirty share one copy, ten hold equal
        // copies of their own; one other denominator, and one over 2·3^300.
        let d = BigUint::from(3u8).pow(300);
        let one = Arc::new(d.clone());
        let mut x: Vec<Value> = (0..30u32)
            .map(|k| Value::new_shared(BigUint::from(1u8) << k, one.clone()))
            .collect();
        x.extend((30..40u32).map(|k| Value::new_raw(BigUint::from(1u8) << k, d.clone())));
        x.push(v(1, 7));
        // Twice the long denominator: its own denominator, the same odd part.
        x.push(Value::new_raw(BigUint::from(1u8), &d << 1));
        let all: Vec<u32> = (0..x.len() as u32).rev().collect();
        let solved = SolvedRef::At {
            parts: vec![&all],
            x: &x,
        };
        let bytes = postcard::to_allocvec(&(&solved, Vec::<RunningRef>::new())).unwrap();
        // The denominator's 60 bytes once (and its double once), not 41 times.
        assert!(bytes.len() < 2 * 61 + 42 * 12, "{} bytes", bytes.len());
        let back: EvalState = postcard::from_bytes(&bytes).unwrap();
        let expected: Vec<(u32, Value)> = all.iter().map(|&p| (p, x[p as usize].clone())).collect();
        assert_eq!(back.solved, expected);
        // One copy of 3^300 for the forty and for the double.
        let copy = back
            .solved
            .iter()
            .find(|(p, _)| *p == 0)
            .unwrap()
            .1
            .shared_odd();
        for (p, value) in &back.solved {
            assert_eq!(
                Arc::ptr_eq(value.shared_odd(), copy),
                *p != 40,
                "position {p}"
            );
        }
        // The pairs re-encode to the same bytes.
        let again = SolvedRef::Pairs(&back.solved);
        assert_eq!(
            postcard::to_allocvec(&(&again, Vec::<RunningRef>::new())).unwrap(),
            bytes
        );
    }

    #[test]
    fn a_denominator_out_of_range_or_zero_is_refused() {
        // One denominator and one triple naming denominator `number`, encoded.
        let kept = |denominator: u8, number: u32| {
            let none: Vec<RunningRef> = Vec::new();
            let state = (
                (
                    vec![BigUint::from(denominator)],
                    vec![(0u32, BigUint::from(1u8), number)],
                ),
                &none,
            );
            postcard::to_allocvec(&state).unwrap()
        };
        assert!(postcard::from_bytes::<EvalState>(&kept(3, 1)).is_err());
        assert!(postcard::from_bytes::<EvalState>(&kept(0, 0)).is_err());
        let back: EvalState = postcard::from_bytes(&kept(3, 0)).unwrap();
        assert_eq!(back.solved, vec![(0, v(1, 3))]);
    }
}
