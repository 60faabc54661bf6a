//! A run of the generator in a tables directory, as the command line (`bidtb generate`) and
//! the Python package (`bidtb.generate`) make it: the materials asked for, the board's
//! directory made, locked for the run and cleared of dead runs' temporaries; at the end the
//! checkpoints removed (once converged) and the reports written beside the tables; what a
//! stopped run says.

use std::path::{Path, PathBuf};

use super::driver::{self, Driven};
use super::report::{self, Summary};
use super::write::TableStore;
use super::{Control, Method, Observer, Options};
use crate::atomic;
use crate::dirlock::{self, DirLock};
use crate::error::Error;
use crate::geometry::Board;
use crate::material::Material;

/// The materials a run asks for: every material up to `pieces` men, the `names`d ones
/// (stored forms, without repeats), or the study's three-piece set. Usage errors for both
/// at once, a bad count or name, or an empty list. `flags` names the two options in
/// messages (`("--pieces", "--material")` or `("pieces", "materials")`).
pub fn requested(
    pieces: Option<u8>,
    names: Option<&[String]>,
    flags: (&str, &str),
) -> Result<Vec<Material>, Error> {
    match (pieces, names) {
        (Some(_), Some(_)) => Err(Error::Usage(format!(
            "{} and {} do not go together",
            flags.0, flags.1
        ))),
        (Some(n), None) if !(2..=7).contains(&n) => Err(Error::Usage(format!(
            "{} counts the men, kings included: 2 to 7",
            flags.0
        ))),
        (Some(n), None) => Ok(Material::all_up_to(n as usize)),
        (None, Some(list)) => {
            let mut out: Vec<Material> = Vec::new();
            for name in list.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
                let m = name.parse::<Material>()?.stored().0;
                if !out.contains(&m) {
                    out.push(m);
                }
            }
            if out.is_empty() {
                return Err(Error::Usage(format!("{} names no material", flags.1)));
            }
            Ok(out)
        }
        (None, None) => Ok(Material::three_piece().to_vec()),
    }
}

/// The study's iteration runs on the three-piece materials only: a usage error naming the
/// first other material asked of it, with `solve_flag` (how to ask for the solve method).
pub fn check_method(method: Method, materials: &[Material], solve_flag: &str) -> Result<(), Error> {
    let three = Material::three_piece();
    match materials.iter().find(|m| !three.contains(m)) {
        Some(m) if method == Method::Iterate => Err(Error::Usage(format!(
            "the iterate method (the study's iteration) runs on the three-piece materials \
             only; {m} needs {solve_flag}"
        ))),
        _ => Ok(()),
    }
}

/// A run in a board's directory, holding the directory's lock.
pub struct Session {
    /// The board's directory (`OUT/FxR`).
    pub dir: PathBuf,
    /// Where finished jobs go (their tables and records) and the run's summary.
    pub store: TableStore,
    started: std::time::Instant,
    _lock: DirLock,
}

impl Session {
    /// Start a run of `method` on `board` under `out`: make `OUT/FxR` (an error naming a
    /// path in the way that is not a directory), take its lock (an error naming the process
    /// that holds it), and clear the temporaries of writers that are gone.
    pub fn open(
        out: &Path,
        board: Board,
        method: Method,
        accept_uncertified: bool,
    ) -> Result<Session, Error> {
        let dir = out.join(board.to_string());
        dirlock::ensure_dir(&dir)?;
        let lock = DirLock::acquire(&dir)?;
        atomic::remove_stale_temporaries(&dir);
        let store = TableStore::new(&dir, board, accept_uncertified, Summary::new(board, method));
        Ok(Session {
            dir,
            store,
            started: std::time::Instant::now(),
            _lock: lock,
        })
    }

    /// Run every job of `options` (the materials asked for and what they need, in
    /// dependency order), each written to this directory as soon as it is proved; see
    /// [`driver::run`] for `control` (stop flag, resumption, jobs side by side).
    pub fn run(
        &mut self,
        options: &Options,
        obs: &dyn Observer,
        control: &Control<'_>,
    ) -> Result<Driven, Error> {
        driver::run(options, obs, control, &mut self.store)
    }

