//! The exact values of the Markov chain that fixed strategies make of the game: from each
//! position, with probability 1/2 each, White's chosen move or Black's.
//!
//! With α's convention (play that never ends counts as 0) a position from which the chain
//! cannot reach a terminal worth more than 0 is worth 0; with β's (it counts as 1) one that
//! cannot reach a terminal worth less than 1 is worth 1. The other positions satisfy `x(P) = (x(W(P)) + x(B(P))) / 2`,
//! a non-singular system on them (from each, the chain leaves with positive probability).
//! It splits into strongly connected components, solved from the sinks up: a component of
//! one position is an exact mean of two known values, a larger one goes to
//! [`linear::solve`]. Components of equal depth in the condensation are independent and
//! are solved in parallel.
//!
//! An evaluation can be stopped and resumed ([`super::keep`]): the systems solved so far
//! and the refinement states of those under way are handed to the keeper, and a resumed
//! evaluation takes them back (by their member lists) instead of solving them again.

use rayon::prelude::*;

use std::collections::HashMap;
use std::sync::Mutex;

use super::keep::{EvalState, EvalStateRef, Keeper, RunningRef, RunningSystem, SolvedRef};
use super::linear::Rational;
use super::linear::{self, LinearError, Refinement, Row};
use super::spill::{Filing, Shelf};
use super::strategy::Strategies;
use super::{Bound, Event, Game, Progress, SolveError};
use crate::graph::{Adjacency, Graph};
use crate::value::Value;
use crate::value::arith::{Mean, PendingMean, finish_means, mean_or_pending};
use crate::value::shared::Denominators;

/// What one evaluation did.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct EvalStats {
    /// Positions settled without a system: the chain cannot reach the side's win (0 under
    /// α, 1 under β).
    pub absorbed: usize,
    /// Strongly connected components of the chain among the other positions.
    pub components: usize,
    /// Components of more than one position (each an exact linear solve).
    pub systems: usize,
    /// Positions in the largest component.
    pub largest: usize,
    /// Refinement bits of the hardest system.
    pub max_bits: u64,
    /// Depth of the condensation (sequential steps).
    pub depth: usize,
}

/// The chain's edges reversed: for each node, the positions whose chosen moves lead to it.
fn reversed(graph: &Graph, strategies: &Strategies) -> Adjacency {
    let lists = strategies
        .white
        .iter()
        .zip(&strategies.black)
        .map(|(&w, &b)| if w == b { vec![w] } else { vec![w, b] });
    Adjacency::from_lists(lists.chain(graph.terminals().map(|_| Vec::new())))
        .reversed(graph.nodes())
}

/// The positions from which the chain reaches one of the nodes `targets`.
fn reaching(graph: &Graph, strategies: &Strategies, targets: Vec<u32>) -> Vec<bool> {
    let rev = reversed(graph, strategies);
    let mut seen = vec![false; graph.nodes()];
    for &t in &targets {
        seen[t as usize] = true;
    }
    let mut stack = targets;
    while let Some(t) = stack.pop() {
        for &p in rev.get(t as usize) {
            if !std::mem::replace(&mut seen[p as usize], true) {
                stack.push(p);
            }
        }
    }
    seen.truncate(graph.positions());
    seen
}

