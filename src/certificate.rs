//! The certificate (SPEC §2): whether the guesses s form a Richman function, that is
//! `2 s(P) = max_w s(P_w) + min_b s(P_b)` exactly at every position, and the closures that
//! prove α = s and β = s.
//!
//! White's closure T starts from the terminal nodes (the king captures and the exits into
//! materials solved before, whose values are fixed); a position joins at level k + 1 when one
//! of its s-greedy White moves (reaching max_w s) leads into level ≤ k, or all of its Black
//! moves do. α = s exactly when every position with s > 0 is in T. Black's closure T′ is the
//! mirror image (greedy Black moves minimise s; or all White moves lead in), and β = s when
//! every position with s < 1 is in T′. Both are built level by level, scanning the positions
//! not yet in ([`closure`]).
//!
//! Greedy options are found by comparing the guesses' fixed-point images (exact rationals
//! only where two images agree). A filter on the images, `2 S(P) − S(w) − S(b)` computed
//! exactly over all limbs, proves most violations; exact rational arithmetic decides the
//! positions it cannot.

use std::cmp::Ordering;

use num_bigint::BigUint;
use num_traits::{One, Zero};
use rayon::prelude::*;

use crate::graph::{Adjacency, Graph};
use crate::value::long::{div_rem, mul, rem};
use crate::value::{Imaged, Value};

/// Compare the guesses of nodes `i` and `j` exactly: by fixed-point image first, then as
/// rationals when the images agree.
pub fn cmp_guess(g: &impl Imaged, i: usize, j: usize) -> Ordering {
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
    if g.same_entry(i, j) {
        return Ordering::Equal;
    }
    g.value(i).cmp(&g.value(j))
}

/// The first node of `nodes` whose guess is `want`-most (Greater: largest, Less: smallest).
fn greedy(g: &impl Imaged, nodes: &[u32], want: Ordering) -> u32 {
    nodes
        .iter()
        .copied()
        .reduce(|best, t| {
            if cmp_guess(g, t as usize, best as usize) == want {
                t
            } else {
                best
            }
        })
        .expect("every node has an option")
}

/// White's best option by the guesses: the first node of `nodes` with the largest guess.
pub fn greedy_max(g: &impl Imaged, nodes: &[u32]) -> u32 {
    greedy(g, nodes, Ordering::Greater)
}

/// Black's best option by the guesses: the first node of `nodes` with the smallest guess.
pub fn greedy_min(g: &impl Imaged, nodes: &[u32]) -> u32 {
    greedy(g, nodes, Ordering::Less)
}

