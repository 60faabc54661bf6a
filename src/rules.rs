//! The moves of each side under bidding-chess rules (SPEC §1) and what they lead to.
//!
//! Every pseudo-legal move is allowed: kings may step next to each other or onto attacked
//! squares. Capturing a king ends the game. Pawns move up the board, double-step from the
//! second rank when the board has a fourth rank, capture only diagonally forward (the only
//! possible target is the enemy king) and promote to Q, R, B or N on the last rank.

use crate::geometry::{Board, Square};
use crate::position::{Piece, Position};

/// Where a move leads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// White captured the black king: value 1.
    WhiteWins,
    /// Black captured the white king: value 0.
    BlackWins,
    /// The game goes on in this position.
    Continue(Position),
}

/// One move: from, to, an optional promotion piece, and its outcome.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    /// Origin square.
    pub from: Square,
    /// Destination square.
    pub to: Square,
    /// The piece a pawn promotes to, if this move promotes.
    pub promotion: Option<Piece>,
    /// What the move leads to.
    pub outcome: Outcome,
}

impl Move {
    /// Coordinate notation, e.g. `h8d8` or `d7d8n`.
    pub fn uci(&self, board: Board) -> String {
        let mut s = board.square_name(self.from) + &board.square_name(self.to);
        if let Some(p) = self.promotion {
            s.push(p.letter().to_ascii_lowercase());
        }
        s
    }
}

const KING_STEPS: [(i32, i32); 8] = [
    (-1, -1),
    (0, -1),
    (1, -1),
    (-1, 0),
    (1, 0),
    (-1, 1),
    (0, 1),
    (1, 1),
];
const KNIGHT_JUMPS: [(i32, i32); 8] = [
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
];
const ROOK_DIRS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
const BISHOP_DIRS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

fn step(board: Board, sq: Square, (df, dr): (i32, i32)) -> Option<Square> {
    board.square(board.file_of(sq) + df, board.rank_of(sq) + dr)
}

/// The squares a piece on `from` attacks, stopping at the first occupied square of each ray
/// (that square included; the caller decides what standing there means). Pawns have their
/// own move rule (see [`white_moves`]); for a pawn this returns no squares.
pub fn piece_targets(board: Board, piece: Piece, from: Square, occupied: &[Square]) -> Vec<Square> {
    let (dirs, slides): (&[(i32, i32)], bool) = match piece {
        Piece::Queen => (&KING_STEPS, true),
        Piece::Rook => (&ROOK_DIRS, true),
        Piece::Bishop => (&BISHOP_DIRS, true),
        Piece::Knight => (&KNIGHT_JUMPS, false),
        Piece::Pawn => return Vec::new(),
    };
    let mut out = Vec::new();
    for &d in dirs {
        let mut cur = from;
        while let Some(next) = step(board, cur, d) {
            out.push(next);
            if !slides || occupied.contains(&next) {
                break;
            }
            cur = next;
        }
    }
    out
}

/// Squares a king on `from` can step to.
pub fn king_targets(board: Board, from: Square) -> impl Iterator<Item = Square> {
    KING_STEPS
        .into_iter()
        .filter_map(move |d| step(board, from, d))
}

/// All of White's moves in `pos`, in a fixed order: king moves, then the extra piece's.
pub fn white_moves(board: Board, pos: &Position) -> Vec<Move> {
    let mut moves = Vec::new();
    let own_piece = pos.piece.map(|(_, s)| s);
    for to in king_targets(board, pos.wk) {
        if Some(to) == own_piece {
            continue;
        }
        let outcome = if to == pos.bk {
            Outcome::WhiteWins
        } else {
            Outcome::Continue(Position { wk: to, ..*pos })
        };
        moves.push(Move {
            from: pos.wk,
            to,
            promotion: None,
            outcome,
        });
    }
    let Some((piece, from)) = pos.piece else {
        return moves;
    };
    let moved = |to: Square, p: Piece| {
        Outcome::Continue(Position {
            piece: Some((p, to)),
            ..*pos
        })
    };
    if piece == Piece::Pawn {
        pawn_moves(board, pos, from, &mut moves);
        return moves;
    }
    for to in piece_targets(board, piece, from, &[pos.wk, pos.bk]) {
        if to == pos.wk {
            continue;
        }
        let outcome = if to == pos.bk {
            Outcome::WhiteWins
        } else {
            moved(to, piece)
        };
        moves.push(Move {
            from,
            to,
            promotion: None,
            outcome,
        });
    }
    moves
}

