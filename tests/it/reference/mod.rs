//! An independent reference solver ("oracle") for bidding-chess tablebases on small boards.
//!
//! Written from the rules alone (docs/src/game.md: the rules, and the two bounds α and β)
//! and sharing no code with the `bidtb` crate: std, `num-bigint`, `num-rational`, `num-traits` and `rayon` only. It
//! computes, for every position of a material on an `F x R` board, the exact alpha and beta.
//!
//! # The rules as implemented
//! A position is a set of (colour, piece, square) plus, possibly, a pending en-passant right.
//! It has no side to move: its value is `(max over White's moves + min over Black's moves) / 2`.
//! Every pseudo-legal move is allowed; capturing a king ends the game (1 if White captured,
//! 0 if Black did); any other capture, and any promotion, leads to another material, solved
//! before (the materials form a DAG: a move either keeps the material or removes a piece or
//! turns a pawn into a piece). A side without any move keeps the position as its option.
//! Pawns: one step onto an empty square, two from their second rank over two empty squares
//! when the board has at least 4 ranks (promoting if that reaches the last rank), diagonal
//! captures of any enemy piece, promotion to Q, R, B or N as separate moves. En passant: a
//! position with a pending right exists when a pawn stands on its double-step landing square
//! (rank index 3 for White, R-4 for Black, boards of 5 ranks or more), the two squares behind
//! it are empty and an enemy pawn stands beside it; only in that position may such an enemy
//! pawn capture it en passant, and every move from it clears the right except a double step
//! that creates a new one. The right is stored as the square of the pawn that may be taken.
//!
//! # The numbers
//! With `T x (P) = (max_w x(P_w) + min_b x(P_b)) / 2` (leaves fixed), alpha is the least and
//! beta the greatest fixed point of `T` (the limits of `T^n 0` and `T^n 1`). Within one
//! material the exits (captures, promotions) are leaves paying alpha (for alpha) or beta (for
//! beta) of the position they reach. Since the materials form a DAG, `T` is block-triangular
//! and its least (greatest) fixed point is found block by block: the materials below first,
//! then this material's least (greatest) solution with those leaf values. Beta is computed as
//! `1 - y` where `y` is the least fixed point of the same game seen from Black (Black
//! maximises, leaves pay `1 - beta`): `x -> 1 - x` maps the fixed points of one onto those of
//! the other and reverses the order. So everything reduces to the least fixed point of an
//! abstract game (`game.rs`): the maximiser M wants to reach good leaves, and play that never
//! reaches a leaf pays 0.
//!
//! # Least fixed point: strategy iteration (`game::strategy_iteration`)
//! Fix a strategy `s` of M (one option per node). Let `Z_s` be the greatest set of nodes at
//! which `s` stays in `Z_s` (or goes to a leaf paying 0) and some option of the minimiser m
//! does too: from `Z_s` m can avoid every positive leaf forever, so its value is 0 against
//! `s`. Outside `Z_s` every closed class of the chain (s, t), for any m-strategy t, would
//! satisfy the defining property of `Z_s`, so every chain is absorbed (into leaves or `Z_s`)
//! with probability 1; there m's problem is a stopping Markov decision problem, solved exactly
//! by m's own strategy iteration: evaluate (s, t) by an exact linear solve, switch t to
//! options of strictly smaller value until none is, which reaches the unique solution of m's
//! optimality equations. Then M switches to options of strictly greater value. The values
//! never decrease (a closed class of the new chain keeps `s` unchanged and m's greedy options,
//! so it lies in `Z_s` where the old values are 0) and strictly increase somewhere, so no
//! strategy repeats and the loop stops, at a fixed point `u` of `T` that is the value of a
//! strategy of M. Such a `u` is the least fixed point: see the certificate below. Floats are
//! used only to choose the starting strategies (any start is correct) and to order two values
//! whose approximations differ by more than 1e-9 (the approximations are within 1e-15).
//!
//! Each chain is solved one strongly connected component at a time (sinks first); a larger
//! component by exact elimination of states (Gaussian elimination with non-negative numbers).
//!
//! # The certificate (checked at the end of every solve, independently of how `u` was found)
//! If (1) `u = T u` exactly with `0 <= u <= 1`, and (2) a strategy `s` of M picks an option of
//! maximal `u` at every node and `u = 0` on `Z_s`, then `u` is the least fixed point `a`.
//! Proof. `T^n 0 <= u` by induction (`T` is monotone), so `a <= u`. Conversely let
//! `L x (P) = (x(s(P)) + min_b x(P_b)) / 2`, so `L <= T`, `L^n 0 <= T^n 0 <= a`, and
//! `y = lim L^n 0 <= a` solves `L y = y`; `L^n 0 = 0` on `Z_s` by induction (from `Z_s`, `s` and
//! some m-option stay in `Z_s` or reach a leaf paying 0), so `y = 0` on `Z_s`. By (2),
//! `L u = u`. Take `t` with `y(t(P)) = min_b y(P_b)`; then `d = u - y >= 0` is 0 on leaves and on
//! `Z_s`, and `d(P) <= (d(s(P)) + d(t(P))) / 2`. If the maximum `D` of `d` were positive, at
//! every node with `d = D` both `s` and `t` would lead to nodes with `d = D`: that set would
//! have the defining property of `Z_s`, so lie in `Z_s`, where `d = 0`. So `d = 0`, `u = y <= a`.
//! On top of that each material is checked once more in the chess terms: every position's
//! alpha and beta satisfy their equation exactly, and alpha <= beta.
#![allow(dead_code)]

