//! The iteration kernel: exact αₙ and βₙ for every node of a game graph, in fixed point.
//!
//! A value v in [0, 1] is held as the integer `v · 2^F` with `F = 64·W − 1`, in `W`
//! little-endian 64-bit limbs. So 1 is the top bit of the top limb, and the top limb alone is
//! `floor(v · 2^63)`: the *head*, kept in a compact array so that comparisons, which the head
//! nearly always decides, stay in cache. One step is `A' = (A_w + A_b) >> 1` where `w`
//! maximises and `b` minimises over the successors: one multi-limb add and shift, no
//! division and no allocation. Since αₙ and βₙ have denominator 2ⁿ, the limbs below bit
//! `F − n` are zero and are skipped (SPEC §3). When n reaches F the width grows, which only
//! shifts limbs.
//!
//! α and β of a node sit side by side (heads, rows), since both are read together.
//!
//! **Pruning.** α only rises and β only falls, so a White option `t` with
//! `β(t) < max α` over the options can never again be White's best, in either sequence;
//! likewise a Black option with `α(t) > min β`. The kernel keeps its own copy of the
//! successor lists and drops such options for good (proved from the heads alone), so that
//! after a while most lists hold one option and need no scan.
//!
//! **Retiring.** A caller that has proved some positions' values final (their guesses
//! certified on the game of live options, [`Kernel::live_game`]) may retire those that no
//! other position still needs: those outside the closure, through live options, of the
//! positions not proved. Their rows are then no longer computed nor read. Options
//! dominated at every iteration (under-promotions, see [`crate::graph`]) are left out of
//! the live lists from the start, which is what lets whole classes (KRvK, KBvK) stop once
//! their values are proved, and most of KPvK and KQvK with them. A caller that no longer
//! needs the retired positions' rows at all may instead [`Kernel::compact`] the kernel:
//! the needed positions are renumbered into dense arrays, which on 8x8 makes a late
//! iteration read about a quarter of the memory it did.
//!
//! The kernel knows nothing of rationals: a caller-supplied check sees each new pair of rows
//! while they are hot in cache (the guesses use it).

use std::cmp::Ordering;

use num_bigint::BigUint;
use rayon::prelude::*;

use crate::graph::Graph;
use crate::value::Value;

/// Positions handled per parallel task.
const CHUNK: usize = 512;
/// How many positions ahead the rows of chosen options are prefetched.
const PREFETCH_DISTANCE: usize = 16;
/// Iterations between two pruning passes.
const PRUNE_EVERY: u32 = 4;
const ALPHA: usize = 0;
const BETA: usize = 1;

/// Live successor lists: each node's slot of the graph's list, of which the first `len`
/// entries are still candidates.
#[derive(Debug)]
struct Live {
    offsets: Vec<u32>,
    targets: Vec<u32>,
    len: Vec<u8>,
}

impl Live {
    fn from_graph(positions: usize, get: &dyn Fn(usize) -> Vec<u32>) -> Live {
        let mut live = Live {
            offsets: vec![0],
            targets: Vec::new(),
            len: Vec::with_capacity(positions),
        };
        for p in 0..positions {
            let l = get(p);
            live.len.push(l.len().min(255) as u8);
            live.targets.extend(l);
            live.offsets.push(live.targets.len() as u32);
        }
        live
    }

    #[inline]
    fn get(&self, p: usize) -> &[u32] {
        let s = self.offsets[p] as usize;
        &self.targets[s..s + self.len[p] as usize]
    }
}

/// One buffer: rows (node-major, α row then β row), heads and lowest non-zero limbs.
#[derive(Debug, Clone)]
struct Buffer {
    rows: Vec<u64>,
    heads: Vec<[u64; 2]>,
    /// Lowest non-zero limb of each row (W for zero): equal heads and both rows having
    /// nothing below the head means equal values, with no deeper read.
    low: Vec<[u16; 2]>,
}

