//! The iteration kernel: exact αₙ and βₙ for every node of a game graph, in fixed point.
//!
//! A value v in [0, 1] is held as the integer `v · 2^F` with `F = 64·W − 1`, in `W`
//! little-endian 64-bit limbs. So 1 is the top bit of the top limb, and the top limb alone is
//! `floor(v · 2^63)`: the *head*, kept in a separate compact array so that comparisons,
//! which the head nearly always decides, stay in cache. One step is
//! `A' = (A_w + A_b) >> 1` where `w` maximises and `b` minimises over the successors: one
//! multi-limb add and shift, no division and no allocation. Since αₙ and βₙ have
//! denominator 2ⁿ, the limbs below bit `F − n` are zero and are skipped (SPEC §3).
//! When n reaches F the width grows, which only shifts limbs.
//!
//! The kernel knows nothing of rationals: a caller-supplied check sees each new pair of rows
//! while they are hot in cache (the guesses use it).

use std::cmp::Ordering;

use num_bigint::BigUint;
use num_rational::Ratio;
use rayon::prelude::*;

use crate::graph::Graph;

/// Positions handled per parallel task.
const CHUNK: usize = 512;

/// One of the two bound sequences (α or β), double-buffered.
#[derive(Debug)]
struct Bound {
    rows: [Vec<u64>; 2],
    heads: [Vec<u64>; 2],
    /// Lowest non-zero limb of each row (W for zero): equal heads and both rows having
    /// nothing below the head means equal values, with no deeper read.
    low: [Vec<u16>; 2],
}

/// The α and β sequences of every node, at iteration `n`.
#[derive(Debug)]
pub struct Kernel {
    width: usize,
    n: u32,
    cur: usize,
    alpha: Bound,
    beta: Bound,
}

/// A borrowed view of one bound at the current iteration, for comparisons and conversions.
#[derive(Clone, Copy)]
pub struct View<'a> {
    width: usize,
    rows: &'a [u64],
    heads: &'a [u64],
    low: &'a [u16],
}

impl<'a> View<'a> {
    /// The limbs of node `i`, least significant first.
    #[inline]
    pub fn row(&self, i: usize) -> &'a [u64] {
        &self.rows[i * self.width..(i + 1) * self.width]
    }

    /// Compare the values of nodes `i` and `j` exactly.
    #[inline]
    pub fn cmp(&self, i: usize, j: usize) -> Ordering {
        let (hi, hj) = (self.heads[i], self.heads[j]);
        if hi != hj || i == j {
            return hi.cmp(&hj);
        }
        let (li, lj) = (self.low[i] as usize, self.low[j] as usize);
        let stop = li.max(lj);
        let (ri, rj) = (self.row(i), self.row(j));
        for k in (stop..self.width - 1).rev() {
            if ri[k] != rj[k] {
                return ri[k].cmp(&rj[k]);
            }
        }
        // Equal down to the higher of the two lowest non-zero limbs.
        lj.cmp(&li)
    }

    /// Index of the largest value among `nodes` (the first on ties).
    #[inline]
    pub fn argmax(&self, nodes: &[u32]) -> u32 {
        let mut best = nodes[0];
        let mut best_head = self.heads[best as usize];
        for &t in &nodes[1..] {
            let h = self.heads[t as usize];
            if h > best_head
                || (h == best_head && self.cmp(t as usize, best as usize) == Ordering::Greater)
            {
                best = t;
                best_head = h;
            }
        }
        best
    }

    /// Index of the smallest value among `nodes` (the first on ties).
    #[inline]
    pub fn argmin(&self, nodes: &[u32]) -> u32 {
        let mut best = nodes[0];
        let mut best_head = self.heads[best as usize];
        for &t in &nodes[1..] {
            let h = self.heads[t as usize];
            if h < best_head
                || (h == best_head && self.cmp(t as usize, best as usize) == Ordering::Less)
            {
                best = t;
                best_head = h;
            }
        }
        best
    }

    /// The exact value of node `i`.
    pub fn value(&self, i: usize) -> Ratio<BigUint> {
        limbs_to_ratio(self.row(i))
    }
}