/// Strongly connected components of the chain restricted to `active` positions, by an
/// iterative Tarjan: returns the positions grouped by component and each component's start
/// in that list, components in reverse topological order (every component after those it
/// leads to).
fn components(strategies: &Strategies, active: &[bool]) -> (Vec<u32>, Vec<u32>) {
    /// Tarjan's bookkeeping.
    struct Walk {
        index: Vec<u32>,
        low: Vec<u32>,
        on_stack: Vec<bool>,
        stack: Vec<u32>,
        call: Vec<(u32, u8)>,
        counter: u32,
    }
    impl Walk {
        /// Number node `w`, put it on the stack and start walking its successors.
        fn enter(&mut self, w: usize) {
            self.index[w] = self.counter;
            self.low[w] = self.counter;
            self.counter += 1;
            self.stack.push(w as u32);
            self.on_stack[w] = true;
            self.call.push((w as u32, 0));
        }
    }
    const NEW: u32 = u32::MAX;
    let n = active.len();
    let succ = |v: usize| [strategies.white[v], strategies.black[v]];
    let live = |w: u32| (w as usize) < n && active[w as usize];
    let mut t = Walk {
        index: vec![NEW; n],
        low: vec![0u32; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        call: Vec::new(),
        counter: 0,
    };
    let mut members = Vec::with_capacity(n);
    let mut starts = vec![0u32];
    for (root, &on) in active.iter().enumerate() {
        if !on || t.index[root] != NEW {
            continue;
        }
        t.enter(root);
        while let Some(&(v, k)) = t.call.last() {
            let v = v as usize;
            if k < 2 {
                t.call.last_mut().expect("not empty").1 += 1;
                let w = succ(v)[k as usize];
                if !live(w) {
                    continue;
                }
                let w = w as usize;
                if t.index[w] == NEW {
                    t.enter(w);
                } else if t.on_stack[w] {
                    t.low[v] = t.low[v].min(t.index[w]);
                }
                continue;
            }
            t.call.pop();
            if let Some(&(u, _)) = t.call.last() {
                t.low[u as usize] = t.low[u as usize].min(t.low[v]);
            }
            if t.low[v] == t.index[v] {
                loop {
                    let w = t.stack.pop().expect("v is on the stack");
                    t.on_stack[w as usize] = false;
                    members.push(w);
                    if w as usize == v {
                        break;
                    }
                }
                starts.push(members.len() as u32);
            }
        }
    }
    (members, starts)
}

/// The exact value of every node under `strategies` with `bound`'s convention for play
/// that never ends. `Err` if `progress` asks to stop, or if a system defeats the exact
/// solver (it never returns a wrong value: every system's solution is checked exactly).
pub fn evaluate(
    game: Game<'_>,
    strategies: &Strategies,
    bound: Bound,
    progress: &Progress<'_>,
) -> Result<(Vec<Value>, EvalStats), SolveError> {
    evaluate_kept(
        game,
        strategies,
        bound,
        progress,
        EvalState::default(),
        &Keeper::none(),
        &|_| {},
        None,
        None,
    )
}

/// Systems at least this large report their refinement rounds as progress.
pub const REPORTED_SYSTEM: usize = 1000;

/// A system's watch: asks the keeper whether to stop or save, and saves this system's
/// refinement state with the systems solved before its level.
struct SystemWatch<'a> {
    keeper: &'a Keeper<'a>,
    progress: &'a Progress<'a>,
    members: &'a [u32],
    /// The positions of the levels before this one (all solved).
    before: &'a [u32],
    x: &'a [Value],
    save: &'a (dyn Fn(EvalStateRef<'_>) + Sync),
}

impl linear::Watch for SystemWatch<'_> {
    fn stopping(&self) -> bool {
        self.keeper.stopping()
    }
    fn due(&self) -> bool {
        self.keeper.due()
    }
    fn round(&self, k: u64) {
        if self.members.len() >= REPORTED_SYSTEM {
            // Whether to stop is the keeper's to say; the answer is not needed here.
            let _ = (self.progress)(Event::Refinement {
                positions: self.members.len(),
                bits: k,
            });
        }
    }
    fn snapshot(&self, state: &Refinement) {
        (self.save)(EvalStateRef {
            solved: SolvedRef::At {
                parts: vec![self.before],
                x: self.x,
            },
            running: vec![RunningRef {
                members: self.members,
                refinement: state,
            }],
        });
    }
}

/// The chain's strongly connected components, numbered in reverse topological order,
/// grouped by depth in the condensation (components of one depth are independent).
struct Condensation {
    /// Positions grouped by component.
    members: Vec<u32>,
    /// Where each component starts in `members` (one more entry than components).
    starts: Vec<u32>,
    /// Each position's component (`u32::MAX` outside the active positions).
    comp_of: Vec<u32>,
    /// The components of each depth, the sinks first.
    by_depth: Vec<Vec<u32>>,
    /// The active positions level by level (the sinks' first).
    by_level: Vec<u32>,
    /// Where each level starts in `by_level` (one more entry than levels).
    level_starts: Vec<usize>,
}

