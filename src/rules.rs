//! The moves of both sides under bidding-chess rules (SPEC §1) and what they lead to.
//!
//! Every pseudo-legal move is allowed: kings may step next to each other or onto attacked
//! squares. Capturing a king ends the game; capturing any other piece leads to the smaller
//! material. Pawns move toward the enemy side (White's up, Black's down), double-step from
//! their second rank when the board has a fourth rank, capture diagonally forward and
//! promote to Q, R, B or N on their last rank. A double step beside an enemy pawn gives
//! that pawn the right to capture en passant on the very next move; any other move ends
//! the right.

use crate::geometry::{Board, Square};
use crate::material::{Color, Piece, Role};
use crate::position::{Man, Position};

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

/// All of `side`'s moves in `pos`, man by man in the position's order.
pub fn moves(board: Board, pos: &Position, side: Color) -> Vec<Move> {
    let mut out = Vec::new();
    let occupied = pos.squares();
    for i in 0..pos.len() {
        let man = pos.man(i);
        if man.color != side {
            continue;
        }
        let from = man.square;
        match man.role {
            Role::King => {
                for to in king_targets(board, from) {
                    push_move(pos, i, to, None, &mut out);
                }
            }
            Role::Piece(Piece::Pawn) => pawn_moves(board, pos, i, &mut out),
            Role::Piece(p) => {
                for to in piece_targets(board, p, from, occupied) {
                    push_move(pos, i, to, None, &mut out);
                }
            }
        }
    }
    out
}

/// All of White's moves in `pos`.
pub fn white_moves(board: Board, pos: &Position) -> Vec<Move> {
    moves(board, pos, Color::White)
}

/// All of Black's moves in `pos`.
pub fn black_moves(board: Board, pos: &Position) -> Vec<Move> {
    moves(board, pos, Color::Black)
}

/// The position after man `i` goes to `to`, capturing man `taken` if any and becoming
/// `promotion` if any. No en-passant right is pending afterwards.
fn after(
    pos: &Position,
    i: usize,
    to: Square,
    taken: Option<usize>,
    promotion: Option<Piece>,
) -> Position {
    if taken.is_none() && promotion.is_none() {
        return pos.moved(i, to);
    }
    let men: Vec<Man> = (0..pos.len())
        .filter(|&k| Some(k) != taken)
        .map(|k| {
            let mut m = pos.man(k);
            if k == i {
                m.square = to;
                if let Some(p) = promotion {
                    m.role = Role::Piece(p);
                }
            }
            m
        })
        .collect();
    Position::from_men(&men, None).expect("the same kings")
}

/// Man `i` goes to `to` (promoting to `promotion`): a move unless `to` holds a man of its
/// own side; a king capture ends the game.
fn push_move(pos: &Position, i: usize, to: Square, promotion: Option<Piece>, out: &mut Vec<Move>) {
    let man = pos.man(i);
    let outcome = match pos.at(to) {
        Some(j) => {
            let target = pos.man(j);
            if target.color == man.color {
                return;
            }
            if target.role == Role::King {
                win_for(man.color)
            } else {
                Outcome::Continue(after(pos, i, to, Some(j), promotion))
            }
        }
        None => Outcome::Continue(after(pos, i, to, None, promotion)),
    };
    out.push(Move {
        from: man.square,
        to,
        promotion,
        outcome,
    });
}

/// The end of the game when `color` captures the enemy king.
fn win_for(color: Color) -> Outcome {
    match color {
        Color::White => Outcome::WhiteWins,
        Color::Black => Outcome::BlackWins,
    }
}

