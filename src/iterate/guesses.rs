//! The guesses sₙ: the simplest rational in [αₙ, βₙ], kept per position with the iteration
//! of its last change.
//!
//! sₙ only needs recomputing when sₙ₋₁ falls out of [αₙ, βₙ] (SPEC §3). That membership
//! test runs for every position at every iteration, so each guess g also keeps its image
//! `S = floor(g · 2^F)` in the kernel's limb format: `αₙ ≤ g` is then `A ≤ S`, and `g ≤ βₙ`
//! is `S < B`, or `S = B` when g · 2^F is an integer. Both are exact integer comparisons,
//! nearly always decided by the top limb.

use std::cmp::Ordering;

use num_bigint::BigUint;
use num_traits::One;
use rayon::prelude::*;

use super::kernel::{Fresh, Kernel};
use crate::value::simplest::{Prefix, descend, simplest_between_u128};
use crate::value::{Imaged, Value, fixed_point};

/// The guess of every node (positions and the two terminal nodes) and its fixed-point image.
#[derive(Debug)]
pub struct Guesses {
    width: usize,
    /// Per node: the guess and what goes with it.
    slots: Vec<Slot>,
    /// `floor(g · 2^F)`, `width` limbs per node.
    fixed: Vec<u64>,
    /// Top limb of each fixed-point image, `floor(g · 2^63)`, kept compact for scans.
    heads: Vec<u64>,
}

/// One node's guess, apart from its fixed-point image.
#[derive(Clone, Debug, Default)]
struct Slot {
    value: Value,
    /// Whether `g · 2^F` is an integer.
    exact: bool,
    /// Lowest non-zero limb of the fixed-point image (width if zero).
    low: u16,
    last_change: u32,
    /// The continued-fraction prefix of the guess's last descent, to resume from.
    prefix: Option<Box<Prefix>>,
}

/// Nodes per parallel task of [`Guesses::update`].
const UPDATE_CHUNK: usize = 1024;

/// Store a fixed-point image: its limbs, head, lowest non-zero limb and exactness.
fn store(slot: &mut Slot, fixed: &mut [u64], head: &mut u64, limbs: &[u64], exact: bool) {
    fixed.copy_from_slice(limbs);
    *head = limbs[limbs.len() - 1];
    slot.exact = exact;
    slot.low = limbs.iter().position(|&l| l != 0).unwrap_or(limbs.len()) as u16;
}

impl Guesses {
    /// s₀: 0 on every position (the simplest rational in [0, 1]); 1 and 0 on the terminal
    /// nodes, which come last.
    pub fn new(nodes: usize, width: usize) -> Guesses {
        let mut values = vec![Value::zero(); nodes];
        values[nodes - 2] = Value::one();
        let mut g = Guesses {
            width,
            slots: vec![Slot::default(); nodes],
            fixed: Vec::new(),
            heads: Vec::new(),
        };
        g.set_values(width, values);
        g
    }

    /// Guesses of every node (terminal nodes included) with their last-change iterations,
    /// for resuming a run from a checkpoint.
    pub fn restore(values: Vec<Value>, last_change: Vec<u32>, width: usize) -> Guesses {
        assert_eq!(values.len(), last_change.len(), "one last change per guess");
        let mut g = Guesses::new(values.len(), width);
        g.set_values(width, values);
        g.set_last_changes(last_change);
        g
    }

    /// Record each node's last change (one per node), keeping the values: for guesses whose
    /// last changes were found without computing them ([`super::settle`]).
    pub fn set_last_changes(&mut self, last_change: Vec<u32>) {
        assert_eq!(
            last_change.len(),
            self.slots.len(),
            "one last change per node"
        );
        for (slot, n) in self.slots.iter_mut().zip(last_change) {
            slot.last_change = n;
        }
    }

    /// Set every guess and its image at `width` (last changes and prefixes are kept: both
    /// belong to the values, not to their images).
    fn set_values(&mut self, width: usize, values: Vec<Value>) {
        let nodes = values.len();
        self.width = width;
        self.fixed = vec![0; nodes * width];
        self.heads = vec![0; nodes];
        self.slots
            .par_iter_mut()
            .zip(values)
            .zip(self.fixed.par_chunks_mut(width))
            .zip(self.heads.par_iter_mut())
            .for_each(|(((slot, value), fixed), head)| {
                let (limbs, exact) = fixed_point(&value, width);
                store(slot, fixed, head, &limbs, exact);
                slot.value = value;
            });
    }

