//! Long products and greatest common divisors: numbers of thousands of digits (8x8
//! four-piece values reach 21,853 digits, 72,600 bits) go through malachite, whose
//! multiplication (Toom–Cook up to Schönhage–Strassen) and subquadratic half-gcd are
//! ports of GMP's; shorter ones stay with num-bigint (the values' own type) and
//! dashu-int's Lehmer gcd, which are as fast there and need no conversion. Conversion is
//! a copy of the limbs each way, about a microsecond at 70,000 bits against the tens or
//! hundreds of microseconds the operation takes (measured side by side: README,
//! *Dependencies*).

use malachite_base::num::arithmetic::traits::{DivExact, Gcd};
use malachite_base::num::basic::traits::{One, Zero};
use malachite_base::num::logic::traits::SignificantBits;
use malachite_nz::natural::Natural;
use num_bigint::{BigInt, BigUint};

/// A product whose shorter factor has at least this many bits goes through malachite
/// (measured: 1.0 against num-bigint's 1.7 µs at 2,560 bits, 75 against 283 µs at 72,600;
/// at 1,280 bits num-bigint is as fast).
pub const LONG_PRODUCT: u64 = 2_048;

/// A gcd whose shorter number has at least this many bits goes through malachite
/// (measured: 66 against dashu-int's 75 µs at 10,600 bits, 2.4 against 2.9 ms at 97,000;
/// below, the two are as fast, and dashu-int's serves).
pub const LONG_GCD: u64 = 8_192;

/// `a · b`, exactly.
pub fn mul(a: &BigUint, b: &BigUint) -> BigUint {
    if a.bits().min(b.bits()) < LONG_PRODUCT {
        return a * b;
    }
    from_natural(product(&to_natural(a), &to_natural(b)))
}

/// The lengths (in 64-bit limbs) at which malachite 0.14 multiplies two numbers of equal
/// length by Toom–Cook (its `FFT_MUL_THRESHOLD`, 1,000), though from 389 on (its
/// `MUL_FFT_THRESHOLD`) it multiplies numbers of unequal length by its FFT, which is faster
/// there. Measured side by side (`cargo bench -- "long product"`, this machine, medians):
/// equal lengths 85 µs at 32,000 bits, 153 at 51,200, 208 at 60,160, and 124 at 70,400,
/// past the threshold.
const EQUAL_BY_TOOM: std::ops::Range<usize> = 389..1_000;

/// Whether factors of `a` and `b` limbs are multiplied faster with one of them a limb
/// longer (shifted by 64 bits): where they are of one length in [`EQUAL_BY_TOOM`]. The
/// shift and the shift back are copies, a microsecond or two.
fn uneven_is_faster(a: usize, b: usize) -> bool {
    a == b && EQUAL_BY_TOOM.contains(&a)
}

/// `a · b` on malachite's numbers, shifted where [`uneven_is_faster`].
fn product(a: &Natural, b: &Natural) -> Natural {
    let (la, lb) = (a.limb_count() as usize, b.limb_count() as usize);
    if uneven_is_faster(la, lb) {
        ((a << 64u64) * b) >> 64u64
    } else {
        a * b
    }
}

/// `a · b` for signed numbers, exactly.
pub fn mul_signed(a: &BigInt, b: &BigInt) -> BigInt {
    let sign = a.sign() * b.sign();
    BigInt::from_biguint(sign, mul(a.magnitude(), b.magnitude()))
}

/// The greatest common divisor of two long numbers (the caller has taken the short
/// cases: see [`super::arith::gcd`]).
pub fn gcd(a: &BigUint, b: &BigUint) -> BigUint {
    from_natural(to_natural(a).gcd(to_natural(b)))
}

/// `a / b` where `b` (> 0) divides `a`: malachite's exact division, which needs no
/// remainder. Measured against num-bigint's division with the conversions counted: 37 ->
/// 3 µs for a 2,000-bit quotient by 20,000 bits, 180 -> 83 µs for 20,000 by 20,000, 427 ->
/// 219 µs for 50,000 by 20,000 (a mean's denominators divided by their gcd were 6 % of
/// a `perf` sample taken during 8x8 KNvKP's exact evaluation).
pub fn div_exact(a: &BigUint, b: &BigUint) -> BigUint {
    from_natural(to_natural(a).div_exact(to_natural(b)))
}

