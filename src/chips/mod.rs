//! Bidding chess with whole chips and the tie-break marker (docs/src/guide/chips.md): holdings, the
//! bidding step, and the thresholds of a material's positions as the fixed point of that
//! step over its game graph. Integers only.
//!
//! A holding of White is the integer h = 2w + m (w chips, m = 1 with the marker), 0 ..=
//! 2K + 1 for K chips in all; Black then holds 2K + 1 − h in the same form. A position's
//! **win** threshold is the least holding with which White forces a king capture,
//! [`none`](Total::none) (2K + 2) if none does; its **not-lose** threshold the least with
//! which White avoids a loss. Black's win threshold is the win threshold of the game with
//! the colours swapped, and White's not-lose threshold is 2K + 2 minus it.
//!
//! - [`step`]: the bidding step: given the least holdings White needs after winning the
//!   bid (`lo`) and after losing it (`hi`), the least holding it needs before the bid;
//! - [`solve`]: the least fixed point over a graph (the attractor of the captures),
//!   lowered from "none" until nothing changes;
//! - [`file`]: the chip files beside the value tables; [`make`]: making them for every
//!   material of a board directory, in dependency order.

pub mod file;
pub mod make;
pub mod ranks;

use std::sync::atomic::{AtomicU16, Ordering};

use rayon::prelude::*;

use crate::graph::Graph;

/// The most chips in all that the tables support (thresholds are stored as u16).
pub const MAX_TOTAL: u32 = 16_000;

/// A chip total K: the holdings and the bidding step's table for it.
#[derive(Clone, Debug)]
pub struct Total {
    k: u32,
    /// `step[lo][hi]` for lo ≤ hi ≤ none (row-major, (none + 1)²).
    step: Vec<u16>,
}

impl Total {
    /// The game with `k` chips in all (1 ..= [`MAX_TOTAL`]).
    pub fn new(k: u32) -> Total {
        assert!((1..=MAX_TOTAL).contains(&k), "chip total {k}");
        let none = 2 * k + 2;
        let side = none as usize + 1;
        let mut table = vec![none as u16; side * side];
        table
            .par_chunks_mut(side)
            .enumerate()
            .for_each(|(lo, row)| {
                for (hi, cell) in row.iter_mut().enumerate().skip(lo) {
                    *cell = step(k, lo as u32, hi as u32) as u16;
                }
            });
        Total { k, step: table }
    }

    /// The holdings of `k` chips without the step's table: [`Total::before_bid`] bisects
    /// instead of reading the table ((2K + 3)² cells: 2 GB and about a minute to fill with
    /// 16000 chips), which suits work that takes few steps per holding (the chip ranks).
    pub fn new_lean(k: u32) -> Total {
        Total {
            k,
            step: Vec::new(),
        }
    }

    /// K.
    pub fn chips(&self) -> u32 {
        self.k
    }

    /// "No holding": 2K + 2.
    pub fn none(&self) -> u32 {
        2 * self.k + 2
    }

    /// The least holding before a bid, from `lo` (needed after winning the bid) and `hi`
    /// (after losing it), lo ≤ hi ≤ none.
    #[inline]
    pub fn before_bid(&self, lo: u32, hi: u32) -> u32 {
        if self.step.is_empty() {
            // A lean total: the step itself (a bisection), as the table would hold it.
            return step(self.k, lo, hi);
        }
        u32::from(self.step[lo as usize * (self.none() as usize + 1) + hi as usize])
    }

    /// A holding as people write it: `12`, `12*`, or `none`.
    pub fn show(&self, h: u32) -> String {
        if h >= self.none() {
            "none".into()
        } else {
            format!("{}{}", h / 2, if h % 2 == 1 { "*" } else { "" })
        }
    }
}

/// Whether the mover's side holding `h` (of 2K + 1) wins the bid step: some bid it may make
/// leaves it at least `lo` if it wins the bid, whatever the other bids, and at least `hi`
/// if the other wins it (docs/src/guide/chips.md, "Computing them exactly").
pub fn wins_with(k: u32, h: u32, lo: u32, hi: u32) -> bool {
    let n = 2 * k + 1;
    if h > n || lo > h {
        return false;
    }
    if h.is_multiple_of(2) {
        // No marker: even bids; the other (with the marker) wins with B + 1 or more.
        let most = (h - lo) & !1;
        let needed = n.min(hi.saturating_sub(1)).saturating_sub(h);
        most >= needed
    } else {
        // With the marker: any bid; the other wins with an even bid ≥ B. Bidding nothing
        // leaves the bid to the other; else the largest affordable bid is the best.
        if h >= hi {
            return true;
        }
        let most = h - lo;
        let answer = most + most % 2; // the other's least winning bid (even, ≥ B)
        most >= 1 && answer >= (n + 1).min(hi).saturating_sub(h)
    }
}