    /// Follow the kernel's width (recomputes the fixed-point images).
    pub fn sync_width(&mut self, kernel: &Kernel) {
        if kernel.width() != self.width {
            let values = self
                .slots
                .iter_mut()
                .map(|s| std::mem::take(&mut s.value))
                .collect();
            self.set_values(kernel.width(), values);
        }
    }

    /// The guess of node `i`.
    pub fn value(&self, i: usize) -> &Value {
        &self.slots[i].value
    }

    /// Every node's guess, taken back.
    pub fn into_values(self) -> Vec<Value> {
        self.slots.into_iter().map(|s| s.value).collect()
    }

    /// The iteration at which node `i`'s guess last changed (0 if never).
    pub fn last_change(&self, i: usize) -> u32 {
        self.slots[i].last_change
    }

    /// The fixed-point image `floor(g · 2^F)` of node `i`'s guess.
    pub fn fixed(&self, i: usize) -> &[u64] {
        &self.fixed[i * self.width..(i + 1) * self.width]
    }

    /// `floor(g · 2^63)` for node `i`'s guess g.
    #[inline]
    pub fn head(&self, i: usize) -> u64 {
        self.heads[i]
    }

    /// Whether the guess of the node in `fresh` has left [αₙ, βₙ]. Exact.
    pub fn falls_out(&self, fresh: &Fresh<'_>) -> bool {
        let i = fresh.node;
        let s = self.fixed(i);
        let w = self.width;
        // α ≤ g  ⇔  A ≤ S  (A is an integer).
        if fresh.alpha[w - 1] != s[w - 1] {
            if fresh.alpha[w - 1] > s[w - 1] {
                return true;
            }
        } else if cmp_from_top(fresh.alpha, s, fresh.lo) == Ordering::Greater {
            return true;
        }
        // g ≤ β  ⇔  S < B, or S = B and g·2^F is an integer.
        if fresh.beta[w - 1] != s[w - 1] {
            return fresh.beta[w - 1] < s[w - 1];
        }
        match cmp_from_top(s, fresh.beta, fresh.lo) {
            Ordering::Less => false,
            Ordering::Greater => true,
            // Equal on the limbs B may use: S must be zero below them and exact.
            Ordering::Equal => {
                let slot = &self.slots[i];
                (slot.low as usize) < fresh.lo || !slot.exact
            }
        }
    }

    /// Recompute the guesses of `nodes` (those that fell out, in increasing order) from the
    /// kernel's current bounds, and record the kernel's iteration as their last change. In
    /// parallel over blocks of nodes, each task storing its own results.
    pub fn update(&mut self, kernel: &Kernel, nodes: &[u32]) {
        debug_assert!(nodes.is_sorted(), "nodes in increasing order");
        let (alpha, beta) = (kernel.alpha(), kernel.beta());
        let (n, w) = (kernel.iteration(), self.width);
        self.slots
            .par_chunks_mut(UPDATE_CHUNK)
            .zip(self.fixed.par_chunks_mut(UPDATE_CHUNK * w))
            .zip(self.heads.par_chunks_mut(UPDATE_CHUNK))
            .enumerate()
            .for_each(|(c, ((slots, fixed), heads))| {
                let base = c * UPDATE_CHUNK;
                let from = nodes.partition_point(|&i| (i as usize) < base);
                let to = nodes.partition_point(|&i| (i as usize) < base + slots.len());
                for &i in &nodes[from..to] {
                    let (i, j) = (i as usize, i as usize - base);
                    let slot = &mut slots[j];
                    let (g, limbs, exact, prefix) = simplest_from_rows_resuming(
                        alpha.row(i),
                        beta.row(i),
                        slot.prefix.as_deref(),
                    );
                    store(
                        slot,
                        &mut fixed[j * w..(j + 1) * w],
                        &mut heads[j],
                        &limbs,
                        exact,
                    );
                    slot.value = g;
                    slot.last_change = n;
                    match (&mut slot.prefix, prefix) {
                        (Some(old), Some(new)) => **old = new,
                        (old, new) => *old = new.map(Box::new),
                    }
                }
            });
    }
}

impl Imaged for Guesses {
    fn value(&self, i: usize) -> std::borrow::Cow<'_, Value> {
        std::borrow::Cow::Borrowed(Guesses::value(self, i))
    }
    fn fixed(&self, i: usize) -> &[u64] {
        Guesses::fixed(self, i)
    }
    #[inline]
    fn head(&self, i: usize) -> u64 {
        Guesses::head(self, i)
    }
}

