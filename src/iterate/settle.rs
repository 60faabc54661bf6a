//! The study's iteration without guessing: once the exact values s are known (and
//! certified), the guess sₙ(P) is s(P) exactly when the Stern–Brocot parents L < s < R of
//! s(P) satisfy L < αₙ(P) and βₙ(P) < R. Every rational strictly between L and R other than
//! s has a larger denominator, while L and R themselves are simpler than s; so inside that
//! cell the simplest rational of [αₙ, βₙ] ∋ s is s, and otherwise it is not. The ends: s = 0
//! is s₀ and never changes (SPEC §2 gives the tie [0, 1] to 0); s = 1 needs only 0 < αₙ.
//! Intervals are nested, so a position's last change is the first n at which this holds:
//! two exact integer comparisons per unsettled position per iteration, against fixed-point
//! images of L and R, instead of a new simplest rational at every change.

use std::cmp::Ordering;

use rayon::prelude::*;

use super::kernel::Fresh;
use crate::value::{Value, fixed_point, parents};

/// One node's parents at the kernel's width: where their fixed-point images are, and
/// their top limbs, which decide nearly every comparison without a read of the images.
#[derive(Clone, Copy, Debug)]
struct Cell {
    /// The top limbs of floor(L · 2^F) and floor(R · 2^F) (0 where absent).
    heads: [u64; 2],
    /// Where the two images start in [`Settling::images`] (L's, then R's).
    at: usize,
    /// Whether L constrains, whether R constrains, whether R · 2^F is an integer.
    lower: bool,
    upper: bool,
    upper_exact: bool,
}

/// A node's two images: floor(L · 2^F), and floor(R · 2^F) with whether it is exact.
type Images = (Option<Vec<u64>>, Option<(Vec<u64>, bool)>);

/// Per node, where its guess becomes final.
pub struct Settling {
    parents: Vec<(Option<Value>, Option<Value>)>,
    /// None for a node dropped by [`Settling::sync_width`]'s filter.
    cells: Vec<Option<Cell>>,
    /// The images of the kept nodes, node after node (L's, then R's; zeros where a parent
    /// does not constrain), in node order: the kernel asks in that order, so the reads
    /// stream through memory instead of chasing one allocation per node.
    images: Vec<u64>,
    width: usize,
}

fn cmp_rows(a: &[u64], b: &[u64]) -> Ordering {
    a.iter().rev().cmp(b.iter().rev())
}

impl Settling {
    /// The cells of the exact values of every node (terminal nodes included), at `width`
    /// limbs.
    pub fn new(values: &[&Value], width: usize) -> Settling {
        let parents = values.par_iter().map(|v| parents(v)).collect();
        let mut s = Settling {
            parents,
            cells: Vec::new(),
            images: Vec::new(),
            width: 0,
        };
        s.sync_width(width, |_| true);
        s
    }

    /// Recompute the images at a new width, for the nodes `wanted` says are still asked
    /// about ([`Settling::inside`] is false for the others from now on).
    pub fn sync_width(&mut self, width: usize, wanted: impl Fn(usize) -> bool + Sync) {
        if width == self.width {
            return;
        }
        self.width = width;
        let images: Vec<Option<Images>> = self
            .parents
            .par_iter()
            .enumerate()
            .map(|(i, (l, r))| {
                wanted(i).then(|| {
                    (
                        l.as_ref().map(|l| fixed_point(l, width).0),
                        r.as_ref().map(|r| fixed_point(r, width)),
                    )
                })
            })
            .collect();
        self.images.clear();
        let zeros = vec![0u64; width];
        self.cells = images
            .into_iter()
            .map(|kept| {
                let (lower, upper) = kept?;
                let at = self.images.len();
                self.images
                    .extend_from_slice(lower.as_deref().unwrap_or(&zeros));
                self.images
                    .extend_from_slice(upper.as_ref().map_or(&zeros[..], |(u, _)| u));
                Some(Cell {
                    heads: [self.images[at + width - 1], self.images[at + 2 * width - 1]],
                    at,
                    lower: lower.is_some(),
                    upper: upper.is_some(),
                    upper_exact: upper.is_some_and(|(_, exact)| exact),
                })
            })
            .collect();
        self.images.shrink_to_fit();
    }

    /// Whether node `i`'s guess is final from iteration 0 (s = 0).
    pub fn final_from_start(&self, i: usize) -> bool {
        matches!(self.parents[i], (None, None))
    }

    /// Whether the fresh bounds of node `node` lie strictly inside its cell: L < αₙ and
    /// βₙ < R, exactly (αₙ = A / 2^F with A an integer, so L < αₙ ⇔ floor(L·2^F) < A, and
    /// βₙ < R ⇔ B < floor(R·2^F), or B equal to it when R·2^F is not an integer).
    pub fn inside(&self, node: usize, fresh: &Fresh<'_>) -> bool {
        let Some(cell) = &self.cells[node] else {
            return false;
        };
        let (w, top) = (self.width, self.width - 1);
        if cell.lower {
            let (a, h) = (fresh.alpha[top], cell.heads[0]);
            let l = &self.images[cell.at..cell.at + w];
            if a < h || (a == h && cmp_rows(l, fresh.alpha) != Ordering::Less) {
                return false;
            }
        }
        if !cell.upper {
            return true;
        }
        let (b, h) = (fresh.beta[top], cell.heads[1]);
        if b != h {
            return b < h;
        }
        match cmp_rows(fresh.beta, &self.images[cell.at + w..cell.at + 2 * w]) {
            Ordering::Less => true,
            Ordering::Equal => !cell.upper_exact,
            Ordering::Greater => false,
        }
    }
}
