//! Strategies: one White move and one Black move per position, the targets of the linear
//! system `x(P) = (x(W(P)) + x(B(P))) / 2`.
//!
//! The first strategies come from approximate values: among the moves within ε of the best,
//! the one with the lowest progress level in a closure built on those near-greedy moves (as
//! SPEC §2 builds T and T′ on the exactly greedy ones; greedy moves alone can circle).
//! Then [`switch`] changes, for one side, every choice that is strictly worse by the exact
//! values than the side's best move, and [`hold_off`] gives the opponent of a bound's
//! reacher, wherever it can keep the play away from every paying terminal forever, a move
//! that does so. When neither side switches, every equation holds: the chosen moves are
//! greedy and `x(P) = (x(W) + x(B)) / 2` by construction.

use std::cmp::Ordering;

use rayon::prelude::*;

use super::{Bound, Game};
use crate::certificate;
use crate::graph::{Adjacency, Graph};
use crate::value::Value;
use crate::value::arith::{cmp_shadowed, shadow};

/// One White and one Black target (a node of the graph) per position.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Strategies {
    /// White's chosen option, per position.
    pub white: Vec<u32>,
    /// Black's chosen option, per position.
    pub black: Vec<u32>,
}

/// A tie-break per node: lower is preferred (a progress level; `u32::MAX` if none).
pub type Levels = Vec<u32>;

/// Near-greedy options within `eps` of the best approximate value.
fn near_greedy(graph: &Graph, v: &[f64], eps: f64) -> (Adjacency, Adjacency) {
    let n = graph.positions();
    let lists: Vec<(Vec<u32>, Vec<u32>)> = (0..n)
        .into_par_iter()
        .map(|p| {
            let val = |t: &u32| v[*t as usize];
            let w = graph.white(p).iter().map(val).fold(f64::MIN, f64::max);
            let b = graph.black(p).iter().map(val).fold(f64::MAX, f64::min);
            let white = graph
                .white(p)
                .iter()
                .copied()
                .filter(|t| val(t) >= w - eps)
                .collect();
            let black = graph
                .black(p)
                .iter()
                .copied()
                .filter(|t| val(t) <= b + eps)
                .collect();
            (white, black)
        })
        .collect();
    let ends = || graph.terminals().map(|_| Vec::new());
    let white = Adjacency::from_lists(lists.iter().map(|l| l.0.clone()).chain(ends()));
    let black = Adjacency::from_lists(lists.into_iter().map(|l| l.1).chain(ends()));
    (white, black)
}

/// Pick, per position, the option of `candidates` with the lowest level, then the best
/// approximate value (`sign` +1: highest, −1: lowest), then the first.
fn pick(candidates: &Adjacency, levels: &[u32], v: &[f64], sign: f64, n: usize) -> Vec<u32> {
    (0..n)
        .into_par_iter()
        .map(|p| {
            *candidates
                .get(p)
                .iter()
                .min_by(|&&a, &&b| {
                    levels[a as usize].cmp(&levels[b as usize]).then_with(|| {
                        (sign * v[b as usize])
                            .partial_cmp(&(sign * v[a as usize]))
                            .unwrap_or(Ordering::Equal)
                    })
                })
                .expect("every position has an option")
        })
        .collect()
}

/// Strategies from approximate values `v` (one per node), with the levels used to break
/// ties (White's closure T for White, T′ for Black, built on the near-greedy options).
pub fn from_approx(game: Game<'_>, v: &[f64], eps: f64) -> (Strategies, Levels, Levels) {
    let graph = game.graph;
    let n = graph.positions();
    let (white, black) = near_greedy(graph, v, eps);
    let (lw, lb) = rayon::join(
        || certificate::closure(graph, &white, graph.black_adjacency(), &game.start.white),
        || certificate::closure(graph, &black, graph.white_adjacency(), &game.start.black),
    );
    let strategies = Strategies {
        white: pick(&white, &lw, v, 1.0, n),
        black: pick(&black, &lb, v, -1.0, n),
    };
    (strategies, lw, lb)
}

/// A side's options at position `p` and the order it wants (White the largest value).
fn side_options(graph: &Graph, p: usize, white: bool) -> (&[u32], Ordering) {
    if white {
        (graph.white(p), Ordering::Greater)
    } else {
        (graph.black(p), Ordering::Less)
    }
}

/// Among the options with the side's best exact value, the one with the lowest level,
/// keeping `now` where it is one of them.
fn tied_best(x: &Exact<'_>, options: &[u32], want: Ordering, levels: &[u32], now: u32) -> u32 {
    let best = x.best(options, want);
    options
        .iter()
        .copied()
        .filter(|&t| x.cmp(t, best) == Ordering::Equal)
        .min_by_key(|&t| (levels[t as usize], t != now))
        .unwrap_or(best)
}

