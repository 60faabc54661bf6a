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
    let (an, ad) = (lo.numer().into_owned(), lo.denom().into_owned());
    let (bn, bd) = (hi.numer().into_owned(), hi.denom().into_owned());
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
///
/// Long ends take their terms in batches (Lehmer's method, [`lehmer_batch`]): the terms
/// that the leading 127 bits of the four numbers decide for certain are found in machine
/// words and applied to the long numbers at once. Each term taken one at a time costs
/// several passes over numbers of tens of thousands of bits; the exact solve's rational
/// reconstruction descends through thousands of terms for every extension of a large
/// system's denominator (77 % of a profile of 7x7 KNvKP's exact evaluation).
pub fn descend(an: BigUint, ad: BigUint, bn: BigUint, bd: BigUint, st: Prefix) -> (Value, Prefix) {
    descend_with(an, ad, bn, bd, st, true)
}

/// Numbers below this many bits are descended term by term.
const LEHMER_BITS: u64 = 256;

/// [`descend`], with or without Lehmer's batches (without: the plain descent, the
/// reference the batches are tested against).
fn descend_with(
    mut an: BigUint,
    mut ad: BigUint,
    mut bn: BigUint,
    mut bd: BigUint,
    mut st: Prefix,
    lehmer: bool,
) -> (Value, Prefix) {
    loop {
        if lehmer
            && an.bits().max(bd.bits()) >= LEHMER_BITS
            && lehmer_batch(&mut an, &mut ad, &mut bn, &mut bd, &mut st)
        {
            continue;
        }
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

/// A fraction `n / d` in machine words, `d > 0`.
#[derive(Clone, Copy)]
struct Word {
    n: u128,
    d: u128,
}

impl Word {
    /// `1 / (self − q)` for `q < self`.
    fn reciprocal_minus(self, q: u128) -> Word {
        Word {
            n: self.d,
            d: self.n - q * self.d,
        }
    }
}

/// Bits `s .. s + 128` of `x`.
fn bits_from(x: &BigUint, s: u64) -> u128 {
    let (limb, off) = ((s / 64) as usize, (s % 64) as u32);
    let words: Vec<u64> = x.iter_u64_digits().skip(limb).take(3).collect();
    let word = |i: usize| words.get(i).copied().unwrap_or(0) as u128;
    if off == 0 {
        word(0) | (word(1) << 64)
    } else {
        (word(0) >> off) | (word(1) << (64 - off)) | (word(2) << (128 - off))
    }
}

/// `u·n + v·d` for a row `(u, v)` of a batch's matrix whose result is known to be
/// non-negative (one of `u`, `v` may be negative).
fn combine(n: &BigUint, d: &BigUint, (u, v): (i128, i128)) -> BigUint {
    let term = |x: &BigUint, c: i128| x * (c.unsigned_abs() as u64);
    match (u >= 0, v >= 0) {
        (true, true) => term(n, u) + term(d, v),
        (true, false) => term(n, u) - term(d, v),
        (false, true) => term(d, v) - term(n, u),
        (false, false) => unreachable!("a batch's rows never have two negative entries"),
    }
}

/// Matrix entries stay below this, so that a long number is multiplied by machine words.
const ENTRY_LIMIT: u128 = 1 << 62;

/// Lehmer's step of the descent: the terms that the leading bits of `an, ad, bn, bd`
/// decide for certain, applied to them and to the convergents in `st` at once. Returns
/// whether a term was taken (none: the caller takes the next term exactly).
///
/// With the four numbers cut to their bits from `s` on (â = an >> s, …), a = an/ad lies in
/// [â/(d̂+1), (â+1)/d̂] and b in the like interval. A term q is certain when both intervals
/// lie strictly inside (q, q + 1): then floor(a) = floor(b) = q and the descent goes on
/// (neither end is q, b < q + 1) with a' = 1/(b − q), b' = 1/(a − q), whose intervals are
/// the images of the old ones. The long numbers follow the 2x2 matrix of those maps: with
/// k terms, (an, ad) becomes F·(an, ad) for even k and F·(bn, bd) for odd k, and the
/// convergents G·(h0, h1), G·(k0, k1); entries are bounded as in Lehmer's gcd.
fn lehmer_batch(
    an: &mut BigUint,
    ad: &mut BigUint,
    bn: &mut BigUint,
    bd: &mut BigUint,
    st: &mut Prefix,
) -> bool {
    let bits = an.bits().max(ad.bits()).max(bn.bits()).max(bd.bits());
    let s = bits.saturating_sub(127);
    let [ta, td, tb, te] = [&*an, &*ad, &*bn, &*bd].map(|x| bits_from(x, s));
    if td == 0 || te == 0 {
        return false;
    }
    let (mut alo, mut ahi) = (Word { n: ta, d: td + 1 }, Word { n: ta + 1, d: td });
    let (mut blo, mut bhi) = (Word { n: tb, d: te + 1 }, Word { n: tb + 1, d: te });
    // F's rows act on (n, d) pairs; G's on the convergents (h0, h1).
    let (mut f0, mut f1) = ((1i128, 0i128), (0i128, 1i128));
    let (mut g0, mut g1) = ((1u128, 0u128), (0u128, 1u128));
    let mut k = 0u32;
    loop {
        let q = alo.n / alo.d;
        let certain = alo.n % alo.d != 0
            && ahi.n / ahi.d == q
            && blo.n / blo.d == q
            && blo.n % blo.d != 0
            && bhi.n / bhi.d == q;
        if !certain || q >= ENTRY_LIMIT {
            break;
        }
        // F ← f_q·F with f_q = [[0, 1], [1, −q]]; G ← g_q·G with g_q = [[0, 1], [1, q]].
        let Some(g1n) =
            g1.0.checked_mul(q)
                .and_then(|x| x.checked_add(g0.0))
                .zip(g1.1.checked_mul(q).and_then(|x| x.checked_add(g0.1)))
        else {
            break;
        };
        if g1n.0 >= ENTRY_LIMIT || g1n.1 >= ENTRY_LIMIT {
            break;
        }
        let qi = q as i128;
        let f1n = (f0.0 - qi * f1.0, f0.1 - qi * f1.1);
        if f1n.0.unsigned_abs() >= ENTRY_LIMIT || f1n.1.unsigned_abs() >= ENTRY_LIMIT {
            break;
        }
        (f0, f1) = (f1, f1n);
        (g0, g1) = (g1, g1n);
        (alo, ahi, blo, bhi) = (
            bhi.reciprocal_minus(q),
            blo.reciprocal_minus(q),
            ahi.reciprocal_minus(q),
            alo.reciprocal_minus(q),
        );
        k += 1;
    }
    if k == 0 {
        return false;
    }
    let (from_a, from_b) = if k.is_multiple_of(2) {
        ((&*an, &*ad), (&*bn, &*bd))
    } else {
        ((&*bn, &*bd), (&*an, &*ad))
    };
    let (nan, nad) = (
        combine(from_a.0, from_a.1, f0),
        combine(from_a.0, from_a.1, f1),
    );
    let (nbn, nbd) = (
        combine(from_b.0, from_b.1, f0),
        combine(from_b.0, from_b.1, f1),
    );
    (*an, *ad, *bn, *bd) = (nan, nad, nbn, nbd);
    let apply =
        |x0: &BigUint, x1: &BigUint, (u, v): (u128, u128)| x0 * (u as u64) + x1 * (v as u64);
    let (h0, h1) = (apply(&st.h0, &st.h1, g0), apply(&st.h0, &st.h1, g1));
    let (k0, k1) = (apply(&st.k0, &st.k1, g0), apply(&st.k0, &st.k1, g1));
    (st.h0, st.h1, st.k0, st.k1) = (h0, h1, k0, k1);
    st.depth += k;
    true
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
    let (p, q) = (s.numer(), s.denom());
    let (p, q) = (&*p, &*q);
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
    use super::super::long::test_number as number;
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

    proptest::proptest! {
        /// Lehmer's batches give the plain descent's simplest rational and prefix, on
        /// long ends that share a long continued-fraction prefix (an interval of relative
        /// width 2^-gap around a random value, as the exact solve's reconstruction asks) and
        /// on ends far apart, with a shared and with different denominators.
        #[test]
        fn lehmer_batches_give_the_plain_descent(
            bits in 200u64..3_000,
            gap in 1u64..2_000,
            seed in proptest::prelude::any::<u64>(),
            shared in proptest::prelude::any::<bool>(),
        ) {
            let d = number(bits, seed);
            let x = number(bits - 1, seed ^ 0x9e37_79b9) % &d;
            let width = (&d >> gap.min(bits - 1)) + 1u8;
            let y = (&x + &width).min(d.clone());
            let e = if shared { d.clone() } else { number(bits + 7, seed ^ 5) };
            let y_over_e = (&y * &e) / &d;
            let (lo, hi) = (Value::new(x.clone(), d.clone()), Value::new(y_over_e.max(x.clone() * &e / &d), e));
            let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
            let parts = |v: &Value| (v.numer().into_owned(), v.denom().into_owned());
            let ((an, ad), (bn, bd)) = (parts(&lo), parts(&hi));
            let fast = descend_with(an.clone(), ad.clone(), bn.clone(), bd.clone(), Prefix::root(), true);
            let plain = descend_with(an, ad, bn, bd, Prefix::root(), false);
            proptest::prop_assert_eq!(&fast.0, &plain.0);
            proptest::prop_assert_eq!(fast.1.depth, plain.1.depth);
            proptest::prop_assert_eq!(
                (&fast.1.h0, &fast.1.h1, &fast.1.k0, &fast.1.k1),
                (&plain.1.h0, &plain.1.h1, &plain.1.k0, &plain.1.k1)
            );
            proptest::prop_assert!(lo <= fast.0 && fast.0 <= hi);
        }
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
                    (want.numer().into_owned(), want.denom().into_owned())
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
        assert_eq!(&*l.numer() + &*rr.numer(), 7463u32.into());
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
