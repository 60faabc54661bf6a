//! The driver above the jobs: the materials a request needs, in dependency order, each
//! solved as a job of its own whose exits read the values of the materials finished
//! before it from a [`Store`] (tables on disk for the command line, solutions in memory
//! for the library and the tests). A material that the store already holds and that was
//! not asked for is reused, never redone.
//!
//! The study's iteration is the exception: it runs the six three-piece materials jointly,
//! as one job, because its published iteration counts are defined that way; it takes no
//! other material.

use super::{Control, Known, Method, Observer, Options, Run, Solution, Solved, solve_job};
use std::sync::atomic::Ordering;

use crate::error::Error;
use crate::material::Material;
use crate::resources::MemoryGuard;

/// Where finished materials go and where later jobs read their exits from.
pub trait Store: Solved {
    /// Whether the store holds material `m`, finished and usable.
    fn has(&self, m: Material) -> bool;
    /// Get ready to answer [`Solved::known`] for the materials `needed`, those the job's
    /// moves lead to (open their tables, let go of the others); called before each job.
    fn prepare(&mut self, _needed: &[Material]) -> Result<(), Error> {
        Ok(())
    }
    /// Keep a finished job (write its tables, remember its values).
    fn keep(&mut self, solution: Solution) -> Result<(), Error>;
    /// A material of the request that the store holds already and the run reuses.
    fn reuse(&mut self, _m: Material) -> Result<(), Error> {
        Ok(())
    }
}

/// Solutions kept in memory.
#[derive(Default)]
pub struct InMemory {
    /// The finished jobs, in order.
    pub solutions: Vec<Solution>,
}

impl Solved for InMemory {
    fn known(&self, material: Material, key: u64) -> Result<Known, Error> {
        for sol in &self.solutions {
            if let Some(c) = sol.index.class_number(material) {
                let local = sol.index.classes()[c].find(key).ok_or_else(|| {
                    Error::Usage(format!("{material} has no position with key {key}"))
                })?;
                let g = sol.index.class_range(c).start + local;
                let level = |cert: Option<&crate::certificate::Certificate>, white: bool| {
                    cert.map_or(crate::certificate::UNREACHED, |c| {
                        if white {
                            c.white_levels[g]
                        } else {
                            c.black_levels[g]
                        }
                    })
                };
                return Ok(Known {
                    alpha: sol.values.value(g).clone(),
                    beta: sol.beta_values().value(g).clone(),
                    level_white: level(sol.certificate.as_ref(), true),
                    level_black: level(sol.beta_certificate(), false),
                });
            }
        }
        Err(Error::Usage(format!("{material} has not been solved")))
    }
}

impl Store for InMemory {
    fn has(&self, m: Material) -> bool {
        self.solutions
            .iter()
            .any(|s| s.index.class_number(m).is_some())
    }
    fn keep(&mut self, solution: Solution) -> Result<(), Error> {
        self.solutions.push(solution);
        Ok(())
    }
}

/// The jobs of a request, in order: each a list of materials solved jointly, or a
/// material the store holds already (`Err`) and the run reuses. A material the store
/// holds is reused unless it was asked for; with `resume`, even then.
pub fn jobs(
    options: &Options,
    store: &dyn Store,
    resume: bool,
) -> Result<Vec<Result<Vec<Material>, Material>>, Error> {
    let three = Material::three_piece();
    match options.method {
        Method::Iterate => {
            if let Some(m) = options.materials.iter().find(|m| !three.contains(m)) {
                return Err(Error::Usage(format!(
                    "the iterate method (the study's iteration) runs on the three-piece \
                     materials only, jointly; {m} needs --method solve"
                )));
            }
            Ok(vec![Ok(three.to_vec())])
        }
        Method::Solve => Ok(Material::with_dependencies(&options.materials)
            .into_iter()
            .map(|m| {
                if (options.materials.contains(&m) && !resume) || !store.has(m) {
                    Ok(vec![m])
                } else {
                    Err(m)
                }
            })
            .collect()),
    }
}

/// A job the run did not start: too large for the memory available, or needing a
/// material that was skipped.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    /// The job's materials.
    pub materials: Vec<String>,
    /// Why: the memory estimate against what is available, or the skipped material needed.
    pub reason: String,
}

