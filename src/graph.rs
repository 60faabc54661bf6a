//! The game graph: for every indexed position, the distinct positions White's moves lead to
//! and those Black's moves lead to, as compressed adjacency lists built once in parallel.
//!
//! Targets are global indices. Two extra nodes stand for the ends of the game:
//! [`Graph::win`] (White captured the king, value 1) and [`Graph::loss`] (value 0); each is
//! its own only successor, so the recursion keeps them at 1 and 0 without special cases.
//! A capture of the king is listed first in its side's list. A side with no move at all gets
//! the position itself as its only option (SPEC §1).

use rayon::prelude::*;

use crate::index::Index;
use crate::rules::{self, Outcome};

/// Compressed adjacency lists (one list per node).
#[derive(Debug, Default)]
pub struct Adjacency {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Adjacency {
    /// Lists given in node order.
    pub fn from_lists(lists: impl Iterator<Item = Vec<u32>>) -> Adjacency {
        let mut adj = Adjacency {
            offsets: vec![0],
            targets: Vec::new(),
        };
        for list in lists {
            adj.targets.extend_from_slice(&list);
            adj.offsets.push(adj.targets.len() as u32);
        }
        adj
    }

    /// The list of node `i`.
    #[inline]
    pub fn get(&self, i: usize) -> &[u32] {
        &self.targets[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.targets.len()
    }

    /// The reverse lists: for each of `nodes` nodes, the nodes whose lists contain it.
    pub fn reversed(&self, nodes: usize) -> Adjacency {
        let mut counts = vec![0u32; nodes + 1];
        for &t in &self.targets {
            counts[t as usize + 1] += 1;
        }
        for i in 0..nodes {
            counts[i + 1] += counts[i];
        }
        let mut fill = counts.clone();
        let mut targets = vec![0u32; self.targets.len()];
        for from in 0..self.offsets.len() - 1 {
            for &t in self.get(from) {
                targets[fill[t as usize] as usize] = from as u32;
                fill[t as usize] += 1;
            }
        }
        Adjacency {
            offsets: counts,
            targets,
        }
    }
}

/// Successors of every position of a board, plus the two terminal nodes.
#[derive(Debug)]
pub struct Graph {
    positions: usize,
    white: Adjacency,
    black: Adjacency,
}

impl Graph {
    /// Build the graph of every position in `index`, in parallel.
    pub fn new(index: &Index) -> Graph {
        let n = index.len();
        assert!(
            n + 2 < u32::MAX as usize,
            "too many positions for 32-bit indices"
        );
        let board = index.board();
        let (win, loss) = (n as u32, n as u32 + 1);
        let lists: Vec<(Vec<u32>, Vec<u32>)> = (0..n)
            .into_par_iter()
            .map(|i| {
                let pos = index.position(i);
                let target = |o: Outcome| match o {
                    Outcome::WhiteWins => win,
                    Outcome::BlackWins => loss,
                    Outcome::Continue(p) => {
                        index.index_of(&p).expect("successor positions are valid") as u32
                    }
                };
                let collect = |moves: Vec<rules::Move>, capture: u32| {
                    let mut list: Vec<u32> = moves.into_iter().map(|m| target(m.outcome)).collect();
                    list.sort_unstable();
                    list.dedup();
                    if let Some(k) = list.iter().position(|&t| t == capture) {
                        list.swap(0, k);
                    }
                    if list.is_empty() {
                        list.push(i as u32);
                    }
                    list
                };
                (
                    collect(rules::white_moves(board, &pos), win),
                    collect(rules::black_moves(board, &pos), loss),
                )
            })
            .collect();
        let ends = || [vec![win], vec![loss]].into_iter();
        let white = Adjacency::from_lists(lists.iter().map(|l| l.0.clone()).chain(ends()));
        let black = Adjacency::from_lists(lists.into_iter().map(|l| l.1).chain(ends()));
        Graph {
            positions: n,
            white,
            black,
        }
    }

    /// A graph given by hand: `white[p]` and `black[p]` list the options of position p
    /// (indices below `white.len()` for positions, [`Graph::win`] and [`Graph::loss`] for the
    /// ends). For tests and experiments; lists must not be empty.
    pub fn from_lists(white: Vec<Vec<u32>>, black: Vec<Vec<u32>>) -> Graph {
        let n = white.len();
        assert_eq!(n, black.len());
        let (win, loss) = (n as u32, n as u32 + 1);
        let ends = || [vec![win], vec![loss]].into_iter();
        Graph {
            positions: n,
            white: Adjacency::from_lists(white.into_iter().chain(ends())),
            black: Adjacency::from_lists(black.into_iter().chain(ends())),
        }
    }

    /// Number of indexed positions (the terminal nodes come after them).
    pub fn positions(&self) -> usize {
        self.positions
    }

    /// Number of nodes: the positions and the two terminal nodes.
    pub fn nodes(&self) -> usize {
        self.positions + 2
    }

    /// The node that stands for "White captured the king" (value 1).
    pub fn win(&self) -> u32 {
        self.positions as u32
    }

    /// The node that stands for "Black captured the king" (value 0).
    pub fn loss(&self) -> u32 {
        self.positions as u32 + 1
    }

    /// Distinct nodes White's moves from `i` lead to (a king capture first).
    #[inline]
    pub fn white(&self, i: usize) -> &[u32] {
        self.white.get(i)
    }

    /// Distinct nodes Black's moves from `i` lead to (a king capture first).
    #[inline]
    pub fn black(&self, i: usize) -> &[u32] {
        self.black.get(i)
    }

    /// White's adjacency lists.
    pub fn white_adjacency(&self) -> &Adjacency {
        &self.white
    }

    /// Black's adjacency lists.
    pub fn black_adjacency(&self) -> &Adjacency {
        &self.black
    }

    /// Number of edges (White's and Black's).
    pub fn edge_count(&self) -> usize {
        self.white.edge_count() + self.black.edge_count()
    }
}
