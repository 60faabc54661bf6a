//! A table's dictionary: every distinct value of the file once, in increasing order, so
//! that positions store ranks and ranks compare like values; and the byte forms of its
//! entries.
//!
//! Two entry forms exist. Versions 1 to 3 write each value whole: numerator length (u32),
//! numerator, denominator. Version 4 writes each distinct denominator once, in a list of
//! its own, and each entry as the number of its denominator in that list (u32) and its
//! numerator. Values of a material share few denominators (8x8 KRvKN: a million values,
//! 79,145 denominators), and a denominator is as long as its numerator, so version 4 holds
//! about half the bytes.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use num_bigint::BigUint;
use num_traits::Zero;
use rayon::prelude::*;

use crate::value::arith::{cmp_shadowed, shadow};
use crate::value::hints::Hint;
use crate::value::{Key, Value, bytes};

/// How a file's dictionary entries are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Form {
    /// Versions 1 to 3: numerator length, numerator, denominator.
    Whole,
    /// Version 4: denominator number, numerator; the denominators listed apart.
    SharedDenominators,
}

/// The smallest entry of each form: the length word (or the denominator number) and one
/// byte (of the denominator, or of the numerator).
pub(super) const MIN_ENTRY: u64 = 5;

/// The dictionary of a file being written: its values in increasing order, the rank of
/// each (by numerator and denominator, which are in lowest terms), for version 4 on its
/// distinct denominators in the order of their first use, and for version 7 the entries
/// stored as the mean of two others ([`super::means`]).
pub(super) struct Dictionary<'a> {
    /// The distinct values, increasing.
    pub values: Vec<&'a Value>,
    ranks: HashMap<Key<'a>, u32>,
    /// The distinct denominators of the entries stored whole (odd part, power of two), in
    /// the order of their first use by `values` (empty for the whole form).
    pub denominators: Vec<(&'a BigUint, u32)>,
    numbers: HashMap<(&'a BigUint, u32), u32>,
    /// Per entry, the two entries it is stored as the mean of (empty: every entry whole).
    means: Vec<Option<(u32, u32)>>,
    /// Per entry, the hint its mean is written with (empty: none, as version 7 writes).
    hints: Vec<Option<Hint>>,
    form: Form,
}

/// A mean the writer may store instead of a value: `[v, a, b]` with `2v = a + b` exactly.
pub type Mean<'a> = [&'a Value; 3];

