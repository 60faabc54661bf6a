//! FEN for boards of any size and any material: the piece placement (ranks from the top,
//! separated by `/`, runs of empty squares as decimal numbers, so `10` on wide boards),
//! then optional fields. The side to move and castling fields are accepted and ignored (a
//! position has no side to move); the fourth field, the en-passant square, is read: it
//! must name the square a pawn has just skipped with a double step (the pawn on the square
//! beyond it, the square it came from empty). Where an enemy pawn stands beside that pawn,
//! the right to take it en passant is part of the position; elsewhere the field changes
//! nothing.
//!
//! [`write()`] prints a position back: its placement, and ` - - <square>` after it when an
//! en-passant right is pending.

use crate::error::Error;
use crate::geometry::{Board, MAX_SIDE, MIN_SIDE, Square};
use crate::material::{Color, Piece, Role};
use crate::position::{Man, Position};

/// A position read from a FEN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parsed {
    /// The board, from the FEN's rows.
    pub board: Board,
    /// The position, validated.
    pub position: Position,
}

/// Parse a FEN: piece placement (ranks from the top separated by `/`), optionally followed
/// by whitespace and further fields (see the module comment). Exactly one white king `K`
/// and one black king `k`; other men `QRBNP` (White) and `qrbnp` (Black).
pub fn parse(fen: &str) -> Result<Parsed, Error> {
    let shown: String = fen.chars().take(80).collect();
    let bad = |reason: String| Error::Fen {
        fen: shown.clone(),
        reason,
    };
    let mut fields = fen.split_whitespace();
    let placement = fields.next().ok_or_else(|| bad("empty".into()))?;
    let ep_field = fields.nth(2);
    let (board, men) = read_placement(placement).map_err(bad)?;
    let position = Position::from_men(&men, None).map_err(|e| bad(reason_of(e)))?;
    position.validate(board).map_err(|e| bad(reason_of(e)))?;
    let position = match ep_field {
        None | Some("-") => position,
        Some(field) => {
            let pawn = en_passant_pawn(board, &position, field).map_err(bad)?;
            if position.ep_possible(board, pawn) {
                position.with_ep(Some(pawn))
            } else {
                position
            }
        }
    };
    Ok(Parsed { board, position })
}

/// The reason inside a position error, for a FEN error that names the FEN.
fn reason_of(e: Error) -> String {
    match e {
        Error::Position(why) => why,
        other => other.to_string(),
    }
}

/// The board and the men of a placement.
fn read_placement(placement: &str) -> Result<(Board, Vec<Man>), String> {
    let rows: Vec<&str> = placement.split('/').collect();
    let ranks = rows.len();
    if !(MIN_SIDE as usize..=MAX_SIDE as usize).contains(&ranks) {
        return Err(format!(
            "{ranks} ranks; a board has {MIN_SIDE} to {MAX_SIDE}"
        ));
    }
    // (file, rank from the bottom, letter) of every man.
    let mut found: Vec<(usize, usize, char)> = Vec::new();
    let mut files = None;
    for (i, row) in rows.iter().enumerate() {
        let rank = ranks - 1 - i;
        let mut file = 0usize;
        let mut chars = row.chars().peekable();
        while let Some(c) = chars.next() {
            if let Some(d) = c.to_digit(10) {
                if d == 0 {
                    return Err(format!(
                        "rank {}: an empty-square count starts with 0",
                        rank + 1
                    ));
                }
                let mut run = d as usize;
                while let Some(d2) = chars.peek().and_then(|c| c.to_digit(10)) {
                    run = run * 10 + d2 as usize;
                    chars.next();
                    if run > MAX_SIDE as usize {
                        break;
                    }
                }
                if run > MAX_SIDE as usize {
                    return Err(format!("rank {}: bad empty-square count", rank + 1));
                }
                file += run;
            } else if c == 'K' || c == 'k' || Piece::from_letter(c).is_some() {
                found.push((file, rank, c));
                file += 1;
            } else {
                return Err(format!("unknown piece '{c}'"));
            }
            if file > MAX_SIDE as usize {
                return Err(format!(
                    "rank {} is longer than {MAX_SIDE} squares",
                    rank + 1
                ));
            }
        }
        match files {
            None => files = Some(file),
            Some(f) if f != file => {
                return Err(format!(
                    "rank {} has {file} squares, rank {} has {f}",
                    rank + 1,
                    ranks
                ));
            }
            _ => {}
        }
    }
    let board = Board::new(files.unwrap_or(0) as u8, ranks as u8).map_err(|e| e.to_string())?;
    let men = found
        .into_iter()
        .map(|(f, r, c)| Man {
            color: if c.is_ascii_uppercase() {
                Color::White
            } else {
                Color::Black
            },
            role: Piece::from_letter(c).map_or(Role::King, Role::Piece),
            square: board.square(f as i32, r as i32).expect("inside the board"),
        })
        .collect();
    Ok((board, men))
}

