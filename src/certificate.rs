//! Checking the guesses: whether s is a Richman function, that is
//! `2 s(P) = max_w s(P_w) + min_b s(P_b)` exactly at every position (SPEC §2).
//!
//! A cheap filter on the 63-bit heads of the guesses' fixed-point images runs first: when
//! it finds a violation the equation certainly fails there. Only when no position fails the
//! filter is every equation checked in exact rational arithmetic.

use std::cmp::Ordering;

use rayon::prelude::*;

use crate::graph::Graph;
use crate::guess::{Guesses, Value};

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

/// Whether the heads alone prove that position `p`'s equation fails.
fn head_violation(g: &Guesses, graph: &Graph, p: usize) -> bool {
    let head = |i: u32| g.head(i as usize) as i128;
    let hw = graph.white(p).iter().map(|&t| head(t)).max().unwrap_or(0);
    let hb = graph.black(p).iter().map(|&t| head(t)).min().unwrap_or(0);
    // Each head is floor(s · 2^63): an equation that holds leaves |2·h_P − h_w − h_b| ≤ 2.
    (2 * head(p as u32) - hw - hb).abs() > 2
}

/// Whether position `p`'s equation holds, exactly.
pub fn equation_holds(g: &Guesses, graph: &Graph, p: usize) -> bool {
    let w = greedy_max(g, graph.white(p)) as usize;
    let b = greedy_min(g, graph.black(p)) as usize;
    g.value(p) * Value::from_integer(2u8.into()) == g.value(w) + g.value(b)
}

/// The positions whose equation fails, in increasing order. With `exact_only_if_clean`
/// the exact check runs only when the head filter finds nothing; otherwise the filter's
/// findings are returned (each is a certain violation, but the list may be incomplete).
pub fn violations(g: &Guesses, graph: &Graph, exact_only_if_clean: bool) -> Vec<u32> {
    let n = graph.positions();
    let filtered: Vec<u32> = (0..n)
        .into_par_iter()
        .filter(|&p| head_violation(g, graph, p))
        .map(|p| p as u32)
        .collect();
    if exact_only_if_clean && !filtered.is_empty() {
        return filtered;
    }
    (0..n)
        .into_par_iter()
        .filter(|&p| !equation_holds(g, graph, p))
        .map(|p| p as u32)
        .collect()
}
