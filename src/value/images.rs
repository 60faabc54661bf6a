//! Fixed-point images of values: `floor(v · 2^F)` in `width` little-endian 64-bit limbs
//! (F = 64·width − 1, so the top limb holds the integer bit and 63 fraction bits). Two
//! values whose images differ compare like their images; only equal images need the
//! rationals. The certificate reads values through the [`Imaged`] view, which both the
//! solve method's [`Images`] and the iteration's guesses provide.

use std::borrow::Cow;

use num_bigint::BigUint;
use num_traits::Zero;
use rayon::prelude::*;

use super::Value;

/// `floor(g · 2^F)` in `width` limbs (F = 64·width − 1), and whether it is exact.
pub fn fixed_point(g: &Value, width: usize) -> (Vec<u64>, bool) {
    let f = 64 * width - 1;
    let (numer, denom) = (g.numer(), g.denom());
    if let (Some(p), Some(q)) = (to_u64(&numer), to_u64(&denom)) {
        return fixed_point_small(p, q, width);
    }
    let (q, r) = super::long::shifted_div_rem(&numer, f as u64, &denom);
    let mut limbs = q.to_u64_digits();
    limbs.resize(width, 0);
    (limbs, r.is_zero())
}

fn to_u64(x: &BigUint) -> Option<u64> {
    let d = x.to_u64_digits();
    match d.len() {
        0 => Some(0),
        1 => Some(d[0]),
        _ => None,
    }
}

/// `floor(p/q · 2^(64·width − 1))` by schoolbook long division in machine words (p ≤ q).
fn fixed_point_small(p: u64, q: u64, width: usize) -> (Vec<u64>, bool) {
    let mut limbs = vec![0u64; width];
    let mut rem = p as u128;
    for k in (0..width).rev() {
        // Top limb holds 63 fraction bits below the integer bit; the others hold 64.
        let shift = if k == width - 1 { 63 } else { 64 };
        let num = rem << shift;
        let digit = num / q as u128;
        rem = num % q as u128;
        limbs[k] = digit as u64;
    }
    (limbs, rem == 0)
}

/// Exact values of every node of a game with their fixed-point images: what the
/// certificate reads.
pub trait Imaged: Sync {
    /// The exact value of node `i`: borrowed where it is held, decoded where it is read
    /// from a file only when asked for (`verify` on tables larger than memory).
    fn value(&self, i: usize) -> Cow<'_, Value>;
    /// The fixed-point image of node `i`'s value, `width` limbs, least significant first.
    fn fixed(&self, i: usize) -> &[u64];
    /// The top limb of node `i`'s image, `floor(v · 2^63)`.
    fn head(&self, i: usize) -> u64;
    /// Whether nodes `i` and `j` are known to hold one value without a look at it (two
    /// positions of a stored table that name one dictionary entry). False where unknown.
    fn same_entry(&self, _i: usize, _j: usize) -> bool {
        false
    }
    /// Whether node `p`'s value is, by the way it is stored, exactly the mean of the
    /// values of nodes `w` and `b` (a dictionary entry stored as the mean of their two
    /// entries, which decodes as that mean): then `2 v(p) = v(w) + v(b)` holds without
    /// arithmetic. False where unknown.
    fn stored_as_mean_of(&self, _p: usize, _w: usize, _b: usize) -> bool {
        false
    }
}

/// Exact values with fixed-point images wide enough that most comparisons are decided
/// without rationals.
#[derive(Debug, Default)]
pub struct Images {
    width: usize,
    values: Vec<Value>,
    /// `width` limbs per node.
    fixed: Vec<u64>,
    /// The top limb of each image, kept compact for scans.
    heads: Vec<u64>,
}

impl Images {
    /// The images of `values` at `width` limbs each.
    pub fn new(values: Vec<Value>, width: usize) -> Images {
        let mut fixed = vec![0u64; values.len() * width];
        let heads = values
            .par_iter()
            .zip(fixed.par_chunks_mut(width))
            .map(|(v, out)| {
                let (limbs, _) = fixed_point(v, width);
                out.copy_from_slice(&limbs);
                limbs[width - 1]
            })
            .collect();
        Images {
            width,
            values,
            fixed,
            heads,
        }
    }

    /// The images of `values` at a width chosen from their largest denominator (twice its
    /// bits, within 2 to 8 limbs: images of values with denominators q differ in the top
    /// 2·log₂ q bits unless the values are equal).
    pub fn of(values: Vec<Value>) -> Images {
        let bits = values.iter().map(|v| v.denom().bits()).max().unwrap_or(1) as usize;
        Images::new(values, (2 * bits / 64 + 2).clamp(2, 8))
    }

