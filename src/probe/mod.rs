//! The query side: open the table files of a directory and answer a position of any
//! material with its exact value, every move of each side with the value after it and its
//! progress level, both sides' best moves, the bid and the zugzwang flag (SPEC §2).
//!
//! Tables hold one material of each colour-mirror pair (the *stored* one: `KQvK`, `KRvKN`).
//! A position of the other (`KvKQ`, `KNvKR`) is looked up through its colour mirror
//! (ranks reversed, colours swapped): its α is 1 − β of the mirror, its β 1 − α, its T
//! level the mirror's T′ level. Moves are generated for the position as asked, so they need
//! no mapping; each position a move leads to is looked up the same way.
//!
//! Where a table stores β apart from α (positions with α < β), the value is α and β is
//! reported beside it. White's moves are ordered by α and T (T is computed from α), Black's
//! by β and T′ (T′ is computed from β): the orders in which each side makes progress in
//! the game where play that never ends counts against it.

pub mod chips;
pub mod map;

use std::collections::HashMap;
use std::sync::Arc;

use crate::chips::Thresholds;
use crate::chips::file::{self as chip_file, ChipTable};

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use num_bigint::BigInt;
use num_rational::BigRational;
use serde_json::json;

use crate::boundary::Known;
use crate::error::Error;
use crate::fen;
use crate::geometry::Board;
use crate::index;
use crate::material::Material;
use crate::position::Position;
use crate::rules::{self, Move, Outcome};
use crate::table::{self, Table};
use crate::value::Value;

/// The tables of one board.
/// Open chip files.
type ChipCache = HashMap<(Board, Material, u32), Arc<ChipTable>>;

#[derive(Debug)]
struct BoardTables {
    board: Board,
    /// The tables found, by stored material.
    tables: BTreeMap<Material, Table>,
}

/// A mapped file that was truncated while open (a read of it faulted,
/// [`crate::mapguard`]): refused from then on.
fn truncated(path: &std::path::Path) -> Error {
    Error::Table {
        path: path.display().to_string(),
        reason: "the file was truncated while it was being served (modified in place): it is \
                 no longer read; replace it by rename and restart the server"
            .into(),
    }
}

/// Every table file found under a directory (`DIR/FxR/<Material>.bidtb`), memory-mapped
/// and validated; chip files (`DIR/FxR/chips-K/<Material>.chips`) are opened when first
/// asked for and kept.
#[derive(Debug)]
pub struct Tablebase {
    root: PathBuf,
    boards: Vec<BoardTables>,
    /// Chip files opened so far, by board, stored material and chip total.
    chips: std::sync::RwLock<ChipCache>,
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

    /// β: the value where α = β.
    pub fn upper(&self) -> &Value {
        self.beta.as_ref().unwrap_or(&self.value)
    }
}

impl From<Known> for Entry {
    /// A stored position's α, β and levels as the probe reports them: β only where it lies
    /// above α, a level only inside its closure.
    fn from(k: Known) -> Entry {
        Entry {
            beta: (k.beta != k.alpha).then_some(k.beta),
            value: k.alpha,
            level_white: level(k.level_white),
            level_black: level(k.level_black),
        }
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
    /// The material as queried: `KRvK`, `KvKR`, `KRvKN`, ...
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
    v.fraction()
}

/// A signed fraction `p/q`.
pub fn signed_fraction(v: &BigRational) -> String {
    format!("{}/{}", v.numer(), v.denom())
}

/// The decimal expansion of `v` to at most `digits` places, exact when it ends there, else
/// truncated and marked with `…`.
pub fn decimal(v: &Value, digits: usize) -> String {
    v.decimal(digits)
}

/// `list` sorted by `key` (highest first when `high`), then by level and name; values are
/// compared through their f64 shadows where those decide, exactly otherwise.
fn sorted(list: Vec<MoveInfo>, key: fn(&MoveInfo) -> &Value, high: bool) -> Vec<MoveInfo> {
    let mut keyed: Vec<(f64, MoveInfo)> = list.into_iter().map(|m| (key(&m).to_f64(), m)).collect();
    keyed.sort_by(|(fa, a), (fb, b)| {
        let by_value = crate::value::arith::cmp_shadowed(key(a), *fa, key(b), *fb);
        let by_value = if high { by_value.reverse() } else { by_value };
        let level = |m: &MoveInfo| m.level.unwrap_or(u32::MAX);
        by_value
            .then_with(|| level(a).cmp(&level(b)))
            .then_with(|| a.uci.cmp(&b.uci))
    });
    keyed.into_iter().map(|(_, m)| m).collect()
}

/// The greatest (`max`) or least of `f` over `list`, compared through f64 shadows where
/// they decide.
fn extreme(list: &[MoveInfo], f: fn(&MoveInfo) -> &Value, max: bool) -> Option<&Value> {
    let order = |a: &(f64, &Value), b: &(f64, &Value)| {
        crate::value::arith::cmp_shadowed(a.1, a.0, b.1, b.0)
    };
    let values = list.iter().map(|m| (f(m).to_f64(), f(m)));
    let pick = if max {
        values.max_by(order)
    } else {
        values.min_by(order)
    };
    pick.map(|(_, v)| v)
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

fn level(l: u32) -> Option<u32> {
    (l != table::UNREACHED).then_some(l)
}

/// Whether `dir` itself holds table files (it is a board's directory, not a tables root).
fn holds_tables(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.file_name()
                .to_string_lossy()
                .ends_with(&format!(".{}", table::EXTENSION))
        })
    })
}

