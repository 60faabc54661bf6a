//! Re-proving stored tables from their values alone (`bidtb verify`).
//!
//! Opening a table already checks its checksums and structure. Verification then trusts
//! nothing the generator computed: for each material it rebuilds the index and the game
//! graph, checks that the file lists exactly the indexed positions, that its dictionary is
//! strictly increasing and in lowest terms, takes the values of the positions its moves
//! leave it for from those materials' tables (through the generator's boundary stage: an
//! exit decisively worse for its side than another terminal option wherever it is one
//! changes no maximum or minimum, and is not read), re-checks every Richman equation exactly,
//! recomputes both closures T and T′ from the stored values and compares every stored
//! level with them. Each material is proved given the materials it leads to, and those are
//! verified in turn: the whole board is proved from the bottom up.
//!
//! Where a table stores β apart from α, each bound is checked on its own: α's equations and
//! T (every α > 0 in T proves α is the least Richman function), β's equations and T′ (every
//! β < 1 in T′ proves β is the greatest).

mod stored;

use std::collections::HashMap;

use serde::Serialize;

use crate::boundary::{self, Glance, Known, Solved, Terminals};
use crate::certificate;
use crate::error::Error;
use crate::geometry::Board;
use crate::graph::Graph;
use crate::index::Index;
use crate::material::{Material, sort_by_dependency};
use crate::probe::Tablebase;
use crate::table::{ReadOnce, Table};
use stored::{Bound, Dictionary, Stored};

/// What verification found in one class.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ClassCheck {
    /// Stored positions.
    pub positions: usize,
    /// Distinct values the positions take (α and β together).
    pub distinct_values: usize,
    /// Richman equations that fail (in version 2, α's and β's are counted apart).
    pub violations: usize,
    /// Positions with value > 0 outside the recomputed T.
    pub alpha_failures: usize,
    /// Positions with value < 1 outside the recomputed T′.
    pub beta_failures: usize,
    /// Positions whose stored T or T′ level differs from the recomputed one.
    pub level_mismatches: usize,
    /// Positions whose stored β lies above their α (version 2 files; 0 otherwise).
    pub alpha_below_beta: usize,
    /// The class's exits (moves into other materials).
    pub exits: usize,
    /// Exits whose values were read in full (the others never decide anything).
    pub exits_read: usize,
    /// Equations that hold by the way the file stores them (a position's entry is the mean
    /// of its two options' entries), without arithmetic; α's and β's counted apart.
    pub equations_by_means: u64,
    /// Seconds the check's stages took.
    pub seconds: Stages,
}

/// Seconds each stage of a material's check took.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stages {
    /// Checksums, structure and positions of the file.
    pub file: f64,
    /// The dictionary decoded once: its order and lowest terms.
    pub dictionary: f64,
    /// The game graph rebuilt.
    pub graph: f64,
    /// The exits' values read from the tables they lead to.
    pub exits: f64,
    /// α's equations and closures.
    pub alpha: f64,
    /// β's, where they are checked apart.
    pub beta: f64,
}

/// What verification found on one board.
#[derive(Clone, Debug, Serialize)]
pub struct BoardCheck {
    /// The board, `FxR`.
    pub board: String,
    /// Whether everything holds.
    pub ok: bool,
    /// Per class, by name.
    pub classes: std::collections::BTreeMap<String, ClassCheck>,
    /// Problems with the files themselves (wrong positions, bad dictionary, flags), if any.
    pub problems: Vec<String>,
    /// The chip files found beside the tables (`chips-K/`), each re-checked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub chips: Vec<crate::chips::make::Checked>,
}