    /// The exact value of node `i`.
    pub fn value(&self, i: usize) -> &Value {
        &self.values[i]
    }

    /// The width of the images, in limbs (0 once released).
    pub fn width(&self) -> usize {
        self.width
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.heads.len()
    }

    /// Whether there are no nodes.
    pub fn is_empty(&self) -> bool {
        self.heads.is_empty()
    }

    /// Every node's value, in node order.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    /// The values, taken back without a copy.
    pub fn into_values(self) -> Vec<Value> {
        self.values
    }

    /// Take the values out, keeping the images (to hold the values elsewhere a while:
    /// until [`Images::restore_values`], [`Imaged::value`] has nothing to read).
    pub fn take_values(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.values)
    }

    /// Free the fixed-point images once no certificate will read them (the heads stay):
    /// [`Imaged::fixed`] is empty from then on, so comparisons that the heads leave open
    /// fall to the exact values, still exact. On 8x8 an image is 8 limbs a node: 0.4 GB
    /// for KNPvK's 5.7 million positions.
    pub fn release_images(&mut self) {
        self.fixed = Vec::new();
        self.width = 0;
    }

    /// Put back the values taken by [`Images::take_values`]. Panics if their number is not
    /// the number of images (values of something else).
    pub fn restore_values(&mut self, values: Vec<Value>) {
        assert_eq!(values.len(), self.heads.len(), "values of other images");
        self.values = values;
    }
}

/// The first `n` nodes of some [`Images`] followed by other nodes' values: one game's
/// positions with other terminal values in place (α's positions with the exits' β), read
/// without copying the positions' values. The others' images have the same width.
pub struct Joined<'a> {
    head: &'a Images,
    n: usize,
    tail: Images,
}

impl Images {
    /// The first `n` nodes of these images, then `tail` (imaged at the same width).
    pub fn joined(&self, n: usize, tail: Vec<Value>) -> Joined<'_> {
        assert!(n <= self.len(), "more nodes than the images hold");
        assert!(self.width > 0, "images released");
        Joined {
            head: self,
            n,
            tail: Images::new(tail, self.width.max(2)),
        }
    }
}

impl Imaged for Joined<'_> {
    fn value(&self, i: usize) -> Cow<'_, Value> {
        Cow::Borrowed(if i < self.n {
            self.head.value(i)
        } else {
            self.tail.value(i - self.n)
        })
    }
    fn fixed(&self, i: usize) -> &[u64] {
        if i < self.n {
            self.head.fixed(i)
        } else {
            self.tail.fixed(i - self.n)
        }
    }
    #[inline]
    fn head(&self, i: usize) -> u64 {
        if i < self.n {
            self.head.head(i)
        } else {
            self.tail.head(i - self.n)
        }
    }
}

impl Imaged for Images {
    fn value(&self, i: usize) -> Cow<'_, Value> {
        Cow::Borrowed(&self.values[i])
    }
    fn fixed(&self, i: usize) -> &[u64] {
        &self.fixed[i * self.width..(i + 1) * self.width]
    }
    #[inline]
    fn head(&self, i: usize) -> u64 {
        self.heads[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_point_images() {
        let r = Value::small;
        assert_eq!(fixed_point(&r(1, 2), 2), (vec![0, 1 << 62], true));
        assert_eq!(fixed_point(&r(1, 1), 2), (vec![0, 1 << 63], true));
        let (limbs, exact) = fixed_point(&r(1, 3), 2);
        assert!(!exact);
        assert_eq!(limbs[1], (1u64 << 63) / 3);
        let images = Images::new(vec![r(1, 3), r(1, 2)], 2);
        assert_eq!(images.fixed(0), &limbs[..]);
        assert_eq!(images.head(1), 1 << 62);
    }

    #[test]
    fn joined_images_read_as_the_images_of_the_joined_values() {
        let r = Value::small;
        let head = Images::new(vec![r(1, 3), r(2, 5), r(1, 1), r(0, 1)], 3);
        let tail = vec![r(7, 9), r(1, 2)];
        let joined = head.joined(2, tail.clone());
        let whole = Images::new(vec![r(1, 3), r(2, 5), r(7, 9), r(1, 2)], 3);
        for i in 0..4 {
            assert_eq!(&*joined.value(i), whole.value(i));
            assert_eq!(joined.fixed(i), whole.fixed(i));
            assert_eq!(joined.head(i), whole.head(i));
        }
    }
}