pub mod chips;
mod game;

use game::{Game, Succ};
use num_traits::{One, Zero};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// An exact rational value, in lowest terms.
pub type Q = num_rational::Ratio<num_bigint::BigUint>;

/// Every valid position of `material` on a board of `files` x `ranks` (each 2..=8), with its
/// exact alpha and beta, keyed by FEN "<placement> <ep>" (ranks from the top, White upper
/// case, Black lower case, digits for empty runs; `<ep>` is "-" or the square a pawn skipped).
/// `material` is named like Syzygy files ("KvK", "KQvK", "KvKQ", "KRvKN", "KPvKP", ...).
/// No symmetry is used: every placement is its own key.
pub fn solve_material(files: u8, ranks: u8, material: &str) -> BTreeMap<String, (Q, Q)> {
    Reference::new(files, ranks).material(material).clone()
}

/// A reference solver for one board that keeps every material it has solved (including the
/// smaller materials a material leads to), so that later calls reuse them.
pub struct Reference {
    board: Board,
    tables: HashMap<Material, Table>,
}

impl Reference {
    /// A solver for boards of `files` x `ranks`, each between 2 and 8.
    pub fn new(files: u8, ranks: u8) -> Reference {
        assert!(
            (2..=8).contains(&files) && (2..=8).contains(&ranks),
            "board size"
        );
        Reference {
            board: Board { files, ranks },
            tables: HashMap::new(),
        }
    }

    /// Same as [`solve_material`], reusing the materials solved before by this `Reference`.
    pub fn material(&mut self, material: &str) -> &BTreeMap<String, (Q, Q)> {
        let m = Material::parse(material);
        self.ensure(m);
        &self.tables[&m].by_fen
    }

    /// Drops the FEN keys of `material` once a caller has read them (the values stay, for
    /// the materials whose captures and promotions lead to it): on 3x4 the keys of every
    /// material up to five men would hold several GiB at once. A later
    /// [`Reference::material`] call on it returns an empty map.
    pub fn forget_keys(&mut self, material: &str) {
        if let Some(t) = self.tables.get_mut(&Material::parse(material)) {
            t.by_fen = BTreeMap::new();
        }
    }

    fn ensure(&mut self, m: Material) {
        if self.tables.contains_key(&m) {
            return;
        }
        for child in m.children() {
            self.ensure(child);
        }
        let table = self.build(m);
        self.tables.insert(m, table);
    }

    /// The value equations of material `m` (whose children are all solved) as a game graph.
    fn equations(&self, m: Material) -> Equations {
        let board = self.board;
        let positions = positions(board, m);
        let index: HashMap<Position, usize> = positions
            .iter()
            .enumerate()
            .map(|(i, p)| (p.clone(), i))
            .collect();
        // Leaf 0: Black captured the white king; leaf 1: White captured the black king; then
        // one leaf per exit position (another material), paying its alpha or beta.
        let mut alpha_pay = vec![Q::zero(), Q::one()];
        let mut beta_pay = vec![Q::zero(), Q::one()];
        let mut exits: HashMap<Position, usize> = HashMap::new();
        let mut game = Game::default();
        for (i, pos) in positions.iter().enumerate() {
            for colour in [WHITE, BLACK] {
                let mut options = Vec::new();
                for outcome in moves(board, pos, colour) {
                    options.push(match outcome {
                        Outcome::KingCaptured => Succ::Leaf(if colour == WHITE { 1 } else { 0 }),
                        Outcome::Moved(next) => match index.get(&next) {
                            Some(&j) => Succ::Node(j),
                            None => {
                                let nm = Material::of(&next);
                                assert_ne!(nm, m, "{} is not enumerated", fen(board, &next));
                                let leaf = exits.entry(next).or_insert_with_key(|next| {
                                    let t = &self.tables[&nm];
                                    let (a, b) = &t.values[t.index[next]];
                                    alpha_pay.push(a.clone());
                                    beta_pay.push(b.clone());
                                    alpha_pay.len() - 1
                                });
                                Succ::Leaf(*leaf)
                            }
                        },
                    });
                }
                if options.is_empty() {
                    // No move at all: the position itself is this side's only option.
                    options.push(Succ::Node(i));
                }
                if colour == WHITE {
                    game.white.push(options);
                } else {
                    game.black.push(options);
                }
            }
        }
        Equations {
            positions,
            index,
            game,
            alpha_pay,
            beta_pay,
        }
    }

    /// Solves material `m`, whose children are all solved.
    fn build(&self, m: Material) -> Table {
        let board = self.board;
        let Equations {
            positions,
            index,
            game,
            alpha_pay,
            beta_pay,
        } = self.equations(m);
        let (alpha, beta) = rayon::join(
            || game::least_fixed_point(&game, &alpha_pay),
            || game::greatest_fixed_point(&game, &beta_pay),
        );
        // The final independent check, in the original orientation.
        assert!(game::is_fixed_point(&game, &alpha_pay, &alpha), "alpha");
        assert!(game::is_fixed_point(&game, &beta_pay, &beta), "beta");
        assert!(
            alpha.iter().zip(&beta).all(|(a, b)| a <= b),
            "alpha <= beta"
        );
        let values: Vec<(Q, Q)> = alpha.into_iter().zip(beta).collect();
        let by_fen: BTreeMap<String, (Q, Q)> = positions
            .iter()
            .zip(&values)
            .map(|(p, v)| (fen(board, p), v.clone()))
            .collect();
        assert_eq!(by_fen.len(), positions.len(), "distinct FEN keys");
        Table {
            index,
            values,
            by_fen,
        }
    }
}

