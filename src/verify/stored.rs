//! A stored table's values as the certificate reads them, without holding them: the
//! fixed-point images of the dictionary's entries are held (at most 8 limbs an entry,
//! which decide nearly every comparison), and a value itself is decoded from the mapped
//! file each time an equation or a tie needs it. Held whole, 8x8 KNvKP's values (5.7
//! million positions, denominators of up to 21,853 digits) and the verification's own
//! data passed the machine's 24 GB; decoding a value costs a few microseconds against
//! the hundreds its equation's long products take.

use std::borrow::Cow;
use std::cmp::Ordering;

use num_bigint::BigUint;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicBool, AtomicU64};
use zerocopy::little_endian::U32;

use crate::error::Error;
use crate::table::{Table, WalkedEntry};
use crate::value::{Imaged, Images, Value, fixed_point, long};

/// The widest image, in limbs (the width [`Images::of`] gives the largest values).
const WIDEST: usize = 8;

/// The dictionary's images, and what decoding every entry once found.
pub struct Dictionary {
    /// Limbs an image.
    width: usize,
    /// `width` limbs an entry, least significant first.
    fixed: Vec<u64>,
    /// The top limb of each entry's image.
    heads: Vec<u64>,
    /// Per entry stored as a mean, the two entries it is the mean of (`a << 32 | b`);
    /// [`WHOLE`] for an entry stored whole.
    halves: Vec<u64>,
    /// Whether every entry is in lowest terms.
    pub reduced: bool,
}

/// [`Dictionary::halves`] of an entry stored whole.
const WHOLE: u64 = u64::MAX;

/// The bytes of digits of the means without a hint that a table holds decoded for its
/// equations ([`Table::pin_mean`]).
const PINNED: usize = 4 << 30;

impl Dictionary {
    /// Decode every entry of `table`'s dictionary once ([`Table::walk`]: each mean after
    /// its halves, not through the reader's cache, which a dictionary of means larger than
    /// it would make decode each cone again and again), keeping its image at the width
    /// [`Images::of`] would choose and the key of its denominator's odd part; then
    /// whether every entry is in lowest terms.
    pub fn of(table: &Table) -> Result<Dictionary, Error> {
        let len = table.info().dictionary_len;
        let fixed: Vec<AtomicU64> = (0..len * WIDEST).map(|_| AtomicU64::new(0)).collect();
        let bits = AtomicU64::new(1);
        let lowest = LowestTerms::default();
        let halves: Vec<AtomicU64> = (0..len).map(|_| AtomicU64::new(WHOLE)).collect();
        table.walk(|k, v, stored| {
            if let Some([a, b]) = stored.halves() {
                halves[k].store((a as u64) << 32 | b as u64, Relaxed);
            }
            let image = fixed_point(v, WIDEST).0;
            for (cell, limb) in fixed[k * WIDEST..(k + 1) * WIDEST].iter().zip(image) {
                cell.store(limb, Relaxed);
            }
            bits.fetch_max(v.shared_odd().bits() + u64::from(v.twos()), Relaxed);
            // A mean without a hint is reduced by a gcd as it is decoded: in lowest terms
            // whatever the file says, so not checked again; it is held for the equations,
            // which would decode it again, with those gcds.
            match stored {
                WalkedEntry::Reduced(_) => {
                    table.pin_mean(k, v, PINNED);
                }
                _ => lowest.add(v),
            }
            Ok(())
        })?;
        let mut fixed: Vec<u64> = fixed.into_iter().map(AtomicU64::into_inner).collect();
        let bits = bits.into_inner() as usize;
        let width = (2 * bits / 64 + 2).clamp(2, WIDEST);
        // floor(v · 2^(64w − 1)) is the top w limbs of floor(v · 2^(64·8 − 1)).
        if width < WIDEST {
            fixed = fixed
                .chunks(WIDEST)
                .flat_map(|c| c[WIDEST - width..].iter().copied())
                .collect();
        }
        let heads = fixed.chunks(width).map(|c| c[width - 1]).collect();
        Ok(Dictionary {
            width,
            fixed,
            heads,
            halves: halves.into_iter().map(AtomicU64::into_inner).collect(),
            reduced: lowest.finish(),
        })
    }

