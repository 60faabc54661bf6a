//! Checking the guesses: whether s is a Richman function, that is
//! `2 s(P) = max_w s(P_w) + min_b s(P_b)` exactly at every position (SPEC §2).
//!
//! Greedy options are found by comparing the guesses' fixed-point images (exact rationals
//! only where two images agree). A filter on the images, `2 S(P) − S(w) − S(b)` computed
//! exactly over all limbs, proves most violations; exact rational arithmetic decides the
//! positions it cannot.

use std::cmp::Ordering;

use rayon::prelude::*;

use crate::graph::Graph;
use crate::guess::Guesses;

/// Compare the guesses of nodes `i` and `j` exactly: by fixed-point image first, then as
/// rationals when the images agree.
fn cmp_guess(g: &Guesses, i: usize, j: usize) -> Ordering {
    if i == j {
        return Ordering::Equal;
    }
    if g.head(i) != g.head(j) {
        return g.head(i).cmp(&g.head(j));
    }
    let (a, b) = (g.fixed(i), g.fixed(j));
    for k in (0..a.len()).rev() {
        if a[k] != b[k] {
            return a[k].cmp(&b[k]);
        }
    }
    g.value(i).cmp(g.value(j))
}

/// White's best option by the guesses: the first node of `nodes` with the largest guess.
pub fn greedy_max(g: &Guesses, nodes: &[u32]) -> u32 {
    nodes
        .iter()
        .copied()
        .reduce(|best, t| {
            if cmp_guess(g, t as usize, best as usize) == Ordering::Greater {
                t
            } else {
                best
            }
        })
        .expect("every node has an option")
}

/// Black's best option by the guesses: the first node of `nodes` with the smallest guess.
pub fn greedy_min(g: &Guesses, nodes: &[u32]) -> u32 {
    nodes
        .iter()
        .copied()
        .reduce(|best, t| {
            if cmp_guess(g, t as usize, best as usize) == Ordering::Less {
                t
            } else {
                best
            }
        })
        .expect("every node has an option")
}

/// Whether the fixed-point images alone prove that position `p`'s equation fails, given
/// White's and Black's greedy options `w` and `b`.
///
/// With `S = floor(s · 2^F)` for each node, a holding equation `2 s(P) = s(w) + s(b)` leaves
/// `D = 2 S(P) − S(w) − S(b)` in {−1, 0, 1}; any other D is a certain violation.
fn image_violation(g: &Guesses, p: usize, w: usize, b: usize) -> bool {
    let (sp, sw, sb) = (g.fixed(p), g.fixed(w), g.fixed(b));
    let mut carry: i128 = 0;
    let (mut low, mut rest_zero, mut all_ones) = (0u64, true, true);
    for k in 0..sp.len() {
        let t = 2 * sp[k] as i128 - sw[k] as i128 - sb[k] as i128 + carry;
        let limb = t as u64;
        carry = t >> 64;
        if k == 0 {
            low = limb;
        } else {
            rest_zero &= limb == 0;
        }
        all_ones &= limb == u64::MAX;
    }
    let zero_or_one = carry == 0 && rest_zero && low <= 1;
    let minus_one = carry == -1 && all_ones;
    !(zero_or_one || minus_one)
}

/// Whether position `p`'s equation holds, exactly.
pub fn equation_holds(g: &Guesses, graph: &Graph, p: usize) -> bool {
    let w = greedy_max(g, graph.white(p)) as usize;
    let b = greedy_min(g, graph.black(p)) as usize;
    equation_holds_with(g, p, w, b)
}

/// `2·p/q = p1/q1 + p2/q2`, by cross-multiplication (no gcd).
fn equation_holds_with(g: &Guesses, p: usize, w: usize, b: usize) -> bool {
    let (x, y, z) = (g.value(p), g.value(w), g.value(b));
    let lhs = (x.numer() << 1u8) * y.denom() * z.denom();
    let rhs = x.denom() * (y.numer() * z.denom() + z.numer() * y.denom());
    lhs == rhs
}

/// The positions whose equation fails, in increasing order, checked exactly: the
/// fixed-point images rule out most positions, exact rational arithmetic decides the rest.
pub fn violations(g: &Guesses, graph: &Graph) -> Vec<u32> {
    (0..graph.positions())
        .into_par_iter()
        .filter(|&p| {
            let w = greedy_max(g, graph.white(p)) as usize;
            let b = greedy_min(g, graph.black(p)) as usize;
            image_violation(g, p, w, b) || !equation_holds_with(g, p, w, b)
        })
        .map(|p| p as u32)
        .collect()
}