/// The positions of one material and their value equations: option lists of White and Black
/// per position, leaves 0 (Black captured the king), 1 (White did) and the exits to other
/// materials, paying alpha (`alpha_pay`) or beta (`beta_pay`) of the exit.
struct Equations {
    positions: Vec<Position>,
    index: HashMap<Position, usize>,
    game: Game,
    alpha_pay: Vec<Q>,
    beta_pay: Vec<Q>,
}

/// One solved material.
struct Table {
    index: HashMap<Position, usize>,
    values: Vec<(Q, Q)>,
    by_fen: BTreeMap<String, (Q, Q)>,
}

// ---------------------------------------------------------------------------------------------
// Pieces, board, positions.

const WHITE: u8 = 0;
const BLACK: u8 = 1;
const KING: u8 = 0;
const QUEEN: u8 = 1;
const ROOK: u8 = 2;
const BISHOP: u8 = 3;
const KNIGHT: u8 = 4;
const PAWN: u8 = 5;
/// Letters of the kinds, in the order of the kind numbers (and of Syzygy names).
const LETTERS: [char; 6] = ['K', 'Q', 'R', 'B', 'N', 'P'];

/// A piece: `colour * 6 + kind`.
fn code(colour: u8, kind: u8) -> u8 {
    colour * 6 + kind
}
fn colour_of(code: u8) -> u8 {
    code / 6
}
fn kind_of(code: u8) -> u8 {
    code % 6
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Board {
    files: u8,
    ranks: u8,
}

impl Board {
    fn size(self) -> usize {
        self.files as usize * self.ranks as usize
    }
    fn file(self, sq: u8) -> i8 {
        (sq % self.files) as i8
    }
    fn rank(self, sq: u8) -> i8 {
        (sq / self.files) as i8
    }
    /// The square at (file, rank), if on the board. Squares count from a1, along rank 1.
    fn square(self, file: i8, rank: i8) -> Option<u8> {
        let inside = (0..self.files as i8).contains(&file) && (0..self.ranks as i8).contains(&rank);
        inside.then(|| rank as u8 * self.files + file as u8)
    }
    fn name(self, sq: u8) -> String {
        let file = (b'a' + self.file(sq) as u8) as char;
        format!("{file}{}", self.rank(sq) + 1)
    }
    /// The last rank of a pawn of `colour` (where it promotes).
    fn last_rank(self, colour: u8) -> i8 {
        if colour == WHITE {
            self.ranks as i8 - 1
        } else {
            0
        }
    }
    /// The rank a pawn of `colour` makes its double step from.
    fn second_rank(self, colour: u8) -> i8 {
        if colour == WHITE {
            1
        } else {
            self.ranks as i8 - 2
        }
    }
    /// Pawns of either colour stand only between their first and last ranks.
    fn pawn_may_stand(self, sq: u8) -> bool {
        (1..self.ranks as i8 - 1).contains(&self.rank(sq))
    }
}

/// The rank direction a pawn of `colour` moves in.
fn forward(colour: u8) -> i8 {
    if colour == WHITE { 1 } else { -1 }
}

/// A position: its pieces as a sorted list of (piece code, square), which makes equal sets
/// equal lists, and the square of a pawn that may be captured en passant right now.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Position {
    pieces: Vec<(u8, u8)>,
    ep: Option<u8>,
}

impl Position {
    fn grid(&self, board: Board) -> Vec<Option<u8>> {
        let mut grid = vec![None; board.size()];
        for &(c, sq) in &self.pieces {
            assert!(grid[sq as usize].is_none(), "two pieces on one square");
            grid[sq as usize] = Some(c);
        }
        grid
    }

    /// The position after the piece on `from` goes to `to` as `piece` (a promotion changes it),
    /// the piece on `captured` (if any) being removed, with en-passant state `ep`.
    fn after(&self, from: u8, to: u8, piece: u8, captured: Option<u8>, ep: Option<u8>) -> Self {
        let mut pieces: Vec<(u8, u8)> = self
            .pieces
            .iter()
            .filter(|&&(_, sq)| Some(sq) != captured)
            .map(|&(c, sq)| if sq == from { (piece, to) } else { (c, sq) })
            .collect();
        pieces.sort_unstable();
        Position { pieces, ep }
    }
}

/// Can the pawn on `sq` (just landed there by a double step) be captured en passant: it stands
/// on its landing rank (boards of at least 5 ranks), the two squares behind it are empty and an
/// enemy pawn stands beside it.
fn ep_possible(board: Board, grid: &[Option<u8>], sq: u8) -> bool {
    let Some(c) = grid[sq as usize] else {
        return false;
    };
    if kind_of(c) != PAWN || board.ranks < 5 {
        return false;
    }
    let colour = colour_of(c);
    let (f, r) = (board.file(sq), board.rank(sq));
    let dir = forward(colour);
    let empty = |rank: i8| {
        board
            .square(f, rank)
            .is_some_and(|s| grid[s as usize].is_none())
    };
    let enemy_pawn = |file: i8| {
        board
            .square(file, r)
            .is_some_and(|s| grid[s as usize] == Some(code(1 - colour, PAWN)))
    };
    r == board.second_rank(colour) + 2 * dir
        && empty(r - dir)
        && empty(r - 2 * dir)
        && (enemy_pawn(f - 1) || enemy_pawn(f + 1))
}

