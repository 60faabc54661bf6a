//! Board geometry: board sizes from 2x2 to 16x16, squares, and the symmetries of a board.
//!
//! A board is `F` files by `R` ranks, written `FxR` (files first). Squares are numbered
//! `rank * F + file`, so `a1` is 0 and the last square is the top-right corner.

use std::fmt;
use std::str::FromStr;

use crate::error::Error;

/// Smallest number of files or ranks a board may have.
pub const MIN_SIDE: u8 = 2;
/// Largest number of files or ranks a board may have.
pub const MAX_SIDE: u8 = 16;

/// A rectangular board of `files` x `ranks` squares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Board {
    files: u8,
    ranks: u8,
}

/// A square of some board, numbered `rank * files + file`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(pub u8);

impl Board {
    /// A board of `files` x `ranks`; both must lie in `2..=16`.
    pub fn new(files: u8, ranks: u8) -> Result<Board, Error> {
        let ok = |n: u8| (MIN_SIDE..=MAX_SIDE).contains(&n);
        if ok(files) && ok(ranks) {
            Ok(Board { files, ranks })
        } else {
            Err(Error::BoardSize(format!(
                "{files}x{ranks}: files and ranks must each be between {MIN_SIDE} and {MAX_SIDE}"
            )))
        }
    }

    /// Number of files (columns).
    pub fn files(self) -> u8 {
        self.files
    }

    /// Number of ranks (rows).
    pub fn ranks(self) -> u8 {
        self.ranks
    }

    /// Number of squares.
    pub fn len(self) -> usize {
        self.files as usize * self.ranks as usize
    }

    /// Always false: a board has at least four squares. (Here for clippy's `len` rule.)
    pub fn is_empty(self) -> bool {
        false
    }

    /// Whether files equal ranks (the diagonal symmetry exists).
    pub fn is_square(self) -> bool {
        self.files == self.ranks
    }

    /// The square at `file`, `rank` (0-based), if it is on the board.
    pub fn square(self, file: i32, rank: i32) -> Option<Square> {
        if (0..self.files as i32).contains(&file) && (0..self.ranks as i32).contains(&rank) {
            Some(Square((rank * self.files as i32 + file) as u8))
        } else {
            None
        }
    }

    /// All squares, in index order.
    pub fn squares(self) -> impl Iterator<Item = Square> {
        (0..self.len()).map(|i| Square(i as u8))
    }

    /// 0-based file of a square.
    pub fn file_of(self, sq: Square) -> i32 {
        (sq.0 % self.files) as i32
    }

    /// 0-based rank of a square.
    pub fn rank_of(self, sq: Square) -> i32 {
        (sq.0 / self.files) as i32
    }

    /// The square's name: file letter then 1-based rank, e.g. `d8`, `p16`.
    pub fn square_name(self, sq: Square) -> String {
        format!(
            "{}{}",
            (b'a' + self.file_of(sq) as u8) as char,
            self.rank_of(sq) + 1
        )
    }

    /// Parse a square name such as `d8` on this board.
    pub fn parse_square(self, name: &str) -> Option<Square> {
        let mut chars = name.chars();
        let f = chars.next()?;
        if !f.is_ascii_lowercase() {
            return None;
        }
        let rank: i32 = chars.as_str().parse().ok()?;
        self.square(f as i32 - 'a' as i32, rank - 1)
    }

    /// The symmetries of this board, identity first. With `pawns`, only the left-right
    /// mirror is kept (pawns move up the board); otherwise up-down and, on square boards,
    /// the diagonal too.
    pub fn symmetries(self, pawns: bool) -> Vec<Symmetry> {
        let mut out = Vec::new();
        for swap in [false, true] {
            for flip_rank in [false, true] {
                for flip_file in [false, true] {
                    let allowed = (!swap || self.is_square()) && (!pawns || (!swap && !flip_rank));
                    if allowed {
                        out.push(Symmetry {
                            flip_file,
                            flip_rank,
                            swap,
                        });
                    }
                }
            }
        }
        out
    }