/// Exact values with floating-point shadows, for fast exact comparisons.
pub struct Exact<'a> {
    values: Vec<&'a Value>,
    approx: Vec<f64>,
}

impl<'a> Exact<'a> {
    /// Wrap the exact value of every node.
    pub fn new(values: impl Iterator<Item = &'a Value>) -> Exact<'a> {
        let values: Vec<&Value> = values.collect();
        let approx = values.par_iter().map(|v| shadow(v)).collect();
        Exact { values, approx }
    }

    /// Compare the values of nodes `i` and `j` exactly.
    pub fn cmp(&self, i: u32, j: u32) -> Ordering {
        if i == j {
            return Ordering::Equal;
        }
        let (i, j) = (i as usize, j as usize);
        cmp_shadowed(
            self.values[i],
            self.approx[i],
            self.values[j],
            self.approx[j],
        )
    }

    /// The first of `options` with the `want`-most value (Greater: largest, Less: smallest).
    pub fn best(&self, options: &[u32], want: Ordering) -> u32 {
        options
            .iter()
            .copied()
            .reduce(|best, t| if self.cmp(t, best) == want { t } else { best })
            .expect("every position has an option")
    }
}

/// Where the opponent of `bound`'s reacher (Black for α, White for β) can keep the play
/// away from every paying terminal forever against the reacher's chosen moves, give it a
/// move that does (keeping its choice where it already does). A terminal *pays* when its
/// value differs from the bound's stuck value (positive for α, below 1 for β).
///
/// Those positions are the complement of an attractor: a position is *drawn in* when it is
/// a paying terminal, when the reacher's chosen move leads to a drawn-in node, or when all
/// of the opponent's moves do. The rest is worth the stuck value under the opponent's best
/// reply, and from everywhere else every opponent strategy ends the play with probability
/// 1 (a closed set of positions that it could stay in would not be drawn in). Returns how
/// many positions can be held off.
pub fn hold_off(game: Game<'_>, strategies: &mut Strategies, bound: Bound) -> usize {
    let graph = game.graph;
    let n = graph.positions();
    let stuck = bound.stuck_value();
    let white_reaches = bound.white_reaches();
    let (reacher_choice, opponent_lists) = if white_reaches {
        (&strategies.white, graph.black_adjacency())
    } else {
        (&strategies.black, graph.white_adjacency())
    };
    let mut drawn = vec![false; graph.nodes()];
    let mut stack: Vec<u32> = Vec::new();
    for t in graph.terminals() {
        if *game.terminal(t) != stuck {
            drawn[t] = true;
            stack.push(t as u32);
        }
    }
    // Reverse edges: the reacher's chosen move and every opponent move.
    let chosen = Adjacency::from_lists(
        reacher_choice
            .iter()
            .map(|&t| vec![t])
            .chain(graph.terminals().map(|_| Vec::new())),
    )
    .reversed(graph.nodes());
    let all = opponent_lists.reversed(graph.nodes());
    let mut remaining: Vec<u32> = (0..n).map(|p| opponent_lists.get(p).len() as u32).collect();
    while let Some(x) = stack.pop() {
        let x = x as usize;
        for &p in chosen.get(x) {
            let p = p as usize;
            if p < n && !drawn[p] {
                drawn[p] = true;
                stack.push(p as u32);
            }
        }
        for &p in all.get(x) {
            let p = p as usize;
            if p < n {
                remaining[p] -= 1;
                if remaining[p] == 0 && !drawn[p] {
                    drawn[p] = true;
                    stack.push(p as u32);
                }
            }
        }
    }
    let opponent = if white_reaches {
        &mut strategies.black
    } else {
        &mut strategies.white
    };
    let mut held = 0;
    for (p, choice) in opponent.iter_mut().enumerate() {
        if drawn[p] {
            continue;
        }
        held += 1;
        if drawn[*choice as usize] {
            *choice = *opponent_lists
                .get(p)
                .iter()
                .find(|&&t| !drawn[t as usize])
                .expect("a position not drawn in has a move that is not");
        }
    }
    held
}

/// Switch every choice of one side (`white`) that is strictly worse than the side's best
/// option by the exact values `x` to a best option (the one with the lowest tie-break
/// level, keeping the current choice where it is one). Returns how many switched.
pub fn switch(
    graph: &Graph,
    x: &Exact<'_>,
    choices: &mut [u32],
    white: bool,
    levels: &[u32],
) -> usize {
    choices
        .par_iter_mut()
        .enumerate()
        .map(|(p, now)| {
            let (options, want) = side_options(graph, p, white);
            if x.cmp(x.best(options, want), *now) != want {
                return 0;
            }
            *now = tied_best(x, options, want, levels, *now);
            1
        })
        .sum()
}