/// Re-check the chip files beside `board`'s tables (every `chips-K` directory): each
/// material with a file there, in dependency order; what cannot be read becomes a problem.
fn verify_chips(tables: &Tablebase, board: Board, materials: &[Material], check: &mut BoardCheck) {
    let board_dir = tables.root().join(board.to_string());
    let Ok(entries) = std::fs::read_dir(&board_dir) else {
        return;
    };
    let mut totals: Vec<u32> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let k: u32 = name.strip_prefix("chips-")?.parse().ok()?;
            (name == format!("chips-{k}") && (1..=crate::chips::MAX_TOTAL).contains(&k))
                .then_some(k)
        })
        .collect();
    totals.sort_unstable();
    for k in totals {
        let dir = crate::chips::file::dir(&board_dir, k);
        let with_files: Vec<Material> = materials
            .iter()
            .copied()
            .filter(|&m| crate::chips::file::path(&dir, m).exists())
            .collect();
        let total = crate::chips::Total::new(k);
        match crate::chips::make::check(&board_dir, board, &total, &with_files) {
            Ok(found) => check.chips.extend(found),
            Err(e) => check.problems.push(format!("chips-{k}: {e}")),
        }
    }
}

/// Verify every material of `board` in `tables`. Errors are for files that cannot be read
/// at all (missing or unreadable, a material's own or one its moves lead to); everything
/// else is reported in the [`BoardCheck`].
pub fn verify_board(tables: &Tablebase, board: Board) -> Result<BoardCheck, Error> {
    verify_board_reporting(tables, board, None, &|_| {})
}

/// One material checked, for progress lines: which, how many of how many, and how long.
pub struct Checked<'a> {
    /// The material.
    pub material: Material,
    /// Its place in the order of checking (1-based).
    pub index: usize,
    /// The number of materials checked.
    pub count: usize,
    /// Seconds its check took.
    pub seconds: f64,
    /// Whether everything held: no problem, no failing equation, closure or level.
    pub ok: bool,
    /// The problems its check found (beside the counts of its class).
    pub problems: &'a [String],
}

impl ClassCheck {
    /// Whether every equation, closure and level of the class held.
    fn holds(&self) -> bool {
        self.violations == 0
            && self.alpha_failures == 0
            && self.beta_failures == 0
            && self.level_mismatches == 0
    }
}

/// [`verify_board`] on the materials `only` (stored ones; every material of the board if
/// None; the tables their moves lead to are read, not checked), calling `report` after
/// each material (large boards take minutes). A material of `only` without a table is an
/// error.
pub fn verify_board_reporting(
    tables: &Tablebase,
    board: Board,
    only: Option<&[Material]>,
    report: &dyn Fn(Checked<'_>),
) -> Result<BoardCheck, Error> {
    let mut materials = tables.materials(board);
    if let Some(only) = only {
        if let Some(&m) = only.iter().find(|m| !materials.contains(m)) {
            return Err(Error::MissingTable {
                path: tables
                    .root()
                    .join(board.to_string())
                    .join(crate::table::file_name(m))
                    .display()
                    .to_string(),
                board: board.to_string(),
                dir: tables.root().display().to_string(),
                material: m.to_string(),
            });
        }
        materials.retain(|m| only.contains(m));
    }
    if materials.is_empty() {
        let dir = tables.root().join(board.to_string());
        return Err(Error::Table {
            path: dir.display().to_string(),
            reason: format!(
                "no tables of {board}: generate them with `bidtb generate --board {board} --out {}`",
                tables.root().display()
            ),
        });
    }
    sort_by_dependency(&mut materials);
    let mut check = BoardCheck {
        board: board.to_string(),
        ok: false,
        classes: Default::default(),
        problems: Vec::new(),
        chips: Vec::new(),
    };
    let firsts: Vec<Option<u32>> = materials
        .iter()
        .filter(|m| Material::three_piece().contains(m))
        .map(|&m| {
            tables
                .table(board, m)
                .map(|t| t.info().first_richman_iteration)
        })
        .collect::<Result<_, Error>>()?;
    if firsts.windows(2).any(|w| w[0] != w[1]) {
        check
            .problems
            .push("the three-piece tables do not share one first Richman iteration".into());
    }
    for (i, &m) in materials.iter().enumerate() {
        let started = std::time::Instant::now();
        let (class, problems) = verify_material(tables, board, m)?;
        report(Checked {
            material: m,
            index: i + 1,
            count: materials.len(),
            seconds: started.elapsed().as_secs_f64(),
            ok: problems.is_empty() && class.holds(),
            problems: &problems,
        });
        check.problems.extend(problems);
        check.classes.insert(m.to_string(), class);
    }
    verify_chips(tables, board, &materials, &mut check);
    check.ok = check.problems.is_empty()
        && check.chips.iter().all(|c| c.failing == 0)
        && check.classes.values().all(ClassCheck::holds);
    Ok(check)
}

/// The stored tables of the materials a graph's exits lead to, read for the boundary stage
/// ([`boundary::terminals`]): each distinct value of a table, and each of its denominators,
/// decoded once for all the exits that have it.
struct Exits<'a> {
    tables: &'a Tablebase,
    board: Board,
    read: HashMap<Material, ReadOnce>,
}

