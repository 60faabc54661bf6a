//! Machine-readable reports of a run (`summary.json`) and atomic file writing.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde::Serialize;

use crate::error::Error;
use crate::generate::{ClassReport, KernelStats, Solution, Timings};

/// The contents of `DIR/FxR/summary.json`.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// Board, `FxR`.
    pub board: String,
    /// First n at which sₙ satisfies every equation (null if the run was capped first).
    pub first_richman_iteration: Option<u32>,
    /// Whether the guesses were proved to be a Richman function.
    pub converged: bool,
    /// Whether every value is proved exact: the guesses are a Richman function and both
    /// closures cover every position they must (α = s = β).
    pub certified: bool,
    /// Iterations computed (the run stops at the first Richman test that passes).
    pub iterations_run: u32,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
    /// Seconds per stage.
    pub stage_seconds: Timings,
    /// What the kernel's shortcuts achieved (pruned options, frozen bounds).
    pub kernel: KernelStats,
    /// Per material class, by name (KvK, KQvK, ...).
    pub classes: BTreeMap<String, ClassReport>,
}

/// Build the summary of a run that took `seconds`.
pub fn summary(sol: &Solution, seconds: f64) -> Summary {
    Summary {
        board: sol.board.to_string(),
        first_richman_iteration: sol.first_richman_iteration,
        converged: sol.converged(),
        certified: sol.certified(),
        iterations_run: sol.iterations_run,
        seconds,
        stage_seconds: sol.timings.clone(),
        kernel: sol.kernel_stats.clone(),
        classes: sol
            .classes
            .iter()
            .map(|(m, c)| (m.to_string(), c.clone()))
            .collect(),
    }
}

/// Write `bytes` to `path` atomically: a temporary file in the same directory, flushed and
/// synced, then renamed over the target. A crash leaves either the old file or the new one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        Error::io(path, e)
    })
}

/// The lines of `quiescent.txt`: class, placement, value, T level, T′ level.
pub fn quiescent_lines(sol: &Solution) -> String {
    let Some(cert) = &sol.certificate else {
        return String::new();
    };
    let level = |l: u32| {
        if l == crate::certificate::UNREACHED {
            "unreached".to_string()
        } else {
            l.to_string()
        }
    };
    let mut out = String::from("# class placement value T-level T'-level\n");
    for &p in &cert.quiescent {
        let p = p as usize;
        let pos = sol.index.position(p);
        out += &format!(
            "{} {} {} {} {}\n",
            pos.material(),
            crate::fen::placement(sol.board, &pos),
            sol.guesses.value(p),
            level(cert.white_levels[p]),
            level(cert.black_levels[p])
        );
    }
    out
}