impl Tablebase {
    /// Open every table under `dir`: each subdirectory named like a board (`8x8`) and each
    /// material's file in it (`KRvKN.bidtb`; other files are left alone). Files absent are
    /// reported when a query needs them; a file present but unusable (not a regular file,
    /// truncated, corrupted, another version, board or material) fails the open.
    pub fn open(dir: impl AsRef<Path>) -> Result<Tablebase, Error> {
        Self::open_filtered(dir.as_ref(), |_| true, |_| true)
    }

    /// Open the tables of one board only (as [`Tablebase::open`] does for every board).
    pub fn open_board(dir: impl AsRef<Path>, board: Board) -> Result<Tablebase, Error> {
        Self::open_filtered(dir.as_ref(), |b| b == board, |_| true)
    }

    /// Open, of one board's tables, those of `materials` (stored forms) and of the
    /// materials one move from them leads to: what checking their equations reads. The
    /// others are not opened (opening checks a file's checksums: on 8x8 the four-piece
    /// tables hold 50 GB, and checking KvK alone read them all).
    pub fn open_around(
        dir: impl AsRef<Path>,
        board: Board,
        materials: &[Material],
    ) -> Result<Tablebase, Error> {
        let mut wanted = Material::next_outside(materials);
        wanted.extend(materials.iter().map(|m| m.stored().0));
        Self::open_filtered(dir.as_ref(), |b| b == board, |m| wanted.contains(&m))
    }

