//! The floating-point side of a refinement round: Gauss–Seidel on the system's rows in an
//! order that suits it, from the residual read as floats to the correction rounded back
//! to integers. Nothing here decides a value: the exact side checks every round's result.

use num_bigint::{BigInt, BigUint, Sign};
use num_traits::{Signed, ToPrimitive, Zero};

use super::Row;

/// A row as a Gauss–Seidel sweep reads it: `d_p = r_p·inv + w_0·d[j_0] + w_1·d[j_1]`,
/// the weights `coef / diag` and `inv = 1 / diag` (powers of two, so the sweep computes
/// exactly what dividing the sum by the diagonal would), an absent term of weight 0:
/// no branch and no division in the innermost loop. Indices are places in the sweep order.
#[derive(Clone, Copy)]
struct SweepRow {
    j: [u32; 2],
    w: [f32; 2],
    inv: f32,
}

/// The floating-point solve of a round, `rows · d ≈ R / 2^e`, by Gauss–Seidel with the rows
/// renumbered in the order it sweeps them: a depth-first postorder of the rows' targets
/// ([`postorder`]), so that a row reads its targets' values of the same sweep, except
/// along the walk's back edges (6x6 KNvKN's largest system: 13,808 → 9,110 sweeps to the
/// same solution), and nearby in memory.
pub(super) struct Sweeper {
    /// `place[i]`: where row `i` comes in a sweep.
    place: Vec<u32>,
    /// `order[p]`: the row swept `p`-th.
    order: Vec<u32>,
    /// The rows in sweep order.
    rows: Vec<SweepRow>,
    /// The right-hand side `R / 2^e`, in sweep order.
    r: Vec<f64>,
    /// The correction, in sweep order.
    d: Vec<f64>,
}

impl Sweeper {
    pub(super) fn new(rows: &[Row]) -> Sweeper {
        let order = postorder(rows);
        let mut place = vec![0u32; rows.len()];
        for (p, &i) in order.iter().enumerate() {
            place[i as usize] = p as u32;
        }
        let rows: Vec<SweepRow> = order
            .iter()
            .enumerate()
            .map(|(p, &i)| {
                let row = &rows[i as usize];
                let inv = 1.0 / row.diag as f32;
                let mut sweep = SweepRow {
                    j: [p as u32; 2],
                    w: [0.0; 2],
                    inv,
                };
                for (k, &(j, coef)) in row.terms().iter().enumerate() {
                    sweep.j[k] = place[j as usize];
                    sweep.w[k] = coef as f32 * inv;
                }
                sweep
            })
            .collect();
        let m = rows.len();
        Sweeper {
            place,
            order,
            rows,
            r: vec![0.0; m],
            d: vec![0.0; m],
        }
    }

    /// Solve `rows · d ≈ R / 2^e` from `d = 0`, given each row's `R_i / 2^e` as a float;
    /// the sweeps it took.
    pub(super) fn solve(&mut self, scaled_residual: impl Fn(usize) -> f64 + Sync) -> u32 {
        for (r, &i) in self.r.iter_mut().zip(&self.order) {
            *r = scaled_residual(i as usize);
        }
        self.d.iter_mut().for_each(|v| *v = 0.0);
        gauss_seidel(&self.rows, &self.r, &mut self.d)
    }

    /// The rows in the order a sweep takes them.
    pub(super) fn order(&self) -> &[u32] {
        &self.order
    }

    /// Row `i`'s correction.
    pub(super) fn d(&self, i: usize) -> f64 {
        self.d[self.place[i] as usize]
    }

    /// The largest correction.
    pub(super) fn growth(&self) -> f64 {
        self.d.iter().fold(0.0f64, |a, v| a.max(v.abs()))
    }
}

/// The rows in a depth-first postorder of the graph of their targets (from each row not
/// yet reached, in index order; targets in the row's order): every row comes after the
/// targets its walk reached first, so only the targets of back edges (rows still on the
/// walk's path) come after it.
pub(super) fn postorder(rows: &[Row]) -> Vec<u32> {
    let m = rows.len();
    let mut reached = vec![false; m];
    let mut order = Vec::with_capacity(m);
    // The walk's path: (row, how many of its targets were looked at).
    let mut path: Vec<(u32, u8)> = Vec::new();
    for root in 0..m {
        if reached[root] {
            continue;
        }
        reached[root] = true;
        path.push((root as u32, 0));
        while let Some((v, looked)) = path.last_mut() {
            let row = &rows[*v as usize];
            if let Some(&(j, _)) = row.terms().get(*looked as usize) {
                *looked += 1;
                if !reached[j as usize] {
                    reached[j as usize] = true;
                    path.push((j, 0));
                }
            } else {
                order.push(*v);
                path.pop();
            }
        }
    }
    order
}

