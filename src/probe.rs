//! The query side: open the table files of a directory and answer a position with its exact
//! value, every move of each side with the value after it and its progress level, both
//! sides' best moves, the bid and the zugzwang flag (SPEC §2).
//!
//! Tables hold the white-piece classes. A position with a black extra piece is answered
//! through its colour-flip mirror: its value is 1 − the mirror's, White's moves are the
//! mirror's Black moves (and the reverse) with squares mapped back, White's progress level
//! is the mirror's T′ level.
//!
//! Where a table stores β apart from α (format version 2, positions with α < β), the
//! value is α and β is reported beside it. The mirror of such a position has α = 1 − β
//! and β = 1 − α. White's moves are ordered by α and T (T is computed from α), Black's by
//! β and T′ (T′ is computed from β): the orders in which each side makes progress in the
//! game where play that never ends counts against it.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};

use num_bigint::{BigInt, BigUint};
use num_rational::BigRational;
use num_traits::{One, ToPrimitive, Zero};
use serde_json::json;

use crate::error::Error;
use crate::fen;
use crate::geometry::Board;
use crate::guess::Value;
use crate::index;
use crate::position::{Material, Position};
use crate::rules::{self, Move, Outcome};
use crate::table::{self, Table};

/// The tables of one board.
#[derive(Debug)]
struct BoardTables {
    board: Board,
    /// One slot per class of [`Material::ALL`]; None where the file is absent.
    tables: Vec<Option<Table>>,
}

/// Every table file found under a directory (`DIR/FxR/<Class>.bidtb`), memory-mapped and
/// validated.
#[derive(Debug)]
pub struct Tablebase {
    root: PathBuf,
    boards: Vec<BoardTables>,
}

/// What a stored position says: its value and its levels in T and T′.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The exact value: α, the value wherever α = β.
    pub value: Value,
    /// β, where it lies above α (version 2 tables only).
    pub beta: Option<Value>,
    /// Level in White's closure T (None outside it).
    pub level_white: Option<u32>,
    /// Level in Black's closure T′.
    pub level_black: Option<u32>,
}

impl Entry {
    fn terminal(value: Value) -> Entry {
        Entry {
            value,
            beta: None,
            level_white: Some(0),
            level_black: Some(0),
        }
    }

    /// The same entry seen from the colour-flipped side: 1 − value, closures swapped;
    /// where α < β, the flipped α is 1 − β and the flipped β is 1 − α.
    pub fn flipped(self) -> Entry {
        let (alpha, beta) = match self.beta {
            Some(beta) => (beta, Some(self.value)),
            None => (self.value, None),
        };
        Entry {
            value: Value::one() - alpha,
            beta: beta.map(|a| Value::one() - a),
            level_white: self.level_black,
            level_black: self.level_white,
        }
    }

    /// β: the value where α = β.
    pub fn upper(&self) -> &Value {
        self.beta.as_ref().unwrap_or(&self.value)
    }
}

/// One move of a probe, in the queried position's coordinates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoveInfo {
    /// Coordinate notation, e.g. `h8d8` or `d7d8n`.
    pub uci: String,
    /// The value of the position after the move (α where α < β).
    pub value: Value,
    /// β of the position after the move, where it lies above α.
    pub beta: Option<Value>,
    /// The mover's progress level of the position after the move: its T level for a White
    /// move, its T′ level for a Black move (0 for a king capture, None if unreached).
    pub level: Option<u32>,
    /// The FEN placement after the move (None when it captures the king: the game is over).
    pub fen: Option<String>,
}

impl MoveInfo {
    /// α of the position after the move (its value).
    pub fn lower(&self) -> &Value {
        &self.value
    }

    /// β of the position after the move (its value where α = β).
    pub fn upper(&self) -> &Value {
        self.beta.as_ref().unwrap_or(&self.value)
    }
}

