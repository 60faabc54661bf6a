//! Exact rational arithmetic on values of thousands of digits: means of two values,
//! reduction to lowest terms and comparison. The greatest common divisor is taken by
//! dashu-int (Lehmer's algorithm) for large numbers: num-bigint's binary gcd is quadratic
//! in the bits, about 1 ms at 11,000 bits against 0.15 ms (measured; see the README), and
//! on 12x12 a million values have denominators of thousands of digits. Comparisons look at
//! floating-point shadows first and cross-multiply only where those come close.

use std::cmp::Ordering;
use std::sync::Arc;

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::{One, Zero};

use super::Value;
use super::cores;
use super::long::{self, mul};

/// Numbers of at most this many bits take num-bigint's gcd (no conversion).
const SMALL: u64 = 256;

/// The greatest common divisor of `a` and `b`. The smaller number first reduces the
/// larger (one division), machine words take it from there when they can; num-bigint's
/// binary gcd serves small pairs, dashu-int's Lehmer gcd large ones (a binary gcd of a large
/// number and a small one would shift the large one bit by bit).
pub fn gcd(a: &BigUint, b: &BigUint) -> BigUint {
    let (big, small) = if a.bits() >= b.bits() { (a, b) } else { (b, a) };
    if small.is_zero() {
        return big.clone();
    }
    if small.bits() <= 128 {
        let s = to_u128(small);
        let r = to_u128(&(big % small));
        return BigUint::from(gcd_u128(s, r));
    }
    if big.bits() <= SMALL {
        return big.gcd(small);
    }
    if small.bits() >= long::LONG_GCD {
        return long::gcd(big, small);
    }
    use dashu_int::ops::Gcd;
    from_dashu(&to_dashu(big).gcd(&to_dashu(small)))
}

/// The least common multiple of `a` and `b` (both > 0): no gcd where one is 1 or the two
/// share their odd part (as the denominators of a system's right-hand sides nearly always
/// do: then it is the larger), else one [`gcd`].
pub fn lcm(a: &BigUint, b: &BigUint) -> BigUint {
    if a.is_one() {
        return b.clone();
    }
    if b.is_one() {
        return a.clone();
    }
    if same_odd_part(a, b) {
        a.max(b).clone()
    } else {
        exact_quotient(a, &gcd(a, b)) * b
    }
}

/// A number of at most 128 bits as a machine word.
fn to_u128(x: &BigUint) -> u128 {
    x.iter_u64_digits()
        .rev()
        .fold(0u128, |acc, d| (acc << 64) | d as u128)
}

/// Stein's binary gcd in machine words.
fn gcd_u128(mut a: u128, mut b: u128) -> u128 {
    if a == 0 || b == 0 {
        return a | b;
    }
    let shift = (a | b).trailing_zeros();
    a >>= a.trailing_zeros();
    loop {
        b >>= b.trailing_zeros();
        if a > b {
            std::mem::swap(&mut a, &mut b);
        }
        b -= a;
        if b == 0 {
            return a << shift;
        }
    }
}

fn to_dashu(a: &BigUint) -> dashu_int::UBig {
    dashu_int::UBig::from_words(&a.to_u64_digits())
}

fn from_dashu(a: &dashu_int::UBig) -> BigUint {
    BigUint::from_bytes_le(&a.to_le_bytes())
}

/// The inverse of `p` modulo `q` (in 1..=q, so q for q = 1), for coprime `p` and `q > 0`;
/// None if they are not coprime. Through dashu-int's extended Lehmer gcd: num-integer's
/// extended gcd divides step by step, which on 10x10 made the Stern–Brocot parents of
/// 875,000 values with up to 5,265-bit denominators take over two minutes.
pub fn inverse_mod(p: &BigUint, q: &BigUint) -> Option<BigUint> {
    use dashu_int::ops::ExtendedGcd;
    let (x, m) = (to_dashu(&(p % q)), to_dashu(q));
    if x == dashu_int::UBig::ZERO {
        return q.is_one().then(|| q.clone());
    }
    let (g, s, _) = (&x).gcd_ext(&m);
    if g != dashu_int::UBig::ONE {
        return None;
    }
    // s·x ≡ 1 (mod m) with |s| < m.
    let (sign, magnitude) = s.into_parts();
    let b = if sign == dashu_int::Sign::Negative {
        &m - magnitude
    } else {
        magnitude
    };
    Some(from_dashu(&b))
}

