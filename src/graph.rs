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
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Adjacency {
    offsets: Vec<u32>,
    targets: Vec<u32>,
}

impl Adjacency {
    /// Lists given in node order.
    pub fn from_lists<L: AsRef<[u32]>>(lists: impl Iterator<Item = L>) -> Adjacency {
        let mut adj = Adjacency {
            offsets: vec![0],
            targets: Vec::new(),
        };
        for list in lists {
            adj.targets.extend_from_slice(list.as_ref());
            adj.offsets.push(adj.targets.len() as u32);
        }
        adj
    }

    /// Lists given by their ends (`offsets[i]..offsets[i + 1]` in `targets` is list i;
    /// `offsets` starts at 0 and ends at `targets.len()`, never decreasing).
    pub fn from_parts(offsets: Vec<u32>, targets: Vec<u32>) -> Adjacency {
        assert!(offsets.first() == Some(&0) && offsets.last() == Some(&(targets.len() as u32)));
        assert!(offsets.windows(2).all(|w| w[0] <= w[1]));
        Adjacency { offsets, targets }
    }

    /// No lists.
    fn empty() -> Adjacency {
        Adjacency {
            offsets: vec![0],
            targets: Vec::new(),
        }
    }

    /// Drop every list, keeping the room.
    fn clear(&mut self) {
        self.offsets.truncate(1);
        self.targets.clear();
    }

