//! Exact values: the bottom of the module graph. Everything that holds a value uses this
//! module; it uses nothing of the crate.
//!
//! - [`Value`]: an exact rational in [0, 1] in lowest terms (White's winning probability,
//!   equally the share of the money Black needs);
//! - [`shared`]: one copy of each denominator's odd part for the many values that have it
//!   (a value holds its denominator as that odd part and a power of two);
//! - [`Pages`]: where a value's numerator may live instead of the heap (a mapped file that
//!   the operating system may write out and read back; [`Value::paged`]): compared and
//!   hashed in place, copied out where a number is needed;
//! - [`arith`]: fast exact arithmetic on values of thousands of digits (gcd through
//!   dashu-int, means, comparisons with floating-point shadows);
//! - [`hints`]: means without a gcd, where the writer of a table says how the odd parts
//!   relate;
//! - [`bytes`]: numbers as little-endian bytes, as the files hold them;
//! - [`simplest`]: the simplest rational in an interval (the study's guesses) and the
//!   Stern–Brocot parents of a value;
//! - [`images`]: fixed-point images of values (`floor(v · 2^F)` in 64-bit limbs), which
//!   decide nearly every comparison without rationals, and the [`Imaged`] view that the
//!   certificate reads.

pub mod arith;
pub mod bytes;
pub mod cores;
pub mod hints;
pub mod images;
pub mod long;
pub mod shared;
pub mod simplest;

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use num_bigint::BigUint;
use num_rational::Ratio;
use num_traits::{One, ToPrimitive, Zero};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

pub use images::{Imaged, Images, fixed_point};
pub use simplest::{parents, simplest_between};

/// An exact value in [0, 1], in lowest terms.
///
/// A value is shared ([`Arc`]): a clone is one more reference, not a copy of its digits
/// (β proved equal to α holds α's values, not copies). Its denominator is shared too:
/// values that [`shared::Denominators`] has seen hold one copy of each denominator between
/// them.
/// With four men nearly every value of a material has a denominator of thousands of digits
/// that many others have too (on 8x8 KRvKN 1,002,109 values have 79,145 denominators),
/// so this halves what the values take.
///
/// Comparison is by value; equality compares numerator and denominator, which is the same
/// thing in lowest terms and needs no multiplication. Display prints `p/q`, or `p` when q
/// is 1 (as num-rational does); [`Value::fraction`] always prints `p/q`. Serialized as
/// num-rational's `Ratio` is: the pair (numerator, denominator).
#[derive(Clone, Debug)]
pub struct Value(Arc<Parts>);

/// A value's numerator and its denominator, as the denominator's odd part (shared) and
/// its power of two: positions below a large system of the exact evaluation inherit its
/// denominator times 2ᵏ, so many denominators are one odd number times different powers
/// of two (in a checkpoint of 8x8 KNvKP 1,227,149 denominators, 5.46 GB of digits, have
/// 438,843 odd parts, 2.19 GB).
#[derive(Debug)]
struct Parts {
    numer: Numer,
    odd: Arc<BigUint>,
    twos: u32,
}

/// Limbs kept outside the heap, in pages the operating system may write out and read back
/// (a mapped file): where [`Value::paged`] puts a numerator. The owner guarantees that
/// the limbs never change while the pages are alive.
pub trait Pages: Send + Sync {
    /// Every limb of the pages, least significant limb of each number first.
    fn limbs(&self) -> &[u64];
}

/// Where a numerator's limbs are.
enum Numer {
    /// On the heap.
    Held(BigUint),
    /// `len` limbs from `start` in `pages` (normalised: `len` > 0, the top limb not 0).
    Paged {
        pages: Arc<dyn Pages>,
        start: usize,
        len: usize,
    },
}

impl fmt::Debug for Numer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Numer::Held(n) => write!(f, "{n:?}"),
            Numer::Paged { start, len, .. } => write!(f, "paged({start}, {len} limbs)"),
        }
    }
}

