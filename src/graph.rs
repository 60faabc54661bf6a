//! The game graph of a set of materials: for every indexed position, the distinct nodes
//! White's moves lead to and those Black's moves lead to, as compressed adjacency lists
//! built once in parallel.
//!
//! Nodes are the indexed positions (global indices), then the *terminal* nodes, whose
//! values are fixed before a method runs: [`Graph::win`] (White captured the king, value
//! 1), [`Graph::loss`] (Black did, value 0), and one node per distinct *exit*, a position
//! of a material outside the set that a capture or a promotion leads to ([`Exit`]: its
//! stored material and canonical key; its values come from that material's tables, solved
//! first). Each terminal node is its own only successor, so a recursion keeps its value
//! without special cases. A capture of the king is listed first in its side's list. A side
//! with no move at all gets the position itself as its only option (SPEC §1).
//!
//! **Dominated options.** A pawn that promotes to a rook or a bishop leads to a position
//! that is never better for White than the same promotion to a queen, at every iteration:
//! the queen has every move the rook or bishop has from the same square (blocked by the
//! same men; a capture leaves a queen where the other leaves a rook or bishop, again
//! dominated), everyone else's moves are the same, and Black's options correspond one to
//! one (capturing either piece leads to the same position). By induction on n, αₙ and βₙ
//! of the queen position are at least those of the other, so White's maximum is the same
//! without the under-promotion. The graph lists these options (White's lists keep them,
//! for the certificate and the query side); the iteration's kernel leaves them out.

use rayon::prelude::*;

use crate::index::{Canon, Index, canonical_key};
use crate::material::{Material, Piece};
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
fn dominated_targets<T: Ord + Copy>(
    moves: &[rules::Move],
    target: impl Fn(Outcome) -> T,
) -> Vec<T> {
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
    let others: Vec<T> = by(false).collect();
    let mut list: Vec<T> = by(true).filter(|t| !others.contains(t)).collect();
    list.sort_unstable();
    list.dedup();
    list
}

/// Where a move leaves the graph's materials: a position of a material solved before, by
/// its stored material (the colour mirror's where the position has the weaker side as
/// White) and its canonical key there.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Exit {
    /// The stored material holding the position (or its mirror).
    pub material: Material,
    /// The canonical key in that material's index and table.
    pub key: u64,
    /// Whether the position is the colour mirror of the stored one: then its α is
    /// 1 − β of the stored position and its β is 1 − α.
    pub mirrored: bool,
}

/// A successor before exits are numbered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Target {
    Node(u32),
    Exit(Exit),
}

/// Successors of every position of an index, plus the terminal nodes.
#[derive(Debug)]
pub struct Graph {
    positions: usize,
    white: Adjacency,
    black: Adjacency,
    /// Per position, the White options reached only by a promotion to a rook or bishop.
    dominated: Adjacency,
    /// The exits, in node order after the win and loss nodes.
    exits: Vec<Exit>,
}

