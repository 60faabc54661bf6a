//! Attractor ranks of the chip game: how many bidding steps a winning holding needs.
//!
//! The chip files hold the least fixed point of the bidding step, reached by in-place
//! sweeps. Playing it out needs more: a holding that meets a position's threshold may be met
//! again after a turn without any progress, and a player can circle. Sweeps in *Jacobi*
//! order (each sweep reads only the previous one's thresholds) have a meaning: after t
//! sweeps, the threshold of P is the least holding that forces a capture, or a move into a
//! material already solved, within t turns. So the rank of holding h at P, the least t whose
//! threshold h meets, strictly decreases at every turn of a player who, at rank r, plays
//! against the thresholds of sweep r − 1: every outcome of the bid lands at rank r − 1 or
//! less. [`Ranks`] keeps, per position, the sweeps at which its threshold fell, and the
//! value it fell to: the whole staircase, in a few entries per position.

use rayon::prelude::*;

use super::{Side, Total, step_at};
use crate::graph::Graph;

/// The Jacobi staircase of every position's threshold for one side.
#[derive(Clone, Debug)]
pub struct Ranks {
    /// Per position, the start of its changes in `changes`.
    offsets: Vec<u32>,
    /// (sweep, threshold after it), sweeps increasing, thresholds decreasing.
    changes: Vec<(u32, u16)>,
    /// "No holding": 2K + 2.
    none: u16,
    /// The sweeps made (the last changed nothing).
    sweeps: u32,
}

/// The ranks of `side` on `graph` (thresholds in that side's holdings), `terminal[j]`
/// being the threshold of terminal node `positions + j`, as for [`super::solve`].
pub fn ranks(graph: &Graph, total: &Total, side: Side, terminal: &[u16]) -> Ranks {
    let n = graph.positions();
    assert_eq!(
        terminal.len(),
        graph.nodes() - n,
        "one threshold per terminal node"
    );
    let none = total.none() as u16;
    let mut current = vec![none; n];
    let mut history: Vec<Vec<(u32, u16)>> = vec![Vec::new(); n];
    let mut sweep = 0u32;
    loop {
        sweep += 1;
        let at = |q: u32| {
            let q = q as usize;
            u32::from(if q < n { current[q] } else { terminal[q - n] })
        };
        let next: Vec<u16> = (0..n)
            .into_par_iter()
            .with_min_len(1024)
            .map(|p| step_at(graph, total, side, p, at) as u16)
            .collect();
        let mut changed = false;
        for (p, (&new, old)) in next.iter().zip(current.iter_mut()).enumerate() {
            // The step is monotone and starts from none: thresholds only fall.
            if new < *old {
                history[p].push((sweep, new));
                *old = new;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut offsets = Vec::with_capacity(n + 1);
    let mut changes = Vec::new();
    for h in history {
        offsets.push(changes.len() as u32);
        changes.extend(h);
    }
    offsets.push(changes.len() as u32);
    Ranks {
        offsets,
        changes,
        none,
        sweeps: sweep,
    }
}

impl Ranks {
    fn of(&self, p: usize) -> &[(u32, u16)] {
        &self.changes[self.offsets[p] as usize..self.offsets[p + 1] as usize]
    }

    /// The positions.
    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The sweeps made.
    pub fn sweeps(&self) -> u32 {
        self.sweeps
    }

    /// The threshold of position `p` after `sweep` sweeps (none before its first change).
    pub fn threshold_after(&self, p: usize, sweep: u32) -> u32 {
        let list = self.of(p);
        let k = list.partition_point(|&(s, _)| s <= sweep);
        u32::from(if k == 0 { self.none } else { list[k - 1].1 })
    }

    /// The final threshold of position `p` (the least fixed point's).
    pub fn threshold(&self, p: usize) -> u32 {
        u32::from(self.of(p).last().map_or(self.none, |&(_, t)| t))
    }

    /// The rank of holding `h` at position `p`: the least sweep whose threshold `h` meets,
    /// or None if `h` is below the final threshold.
    pub fn rank(&self, p: usize, h: u32) -> Option<u32> {
        self.of(p)
            .iter()
            .find(|&&(_, t)| u32::from(t) <= h)
            .map(|&(s, _)| s)
    }
}