/// A division whose dividend has at least this many bits and whose divisor is longer
/// than a word goes through malachite (its schoolbook division where the quotient is
/// short): measured with the conversions counted, 8.2 against num-bigint's 3.3 µs (its
/// Burnikel–Ziegler recursion) at 9,600 bits over 9,600 with a 512-bit quotient, 44 against
/// 18 µs at 60,160 bits, 40 against 32 µs for 60,160 bits by 1,024; at 6,144 bits and
/// below num-bigint's is as fast.
pub const LONG_DIVISION: u64 = 8_192;

/// Whether a division of a `dividend_bits`-bit number by `b` is long ([`LONG_DIVISION`]).
fn long_division(dividend_bits: u64, b: &BigUint) -> bool {
    dividend_bits >= LONG_DIVISION && b.bits() > 64
}

/// `(a / b, a mod b)` for `b > 0`.
pub fn div_rem(a: &BigUint, b: &BigUint) -> (BigUint, BigUint) {
    shifted_div_rem(a, 0, b)
}

/// `(⌊a / b⌋, a − b·⌊a / b⌋)` for `b > 0` and `a` of either sign, the remainder in
/// `[0, b)` (num-integer's `div_mod_floor`), through malachite where the division is long
/// ([`LONG_DIVISION`]): num-bigint's (Burnikel–Ziegler over a schoolbook base) took half of
/// 6x6 KBNvKN's exact evaluation, whose reconstructions divide by a common denominator
/// of thousands of digits.
pub fn div_mod_floor(a: &BigInt, b: &BigInt) -> (BigInt, BigInt) {
    if !long_division(a.bits(), b.magnitude()) {
        return num_integer::Integer::div_mod_floor(a, b);
    }
    let (q, r) = div_rem(a.magnitude(), b.magnitude());
    let (q, r) = (BigInt::from(q), BigInt::from(r));
    match a.sign() {
        num_bigint::Sign::Minus if r.sign() != num_bigint::Sign::NoSign => (-q - 1u8, b - r),
        num_bigint::Sign::Minus => (-q, r),
        _ => (q, r),
    }
}

/// `a mod b` for `b > 0`: [`div_rem`]'s remainder without its quotient.
pub fn rem(a: &BigUint, b: &BigUint) -> BigUint {
    if !long_division(a.bits(), b) {
        return a % b;
    }
    from_natural(to_natural(a) % to_natural(b))
}

/// `(a·2^shift / b, a·2^shift mod b)` for `b > 0`: the shift made on malachite's number
/// where the division is long ([`LONG_DIVISION`]), instead of a shifted copy in num-bigint.
pub fn shifted_div_rem(a: &BigUint, shift: u64, b: &BigUint) -> (BigUint, BigUint) {
    use malachite_base::num::arithmetic::traits::DivMod;
    if !long_division(a.bits() + shift, b) {
        return num_integer::Integer::div_rem(&(a << shift), b);
    }
    let (q, r) = (to_natural(a) << shift).div_mod(to_natural(b));
    (from_natural(q), from_natural(r))
}

/// Whether every one of `numerators` is coprime to `d`: one gcd of `d` with their product
/// modulo `d` (a product and a reduction each, about a tenth of a gcd at 70,000 bits),
/// instead of a gcd each. A value's lowest terms are checked this way for the many values
/// that share one denominator. From [`BARRETT_BATCH`] numerators on, the reductions are
/// Barrett's ([`Modulus`]: its inverse costs about one division, each reduction then
/// less than half of one).
pub fn all_coprime(d: &BigUint, numerators: impl IntoIterator<Item = BigUint>) -> bool {
    let numerators: Vec<Natural> = numerators.into_iter().map(|n| to_natural(&n)).collect();
    let d = to_natural(d);
    if numerators.len() >= BARRETT_BATCH {
        let d = Modulus::of(d);
        let running = numerators
            .iter()
            .fold(Natural::ONE, |p, n| d.reduce(product(&p, n)));
        return running.gcd(d.r) == Natural::ONE;
    }
    let running = numerators
        .iter()
        .fold(Natural::ONE, |p, n| product(&p, n) % &d);
    running.gcd(d) == Natural::ONE
}

