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
use num_integer::Integer;
use num_rational::Ratio;
use num_traits::{One, Zero};
use rayon::prelude::*;

use crate::kernel::{Fresh, Kernel, limbs_to_ratio};

/// An exact non-negative rational value.
pub type Value = Ratio<BigUint>;

/// The simplest rational in the closed interval [lo, hi] (0 ≤ lo ≤ hi): the one with the
/// smallest denominator, and among those the smallest (so [0, 1] gives 0). Computed by the
/// Stern–Brocot descent on the continued fractions of the two ends.
pub fn simplest_between(lo: &Value, hi: &Value) -> Value {
    assert!(lo <= hi, "simplest_between needs lo <= hi");
    let (mut an, mut ad) = (lo.numer().clone(), lo.denom().clone());
    let (mut bn, mut bd) = (hi.numer().clone(), hi.denom().clone());
    // Convergents h/k of the continued fraction built so far.
    let (mut h0, mut h1) = (BigUint::zero(), BigUint::one());
    let (mut k0, mut k1) = (BigUint::one(), BigUint::zero());
    loop {
        let (q, r) = an.div_rem(&ad);
        let (term, last) = if r.is_zero() {
            (q, true)
        } else if (&q + 1u32) * &bd <= bn {
            (q + 1u32, true)
        } else {
            (q, false)
        };
        let h = &term * &h1 + &h0;
        let k = &term * &k1 + &k0;
        if last {
            return Ratio::new_raw(h, k);
        }
        (h0, h1, k0, k1) = (h1, h, k1, k);
        // Both ends lie strictly between term and term + 1: continue on the reciprocals of
        // the fractional parts, which swaps the ends.
        let new_ad = &bn - &term * &bd;
        (an, ad, bn, bd) = (bd, new_ad, ad, r);
    }
}

/// `floor(g · 2^F)` as `width` limbs, and whether it is exact.
fn fixed_point(g: &Value, width: usize) -> (Vec<u64>, bool) {
    let f = 64 * width - 1;
    let (q, r) = (g.numer() << f).div_rem(g.denom());
    let mut limbs = q.to_u64_digits();
    limbs.resize(width, 0);
    (limbs, r.is_zero())
}

/// The guess of every node (positions and the two terminal nodes) and its fixed-point image.
#[derive(Debug)]
pub struct Guesses {
    width: usize,
    values: Vec<Value>,
    /// `floor(g · 2^F)`, `width` limbs per node.
    fixed: Vec<u64>,
    /// Whether `g · 2^F` is an integer.
    exact: Vec<bool>,
    /// Lowest non-zero limb of the fixed-point image (width if zero).
    low: Vec<u16>,
    /// Top limb of each fixed-point image, `floor(g · 2^63)`, kept compact for scans.
    heads: Vec<u64>,
    last_change: Vec<u32>,
}

impl Guesses {
    /// s₀: 0 on every position (the simplest rational in [0, 1]); 1 and 0 on the terminal
    /// nodes, which come last.
    pub fn new(nodes: usize, width: usize) -> Guesses {
        let mut values = vec![Value::zero(); nodes];
        values[nodes - 2] = Value::one();
        let mut g = Guesses {
            width,
            values: Vec::new(),
            fixed: vec![0; nodes * width],
            exact: vec![true; nodes],
            low: vec![width as u16; nodes],
            heads: vec![0; nodes],
            last_change: vec![0; nodes],
        };
        g.set_width(width, values);
        g
    }

    fn set_width(&mut self, width: usize, values: Vec<Value>) {
        self.width = width;
        let images: Vec<(Vec<u64>, bool)> =
            values.par_iter().map(|v| fixed_point(v, width)).collect();
        self.fixed = vec![0; values.len() * width];
        for (i, (limbs, exact)) in images.into_iter().enumerate() {
            self.store(i, &limbs, exact);
        }
        self.values = values;
    }

    fn store(&mut self, i: usize, limbs: &[u64], exact: bool) {
        let w = self.width;
        self.fixed[i * w..(i + 1) * w].copy_from_slice(limbs);
        self.exact[i] = exact;
        self.low[i] = limbs.iter().position(|&l| l != 0).unwrap_or(w) as u16;
        self.heads[i] = limbs[w - 1];
    }

