//! The exact solution of one strongly connected component's system, `A x = b` with
//! `(A x)_i = diag_i · x_i − Σ coef · x_j` (at most two off-diagonal terms per row, the
//! position's chosen White and Black targets inside the component) and `b` the exact values
//! of the targets outside it.
//!
//! Numeric–symbolic solving: iterative refinement with exact residuals. Scale `b` to
//! integers `c = L b`; keep an integer approximation `y` of `L x · 2^k` and its exact
//! residual `R = 2^k c − A y`; each round solves `A d ≈ R` in floating point (Gauss–Seidel,
//! which converges: the rows are diagonally dominant and some row strictly, since the
//! component has an exit) and adds the rounded correction, gaining about as many bits as
//! the floating-point solve is accurate. Once `k` is large enough the simplest rational near
//! each `y_i / (2^k L)` is the answer: every candidate is checked exactly against every row
//! before it is returned, so the floating point decides nothing. The cost follows the size
//! of the answer (its denominators), not a worst-case bound.
//!
//! A refinement can be stopped between two rounds, or inside a reconstruction (whose
//! reduction to lowest terms takes minutes on the largest 8x8 systems), and continued later
//! from its [`Refinement`] state (the approximation, the exact residual, the round counters
//! and the reconstruction under way): the continued run does exactly what the
//! uninterrupted one would have done.

use num_bigint::{BigInt, BigUint, Sign};
use num_integer::Integer;
use num_rational::Ratio;
use num_traits::{One, Signed, ToPrimitive, Zero};
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::value::arith::{reduced, reduced_over};
use crate::value::long::mul_signed;
use crate::value::{Value, simplest_between, split};

/// A non-negative rational that need not lie in [0, 1]: a right-hand side, the sum of the
/// values of the targets outside a component (up to 2).
pub type Rational = Ratio<BigUint>;

/// One row of the system: `diag · x_i − Σ coef · x_j` over `off[..len]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The diagonal coefficient (2, or 1 when a side's chosen move stays in place).
    pub diag: u8,
    /// Off-diagonal terms: (local index j, coefficient), coefficients 1 or 2.
    pub off: [(u32, u8); 2],
    /// How many of `off` are used.
    pub len: u8,
}

impl Row {
    fn terms(&self) -> &[(u32, u8)] {
        &self.off[..self.len as usize]
    }
}

/// What the refinement did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinearStats {
    /// Refinement rounds.
    pub rounds: u32,
    /// Gauss–Seidel sweeps over all rounds.
    pub sweeps: u64,
    /// Bits of the final scale `2^k`.
    pub bits: u64,
    /// Reconstructions tried (each checked exactly).
    pub attempts: u32,
}

/// Give up after this many bits of refinement (a 16x16 value would need far fewer).
const MAX_BITS: u64 = 1 << 20;

/// A refinement between two rounds: everything needed to continue it exactly.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refinement {
    /// y, the integer approximation of `L x · 2^k`.
    pub y: Vec<BigInt>,
    /// The exact residual `2^k c − A y`.
    pub r: Vec<BigInt>,
    /// The scale exponent k.
    pub k: u64,
    /// Bits the next round adds.
    pub step: u64,
    /// The k at which the next reconstruction is tried.
    pub next_try: u64,
    /// Rounds in a row that gained almost nothing.
    pub stalled: u32,
    /// What the refinement did so far.
    pub stats: LinearStats,
    /// A reconstruction stopped part-way at this scale, with this error bound (bits): it
    /// is tried again first when the refinement continues.
    pub pending: Option<u64>,
}

/// What a refinement is asked between rounds: whether to stop, and whether a checkpoint
/// wants a snapshot of its state.
pub trait Watch: Sync {
    /// The run is stopping: the solver hands its state over ([`LinearError::Stopped`]).
    fn stopping(&self) -> bool;
    /// A checkpoint is due: the solver shows its state to [`Watch::snapshot`] and goes on.
    fn due(&self) -> bool;
    /// Keep a snapshot of the state (for a checkpoint).
    fn snapshot(&self, state: &Refinement);
    /// A round ended with the scale at `k` bits (for progress displays).
    fn round(&self, _k: u64) {}
}

