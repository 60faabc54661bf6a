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

use num_traits::{One, Zero};
use rayon::prelude::*;

use crate::guess::{Value, fixed_point};
use crate::kernel::Fresh;
use crate::rational::inverse_mod;

/// The Stern–Brocot parents (L, R) of `s` in [0, 1]: None for an end that does not
/// constrain (s = 0: both; s = 1: R).
pub fn parents(s: &Value) -> (Option<Value>, Option<Value>) {
    let (p, q) = (s.numer(), s.denom());
    if p.is_zero() {
        return (None, None);
    }
    if q.is_one() {
        return (Some(Value::zero()), None);
    }
    // L = a/b with p·b − a·q = 1 and 0 < b < q: b = p⁻¹ mod q. R = (p − a)/(q − b).
    let b = inverse_mod(p, q).expect("values are in lowest terms");
    let a = (p * &b - 1u8) / q;
    let (c, d) = (p - &a, q - &b);
    (Some(Value::new_raw(a, b)), Some(Value::new_raw(c, d)))
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guess::simplest_between;

    /// Whether `s` is the simplest rational of [lo, hi] by the parents rule.
    fn settled_by_parents(s: &Value, lo: &Value, hi: &Value) -> bool {
        let (l, r) = parents(s);
        l.is_none_or(|l| &l < lo) && r.is_none_or(|r| hi < &r) && lo <= s && s <= hi
    }

    fn v(n: u64, d: u64) -> Value {
        Value::new(n.into(), d.into())
    }

    #[test]
    fn parents_are_the_farey_neighbours() {
        assert_eq!(parents(&v(0, 1)), (None, None));
        assert_eq!(parents(&v(1, 1)), (Some(v(0, 1)), None));
        assert_eq!(parents(&v(1, 2)), (Some(v(0, 1)), Some(v(1, 1))));
        assert_eq!(parents(&v(3, 8)), (Some(v(1, 3)), Some(v(2, 5))));
        // 7463/8192 (SPEC §4) is the mediant of its parents.
        let (l, r) = parents(&v(7463, 8192));
        let (l, r) = (l.unwrap(), r.unwrap());
        assert!(l < v(7463, 8192) && v(7463, 8192) < r);
        assert_eq!(l.denom() + r.denom(), 8192u32.into());
        assert_eq!(l.numer() + r.numer(), 7463u32.into());
    }

    /// Against the simplest-rational function itself, over every interval with ends of
    /// denominator up to 12: s is the simplest rational of [lo, hi] exactly when the
    /// parents rule says so.
    #[test]
    fn the_parents_rule_is_the_simplest_rational_rule() {
        let mut ends = Vec::new();
        for q in 1..=12u64 {
            for p in 0..=q {
                ends.push(v(p, q));
            }
        }
        ends.sort();
        ends.dedup();
        for lo in &ends {
            for hi in ends.iter().filter(|h| *h >= lo) {
                let simplest = simplest_between(lo, hi);
                for s in ends.iter().filter(|s| lo <= *s && *s <= hi) {
                    assert_eq!(
                        settled_by_parents(s, lo, hi),
                        &simplest == s,
                        "s {s} in [{lo}, {hi}], simplest {simplest}"
                    );
                }
            }
        }
    }
}