impl<'a> Exits<'a> {
    fn new(tables: &'a Tablebase, board: Board, graph: &Graph) -> Result<Exits<'a>, Error> {
        let mut read = HashMap::new();
        for e in graph.exits() {
            if let std::collections::hash_map::Entry::Vacant(slot) = read.entry(e.material) {
                slot.insert(ReadOnce::new(tables.table(board, e.material)?));
            }
        }
        Ok(Exits {
            tables,
            board,
            read,
        })
    }

    /// The table of `material`, the index of its position `key` and its values read once.
    fn find(&self, material: Material, key: u64) -> Result<(&Table, usize, &ReadOnce), Error> {
        let t = self.tables.table(self.board, material)?;
        let i = t.find(key)?.ok_or_else(|| Error::Table {
            path: t.path().display().to_string(),
            reason: format!("no position with key {key} (needed as an exit)"),
        })?;
        let once = self.read.get(&material).ok_or_else(|| {
            Error::Usage(format!("{material} is not a material the exits lead to"))
        })?;
        Ok((t, i, once))
    }
}

impl Solved for Exits<'_> {
    fn known(&self, material: Material, key: u64) -> Result<Known, Error> {
        let (t, i, once) = self.find(material, key)?;
        t.known(i, once)
    }

    fn glance(&self, material: Material, key: u64) -> Result<Glance, Error> {
        let (t, i, once) = self.find(material, key)?;
        t.glance(i, once)
    }

    fn ready(&self) -> Result<(), Error> {
        for (&m, once) in &self.read {
            once.ready_to_glance(self.tables.table(self.board, m)?)?;
        }
        Ok(())
    }
}

/// What is known of every terminal node of `graph`: 1 and 0 at level 0, then each exit's
/// values and levels, read from its stored material's table (through the colour mirror
/// where it is the mirror), by the generator's boundary stage: an exit that is decisively
/// worse for its side than another terminal option wherever it is one takes the worst
/// value for its side, which changes no maximum, minimum, equation or closure (the stage's
/// tests compare every value with every exit read), and its digits are not read. Read
/// whole, 8x8 KNvKP's 3.4 million exits (KNvKN's of up to 19,141 digits among them) held
/// over 10 GB.
fn terminal_values(
    tables: &Tablebase,
    board: Board,
    graph: &Graph,
) -> Result<(Terminals, boundary::Read), Error> {
    let exits = Exits::new(tables, board, graph)?;
    boundary::terminals(graph, &exits, &|| false)?
        .ok_or_else(|| Error::Usage("the exits were not read".into()))
}

/// The images of `table`'s dictionary, with the problems found in it: entries not strictly
/// increasing, or not in lowest terms. The values themselves are not held (see [`stored`]).
fn stored_dictionary(table: &Table, problems: &mut Vec<String>) -> Result<Dictionary, Error> {
    let dictionary = Dictionary::of(table)?;
    if !dictionary.increasing(|k| table.dictionary_value_as_stored(k))? {
        problems.push("its dictionary is not strictly increasing".into());
    }
    if !dictionary.reduced {
        problems.push("a dictionary value is not in lowest terms".into());
    }
    Ok(dictionary)
}

