//! The simplest rational in an interval (the study's guesses sₙ) and the Stern–Brocot
//! parents of a value (the two simpler rationals whose mediant it is), exactly.
//!
//! The simplest rational in [lo, hi] is found by the Stern–Brocot descent on the continued
//! fractions of the two ends; a descent can resume from the prefix an earlier, wider
//! interval took ([`Prefix`]), which the iteration uses for nested intervals. The parents
//! L < s < R of s decide when s is the simplest rational of an interval: exactly when
//! L < lo ≤ s ≤ hi < R.

use std::cmp::Ordering;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, Zero};

use super::Value;
use super::arith::inverse_mod;

/// The simplest rational in the closed interval [lo, hi] (0 ≤ lo ≤ hi): the one with the
/// smallest denominator, and among those the smallest (so [0, 1] gives 0). Computed by the
/// Stern–Brocot descent on the continued fractions of the two ends.
pub fn simplest_between(lo: &Value, hi: &Value) -> Value {
    assert!(lo <= hi, "simplest_between needs lo <= hi");
    let (an, ad) = (lo.numer().clone(), lo.denom().into_owned());
    let (bn, bd) = (hi.numer().clone(), hi.denom().into_owned());
    descend(an, ad, bn, bd, Prefix::root()).0
}

/// A continued-fraction prefix of the descent: the last two convergents h1/k1 and h0/k0
/// after `depth` terms at which both ends of the interval lay strictly inside one unit
/// interval. Those steps are the same for every sub-interval, so a later, nested interval
/// can resume the descent here instead of starting again.
#[derive(Clone, Debug)]
pub struct Prefix {
    h0: BigUint,
    h1: BigUint,
    k0: BigUint,
    k1: BigUint,
    depth: u32,
}

impl Prefix {
    /// Continued-fraction terms behind this prefix (0 for the root).
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// The empty prefix: a descent from the start.
    pub fn root() -> Prefix {
        Prefix {
            h0: BigUint::zero(),
            h1: BigUint::one(),
            k0: BigUint::one(),
            k1: BigUint::zero(),
            depth: 0,
        }
    }

    /// The ends `N/D` of a new interval seen from this prefix, with `D = 2^shift`: `x' =
    /// (h0·D − k0·N) / (k1·N − h1·D)`, ordered. `None` unless both lie strictly above 1,
    /// that is unless the whole interval lies strictly inside the prefix's Stern–Brocot
    /// cell (the cell is a bounded interval, so two ends inside it hold everything between
    /// them).
    pub fn enter(&self, an: &BigUint, bn: &BigUint, shift: usize) -> Option<[BigUint; 4]> {
        if self.depth == 0 {
            return None;
        }
        let (h0d, h1d) = (&self.h0 << shift, &self.h1 << shift);
        let transform = |n: &BigUint| {
            let (p2, q1) = (&self.k0 * n, &self.k1 * n);
            let (num, den) = match (h0d.cmp(&p2), q1.cmp(&h1d)) {
                (Ordering::Greater, Ordering::Greater) => (&h0d - p2, q1 - &h1d),
                (Ordering::Less, Ordering::Less) => (p2 - &h0d, &h1d - q1),
                _ => return None,
            };
            (num > den).then_some((num, den))
        };
        let (xa, xb) = (transform(an)?, transform(bn)?);
        // The map is a Möbius transformation of determinant ±1 whose sign alternates with
        // the depth: it preserves the order of the ends at even depths, reverses it at odd.
        let ordered = self.depth.is_multiple_of(2);
        debug_assert_eq!(ordered, &xa.0 * &xb.1 <= &xb.0 * &xa.1 || an == bn);
        Some(if ordered {
            [xa.0, xa.1, xb.0, xb.1]
        } else {
            [xb.0, xb.1, xa.0, xa.1]
        })
    }
}

