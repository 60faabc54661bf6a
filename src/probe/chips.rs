//! The chip game at one position (docs/src/guide/chips.md): with given holdings, who wins, the bid to
//! make, and what to do with a bid won: the move, or handing the move over. Read from the
//! chip files of the position and of the positions its moves lead to.

use serde_json::json;

use super::Tablebase;
use crate::chips::{Side, Thresholds, Total, winning_bid};
use crate::error::Error;
use crate::geometry::Board;
use crate::material::Color;
use crate::position::Position;
use crate::rules::{self, Move, Outcome};

/// One move with the chip thresholds of the position after it (White's holdings; a king
/// capture by White: win 0, by Black: none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChipMove {
    /// Coordinate notation.
    pub uci: String,
    /// The thresholds after the move.
    pub after: Thresholds,
}

/// Who wins with the holdings given, playing well.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChipOutcome {
    /// White forces a king capture.
    WhiteWins,
    /// Black does.
    BlackWins,
    /// Neither can force one: each can keep the other from winning.
    Draw,
}

impl ChipOutcome {
    /// The side that wins, if one does.
    pub fn winner(self) -> Option<Color> {
        match self {
            ChipOutcome::WhiteWins => Some(Color::White),
            ChipOutcome::BlackWins => Some(Color::Black),
            ChipOutcome::Draw => None,
        }
    }

    /// `White wins by force`, `Black wins by force` or `neither side can force a capture`.
    pub fn describe(self) -> &'static str {
        match self {
            ChipOutcome::WhiteWins => "White wins by force",
            ChipOutcome::BlackWins => "Black wins by force",
            ChipOutcome::Draw => "neither side can force a capture",
        }
    }
}

/// What a side should do at a bid: bid this much, and if the bid is won, make this move or
/// hand the move over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BidAdvice {
    /// The side.
    pub side: Color,
    /// The bid, as a holding index (2 · chips, plus 1 with the marker).
    pub bid: u32,
    /// The move to make once the bid is won, or None: let the opponent move.
    pub then: Option<String>,
}

/// The chip game at a position with given holdings.
#[derive(Clone, Debug)]
pub struct ChipAdvice {
    /// The chip total and its holdings.
    pub total: Total,
    /// White's holding (2w + m).
    pub holding: u32,
    /// The position's thresholds.
    pub thresholds: Thresholds,
    /// Who wins.
    pub outcome: ChipOutcome,
    /// White's moves and Black's, with the thresholds after them.
    pub white: Vec<ChipMove>,
    /// Black's moves.
    pub black: Vec<ChipMove>,
    /// The winning side's bid and plan; in a draw, each side's bid that keeps it safe.
    pub advice: Vec<BidAdvice>,
}