/// [`all_coprime`] reduces by Barrett's method from this many numerators on.
const BARRETT_BATCH: usize = 3;

/// A long odd number `r` made ready for many reductions modulo it (Barrett's): with
/// `μ = ⌊2^l / r⌋` computed once (about one division), `x mod r` for `x < 2^l` is two
/// products and a few subtractions, where a division each time costs about five products
/// at 65,000 bits (malachite's `%` 334 µs, this 141 µs, measured side by side). The many
/// numerators over one long denominator are put in lowest terms with one of these.
pub struct Modulus {
    r: Natural,
    /// The bits of `r`.
    n: u64,
    /// `⌊2^(2n + BARRETT_SLACK) / r⌋`, where `r` is long enough to gain by it.
    mu: Option<Natural>,
}

/// Numbers up to this many bits beyond twice the modulus's are reduced without a division.
const BARRETT_SLACK: u64 = 128;

/// A modulus of at least this many bits is reduced by Barrett's method (measured: as fast
/// as a division at 16,384 bits, 2.4 times faster at 65,536).
const BARRETT_FROM: u64 = 16_384;

impl Modulus {
    /// `r` (> 0) made ready.
    pub fn new(r: &BigUint) -> Modulus {
        Modulus::of(to_natural(r))
    }

    fn of(r: Natural) -> Modulus {
        let n = r.significant_bits();
        let mu = (n >= BARRETT_FROM).then(|| (Natural::ONE << (2 * n + BARRETT_SLACK)) / &r);
        Modulus { r, n, mu }
    }

    /// `x mod r`. The quotient `q = ⌊⌊x / 2^(n−1)⌋ · μ / 2^(l−n+1)⌋` is at most `x / r`
    /// and short of it by less than 3 (each floor loses less than 1), so `x − q r` is
    /// the remainder after at most three subtractions of `r`.
    fn reduce(&self, x: Natural) -> Natural {
        if x.significant_bits() < self.n {
            return x;
        }
        let l = 2 * self.n + BARRETT_SLACK;
        match &self.mu {
            Some(mu) if x.significant_bits() <= l => {
                let q = product(&(&x >> (self.n - 1)), mu) >> (l - self.n + 1);
                let mut rem = x - product(&q, &self.r);
                while rem >= self.r {
                    rem -= &self.r;
                }
                rem
            }
            _ => x % &self.r,
        }
    }
}

/// `gcd(t, r)` for every `t` of `numbers`, `r` the modulus, the way [`all_coprime`]
/// checks coprimality: the product of the numbers modulo `r` shares with `r` every factor
/// that any one of them does, so one gcd of that product with `r` (G) serves them all,
/// and each number's gcd with r is its gcd with G. A system's values over one long
/// denominator, and the means of a level over one, are put in lowest terms this way (a
/// gcd each took a tenth of a 7x7 KNvKN run). See [`gcds_of`].
pub fn gcds_with(r: &Modulus, numbers: &[&BigUint]) -> Vec<BigUint> {
    gcds_of(r, numbers.iter().map(|n| to_natural(n)).collect())
        .into_iter()
        .map(from_natural)
        .collect()
}