/// Gauss–Seidel on `rows · d = r` from `d`, until it has [`Settled`] (or a sweep limit).
/// Returns the sweeps.
fn gauss_seidel(rows: &[SweepRow], r: &[f64], d: &mut [f64]) -> u32 {
    let limit = (200_000_000 / rows.len().max(1)).clamp(1000, 1_000_000) as u32;
    let mut settled = Settled::default();
    for sweep in 1..=limit {
        let (mut change, mut size) = (0.0f64, 0.0f64);
        for (i, row) in rows.iter().enumerate() {
            let new = (r[i] * row.inv as f64 + row.w[0] as f64 * d[row.j[0] as usize])
                + row.w[1] as f64 * d[row.j[1] as usize];
            change = change.max((new - d[i]).abs());
            size = size.max(new.abs());
            d[i] = new;
        }
        if settled.after(change, size) {
            return sweep;
        }
    }
    limit
}

/// When Gauss–Seidel has done what floating point can: a sweep moved nothing by more than
/// 2⁻⁵⁰ of the largest entry, or the largest move is below 2⁻⁴⁰ of it and has not fallen
/// for [`Settled::STILL`] sweeps. Near its fixed point a sweep's roundings can keep a few
/// entries moving by more than 2⁻⁵⁰ for ever: on one of 8x8 KNvKN's largest systems every
/// round then ran to the sweep limit (1,000 sweeps instead of 36). The round's exact
/// residual measures what such a solve gained, and the next round's step follows it.
#[derive(Default)]
struct Settled {
    /// The smallest move so far, and the sweeps since it fell.
    least: Option<f64>,
    still: u32,
}

impl Settled {
    /// Sweeps without a smaller move after which a small move counts as settled.
    const STILL: u32 = 4;

    /// Whether a sweep whose largest move was `change`, the largest entry `size`, ends
    /// the solve.
    fn after(&mut self, change: f64, size: f64) -> bool {
        if change <= size * f64::EPSILON * 4.0 || size == 0.0 {
            return true;
        }
        if self.least.is_none_or(|least| change < least) {
            self.least = Some(change);
            self.still = 0;
            return false;
        }
        self.still += 1;
        self.still >= Self::STILL && change <= size * (2f64).powi(-40)
    }
}

/// `v / 2^e` as a float (|v| < 2^e, so the result lies in (−1, 1)): for long residuals
/// the 62 bits of |v| from 2^(e−62) up, read in place from its top limbs (a shifted copy
/// would cost the residual's length every row and round), truncated toward zero.
pub(super) fn scaled(v: &BigInt, e: u64) -> f64 {
    if e <= 62 {
        return v.to_f64().unwrap_or(0.0) * (2f64).powi(-(e as i32));
    }
    let s = e - 62;
    let mut limbs = v.magnitude().iter_u64_digits();
    let low = limbs.nth((s / 64) as usize).unwrap_or(0);
    let high = limbs.next().unwrap_or(0);
    let off = s % 64;
    let top = if off == 0 {
        low
    } else {
        (low >> off) | (high << (64 - off))
    };
    let f = top as f64 * (2f64).powi(-62);
    if v.is_negative() { -f } else { f }
}

/// `round(v · 2^s)` as an integer.
pub(super) fn round_scaled(v: f64, s: u64) -> BigInt {
    let Some((negative, mant, shift)) = float_parts(v, s) else {
        return BigInt::zero();
    };
    let magnitude = if shift >= 0 {
        BigUint::from(mant) << shift as usize
    } else {
        BigUint::from(round_right(mant, shift))
    };
    BigInt::from_biguint(if negative { Sign::Minus } else { Sign::Plus }, magnitude)
}

/// `|v| · 2^s` as `mant · 2^shift` (`mant` below 2^53) and whether v is negative; `None`
/// where `round(v · 2^s)` is 0 for want of a value (v zero or not finite).
pub(super) fn float_parts(v: f64, s: u64) -> Option<(bool, u64, i64)> {
    if v == 0.0 || !v.is_finite() {
        return None;
    }
    let bits = v.abs().to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = if exp == 0 {
        (bits & ((1 << 52) - 1)) << 1
    } else {
        (bits & ((1 << 52) - 1)) | (1 << 52)
    };
    // |v| = mant · 2^(exp − 1075).
    Some((v < 0.0, mant, exp - 1075 + s as i64))
}