impl Graph {
    /// Build the graph of every position in `index`, in parallel. Moves into materials
    /// outside the index become exits.
    pub fn new(index: &Index) -> Graph {
        let n = index.len();
        let board = index.board();
        let (win, loss) = (n as u32, n as u32 + 1);
        // Canonical keys of every stored material a move can lead to outside the index.
        let materials: Vec<Material> = index.classes().iter().map(|c| c.material()).collect();
        let exit_canon: std::collections::HashMap<Material, Canon> =
            Material::next_outside(&materials)
                .into_iter()
                .map(|m| (m, Canon::new(board, m)))
                .collect();
        let target = |o: &Outcome| -> Target {
            match o {
                Outcome::WhiteWins => Target::Node(win),
                Outcome::BlackWins => Target::Node(loss),
                Outcome::Continue(p) => match index.class_number(p.material()) {
                    Some(c) => {
                        let local = index.classes()[c]
                            .index_of_valid(p)
                            .expect("successor positions are valid");
                        Target::Node((index.class_range(c).start + local) as u32)
                    }
                    None => {
                        let (material, mirrored) = p.material().stored();
                        assert!(
                            index.class_number(material).is_none(),
                            "{} leads to the mirror of {material}, which the same graph holds",
                            index.position(0).material()
                        );
                        let stored = if mirrored { p.mirror(board) } else { *p };
                        let key = match exit_canon.get(&material) {
                            Some(canon) => canon.key(&stored),
                            None => canonical_key(board, &stored),
                        };
                        Target::Exit(Exit {
                            material,
                            key,
                            mirrored,
                        })
                    }
                },
            }
        };
        type Lists = (Vec<Target>, Vec<Target>, Vec<Target>);
        let lists: Vec<Lists> = (0..n)
            .into_par_iter()
            .map(|i| {
                let pos = index.position(i);
                let collect = |moves: &[rules::Move]| -> Vec<Target> {
                    moves.iter().map(|m| target(&m.outcome)).collect()
                };
                let white_moves = rules::white_moves(board, &pos);
                let dominated = dominated_targets(&white_moves, |o| target(&o));
                (
                    collect(&white_moves),
                    collect(&rules::black_moves(board, &pos)),
                    dominated,
                )
            })
            .collect();
        let mut exits: Vec<Exit> = lists
            .par_iter()
            .flat_map_iter(|(w, b, _)| {
                w.iter().chain(b).filter_map(|t| match t {
                    Target::Exit(e) => Some(*e),
                    Target::Node(_) => None,
                })
            })
            .collect();
        exits.par_sort_unstable();
        exits.dedup();
        let node = |t: &Target| -> u32 {
            match t {
                Target::Node(x) => *x,
                Target::Exit(e) => {
                    (n + 2 + exits.binary_search(e).expect("every exit is listed")) as u32
                }
            }
        };
        let finish = |i: usize, list: &[Target], capture: u32| -> Vec<u32> {
            let mut out: Vec<u32> = list.iter().map(node).collect();
            out.sort_unstable();
            out.dedup();
            if let Some(k) = out.iter().position(|&t| t == capture) {
                out.swap(0, k);
            }
            if out.is_empty() {
                out.push(i as u32);
            }
            out
        };
        let terminals = 2 + exits.len();
        let ends = |_: ()| (0..terminals).map(|k| vec![(n + k) as u32]);
        let white = Adjacency::from_lists(
            lists
                .iter()
                .enumerate()
                .map(|(i, l)| finish(i, &l.0, win))
                .chain(ends(())),
        );
        let black = Adjacency::from_lists(
            lists
                .iter()
                .enumerate()
                .map(|(i, l)| finish(i, &l.1, loss))
                .chain(ends(())),
        );
        let dominated = Adjacency::from_lists(
            lists
                .iter()
                .map(|l| {
                    let mut d: Vec<u32> = l.2.iter().map(node).collect();
                    d.sort_unstable();
                    d.dedup();
                    d
                })
                .chain((0..terminals).map(|_| Vec::new())),
        );
        Graph {
            positions: n,
            white,
            black,
            dominated,
            exits,
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
            exits: Vec::new(),
        }
    }

    /// Number of indexed positions (the terminal nodes come after them).
    pub fn positions(&self) -> usize {
        self.positions
    }

    /// Number of nodes: the positions and the terminal nodes.
    pub fn nodes(&self) -> usize {
        self.positions + 2 + self.exits.len()
    }

    /// The terminal nodes: the win, the loss, the exits.
    pub fn terminals(&self) -> std::ops::Range<usize> {
        self.positions..self.nodes()
    }

    /// The exits, in node order: exit k is node `positions + 2 + k`.
    pub fn exits(&self) -> &[Exit] {
        &self.exits
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
        let index = Index::three_piece(board);
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

    /// One material alone: captures leave it through exits, named by the stored material
    /// (KvKN is KNvK's mirror) and the canonical key there.
    #[test]
    fn captures_leave_through_exits() {
        let board = Board::new(3, 3).unwrap();
        let index = Index::new(board, &["KRvKN".parse().unwrap()]);
        let graph = Graph::new(&index);
        assert!(graph.terminals().len() > 2);
        let names: std::collections::BTreeSet<(String, bool)> = graph
            .exits()
            .iter()
            .map(|e| (e.material.to_string(), e.mirrored))
            .collect();
        let want: std::collections::BTreeSet<(String, bool)> =
            [("KNvK".to_string(), true), ("KRvK".to_string(), false)].into();
        assert_eq!(names, want);
        // A rook taking the knight: the exit is the KRvK position after it.
        let p = crate::fen::parse("k2/1n1/KR1").unwrap().position;
        let i = index.index_of(&p).unwrap();
        let after = crate::fen::parse("k2/1R1/K2").unwrap().position;
        let key = crate::index::canonical_key(board, &after);
        let exit = graph
            .white(i)
            .iter()
            .filter_map(|&t| {
                graph
                    .exits()
                    .get((t as usize).checked_sub(graph.positions() + 2)?)
            })
            .find(|e| e.material.to_string() == "KRvK")
            .unwrap();
        assert_eq!(exit.key, key);
        for t in graph.terminals() {
            assert_eq!(graph.white(t), &[t as u32]);
        }
    }
}
