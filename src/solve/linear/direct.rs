//! Exact sparse elimination for the systems whose right-hand sides are long: those above a
//! large system, whose exits hold its values of tens of thousands of digits.
//!
//! The refinement ([`super::solve`]) reads a right-hand side through floats, 48 bits a
//! round, and needs about twice the bits of the answer's denominators: a system of 361
//! positions whose exits have 65,000-bit denominators took 2,700 rounds over residuals of
//! that length (8x8 KNvKN, where such systems took about 400 of its 1,140 s). Here the
//! matrix, short and sparse, is eliminated exactly in integers, one position at a time in
//! an order that keeps the rows short (the fewest products of a position's terms and its
//! users first, as Markowitz chose pivots), and the long right-hand sides only follow:
//! every long operation is a product by a short number, so the cost is the fill times the
//! length of the values, not their square.
//!
//! Nothing is trusted: the caller checks every row of the result exactly. Where the fill
//! grows beyond a bound, or a pivot is not positive, this gives up and the refinement
//! solves the system.

use std::collections::{BinaryHeap, HashSet};

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

use super::Row;

/// A row under elimination: `den · X_p = Σ a · X_j + beta`, `den` > 0, the terms sorted
/// by position and never naming `p` itself. Every number but `beta` is short.
#[derive(Clone, Debug, Default)]
struct Equation {
    den: BigInt,
    terms: Vec<(u32, BigInt)>,
    beta: BigInt,
}

/// A solution entry `N / D`, `D` > 0 short, in lowest terms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Fraction {
    pub(super) num: BigInt,
    pub(super) den: BigInt,
}

/// Nonzero terms allowed over all rows before this gives up: this many per row, and a
/// little more.
const FILL_PER_ROW: usize = 48;

/// The exact solution `X` of `rows · X = c` (integers `c`, of any length), as fractions
/// with short denominators; `None` where the elimination gives up (fill beyond its bound,
/// or a pivot that is not positive, as in a singular system) or `stopping` says stop
/// (asked at every pivot and every row it goes into: a large system's elimination takes
/// minutes, and one pivot of long rows seconds).
pub(super) fn solve(
    rows: &[Row],
    c: &[BigInt],
    stopping: &dyn Fn() -> bool,
) -> Option<Vec<Fraction>> {
    solve_within(rows, c, stopping, SHORT_BITS)
}

/// The longest coefficient, in bits, a pivot's row may have: past it the elimination
/// gives the system up to the refinement. Its products are short by long only while the
/// coefficients stay short; where they grow (the last rows of a large system, dense by
/// then) every step multiplies and divides long numbers by long numbers. 6x6 KNNvKN's
/// system of 86,895 positions (6,213-bit right-hand sides) eliminated 85,677 pivots in 5 s
/// with coefficients below 512 bits, and then ran for over half an hour on the last
/// 1,218; the refinement solves it in minutes. The systems above it (right-hand sides of
/// 39,500 bits) keep their coefficients under 80 bits.
const SHORT_BITS: u64 = 512;

/// [`solve`], giving up once a pivot's row has a coefficient longer than `short_bits`.
fn solve_within(
    rows: &[Row],
    c: &[BigInt],
    stopping: &dyn Fn() -> bool,
    short_bits: u64,
) -> Option<Vec<Fraction>> {
    let m = rows.len();
    let mut eqs: Vec<Equation> = rows
        .iter()
        .zip(c)
        .enumerate()
        .map(|(i, (row, ci))| {
            // Terms merged by position; a term naming the row itself moves to the left.
            let mut den = BigInt::from(row.diag);
            let mut terms: Vec<(u32, BigInt)> = Vec::with_capacity(2);
            for &(j, coef) in row.terms() {
                if j as usize == i {
                    den -= coef;
                } else if let Some(t) = terms.iter_mut().find(|t| t.0 == j) {
                    t.1 += coef;
                } else {
                    terms.push((j, BigInt::from(coef)));
                }
            }
            terms.sort_by_key(|t| t.0);
            Equation {
                den,
                terms,
                beta: ci.clone(),
            }
        })
        .collect();
    let order = eliminate(&mut eqs, m * FILL_PER_ROW + 4096, short_bits, stopping)?;
    substitute_back(&eqs, &order, stopping)
}

/// How many back substitutions pass between two questions to `stopping`.
const STOP_POLL: usize = 64;

