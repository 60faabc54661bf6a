//! Position indexing: every valid position of each material class gets a dense index, with
//! positions that are images of each other under a board symmetry sharing one index.
//!
//! Within a class, positions are numbered in the order of their canonical raw key
//! `(wk * S + bk) * S + piece_square` (S = number of squares), the canonical form being the
//! symmetric image with the smallest key. The classes of a board are laid end to end in the
//! order of [`Material::ALL`], giving one global index over all positions of a board.

use crate::geometry::{Board, Square, Symmetry};
use crate::position::{Material, Position};

const NONE: u32 = u32::MAX;

/// The index of one material class on one board.
#[derive(Debug)]
pub struct ClassIndex {
    material: Material,
    board: Board,
    symmetries: Vec<Symmetry>,
    raw_count: usize,
    positions: Vec<Position>,
    lookup: Vec<u32>,
}

impl ClassIndex {
    /// Enumerate the class on `board`.
    pub fn new(board: Board, material: Material) -> ClassIndex {
        let symmetries = board.symmetries(material.has_pawn());
        let s = board.len();
        let key_count = if material.0.is_some() {
            s * s * s
        } else {
            s * s
        };
        let mut lookup = vec![NONE; key_count];
        let mut positions = Vec::new();
        let mut raw_count = 0;
        for key in 0..key_count {
            let pos = position_of_key(board, material, key);
            if pos.validate(board).is_err() {
                continue;
            }
            raw_count += 1;
            let canon = symmetries
                .iter()
                .map(|&sym| raw_key(board, &transform(board, sym, &pos)))
                .min()
                .expect("the identity is a symmetry");
            if canon == key {
                lookup[key] = positions.len() as u32;
                positions.push(pos);
            } else {
                lookup[key] = lookup[canon];
            }
        }
        ClassIndex {
            material,
            board,
            symmetries,
            raw_count,
            positions,
            lookup,
        }
    }

    /// The class.
    pub fn material(&self) -> Material {
        self.material
    }

    /// Number of valid positions before symmetry reduction.
    pub fn raw_count(&self) -> usize {
        self.raw_count
    }

    /// Number of indexed (canonical) positions.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether the class has no position on this board (KPvK on a 2-rank board).
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// The canonical position with local index `i`.
    pub fn position(&self, i: usize) -> Position {
        self.positions[i]
    }

    /// The local index of a valid position of this class (any symmetric image).
    pub fn index_of(&self, pos: &Position) -> Option<usize> {
        if pos.material() != self.material || pos.validate(self.board).is_err() {
            return None;
        }
        match self.lookup[raw_key(self.board, pos)] {
            NONE => None,
            i => Some(i as usize),
        }
    }

    /// The canonical raw key of local index `i` (keys increase with the index).
    pub fn key(&self, i: usize) -> usize {
        raw_key(self.board, &self.positions[i])
    }

    /// The board symmetries used for this class, identity first.
    pub fn symmetries(&self) -> &[Symmetry] {
        &self.symmetries
    }
}

/// The raw key of a position: `(wk · S + bk) · S + piece_square` with S squares, or
/// `wk · S + bk` for bare kings. Table files list each class's positions by this key.
pub fn raw_key(board: Board, pos: &Position) -> usize {
    let s = board.len();
    let k = pos.wk.0 as usize * s + pos.bk.0 as usize;
    match pos.piece {
        Some((_, sq)) => k * s + sq.0 as usize,
        None => k,
    }
}

/// The position of class `material` with raw key `key` (see [`raw_key`]); not validated.
pub fn position_of_key(board: Board, material: Material, key: usize) -> Position {
    let s = board.len();
    match material.0 {
        Some(p) => Position {
            wk: Square((key / (s * s)) as u8),
            bk: Square((key / s % s) as u8),
            piece: Some((p, Square((key % s) as u8))),
        },
        None => Position {
            wk: Square((key / s) as u8),
            bk: Square((key % s) as u8),
            piece: None,
        },
    }
}

/// The canonical key of a position: the smallest raw key over its images under the board
/// symmetries of its class. Positions that are images of each other share it.
pub fn canonical_key(board: Board, pos: &Position) -> usize {
    board
        .symmetries(pos.material().has_pawn())
        .into_iter()
        .map(|sym| raw_key(board, &transform(board, sym, pos)))
        .min()
        .expect("the identity is a symmetry")
}

/// Apply a board symmetry to every piece of a position.
pub fn transform(board: Board, sym: Symmetry, pos: &Position) -> Position {
    Position {
        wk: board.transform(sym, pos.wk),
        bk: board.transform(sym, pos.bk),
        piece: pos.piece.map(|(p, s)| (p, board.transform(sym, s))),
    }
}