/// The exact rational `limbs / 2^(64·len − 1)`.
pub fn limbs_to_ratio(limbs: &[u64]) -> Ratio<BigUint> {
    let digits: Vec<u32> = limbs
        .iter()
        .flat_map(|&l| [l as u32, (l >> 32) as u32])
        .collect();
    let num = BigUint::new(digits);
    Ratio::new(num, BigUint::from(1u8) << (64 * limbs.len() - 1))
}

impl Bound {
    fn new(nodes: usize, width: usize, init: impl Fn(usize) -> bool) -> Bound {
        let mut rows = vec![0u64; nodes * width];
        let mut heads = vec![0u64; nodes];
        let mut low = vec![width as u16; nodes];
        for i in 0..nodes {
            if init(i) {
                rows[i * width + width - 1] = 1 << 63;
                heads[i] = 1 << 63;
                low[i] = (width - 1) as u16;
            }
        }
        Bound {
            rows: [rows.clone(), rows],
            heads: [heads.clone(), heads],
            low: [low.clone(), low],
        }
    }

    fn view(&self, buf: usize, width: usize) -> View<'_> {
        View {
            width,
            rows: &self.rows[buf],
            heads: &self.heads[buf],
            low: &self.low[buf],
        }
    }

    fn widen(&mut self, old: usize, new: usize) {
        for b in 0..2 {
            let nodes = self.heads[b].len();
            let mut rows = vec![0u64; nodes * new];
            for i in 0..nodes {
                rows[i * new + new - old..(i + 1) * new]
                    .copy_from_slice(&self.rows[b][i * old..(i + 1) * old]);
            }
            self.rows[b] = rows;
            for l in &mut self.low[b] {
                *l += (new - old) as u16;
            }
        }
    }
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

impl Kernel {
    /// α₀ = 0 and β₀ = 1 on every position; the terminal nodes hold 1 (win) and 0 (loss).
    /// `width` is the initial number of limbs (the kernel widens itself when needed).
    pub fn new(graph: &Graph, width: usize) -> Kernel {
        let width = width.max(2);
        let nodes = graph.nodes();
        let win = graph.win() as usize;
        let positions = graph.positions();
        Kernel {
            width,
            n: 0,
            cur: 0,
            alpha: Bound::new(nodes, width, |i| i == win),
            beta: Bound::new(nodes, width, |i| i == win || i < positions),
        }
    }

    /// The iteration number n of the values held.
    pub fn iteration(&self) -> u32 {
        self.n
    }

    /// Limbs per value.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Fraction bits F: values are integers over 2^F.
    pub fn fraction_bits(&self) -> usize {
        64 * self.width - 1
    }

    /// Bytes of value storage held (both bounds, both buffers).
    pub fn memory_bytes(&self) -> usize {
        let nodes = self.alpha.heads[0].len();
        4 * nodes * (self.width * 8 + 8 + 2)
    }