    /// Follow the kernel's width (recomputes the fixed-point images).
    pub fn sync_width(&mut self, kernel: &Kernel) {
        if kernel.width() != self.width {
            let values = std::mem::take(&mut self.values);
            self.set_width(kernel.width(), values);
        }
    }

    /// The guess of node `i`.
    pub fn value(&self, i: usize) -> &Value {
        &self.values[i]
    }

    /// All guesses, by node.
    pub fn values(&self) -> &[Value] {
        &self.values
    }

    /// The iteration at which node `i`'s guess last changed (0 if never).
    pub fn last_change(&self, i: usize) -> u32 {
        self.last_change[i]
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
            Ordering::Equal => (self.low[i] as usize) < fresh.lo || !self.exact[i],
        }
    }

    /// Recompute the guesses of `nodes` (those that fell out) from the kernel's current
    /// bounds, in parallel, and record the kernel's iteration as their last change.
    pub fn update(&mut self, kernel: &Kernel, nodes: &[u32]) {
        let (alpha, beta) = (kernel.alpha(), kernel.beta());
        let width = self.width;
        let fresh: Vec<(Value, Vec<u64>, bool)> = nodes
            .par_iter()
            .map(|&i| {
                let g = simplest_between(&alpha.value(i as usize), &beta.value(i as usize));
                let (limbs, exact) = fixed_point(&g, width);
                (g, limbs, exact)
            })
            .collect();
        let n = kernel.iteration();
        for (&i, (g, limbs, exact)) in nodes.iter().zip(fresh) {
            let i = i as usize;
            self.store(i, &limbs, exact);
            self.values[i] = g;
            self.last_change[i] = n;
        }
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

/// The exact rational of a fixed-point row (for tests and reports).
pub fn row_value(row: &[u64]) -> Value {
    limbs_to_ratio(row)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(n: u64, d: u64) -> Value {
        Value::new(BigUint::from(n), BigUint::from(d))
    }

    /// Brute force: the smallest denominator q with a p/q in [lo, hi], smallest p first.
    fn brute(lo: &Value, hi: &Value) -> Value {
        for q in 1u64.. {
            for p in 0..=q {
                let x = r(p, q);
                if &x >= lo && &x <= hi {
                    return x;
                }
            }
        }
        unreachable!()
    }

    #[test]
    fn simplest_matches_brute_force_on_small_denominators() {
        let mut fracs = Vec::new();
        for d in 1..=24u64 {
            for n in 0..=d {
                fracs.push(r(n, d));
            }
        }
        fracs.sort();
        fracs.dedup();
        for (i, lo) in fracs.iter().enumerate() {
            for hi in &fracs[i..] {
                assert_eq!(simplest_between(lo, hi), brute(lo, hi), "[{lo}, {hi}]");
            }
        }
    }

    #[test]
    fn simplest_of_narrow_dyadic_intervals() {
        // 1/3 lies in [0.0101..01, 0.0101..11] (binary) for long expansions.
        let one = BigUint::one();
        let bits = 200;
        let third_floor = (&one << bits) / 3u32;
        let lo = Value::new(third_floor.clone(), &one << bits);
        let hi = Value::new(third_floor + 1u32, &one << bits);
        assert_eq!(simplest_between(&lo, &hi), r(1, 3));
        assert_eq!(simplest_between(&r(0, 1), &r(1, 1)), r(0, 1));
        assert_eq!(simplest_between(&r(1, 1), &r(1, 1)), r(1, 1));
        assert_eq!(simplest_between(&r(3, 4), &r(3, 4)), r(3, 4));
    }

    #[test]
    fn fixed_point_images() {
        assert_eq!(fixed_point(&r(1, 2), 2), (vec![0, 1 << 62], true));
        assert_eq!(fixed_point(&r(1, 1), 2), (vec![0, 1 << 63], true));
        let (limbs, exact) = fixed_point(&r(1, 3), 2);
        assert!(!exact);
        assert_eq!(limbs[1], (1u64 << 63) / 3);
    }
}