/// [`gcds_with`] on malachite's numbers, reduced first (a number a little longer than r
/// costs little more than a subtraction: Barrett's quotient is short).
///
/// - A number that would make the product 0 (a multiple of r, common where a mean's
///   denominator loses its whole odd part: one batch in nine on 7x7 KNvKN; or one that
///   holds every factor of r the product lacks) is left out of it and takes a gcd of its
///   own: in the product it would make G all of r, and every other number of the batch
///   would pay a long gcd with it.
/// - Where G is long (a number shares a long factor with r: 254 of 762,476 pending means
///   on 8x8 KNvKN, sharing 990 bits on average), the numbers' gcds with G are taken the
///   same way, G being the modulus, instead of a long gcd each. G is below r, as the
///   product is, so this ends.
fn gcds_of(r: &Modulus, numbers: Vec<Natural>) -> Vec<Natural> {
    let mut residues: Vec<Natural> = numbers.into_iter().map(|t| r.reduce(t)).collect();
    let mut gcds: Vec<Option<Natural>> = vec![None; residues.len()];
    let mut running = Natural::ONE % &r.r;
    let mut included = Vec::with_capacity(residues.len());
    for (i, t) in residues.iter().enumerate() {
        let next = r.reduce(product(&running, t));
        if next == Natural::ZERO {
            gcds[i] = Some(t.gcd(&r.r));
        } else {
            running = next;
            included.push(i);
        }
    }
    let common = running.gcd(&r.r);
    if common == Natural::ONE {
        for &i in &included {
            gcds[i] = Some(Natural::ONE);
        }
    } else if common.significant_bits() < LONG_GCD {
        for &i in &included {
            gcds[i] = Some((&residues[i] % &common).gcd(&common));
        }
    } else {
        let members = included
            .iter()
            .map(|&i| std::mem::take(&mut residues[i]))
            .collect();
        let within = gcds_of(&Modulus::of(common), members);
        for (&i, g) in included.iter().zip(within) {
            gcds[i] = Some(g);
        }
    }
    gcds.into_iter()
        .map(|g| g.expect("every number has its gcd"))
        .collect()
}

/// Prime factors below this are split off a long odd part before gcds with it
/// ([`split_smooth`]).
const SMOOTH_BELOW: u32 = 1_000;

/// The product of the odd primes below [`SMOOTH_BELOW`] (about 1,400 bits).
fn small_primorial() -> &'static Natural {
    static PRIMORIAL: std::sync::OnceLock<Natural> = std::sync::OnceLock::new();
    PRIMORIAL.get_or_init(|| {
        (3..SMOOTH_BELOW)
            .filter(|&p| (2..p).take_while(|d| d * d <= p).all(|d| p % d != 0))
            .fold(Natural::ONE, |acc, p| acc * Natural::from(p))
    })
}

/// `r` (> 0, odd) as `(smooth, rough)` with `r = smooth · rough`: `smooth` holds r's prime
/// factors below [`SMOOTH_BELOW`], with their multiplicities, and `rough` the others. The
/// first step is a gcd with the primorial (a division of r by a 1,400-bit number and a
/// short gcd), each next one a gcd with what the last took off; each takes one power of
/// every small prime still there. A gcd with r is the product of the gcds with the two
/// parts, which are coprime: the smooth one short, and the rough one shared by more
/// numbers than r itself (the long odd parts of a level's pending means differ mostly in
/// small factors: on 7x7 KNvKP 64,081 odd parts have 9,585 rough parts).
pub fn split_smooth(r: &BigUint) -> (BigUint, BigUint) {
    let primorial = small_primorial();
    let mut rough = to_natural(r);
    let mut smooth = Natural::ONE;
    // The small primes still in `rough` divide the last `h`.
    let mut h = (&rough % primorial).gcd(primorial);
    while h != Natural::ONE {
        rough /= &h;
        smooth *= &h;
        h = (&rough % &h).gcd(&h);
    }
    (from_natural(smooth), from_natural(rough))
}

fn to_natural(a: &BigUint) -> Natural {
    Natural::from_owned_limbs_asc(a.to_u64_digits())
}

fn from_natural(n: Natural) -> BigUint {
    from_limbs(&n.into_limbs_asc())
}

/// The number whose 64-bit limbs, least significant first, are `limbs`.
pub fn from_limbs(limbs: &[u64]) -> BigUint {
    BigUint::new(
        limbs
            .iter()
            .flat_map(|&w| [w as u32, (w >> 32) as u32])
            .collect(),
    )
}

/// A number of `bits` bits from a seed (top bit set), for tests of long arithmetic.
#[cfg(test)]
pub(crate) fn test_number(bits: u64, seed: u64) -> BigUint {
    let mut x = seed | 1;
    let words: Vec<u32> = (0..bits.div_ceil(32))
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u32
        })
        .collect();
    let n = BigUint::new(words) >> (bits.div_ceil(32) * 32 - bits);
    n | (BigUint::from(1u8) << (bits - 1))
}

