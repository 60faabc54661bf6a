//! `bidtb plot`: the convergence plot of a run, from `DIR/FxR/convergence.csv` and the first
//! Richman iteration in `DIR/FxR/summary.json`.

use std::path::Path;
use std::path::PathBuf;

use crate::svg;
use bidtb::Error;
use bidtb::internal::atomic;
use bidtb::internal::iterate::convergence::Convergence;

/// The arguments of `bidtb plot` (its help is the subcommand's, in `cli/mod.rs`).
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// The run's directory, e.g. tables/8x8.
    #[arg(value_name = "DIR/FxR")]
    pub run: PathBuf,
    /// Write the plot as SVG to this file (`-`: standard output). A regular file is
    /// replaced whole (through a symbolic link, its target); a device or FIFO is
    /// written into.
    #[arg(long, value_name = "FILE", required = true)]
    pub svg: PathBuf,
}

/// `bidtb plot`: the arguments read, the plot drawn.
pub(super) fn main(args: Args) -> Result<(), (u8, Error)> {
    run(&args.run, &args.svg)
}

/// The board name and first Richman iteration recorded in a run's `summary.json`.
fn summary_facts(path: &Path) -> Result<(String, Option<u32>), Error> {
    let bad = |reason: String| Error::Report {
        path: path.display().to_string(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| bad(format!("not JSON: {e}")))?;
    let board = v["board"]
        .as_str()
        .ok_or_else(|| bad("no \"board\"".into()))?
        .to_string();
    let first = match &v["first_richman_iteration"] {
        serde_json::Value::Null => None,
        n => Some(
            n.as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| bad("\"first_richman_iteration\" is not an iteration".into()))?,
        ),
    };
    Ok((board, first))
}

/// The method a run's `summary.json` names, if it can be read.
fn summary_method(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    v["method"].as_str().map(str::to_string)
}

/// How to make a run that `plot` can draw, for the run directory `run_dir` (`DIR/FxR`).
fn how_to_plot(run_dir: &Path) -> String {
    let board = run_dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| n.parse::<bidtb::Board>().is_ok())
        .unwrap_or_else(|| "FxR".into());
    let out = run_dir
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map_or_else(|| "DIR".into(), |p| p.display().to_string());
    format!(
        "plot draws the record of an iteration: make one with `bidtb generate --board {board} \
         --method iterate --out {out}` (add --guesses to record every guess change)"
    )
}

pub(super) fn run(run_dir: &Path, svg_out: &Path) -> Result<(), (u8, Error)> {
    let fail = |e: Error| (1, e);
    let summary = run_dir.join("summary.json");
    // A run of the solve method iterates nothing: it writes no convergence.csv, and one
    // left there by an earlier run of the iteration is not this run's.
    if summary_method(&summary).as_deref() == Some("solve") {
        return Err(fail(Error::Report {
            path: run_dir.display().to_string(),
            reason: format!(
                "made by `generate --method solve`, which has no iterations and writes no \
                 convergence.csv; {}",
                how_to_plot(run_dir)
            ),
        }));
    }
    let csv = run_dir.join("convergence.csv");
    let record = Convergence::read(&csv).map_err(|e| match e {
        Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            fail(Error::Report {
                path: csv.display().to_string(),
                reason: format!("no such file; {}", how_to_plot(run_dir)),
            })
        }
        e => fail(e),
    })?;
    let (board, first) = summary_facts(&summary).map_err(fail)?;
    let place = atomic::write_output(svg_out, svg::plot(&record, &board, first).as_bytes())
        .map_err(fail)?;
    note!(
        "wrote {place} ({} iterations, {} classes)",
        record.rows.len(),
        record.classes.len()
    );
    Ok(())
}
