//! The game graph: for every indexed position, the distinct positions White's moves lead to
//! and those Black's moves lead to, as compressed adjacency lists built once in parallel.
//!
//! Targets are global indices. Two extra nodes stand for the ends of the game:
//! [`Graph::win`] (White captured the king, value 1) and [`Graph::loss`] (value 0); each is
//! its own only successor, so the recursion keeps them at 1 and 0 without special cases.
//! A capture of the king is listed first in its side's list. A side with no move at all gets
//! the position itself as its only option (SPEC §1).
//!
//! **Dominated options.** A pawn that promotes to a rook or a bishop leads to a position
//! that is never better for White than the same promotion to a queen, at every iteration:
//! the queen has every move the rook or bishop has from the same square (and blocked by the
//! same kings), the kings' moves are the same, and Black's options correspond one to one
//! (capturing either piece leads to the same bare-kings position). By induction on n, αₙ
//! and βₙ of the queen position are at least those of the other, so White's maximum is the
//! same without the under-promotion. The graph lists these options (White's lists keep
//! them, for the certificate and the query side); the kernel leaves them out.

use rayon::prelude::*;

use crate::index::Index;
use crate::position::Piece;
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

/// The targets of `moves` reached only by a promotion to a rook or bishop, each dominated by
/// the same promotion to a queen (which `moves` holds: promotions come in all four pieces).
fn dominated_targets(moves: &[rules::Move], target: impl Fn(Outcome) -> u32) -> Vec<u32> {
    let is_dominated = |m: &rules::Move| matches!(m.promotion, Some(Piece::Rook | Piece::Bishop));
    // Nearly every position has no promotion: look up no target twice for those.
    if !moves.iter().any(is_dominated) {
        return Vec::new();
    }
    let by = |dominated: bool| {
        moves
            .iter()
            .filter(move |m| is_dominated(m) == dominated)
            .map(|m| target(m.outcome))
    };
    let others: Vec<u32> = by(false).collect();
    let mut list: Vec<u32> = by(true).filter(|t| !others.contains(t)).collect();
    list.sort_unstable();
    list.dedup();
    list
}

/// Successors of every position of a board, plus the two terminal nodes.
#[derive(Debug)]
pub struct Graph {
    positions: usize,
    white: Adjacency,
    black: Adjacency,
    /// Per position, the White options reached only by a promotion to a rook or bishop.
    dominated: Adjacency,
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
        let lists: Vec<(Vec<u32>, Vec<u32>, Vec<u32>)> = (0..n)
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
                let white_moves = rules::white_moves(board, &pos);
                let dominated = dominated_targets(&white_moves, target);
                (
                    collect(white_moves, win),
                    collect(rules::black_moves(board, &pos), loss),
                    dominated,
                )
            })
            .collect();
        let ends = || [vec![win], vec![loss]].into_iter();
        let white = Adjacency::from_lists(lists.iter().map(|l| l.0.clone()).chain(ends()));
        let black = Adjacency::from_lists(lists.iter().map(|l| l.1.clone()).chain(ends()));
        let none = || [Vec::new(), Vec::new()].into_iter();
        let dominated = Adjacency::from_lists(lists.into_iter().map(|l| l.2).chain(none()));
        Graph {
            positions: n,
            white,
            black,
            dominated,
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
            dominated: Adjacency::from_lists((0..n + 2).map(|_| Vec::new())),
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

    /// White options of `i` that never give White more than another of its options (see
    /// the module comment): the targets of promotions to a rook or bishop, sorted.
    #[inline]
    pub fn white_dominated(&self, i: usize) -> &[u32] {
        self.dominated.get(i)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Board;

    /// A pawn on the seventh rank: its promotions to a rook and a bishop are dominated, the
    /// queen and knight promotions and every other move are not.
    #[test]
    fn under_promotions_to_rook_and_bishop_are_dominated() {
        let board = Board::new(8, 8).unwrap();
        let index = Index::new(board);
        let graph = Graph::new(&index);
        let p = crate::fen::parse("8/P7/8/8/8/4k3/8/4K3").unwrap().position;
        let i = index.index_of(&p).unwrap();
        let dominated = graph.white_dominated(i);
        assert_eq!(dominated.len(), 2);
        let mut materials: Vec<String> = dominated
            .iter()
            .map(|&t| index.position(t as usize).material().to_string())
            .collect();
        materials.sort();
        assert_eq!(materials, ["KBvK", "KRvK"]);
        assert!(dominated.iter().all(|t| graph.white(i).contains(t)));
        // A position without a promotion has none.
        let q = crate::fen::parse("8/8/P7/8/8/4k3/8/4K3").unwrap().position;
        assert!(
            graph
                .white_dominated(index.index_of(&q).unwrap())
                .is_empty()
        );
    }
}