fn pawn_moves(board: Board, pos: &Position, from: Square, moves: &mut Vec<Move>) {
    let last = board.ranks() as i32 - 1;
    let empty = |s: Square| s != pos.wk && s != pos.bk;
    let advance = |to: Square, moves: &mut Vec<Move>| {
        if board.rank_of(to) == last {
            for p in Piece::PROMOTIONS {
                let outcome = Outcome::Continue(Position {
                    piece: Some((p, to)),
                    ..*pos
                });
                moves.push(Move {
                    from,
                    to,
                    promotion: Some(p),
                    outcome,
                });
            }
        } else {
            let outcome = Outcome::Continue(Position {
                piece: Some((Piece::Pawn, to)),
                ..*pos
            });
            moves.push(Move {
                from,
                to,
                promotion: None,
                outcome,
            });
        }
    };
    if let Some(one) = step(board, from, (0, 1)).filter(|&s| empty(s)) {
        advance(one, moves);
        if board.rank_of(from) == 1
            && let Some(two) = step(board, one, (0, 1)).filter(|&s| empty(s))
        {
            advance(two, moves);
        }
    }
    for df in [-1, 1] {
        if let Some(to) = step(board, from, (df, 1)).filter(|&s| s == pos.bk) {
            moves.push(Move {
                from,
                to,
                promotion: None,
                outcome: Outcome::WhiteWins,
            });
        }
    }
}