/// The descent on `[an/ad, bn/bd]` (transformed ends) from the convergents of `st`. Returns
/// the simplest rational and the prefix before its last term.
pub fn descend(
    mut an: BigUint,
    mut ad: BigUint,
    mut bn: BigUint,
    mut bd: BigUint,
    mut st: Prefix,
) -> (Value, Prefix) {
    loop {
        // Reduce a = an/ad by its integer part q, in place (most partial quotients are
        // small: repeated subtraction beats a division), and b by the same q.
        let q = reduce_by_floor(&mut an, &ad);
        sub_multiple(&mut bn, &bd, &q);
        // Now a − q = an/ad and b − q = bn/bd. The descent ends with term q when a was an
        // integer, with q + 1 when b ≥ q + 1; otherwise both lie strictly inside (q, q + 1).
        let plus_one = !an.is_zero() && bn >= bd;
        if an.is_zero() || plus_one {
            let (mut h, mut k) = (st.h0.clone(), st.k0.clone());
            if plus_one {
                h += &st.h1;
                k += &st.k1;
            }
            add_multiple(&mut h, &st.h1, &q);
            add_multiple(&mut k, &st.k1, &q);
            return (Value::new_raw(h, k), st);
        }
        add_multiple(&mut st.h0, &st.h1, &q);
        add_multiple(&mut st.k0, &st.k1, &q);
        std::mem::swap(&mut st.h0, &mut st.h1);
        std::mem::swap(&mut st.k0, &mut st.k1);
        st.depth += 1;
        // Continue on the reciprocals of the fractional parts, which swaps the ends:
        // a' = bd/bn, b' = ad/an.
        std::mem::swap(&mut an, &mut bd);
        std::mem::swap(&mut ad, &mut bn);
    }
}

/// A partial quotient: nearly always a small number.
enum Quotient {
    Small(u32),
    Big(BigUint),
}

/// Replace `n` by `n mod d` and return `floor(n / d)`.
fn reduce_by_floor(n: &mut BigUint, d: &BigUint) -> Quotient {
    let mut q = 0u32;
    while q < 4 && *n >= *d {
        *n -= d;
        q += 1;
    }
    if *n < *d {
        return Quotient::Small(q);
    }
    let (more, r) = n.div_rem(d);
    *n = r;
    Quotient::Big(more + q)
}

/// `n -= m · q` (the result is known to be non-negative).
fn sub_multiple(n: &mut BigUint, m: &BigUint, q: &Quotient) {
    match q {
        Quotient::Small(k) => (0..*k).for_each(|_| *n -= m),
        Quotient::Big(q) => *n -= m * q,
    }
}

/// `n += m · q`.
fn add_multiple(n: &mut BigUint, m: &BigUint, q: &Quotient) {
    match q {
        Quotient::Small(k) => (0..*k).for_each(|_| *n += m),
        Quotient::Big(q) => *n += m * q,
    }
}

/// [`simplest_between`] for `[an/ad, bn/bd]` in machine integers: `(numerator,
/// denominator)`. Every intermediate stays below `2·max(an, ad, bn, bd)`, so inputs below
/// 2^126 are safe.
pub fn simplest_between_u128(
    mut an: u128,
    mut ad: u128,
    mut bn: u128,
    mut bd: u128,
) -> (u128, u128) {
    debug_assert!(an.max(ad).max(bn).max(bd) >= 1 << 63 || an * bd <= bn * ad);
    let (mut h0, mut h1, mut k0, mut k1) = (0u128, 1u128, 1u128, 0u128);
    loop {
        let (q, r) = (an / ad, an % ad);
        let (term, last) = if r == 0 {
            (q, true)
        } else if (q + 1) * bd <= bn {
            (q + 1, true)
        } else {
            (q, false)
        };
        let h = term * h1 + h0;
        let k = term * k1 + k0;
        if last {
            return (h, k);
        }
        (h0, h1, k0, k1) = (h1, h, k1, k);
        let new_ad = bn - term * bd;
        (an, ad, bn, bd) = (bd, new_ad, ad, r);
    }
}

