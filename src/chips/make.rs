//! Making chip files for the value tables of a board directory: one material at a time in
//! dependency order, each from its game graph, its exits' thresholds read from the chip
//! files of the materials they lead to (made first), for one chip total at a time.

use std::collections::HashMap;
use std::path::Path;
use std::time::Instant;

use super::file::{self, ChipTable};
use super::{Side, Thresholds, Total, solve, step_at, terminals};
use crate::atomic;
use crate::error::Error;
use crate::geometry::Board;
use crate::graph::Graph;
use crate::index::Index;
use crate::material::Material;
use crate::table::{self, Table};

/// What making one material's chip file did.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Made {
    /// The material.
    pub material: String,
    /// The chip total.
    pub chips: u32,
    /// Its positions.
    pub positions: usize,
    /// Sweeps until White's and Black's thresholds stopped changing.
    pub sweeps: (usize, usize),
    /// Seconds (0 where an existing file was kept).
    pub seconds: f64,
    /// Whether an existing, matching file was kept instead.
    pub kept: bool,
}

/// The stored materials with a value table in `board_dir`, in dependency order.
pub fn materials_in(board_dir: &Path) -> Result<Vec<Material>, Error> {
    let entries = std::fs::read_dir(board_dir).map_err(|e| Error::io(board_dir, e))?;
    let mut out: Vec<Material> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(&format!(".{}", table::EXTENSION))?;
            let m: Material = stem.parse().ok()?;
            (m.to_string() == stem && m.stored().0 == m).then_some(m)
        })
        .collect();
    crate::material::sort_by_dependency(&mut out);
    Ok(out)
}

/// The open value tables and chip files a run reads exits from.
struct Opened<'a> {
    board_dir: &'a Path,
    chip_dir: std::path::PathBuf,
    tables: HashMap<Material, Table>,
    chips: HashMap<Material, ChipTable>,
}

impl Opened<'_> {
    fn table(&mut self, m: Material) -> Result<&Table, Error> {
        if !self.tables.contains_key(&m) {
            let path = self.board_dir.join(table::file_name(m));
            if !path.exists() {
                return Err(Error::Usage(format!(
                    "{} has no table of {m}, which the chip tables need: generate it first",
                    self.board_dir.display()
                )));
            }
            self.tables.insert(m, Table::open(&path)?);
        }
        Ok(&self.tables[&m])
    }

    /// The chip file of `m`, if it exists and fits `m`'s value table.
    fn chips(&mut self, m: Material, total: &Total) -> Result<Option<&ChipTable>, Error> {
        if !self.chips.contains_key(&m) {
            let path = file::path(&self.chip_dir, m);
            if !path.exists() {
                return Ok(None);
            }
            let chips = ChipTable::open(&path)?;
            if !chips.fits(self.table(m)?, total.chips())? {
                return Ok(None);
            }
            self.chips.insert(m, chips);
        }
        Ok(self.chips.get(&m))
    }
}

/// Make the chip files of `materials` (stored materials with tables in `board_dir`, in
/// dependency order) for `total`; a material whose file exists and fits its table is kept.
/// `progress` hears about each material as it is done.
pub fn make(
    board_dir: &Path,
    board: Board,
    total: &Total,
    materials: &[Material],
    progress: &dyn Fn(&Made),
) -> Result<Vec<Made>, Error> {
    let chip_dir = file::dir(board_dir, total.chips());
    std::fs::create_dir_all(&chip_dir).map_err(|e| Error::io(&chip_dir, e))?;
    let mut opened = Opened {
        board_dir,
        chip_dir: chip_dir.clone(),
        tables: HashMap::new(),
        chips: HashMap::new(),
    };
    let mut out = Vec::new();
    for &m in materials {
        let made = if opened.chips(m, total)?.is_some() {
            let positions = opened.table(m)?.len();
            Made {
                material: m.to_string(),
                chips: total.chips(),
                positions,
                sweeps: (0, 0),
                seconds: 0.0,
                kept: true,
            }
        } else {
            let made = make_one(&mut opened, board, total, m)?;
            // Later materials read this one's exits from its file.
            opened.chips.remove(&m);
            made
        };
        progress(&made);
        out.push(made);
    }
    Ok(out)
}