    /// αₙ.
    pub fn alpha(&self) -> View<'_> {
        self.alpha.view(self.cur, self.width)
    }

    /// βₙ.
    pub fn beta(&self) -> View<'_> {
        self.beta.view(self.cur, self.width)
    }

    /// Lowest limb that may be non-zero at iteration `n`.
    fn lowest_active(&self, n: u32) -> usize {
        (self.fraction_bits() - n as usize) / 64
    }

    /// Grow to `new_width` limbs (values are unchanged: limbs shift up).
    pub fn widen(&mut self, new_width: usize) {
        if new_width > self.width {
            self.alpha.widen(self.width, new_width);
            self.beta.widen(self.width, new_width);
            self.width = new_width;
        }
    }

    /// Widen if the next iteration needs more fraction bits than the values have; returns
    /// whether the width changed (so the caller can follow).
    pub fn ensure_capacity(&mut self) -> bool {
        if self.n as usize + 1 > self.fraction_bits() {
            self.widen(self.width + (self.width / 2).max(1));
            true
        } else {
            false
        }
    }

    /// Advance one iteration. `check` is called once per position with its new rows; the
    /// positions for which it returns true are returned, in increasing order.
    pub fn step<C>(&mut self, graph: &Graph, check: C) -> Vec<u32>
    where
        C: Fn(&Fresh<'_>) -> bool + Sync,
    {
        assert!(
            self.n as usize + 1 <= self.fraction_bits(),
            "call ensure_capacity before step"
        );
        let width = self.width;
        let lo = self.lowest_active(self.n + 1);
        let (cur, next) = (self.cur, 1 - self.cur);
        let positions = graph.positions();
        let (win, loss) = (graph.win(), graph.loss());

        let (a_old, a_new) = split(&mut self.alpha, cur);
        let (b_old, b_new) = split(&mut self.beta, cur);
        let a_view = View {
            width,
            rows: a_old.0,
            heads: a_old.1,
            low: a_old.2,
        };
        let b_view = View {
            width,
            rows: b_old.0,
            heads: b_old.1,
            low: b_old.2,
        };

        let flagged: Vec<Vec<u32>> = a_new.0[..positions * width]
            .par_chunks_mut(CHUNK * width)
            .zip(a_new.1[..positions].par_chunks_mut(CHUNK))
            .zip(a_new.2[..positions].par_chunks_mut(CHUNK))
            .zip(b_new.0[..positions * width].par_chunks_mut(CHUNK * width))
            .zip(b_new.1[..positions].par_chunks_mut(CHUNK))
            .zip(b_new.2[..positions].par_chunks_mut(CHUNK))
            .enumerate()
            .map(|(c, (((((ar, ah), al), br), bh), bl))| {
                let mut out = Vec::new();
                for j in 0..ah.len() {
                    let p = c * CHUNK + j;
                    let (wl, bls) = (graph.white(p), graph.black(p));
                    let white_capture = wl[0] == win;
                    let black_capture = bls[0] == loss;
                    let pick = |v: &View<'_>| {
                        let w = if white_capture { win } else { v.argmax(wl) };
                        let b = if black_capture { loss } else { v.argmin(bls) };
                        (w as usize, b as usize)
                    };
                    let (aw, ab) = pick(&a_view);
                    let (bw, bb) = pick(&b_view);
                    let arow = &mut ar[j * width..(j + 1) * width];
                    al[j] = half_sum(arow, a_view.row(aw), a_view.row(ab), lo);
                    ah[j] = arow[width - 1];
                    let brow = &mut br[j * width..(j + 1) * width];
                    bl[j] = half_sum(brow, b_view.row(bw), b_view.row(bb), lo);
                    bh[j] = brow[width - 1];
                    if check(&Fresh {
                        node: p,
                        alpha: arow,
                        beta: brow,
                        lo,
                    }) {
                        out.push(p as u32);
                    }
                }
                out
            })
            .collect();
        self.cur = next;
        self.n += 1;
        flagged.concat()
    }
}

type Parts<'a> = (&'a [u64], &'a [u64], &'a [u16]);
type PartsMut<'a> = (&'a mut [u64], &'a mut [u64], &'a mut [u16]);

/// The current buffers of a bound (read) and the other ones (written).
fn split(b: &mut Bound, cur: usize) -> (Parts<'_>, PartsMut<'_>) {
    let [r0, r1] = &mut b.rows;
    let [h0, h1] = &mut b.heads;
    let [l0, l1] = &mut b.low;
    if cur == 0 {
        ((r0, h0, l0), (r1, h1, l1))
    } else {
        ((r1, h1, l1), (r0, h0, l0))
    }
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
    fn limbs_to_ratio_is_exact() {
        assert_eq!(
            limbs_to_ratio(&[0, 1 << 62]),
            Ratio::new(BigUint::from(1u8), BigUint::from(2u8))
        );
        assert_eq!(
            limbs_to_ratio(&[0, 1 << 63]),
            Ratio::from_integer(BigUint::from(1u8))
        );
        assert_eq!(
            limbs_to_ratio(&[1, 0]),
            Ratio::new(BigUint::from(1u8), BigUint::from(1u8) << 127)
        );
    }
}