    fn open_filtered(
        dir: &Path,
        wanted: impl Fn(Board) -> bool,
        wanted_material: impl Fn(Material) -> bool,
    ) -> Result<Tablebase, Error> {
        let root = dir.to_path_buf();
        let entries = std::fs::read_dir(&root).map_err(|e| Error::io(&root, e))?;
        let mut boards = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| Error::io(&root, e))?;
            // Only the canonical name (`4x4`): a look-alike (`04x04`, `4X4`, ` 4x4`) beside it
            // must not shadow it, nor be listed twice.
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(board) = name.parse::<Board>().ok().filter(|b| b.to_string() == name) else {
                continue;
            };
            if !wanted(board) || !entry.path().is_dir() {
                continue;
            }
            let files = std::fs::read_dir(entry.path()).map_err(|e| Error::io(entry.path(), e))?;
            let mut tables = BTreeMap::new();
            for file in files {
                let file = file.map_err(|e| Error::io(entry.path(), e))?;
                let name = file.file_name().to_string_lossy().into_owned();
                let Some(stem) = name.strip_suffix(&format!(".{}", table::EXTENSION)) else {
                    continue;
                };
                let Some(material) = stem
                    .parse::<Material>()
                    .ok()
                    .filter(|m| m.to_string() == stem)
                else {
                    continue;
                };
                if !wanted_material(material) {
                    continue;
                }
                let path = file.path();
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
                tables.insert(material, t);
            }
            boards.push(BoardTables { board, tables });
        }
        if boards.is_empty() && holds_tables(&root) {
            let parent = root
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            return Err(Error::Usage(format!(
                "{} holds table files itself: it is one board's directory; give the directory \
                 above it (--tables {})",
                root.display(),
                parent.display()
            )));
        }
        boards.sort_by_key(|b| b.board);
        Ok(Tablebase {
            root,
            boards,
            chips: Default::default(),
        })
    }

    /// The directory the tables were opened from.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The boards with at least a directory of tables.
    pub fn boards(&self) -> impl Iterator<Item = Board> + '_ {
        self.boards.iter().map(|b| b.board)
    }

    /// The stored materials with a table on `board`.
    pub fn materials(&self, board: Board) -> Vec<Material> {
        self.boards
            .iter()
            .find(|b| b.board == board)
            .map(|b| b.tables.keys().copied().collect())
            .unwrap_or_default()
    }

    /// The table of a stored material on a board, or an error naming the missing file and
    /// how to generate it.
    pub fn table(&self, board: Board, material: Material) -> Result<&Table, Error> {
        let table = self
            .boards
            .iter()
            .find(|b| b.board == board)
            .and_then(|b| b.tables.get(&material));
        if let Some(t) = table.filter(|t| t.poisoned()) {
            return Err(truncated(t.path()));
        }
        table.ok_or_else(|| Error::MissingTable {
            path: self
                .root
                .join(board.to_string())
                .join(table::file_name(material))
                .display()
                .to_string(),
            board: board.to_string(),
            dir: self.root.display().to_string(),
            material: material.to_string(),
        })
    }

    /// Refuse a position with more men than any table of the directory holds (bad input,
    /// not a missing table), naming its stored material and the command that makes its
    /// table.
    fn check_men(&self, board: Board, pos: &Position) -> Result<(), Error> {
        let most = self
            .boards
            .iter()
            .flat_map(|b| b.tables.keys())
            .map(Material::man_count)
            .max()
            .unwrap_or(0);
        if pos.len() <= most.max(4) {
            return Ok(());
        }
        // Only some of the directory's tables may be open (`open_around`): its files say
        // how many men its tables hold. Where some hold as many, the position's own table
        // is missing (and named as such by the look-up).
        let on_disk = self.most_men_on_disk();
        if pos.len() <= on_disk {
            return Ok(());
        }
        let material = pos.material();
        Err(Error::Position(format!(
            "{} has {} men; the tables in {} hold at most {} (`bidtb generate --board {} \
             --method solve --material {} --out {}` makes its table)",
            material,
            pos.len(),
            self.root.display(),
            most.max(on_disk).max(4),
            board,
            material.stored().0,
            self.root.display(),
        )))
    }

    /// The most men of any table file under the root (`DIR/FxR/M.bidtb`, by its name),
    /// opened or not.
    fn most_men_on_disk(&self) -> usize {
        let Ok(boards) = std::fs::read_dir(&self.root) else {
            return 0;
        };
        boards
            .flatten()
            .filter_map(|b| std::fs::read_dir(b.path()).ok())
            .flat_map(|files| files.flatten())
            .filter_map(|f| {
                let name = f.file_name().to_string_lossy().into_owned();
                let stem = name.strip_suffix(&format!(".{}", table::EXTENSION))?;
                stem.parse::<Material>().ok().map(|m| m.man_count())
            })
            .max()
            .unwrap_or(0)
    }

    /// Where a position of any material is stored: its table, its index in that table and
    /// whether it was looked up through the colour mirror (its material is not the stored
    /// one; its α is then 1 − the stored β). For callers that read the stored ranks
    /// ([`Table::rank`], [`Table::rank_beta`]) without decoding values, such as a cache of
    /// converted values keyed by rank.
    pub fn locate(&self, board: Board, pos: &Position) -> Result<(&Table, usize, bool), Error> {
        pos.validate(board)?;
        self.check_men(board, pos)?;
        let (stored, mirrored) = pos.material().stored();
        let q = if mirrored { pos.mirror(board) } else { *pos };
        let t = self.table(board, stored)?;
        let i = t
            .find(index::canonical_key(board, &q))?
            .ok_or_else(|| Error::Table {
                path: t.path().display().to_string(),
                reason: format!("no entry for {}", q.describe(board)),
            })?;
        Ok((t, i, mirrored))
    }

    /// The stored entry of a position of any material (through the colour mirror where its
    /// material is not the stored one).
    pub fn entry(&self, board: Board, pos: &Position) -> Result<Entry, Error> {
        let (t, i, mirrored) = self.locate(board, pos)?;
        let known = t.known(i, &table::FromFile)?;
        Ok(Entry::from(if mirrored { known.mirrored() } else { known }))
    }

    /// The chip file of `material` on `board` for `total` chips, opened once and kept; an
    /// error naming the command that makes it if it is missing or was made for other
    /// tables.
    pub fn chip_table(
        &self,
        board: Board,
        material: Material,
        total: u32,
    ) -> Result<Arc<ChipTable>, Error> {
        let key = (board, material, total);
        if let Some(t) = self.chips.read().ok().and_then(|c| c.get(&key).cloned()) {
            if t.poisoned() {
                let board_dir = self.root.join(board.to_string());
                return Err(truncated(&chip_file::path(
                    &chip_file::dir(&board_dir, total),
                    material,
                )));
            }
            return Ok(t);
        }
        let table = self.table(board, material)?;
        let board_dir = self.root.join(board.to_string());
        let path = chip_file::path(&chip_file::dir(&board_dir, total), material);
        let make = format!(
            "make it with `bidtb chips --tables {} --board {board} --chips {total}`",
            self.root.display()
        );
        if !path.exists() {
            return Err(Error::MissingChips(format!(
                "missing chip table {}: {make}",
                path.display()
            )));
        }
        let chips = ChipTable::open(&path)?;
        if !chips.fits(table, total)? {
            return Err(Error::MissingChips(format!(
                "{} was made for other tables than {}: {make}",
                path.display(),
                table.path().display()
            )));
        }
        let chips = Arc::new(chips);
        if let Ok(mut cache) = self.chips.write() {
            cache.insert(key, chips.clone());
        }
        Ok(chips)
    }

    /// The chip thresholds of a position with `total` chips in all (through the colour
    /// mirror where its material is not the stored one), as White's holdings.
    pub fn chip_thresholds(
        &self,
        board: Board,
        pos: &Position,
        total: u32,
    ) -> Result<Thresholds, Error> {
        let (t, i, mirrored) = self.locate(board, pos)?;
        let material = t.info().material;
        let chips = self.chip_table(board, material, total)?;
        let th = chips.get(i);
        Ok(if mirrored {
            th.mirrored(chips.total())
        } else {
            th
        })
    }

    /// The exact value (α) of a position.
    pub fn value(&self, board: Board, pos: &Position) -> Result<Value, Error> {
        self.entry(board, pos).map(|e| e.value)
    }

    /// The entry of what a move leads to: a king capture's (value 1 or 0, level 0), or the
    /// position's.
    pub fn entry_after(&self, board: Board, outcome: &Outcome) -> Result<Entry, Error> {
        match outcome {
            Outcome::WhiteWins => Ok(Entry::terminal(Value::one())),
            Outcome::BlackWins => Ok(Entry::terminal(Value::zero())),
            Outcome::Continue(p) => self.entry(board, p),
        }
    }

    fn certified(&self, board: Board, materials: impl Iterator<Item = Material>) -> bool {
        materials
            .map(|m| self.table(board, m.stored().0))
            .all(|t| t.is_ok_and(|t| t.info().certified()))
    }

    /// Answer a FEN (SPEC §5).
    pub fn probe_fen(&self, text: &str) -> Result<Probe, Error> {
        let parsed = fen::parse(text)?;
        self.probe(parsed.board, &parsed.position)
    }

    /// Answer a position of any material.
    pub fn probe(&self, board: Board, pos: &Position) -> Result<Probe, Error> {
        let own = self.entry(board, pos)?;
        let mut used = vec![pos.material()];
        let mut list = |moves: Vec<Move>, white: bool| -> Result<Vec<MoveInfo>, Error> {
            moves
                .into_iter()
                .map(|m| {
                    let fen = match &m.outcome {
                        Outcome::Continue(p) => {
                            used.push(p.material());
                            Some(fen::write(board, p))
                        }
                        _ => None,
                    };
                    let e = self.entry_after(board, &m.outcome)?;
                    let level = if white { e.level_white } else { e.level_black };
                    Ok(MoveInfo {
                        uci: m.uci(board),
                        beta: e.beta,
                        value: e.value,
                        level,
                        fen,
                    })
                })
                .collect()
        };
        let white = list(rules::white_moves(board, pos), true)?;
        let black = list(rules::black_moves(board, pos), false)?;
        // White's moves by α, highest first, Black's by β, lowest first; then by level.
        // Compared through f64 shadows where they decide (values of thousands of digits
        // compare slowly), exactly otherwise.
        let white = sorted(white, MoveInfo::lower, true);
        let black = sorted(black, MoveInfo::upper, false);
        // A side without a move keeps the position: its option is the position's value.
        let best = |list: &[MoveInfo], own: &Value, f: fn(&MoveInfo) -> &Value, max| {
            extreme(list, f, max).unwrap_or(own).clone()
        };
        // (x_W − x_B) / 2 in lowest terms, with one gcd (the fast one of `value::arith`:
        // num-bigint's takes milliseconds at thousands of digits).
        let bid_on = |x_w: &Value, x_b: &Value| {
            let (negative, half) = crate::value::arith::half_difference(x_w, x_b);
            if half.is_zero() {
                return BigRational::from_integer(BigInt::from(0));
            }
            let sign = if negative {
                num_bigint::Sign::Minus
            } else {
                num_bigint::Sign::Plus
            };
            BigRational::new_raw(
                BigInt::from_biguint(sign, half.numer().into_owned()),
                BigInt::from(half.denom().into_owned()),
            )
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
        Ok(Probe {
            board,
            class: pos.material().to_string(),
            fen: fen::write(board, pos),
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
