//! Positions: the squares of every man of a material, and a pending en-passant right.
//!
//! A position has no side to move (SPEC §1). Its men are kept in a fixed order: the white
//! king, the black king, then the material's other men ([`Material::men`]: White's
//! strongest first, then Black's). Identical men (two white rooks) are one placement: their
//! squares are kept in increasing order, so that equal placements are equal positions.
//!
//! En passant: right after a pawn's double step beside an enemy pawn, that enemy pawn may
//! capture it en passant on the very next move (if its side makes it). Such a position is a
//! position of its own; it stores the square of the pawn that may be captured (FEN writes
//! the square it skipped).

use crate::error::Error;
use crate::geometry::{Board, Square, Symmetry};
use crate::material::{Color, MAX_MEN, Material, Piece, Role};

/// A position of some material on some board (the board is not stored: every function
/// that needs it takes it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Position {
    material: Material,
    /// The squares of the men, in the material's order; unused entries are 0.
    squares: [Square; MAX_MEN],
    /// The pawn that may be captured en passant, if a right is pending.
    ep: Option<Square>,
}

/// One man of a position: its side, its role and its square.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Man {
    /// Whose man it is.
    pub color: Color,
    /// King or piece.
    pub role: Role,
    /// Where it stands.
    pub square: Square,
}

/// The side and role of man number `i` of `material` (0: white king, 1: black king).
fn role_of(material: &Material, i: usize) -> (Color, Role) {
    match i {
        0 => (Color::White, Role::King),
        1 => (Color::Black, Role::King),
        _ => {
            let mut k = i - 2;
            for color in Color::BOTH {
                for p in Piece::ALL {
                    let n = material.count(color, p);
                    if k < n {
                        return (color, Role::Piece(p));
                    }
                    k -= n;
                }
            }
            panic!("man {i} of {material} does not exist")
        }
    }
}

impl Position {
    /// A position of `material` with the squares of its men in order (white king, black
    /// king, the other men as [`Material::men`] lists them) and a pending en-passant right
    /// (the square of the pawn that may be taken). Identical men are put in order; nothing
    /// is validated (see [`Position::validate`]).
    pub fn new(material: Material, squares: &[Square], ep: Option<Square>) -> Position {
        assert_eq!(
            squares.len(),
            material.man_count(),
            "one square per man of {material}"
        );
        let mut out = Position {
            material,
            squares: [Square(0); MAX_MEN],
            ep,
        };
        out.squares[..squares.len()].copy_from_slice(squares);
        out.normalise();
        out
    }

    /// A position from its men in any order. Errors if the men do not make exactly one
    /// king a side, or are too many.
    pub fn from_men(men: &[Man], ep: Option<Square>) -> Result<Position, Error> {
        let kings = |c: Color| {
            men.iter()
                .filter(|m| m.color == c && m.role == Role::King)
                .count()
        };
        if kings(Color::White) != 1 || kings(Color::Black) != 1 {
            return Err(Error::Position(format!(
                "needs one white king and one black king (has {} and {})",
                kings(Color::White),
                kings(Color::Black)
            )));
        }
        if men.len() > MAX_MEN {
            return Err(Error::Position(format!(
                "{} men; a position holds at most {MAX_MEN}",
                men.len()
            )));
        }
        let pieces = |c: Color| -> Vec<Piece> {
            men.iter()
                .filter(|m| m.color == c)
                .filter_map(|m| match m.role {
                    Role::Piece(p) => Some(p),
                    Role::King => None,
                })
                .collect()
        };
        let material = Material::from_pieces(&pieces(Color::White), &pieces(Color::Black));
        let mut squares = Vec::with_capacity(men.len());
        for i in 0..material.man_count() {
            let (color, role) = role_of(&material, i);
            // The k-th man of this kind in the list (identical men are sorted later).
            let earlier = (0..i)
                .filter(|&j| role_of(&material, j) == (color, role))
                .count();
            let m = men
                .iter()
                .filter(|m| m.color == color && m.role == role)
                .nth(earlier)
                .expect("counted");
            squares.push(m.square);
        }
        Ok(Position::new(material, &squares, ep))
    }

    /// Sort the squares of each run of identical men.
    fn normalise(&mut self) {
        let mut i = 2;
        for color in Color::BOTH {
            for p in Piece::ALL {
                let n = self.material.count(color, p);
                if n > 1 {
                    self.squares[i..i + n].sort_unstable();
                }
                i += n;
            }
        }
    }

    /// The material.
    pub fn material(&self) -> Material {
        self.material
    }

    /// Number of men.
    pub fn len(&self) -> usize {
        self.material.man_count()
    }

    /// Never true: a position has two kings.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The squares of the men, in order.
    pub fn squares(&self) -> &[Square] {
        &self.squares[..self.material.man_count()]
    }