/// Eliminate every position from the rows that use it, in Markowitz's order, keeping
/// each pivot's own row (in terms of the positions eliminated after it). Returns the
/// order; `None` past `fill_limit` nonzero terms, at a pivot that is not positive or
/// whose row has a coefficient longer than `short_bits`, or when `stopping` says stop.
fn eliminate(
    eqs: &mut [Equation],
    fill_limit: usize,
    short_bits: u64,
    stopping: &dyn Fn() -> bool,
) -> Option<Vec<u32>> {
    let m = eqs.len();
    // users[k]: the rows not yet eliminated whose terms name k.
    let mut users: Vec<HashSet<u32>> = vec![HashSet::new(); m];
    let mut nonzeros = 0;
    for (p, eq) in eqs.iter().enumerate() {
        for &(j, _) in &eq.terms {
            users[j as usize].insert(p as u32);
        }
        nonzeros += eq.terms.len();
    }
    let cost = |eqs: &[Equation], users: &[HashSet<u32>], k: usize| {
        (eqs[k].terms.len() as u64) * (users[k].len() as u64)
    };
    let mut heap: BinaryHeap<std::cmp::Reverse<(u64, u32)>> = (0..m)
        .map(|k| std::cmp::Reverse((cost(eqs, &users, k), k as u32)))
        .collect();
    let mut done = vec![false; m];
    let mut order = Vec::with_capacity(m);
    while let Some(std::cmp::Reverse((c, k))) = heap.pop() {
        let k = k as usize;
        if done[k] {
            continue;
        }
        let now = cost(eqs, &users, k);
        if now > c {
            heap.push(std::cmp::Reverse((now, k as u32)));
            continue;
        }
        let long = |e: &Equation| {
            e.den.bits() > short_bits || e.terms.iter().any(|t| t.1.bits() > short_bits)
        };
        if !eqs[k].den.is_positive() || long(&eqs[k]) || stopping() {
            return None;
        }
        done[k] = true;
        order.push(k as u32);
        for &(j, _) in &eqs[k].terms {
            users[j as usize].remove(&(k as u32));
        }
        // The pivot's row is read while the rows using it change: taken out meanwhile
        // (no row names itself, so none of them is it), not copied with its long beta.
        let pivot = std::mem::take(&mut eqs[k]);
        let mut using: Vec<u32> = users[k].drain().collect();
        using.sort_unstable();
        for p in using {
            // A pivot used by many long rows takes seconds: asked once a row too.
            if stopping() {
                return None;
            }
            let p = p as usize;
            let before = eqs[p].terms.len();
            let added = substitute(&mut eqs[p], p as u32, k as u32, &pivot);
            for j in added {
                users[j as usize].insert(p as u32);
            }
            nonzeros = nonzeros + eqs[p].terms.len() - before;
            for &(j, _) in &eqs[p].terms {
                heap.push(std::cmp::Reverse((cost(eqs, &users, j as usize), j)));
            }
            heap.push(std::cmp::Reverse((cost(eqs, &users, p), p as u32)));
        }
        eqs[k] = pivot;
        if nonzeros > fill_limit {
            return None;
        }
    }
    Some(order)
}

/// Put pivot `k`'s row `den_k X_k = Σ a_kj X_j + beta_k` into row `p`, which names `k`:
/// row p times `den_k`, its term in `k` replaced by `a_pk` times the pivot's right side,
/// a resulting term in `p` itself moved to the left, and the whole divided by its
/// content. Returns the positions newly named by row `p`.
fn substitute(eq: &mut Equation, p: u32, k: u32, pivot: &Equation) -> Vec<u32> {
    let at = eq
        .terms
        .binary_search_by_key(&k, |t| t.0)
        .expect("row p names k");
    let (_, a_pk) = eq.terms.remove(at);
    let mut den = &eq.den * &pivot.den;
    let mut merged: Vec<(u32, BigInt)> = Vec::with_capacity(eq.terms.len() + pivot.terms.len());
    let mut added = Vec::new();
    let (mut i, mut j) = (0, 0);
    let (left, right) = (&eq.terms, &pivot.terms);
    while i < left.len() || j < right.len() {
        let take_left = j >= right.len() || (i < left.len() && left[i].0 < right[j].0);
        let take_right = i >= left.len() || (j < right.len() && right[j].0 < left[i].0);
        let (pos, value) = if take_left {
            i += 1;
            (left[i - 1].0, &left[i - 1].1 * &pivot.den)
        } else if take_right {
            j += 1;
            if right[j - 1].0 != p {
                added.push(right[j - 1].0);
            }
            (right[j - 1].0, &a_pk * &right[j - 1].1)
        } else {
            i += 1;
            j += 1;
            (
                left[i - 1].0,
                &left[i - 1].1 * &pivot.den + &a_pk * &right[j - 1].1,
            )
        };
        if pos == p {
            den -= value;
        } else if !value.is_zero() {
            merged.push((pos, value));
        }
    }
    let mut beta = &eq.beta * &pivot.den + &a_pk * &pivot.beta;
    // The content: the gcd of the coefficients (short at first, longer as the row fills;
    // once it is 1 it stays 1), then with the long beta (a remainder by the content and a
    // gcd of that size).
    let mut g = den.abs();
    for (_, a) in &merged {
        if g.is_one() {
            break;
        }
        g = gcd(&g, a);
    }
    if !g.is_zero() && !g.is_one() {
        g = gcd(&g, &(&beta % &g));
    }
    if g > BigInt::one() {
        den /= &g;
        beta /= &g;
        for (_, a) in merged.iter_mut() {
            *a /= &g;
        }
    }
    eq.den = den;
    eq.terms = merged;
    eq.beta = beta;
    added
}