/// The least holding with which the side wins the bidding step (see [`wins_with`]), or
/// none (2K + 2). Found by bisection: the winning holdings are upward closed (more chips
/// never hurt; checked against every pair of bids in the tests).
pub fn step(k: u32, lo: u32, hi: u32) -> u32 {
    let (mut a, mut b) = (0, 2 * k + 2);
    while a < b {
        let mid = (a + b) / 2;
        if wins_with(k, mid, lo, hi) {
            b = mid;
        } else {
            a = mid + 1;
        }
    }
    a
}

/// The least bid with which the side holding `h` wins the step (None if it does not):
/// the bid that keeps most of its chips among those that work.
pub fn winning_bid(k: u32, h: u32, lo: u32, hi: u32) -> Option<u32> {
    winning_bids(k, h, lo, hi).next()
}

/// Every bid with which the side holding `h` wins the step, least first: a bid B such that
/// winning with it leaves h − B ≥ `lo` and every bid that beats it leaves at least `hi`.
pub fn winning_bids(k: u32, h: u32, lo: u32, hi: u32) -> impl Iterator<Item = u32> {
    let n = 2 * k + 1;
    let ok = wins_with(k, h, lo, hi);
    let works = move |b: &u32| {
        let b = *b;
        if h.is_multiple_of(2) {
            b.is_multiple_of(2) && h - b >= lo && (b + 1 > n - h || h + b + 1 >= hi)
        } else {
            let answer = b + b % 2;
            (b == 0 || h - b >= lo) && (answer > n - h || h + answer >= hi)
        }
    };
    (0..=if ok { h } else { 0 }).filter(move |b| ok && works(b))
}

/// Which side a solve is for: White's win thresholds, or Black's (the same game with the
/// colours swapped: Black's moves are the maximiser's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// White forces a capture.
    White,
    /// Black does.
    Black,
}

/// The bidding step at position `p` of `graph` for `side`, its successors' thresholds (for
/// that side) given by `at`: the least over its own moves and the greatest over the
/// opponent's, a side without a move keeping none.
pub fn step_at(graph: &Graph, total: &Total, side: Side, p: usize, at: impl Fn(u32) -> u32) -> u32 {
    let (own, other) = match side {
        Side::White => (graph.white(p), graph.black(p)),
        Side::Black => (graph.black(p), graph.white(p)),
    };
    let none = total.none();
    let mine = own.iter().map(|&q| at(q)).min().unwrap_or(none);
    let theirs = other.iter().map(|&q| at(q)).max().unwrap_or(none);
    total.before_bid(mine.min(theirs), mine.max(theirs))
}

/// The least-fixed-point thresholds of `side` on `graph` for the chip total `total`:
/// `terminal[j]` is the threshold of terminal node `positions + j` (win, loss, then the
/// exits), and every position's threshold starts at none and is lowered by the bidding
/// step until nothing changes. Returns the positions' thresholds and the sweeps made.
pub fn solve(graph: &Graph, total: &Total, side: Side, terminal: &[u16]) -> (Vec<u16>, usize) {
    let n = graph.positions();
    assert_eq!(
        terminal.len(),
        graph.nodes() - n,
        "one threshold per terminal node"
    );
    let none = total.none() as u16;
    let t: Vec<AtomicU16> = (0..graph.nodes())
        .map(|i| AtomicU16::new(if i < n { none } else { terminal[i - n] }))
        .collect();
    let mut sweeps = 0;
    loop {
        sweeps += 1;
        let changed = (0..n)
            .into_par_iter()
            .with_min_len(1024)
            .filter(|&p| {
                let get = |q: u32| u32::from(t[q as usize].load(Ordering::Relaxed));
                let new = step_at(graph, total, side, p, get) as u16;
                let old = t[p].load(Ordering::Relaxed);
                if new < old {
                    t[p].store(new, Ordering::Relaxed);
                    true
                } else {
                    false
                }
            })
            .count();
        if changed == 0 {
            break;
        }
    }
    (
        t.into_iter().take(n).map(AtomicU16::into_inner).collect(),
        sweeps,
    )
}