    /// Apply a symmetry to a square of this board.
    pub fn transform(self, sym: Symmetry, sq: Square) -> Square {
        let mut f = self.file_of(sq);
        let mut r = self.rank_of(sq);
        if sym.flip_file {
            f = self.files as i32 - 1 - f;
        }
        if sym.flip_rank {
            r = self.ranks as i32 - 1 - r;
        }
        if sym.swap {
            std::mem::swap(&mut f, &mut r);
        }
        self.square(f, r)
            .expect("symmetry maps the board onto itself")
    }

    /// The colour-flip mirror of a square: ranks reversed (used for black extra pieces).
    pub fn flip_ranks(self, sq: Square) -> Square {
        self.transform(
            Symmetry {
                flip_file: false,
                flip_rank: true,
                swap: false,
            },
            sq,
        )
    }
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.files, self.ranks)
    }
}

impl FromStr for Board {
    type Err = Error;

    /// Parse `FxR`, e.g. `8x8` or `3x4` (3 files, 4 ranks).
    fn from_str(s: &str) -> Result<Board, Error> {
        let bad = || {
            Error::BoardSize(format!(
                "'{s}' is not a board size: expected FILESxRANKS, e.g. 8x8 or 3x4, each 2..=16"
            ))
        };
        let (f, r) = s.trim().split_once(['x', 'X']).ok_or_else(bad)?;
        let f: u32 = f.parse().map_err(|_| bad())?;
        let r: u32 = r.parse().map_err(|_| bad())?;
        if f > 255 || r > 255 {
            return Err(bad());
        }
        Board::new(f as u8, r as u8)
    }
}

/// One symmetry of a board: optional file flip, optional rank flip, then optional
/// transposition (only on square boards).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Symmetry {
    /// Reverse the files (left-right mirror).
    pub flip_file: bool,
    /// Reverse the ranks (up-down mirror).
    pub flip_rank: bool,
    /// Swap files and ranks (diagonal mirror).
    pub swap: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_board_sizes() {
        assert_eq!("8x8".parse::<Board>().unwrap(), Board::new(8, 8).unwrap());
        let b: Board = "3x4".parse().unwrap();
        assert_eq!((b.files(), b.ranks()), (3, 4));
        for bad in [
            "", "8", "8x", "x8", "1x8", "17x8", "8x0", "axb", "8x8x8", "-2x4", "999x9",
        ] {
            assert!(bad.parse::<Board>().is_err(), "{bad} should be rejected");
        }
    }

    #[test]
    fn square_names_round_trip() {
        for board in [Board::new(8, 8).unwrap(), Board::new(16, 3).unwrap()] {
            for sq in board.squares() {
                assert_eq!(board.parse_square(&board.square_name(sq)), Some(sq));
            }
        }
        let b = Board::new(8, 8).unwrap();
        assert_eq!(b.square_name(Square(0)), "a1");
        assert_eq!(b.square_name(Square(63)), "h8");
        assert_eq!(b.parse_square("i1"), None);
        assert_eq!(b.parse_square("a9"), None);
    }

    #[test]
    fn symmetry_groups_have_the_right_size_and_are_bijections() {
        let cases = [
            ((8, 8), false, 8),
            ((8, 8), true, 2),
            ((3, 4), false, 4),
            ((3, 4), true, 2),
        ];
        for ((f, r), pawns, n) in cases {
            let b = Board::new(f, r).unwrap();
            let syms = b.symmetries(pawns);
            assert_eq!(syms.len(), n);
            for s in syms {
                let mut image: Vec<_> = b.squares().map(|q| b.transform(s, q)).collect();
                image.sort();
                assert_eq!(image, b.squares().collect::<Vec<_>>());
            }
        }
    }
}
