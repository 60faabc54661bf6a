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

use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use super::{Side, Total, step_at};
use crate::error::Error;
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

/// Bytes [`ranks`] holds per position beside the graph: the thresholds now and after the
/// sweep (two bytes each), the offsets (four), and its log of changes, counted at
/// [`CHANGES_PER_POSITION`] a position, twice (twelve bytes an entry while sweeping, eight
/// once laid out).
pub const BYTES_PER_POSITION: u64 = 2 + 2 + 4 + CHANGES_PER_POSITION * (12 + 8);

/// The changes a position's threshold goes through, on average, as the estimate counts
/// them (the staircase of a position has a few steps; the allocations are fallible
/// beyond it).
pub const CHANGES_PER_POSITION: u64 = 8;

/// A vector of `n` copies of `value`, or an error instead of aborting the process when the
/// memory is not there.
fn try_filled<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>, Error> {
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|_| too_big(n * size_of::<T>(), what))?;
    v.resize(n, value);
    Ok(v)
}

fn too_big(bytes: usize, what: &str) -> Error {
    Error::Resources(format!(
        "the chip ranks need more memory than there is: {what} ({} MB) could not be allocated",
        (bytes as u64).div_ceil(1 << 20)
    ))
}

/// The ranks of `side` on `graph` (thresholds in that side's holdings), `terminal[j]`
/// being the threshold of terminal node `positions + j`, as for [`super::solve`]. Its
/// buffers are allocated fallibly: memory that is not there is an
/// [`Error::Resources`], never an abort. `stop` is read between sweeps: once set, the
/// work ends with [`Error::Interrupted`].
pub fn ranks(
    graph: &Graph,
    total: &Total,
    side: Side,
    terminal: &[u16],
    stop: &AtomicBool,
) -> Result<Ranks, Error> {
    let n = graph.positions();
    assert_eq!(
        terminal.len(),
        graph.nodes() - n,
        "one threshold per terminal node"
    );
    let none = total.none() as u16;
    let mut current = try_filled(n, none, "the thresholds")?;
    let mut next = try_filled(n, none, "the next thresholds")?;
    // Every change in the order made: (position, sweep, threshold after it).
    let mut log: Vec<(u32, u32, u16)> = Vec::new();
    let mut sweep = 0u32;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted("the chip ranks were abandoned".into()));
        }
        sweep += 1;
        let at = |q: u32| {
            let q = q as usize;
            u32::from(if q < n { current[q] } else { terminal[q - n] })
        };
        next.par_iter_mut()
            .enumerate()
            .with_min_len(1024)
            .for_each(|(p, t)| *t = step_at(graph, total, side, p, at) as u16);
        let mut changed = false;
        for (p, (&new, old)) in next.iter().zip(current.iter_mut()).enumerate() {
            // The step is monotone and starts from none: thresholds only fall.
            if new < *old {
                log.try_reserve(1)
                    .map_err(|_| too_big(2 * log.len() * 12, "the log of changes"))?;
                log.push((p as u32, sweep, new));
                *old = new;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    drop(next);
    drop(current);
    // Per position its changes, in the order made (sweeps increasing).
    let mut offsets = try_filled(n + 1, 0u32, "the offsets")?;
    for &(p, _, _) in &log {
        offsets[p as usize + 1] += 1;
    }
    for p in 0..n {
        offsets[p + 1] += offsets[p];
    }
    let mut changes = try_filled(log.len(), (0u32, 0u16), "the changes")?;
    let mut fill: Vec<u32> = try_filled(n, 0u32, "the offsets")?;
    fill.copy_from_slice(&offsets[..n]);
    for (p, s, t) in log {
        let at = &mut fill[p as usize];
        changes[*at as usize] = (s, t);
        *at += 1;
    }
    Ok(Ranks {
        offsets,
        changes,
        none,
        sweeps: sweep,
    })
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