    /// Man number `i`.
    pub fn man(&self, i: usize) -> Man {
        let (color, role) = role_of(&self.material, i);
        Man {
            color,
            role,
            square: self.squares[i],
        }
    }

    /// Every man, in order.
    pub fn men(&self) -> impl Iterator<Item = Man> + '_ {
        (0..self.len()).map(|i| self.man(i))
    }

    /// The king of `color`.
    pub fn king(&self, color: Color) -> Square {
        self.squares[color.index()]
    }

    /// The white king's square.
    pub fn wk(&self) -> Square {
        self.squares[0]
    }

    /// The black king's square.
    pub fn bk(&self) -> Square {
        self.squares[1]
    }

    /// The pawn that may be captured en passant, if a right is pending.
    pub fn ep(&self) -> Option<Square> {
        self.ep
    }

    /// The man standing on `sq`, by its number.
    pub fn at(&self, sq: Square) -> Option<usize> {
        self.squares().iter().position(|&s| s == sq)
    }

    /// The same men with man `i` on `to` and no en-passant right.
    pub fn moved(&self, i: usize, to: Square) -> Position {
        let mut out = *self;
        out.squares[i] = to;
        out.ep = None;
        out.normalise();
        out
    }

    /// The position without man `i` (a captured piece, never a king): the smaller material.
    pub fn without(&self, i: usize) -> Position {
        assert!(i >= 2, "a king is never removed");
        let men: Vec<Man> = (0..self.len())
            .filter(|&j| j != i)
            .map(|j| self.man(j))
            .collect();
        Position::from_men(&men, None).expect("the same kings")
    }

    /// The position with man `i` (a pawn) replaced by `piece` of the same side.
    pub fn promoted(&self, i: usize, piece: Piece) -> Position {
        let men: Vec<Man> = (0..self.len())
            .map(|j| {
                let mut m = self.man(j);
                if j == i {
                    m.role = Role::Piece(piece);
                }
                m
            })
            .collect();
        Position::from_men(&men, None).expect("same kings")
    }

    /// The same placement with a pending en-passant right on the pawn at `pawn` (or none).
    pub fn with_ep(&self, pawn: Option<Square>) -> Position {
        Position { ep: pawn, ..*self }
    }

    /// Apply a board symmetry to every man (and the en-passant pawn).
    pub fn transform(&self, board: Board, sym: Symmetry) -> Position {
        let mut out = *self;
        for s in &mut out.squares[..self.len()] {
            *s = board.transform(sym, *s);
        }
        out.ep = self.ep.map(|s| board.transform(sym, s));
        out.normalise();
        out
    }

    /// The colour mirror: ranks reversed and colours swapped. Its value is 1 − this
    /// position's value (α and β swapping roles).
    pub fn mirror(&self, board: Board) -> Position {
        let flip = |s: Square| board.flip_ranks(s);
        let men: Vec<Man> = self
            .men()
            .map(|m| Man {
                color: m.color.other(),
                role: m.role,
                square: flip(m.square),
            })
            .collect();
        Position::from_men(&men, self.ep.map(flip)).expect("kings swap with their colours")
    }

    /// The square a pawn of `color` on `square` skipped with its double step (the FEN
    /// en-passant square).
    pub fn skipped_square(board: Board, color: Color, square: Square) -> Square {
        let dr = if color == Color::White { -1 } else { 1 };
        board
            .square(board.file_of(square), board.rank_of(square) + dr)
            .expect("a double-stepped pawn has the skipped square behind it")
    }

    /// Whether the pawn on `pawn` may be taken en passant in this placement: it stands on
    /// its side's double-step rank, the two squares it came through are empty, and an enemy
    /// pawn stands beside it. Only boards of at least 5 ranks have such positions (on 4
    /// ranks the double step promotes).
    pub fn ep_possible(&self, board: Board, pawn: Square) -> bool {
        let Some(i) = self.at(pawn) else {
            return false;
        };
        let man = self.man(i);
        if man.role != Role::Piece(Piece::Pawn) || board.ranks() < 5 {
            return false;
        }
        let (landing, back) = match man.color {
            Color::White => (3, -1),
            Color::Black => (board.ranks() as i32 - 4, 1),
        };
        let (f, r) = (board.file_of(pawn), board.rank_of(pawn));
        if r != landing {
            return false;
        }
        let empty = |rank: i32| board.square(f, rank).is_some_and(|s| self.at(s).is_none());
        if !empty(r + back) || !empty(r + 2 * back) {
            return false;
        }
        [-1, 1].into_iter().any(|df| {
            board.square(f + df, r).is_some_and(|s| {
                self.at(s).is_some_and(|j| {
                    let m = self.man(j);
                    m.color != man.color && m.role == Role::Piece(Piece::Pawn)
                })
            })
        })
    }

    /// Check that the position can occur on `board`: every man on the board, on its own
    /// square; no pawn on its side's first or last rank; a pending en-passant right only
    /// where it can be (see [`Position::ep_possible`]).
    pub fn validate(&self, board: Board) -> Result<(), Error> {
        let bad = |why: String| Err(Error::Position(why));
        let on_board = |s: Square| (s.0 as usize) < board.len();
        for (i, m) in self.men().enumerate() {
            if !on_board(m.square) {
                return bad(format!("a man is off the {board} board"));
            }
            if self.squares()[..i].contains(&m.square) {
                return bad(format!(
                    "two men on one square ({})",
                    board.square_name(m.square)
                ));
            }
            if m.role == Role::Piece(Piece::Pawn) {
                let rank = board.rank_of(m.square);
                if rank == 0 || rank == board.ranks() as i32 - 1 {
                    return bad(format!(
                        "a pawn cannot stand on the first or last rank ({})",
                        board.square_name(m.square)
                    ));
                }
            }
        }
        if let Some(p) = self.ep
            && !(on_board(p) && self.ep_possible(board, p))
        {
            return bad(
                "the en-passant square is not right behind a pawn that has just \
                 double-stepped beside an enemy pawn"
                    .into(),
            );
        }
        Ok(())
    }

    /// Human description such as `WK d6, WR h8 / BK d8` (White's men, then Black's).
    pub fn describe(&self, board: Board) -> String {
        let side = |c: Color| -> String {
            self.men()
                .filter(|m| m.color == c)
                .map(|m| {
                    format!(
                        "{}{} {}",
                        c.letter().to_ascii_uppercase(),
                        m.role.fen_letter(Color::White),
                        board.square_name(m.square)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut s = format!("{} / {}", side(Color::White), side(Color::Black));
        if let Some(p) = self.ep {
            s += &format!(" (en passant {})", board.square_name(p));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(f: u8, r: u8) -> Board {
        Board::new(f, r).unwrap()
    }

    #[test]
    fn identical_men_are_one_placement() {
        let m: Material = "KRRvK".parse().unwrap();
        let p = Position::new(m, &[Square(0), Square(9), Square(7), Square(3)], None);
        let q = Position::new(m, &[Square(0), Square(9), Square(3), Square(7)], None);
        assert_eq!(p, q);
        assert_eq!(p.squares(), &[Square(0), Square(9), Square(3), Square(7)]);
    }

    #[test]
    fn mirror_swaps_colours_and_ranks() {
        let board = b(8, 8);
        let s = |n: &str| board.parse_square(n).unwrap();
        let m: Material = "KRvKN".parse().unwrap();
        let p = Position::new(m, &[s("d6"), s("d8"), s("h8"), s("a1")], None);
        let q = p.mirror(board);
        assert_eq!(q.material().to_string(), "KNvKR");
        assert_eq!(q.describe(board), "WK d1, WN a8 / BK d3, BR h1");
        assert_eq!(q.mirror(board), p);
    }

    #[test]
    fn captures_and_promotions_change_the_material() {
        let m: Material = "KPvKN".parse().unwrap();
        let p = Position::new(m, &[Square(0), Square(20), Square(11), Square(12)], None);
        assert_eq!(p.without(3).material().to_string(), "KPvK");
        assert_eq!(p.promoted(2, Piece::Queen).material().to_string(), "KQvKN");
        assert_eq!(p.without(2).material().to_string(), "KvKN");
    }

    #[test]
    fn en_passant_rights_need_their_pawns() {
        let board = b(5, 5);
        let s = |n: &str| board.parse_square(n).unwrap();
        let m: Material = "KPvKP".parse().unwrap();
        // White pawn b4 just came from b2; black pawn c4 beside it.
        let p = Position::new(m, &[s("a1"), s("e5"), s("b4"), s("c4")], Some(s("b4")));
        assert!(p.validate(board).is_ok());
        // Not beside an enemy pawn, or a square it came through occupied: no right.
        let far = Position::new(m, &[s("a1"), s("e5"), s("b4"), s("e4")], Some(s("b4")));
        assert!(far.validate(board).is_err());
        let blocked = Position::new(m, &[s("b3"), s("e5"), s("b4"), s("c4")], Some(s("b4")));
        assert!(blocked.validate(board).is_err());
        // On 4 ranks the double step promotes: no en passant at all.
        let b4 = b(5, 4);
        let q = Position::new(m, &[s("a1"), s("e5"), s("b4"), s("c4")], None);
        assert!(!q.ep_possible(b4, s("b4")));
    }
}