impl Condensation {
    fn new(strategies: &Strategies, active: &[bool]) -> Condensation {
        let n = active.len();
        let (members, starts) = components(strategies, active);
        let comps = starts.len() - 1;
        // Depth: one more than the deepest component a member leads to.
        let mut comp_of = vec![u32::MAX; n];
        let mut depth = vec![0u32; comps];
        for c in 0..comps {
            let range = starts[c] as usize..starts[c + 1] as usize;
            for &p in &members[range.clone()] {
                comp_of[p as usize] = c as u32;
            }
            let mut d = 0;
            for &p in &members[range] {
                for t in [strategies.white[p as usize], strategies.black[p as usize]] {
                    let t = t as usize;
                    if t < n && active[t] && comp_of[t] != c as u32 {
                        d = d.max(depth[comp_of[t] as usize] + 1);
                    }
                }
            }
            depth[c] = d;
        }
        let levels = depth.iter().max().map_or(0, |&d| d as usize + 1);
        let mut by_depth: Vec<Vec<u32>> = vec![Vec::new(); levels];
        for (c, &d) in depth.iter().enumerate() {
            by_depth[d as usize].push(c as u32);
        }
        let mut by_level = Vec::with_capacity(members.len());
        let mut level_starts = vec![0];
        for level in &by_depth {
            for &c in level {
                let c = c as usize;
                by_level.extend_from_slice(&members[starts[c] as usize..starts[c + 1] as usize]);
            }
            level_starts.push(by_level.len());
        }
        Condensation {
            members,
            starts,
            comp_of,
            by_depth,
            by_level,
            level_starts,
        }
    }

    fn count(&self) -> usize {
        self.starts.len() - 1
    }

    /// The positions of component `c`.
    fn part(&self, c: u32) -> &[u32] {
        &self.members[self.starts[c as usize] as usize..self.starts[c as usize + 1] as usize]
    }

    /// The positions of the levels before `level`.
    fn before(&self, level: usize) -> &[u32] {
        &self.by_level[..self.level_starts[level]]
    }
}

/// What a resumed evaluation takes back: values by position, running systems by their
/// first member.
struct Kept {
    values: Vec<Option<Value>>,
    running: HashMap<u32, RunningSystem>,
}

/// A kept component: solved, or a system part-way.
enum Taken {
    Solved(Solved),
    Running(Refinement),
}

impl Kept {
    fn new(from: EvalState, positions: usize, denominators: &Denominators) -> Kept {
        // Nothing kept (a run from the start): no table of values at all.
        let table = if from.solved.is_empty() { 0 } else { positions };
        let mut values = vec![None; table];
        for (p, v) in from.solved {
            if let Some(slot) = values.get_mut(p as usize) {
                *slot = Some(denominators.share(v));
            }
        }
        Kept {
            values,
            running: from
                .running
                .into_iter()
                .filter(|r| !r.members.is_empty())
                .map(|r| (r.members[0], r))
                .collect(),
        }
    }

    /// What was kept of the component of positions `part`: the values of all its
    /// positions, or the refinement of exactly this system.
    fn take(&mut self, part: &[u32]) -> Option<Taken> {
        let kept = |p: u32| self.values.get(p as usize).is_some_and(Option::is_some);
        if part.iter().all(|&p| kept(p)) {
            let values = part
                .iter()
                .map(|&p| (p, self.values[p as usize].take().expect("checked")))
                .collect();
            return Some(Taken::Solved((values, 0)));
        }
        let first = *part.first()?;
        let r = self.running.remove(&first).filter(|r| r.members == part)?;
        Some(Taken::Running(r.refinement))
    }
}

/// How one component of a level ended.
enum Outcome {
    Solved(Solved),
    /// Stopped part-way, with its refinement.
    Stopped(Refinement),
    /// Not started: the run is stopping.
    Skipped,
    Failed(String),
}

/// A component's outcome, or a position's mean waiting for its lowest terms with the
/// level's others.
enum Step {
    Done(Outcome),
    Pending(u32, PendingMean),
}