impl Numer {
    /// The limbs, least significant first, without leading zero limbs.
    fn digits(&self) -> Cow<'_, [u64]> {
        match self {
            Numer::Held(n) => Cow::Owned(n.to_u64_digits()),
            Numer::Paged { pages, start, len } => {
                Cow::Borrowed(&pages.limbs()[*start..*start + *len])
            }
        }
    }

    fn big(&self) -> Cow<'_, BigUint> {
        match self {
            Numer::Held(n) => Cow::Borrowed(n),
            Numer::Paged { .. } => Cow::Owned(long::from_limbs(&self.digits())),
        }
    }

    fn bits(&self) -> u64 {
        match self {
            Numer::Held(n) => n.bits(),
            Numer::Paged { .. } => {
                let d = self.digits();
                64 * d.len() as u64 - u64::from(d[d.len() - 1].leading_zeros())
            }
        }
    }

    fn is_zero(&self) -> bool {
        match self {
            Numer::Held(n) => n.is_zero(),
            Numer::Paged { .. } => false,
        }
    }

    fn cmp(&self, other: &Numer) -> Ordering {
        // A held numerator's limbs are read in place, not copied.
        match (self, other) {
            (Numer::Held(a), Numer::Held(b)) => a.cmp(b),
            (Numer::Held(a), paged) => {
                cmp_limbs(a.iter_u64_digits(), paged.digits().iter().copied())
            }
            (paged, Numer::Held(b)) => {
                cmp_limbs(paged.digits().iter().copied(), b.iter_u64_digits())
            }
            (a, b) => cmp_limbs(a.digits().iter().copied(), b.digits().iter().copied()),
        }
    }
}

/// Two numbers compared by their limbs, least significant first, without leading zero limbs.
fn cmp_limbs<A, B>(a: A, b: B) -> Ordering
where
    A: DoubleEndedIterator<Item = u64> + ExactSizeIterator,
    B: DoubleEndedIterator<Item = u64> + ExactSizeIterator,
{
    a.len().cmp(&b.len()).then_with(|| a.rev().cmp(b.rev()))
}

/// `(floor(x / 2^s), s)` with `s = max(0, bits − 64)`: the top 64 bits of the number whose
/// limbs, least significant first and without leading zero limbs, are `limbs`.
fn top_bits<I>(limbs: I) -> (u64, u64)
where
    I: DoubleEndedIterator<Item = u64> + ExactSizeIterator,
{
    let n = limbs.len() as u64;
    let mut from_top = limbs.rev();
    let (high, low) = (from_top.next().unwrap_or(0), from_top.next().unwrap_or(0));
    if n <= 1 {
        return (high, 0);
    }
    let zeros = high.leading_zeros();
    let top = if zeros == 0 {
        high
    } else {
        (high << zeros) | (low >> (64 - zeros))
    };
    (top, 64 * (n - 1) - u64::from(zeros))
}

/// The outer limbs of a number and their count, into a hash: `outer` at each end (hashing
/// thousands of digits for every lookup would cost more than the lookups). The limbs between
/// are not walked: taking them one by one to skip them was half of a job's writing in a
/// profile of the 8x8 run (KRvKN's values have about 270 limbs, KNvKP's 1,100).
pub(crate) fn hash_outer_limbs<H: std::hash::Hasher>(
    mut limbs: impl ExactSizeIterator<Item = u64> + DoubleEndedIterator,
    outer: usize,
    state: &mut H,
) {
    use std::hash::Hash;
    limbs.len().hash(state);
    for d in limbs.by_ref().take(outer) {
        d.hash(state);
    }
    for d in limbs.rev().take(outer) {
        d.hash(state);
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
            || (self.same_denom(other) && self.0.numer.cmp(&other.0.numer) == Ordering::Equal)
    }
}

impl Eq for Value {}

impl Ord for Value {
    /// By value: numerators where the denominators are one, else cross-multiplied.
    fn cmp(&self, other: &Value) -> Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            return Ordering::Equal;
        }
        if self.same_denom(other) {
            return self.0.numer.cmp(&other.0.numer);
        }
        long::mul(&self.numer(), &other.denom()).cmp(&long::mul(&other.numer(), &self.denom()))
    }
}

