//! FEN piece placement for boards of any size: ranks from the top, separated by `/`, runs of
//! empty squares as decimal numbers (so `10` on wide boards). Parsing reads the board size
//! from the rows and ignores anything after the placement (a position has no side to move).
//! A position with a black extra piece is answered through its colour-flip mirror (ranks
//! reversed, colours swapped; value = 1 − value of the mirror).

use crate::error::Error;
use crate::geometry::{Board, Square};
use crate::position::{Piece, Position};

/// A position read from a FEN, in the white-piece form the tables hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The board, from the FEN's rows.
    pub board: Board,
    /// The position, or its colour-flip mirror when the FEN has a black extra piece.
    pub position: Position,
    /// Whether `position` is the mirror of the FEN's position (its value is then
    /// 1 − the value of `position`, and its squares are flipped).
    pub mirrored: bool,
}

/// Parse a FEN: piece placement (ranks from the top separated by `/`), optionally followed
/// by whitespace and fields that are ignored. Exactly one white king `K`, one black king
/// `k`, and at most one more piece (`QRBNP` white or `qrbnp` black).
pub fn parse(fen: &str) -> Result<Parsed, Error> {
    let shown: String = fen.chars().take(80).collect();
    let bad = |reason: String| Error::Fen {
        fen: shown.clone(),
        reason,
    };
    let placement = fen
        .split_whitespace()
        .next()
        .ok_or_else(|| bad("empty".into()))?;
    let rows: Vec<&str> = placement.split('/').collect();
    let ranks = rows.len();
    if !(2..=16).contains(&ranks) {
        return Err(bad(format!("{ranks} ranks; a board has 2 to 16")));
    }
    // (file, rank from the bottom, piece letter) of every piece.
    let mut pieces: Vec<(usize, usize, char)> = Vec::new();
    let mut files = None;
    for (i, row) in rows.iter().enumerate() {
        let rank = ranks - 1 - i;
        let mut file = 0usize;
        let mut chars = row.chars().peekable();
        while let Some(c) = chars.next() {
            if let Some(d) = c.to_digit(10) {
                if d == 0 {
                    return Err(bad(format!(
                        "rank {}: an empty-square count starts with 0",
                        rank + 1
                    )));
                }
                let mut run = d as usize;
                while let Some(d2) = chars.peek().and_then(|c| c.to_digit(10)) {
                    run = run * 10 + d2 as usize;
                    chars.next();
                    if run > 16 {
                        break;
                    }
                }
                if run == 0 || run > 16 {
                    return Err(bad(format!("rank {}: bad empty-square count", rank + 1)));
                }
                file += run;
            } else if c == 'K' || c == 'k' || Piece::from_letter(c).is_some() {
                pieces.push((file, rank, c));
                file += 1;
            } else {
                return Err(bad(format!("unknown piece '{c}'")));
            }
            if file > 16 {
                return Err(bad(format!("rank {} is longer than 16 squares", rank + 1)));
            }
        }
        match files {
            None => files = Some(file),
            Some(f) if f != file => {
                return Err(bad(format!(
                    "rank {} has {file} squares, rank {} has {f}",
                    rank + 1,
                    ranks
                )));
            }
            _ => {}
        }
    }
    let files = files.unwrap_or(0);
    let board = Board::new(files as u8, ranks as u8).map_err(|e| bad(e.to_string()))?;
    let find = |want: char| pieces.iter().filter(|p| p.2 == want).count();
    if find('K') != 1 || find('k') != 1 {
        return Err(bad(format!(
            "needs one white king and one black king (has {} and {})",
            find('K'),
            find('k')
        )));
    }
    if pieces.len() > 3 {
        return Err(bad(format!(
            "{} pieces; the tables hold two kings and at most one more",
            pieces.len()
        )));
    }
    let sq = |p: &(usize, usize, char)| {
        board
            .square(p.0 as i32, p.1 as i32)
            .expect("inside the board")
    };
    let at = |want: char| sq(pieces.iter().find(|p| p.2 == want).expect("counted"));
    let extra = pieces.iter().find(|p| p.2 != 'K' && p.2 != 'k');
    let (position, mirrored) = match extra {
        Some(p) if p.2.is_ascii_lowercase() => {
            // Black extra piece: flip ranks and swap colours.
            let piece = Piece::from_letter(p.2).expect("checked above");
            let flip = |s: Square| board.flip_ranks(s);
            (
                Position {
                    wk: flip(at('k')),
                    bk: flip(at('K')),
                    piece: Some((piece, flip(sq(p)))),
                },
                true,
            )
        }
        Some(p) => (
            Position {
                wk: at('K'),
                bk: at('k'),
                piece: Some((Piece::from_letter(p.2).expect("checked"), sq(p))),
            },
            false,
        ),
        None => (
            Position {
                wk: at('K'),
                bk: at('k'),
                piece: None,
            },
            false,
        ),
    };
    position.validate(board).map_err(|e| bad(e.to_string()))?;
    Ok(Parsed {
        board,
        position,
        mirrored,
    })
}