/// The number of decimal digits of `n` (1 for zero), from its bits and one comparison
/// with a power of ten, without printing it.
pub fn decimal_digits(n: &BigUint) -> usize {
    if n.is_zero() {
        return 1;
    }
    // 10^k ≤ 2^(bits-1) ≤ n for k = floor((bits-1)·log10 2), less a margin for rounding.
    let k = (((n.bits() - 1) as f64 * std::f64::consts::LOG10_2) as usize).saturating_sub(1);
    let mut digits = k + 1;
    let mut power = BigUint::from(10u8).pow(digits as u32);
    while &power <= n {
        power *= 10u8;
        digits += 1;
    }
    digits
}

/// Whether `v` is in lowest terms.
pub fn is_reduced(v: &Value) -> bool {
    gcd(&v.numer(), &v.denom()).is_one()
}

/// A value in [0, 1] as an `f64` (within 2⁻⁵⁰ relative: [`Value::to_f64`]).
pub fn shadow(v: &Value) -> f64 {
    v.to_f64()
}

/// Two shadows further apart than this decide a comparison of values in [0, 1].
pub const DECISIVE: f64 = 1e-12;

/// Compare two values in [0, 1] exactly, given their shadows: by the shadows where they
/// are far apart, else by numerator and denominator (equal values in lowest terms are
/// equal there), else by cross-multiplication.
pub fn cmp_shadowed(a: &Value, fa: f64, b: &Value, fb: f64) -> Ordering {
    if (fa - fb).abs() > DECISIVE {
        return fa.total_cmp(&fb);
    }
    if a == b {
        return Ordering::Equal;
    }
    mul(&a.numer(), &b.denom()).cmp(&mul(&b.numer(), &a.denom()))
}

/// `num / den` in lowest terms (`den` > 0).
pub fn reduced(num: BigUint, den: BigUint) -> Value {
    let g = gcd(&num, &den);
    if g.is_one() {
        Value::new_raw(num, den)
    } else {
        Value::new_raw(exact_quotient(&num, &g), exact_quotient(&den, &g))
    }
}

/// `t / (odd · 2^twos)` in lowest terms for every numerator `t` of `numerators`, all over
/// one denominator (a system's solution), `modulus` being `odd` made ready: the odd
/// factors through one gcd for them all ([`long::gcds_with`]), the twos by trailing zeros. Where no odd factor cancels (nearly
/// everywhere) a value holds `odd` itself, shared.
pub fn reduced_over(
    numerators: &[BigUint],
    odd: &Arc<BigUint>,
    modulus: &long::Modulus,
    twos: u32,
) -> Vec<Value> {
    let odd_gcds = long::gcds_with(modulus, &numerators.iter().collect::<Vec<_>>());
    numerators
        .iter()
        .zip(odd_gcds)
        .map(|(t, g)| {
            let Some(zeros) = t.trailing_zeros() else {
                return Value::zero();
            };
            let shift = (zeros as u32).min(twos);
            let t = t >> shift;
            if g.is_one() {
                Value::from_parts(t, odd.clone(), twos - shift)
            } else {
                Value::from_parts(
                    exact_quotient(&t, &g),
                    Arc::new(exact_quotient(odd, &g)),
                    twos - shift,
                )
            }
        })
        .collect()
}

/// gcd(a, b) without a gcd when the two share their odd part (a = r·2^i, b = r·2^j: then
/// it is r·2^min(i, j)), as the denominators of neighbouring values nearly always do.
fn shared_odd_part(a: &BigUint, b: &BigUint) -> Option<BigUint> {
    same_odd_part(a, b).then(|| a.min(b).clone())
}

/// Whether `a` and `b` (both > 0) are one odd number times powers of two (then the
/// smaller divides the larger).
fn same_odd_part(a: &BigUint, b: &BigUint) -> bool {
    match (a.trailing_zeros(), b.trailing_zeros()) {
        (Some(i), Some(j)) => a.bits() - i == b.bits() - j && (a >> i) == (b >> j),
        _ => false,
    }
}

/// `(a + b) / 2` in lowest terms (Knuth's addition: one gcd of the denominators, one of
/// the numerator with it).
pub fn mean(a: &Value, b: &Value) -> Value {
    match mean_or_pending(a, b) {
        Mean::Done(v) => v,
        Mean::Pending(p) => {
            let h = gcd(&p.t, &p.g_odd);
            finish_mean(&p, &h)
        }
    }
}

