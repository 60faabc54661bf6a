//! Exact values of a finite random-turn game given as an abstract graph.
//!
//! A [`Game`] has nodes `0..n`. At every node each player has a non-empty list of options; an
//! option leads to a node ([`Succ::Node`]) or to a leaf ([`Succ::Leaf`]) whose payoff (a
//! rational in `[0, 1]`) is given separately, so that the same graph serves both bounds. The
//! value equation is `x(p) = (max over White's options + min over Black's options) / 2`.
//! [`least_fixed_point`] returns the least solution (infinite play pays 0, that is alpha) and
//! [`greatest_fixed_point`] the greatest one (infinite play pays 1, that is beta). The method
//! and the proof that it is right are in the comment of the parent module.

use num_bigint::BigUint;
use num_traits::{One, ToPrimitive, Zero};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use super::Q;

/// Where an option leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Succ {
    /// A node of the game (possibly the node itself).
    Node(usize),
    /// A leaf: the game ends with the payoff of this index in the payoff slice.
    Leaf(usize),
}

/// A game graph: the options of White (the maximiser) and Black (the minimiser) at every node.
#[derive(Clone, Debug, Default)]
pub struct Game {
    /// `white[p]`: White's options at node `p`; never empty.
    pub white: Vec<Vec<Succ>>,
    /// `black[p]`: Black's options at node `p`; never empty.
    pub black: Vec<Vec<Succ>>,
}

/// Where strategy iteration starts. The result does not depend on it, only the work does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// Strategies read off a floating-point value iteration (fast).
    Heuristic,
    /// The first option of every list (slow; for testing that the start does not matter).
    FirstOptions,
}

/// The least solution of the value equations: alpha, where play that never reaches a leaf is
/// worth 0. Panics if the independent certificate (see the parent module) fails.
pub fn least_fixed_point(game: &Game, payoff: &[Q]) -> Vec<Q> {
    least_fixed_point_from(game, payoff, Start::Heuristic)
}

/// The greatest solution of the value equations: beta, where play that never reaches a leaf
/// is worth 1. It is `1 - y` where `y` is the least solution of the game seen from Black
/// (Black maximises `1 - x`, leaves pay `1 - payoff`).
pub fn greatest_fixed_point(game: &Game, payoff: &[Q]) -> Vec<Q> {
    greatest_fixed_point_from(game, payoff, Start::Heuristic)
}

/// [`least_fixed_point`] with a choice of starting strategies.
pub fn least_fixed_point_from(game: &Game, payoff: &[Q], start: Start) -> Vec<Q> {
    check_game(game, payoff);
    certified_least(&game.white, &game.black, payoff, start)
}

/// [`greatest_fixed_point`] with a choice of starting strategies.
pub fn greatest_fixed_point_from(game: &Game, payoff: &[Q], start: Start) -> Vec<Q> {
    check_game(game, payoff);
    let flipped: Vec<Q> = payoff.iter().map(|v| Q::one() - v).collect();
    let y = certified_least(&game.black, &game.white, &flipped, start);
    y.iter().map(|v| Q::one() - v).collect()
}

/// The least fixed point with the maximiser's options `max_opts`, checked by the certificate.
fn certified_least(
    max_opts: &[Vec<Succ>],
    min_opts: &[Vec<Succ>],
    payoff: &[Q],
    start: Start,
) -> Vec<Q> {
    let (sigma, tau) = match start {
        Start::Heuristic => starting_strategies(max_opts, min_opts, payoff),
        Start::FirstOptions => (vec![0; max_opts.len()], vec![0; max_opts.len()]),
    };
    let (x, sigma) = strategy_iteration(max_opts, min_opts, payoff, sigma, tau);
    assert!(
        certify_least(max_opts, min_opts, payoff, &x, &sigma),
        "least fixed point certificate failed"
    );
    x
}

/// True if `x` solves every value equation exactly: for every node,
/// `2 x(p) = max over White's options + min over Black's options`, and `0 <= x <= 1`.
pub fn is_fixed_point(game: &Game, payoff: &[Q], x: &[Q]) -> bool {
    solves(&game.white, &game.black, payoff, x)
}