    /// Add a list after the last.
    fn push(&mut self, list: &[u32]) {
        self.targets.extend_from_slice(list);
        self.offsets.push(self.targets.len() as u32);
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

/// The targets of `moves` (`targets[k]` that of `moves[k]`) reached only by a promotion to
/// a rook or bishop, each dominated by the same promotion to a queen (which `moves` holds:
/// promotions come in all four pieces).
fn dominated_targets<T: Ord + Copy>(moves: &[rules::Move], targets: &[T]) -> Vec<T> {
    let is_dominated = |m: &rules::Move| matches!(m.promotion, Some(Piece::Rook | Piece::Bishop));
    if !moves.iter().any(is_dominated) {
        return Vec::new();
    }
    let by = |dominated: bool| {
        moves
            .iter()
            .zip(targets)
            .filter(move |(m, _)| is_dominated(m) == dominated)
            .map(|(_, &t)| t)
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

/// A list of nodes as the graph holds it: sorted without repeats; for a side's options
/// (`sides`: the king capture's node and the position's own), the king capture first, and
/// the position itself where the side has no move.
fn tidy(list: &mut Vec<u32>, sides: Option<(u32, u32)>) {
    list.sort_unstable();
    list.dedup();
    if let Some((capture, own)) = sides {
        if let Some(j) = list.iter().position(|&t| t == capture) {
            list.swap(0, j);
        }
        if list.is_empty() {
            list.push(own);
        }
    }
}

/// Names the node or exit each move's outcome leads to, for a graph of `index`.
struct Targets<'a> {
    index: &'a Index,
    /// Canonical keys of every stored material a move can lead to outside the index.
    exit_canon: std::collections::HashMap<Material, Canon>,
}

impl<'a> Targets<'a> {
    fn new(index: &'a Index) -> Targets<'a> {
        let materials: Vec<Material> = index.classes().iter().map(|c| c.material()).collect();
        let exit_canon = Material::next_outside(&materials)
            .into_iter()
            .map(|m| (m, Canon::new(index.board(), m)))
            .collect();
        Targets { index, exit_canon }
    }

    /// Where outcome `o` leads: the win or loss node, a position of the index, or an exit.
    fn of(&self, o: &Outcome) -> Target {
        let (index, n) = (self.index, self.index.len() as u32);
        match o {
            Outcome::WhiteWins => Target::Node(n),
            Outcome::BlackWins => Target::Node(n + 1),
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
                    let board = index.board();
                    let stored = if mirrored { p.mirror(board) } else { *p };
                    let key = match self.exit_canon.get(&material) {
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
    }
}

/// Positions whose lists are built together (one parallel task).
const RUN: usize = 4096;

/// Marks an option that is an exit, not yet numbered: `EXIT | j` is exit `j` of its run.
const EXIT: u32 = 1 << 31;

/// The lists of a run of positions, finished but for the exits' numbers: each list sorted
/// without repeats, a king capture first, a side without a move given the position
/// itself, as the graph holds them, an exit as [`EXIT`] and its place in `exits` (each
/// position lists an exit once). Exits come after every node, so a list's exits are its
/// last entries, and stay so once numbered ([`assemble`]).
struct Pending {
    white: Adjacency,
    black: Adjacency,
    dominated: Adjacency,
    exits: Vec<Exit>,
}

impl Pending {
    /// The lists of positions `range` of `index`, built in `scratch` (lists left there by
    /// an earlier run are dropped) and copied out at their length. Lists grown in place
    /// run after run, then finished and assembled in fresh memory, took fresh pages at
    /// every doubling and copy, and the kernel's zeroing of them was a fifth of the
    /// graph's time (5x5 KQRvKQ).
    fn of(
        range: std::ops::Range<usize>,
        index: &Index,
        targets: &Targets<'_>,
        scratch: &mut Pending,
    ) -> Pending {
        let board = index.board();
        let n = index.len() as u32;
        let (win, loss) = (n, n + 1);
        let p = scratch;
        for list in [&mut p.white, &mut p.black, &mut p.dominated] {
            list.clear();
        }
        p.exits.clear();
        for i in range {
            let pos = index.position(i);
            let from = p.exits.len();
            let exits = &mut p.exits;
            let mut local = |m: &rules::Move| -> u32 {
                match targets.of(&m.outcome) {
                    Target::Node(x) => x,
                    Target::Exit(e) => {
                        let j = match exits[from..].iter().position(|x| *x == e) {
                            Some(k) => from + k,
                            None => {
                                exits.push(e);
                                exits.len() - 1
                            }
                        };
                        EXIT | j as u32
                    }
                }
            };
            let white_moves = rules::white_moves(board, &pos);
            let mut white: Vec<u32> = white_moves.iter().map(&mut local).collect();
            let mut black: Vec<u32> = rules::black_moves(board, &pos)
                .iter()
                .map(&mut local)
                .collect();
            let mut dominated = dominated_targets(&white_moves, &white);
            tidy(&mut white, Some((win, i as u32)));
            tidy(&mut black, Some((loss, i as u32)));
            tidy(&mut dominated, None);
            p.white.push(&white);
            p.black.push(&black);
            p.dominated.push(&dominated);
        }
        Pending {
            white: p.white.clone(),
            black: p.black.clone(),
            dominated: p.dominated.clone(),
            exits: p.exits.clone(),
        }
    }

    /// Room for the lists of a run, to be reused run after run ([`Pending::of`]).
    fn scratch() -> Pending {
        Pending {
            white: Adjacency::empty(),
            black: Adjacency::empty(),
            dominated: Adjacency::empty(),
            exits: Vec::new(),
        }
    }

    /// The lists of one kind (0 White's, 1 Black's, 2 the dominated).
    fn lists(&self, kind: usize) -> &Adjacency {
        [&self.white, &self.black, &self.dominated][kind]
    }
}

/// The graph's lists of one kind (see [`Pending::lists`]) put together from the runs' in
/// one pass, in parallel: each run's lists copied to their place, its exits numbered on
/// the way (`numbers[r][j]` is the node of exit `j` of run `r`) and each list's exits put
/// back in order; with room for `extra` more lists of one target each (the terminals').
fn assemble(pending: &[Pending], numbers: &[Vec<u32>], kind: usize, extra: usize) -> Adjacency {
    let runs: Vec<&Adjacency> = pending.iter().map(|p| p.lists(kind)).collect();
    let lists: usize = runs.iter().map(|a| a.offsets.len() - 1).sum();
    let total: usize = runs.iter().map(|a| a.targets.len()).sum();
    let mut offsets = Vec::with_capacity(lists + 1 + extra);
    offsets.resize(lists + 1, 0u32);
    let mut targets = Vec::with_capacity(total + extra);
    targets.resize(total, 0u32);
    // Each run's share of both arrays, taken in order.
    let mut shares = Vec::with_capacity(runs.len());
    let (mut rest_o, mut rest_t) = (&mut offsets[1..], &mut targets[..]);
    let mut base = 0u32;
    for (run, numbers) in runs.iter().zip(numbers) {
        let (o, ro) = std::mem::take(&mut rest_o).split_at_mut(run.offsets.len() - 1);
        let (t, rt) = std::mem::take(&mut rest_t).split_at_mut(run.targets.len());
        (rest_o, rest_t) = (ro, rt);
        shares.push((*run, numbers, o, t, base));
        base += run.targets.len() as u32;
    }
    shares
        .into_par_iter()
        .for_each(|(run, numbers, o, t, base)| {
            for (slot, &end) in o.iter_mut().zip(&run.offsets[1..]) {
                *slot = base + end;
            }
            for k in 0..run.offsets.len() - 1 {
                let (a, b) = (run.offsets[k] as usize, run.offsets[k + 1] as usize);
                let out = &mut t[a..b];
                let mut first_exit = out.len();
                for (slot, (q, &v)) in out.iter_mut().zip(run.get(k).iter().enumerate()) {
                    *slot = if v & EXIT == 0 {
                        v
                    } else {
                        first_exit = first_exit.min(q);
                        numbers[(v & !EXIT) as usize]
                    };
                }
                out[first_exit..].sort_unstable();
            }
        });
    Adjacency { offsets, targets }
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
        Graph::unless(index, &|| false).expect("never stopped")
    }

    /// [`Graph::new`], or None once `stopping` says so (asked before each run of
    /// positions: on 6x6 five men a graph takes minutes, and Ctrl-C must not wait for it).
    pub fn unless(index: &Index, stopping: &(dyn Fn() -> bool + Sync)) -> Option<Graph> {
        let n = index.len();
        let targets = Targets::new(index);
        // The lists, a run of positions at a time, before the exits are numbered; then
        // the exits numbered and the lists finished. Each run holds its lists flat, four
        // bytes an option: lists of targets per position took 1.2 KB a position (7x7
        // KQvKQ: 954 MB at the graph's peak, the job's heap peak, against 350 MB after).
        let pending: Vec<Pending> = (0..n.div_ceil(RUN))
            .into_par_iter()
            .map_init(Pending::scratch, |scratch, r| {
                (!stopping())
                    .then(|| Pending::of(r * RUN..n.min((r + 1) * RUN), index, &targets, scratch))
            })
            .collect::<Option<_>>()?;
        let mut exits: Vec<Exit> = pending
            .par_iter()
            .flat_map_iter(|p| p.exits.iter().copied())
            .collect();
        exits.par_sort_unstable();
        exits.dedup();
        assert!(
            n + 2 + exits.len() < EXIT as usize,
            "too many nodes for the graph's numbering"
        );
        let numbers: Vec<Vec<u32>> = pending
            .par_iter()
            .map(|p| {
                p.exits
                    .iter()
                    .map(|e| (n + 2 + exits.binary_search(e).expect("every exit is listed")) as u32)
                    .collect()
            })
            .collect();
        let terminals = 2 + exits.len();
        let lists: [Adjacency; 3] =
            std::array::from_fn(|kind| assemble(&pending, &numbers, kind, terminals));
        drop(pending);
        let [mut white, mut black, mut dominated] = lists;
        for k in 0..terminals {
            let end = (n + k) as u32;
            white.push(&[end]);
            black.push(&[end]);
            dominated.push(&[]);
        }
        Some(Graph {
            positions: n,
            white,
            black,
            dominated,
            exits,
        })
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

    /// The graph built the obvious way: every position's targets listed whole, the exits
    /// numbered, each list mapped, sorted and deduplicated (as the builder was before it
    /// went run by run).
    fn reference(index: &Index) -> Graph {
        let n = index.len();
        let board = index.board();
        let targets = Targets::new(index);
        type Lists = (Vec<Target>, Vec<Target>, Vec<Target>);
        let lists: Vec<Lists> = (0..n)
            .map(|i| {
                let pos = index.position(i);
                let of = |moves: &[rules::Move]| -> Vec<Target> {
                    moves.iter().map(|m| targets.of(&m.outcome)).collect()
                };
                let white_moves = rules::white_moves(board, &pos);
                let white = of(&white_moves);
                let dominated = dominated_targets(&white_moves, &white);
                (white, of(&rules::black_moves(board, &pos)), dominated)
            })
            .collect();
        let mut exits: Vec<Exit> = lists
            .iter()
            .flat_map(|(w, b, _)| w.iter().chain(b))
            .filter_map(|t| match t {
                Target::Exit(e) => Some(*e),
                Target::Node(_) => None,
            })
            .collect();
        exits.sort_unstable();
        exits.dedup();
        let node = |t: &Target| match t {
            Target::Node(x) => *x,
            Target::Exit(e) => (n + 2 + exits.binary_search(e).unwrap()) as u32,
        };
        let list = |i: usize, l: &[Target], capture: Option<u32>| {
            let mut out: Vec<u32> = l.iter().map(node).collect();
            tidy(&mut out, capture.map(|c| (c, i as u32)));
            out
        };
        let ends = 2 + exits.len();
        let end = |k: usize| vec![(n + k) as u32];
        let (win, loss) = (n as u32, n as u32 + 1);
        Graph {
            positions: n,
            white: Adjacency::from_lists(
                (lists.iter().enumerate())
                    .map(|(i, l)| list(i, &l.0, Some(win)))
                    .chain((0..ends).map(end)),
            ),
            black: Adjacency::from_lists(
                (lists.iter().enumerate())
                    .map(|(i, l)| list(i, &l.1, Some(loss)))
                    .chain((0..ends).map(end)),
            ),
            dominated: Adjacency::from_lists(
                (lists.iter().enumerate())
                    .map(|(i, l)| list(i, &l.2, None))
                    .chain((0..ends).map(|_| Vec::new())),
            ),
            exits,
        }
    }

    /// The graph built run by run is the graph built the obvious way, node for node: every
    /// material up to four men on 4x4 alone (their exits, promotions and, for KPvKP, en
    /// passant), 5x5 KPvKP and KNvKP (several runs each), and joint materials.
    #[test]
    fn the_graph_is_built_as_the_obvious_way_builds_it() {
        let check = |board: Board, materials: &[Material]| {
            let index = Index::new(board, materials);
            let (got, want) = (Graph::new(&index), reference(&index));
            assert!(
                got.positions == want.positions
                    && got.exits == want.exits
                    && got.white == want.white
                    && got.black == want.black
                    && got.dominated == want.dominated,
                "{materials:?} on {board}"
            );
        };
        let b4 = Board::new(4, 4).unwrap();
        for m in Material::all_up_to(4) {
            check(b4, &[m]);
        }
        let m = |name: &str| name.parse::<Material>().unwrap();
        let b5 = Board::new(5, 5).unwrap();
        for name in ["KPvKP", "KNvKP", "KQPvK"] {
            assert!(Index::new(b5, &[m(name)]).len() > 2 * RUN);
            check(b5, &[m(name)]);
        }
        check(b4, &[m("KRvK"), m("KNvK"), m("KvK")]);
        check(Board::new(3, 4).unwrap(), &Material::all_up_to(3));
    }

    /// A graph asked to stop is not built; one never asked is the graph.
    #[test]
    fn a_graph_stops_when_asked() {
        let index = Index::new(Board::new(4, 4).unwrap(), &["KRvKN".parse().unwrap()]);
        assert!(Graph::unless(&index, &|| true).is_none());
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let count = || {
            asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            false
        };
        let graph = Graph::unless(&index, &count).unwrap();
        assert_eq!(graph.white, Graph::new(&index).white);
        assert_eq!(asked.into_inner(), index.len().div_ceil(RUN));
    }

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
