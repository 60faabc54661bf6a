//! The exact side of a refinement round in 128-bit integers where it fits. The residuals
//! of the largest systems (whose right-hand sides are short: 54 bits on 6x6 KNvKN's
//! largest) and a round's corrections fit in 128 bits, where long integers spent most of
//! a round allocating. This module holds them so and computes exactly the integers the
//! long path computes, so the refinement is the same round for round; where they do not
//! fit (right-hand sides of thousands of bits), the long path runs.

use num_bigint::BigInt;
use num_traits::ToPrimitive;
use rayon::prelude::*;

use super::Row;
use super::sweep::{float_parts, round_right};
use crate::value::long::from_limbs;

/// The most bits an entry of a residual held short may have when it is made short.
const SHORT_BITS: u64 = 100;

/// A round may be made short when its residual's bits, its step and its corrections' size
/// keep every new entry within this many bits (below 127, for a margin).
const ROUND_BITS: u64 = 125;

/// The exact residual `R = 2^k c − A y` of a refinement.
#[derive(Debug)]
pub(super) enum Residual {
    /// Every entry in 128 bits.
    Short(Vec<i128>),
    /// Long integers.
    Long(Vec<BigInt>),
}

impl Residual {
    /// Held short if every entry has at most [`SHORT_BITS`] bits.
    pub(super) fn new(r: Vec<BigInt>) -> Residual {
        let short: Option<Vec<i128>> = r
            .iter()
            .map(|v| (v.bits() <= SHORT_BITS).then(|| v.to_i128()).flatten())
            .collect();
        match short {
            Some(short) => Residual::Short(short),
            None => Residual::Long(r),
        }
    }

    /// Held short again once every entry fits ([`SHORT_BITS`]), given the residual's `bits`:
    /// a residual is long while its right-hand sides are (hundreds of bits on the largest
    /// 8x8 systems) or a round's corrections were, and it shrinks a few bits a round until
    /// it is a few units, where the rounds that follow can be short.
    pub(super) fn shorten(&mut self, bits: u64) {
        if bits > SHORT_BITS {
            return;
        }
        if let Residual::Long(r) = self {
            *self = Residual::new(std::mem::take(r));
        }
    }

    /// As long integers.
    pub(super) fn into_long(self) -> Vec<BigInt> {
        match self {
            Residual::Short(r) => r.into_iter().map(BigInt::from).collect(),
            Residual::Long(r) => r,
        }
    }

    /// The most bits of an entry's magnitude (0: the residual vanished).
    pub(super) fn bits(&self) -> u64 {
        match self {
            Residual::Short(r) => r
                .iter()
                .map(|v| 128 - v.unsigned_abs().leading_zeros() as u64)
                .max()
                .unwrap_or(0),
            Residual::Long(r) => r.iter().map(|v| v.bits()).max().unwrap_or(0),
        }
    }

    /// Entry `i` over `2^e` as a float, exactly as [`super::sweep::scaled`] computes it
    /// from the long entry.
    pub(super) fn scaled(&self, i: usize, e: u64) -> f64 {
        match self {
            Residual::Short(r) => scaled_short(r[i], e),
            Residual::Long(r) => super::sweep::scaled(&r[i], e),
        }
    }

    /// `R ← 2^step · R − A · dy`: exact, in place, short where both are.
    pub(super) fn update(&mut self, rows: &[Row], step: u64, dy: &Corrections) {
        match (&mut *self, dy) {
            (Residual::Short(r), Corrections::Short(dy)) => {
                // No entry overflows: see `Corrections::new`.
                r.par_iter_mut().enumerate().for_each(|(i, ri)| {
                    let row = &rows[i];
                    let mut v = (*ri << step) - row.diag as i128 * dy[i];
                    for &(j, coef) in row.terms() {
                        v += coef as i128 * dy[j as usize];
                    }
                    *ri = v;
                })
            }
            (Residual::Long(r), dy) => r.par_iter_mut().enumerate().for_each(|(i, ri)| {
                // Additions rather than products by the coefficients (1 or 2).
                *ri <<= step;
                for _ in 0..rows[i].diag {
                    dy.subtract_from(ri, i);
                }
                for &(j, coef) in rows[i].terms() {
                    for _ in 0..coef {
                        dy.add_to(ri, j as usize);
                    }
                }
            }),
            (Residual::Short(_), Corrections::Long(_)) => {
                // Long corrections make the residual long.
                let short = std::mem::replace(self, Residual::Long(Vec::new()));
                *self = Residual::Long(short.into_long());
                self.update(rows, step, dy);
            }
        }
    }
}

/// A round's corrections `dy_i = round(d_i · 2^(e + step))`.
pub(super) enum Corrections {
    /// Every correction in 128 bits, and the residual's update too.
    Short(Vec<i128>),
    /// Long integers.
    Long(Vec<BigInt>),
}