/// All of Black's moves in `pos`: the king's steps. Stepping onto the white king captures it;
/// stepping onto the extra piece captures it and leaves bare kings.
pub fn black_moves(board: Board, pos: &Position) -> Vec<Move> {
    king_targets(board, pos.bk)
        .map(|to| {
            let outcome = if to == pos.wk {
                Outcome::BlackWins
            } else if pos.piece.map(|(_, s)| s) == Some(to) {
                Outcome::Continue(Position {
                    wk: pos.wk,
                    bk: to,
                    piece: None,
                })
            } else {
                Outcome::Continue(Position { bk: to, ..*pos })
            };
            Move {
                from: pos.bk,
                to,
                promotion: None,
                outcome,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b8() -> Board {
        Board::new(8, 8).unwrap()
    }

    fn sq(board: Board, name: &str) -> Square {
        board.parse_square(name).unwrap()
    }

    /// Our attack sets against shakmaty's, for every piece on every square of an empty 8x8
    /// board and with one blocker, mapping squares by name.
    #[test]
    fn attacks_match_shakmaty_on_8x8() {
        use shakmaty::{Bitboard, Square as SSq, attacks};
        let board = b8();
        let to_s = |s: Square| SSq::new(s.0 as u32);
        for from in board.squares() {
            let ours: Vec<_> = king_targets(board, from).map(to_s).collect();
            assert_eq!(
                ours.into_iter().collect::<Bitboard>(),
                attacks::king_attacks(to_s(from))
            );
            for blocker in board.squares().filter(|&b| b != from) {
                let occ = Bitboard::from_square(to_s(blocker));
                for (piece, theirs) in [
                    (Piece::Queen, attacks::queen_attacks(to_s(from), occ)),
                    (Piece::Rook, attacks::rook_attacks(to_s(from), occ)),
                    (Piece::Bishop, attacks::bishop_attacks(to_s(from), occ)),
                    (Piece::Knight, attacks::knight_attacks(to_s(from))),
                ] {
                    let ours: Bitboard = piece_targets(board, piece, from, &[blocker])
                        .into_iter()
                        .map(to_s)
                        .collect();
                    assert_eq!(
                        ours, theirs,
                        "{piece:?} on {} blocked at {}",
                        from.0, blocker.0
                    );
                }
            }
        }
    }

    #[test]
    fn rook_captures_king_along_rank() {
        let board = b8();
        let pos = Position {
            wk: sq(board, "d6"),
            bk: sq(board, "d8"),
            piece: Some((Piece::Rook, sq(board, "h8"))),
        };
        let wins: Vec<_> = white_moves(board, &pos)
            .into_iter()
            .filter(|m| m.outcome == Outcome::WhiteWins)
            .map(|m| m.uci(board))
            .collect();
        assert_eq!(wins, vec!["h8d8"]);
        // Black: c7, d7, e7 sit next to the white king but are legal; none captures.
        assert_eq!(black_moves(board, &pos).len(), 5);
    }

    #[test]
    fn pawn_rules() {
        let board = b8();
        let p = |wk: &str, bk: &str, pawn: &str| Position {
            wk: sq(board, wk),
            bk: sq(board, bk),
            piece: Some((Piece::Pawn, sq(board, pawn))),
        };
        let names = |pos: Position| {
            let mut v: Vec<_> = white_moves(board, &pos)
                .into_iter()
                .filter(|m| m.from == pos.piece.unwrap().1)
                .map(|m| m.uci(board))
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(p("a1", "h8", "e2")), vec!["e2e3", "e2e4"]);
        assert_eq!(names(p("a1", "e4", "e2")), vec!["e2e3"]);
        assert_eq!(names(p("a1", "e3", "e2")), Vec::<String>::new());
        assert_eq!(names(p("a1", "d3", "e2")), vec!["e2d3", "e2e3", "e2e4"]);
        assert_eq!(
            names(p("a1", "h1", "e7")),
            vec!["e7e8b", "e7e8n", "e7e8q", "e7e8r"]
        );
        assert_eq!(names(p("a1", "h1", "e3")), vec!["e3e4"]);
        // On a 4-rank board the double step reaches the last rank and promotes.
        let b4 = Board::new(4, 4).unwrap();
        let pos = Position {
            wk: sq(b4, "a1"),
            bk: sq(b4, "d4"),
            piece: Some((Piece::Pawn, sq(b4, "b2"))),
        };
        let mut v: Vec<_> = white_moves(b4, &pos)
            .into_iter()
            .filter(|m| m.from == sq(b4, "b2"))
            .map(|m| m.uci(b4))
            .collect();
        v.sort();
        assert_eq!(v, vec!["b2b3", "b2b4b", "b2b4n", "b2b4q", "b2b4r"]);
        // No double step on a 3-rank board: b2b3 promotes.
        let b3 = Board::new(3, 3).unwrap();
        let pos = Position {
            wk: sq(b3, "a1"),
            bk: sq(b3, "c1"),
            piece: Some((Piece::Pawn, sq(b3, "b2"))),
        };
        assert_eq!(
            white_moves(b3, &pos)
                .into_iter()
                .filter(|m| m.from == sq(b3, "b2"))
                .count(),
            4
        );
    }

    #[test]
    fn black_captures() {
        let board = b8();
        let pos = Position {
            wk: sq(board, "e4"),
            bk: sq(board, "e5"),
            piece: Some((Piece::Knight, sq(board, "d5"))),
        };
        let moves = black_moves(board, &pos);
        assert!(
            moves
                .iter()
                .any(|m| m.to == pos.wk && m.outcome == Outcome::BlackWins)
        );
        let take = moves.iter().find(|m| m.to == sq(board, "d5")).unwrap();
        assert_eq!(
            take.outcome,
            Outcome::Continue(Position {
                wk: pos.wk,
                bk: sq(board, "d5"),
                piece: None
            })
        );
        assert_eq!(moves.len(), 8);
    }
}