/// One job of a plan: a material, what it needs, what it costs (estimated).
#[derive(Clone, Debug, serde::Serialize)]
pub struct Planned {
    /// The stored material.
    pub material: String,
    /// The materials its captures and promotions lead to (its jobs' dependencies).
    pub needs: Vec<String>,
    /// Every material it reads, directly or through others (all must be made first).
    pub reads: Vec<String>,
    /// Positions (the index's estimate, before symmetry beyond Syzygy's).
    pub positions: usize,
    /// The memory estimate of its job, in bytes (what decides a skip).
    pub memory_bytes: u64,
}

/// The solve method's jobs for `options.materials` in dependency order, one per material,
/// with their dependencies and estimates: what a cluster scheduler needs to run them as
/// jobs of their own.
pub fn plan(options: &Options) -> Vec<Planned> {
    let board = options.board;
    Material::with_dependencies(&options.materials)
        .into_iter()
        .map(|m| {
            let positions = crate::index::estimate_positions(board, m);
            let names = |list: Vec<Material>| list.iter().map(Material::to_string).collect();
            let mut reads = m.dependencies();
            reads.sort();
            Planned {
                material: m.to_string(),
                needs: names(Material::next_outside(&[m])),
                reads: names(reads),
                positions,
                memory_bytes: crate::resources::estimate_paged_solve_bytes(
                    positions,
                    board,
                    &[m],
                    crate::progress::PAGE_ABOVE_BYTES,
                ),
            }
        })
        .collect()
}

/// How a driven run ended.
pub enum Driven {
    /// Every job finished (each kept by the store) or was skipped: the materials of each
    /// job made, in order, and the jobs skipped.
    Finished(Vec<Vec<Material>>, Vec<Skipped>),
    /// A job was stopped: its materials, the iteration reached, the checkpoint saved.
    Interrupted {
        /// The materials of the job under way.
        materials: Vec<Material>,
        /// The iteration reached (0 for the solve method).
        n: u32,
        /// The checkpoint written, if any.
        checkpoint: Option<std::path::PathBuf>,
    },
}