impl Corrections {
    /// The corrections of floats `d` (of which `growth` is the largest magnitude), short
    /// where the residual is and every new residual entry fits in 128 bits: its magnitude
    /// is below `2^(e+step) + 4 (growth · 2^(e+step) + 1)`, a row's diagonal and
    /// coefficients adding to 4 at most.
    pub(super) fn new(
        residual: &Residual,
        e: u64,
        step: u64,
        growth: f64,
        m: usize,
        d: impl Fn(usize) -> f64 + Sync,
    ) -> Corrections {
        let fits = matches!(residual, Residual::Short(_))
            && growth.is_finite()
            && e + step + (4.0 * growth + 5.0).log2().ceil() as u64 <= ROUND_BITS;
        if fits {
            let short: Option<Vec<i128>> = (0..m)
                .into_par_iter()
                .map(|i| round_scaled_short(d(i), e + step))
                .collect();
            if let Some(short) = short {
                return Corrections::Short(short);
            }
        }
        Corrections::Long(
            (0..m)
                .into_par_iter()
                .map(|i| super::sweep::round_scaled(d(i), e + step))
                .collect(),
        )
    }

    fn subtract_from(&self, v: &mut BigInt, i: usize) {
        match self {
            Corrections::Short(dy) => *v -= dy[i],
            Corrections::Long(dy) => *v -= &dy[i],
        }
    }

    fn add_to(&self, v: &mut BigInt, i: usize) {
        match self {
            Corrections::Short(dy) => *v += dy[i],
            Corrections::Long(dy) => *v += &dy[i],
        }
    }
}

/// `v · 2^s` in place, modulo `2^(64·limbs)`, for `s < 64`.
pub(super) fn shift_left(v: &mut [u64], s: u32) {
    if s == 0 {
        return;
    }
    for j in (1..v.len()).rev() {
        v[j] = (v[j] << s) | (v[j - 1] >> (64 - s));
    }
    v[0] <<= s;
}

/// `v + x` in place, modulo `2^(64·limbs)` (two's complement).
pub(super) fn add_i128(v: &mut [u64], x: i128) {
    let ext = if x < 0 { u64::MAX } else { 0 };
    let mut carry = false;
    for (j, limb) in v.iter_mut().enumerate() {
        let add = match j {
            0 => x as u64,
            1 => (x >> 64) as u64,
            _ => ext,
        };
        let (s1, c1) = limb.overflowing_add(add);
        let (s2, c2) = s1.overflowing_add(carry as u64);
        *limb = s2;
        carry = c1 || c2;
    }
}

/// The integer whose two's complement is `v`.
pub(super) fn from_twos_complement(v: &[u64]) -> BigInt {
    if v.last().is_some_and(|&top| top >> 63 == 1) {
        // −(!v + 1).
        let mut magnitude: Vec<u64> = v.iter().map(|&w| !w).collect();
        for w in magnitude.iter_mut() {
            let (s, c) = w.overflowing_add(1);
            *w = s;
            if !c {
                break;
            }
        }
        -BigInt::from(from_limbs(&magnitude))
    } else {
        BigInt::from(from_limbs(v))
    }
}

/// [`super::sweep::scaled`] of a short entry: the same float.
fn scaled_short(v: i128, e: u64) -> f64 {
    if e <= 62 {
        // |v| < 2^62: one limb, converted as the long path converts it.
        let f = v.unsigned_abs() as u64 as f64;
        return if v < 0 { -f } else { f } * (2f64).powi(-(e as i32));
    }
    let top = (v.unsigned_abs() >> (e - 62)) as u64;
    let f = top as f64 * (2f64).powi(-62);
    if v < 0 { -f } else { f }
}

/// [`super::sweep::round_scaled`] as a 128-bit integer if its magnitude is below 2^124
/// (`None` otherwise).
fn round_scaled_short(v: f64, s: u64) -> Option<i128> {
    let Some((negative, mant, shift)) = float_parts(v, s) else {
        return Some(0);
    };
    let magnitude: i128 = if shift > 124 - 53 {
        return None;
    } else if shift >= 0 {
        (mant as i128) << shift
    } else {
        round_right(mant, shift) as i128
    };
    Some(if negative { -magnitude } else { magnitude })
}

#[cfg(test)]
mod tests {
    use super::super::row;
    use super::super::sweep::{Sweeper, round_scaled, scaled};
    use super::*;
    use num_traits::{One, Zero};

    /// Numbers of every size up to `bits`, both signs, from a seed.
    fn numbers(bits: u64) -> Vec<i128> {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut out = vec![0, 1, -1, 2, -3];
        for b in 1..=bits {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = ((x as i128) << 64 | (x.rotate_left(17) as i128)) & ((1i128 << b) - 1);
            let v = v | (1i128 << (b - 1));
            out.push(v);
            out.push(-v);
        }
        out
    }

