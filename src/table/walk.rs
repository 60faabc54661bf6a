//! Every dictionary entry of a table decoded once ([`Table::walk`]): for the tools that
//! read a whole dictionary too large to hold decoded (8x8 KNvKN: 11.3 GB of digits, 1.3
//! GB stored as means). A reader's own cache of means (256 MiB) decodes each entry with
//! the means below it, again and again where they do not fit; the walk decodes each mean
//! once, after its two halves, and holds a decoded mean only until the last mean that
//! names it is decoded. Entries stored whole are read from the file each time (no gcd,
//! no cone). [`Table::shadows`] gives every entry's shadow the same way, a level at a
//! time, without decoding a mean.

use std::collections::HashMap;

use rayon::prelude::*;

use super::means::chains;
use super::read::{MeanOf, Table};
use super::{Corruption, MAX_MEAN_DEPTH};
use crate::error::Error;
use crate::value::Value;

/// How a walked entry was stored, and so what its decoding promises.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stored {
    /// Whole: its numerator and denominator as written (in lowest terms if the writer
    /// made it so: `bidtb verify` checks).
    Whole,
    /// The mean of these two entries, with a hint: in lowest terms if the hint is honest.
    Hinted([usize; 2]),
    /// The mean of these two entries, without a hint: reduced by a gcd as it is decoded,
    /// so in lowest terms whatever the file says.
    Reduced([usize; 2]),
}

impl Stored {
    /// The two entries a mean is the mean of (None for an entry stored whole): its
    /// decoded value is exactly their values' mean.
    pub fn halves(self) -> Option<[usize; 2]> {
        match self {
            Stored::Whole => None,
            Stored::Hinted(h) | Stored::Reduced(h) => Some(h),
        }
    }
}

/// What a [`Table::walk`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Walked {
    /// Entries stored as means.
    pub means: usize,
    /// The longest chain of means (0 where every entry is whole).
    pub depth: usize,
    /// The most decoded means held at once.
    pub held_most: usize,
}

/// Every entry's mean (None: stored whole), and the entries by level ([`Table::levels`]).
type Levels = (Vec<Option<MeanOf>>, Vec<Vec<usize>>);

impl Table {
    /// Call `visit(k, value, stored)` once for every dictionary entry `k`, with its value as
    /// stored ([`Table::dictionary_value_as_stored`]) and how, in parallel and in no set order: entries
    /// stored whole first, then the means a level at a time (each after its halves), each
    /// decoded once. The first error (a damaged entry, or one from `visit`) ends the walk.
    pub fn walk(
        &self,
        visit: impl Fn(usize, &Value, Stored) -> Result<(), Error> + Sync,
    ) -> Result<Walked, Error> {
        let len = self.info().dictionary_len;
        let (picks, by_level) = self.levels()?;
        let depth = by_level.len() - 1;
        // How many means name each entry still to be decoded.
        let mut named = vec![0u32; len];
        for m in picks.iter().flatten() {
            named[m.a] += 1;
            named[m.b] += 1;
        }
        let mut walked = Walked {
            means: len - by_level[0].len(),
            depth,
            held_most: 0,
        };
        by_level[0].par_iter().try_for_each(|&k| {
            let v = self.dictionary_value_as_stored(k)?;
            visit(k, &v, Stored::Whole)
        })?;
        let mut held: HashMap<usize, Value> = HashMap::new();
        for level in &by_level[1..] {
            let half = |h: usize| match held.get(&h) {
                Some(v) => Ok(v.clone()),
                None => self.dictionary_value_as_stored(h),
            };
            let decoded = level
                .par_iter()
                .map(|&k| {
                    let m = picks[k].expect("a mean");
                    let v = self.decode_mean(k, m, &half)?;
                    let stored = match m.hint {
                        Some(_) => Stored::Hinted([m.a, m.b]),
                        None => Stored::Reduced([m.a, m.b]),
                    };
                    visit(k, &v, stored)?;
                    Ok((k, v))
                })
                .collect::<Result<Vec<(usize, Value)>, Error>>()?;
            for &k in level {
                let m = picks[k].expect("a mean");
                for h in [m.a, m.b] {
                    named[h] -= 1;
                    if named[h] == 0 {
                        held.remove(&h);
                    }
                }
            }
            held.extend(decoded.into_iter().filter(|(k, _)| named[*k] > 0));
            walked.held_most = walked.held_most.max(held.len());
        }
        Ok(walked)
    }

    /// Every entry's mean (None: stored whole) and the entries by level, level 0 the
    /// entries stored whole and each mean one above the higher of its halves; a cycle or a
    /// chain longer than a reader follows (as `check_all` says) is refused.
    fn levels(&self) -> Result<Levels, Error> {
        let len = self.info().dictionary_len;
        let picks = (0..len)
            .into_par_iter()
            .map(|k| self.mean_of(k, self.dictionary_entry(k)?, 0))
            .collect::<Result<Vec<Option<MeanOf>>, Error>>()?;
        let pairs: Vec<Option<(u32, u32)>> = picks
            .iter()
            .map(|m| m.map(|m| (m.a as u32, m.b as u32)))
            .collect();
        let levels = chains(&pairs).map_err(|k| self.corrupted(Corruption::Mean(k)))?;
        drop(pairs);
        let depth = levels.iter().copied().max().unwrap_or(0);
        if depth >= MAX_MEAN_DEPTH {
            let head = levels.iter().position(|&l| l == depth).unwrap_or(0);
            return Err(self.corrupted(Corruption::Mean(head)));
        }
        let mut by_level: Vec<Vec<usize>> = vec![Vec::new(); depth + 1];
        for (k, &l) in levels.iter().enumerate() {
            by_level[l].push(k);
        }
        Ok((picks, by_level))
    }
}

impl Table {
    /// A shadow (f64) of every dictionary entry, without decoding a mean: an entry stored
    /// whole has its value's shadow (within 2⁻⁵⁰), a mean the mean of its halves' shadows,
    /// found a level at a time. Each level adds at most one rounding (2⁻⁵³: the halves lie
    /// in [0, 1]) and chains are shorter than [`MAX_MEAN_DEPTH`] (1,024), so every shadow
    /// is within 2⁻⁵⁰ + 2⁻⁴³ < [`SHADOWS_WITHIN`] of its value: well inside half the
    /// distance ([`crate::value::arith::DECISIVE`], 10⁻¹²) at which the boundary stage
    /// lets two shadows decide. What a reader glancing at many positions of a table of
    /// means needs (8x8 KPvKP glances at millions of exits into KNvKP), where decoding
    /// each mean costs a gcd where it has no hint.
    pub fn shadows(&self) -> Result<Vec<f64>, Error> {
        let (picks, by_level) = self.levels()?;
        let mut shadows = vec![0f64; self.info().dictionary_len];
        let whole = by_level[0]
            .par_iter()
            .map(|&k| Ok(self.dictionary_value_as_stored(k)?.to_f64()))
            .collect::<Result<Vec<f64>, Error>>()?;
        for (&k, s) in by_level[0].iter().zip(whole) {
            shadows[k] = s;
        }
        for level in &by_level[1..] {
            for &k in level {
                let m = picks[k].expect("a mean");
                shadows[k] = (shadows[m.a] + shadows[m.b]) / 2.0;
            }
        }
        Ok(shadows)
    }
}

/// How far a shadow of [`Table::shadows`] may be from its value, at most.
pub const SHADOWS_WITHIN: f64 = 2e-13;

// Two shadows each this close to their values, DECISIVE apart, still order the values.
const _: () = assert!(2.0 * SHADOWS_WITHIN < crate::value::arith::DECISIVE);