/// A mean `(a + b) / 2` taken but for its lowest terms: it is half of `t / den`, and every
/// factor that t and den share divides `g_odd · 2^g_twos` (Knuth's addition), a long odd
/// part of the operands' denominators. The gcd of t with it, nearly always 1 and the
/// dearest part of a mean of long values (a fifth of a 7x7 KNvKN run), is taken for many
/// pending means over one odd part at once ([`finish_means`]).
pub struct PendingMean {
    t: BigUint,
    den: BigUint,
    g_odd: Arc<BigUint>,
    g_twos: u64,
}

/// A mean, finished or waiting for its lowest terms.
pub enum Mean {
    /// The mean in lowest terms.
    Done(Value),
    /// The mean but for one gcd with a long odd part.
    Pending(PendingMean),
}

/// `(a + b) / 2`: in lowest terms as [`mean`] gives it where the denominators share no
/// long odd factor, else [`Mean::Pending`].
pub fn mean_or_pending(a: &Value, b: &Value) -> Mean {
    let (na, da, nb, db) = (a.numer(), a.denom(), b.numer(), b.denom());
    let (na, da, nb, db) = (&*na, &*da, &*nb, &*db);
    let pending = |t: BigUint, den: BigUint, g_odd: Arc<BigUint>, g_twos: u64| {
        Mean::Pending(PendingMean {
            t,
            den,
            g_odd,
            g_twos,
        })
    };
    if da == db {
        if a.shared_odd().bits() < long::LONG_GCD {
            return Mean::Done(reduced(na + nb, da << 1));
        }
        return pending(na + nb, da.clone(), a.shared_odd().clone(), a.twos().into());
    }
    let g = shared_odd_part(da, db).unwrap_or_else(|| gcd(da, db));
    if g.is_one() {
        return Mean::Done(halved(mul(na, db) + mul(nb, da), mul(da, db)));
    }
    let (da_g, db_g) = (exact_quotient(da, &g), exact_quotient(db, &g));
    let t = mul(na, &db_g) + mul(nb, &da_g);
    let g_twos = g.trailing_zeros().unwrap_or(0);
    if g.bits() - g_twos < long::LONG_GCD {
        let g2 = gcd(&t, &g);
        return Mean::Done(halved(
            exact_quotient(&t, &g2),
            mul(&da_g, &exact_quotient(db, &g2)),
        ));
    }
    let g_odd = &g >> g_twos;
    // The key of the batch: one of the operands' shared odd parts where it is g's.
    let g_odd = [a.shared_odd(), b.shared_odd()]
        .into_iter()
        .find(|r| ***r == g_odd)
        .cloned()
        .unwrap_or_else(|| Arc::new(g_odd));
    pending(t, mul(&da_g, db), g_odd, g_twos)
}

/// `a / b` for `b` dividing `a`: num-bigint's division where `b` is a word, else the
/// exact division ([`long::div_exact`]).
fn exact_quotient(a: &BigUint, b: &BigUint) -> BigUint {
    if b.bits() <= 64 {
        a / b
    } else {
        long::div_exact(a, b)
    }
}

/// The pending means in lowest terms, in their order. Each needs the gcd `h` of its
/// numerator with its long odd part, taken for many at once two ways:
/// - where odd parts share a long core ([`cores::gather`]; on 8x8 KNvKP a level's
///   thousands of odd parts are one 62,000-bit number times short cofactors), through one
///   [`long::Modulus`] per core for all the means over it, 64 at a time, with one gcd
///   between them ([`long::gcds_with`]), and a short gcd with the cofactor
///   ([`cores::gcd_through`]);
/// - for the others, as the product of the gcds with the part's small factors and with
///   the rest ([`long::split_smooth`]): the first a short gcd each, the second taken for
///   the means over one rough part at once as above. On 7x7 KNvKP a level's waiting
///   means fall into about 430 odd parts but only 64 rough parts.
///
/// Both run in parallel. The gcds one by one, with a modulus of 22,000 bits, were a fifth
/// of a 7x7 KNvKP run.
pub fn finish_means(pending: Vec<PendingMean>) -> Vec<Value> {
    use rayon::prelude::*;
    let parts = group_by(pending.iter().map(|p| &*p.g_odd));
    let odds: Vec<&BigUint> = parts.iter().map(|m| &*pending[m[0]].g_odd).collect();
    let cores = cores::gather(&odds);
    let alone: Vec<Vec<usize>> = parts
        .iter()
        .zip(&cores.placed)
        .filter(|(_, placed)| placed.is_none())
        .map(|(members, _)| members.clone())
        .collect();
    let mut hs: Vec<Option<BigUint>> = vec![None; pending.len()];
    for (i, h) in core_gcds(&pending, &parts, &cores)
        .into_iter()
        .chain(split_gcds(&pending, &alone))
    {
        hs[i] = Some(h);
    }
    pending
        .par_iter()
        .zip(hs)
        .map(|(p, h)| finish_mean(p, &h.expect("every mean has its gcd")))
        .collect()
}