/// Whether the fixed-point images alone prove that position `p`'s equation fails, given
/// White's and Black's greedy options `w` and `b`.
///
/// With `S = floor(s · 2^F)` for each node, a holding equation `2 s(P) = s(w) + s(b)` leaves
/// `D = 2 S(P) − S(w) − S(b)` in {−1, 0, 1}; any other D is a certain violation.
fn image_violation(g: &impl Imaged, p: usize, w: usize, b: usize) -> bool {
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

/// Whether position `p`'s equation fails with White's and Black's greedy options `w` and
/// `b`: proved by the images, or else decided exactly, unless `p`'s value is stored as
/// the mean of theirs (then it holds by construction).
fn violated(g: &impl Imaged, p: usize, w: usize, b: usize) -> bool {
    image_violation(g, p, w, b)
        || !(g.stored_as_mean_of(p, w, b) || equation_holds_with(g, p, w, b))
}

/// `2·p/q = p1/q1 + p2/q2`, exactly, without a gcd. Write each denominator as its odd part
/// times a power of two (q = r·2^i, q1 = r1·2^j, q2 = r2·2^k).
/// - When the two targets share their odd part (r1 = r2: nearly always, since values are
///   means of values), their sum is `s / (r1·2^m)` with `s = p1·2^(m−j) + p2·2^(m−k)`:
///   shifts and one addition.
///   - If also r = r1 (no factor cancelled in p/q), the equation reads `p·2^(m−i+1) = s`.
///   - If r divides r1 with a short quotient f (a factor cancelled), it reads
///     `p·f·2^(m+1) = s·2^i`: one product by the short f.
///   - Otherwise by cross-multiplication: `p·r1·2^(m+1) = s·q`.
/// - Otherwise by cross-multiplication of all three fractions.
fn equation_holds_with(g: &impl Imaged, p: usize, w: usize, b: usize) -> bool {
    let (x, y, z) = (g.value(p), g.value(w), g.value(b));
    let (x, y, z) = (&*x, &*y, &*z);
    let (xn, yn, zn) = (x.numer(), y.numer(), z.numer());
    let (xn, yn, zn) = (&*xn, &*yn, &*zn);
    // Nearly always within a component: one denominator.
    if x.same_denom(y) && x.same_denom(z) {
        return (xn << 1u8) == yn + zn;
    }
    let twos = |v: &Value| u64::from(v.twos());
    let (i, j, k) = (twos(x), twos(y), twos(z));
    let (ry, rz) = (&**y.shared_odd(), &**z.shared_odd());
    if ry != rz {
        let rx = &**x.shared_odd();
        // One target shares x's odd part (the other is nearly always an exit's short
        // one): its difference with 2x is a shift and a subtraction, compared with the
        // other by two products.
        if rx == ry {
            return difference_equals((xn, i), (yn, j), rx, (zn, k, rz));
        }
        if rx == rz {
            return difference_equals((xn, i), (zn, k), rx, (yn, j, ry));
        }
        if let Some(holds) = over_a_common_odd_multiple((xn, i, rx), (yn, j, ry), (zn, k, rz)) {
            return holds;
        }
        let (xd, yd, zd) = (x.denom(), y.denom(), z.denom());
        let lhs = mul(&mul(&(xn << 1u8), &yd), &zd);
        let rhs = mul(&xd, &(mul(yn, &zd) + mul(zn, &yd)));
        return lhs == rhs;
    }
    let m = i.max(j).max(k);
    let s = (yn << (m - j)) + (zn << (m - k));
    let rx = &**x.shared_odd();
    if rx == ry {
        return (xn << (m - i + 1)) == s;
    }
    if let Some(f) = short_quotient(ry, rx) {
        return (mul(xn, &f) << (m + 1)) == (s << i);
    }
    (mul(xn, ry) << (m + 1)) == mul(&s, &x.denom())
}

/// Whether `2x = y + z` for `x = xn / (rx·2^i)` and the others alike, over a common
/// multiple `l` of the three odd parts that each divides by a quotient that is cheap to
/// find ([`short_quotient`]: `a = l / rx`, `b = l / ry`, `c = l / rz`): with
/// `m = max(i, j, k)` the equation times `l·2^m` reads
/// `xn·a·2^(m−i+1) = yn·b·2^(m−j) + zn·c·2^(m−k)`, products of a long number by a short
/// one. `l` is the longest of the three where the other two divide it, else the least
/// common multiple of the targets' ([`short_lcm`]), which x's divides where the equation
/// holds. `None` where no such `l` is found.
///
/// The odd parts of a component's values are nearly all one long core times a few short
/// factors, and a mean's is the least common multiple of its targets' where nothing
/// cancels. In a 7x7 `--material KNvKP` run a tenth of the equations checked have three
/// different odd parts, and they cost 95 µs each by cross-multiplication, most of the
/// certificate's time; over the longest part 11 µs. The other 15 % (x's odd part shorter than its targets' least common
/// multiple, which none of the three is) go over that multiple.
fn over_a_common_odd_multiple(
    x: (&BigUint, u64, &BigUint),
    y: (&BigUint, u64, &BigUint),
    z: (&BigUint, u64, &BigUint),
) -> Option<bool> {
    let quotients = |l: &BigUint| {
        Some((
            short_quotient(l, x.2)?,
            short_quotient(l, y.2)?,
            short_quotient(l, z.2)?,
        ))
    };
    let longest = [x.2, y.2, z.2].into_iter().max_by_key(|r| r.bits())?;
    let (a, b, c) = match quotients(longest) {
        Some(q) => q,
        None => quotients(&short_lcm(y.2, z.2)?)?,
    };
    let m = x.1.max(y.1).max(z.1);
    let scaled = |(n, t, _): (&BigUint, u64, &BigUint), q: &BigUint| mul(n, q) << (m - t);
    Some((scaled(x, &a) << 1u8) == scaled(y, &b) + scaled(z, &c))
}

/// The least common multiple of `a` and `b` (> 0) where Euclid's algorithm finds their gcd
/// g within [`EUCLID_STEPS`] divisions, each short by [`short_quotient`]'s rule, as is the
/// division `a / g`: as for two odd parts that are one long core times short factors (the
/// remainders then stay multiples of the core, and the steps are those of Euclid on the
/// short factors). `None` otherwise.
fn short_lcm(a: &BigUint, b: &BigUint) -> Option<BigUint> {
    let (mut u, mut v) = (a.clone(), b.clone());
    if u < v {
        std::mem::swap(&mut u, &mut v);
    }
    for _ in 0..EUCLID_STEPS {
        if v.is_zero() {
            return Some(mul(&short_quotient(a, &u)?, b));
        }
        let (ub, vb) = (u.bits(), v.bits());
        if (ub - vb).min(vb) > SHORT_QUOTIENT {
            return None;
        }
        let r = rem(&u, &v);
        u = std::mem::replace(&mut v, r);
    }
    None
}

/// The most divisions [`short_lcm`] makes (each costs about a pass over the numbers).
const EUCLID_STEPS: usize = 64;

/// `l / r` where `r` divides `l` and the division is short: `r` is `l`, or the quotient or
/// `r` has at most [`SHORT_QUOTIENT`] bits (a schoolbook division costs about their
/// product's length times `l`'s, and a long quotient by a long divisor more than the two
/// long products it would spare). `None` where the division would be long or is not exact.
fn short_quotient(l: &BigUint, r: &BigUint) -> Option<BigUint> {
    if std::ptr::eq(l, r) || l == r {
        return Some(BigUint::one());
    }
    let (lb, rb) = (l.bits(), r.bits());
    if rb > lb || (lb - rb).min(rb) > SHORT_QUOTIENT {
        return None;
    }
    let (q, rest) = div_rem(l, r);
    rest.is_zero().then_some(q)
}

/// The longest quotient or divisor of a division [`short_quotient`] and [`short_lcm`] make.
const SHORT_QUOTIENT: u64 = 1_024;

/// Whether `2·x − y = z` for `x = xn / (r·2^i)`, `y = yn / (r·2^j)` (one odd part r) and
/// `z = zn / (rz·2^k)`: `2x − y = u / (r·2^m)` with `m = max(i, j)` by shifts, then
/// `u · 2^k = zn · c · 2^m` where `r = rz · c` by a short division ([`short_quotient`]: z's
/// odd part nearly always divides x's, and is as long in one such equation of fourteen on
/// 7x7 KNvKP), else `u · rz · 2^k = zn · r · 2^m`.
fn difference_equals(
    (xn, i): (&BigUint, u64),
    (yn, j): (&BigUint, u64),
    r: &BigUint,
    (zn, k, rz): (&BigUint, u64, &BigUint),
) -> bool {
    let m = i.max(j);
    let (twice, other) = (xn << (m - i + 1), yn << (m - j));
    if twice < other {
        return false;
    }
    let u = twice - other;
    let (left, right) = match short_quotient(r, rz) {
        Some(c) => (u, mul(zn, &c)),
        None => (mul(&u, rz), mul(zn, r)),
    };
    if k >= m {
        (left << (k - m)) == right
    } else {
        left == (right << (m - k))
    }
}

/// The positions whose equation fails, in increasing order, checked exactly: the
/// fixed-point images rule out most positions, exact rational arithmetic decides the rest.
pub fn violations(g: &impl Imaged, graph: &Graph) -> Vec<u32> {
    (0..graph.positions())
        .into_par_iter()
        .filter(|&p| {
            let w = greedy_max(g, graph.white(p)) as usize;
            let b = greedy_min(g, graph.black(p)) as usize;
            violated(g, p, w, b)
        })
        .map(|p| p as u32)
        .collect()
}

/// Level of a node never reached by a closure.
pub const UNREACHED: u32 = u32::MAX;

/// Positions a run of the certificate's pass takes at once ([`certify_knowing`]).
const RUN: usize = 4096;

/// One side's ties of a run of positions, in one flat list: position k of the run's ties
/// end at `ends[k]` in `targets`.
#[derive(Default)]
struct Ties {
    targets: Vec<u32>,
    ends: Vec<u32>,
}

impl Ties {
    /// The next position's ties: the nodes of `options` whose guess equals that of `best`.
    fn push_ties(&mut self, g: &impl Imaged, options: &[u32], best: u32) {
        self.targets.extend(
            options
                .iter()
                .filter(|&&t| cmp_guess(g, t as usize, best as usize) == Ordering::Equal),
        );
        self.ends.push(self.targets.len() as u32);
    }
}

/// What the certificate's pass finds in a run of [`RUN`] positions.
#[derive(Default)]
struct Run {
    white: Ties,
    black: Ties,
    violations: Vec<u32>,
    quiescent: Vec<u32>,
}

/// Where the closures start: the level of each terminal node (in node order after the
/// positions) in White's closure T and in Black's closure T′. The king captures are at
/// level 0; an exit into a material solved before is at the level its position has in
/// that material's own closures (so that levels computed one material at a time are the
/// levels of the whole game). [`UNREACHED`] keeps a terminal out of a closure.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Start {
    /// Per terminal node, its level in T.
    pub white: Vec<u32>,
    /// Per terminal node, its level in T′.
    pub black: Vec<u32>,
}