#[cfg(test)]
mod tests {
    use super::test_number as number;
    use super::*;
    use num_bigint::Sign;
    use num_traits::{One, Zero};

    /// Products on both sides of the threshold, lopsided ones and zero, equal num-bigint's.
    #[test]
    fn products_equal_num_bigints() {
        let sizes = [1, 64, LONG_PRODUCT - 1, LONG_PRODUCT, 20_000, 75_000];
        for (i, &p) in sizes.iter().enumerate() {
            for (j, &q) in sizes.iter().enumerate() {
                let (a, b) = (number(p, i as u64 + 1), number(q, j as u64 + 40));
                assert_eq!(mul(&a, &b), &a * &b, "{p} x {q} bits");
            }
        }
        let a = number(30_000, 7);
        assert!(mul(&a, &BigUint::zero()).is_zero());
        let minus = BigInt::from_biguint(Sign::Minus, a.clone());
        let b = BigInt::from(number(9_000, 8));
        assert_eq!(mul_signed(&minus, &b), &minus * &b);
        assert_eq!(mul_signed(&b, &minus), &minus * &b);
        assert_eq!(mul_signed(&minus, &BigInt::zero()), BigInt::zero());
    }

    /// Factors of one length where malachite would take Toom–Cook go in a limb apart, and
    /// the products are the same: at the range's ends and inside it, with the top limb
    /// full or nearly empty, and against numbers a limb shorter or longer.
    #[test]
    fn equal_lengths_multiply_alike_shifted() {
        assert!(!uneven_is_faster(388, 388) && uneven_is_faster(389, 389));
        assert!(uneven_is_faster(999, 999) && !uneven_is_faster(1_000, 1_000));
        assert!(!uneven_is_faster(500, 501));
        for limbs in [388, 389, 640, 999, 1_000] {
            for (top, seed) in [(64, 1), (1, 2)] {
                let bits = (limbs - 1) * 64 + top;
                let a = number(bits, seed);
                assert_eq!(a.to_u64_digits().len() as u64, limbs);
                for b in [
                    number(bits, seed + 10),
                    number(bits - 64, 3),
                    number(bits + 64, 4),
                ] {
                    assert_eq!(mul(&a, &b), &a * &b, "{limbs} limbs, top {top}");
                    let (x, y) = (to_natural(&a), to_natural(&b));
                    assert_eq!(product(&x, &y), &x * &y, "{limbs} limbs, top {top}");
                }
            }
        }
    }

    /// Divisions on both sides of the threshold, with and without a shift, by a word, by
    /// short and long divisors, exact and not, equal num-bigint's.
    /// The floor division of signed numbers equals num-integer's on both sides of the long
    /// threshold, for either sign, exact multiples included.
    #[test]
    fn floor_divisions_equal_num_bigints() {
        let divisors = [
            number(64, 41),
            number(65, 42),
            number(6_000, 43),
            number(LONG_DIVISION, 44),
            number(30_000, 45),
        ];
        for b in &divisors {
            let b = BigInt::from(b.clone());
            for a in [
                number(LONG_DIVISION - 2, 46),
                number(LONG_DIVISION, 47),
                number(40_000, 48),
                number(40_000, 48) * b.magnitude(),
            ] {
                for sign in [Sign::Plus, Sign::Minus] {
                    let a = BigInt::from_biguint(sign, a.clone());
                    assert_eq!(
                        div_mod_floor(&a, &b),
                        num_integer::Integer::div_mod_floor(&a, &b),
                        "{sign:?}{} / {}",
                        a.bits(),
                        b.bits()
                    );
                }
            }
        }
        let long = BigInt::from(number(20_000, 49));
        assert_eq!(
            div_mod_floor(&BigInt::zero(), &long),
            (BigInt::zero(), BigInt::zero())
        );
    }