/// `(index, h)` for the pending means whose odd parts were gathered around a core
/// (`parts` the means grouped by odd part, in the order of `cores.placed`).
fn core_gcds(
    pending: &[PendingMean],
    parts: &[Vec<usize>],
    cores: &cores::Cores,
) -> Vec<(usize, BigUint)> {
    use rayon::prelude::*;
    let mut members: Vec<Vec<(usize, &BigUint)>> = vec![Vec::new(); cores.cores.len()];
    for (part, placed) in parts.iter().zip(&cores.placed) {
        if let Some((k, cofactor)) = placed {
            members[*k].extend(part.iter().map(|&i| (i, cofactor)));
        }
    }
    let moduli: Vec<long::Modulus> = cores.cores.par_iter().map(long::Modulus::new).collect();
    let chunks: Vec<(&long::Modulus, &[(usize, &BigUint)])> = members
        .iter()
        .zip(&moduli)
        .flat_map(|(members, modulus)| members.chunks(FINISH_CHUNK).map(move |c| (modulus, c)))
        .collect();
    chunks
        .par_iter()
        .flat_map_iter(|&(modulus, chunk)| {
            let ts: Vec<&BigUint> = chunk.iter().map(|&(i, _)| &pending[i].t).collect();
            let core_gcds = long::gcds_with(modulus, &ts);
            chunk.iter().zip(core_gcds).map(|(&(i, cofactor), g)| {
                let p = &pending[i];
                (i, cores::gcd_through(&p.t, &p.g_odd, g, cofactor))
            })
        })
        .collect()
}

/// `(index, h)` for the pending means of `parts` (grouped by odd part) through each odd
/// part's smooth and rough parts ([`long::split_smooth`]).
fn split_gcds(pending: &[PendingMean], parts: &[Vec<usize>]) -> Vec<(usize, BigUint)> {
    use rayon::prelude::*;
    let splits: Vec<(BigUint, BigUint)> = parts
        .par_iter()
        .map(|members| long::split_smooth(&pending[members[0]].g_odd))
        .collect();
    let mut smooth_of: Vec<Option<&BigUint>> = vec![None; pending.len()];
    for (members, (smooth, _)) in parts.iter().zip(&splits) {
        for &i in members {
            smooth_of[i] = Some(smooth);
        }
    }
    let rough_gcds = rough_gcds(pending, parts, &splits);
    parts
        .iter()
        .flatten()
        .copied()
        .collect::<Vec<usize>>()
        .into_par_iter()
        .map(|i| {
            let small = smooth_of[i]
                .filter(|s| !s.is_one())
                .map_or_else(BigUint::one, |s| gcd(&pending[i].t, s));
            let h = match &rough_gcds[i] {
                Some(h) if !h.is_one() => small * h,
                _ => small,
            };
            (i, h)
        })
        .collect()
}