/// Every position's value from its pivot row, in the reverse of the elimination order
/// (a row names only positions eliminated after it): `X_k = (Σ a_kj X_j + beta_k) / den_k`
/// over a short common denominator, in lowest terms; `None` when `stopping` says stop.
fn substitute_back(
    eqs: &[Equation],
    order: &[u32],
    stopping: &dyn Fn() -> bool,
) -> Option<Vec<Fraction>> {
    let mut x: Vec<Option<Fraction>> = vec![None; eqs.len()];
    for (done, &k) in order.iter().rev().enumerate() {
        if done % STOP_POLL == 0 && stopping() {
            return None;
        }
        let eq = &eqs[k as usize];
        let known = |j: u32| x[j as usize].as_ref().expect("eliminated after k");
        let common = eq.terms.iter().fold(BigInt::one(), |l, &(j, _)| {
            BigInt::from(crate::value::arith::lcm(
                l.magnitude(),
                known(j).den.magnitude(),
            ))
        });
        let mut num = &eq.beta * &common;
        for (j, a) in &eq.terms {
            let xj = known(*j);
            num += &xj.num * &(a * (&common / &xj.den));
        }
        x[k as usize] = Some(lowest(num, &eq.den * &common));
    }
    Some(
        x.into_iter()
            .map(|v| v.expect("every position eliminated"))
            .collect(),
    )
}

/// The greatest common divisor of `a` and `b` (non-negative), by
/// [`crate::value::arith::gcd`]. Not num-bigint's: its binary gcd of a long number and a
/// short one shifts the long one bit by bit, and a row's coefficients grow long as it
/// fills (6x6 KBNvKN's and KNNvKN's exact evaluations spent about nine tenths of their
/// time in it, over half an hour each).
fn gcd(a: &BigInt, b: &BigInt) -> BigInt {
    BigInt::from(crate::value::arith::gcd(a.magnitude(), b.magnitude()))
}

/// `num / den` (den > 0 short) in lowest terms: a remainder of the long numerator by the
/// short denominator, and a short gcd.
fn lowest(num: BigInt, den: BigInt) -> Fraction {
    let g = gcd(&den, &(&num % &den));
    if g.is_one() || g.is_zero() {
        return Fraction { num, den };
    }
    Fraction {
        num: num / &g,
        den: den / &g,
    }
}

/// Whether `X` satisfies every row exactly: `diag · X_i − Σ coef · X_j = c_i`, each row
/// multiplied by the short common denominator of its entries.
pub(super) fn check(rows: &[Row], c: &[BigInt], x: &[Fraction]) -> bool {
    rows.iter().zip(c).enumerate().all(|(i, (row, ci))| {
        let common = row
            .terms()
            .iter()
            .fold(x[i].den.clone(), |l, &(j, _)| l.lcm(&x[j as usize].den));
        let mut left = &x[i].num * &(BigInt::from(row.diag) * (&common / &x[i].den));
        for &(j, coef) in row.terms() {
            let xj = &x[j as usize];
            left -= &xj.num * &(BigInt::from(coef) * (&common / &xj.den));
        }
        left == ci * &common
    })
}

#[cfg(test)]
mod tests {
    use super::super::row;
    use super::*;
    use num_rational::BigRational;

    /// The exact solution by dense Gaussian elimination over the rationals (the obvious
    /// way, for small systems).
    fn dense(rows: &[Row], c: &[BigInt]) -> Vec<BigRational> {
        let m = rows.len();
        let mut a = vec![vec![BigRational::zero(); m + 1]; m];
        for (i, row) in rows.iter().enumerate() {
            a[i][i] = BigRational::from_integer(row.diag.into());
            for &(j, coef) in row.terms() {
                a[i][j as usize] -= BigRational::from_integer(coef.into());
            }
            a[i][m] = BigRational::from_integer(c[i].clone());
        }
        for col in 0..m {
            let p = (col..m)
                .find(|&r| !a[r][col].is_zero())
                .expect("non-singular");
            a.swap(col, p);
            let pivot = a[col].clone();
            for (r, row) in a.iter_mut().enumerate() {
                if r != col && !row[col].is_zero() {
                    let f = &row[col] / &pivot[col];
                    for (x, p) in row.iter_mut().zip(&pivot).skip(col) {
                        *x -= &f * p;
                    }
                }
            }
        }
        (0..m).map(|i| &a[i][m] / &a[i][i]).collect()
    }