/// Run every job of a request in order, each kept by `store` before the next starts.
pub fn run(
    options: &Options,
    obs: &dyn Observer,
    control: &Control<'_>,
    store: &mut dyn Store,
) -> Result<Driven, Error> {
    let all = jobs(options, store, control.resume)?;
    let mut jobs = Vec::new();
    for job in all {
        match job {
            Ok(materials) => jobs.push(materials),
            Err(reused) => store.reuse(reused)?,
        }
    }
    let total = jobs.len();
    let mut done = Vec::new();
    let mut skipped: Vec<Skipped> = Vec::new();
    let guard_limit = crate::resources::guard_limit()?;
    for (k, materials) in jobs.into_iter().enumerate() {
        let name = materials
            .iter()
            .map(Material::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        if let Some(reason) = cannot_start(options, &materials, &skipped, control.page_above) {
            obs.skipped(k + 1, total, &name, &reason);
            skipped.push(Skipped {
                materials: materials.iter().map(Material::to_string).collect(),
                reason,
            });
            continue;
        }
        obs.material(k + 1, total, &name);
        store.prepare(&Material::next_outside(&materials))?;
        control.over_memory.store(false, Ordering::Relaxed);
        let guard = guard_limit.map(|limit| MemoryGuard::new(limit, &control.over_memory));
        let solved = match &guard {
            Some(guard) => guard
                .watch(|| solve_or_start_over(options, &materials, &name, obs, control, &*store)),
            None => solve_or_start_over(options, &materials, &name, obs, control, &*store),
        };
        match solved? {
            Run::Finished(sol) => {
                obs.finished(k + 1, total, &finished_line(&sol));
                store.keep(*sol)?
            }
            Run::Interrupted { .. }
                if control.is_over_memory()
                    && !control.stop.is_some_and(|s| s.load(Ordering::Relaxed)) =>
            {
                // Stopped by the guard, not asked to: skipped like a job refused up front.
                let reason = guard.map_or_else(String::new, |g| g.reason());
                control.over_memory.store(false, Ordering::Relaxed);
                obs.skipped(k + 1, total, &name, &reason);
                skipped.push(Skipped {
                    materials: materials.iter().map(Material::to_string).collect(),
                    reason,
                });
                continue;
            }
            Run::Interrupted { n, checkpoint } => {
                return Ok(Driven::Interrupted {
                    materials,
                    n,
                    checkpoint,
                });
            }
        }
        done.push(materials);
    }
    // A request of one job refused on memory fails as that job would have.
    if total == 1
        && done.is_empty()
        && let [only] = &skipped[..]
    {
        return Err(Error::Resources(only.reason.clone()));
    }
    Ok(Driven::Finished(done, skipped))
}

/// One line for a finished job: per material its positions, largest denominator and α < β
/// count, then the job's seconds and peak memory.
fn finished_line(sol: &Solution) -> String {
    let classes: Vec<String> = sol
        .classes
        .iter()
        .map(|(m, r)| {
            format!(
                "{m} {} positions ({} canonical), largest denominator {} digits, alpha < beta at {}",
                r.positions,
                r.canonical_positions,
                r.max_denominator_digits,
                r.alpha_below_beta.unwrap_or(0)
            )
        })
        .collect();
    let heap = sol
        .cost
        .peak_heap_mib
        .map_or(String::new(), |h| format!(" ({h} MiB heap)"));
    let peak = sol
        .cost
        .peak_mib
        .map_or(String::new(), |p| format!(", peak {p} MiB{heap}"));
    format!("{}: {:.1} s{peak}", classes.join("; "), sol.cost.seconds)
}

/// Why a job cannot start, if it cannot: a material it leads to was skipped (jobs come in
/// dependency order, so the skipped ones are known), or its memory estimate is above what
/// is available (a job refused on memory is skipped and the run goes on with the others).
fn cannot_start(
    options: &Options,
    materials: &[Material],
    skipped: &[Skipped],
    page_above: u64,
) -> Option<String> {
    let needed = Material::next_outside(materials);
    if let Some(m) = needed
        .iter()
        .find(|m| skipped.iter().any(|s| s.materials.contains(&m.to_string())))
    {
        return Some(format!("needs {m}, which was skipped"));
    }
    match super::check_memory(options, materials, page_above) {
        Err(Error::Resources(why)) => Some(why),
        _ => None,
    }
}

/// Solve a job; if it resumed from checkpoints and its values did not prove out (a
/// checkpoint damaged in a way its checksums cannot see, or forged), say so naming the
/// files, set them aside (renamed `NAME.rejected`, so that no later `--resume` takes them)
/// and solve the job once more from the start. A job that started from the beginning, or
/// fails again, reports its failure as it is.
fn solve_or_start_over(
    options: &Options,
    materials: &[Material],
    name: &str,
    obs: &dyn Observer,
    control: &Control<'_>,
    store: &dyn Store,
) -> Result<Run, Error> {
    let resumable = match (&control.checkpoint_dir, control.resume) {
        (Some(dir), true) => checkpoints(options.method, dir),
        _ => Vec::new(),
    };
    let first = solve_job(options, materials, obs, control, store);
    let why = match &first {
        Err(Error::Uncertified(why)) => why.clone(),
        Ok(Run::Finished(sol)) if sol.converged() && !sol.certified() => {
            "the certificate failed".to_string()
        }
        _ => return first,
    };
    if resumable.is_empty() {
        return first;
    }
    drop(first);
    let mut aside = Vec::new();
    for path in &resumable {
        let mut rejected = path.clone().into_os_string();
        rejected.push(".rejected");
        std::fs::rename(path, &rejected).map_err(|e| Error::io(path, e))?;
        aside.push(std::path::PathBuf::from(rejected).display().to_string());
    }
    let files: Vec<String> = resumable.iter().map(|p| p.display().to_string()).collect();
    obs.notice(&format!(
        "the state resumed from {} did not prove out ({why}); set aside as {}; solving {name} \
         again from the start",
        files.join(", "),
        aside.join(", ")
    ));
    solve_job(options, materials, obs, &control.afresh(), store)
}

/// The checkpoint files of `method` in a board directory (those a resumed job reads).
fn checkpoints(method: Method, dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    match method {
        Method::Iterate => crate::iterate::checkpoint::list(dir),
        Method::Solve => Some(crate::solve::checkpoint::path(dir))
            .filter(|p| p.is_file())
            .into_iter()
            .collect(),
    }
}

/// Solve a request in memory: every job, in order; their solutions.
pub fn solve_all(options: &Options, obs: &dyn Observer) -> Result<Vec<Solution>, Error> {
    let mut store = InMemory::default();
    match run(options, obs, &Control::default(), &mut store)? {
        Driven::Finished(_, skipped) if !skipped.is_empty() => Err(Error::Resources(
            skipped
                .iter()
                .map(|s| format!("{} skipped: {}", s.materials.join(", "), s.reason))
                .collect::<Vec<_>>()
                .join("; "),
        )),
        Driven::Finished(..) => Ok(store.solutions),
        Driven::Interrupted { .. } => unreachable!("without a stop flag a run never stops"),
    }
}
