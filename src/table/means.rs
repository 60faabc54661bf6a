//! Which dictionary entries a version 7 file stores as the mean of two others.
//!
//! Every value of a table is the mean of the values of two positions its moves lead to
//! (White's best and Black's best: the Richman equation `2v = a + b`), and within a
//! component those are long numbers over one denominator. Stored as "the mean of entries a
//! and b", an entry takes 12 bytes instead of thousands; a reader decodes it from the
//! entries it names, down to entries stored whole (the anchors). The writer is given such
//! equations ([`super::dictionary::Mean`]) and picks here, per entry, one pair to store,
//! so that no entry depends on itself and decoding one entry visits at most [`CONE_CAP`]
//! means; the entries left without a pair are stored whole.

use rayon::prelude::*;

/// The most means the decoding of one entry visits (counted with repeats, so an upper
/// bound): a probe decodes some forty values, each at most this many means of long values.
pub const CONE_CAP: usize = 256;

/// The longest chain of means a reader follows before it calls the file damaged (a forged
/// cycle, or a chain no writer makes: a chain visits at most [`CONE_CAP`] means).
pub const MAX_MEAN_DEPTH: usize = 1024;

/// For each of `len` entries, the two entries it is stored as the mean of (None: stored
/// whole), chosen among `triples` (`[v, a, b]`: entry v is the mean of entries a and b).
/// Deterministic: the first pair of each entry in sorted order, then cycles broken and
/// cones capped by a depth-first search in entry order.
pub fn choose(len: usize, mut triples: Vec<[u32; 3]>) -> Vec<Option<(u32, u32)>> {
    triples.retain(|t| t[1] != t[0] && t[2] != t[0]);
    triples.par_sort_unstable();
    let mut pick: Vec<Option<(u32, u32)>> = vec![None; len];
    for t in &triples {
        let slot = &mut pick[t[0] as usize];
        if slot.is_none() {
            *slot = Some((t[1], t[2]));
        }
    }
    drop(triples);
    let order = break_cycles(&mut pick);
    cap_cones(&mut pick, &order);
    pick
}

/// The entries an entry's pair names (none for an entry stored whole).
fn children(pick: &[Option<(u32, u32)>], e: usize) -> impl Iterator<Item = usize> + '_ {
    pick[e]
        .into_iter()
        .flat_map(|(a, b)| [a as usize, b as usize])
}

/// Store whole every entry a depth-first search finds at the head of a back edge (so no
/// entry depends on itself), and return the search's post-order: every entry after the
/// entries its pair names.
fn break_cycles(pick: &mut [Option<(u32, u32)>]) -> Vec<usize> {
    const NEW: u8 = 0;
    const OPEN: u8 = 1;
    const DONE: u8 = 2;
    let len = pick.len();
    let mut state = vec![NEW; len];
    let mut order = Vec::with_capacity(len);
    for root in 0..len {
        if state[root] != NEW {
            continue;
        }
        state[root] = OPEN;
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        while let Some(top) = stack.last_mut() {
            let (u, next) = *top;
            let child = children(pick, u).nth(next);
            top.1 += 1;
            match child {
                Some(v) => match state[v] {
                    NEW => {
                        state[v] = OPEN;
                        stack.push((v, 0));
                    }
                    // A back edge: v, on the path to u, would depend on itself.
                    OPEN => pick[v] = None,
                    _ => {}
                },
                None => {
                    state[u] = DONE;
                    order.push(u);
                    stack.pop();
                }
            }
        }
    }
    order
}

/// Store whole every entry whose decoding would visit more than [`CONE_CAP`] means: the
/// means below each entry (its cone) are the union of its halves' and itself, taken in
/// `order` (halves first), each held as a sorted list until the search ends.
fn cap_cones(pick: &mut [Option<(u32, u32)>], order: &[usize]) {
    let mut cones: Vec<Vec<u32>> = vec![Vec::new(); pick.len()];
    for &e in order {
        let Some((a, b)) = pick[e] else {
            continue;
        };
        let cone = union(&cones[a as usize], &cones[b as usize], e as u32);
        if cone.len() > CONE_CAP {
            pick[e] = None;
        } else {
            cones[e] = cone;
        }
    }
}

/// The sorted union of sorted lists `x` and `y` and `e`.
fn union(x: &[u32], y: &[u32], e: u32) -> Vec<u32> {
    let mut out = Vec::with_capacity(x.len() + y.len() + 1);
    let (mut i, mut j) = (0, 0);
    let mut pending = Some(e);
    loop {
        let next = [x.get(i), y.get(j), pending.as_ref()]
            .into_iter()
            .flatten()
            .min()
            .copied();
        let Some(v) = next else {
            break;
        };
        if x.get(i) == Some(&v) {
            i += 1;
        }
        if y.get(j) == Some(&v) {
            j += 1;
        }
        if pending == Some(v) {
            pending = None;
        }
        out.push(v);
    }
    out
}

/// The most means on one chain of `pick` (0 if none is a mean) and the entry at its head,
/// or an entry on a cycle.
pub(super) fn longest_chain(pick: &[Option<(u32, u32)>]) -> Result<(usize, usize), usize> {
    let chain = chains(pick)?;
    let (mut longest, mut head) = (0, 0);
    for (u, &c) in chain.iter().enumerate() {
        if c > longest {
            (longest, head) = (c, u);
        }
    }
    Ok((longest, head))
}