    /// End the run: remove the checkpoints if it converged and `failed` is false (a capped
    /// iteration keeps them, so that `--resume` with a higher cap continues it), note its
    /// seconds, and write its reports: summary.json, convergence.csv (the iteration),
    /// alpha-below-beta.txt (removed where there is none) and quiescent.txt. Returns the
    /// summary's JSON text.
    pub fn finish(&mut self, failed: bool) -> Result<String, Error> {
        // Only this run's own work is removed: the iteration's checkpoints by a run of the
        // iteration, the checkpoints of the jobs a run of the solve method has finished.
        if self.store.summary.converged && !failed {
            match self.store.summary.method {
                Method::Iterate => crate::iterate::checkpoint::remove_all(&self.dir),
                Method::Solve => {
                    crate::solve::checkpoint::remove_done(&self.dir, &self.store.summary.materials)
                }
            }
        }
        self.store.summary.seconds = self.started.elapsed().as_secs_f64();
        let text = serde_json::to_string_pretty(&self.store.summary).expect("summary serialises");
        let (store, dir) = (&self.store, &self.dir);
        atomic::write_atomic(&dir.join("summary.json"), text.as_bytes())?;
        if let Some(csv) = &store.convergence {
            atomic::write_atomic(&dir.join("convergence.csv"), csv.as_bytes())?;
        } else if store.summary.method == Method::Solve {
            // A record left by an earlier run of the iteration is not this run's: the
            // summary it went with is replaced.
            let _ = std::fs::remove_file(dir.join("convergence.csv"));
        }
        let split = dir.join("alpha-below-beta.txt");
        let split_lines = store.alpha_below_beta();
        if split_lines.is_empty() {
            let _ = std::fs::remove_file(&split);
        } else {
            let lines = format!("{}{split_lines}", report::ALPHA_BELOW_BETA_HEADING);
            atomic::write_atomic(&split, lines.as_bytes())?;
        }
        if store.summary.converged {
            let lines = format!("{}{}", report::QUIESCENT_HEADING, store.quiescent());
            atomic::write_atomic(&dir.join("quiescent.txt"), lines.as_bytes())?;
        }
        Ok(text)
    }
}

/// The checkpoints of earlier runs in `dir` that a run of `method` on `materials` (and
/// what they lead to) would replace or remove: the iteration's for the iteration; for the
/// solve method, those of jobs on any of these materials (and an earlier version's
/// `solve.ckpt`). A run that does not resume them must not start over them unasked.
pub fn earlier_checkpoints(dir: &Path, method: Method, materials: &[Material]) -> Vec<PathBuf> {
    match method {
        Method::Iterate => crate::iterate::checkpoint::list(dir),
        Method::Solve => {
            let mut touched: Vec<String> = materials.iter().map(Material::to_string).collect();
            for m in materials {
                touched.extend(m.dependencies().iter().map(Material::to_string));
            }
            crate::solve::checkpoint::list(dir)
                .into_iter()
                .filter(|(_, names)| {
                    names
                        .as_ref()
                        .is_none_or(|ns| ns.iter().any(|n| touched.contains(n)))
                })
                .map(|(path, _)| path)
                .collect()
        }
    }
}

/// What a stopped run says: where it stopped, what was saved, and `again`, how to resume.
pub fn interrupted_message(
    method: Method,
    materials: &[Material],
    n: u32,
    checkpoint: Option<&Path>,
    again: &str,
) -> String {
    let names: Vec<String> = materials.iter().map(Material::to_string).collect();
    let how = match (method, checkpoint) {
        (Method::Solve, Some(path)) => format!(
            "its state is saved as {}; the finished materials' tables are kept; resume with \
             {again}",
            path.display()
        ),
        (Method::Solve, None) => format!(
            "nothing was saved of {} (it stopped before its first strategies); the finished \
             materials' tables are kept; resume with {again}",
            names.join(", ")
        ),
        (Method::Iterate, Some(path)) => {
            format!(
                "checkpoint saved as {}; resume with {again}",
                path.display()
            )
        }
        (Method::Iterate, None) => {
            "nothing saved (with checkpoints every N iterations a stopped run can be resumed)"
                .to_string()
        }
    };
    let at = match method {
        Method::Iterate => format!(" at iteration {n}"),
        Method::Solve => format!(" while solving {}", names.join(", ")),
    };
    format!("interrupted{at}; no table of it written; {how}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_name_their_materials_or_fail_by_name() {
        let flags = ("--pieces", "--material");
        assert_eq!(requested(None, None, flags).unwrap().len(), 6);
        assert_eq!(requested(Some(4), None, flags).unwrap().len(), 36);
        let names = ["KNvKR".to_string(), " KRvKN".into(), "".into()];
        let got = requested(None, Some(&names), flags).unwrap();
        assert_eq!(got, vec!["KRvKN".parse().unwrap()]);
        let err = requested(Some(3), Some(&names), flags)
            .unwrap_err()
            .to_string();
        assert_eq!(err, "--pieces and --material do not go together");
        assert!(requested(Some(9), None, flags).is_err());
        assert!(requested(None, Some(&["".to_string()]), flags).is_err());
        assert!(requested(None, Some(&["KZvK".to_string()]), flags).is_err());
        let four = requested(Some(4), None, flags).unwrap();
        let err = check_method(Method::Iterate, &four, "--method solve").unwrap_err();
        assert!(err.to_string().ends_with("needs --method solve"), "{err}");
        assert!(check_method(Method::Solve, &four, "").is_ok());
    }
}