impl Start {
    /// Every terminal node of `graph` at level 0 (a graph without exits).
    pub fn at_zero(graph: &Graph) -> Start {
        let n = graph.terminals().len();
        Start {
            white: vec![0; n],
            black: vec![0; n],
        }
    }
}

/// A closure, level by level. `greedy[p]`: the options that let p join as soon as one of
/// them is in; `all[p]`: the options that let p join once every one of them is in (if it
/// has any); `start`: the level of each terminal node. A position joins at level k + 1 in
/// the round after the options that let it join are in at level ≤ k. Returns each node's
/// level ([`UNREACHED`] if never).
///
/// Each round scans the positions still out, forwards: a greedy option in, or every option
/// in (the scan of a position stops at its first option still out). This needs no
/// predecessor lists, which would double the graph's memory while both closures are built
/// (8x8 KBvKP: 5.8 GB more, the job's peak); the levels are few (at most 21 on 8x8 with four
/// pieces), and the positions still out shrink each round. The retrograde pass it replaced
/// stays in the tests as its reference.
pub fn closure(graph: &Graph, greedy: &Adjacency, all: &Adjacency, start: &[u32]) -> Vec<u32> {
    let nodes = graph.nodes();
    let positions = graph.positions();
    assert_eq!(
        start.len(),
        nodes - positions,
        "one start level per terminal"
    );
    let mut level = vec![UNREACHED; nodes];
    level[positions..].copy_from_slice(start);
    // The start levels in increasing order: after a round where nothing joins, the next
    // that can add anything is the next start level.
    let mut starts: Vec<u32> = start.iter().copied().filter(|&l| l != UNREACHED).collect();
    starts.sort_unstable();
    starts.dedup();
    let mut out: Vec<u32> = (0..positions as u32).collect();
    let mut k = match starts.first() {
        Some(&l) => l,
        None => return level,
    };
    loop {
        let joined: Vec<u32> = {
            let level = &level;
            let within = |t: &u32| level[*t as usize] <= k;
            out.par_iter()
                .copied()
                .filter(|&p| {
                    let (g, a) = (greedy.get(p as usize), all.get(p as usize));
                    g.iter().any(within) || (!a.is_empty() && a.iter().all(within))
                })
                .collect()
        };
        if joined.is_empty() {
            match starts.iter().find(|&&l| l > k) {
                Some(&l) => {
                    k = l;
                    continue;
                }
                None => break,
            }
        }
        for &p in &joined {
            level[p as usize] = k + 1;
        }
        out.retain(|&p| level[p as usize] == UNREACHED);
        k += 1;
    }
    level
}