    fn rng(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        }
    }

    /// Strongly connected chains (a cycle through every row, a second target at random,
    /// some rows with an exit or a self-loop) with long right-hand sides: the elimination
    /// equals dense elimination over the rationals, and passes the check.
    #[test]
    fn elimination_equals_dense_rational_elimination() {
        for seed in 1..40u64 {
            let mut next = rng(seed);
            let m = 2 + (next() % 40) as u32;
            let rows: Vec<Row> = (0..m)
                .map(|i| {
                    let succ = (i + 1) % m;
                    match next() % 5 {
                        0 => row(2, &[(succ, 1)]),
                        1 => row(1, &[(succ, 1)]),
                        2 if m > 2 => row(2, &[(succ, 2)]),
                        _ => {
                            let other = (next() % m as u64) as u32;
                            if other == i || other == succ {
                                row(2, &[(succ, 1)])
                            } else {
                                row(2, &[(succ, 1), (other, 1)])
                            }
                        }
                    }
                })
                .collect();
            // Rows without an exit get a zero right-hand side; at least one row has an
            // exit (a row of diag 2 and one term), else the chain never leaves.
            if !rows
                .iter()
                .any(|r| r.diag as u32 > r.terms().iter().map(|t| t.1 as u32).sum::<u32>())
            {
                continue;
            }
            let c: Vec<BigInt> = rows
                .iter()
                .map(|r| {
                    let exit = r.diag as u32 > r.terms().iter().map(|t| t.1 as u32).sum::<u32>();
                    if exit {
                        BigInt::from(crate::value::long::test_number(1 + next() % 3000, next()))
                    } else {
                        BigInt::zero()
                    }
                })
                .collect();
            let x = solve(&rows, &c, &|| false).expect("small systems eliminate");
            assert!(check(&rows, &c, &x), "seed {seed}");
            let want = dense(&rows, &c);
            for (got, want) in x.iter().zip(&want) {
                assert_eq!(
                    BigRational::new(got.num.clone(), got.den.clone()),
                    *want,
                    "seed {seed}"
                );
                assert!(got.den.is_positive());
                assert!(got.num.gcd(&got.den).is_one());
            }
        }
    }

    /// A wrong solution fails the check; a singular system (a cycle with no exit) is given
    /// up, not solved.
    #[test]
    fn checks_and_gives_up() {
        let rows = [row(2, &[(1, 1)]), row(2, &[(0, 1)])];
        let c = [BigInt::from(3), BigInt::zero()];
        let x = solve(&rows, &c, &|| false).unwrap();
        // x0 = 2, x1 = 1: 2·2 − 1 = 3, 2·1 − 2 = 0.
        assert_eq!(
            x[0],
            Fraction {
                num: 2.into(),
                den: 1.into()
            }
        );
        assert!(check(&rows, &c, &x));
        let mut wrong = x.clone();
        wrong[1].num += 1;
        assert!(!check(&rows, &c, &wrong));
        let closed = [row(1, &[(1, 1)]), row(1, &[(0, 1)])];
        assert!(solve(&closed, &[BigInt::zero(), BigInt::zero()], &|| false).is_none());
    }

    /// The elimination gives a system up once a pivot's row has a coefficient longer than
    /// its bound (the refinement then solves it, as in the parent module's tests), and
    /// solves the same system within a bound it keeps to.
    #[test]
    fn long_coefficients_give_the_system_up() {
        let m = 60u32;
        let rows: Vec<Row> = (0..m)
            .map(|i| match i % 3 {
                0 => row(2, &[((i + 1) % m, 1)]),
                _ => row(2, &[((i + 1) % m, 1), ((i * 7) % m, 1)]),
            })
            .collect();
        let c: Vec<BigInt> = (0..m)
            .map(|i| BigInt::from(if i % 3 == 0 { 5 } else { 0 }))
            .collect();
        let x = solve(&rows, &c, &|| false).expect("coefficients within SHORT_BITS");
        assert!(check(&rows, &c, &x));
        assert_eq!(x, solve_within(&rows, &c, &|| false, 64).unwrap());
        assert!(solve_within(&rows, &c, &|| false, 4).is_none());
    }
}