/// The Stern–Brocot parents (L, R) of `s` in [0, 1]: None for an end that does not
/// constrain (s = 0: both; s = 1: R).
pub fn parents(s: &Value) -> (Option<Value>, Option<Value>) {
    let q = s.denom();
    let (p, q) = (s.numer(), &*q);
    if p.is_zero() {
        return (None, None);
    }
    if q.is_one() {
        return (Some(Value::zero()), None);
    }
    // L = a/b with p·b − a·q = 1 and 0 < b < q: b = p⁻¹ mod q. R = (p − a)/(q − b).
    let b = inverse_mod(p, q).expect("values are in lowest terms");
    let a = (p * &b - 1u8) / q;
    let (c, d) = (p - &a, q - &b);
    (Some(Value::new_raw(a, b)), Some(Value::new_raw(c, d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(n: u64, d: u64) -> Value {
        Value::small(n, d)
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
        let third_floor: BigUint = (&one << bits) / 3u32;
        let lo = Value::new(third_floor.clone(), &one << bits);
        let hi = Value::new(third_floor + 1u32, &one << bits);
        assert_eq!(simplest_between(&lo, &hi), r(1, 3));
        assert_eq!(simplest_between(&r(0, 1), &r(1, 1)), r(0, 1));
        assert_eq!(simplest_between(&r(1, 1), &r(1, 1)), r(1, 1));
        assert_eq!(simplest_between(&r(3, 4), &r(3, 4)), r(3, 4));
    }

    #[test]
    fn u128_path_matches_bigint_path() {
        let mut fracs = Vec::new();
        for d in 1..=20u64 {
            for n in 0..=d {
                fracs.push(r(n, d));
            }
        }
        for lo in &fracs {
            for hi in fracs.iter().filter(|h| *h >= lo) {
                let (ln, ld) = (lo.numer().to_u64_digits(), lo.denom().to_u64_digits());
                let (hn, hd) = (hi.numer().to_u64_digits(), hi.denom().to_u64_digits());
                let g = |v: &[u64]| v.first().copied().unwrap_or(0) as u128;
                let (p, q) = simplest_between_u128(g(&ln), g(&ld), g(&hn), g(&hd));
                let want = simplest_between(lo, hi);
                assert_eq!(
                    (BigUint::from(p), BigUint::from(q)),
                    (want.numer().clone(), want.denom().into_owned())
                );
            }
        }
    }

    /// Whether `s` is the simplest rational of [lo, hi] by the parents rule.
    fn settled_by_parents(s: &Value, lo: &Value, hi: &Value) -> bool {
        let (l, r) = parents(s);
        l.is_none_or(|l| &l < lo) && r.is_none_or(|r| hi < &r) && lo <= s && s <= hi
    }

    #[test]
    fn parents_are_the_farey_neighbours() {
        assert_eq!(parents(&r(0, 1)), (None, None));
        assert_eq!(parents(&r(1, 1)), (Some(r(0, 1)), None));
        assert_eq!(parents(&r(1, 2)), (Some(r(0, 1)), Some(r(1, 1))));
        assert_eq!(parents(&r(3, 8)), (Some(r(1, 3)), Some(r(2, 5))));
        // 7463/8192 (SPEC §4) is the mediant of its parents.
        let (l, rr) = parents(&r(7463, 8192));
        let (l, rr) = (l.unwrap(), rr.unwrap());
        assert!(l < r(7463, 8192) && r(7463, 8192) < rr);
        assert_eq!(&*l.denom() + &*rr.denom(), 8192u32.into());
        assert_eq!(l.numer() + rr.numer(), 7463u32.into());
    }

    /// Against the simplest-rational function itself, over every interval with ends of
    /// denominator up to 12: s is the simplest rational of [lo, hi] exactly when the
    /// parents rule says so.
    #[test]
    fn the_parents_rule_is_the_simplest_rational_rule() {
        let mut ends = Vec::new();
        for q in 1..=12u64 {
            for p in 0..=q {
                ends.push(r(p, q));
            }
        }
        ends.sort();
        ends.dedup();
        for lo in &ends {
            for hi in ends.iter().filter(|h| *h >= lo) {
                let simplest = simplest_between(lo, hi);
                for s in ends.iter().filter(|s| lo <= *s && *s <= hi) {
                    assert_eq!(
                        settled_by_parents(s, lo, hi),
                        &simplest == s,
                        "s {s} in [{lo}, {hi}], simplest {simplest}"
                    );
                }
            }
        }
    }
}