impl PartialOrd for Value {
    fn partial_cmp(&self, other: &Value) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Default for Value {
    /// 0/1.
    fn default() -> Value {
        Value::zero()
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (&*self.numer(), &*self.denom()).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Value {
    /// As num-rational reads a `Ratio`: the pair as given, a zero denominator refused.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        let (numer, denom): (BigUint, BigUint) = Deserialize::deserialize(deserializer)?;
        if denom.is_zero() {
            return Err(serde::de::Error::invalid_value(
                serde::de::Unexpected::Unsigned(0),
                &"a ratio with non-zero denominator",
            ));
        }
        Ok(Value::new_raw(numer, denom))
    }
}

impl Value {
    /// `numer / denom`, reduced to lowest terms. Panics if `denom` is zero.
    pub fn new(numer: BigUint, denom: BigUint) -> Value {
        Value::from(Ratio::new(numer, denom))
    }

    /// `numer / denom` as given: the caller knows it is in lowest terms with `denom` > 0.
    pub fn new_raw(numer: BigUint, denom: BigUint) -> Value {
        let (odd, twos) = split(denom);
        Value::from_parts(numer, odd, twos)
    }

    /// `numer / denom` as given, an odd denominator shared with other values (an even
    /// one is split, its odd part a copy of its own: see [`split`]): the caller knows it
    /// is in lowest terms with `denom` > 0.
    pub fn new_shared(numer: BigUint, denom: Arc<BigUint>) -> Value {
        if denom.bit(0) {
            return Value::from_parts(numer, denom, 0);
        }
        let (odd, twos) = split((*denom).clone());
        Value::from_parts(numer, odd, twos)
    }

    /// `numer / (odd · 2^twos)` as given, the odd part shared with other values: the
    /// caller knows it is in lowest terms, `odd` odd.
    pub fn from_parts(numer: BigUint, odd: Arc<BigUint>, twos: u32) -> Value {
        debug_assert!(odd.bit(0), "an even odd part");
        Value(Arc::new(Parts {
            numer: Numer::Held(numer),
            odd,
            twos,
        }))
    }

    /// `numer / denom` for small numbers (tests, constants), reduced.
    pub fn small(numer: u64, denom: u64) -> Value {
        Value::new(numer.into(), denom.into())
    }

    /// Whether the two denominators are equal (at once where their odd parts are one
    /// shared copy).
    pub fn same_denom(&self, other: &Value) -> bool {
        self.0.twos == other.0.twos
            && (Arc::ptr_eq(&self.0.odd, &other.0.odd) || self.0.odd == other.0.odd)
    }

    /// Whether the two are one shared copy (a clone of one another), not merely equal.
    pub fn is_same_copy(&self, other: &Value) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// The denominator's odd part, shared.
    pub fn shared_odd(&self) -> &Arc<BigUint> {
        &self.0.odd
    }

    /// The denominator's power of two.
    pub fn twos(&self) -> u32 {
        self.0.twos
    }

    /// This value holding `odd`, an equal odd part of its denominator (one shared copy for
    /// many values). A value also held elsewhere keeps its own: sharing it would copy the
    /// numerator, as long as the odd part it saves. Panics if `odd` is not equal to the
    /// value's own.
    pub fn with_odd(self, odd: Arc<BigUint>) -> Value {
        assert!(*odd == *self.0.odd, "another odd part");
        match Arc::try_unwrap(self.0) {
            Ok(parts) => Value(Arc::new(Parts {
                numer: parts.numer,
                odd,
                twos: parts.twos,
            })),
            Err(shared) => Value(shared),
        }
    }

    /// Whether this value's numerator is kept in [`Pages`] (see [`Value::paged`]).
    pub fn is_paged(&self) -> bool {
        matches!(self.0.numer, Numer::Paged { .. })
    }

    /// Whether this is the only copy of the value (no clone of it is held elsewhere).
    pub fn is_only_copy(&self) -> bool {
        Arc::strong_count(&self.0) == 1
    }

    /// The numerator's limbs, least significant first, without leading zero limbs (what
    /// [`Value::paged`] expects to find in its pages).
    pub fn numer_digits(&self) -> Cow<'_, [u64]> {
        self.0.numer.digits()
    }

    /// The numerator's length in bits, without making it a number.
    pub fn numer_bits(&self) -> u64 {
        self.0.numer.bits()
    }

    /// This value with its numerator read from `pages` (its limbs `start..start + len`,
    /// which the caller has written there: [`Value::numer_digits`]) instead of the heap.
    /// Comparisons of numerators read the pages in place; [`Value::numer`] makes a copy.
    /// Zero stays held (it has no limbs), and so does a value also held elsewhere (its
    /// digits would stay on the heap all the same).
    pub fn paged(self, pages: Arc<dyn Pages>, start: usize, len: usize) -> Value {
        if self.is_zero() || !self.is_only_copy() {
            return self;
        }
        debug_assert!(pages.limbs()[start..start + len] == *self.numer_digits());
        match Arc::try_unwrap(self.0) {
            Ok(parts) => Value(Arc::new(Parts {
                numer: Numer::Paged { pages, start, len },
                odd: parts.odd,
                twos: parts.twos,
            })),
            Err(shared) => Value(shared),
        }
    }

    /// 0: Black wins.
    pub fn zero() -> Value {
        Value::new_raw(BigUint::zero(), BigUint::one())
    }

    /// 1: White wins.
    pub fn one() -> Value {
        Value::new_raw(BigUint::one(), BigUint::one())
    }

    /// The numerator: borrowed where it is held, a copy where it is paged.
    pub fn numer(&self) -> Cow<'_, BigUint> {
        self.0.numer.big()
    }

