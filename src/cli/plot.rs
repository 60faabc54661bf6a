//! `bidtb plot`: the convergence plot of a run, from `DIR/FxR/convergence.csv` and the first
//! Richman iteration in `DIR/FxR/summary.json`.

use std::path::Path;

use crate::svg;
use bidtb::atomic;
use bidtb::error::Error;
use bidtb::iterate::convergence::Convergence;

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

pub(super) fn run(run_dir: &Path, svg_out: &Path) -> Result<(), (u8, Error)> {
    let fail = |e: Error| (1, e);
    let record = Convergence::read(&run_dir.join("convergence.csv")).map_err(fail)?;
    let (board, first) = summary_facts(&run_dir.join("summary.json")).map_err(fail)?;
    let place = atomic::write_output(svg_out, svg::plot(&record, &board, first).as_bytes())
        .map_err(fail)?;
    note!(
        "wrote {place} ({} iterations, {} classes)",
        record.rows.len(),
        record.classes.len()
    );
    Ok(())
}
