//! A stored table's values as the certificate reads them, without holding them: the
//! fixed-point images of the dictionary's entries are held (at most 8 limbs an entry,
//! which decide nearly every comparison), and a value itself is decoded from the mapped
//! file each time an equation or a tie needs it. Held whole, 8x8 KNvKP's values (5.7
//! million positions, denominators of up to 21,853 digits) and the verification's own
//! data passed the machine's 24 GB; decoding a value costs a few microseconds against
//! the hundreds its equation's long products take.

use std::borrow::Cow;
use std::cmp::Ordering;

use rayon::prelude::*;

use crate::error::Error;
use crate::table::Table;
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
    /// Whether every entry is in lowest terms.
    pub reduced: bool,
}

impl Dictionary {
    /// Decode every entry of `table`'s dictionary once (in parallel), keeping its image at
    /// the width [`Images::of`] would choose, and whether it is in lowest terms.
    pub fn of(table: &Table) -> Result<Dictionary, Error> {
        let len = table.info().dictionary_len;
        let mut fixed = vec![0u64; len * WIDEST];
        let bits: Vec<u64> = fixed
            .par_chunks_mut(WIDEST)
            .enumerate()
            .map(|(k, out)| {
                let v = table.dictionary_value_as_stored(k)?;
                out.copy_from_slice(&fixed_point(&v, WIDEST).0);
                Ok(v.shared_odd().bits() + u64::from(v.twos()))
            })
            .collect::<Result<_, Error>>()?;
        let bits = bits.into_iter().max().unwrap_or(1) as usize;
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
            reduced: lowest_terms(table, len)?,
        })
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

/// Whether every dictionary entry of `table` is in lowest terms. Entries that name one
/// shared denominator are checked together, up to [`GROUP`] at a time: one gcd of the
/// denominator with their numerators' product modulo it ([`long::all_coprime`]). A gcd
/// each took nearly all of 8x8 KNvKP's verification (3.9 million entries of up to 21,853
/// digits, 1.4 million denominators) and had not ended after 29 minutes.
fn lowest_terms(table: &Table, len: usize) -> Result<bool, Error> {
    // Entries of older versions, which hold their own denominators, each a group of one.
    let key = |k: usize| {
        Ok::<_, Error>(
            table
                .dictionary_denominator_number(k)?
                .map_or(u64::MAX - k as u64, u64::from),
        )
    };
    let mut order: Vec<(u64, usize)> = (0..len)
        .into_par_iter()
        .map(|k| Ok((key(k)?, k)))
        .collect::<Result<_, Error>>()?;
    order.par_sort_unstable();
    let groups: Vec<&[(u64, usize)]> = order
        .chunk_by(|a, b| a.0 == b.0)
        .flat_map(|g| g.chunks(GROUP))
        .collect();
    groups
        .par_iter()
        .map(|group| {
            let values = group
                .iter()
                .map(|&(_, k)| table.dictionary_value_as_stored(k))
                .collect::<Result<Vec<Value>, Error>>()?;
            let denominator = values[0].denom().into_owned();
            Ok::<bool, Error>(long::all_coprime(
                &denominator,
                values.iter().map(|v| v.numer().into_owned()),
            ))
        })
        .try_reduce(|| true, |a, b| Ok(a && b))
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
    bound: Bound,
    positions: usize,
    terminals: Images,
}

impl<'a> Stored<'a> {
    /// `table`'s positions by `bound`, then `terminals` (imaged at the dictionary's width).
    pub fn new(
        table: &'a Table,
        dictionary: &'a Dictionary,
        bound: Bound,
        terminals: Vec<Value>,
    ) -> Stored<'a> {
        Stored {
            table,
            dictionary,
            bound,
            positions: table.len(),
            terminals: Images::new(terminals, dictionary.width()),
        }
    }

    /// Position `i`'s dictionary entry.
    fn rank(&self, i: usize) -> usize {
        match self.bound {
            Bound::Alpha => self.table.rank(i) as usize,
            Bound::Beta => self.table.rank_beta(i) as usize,
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Entries whose images differ are ordered by them, without decoding; equal images
    /// fall to the exact values.
    #[test]
    fn the_dictionary_order_is_checked_exactly_where_images_agree() {
        let r = Value::small;
        let dictionary = |heads: Vec<u64>| Dictionary {
            width: 2,
            fixed: heads.iter().flat_map(|&h| [0, h]).collect(),
            heads,
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