/// The pawn an en-passant field points at: the pawn that skipped the named square with a
/// double step from its second rank (standing beyond it, its origin square empty).
fn en_passant_pawn(board: Board, pos: &Position, field: &str) -> Result<Square, String> {
    let square = board
        .parse_square(field)
        .ok_or_else(|| format!("en-passant field '{field}' is not a square of {board}"))?;
    let (f, r) = (board.file_of(square), board.rank_of(square));
    let pawn_of = |color: Color| -> Option<Square> {
        let (beyond, origin, skipped_rank) = match color {
            Color::White => (r + 1, r - 1, 2),
            Color::Black => (r - 1, r + 1, board.ranks() as i32 - 3),
        };
        if r != skipped_rank || board.ranks() < 5 || pos.at(square).is_some() {
            return None;
        }
        let pawn = board.square(f, beyond)?;
        let origin = board.square(f, origin)?;
        let man = pos.man(pos.at(pawn)?);
        (man.color == color && man.role == Role::Piece(Piece::Pawn) && pos.at(origin).is_none())
            .then_some(pawn)
    };
    match (pawn_of(Color::White), pawn_of(Color::Black)) {
        (Some(p), None) | (None, Some(p)) => Ok(p),
        (Some(_), Some(_)) => Err(format!(
            "en-passant field '{field}' could be either side's double step"
        )),
        (None, None) => Err(format!(
            "en-passant field '{field}': no pawn has just double-stepped past that square"
        )),
    }
}