/// For each entry of `pick`, the most means on a chain from it down to entries stored
/// whole (0 for an entry stored whole), or an entry on a cycle.
pub(super) fn chains(pick: &[Option<(u32, u32)>]) -> Result<Vec<usize>, usize> {
    let len = pick.len();
    // 0: not reached; 1: on the search's path; 2: its chain length is `chain`.
    let mut state = vec![0u8; len];
    let mut chain = vec![0usize; len];
    for root in 0..len {
        if state[root] != 0 {
            continue;
        }
        state[root] = 1;
        let mut stack: Vec<(usize, usize)> = vec![(root, 0)];
        while let Some(top) = stack.last_mut() {
            let (u, next) = *top;
            top.1 += 1;
            match children(pick, u).nth(next) {
                Some(v) => match state[v] {
                    0 => {
                        state[v] = 1;
                        stack.push((v, 0));
                    }
                    1 => return Err(v),
                    _ => {}
                },
                None => {
                    chain[u] = match pick[u] {
                        None => 0,
                        Some(_) => 1 + children(pick, u).map(|k| chain[k]).max().unwrap_or(0),
                    };
                    state[u] = 2;
                    stack.pop();
                }
            }
        }
    }
    Ok(chain)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The distinct means decoding `e` visits (what the cap bounds), or None on a cycle.
    fn visits(pick: &[Option<(u32, u32)>], e: usize, _: usize) -> Option<usize> {
        longest_chain(pick).ok()?;
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![e];
        while let Some(u) = stack.pop() {
            if let Some((a, b)) = pick[u]
                && seen.insert(u)
            {
                stack.extend([a as usize, b as usize]);
            }
        }
        Some(seen.len())
    }

    #[test]
    fn self_references_and_cycles_are_stored_whole() {
        // 0 = mean(1, 2), 1 = mean(0, 3): a cycle; 2 = mean(2, 3): itself.
        let pick = choose(4, vec![[0, 1, 2], [1, 0, 3], [2, 2, 3]]);
        assert_eq!(pick[2], None);
        assert!(pick[0].is_none() || pick[1].is_none());
        assert!(pick[0].is_some() || pick[1].is_some());
        for e in 0..4 {
            assert!(visits(&pick, e, 0).is_some());
        }
    }

    #[test]
    fn the_first_pair_in_order_is_kept_whatever_the_input_order() {
        let a = choose(5, vec![[4, 3, 1], [4, 0, 2], [3, 0, 1]]);
        let b = choose(5, vec![[3, 0, 1], [4, 0, 2], [4, 3, 1]]);
        assert_eq!(a, b);
        assert_eq!(a[4], Some((0, 2)));
        assert_eq!(a[3], Some((0, 1)));
    }

    #[test]
    fn a_long_chain_is_cut_at_the_cap() {
        // Entry k is the mean of entry k - 1 and entry 0, for a chain of 3 × CONE_CAP.
        let len = 3 * CONE_CAP;
        let triples: Vec<[u32; 3]> = (2..len as u32).map(|k| [k, k - 1, 0]).collect();
        let pick = choose(len, triples);
        let whole = pick.iter().filter(|p| p.is_none()).count();
        assert!((3..=6).contains(&whole), "{whole}");
        for e in 0..len {
            let v = visits(&pick, e, 0).unwrap();
            assert!(v <= CONE_CAP, "entry {e}: {v}");
        }
        // Each entry the mean of the two before it: a cone grows by one an entry (counted
        // with repeats it would double), so one entry in CONE_CAP is whole.
        let triples: Vec<[u32; 3]> = (2..len as u32).map(|k| [k, k - 1, k - 2]).collect();
        let pick = choose(len, triples);
        let whole = pick.iter().filter(|p| p.is_none()).count();
        assert!((3..=8).contains(&whole), "{whole}");
        for e in 0..len {
            assert!(visits(&pick, e, 0).unwrap() <= CONE_CAP);
        }
    }

    #[test]
    fn the_longest_chain_is_named_by_its_head() {
        // 3 = mean(2, 0), 2 = mean(1, 0), 1 = mean(0, 4): three means down from entry 3.
        let pick = [None, Some((0, 4)), Some((1, 0)), Some((2, 0)), None];
        assert_eq!(longest_chain(&pick), Ok((3, 3)));
        assert_eq!(longest_chain(&[None, None]), Ok((0, 0)));
        // 1 = mean(2, 0), 2 = mean(1, 0): a cycle through 1 and 2.
        let e = longest_chain(&[None, Some((2, 0)), Some((1, 0))]).unwrap_err();
        assert!([1, 2].contains(&e));
    }

    #[test]
    fn unions_are_sorted_and_distinct() {
        assert_eq!(union(&[1, 4, 9], &[2, 4, 10], 5), vec![1, 2, 4, 5, 9, 10]);
        assert_eq!(union(&[], &[], 3), vec![3]);
        assert_eq!(union(&[3], &[3], 3), vec![3]);
    }
}