    /// The denominator (positive): its odd part itself where it is odd, else made from
    /// it (a shift).
    pub fn denom(&self) -> Cow<'_, BigUint> {
        match self.0.twos {
            0 => Cow::Borrowed(&*self.0.odd),
            twos => Cow::Owned(&*self.0.odd << twos),
        }
    }

    /// Whether the value is 0.
    pub fn is_zero(&self) -> bool {
        self.0.numer.is_zero()
    }

    /// Whether the value is 1.
    pub fn is_one(&self) -> bool {
        // The lengths first: a denominator made whole (a shift) only when they agree.
        self.0.numer.bits() == self.0.odd.bits() + u64::from(self.0.twos)
            && *self.numer() == *self.denom()
    }

    /// 1 − v: the value of the colour-flipped position.
    pub fn complement(&self) -> Value {
        Value::from_parts(
            &*self.denom() - &*self.numer(),
            self.0.odd.clone(),
            self.0.twos,
        )
    }

    /// An `f64` within 2⁻⁵⁰ relative (the nearest one for numerators and denominators of
    /// up to 1,024 bits); for display and for choosing, never for deciding. Longer ones
    /// are read from their leading 64 bits: correct rounding divides numbers of thousands
    /// of digits, which made up a fifth of a whole KBNvK probe.
    pub fn to_f64(&self) -> f64 {
        let d = self.denom();
        if self.numer_bits() <= 1024 && d.bits() <= 1024 {
            return self.to_ratio().to_f64().unwrap_or(0.0);
        }
        // x = top(x)·2^(bits − 64) up to 2⁻⁶³ relative; three roundings of 2⁻⁵³ follow. A
        // paged numerator's top limbs are read in place.
        let (tn, sn) = match &self.0.numer {
            Numer::Held(n) => top_bits(n.iter_u64_digits()),
            paged => top_bits(paged.digits().iter().copied()),
        };
        let (td, sd) = top_bits(d.iter_u64_digits());
        let e = (sn as i64 - sd as i64).clamp(i32::MIN as i64, i32::MAX as i64) as i32;
        tn as f64 / td as f64 * 2f64.powi(e)
    }

    /// `p/q` in lowest terms, with `1/1` and `0/1` at the ends (the JSON form).
    pub fn fraction(&self) -> String {
        format!("{}/{}", self.numer(), self.denom())
    }

    /// The decimal expansion to at most `digits` places: exact when it ends there, else
    /// truncated and marked with `…`.
    pub fn decimal(&self, digits: usize) -> String {
        let (n, d) = (self.numer(), self.denom());
        let (n, d) = (&*n, &*d);
        // One division for all the places: floor(frac · 10^digits), and whether it is exact.
        let scaled = (n % d) * BigUint::from(10u8).pow(digits as u32);
        let (places, rest) = (&scaled / d, &scaled % d);
        let mut places = format!("{places:0>digits$}");
        if rest.is_zero() {
            // The expansion ends here: no trailing zeros.
            places.truncate(places.trim_end_matches('0').len());
        }
        if places.is_empty() {
            places.push('0');
        }
        let mark = if rest.is_zero() { "" } else { "…" };
        format!("{}.{places}{mark}", n / d)
    }

    /// The number of decimal digits of the denominator, without printing it (printing a
    /// number of thousands of digits costs far more than this).
    pub fn denominator_digits(&self) -> usize {
        arith::decimal_digits(&self.denom())
    }

    /// The rational itself, as num-rational's type (a copy).
    pub fn to_ratio(&self) -> Ratio<BigUint> {
        Ratio::new_raw(self.numer().into_owned(), self.denom().into_owned())
    }

    /// Compare exactly, with floating-point shadows `fa`, `fb` of `self` and `other`
    /// deciding where they are far apart (see [`arith::cmp_shadowed`]).
    pub fn cmp_shadowed(&self, fa: f64, other: &Value, fb: f64) -> Ordering {
        arith::cmp_shadowed(self, fa, other, fb)
    }
}