    /// Whether entry `k` is stored as the mean of entries `a` and `b` (in either order).
    pub fn is_mean_of(&self, k: usize, a: usize, b: usize) -> bool {
        let h = self.halves[k];
        h != WHOLE && {
            let (x, y) = ((h >> 32) as usize, (h & 0xffff_ffff) as usize);
            (x, y) == (a, b) || (x, y) == (b, a)
        }
    }

    /// The number of entries.
    fn len(&self) -> usize {
        self.heads.len()
    }

    /// Entry `k`'s image.
    pub fn fixed(&self, k: usize) -> &[u64] {
        &self.fixed[k * self.width..(k + 1) * self.width]
    }

    /// Entry `k`'s image's top limb.
    pub fn head(&self, k: usize) -> u64 {
        self.heads[k]
    }

    /// Limbs an image.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Whether the entries increase strictly: by their images, and where two images are
    /// equal by the values `decode` gives (the table's entries).
    pub fn increasing(
        &self,
        decode: impl Fn(usize) -> Result<Value, Error> + Sync,
    ) -> Result<bool, Error> {
        (1..self.len())
            .into_par_iter()
            .map(|k| {
                let (a, b) = (self.fixed(k - 1), self.fixed(k));
                let by_image = a.iter().rev().cmp(b.iter().rev());
                Ok::<bool, Error>(match by_image {
                    Ordering::Equal => decode(k - 1)? < decode(k)?,
                    order => order == Ordering::Less,
                })
            })
            .try_reduce(|| true, |a, b| Ok(a && b))
    }
}

/// Entries checked together for lowest terms, at most.
const GROUP: usize = 64;

/// Whether every value given to it is in lowest terms, checked as they come: a value
/// `p / (o · 2^t)`, `o` odd, is where `p` is odd (or `t` is 0) and coprime to `o`. Values
/// whose denominators have one odd part are checked together, [`GROUP`] at a time, with
/// one gcd of `o` with their numerators' product modulo it ([`long::all_coprime`]); a
/// group is checked once it is full, or when the values waiting pass [`WAITING_BYTES`]
/// (every group then checked as it stands), or at the end. On 8x8 KNvKP (3.9 million
/// entries of up to 21,853 digits) a gcd per entry had not ended after 29 minutes, and a
/// gcd per distinct denominator (1.4 million) was 77 % of the file's verification; its
/// denominators have about a third as many odd parts (positions below one large system
/// inherit its denominator times different powers of two). Grouped as they come, the
/// values need not be decoded a second time (a mean's cone again).
struct LowestTerms {
    /// The groups still open, by the key of their odd part ([`odd_part_key`]), and the
    /// bytes of numerators they hold.
    open: Mutex<(HashMap<u64, Vec<Value>>, usize)>,
    /// Whether a value was found out of lowest terms.
    failed: AtomicBool,
    /// The most bytes of numerators held in groups not yet full ([`WAITING_BYTES`]).
    budget: usize,
}

impl Default for LowestTerms {
    fn default() -> LowestTerms {
        LowestTerms::with_budget(WAITING_BYTES)
    }
}

/// The most bytes of numerators [`LowestTerms`] holds in groups not yet full.
const WAITING_BYTES: usize = 1 << 30;

impl LowestTerms {
    /// Nothing checked yet; groups not yet full hold at most `budget` bytes of numerators.
    fn with_budget(budget: usize) -> LowestTerms {
        LowestTerms {
            open: Mutex::default(),
            failed: AtomicBool::new(false),
            budget,
        }
    }

    /// Check `v` with the values over its odd part.
    fn add(&self, v: &Value) {
        let key = odd_part_key(v.shared_odd());
        let bytes = numerator_bytes(v);
        let ready = {
            let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
            let (groups, waiting) = &mut *open;
            let group = groups.entry(key).or_default();
            group.push(v.clone());
            *waiting += bytes;
            if group.len() >= GROUP {
                let full = groups.remove(&key).unwrap_or_default();
                *waiting -= full.iter().map(numerator_bytes).sum::<usize>();
                vec![full]
            } else if *waiting > self.budget {
                *waiting = 0;
                std::mem::take(groups).into_values().collect()
            } else {
                Vec::new()
            }
        };
        self.check(ready);
    }

    /// Check `groups` (each of one key; [`in_lowest_terms`] sorts apart odd parts that
    /// share a key).
    fn check(&self, groups: Vec<Vec<Value>>) {
        let ok = groups.par_iter().all(|g| in_lowest_terms(g));
        if !ok {
            self.failed.store(true, Relaxed);
        }
    }

