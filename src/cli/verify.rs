//! `bidtb verify`: re-check stored tables, print what holds, exit 0 only if all of it does.

use super::TablesDir;
use super::parse_board;
use std::io::Write;
use std::path::Path;

use bidtb::Board;
use bidtb::Error;
use bidtb::Material;
use bidtb::Tablebase;
use bidtb::internal::dirlock::DirLock;
use bidtb::internal::verify::{self, BoardCheck};

/// The arguments of `bidtb verify` (its help is the subcommand's, in `cli/mod.rs`).
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    #[command(flatten)]
    pub tables: TablesDir,
    /// Only this board (default: every board found in DIR).
    #[arg(long, value_parser = parse_board)]
    pub board: Option<Board>,
    /// Only these materials (comma-separated, `KBvKP,KNPvK`; a mirror name means its
    /// stored table), with --board. The tables their moves lead to are read, not
    /// checked, and no others are opened: after adding materials to a checked board,
    /// check just the new ones.
    #[arg(long = "material", value_delimiter = ',', requires = "board")]
    pub materials: Vec<String>,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
}

/// `bidtb verify`: the arguments read, the tables re-proved.
pub(super) fn main(args: Args) -> Result<(), (u8, Error)> {
    run(&args.tables.tables, args.board, &args.materials, args.json)
}

fn human(check: &BoardCheck) -> String {
    let mut out = format!(
        "{}: {}\n",
        check.board,
        if check.ok { "ok" } else { "FAILED" }
    );
    for problem in &check.problems {
        out += &format!("  problem: {problem}\n");
    }
    for c in &check.chips {
        out += &format!(
            "  chips-{:<5} {:<5} {:>9} positions  equations failing {}\n",
            c.chips, c.material, c.positions, c.failing
        );
    }
    for (class, c) in &check.classes {
        out += &format!(
            "  {class:<5} {:>9} positions {:>9} distinct values  equations failing {}  \
             outside T {}  outside T' {}  level mismatches {}\n",
            c.positions,
            c.distinct_values,
            c.violations,
            c.alpha_failures,
            c.beta_failures,
            c.level_mismatches
        );
        if c.alpha_below_beta > 0 {
            out += &format!(
                "        alpha < beta at {} positions (beta stored apart, each bound checked \
                 with its own closure)\n",
                c.alpha_below_beta
            );
        }
    }
    out
}

/// The locks of the board directories that a verification of `dir` (only `board`'s, if
/// given) reads: refused, naming the holder, if a run holds one.
fn lock_boards(dir: &Path, board: Option<Board>) -> Result<Vec<DirLock>, Error> {
    let dirs: Vec<std::path::PathBuf> = match board {
        Some(b) => vec![dir.join(b.to_string())],
        None => match std::fs::read_dir(dir) {
            Ok(entries) => entries
                .flatten()
                .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
                .filter(|e| {
                    e.file_name()
                        .to_str()
                        .is_some_and(|n| n.parse::<Board>().is_ok_and(|b| b.to_string() == n))
                })
                .map(|e| e.path())
                .collect(),
            // Opening the tables says what is wrong with the directory.
            Err(_) => Vec::new(),
        },
    };
    let mut locks = Vec::new();
    for d in dirs.iter().filter(|d| d.is_dir()) {
        locks.extend(DirLock::acquire_to_read(d)?);
    }
    Ok(locks)
}

pub(super) fn run(
    dir: &Path,
    board: Option<Board>,
    materials: &[String],
    json: bool,
) -> Result<(), (u8, Error)> {
    let fail = |e: Error| (super::exit_code(&e), e);
    let only: Vec<Material> = materials
        .iter()
        .map(|m| m.parse::<Material>().map(|m| m.stored().0))
        .collect::<Result<_, Error>>()
        .map_err(|e| (2, e))?;
    let only = (!only.is_empty()).then_some(&only[..]);
    // No run may write the tables while they are checked (a `generate` beside this one
    // would replace them under it): each board directory's lock is held throughout.
    let _locks = lock_boards(dir, board).map_err(|e| (super::exit_code(&e), e))?;
    let tables = match (board, only) {
        (Some(b), Some(only)) => Tablebase::open_around(dir, b, only),
        (Some(b), None) => Tablebase::open_board(dir, b),
        (None, _) => Tablebase::open(dir),
    }
    .map_err(fail)?;
    let boards: Vec<Board> = match board {
        Some(b) => vec![b],
        None => tables.boards().collect(),
    };
    if boards.is_empty() {
        let msg = format!(
            "no tables in {}: generate them with `bidtb generate --out {}`",
            dir.display(),
            dir.display()
        );
        return Err((1, Error::Resources(msg)));
    }
    let mut checks = Vec::new();
    for b in boards {
        // One line per material on stderr: a large board takes minutes.
        let report = |c: verify::Checked<'_>| {
            note!(
                "{b}: {} ({} of {}) {} in {:.1} s",
                c.material,
                c.index,
                c.count,
                if c.ok { "ok" } else { "FAILED" },
                c.seconds
            );
        };
        checks.push(verify::verify_board_reporting(&tables, b, only, &report).map_err(fail)?);
    }
    let out = if json {
        format!(
            "{}\n",
            serde_json::to_string_pretty(&checks).expect("serialises")
        )
    } else {
        checks.iter().map(human).collect()
    };
    super::reader_gone_is_fine(std::io::stdout().lock().write_all(out.as_bytes()))
        .map_err(|e| (1, Error::io("stdout", e)))?;
    match checks.iter().find(|c| !c.ok) {
        Some(c) => Err((
            1,
            Error::Table {
                path: dir.join(&c.board).display().to_string(),
                reason: "verification failed".into(),
            },
        )),
        None => Ok(()),
    }
}