/// Every position of material `m`: each placement without en-passant right, and once more
/// with each pawn that may be captured en passant.
fn positions(board: Board, m: Material) -> Vec<Position> {
    let mut groups = Vec::new();
    for colour in [WHITE, BLACK] {
        for kind in 0..6 {
            let n = m.count[colour as usize][kind as usize];
            if n > 0 {
                groups.push((code(colour, kind), n));
            }
        }
    }
    let mut placements = Vec::new();
    place(
        board,
        &groups,
        0,
        &mut vec![false; board.size()],
        &mut Vec::new(),
        &mut placements,
    );
    let mut out = Vec::new();
    for mut pieces in placements {
        pieces.sort_unstable();
        let plain = Position { pieces, ep: None };
        let grid = plain.grid(board);
        for &(_, sq) in &plain.pieces {
            if ep_possible(board, &grid, sq) {
                out.push(Position {
                    pieces: plain.pieces.clone(),
                    ep: Some(sq),
                });
            }
        }
        out.push(plain);
    }
    out
}

/// Places the first group of identical pieces on increasing squares from `from` on (so a set
/// of identical pieces is placed once), then the remaining groups.
fn place(
    board: Board,
    groups: &[(u8, u8)],
    from: usize,
    occupied: &mut Vec<bool>,
    placed: &mut Vec<(u8, u8)>,
    out: &mut Vec<Vec<(u8, u8)>>,
) {
    let Some((&(piece, left), rest)) = groups.split_first() else {
        out.push(placed.clone());
        return;
    };
    if left == 0 {
        place(board, rest, 0, occupied, placed, out);
        return;
    }
    for sq in from..board.size() {
        if occupied[sq] || (kind_of(piece) == PAWN && !board.pawn_may_stand(sq as u8)) {
            continue;
        }
        occupied[sq] = true;
        placed.push((piece, sq as u8));
        let mut groups_left = groups.to_vec();
        groups_left[0].1 -= 1;
        place(board, &groups_left, sq + 1, occupied, placed, out);
        placed.pop();
        occupied[sq] = false;
    }
}

/// The FEN key of a position: "<placement> <ep>".
fn fen(board: Board, pos: &Position) -> String {
    let grid = pos.grid(board);
    let mut s = String::new();
    for rank in (0..board.ranks as i8).rev() {
        let mut empty = 0;
        for file in 0..board.files as i8 {
            let sq = board.square(file, rank).expect("on the board");
            match grid[sq as usize] {
                None => empty += 1,
                Some(c) => {
                    if empty > 0 {
                        s += &empty.to_string();
                        empty = 0;
                    }
                    let letter = LETTERS[kind_of(c) as usize];
                    s.push(if colour_of(c) == WHITE {
                        letter
                    } else {
                        letter.to_ascii_lowercase()
                    });
                }
            }
        }
        if empty > 0 {
            s += &empty.to_string();
        }
        if rank > 0 {
            s.push('/');
        }
    }
    match pos.ep {
        None => s += " -",
        Some(sq) => {
            let colour = colour_of(grid[sq as usize].expect("the pawn"));
            let skipped = board
                .square(board.file(sq), board.rank(sq) - forward(colour))
                .expect("on the board");
            s += " ";
            s += &board.name(skipped);
        }
    }
    s
}

// ---------------------------------------------------------------------------------------------
// Moves.

/// What a move leads to.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    /// The mover captured the enemy king: the game is over.
    KingCaptured,
    /// The game goes on in this position (of this or another material).
    Moved(Position),
}

const KING_STEPS: [(i8, i8); 8] = [
    (-1, -1),
    (-1, 0),
    (-1, 1),
    (0, -1),
    (0, 1),
    (1, -1),
    (1, 0),
    (1, 1),
];
const KNIGHT_JUMPS: [(i8, i8); 8] = [
    (-2, -1),
    (-2, 1),
    (-1, -2),
    (-1, 2),
    (1, -2),
    (1, 2),
    (2, -1),
    (2, 1),
];
const ROOK_LINES: [(i8, i8); 4] = [(-1, 0), (1, 0), (0, -1), (0, 1)];
const BISHOP_LINES: [(i8, i8); 4] = [(-1, -1), (-1, 1), (1, -1), (1, 1)];

