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

use num_bigint::{BigInt, BigUint};
use num_integer::Integer;
use num_rational::Ratio;
use num_traits::{One, Signed, Zero};
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::value::arith::{lcm, reduced, reduced_over};
use crate::value::long::{Modulus, mul_signed};
use crate::value::{Value, simplest_between, split};

mod approximation;
mod direct;
mod short;
mod sweep;

use approximation::Approximation;
use short::{Corrections, Residual};
use sweep::Sweeper;

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

impl Refinement {
    /// Whether no round has been made yet (y = 0 at scale 2^0).
    pub fn not_begun(&self) -> bool {
        self.k == 0 && self.stats.rounds == 0 && self.pending.is_none()
    }

    /// A refinement that has not begun, of the system with integer right-hand sides `c`
    /// (y = 0, so the residual is `c` itself).
    pub fn fresh(c: Vec<BigInt>) -> Refinement {
        Refinement {
            y: vec![BigInt::zero(); c.len()],
            r: c,
            k: 0,
            step: 32,
            next_try: 64,
            stalled: 0,
            stats: LinearStats::default(),
            pending: None,
        }
    }
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
    solve_by(rows, rhs, from, watch, true)
}

/// [`solve`], trying the exact elimination first only if `eliminate` (the tests compare
/// the refinement's values with the elimination's).
fn solve_by(
    rows: &[Row],
    rhs: &[Rational],
    from: Option<Refinement>,
    watch: &dyn Watch,
    eliminate: bool,
) -> Result<(Vec<Value>, LinearStats), LinearError> {
    let m = rows.len();
    let lcm = rhs.iter().fold(BigUint::one(), |l, v| lcm(&l, v.denom()));
    let c: Vec<BigInt> = rhs
        .iter()
        .map(|v| BigInt::from(v.numer() * (&lcm / v.denom())))
        .collect();
    // Eliminated exactly unless a refinement is under way already (a state that has not
    // refined yet is where a stopped elimination left off: eliminated again).
    if eliminate
        && from.as_ref().is_none_or(Refinement::not_begun)
        && lcm.bits() >= DIRECT_RHS_BITS
        && let Some(x) = solve_directly(rows, &c, &lcm, &|| watch.stopping())
    {
        let stats = LinearStats {
            attempts: 1,
            ..LinearStats::default()
        };
        return Ok((x, stats));
    }
    // A kept state of another size (never written by bidtb) is ignored: start afresh.
    let start = match from {
        Some(state) if state.y.len() == m && state.r.len() == m => state,
        _ => Refinement::fresh(c.clone()),
    };
    let Refinement {
        y,
        r,
        mut k,
        mut step,
        mut next_try,
        mut stalled,
        mut stats,
        mut pending,
    } = start;
    let mut y = Approximation::new(y);
    let mut r = Residual::new(r);
    let mut sweeper = Sweeper::new(rows);
    loop {
        // A reconstruction stopped part-way is tried again first, as it would have gone on.
        if let Some(err) = pending.take() {
            match reconstruct(rows, &c, y.whole(), &lcm, k, err, sweeper.order(), watch) {
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
                        y: y.take(),
                        r: r.into_long(),
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
        let e = r.bits();
        if e == 0 {
            // Exact: y / 2^k is L·x.
            let high = y.whole();
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
            let state = Refinement {
                y: y.take(),
                r: r.into_long(),
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
            y = Approximation::new(state.y);
            r = Residual::new(state.r);
        }
        stats.sweeps += sweeper.solve(|i| r.scaled(i, e)) as u64;
        let growth = sweeper.growth();
        let dy = Corrections::new(&r, e, step, growth, m, |i| sweeper.d(i));
        // R ← 2^step · R − A · dy and y ← 2^step · y + dy.
        r.update(rows, step, &dy);
        y.add(dy, step);
        k += step;
        watch.round(k);
        stats.rounds += 1;
        let e_new = r.bits();
        r.shorten(e_new);
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
            // The error of y is about |A⁻¹| · |R|; |d| / |R / 2^e| estimates |A⁻¹|. The
            // attempt itself is made at the top of the loop, where a continued run makes
            // one that was stopped part-way.
            let guard = 8 + growth.max(1.0).log2().ceil() as u64;
            pending = Some(e_new + guard);
        }
    }
}

/// Systems whose right-hand sides have a common denominator of at least this many bits
/// are eliminated exactly ([`direct`]) before the refinement is tried: the refinement's
/// rounds cost the square of that length.
const DIRECT_RHS_BITS: u64 = 1024;

/// The exact solution by elimination ([`direct`]) in lowest terms, `x = X / L` for the
/// solution `X` of `rows · X = c`: checked against every row; `None` where the
/// elimination gives up or `stopping` says stop (or, never seen, its result fails the
/// check or leaves [0, 1]). After a stop the refinement's loop hands a state that has not
/// begun over to the keeper at once.
fn solve_directly(
    rows: &[Row],
    c: &[BigInt],
    lcm: &BigUint,
    stopping: &dyn Fn() -> bool,
) -> Option<Vec<Value>> {
    let x = direct::solve(rows, c, stopping)?;
    if !direct::check(rows, c, &x) || x.iter().any(|f| f.num.is_negative()) {
        return None;
    }
    // x_i = N / (D L), gcd(N, D) = 1: the odd part of L through one gcd per chunk.
    let (odd, twos) = split(lcm.clone());
    let modulus = Modulus::new(&odd);
    let chunks: Vec<&[direct::Fraction]> = x.chunks(LOWEST_TERMS_CHUNK).collect();
    let values: Vec<Vec<Value>> = chunks
        .into_par_iter()
        .map(|chunk| {
            let nums: Vec<&BigUint> = chunk.iter().map(|f| f.num.magnitude()).collect();
            let gcds = crate::value::long::gcds_with(&modulus, &nums);
            chunk
                .iter()
                .zip(gcds)
                .map(|(f, g)| {
                    let (num, den) = (f.num.magnitude(), f.den.magnitude());
                    if !g.is_one() || num.is_zero() {
                        return reduced(num.clone(), den * lcm);
                    }
                    // Coprime to D and to L's odd part: only twos may cancel.
                    let (den_odd, den_twos) = split(den.clone());
                    let all_twos = den_twos + twos;
                    let shift = (num.trailing_zeros().unwrap_or(0) as u32).min(all_twos);
                    let odd_part = if den_odd.is_one() {
                        odd.clone()
                    } else {
                        std::sync::Arc::new(&*den_odd * &*odd)
                    };
                    Value::from_parts(num >> shift, odd_part, all_twos - shift)
                })
                .collect()
        })
        .collect();
    Some(values.into_iter().flatten().collect())
}

/// Entries of a solution put in lowest terms together (one gcd between them: see
/// [`reduced_over`]).
const LOWEST_TERMS_CHUNK: usize = 64;

/// The largest number of bits a refinement round adds.
const MAX_STEP: u64 = 48;

/// `(n, |a − n·den|)` with `n = round(a / den)`, `den = L·2^k` (halves rounded up): the division
/// by a power of two is a shift, the division by `L` (short, or of thousands of digits
/// where the right-hand sides' denominators are long) goes through
/// [`crate::value::long::div_mod_floor`], and the distance comes from the two remainders
/// without multiplying `n` back (a reconstruction pass does this for every entry, on
/// numbers of the values' size).
fn nearest_quotient(a: BigInt, lcm: &BigInt, den: &BigInt, k: u64) -> (BigInt, BigInt) {
    // a = 2^k · high + low (0 ≤ low < 2^k), high = L · n + r (0 ≤ r < L): a = den · n + rem,
    // rem = r · 2^k + low, 0 ≤ rem < den.
    let high = &a >> k as usize;
    let low = a - (&high << k as usize);
    let (mut n, r) = crate::value::long::div_mod_floor(&high, lcm);
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

/// The rows some row reads after them in the sweep `order`: the targets of the walk's
/// back edges (in a postorder every other target comes first).
fn seeds(rows: &[Row], order: &[u32]) -> Vec<bool> {
    let mut place = vec![0u32; rows.len()];
    for (p, &i) in order.iter().enumerate() {
        place[i as usize] = p as u32;
    }
    let mut seed = vec![false; rows.len()];
    for (i, row) in rows.iter().enumerate() {
        for &(j, _) in row.terms() {
            if place[j as usize] > place[i] {
                seed[j as usize] = true;
            }
        }
    }
    seed
}

/// What an attempt reads: the approximation `y / den`, `den = L·2^k`, within `2^err / den`,
/// so `precision` bits of each entry.
struct Near<'a> {
    y: &'a [BigInt],
    lcm: &'a BigInt,
    den: BigInt,
    k: u64,
    err: u64,
    precision: u64,
}

/// A common denominator `q` and the numerators over it found so far.
struct Numerators {
    q: BigInt,
    t: Vec<Option<BigInt>>,
}

/// What [`Numerators::extend`] gave.
enum Extended {
    /// Every entry asked for has its numerator.
    All,
    /// The precision does not pin down an extension of q.
    NotYet,
    /// The watch said stop.
    Stopped,
}

impl Numerators {
    /// The numerators of the entries `wanted` not found yet, extending q as needed. Each
    /// pass finds every numerator that q explains (in parallel); the first entry it does
    /// not explain extends q, and the next pass tries the rest again. The first entry not
    /// yet found is tried alone before a pass: where q does not explain it (at the first
    /// entry of nearly every attempt that fails) it extends q with no pass over the rest.
    fn extend(
        &mut self,
        near: &Near<'_>,
        wanted: impl Fn(usize) -> bool + Sync,
        watch: &dyn Watch,
    ) -> Extended {
        let Near {
            y,
            lcm,
            ref den,
            k,
            err,
            precision,
        } = *near;
        let slack = BigInt::one() << err;
        loop {
            let (q, t) = (&self.q, &mut self.t);
            // The error allowed to y_i · q, in den's units: slack · q.
            let bound = q << err as usize;
            // t = round(y_i · q / den): x_i's numerator over q if within the error.
            let explained = |i: usize| {
                let (num, off) = nearest_quotient(mul_signed(&y[i], q), lcm, den, k);
                (off <= bound).then_some(num)
            };
            let missing =
                |t: &[Option<BigInt>]| (0..t.len()).find(|&i| t[i].is_none() && wanted(i));
            let Some(first) = missing(t) else {
                return Extended::All;
            };
            let i = match explained(first) {
                None => first,
                Some(num) => {
                    t[first] = Some(num);
                    // `None` if the watch said stop during the pass (a long one on a large
                    // system).
                    let found: Option<Vec<Option<(usize, BigInt)>>> = t
                        .par_iter()
                        .enumerate()
                        .filter(|&(i, ti)| ti.is_none() && wanted(i))
                        .map(|(i, _)| (!watch.stopping()).then(|| explained(i).map(|num| (i, num))))
                        .collect();
                    let Some(found) = found else {
                        return Extended::Stopped;
                    };
                    for (i, num) in found.into_iter().flatten() {
                        t[i] = Some(num);
                    }
                    let Some(i) = missing(t) else {
                        return Extended::All;
                    };
                    i
                }
            };
            // Extend q: x_i · q lies in [(y_i − slack) q, (y_i + slack) q] / den.
            let yi = &y[i];
            let lo = mul_signed(&(yi - &slack).max(BigInt::zero()), q)
                .into_parts()
                .1;
            let hi = mul_signed(&(yi + &slack).min(den.clone()), q)
                .into_parts()
                .1;
            let d = den.magnitude();
            let z = simplest_between(
                &Value::new_raw(lo, d.clone()),
                &Value::new_raw(hi, d.clone()),
            );
            let b = BigInt::from(z.denom().into_owned());
            if 2 * b.bits() + q.bits() + 16 > precision {
                return Extended::NotYet;
            }
            // x_i = z / q = a / (b q): every numerator found so far scales by b.
            t.par_iter_mut()
                .flatten()
                .for_each(|ti| *ti = mul_signed(ti, &b));
            self.q = mul_signed(q, &b);
            self.t[i] = Some(BigInt::from(z.numer().into_owned()));
        }
    }

    /// Every numerator not found yet from its row, in sweep `order`:
    /// `t_i = (c_i q / L + Σ coef · t_j) / diag`, its targets found already (earlier in the
    /// order, or seeds). False, with only the numerators found before kept, where a
    /// division is not exact (q lacks a factor of some entry) or the watch says stop.
    fn propagate(
        &mut self,
        rows: &[Row],
        c: &[BigInt],
        lcm: &BigInt,
        order: &[u32],
        watch: &dyn Watch,
    ) -> bool {
        let given: Vec<bool> = self.t.iter().map(Option::is_some).collect();
        for (p, &i) in order.iter().enumerate() {
            let i = i as usize;
            if given[i] {
                continue;
            }
            if p % 4096 == 0 && watch.stopping() {
                break;
            }
            let row = &rows[i];
            let (mut sum, r) = mul_signed(&c[i], &self.q).div_rem(lcm);
            let mut exact = r.is_zero();
            for &(j, coef) in row.terms() {
                match &self.t[j as usize] {
                    Some(tj) => {
                        for _ in 0..coef {
                            sum += tj;
                        }
                    }
                    None => exact = false,
                }
            }
            let (ti, r) = sum.div_rem(&BigInt::from(row.diag));
            if !exact || !r.is_zero() {
                for (ti, &kept) in self.t.iter_mut().zip(&given) {
                    if !kept {
                        *ti = None;
                    }
                }
                return false;
            }
            self.t[i] = Some(ti);
        }
        !watch.stopping() || self.t.iter().all(Option::is_some)
    }
}

/// The exact solution from the approximation `y / (2^k L)` (error below `2^err / (2^k L)`),
/// if the precision suffices: a common denominator q is built entry by entry (an entry
/// that `t/q` does not match within the error extends q by the simplest rational near
/// `x_i · q`), refusing any extension whose denominator the precision cannot pin down
/// uniquely. It is built from the *seeds* only, the rows some row reads after them in the
/// sweep order (`order`: the targets of its walk's back edges); every other numerator
/// follows exactly from its row's targets, earlier in that order or seeds, by additions
/// (`t_i = (c_i q / L + Σ coef · t_j) / diag`) instead of a long product with `y_i` each,
/// and where one does not divide exactly, q is built from them too. The result is checked
/// exactly against every row, in integers, and reduced to lowest terms. The passes, the
/// check and the reduction (long products, divisions and gcds of every entry: minutes on
/// the largest 8x8 systems) ask `watch` whether to stop as they go.
#[allow(clippy::too_many_arguments)]
fn reconstruct(
    rows: &[Row],
    c: &[BigInt],
    y: &[BigInt],
    lcm: &BigUint,
    k: u64,
    err: u64,
    order: &[u32],
    watch: &dyn Watch,
) -> Attempt {
    let den = BigInt::from(lcm << k);
    let lcm = &BigInt::from(lcm.clone());
    let mut found = Numerators {
        q: BigInt::one(),
        t: vec![None; y.len()],
    };
    let near = Near {
        y,
        lcm,
        // Bits of precision of each x_i: its interval has width 2^(err + 1) / den.
        precision: (den.bits() as i64 - err as i64 - 1).max(0) as u64,
        den,
        k,
        err,
    };
    let seeds = seeds(rows, order);
    match found.extend(&near, |i| seeds[i], watch) {
        Extended::All => {}
        Extended::NotYet => return Attempt::NotYet,
        Extended::Stopped => return Attempt::Stopped,
    }
    if !found.propagate(rows, c, lcm, order, watch) {
        if watch.stopping() {
            return Attempt::Stopped;
        }
        match found.extend(&near, |_| true, watch) {
            Extended::All => {}
            Extended::NotYet => return Attempt::NotYet,
            Extended::Stopped => return Attempt::Stopped,
        }
    }
    let Numerators { q, t } = found;
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
    let modulus = Modulus::new(&odd);
    // Chunks owned, so that each chunk's numerators are let go once its values are made.
    let mut numerators = t.into_iter().map(|v| v.into_parts().1).peekable();
    let mut chunks: Vec<Vec<BigUint>> = Vec::new();
    while numerators.peek().is_some() {
        chunks.push(numerators.by_ref().take(LOWEST_TERMS_CHUNK).collect());
    }
    let x: Option<Vec<Vec<Value>>> = chunks
        .into_par_iter()
        .map(|chunk| (!watch.stopping()).then(|| reduced_over(&chunk, &odd, &modulus, twos)))
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

/// A row of `diag` and the terms `off` (for tests).
#[cfg(test)]
fn row(diag: u8, off: &[(u32, u8)]) -> Row {
    let mut r = Row {
        diag,
        off: [(0, 0); 2],
        len: off.len() as u8,
    };
    r.off[..off.len()].copy_from_slice(off);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::Sign;

    fn v(n: u64, d: u64) -> Rational {
        Rational::new(n.into(), d.into())
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

    /// Right-hand sides with a long common denominator are eliminated exactly: the same
    /// values as the refinement gives them.
    #[test]
    fn long_right_hand_sides_are_eliminated_to_the_refinements_values() {
        let m = 60u32;
        let rows: Vec<Row> = (0..m)
            .map(|i| match i % 3 {
                0 => row(2, &[((i + 1) % m, 1)]),
                1 => row(2, &[((i + 1) % m, 1), ((i * 7) % m, 1)]),
                _ => row(1, &[((i + 1) % m, 1)]),
            })
            .collect();
        let long = crate::value::long::test_number(3000, 5) | BigUint::one();
        let rhs: Vec<Rational> = (0..m)
            .map(|i| match i % 3 {
                0 => Rational::new(BigUint::from(i + 1) * 7u8, &long * 3u8),
                _ => Rational::from_integer(BigUint::zero()),
            })
            .collect();
        let (direct, stats) = solve(&rows, &rhs, None, &Unwatched).unwrap();
        assert_eq!((stats.rounds, stats.attempts), (0, 1), "eliminated");
        assert!(check(&rows, &rhs, &direct));
        assert!(direct.iter().any(|v| v.denom().bits() > 3000));
        let (refined, stats) = solve_by(&rows, &rhs, None, &Unwatched, false).unwrap();
        assert!(stats.rounds > 0);
        assert_eq!(direct, refined);
        // Stopped inside the elimination (at its first pivot, at a later one, and at the
        // first step of its back substitution), it hands over a state that has not
        // begun; continued from that state, it eliminates again, to the same values.
        let count = StopAtCall {
            calls: 0.into(),
            at: u32::MAX,
        };
        solve(&rows, &rhs, None, &count).unwrap();
        let questions = count.calls.into_inner();
        for at in [1, questions / 2, questions] {
            let (state, (again, stats)) = stop_and_continue(&rows, &rhs, at);
            assert!(state.not_begun(), "stopped at question {at}");
            assert_eq!((stats.rounds, stats.attempts), (0, 1), "eliminated again");
            assert_eq!(again, direct, "continued after question {at}");
        }
    }

    /// Right-hand sides just too long for a short residual (a common denominator of 120
    /// bits, below the elimination's threshold) on a long cycle: the residual starts long,
    /// shrinks as the rounds go and is made short again; the values satisfy every row.
    #[test]
    fn a_residual_long_at_first_refines_to_the_exact_values() {
        let m = 1500u32;
        let rows: Vec<Row> = (0..m)
            .map(|i| match i % 2 {
                0 => row(2, &[((i + 1) % m, 1)]),
                _ => row(2, &[((i + 1) % m, 1), ((i * 7 + 3) % m, 1)]),
            })
            .collect();
        let long = crate::value::long::test_number(120, 9) | BigUint::one();
        let rhs: Vec<Rational> = (0..m)
            .map(|i| match i % 5 {
                0 => Rational::new(
                    crate::value::long::test_number(119, i as u64) % &long,
                    long.clone(),
                ),
                _ => Rational::from_integer(BigUint::zero()),
            })
            .collect();
        let (refined, stats) = solve(&rows, &rhs, None, &Unwatched).unwrap();
        assert!(stats.rounds > 20, "{stats:?}");
        // Exact against every row of a non-singular system: the solution.
        assert!(check(&rows, &rhs, &refined));
        assert!(refined.iter().any(|v| v.denom().bits() > 1000), "{stats:?}");
    }

    /// x0 = (x1 + 1)/2, x1 = x0/2 (x0 = 2/3, x1 = 1/3) and x2 = (x0 + x1)/2 = 1/2: the
    /// walk from row 0 makes row 0 the only seed; row 1 follows from it, row 2 does not
    /// (its denominator has a factor 2 that q = 3 lacks), so q is extended from it.
    fn seeded_rows() -> Vec<Row> {
        vec![
            row(2, &[(1, 1)]),
            row(2, &[(0, 1)]),
            row(2, &[(0, 1), (1, 1)]),
        ]
    }

    #[test]
    fn numerators_follow_from_the_seeds_where_they_divide() {
        let rows = seeded_rows();
        let order = sweep::postorder(&rows);
        assert_eq!(order, vec![1, 0, 2]);
        assert_eq!(seeds(&rows, &order), vec![true, false, false]);
        let c = [BigInt::one(), BigInt::zero(), BigInt::zero()];
        let lcm = BigInt::one();
        let from_seed = || Numerators {
            q: BigInt::from(3),
            t: vec![Some(BigInt::from(2)), None, None],
        };
        // Row 1 follows; row 2's numerator would be 3/2: nothing is kept but the seed.
        let mut found = from_seed();
        assert!(!found.propagate(&rows, &c, &lcm, &order, &Unwatched));
        assert_eq!(found.t, from_seed().t);
        // Without row 2 every numerator follows.
        let mut found = from_seed();
        assert!(found.propagate(&rows[..2], &c[..2], &lcm, &order[..2], &Unwatched));
        assert_eq!(
            found.t,
            vec![Some(BigInt::from(2)), Some(BigInt::one()), None]
        );
        // The whole solve: the seed's q, then q extended by row 2.
        let (x, _) = solve(&rows, &[v(1, 1), v(0, 1), v(0, 1)], None, &Unwatched).unwrap();
        assert_eq!(
            x,
            vec![Value::small(2, 3), Value::small(1, 3), Value::small(1, 2)]
        );
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
}