/// The piece placement of `pos`, e.g. `3k3R/8/3K4/8/8/8/8/8` for WK d6, WR h8, BK d8.
pub fn placement(board: Board, pos: &Position) -> String {
    let mut rows = Vec::with_capacity(board.ranks() as usize);
    for rank in (0..board.ranks() as i32).rev() {
        let mut row = String::new();
        let mut empty = 0;
        for file in 0..board.files() as i32 {
            let sq = board.square(file, rank).expect("on the board");
            match pos.at(sq).map(|i| pos.man(i)) {
                Some(m) => {
                    if empty > 0 {
                        row += &empty.to_string();
                        empty = 0;
                    }
                    row.push(m.role.fen_letter(m.color));
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

/// The FEN of `pos`: its placement, followed by ` - - <square>` when an en-passant right is
/// pending (the square the pawn skipped). [`parse`] reads it back to the same position.
pub fn write(board: Board, pos: &Position) -> String {
    let mut out = placement(board, pos);
    if let Some(p) = pos.ep() {
        let color = pos.man(pos.at(p).expect("the pawn stands there")).color;
        out += " - - ";
        out += &board.square_name(Position::skipped_square(board, color, p));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_round_trips() {
        let p = parse("3k3R/8/3K4/8/8/8/8/8 w - - 0 1").unwrap();
        assert_eq!(p.board, Board::new(8, 8).unwrap());
        assert_eq!(p.position.describe(p.board), "WK d6, WR h8 / BK d8");
        assert_eq!(placement(p.board, &p.position), "3k3R/8/3K4/8/8/8/8/8");
        let wide = parse("11k/K11").unwrap();
        assert_eq!((wide.board.files(), wide.board.ranks()), (12, 2));
        let big = parse("16/16/16/16/16/16/16/16/16/16/16/16/16/16/k15/K15").unwrap();
        assert_eq!((big.board.files(), big.board.ranks()), (16, 16));
        assert_eq!(parse("k2/3/K2").unwrap().board, Board::new(3, 3).unwrap());
        let four = parse("3k3R/8/3K4/8/8/2n5/8/8").unwrap();
        assert_eq!(four.position.material().to_string(), "KRvKN");
        assert_eq!(write(four.board, &four.position), "3k3R/8/3K4/8/8/2n5/8/8");
    }

    #[test]
    fn black_pieces_stand_as_given() {
        let p = parse("8/8/8/8/8/3k4/8/r2K4").unwrap();
        assert_eq!(p.position.material().to_string(), "KvKR");
        assert_eq!(p.position.describe(p.board), "WK d1 / BK d3, BR a1");
    }

    #[test]
    fn en_passant_fields() {
        // White pawn b4 has just come from b2; a black pawn on c4 may take it.
        let p = parse("2k2/1Pp2/5/5/K4 w - b3").unwrap();
        let b = p.board;
        assert_eq!(p.position.ep(), b.parse_square("b4"));
        assert_eq!(write(b, &p.position), "2k2/1Pp2/5/5/K4 - - b3");
        assert_eq!(parse(&write(b, &p.position)).unwrap(), p);
        // No enemy pawn beside it: the field is consistent but gives no right.
        let q = parse("2k2/1P3/4p/5/K4 w - b3").unwrap();
        assert_eq!(q.position.ep(), None);
        // Black's double step c4-c2 on five ranks, beside a white pawn on b2.
        let r = parse("2k2/5/5/1Pp2/K4 w - c3").unwrap();
        assert_eq!(r.position.ep(), r.board.parse_square("c2"));
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
            ("KK6/8/8/8/8/8/8/k7", "king"),
            ("kP6/8/8/8/8/8/8/K7", "pawn"),
            ("k7/8/8/8/8/8/8/K6p", "pawn"),
            ("k7/8/8/8/8/8/8/K6P", "pawn"),
            ("k/K", "board"),
            ("k17/K17", "count"),
            ("k9p6/K15", "longer"),
            ("k0/K0", "count"),
            ("k01/K2", "starts with 0"),
            ("k99999999999999999999/K", "count"),
            ("k/K/1/1/1/1/1/1/1/1/1/1/1/1/1/1/1", "ranks"),
            ("k7/8/8/8/8/8/8/K7 w - e3", "no pawn"),
            ("k7/8/8/8/4P3/8/8/K7 w - e9", "not a square"),
            ("k7/8/8/8/4P3/8/4Q3/K7 w - e3", "no pawn"),
            ("qrbnqrbn/QRBNQRBN/8/8/8/8/8/K6k", "men"),
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
                // What parses prints back to a FEN that parses to the same position.
                let again = parse(&write(p.board, &p.position)).unwrap();
                proptest::prop_assert_eq!(again.position, p.position);
            }
        }
    }

    #[test]
    fn prints_placements() {
        let b = Board::new(8, 8).unwrap();
        let s = |n: &str| b.parse_square(n).unwrap();
        let pos = Position::new("KRvK".parse().unwrap(), &[s("d6"), s("d8"), s("h8")], None);
        assert_eq!(placement(b, &pos), "3k3R/8/3K4/8/8/8/8/8");
        let wide = Board::new(12, 2).unwrap();
        let s = |n: &str| wide.parse_square(n).unwrap();
        let pos = Position::new(crate::material::Material::KVK, &[s("a1"), s("l2")], None);
        assert_eq!(placement(wide, &pos), "11k/K11");
    }
}