/// The piece placement of `pos`, e.g. `3k3R/8/3K4/8/8/8/8/8` for WK d6, WR h8, BK d8.
pub fn placement(board: Board, pos: &Position) -> String {
    let mut rows = Vec::with_capacity(board.ranks() as usize);
    for rank in (0..board.ranks() as i32).rev() {
        let mut row = String::new();
        let mut empty = 0;
        for file in 0..board.files() as i32 {
            let sq = board.square(file, rank).expect("on the board");
            let piece = if sq == pos.wk {
                Some('K')
            } else if sq == pos.bk {
                Some('k')
            } else {
                pos.piece.filter(|&(_, s)| s == sq).map(|(p, _)| p.letter())
            };
            match piece {
                Some(c) => {
                    if empty > 0 {
                        row += &empty.to_string();
                        empty = 0;
                    }
                    row.push(c);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            row += &empty.to_string();
        }
        rows.push(row);
    }
    rows.join("/")
}

/// The placement of the position a parse result stands for: `pos` itself, or, when
/// `mirrored`, its colour-flip mirror (black extra piece in lower case). Writing back what
/// [`parse`] read gives the input's placement.
pub fn write(board: Board, pos: &Position, mirrored: bool) -> String {
    if !mirrored {
        return placement(board, pos);
    }
    let flip = |s| board.flip_ranks(s);
    let real = Position {
        wk: flip(pos.bk),
        bk: flip(pos.wk),
        piece: pos.piece.map(|(q, s)| (q, flip(s))),
    };
    placement(board, &real)
        .chars()
        .map(|c| match c {
            'K' | 'k' => c,
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_round_trips() {
        let p = parse("3k3R/8/3K4/8/8/8/8/8 w - - 0 1").unwrap();
        assert_eq!(p.board, Board::new(8, 8).unwrap());
        assert!(!p.mirrored);
        assert_eq!(p.position.describe(p.board), "WK d6, WR h8 / BK d8");
        assert_eq!(placement(p.board, &p.position), "3k3R/8/3K4/8/8/8/8/8");
        let wide = parse("11k/K11").unwrap();
        assert_eq!((wide.board.files(), wide.board.ranks()), (12, 2));
        let big = parse("16/16/16/16/16/16/16/16/16/16/16/16/16/16/k15/K15").unwrap();
        assert_eq!((big.board.files(), big.board.ranks()), (16, 16));
        assert_eq!(parse("k2/3/K2").unwrap().board, Board::new(3, 3).unwrap());
    }

    #[test]
    fn black_pieces_are_mirrored() {
        // Black rook on a1, black king on d3, white king on d1 (8x8) mirrors to a white rook
        // on a8, white king on d6, black king on d8.
        let p = parse("8/8/8/8/8/3k4/8/r2K4").unwrap();
        assert!(p.mirrored);
        assert_eq!(p.position.describe(p.board), "WK d6, WR a8 / BK d8");
        // A black pawn on rank 7 moves down: its mirror is a white pawn on rank 2.
        let p = parse("8/4p3/8/8/8/8/K7/7k").unwrap();
        assert_eq!(p.position.describe(p.board), "WK h8, WP e2 / BK a7");
    }

    #[test]
    fn rejects_bad_fens_with_reasons() {
        for (fen, why) in [
            ("", "empty"),
            ("8/8/8/8/8/8/8", "king"),
            ("k7", "ranks"),
            ("k7/8/8/8/8/8/8/K6", "squares"),
            ("k7/8/8/8/8/8/8/K8", "squares"),
            ("k6x/8/8/8/8/8/8/K7", "unknown piece"),
            ("8/8/8/8/8/8/8/K7", "king"),
            ("kk6/8/8/8/8/8/8/K7", "king"),
            ("kQR5/8/8/8/8/8/8/K7", "pieces"),
            ("kP6/8/8/8/8/8/8/K7", "pawn"),
            ("k7/8/8/8/8/8/8/K6p", "pawn"),
            ("k/K", "board"),
            ("k17/K17", "count"),
            ("k9p6/K15", "longer"),
            ("k0/K0", "count"),
            ("k01/K2", "starts with 0"),
            ("k99999999999999999999/K", "count"),
            ("k/K/1/1/1/1/1/1/1/1/1/1/1/1/1/1/1", "ranks"),
        ] {
            let err = parse(fen).unwrap_err().to_string();
            assert!(err.contains(why), "{fen}: {err}");
        }
    }

    proptest::proptest! {
        /// Arbitrary strings: an error or a valid position, never a panic.
        #[test]
        fn never_panics_on_arbitrary_text(s in "\\PC{0,60}") {
            if let Ok(p) = parse(&s) {
                proptest::prop_assert!(p.position.validate(p.board).is_ok());
            }
        }

        /// Strings over the FEN alphabet hit the parser's deeper paths.
        #[test]
        fn never_panics_on_fen_like_text(s in "[kKqQrRbBnNpP0-9/ ]{0,80}") {
            if let Ok(p) = parse(&s) {
                proptest::prop_assert!(p.position.validate(p.board).is_ok());
                // What parses prints back to a placement that parses to the same position.
                let again = parse(&placement(p.board, &p.position)).unwrap();
                proptest::prop_assert_eq!(again.position, p.position);
            }
        }
    }

    #[test]
    fn prints_placements() {
        let b = Board::new(8, 8).unwrap();
        let s = |n: &str| b.parse_square(n).unwrap();
        let pos = Position {
            wk: s("d6"),
            bk: s("d8"),
            piece: Some((Piece::Rook, s("h8"))),
        };
        assert_eq!(placement(b, &pos), "3k3R/8/3K4/8/8/8/8/8");
        let wide = Board::new(12, 2).unwrap();
        let s = |n: &str| wide.parse_square(n).unwrap();
        let pos = Position {
            wk: s("a1"),
            bk: s("l2"),
            piece: None,
        };
        assert_eq!(placement(wide, &pos), "11k/K11");
    }
}