    /// Whether every value given was in lowest terms (the groups still open checked now).
    fn finish(self) -> bool {
        let (groups, _) = self.open.into_inner().unwrap_or_else(|e| e.into_inner());
        let rest: Vec<Vec<Value>> = groups.into_values().collect();
        !self.failed.into_inner() && rest.par_iter().all(|g| in_lowest_terms(g))
    }
}

/// The bytes of `v`'s numerator, as [`LowestTerms`] counts what it holds.
fn numerator_bytes(v: &Value) -> usize {
    v.numer_bits().div_ceil(8) as usize
}

/// The key of an odd part (its length and outer limbs, hashed; below the entries' own keys).
fn odd_part_key(odd: &BigUint) -> u64 {
    use std::hash::Hasher;
    let mut hasher = std::hash::DefaultHasher::new();
    crate::value::hash_outer_limbs(odd.iter_u64_digits(), 2, &mut hasher);
    hasher.finish() >> 1
}

/// Whether every one of `values` is in lowest terms: numerators odd over even
/// denominators, and coprime to the odd parts, checked for the values that share one
/// odd part with one [`long::all_coprime`].
fn in_lowest_terms(values: &[Value]) -> bool {
    if values.iter().any(|v| v.twos() > 0 && !v.numer().bit(0)) {
        return false;
    }
    let mut parts: Vec<(&BigUint, Vec<BigUint>)> = Vec::new();
    for v in values {
        let odd: &BigUint = v.shared_odd();
        let numer = v.numer().into_owned();
        match parts.iter_mut().find(|(o, _)| *o == odd) {
            Some((_, numerators)) => numerators.push(numer),
            None => parts.push((odd, vec![numer])),
        }
    }
    parts
        .into_iter()
        .all(|(odd, numerators)| long::all_coprime(odd, numerators))
}

/// Which bound of a table's positions a [`Stored`] view reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// α's dictionary ranks.
    Alpha,
    /// β's (α's where the file stores no β apart).
    Beta,
}

/// A game's nodes as the certificate reads them: the table's positions (one bound of
/// them), decoded on demand, followed by the terminal nodes' values, held.
pub struct Stored<'a> {
    table: &'a Table,
    dictionary: &'a Dictionary,
    /// Each position's dictionary entry by the bound.
    ranks: &'a [U32],
    positions: usize,
    terminals: Images,
    /// Equations found to hold by construction ([`Imaged::stored_as_mean_of`]).
    by_means: AtomicU64,
}

impl<'a> Stored<'a> {
    /// `table`'s positions by `bound`, then `terminals` (imaged at the dictionary's width);
    /// an error if the table's ranks are damaged.
    pub fn new(
        table: &'a Table,
        dictionary: &'a Dictionary,
        bound: Bound,
        terminals: Vec<Value>,
    ) -> Result<Stored<'a>, Error> {
        Ok(Stored {
            table,
            dictionary,
            ranks: table.all_ranks(bound == Bound::Beta)?,
            positions: table.len(),
            terminals: Images::new(terminals, dictionary.width()),
            by_means: AtomicU64::new(0),
        })
    }

    /// How many times an equation was found to hold by construction.
    pub fn equations_by_means(&self) -> u64 {
        self.by_means.load(Relaxed)
    }

    /// Position `i`'s dictionary entry.
    fn rank(&self, i: usize) -> usize {
        self.ranks[i].get() as usize
    }
}