/// How many distinct values the positions of `table` take, α and β together (its
/// dictionary holds these, and from version 7 the values of other materials that its
/// means refer to).
fn distinct_values(table: &Table) -> Result<usize, Error> {
    let mut used = vec![false; table.info().dictionary_len];
    for beta in [false, true] {
        for r in table.all_ranks(beta)? {
            used[r.get() as usize] = true;
        }
    }
    Ok(used.iter().filter(|&&u| u).count())
}

/// Verify one material's table given the tables of the materials it leads to.
fn verify_material(
    tables: &Tablebase,
    board: Board,
    material: Material,
) -> Result<(ClassCheck, Vec<String>), Error> {
    let mut clock = std::time::Instant::now();
    let mut lap = || {
        let now = std::time::Instant::now();
        let seconds = (now - clock).as_secs_f64();
        clock = now;
        seconds
    };
    let table = tables.table(board, material)?;
    // Every checksum, before anything is trusted (opening checks only what a query needs).
    table.check_all()?;
    let index = Index::new(board, &[material]);
    let class = &index.classes()[0];
    let info = table.info();
    let mut problems = Vec::new();
    if !info.certified() {
        problems.push("the table does not carry a certificate (alpha and beta unproved)".into());
    }
    if info.raw_positions != class.raw_count() {
        problems.push(format!(
            "{} positions before symmetry, the board has {}",
            info.raw_positions,
            class.raw_count()
        ));
    }
    let mut out = ClassCheck {
        positions: class.len(),
        distinct_values: distinct_values(table)?,
        alpha_below_beta: table.alpha_below_beta()?,
        ..ClassCheck::default()
    };
    let name = material.to_string();
    let named = |problems: Vec<String>| {
        problems
            .into_iter()
            .map(|p| format!("{name}: {p}"))
            .collect()
    };
    if !table.holds_keys(class.keys())? {
        problems.push("its positions are not the indexed positions of the material".into());
        return Ok((out, named(problems)));
    }
    out.seconds.file = lap();
    let dictionary = stored_dictionary(table, &mut problems)?;
    out.seconds.dictionary = lap();
    let graph = Graph::new(&index);
    out.seconds.graph = lap();
    let (terminals, read) = terminal_values(tables, board, &graph)?;
    out.seconds.exits = lap();
    (out.exits, out.exits_read) = (read.exits, read.needed);
    let changed = terminals.changed(table.len());
    let exits_differ = changed.contains(&true);
    let start = &terminals.start;
    let alpha = Stored::new(table, &dictionary, Bound::Alpha, terminals.alpha)?;
    let cert = certificate::certify_from(&alpha, &graph, start);
    out.equations_by_means = alpha.equations_by_means();
    drop(alpha);
    out.seconds.alpha = lap();
    // β apart where it differs from α: its own equations and its own T′. Where only the
    // exits' β differ, α's values are checked again where those exits reach them.
    let beta_cert = match info.has_beta() || exits_differ {
        true => {
            let beta = Stored::new(table, &dictionary, Bound::Beta, terminals.beta)?;
            let again = if info.has_beta() {
                certificate::certify_from(&beta, &graph, start)
            } else {
                certificate::certify_again(&beta, &graph, start, &cert, &changed)
            };
            out.equations_by_means += beta.equations_by_means();
            Some(again)
        }
        false => None,
    };
    out.seconds.beta = lap();
    let bc = beta_cert.as_ref().unwrap_or(&cert);
    out.violations = cert.violations.len() + beta_cert.as_ref().map_or(0, |b| b.violations.len());
    out.alpha_failures = cert.alpha_failures.len();
    out.beta_failures = bc.beta_failures.len();
    for i in 0..class.len() {
        if table.level_white(i)? != cert.white_levels[i]
            || table.level_black(i)? != bc.black_levels[i]
        {
            out.level_mismatches += 1;
        }
    }
    // The table stays open for the materials that lead to it, which read only their exits.
    table.forget_means();
    Ok((out, named(problems)))
}