/// The full certificate of a set of guesses.
#[derive(Debug, PartialEq, Eq)]
pub struct Certificate {
    /// Positions whose Richman equation fails.
    pub violations: Vec<u32>,
    /// Level in White's closure T of every node ([`UNREACHED`] if not in T).
    pub white_levels: Vec<u32>,
    /// Level in Black's closure T′ of every node.
    pub black_levels: Vec<u32>,
    /// Positions with s > 0 outside T (each one stops the proof of α = s).
    pub alpha_failures: Vec<u32>,
    /// Positions with s < 1 outside T′ (each one stops the proof of β = s).
    pub beta_failures: Vec<u32>,
    /// Positions with min_b s(P_b) = max_w s(P_w).
    pub quiescent: Vec<u32>,
}

impl Certificate {
    /// Whether s is proved to equal α and β everywhere: a Richman function whose closures
    /// cover every position they must.
    pub fn certified(&self) -> bool {
        self.violations.is_empty()
            && self.alpha_failures.is_empty()
            && self.beta_failures.is_empty()
    }
}

/// Check the values exactly and build both closures, on a graph without exits (every
/// terminal node at level 0).
pub fn certify(g: &impl Imaged, graph: &Graph) -> Certificate {
    certify_from(g, graph, &Start::at_zero(graph))
}

/// Check the values exactly and build both closures from the terminal levels `start`.
pub fn certify_from(g: &impl Imaged, graph: &Graph, start: &Start) -> Certificate {
    certify_knowing(g, graph, start, &|_| None)
}

/// [`certify_from`] for values that differ from those `before` certified only at the
/// terminal nodes marked in `changed` (one flag per node; the exits' β in place of their α).
/// A position none of whose options changed has the same value and the same options' values
/// as before, hence the same greedy options and the same equation: it keeps `before`'s
/// verdict on it instead of checking it again. That check is the costly part: on 8x8 KNvKP
/// an equation between values of different odd parts multiplies numbers of 130,000 bits.
pub fn certify_again(
    g: &impl Imaged,
    graph: &Graph,
    start: &Start,
    before: &Certificate,
    changed: &[bool],
) -> Certificate {
    assert_eq!(changed.len(), graph.nodes(), "one flag per node");
    let touched = |p: usize| {
        graph
            .white(p)
            .iter()
            .chain(graph.black(p))
            .any(|&t| changed[t as usize])
    };
    certify_knowing(g, graph, start, &|p| {
        (!changed[p] && !touched(p)).then(|| before.violations.binary_search(&(p as u32)).is_ok())
    })
}

/// The certificate, with `known(p)` giving position p's verdict (violated or not) where it
/// is known already, and the equation checked exactly where it is not.
fn certify_knowing(
    g: &impl Imaged,
    graph: &Graph,
    start: &Start,
    known: &(dyn Fn(usize) -> Option<bool> + Sync),
) -> Certificate {
    let positions = graph.positions();
    // Runs of positions, each pass's ties in flat lists: two lists of every position
    // would cost two allocations and 56 bytes a position (a gigabyte for 6x6 five men).
    let runs: Vec<Run> = (0..positions.div_ceil(RUN))
        .into_par_iter()
        .map(|r| {
            let mut run = Run::default();
            for p in r * RUN..((r + 1) * RUN).min(positions) {
                let (wl, bl) = (graph.white(p), graph.black(p));
                let (w, b) = (greedy_max(g, wl), greedy_min(g, bl));
                if known(p).unwrap_or_else(|| violated(g, p, w as usize, b as usize)) {
                    run.violations.push(p as u32);
                }
                if cmp_guess(g, w as usize, b as usize) == Ordering::Equal {
                    run.quiescent.push(p as u32);
                }
                run.white.push_ties(g, wl, w);
                run.black.push_ties(g, bl, b);
            }
            run
        })
        .collect();
    let greedy = |side: fn(&Run) -> &Ties| {
        let mut offsets = Vec::with_capacity(graph.nodes() + 1);
        offsets.push(0u32);
        let mut targets = Vec::with_capacity(runs.iter().map(|r| side(r).targets.len()).sum());
        for run in &runs {
            let ties = side(run);
            let base = targets.len() as u32;
            offsets.extend(ties.ends.iter().map(|&e| base + e));
            targets.extend_from_slice(&ties.targets);
        }
        // The terminal nodes have no options.
        let end = targets.len() as u32;
        offsets.extend(graph.terminals().map(|_| end));
        Adjacency::from_parts(offsets, targets)
    };
    let (greedy_white, greedy_black) = (greedy(|r| &r.white), greedy(|r| &r.black));
    let (white_levels, black_levels) = rayon::join(
        || closure(graph, &greedy_white, graph.black_adjacency(), &start.white),
        || closure(graph, &greedy_black, graph.white_adjacency(), &start.black),
    );
    let pick = |f: &dyn Fn(usize) -> bool| {
        (0..positions)
            .filter(|&p| f(p))
            .map(|p| p as u32)
            .collect::<Vec<_>>()
    };
    let gather = |side: fn(&Run) -> &Vec<u32>| runs.iter().flat_map(side).copied().collect();
    Certificate {
        violations: gather(|r| &r.violations),
        // The levels first: a value is read only where its position is outside T or T′.
        alpha_failures: pick(&|p| white_levels[p] == UNREACHED && !g.value(p).is_zero()),
        beta_failures: pick(&|p| black_levels[p] == UNREACHED && !g.value(p).is_one()),
        quiescent: gather(|r| &r.quiescent),
        white_levels,
        black_levels,
    }
}

