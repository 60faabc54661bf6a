//! Means without a gcd. The mean `(a + b) / 2` of two long values in lowest terms costs a
//! gcd of numbers of thousands of digits (on a 7x7 KNvKN query, 73 % of the time went to
//! them), but the writer of a table knows the answer: a [`Hint`] says how the odd parts of
//! the halves' denominators relate to the mean's, as small ratios, and with it the mean
//! comes out in lowest terms from multiplications by words, one division by a word and
//! shifts.
//!
//! The odd parts of a material's values are nearly all one long number divided or
//! multiplied by small cofactors, or short (a value of a smaller system, met through an
//! exit), so nearly every mean has a hint: 93 % of 7x7 KNvKN's 424,478 means, decoded in
//! 1.2 s where the gcds took 88 s.

use std::sync::Arc;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};

use super::Value;

/// How the odd parts `o_a`, `o_b` of two halves' denominators relate to the odd part `O` of
/// their mean's. Per half, a pair `(u, w)` of odd numbers with `o · w = O · u`, or `(0, 0)`
/// where `o` is short and divides `O` (a value of a smaller system, met through an exit;
/// the other half then gives `O`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hint {
    /// `ua, wa, ub, wb`, in that order.
    pub words: [u32; 4],
}

/// The largest numerator or denominator of a hint's ratios (their product with a long
/// number is then a multiplication by a word, and a float finds them).
const LIMIT: u64 = 1 << 20;

/// The longest odd part a half may have for `(0, 0)`: a word.
const SHORT: u64 = 64;

impl Hint {
    /// The hint that gives `v` as the mean of `a` and `b` ([`mean_hinted`]), if `2v = a + b`
    /// and the odd parts relate as a hint says (checked exactly: a hint returned always
    /// gives `v`).
    pub fn of(v: &Value, a: &Value, b: &Value) -> Option<Hint> {
        let o = v.shared_odd();
        let ratio = |h: &Value| {
            small_ratio(h.shared_odd(), o).or_else(|| {
                let short = h.shared_odd().bits() <= SHORT && o.bits() > SHORT;
                short.then_some((0, 0))
            })
        };
        let ([ua, wa], [ub, wb]) = (ratio(a)?.into(), ratio(b)?.into());
        let hint = Hint {
            words: [ua, wa, ub, wb],
        };
        (mean_hinted(a, b, hint).as_ref() == Some(v)).then_some(hint)
    }
}

/// `(a + b) / 2` given `hint`, without a gcd. The mean's odd part `O` is `o · w / u` for a
/// half with a ratio; over it each half is `p · m / (n · O · 2^e)`, with `(m, n) = (w, u)`
/// for a ratio and `(O / o, 1)` for a short odd part. So over the denominator
/// `na · nb · O · 2^(e+1)` (`e` the larger power of two) the mean's numerator is
/// `pa · ma · nb · 2^(e−ea) + pb · mb · na · 2^(e−eb)`, divisible by `na · nb`.
/// None where the hint cannot be right (an even or zero ratio, no half with a ratio, a
/// division it promises that is not exact); a hint that is consistent but claims too large
/// an odd part gives the mean not in lowest terms (a writer never makes one: [`Hint::of`]
/// checks).
pub fn mean_hinted(a: &Value, b: &Value, hint: Hint) -> Option<Value> {
    let [ua, wa, ub, wb] = hint.words.map(u64::from);
    // The mean's odd part comes from the first half with a ratio, whose relation to it then
    // holds by construction; the other half's is checked.
    let from_a = ua != 0;
    let odd = if from_a {
        odd_part(a.shared_odd(), ua, wa)?
    } else {
        odd_part(b.shared_odd(), ub, wb)?
    };
    let (ma, na) = multiplier(a.shared_odd(), &odd, ua, wa, from_a)?;
    let (mb, nb) = multiplier(b.shared_odd(), &odd, ub, wb, !from_a)?;
    let (ea, eb) = (a.twos(), b.twos());
    let e = ea.max(eb);
    let t =
        ((&*a.numer() * times(&ma, nb)) << (e - ea)) + ((&*b.numer() * times(&mb, na)) << (e - eb));
    let (p, rest) = t.div_rem(&BigUint::from(na * nb));
    if !rest.is_zero() {
        return None;
    }
    let Some(zeros) = p.trailing_zeros() else {
        return Some(Value::zero());
    };
    let shift = (zeros as u32).min(e + 1);
    Some(Value::from_parts(p >> shift, odd, e + 1 - shift))
}

/// A half's multiplier `m` (a word, or a long cofactor) and divisor `n` over the mean's odd
/// part `odd`, its hint's pair being `(u, w)`: `(w, u)` once `o · w = odd · u` is checked,
/// or `(odd / o, 1)` for `(0, 0)`. None where the hint does not hold; `odd` made from this
/// half's pair ([`odd_part`]) is `known` to hold.
fn multiplier(
    o: &Arc<BigUint>,
    odd: &Arc<BigUint>,
    u: u64,
    w: u64,
    known: bool,
) -> Option<(Factor, u64)> {
    if u == 0 && w == 0 {
        let small = o.to_u64().filter(|&s| s > 0)?;
        let (c, r) = odd.div_rem(&BigUint::from(small));
        return r.is_zero().then_some((Factor::Long(c), 1));
    }
    if !odd_ratio(u, w) {
        return None;
    }
    let holds = known
        || if u == w {
            u == 1 && (Arc::ptr_eq(o, odd) || o == odd)
        } else {
            &**o * w == &**odd * u
        };
    holds.then_some((Factor::Word(w), u))
}