/// Whether `x` (with fixed-point image `s`, exact or not) lies in `[A, B]` given as rows.
fn image_within(s: &[u64], exact: bool, a: &[u64], b: &[u64]) -> bool {
    let top = a.len() - 1;
    let a_le_s =
        a[top] < s[top] || (a[top] == s[top] && cmp_from_top(a, s, 0) != Ordering::Greater);
    let s_le_b = match s[top].cmp(&b[top]).then_with(|| cmp_from_top(s, b, 0)) {
        Ordering::Less => true,
        Ordering::Equal => exact,
        Ordering::Greater => false,
    };
    a_le_s && s_le_b
}

/// `floor(row / 2^cut)` (or the ceiling) as a u128; the result must fit.
fn shifted_u128(row: &[u64], cut: usize, ceil: bool) -> u128 {
    // At most two limbs lie at or above limb cut / 64 when the result fits.
    let out = row[cut / 64..]
        .iter()
        .rev()
        .fold(0u128, |acc, &l| (acc << 64) | l as u128);
    let r = cut % 64;
    let mut v = out >> r;
    let dropped = (out & ((1u128 << r) - 1)) != 0 || row[..cut / 64].iter().any(|&l| l != 0);
    if ceil && dropped {
        v += 1;
    }
    v
}

/// `floor(row / 2^cut)`, and whether any dropped bit was set.
fn row_shifted(row: &[u64], cut: usize) -> (BigUint, bool) {
    let (limb, bits) = (cut / 64, cut % 64);
    let dropped =
        row[..limb].iter().any(|&l| l != 0) || (bits > 0 && row[limb] << (64 - bits) != 0);
    (row_to_biguint(&row[limb..]) >> bits, dropped)
}

fn row_to_biguint(row: &[u64]) -> BigUint {
    BigUint::new(
        row.iter()
            .flat_map(|&l| [l as u32, (l >> 32) as u32])
            .collect(),
    )
}

/// Bits kept below the first bit where the two ends differ when they are cut (the widened
/// interval is then at most 2^-CUT_MARGIN wider than the true one, relative to its width;
/// the result is verified either way).
const CUT_MARGIN: usize = 16;

/// The simplest rational in `[A/2^F, B/2^F]` given as fixed-point rows, with its own
/// fixed-point image. The ends are first cut to the bits down to shortly below where they
/// differ (the answer only depends on their common continued-fraction prefix); the result
/// is then checked against the exact interval and the cut is lowered until it passes.
pub fn simplest_from_rows(a: &[u64], b: &[u64]) -> (Value, Vec<u64>, bool) {
    let (value, image, exact, _) = simplest_from_rows_resuming(a, b, None);
    (value, image, exact)
}

/// [`simplest_from_rows`], resuming the descent from `prefix` (a prefix of an earlier
/// guess of an interval that contains this one) when the new ends allow it. Also returns
/// the prefix of this descent, for next time.
pub fn simplest_from_rows_resuming(
    a: &[u64],
    b: &[u64],
    prefix: Option<&Prefix>,
) -> (Value, Vec<u64>, bool, Option<Prefix>) {
    let w = a.len();
    let f = 64 * w - 1;
    let first_diff = (0..w).rev().find(|&k| a[k] != b[k]);
    let Some(t) = first_diff else {
        // A single dyadic point.
        let num = row_to_biguint(a);
        let tz = num.trailing_zeros().unwrap_or(f as u64).min(f as u64);
        let value = Value::new_raw(num >> tz, BigUint::one() << (f as u64 - tz));
        return (value, a.to_vec(), true, None);
    };
    let diff_bit = 64 * t + 63 - (a[t] ^ b[t]).leading_zeros() as usize;
    let mut cut = diff_bit.saturating_sub(CUT_MARGIN);
    loop {
        let frac_bits = f - cut;
        let (value, next) = if frac_bits <= 124 {
            let (an, bn) = (shifted_u128(a, cut, false), shifted_u128(b, cut, true));
            let d = 1u128 << frac_bits;
            let (p, q) = simplest_between_u128(an, d, bn, d);
            (Value::new_raw(BigUint::from(p), BigUint::from(q)), None)
        } else {
            let (an, _) = row_shifted(a, cut);
            let (mut bn, dropped) = row_shifted(b, cut);
            if dropped {
                bn += 1u32;
            }
            let d = BigUint::one() << frac_bits;
            let (value, st) = match prefix.and_then(|p| Some((p, p.enter(&an, &bn, frac_bits)?))) {
                Some((p, [xn, xd, yn, yd])) => descend(xn, xd, yn, yd, p.clone()),
                None => descend(an, d.clone(), bn, d, Prefix::root()),
            };
            (value, Some(st))
        };
        let (image, exact) = fixed_point(&value, w);
        if cut == 0 || image_within(&image, exact, a, b) {
            return (value, image, exact, next);
        }
        cut = cut.saturating_sub(64);
    }
}