/// A quick upper estimate of the number of indexed positions of a board (all classes,
/// after symmetry), for progress display and memory planning.
pub fn estimate_positions(board: Board) -> usize {
    let s = board.len();
    let pawnless = board.symmetries(false).len();
    let kk = s * (s - 1);
    let pawn_squares = board.files() as usize * (board.ranks() as usize).saturating_sub(2);
    (kk + 4 * kk * (s - 2)) / pawnless + pawn_squares * (s - 1) * (s - 2) / 2 + 64
}

/// The index of every class of one board, laid end to end.
#[derive(Debug)]
pub struct Index {
    board: Board,
    classes: Vec<ClassIndex>,
    offsets: Vec<usize>,
}

impl Index {
    /// Index every class of [`Material::ALL`] on `board`, in parallel.
    pub fn new(board: Board) -> Index {
        use rayon::prelude::*;
        let classes: Vec<ClassIndex> = Material::ALL
            .par_iter()
            .map(|&m| ClassIndex::new(board, m))
            .collect();
        let mut offsets = Vec::with_capacity(classes.len() + 1);
        let mut total = 0;
        for c in &classes {
            offsets.push(total);
            total += c.len();
        }
        offsets.push(total);
        Index {
            board,
            classes,
            offsets,
        }
    }

    /// The board.
    pub fn board(&self) -> Board {
        self.board
    }

    /// Total number of indexed positions over all classes.
    pub fn len(&self) -> usize {
        *self.offsets.last().expect("offsets end with the total")
    }

    /// Whether no position is indexed (never true: KvK always has positions).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The classes, in [`Material::ALL`] order.
    pub fn classes(&self) -> &[ClassIndex] {
        &self.classes
    }

    /// The range of global indices of class number `c`.
    pub fn class_range(&self, c: usize) -> std::ops::Range<usize> {
        self.offsets[c]..self.offsets[c + 1]
    }

    /// The class number (position in [`Material::ALL`]) of a global index.
    pub fn class_of(&self, global: usize) -> usize {
        self.offsets.partition_point(|&o| o <= global) - 1
    }

    /// The global index of a valid position (any symmetric image).
    pub fn index_of(&self, pos: &Position) -> Option<usize> {
        let c = Material::ALL.iter().position(|&m| m == pos.material())?;
        self.classes[c].index_of(pos).map(|i| i + self.offsets[c])
    }

    /// The canonical position with global index `i`.
    pub fn position(&self, i: usize) -> Position {
        let c = self.class_of(i);
        self.classes[c].position(i - self.offsets[c])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::Piece;

    #[test]
    fn raw_counts_on_8x8() {
        let idx = Index::new(Board::new(8, 8).unwrap());
        let raw: Vec<_> = idx.classes().iter().map(|c| c.raw_count()).collect();
        assert_eq!(
            raw,
            vec![
                64 * 63,
                64 * 63 * 62,
                64 * 63 * 62,
                64 * 63 * 62,
                64 * 63 * 62,
                48 * 63 * 62
            ]
        );
        // Symmetry divides pawnless classes by nearly 8 and the pawn class by nearly 2.
        let kq = &idx.classes()[1];
        assert!(kq.len() * 8 >= kq.raw_count() && kq.len() * 7 < kq.raw_count());
        let kp = &idx.classes()[5];
        assert_eq!(
            kp.len() * 2,
            kp.raw_count(),
            "no KPvK position is its own mirror on 8 files"
        );
    }

    #[test]
    fn every_symmetric_image_maps_to_the_same_index() {
        for (f, r) in [(3, 3), (4, 3), (5, 5), (2, 4)] {
            let board = Board::new(f, r).unwrap();
            let idx = Index::new(board);
            for g in 0..idx.len() {
                let pos = idx.position(g);
                let c = &idx.classes()[idx.class_of(g)];
                for &sym in c.symmetries() {
                    assert_eq!(idx.index_of(&transform(board, sym, &pos)), Some(g));
                }
            }
        }
    }

    #[test]
    fn invalid_positions_have_no_index() {
        let board = Board::new(8, 8).unwrap();
        let idx = Index::new(board);
        let s = |n: &str| board.parse_square(n).unwrap();
        let pawn_on = |sq| Position {
            wk: s("a1"),
            bk: s("h8"),
            piece: Some((Piece::Pawn, sq)),
        };
        assert_eq!(idx.index_of(&pawn_on(s("e8"))), None);
        assert_eq!(idx.index_of(&pawn_on(s("e1"))), None);
        assert!(idx.index_of(&pawn_on(s("e2"))).is_some());
        assert_eq!(
            idx.index_of(&Position {
                wk: s("a1"),
                bk: s("a1"),
                piece: None
            }),
            None
        );
    }
}