/// The answer to a query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// The board.
    pub board: Board,
    /// The class as queried: `KRvK`, or `KvKR` for a black rook.
    pub class: String,
    /// The position's FEN placement, as written by [`fen::write`].
    pub fen: String,
    /// The exact value (White's winning probability; Black's required share of the money);
    /// α where α < β.
    pub value: Value,
    /// β, where it lies above α (tables of format version 2).
    pub beta: Option<Value>,
    /// Every White move, best first: highest value (α), then lowest T level.
    pub white: Vec<MoveInfo>,
    /// Every Black move, best first: lowest value (β), then lowest T′ level.
    pub black: Vec<MoveInfo>,
    /// The bid (x_W − x_B)/2 on α, as a share of the total money; negative in a zugzwang.
    pub bid: BigRational,
    /// The bid on β, where some value involved has α < β.
    pub bid_beta: Option<BigRational>,
    /// Whether the bid is negative: each player would rather the other moved.
    pub zugzwang: bool,
    /// The position's level in White's closure T.
    pub level_white: Option<u32>,
    /// The position's level in Black's closure T′.
    pub level_black: Option<u32>,
    /// Whether every table used carries a certificate (α = s = β proved).
    pub certified: bool,
}

/// `p/q` in lowest terms, with `1/1` and `0/1` at the ends.
pub fn fraction(v: &Value) -> String {
    format!("{}/{}", v.numer(), v.denom())
}

/// A signed fraction `p/q`.
pub fn signed_fraction(v: &BigRational) -> String {
    format!("{}/{}", v.numer(), v.denom())
}

/// The decimal expansion of `v` to at most `digits` places, exact when it ends there, else
/// truncated and marked with `…`.
pub fn decimal(v: &Value, digits: usize) -> String {
    let whole = v.numer() / v.denom();
    let mut rem = v.numer() % v.denom();
    let mut out = format!("{whole}.");
    let ten = BigUint::from(10u8);
    for _ in 0..digits {
        if rem.is_zero() {
            break;
        }
        rem *= &ten;
        out += &(&rem / v.denom()).to_string();
        rem %= v.denom();
    }
    if out.ends_with('.') {
        out.push('0');
    }
    if !rem.is_zero() {
        out.push('…');
    }
    out
}

impl Probe {
    /// White's best move, if White has a move.
    pub fn best_white(&self) -> Option<&MoveInfo> {
        self.white.first()
    }

    /// Black's best move, if Black has a move.
    pub fn best_black(&self) -> Option<&MoveInfo> {
        self.black.first()
    }

    /// The JSON object of `bidtb query --json` (and of the HTTP API). Where α < β, the
    /// position and its moves carry a `beta` beside `value` (which is α), and the position
    /// a `bid_beta`; elsewhere these keys are absent.
    pub fn to_json(&self) -> serde_json::Value {
        let moves = |list: &[MoveInfo]| {
            list.iter()
                .map(|m| {
                    let mut out = json!({
                        "move": m.uci,
                        "value": fraction(&m.value),
                        "level": m.level,
                        "fen": m.fen,
                    });
                    if let Some(beta) = &m.beta {
                        out["beta"] = json!(fraction(beta));
                    }
                    out
                })
                .collect::<Vec<_>>()
        };
        let mut out = json!({
            "board": self.board.to_string(),
            "fen": self.fen,
            "class": self.class,
            "value": fraction(&self.value),
            "value_approx": self.value.to_f64(),
            "white": moves(&self.white),
            "black": moves(&self.black),
            "best_white": self.best_white().map(|m| &m.uci),
            "best_black": self.best_black().map(|m| &m.uci),
            "bid": signed_fraction(&self.bid),
            "zugzwang": self.zugzwang,
            "level_white": self.level_white,
            "level_black": self.level_black,
            "certified": self.certified,
        });
        if let Some(beta) = &self.beta {
            out["beta"] = json!(fraction(beta));
        }
        if let Some(bid) = &self.bid_beta {
            out["bid_beta"] = json!(signed_fraction(bid));
        }
        out
    }
}

/// The class of the position asked about: `KRvK`, or `KvKR` when `pos` is the mirror of a
/// position with a black rook.
pub fn class_as_queried(pos: &Position, mirrored: bool) -> String {
    match (mirrored, pos.material().0) {
        (true, Some(p)) => format!("KvK{}", p.letter()),
        _ => pos.material().to_string(),
    }
}

fn level(l: u32) -> Option<u32> {
    (l != table::UNREACHED).then_some(l)
}

impl Tablebase {
    /// Open every table under `dir`: each subdirectory named like a board (`8x8`) and each
    /// class file in it. Files absent are reported when a query needs them; a file present
    /// but unusable (truncated, corrupted, another version, board or class) fails the open.
    pub fn open(dir: impl AsRef<Path>) -> Result<Tablebase, Error> {
        Self::open_filtered(dir.as_ref(), |_| true)
    }