/// Every pseudo-legal move of `colour` in `pos` (duplicates of one outcome may occur).
fn moves(board: Board, pos: &Position, colour: u8) -> Vec<Outcome> {
    let grid = pos.grid(board);
    let mut out = Vec::new();
    // A move (not en passant, not a double step) of the piece on `from` to `to`, becoming
    // `piece`: impossible onto an own piece, ends the game on the enemy king.
    let step = |out: &mut Vec<Outcome>, from: u8, to: u8, piece: u8| match grid[to as usize] {
        Some(t) if colour_of(t) == colour => {}
        Some(t) if kind_of(t) == KING => out.push(Outcome::KingCaptured),
        target => {
            let captured = target.map(|_| to);
            out.push(Outcome::Moved(pos.after(from, to, piece, captured, None)));
        }
    };
    for &(piece, from) in &pos.pieces {
        if colour_of(piece) != colour {
            continue;
        }
        let (f, r) = (board.file(from), board.rank(from));
        let lines: &[(i8, i8)] = match kind_of(piece) {
            QUEEN => &KING_STEPS, // the eight lines of the king's steps
            ROOK => &ROOK_LINES,
            BISHOP => &BISHOP_LINES,
            _ => &[],
        };
        for &(df, dr) in lines {
            let mut at = (f + df, r + dr);
            while let Some(to) = board.square(at.0, at.1) {
                step(&mut out, from, to, piece);
                if grid[to as usize].is_some() {
                    break;
                }
                at = (at.0 + df, at.1 + dr);
            }
        }
        let jumps: &[(i8, i8)] = match kind_of(piece) {
            KING => &KING_STEPS,
            KNIGHT => &KNIGHT_JUMPS,
            _ => &[],
        };
        for &(df, dr) in jumps {
            if let Some(to) = board.square(f + df, r + dr) {
                step(&mut out, from, to, piece);
            }
        }
        if kind_of(piece) != PAWN {
            continue;
        }
        let dir = forward(colour);
        // The pieces a pawn arriving on `to` may be: itself, or the four promotions.
        let becomes = |to: u8| -> Vec<u8> {
            if board.rank(to) == board.last_rank(colour) {
                [QUEEN, ROOK, BISHOP, KNIGHT]
                    .map(|k| code(colour, k))
                    .to_vec()
            } else {
                vec![piece]
            }
        };
        let empty = |sq: Option<u8>| sq.is_some_and(|s| grid[s as usize].is_none());
        let one = board.square(f, r + dir);
        if let Some(to) = one.filter(|&s| empty(Some(s))) {
            for p in becomes(to) {
                step(&mut out, from, to, p);
            }
            let two = board.square(f, r + 2 * dir);
            if board.ranks >= 4 && r == board.second_rank(colour) && empty(two) {
                let to = two.expect("empty square exists");
                if board.rank(to) == board.last_rank(colour) {
                    for p in becomes(to) {
                        step(&mut out, from, to, p);
                    }
                } else {
                    let mut next = pos.after(from, to, piece, None, None);
                    if ep_possible(board, &next.grid(board), to) {
                        next.ep = Some(to);
                    }
                    out.push(Outcome::Moved(next));
                }
            }
        }
        for df in [-1, 1] {
            if let Some(to) = board.square(f + df, r + dir)
                && grid[to as usize].is_some_and(|t| colour_of(t) != colour)
            {
                for p in becomes(to) {
                    step(&mut out, from, to, p);
                }
            }
        }
        // En passant: the pending right belongs to the side of the pawns beside the victim.
        if let Some(victim) = pos.ep
            && colour_of(grid[victim as usize].expect("the pawn")) != colour
            && board.rank(victim) == r
            && (board.file(victim) - f).abs() == 1
        {
            let to = board
                .square(board.file(victim), r + dir)
                .expect("the skipped square");
            assert!(grid[to as usize].is_none(), "the skipped square is empty");
            out.push(Outcome::Moved(pos.after(
                from,
                to,
                piece,
                Some(victim),
                None,
            )));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Materials.

/// A material: the number of pieces of each colour and kind (one king each).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Material {
    count: [[u8; 6]; 2],
}

impl Material {
    /// Parses a Syzygy-style name such as "KQvKR" or "KPPvK".
    fn parse(name: &str) -> Material {
        let (white, black) = name
            .split_once('v')
            .unwrap_or_else(|| panic!("material {name:?}"));
        let mut count = [[0u8; 6]; 2];
        for (colour, side) in [white, black].into_iter().enumerate() {
            let pieces = side
                .strip_prefix('K')
                .unwrap_or_else(|| panic!("material {name:?}: a side starts with its king"));
            count[colour][KING as usize] = 1;
            for ch in pieces.chars() {
                let kind = LETTERS[1..]
                    .iter()
                    .position(|&l| l == ch)
                    .unwrap_or_else(|| panic!("material {name:?}: piece {ch:?}"));
                count[colour][kind + 1] += 1;
            }
        }
        Material { count }
    }

    /// The Syzygy-style name.
    fn name(&self) -> String {
        let side = |c: usize| -> String {
            (0..6)
                .flat_map(|k| std::iter::repeat_n(LETTERS[k], self.count[c][k] as usize))
                .collect()
        };
        format!("{}v{}", side(0), side(1))
    }

    fn of(pos: &Position) -> Material {
        let mut count = [[0u8; 6]; 2];
        for &(c, _) in &pos.pieces {
            count[colour_of(c) as usize][kind_of(c) as usize] += 1;
        }
        Material { count }
    }

    /// Every material one move can lead to: a non-king piece captured, a pawn promoted, or
    /// both (a pawn promoting by a capture). Possibly more than the moves reach: harmless.
    fn children(&self) -> BTreeSet<Material> {
        let mut out = BTreeSet::new();
        let captures = |m: Material| -> Vec<Material> {
            let mut v = Vec::new();
            for victim in 0..2 {
                for kind in 1..6 {
                    if m.count[victim][kind] > 0 {
                        let mut c = m;
                        c.count[victim][kind] -= 1;
                        v.push(c);
                    }
                }
            }
            v
        };
        out.extend(captures(*self));
        for colour in 0..2 {
            if self.count[colour][PAWN as usize] == 0 {
                continue;
            }
            for kind in [QUEEN, ROOK, BISHOP, KNIGHT] {
                let mut promoted = *self;
                promoted.count[colour][PAWN as usize] -= 1;
                promoted.count[colour][kind as usize] += 1;
                out.insert(promoted);
                out.extend(
                    captures(promoted)
                        .into_iter()
                        .filter(|c| c.count[colour] == promoted.count[colour]),
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;

    fn q(n: u32, d: u32) -> Q {
        Q::new(BigUint::from(n), BigUint::from(d))
    }

    /// Parses a FEN of this module's form back into a position (for the tests).
    fn parse_fen(board: Board, fen: &str) -> Position {
        let (placement, ep) = fen.split_once(' ').expect("two fields");
        let mut pieces = Vec::new();
        for (i, row) in placement.split('/').enumerate() {
            let rank = board.ranks as i8 - 1 - i as i8;
            let mut file = 0i8;
            for ch in row.chars() {
                if let Some(d) = ch.to_digit(10) {
                    file += d as i8;
                    continue;
                }
                let kind = LETTERS
                    .iter()
                    .position(|&l| l == ch.to_ascii_uppercase())
                    .expect("a piece letter") as u8;
                let colour = if ch.is_ascii_uppercase() {
                    WHITE
                } else {
                    BLACK
                };
                pieces.push((
                    code(colour, kind),
                    board.square(file, rank).expect("square"),
                ));
                file += 1;
            }
            assert_eq!(file, board.files as i8, "row {row}");
        }
        pieces.sort_unstable();
        let ep = (ep != "-").then(|| {
            let b = ep.as_bytes();
            let skipped = board
                .square((b[0] - b'a') as i8, (b[1] - b'1') as i8)
                .expect("square");
            // The victim stands one step beyond the skipped square, in its own direction.
            let grid = Position {
                pieces: pieces.clone(),
                ep: None,
            }
            .grid(board);
            [WHITE, BLACK]
                .into_iter()
                .filter_map(|c| {
                    let sq = board.square(board.file(skipped), board.rank(skipped) + forward(c))?;
                    (grid[sq as usize] == Some(code(c, PAWN))).then_some(sq)
                })
                .find(|&sq| ep_possible(board, &grid, sq))
                .expect("a pawn to capture en passant")
        });
        Position { pieces, ep }
    }

    /// Ranks reversed and colours swapped.
    fn mirror(board: Board, pos: &Position) -> Position {
        let flip = |sq: u8| {
            board
                .square(board.file(sq), board.ranks as i8 - 1 - board.rank(sq))
                .expect("square")
        };
        let mut pieces: Vec<(u8, u8)> = pos
            .pieces
            .iter()
            .map(|&(c, sq)| (code(1 - colour_of(c), kind_of(c)), flip(sq)))
            .collect();
        pieces.sort_unstable();
        Position {
            pieces,
            ep: pos.ep.map(flip),
        }
    }

    /// KPvKP on 3x5 (with en passant), solved once for all the tests that use it.
    fn kpvkp_3x5() -> &'static BTreeMap<String, (Q, Q)> {
        static TABLE: std::sync::OnceLock<BTreeMap<String, (Q, Q)>> = std::sync::OnceLock::new();
        TABLE.get_or_init(|| solve_material(3, 5, "KPvKP"))
    }

    fn value(table: &BTreeMap<String, (Q, Q)>, fen: &str) -> (Q, Q) {
        table.get(fen).unwrap_or_else(|| panic!("no {fen}")).clone()
    }

    #[test]
    fn material_names_round_trip() {
        for name in [
            "KvK",
            "KQvK",
            "KvKQ",
            "KRvKN",
            "KQQvK",
            "KBNvK",
            "KPvKP",
            "KQRBNPvKP",
        ] {
            assert_eq!(Material::parse(name).name(), name);
        }
        let children: Vec<String> = Material::parse("KPvKP")
            .children()
            .iter()
            .map(Material::name)
            .collect();
        for c in ["KvKP", "KPvK", "KQvKP", "KNvKP", "KPvKQ", "KQvK", "KvKN"] {
            assert!(children.contains(&c.to_string()), "{c} in {children:?}");
        }
    }

    #[test]
    fn position_counts() {
        let count = |f, r, m| solve_material(f, r, m).len();
        assert_eq!(count(2, 2, "KvK"), 12);
        assert_eq!(count(3, 3, "KvK"), 72);
        assert_eq!(count(3, 3, "KQvK"), 9 * 8 * 7);
        // Two rooks are one placement, not two.
        assert_eq!(count(3, 3, "KRRvK"), 9 * 8 * 21);
        // Pawns only on the middle rank of a 3x3 board.
        assert_eq!(count(3, 3, "KPvK"), 3 * 8 * 7);
    }

    #[test]
    fn king_against_king_is_one_half() {
        // Kings next to each other: either side captures at once, (1 + 0) / 2. Kings apart:
        // either side can step next to the other king, and 1/2 everywhere solves the
        // equations with White's move always leading to capture, so alpha = beta = 1/2.
        for (f, r) in [(2, 2), (3, 3), (2, 3), (4, 4)] {
            let table = solve_material(f, r, "KvK");
            assert!(!table.is_empty());
            for (fen, v) in &table {
                assert_eq!(*v, (q(1, 2), q(1, 2)), "{f}x{r} {fen}");
            }
        }
    }

    #[test]
    fn kings_side_by_side_is_one_half_with_any_material() {
        let mut r = Reference::new(3, 4);
        for m in ["KQvK", "KRvKN", "KPvKP", "KvKB"] {
            let board = r.board;
            for (fen, v) in r.material(m) {
                let pos = parse_fen(board, fen);
                let king = |c| pos.pieces.iter().find(|p| p.0 == code(c, KING)).unwrap().1;
                let (w, b) = (king(WHITE), king(BLACK));
                let adjacent = (board.file(w) - board.file(b)).abs() <= 1
                    && (board.rank(w) - board.rank(b)).abs() <= 1;
                if adjacent {
                    assert_eq!(*v, (q(1, 2), q(1, 2)), "{m} {fen}");
                }
            }
        }
    }

    #[test]
    fn queen_in_the_centre_of_3x3() {
        // WK a1, WQ b2: the queen sees every square, so White captures the king at once.
        // Black's best is worth 1/2 from everywhere (capture the queen into KvK, or step next
        // to the white king), so the value is (1 + 1/2) / 2 = 3/4 with the kings apart, and
        // 1/2 with them side by side (Black captures).
        let table = solve_material(3, 3, "KQvK");
        for fen in [
            "k2/1Q1/K2 -",
            "1k1/1Q1/K2 -",
            "2k/1Q1/K2 -",
            "3/1Qk/K2 -",
            "3/1Q1/K1k -",
        ] {
            assert_eq!(value(&table, fen), (q(3, 4), q(3, 4)), "{fen}");
        }
        for fen in ["3/kQ1/K2 -", "3/1Q1/Kk1 -"] {
            assert_eq!(value(&table, fen), (q(1, 2), q(1, 2)), "{fen}");
        }
    }

    #[test]
    fn three_pieces_have_alpha_equal_to_beta() {
        let mut r = Reference::new(3, 4);
        for m in ["KQvK", "KRvK", "KBvK", "KNvK", "KPvK", "KvKP"] {
            for (fen, (a, b)) in r.material(m) {
                assert_eq!(a, b, "{m} {fen}");
            }
        }
    }

    #[test]
    fn colour_mirror() {
        // alpha(P) = 1 - beta(mirror P) and beta(P) = 1 - alpha(mirror P).
        let cases = [
            (3, 4, "KRvKN", "KNvKR"),
            (3, 4, "KPvK", "KvKP"),
            (3, 5, "KPvKP", "KPvKP"),
        ];
        for (f, r, m, n) in cases {
            let mut reference = Reference::new(f, r);
            let board = reference.board;
            let (a, b) = if (f, r) == (3, 5) {
                (kpvkp_3x5().clone(), kpvkp_3x5().clone())
            } else {
                (reference.material(m).clone(), reference.material(n).clone())
            };
            assert_eq!(a.len(), b.len());
            if m == "KPvKP" {
                assert!(
                    a.keys().any(|k| !k.ends_with(" -")),
                    "en-passant positions mirrored too"
                );
            }
            for (fen_p, (alpha, beta)) in &a {
                let mirrored = fen(board, &mirror(board, &parse_fen(board, fen_p)));
                let (alpha_m, beta_m) = value(&b, &mirrored);
                assert_eq!(*alpha, Q::one() - beta_m, "{m} {fen_p}");
                assert_eq!(*beta, Q::one() - alpha_m, "{m} {fen_p}");
            }
        }
    }

    #[test]
    fn fen_round_trip() {
        let board = Board { files: 3, ranks: 5 };
        for fen_s in ["3/pP1/3/k2/2K b3", "2k/3/3/1Pp/K2 c3", "k2/1p1/3/2P/K2 -"] {
            assert_eq!(fen(board, &parse_fen(board, fen_s)), fen_s);
        }
    }

    #[test]
    fn pawn_steps() {
        let board = Board { files: 3, ranks: 4 };
        // The outcomes of White's moves in which the white pawn has left `from`.
        let pawn_moves = |fen_s: &str, from: u8| -> Vec<Position> {
            moves(board, &parse_fen(board, fen_s), WHITE)
                .into_iter()
                .filter_map(|o| match o {
                    Outcome::Moved(p) if !p.pieces.contains(&(code(WHITE, PAWN), from)) => Some(p),
                    _ => None,
                })
                .collect()
        };
        // 3x4, pawn on b2: the single step to b3, and the double step, which reaches the last
        // rank and promotes (four options).
        let b2 = board.square(1, 1).unwrap();
        let b3 = board.square(1, 2).unwrap();
        let outcomes = pawn_moves("k2/3/1P1/2K -", b2);
        assert_eq!(outcomes.len(), 1 + 4);
        let still_pawn = |p: &Position| p.pieces.contains(&(code(WHITE, PAWN), b3));
        assert_eq!(outcomes.iter().filter(|p| still_pawn(p)).count(), 1);
        // Pawn on a3: a step to a4 and a capture on b4, each promoting to four pieces.
        let a3 = board.square(0, 2).unwrap();
        let outcomes = pawn_moves("1nk/P2/3/K2 -", a3);
        assert_eq!(outcomes.len(), 8);
        assert_eq!(outcomes.iter().filter(|p| p.pieces.len() == 3).count(), 4);
    }

    #[test]
    fn en_passant_on_3x5() {
        let board = Board { files: 3, ranks: 5 };
        // White's pawn has just gone b2-b4 beside Black's pawn on a4; kings on c1 and a2.
        let ep = parse_fen(board, "3/pP1/3/k2/2K b3");
        let plain = parse_fen(board, "3/pP1/3/k2/2K -");
        let before = parse_fen(board, "3/p2/3/kP1/2K -");
        // The double step creates the right.
        assert!(moves(board, &before, WHITE).contains(&Outcome::Moved(ep.clone())));
        // The capture is Black's option only with the right pending, and removes the pawn.
        let taken = parse_fen(board, "3/3/1p1/k2/2K -");
        assert!(moves(board, &ep, BLACK).contains(&Outcome::Moved(taken.clone())));
        assert!(!moves(board, &plain, BLACK).contains(&Outcome::Moved(taken)));
        assert_eq!(
            moves(board, &ep, BLACK).len(),
            moves(board, &plain, BLACK).len() + 1
        );
        // White's options are the same (every White move clears the right).
        assert_eq!(moves(board, &ep, WHITE), moves(board, &plain, WHITE));
        // Black's extra option wins the pawn that would otherwise promote next move, so the
        // right is worth something to Black: strictly lower values with it pending.
        let table = kpvkp_3x5();
        let (a_ep, b_ep) = value(table, "3/pP1/3/k2/2K b3");
        let (a, b) = value(table, "3/pP1/3/k2/2K -");
        assert!(a_ep < a && b_ep < b, "{a_ep} {a} {b_ep} {b}");
        // A placement that cannot come from a double step has no en-passant twin.
        assert!(!table.contains_key("3/1Pp/3/k2/2K c3"));
        assert!(table.contains_key("2k/3/3/1Pp/K2 c3"));
    }

    /// Value iteration `x_{n+1} = T x_n` in floating point from 0 and from 1, until it stops
    /// moving: a different method that must approach alpha from below and beta from above.
    fn value_iteration(eq: &Equations, pay: &[Q], start: f64) -> Vec<f64> {
        use num_traits::ToPrimitive;
        let f = |v: &Q| v.numer().to_f64().unwrap() / v.denom().to_f64().unwrap();
        let pay: Vec<f64> = pay.iter().map(f).collect();
        let n = eq.positions.len();
        let mut x = vec![start; n];
        for _ in 0..1_000_000 {
            let val = |s: &Succ, x: &[f64]| match *s {
                Succ::Node(j) => x[j],
                Succ::Leaf(l) => pay[l],
            };
            let next: Vec<f64> = (0..n)
                .map(|p| {
                    let w = eq.game.white[p]
                        .iter()
                        .map(|s| val(s, &x))
                        .fold(0.0, f64::max);
                    let b = eq.game.black[p]
                        .iter()
                        .map(|s| val(s, &x))
                        .fold(1.0, f64::min);
                    (w + b) / 2.0
                })
                .collect();
            let change = x
                .iter()
                .zip(&next)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0, f64::max);
            x = next;
            if change == 0.0 {
                break;
            }
        }
        x
    }

    #[test]
    fn value_iteration_agrees() {
        check_by_value_iteration(3, 4, &["KPvKP", "KRvKN", "KBvKP"]);
    }

    /// The same on 4x4, where KBvKN has positions with alpha < beta (slow: run with
    /// `--ignored`).
    #[test]
    #[ignore]
    fn value_iteration_agrees_4x4() {
        check_by_value_iteration(4, 4, &["KBvKN", "KPvKP"]);
    }

    fn check_by_value_iteration(files: u8, ranks: u8, materials: &[&str]) {
        use num_traits::ToPrimitive;
        let mut r = Reference::new(files, ranks);
        for &m in materials {
            let material = Material::parse(m);
            r.ensure(material);
            let eq = r.equations(material);
            let table = &r.tables[&material];
            let low = value_iteration(&eq, &eq.alpha_pay, 0.0);
            let high = value_iteration(&eq, &eq.beta_pay, 1.0);
            let f = |v: &Q| v.numer().to_f64().unwrap() / v.denom().to_f64().unwrap();
            for (i, (a, b)) in table.values.iter().enumerate() {
                let pos = fen(r.board, &eq.positions[i]);
                assert!((low[i] - f(a)).abs() < 1e-9, "{m} {pos}: {} {a}", low[i]);
                assert!((high[i] - f(b)).abs() < 1e-9, "{m} {pos}: {} {b}", high[i]);
            }
        }
    }

    #[test]
    fn start_of_strategy_iteration_does_not_matter() {
        // From the first option everywhere instead of the floating-point guess: more (and
        // larger) exact iterations, the same values.
        let mut r = Reference::new(3, 4);
        for m in ["KPvKP", "KQvKR", "KNvKP"] {
            let material = Material::parse(m);
            r.ensure(material);
            let eq = r.equations(material);
            let alpha =
                game::least_fixed_point_from(&eq.game, &eq.alpha_pay, game::Start::FirstOptions);
            let beta =
                game::greatest_fixed_point_from(&eq.game, &eq.beta_pay, game::Start::FirstOptions);
            let values: Vec<(Q, Q)> = alpha.into_iter().zip(beta).collect();
            assert!(values == r.tables[&material].values, "{m}");
        }
    }

    /// Times for all 36 canonical materials on 3x3, 3x4 and 4x4, with the number of positions
    /// where alpha < beta. Run with `cargo test --release -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn timing_all_36() {
        let order = ['Q', 'R', 'B', 'N', 'P'];
        let mut materials = vec!["KvK".to_string()];
        for a in order {
            materials.push(format!("K{a}vK"));
        }
        for (i, a) in order.iter().enumerate() {
            for b in &order[i..] {
                materials.push(format!("K{a}{b}vK"));
            }
        }
        for (i, a) in order.iter().enumerate() {
            for b in &order[i..] {
                materials.push(format!("K{a}vK{b}"));
            }
        }
        assert_eq!(materials.len(), 36);
        for (f, r) in [(3, 3), (3, 4), (4, 4)] {
            let start = std::time::Instant::now();
            let mut reference = Reference::new(f, r);
            for m in &materials {
                let t = std::time::Instant::now();
                let table = reference.material(m);
                let gaps = table.values().filter(|(a, b)| a < b).count();
                println!(
                    "{f}x{r} {m:7} positions {:6} alpha<beta {:5} time {:.2?}",
                    table.len(),
                    gaps,
                    t.elapsed()
                );
            }
            println!(
                "{f}x{r}: all 36 ({} materials solved) in {:.2?}",
                reference.tables.len(),
                start.elapsed()
            );
        }
    }
}