    #[test]
    fn divisions_equal_num_bigints() {
        let ints =
            |a: &BigUint, shift: u64, b: &BigUint| num_integer::Integer::div_rem(&(a << shift), b);
        let long = number(60_000, 31);
        let divisors = [
            BigUint::from(7u8),
            number(64, 32),
            number(65, 33),
            number(1_024, 34),
            number(LONG_DIVISION, 35),
            number(59_000, 36),
            long.clone(),
            number(61_000, 37),
        ];
        for a in [
            number(LONG_DIVISION - 2, 38),
            long.clone(),
            &long * &divisors[4],
        ] {
            for b in &divisors {
                for shift in [0, 1, 511, 2_000] {
                    let want = ints(&a, shift, b);
                    assert_eq!(
                        shifted_div_rem(&a, shift, b),
                        want,
                        "{} / {}",
                        a.bits(),
                        b.bits()
                    );
                    if shift == 0 {
                        assert_eq!(div_rem(&a, b), want);
                        assert_eq!(rem(&a, b), want.1);
                    }
                }
            }
        }
        assert_eq!(
            div_rem(&BigUint::zero(), &long),
            (BigUint::zero(), BigUint::zero())
        );
        assert_eq!(rem(&BigUint::zero(), &long), BigUint::zero());
    }

    /// Coprimality of many numerators with one denominator, short and long: a shared
    /// factor in any one of them, or a factor of two against an even denominator, is found.
    #[test]
    fn all_coprime_finds_a_common_factor_in_any_numerator() {
        let d = number(20_000, 21) * 6u8;
        let coprime = |seed| {
            let mut n = number(19_000, seed) | BigUint::one();
            while num_integer::Integer::gcd(&n, &d) != BigUint::one() {
                n += 2u8;
            }
            n
        };
        // Fewer than BARRETT_BATCH numerators reduce by division, more by Barrett's method.
        for count in [1, 2, 5] {
            let ns: Vec<BigUint> = (0..count).map(|s| coprime(s + 30)).collect();
            assert!(all_coprime(&d, ns.clone()));
            for i in 0..count as usize {
                let mut bad = ns.clone();
                bad[i] = &bad[i] * 3u8;
                assert!(
                    !all_coprime(&d, bad),
                    "a factor 3 in numerator {i} of {count}"
                );
                let mut even = ns.clone();
                even[i] = &even[i] << 1u8;
                assert!(
                    !all_coprime(&d, even),
                    "a factor 2 in numerator {i} of {count}"
                );
            }
        }
        assert!(all_coprime(&BigUint::one(), [BigUint::zero()]));
        assert!(!all_coprime(&BigUint::from(5u8), [BigUint::zero()]));
        assert!(all_coprime(
            &BigUint::from(4u8),
            [BigUint::from(3u8), BigUint::one()]
        ));
        assert!(all_coprime(&d, []));
    }

    /// A long odd number's small factors (with multiplicities, one of them high) and the
    /// rest come apart: the product is the number, the smooth part has no prime from 1,000
    /// up and the rough part none below.
    #[test]
    fn smooth_and_rough_parts_multiply_back() {
        let rough_prime_free = |x: &BigUint| (3u32..1000).all(|p| !(x % p).is_zero());
        let big = number(9_000, 11) | BigUint::one();
        let (_, big_rough) = split_smooth(&big);
        assert!(rough_prime_free(&big_rough));
        let smooth_want = BigUint::from(3u8).pow(700) * 5u8 * 997u32 * 997u32;
        for r in [
            &big_rough * &smooth_want,
            big_rough.clone(),
            smooth_want.clone(),
        ] {
            let (smooth, rough) = split_smooth(&r);
            assert_eq!(&smooth * &rough, r);
            assert!(rough_prime_free(&rough));
            let mut s = smooth.clone();
            for p in 3u32..1000 {
                while (&s % p).is_zero() {
                    s /= p;
                }
            }
            assert!(s.is_one(), "the smooth part has only small primes");
        }
        assert_eq!(split_smooth(&(&big_rough * &smooth_want)).0, smooth_want);
        assert_eq!(split_smooth(&smooth_want).1, BigUint::one());
        assert_eq!(
            split_smooth(&BigUint::one()),
            (BigUint::one(), BigUint::one())
        );
    }