impl<'a> Dictionary<'a> {
    /// The dictionary of `all` (values may repeat) and of the halves of `means`, in entry
    /// form `form`; in the shared form, entries that `means` show to be the mean of two
    /// others are stored so where [`super::means::choose`] picks them, each with its
    /// [`Hint`] where `hinted` and one fits.
    pub fn new(
        all: impl Iterator<Item = &'a Value>,
        means: &[Mean<'a>],
        form: Form,
        hinted: bool,
    ) -> Dictionary<'a> {
        let mut ranks: HashMap<Key<'a>, u32> = HashMap::new();
        let mut values: Vec<&Value> = Vec::new();
        for v in all {
            ranks.entry(key(v)).or_insert_with(|| {
                values.push(v);
                0
            });
        }
        // A value that is the mean of two values the positions take needs no other; only
        // the others bring their halves (the exits' values) into the dictionary.
        // A mean only where it is shorter than the value whole, and brings in no value
        // longer than itself.
        let listed = |v: &Value| ranks.contains_key(&key(v));
        let whole = |v: &Value| 4 + v.numer_bits().div_ceil(8).max(1);
        let means: Vec<Mean<'a>> = means
            .par_iter()
            .filter(|m| {
                let long = whole(m[0]);
                long > HINTED_MEAN_LEN && [m[1], m[2]].iter().all(|h| listed(h) || whole(h) <= long)
            })
            .copied()
            .collect();
        let within = |m: &Mean<'a>| listed(m[1]) && listed(m[2]) && m[1] != m[0] && m[2] != m[0];
        let served: HashSet<Key<'a>> = means
            .par_iter()
            .filter(|m| within(m))
            .map(|m| key(m[0]))
            .collect();
        let means: Vec<Mean<'a>> = means
            .iter()
            .filter(|m| within(m) || !served.contains(&key(m[0])))
            .copied()
            .collect();
        drop(served);
        for v in means.iter().flat_map(|m| [m[1], m[2]]) {
            ranks.entry(key(v)).or_insert_with(|| {
                values.push(v);
                0
            });
        }
        // Sort by a floating-point shadow, exactly only where shadows come close (values of
        // thousands of digits make every cross-multiplication costly).
        let mut keyed: Vec<(f64, &Value)> =
            values.into_par_iter().map(|v| (shadow(v), v)).collect();
        keyed.par_sort_by(|(fa, a), (fb, b)| cmp_shadowed(a, *fa, b, *fb));
        let values: Vec<&Value> = keyed.into_iter().map(|(_, v)| v).collect();
        for (rank, v) in values.iter().enumerate() {
            ranks.insert(key(v), rank as u32);
        }
        let means = if form == Form::SharedDenominators && !means.is_empty() {
            let rank = |v: &Value| ranks[&key(v)];
            let triples: Vec<[u32; 3]> = means
                .par_iter()
                .map(|m| [rank(m[0]), rank(m[1]), rank(m[2])])
                .collect();
            super::means::choose(values.len(), triples)
        } else {
            Vec::new()
        };
        let hints = if hinted {
            (0..means.len())
                .into_par_iter()
                .map(|k| {
                    let (a, b) = means[k]?;
                    Hint::of(values[k], values[a as usize], values[b as usize])
                })
                .collect()
        } else {
            Vec::new()
        };
        let mut denominators = Vec::new();
        let mut numbers = HashMap::new();
        if form == Form::SharedDenominators {
            for (k, v) in values.iter().enumerate() {
                if means.get(k).is_some_and(Option::is_some) {
                    continue;
                }
                numbers.entry(denominator(v)).or_insert_with(|| {
                    denominators.push(denominator(v));
                    (denominators.len() - 1) as u32
                });
            }
        }
        Dictionary {
            values,
            ranks,
            denominators,
            numbers,
            means,
            hints,
            form,
        }
    }

    /// The rank of `v`, which must be one of the values the dictionary was made from.
    pub fn rank(&self, v: &Value) -> u32 {
        self.ranks[&key(v)]
    }

    /// Forget the ranks (they are large and no longer needed once the positions' ranks
    /// are written).
    pub fn drop_ranks(&mut self) {
        self.ranks = HashMap::new();
    }

    /// Whether any entry is stored as a mean.
    pub fn has_means(&self) -> bool {
        self.means.iter().any(Option::is_some)
    }

    /// The two entries entry `k` is stored as the mean of, if it is.
    fn mean_of(&self, k: usize) -> Option<(u32, u32)> {
        self.means.get(k).copied().flatten()
    }

    /// The hint entry `k`'s mean is written with, if any.
    fn hint(&self, k: usize) -> Option<Hint> {
        self.hints.get(k).copied().flatten()
    }

    /// The bytes of entry `k`'s encoding, without encoding it.
    pub fn entry_len(&self, k: usize) -> u64 {
        let v = self.values[k];
        match self.form {
            Form::Whole => 4 + v.numer_bits().div_ceil(8).max(1) + byte_len(&v.denom()),
            Form::SharedDenominators if self.mean_of(k).is_some() => match self.hint(k) {
                Some(_) => HINTED_MEAN_LEN,
                None => MEAN_ENTRY_LEN,
            },
            Form::SharedDenominators => 4 + v.numer_bits().div_ceil(8).max(1),
        }
    }