/// `round(mant · 2^shift)` for a negative `shift`, halves rounded up.
pub(super) fn round_right(mant: u64, shift: i64) -> u64 {
    if shift > -64 {
        let s = (-shift) as u32;
        (mant + (1u64 << (s - 1))) >> s
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::super::row;
    use super::*;
    use num_traits::One;

    /// A solve settles at a move of 2⁻⁵⁰ of the largest entry at once; at a move below 2⁻⁴⁰
    /// that has stopped falling after four sweeps; never while the moves fall, nor where
    /// they stop falling above 2⁻⁴⁰.
    #[test]
    fn a_solve_settles_where_floating_point_can_do_no_more() {
        let size = 3.0;
        let small = |bits: i32| size * (2f64).powi(-bits);
        let sweeps_until = |moves: &[f64]| {
            let mut settled = Settled::default();
            moves
                .iter()
                .position(|&m| settled.after(m, size))
                .map(|i| i + 1)
        };
        let falling: Vec<f64> = (1..60).map(small).collect();
        assert_eq!(sweeps_until(&falling), Some(50));
        // Stuck at 2⁻⁴⁵ (a few entries kept moving by their roundings).
        let mut stuck: Vec<f64> = (1..45).map(small).collect();
        stuck.extend([
            small(45),
            small(44),
            small(45),
            small(44),
            small(45),
            small(44),
        ]);
        assert_eq!(sweeps_until(&stuck), Some(49));
        // Stuck at 2⁻³⁰: not settled (the round would gain too little).
        let mut high: Vec<f64> = (1..30).map(small).collect();
        high.extend([small(30), small(29)].repeat(20));
        assert_eq!(sweeps_until(&high), None);
        assert_eq!(sweeps_until(&[0.0]), Some(1));
        let mut zero = Settled::default();
        assert!(zero.after(0.0, 0.0));
    }

    /// Rows with no cycle whose numbering is not their order: see the comment inside.
    fn acyclic_rows(m: u32) -> Vec<Row> {
        // Row at rank r targets the rows at ranks r+1 and 2r+1 (a DAG by rank); rank r is
        // row (r · 37) mod m, m prime to 37, so indices and ranks disagree.
        let row_of = |rank: u32| (rank * 37) % m;
        let mut rows = vec![row(2, &[]); m as usize];
        for rank in 0..m {
            let targets: Vec<(u32, u8)> = [rank + 1, 2 * rank + 1]
                .into_iter()
                .filter(|&t| t < m)
                .map(|t| (row_of(t), 1))
                .collect();
            rows[row_of(rank) as usize] = row(2, &targets);
        }
        rows
    }

    #[test]
    fn the_sweep_order_puts_targets_first_where_there_is_no_cycle() {
        let m = 101;
        let rows = acyclic_rows(m);
        let order = postorder(&rows);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..m).collect::<Vec<_>>());
        let sweeper = Sweeper::new(&rows);
        for (i, row) in rows.iter().enumerate() {
            for &(j, _) in row.terms() {
                assert!(sweeper.place[j as usize] < sweeper.place[i], "{i} -> {j}");
            }
        }
    }

    /// Without a cycle one sweep in this order is the solution (the second sees no
    /// change), where index order needs many.
    #[test]
    fn gauss_seidel_in_sweep_order_solves_an_acyclic_system_in_one_sweep() {
        let m = 101u32;
        let rows = acyclic_rows(m);
        let residual: Vec<BigInt> = (0..m).map(|i| BigInt::from(i % 5 + 1)).collect();
        let mut sweeper = Sweeper::new(&rows);
        assert_eq!(sweeper.solve(|i| scaled(&residual[i], 3)), 2);
        // Each row's equation holds in floats: 2 d_i = r_i / 8 + Σ d_j.
        for (i, row) in rows.iter().enumerate() {
            let sum: f64 = row
                .terms()
                .iter()
                .map(|&(j, _)| sweeper.d(j as usize))
                .sum();
            let want = (residual[i].to_f64().unwrap() / 8.0 + sum) / 2.0;
            assert!((sweeper.d(i) - want).abs() <= 1e-15 * want.abs(), "row {i}");
        }
        // Index order, for comparison, needs more sweeps on the same rows.
        let plain: Vec<SweepRow> = rows
            .iter()
            .map(|row| {
                let mut s = SweepRow {
                    j: [0; 2],
                    w: [0.0; 2],
                    inv: 0.5,
                };
                for (k, &(j, _)) in row.terms().iter().enumerate() {
                    s.j[k] = j;
                    s.w[k] = 0.5;
                }
                s
            })
            .collect();
        let r: Vec<f64> = residual.iter().map(|v| v.to_f64().unwrap() / 8.0).collect();
        let mut d = vec![0.0; m as usize];
        assert!(gauss_seidel(&plain, &r, &mut d) > 2);
    }

    #[test]
    fn rounding_helpers() {
        assert_eq!(round_scaled(0.75, 2), BigInt::from(3));
        assert_eq!(round_scaled(-0.75, 4), BigInt::from(-12));
        assert_eq!(round_scaled(1.0, 100), BigInt::one() << 100);
        assert_eq!(round_scaled(0.3, 0), BigInt::zero());
        assert!((scaled(&BigInt::from(3), 2) - 0.75).abs() < 1e-15);
        let big = BigInt::from(5) << 200;
        assert!((scaled(&big, 203) - 0.625).abs() < 1e-15);
        // Long numbers, both signs, at every offset within a limb and far below 2^e: the
        // top bits read in place equal the quotient within 2^-60.
        for bits in [63u64, 64, 65, 127, 128, 1000, 5000] {
            let n = BigInt::from(crate::value::long::test_number(bits, bits));
            for e in [bits, bits + 1, bits + 37, bits + 64, bits + 200] {
                for v in [n.clone(), -n.clone()] {
                    // Computed the slow way: a shifted copy (rounded toward −∞).
                    let want = (&v >> (e - 60) as usize).to_f64().unwrap() * (2f64).powi(-60);
                    let got = scaled(&v, e);
                    assert!(
                        (got - want).abs() <= (2f64).powi(-60),
                        "{bits} bits over 2^{e}: {got} against {want}"
                    );
                }
            }
        }
    }
}
