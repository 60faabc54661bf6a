//! Positions and material classes: two kings and at most one white extra piece.
//!
//! A position has no side to move (SPEC §1). Positions with a black extra piece are handled
//! by the query side through the colour-flip mirror; the generator only sees white pieces.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;
use crate::geometry::{Board, Square};

/// The kind of the extra piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Piece {
    /// Queen.
    Queen,
    /// Rook.
    Rook,
    /// Bishop.
    Bishop,
    /// Knight.
    Knight,
    /// Pawn (moves up the board).
    Pawn,
}

impl Piece {
    /// The promotion choices, in the order moves list them.
    pub const PROMOTIONS: [Piece; 4] = [Piece::Queen, Piece::Rook, Piece::Bishop, Piece::Knight];

    /// Upper-case letter, as in `KQvK`.
    pub fn letter(self) -> char {
        match self {
            Piece::Queen => 'Q',
            Piece::Rook => 'R',
            Piece::Bishop => 'B',
            Piece::Knight => 'N',
            Piece::Pawn => 'P',
        }
    }

    /// The piece for an upper- or lower-case letter other than K.
    pub fn from_letter(c: char) -> Option<Piece> {
        match c.to_ascii_uppercase() {
            'Q' => Some(Piece::Queen),
            'R' => Some(Piece::Rook),
            'B' => Some(Piece::Bishop),
            'N' => Some(Piece::Knight),
            'P' => Some(Piece::Pawn),
            _ => None,
        }
    }
}

/// A material class: the two kings and an optional white extra piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Material(pub Option<Piece>);

impl Material {
    /// Every class the generator solves, in table order: KvK first, pawns last.
    pub const ALL: [Material; 6] = [
        Material(None),
        Material(Some(Piece::Queen)),
        Material(Some(Piece::Rook)),
        Material(Some(Piece::Bishop)),
        Material(Some(Piece::Knight)),
        Material(Some(Piece::Pawn)),
    ];

    /// Whether the class has a pawn (and so only the left-right symmetry).
    pub fn has_pawn(self) -> bool {
        self.0 == Some(Piece::Pawn)
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            None => write!(f, "KvK"),
            Some(p) => write!(f, "K{}vK", p.letter()),
        }
    }
}

impl FromStr for Material {
    type Err = Error;
    fn from_str(s: &str) -> Result<Material, Error> {
        Material::ALL
            .into_iter()
            .find(|m| m.to_string() == s)
            .ok_or_else(|| Error::Material(s.to_string()))
    }
}

/// A position: white king, black king, and an optional white extra piece with its square.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    /// The white king's square.
    pub wk: Square,
    /// The black king's square.
    pub bk: Square,
    /// The white extra piece and its square, if any.
    pub piece: Option<(Piece, Square)>,
}

impl Position {
    /// The position's material class.
    pub fn material(&self) -> Material {
        Material(self.piece.map(|(p, _)| p))
    }

    /// Check that the position can occur: squares distinct and on the board, no pawn on the
    /// first or last rank.
    pub fn validate(&self, board: Board) -> Result<(), Error> {
        let on_board = |s: Square| (s.0 as usize) < board.len();
        if !on_board(self.wk) || !on_board(self.bk) {
            return Err(Error::Position("a king is off the board".into()));
        }
        if self.wk == self.bk {
            return Err(Error::Position("both kings on one square".into()));
        }
        if let Some((piece, sq)) = self.piece {
            if !on_board(sq) {
                return Err(Error::Position("the extra piece is off the board".into()));
            }
            if sq == self.wk || sq == self.bk {
                return Err(Error::Position("two pieces on one square".into()));
            }
            let rank = board.rank_of(sq);
            if piece == Piece::Pawn && (rank == 0 || rank == board.ranks() as i32 - 1) {
                return Err(Error::Position(format!(
                    "a pawn cannot stand on the first or last rank ({})",
                    board.square_name(sq)
                )));
            }
        }
        Ok(())
    }

    /// Human description such as `WK d6, WR h8 / BK d8`.
    pub fn describe(&self, board: Board) -> String {
        let mut s = format!("WK {}", board.square_name(self.wk));
        if let Some((p, sq)) = self.piece {
            s += &format!(", W{} {}", p.letter(), board.square_name(sq));
        }
        s + &format!(" / BK {}", board.square_name(self.bk))
    }
}
