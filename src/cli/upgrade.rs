//! `bidtb upgrade`: rewrite the tables of earlier builds (format versions 1 to 3) in the
//! version this build writes, in place and atomically, each checked against the old file
//! before it is kept (see [`bidtb::internal::table::upgrade`]).

use super::TablesDir;
use super::parse_board;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use bidtb::Board;
use bidtb::Error;
use bidtb::internal::dirlock::DirLock;
use bidtb::internal::table;

/// The arguments of `bidtb upgrade` (its help is the subcommand's, in `cli/mod.rs`).
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    #[command(flatten)]
    pub tables: TablesDir,
    /// Only this board (default: every board directory found in DIR).
    #[arg(long, value_parser = parse_board)]
    pub board: Option<Board>,
    /// Print the results as JSON (one object per file).
    #[arg(long)]
    pub json: bool,
}

/// `bidtb upgrade`: the arguments read, the tables rewritten.
pub(super) fn main(args: Args) -> Result<(), (u8, Error)> {
    run(&args.tables.tables, args.board, args.json)
}

/// One file's outcome.
#[derive(Serialize)]
struct Row {
    board: String,
    file: String,
    /// The version the file had (absent where it could not be read).
    from: Option<u32>,
    bytes_before: Option<u64>,
    bytes_after: Option<u64>,
    seconds: f64,
    /// Why the file was not upgraded, where it was not.
    error: Option<String>,
}

/// The board directories to work on: `DIR/FxR` for `board`, else every subdirectory of DIR
/// named like a board, in name order.
fn board_dirs(dir: &Path, board: Option<Board>) -> Result<Vec<(Board, PathBuf)>, Error> {
    if let Some(b) = board {
        let d = dir.join(b.to_string());
        if !d.is_dir() {
            return Err(Error::Resources(format!(
                "no tables for {b} in {}: {} is not a directory",
                dir.display(),
                d.display()
            )));
        }
        return Ok(vec![(b, d)]);
    }
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut found: Vec<(Board, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let b: Board = e.file_name().to_str()?.parse().ok()?;
            Some((b, e.path()))
        })
        .collect();
    found.sort_by(|a, b| a.1.cmp(&b.1));
    Ok(found)
}

/// The table files of one board directory, in name order.
fn table_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == table::EXTENSION))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| !n.to_string_lossy().starts_with('.'))
        })
        .collect();
    files.sort();
    Ok(files)
}

fn human(r: &Row) -> String {
    let percent = |a: u64, b: u64| 100.0 * b as f64 / a.max(1) as f64;
    match (&r.error, r.from, r.bytes_before, r.bytes_after) {
        (Some(e), ..) => format!("{} {}: FAILED: {e}\n", r.board, r.file),
        (None, Some(v), Some(a), Some(_)) if v == table::VERSION => {
            format!("{} {}: already version {v} ({a} bytes)\n", r.board, r.file)
        }
        (None, Some(v), Some(a), Some(b)) => format!(
            "{} {}: version {v} -> {}, {a} -> {b} bytes ({:.1} %) in {:.1} s\n",
            r.board,
            r.file,
            table::VERSION,
            percent(a, b),
            r.seconds
        ),
        _ => format!("{} {}: ?\n", r.board, r.file),
    }
}

pub(super) fn run(dir: &Path, board: Option<Board>, json: bool) -> Result<(), (u8, Error)> {
    let dirs = board_dirs(dir, board).map_err(|e| (super::exit_code(&e), e))?;
    if dirs.is_empty() {
        let msg = format!("no board directories (such as 8x8) in {}", dir.display());
        return Err((1, Error::Resources(msg)));
    }
    let mut rows = Vec::new();
    for (b, d) in dirs {
        // No run of `generate` may write here meanwhile.
        let _lock = DirLock::acquire(&d).map_err(|e| (super::exit_code(&e), e))?;
        for path in table_files(&d).map_err(|e| (1, e))? {
            let started = std::time::Instant::now();
            let outcome = table::upgrade(&path);
            let file = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let row = match outcome {
                Ok(u) => Row {
                    board: b.to_string(),
                    file,
                    from: Some(u.from),
                    bytes_before: Some(u.bytes_before),
                    bytes_after: Some(u.bytes_after),
                    seconds: started.elapsed().as_secs_f64(),
                    error: None,
                },
                Err(e) => Row {
                    board: b.to_string(),
                    file,
                    from: None,
                    bytes_before: None,
                    bytes_after: None,
                    seconds: started.elapsed().as_secs_f64(),
                    error: Some(e.to_string()),
                },
            };
            if !json {
                // One line per file as it is done: a large board takes minutes.
                let mut out = std::io::stdout().lock();
                let written = out
                    .write_all(human(&row).as_bytes())
                    .and_then(|()| out.flush());
                super::reader_gone_is_fine(written).map_err(|e| (1, Error::io("stdout", e)))?;
            }
            rows.push(row);
        }
    }
    if json {
        let text = serde_json::to_string_pretty(&rows).expect("serialises");
        let written = std::io::stdout()
            .lock()
            .write_all(format!("{text}\n").as_bytes());
        super::reader_gone_is_fine(written).map_err(|e| (1, Error::io("stdout", e)))?;
    }
    let failed = rows.iter().filter(|r| r.error.is_some()).count();
    if failed > 0 {
        return Err((
            1,
            Error::Table {
                path: dir.display().to_string(),
                reason: format!("{failed} of {} table files not upgraded", rows.len()),
            },
        ));
    }
    Ok(())
}