/// Whether `u` and `w` can be a ratio's pair: both odd (so neither is zero).
fn odd_ratio(u: u64, w: u64) -> bool {
    u % 2 == 1 && w % 2 == 1
}

/// A multiplier: a word or a long number.
enum Factor {
    Word(u64),
    Long(BigUint),
}

/// `m · n` as a number to multiply a numerator by.
fn times(m: &Factor, n: u64) -> BigUint {
    match m {
        Factor::Word(w) => BigUint::from(*w) * n,
        Factor::Long(c) => c * n,
    }
}

/// `o · w / u`, sharing `o` where the ratio is 1; None unless exact, odd and non-zero.
fn odd_part(o: &Arc<BigUint>, u: u64, w: u64) -> Option<Arc<BigUint>> {
    if !odd_ratio(u, w) {
        return None;
    }
    if u == w {
        return (u == 1).then(|| o.clone());
    }
    let (q, r) = (&**o * w).div_rem(&BigUint::from(u));
    (r.is_zero() && q.bit(0)).then(|| Arc::new(q))
}

/// `(u, w)`, both odd and below [`LIMIT`], with `x · w = y · u` (x, y odd and non-zero):
/// the convergents of the continued fraction of x / y from their leading bits, each
/// checked exactly where it matches them.
fn small_ratio(x: &Arc<BigUint>, y: &Arc<BigUint>) -> Option<(u32, u32)> {
    if Arc::ptr_eq(x, y) || x == y {
        return Some((1, 1));
    }
    let shift = x.bits().min(y.bits()).saturating_sub(64);
    let r = ((&**x >> shift).to_f64()? / (&**y >> shift).to_f64()?).abs();
    if !r.is_finite() || r == 0.0 {
        return None;
    }
    // Convergents h/k of r.
    let (mut h0, mut h1, mut k0, mut k1) = (0u64, 1u64, 1u64, 0u64);
    let mut rest = r;
    for _ in 0..64 {
        let a = rest.floor();
        if a > LIMIT as f64 {
            return None;
        }
        let a = a as u64;
        let (h, k) = (a * h1 + h0, a * k1 + k0);
        if h >= LIMIT || k >= LIMIT {
            return None;
        }
        (h0, h1, k0, k1) = (h1, h, k1, k);
        if h % 2 == 1 && k % 2 == 1 && &**x * k == &**y * h {
            return Some((h as u32, k as u32));
        }
        let frac = rest - a as f64;
        if frac < 1e-15 {
            return None;
        }
        rest = 1.0 / frac;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::arith::mean;

    fn v(p: u64, q: u64) -> Value {
        crate::value::arith::reduced(BigUint::from(p), BigUint::from(q))
    }

    /// A long odd number (the kind of odd part a large system gives).
    fn long_odd(seed: u32) -> BigUint {
        (BigUint::from(3u32).pow(200 + seed) * 7u32) | BigUint::from(1u32)
    }

    fn over(p: &BigUint, q: &BigUint) -> Value {
        crate::value::arith::reduced(p.clone(), q.clone())
    }

    #[test]
    fn hinted_means_equal_the_reduced_mean() {
        let d = long_odd(0);
        let cases = [
            // Same odd part, different powers of two.
            (
                over(&BigUint::from(5u32), &(&d << 3)),
                over(&(&d - 7u32), &(&d << 1)),
            ),
            // One half short.
            (over(&(&d / 7u32), &(&d * 4u32)), v(1, 3)),
            // Odd parts d·5 and d·3 (neither divides the other).
            (
                over(&BigUint::from(11u32), &(&d * 5u32)),
                over(&BigUint::from(13u32), &(&d * 3u32)),
            ),
            // A long half and a short one: O = 3d, the short half's cofactor d.
            (over(&BigUint::from(5u32), &(&d << 2)), v(1, 3)),
            (v(0, 1), v(1, 1)),
            (v(1, 2), v(1, 2)),
            (v(1, 3), v(2, 3)),
        ];
        for (a, b) in cases {
            let m = mean(&a, &b);
            let hint = Hint::of(&m, &a, &b).expect("small ratios");
            if b == v(1, 3) && a.shared_odd().bits() > 64 {
                assert_eq!(hint.words[2..], [0, 0]);
            }
            assert_eq!(mean_hinted(&a, &b, hint).as_ref(), Some(&m), "{a} {b}");
            assert_eq!(mean_hinted(&b, &a, Hint::of(&m, &b, &a).unwrap()), Some(m));
        }
    }

    #[test]
    fn a_wrong_hint_is_refused_or_not_given() {
        let d = long_odd(1);
        let a = over(&BigUint::from(5u32), &(&d << 2));
        let b = over(&BigUint::from(9u32), &(&d * 3u32));
        let m = mean(&a, &b);
        // Not the mean: no hint.
        assert_eq!(Hint::of(&a, &a, &b), None);
        let good = Hint::of(&m, &a, &b).unwrap();
        for words in [
            [1, 1, 1, 1],
            [3, 1, 1, 1],
            [1, 1, 5, 1],
            [2, 1, 3, 1],
            [0, 1, 3, 1],
        ] {
            if words != good.words {
                assert_ne!(
                    mean_hinted(&a, &b, Hint { words }),
                    Some(m.clone()),
                    "{words:?}"
                );
            }
        }
        // Odd parts far apart: no small ratio.
        let far = over(&BigUint::from(1u32), &long_odd(40));
        assert_eq!(Hint::of(&mean(&a, &far), &a, &far), None);
    }
}