impl Tablebase {
    /// The chip game at `pos` with White holding `white` chips and Black `black`, the
    /// marker with `marker`.
    pub fn chip_advice(
        &self,
        board: Board,
        pos: &Position,
        white: u32,
        black: u32,
        marker: Color,
    ) -> Result<ChipAdvice, Error> {
        let k = white + black;
        if !(1..=crate::chips::MAX_TOTAL).contains(&k) {
            return Err(Error::Usage(format!(
                "{k} chips in all: give 1 to {}",
                crate::chips::MAX_TOTAL
            )));
        }
        let total = Total::new_lean(k);
        let holding = 2 * white + u32::from(marker == Color::White);
        let thresholds = self.chip_thresholds(board, pos, k)?;
        let after = |m: &Move| -> Result<ChipMove, Error> {
            let after = self.chips_after(board, &m.outcome, &total)?;
            Ok(ChipMove {
                uci: m.uci(board),
                after,
            })
        };
        let list = |moves: Vec<Move>| moves.iter().map(after).collect::<Result<Vec<_>, _>>();
        // A side without a move keeps the position.
        let or_stay = |mut l: Vec<ChipMove>| {
            if l.is_empty() {
                l.push(ChipMove {
                    uci: "-".into(),
                    after: thresholds,
                });
            }
            l
        };
        let mut white_moves = or_stay(list(rules::white_moves(board, pos))?);
        let mut black_moves = or_stay(list(rules::black_moves(board, pos))?);
        white_moves.sort_by_key(|m| (m.after.win, m.after.not_lose));
        black_moves.sort_by_key(|m| {
            (
                std::cmp::Reverse(m.after.not_lose),
                std::cmp::Reverse(m.after.win),
            )
        });
        let outcome = if holding >= thresholds.win {
            ChipOutcome::WhiteWins
        } else if holding < thresholds.not_lose {
            ChipOutcome::BlackWins
        } else {
            ChipOutcome::Draw
        };
        // A side's plan from thresholds seen from that side (its own holdings): `own(m)` of
        // its moves, of the opponent's moves.
        let plan = |side: Color,
                    own_h: u32,
                    mine: &[ChipMove],
                    theirs: &[ChipMove],
                    f: &dyn Fn(&Thresholds) -> u32| {
            let (best, a_w) = mine
                .iter()
                .map(|m| (m, f(&m.after)))
                .min_by_key(|&(_, t)| t)
                .expect("a move or the position kept");
            let a_b = theirs.iter().map(|m| f(&m.after)).max().expect("a move");
            let (lo, hi) = (a_w.min(a_b), a_w.max(a_b));
            winning_bid(k, own_h, lo, hi).map(|bid| BidAdvice {
                side,
                bid,
                then: (a_w <= own_h - bid && best.uci != "-").then(|| best.uci.clone()),
            })
        };
        let black_h = 2 * k + 1 - holding;
        let white_win = |t: &Thresholds| t.win_of(&total, Side::White);
        let black_win = |t: &Thresholds| t.win_of(&total, Side::Black);
        // Not losing, each side in its own holdings.
        let white_safe = |t: &Thresholds| t.not_lose_of(&total, Side::White);
        let black_safe = |t: &Thresholds| t.not_lose_of(&total, Side::Black);
        let advice: Vec<BidAdvice> = match outcome {
            ChipOutcome::WhiteWins => plan(
                Color::White,
                holding,
                &white_moves,
                &black_moves,
                &white_win,
            )
            .into_iter()
            .collect(),
            ChipOutcome::BlackWins => plan(
                Color::Black,
                black_h,
                &black_moves,
                &white_moves,
                &black_win,
            )
            .into_iter()
            .collect(),
            ChipOutcome::Draw => [
                plan(
                    Color::White,
                    holding,
                    &white_moves,
                    &black_moves,
                    &white_safe,
                ),
                plan(
                    Color::Black,
                    black_h,
                    &black_moves,
                    &white_moves,
                    &black_safe,
                ),
            ]
            .into_iter()
            .flatten()
            .collect(),
        };
        Ok(ChipAdvice {
            total,
            holding,
            thresholds,
            outcome,
            white: white_moves,
            black: black_moves,
            advice,
        })
    }
}

impl Tablebase {
    /// The chip thresholds after a move's outcome: a king capture's, or the position's.
    pub fn chips_after(
        &self,
        board: Board,
        outcome: &Outcome,
        total: &Total,
    ) -> Result<Thresholds, Error> {
        match outcome {
            Outcome::WhiteWins => Ok(Thresholds::WHITE_CAPTURED),
            Outcome::BlackWins => Ok(Thresholds::black_captured(total)),
            Outcome::Continue(p) => self.chip_thresholds(board, p, total.chips()),
        }
    }
}

impl ChipAdvice {
    /// A holding or bid as people write it (`12`, `12*`).
    pub fn show(&self, h: u32) -> String {
        self.total.show(h)
    }

    /// The advice as JSON (what `bidtb query --json --chips` adds under "chips").
    pub fn to_json(&self) -> serde_json::Value {
        let side = |c: Color| if c == Color::White { "white" } else { "black" };
        let k = self.total.chips();
        let holding = |h: u32| json!({"chips": h / 2, "marker": h % 2 == 1, "text": self.show(h)});
        let moves = |l: &[ChipMove]| {
            l.iter()
                .map(|m| json!({"move": m.uci, "win": self.show(m.after.win), "not_lose": self.show(m.after.not_lose)}))
                .collect::<Vec<_>>()
        };
        json!({
            "total": k,
            "white": holding(self.holding),
            "black": holding(2 * k + 1 - self.holding),
            "win": self.show(self.thresholds.win),
            "not_lose": self.show(self.thresholds.not_lose),
            "outcome": match self.outcome {
                ChipOutcome::WhiteWins => "white wins",
                ChipOutcome::BlackWins => "black wins",
                ChipOutcome::Draw => "draw",
            },
            "advice": self.advice.iter().map(|a| json!({
                "side": side(a.side),
                "bid": self.show(a.bid),
                "then": a.then.clone().map_or_else(|| "let the opponent move".to_string(), |m| format!("move {m}")),
            })).collect::<Vec<_>>(),
            "white_moves": moves(&self.white),
            "black_moves": moves(&self.black),
        })
    }
}