/// A material's game graph (its positions in its value table's order, checked) and its
/// exits' thresholds, read from the chip files of the materials they lead to.
fn graph_and_exits(
    opened: &mut Opened<'_>,
    board: Board,
    total: &Total,
    m: Material,
) -> Result<(Graph, Vec<Thresholds>, u32), Error> {
    let index = Index::new(board, &[m]);
    let keys_crc = {
        let t = opened.table(m)?;
        if !t.holds_keys(index.classes()[0].keys())? {
            return Err(Error::Table {
                path: t.path().display().to_string(),
                reason: format!("its positions are not those of {m} on {board}"),
            });
        }
        t.keys_crc()?
    };
    let graph = Graph::new(&index);
    let mut exits = Vec::with_capacity(graph.exits().len());
    for e in graph.exits() {
        let i = opened
            .table(e.material)?
            .find(e.key)?
            .ok_or_else(|| Error::Table {
                path: opened
                    .board_dir
                    .join(table::file_name(e.material))
                    .display()
                    .to_string(),
                reason: format!("no position with key {}", e.key),
            })?;
        let chips = opened.chips(e.material, total)?.ok_or_else(|| {
            Error::Usage(format!(
                "the chip file of {} for {} chips is missing (it is made before {m})",
                e.material,
                total.chips()
            ))
        })?;
        let th = chips.get(i);
        exits.push(if e.mirrored { th.mirrored(total) } else { th });
    }
    Ok((graph, exits, keys_crc))
}

/// One material: its graph, its exits' thresholds, both sides' fixed points, its file.
fn make_one(
    opened: &mut Opened<'_>,
    board: Board,
    total: &Total,
    m: Material,
) -> Result<Made, Error> {
    let started = Instant::now();
    let (graph, exits, keys_crc) = graph_and_exits(opened, board, total, m)?;
    let n = graph.positions();
    let white_exits = exits.iter().map(|t| t.win_of(total, Side::White) as u16);
    let black_exits = exits.iter().map(|t| t.win_of(total, Side::Black) as u16);
    let (white, sw) = solve(
        &graph,
        total,
        Side::White,
        &terminals(total, Side::White, white_exits),
    );
    let (black, sb) = solve(
        &graph,
        total,
        Side::Black,
        &terminals(total, Side::Black, black_exits),
    );
    let (win, not_lose): (Vec<u16>, Vec<u16>) = white
        .iter()
        .zip(&black)
        .map(|(&w, &b)| {
            let t = Thresholds::from_wins(total, u32::from(w), u32::from(b));
            (t.win as u16, t.not_lose as u16)
        })
        .unzip();
    let bytes = file::encode(board, m, total.chips(), keys_crc, &win, &not_lose);
    atomic::write_atomic(&file::path(&opened.chip_dir, m), &bytes)?;
    Ok(Made {
        material: m.to_string(),
        chips: total.chips(),
        positions: n,
        sweeps: (sw, sb),
        seconds: started.elapsed().as_secs_f64(),
        kept: false,
    })
}

/// What re-checking a material's chip file found.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Checked {
    /// The material.
    pub material: String,
    /// The chip total.
    pub chips: u32,
    /// Its positions.
    pub positions: usize,
    /// Positions whose stored thresholds (White's win, or Black's) are not the bidding
    /// step of their successors' stored thresholds.
    pub failing: usize,
}

/// Re-check the chip files of `materials` for `total` from their stored thresholds alone:
/// at every position, each side's win threshold must be the bidding step of its
/// successors' (the fixed-point equation; a damaged or forged file with recomputed
/// checksums fails it). A missing file is an error naming it.
pub fn check(
    board_dir: &Path,
    board: Board,
    total: &Total,
    materials: &[Material],
) -> Result<Vec<Checked>, Error> {
    use rayon::prelude::*;
    let mut opened = Opened {
        board_dir,
        chip_dir: file::dir(board_dir, total.chips()),
        tables: HashMap::new(),
        chips: HashMap::new(),
    };
    let mut out = Vec::new();
    for &m in materials {
        if opened.chips(m, total)?.is_none() {
            return Err(Error::MissingChips(format!(
                "{} is missing or made for other tables",
                file::path(&opened.chip_dir, m).display()
            )));
        }
        let (graph, exits, _) = graph_and_exits(&mut opened, board, total, m)?;
        let stored = opened.chips(m, total)?.expect("opened above");
        let n = graph.positions();
        let at = |q: u32| -> Thresholds {
            match q as usize {
                q if q < n => stored.get(q),
                q if q == graph.win() as usize => Thresholds::WHITE_CAPTURED,
                q if q == graph.loss() as usize => Thresholds::black_captured(total),
                q => exits[q - n - 2],
            }
        };
        let failing = (0..n)
            .into_par_iter()
            .filter(|&p| {
                let here = stored.get(p);
                [Side::White, Side::Black].into_iter().any(|side| {
                    let step = step_at(&graph, total, side, p, |q| at(q).win_of(total, side));
                    step != here.win_of(total, side)
                })
            })
            .count();
        out.push(Checked {
            material: m.to_string(),
            chips: total.chips(),
            positions: n,
            failing,
        });
    }
    Ok(out)
}