/// [`evaluate`], resuming from `from` (systems solved and under way, matched by their
/// member lists; the rest is ignored), handing its progress to `save` when `keeper` says
/// the run is stopping or a save is due. With `filing`, the numerators of the values
/// solved move out of the heap as it says ([`Shelf`]). With `twins` (the other bound's
/// values by node, where known), a value solved equal to its twin takes the twin's copy:
/// the two bounds hold its digits once, and it is not paged again (β solved apart after
/// α: on 6x6 KBNvKN α's paged numerators were 23.8 GB, and β's as many again filled the
/// disk).
#[allow(clippy::too_many_arguments)]
pub fn evaluate_kept(
    game: Game<'_>,
    strategies: &Strategies,
    bound: Bound,
    progress: &Progress<'_>,
    from: EvalState,
    keeper: &Keeper<'_>,
    save: &(dyn Fn(EvalStateRef<'_>) + Sync),
    filing: Option<&Filing>,
    twins: Option<&[Option<Value>]>,
) -> Result<(Vec<Value>, EvalStats), SolveError> {
    let graph = game.graph;
    let stuck_value = bound.stuck_value();
    let goals = graph
        .terminals()
        .filter(|&t| *game.terminal(t) != stuck_value)
        .map(|t| t as u32)
        .collect();
    let active = reaching(graph, strategies, goals);
    let zero = Value::zero();
    let mut x: Vec<Value> = (0..graph.nodes())
        .map(|i| {
            if i >= graph.positions() {
                game.terminal(i).clone()
            } else if active[i] {
                zero.clone()
            } else {
                stuck_value.clone()
            }
        })
        .collect();
    let chain = Condensation::new(strategies, &active);
    let mut stats = EvalStats {
        absorbed: active.iter().filter(|&&a| !a).count(),
        components: chain.count(),
        depth: chain.by_depth.len(),
        ..EvalStats::default()
    };
    // One copy of each denominator for the values solved here (with four men most of them
    // have thousands of digits, shared with many others), kept ones included.
    let denominators = Denominators::new();
    denominators.share_all(&mut x);
    let mut kept = Kept::new(from, graph.positions(), &denominators);
    let mut shelf = filing.cloned().map(Shelf::new);
    let shelf_failed = |e: std::io::Error| {
        SolveError::Failed(format!(
            "moving values out of memory to a temporary file in {} failed: {e}",
            filing.map_or(String::new(), |f| f.dir.display().to_string())
        ))
    };
    let mut done = 0;
    let mut shared_with_twins = 0;
    for (depth, level) in chain.by_depth.iter().enumerate() {
        let go_on = progress(Event::Components {
            done,
            total: chain.count(),
        }) && !keeper.stopping();
        if !go_on || keeper.due() {
            save(EvalStateRef {
                solved: SolvedRef::At {
                    parts: vec![chain.before(depth)],
                    x: &x,
                },
                running: Vec::new(),
            });
            if !go_on {
                return Err(SolveError::Stopped);
            }
        }
        done += level.len();
        let outcomes = solve_level(
            (depth, level),
            &chain,
            progress,
            strategies,
            &x,
            &mut kept,
            keeper,
            save,
        );
        let mut stopped: Vec<(u32, Refinement)> = Vec::new();
        let mut finished: Vec<u32> = Vec::new();
        let mut skipped = false;
        for (&c, outcome) in level.iter().zip(outcomes) {
            match outcome {
                Outcome::Solved((values, bits)) => {
                    if values.len() > 1 {
                        stats.systems += 1;
                        stats.largest = stats.largest.max(values.len());
                        stats.max_bits = stats.max_bits.max(bits);
                    }
                    finished.push(c);
                    for (p, v) in values {
                        x[p as usize] = match twins.and_then(|t| t[p as usize].as_ref()) {
                            Some(twin) if *twin == v => {
                                shared_with_twins += 1;
                                twin.clone()
                            }
                            _ => denominators.share(v),
                        };
                    }
                }
                Outcome::Stopped(state) => stopped.push((c, state)),
                Outcome::Skipped => skipped = true,
                Outcome::Failed(why) => return Err(SolveError::Failed(why)),
            }
        }
        if let Some(shelf) = shelf.as_mut() {
            for &c in &finished {
                shelf.note(&mut x, chain.part(c)).map_err(shelf_failed)?;
            }
        }
        if !stopped.is_empty() || skipped {
            let mut parts = vec![chain.before(depth)];
            parts.extend(finished.iter().map(|&c| chain.part(c)));
            save(EvalStateRef {
                solved: SolvedRef::At { parts, x: &x },
                running: stopped
                    .iter()
                    .map(|(c, state)| RunningRef {
                        members: chain.part(*c),
                        refinement: state,
                    })
                    .collect(),
            });
            return Err(SolveError::Stopped);
        }
    }
    if twins.is_some() {
        // For display only, as below.
        let _ = progress(Event::Twins {
            shared: shared_with_twins,
        });
    }
    if let Some(shelf) = shelf.as_mut() {
        shelf.flush(&mut x).map_err(shelf_failed)?;
        // For display only: whether to stop is asked between levels.
        let _ = progress(Event::Paged {
            bytes: shelf.moved(),
            copies: shelf.copies(),
        });
    }
    stats.largest = stats.largest.max(usize::from(chain.count() > 0));
    Ok((x, stats))
}

/// Solve the components of one level (its depth and components) in parallel, from what
/// was kept of them where anything was.
#[allow(clippy::too_many_arguments)]
fn solve_level(
    (depth, level): (usize, &[u32]),
    chain: &Condensation,
    progress: &Progress<'_>,
    strategies: &Strategies,
    x: &[Value],
    kept: &mut Kept,
    keeper: &Keeper<'_>,
    save: &(dyn Fn(EvalStateRef<'_>) + Sync),
) -> Vec<Outcome> {
    let mut taken: HashMap<u32, Mutex<Option<Taken>>> = HashMap::new();
    for &c in level {
        if let Some(t) = kept.take(chain.part(c)) {
            taken.insert(c, Mutex::new(Some(t)));
        }
    }
    let steps: Vec<Step> = level
        .par_iter()
        .with_min_len(64)
        .map(|&c| {
            let part = chain.part(c);
            let from = match taken.get(&c).and_then(|t| t.lock().ok()?.take()) {
                Some(Taken::Solved(values)) => return Step::Done(Outcome::Solved(values)),
                Some(Taken::Running(state)) => Some(state),
                None => None,
            };
            if let ([p], None) = (part, &from) {
                return solve_singleton(*p, strategies, x);
            }
            if from.is_none() && keeper.stopping() {
                return Step::Done(Outcome::Skipped);
            }
            let watch = SystemWatch {
                keeper,
                progress,
                members: part,
                before: chain.before(depth),
                x,
                save,
            };
            Step::Done(
                match solve_component(part, strategies, x, &chain.comp_of, c, from, &watch) {
                    Ok(values) => Outcome::Solved(values),
                    Err(LinearError::Stopped(state)) => Outcome::Stopped(*state),
                    Err(LinearError::Failed(why)) => Outcome::Failed(why),
                },
            )
        })
        .collect();
    finish_pending(steps)
}

/// The level's outcomes, its means waiting for their lowest terms finished together.
fn finish_pending(steps: Vec<Step>) -> Vec<Outcome> {
    let mut outcomes = Vec::with_capacity(steps.len());
    let (mut places, mut pending) = (Vec::new(), Vec::new());
    for step in steps {
        match step {
            Step::Done(outcome) => outcomes.push(outcome),
            Step::Pending(p, m) => {
                places.push((outcomes.len(), p));
                pending.push(m);
                outcomes.push(Outcome::Skipped);
            }
        }
    }
    for ((i, p), v) in places.into_iter().zip(finish_means(pending)) {
        outcomes[i] = Outcome::Solved((vec![(p, v)], 0));
    }
    outcomes
}

/// A component's (position, value) pairs and the refinement bits its system used.
type Solved = (Vec<(u32, Value)>, u64);

/// The value of a component of one position `p`, given the values it leads to: a mean, or
/// a mean waiting for its lowest terms with the level's others ([`finish_means`]).
fn solve_singleton(p: u32, strategies: &Strategies, x: &[Value]) -> Step {
    let (w, b) = (strategies.white[p as usize], strategies.black[p as usize]);
    let solved = |v: Value| Step::Done(Outcome::Solved((vec![(p, v)], 0)));
    // A move that stays in place: x = (x + y) / 2 means x = y.
    match (w == p, b == p) {
        (true, false) => solved(x[b as usize].clone()),
        (false, true) => solved(x[w as usize].clone()),
        _ => match mean_or_pending(&x[w as usize], &x[b as usize]) {
            Mean::Done(v) => solved(v),
            Mean::Pending(m) => Step::Pending(p, m),
        },
    }
}

/// The sum of a row's values outside its component (at most two), in lowest terms: twice
/// their mean ([`crate::value::arith::mean`], Knuth's addition with the fast gcds), where
/// `Ratio`'s own addition took a gcd in num-bigint (6 % of a 7x7 KNvKN run's CPU).
fn sum(values: &[&Value]) -> Rational {
    match values {
        [] => Rational::from_integer(0u8.into()),
        [v] => v.to_ratio(),
        [a, b, rest @ ..] => {
            let m = crate::value::arith::mean(a, b);
            let (num, den) = (m.numer().into_owned(), m.denom().into_owned());
            // m is in lowest terms, so 2m is too once a 2 of an even denominator cancels.
            let pair = if den.bit(0) {
                Rational::new_raw(num << 1u8, den)
            } else {
                Rational::new_raw(num, den >> 1u8)
            };
            if rest.is_empty() {
                pair
            } else {
                pair + sum(rest)
            }
        }
    }
}

/// The exact values of one component's positions (more than one), given the values of
/// everything it leads to outside itself.
fn solve_component(
    part: &[u32],
    strategies: &Strategies,
    x: &[Value],
    comp_of: &[u32],
    c: u32,
    from: Option<Refinement>,
    watch: &dyn linear::Watch,
) -> Result<Solved, LinearError> {
    let inside = |t: u32| comp_of.get(t as usize) == Some(&c);
    let mut rows = Vec::with_capacity(part.len());
    let mut rhs = Vec::with_capacity(part.len());
    let mut local_of = std::collections::HashMap::with_capacity(part.len());
    for (i, &p) in part.iter().enumerate() {
        local_of.insert(p, i as u32);
    }
    let find = |t: u32| local_of[&t];
    for &p in part {
        let mut row = Row {
            diag: 2,
            off: [(0, 0); 2],
            len: 0,
        };
        let mut outside: Vec<&Value> = Vec::with_capacity(2);
        for t in [strategies.white[p as usize], strategies.black[p as usize]] {
            if t == p {
                row.diag -= 1;
            } else if inside(t) {
                let j = find(t);
                match row.off[..row.len as usize].iter_mut().find(|e| e.0 == j) {
                    Some(e) => e.1 += 1,
                    None => {
                        row.off[row.len as usize] = (j, 1);
                        row.len += 1;
                    }
                }
            } else {
                outside.push(&x[t as usize]);
            }
        }
        rows.push(row);
        rhs.push(sum(&outside));
    }
    let (values, stats) = linear::solve(&rows, &rhs, from, watch)?;
    Ok((part.iter().copied().zip(values).collect(), stats.bits))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::long::test_number;
    use num_bigint::BigUint;

    /// A row's outside sum equals `Ratio`'s addition: none, one and two values (short and
    /// long, over one odd part or two, cancelling to a short or even denominator, summing
    /// past 1), and three.
    #[test]
    fn outside_sums_equal_rational_addition() {
        let odd = test_number(9_000, 1) | BigUint::from(1u8);
        let other = test_number(5_000, 2) | BigUint::from(1u8);
        let v = |n: BigUint, d: BigUint| Value::new(n % &d, d);
        let values = [
            Value::new(1u8.into(), 2u8.into()),
            Value::new(3u8.into(), 7u8.into()),
            v(test_number(8_000, 3), &odd << 5u8),
            v(test_number(8_900, 4), odd.clone()),
            v(&odd - test_number(8_000, 3), &odd << 5u8),
            v(test_number(4_000, 5), &other << 1u8),
            Value::new(1u8.into(), 1u8.into()),
            Value::zero(),
        ];
        let by_ratio = |vs: &[&Value]| {
            vs.iter()
                .fold(Rational::from_integer(0u8.into()), |s, v| s + v.to_ratio())
        };
        // Term by term (`Ratio`'s == compares values, not lowest terms).
        let same = |vs: &[&Value]| {
            let (got, want) = (sum(vs), by_ratio(vs));
            assert_eq!((got.numer(), got.denom()), (want.numer(), want.denom()));
        };
        same(&[]);
        for a in &values {
            same(&[a]);
            for b in &values {
                same(&[a, b]);
                same(&[a, b, &values[2]]);
            }
        }
    }
}
