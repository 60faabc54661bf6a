//! Every dictionary entry of a table decoded once ([`Table::walk`]): for the tools that
//! read a whole dictionary too large to hold decoded (8x8 KNvKN: 11.3 GB of digits, 1.3
//! GB stored as means). A reader's own cache of means (256 MiB) decodes each entry with
//! the means below it, again and again where they do not fit; the walk decodes each mean
//! once, after its two halves, and holds a decoded mean only until the last mean that
//! names it is decoded. Entries stored whole are read from the file each time (no gcd,
//! no cone).

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
    /// The mean of two entries, with a hint: in lowest terms if the hint is honest.
    Hinted,
    /// The mean of two entries, without a hint: reduced by a gcd as it is decoded, so in
    /// lowest terms whatever the file says.
    Reduced,
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
        let picks = (0..len)
            .into_par_iter()
            .map(|k| self.mean_of(k, self.dictionary_entry(k)?, 0))
            .collect::<Result<Vec<Option<MeanOf>>, Error>>()?;
        // Each entry's level: the most means on a chain from it (0: stored whole), each
        // mean one above its halves; a cycle or a chain longer than a reader follows
        // (as `check_all` says) is refused.
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
                        Some(_) => Stored::Hinted,
                        None => Stored::Reduced,
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
}
