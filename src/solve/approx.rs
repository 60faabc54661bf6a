//! Floating-point approximations of the values, to choose strategies from. Nothing decided
//! here is trusted: the exact stage recomputes every value under the chosen strategies, and
//! the certificate proves them.
//!
//! Value iteration `v(P) ← (max_w v(P_w) + min_b v(P_b)) / 2` in place (Gauss–Seidel
//! order within each thread's block of positions), from 0 for α and from 1 for β: both
//! sequences are monotone, so a thread reading a neighbour's older or newer value still
//! converges to the same limit.

use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use super::{Bound, Game};

/// Approximate values of every node, and how they were reached.
#[derive(Debug)]
pub struct Approx {
    /// Per node (positions, then the win and loss nodes), the approximate value.
    pub values: Vec<f64>,
    /// Sweeps over all positions.
    pub sweeps: u32,
    /// The largest change in the last sweep.
    pub last_change: f64,
}

/// Iterate until no value moves by more than `tolerance` in a sweep, or `max_sweeps`.
/// Terminal nodes keep their values (as floating point).
pub fn iterate(game: Game<'_>, bound: Bound, tolerance: f64, max_sweeps: u32) -> Approx {
    let graph = game.graph;
    let n = graph.positions();
    let start = bound.stuck_value().to_f64();
    let cells: Vec<AtomicU64> = (0..graph.nodes())
        .map(|i| {
            let v = if i < n {
                start
            } else {
                game.terminal(i).to_f64()
            };
            AtomicU64::new(v.to_bits())
        })
        .collect();
    let get = |t: u32| f64::from_bits(cells[t as usize].load(Ordering::Relaxed));
    let mut sweeps = 0;
    let mut last_change = f64::INFINITY;
    while sweeps < max_sweeps && last_change > tolerance {
        last_change = (0..n)
            .into_par_iter()
            .with_min_len(4096)
            .map(|p| {
                let w = graph.white(p).iter().map(|&t| get(t)).fold(0.0, f64::max);
                let b = graph.black(p).iter().map(|&t| get(t)).fold(1.0, f64::min);
                let new = 0.5 * (w + b);
                let old = f64::from_bits(cells[p].swap(new.to_bits(), Ordering::Relaxed));
                (new - old).abs()
            })
            .reduce(|| 0.0, f64::max);
        sweeps += 1;
    }
    Approx {
        values: cells
            .into_iter()
            .map(|c| f64::from_bits(c.into_inner()))
            .collect(),
        sweeps,
        last_change,
    }
}