/// True if `2 x(p) = max over max_opts[p] + min over min_opts[p]` at every node, exactly, and
/// `x <= 1` (`x >= 0` holds for the type).
fn solves(max_opts: &[Vec<Succ>], min_opts: &[Vec<Succ>], payoff: &[Q], x: &[Q]) -> bool {
    assert_eq!(x.len(), max_opts.len());
    if x.iter().any(|v| *v > Q::one()) {
        return false;
    }
    let val = Valuation::new(x, payoff);
    (0..x.len()).all(|p| {
        let w = val.get(val.best(&max_opts[p], 0, Ordering::Greater));
        let b = val.get(val.best(&min_opts[p], 0, Ordering::Less));
        (w + b) == &x[p] + &x[p]
    })
}

fn check_game(game: &Game, payoff: &[Q]) {
    assert_eq!(game.white.len(), game.black.len());
    assert!(payoff.iter().all(|v| *v <= Q::one()), "payoff above 1");
    for options in game.white.iter().chain(&game.black) {
        assert!(!options.is_empty(), "a player without options");
        for s in options {
            match *s {
                Succ::Node(j) => assert!(j < game.white.len()),
                Succ::Leaf(l) => assert!(l < payoff.len()),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Exact values with a fast, sound comparison.

/// Node values and leaf payoffs, with `f64` approximations used only to order two values whose
/// approximations are far apart (each approximation is within 1e-15 of the exact value, so a
/// gap above `MARGIN` decides the order for sure); closer values are compared exactly.
struct Valuation<'a> {
    nodes: &'a [Q],
    leaves: &'a [Q],
    nodes_f: Vec<f64>,
    leaves_f: Vec<f64>,
}

const MARGIN: f64 = 1e-9;

/// `q` as an `f64`, within 1e-15 of it for `q` in `[0, 1]`: numerator and denominator are
/// cut to the top 64 bits of the denominator (an error below 2^-63), then converted.
fn approx(q: &Q) -> f64 {
    assert!(*q <= Q::one(), "values lie in [0, 1]");
    let shift = q.denom().bits().saturating_sub(64);
    let n: BigUint = q.numer() >> shift;
    let d: BigUint = q.denom() >> shift;
    n.to_f64().expect("finite") / d.to_f64().expect("finite")
}

impl<'a> Valuation<'a> {
    fn new(nodes: &'a [Q], leaves: &'a [Q]) -> Self {
        Valuation {
            nodes,
            leaves,
            nodes_f: nodes.iter().map(approx).collect(),
            leaves_f: leaves.iter().map(approx).collect(),
        }
    }

    fn get(&self, s: Succ) -> &'a Q {
        match s {
            Succ::Node(j) => &self.nodes[j],
            Succ::Leaf(l) => &self.leaves[l],
        }
    }

    fn cmp(&self, a: Succ, b: Succ) -> Ordering {
        let f = |s| match s {
            Succ::Node(j) => self.nodes_f[j],
            Succ::Leaf(l) => self.leaves_f[l],
        };
        let (fa, fb) = (f(a), f(b));
        if fa > fb + MARGIN {
            Ordering::Greater
        } else if fb > fa + MARGIN {
            Ordering::Less
        } else {
            self.get(a).cmp(self.get(b))
        }
    }

    /// The option that is best in direction `want` (Greater: largest, Less: smallest); among
    /// equally good options the one at index `keep` is preferred, then the first.
    fn best_index(&self, options: &[Succ], keep: usize, want: Ordering) -> usize {
        let mut best = keep;
        for (k, &s) in options.iter().enumerate() {
            if self.cmp(s, options[best]) == want {
                best = k;
            }
        }
        best
    }

    fn best(&self, options: &[Succ], keep: usize, want: Ordering) -> Succ {
        options[self.best_index(options, keep, want)]
    }
}

// ---------------------------------------------------------------------------------------------
// Strategy iteration.

/// Least fixed point of `x(p) = (max over max_opts[p] + min over min_opts[p]) / 2`, with an
/// optimal strategy of the maximiser. Strategy iteration for the maximiser; every strategy is
/// evaluated by the minimiser's exact best response. Starts from any strategies `sigma` of the
/// maximiser and `tau` of the minimiser.
fn strategy_iteration(
    max_opts: &[Vec<Succ>],
    min_opts: &[Vec<Succ>],
    payoff: &[Q],
    mut sigma: Vec<usize>,
    mut tau: Vec<usize>,
) -> (Vec<Q>, Vec<usize>) {
    let n = max_opts.len();
    let preds = Predecessors::new(max_opts, min_opts);
    loop {
        let zero = avoid_set(max_opts, min_opts, payoff, &sigma, &preds);
        let x = best_response(max_opts, min_opts, payoff, &sigma, &zero, &mut tau);
        let val = Valuation::new(&x, payoff);
        let mut switched = false;
        for p in 0..n {
            let best = val.best_index(&max_opts[p], sigma[p], Ordering::Greater);
            if best != sigma[p] {
                sigma[p] = best;
                switched = true;
            }
        }
        if !switched {
            return (x, sigma);
        }
    }
}

/// The minimiser's optimal values against the fixed maximiser strategy `sigma`: 0 on the
/// avoid set `zero`, and elsewhere the result of the minimiser's strategy iteration, which
/// starts from `tau` and leaves its final strategy there.
fn best_response(
    max_opts: &[Vec<Succ>],
    min_opts: &[Vec<Succ>],
    payoff: &[Q],
    sigma: &[usize],
    zero: &[bool],
    tau: &mut [usize],
) -> Vec<Q> {
    loop {
        let x = evaluate_chain(max_opts, min_opts, payoff, sigma, tau, zero);
        let val = Valuation::new(&x, payoff);
        let mut switched = false;
        for p in (0..x.len()).filter(|&p| !zero[p]) {
            let best = val.best_index(&min_opts[p], tau[p], Ordering::Less);
            if best != tau[p] {
                tau[p] = best;
                switched = true;
            }
        }
        if !switched {
            return x;
        }
    }
}

/// Reverse edges: for every node, the (node, option index) pairs of the maximiser and the
/// nodes (once per option) of the minimiser that lead to it.
struct Predecessors {
    max: Vec<Vec<(usize, usize)>>,
    min: Vec<Vec<usize>>,
}

impl Predecessors {
    fn new(max_opts: &[Vec<Succ>], min_opts: &[Vec<Succ>]) -> Self {
        let n = max_opts.len();
        let mut preds = Predecessors {
            max: vec![Vec::new(); n],
            min: vec![Vec::new(); n],
        };
        for p in 0..n {
            for (k, s) in max_opts[p].iter().enumerate() {
                if let Succ::Node(q) = *s {
                    preds.max[q].push((p, k));
                }
            }
            for s in &min_opts[p] {
                if let Succ::Node(q) = *s {
                    preds.min[q].push(p);
                }
            }
        }
        preds
    }
}

/// The nodes from which the minimiser can keep the play away from every leaf of positive
/// payoff forever when the maximiser plays `sigma`: the greatest set S such that at every node
/// of S, `sigma` stays in S (or goes to a leaf paying 0) and some minimiser option does too.
/// Computed by removing, until nothing changes, the nodes that violate this.
fn avoid_set(
    max_opts: &[Vec<Succ>],
    min_opts: &[Vec<Succ>],
    payoff: &[Q],
    sigma: &[usize],
    preds: &Predecessors,
) -> Vec<bool> {
    let n = max_opts.len();
    let safe_leaf = |s: &Succ| matches!(*s, Succ::Leaf(l) if payoff[l].is_zero());
    let mut inside = vec![true; n];
    // Minimiser options at each node that stay in S (nodes of S, or leaves paying 0).
    let mut staying: Vec<usize> = min_opts
        .iter()
        .map(|opts| {
            opts.iter()
                .filter(|s| safe_leaf(s) || matches!(s, Succ::Node(_)))
                .count()
        })
        .collect();
    let mut removed = Vec::new();
    for p in 0..n {
        let leaves_by_sigma = match max_opts[p][sigma[p]] {
            s @ Succ::Leaf(_) => !safe_leaf(&s),
            Succ::Node(_) => false,
        };
        if leaves_by_sigma || staying[p] == 0 {
            inside[p] = false;
            removed.push(p);
        }
    }
    while let Some(q) = removed.pop() {
        for &(p, k) in &preds.max[q] {
            if inside[p] && sigma[p] == k {
                inside[p] = false;
                removed.push(p);
            }
        }
        for &p in &preds.min[q] {
            if inside[p] {
                staying[p] -= 1;
                if staying[p] == 0 {
                    inside[p] = false;
                    removed.push(p);
                }
            }
        }
    }
    inside
}

/// Exact values of the Markov chain in which every node outside `zero` moves to its `sigma`
/// and `tau` options with probability 1/2 each; nodes of `zero` are worth 0. The chain must be
/// absorbing outside `zero` (it is when `zero` is the avoid set of `sigma`), which makes the
/// linear system nonsingular. Solved one strongly connected component at a time, sinks first.
fn evaluate_chain(
    max_opts: &[Vec<Succ>],
    min_opts: &[Vec<Succ>],
    payoff: &[Q],
    sigma: &[usize],
    tau: &[usize],
    zero: &[bool],
) -> Vec<Q> {
    let n = max_opts.len();
    let succ = |p: usize| [max_opts[p][sigma[p]], min_opts[p][tau[p]]];
    // Successor nodes of p in the chain restricted to the unknown (non-zero) nodes.
    let unknown_succ = |p: usize| {
        succ(p).map(|s| match s {
            Succ::Node(j) if !zero[j] => Some(j),
            _ => None,
        })
    };
    let mut x: Vec<Option<Q>> = vec![None; n];
    for p in (0..n).filter(|&p| zero[p]) {
        x[p] = Some(Q::zero());
    }
    let half = Q::new(BigUint::one(), BigUint::from(2u8));
    for comp in strongly_connected_components(n, |p| !zero[p], unknown_succ) {
        // Every successor outside the component is known already (sinks come first).
        let known = |s: Succ, x: &[Option<Q>]| -> Q {
            match s {
                Succ::Leaf(l) => payoff[l].clone(),
                Succ::Node(j) => x[j].clone().expect("solved before"),
            }
        };
        if comp.len() == 1 && !unknown_succ(comp[0]).contains(&Some(comp[0])) {
            let p = comp[0];
            let [a, b] = succ(p);
            let v = (known(a, &x) + known(b, &x)) * &half;
            x[p] = Some(v);
            continue;
        }
        let local: BTreeMap<usize, usize> = comp.iter().enumerate().map(|(i, &p)| (p, i)).collect();
        let mut rows = vec![BTreeMap::new(); comp.len()];
        let mut consts = vec![Q::zero(); comp.len()];
        for (i, &p) in comp.iter().enumerate() {
            for s in succ(p) {
                match s {
                    Succ::Node(j) if local.contains_key(&j) => {
                        *rows[i].entry(local[&j]).or_insert_with(Q::zero) += &half;
                    }
                    _ => consts[i] += known(s, &x) * &half,
                }
            }
        }
        for (i, v) in solve_transient(rows, consts).into_iter().enumerate() {
            x[comp[i]] = Some(v);
        }
    }
    x.into_iter()
        .map(|v| v.expect("every node solved"))
        .collect()
}

/// Solves `x_i = sum_j rows[i][j] x_j + consts[i]` exactly, where the weights are
/// non-negative, each row sums to at most 1 and the chain they describe is absorbing (so the
/// system has exactly one solution). Gaussian elimination in the form of Markov-chain state
/// elimination: removing state p redirects every path through p, so all numbers stay
/// non-negative and a self-loop weight of p stays below 1. States are removed in a greedy
/// fewest-fill-in order; then values are substituted back in reverse order.
fn solve_transient(mut rows: Vec<BTreeMap<usize, Q>>, mut consts: Vec<Q>) -> Vec<Q> {
    let m = rows.len();
    let mut preds: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); m];
    for (i, row) in rows.iter().enumerate() {
        for &j in row.keys().filter(|&&j| j != i) {
            preds[j].insert(i);
        }
    }
    let mut eliminated = vec![false; m];
    let mut order = Vec::with_capacity(m);
    for _ in 0..m {
        let p = (0..m)
            .filter(|&i| !eliminated[i])
            .min_by_key(|&i| preds[i].len() * rows[i].len())
            .expect("a state is left");
        // x_p = w x_p + rest  =>  x_p = rest / (1 - w).
        if let Some(w) = rows[p].remove(&p) {
            assert!(w < Q::one(), "chain not absorbing");
            let scale = Q::one() / (Q::one() - w);
            for v in rows[p].values_mut() {
                *v *= &scale;
            }
            consts[p] *= &scale;
        }
        let row_p = std::mem::take(&mut rows[p]);
        for q in std::mem::take(&mut preds[p]) {
            let w = rows[q].remove(&p).expect("predecessor row refers to p");
            for (&s, w_ps) in &row_p {
                *rows[q].entry(s).or_insert_with(Q::zero) += &w * w_ps;
                if s != q {
                    preds[s].insert(q);
                }
            }
            let add = &w * &consts[p];
            consts[q] += add;
        }
        for s in row_p.keys() {
            preds[*s].remove(&p);
        }
        rows[p] = row_p;
        eliminated[p] = true;
        order.push(p);
    }
    // Every state in rows[p] was eliminated after p, so it is known when p is substituted.
    let mut x: Vec<Option<Q>> = vec![None; m];
    for &p in order.iter().rev() {
        let mut v = consts[p].clone();
        for (&s, w) in &rows[p] {
            v += w * x[s].as_ref().expect("eliminated later");
        }
        x[p] = Some(v);
    }
    x.into_iter().map(|v| v.expect("solved")).collect()
}