/// Each pending mean's gcd with the rough part of its odd part (None where that part is
/// 1), `parts` the means grouped by odd part and `splits` those parts' (smooth, rough):
/// the means over one rough part, whatever their odd parts, go through one
/// [`long::Modulus`], 64 at a time, in parallel.
fn rough_gcds(
    pending: &[PendingMean],
    parts: &[Vec<usize>],
    splits: &[(BigUint, BigUint)],
) -> Vec<Option<BigUint>> {
    use rayon::prelude::*;
    let with_rough: Vec<(&BigUint, &Vec<usize>)> = parts
        .iter()
        .zip(splits)
        .filter(|(_, (_, rough))| !rough.is_one())
        .map(|(members, (_, rough))| (rough, members))
        .collect();
    let roughs: Vec<(&BigUint, Vec<usize>)> = group_by(with_rough.iter().map(|(r, _)| *r))
        .into_iter()
        .map(|same| {
            let members = same.iter().flat_map(|&k| with_rough[k].1.iter().copied());
            (with_rough[same[0]].0, members.collect())
        })
        .collect();
    let moduli: Vec<long::Modulus> = roughs
        .par_iter()
        .map(|(rough, _)| long::Modulus::new(rough))
        .collect();
    let chunks: Vec<(&long::Modulus, &[usize])> = roughs
        .iter()
        .zip(&moduli)
        .flat_map(|((_, members), modulus)| members.chunks(FINISH_CHUNK).map(move |c| (modulus, c)))
        .collect();
    let found: Vec<(usize, BigUint)> = chunks
        .par_iter()
        .flat_map_iter(|&(modulus, chunk)| {
            let ts: Vec<&BigUint> = chunk.iter().map(|&i| &pending[i].t).collect();
            chunk.iter().copied().zip(long::gcds_with(modulus, &ts))
        })
        .collect();
    let mut gcds = vec![None; pending.len()];
    for (i, h) in found {
        gcds[i] = Some(h);
    }
    gcds
}

/// The indices of `keys` grouped by equal keys (long odd numbers), each group in order.
fn group_by<'a>(keys: impl Iterator<Item = &'a BigUint>) -> Vec<Vec<usize>> {
    let mut groups: std::collections::HashMap<OddKey<'a>, Vec<usize>> =
        std::collections::HashMap::new();
    for (i, key) in keys.enumerate() {
        groups.entry(OddKey(key)).or_default().push(i);
    }
    groups.into_values().collect()
}

/// A long odd part as a map key: hashed by its length and outer limbs, equal by value.
#[derive(PartialEq, Eq)]
struct OddKey<'a>(&'a BigUint);

impl std::hash::Hash for OddKey<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        super::hash_outer_limbs(self.0.iter_u64_digits(), 4, state);
    }
}

/// Pending means over one odd part finished together.
const FINISH_CHUNK: usize = 64;

/// Half of `t / den` in lowest terms, given `h = gcd(t, g_odd)`.
fn finish_mean(p: &PendingMean, h: &BigUint) -> Value {
    let Some(zeros) = p.t.trailing_zeros() else {
        return Value::zero();
    };
    let shift = zeros.min(p.g_twos);
    let (t, den) = if h.is_one() {
        (&p.t >> shift, &p.den >> shift)
    } else {
        (
            exact_quotient(&p.t, h) >> shift,
            exact_quotient(&p.den, h) >> shift,
        )
    };
    halved(t, den)
}

/// Half of `num / den`, which is in lowest terms, in lowest terms.
fn halved(num: BigUint, den: BigUint) -> Value {
    if num.bit(0) {
        Value::new_raw(num, den << 1)
    } else {
        Value::new_raw(num >> 1, den)
    }
}