/// A watch that never stops and keeps nothing.
pub struct Unwatched;

impl Watch for Unwatched {
    fn stopping(&self) -> bool {
        false
    }
    fn due(&self) -> bool {
        false
    }
    fn snapshot(&self, _: &Refinement) {}
}

/// Why [`solve`] returned no solution.
#[derive(Debug)]
pub enum LinearError {
    /// The watch said stop; the state to continue from.
    Stopped(Box<Refinement>),
    /// The refinement failed (a singular or numerically hopeless system).
    Failed(String),
}

impl From<String> for LinearError {
    fn from(why: String) -> LinearError {
        LinearError::Failed(why)
    }
}

/// Solve `rows · x = rhs` exactly, from the start or continuing `from`. `Err` if the
/// refinement stops making progress (a singular or numerically hopeless system) or `watch`
/// stops it; never a wrong answer.
pub fn solve(
    rows: &[Row],
    rhs: &[Rational],
    from: Option<Refinement>,
    watch: &dyn Watch,
) -> Result<(Vec<Value>, LinearStats), LinearError> {
    let m = rows.len();
    let lcm = rhs.iter().fold(BigUint::one(), |l, v| l.lcm(v.denom()));
    let c: Vec<BigInt> = rhs
        .iter()
        .map(|v| BigInt::from(v.numer() * (&lcm / v.denom())))
        .collect();
    // A kept state of another size (never written by bidtb) is ignored: start afresh.
    let start = match from {
        Some(state) if state.y.len() == m && state.r.len() == m => state,
        _ => Refinement {
            y: vec![BigInt::zero(); m],
            r: c.clone(),
            k: 0,
            step: 32,
            next_try: 64,
            stalled: 0,
            stats: LinearStats::default(),
            pending: None,
        },
    };
    let Refinement {
        y: mut high,
        mut r,
        mut k,
        mut step,
        mut next_try,
        mut stalled,
        mut stats,
        mut pending,
    } = start;
    // y = (high << block_bits) + block: recent corrections gather in the short `block`,
    // folded into the long `high` every FOLD_BITS, so that a round costs time in the size
    // of the corrections, not of the whole approximation.
    let mut block = vec![BigInt::zero(); m];
    let mut block_bits: u64 = 0;
    let mut sweeper = Sweeper::new(rows);
    let fold = |high: &mut Vec<BigInt>, block: &mut Vec<BigInt>, bits: &mut u64| {
        high.par_iter_mut()
            .zip(block.par_iter_mut())
            .for_each(|(h, b)| {
                *h = (&*h << *bits) + std::mem::take(b);
            });
        *bits = 0;
    };
    loop {
        // A reconstruction stopped part-way is tried again first, as it would have gone on.
        if let Some(err) = pending.take() {
            match reconstruct(rows, &c, &high, &lcm, k, err, watch) {
                Attempt::Solved(x) => {
                    stats.attempts += 1;
                    stats.bits = k;
                    return Ok((x, stats));
                }
                Attempt::NotYet => {
                    stats.attempts += 1;
                    next_try = k + k / 4;
                }
                Attempt::Stopped => {
                    let state = Refinement {
                        y: high,
                        r,
                        k,
                        step,
                        next_try,
                        stalled,
                        stats,
                        pending: Some(err),
                    };
                    return Err(LinearError::Stopped(Box::new(state)));
                }
            }
        }
        let e = r.iter().map(|x| x.bits()).max().unwrap_or(0);
        if e == 0 {
            // Exact: y / 2^k is L·x.
            fold(&mut high, &mut block, &mut block_bits);
            let den = &lcm << k;
            let x: Vec<Value> = high
                .iter()
                .map(|v| reduced(v.magnitude().clone(), den.clone()))
                .collect();
            stats.attempts += 1;
            stats.bits = k;
            return if high.iter().all(|v| !v.is_negative()) && check(rows, rhs, &x) {
                Ok((x, stats))
            } else {
                Err("the exact residual vanished on a wrong solution"
                    .to_string()
                    .into())
            };
        }
        if k > MAX_BITS {
            return Err(format!("no exact solution found within {MAX_BITS} bits").into());
        }
        let stopping = watch.stopping();
        if stopping || watch.due() {
            fold(&mut high, &mut block, &mut block_bits);
            let state = Refinement {
                y: std::mem::take(&mut high),
                r: std::mem::take(&mut r),
                k,
                step,
                next_try,
                stalled,
                stats,
                pending: None,
            };
            if stopping {
                return Err(LinearError::Stopped(Box::new(state)));
            }
            watch.snapshot(&state);
            (high, r) = (state.y, state.r);
        }
        stats.sweeps += sweeper.solve(&r, e) as u64;
        let growth = sweeper.growth();
        let dy: Vec<BigInt> = (0..m)
            .into_par_iter()
            .map(|i| round_scaled(sweeper.d(i), e + step))
            .collect();
        // y ← 2^step · y + dy and R ← 2^step · R − A · dy.
        // In place: additions rather than products by the coefficients (1 or 2).
        block.par_iter_mut().zip(&dy).for_each(|(b, dyi)| {
            *b <<= step;
            *b += dyi;
        });
        block_bits += step;
        r.par_iter_mut().enumerate().for_each(|(i, ri)| {
            *ri <<= step;
            for _ in 0..rows[i].diag {
                *ri -= &dy[i];
            }
            for &(j, coef) in rows[i].terms() {
                for _ in 0..coef {
                    *ri += &dy[j as usize];
                }
            }
        });
        if block_bits >= FOLD_BITS {
            fold(&mut high, &mut block, &mut block_bits);
        }
        k += step;
        watch.round(k);
        stats.rounds += 1;
        let e_new = r.iter().map(|x| x.bits()).max().unwrap_or(0);
        // Bits gained on the residual in x's scale this round. Once the residual is down
        // to the rounding of the corrections (a few units), the gain equals the step:
        // then the float solve could give more, so the step grows.
        let gain = (e + step) as i64 - e_new as i64;
        if gain <= 2 {
            stalled += 1;
            if stalled > 8 {
                return Err(
                    format!("iterative refinement stalled after {} rounds", stats.rounds).into(),
                );
            }
        } else {
            stalled = 0;
        }
        step = if gain >= step as i64 {
            (step + 8).min(MAX_STEP)
        } else {
            (gain - 3).clamp(4, MAX_STEP as i64) as u64
        };
        if k >= next_try && e_new > 0 {
            fold(&mut high, &mut block, &mut block_bits);
            // The error of y is about |A⁻¹| · |R|; |d| / |R / 2^e| estimates |A⁻¹|. The
            // attempt itself is made at the top of the loop, where a continued run makes
            // one that was stopped part-way.
            let guard = 8 + growth.max(1.0).log2().ceil() as u64;
            pending = Some(e_new + guard);
        }
    }
}