/// The moves of the pawn that is man `i`: one step, the double step from its second rank
/// (which gives an adjacent enemy pawn the right to take it en passant), diagonal captures,
/// promotions on its last rank, and the en-passant capture where a right is pending.
fn pawn_moves(board: Board, pos: &Position, i: usize, out: &mut Vec<Move>) {
    let man = pos.man(i);
    let (from, color) = (man.square, man.color);
    let (dir, start, last) = match color {
        Color::White => (1, 1, board.ranks() as i32 - 1),
        Color::Black => (-1, board.ranks() as i32 - 2, 0),
    };
    let empty = |s: Square| pos.at(s).is_none();
    let advance = |to: Square, out: &mut Vec<Move>| {
        if board.rank_of(to) == last {
            for p in Piece::PROMOTIONS {
                push_move(pos, i, to, Some(p), out);
            }
        } else {
            push_move(pos, i, to, None, out);
        }
    };
    if let Some(one) = step(board, from, (0, dir)).filter(|&s| empty(s)) {
        advance(one, out);
        if board.rank_of(from) == start
            && let Some(two) = step(board, one, (0, dir)).filter(|&s| empty(s))
        {
            let before = out.len();
            advance(two, out);
            // A double step beside an enemy pawn leaves it the right to take en passant.
            for m in &mut out[before..] {
                if let Outcome::Continue(next) = m.outcome
                    && m.promotion.is_none()
                    && next.ep_possible(board, two)
                {
                    m.outcome = Outcome::Continue(next.with_ep(Some(two)));
                }
            }
        }
    }
    for df in [-1, 1] {
        let Some(to) = step(board, from, (df, dir)) else {
            continue;
        };
        if pos.at(to).is_some_and(|j| pos.man(j).color != color) {
            advance(to, out);
        }
    }
    // En passant: the enemy pawn beside this one has just double-stepped.
    if let Some(victim) = pos.ep()
        && let Some(j) = pos.at(victim)
        && pos.man(j).color != color
        && board.rank_of(victim) == board.rank_of(from)
        && (board.file_of(victim) - board.file_of(from)).abs() == 1
        && let Some(to) = step(board, victim, (0, dir)).filter(|&s| empty(s))
    {
        out.push(Move {
            from,
            to,
            promotion: None,
            outcome: Outcome::Continue(after(pos, i, to, Some(j), None)),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fen;

    fn b8() -> Board {
        Board::new(8, 8).unwrap()
    }

    fn pos(text: &str) -> (Board, Position) {
        let p = fen::parse(text).unwrap();
        (p.board, p.position)
    }

    /// The moves of `side` in `text` from square `from` (all if None), in coordinate
    /// notation, sorted.
    fn names(text: &str, side: Color, from: Option<&str>) -> Vec<String> {
        let (board, p) = pos(text);
        let from = from.map(|f| board.parse_square(f).unwrap());
        let mut v: Vec<_> = moves(board, &p, side)
            .into_iter()
            .filter(|m| from.is_none_or(|f| m.from == f))
            .map(|m| m.uci(board))
            .collect();
        v.sort();
        v
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
        let (board, p) = pos("3k3R/8/3K4/8/8/8/8/8");
        let wins: Vec<_> = white_moves(board, &p)
            .into_iter()
            .filter(|m| m.outcome == Outcome::WhiteWins)
            .map(|m| m.uci(board))
            .collect();
        assert_eq!(wins, vec!["h8d8"]);
        // Black: c7, d7, e7 sit next to the white king but are legal; none captures.
        assert_eq!(black_moves(board, &p).len(), 5);
    }

    #[test]
    fn white_pawn_rules() {
        let w = Color::White;
        assert_eq!(
            names("7k/8/8/8/8/8/4P3/K7", w, Some("e2")),
            ["e2e3", "e2e4"]
        );
        assert_eq!(names("8/8/8/8/4k3/8/4P3/K7", w, Some("e2")), ["e2e3"]);
        assert!(names("8/8/8/8/8/4k3/4P3/K7", w, Some("e2")).is_empty());
        assert_eq!(
            names("8/8/8/8/8/3k4/4P3/K7", w, Some("e2")),
            ["e2d3", "e2e3", "e2e4"]
        );
        assert_eq!(
            names("8/4P3/8/8/8/8/8/K6k", w, Some("e7")),
            ["e7e8b", "e7e8n", "e7e8q", "e7e8r"]
        );
        // On a 4-rank board the double step reaches the last rank and promotes.
        assert_eq!(
            names("3k/4/1P2/K3", w, Some("b2")),
            ["b2b3", "b2b4b", "b2b4n", "b2b4q", "b2b4r"]
        );
        // No double step on a 3-rank board: b2b3 promotes.
        assert_eq!(names("3/1P1/K1k", w, Some("b2")).len(), 4);
    }

    /// Black's pawns move down: one step, the double step from rank R−1, captures down
    /// the diagonals, promotion on rank 1.
    #[test]
    fn black_pawn_rules() {
        let b = Color::Black;
        assert_eq!(
            names("K7/4p3/8/8/8/8/8/7k", b, Some("e7")),
            ["e7e5", "e7e6"]
        );
        assert_eq!(
            names("K7/8/8/8/8/8/4p3/7k", b, Some("e2")),
            ["e2e1b", "e2e1n", "e2e1q", "e2e1r"]
        );
        // A capture of a white piece, promoting on the last rank.
        assert_eq!(
            names("K7/8/8/8/8/8/4p3/3R3k", b, Some("e2")),
            [
                "e2d1b", "e2d1n", "e2d1q", "e2d1r", "e2e1b", "e2e1n", "e2e1q", "e2e1r"
            ]
        );
        let (board, p) = pos("K7/8/8/8/8/8/4p3/3R3k");
        let taken = moves(board, &p, b)
            .into_iter()
            .find(|m| m.uci(board) == "e2d1q")
            .unwrap();
        let Outcome::Continue(after) = taken.outcome else {
            panic!("the game goes on")
        };
        assert_eq!(after.material().to_string(), "KvKQ");
    }

    #[test]
    fn captures_lead_to_smaller_materials() {
        // A white rook takes the black knight; the black king takes the rook.
        let (board, p) = pos("8/8/8/8/3kn3/8/8/K3R3");
        let rook_takes = white_moves(board, &p)
            .into_iter()
            .find(|m| m.uci(board) == "e1e4")
            .unwrap();
        assert_eq!(
            rook_takes.outcome,
            Outcome::Continue(pos("8/8/8/8/3kR3/8/8/K7").1)
        );
        let (board, q) = pos("8/8/8/8/3kR3/8/8/K7");
        let king_takes = black_moves(board, &q)
            .into_iter()
            .find(|m| m.uci(board) == "d4e4")
            .unwrap();
        assert_eq!(
            king_takes.outcome,
            Outcome::Continue(pos("8/8/8/8/4k3/8/8/K7").1)
        );
        // A piece never lands on its own side's man.
        assert!(!names("8/8/8/8/8/8/8/KR5k", Color::White, None).contains(&"a1b1".into()));
    }

    #[test]
    fn black_captures() {
        let (board, p) = pos("8/8/8/3Nk3/4K3/8/8/8");
        let moves = black_moves(board, &p);
        assert!(
            moves
                .iter()
                .any(|m| m.to == p.wk() && m.outcome == Outcome::BlackWins)
        );
        let take = moves
            .iter()
            .find(|m| m.to == board.parse_square("d5").unwrap())
            .unwrap();
        assert_eq!(
            take.outcome,
            Outcome::Continue(pos("8/8/8/3k4/4K3/8/8/8").1)
        );
        assert_eq!(moves.len(), 8);
    }

    /// En passant on a 5-rank board: the double step beside an enemy pawn gives it the
    /// right; the capture is there only then; any other move ends the right.
    #[test]
    fn en_passant() {
        // White's b2-b4 lands beside Black's c4.
        let (board, q) = pos("2k2/2p2/5/1P3/K4");
        let double = white_moves(board, &q)
            .into_iter()
            .find(|m| m.uci(board) == "b2b4")
            .unwrap();
        let Outcome::Continue(after) = double.outcome else {
            panic!("the game goes on")
        };
        assert_eq!(after.ep(), board.parse_square("b4"));
        assert_eq!(fen::write(board, &after), "2k2/1Pp2/5/5/K4 - - b3");
        // Black may take en passant, onto b3, removing the b4 pawn; only with the right.
        let with = "2k2/1Pp2/5/5/K4 - - b3";
        assert!(names(with, Color::Black, Some("c4")).contains(&"c4b3".into()));
        assert!(!names("2k2/1Pp2/5/5/K4", Color::Black, Some("c4")).contains(&"c4b3".into()));
        let (board, e) = pos(with);
        let take = black_moves(board, &e)
            .into_iter()
            .find(|m| m.uci(board) == "c4b3")
            .unwrap();
        assert_eq!(take.outcome, Outcome::Continue(pos("2k2/5/1p3/5/K4").1));
        // White moving again ends the right.
        for m in white_moves(board, &e) {
            if let Outcome::Continue(n) = m.outcome {
                assert_eq!(n.ep(), None, "{}", m.uci(board));
            }
        }
        // A double step with no enemy pawn beside the pawn gives no right.
        let (board, r) = pos("2k2/4p/5/1P3/K4");
        let m = white_moves(board, &r)
            .into_iter()
            .find(|m| m.uci(board) == "b2b4")
            .unwrap();
        let Outcome::Continue(after) = m.outcome else {
            panic!("the game goes on")
        };
        assert_eq!(after.ep(), None);
    }
}