/// The terminal nodes' thresholds for `side`: a capture by that side 0, by the other
/// none, the exits as given (their thresholds for that side).
pub fn terminals(total: &Total, side: Side, exits: impl Iterator<Item = u16>) -> Vec<u16> {
    let none = total.none() as u16;
    let (win, loss) = match side {
        Side::White => (0, none),
        Side::Black => (none, 0),
    };
    [win, loss].into_iter().chain(exits).collect()
}

/// A position's thresholds, as holdings of White (2K + 2: none).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Thresholds {
    /// The least holding with which White forces a win.
    pub win: u32,
    /// The least holding with which White does not lose.
    pub not_lose: u32,
}

impl Thresholds {
    /// After White captured the king: White wins with any holding.
    pub const WHITE_CAPTURED: Thresholds = Thresholds {
        win: 0,
        not_lose: 0,
    };

    /// After Black captured the king: no holding helps White.
    pub fn black_captured(total: &Total) -> Thresholds {
        Thresholds {
            win: total.none(),
            not_lose: total.none(),
        }
    }

    /// The win threshold of `side` (in its own holdings).
    pub fn win_of(&self, total: &Total, side: Side) -> u32 {
        match side {
            Side::White => self.win,
            Side::Black => total.none() - self.not_lose,
        }
    }

    /// The not-lose threshold of `side` (in its own holdings): White's is stored; Black
    /// does not lose exactly where White does not win.
    pub fn not_lose_of(&self, total: &Total, side: Side) -> u32 {
        match side {
            Side::White => self.not_lose,
            Side::Black => total.none() - self.win,
        }
    }

    /// From White's and Black's win thresholds (each in its own side's holdings).
    pub fn from_wins(total: &Total, white: u32, black: u32) -> Thresholds {
        Thresholds {
            win: white,
            not_lose: total.none() - black,
        }
    }

    /// White's and Black's win thresholds.
    pub fn wins(&self, total: &Total) -> (u32, u32) {
        (self.win, total.none() - self.not_lose)
    }

    /// The thresholds of the colour-mirrored position (White and Black swapped).
    pub fn mirrored(&self, total: &Total) -> Thresholds {
        let (white, black) = self.wins(total);
        Thresholds::from_wins(total, black, white)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bidding step by enumerating every pair of bids, as docs/src/guide/chips.md's rules state
    /// them (not its formulas).
    fn by_enumeration(k: u32, h: u32, lo: u32, hi: u32) -> bool {
        let (w, m) = (h / 2, h % 2);
        let (bw, bm) = (k - w, 1 - m);
        (0..=w).any(|b| {
            (0..=m).any(|u| {
                (0..=bw).all(|c| {
                    (0..=bm).all(|v| {
                        // White wins the bid?
                        let white_wins = if m == 1 {
                            b > c || (b == c && u == 1)
                        } else {
                            b > c || (b == c && v == 0)
                        };
                        if white_wins {
                            2 * (w - b) + (m - u) >= lo
                        } else {
                            2 * (w + c) + (m + v) >= hi
                        }
                    })
                })
            })
        })
    }

    #[test]
    fn the_step_matches_every_pair_of_bids() {
        for k in 1..=7 {
            let none = 2 * k + 2;
            for lo in 0..=none {
                for hi in lo..=none {
                    for h in 0..=2 * k + 1 {
                        assert_eq!(
                            wins_with(k, h, lo, hi),
                            by_enumeration(k, h, lo, hi),
                            "k {k} h {h} lo {lo} hi {hi}"
                        );
                    }
                    // More chips never hurt: the winning holdings are upward closed.
                    let s = step(k, lo, hi);
                    assert!((s..=2 * k + 1).all(|h| wins_with(k, h, lo, hi)));
                    assert!((0..s).all(|h| !wins_with(k, h, lo, hi)));
                    if let Some(b) = winning_bid(k, s.min(2 * k + 1), lo, hi) {
                        assert!(b <= s);
                    }
                }
            }
        }
    }

    #[test]
    fn the_table_is_the_step() {
        let t = Total::new(5);
        for lo in 0..=12 {
            for hi in lo..=12 {
                assert_eq!(t.before_bid(lo, hi), step(5, lo, hi));
            }
        }
        assert_eq!(t.show(7), "3*");
        assert_eq!(t.show(12), "none");
        let th = Thresholds::from_wins(&t, 3, 12);
        assert_eq!(th.not_lose, 0);
        assert_eq!(
            th.mirrored(&t),
            Thresholds {
                win: 12,
                not_lose: 9
            }
        );
    }
}