/// Compare two rows from the second-highest limb down to `lo` (the top limbs being equal).
fn cmp_from_top(a: &[u64], b: &[u64], lo: usize) -> Ordering {
    for k in (lo..a.len() - 1).rev() {
        if a[k] != b[k] {
            return a[k].cmp(&b[k]);
        }
    }
    Ordering::Equal
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::simplest_between;
    use num_traits::CheckedSub;

    fn row(v: &Value, w: usize) -> Vec<u64> {
        fixed_point(v, w).0
    }

    /// The row-based guess against the rational one, for dyadic ends near small fractions
    /// (where cutting the ends is most tempting and most dangerous).
    #[test]
    fn rows_match_rationals() {
        let one = BigUint::one();
        for w in [2usize, 3, 5] {
            let f = 64 * w - 1;
            for d in 1..=40u64 {
                for n in 0..=d {
                    let x = Value::small(n, d);
                    let base = (&*x.numer() << f) / &*x.denom();
                    for (da, db) in [
                        (0i64, 0i64),
                        (-1, 1),
                        (0, 1),
                        (-1, 0),
                        (-3, 0),
                        (1, 5),
                        (-7, -2),
                    ] {
                        let shift = |v: &BigUint, dd: i64| {
                            if dd < 0 {
                                v.checked_sub(&BigUint::from((-dd) as u64))
                                    .unwrap_or_default()
                            } else {
                                v + BigUint::from(dd as u64)
                            }
                        };
                        let limit = &one << f;
                        let a = shift(&base, da).min(limit.clone());
                        let b = shift(&base, db).min(limit.clone());
                        if a > b {
                            continue;
                        }
                        let (av, bv) = (
                            Value::new(a.clone(), limit.clone()),
                            Value::new(b.clone(), limit.clone()),
                        );
                        let (got, image, exact) = simplest_from_rows(&row(&av, w), &row(&bv, w));
                        let want = simplest_between(&av, &bv);
                        assert_eq!(got, want, "[{av}, {bv}]");
                        assert_eq!((image, exact), fixed_point(&want, w));
                    }
                }
            }
        }
    }

    /// Resuming from the prefix of an earlier, wider interval gives exactly what a fresh
    /// descent gives, over a long run of nested, shrinking, lopsided intervals.
    #[test]
    fn resuming_matches_fresh_descent() {
        let w = 43;
        let f = 64 * w - 1;
        let one = BigUint::one();
        let q: BigUint = "7".repeat(138).parse::<BigUint>().unwrap() + 2u32;
        let p: BigUint = (&q * 5u32) / 11u32;
        let center = (&p << f) / &q;
        let mut prefix: Option<Prefix> = None;
        let mut resumed_with_prefix = 0;
        for step in 0..400usize {
            // Widths shrink geometrically, at different rates on the two sides.
            let below = &one << (f - 2 - step * 5 / 2);
            let above = &one << (f - 3 - step * 2);
            let (lo, hi) = (&center - &below, &center + &above);
            let (a, b) = (
                row(&Value::new(lo.clone(), &one << f), w),
                row(&Value::new(hi.clone(), &one << f), w),
            );
            let want = simplest_between(&Value::new(lo, &one << f), &Value::new(hi, &one << f));
            if prefix.as_ref().is_some_and(|p| p.depth() > 0) {
                resumed_with_prefix += 1;
            }
            let (got, image, exact, next) = simplest_from_rows_resuming(&a, &b, prefix.as_ref());
            assert_eq!(got, want, "step {step}");
            assert_eq!((image, exact), fixed_point(&want, w));
            if next.is_some() {
                prefix = next;
            }
        }
        assert!(
            resumed_with_prefix > 100,
            "the resumed path must be exercised"
        );
    }
}