/// The α and β sequences of every node, at iteration `n`.
#[derive(Debug)]
pub struct Kernel {
    width: usize,
    n: u32,
    cur: usize,
    buf: [Buffer; 2],
    white: Live,
    black: Live,
    win: u32,
    loss: u32,
    /// Per node and bound, the iteration from which the value is known to be constant
    /// ([`NOT_FROZEN`] if not known). Frozen rows are held in both buffers and not recomputed.
    frozen_at: Vec<[u32; 2]>,
    /// Bounds found constant from the next iteration on, frozen after the next step.
    pending: Vec<(u32, [bool; 2])>,
    /// Per position, whether it is retired: no longer computed (see [`Kernel::retire`]).
    retired: Vec<bool>,
    /// Positions dropped by [`Kernel::compact`] (retired for good, rows gone).
    dropped: usize,
    /// What the dropped positions had, for the statistics: live White and Black options,
    /// frozen α and β.
    dropped_live: [usize; 2],
    dropped_frozen: [usize; 2],
}

/// `frozen_at` of a bound still moving.
const NOT_FROZEN: u32 = u32::MAX;

/// A borrowed view of one bound (α or β) at the current iteration.
#[derive(Clone, Copy)]
pub struct View<'a> {
    width: usize,
    which: usize,
    buf: &'a Buffer,
}

impl<'a> View<'a> {
    /// The limbs of node `i`, least significant first.
    #[inline]
    pub fn row(&self, i: usize) -> &'a [u64] {
        let s = (2 * i + self.which) * self.width;
        &self.buf.rows[s..s + self.width]
    }

    /// `floor(v · 2^63)` of node `i`.
    #[inline]
    pub fn head(&self, i: usize) -> u64 {
        self.buf.heads[i][self.which]
    }

    /// Compare the values of nodes `i` and `j` exactly.
    #[inline]
    pub fn cmp(&self, i: usize, j: usize) -> Ordering {
        let (hi, hj) = (self.head(i), self.head(j));
        if hi != hj || i == j {
            return hi.cmp(&hj);
        }
        let li = self.buf.low[i][self.which] as usize;
        let lj = self.buf.low[j][self.which] as usize;
        let (ri, rj) = (self.row(i), self.row(j));
        for k in (li.max(lj)..self.width - 1).rev() {
            if ri[k] != rj[k] {
                return ri[k].cmp(&rj[k]);
            }
        }
        // Equal down to the higher of the two lowest non-zero limbs.
        lj.cmp(&li)
    }

    /// The exact value of node `i`.
    pub fn value(&self, i: usize) -> Value {
        limbs_to_value(self.row(i))
    }
}

/// The exact value `limbs / 2^(64·len − 1)`.
pub fn limbs_to_value(limbs: &[u64]) -> Value {
    let digits: Vec<u32> = limbs
        .iter()
        .flat_map(|&l| [l as u32, (l >> 32) as u32])
        .collect();
    Value::new(
        BigUint::new(digits),
        BigUint::from(1u8) << (64 * limbs.len() - 1),
    )
}