impl Imaged for Stored<'_> {
    fn value(&self, i: usize) -> Cow<'_, Value> {
        if i >= self.positions {
            return Cow::Borrowed(self.terminals.value(i - self.positions));
        }
        // Every entry decoded once already (`Dictionary::of`): the mapped bytes under a
        // checked checksum decode the same again.
        Cow::Owned(
            self.table
                .dictionary_value_as_stored(self.rank(i))
                .expect("a dictionary entry that decoded before"),
        )
    }
    fn fixed(&self, i: usize) -> &[u64] {
        if i >= self.positions {
            return self.terminals.fixed(i - self.positions);
        }
        self.dictionary.fixed(self.rank(i))
    }
    #[inline]
    fn head(&self, i: usize) -> u64 {
        if i >= self.positions {
            return self.terminals.head(i - self.positions);
        }
        self.dictionary.head(self.rank(i))
    }
    fn same_entry(&self, i: usize, j: usize) -> bool {
        i < self.positions && j < self.positions && self.rank(i) == self.rank(j)
    }
    fn stored_as_mean_of(&self, p: usize, w: usize, b: usize) -> bool {
        let holds = p < self.positions
            && w < self.positions
            && b < self.positions
            && self
                .dictionary
                .is_mean_of(self.rank(p), self.rank(w), self.rank(b));
        if holds {
            self.by_means.fetch_add(1, Relaxed);
        }
        holds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Lowest terms checked by groups agree with a gcd per value: values over one odd part
    /// with different powers of two, over different odd parts in one group (keys that
    /// collide), over a long odd part (Barrett's reductions); a factor of the odd part or
    /// of two in any one numerator is found.
    #[test]
    fn grouped_lowest_terms_equal_a_gcd_each() {
        use crate::value::long::test_number;
        use num_integer::Integer;
        use num_traits::One;
        use std::sync::Arc;
        let a = Arc::new(BigUint::from(3u32 * 5 * 7 * 1_000_003));
        let b = Arc::new(BigUint::from(11u32 * 13 * 999_983));
        let long = Arc::new((test_number(20_000, 5) | BigUint::one()) * 3u8);
        let coprime = |odd: &BigUint, seed: u64| {
            let mut n = test_number(odd.bits() - 2, seed) | BigUint::one();
            while !n.gcd(odd).is_one() {
                n += 2u8;
            }
            n
        };
        let parts = [
            (&a, 0),
            (&a, 1),
            (&a, 5),
            (&b, 0),
            (&long, 3),
            (&long, 0),
            (&long, 1),
        ];
        let numerators: Vec<BigUint> = (0..parts.len() as u64)
            .map(|i| coprime(parts[i as usize].0, 40 + i))
            .collect();
        let values = |numerators: &[BigUint]| -> Vec<Value> {
            parts
                .iter()
                .zip(numerators)
                .map(|(&(odd, twos), n)| Value::from_parts(n.clone(), odd.clone(), twos))
                .collect()
        };
        let plain = |vs: &[Value]| vs.iter().all(|v| v.numer().gcd(&v.denom()).is_one());
        let reduced = values(&numerators);
        assert!(plain(&reduced));
        assert!(in_lowest_terms(&reduced));
        // As they come, in groups closed when full, over budget, or at the end.
        let as_they_come = |vs: &[Value], budget: usize| {
            let lowest = LowestTerms::with_budget(budget);
            // 30 times: 90 values over `a`, more than a group.
            for _ in 0..30 {
                vs.iter().for_each(|v| lowest.add(v));
            }
            lowest.finish()
        };
        for budget in [0, 1 << 10, WAITING_BYTES] {
            assert!(as_they_come(&reduced, budget));
        }
        for i in 0..parts.len() {
            let mut shared = numerators.clone();
            shared[i] *= 3u8 + 8 * u8::from(i == 3);
            let mut even = numerators.clone();
            even[i] <<= 1;
            let (shared, even) = (values(&shared), values(&even));
            assert!(
                !plain(&shared) && !in_lowest_terms(&shared),
                "numerator {i}"
            );
            for budget in [0, 1 << 10, WAITING_BYTES] {
                assert!(!as_they_come(&shared, budget), "numerator {i}, {budget}");
            }
            // Twice a numerator over an odd denominator is still in lowest terms.
            let odd_denominator = parts[i].1 == 0;
            assert_eq!(plain(&even), odd_denominator);
            assert_eq!(in_lowest_terms(&even), odd_denominator, "numerator {i}");
        }
    }

    /// A table's positions compare equal without a look at their values where they name
    /// one entry, and a position's equation holds without arithmetic where its entry is
    /// stored as the mean of its two options' entries: each such equation holds exactly
    /// too, and every entry stored as the mean of two positions' entries is found.
    #[test]
    fn equations_of_means_hold_by_construction() {
        use crate::table::testing::{Contents, chained, contents, encode, open_bytes};
        let (values, outside, triples) = chained(12);
        let at = |i: usize| values.get(i).unwrap_or(&outside);
        // Positions: the chain, then its first values again.
        let positions: Vec<Value> = values.iter().chain(&values[..3]).cloned().collect();
        let c = Contents {
            board: crate::geometry::Board::new(8, 8).unwrap(),
            raw_positions: 200_000,
            means: triples.iter().map(|t| t.map(at)).collect(),
            ..contents(&positions, None)
        };
        let table = open_bytes(&encode(&c)).unwrap();
        let dictionary = Dictionary::of(&table).unwrap();
        assert!(dictionary.reduced);
        let stored = Stored::new(&table, &dictionary, Bound::Alpha, Vec::new()).unwrap();
        let n = positions.len();
        let mut by_means = 0;
        for p in 0..n {
            for w in 0..n {
                assert_eq!(stored.same_entry(p, w), positions[p] == positions[w]);
                for b in 0..n {
                    if stored.stored_as_mean_of(p, w, b) {
                        let mean = crate::value::arith::mean(&positions[w], &positions[b]);
                        assert_eq!(mean, positions[p], "{p} {w} {b}");
                        by_means += 1;
                    }
                }
            }
        }
        // Means 2..10 of the chain name two positions' entries, in either order; the first
        // three values are taken by two positions each.
        let takers = |i: usize| if i < 3 { 2 } else { 1 };
        let want: usize = (2..11)
            .map(|k| 2 * takers(k) * takers(k - 2) * takers(k - 1))
            .sum();
        assert_eq!(by_means, want);
        assert_eq!(stored.equations_by_means(), want as u64);
        // The last names `outside`, which no position takes; past the positions nothing.
        assert!(!stored.stored_as_mean_of(n, 0, 1) && !stored.same_entry(0, n));
    }

    /// The means without a hint (every mean of version 7), reduced by gcds in the walk, are
    /// held decoded for the equations: a table of version 7 has them pinned after the
    /// dictionary's walk, one of version 8 (every mean of the chain with a hint) none, and
    /// the values read for the equations are the positions' either way.
    #[test]
    fn means_without_a_hint_are_held_for_the_equations() {
        use crate::table::testing::{Contents, chained, contents, encode, encode_v7, open_bytes};
        let (values, outside, triples) = chained(12);
        let at = |i: usize| values.get(i).unwrap_or(&outside);
        let c = Contents {
            board: crate::geometry::Board::new(8, 8).unwrap(),
            raw_positions: 200_000,
            means: triples.iter().map(|t| t.map(at)).collect(),
            ..contents(&values, None)
        };
        for (bytes, pinned) in [(encode_v7(&c), true), (encode(&c), false)] {
            let table = open_bytes(&bytes).unwrap();
            assert_eq!(table.pinned_bytes(), 0);
            let dictionary = Dictionary::of(&table).unwrap();
            assert_eq!(table.pinned_bytes() > 0, pinned, "{}", table.info().version);
            let stored = Stored::new(&table, &dictionary, Bound::Alpha, Vec::new()).unwrap();
            for (i, v) in values.iter().enumerate() {
                assert_eq!(&*stored.value(i), v);
            }
            // Let go once the table is verified, and read the same afterwards.
            drop(stored);
            table.forget_means();
            assert_eq!(table.pinned_bytes(), 0);
            let stored = Stored::new(&table, &dictionary, Bound::Alpha, Vec::new()).unwrap();
            for (i, v) in values.iter().enumerate() {
                assert_eq!(&*stored.value(i), v);
            }
        }
    }

    /// Entries whose images differ are ordered by them, without decoding; equal images
    /// fall to the exact values.
    #[test]
    fn the_dictionary_order_is_checked_exactly_where_images_agree() {
        let r = Value::small;
        let dictionary = |heads: Vec<u64>| Dictionary {
            width: 2,
            fixed: heads.iter().flat_map(|&h| [0, h]).collect(),
            heads,
            halves: Vec::new(),
            reduced: true,
        };
        let never = |_: usize| -> Result<Value, Error> { panic!("decoded") };
        assert!(dictionary(vec![1, 2, 3]).increasing(never).unwrap());
        assert!(!dictionary(vec![1, 3, 2]).increasing(never).unwrap());
        let values = [r(1, 3), r(2, 5), r(1, 2)];
        let same = dictionary(vec![7, 7, 7]);
        assert!(same.increasing(|k| Ok(values[k].clone())).unwrap());
        let swapped = [r(1, 3), r(1, 2), r(2, 5)];
        assert!(!same.increasing(|k| Ok(swapped[k].clone())).unwrap());
        let equal = [r(1, 3), r(1, 3), r(1, 2)];
        assert!(!same.increasing(|k| Ok(equal[k].clone())).unwrap());
    }
}