    /// Reductions by a prepared modulus equal the remainders, below and above the size
    /// where Barrett's method takes over, at the largest numbers it takes and beyond.
    #[test]
    fn prepared_reductions_equal_remainders() {
        for bits in [100, BARRETT_FROM - 1, BARRETT_FROM, 40_000] {
            let r = number(bits, bits) | BigUint::one();
            let m = Modulus::new(&r);
            assert_eq!(m.mu.is_some(), bits >= BARRETT_FROM);
            let l = 2 * bits + BARRETT_SLACK;
            let mut xs = vec![
                BigUint::zero(),
                BigUint::one(),
                r.clone(),
                &r - 1u8,
                &r * 3u8,
                (BigUint::one() << l) - 1u8,
                BigUint::one() << l,
                number(l + 500, 3),
            ];
            for seed in 0..6 {
                xs.push(number(bits + 1 + seed * (bits / 3), seed + 50));
                xs.push(&r * number(bits, seed + 60) + &r - 1u8);
            }
            for x in xs {
                let got = from_natural(m.reduce(to_natural(&x)));
                assert_eq!(got, &x % &r, "{} bits mod {bits} bits", x.bits());
            }
        }
    }

    /// A batch's gcds with the modulus equal one gcd each, below and above Barrett's size
    /// and with a long common factor (whose gcds are then taken as a batch of their own):
    /// numbers coprime to it, sharing a short factor, a long one, the whole modulus
    /// (multiples of it, which are left out of the product, and zero), two that hold its
    /// factors between them, numbers longer than it, alone and mixed.
    #[test]
    fn batch_gcds_equal_one_gcd_each() {
        use num_integer::Integer;
        for bits in [9_000, BARRETT_FROM + 100, 3 * LONG_GCD] {
            let long_factor = number(bits / 3, 21) | BigUint::one();
            let rest = (number(bits, 22) | BigUint::one()) * 3u8 * 1009u32;
            let r = &rest * &long_factor;
            let mut numbers = vec![
                number(bits, 23),
                number(bits, 24) * 3u8,
                number(bits, 25) * 1009u32 * 9u8,
                number(bits / 2, 26) * &long_factor,
                &r * 5u8,
                r.clone(),
                BigUint::zero(),
                number(3 * bits, 27),
                number(bits, 28) * &long_factor * 1009u32,
                number(bits / 4, 29) * &rest,
            ];
            numbers.extend((0..8).map(|s| number(r.bits() + 200, 30 + s)));
            let all: Vec<&BigUint> = numbers.iter().collect();
            let pick = |is: &[usize]| is.iter().map(|&i| &numbers[i]).collect::<Vec<_>>();
            let batches = [
                all.clone(),
                pick(&[0, 7, 10, 11]),
                pick(&[4, 5, 6, 4]),
                pick(&[10, 4, 1, 11]),
                pick(&[10, 3, 11, 8, 12]),
                pick(&[3, 9, 10, 8]),
                pick(&[9, 3]),
                pick(&[3]),
                pick(&[]),
            ];
            let m = Modulus::new(&r);
            for batch in &batches {
                let got = gcds_with(&m, batch);
                assert_eq!(got.len(), batch.len());
                for (n, g) in batch.iter().zip(got) {
                    assert_eq!(g, n.gcd(&r), "{} bits against {bits}", n.bits());
                }
            }
        }
        let one = Modulus::new(&BigUint::one());
        assert_eq!(gcds_with(&one, &[&BigUint::zero()]), [BigUint::one()]);
    }

    /// Long gcds with a long common factor, with none, and with a power of two, equal
    /// num-bigint's.
    #[test]
    fn long_gcds_equal_num_bigints() {
        use num_integer::Integer;
        let common = number(LONG_GCD, 3);
        for (p, q) in [(LONG_GCD, LONG_GCD), (40_000, 25_000), (75_000, 75_000)] {
            let (a, b) = (number(p, 11) * &common, number(q, 12) * &common);
            assert_eq!(gcd(&a, &b), a.gcd(&b), "{p} and {q} bits");
            let (c, d) = (number(p, 13), number(q, 14) << 70u8);
            assert_eq!(gcd(&c, &d), c.gcd(&d), "{p} and {q} bits, coprime-ish");
        }
    }
}