    /// Append entry `k`'s encoding to `out`.
    pub fn encode_entry(&self, k: usize, out: &mut Vec<u8>) {
        let v = self.values[k];
        match (self.form, self.mean_of(k)) {
            (Form::Whole, _) => {
                let numer = v.numer();
                out.extend_from_slice(&(bytes::byte_len(&numer) as u32).to_le_bytes());
                bytes::append_le_bytes(&numer, out);
                bytes::append_le_bytes(&v.denom(), out);
            }
            (Form::SharedDenominators, Some((a, b))) => {
                let hint = self.hint(k).map(|h| h.words);
                for word in [MEAN_MARK, a, b].iter().chain(hint.iter().flatten()) {
                    out.extend_from_slice(&word.to_le_bytes());
                }
            }
            (Form::SharedDenominators, None) => {
                out.extend_from_slice(&self.numbers[&denominator(v)].to_le_bytes());
                bytes::append_le_bytes(&v.numer(), out);
            }
        }
    }
}

/// Version 7: the word in place of a denominator number that marks an entry stored as the
/// mean of two others, whose numbers follow it.
pub(super) const MEAN_MARK: u32 = u32::MAX;
/// The bytes of a mean entry without a hint: the mark and two entry numbers.
pub(super) const MEAN_ENTRY_LEN: u64 = 12;
/// The bytes of a mean entry with a hint (version 8): the mark, two entry numbers and the
/// hint's four words.
pub(super) const HINTED_MEAN_LEN: u64 = 28;

/// What an entry of version 7 on is.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Entry {
    /// A value stored whole (its denominator number, then its numerator).
    Whole,
    /// The mean of entries `a` and `b`, with a hint or without.
    Mean(u32, u32, Option<Hint>),
    /// The mark of a mean, but not the words of one.
    Malformed,
}

/// Version 7 on: what `entry` is. A mean is the mark and two numbers (12 bytes) or the
/// mark, two numbers and a hint's four words (28 bytes).
pub(super) fn entry_kind(entry: &[u8]) -> Entry {
    if denominator_number(entry) != Some(MEAN_MARK) {
        return Entry::Whole;
    }
    let word = |i: usize| u32::from_le_bytes(entry[4 * i..4 * i + 4].try_into().expect("4"));
    match entry.len() as u64 {
        MEAN_ENTRY_LEN => Entry::Mean(word(1), word(2), None),
        HINTED_MEAN_LEN => {
            let words = [word(3), word(4), word(5), word(6)];
            Entry::Mean(word(1), word(2), Some(Hint { words }))
        }
        _ => Entry::Malformed,
    }
}

fn key(v: &Value) -> Key<'_> {
    Key(v)
}

/// A value's denominator as a map key: its odd part and power of two.
fn denominator(v: &Value) -> (&BigUint, u32) {
    (v.shared_odd(), v.twos())
}

/// The bytes [`bytes::le_bytes`] writes for `n` (one for zero).
pub(super) fn byte_len(n: &BigUint) -> u64 {
    bytes::byte_len(n) as u64
}

/// A version 1 to 3 entry: numerator length (u32), numerator bytes, denominator bytes, all
/// little-endian. None unless it is a fraction in [0, 1] with a non-zero denominator.
pub(super) fn decode_whole(entry: &[u8]) -> Option<Value> {
    let (len, rest) = entry.split_first_chunk::<4>()?;
    let len = u32::from_le_bytes(*len) as usize;
    if len >= rest.len() {
        return None;
    }
    let (numer, denom) = rest.split_at(len);
    fraction(numer, denom)
}

/// The denominator number of a version 4 entry (None if the entry is shorter than one).
pub(super) fn denominator_number(entry: &[u8]) -> Option<u32> {
    entry.first_chunk::<4>().map(|n| u32::from_le_bytes(*n))
}

/// A version 4 entry (denominator number, numerator bytes), with `denominator` the bytes of
/// the denominator it names. None unless it is a fraction in [0, 1] with a non-zero
/// denominator.
pub(super) fn decode_shared(entry: &[u8], denominator: &[u8]) -> Option<Value> {
    let numer = entry.get(4..).filter(|n| !n.is_empty())?;
    fraction(numer, denominator)
}