/// Ask the processor to start loading `data` into cache (a hint; no effect on results).
#[inline]
fn prefetch(data: &[u64]) {
    #[cfg(target_arch = "x86_64")]
    for line in data.chunks(8) {
        // SAFETY: prefetching is a hint that never faults; the pointer comes from a live slice.
        unsafe {
            std::arch::x86_64::_mm_prefetch(
                line.as_ptr() as *const i8,
                std::arch::x86_64::_MM_HINT_T0,
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// `dst = (a + b) >> 1` over limbs `lo..W`; limbs below `lo` are zero in all three.
/// Returns the lowest non-zero limb of `dst` (W if zero).
#[inline]
fn half_sum(dst: &mut [u64], a: &[u64], b: &[u64], lo: usize) -> u16 {
    let w = dst.len();
    let mut carry = false;
    let mut prev = 0u64;
    let mut lowest = w;
    for k in lo..w {
        let (s1, c1) = a[k].overflowing_add(b[k]);
        let (s2, c2) = s1.overflowing_add(carry as u64);
        carry = c1 | c2;
        if k > lo {
            let out = (prev >> 1) | (s2 << 63);
            dst[k - 1] = out;
            if out != 0 && lowest == w {
                lowest = k - 1;
            }
        }
        prev = s2;
    }
    let top = (prev >> 1) | ((carry as u64) << 63);
    dst[w - 1] = top;
    if top != 0 && lowest == w {
        lowest = w - 1;
    }
    lowest as u16
}

/// What a step hands the per-position check: the node, its new α and β rows, and the
/// lowest limb that may be non-zero.
pub struct Fresh<'a> {
    /// The node.
    pub node: usize,
    /// αₙ₊₁ of the node, least significant limb first.
    pub alpha: &'a [u64],
    /// βₙ₊₁ of the node.
    pub beta: &'a [u64],
    /// Limbs below this index are zero in both rows.
    pub lo: usize,
}

/// The best White option (largest) and best Black option (smallest) for one bound.
#[inline]
fn best(v: &View<'_>, list: &[u32], maximise: bool) -> u32 {
    let mut best = list[0];
    let mut best_head = v.head(best as usize);
    let want = if maximise {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    for &t in &list[1..] {
        let h = v.head(t as usize);
        let better = if h != best_head {
            (h > best_head) == maximise
        } else {
            v.cmp(t as usize, best as usize) == want
        };
        if better {
            best = t;
            best_head = h;
        }
    }
    best
}

/// A side's best option for one bound. A king capture (listed first) is always best, and
/// a single live option needs no comparison.
#[inline]
fn choose(v: &View<'_>, list: &[u32], capture: u32, maximise: bool) -> u32 {
    if list[0] == capture || list.len() == 1 {
        list[0]
    } else {
        best(v, list, maximise)
    }
}

/// The pick of a bound that is not computed (frozen, or the position retired): nothing
/// to choose, nothing to prefetch.
const SKIP: u32 = u32::MAX;

impl Kernel {
    /// α₀ = 0 and β₀ = 1 on every position; the terminal nodes hold 1 (win) and 0 (loss).
    /// `width` is the initial number of limbs (the kernel widens itself when needed).
    pub fn new(graph: &Graph, width: usize) -> Kernel {
        let width = width.max(2);
        let nodes = graph.nodes();
        let (win, loss) = (graph.win(), graph.loss());
        let positions = graph.positions();
        let mut b = Buffer {
            rows: vec![0u64; 2 * nodes * width],
            heads: vec![[0, 0]; nodes],
            low: vec![[width as u16; 2]; nodes],
        };
        let mut set_one = |i: usize, which: usize| {
            b.rows[(2 * i + which) * width + width - 1] = 1 << 63;
            b.heads[i][which] = 1 << 63;
            b.low[i][which] = (width - 1) as u16;
        };
        set_one(win as usize, ALPHA);
        set_one(win as usize, BETA);
        for i in 0..positions {
            set_one(i, BETA);
        }
        let mut frozen_at = vec![[NOT_FROZEN; 2]; nodes];
        frozen_at[win as usize] = [0, 0];
        frozen_at[loss as usize] = [0, 0];
        Kernel {
            frozen_at,
            pending: Vec::new(),
            retired: vec![false; positions],
            dropped: 0,
            dropped_live: [0, 0],
            dropped_frozen: [0, 0],
            width,
            n: 0,
            cur: 0,
            buf: [b.clone(), b],
            white: Live::from_graph(positions, &|p| {
                let dominated = graph.white_dominated(p);
                let list = graph.white(p).iter().copied();
                list.filter(|t| dominated.binary_search(t).is_err())
                    .collect()
            }),
            black: Live::from_graph(positions, &|p| graph.black(p).to_vec()),
            win,
            loss,
        }
    }

    /// A kernel at iteration `n` holding the given rows (`2 · nodes · width` limbs, node
    /// after node, α row then β row, as [`Kernel::rows`] returns them), for resuming a run
    /// from a checkpoint. Pruning and freezing start afresh; they never change a value.
    pub fn restore(graph: &Graph, n: u32, width: usize, rows: Vec<u64>) -> Kernel {
        let mut k = Kernel::new(graph, width);
        assert_eq!(
            rows.len(),
            2 * graph.nodes() * k.width,
            "rows of every node"
        );
        let w = k.width;
        let heads: Vec<[u64; 2]> = rows
            .chunks_exact(2 * w)
            .map(|r| [r[w - 1], r[2 * w - 1]])
            .collect();
        let low: Vec<[u16; 2]> = rows
            .chunks_exact(2 * w)
            .map(|r| {
                let lowest = |row: &[u64]| row.iter().position(|&l| l != 0).unwrap_or(w) as u16;
                [lowest(&r[..w]), lowest(&r[w..])]
            })
            .collect();
        for b in &mut k.buf {
            b.rows.clone_from(&rows);
            b.heads.clone_from(&heads);
            b.low.clone_from(&low);
        }
        k.n = n;
        k
    }

    /// The rows of every node at the current iteration: node after node, α row then β
    /// row, `width` little-endian limbs each (what [`Kernel::restore`] takes).
    pub fn rows(&self) -> &[u64] {
        &self.buf[self.cur].rows
    }

    /// The iteration number n of the values held.
    pub fn iteration(&self) -> u32 {
        self.n
    }

    /// Nodes held: positions (fewer after [`Kernel::compact`]) and the two terminal nodes.
    pub fn nodes(&self) -> usize {
        self.white.len.len() + 2
    }

    /// Limbs per value.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Fraction bits F: values are integers over 2^F.
    pub fn fraction_bits(&self) -> usize {
        64 * self.width - 1
    }

    /// αₙ.
    pub fn alpha(&self) -> View<'_> {
        View {
            width: self.width,
            which: ALPHA,
            buf: &self.buf[self.cur],
        }
    }

    /// βₙ.
    pub fn beta(&self) -> View<'_> {
        View {
            width: self.width,
            which: BETA,
            buf: &self.buf[self.cur],
        }
    }

    /// Benchmarks only: claim to be at iteration `n` (widening as needed) so that a step
    /// works on as many limbs as it would there. The values held are not αₙ, βₙ.
    #[doc(hidden)]
    pub fn pretend_iteration(&mut self, n: u32) {
        let needed = (n as usize + 2).div_ceil(64);
        self.widen(needed);
        self.n = n;
    }

    /// Options still live for White and Black (for statistics).
    pub fn live_options(&self) -> (usize, usize) {
        let sum = |l: &Live| l.len.iter().map(|&x| x as usize).sum::<usize>();
        (
            self.dropped_live[0] + sum(&self.white),
            self.dropped_live[1] + sum(&self.black),
        )
    }

    /// Retire the positions marked in `proved` (one flag per position: its value is known
    /// final) that no unproved position can reach through live options, directly or
    /// through other positions; return how many positions are retired in all. The rows of
    /// a retired position are no longer computed, and nothing reads them any more: the
    /// live lists only shrink, so once outside that closure a position stays outside.
    pub fn retire(&mut self, proved: &[bool]) -> usize {
        let positions = self.white.len.len();
        assert_eq!(proved.len(), positions, "one flag per position");
        let sought: Vec<bool> = proved.iter().map(|&p| !p).collect();
        let needed = self.closure(&sought);
        for (r, needed) in self.retired.iter_mut().zip(needed) {
            *r |= !needed;
        }
        self.retired()
    }

    /// The positions reachable through live options from those marked in `seeds`
    /// (themselves included).
    fn closure(&self, seeds: &[bool]) -> Vec<bool> {
        let positions = self.white.len.len();
        let mut needed = seeds.to_vec();
        let mut stack: Vec<u32> = (0..positions as u32)
            .filter(|&p| needed[p as usize])
            .collect();
        while let Some(p) = stack.pop() {
            let p = p as usize;
            for &t in self.white.get(p).iter().chain(self.black.get(p)) {
                if (t as usize) < positions && !needed[t as usize] {
                    needed[t as usize] = true;
                    stack.push(t);
                }
            }
        }
        needed
    }

    /// The game restricted to the live options: every option that can still be best for
    /// α or β from now on, and only real options (see the module comment). Same nodes as
    /// the kernel's graph, for [`crate::certificate::proved_final`].
    pub fn live_game(&self) -> Graph {
        let positions = self.white.len.len();
        Graph::from_lists(
            (0..positions).map(|p| self.white.get(p).to_vec()).collect(),
            (0..positions).map(|p| self.black.get(p).to_vec()).collect(),
        )
    }

    /// Positions retired so far (those dropped by [`Kernel::compact`] included).
    pub fn retired(&self) -> usize {
        self.dropped + self.retired.iter().filter(|&&r| r).count()
    }

    /// Keep only the positions that the positions marked in `sought` need: those and
    /// every position they reach through live options (the closure of [`Kernel::retire`]),
    /// renumbered in their old order, with the terminal nodes after them. Their rows,
    /// heads, live lists and frozen bounds move down in place; everything else is dropped,
    /// so the buffers shrink and later steps read a denser memory. Returns, for each new
    /// position, its old number (the caller maps node numbers through it from now on).
    /// No value changes: the kept positions read only kept positions.
    pub fn compact(&mut self, sought: &[bool]) -> Vec<u32> {
        let positions = self.white.len.len();
        assert_eq!(sought.len(), positions, "one flag per position");
        let keep = self.closure(sought);
        let kept: Vec<u32> = (0..positions as u32)
            .filter(|&p| keep[p as usize])
            .collect();
        let count = kept.len();
        for p in (0..positions).filter(|&p| !keep[p]) {
            self.dropped_live[0] += self.white.len[p] as usize;
            self.dropped_live[1] += self.black.len[p] as usize;
            for w in [ALPHA, BETA] {
                self.dropped_frozen[w] += (self.frozen_at[p][w] != NOT_FROZEN) as usize;
            }
        }
        // Old node number → new, for kept positions and the two terminal nodes.
        let mut renumber = vec![u32::MAX; positions + 2];
        for (new, &old) in kept.iter().enumerate() {
            renumber[old as usize] = new as u32;
        }
        renumber[positions] = count as u32;
        renumber[positions + 1] = count as u32 + 1;
        // Every kept node, terminals last: new node i holds old node order[i] ≥ i.
        let order: Vec<usize> = kept
            .iter()
            .map(|&p| p as usize)
            .chain([positions, positions + 1])
            .collect();
        let width = self.width;
        for b in &mut self.buf {
            for (new, &old) in order.iter().enumerate() {
                if new != old {
                    b.rows
                        .copy_within(2 * old * width..2 * (old + 1) * width, 2 * new * width);
                    b.heads[new] = b.heads[old];
                    b.low[new] = b.low[old];
                }
            }
            b.rows.truncate(2 * order.len() * width);
            b.rows.shrink_to_fit();
            b.heads.truncate(order.len());
            b.low.truncate(order.len());
        }
        self.frozen_at = order.iter().map(|&o| self.frozen_at[o]).collect();
        self.pending = std::mem::take(&mut self.pending)
            .into_iter()
            .filter_map(|(p, mark)| {
                let new = renumber[p as usize];
                (new != u32::MAX).then_some((new, mark))
            })
            .collect();
        for live in [&mut self.white, &mut self.black] {
            *live = Live::from_graph(count, &|new| {
                live.get(kept[new] as usize)
                    .iter()
                    .map(|&t| renumber[t as usize])
                    .collect()
            });
        }
        self.dropped += positions - count;
        self.retired = vec![false; count];
        self.win = count as u32;
        self.loss = count as u32 + 1;
        kept
    }

    /// Lowest limb that may be non-zero at iteration `n`.
    fn lowest_active(&self, n: u32) -> usize {
        (self.fraction_bits() - n as usize) / 64
    }

    /// Grow to `new_width` limbs (values are unchanged: limbs shift up).
    pub fn widen(&mut self, new_width: usize) {
        let old = self.width;
        if new_width <= old {
            return;
        }
        for b in &mut self.buf {
            let rows = b.rows.len() / old;
            // In parallel: most of the cost is the first touch of the new pages.
            let mut wide = vec![0u64; rows * new_width];
            wide.par_chunks_mut(new_width)
                .zip(b.rows.par_chunks(old))
                .for_each(|(w, r)| w[new_width - old..].copy_from_slice(r));
            b.rows = wide;
            for l in b.low.iter_mut().flatten() {
                *l += (new_width - old) as u16;
            }
        }
        self.width = new_width;
    }

    /// Whether the next iteration needs more fraction bits than the values have.
    pub fn needs_widening(&self) -> bool {
        self.n as usize + 1 > self.fraction_bits()
    }

    /// The width [`Kernel::ensure_capacity`] grows to (half as many limbs again).
    pub fn next_width(&self) -> usize {
        self.width + (self.width / 2).max(1)
    }

    /// Widen if the next iteration needs more fraction bits than the values have; returns
    /// whether the width changed (so the caller can follow).
    pub fn ensure_capacity(&mut self) -> bool {
        if self.needs_widening() {
            self.widen(self.next_width());
            true
        } else {
            false
        }
    }

    /// Advance one iteration. `check` is called once per position with its new rows; the
    /// positions for which it returns true are returned, in increasing order.
    pub fn step<C>(&mut self, check: C) -> Vec<u32>
    where
        C: Fn(&Fresh<'_>) -> bool + Sync,
    {
        assert!(
            (self.n as usize) < self.fraction_bits(),
            "call ensure_capacity before step"
        );
        let width = self.width;
        let lo = self.lowest_active(self.n + 1);
        let positions = self.white.len.len();
        let (win, loss) = (self.win, self.loss);
        let (old, new) = match &mut self.buf {
            [a, b] if self.cur == 0 => (&*a, b),
            [a, b] => (&*b, a),
        };
        let alpha = View {
            width,
            which: ALPHA,
            buf: old,
        };
        let beta = View {
            width,
            which: BETA,
            buf: old,
        };
        let (white, black) = (&self.white, &self.black);
        let (frozen_at, retired) = (&self.frozen_at, &self.retired);

        let flagged: Vec<Vec<u32>> = new.rows[..2 * positions * width]
            .par_chunks_mut(2 * CHUNK * width)
            .zip(new.heads[..positions].par_chunks_mut(CHUNK))
            .zip(new.low[..positions].par_chunks_mut(CHUNK))
            .enumerate()
            .map(|(c, ((rows, heads), low))| {
                // Choose every option of the chunk first (heads only, in cache), then add
                // rows while prefetching those a few positions ahead: the rows are random
                // reads from memory, and the prefetches hide their latency.
                let mut picks = [[SKIP; 4]; CHUNK];
                for (j, pick) in picks.iter_mut().enumerate().take(heads.len()) {
                    let p = c * CHUNK + j;
                    if retired[p] {
                        continue;
                    }
                    let (wl, bl) = (white.get(p), black.get(p));
                    for (which, v) in [(ALPHA, &alpha), (BETA, &beta)] {
                        if frozen_at[p][which] == NOT_FROZEN {
                            pick[2 * which] = choose(v, wl, win, true);
                            pick[2 * which + 1] = choose(v, bl, loss, false);
                        }
                    }
                }
                let mut out = Vec::new();
                for j in 0..heads.len() {
                    if let Some(ahead) = picks
                        .get(j + PREFETCH_DISTANCE)
                        .filter(|_| j + PREFETCH_DISTANCE < heads.len())
                    {
                        for (k, &t) in ahead.iter().enumerate() {
                            if t != SKIP {
                                let v = if k < 2 { &alpha } else { &beta };
                                prefetch(&v.row(t as usize)[lo..]);
                            }
                        }
                    }
                    let [aw, ab, bw, bb] = picks[j];
                    let p = c * CHUNK + j;
                    if retired[p] {
                        continue;
                    }
                    let frozen = frozen_at[p].map(|f| f != NOT_FROZEN);
                    let (arow, brow) = rows[2 * j * width..(2 * j + 2) * width].split_at_mut(width);
                    if !frozen[ALPHA] {
                        low[j][ALPHA] =
                            half_sum(arow, alpha.row(aw as usize), alpha.row(ab as usize), lo);
                        heads[j][ALPHA] = arow[width - 1];
                    }
                    if !frozen[BETA] {
                        low[j][BETA] =
                            half_sum(brow, beta.row(bw as usize), beta.row(bb as usize), lo);
                        heads[j][BETA] = brow[width - 1];
                    }
                    // Both bounds constant: the interval, and so the guess, cannot change.
                    let both = frozen[ALPHA] && frozen[BETA];
                    if !both
                        && check(&Fresh {
                            node: p,
                            alpha: arow,
                            beta: brow,
                            lo,
                        })
                    {
                        out.push(p as u32);
                    }
                }
                out
            })
            .collect();
        self.cur = 1 - self.cur;
        self.n += 1;
        self.apply_freezes();
        if self.n.is_multiple_of(PRUNE_EVERY) {
            self.prune();
        }
        flagged.concat()
    }

    /// Drop options that can never again be best (see the module comment). Only the heads
    /// are read: `head(β(t)) < head(α(u))` proves `β(t) < α(u)`.
    fn prune(&mut self) {
        self.prune_options();
        self.freeze();
    }

    /// Find bounds that are constant from the next iteration on: a position whose α and β
    /// agree (then α ≤ limits ≤ β pins both), or one whose live options all have that bound
    /// frozen (live options are the only ones that can ever be best again). They are frozen
    /// after the next step has computed that constant.
    fn freeze(&mut self) {
        let n = self.n;
        let width = self.width;
        let cur = &self.buf[self.cur];
        let (white, black, frozen_at) = (&self.white, &self.black, &self.frozen_at);
        let retired = &self.retired;
        let view = |which| View {
            width,
            which,
            buf: cur,
        };
        let (alpha, beta) = (view(ALPHA), view(BETA));
        let frozen_by_now = |t: u32, which: usize| frozen_at[t as usize][which] <= n;
        self.pending = (0..white.len.len())
            .into_par_iter()
            .filter_map(|p| {
                let f = frozen_at[p];
                if (f[ALPHA] != NOT_FROZEN && f[BETA] != NOT_FROZEN) || retired[p] {
                    return None;
                }
                let settled = alpha.head(p) == beta.head(p) && alpha.row(p) == beta.row(p);
                let options_frozen = |which| {
                    white
                        .get(p)
                        .iter()
                        .chain(black.get(p))
                        .all(|&t| frozen_by_now(t, which))
                };
                let mark = [
                    f[ALPHA] == NOT_FROZEN && (settled || options_frozen(ALPHA)),
                    f[BETA] == NOT_FROZEN && (settled || options_frozen(BETA)),
                ];
                (mark[ALPHA] || mark[BETA]).then_some((p as u32, mark))
            })
            .collect();
    }

    /// Freeze the pending bounds: their current value is final; copy it into the other
    /// buffer so that later steps can skip them.
    fn apply_freezes(&mut self) {
        let width = self.width;
        let (src, dst) = match &mut self.buf {
            [a, b] if self.cur == 0 => (&*a, b),
            [a, b] => (&*b, a),
        };
        for (p, mark) in std::mem::take(&mut self.pending) {
            let p = p as usize;
            for which in [ALPHA, BETA].into_iter().filter(|&w| mark[w]) {
                self.frozen_at[p][which] = self.n;
                let r = (2 * p + which) * width;
                dst.rows[r..r + width].copy_from_slice(&src.rows[r..r + width]);
                dst.heads[p][which] = src.heads[p][which];
                dst.low[p][which] = src.low[p][which];
            }
        }
    }

    /// Positions whose α, β or both are frozen (for statistics).
    pub fn frozen_counts(&self) -> [usize; 2] {
        [ALPHA, BETA].map(|w| {
            self.dropped_frozen[w]
                + self.frozen_at[..self.white.len.len()]
                    .iter()
                    .filter(|f| f[w] != NOT_FROZEN)
                    .count()
        })
    }

    fn prune_options(&mut self) {
        let n = self.n;
        let width = self.width;
        let cur = &self.buf[self.cur];
        let heads = &cur.heads;
        let (frozen_at, retired) = (&self.frozen_at, &self.retired);
        let (alpha, beta) = (
            View {
                width,
                which: ALPHA,
                buf: cur,
            },
            View {
                width,
                which: BETA,
                buf: cur,
            },
        );
        // Two options whose α and β are both frozen at equal values stay equal forever:
        // one of them is enough.
        let frozen = |t: u32| frozen_at[t as usize].iter().all(|&f| f <= n);
        let same_forever = |t: u32, u: u32| {
            frozen(t)
                && frozen(u)
                && alpha.cmp(t as usize, u as usize) == Ordering::Equal
                && beta.cmp(t as usize, u as usize) == Ordering::Equal
        };
        for (live, maximise) in [(&mut self.white, true), (&mut self.black, false)] {
            let offsets = &live.offsets;
            let count = live.len.len();
            let parts = split_by_slots(&mut live.targets, &mut live.len, offsets, count);
            parts.into_par_iter().for_each(|(first, targets, lens)| {
                let base = offsets[first] as usize;
                for (j, len) in lens.iter_mut().enumerate() {
                    let p = first + j;
                    if retired[p] {
                        continue;
                    }
                    let s = offsets[p] as usize - base;
                    let list = &mut targets[s..s + *len as usize];
                    let kept = if maximise {
                        let bar = list
                            .iter()
                            .map(|&t| heads[t as usize][ALPHA])
                            .max()
                            .unwrap_or(0);
                        compact(list, |t| heads[t as usize][BETA] >= bar)
                    } else {
                        let bar = list
                            .iter()
                            .map(|&t| heads[t as usize][BETA])
                            .min()
                            .unwrap_or(u64::MAX);
                        compact(list, |t| heads[t as usize][ALPHA] <= bar)
                    };
                    let list = &mut list[..kept as usize];
                    *len = if list.len() > 1 {
                        // Keep the first of each group of forever-equal options, in order.
                        let mut k = 0;
                        for i in 0..list.len() {
                            let t = list[i];
                            if !list[..k].iter().any(|&u| same_forever(t, u)) {
                                list[k] = t;
                                k += 1;
                            }
                        }
                        k as u8
                    } else {
                        kept
                    };
                }
            });
        }
    }
}

/// Keep the entries satisfying `keep` at the front, in order; returns how many.
fn compact(list: &mut [u32], keep: impl Fn(u32) -> bool) -> u8 {
    let mut k = 0;
    for i in 0..list.len() {
        if keep(list[i]) {
            list[k] = list[i];
            k += 1;
        }
    }
    k as u8
}

/// Split a list store into per-chunk parts by the slot offsets.
fn split_by_slots<'a>(
    targets: &'a mut [u32],
    lens: &'a mut [u8],
    offsets: &[u32],
    n: usize,
) -> Vec<(usize, &'a mut [u32], &'a mut [u8])> {
    let mut out = Vec::new();
    let (mut t, mut l) = (targets, lens);
    let mut start = 0;
    while start < n {
        let end = (start + CHUNK).min(n);
        let (a, rest_t) = t.split_at_mut((offsets[end] - offsets[start]) as usize);
        let (b, rest_l) = l.split_at_mut(end - start);
        out.push((start, a, b));
        t = rest_t;
        l = rest_l;
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_sum_adds_and_halves_with_carries() {
        // (1 + 1) / 2 = 1; (1 + 0) / 2 = 1/2; carries across limbs.
        let one = [0u64, 0, 1 << 63];
        let zero = [0u64; 3];
        let mut d = [0u64; 3];
        assert_eq!(half_sum(&mut d, &one, &one, 0), 2);
        assert_eq!(d, one);
        half_sum(&mut d, &one, &zero, 0);
        assert_eq!(d, [0, 0, 1 << 62]);
        let a = [u64::MAX, u64::MAX, 1];
        let b = [1u64, 0, 0];
        assert_eq!(half_sum(&mut d, &a, &b, 0), 2);
        assert_eq!(d, [0, 0, 1]);
        let a = [2u64, 0, 0];
        assert_eq!(half_sum(&mut d, &a, &zero, 0), 0);
        assert_eq!(d, [1, 0, 0]);
    }

    #[test]
    fn limbs_to_values_is_exact() {
        assert_eq!(limbs_to_value(&[0, 1 << 62]), Value::small(1, 2));
        assert_eq!(limbs_to_value(&[0, 1 << 63]), Value::one());
        assert_eq!(
            limbs_to_value(&[1, 0]),
            Value::new(BigUint::from(1u8), BigUint::from(1u8) << 127)
        );
    }
}