    /// Open the tables of one board only (as [`Tablebase::open`] does for every board).
    pub fn open_board(dir: impl AsRef<Path>, board: Board) -> Result<Tablebase, Error> {
        Self::open_filtered(dir.as_ref(), |b| b == board)
    }

    fn open_filtered(dir: &Path, wanted: impl Fn(Board) -> bool) -> Result<Tablebase, Error> {
        let root = dir.to_path_buf();
        let entries = std::fs::read_dir(&root).map_err(|e| Error::io(&root, e))?;
        let mut boards = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&root, e))?;
            let Ok(board) = entry.file_name().to_string_lossy().parse::<Board>() else {
                continue;
            };
            if !wanted(board) || !entry.path().is_dir() {
                continue;
            }
            let mut tables = Vec::new();
            for material in Material::ALL {
                let path = entry.path().join(table::file_name(material));
                if !path.exists() {
                    tables.push(None);
                    continue;
                }
                let t = Table::open(&path)?;
                if t.info().board != board || t.info().material != material {
                    return Err(Error::Table {
                        path: path.display().to_string(),
                        reason: format!(
                            "holds {} on {}, not {material} on {board}",
                            t.info().material,
                            t.info().board
                        ),
                    });
                }
                tables.push(Some(t));
            }
            boards.push(BoardTables { board, tables });
        }
        boards.sort_by_key(|b| b.board);
        Ok(Tablebase { root, boards })
    }

    /// The directory the tables were opened from.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The boards with at least a directory of tables.
    pub fn boards(&self) -> impl Iterator<Item = Board> + '_ {
        self.boards.iter().map(|b| b.board)
    }

    /// The table of a class on a board, or an error naming the missing file and how to
    /// generate it.
    pub fn table(&self, board: Board, material: Material) -> Result<&Table, Error> {
        let c = Material::ALL
            .iter()
            .position(|&m| m == material)
            .expect("a known class");
        self.boards
            .iter()
            .find(|b| b.board == board)
            .and_then(|b| b.tables[c].as_ref())
            .ok_or_else(|| Error::MissingTable {
                path: self
                    .root
                    .join(board.to_string())
                    .join(table::file_name(material))
                    .display()
                    .to_string(),
                board: board.to_string(),
                dir: self.root.display().to_string(),
            })
    }

    /// The stored entry of a white-piece (or bare-kings) position.
    pub fn entry(&self, board: Board, pos: &Position) -> Result<Entry, Error> {
        pos.validate(board)?;
        let t = self.table(board, pos.material())?;
        let i = t
            .find(index::canonical_key(board, pos))
            .ok_or_else(|| Error::Table {
                path: t.path().display().to_string(),
                reason: format!("no entry for {}", pos.describe(board)),
            })?;
        Ok(Entry {
            value: t.value(i)?,
            beta: t.beta_if_above(i)?,
            level_white: level(t.level_white(i)),
            level_black: level(t.level_black(i)),
        })
    }

    /// The exact value of a white-piece (or bare-kings) position.
    pub fn value(&self, board: Board, pos: &Position) -> Result<Value, Error> {
        self.entry(board, pos).map(|e| e.value)
    }

    fn outcome(&self, board: Board, outcome: &Outcome) -> Result<Entry, Error> {
        match outcome {
            Outcome::WhiteWins => Ok(Entry::terminal(Value::one())),
            Outcome::BlackWins => Ok(Entry::terminal(Value::zero())),
            Outcome::Continue(p) => self.entry(board, p),
        }
    }

    fn certified(&self, board: Board, materials: impl Iterator<Item = Material>) -> bool {
        materials
            .map(|m| self.table(board, m))
            .all(|t| t.is_ok_and(|t| t.info().certified()))
    }

    /// Answer a FEN (SPEC §5; a black extra piece goes through the mirror).
    pub fn probe_fen(&self, text: &str) -> Result<Probe, Error> {
        let parsed = fen::parse(text)?;
        self.probe(parsed.board, &parsed.position, parsed.mirrored)
    }

    /// Answer a position given in the tables' white-piece form. With `mirrored`, the
    /// position asked about is the colour-flip of `pos` (see [`fen::Parsed`]); values,
    /// moves and levels are then reported for it.
    pub fn probe(&self, board: Board, pos: &Position, mirrored: bool) -> Result<Probe, Error> {
        let own = self.entry(board, pos)?;
        let mut used = vec![pos.material()];
        let mut list = |moves: Vec<Move>, white: bool| -> Result<Vec<MoveInfo>, Error> {
            moves
                .into_iter()
                .map(|m| {
                    let fen = match &m.outcome {
                        Outcome::Continue(p) => {
                            used.push(p.material());
                            Some(fen::write(board, p, mirrored))
                        }
                        _ => None,
                    };
                    let e = self.outcome(board, &m.outcome)?;
                    let (mv, e) = if mirrored {
                        let flip = |s| board.flip_ranks(s);
                        let mv = Move {
                            from: flip(m.from),
                            to: flip(m.to),
                            ..m
                        };
                        (mv, e.flipped())
                    } else {
                        (m, e)
                    };
                    // The mover's level: White's moves of the queried position are White's
                    // moves of the table position unless mirrored.
                    let level = if white != mirrored {
                        e.level_white
                    } else {
                        e.level_black
                    };
                    Ok(MoveInfo {
                        uci: mv.uci(board),
                        beta: e.beta,
                        value: e.value,
                        level,
                        fen,
                    })
                })
                .collect()
        };
        let table_white = list(rules::white_moves(board, pos), true)?;
        let table_black = list(rules::black_moves(board, pos), false)?;
        let (own, mut white, mut black) = if mirrored {
            (own.flipped(), table_black, table_white)
        } else {
            (own, table_white, table_black)
        };
        let by_level = |a: &MoveInfo, b: &MoveInfo| {
            let key = |m: &MoveInfo| m.level.unwrap_or(u32::MAX);
            key(a).cmp(&key(b)).then_with(|| a.uci.cmp(&b.uci))
        };
        white.sort_by(|a, b| b.value.cmp(&a.value).then_with(|| by_level(a, b)));
        black.sort_by(|a, b| a.upper().cmp(b.upper()).then_with(|| by_level(a, b)));
        // A side without a move keeps the position: its option is the position's value.
        let best = |list: &[MoveInfo], own: &Value, f: fn(&MoveInfo) -> &Value, max| {
            let values = list.iter().map(f);
            let pick = if max { values.max() } else { values.min() };
            pick.unwrap_or(own).clone()
        };
        let bid_on = |x_w: &Value, x_b: &Value| {
            let signed = |v: &Value| {
                BigRational::new(
                    BigInt::from(v.numer().clone()),
                    BigInt::from(v.denom().clone()),
                )
            };
            (signed(x_w) - signed(x_b)) / BigInt::from(2)
        };
        let x_w = best(&white, &own.value, MoveInfo::lower, true);
        let x_b = best(&black, &own.value, MoveInfo::lower, false);
        let bid = bid_on(&x_w, &x_b);
        let zugzwang = x_w.cmp(&x_b) == Ordering::Less;
        let split = own.beta.is_some() || white.iter().chain(&black).any(|m| m.beta.is_some());
        let bid_beta = split.then(|| {
            bid_on(
                &best(&white, own.upper(), MoveInfo::upper, true),
                &best(&black, own.upper(), MoveInfo::upper, false),
            )
        });
        let class = class_as_queried(pos, mirrored);
        Ok(Probe {
            board,
            class,
            fen: fen::write(board, pos, mirrored),
            certified: self.certified(board, used.into_iter()),
            value: own.value,
            beta: own.beta,
            white,
            black,
            bid,
            bid_beta,
            zugzwang,
            level_white: own.level_white,
            level_black: own.level_black,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_are_exact_or_marked() {
        let v = |n: u64, d: u64| Value::new(n.into(), d.into());
        assert_eq!(decimal(&v(3, 4), 20), "0.75");
        assert_eq!(decimal(&v(7463, 8192), 20), "0.9110107421875");
        assert_eq!(decimal(&v(1, 3), 5), "0.33333…");
        assert_eq!(decimal(&v(1, 1), 5), "1.0");
        assert_eq!(decimal(&v(0, 1), 5), "0.0");
        assert_eq!(fraction(&v(1, 1)), "1/1");
        assert_eq!(fraction(&v(0, 1)), "0/1");
    }
}