/// Entries of a solution put in lowest terms together (one gcd between them: see
/// [`reduced_over`]).
const LOWEST_TERMS_CHUNK: usize = 64;

/// Corrections gather in a short block folded into the long approximation every this many
/// bits.
const FOLD_BITS: u64 = 1024;

/// The largest number of bits a refinement round adds.
const MAX_STEP: u64 = 48;

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
struct Sweeper {
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
    fn new(rows: &[Row]) -> Sweeper {
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

    /// Solve `rows · d ≈ R / 2^e` from `d = 0`; the sweeps it took.
    fn solve(&mut self, residual: &[BigInt], e: u64) -> u32 {
        for (r, &i) in self.r.iter_mut().zip(&self.order) {
            *r = scaled(&residual[i as usize], e);
        }
        self.d.iter_mut().for_each(|v| *v = 0.0);
        gauss_seidel(&self.rows, &self.r, &mut self.d)
    }

    /// Row `i`'s correction.
    fn d(&self, i: usize) -> f64 {
        self.d[self.place[i] as usize]
    }

    /// The largest correction.
    fn growth(&self) -> f64 {
        self.d.iter().fold(0.0f64, |a, v| a.max(v.abs()))
    }
}

/// The rows in a depth-first postorder of the graph of their targets (from each row not
/// yet reached, in index order; targets in the row's order): every row comes after the
/// targets its walk reached first, so only the targets of back edges (rows still on the
/// walk's path) come after it.
fn postorder(rows: &[Row]) -> Vec<u32> {
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

/// Gauss–Seidel on `rows · d = r` from `d`, until a sweep moves nothing by more than 2⁻⁵⁰
/// of the largest entry (or a sweep limit). Returns the sweeps.
fn gauss_seidel(rows: &[SweepRow], r: &[f64], d: &mut [f64]) -> u32 {
    let limit = (200_000_000 / rows.len().max(1)).clamp(1000, 1_000_000) as u32;
    for sweep in 1..=limit {
        let (mut change, mut size) = (0.0f64, 0.0f64);
        for (i, row) in rows.iter().enumerate() {
            let new = (r[i] * row.inv as f64 + row.w[0] as f64 * d[row.j[0] as usize])
                + row.w[1] as f64 * d[row.j[1] as usize];
            change = change.max((new - d[i]).abs());
            size = size.max(new.abs());
            d[i] = new;
        }
        if change <= size * f64::EPSILON * 4.0 || size == 0.0 {
            return sweep;
        }
    }
    limit
}

/// `v / 2^e` as a float (|v| < 2^e, so the result lies in (−1, 1)): for long residuals
/// the 62 bits of |v| from 2^(e−62) up, read in place from its top limbs (a shifted copy
/// would cost the residual's length every row and round), truncated toward zero.
fn scaled(v: &BigInt, e: u64) -> f64 {
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
fn round_scaled(v: f64, s: u64) -> BigInt {
    if v == 0.0 || !v.is_finite() {
        return BigInt::zero();
    }
    let bits = v.abs().to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i64;
    let mant = if exp == 0 {
        (bits & ((1 << 52) - 1)) << 1
    } else {
        (bits & ((1 << 52) - 1)) | (1 << 52)
    };
    // |v| = mant · 2^(exp − 1075).
    let shift = exp - 1075 + s as i64;
    let magnitude = if shift >= 0 {
        BigUint::from(mant) << shift as usize
    } else if shift > -64 {
        let s = (-shift) as u32;
        BigUint::from((mant + (1u64 << (s - 1))) >> s)
    } else {
        BigUint::zero()
    };
    BigInt::from_biguint(if v < 0.0 { Sign::Minus } else { Sign::Plus }, magnitude)
}

/// `(n, |a − n·den|)` with `n = round(a / den)`, `den = L·2^k` (halves rounded up): the division
/// by a power of two is a shift and the division by the short `L` is short, and the
/// distance comes from the two remainders without multiplying `n` back (a reconstruction
/// pass does this for every entry, on numbers of the values' size).
fn nearest_quotient(a: BigInt, lcm: &BigInt, den: &BigInt, k: u64) -> (BigInt, BigInt) {
    // a = 2^k · high + low (0 ≤ low < 2^k), high = L · n + r (0 ≤ r < L): a = den · n + rem,
    // rem = r · 2^k + low, 0 ≤ rem < den.
    let high = &a >> k as usize;
    let low = a - (&high << k as usize);
    let (mut n, r) = high.div_mod_floor(lcm);
    let rem = (r << k as usize) + low;
    if (&rem << 1u8) >= *den {
        n += 1;
        (n, den - rem)
    } else {
        (n, rem)
    }
}

/// What a reconstruction attempt gave.
enum Attempt {
    /// The exact solution, checked against every row.
    Solved(Vec<Value>),
    /// The precision does not suffice yet.
    NotYet,
    /// The watch said stop before it ended.
    Stopped,
}

/// The exact solution from the approximation `y / (2^k L)` (error below `2^err / (2^k L)`),
/// if the precision suffices: a common denominator q is built entry by entry (an entry
/// that `t/q` does not match within the error extends q by the simplest rational near
/// `x_i · q`), refusing any extension whose denominator the precision cannot pin down
/// uniquely; the result is checked exactly against every row, in integers, and reduced to
/// lowest terms. The passes, the check and the reduction (long products, divisions and gcds
/// of every entry: minutes on the largest 8x8 systems) ask `watch` whether to stop as they
/// go.
fn reconstruct(
    rows: &[Row],
    c: &[BigInt],
    y: &[BigInt],
    lcm: &BigUint,
    k: u64,
    err: u64,
    watch: &dyn Watch,
) -> Attempt {
    let den = BigInt::from(lcm << k);
    // Bits of precision of each x_i: its interval has width 2^(err + 1) / den.
    let precision = (den.bits() as i64 - err as i64 - 1).max(0) as u64;
    let slack = BigInt::one() << err;
    let lcm = &BigInt::from(lcm.clone());
    let mut q = BigInt::one();
    let mut t: Vec<Option<BigInt>> = vec![None; y.len()];
    // Each pass finds every numerator that q explains (in parallel); the first entry it
    // does not explain extends q, and the next pass tries the rest again.
    loop {
        // The error allowed to y_i · q, in den's units: slack · q.
        let bound = &q << err as usize;
        // `None` if the watch said stop during the pass (a long one on a large system).
        let found: Option<Vec<Option<(usize, BigInt)>>> = t
            .par_iter()
            .enumerate()
            .filter(|(_, ti)| ti.is_none())
            .map(|(i, _)| {
                if watch.stopping() {
                    return None;
                }
                // t = round(y_i · q / den): x_i's numerator over q if within the error.
                let (num, off) = nearest_quotient(mul_signed(&y[i], &q), lcm, &den, k);
                Some((off <= bound).then_some((i, num)))
            })
            .collect();
        let Some(found) = found else {
            return Attempt::Stopped;
        };
        for (i, num) in found.into_iter().flatten() {
            t[i] = Some(num);
        }
        let Some(i) = t.iter().position(Option::is_none) else {
            break;
        };
        // Extend q: x_i · q lies in [(y_i − slack) q, (y_i + slack) q] / den.
        let yi = &y[i];
        let lo = mul_signed(&(yi - &slack).max(BigInt::zero()), &q)
            .into_parts()
            .1;
        let hi = mul_signed(&(yi + &slack).min(den.clone()), &q)
            .into_parts()
            .1;
        let d = den.magnitude();
        let z = simplest_between(
            &Value::new_raw(lo, d.clone()),
            &Value::new_raw(hi, d.clone()),
        );
        let b = BigInt::from(z.denom().into_owned());
        if 2 * b.bits() + q.bits() + 16 > precision {
            return Attempt::NotYet;
        }
        // x_i = z / q = a / (b q): every numerator found so far scales by b.
        t.par_iter_mut()
            .flatten()
            .for_each(|ti| *ti = mul_signed(ti, &b));
        q = mul_signed(&q, &b);
        t[i] = Some(BigInt::from(z.numer().into_owned()));
    }
    let t: Vec<BigInt> = t
        .into_iter()
        .map(|ti| ti.expect("every entry found"))
        .collect();
    // Exact check in integers: diag · t_i · L = c_i · q + Σ coef · t_j · L, as
    // (diag · t_i − Σ coef · t_j) · L = c_i · q: two long products a row, not four.
    let stopped = AtomicBool::new(false);
    let holds = rows.par_iter().enumerate().all(|(i, row)| {
        if watch.stopping() {
            stopped.store(true, Ordering::Relaxed);
            return false;
        }
        let mut left = &t[i] * row.diag as u32;
        for &(j, coef) in row.terms() {
            left -= &t[j as usize] * coef as u32;
        }
        mul_signed(&left, lcm) == mul_signed(&c[i], &q)
    });
    if stopped.load(Ordering::Relaxed) {
        return Attempt::Stopped;
    }
    if !holds || t.iter().any(|v| v.is_negative()) {
        return Attempt::NotYet;
    }
    // Lowest terms: one gcd per chunk of entries over the common odd part of q.
    let (odd, twos) = split(q.into_parts().1);
    // Chunks owned, so that each chunk's numerators are let go once its values are made.
    let mut numerators = t.into_iter().map(|v| v.into_parts().1).peekable();
    let mut chunks: Vec<Vec<BigUint>> = Vec::new();
    while numerators.peek().is_some() {
        chunks.push(numerators.by_ref().take(LOWEST_TERMS_CHUNK).collect());
    }
    let x: Option<Vec<Vec<Value>>> = chunks
        .into_par_iter()
        .map(|chunk| (!watch.stopping()).then(|| reduced_over(&chunk, &odd, twos)))
        .collect();
    x.map_or(Attempt::Stopped, |parts| {
        Attempt::Solved(parts.into_iter().flatten().collect())
    })
}

/// Whether `x` satisfies every row exactly: `diag · x_i = rhs_i + Σ coef · x_j`.
pub fn check(rows: &[Row], rhs: &[Rational], x: &[Value]) -> bool {
    rows.iter().zip(rhs).enumerate().all(|(i, (row, b))| {
        let mut sum = b.clone();
        for &(j, coef) in row.terms() {
            sum += x[j as usize].to_ratio() * Rational::from_integer(coef.into());
        }
        sum == x[i].to_ratio() * Rational::from_integer(row.diag.into())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: u64, d: u64) -> Rational {
        Rational::new(n.into(), d.into())
    }

    fn row(diag: u8, off: &[(u32, u8)]) -> Row {
        let mut r = Row {
            diag,
            off: [(0, 0); 2],
            len: off.len() as u8,
        };
        r.off[..off.len()].copy_from_slice(off);
        r
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
        assert_eq!(sweeper.solve(&residual, 3), 2);
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

    /// x0 = (1 + x1)/2, x1 = (x0 + 0)/2: x0 = 2/3, x1 = 1/3.
    #[test]
    fn solves_a_two_cycle() {
        let rows = [row(2, &[(1, 1)]), row(2, &[(0, 1)])];
        let (x, _) = solve(&rows, &[v(1, 1), v(0, 1)], None, &Unwatched).unwrap();
        assert_eq!(x, vec![Value::small(2, 3), Value::small(1, 3)]);
    }

    /// A long cycle with exits of awkward values: the answer has a large denominator, and
    /// it is checked against the rows independently here.
    #[test]
    fn solves_a_long_cycle_with_large_denominators() {
        let m = 300u32;
        let rows: Vec<Row> = (0..m).map(|i| row(2, &[((i + 1) % m, 1)])).collect();
        let rhs: Vec<Rational> = (0..m as u64).map(|i| v(i % 7, 7 + i % 5)).collect();
        let (x, stats) = solve(&rows, &rhs, None, &Unwatched).unwrap();
        assert!(check(&rows, &rhs, &x));
        assert!(x.iter().any(|v| v.denom().bits() > 250), "{stats:?}");
        // x_i = (rhs_i + x_{i+1}) / 2 by hand for one row.
        assert_eq!(x[5].to_ratio() * v(2, 1), &rhs[5] + x[6].to_ratio());
    }

    /// Self-loops (diag 1) and a double target (coefficient 2).
    #[test]
    fn handles_self_loops_and_double_targets() {
        // x0 = x1 (White stays), x1 = (x0 + x2)/2 ... with x2 = (2·x0 + 0)/... keep exits.
        let rows = [row(1, &[(1, 1)]), row(2, &[(0, 1)]), row(2, &[(0, 2)])];
        // x0 − x1 = 0; 2x1 − x0 = 1/3; 2x2 − 2x0 = 0.
        let (x, _) = solve(&rows, &[v(0, 1), v(1, 3), v(0, 1)], None, &Unwatched).unwrap();
        assert_eq!(x, vec![Value::small(1, 3); 3]);
    }

    /// Stops after a number of rounds, and records every snapshot it is shown.
    struct StopAfter {
        rounds: std::sync::atomic::AtomicU32,
        stop_at: u32,
        snapshots: std::sync::Mutex<Vec<Refinement>>,
    }

    impl Watch for StopAfter {
        fn stopping(&self) -> bool {
            self.rounds.load(std::sync::atomic::Ordering::SeqCst) >= self.stop_at
        }
        fn due(&self) -> bool {
            // Counted here: `due` is asked once per round when not stopping.
            self.rounds
                .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            true
        }
        fn snapshot(&self, state: &Refinement) {
            self.snapshots.lock().unwrap().push(state.clone());
        }
    }

    #[test]
    fn a_stopped_refinement_continues_to_the_same_answer() {
        let m = 300u32;
        let rows: Vec<Row> = (0..m).map(|i| row(2, &[((i + 1) % m, 1)])).collect();
        let rhs: Vec<Rational> = (0..m as u64).map(|i| v(i % 7, 7 + i % 5)).collect();
        let (want, whole) = solve(&rows, &rhs, None, &Unwatched).unwrap();
        assert!(whole.rounds > 6, "{whole:?}");
        for stop_at in [1, 3, whole.rounds - 1] {
            let watch = StopAfter {
                rounds: 0.into(),
                stop_at,
                snapshots: Default::default(),
            };
            let Err(LinearError::Stopped(state)) = solve(&rows, &rhs, None, &watch) else {
                panic!("not stopped at round {stop_at}");
            };
            assert_eq!(state.stats.rounds, stop_at);
            // Each snapshot is the state of a round, shown without disturbing the run.
            let snapshots = watch.snapshots.lock().unwrap();
            assert_eq!(snapshots.len(), stop_at as usize);
            assert_eq!(snapshots.last().unwrap().stats.rounds, stop_at - 1);
            let (got, stats) = solve(&rows, &rhs, Some(*state), &Unwatched).unwrap();
            assert_eq!(got, want);
            assert_eq!(stats, whole, "resumed after round {stop_at}");
            // From a snapshot too.
            let earlier = snapshots[0].clone();
            assert_eq!(
                solve(&rows, &rhs, Some(earlier), &Unwatched).unwrap().1,
                whole
            );
        }
        // A state of another size is ignored, not trusted.
        let odd = Refinement {
            y: vec![BigInt::one(); 3],
            r: vec![BigInt::one(); 3],
            k: 7,
            step: 4,
            next_try: 9,
            stalled: 0,
            stats: LinearStats::default(),
            pending: None,
        };
        assert_eq!(
            solve(&rows, &rhs, Some(odd), &Unwatched).unwrap(),
            (want, whole)
        );
    }

    /// Says stop from its `at`-th question on, and counts the questions.
    struct StopAtCall {
        calls: std::sync::atomic::AtomicU32,
        at: u32,
    }

    impl Watch for StopAtCall {
        fn stopping(&self) -> bool {
            self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1 >= self.at
        }
        fn due(&self) -> bool {
            false
        }
        fn snapshot(&self, _: &Refinement) {}
    }

    /// Solves with a stop at question `at` and continues from the stopped state: the
    /// stopped state and the continued result.
    fn stop_and_continue(
        rows: &[Row],
        rhs: &[Rational],
        at: u32,
    ) -> (Refinement, (Vec<Value>, LinearStats)) {
        let watch = StopAtCall {
            calls: 0.into(),
            at,
        };
        let Err(LinearError::Stopped(state)) = solve(rows, rhs, None, &watch) else {
            panic!("not stopped at question {at}");
        };
        let continued = solve(rows, rhs, Some((*state).clone()), &Unwatched).unwrap();
        (*state, continued)
    }

    /// A stop asked for inside the final reconstruction (its exact check, then its
    /// reduction to lowest terms) is answered there, and the continued run tries the same
    /// reconstruction again: the same values and the same statistics as without the stop.
    #[test]
    fn a_stop_inside_the_reconstruction_continues_to_the_same_answer() {
        let m = 300u32;
        let rows: Vec<Row> = (0..m).map(|i| row(2, &[((i + 1) % m, 1)])).collect();
        let rhs: Vec<Rational> = (0..m as u64).map(|i| v(i % 7, 7 + i % 5)).collect();
        let (want, whole) = solve(&rows, &rhs, None, &Unwatched).unwrap();
        let count = StopAtCall {
            calls: 0.into(),
            at: u32::MAX,
        };
        assert_eq!(
            solve(&rows, &rhs, None, &count).unwrap(),
            (want.clone(), whole)
        );
        // Once a round, once an entry in each pass, once a row in the exact check and once
        // a value in the reduction.
        let total = count.calls.into_inner();
        assert!(total >= whole.rounds + 3 * m, "{total} questions");
        // In the reduction, in the check, at its first row, and in the final pass.
        for at in [
            total - m / 2,
            total - m - m / 2,
            total - 2 * m + 1,
            total - 2 * m,
        ] {
            let (state, (got, stats)) = stop_and_continue(&rows, &rhs, at);
            assert!(state.pending.is_some(), "stopped at {at}, not inside");
            assert_eq!(state.stats.rounds, whole.rounds);
            assert_eq!(got, want, "continued after question {at}");
            assert_eq!(stats, whole, "continued after question {at}");
        }
        // A stop at any question, between rounds or inside any attempt, continues to the
        // same answer.
        for at in (1..total).step_by(13) {
            let (_, continued) = stop_and_continue(&rows, &rhs, at);
            assert_eq!(continued, (want.clone(), whole), "question {at}");
        }
    }

    proptest::proptest! {
        /// The shortcut quotient is the nearest integer (halves up) to a / (L·2^k) and
        /// its distance, as the long division and the product give them, for numbers of
        /// either sign, exact multiples and halves included.
        #[test]
        fn nearest_quotient_is_the_rounded_division(
            limbs in proptest::collection::vec(proptest::prelude::any::<u64>(), 0..5),
            negative: bool,
            lcm in 1u64..1_000_000,
            k in 0u64..200,
            exact in 0u8..3,
        ) {
            let den = BigInt::from(lcm) << k as usize;
            let mut a = BigInt::from_biguint(
                if negative { Sign::Minus } else { Sign::Plus },
                BigUint::from_slice(
                    &limbs.iter().flat_map(|l| [*l as u32, (l >> 32) as u32]).collect::<Vec<_>>(),
                ),
            );
            // A multiple of den, or a multiple plus half of it, now and then.
            if exact == 1 {
                a = &a * &den;
            } else if exact == 2 && lcm % 2 == 0 {
                a = &a * &den + &den / 2;
            }
            let (mut want, rem) = a.div_mod_floor(&den);
            if (&rem << 1u8) >= den {
                want += 1;
            }
            let distance = (&a - &want * &den).abs();
            let got = nearest_quotient(a, &BigInt::from(lcm), &den, k);
            proptest::prop_assert_eq!(got, (want, distance));
        }
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
