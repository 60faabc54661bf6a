//! Value maps: for a position, the value with the black king on each square of the board and
//! everything else where it is (the heatmap of `bidtb map` and of `/api/map`).

use serde_json::json;

use super::{Tablebase, fraction};
use crate::error::Error;
use crate::fen;
use crate::geometry::{Board, Square};
use crate::value::Value;

/// The value of a position for every square of the black king.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ValueMap {
    /// The board.
    pub board: Board,
    /// The position asked about, as a FEN placement.
    pub fen: String,
    /// The material as queried (`KRvK`, `KvKN`, `KRvKN`, ...).
    pub class: String,
    /// Where the black king is in the position asked about.
    pub black_king: Square,
    /// The squares of the other pieces, with their FEN letters.
    pub pieces: Vec<(Square, char)>,
    /// Per square (indexed by [`Square`]), the value with the black king there; None where
    /// another piece stands. Where α < β (tables of format version 2) this is α.
    pub values: Vec<Option<Value>>,
    /// Per square, β where it lies above α (None elsewhere, and on every square of a
    /// board whose tables have α = β everywhere).
    pub betas: Vec<Option<Value>>,
}

impl ValueMap {
    /// The map of a FEN's position.
    pub fn of_fen(tb: &Tablebase, text: &str) -> Result<ValueMap, Error> {
        let parsed = fen::parse(text)?;
        let (board, pos) = (parsed.board, parsed.position);
        let mut values = Vec::with_capacity(board.len());
        let mut betas = Vec::with_capacity(board.len());
        let mut pieces = Vec::new();
        for s in board.squares() {
            if let Some(i) = pos.at(s).filter(|&i| i != 1) {
                let m = pos.man(i);
                pieces.push((s, m.role.fen_letter(m.color)));
                values.push(None);
                betas.push(None);
                continue;
            }
            // The black king on s; an en-passant right stays where it still can be.
            let moved = pos.moved(1, s);
            let kept = moved.with_ep(pos.ep());
            let there = if kept.validate(board).is_ok() {
                kept
            } else {
                moved
            };
            let entry = tb.entry(board, &there)?;
            values.push(Some(entry.value));
            betas.push(entry.beta);
        }
        Ok(ValueMap {
            board,
            fen: fen::write(board, &pos),
            class: pos.material().to_string(),
            black_king: pos.bk(),
            pieces,
            values,
            betas,
        })
    }

    /// The value with the black king on `s` (None where another piece stands).
    pub fn at(&self, s: Square) -> Option<&Value> {
        self.values[s.0 as usize].as_ref()
    }

    /// The FEN letter of the piece on `s` other than the black king, if any.
    pub fn piece_at(&self, s: Square) -> Option<char> {
        self.pieces.iter().find(|&&(q, _)| q == s).map(|&(_, c)| c)
    }

    /// The squares rank by rank from the top (as in a FEN), files from a.
    pub fn rows(&self) -> Vec<Vec<Square>> {
        let b = self.board;
        (0..b.ranks() as i32)
            .rev()
            .map(|r| {
                (0..b.files() as i32)
                    .map(|f| b.square(f, r).expect("on the board"))
                    .collect()
            })
            .collect()
    }

    /// The JSON of `/api/map`: `rows` holds the exact values (`"p/q"`, null where a piece
    /// stands) rank by rank from the top, files from a; `approx` the same as numbers. Where
    /// α < β on some square, `rows` holds α and `beta_rows` β (null where α = β); the key
    /// is absent otherwise.
    pub fn to_json(&self) -> serde_json::Value {
        let rows = self.rows();
        let exact: Vec<Vec<Option<String>>> = rows
            .iter()
            .map(|r| r.iter().map(|&s| self.at(s).map(fraction)).collect())
            .collect();
        let approx: Vec<Vec<Option<f64>>> = rows
            .iter()
            .map(|r| r.iter().map(|&s| self.at(s).map(Value::to_f64)).collect())
            .collect();
        let mut out = json!({
            "board": self.board.to_string(),
            "fen": self.fen,
            "class": self.class,
            "black_king": self.board.square_name(self.black_king),
            "rows": exact,
            "approx": approx,
        });
        if self.betas.iter().any(Option::is_some) {
            let betas: Vec<Vec<Option<String>>> = rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|&s| self.betas[s.0 as usize].as_ref().map(fraction))
                        .collect()
                })
                .collect();
            out["beta_rows"] = json!(betas);
        }
        out
    }
}