/// Strongly connected components of the graph on the nodes with `member(p)`, each node having
/// up to two successors `succ(p)` (all members), in reverse topological order: a component
/// comes after every component it has an edge to. Tarjan's algorithm without recursion.
fn strongly_connected_components(
    n: usize,
    member: impl Fn(usize) -> bool,
    succ: impl Fn(usize) -> [Option<usize>; 2],
) -> Vec<Vec<usize>> {
    const NONE: usize = usize::MAX;
    let mut index = vec![NONE; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut next = 0;
    let mut comps = Vec::new();
    for root in (0..n).filter(|&r| member(r)) {
        if index[root] != NONE {
            continue;
        }
        // Call stack of (node, index of the next successor to look at).
        let mut calls = vec![(root, 0usize)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(top) = calls.last_mut() {
            let v = top.0;
            if top.1 < 2 {
                let e = top.1;
                top.1 += 1;
                if let Some(w) = succ(v)[e] {
                    if index[w] == NONE {
                        index[w] = next;
                        low[w] = next;
                        next += 1;
                        stack.push(w);
                        on_stack[w] = true;
                        calls.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == index[v] {
                let mut comp = Vec::new();
                loop {
                    let w = stack.pop().expect("v is on the stack");
                    on_stack[w] = false;
                    comp.push(w);
                    if w == v {
                        break;
                    }
                }
                comps.push(comp);
            }
        }
    }
    comps
}

/// Starting strategies from floating-point value iteration from 0 (in place), each player
/// keeping its option unless another is better by more than a small margin, so that a
/// strategy tends to keep the option through which value first arrived. Only a heuristic:
/// the result of the strategy iteration does not depend on it.
fn starting_strategies(
    max_opts: &[Vec<Succ>],
    min_opts: &[Vec<Succ>],
    payoff: &[Q],
) -> (Vec<usize>, Vec<usize>) {
    let n = max_opts.len();
    let leaf: Vec<f64> = payoff.iter().map(approx).collect();
    let mut x = vec![0.0f64; n];
    let mut sigma = vec![0usize; n];
    let mut tau = vec![0usize; n];
    for _sweep in 0..2000 {
        let mut change = 0.0f64;
        for p in 0..n {
            let v = |s: Succ, x: &[f64]| match s {
                Succ::Node(j) => x[j],
                Succ::Leaf(l) => leaf[l],
            };
            let mut w = v(max_opts[p][sigma[p]], &x);
            for (k, &s) in max_opts[p].iter().enumerate() {
                if v(s, &x) > w + 1e-12 {
                    w = v(s, &x);
                    sigma[p] = k;
                }
            }
            let mut b = v(min_opts[p][tau[p]], &x);
            for (k, &s) in min_opts[p].iter().enumerate() {
                if v(s, &x) < b - 1e-12 {
                    b = v(s, &x);
                    tau[p] = k;
                }
            }
            let new = (w + b) / 2.0;
            change = change.max((new - x[p]).abs());
            x[p] = new;
        }
        if change < 1e-13 {
            break;
        }
    }
    (sigma, tau)
}

// ---------------------------------------------------------------------------------------------
// The certificate.

/// Checks, independently of how `x` was found, that `x` is the least fixed point: `x` solves
/// every equation exactly, `sigma` picks at every node an option of maximal value, and `x` is
/// 0 on the avoid set of `sigma`. (Proof in the parent module's comment.)
fn certify_least(
    max_opts: &[Vec<Succ>],
    min_opts: &[Vec<Succ>],
    payoff: &[Q],
    x: &[Q],
    sigma: &[usize],
) -> bool {
    if !solves(max_opts, min_opts, payoff, x) {
        return false;
    }
    let val = Valuation::new(x, payoff);
    let greedy = (0..x.len()).all(|p| {
        let best = val.best(&max_opts[p], sigma[p], Ordering::Greater);
        val.get(best) == val.get(max_opts[p][sigma[p]])
    });
    let preds = Predecessors::new(max_opts, min_opts);
    let zero = avoid_set(max_opts, min_opts, payoff, sigma, &preds);
    greedy && (0..x.len()).all(|p| !zero[p] || x[p].is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;
    use num_rational::BigRational;

    fn q(n: u32, d: u32) -> Q {
        Q::new(BigUint::from(n), BigUint::from(d))
    }

    fn game(white: &[&[Succ]], black: &[&[Succ]]) -> Game {
        Game {
            white: white.iter().map(|o| o.to_vec()).collect(),
            black: black.iter().map(|o| o.to_vec()).collect(),
        }
    }

    use Succ::{Leaf, Node};

    #[test]
    fn pure_cycle_has_alpha_0_and_beta_1() {
        let g = game(&[&[Node(1)], &[Node(0)]], &[&[Node(1)], &[Node(0)]]);
        let pay = [q(0, 1), q(1, 1)];
        assert_eq!(least_fixed_point(&g, &pay), vec![q(0, 1), q(0, 1)]);
        assert_eq!(greatest_fixed_point(&g, &pay), vec![q(1, 1), q(1, 1)]);
    }

    #[test]
    fn self_loops_without_options() {
        // Node 0: both players have only the node itself; node 1: White can reach 1.
        let g = game(
            &[&[Node(0)], &[Leaf(1), Node(0)]],
            &[&[Node(0)], &[Node(1)]],
        );
        let pay = [q(0, 1), q(1, 1)];
        assert_eq!(least_fixed_point(&g, &pay), vec![q(0, 1), q(1, 1)]);
        assert_eq!(greatest_fixed_point(&g, &pay), vec![q(1, 1), q(1, 1)]);
    }

    #[test]
    fn cycle_beside_exits() {
        // A = (B + 0) / 2, B = (1 + A) / 2: A = 1/3, B = 2/3, the only solution.
        let g = game(&[&[Node(1)], &[Leaf(1)]], &[&[Leaf(0)], &[Node(0)]]);
        let pay = [q(0, 1), q(1, 1)];
        assert_eq!(least_fixed_point(&g, &pay), vec![q(1, 3), q(2, 3)]);
        assert_eq!(greatest_fixed_point(&g, &pay), vec![q(1, 3), q(2, 3)]);
    }

    #[test]
    fn greedy_loop_is_not_the_answer() {
        // A: White to B or to a leaf worth 1/2; Black to B. B: both to A. Every value
        // A = B in [1/2, 1] solves the equations: alpha = 1/2, beta = 1. White's loop A -> B
        // is as good as the leaf for beta but worth 0 for alpha.
        let g = game(
            &[&[Node(1), Leaf(1)], &[Node(0)]],
            &[&[Node(1)], &[Node(0)]],
        );
        let pay = [q(0, 1), q(1, 2)];
        assert_eq!(least_fixed_point(&g, &pay), vec![q(1, 2), q(1, 2)]);
        assert_eq!(greatest_fixed_point(&g, &pay), vec![q(1, 1), q(1, 1)]);
    }

    #[test]
    fn elimination_solves_a_dense_system() {
        // x_i = (x_{i+1} + x_{i+2}) / 3 + i / 10 on a 3-cycle; check by substitution.
        let third = q(1, 3);
        let mut rows = vec![BTreeMap::new(); 3];
        for (i, row) in rows.iter_mut().enumerate() {
            row.insert((i + 1) % 3, third.clone());
            row.insert((i + 2) % 3, third.clone());
        }
        let consts: Vec<Q> = (0..3).map(|i| q(i, 10)).collect();
        let x = solve_transient(rows.clone(), consts.clone());
        for i in 0..3 {
            let rhs: Q = rows[i].iter().map(|(&j, w)| w * &x[j]).sum::<Q>() + &consts[i];
            assert_eq!(x[i], rhs);
        }
    }

    /// A small deterministic pseudo-random generator (no dependency needed).
    struct Lcg(u64);
    impl Lcg {
        fn below(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % n as u64) as usize
        }
    }

    /// Value of the chain (sigma, tau) when play that never ends pays 0: nodes that cannot
    /// reach a positive leaf are 0, the others solve a nonsingular system (dense, exact).
    fn chain_value(g: &Game, pay: &[Q], sigma: &[usize], tau: &[usize]) -> Vec<Q> {
        let n = g.white.len();
        let succ = |p: usize| [g.white[p][sigma[p]], g.black[p][tau[p]]];
        let mut good = vec![false; n];
        loop {
            let mut changed = false;
            for p in 0..n {
                let reaches = succ(p).iter().any(|s| match *s {
                    Leaf(l) => !pay[l].is_zero(),
                    Node(j) => good[j],
                });
                if reaches && !good[p] {
                    good[p] = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        let vars: Vec<usize> = (0..n).filter(|&p| good[p]).collect();
        let m = vars.len();
        let to_big = |v: &Q| {
            BigRational::new(
                BigInt::from(v.numer().clone()),
                BigInt::from(v.denom().clone()),
            )
        };
        // Augmented matrix of 2 x_p - (succ values) = known values.
        let mut a = vec![vec![BigRational::zero(); m + 1]; m];
        for (i, &p) in vars.iter().enumerate() {
            a[i][i] += BigRational::from_integer(2.into());
            for s in succ(p) {
                match s {
                    Leaf(l) => a[i][m] += to_big(&pay[l]),
                    Node(j) => {
                        if let Some(k) = vars.iter().position(|&v| v == j) {
                            a[i][k] -= BigRational::one();
                        }
                    }
                }
            }
        }
        for c in 0..m {
            let r = (c..m).find(|&r| !a[r][c].is_zero()).expect("nonsingular");
            a.swap(c, r);
            let pivot = a[c][c].clone();
            for v in a[c].iter_mut() {
                *v /= &pivot;
            }
            let pivot_row = a[c].clone();
            for (r, row) in a.iter_mut().enumerate() {
                if r != c && !row[c].is_zero() {
                    let f = row[c].clone();
                    for (v, p) in row.iter_mut().zip(&pivot_row) {
                        *v -= &f * p;
                    }
                }
            }
        }
        let mut x = vec![Q::zero(); n];
        for (i, &p) in vars.iter().enumerate() {
            let v = &a[i][m];
            x[p] = Q::new(
                v.numer().to_biguint().unwrap(),
                v.denom().to_biguint().unwrap(),
            );
        }
        x
    }

    fn all_strategies(opts: &[Vec<Succ>]) -> Vec<Vec<usize>> {
        let mut all = vec![vec![]];
        for o in opts {
            all = all
                .into_iter()
                .flat_map(|s| {
                    (0..o.len()).map(move |k| {
                        let mut s = s.clone();
                        s.push(k);
                        s
                    })
                })
                .collect();
        }
        all
    }

    /// alpha = max over White's positional strategies of min over Black's (reachability games
    /// have optimal positional strategies), by brute force.
    fn brute_alpha(g: &Game, pay: &[Q]) -> Vec<Q> {
        let n = g.white.len();
        let mut best: Vec<Option<Q>> = vec![None; n];
        let taus = all_strategies(&g.black);
        for sigma in all_strategies(&g.white) {
            let mut worst: Vec<Option<Q>> = vec![None; n];
            for tau in &taus {
                let v = chain_value(g, pay, &sigma, tau);
                for p in 0..n {
                    if worst[p].as_ref().is_none_or(|w| v[p] < *w) {
                        worst[p] = Some(v[p].clone());
                    }
                }
            }
            for p in 0..n {
                let w = worst[p].clone().unwrap();
                if best[p].as_ref().is_none_or(|b| w > *b) {
                    best[p] = Some(w);
                }
            }
        }
        best.into_iter().map(Option::unwrap).collect()
    }

    #[test]
    fn random_small_games_match_brute_force() {
        let mut rng = Lcg(7);
        let leaf_pay = [q(0, 1), q(1, 1), q(1, 3), q(2, 5), q(3, 4)];
        let mut gaps = 0;
        for _ in 0..300 {
            let n = 1 + rng.below(4);
            let options = |rng: &mut Lcg| -> Vec<Vec<Succ>> {
                (0..n)
                    .map(|_| {
                        (0..1 + rng.below(2))
                            .map(|_| {
                                if rng.below(3) == 0 {
                                    Leaf(rng.below(leaf_pay.len()))
                                } else {
                                    Node(rng.below(n))
                                }
                            })
                            .collect()
                    })
                    .collect()
            };
            let g = Game {
                white: options(&mut rng),
                black: options(&mut rng),
            };
            let alpha = least_fixed_point(&g, &leaf_pay);
            assert_eq!(alpha, brute_alpha(&g, &leaf_pay), "{g:?}");
            assert_eq!(
                alpha,
                least_fixed_point_from(&g, &leaf_pay, Start::FirstOptions)
            );
            // beta through the mirror game, brute force as well.
            let flipped: Vec<Q> = leaf_pay.iter().map(|v| Q::one() - v).collect();
            let mirror = Game {
                white: g.black.clone(),
                black: g.white.clone(),
            };
            let beta_brute: Vec<Q> = brute_alpha(&mirror, &flipped)
                .iter()
                .map(|v| Q::one() - v)
                .collect();
            let beta = greatest_fixed_point(&g, &leaf_pay);
            assert_eq!(beta, beta_brute, "{g:?}");
            assert_eq!(
                beta,
                greatest_fixed_point_from(&g, &leaf_pay, Start::FirstOptions)
            );
            gaps += alpha.iter().zip(&beta).filter(|(a, b)| a < b).count();
            assert!(is_fixed_point(&g, &leaf_pay, &alpha));
            assert!(is_fixed_point(&g, &leaf_pay, &beta));
            assert!(alpha.iter().zip(&beta).all(|(a, b)| a <= b));
        }
        // The sample does contain games where the two bounds differ.
        assert!(gaps > 20, "{gaps}");
    }
}