/// Where whole chips change the best move: per material, the positions where no move that
/// is best with `total` chips (White: the least win threshold after it; Black: the
/// greatest not-lose threshold after it) is best with continuous money (White: the
/// greatest α after it; Black: the least β), for each side, with a first example.
#[derive(Clone, Debug, serde::Serialize)]
pub struct MoveCensus {
    /// The stored material.
    pub material: String,
    /// Its positions.
    pub positions: usize,
    /// Positions where White's best moves differ.
    pub white_differs: usize,
    /// Positions where Black's best moves differ.
    pub black_differs: usize,
    /// A position where White's differ: its FEN, the chip-best and the continuous-best moves.
    pub white_example: Option<(String, Vec<String>, Vec<String>)>,
    /// The same for Black.
    pub black_example: Option<(String, Vec<String>, Vec<String>)>,
}

impl Tablebase {
    /// The [`MoveCensus`] of every table of `board`, for `total` chips.
    pub fn chip_move_census(&self, board: Board, total: u32) -> Result<Vec<MoveCensus>, Error> {
        use rayon::prelude::*;
        let chip_total = Total::new_lean(total);
        let mut out = Vec::new();
        for m in self.materials(board) {
            let t = self.table(board, m)?;
            // Per position: (white differs, black differs, the moves of each side's sets).
            type Sets = (Vec<String>, Vec<String>);
            type Row = (Option<Sets>, Option<Sets>, Position);
            let rows: Vec<Row> = (0..t.len())
                .into_par_iter()
                .map(|i| -> Result<_, Error> {
                    let key = t.key(i)?;
                    let pos = crate::index::position_of_key(board, m, key).ok_or_else(|| {
                        Error::Table {
                            path: t.path().display().to_string(),
                            reason: format!("key {key} is no position"),
                        }
                    })?;
                    let side = |moves: Vec<Move>, white: bool| -> Result<Option<Sets>, Error> {
                        // Each move's uci, chip key and value after it; the best chip key is
                        // the least (White's win threshold, Black's seen from Black).
                        let side = if white { Side::White } else { Side::Black };
                        let mut rows = Vec::new();
                        for mv in &moves {
                            let chips = self.chips_after(board, &mv.outcome, &chip_total)?;
                            let e = self.entry_after(board, &mv.outcome)?;
                            let value = if white {
                                e.value.clone()
                            } else {
                                e.upper().clone()
                            };
                            rows.push((mv.uci(board), chips.win_of(&chip_total, side), value));
                        }
                        let Some(chip) = rows.iter().map(|r| r.1).min() else {
                            return Ok(None);
                        };
                        let values = rows.iter().map(|r| &r.2);
                        let money = if white { values.max() } else { values.min() }.expect("moves");
                        let ucis = |keep: &dyn Fn(&(String, u32, crate::value::Value)) -> bool| {
                            rows.iter()
                                .filter(|r| keep(r))
                                .map(|r| r.0.clone())
                                .collect()
                        };
                        let chip_best: Vec<String> = ucis(&|r| r.1 == chip);
                        let money_best: Vec<String> = ucis(&|r| &r.2 == money);
                        let disjoint = !chip_best.iter().any(|m| money_best.contains(m));
                        Ok(disjoint.then_some((chip_best, money_best)))
                    };
                    Ok((
                        side(rules::white_moves(board, &pos), true)?,
                        side(rules::black_moves(board, &pos), false)?,
                        pos,
                    ))
                })
                .collect::<Result<_, Error>>()?;
            let example = |f: &dyn Fn(&Row) -> Option<Sets>| {
                rows.iter()
                    .find_map(|r| f(r).map(|(a, b)| (crate::fen::write(board, &r.2), a, b)))
            };
            out.push(MoveCensus {
                material: m.to_string(),
                positions: t.len(),
                white_differs: rows.iter().filter(|r| r.0.is_some()).count(),
                black_differs: rows.iter().filter(|r| r.1.is_some()).count(),
                white_example: example(&|r| r.0.clone()),
                black_example: example(&|r| r.1.clone()),
            });
        }
        Ok(out)
    }
}