/// A value as a hash key: equal where the values are (numerators and denominators, in
/// lowest terms), hashed by the lengths and a few limbs of its numerator and odd part and
/// its power of two (hashing thousands of digits would cost more than the lookups), paged
/// numerators read in place.
#[derive(Clone, Copy, Debug)]
pub struct Key<'a>(pub &'a Value);

impl PartialEq for Key<'_> {
    fn eq(&self, other: &Key<'_>) -> bool {
        self.0 == other.0
    }
}

impl Eq for Key<'_> {}

impl std::hash::Hash for Key<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match &self.0.0.numer {
            Numer::Held(n) => hash_outer_limbs(n.iter_u64_digits(), 2, state),
            paged => hash_outer_limbs(paged.digits().iter().copied(), 2, state),
        }
        hash_outer_limbs(self.0.0.odd.iter_u64_digits(), 2, state);
        self.0.0.twos.hash(state);
    }
}

/// A denominator (positive) as its odd part and its power of two.
pub fn split(denom: BigUint) -> (Arc<BigUint>, u32) {
    match denom.trailing_zeros() {
        Some(twos) if twos > 0 => (Arc::new(denom >> twos), twos as u32),
        _ => (Arc::new(denom), 0),
    }
}

impl From<Ratio<BigUint>> for Value {
    /// A ratio as a value (num-rational keeps ratios in lowest terms).
    fn from(r: Ratio<BigUint>) -> Value {
        let (numer, denom) = r.into_raw();
        Value::new_raw(numer, denom)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.twos == 0 && self.0.odd.is_one() {
            f.pad(&self.numer().to_string())
        } else {
            f.pad(&format!("{}/{}", self.numer(), self.denom()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hash reads the count and the outer limbs alone, each once: numbers that differ only
    /// between them hash alike, numbers that differ in an outer limb or in length do not (with
    /// the standard hasher), and of a thousand limbs only four are taken.
    #[test]
    fn a_hash_reads_the_outer_limbs_alone() {
        use std::cell::Cell;
        use std::hash::{BuildHasher, Hasher};
        let hash = |limbs: &[u64], taken: &Cell<usize>| {
            let mut h =
                std::hash::BuildHasherDefault::<std::hash::DefaultHasher>::default().build_hasher();
            let counted = limbs.iter().map(|&d| {
                taken.set(taken.get() + 1);
                d
            });
            hash_outer_limbs(counted, 2, &mut h);
            h.finish()
        };
        let taken = Cell::new(0);
        let a: Vec<u64> = (0..1000).collect();
        let h = hash(&a, &taken);
        assert_eq!(taken.get(), 4);
        let mut middle = a.clone();
        middle[500] += 1;
        assert_eq!(hash(&middle, &taken), h);
        for at in [0, 1, 998, 999] {
            let mut outer = a.clone();
            outer[at] += 1;
            assert_ne!(hash(&outer, &taken), h, "limb {at}");
        }
        assert_ne!(hash(&a[..999], &taken), h);
        // Short numbers: every limb, once.
        taken.set(0);
        hash(&a[..3], &taken);
        assert_eq!(taken.get(), 3);
        assert_ne!(hash(&[1, 2, 3], &taken), hash(&[1, 2, 4], &taken));
    }

    /// The top 64 bits read from the limbs equal those of a shifted copy, at every length
    /// around a limb's boundary.
    #[test]
    fn top_bits_equal_a_shifted_copy() {
        for bits in [1u64, 5, 63, 64, 65, 127, 128, 129, 1000, 4096] {
            let x = long::test_number(bits, bits + 3);
            let shift = bits.saturating_sub(64);
            let want = ((&x >> shift).to_u64().unwrap(), shift);
            assert_eq!(top_bits(x.iter_u64_digits()), want, "{bits} bits");
        }
        assert_eq!(top_bits(BigUint::zero().iter_u64_digits()), (0, 0));
    }

    /// Long values are read from their leading bits: within 2⁻⁵⁰ of the correctly rounded
    /// f64, on both sides of the 1,024-bit switch, for values near 0, ½ and 1.
    #[test]
    fn long_values_have_close_floats() {
        let three = BigUint::from(3u8);
        for bits in [1000u32, 1025, 3000, 12000] {
            let den = three.pow(bits * 100 / 159) + 7u8;
            for num in [
                BigUint::from(1u8),
                &den / 2u8 + 5u8,
                &den / 3u8,
                &den - 1u8,
                &den >> 700,
            ] {
                let v = Value::new(num.clone(), den.clone());
                let exact = Ratio::new(num, den.clone()).to_f64().unwrap();
                let got = v.to_f64();
                assert!(
                    (got - exact).abs() <= exact.abs() * 2f64.powi(-50),
                    "{bits} bits: {got} against {exact}"
                );
            }
        }
    }

    #[test]
    fn decimals_are_exact_or_marked() {
        let v = Value::small;
        assert_eq!(v(3, 4).decimal(20), "0.75");
        assert_eq!(v(7463, 8192).decimal(20), "0.9110107421875");
        assert_eq!(v(1, 3).decimal(5), "0.33333…");
        assert_eq!(v(1, 1).decimal(5), "1.0");
        assert_eq!(v(0, 1).decimal(5), "0.0");
        assert_eq!(v(1, 1).fraction(), "1/1");
        assert_eq!(v(0, 1).fraction(), "0/1");
        assert_eq!(v(2, 4).to_string(), "1/2");
        assert_eq!(v(1, 1).to_string(), "1");
    }

    /// The expansion digit by digit, as it was computed before: the oracle of the one
    /// division.
    fn long_division(v: &Value, digits: usize) -> String {
        let (n, d) = (v.numer(), v.denom());
        let (n, d) = (&*n, &*d);
        let mut rem = n % d;
        let mut out = format!("{}.", n / d);
        for _ in 0..digits {
            if rem.is_zero() {
                break;
            }
            rem *= 10u8;
            out += &(&rem / d).to_string();
            rem %= d;
        }
        if out.ends_with('.') {
            out.push('0');
        }
        if !rem.is_zero() {
            out.push('…');
        }
        out
    }

    #[test]
    fn one_division_gives_the_long_division() {
        let big = BigUint::from(3u8).pow(300);
        let mut values: Vec<Value> = (0..=64u64)
            .flat_map(|d| (0..=d).map(move |n| (n, d.max(1))))
            .map(|(n, d)| Value::small(n.min(d), d))
            .collect();
        values.push(Value::new(&big / 7u8, big.clone()));
        values.push(Value::new(BigUint::from(1u8), big.clone()));
        values.push(Value::new(&big - 1u8, big.clone()));
        for v in &values {
            for digits in [0, 1, 3, 12, 20] {
                assert_eq!(v.decimal(digits), long_division(v, digits), "{v} {digits}");
            }
        }
    }

    #[test]
    fn digit_counts_without_printing() {
        let mut numbers: Vec<BigUint> = (0..200u32).map(BigUint::from).collect();
        for k in 1..120u32 {
            let p = BigUint::from(10u8).pow(k);
            numbers.extend([&p - 1u8, p.clone(), &p + 1u8, &p * 7u8]);
            numbers.push(BigUint::from(2u8).pow(k * 10) - 1u8);
            numbers.push(BigUint::from(2u8).pow(k * 10));
        }
        numbers.push(BigUint::from(3u8).pow(12_000));
        for n in &numbers {
            assert_eq!(arith::decimal_digits(n), n.to_string().len(), "{n}");
        }
    }

    #[test]
    fn complements_and_ends() {
        assert_eq!(Value::small(1, 3).complement(), Value::small(2, 3));
        assert!(Value::one().complement().is_zero());
        assert!(Value::zero().complement().is_one());
        assert!(Value::small(1, 2) < Value::small(2, 3));
    }
}