/// A version 4 entry whose denominator is already decoded (`denominator`, its odd part
/// shared with the other entries naming it, and its power of two): only its numerator is
/// read. None as [`decode_shared`].
pub(super) fn decode_with(entry: &[u8], denominator: &(Arc<BigUint>, u32)) -> Option<Value> {
    let numer = bytes::from_le_bytes(entry.get(4..).filter(|n| !n.is_empty())?);
    let (odd, twos) = denominator;
    if odd.is_zero() {
        return None;
    }
    let bits = odd.bits() + u64::from(*twos);
    if numer.bits() > bits || (numer.bits() == bits && numer > (&**odd << *twos)) {
        return None;
    }
    Some(Value::from_parts(numer, odd.clone(), *twos))
}

fn fraction(numer: &[u8], denom: &[u8]) -> Option<Value> {
    let numer = bytes::from_le_bytes(numer);
    let denom = bytes::from_le_bytes(denom);
    if denom.is_zero() || numer > denom {
        return None;
    }
    Some(Value::new_raw(numer, denom))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: u64, d: u64) -> Value {
        Value::small(n, d)
    }

    #[test]
    fn entries_decode_to_their_values_and_have_the_stated_length() {
        let big = BigUint::from(7u8).pow(300);
        let values = [
            v(0, 1),
            v(1, 1),
            v(255, 256),
            v(256, 257),
            v(1, 257),
            Value::new(&big / 3u8, big.clone()),
            Value::new(&big / 3u8 + 1u8, big.clone()),
        ];
        for form in [Form::Whole, Form::SharedDenominators] {
            let d = Dictionary::new(values.iter(), &[], form, true);
            // Sorted, each value once.
            assert!(d.values.windows(2).all(|w| w[0] < w[1]), "{form:?}");
            for v in &values {
                let mut e = Vec::new();
                let k = d.rank(v) as usize;
                d.encode_entry(k, &mut e);
                assert_eq!(e.len() as u64, d.entry_len(k), "{form:?} {v}");
                let back = match form {
                    Form::Whole => decode_whole(&e),
                    Form::SharedDenominators => {
                        let n = denominator_number(&e).unwrap() as usize;
                        let (odd, twos) = d.denominators[n];
                        let whole = odd << twos;
                        let shared = crate::value::split(whole.clone());
                        assert_eq!(decode_with(&e, &shared).as_ref(), Some(v));
                        decode_shared(&e, &bytes::le_bytes(&whole))
                    }
                };
                assert_eq!(back.as_ref(), Some(v), "{form:?}");
                assert_eq!(d.values[d.rank(v) as usize], v);
            }
        }
        // 1, 256, 257 and 7^300: each listed once, in the order of first use (0 < 1/257
        // < big/3 < … ).
        let d = Dictionary::new(values.iter(), &[], Form::SharedDenominators, true);
        let want: Vec<BigUint> = vec![1u32.into(), 257u32.into(), big.clone(), 256u32.into()];
        let whole: Vec<BigUint> = d.denominators.iter().map(|&(o, t)| o << t).collect();
        assert_eq!(whole, want);
        assert!(
            Dictionary::new(values.iter(), &[], Form::Whole, true)
                .denominators
                .is_empty()
        );
    }

    #[test]
    fn malformed_entries_are_not_values() {
        // Numerator above the denominator, zero denominator, no numerator.
        assert_eq!(decode_whole(&[1, 0, 0, 0, 3, 2]), None);
        assert_eq!(decode_whole(&[1, 0, 0, 0, 1, 0]), None);
        assert_eq!(decode_whole(&[1, 0, 0, 0, 1]), None);
        assert_eq!(decode_whole(&[1, 0, 0]), None);
        assert_eq!(decode_shared(&[0, 0, 0, 0, 3], &[2]), None);
        assert_eq!(decode_shared(&[0, 0, 0, 0, 1], &[0]), None);
        assert_eq!(decode_shared(&[0, 0, 0, 0], &[2]), None);
        assert_eq!(decode_shared(&[0, 0, 0, 0, 1], &[2]), Some(v(1, 2)));
        assert_eq!(denominator_number(&[5, 0, 0]), None);
        assert_eq!(denominator_number(&[5, 0, 0, 0, 9]), Some(5));
    }
}