/// `(a − b) / 2` in lowest terms, as its sign (true: negative) and magnitude: the bid of
/// SPEC §2, for `a` and `b` in lowest terms. Knuth's subtraction, as in [`mean`]: one gcd
/// of the denominators (none when they share their odd part) and one of the difference
/// with it, instead of a gcd of numbers twice the values' size.
pub fn half_difference(a: &Value, b: &Value) -> (bool, Value) {
    let (na, da, nb, db) = (a.numer(), a.denom(), b.numer(), b.denom());
    let (na, da, nb, db) = (&*na, &*da, &*nb, &*db);
    let g = shared_odd_part(da, db).unwrap_or_else(|| gcd(da, db));
    let (da_g, db_g) = (exact_quotient(da, &g), exact_quotient(db, &g));
    let (left, right) = (mul(na, &db_g), mul(nb, &da_g));
    let (negative, t) = if left >= right {
        (false, left - right)
    } else {
        (true, right - left)
    };
    if t.is_zero() {
        return (false, Value::zero());
    }
    // t / (da·db/g) is in lowest terms once the common factors of t and g are out.
    let g2 = gcd(&t, &g);
    (
        negative,
        halved(
            exact_quotient(&t, &g2),
            mul(&da_g, &exact_quotient(db, &g2)),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: u64, d: u64) -> Value {
        Value::new(n.into(), d.into())
    }

    fn same(a: &Value, b: &Value) -> bool {
        a.numer() == b.numer() && a.denom() == b.denom()
    }

    /// Exact quotients equal num-bigint's division: by 1, by a word, by long divisors
    /// (odd and even, shorter and as long as the quotient), of multiples from a word's to
    /// 60,000 bits long.
    #[test]
    fn exact_quotients_equal_division() {
        use crate::value::long::test_number;
        let divisors = [
            BigUint::one(),
            BigUint::from(3u8),
            BigUint::from(u64::MAX),
            test_number(65, 1),
            test_number(2_000, 2) | BigUint::one(),
            test_number(20_000, 3) << 7u8,
        ];
        for b in &divisors {
            for (bits, seed) in [(1, 4), (64, 5), (2_000, 6), (20_000, 7), (40_000, 8)] {
                let q = test_number(bits, seed);
                let a = &q * b;
                assert_eq!(exact_quotient(&a, b), q, "{} / {} bits", a.bits(), b.bits());
                assert_eq!(long::div_exact(&a, b), q);
            }
        }
        assert!(exact_quotient(&BigUint::zero(), &divisors[4]).is_zero());
    }

    /// A system's numerators over one long denominator (odd part times a power of two)
    /// reduced together equal each reduced alone: none cancelling, a short factor in some,
    /// a long one, powers of two, zero and the whole; where nothing cancels the value holds
    /// the shared odd part itself.
    #[test]
    fn reduced_over_equals_reduced_one_by_one() {
        let (p, q) = (
            long::test_number(9_000, 5) | BigUint::one(),
            BigUint::from(3u8),
        );
        let long_factor = long::test_number(4_000, 6) | BigUint::one();
        let odd = Arc::new(&p * &q * &long_factor);
        let twos = 7;
        let den: BigUint = &*odd << twos;
        let plain = long::test_number(12_000, 9);
        let numerators: Vec<BigUint> = vec![
            &plain % &den,
            (&plain * 3u8) % &den,
            &long_factor * 11u8,
            (&plain << 5u8) % &den,
            BigUint::zero(),
            den.clone(),
            &q << 3u8,
            BigUint::one(),
        ];
        for chunk in [&numerators[..], &numerators[..1], &numerators[2..3]] {
            let together = reduced_over(chunk, &odd, &long::Modulus::new(&odd), twos);
            for (t, v) in chunk.iter().zip(&together) {
                let alone = Value::new(t.clone(), den.clone());
                assert!(same(v, &alone), "{t} over the denominator");
                if gcd(t, &odd).is_one() && !t.is_zero() {
                    assert!(Arc::ptr_eq(v.shared_odd(), &odd));
                }
            }
        }
    }

    /// Means of long values whose denominators share a long odd part (equal, or one a
    /// multiple of the other), waiting and finished together in one batch or alone, equal
    /// rational arithmetic, also where a factor cancels (3 or 5, a long one, or powers of 3
    /// from a long odd part with no other prime) and where the sum is 0 or 1; odd parts
    /// gathered around cores and odd parts left to the split into smooth and rough.
    #[test]
    fn pending_means_finish_as_rational_arithmetic() {
        let big = long::test_number(long::LONG_GCD + 500, 3) | BigUint::one();
        let r = Arc::new(&big * 15u8);
        let value = |n: BigUint, odd: &Arc<BigUint>, twos: u32| Value::new(n, &**odd << twos);
        let r7 = Arc::new(&*r * 7u8);
        let pow3 = Arc::new(BigUint::from(3u8).pow(5_200));
        let pairs = [
            (
                value(BigUint::one(), &r, 3),
                value(BigUint::from(2u8), &r, 3),
            ),
            (
                value(BigUint::from(4u8), &r, 2),
                value(BigUint::from(11u8), &r, 5),
            ),
            (
                value(BigUint::one(), &r, 0),
                value(BigUint::from(2u8), &r7, 1),
            ),
            (value(&big * 2u8, &r, 1), value(BigUint::from(7u8), &r7, 4)),
            (Value::zero(), value(BigUint::from(5u8), &r, 0)),
            (value(&*r - 1u8, &r, 0), value(BigUint::one(), &r, 0)),
            // The sum's numerator is a multiple of `big`: a long factor cancels.
            (value(BigUint::one(), &r, 0), value(&big - 1u8, &r, 0)),
            (
                value(BigUint::one(), &r7, 2),
                value(&big * 7u8 - 1u8, &r7, 2),
            ),
            // A long odd part with no large prime (3^5,200): only small factors cancel.
            (
                value(BigUint::one(), &pow3, 1),
                value(BigUint::from(2u8), &pow3, 1),
            ),
            (
                value(BigUint::one(), &pow3, 0),
                value(BigUint::from(5u8), &pow3, 3),
            ),
        ];
        // More unrelated long odd parts than there are cores: some go the split way.
        let mut pairs = pairs.to_vec();
        for seed in 10..16 {
            let other =
                Arc::new((long::test_number(long::LONG_GCD + 300, seed) | BigUint::one()) * 3u8);
            pairs.push((
                value(BigUint::one(), &other, 1),
                value(BigUint::from(2u8), &other, 1),
            ));
            pairs.push((
                value(BigUint::from(5u8), &other, 2),
                value(BigUint::from(7u8), &other, 0),
            ));
        }
        let want: Vec<Value> = pairs
            .iter()
            .map(|(a, b)| {
                Value::from(
                    (a.to_ratio() + b.to_ratio()) / num_rational::Ratio::from_integer(2u8.into()),
                )
            })
            .collect();
        let mut done = Vec::new();
        let mut pending = Vec::new();
        for (i, (a, b)) in pairs.iter().enumerate() {
            assert!(same(&mean(a, b), &want[i]), "mean {i}");
            match mean_or_pending(a, b) {
                Mean::Done(v) => done.push((i, v)),
                Mean::Pending(p) => pending.push((i, p)),
            }
        }
        assert!(pending.len() >= 20, "the long means wait");
        let odds: Vec<&BigUint> = pending.iter().map(|(_, p)| &*p.g_odd).collect();
        let gathered = cores::gather(&odds);
        assert!(gathered.placed.iter().any(Option::is_some), "some gathered");
        assert!(gathered.placed.iter().any(Option::is_none), "some alone");
        let (places, waiting): (Vec<usize>, Vec<PendingMean>) = pending.into_iter().unzip();
        let finished = finish_means(waiting);
        for (i, v) in places.into_iter().zip(finished).chain(done) {
            assert!(same(&v, &want[i]), "pending mean {i}");
        }
    }

    #[test]
    fn mean_is_exact_and_reduced() {
        for (a, b) in [
            (v(1, 3), v(1, 6)),
            (v(2, 5), v(3, 5)),
            (v(1, 4), v(1, 12)),
            (v(0, 1), v(1, 1)),
            (v(7, 10), v(3, 14)),
            (v(1, 2), v(1, 2)),
            // Denominators with one odd part (3·2^i): the gcd is the smaller one.
            (v(1, 6), v(5, 12)),
            (v(5, 24), v(1, 3)),
            (v(7, 48), v(5, 6)),
            (v(1, 8), v(3, 4)),
        ] {
            let want = Value::from(
                (a.to_ratio() + b.to_ratio())
                    / num_rational::Ratio::from_integer(BigUint::from(2u8)),
            );
            assert!(same(&mean(&a, &b), &want), "{a} {b}");
        }
    }

    /// Half differences, signed and reduced, on every path: one denominator, one odd part
    /// with other powers of two, and unrelated denominators; zero is 0/1.
    #[test]
    fn half_differences_are_exact_and_reduced() {
        use num_bigint::BigInt;
        use num_rational::BigRational;
        use num_traits::Signed;
        let signed = |x: &Value| {
            BigRational::new(
                BigInt::from(x.numer().into_owned()),
                BigInt::from(x.denom().into_owned()),
            )
        };
        let cases = [
            (v(3, 4), v(1, 4)),
            (v(1, 4), v(3, 4)),
            (v(1, 6), v(5, 12)),
            (v(5, 24), v(1, 3)),
            (v(1, 3), v(2, 7)),
            (v(1, 2), v(1, 2)),
            (v(7, 48), v(5, 6)),
        ];
        for (a, b) in cases {
            let (negative, got) = half_difference(&a, &b);
            let want = (signed(&a) - signed(&b)) / BigRational::from_integer(2.into());
            assert_eq!(
                negative,
                want < BigRational::from_integer(0.into()),
                "{a} {b}"
            );
            assert_eq!(signed(&got), want.abs(), "{a} {b}");
            // In lowest terms: what reducing it again gives.
            let again = Value::new(got.numer().into_owned(), got.denom().into_owned());
            assert!(same(&got, &again), "{a} {b}");
        }
        assert!(same(&half_difference(&v(1, 3), &v(1, 3)).1, &Value::zero()));
    }

    /// Least common multiples equal num-integer's: with 1, over one odd part (either
    /// larger), a multiple of an odd part, and unrelated odd parts, long and short.
    #[test]
    fn least_common_multiples_equal_num_integers() {
        use num_integer::Integer;
        let odd = long::test_number(9_000, 7) | BigUint::one();
        let other = long::test_number(3_000, 8) | BigUint::one();
        let numbers = [
            BigUint::one(),
            BigUint::from(6u8),
            &odd << 3u8,
            odd.clone(),
            &odd << 9u8,
            &odd * 5u8,
            &other << 1u8,
            &odd * &other,
        ];
        for a in &numbers {
            for b in &numbers {
                assert_eq!(lcm(a, b), a.lcm(b), "{} and {} bits", a.bits(), b.bits());
            }
        }
    }

    /// Modular inverses by dashu-int's extended gcd: p·b ≡ 1 (mod q) with 0 < b ≤ q, for
    /// small and large numbers and both signs of the Bézout coefficient; None when p and q
    /// share a factor.
    #[test]
    fn inverses_mod_q() {
        use num_traits::Zero;
        let big = BigUint::from(3u8).pow(3000) + BigUint::from(2u8);
        let cases = [
            (BigUint::from(3u8), BigUint::from(8u8)),
            (BigUint::from(5u8), BigUint::from(8u8)),
            (BigUint::from(7463u32), BigUint::from(8192u32)),
            (BigUint::from(1u8), BigUint::from(1u8)),
            (BigUint::from(1u8) << 5000, big.clone()),
            ((BigUint::from(1u8) << 5000) + 1u8, big.clone()),
            (big.clone() - 1u8, big.clone()),
        ];
        for (p, q) in &cases {
            let b = inverse_mod(p, q).unwrap();
            assert!(!b.is_zero() && &b <= q);
            assert_eq!((p * &b) % q, BigUint::one() % q, "{p} mod {q}");
        }
        assert_eq!(inverse_mod(&BigUint::from(6u8), &BigUint::from(8u8)), None);
        assert_eq!(inverse_mod(&(big.clone() * 3u8), &(big * 5u8)), None);
    }

    /// Every size pairing (machine words, small, large, lopsided) gives num-bigint's gcd.
    #[test]
    fn gcds_of_every_size_agree_with_num_bigint() {
        let big = BigUint::from(3u8).pow(900) * BigUint::from(1_000_003u32);
        let numbers = [
            BigUint::zero(),
            BigUint::one(),
            BigUint::from(12u8),
            BigUint::from(1u128 << 100) * 3u8,
            BigUint::from(u128::MAX),
            BigUint::from(3u8).pow(100) * 4u8,
            big.clone(),
            big * BigUint::from(1u128 << 90),
        ];
        for a in &numbers {
            for b in &numbers {
                assert_eq!(gcd(a, b), a.gcd(b), "{a} {b}");
            }
        }
    }

    /// Large numbers go through dashu-int: the same gcd as num-bigint's.
    #[test]
    fn large_gcds_agree_with_num_bigint() {
        let p = (BigUint::from(3u8).pow(2000)) * BigUint::from(1_000_003u32);
        let q = (BigUint::from(3u8).pow(1500)) * BigUint::from(999_983u32) * BigUint::from(7u8);
        assert!(p.bits() > SMALL && q.bits() > SMALL);
        assert_eq!(gcd(&p, &q), p.gcd(&q));
        let big = Value::new(p.clone(), q.clone() * BigUint::from(5u8));
        let half = reduced(p.clone(), q.clone() * BigUint::from(5u8));
        assert!(same(&big, &half));
        let a = Value::new(BigUint::one(), q.clone());
        let b = Value::new(BigUint::from(2u8), p.clone());
        let want = Value::from(
            (a.to_ratio() + b.to_ratio()) / num_rational::Ratio::from_integer(BigUint::from(2u8)),
        );
        assert!(same(&mean(&a, &b), &want));
    }
}