/// The positions whose guesses `game`'s certificate proves final: those from which no
/// sequence of `game`'s options reaches a position where the certificate fails (a violated
/// equation, or a missing place in T or T′).
///
/// `game` must have the same nodes as the real game, and each position's options in it
/// must be real options that include every one that can still be best, for α and for β, at
/// every iteration from now on: the iteration's kernel's live lists. Then the
/// set X of positions returned is closed under `game`'s options, and on X the sequences
/// αₙ, βₙ follow `game`'s recursion from now on. That recursion is monotone, and started
/// from 0 and 1 it converges to s on X (the certificate on the closed set X, a game of its
/// own); started from the current αₙ ≥ 0 and βₙ ≤ 1 it therefore ends with lim α ≥ s ≥
/// lim β, hence α = β = s on X. The current guess s then lies in every later [αₘ, βₘ], so
/// it never changes again.
pub fn proved_final(g: &impl Imaged, game: &Graph) -> Vec<bool> {
    let cert = certify(g, game);
    let positions = game.positions();
    let mut proved = vec![true; positions];
    let mut stack: Vec<u32> = Vec::new();
    for &p in cert
        .violations
        .iter()
        .chain(&cert.alpha_failures)
        .chain(&cert.beta_failures)
    {
        if std::mem::take(&mut proved[p as usize]) {
            stack.push(p);
        }
    }
    // Everything that reaches a failure, by a backward walk.
    let (white_rev, black_rev) = (
        game.white_adjacency().reversed(game.nodes()),
        game.black_adjacency().reversed(game.nodes()),
    );
    while let Some(t) = stack.pop() {
        let t = t as usize;
        for &p in white_rev.get(t).iter().chain(black_rev.get(t)) {
            if (p as usize) < positions && std::mem::take(&mut proved[p as usize]) {
                stack.push(p);
            }
        }
    }
    proved
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Images;
    use num_bigint::BigUint;
    use num_rational::Ratio;

    /// The retrograde pass that [`closure`] replaced: predecessor lists, a counter of the
    /// `all` options not yet in, one frontier per level. The reference for [`closure`].
    /// `greedy[p]`: the options that let p join as soon as one
    /// of them is in; `all[p]`: the options that let p join once every one of them is in;
    /// `start`: the level of each terminal node. A position joins at level k + 1 in the round
    /// after the options that let it join are in at level ≤ k. Returns each node's level
    /// ([`UNREACHED`] if never).
    fn closure_by_retrograde(
        graph: &Graph,
        greedy: &Adjacency,
        all: &Adjacency,
        start: &[u32],
    ) -> Vec<u32> {
        let nodes = graph.nodes();
        let positions = graph.positions();
        assert_eq!(
            start.len(),
            nodes - positions,
            "one start level per terminal"
        );
        let (greedy_rev, all_rev) = (greedy.reversed(nodes), all.reversed(nodes));
        let mut remaining: Vec<u32> = (0..positions).map(|p| all.get(p).len() as u32).collect();
        let mut level = vec![UNREACHED; nodes];
        // Terminal nodes enter at their start levels, in increasing order.
        let mut seeds: Vec<(u32, u32)> = start
            .iter()
            .enumerate()
            .filter(|(_, l)| **l != UNREACHED)
            .map(|(t, &l)| (l, (positions + t) as u32))
            .collect();
        seeds.sort_unstable();
        let mut seeds = seeds.into_iter().peekable();
        let mut frontier: Vec<u32> = Vec::new();
        let mut k = 0;
        loop {
            while let Some(&(l, t)) = seeds.peek()
                && l == k
            {
                level[t as usize] = k;
                frontier.push(t);
                seeds.next();
            }
            if frontier.is_empty() {
                match seeds.peek() {
                    Some(&(l, _)) => {
                        k = l;
                        continue;
                    }
                    None => break,
                }
            }
            let mut next = Vec::new();
            for &x in &frontier {
                for &p in greedy_rev.get(x as usize) {
                    let p = p as usize;
                    if p < positions && level[p] == UNREACHED {
                        level[p] = k + 1;
                        next.push(p as u32);
                    }
                }
                for &p in all_rev.get(x as usize) {
                    let p = p as usize;
                    if p < positions {
                        remaining[p] -= 1;
                        if remaining[p] == 0 && level[p] == UNREACHED {
                            level[p] = k + 1;
                            next.push(p as u32);
                        }
                    }
                }
            }
            frontier = next;
            k += 1;
        }
        level
    }

    fn v(n: u64, d: u64) -> Value {
        Value::small(n, d)
    }

    /// Values of the positions, then 1 and 0 for the two terminal nodes.
    fn images_of(positions: Vec<Value>) -> Images {
        let mut all = positions;
        all.push(Value::one());
        all.push(Value::zero());
        Images::new(all, 2)
    }

    /// The game of random option lists (White's, Black's) per position: targets beyond
    /// the positions become the win and the loss, alternately.
    fn random_game(lists: &[(Vec<u32>, Vec<u32>)]) -> Graph {
        let n = lists.len() as u32;
        let fold = |t: u32| if t < n { t } else { n + t % 2 };
        let folded = |l: &[u32]| -> Vec<u32> { l.iter().map(|&t| fold(t)).collect() };
        Graph::from_lists(
            lists.iter().map(|(w, _)| folded(w)).collect(),
            lists.iter().map(|(_, b)| folded(b)).collect(),
        )
    }

    /// P0: White {win, P1}, Black {P1}; P1: White {P0}, Black {loss, P0}.
    /// s0 = (1 + s1)/2, s1 = (s0 + 0)/2, so s0 = 2/3, s1 = 1/3.
    fn two_positions() -> Graph {
        let (win, loss) = (2, 3);
        Graph::from_lists(vec![vec![win, 1], vec![0]], vec![vec![1], vec![loss, 0]])
    }

    proptest::proptest! {
        /// The level-by-level scan gives the retrograde pass's levels, on random games
        /// (positions without options, repeated options, start levels with gaps and
        /// terminals kept out included).
        #[test]
        fn closure_equals_the_retrograde_pass(
            lists in proptest::collection::vec(
                (
                    proptest::collection::vec(0u32..40, 0..4),
                    proptest::collection::vec(0u32..40, 0..4),
                ),
                1..38,
            ),
            greedy_picks in proptest::collection::vec(proptest::bool::ANY, 160),
            starts in (0u32..6, 0u32..6, proptest::bool::ANY),
        ) {
            let n = lists.len() as u32;
            // Targets beyond the positions become the two terminal nodes.
            let fold = |t: u32| if t < n { t } else { n + t % 2 };
            let white: Vec<Vec<u32>> =
                lists.iter().map(|(w, _)| w.iter().map(|&t| fold(t)).collect()).collect();
            let black: Vec<Vec<u32>> =
                lists.iter().map(|(_, b)| b.iter().map(|&t| fold(t)).collect()).collect();
            let graph = Graph::from_lists(white.clone(), black);
            // Greedy options: a sample of White's own.
            let mut pick = greedy_picks.iter().cycle();
            let greedy = Adjacency::from_lists(
                white
                    .iter()
                    .map(|w| w.iter().copied().filter(|_| *pick.next().unwrap()).collect())
                    .chain([Vec::new(), Vec::new()]),
            );
            let start = vec![starts.0, if starts.2 { UNREACHED } else { starts.1 }];
            let all = graph.black_adjacency();
            proptest::prop_assert_eq!(
                closure(&graph, &greedy, all, &start),
                closure_by_retrograde(&graph, &greedy, all, &start)
            );
        }
    }

    proptest::proptest! {
        /// Released images (the heads alone) give the certificate of the full images, on
        /// random games whose values include pairs that agree in their heads and differ
        /// further down: those comparisons fall to the exact values.
        #[test]
        fn released_images_give_the_same_certificate(
            lists in proptest::collection::vec(
                (
                    proptest::collection::vec(0u32..30, 1..4),
                    proptest::collection::vec(0u32..30, 1..4),
                ),
                1..28,
            ),
            picks in proptest::collection::vec(0usize..8, 28),
        ) {
            let graph = random_game(&lists);
            // base + 2^-bits / base's denominator: the same head, another value.
            let tiny = |bits: u32, base: Value| {
                Value::new((&*base.numer() << bits) + 1u8, &*base.denom() << bits)
            };
            let pool = [
                v(1, 3),
                tiny(90, v(1, 3)),
                v(1, 2),
                tiny(70, v(1, 2)),
                tiny(200, v(1, 2)),
                v(2, 3),
                v(5, 8),
                tiny(100, v(5, 8)),
            ];
            let values: Vec<Value> = picks[..lists.len()].iter().map(|&k| pool[k].clone()).collect();
            let full = images_of(values.clone());
            let mut released = images_of(values);
            released.release_images();
            proptest::prop_assert_eq!(certify(&full, &graph), certify(&released, &graph));
        }
    }

    #[test]
    fn closure_levels_on_a_hand_made_graph() {
        let graph = two_positions();
        let g = images_of(vec![v(2, 3), v(1, 3)]);
        let c = certify(&g, &graph);
        assert!(c.violations.is_empty());
        // T: P0 has a greedy White move to win (level 1); P1's greedy move goes to P0 (2).
        assert_eq!(&c.white_levels[..2], &[1, 2]);
        // T′: P1's greedy Black move is the capture (1); P0's greedy move goes to P1 (2).
        assert_eq!(&c.black_levels[..2], &[2, 1]);
        assert!(c.certified());
        assert!(c.quiescent.is_empty());
    }

    proptest::proptest! {
        /// On random games, with the win's and the loss's values changed (as an exit's β
        /// replaces its α), a certificate made again from the one before equals one made
        /// from scratch.
        #[test]
        fn a_certificate_again_equals_one_from_scratch(
            lists in proptest::collection::vec(
                (
                    proptest::collection::vec(0u32..30, 1..4),
                    proptest::collection::vec(0u32..30, 1..4),
                ),
                1..28,
            ),
            picks in proptest::collection::vec(0usize..6, 28),
            ends in proptest::collection::vec(0usize..6, 2),
            change in proptest::collection::vec(proptest::bool::ANY, 2),
        ) {
            let graph = random_game(&lists);
            let pool = [v(0, 1), v(1, 3), v(1, 2), v(2, 3), v(5, 8), v(1, 1)];
            let mut values: Vec<Value> =
                picks[..lists.len()].iter().map(|&k| pool[k].clone()).collect();
            values.extend([Value::one(), Value::zero()]);
            let start = Start::at_zero(&graph);
            let before = certify_from(&Images::new(values.clone(), 2), &graph, &start);
            let mut changed = vec![false; values.len()];
            for k in 0..2 {
                if change[k] {
                    values[lists.len() + k] = pool[ends[k]].clone();
                    changed[lists.len() + k] = true;
                }
            }
            let now = Images::new(values, 2);
            proptest::prop_assert_eq!(
                certify_again(&now, &graph, &start, &before, &changed),
                certify_from(&now, &graph, &start)
            );
        }
    }

    /// Certified again with the win worth 1/2: P0, whose White move reaches it, is checked
    /// again and fails; P1 and P2, which do not reach it, keep the earlier verdicts.
    #[test]
    fn a_certificate_again_checks_the_positions_an_exit_change_reaches() {
        // two_positions, and P2: White {P1}, Black {P1} (s2 = s1).
        let (win, loss) = (3, 4);
        let graph = Graph::from_lists(
            vec![vec![win, 1], vec![0], vec![1]],
            vec![vec![1], vec![loss, 0], vec![1]],
        );
        let start = Start::at_zero(&graph);
        let before = certify(&images_of(vec![v(2, 3), v(1, 3), v(1, 3)]), &graph);
        assert!(before.certified());
        let changed_values =
            Images::new(vec![v(2, 3), v(1, 3), v(1, 3), v(1, 2), Value::zero()], 2);
        let changed = [false, false, false, true, false];
        let again = certify_again(&changed_values, &graph, &start, &before, &changed);
        assert_eq!(again, certify_from(&changed_values, &graph, &start));
        assert_eq!(again.violations, vec![0]);
        // The verdicts kept are before's: one that said P2 failed is kept, P0's is not.
        let said = Certificate {
            violations: vec![0, 2],
            ..certify(&images_of(vec![v(2, 3), v(1, 3), v(1, 3)]), &graph)
        };
        let kept = certify_again(&changed_values, &graph, &start, &said, &changed);
        assert_eq!(kept.violations, vec![0, 2]);
        let unchanged = certify_again(&changed_values, &graph, &start, &said, &[false; 5]);
        assert_eq!(unchanged.violations, vec![0, 2], "nothing checked again");
    }

    /// The shift-only path (denominators 3·2^i) and the cross-multiplying one agree.
    #[test]
    fn equations_with_a_shared_odd_denominator() {
        let cases = [
            ([v(7, 24), v(1, 6), v(5, 12)], true),
            ([v(7, 24), v(1, 6), v(7, 12)], false),
            ([v(1, 3), v(1, 3), v(1, 3)], true),
            ([v(5, 12), v(1, 3), v(1, 2)], true),
            ([v(5, 12), v(1, 3), v(2, 3)], false),
            // x's odd part 15 shared with one target only (the other's is 3).
            ([v(7, 30), v(2, 15), v(1, 3)], true),
            ([v(7, 30), v(1, 3), v(2, 15)], true),
            ([v(7, 60), v(1, 15), v(1, 6)], true),
            ([v(7, 30), v(2, 15), v(2, 3)], false),
            // 2x less the shared target is negative.
            ([v(1, 30), v(2, 15), v(1, 3)], false),
        ];
        for (values, holds) in cases {
            let g = images_of(values.to_vec());
            assert_eq!(equation_holds_with(&g, 0, 1, 2), holds, "{values:?}");
            let x = values[0].to_ratio() * v(2, 1).to_ratio();
            assert_eq!(x == values[1].to_ratio() + values[2].to_ratio(), holds);
        }
    }

    proptest::proptest! {
        /// Every path of the exact equation check (one denominator, shared odd parts, a
        /// cancelled factor with a short or a long quotient, three odd parts over a common
        /// multiple, cross-multiplication, values not in lowest terms) agrees with rational
        /// arithmetic.
        #[test]
        fn equation_check_equals_rational_arithmetic(
            odd in proptest::collection::vec(0usize..9, 3),
            twos in proptest::collection::vec(0u32..6, 3),
            nums in proptest::collection::vec(0u64..400, 2),
            reduce in proptest::bool::ANY,
            shift in 0u32..3,
        ) {
            // Odd parts that divide one another, by short and by long quotients; a long
            // core times short factors, neither dividing the other (5 and 7, their least
            // common multiple 35); and quotients and divisors both too long to divide.
            let long = BigUint::from(3u8).pow(120);
            let longer = BigUint::from(3u8).pow(700);
            let odds = [
                BigUint::from(1u8),
                BigUint::from(3u8),
                BigUint::from(15u8),
                long.clone(),
                &long * 5u8,
                &long * 7u8,
                long * 35u8,
                longer.clone(),
                longer * BigUint::from(7u8).pow(400),
            ];
            let den = |t: usize| &odds[odd[t]] << twos[t];
            let make = |n: BigUint, d: BigUint| {
                if reduce {
                    Value::from(Ratio::new(n, d))
                } else {
                    Value::new_raw(n, d)
                }
            };
            let (dy, dz) = (den(1), den(2));
            let y = make(BigUint::from(nums[0]) * &dy / 400u32, dy);
            let z = make(BigUint::from(nums[1]) * &dz / 400u32, dz);
            // x: the true mean half of the time (written over a multiple of its
            // denominator), else a neighbour.
            let mean = (y.to_ratio() + z.to_ratio()) / Ratio::from_integer(BigUint::from(2u8));
            let scale = BigUint::from(1u8) << shift;
            let x = if nums[0] % 2 == 0 {
                make(mean.numer() * &scale, mean.denom() * &scale)
            } else {
                let d = den(0);
                make(BigUint::from(nums[0] + nums[1]) * &d / 800u32, d)
            };
            let want = x.to_ratio() * Ratio::from_integer(BigUint::from(2u8))
                == y.to_ratio() + z.to_ratio();
            let g = images_of(vec![x, y, z]);
            proptest::prop_assert_eq!(equation_holds_with(&g, 0, 1, 2), want);
        }
    }

    /// Odd parts a long core times short factors where x lost a factor of the core: none
    /// of the three divides by the others, and the equation goes over the targets' least
    /// common multiple (found by Euclid in short steps), not by cross-multiplication.
    #[test]
    fn equations_over_the_targets_least_common_multiple() {
        let core = BigUint::from(3u8).pow(120);
        let over = |n: u32, d: BigUint| Value::from(Ratio::new(BigUint::from(n), d));
        // 1/(5c) + 1/(7c) = 12/(35c) = 2 · 2/(35c/3).
        let (y, z) = (over(1, &core * 5u8), over(1, &core * 7u8));
        for (n, holds) in [(2, true), (4, false), (1, false)] {
            let x = over(n, &core * 35u8 / 3u8);
            let parts = |v: &Value| (v.numer().into_owned(), (**v.shared_odd()).clone());
            let ((xn, rx), (yn, ry), (zn, rz)) = (parts(&x), parts(&y), parts(&z));
            let found = over_a_common_odd_multiple((&xn, 0, &rx), (&yn, 0, &ry), (&zn, 0, &rz));
            assert_eq!(found, Some(holds), "x = {n}/(35c/3)");
            let g = images_of(vec![x, y.clone(), z.clone()]);
            assert_eq!(equation_holds_with(&g, 0, 1, 2), holds);
        }
        assert_eq!(
            short_lcm(&(&core * 5u8), &(&core * 7u8)),
            Some(&core * 35u8)
        );
        assert_eq!(
            short_lcm(&(&core * 5u8), &BigUint::from(21u8)),
            Some(&core * 35u8)
        );
        // A long cofactor by a short divisor is short enough.
        let long = BigUint::from(7u8).pow(700);
        assert_eq!(
            short_lcm(&(&core * &long), &(&core * 55u8)),
            Some(&core * &long * 55u8)
        );
        // A core of 1,110 bits: cofactors of 1,100 bits need more Euclid steps than
        // allowed, and a 1,965-bit quotient by it is a long division.
        let core = BigUint::from(3u8).pow(700);
        let (a, b) = (BigUint::from(7u8).pow(400), BigUint::from(11u8).pow(330));
        assert_eq!(short_lcm(&(&core * a), &(&core * b)), None);
        assert_eq!(short_lcm(&(&core * long), &(&core * 5u8)), None);
    }

    #[test]
    fn a_nudged_value_breaks_the_equations() {
        let graph = two_positions();
        let g = images_of(vec![
            v(2, 3),
            Value::from(v(1, 3).to_ratio() + v(1, 1 << 40).to_ratio()),
        ]);
        let c = certify(&g, &graph);
        assert_eq!(c.violations, vec![0, 1]);
        assert!(!c.certified());
    }

    /// Two positions that only lead to each other: every constant satisfies the equations,
    /// but no terminal is reachable, so α = 0 and β = 1; the closures must refuse 1/2.
    #[test]
    fn a_richman_function_that_is_not_alpha_is_refused() {
        let graph = Graph::from_lists(vec![vec![1], vec![0]], vec![vec![1], vec![0]]);
        let g = images_of(vec![v(1, 2), v(1, 2)]);
        let c = certify(&g, &graph);
        assert!(
            c.violations.is_empty(),
            "1/2 everywhere is a Richman function here"
        );
        assert_eq!(c.alpha_failures, vec![0, 1]);
        assert_eq!(c.beta_failures, vec![0, 1]);
        assert_eq!(c.white_levels[0], UNREACHED);
        assert!(!c.certified());
        assert_eq!(c.quiescent, vec![0, 1]);
    }

    /// A cycle of greedy White moves beside a winning exit: P0 and P1 each have a greedy
    /// move to the other and Black moves only between them, but P0 can also capture. With
    /// s = 1 everywhere the equations hold; the closure must still place both positions.
    #[test]
    fn greedy_cycles_are_walked_out_of_by_levels() {
        let win = 2;
        let graph = Graph::from_lists(vec![vec![1, win], vec![0]], vec![vec![1], vec![0]]);
        let g = images_of(vec![v(1, 1), v(1, 1)]);
        let c = certify(&g, &graph);
        assert!(c.violations.is_empty());
        // P0's capture is greedy (level 1); P1 reaches P0 (level 2): no circling.
        assert_eq!(&c.white_levels[..2], &[1, 2]);
        assert!(c.alpha_failures.is_empty());
    }

    /// P0 and P1 are the certified pair of `two_positions`; P2 and P3 only lead to each
    /// other (1/2 is Richman there but not proved); P4 passes the certificate itself (its
    /// greedy moves go to P0 and P1) but has an option to P2, so it is not proved either.
    #[test]
    fn proved_final_excludes_failures_and_what_reaches_them() {
        let (win, loss) = (5, 6);
        let graph = Graph::from_lists(
            vec![vec![win, 1], vec![0], vec![3], vec![2], vec![0, 2]],
            vec![vec![1], vec![loss, 0], vec![3], vec![2], vec![1]],
        );
        let g = images_of(vec![v(2, 3), v(1, 3), v(1, 2), v(1, 2), v(1, 2)]);
        let c = certify(&g, &graph);
        assert!(c.violations.is_empty(), "every equation holds");
        assert_eq!(c.alpha_failures, vec![2, 3]);
        assert_eq!(c.beta_failures, vec![2, 3]);
        assert_eq!(
            proved_final(&g, &graph),
            vec![true, true, false, false, false]
        );
        // Cutting P4's way to the unproved pair proves it.
        let graph = Graph::from_lists(
            vec![vec![win, 1], vec![0], vec![3], vec![2], vec![0]],
            vec![vec![1], vec![loss, 0], vec![3], vec![2], vec![1]],
        );
        let g = images_of(vec![v(2, 3), v(1, 3), v(1, 2), v(1, 2), v(1, 2)]);
        assert_eq!(
            proved_final(&g, &graph),
            vec![true, true, false, false, true]
        );
    }
}
