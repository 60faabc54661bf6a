//! FEN piece placement for boards of any size: ranks from the top, separated by `/`, runs of
//! empty squares as decimal numbers (so `10` on wide boards).

use crate::geometry::Board;
use crate::position::Position;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::Piece;

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