    #[test]
    fn short_floats_and_corrections_equal_the_long_ones() {
        for v in numbers(100) {
            let long = BigInt::from(v);
            assert!(long.bits() <= SHORT_BITS);
            for e in [long.bits().max(1), long.bits() + 1, long.bits() + 40, 120] {
                assert_eq!(scaled_short(v, e), scaled(&long, e), "{v} over 2^{e}");
            }
        }
        for f in [
            0.75,
            -0.75,
            1.0,
            0.3,
            -1e-30,
            123.456,
            -(2f64.powi(40)) / 3.0,
            1e-300,
        ] {
            for s in [0, 1, 2, 30, 52, 53, 60, 70, 71, 100] {
                let long = round_scaled(f, s);
                match round_scaled_short(f, s) {
                    Some(short) => assert_eq!(BigInt::from(short), long, "{f} · 2^{s}"),
                    None => assert!(long.bits() > 124 - 53, "{f} · 2^{s}"),
                }
            }
        }
        assert_eq!(round_scaled_short(1.0, 100), Some(1 << 100));
        assert_eq!(round_scaled_short(-1.0, 125), None);
    }

    #[test]
    fn a_residual_is_short_only_where_every_entry_fits() {
        let short = Residual::new(vec![BigInt::from(5), BigInt::from(-7)]);
        assert!(matches!(short, Residual::Short(_)));
        assert_eq!(short.bits(), 3);
        assert_eq!(short.into_long(), vec![BigInt::from(5), BigInt::from(-7)]);
        let long = Residual::new(vec![BigInt::from(5), -(BigInt::one() << 200usize)]);
        assert!(matches!(long, Residual::Long(_)));
        assert_eq!(long.bits(), 201);
    }

    /// A long residual is made short where every entry fits, with the same integers, and
    /// stays long where one does not.
    #[test]
    fn a_long_residual_is_made_short_once_it_fits() {
        let values = vec![BigInt::from(5), -(BigInt::one() << 99usize)];
        let mut r = Residual::Long(values.clone());
        r.shorten(r.bits());
        assert!(matches!(r, Residual::Short(_)), "{r:?}");
        assert_eq!(r.into_long(), values);
        let values = vec![BigInt::from(5), BigInt::one() << 100usize];
        let mut r = Residual::Long(values.clone());
        r.shorten(r.bits());
        assert!(matches!(r, Residual::Long(_)));
        assert_eq!(r.into_long(), values);
    }

    /// Rounds made short and long give the same corrections and residuals, round after
    /// round of a refinement.
    #[test]
    fn short_rounds_equal_long_rounds() {
        // A cycle of three with exits (denominators of 7: the residual never vanishes),
        // and a row reading two of it.
        let rows = [
            row(2, &[(1, 1)]),
            row(2, &[(2, 1)]),
            row(2, &[(0, 1)]),
            row(2, &[(0, 1), (1, 1)]),
        ];
        let start: Vec<BigInt> = [37i64, -5, (1 << 40) + 1, -(1 << 50)]
            .iter()
            .map(|&v| BigInt::from(v))
            .collect();
        let mut short = Residual::new(start.clone());
        let mut long = Residual::Long(start);
        let mut sweeper = Sweeper::new(&rows);
        for round in 0..60u64 {
            let step = 20 + round % 29;
            let e = short.bits();
            assert_eq!(e, long.bits());
            assert!(e > 0 && e <= 60, "round {round}: {e} bits");
            sweeper.solve(|i| short.scaled(i, e));
            let dy = Corrections::new(&short, e, step, sweeper.growth(), 4, |i| sweeper.d(i));
            let dy_long = Corrections::Long(
                (0..4)
                    .map(|i| round_scaled(sweeper.d(i), e + step))
                    .collect(),
            );
            let Corrections::Short(values) = &dy else {
                panic!("round {round} not short");
            };
            let values: Vec<BigInt> = values.iter().map(|&v| BigInt::from(v)).collect();
            let Corrections::Long(want) = &dy_long else {
                unreachable!()
            };
            assert_eq!(&values, want);
            short.update(&rows, step, &dy);
            long.update(&rows, step, &dy_long);
            let (Residual::Short(got), Residual::Long(want)) = (&short, &long) else {
                panic!("round {round}: {short:?}");
            };
            assert_eq!(
                &got.iter().map(|&v| BigInt::from(v)).collect::<Vec<_>>(),
                want
            );
        }
        // Long corrections make a short residual long, with the same integers.
        let dy = Corrections::Long(vec![
            BigInt::one() << 300,
            BigInt::zero(),
            BigInt::one(),
            BigInt::zero(),
        ]);
        let before = short.bits();
        short.update(&rows, 3, &dy);
        long.update(&rows, 3, &dy);
        assert!(before < 128);
        let (Residual::Long(got), Residual::Long(want)) = (&short, &long) else {
            panic!("{short:?}");
        };
        assert_eq!(got, want);
    }
}
