//! The driver above the jobs: the materials a request needs, in dependency order, each
//! solved as a job of its own whose exits read the values of the materials finished
//! before it from a [`Store`] (tables on disk for the command line, solutions in memory
//! for the library and the tests). A material that the store already holds and that was
//! not asked for is reused, never redone.
//!
//! The study's iteration is the exception: it runs the six three-piece materials jointly,
//! as one job, because its published iteration counts are defined that way; it takes no
//! other material.

pub use super::lanes::Stopped;
use super::lanes::{Job, Lanes};
pub use super::report::Skipped;
pub use super::store::{InMemory, Reader, Store, Writer, Written};
use super::{Control, Method, Observer, Options, Solution};
use crate::error::Error;
use crate::material::Material;
use std::sync::atomic::AtomicBool;

/// The jobs of a request, in order: each a list of materials solved jointly, or a
/// material the store holds already (`Err`) and the run reuses. A material the store
/// holds is reused unless it was asked for; with `resume`, even then.
pub fn jobs(
    options: &Options,
    store: &dyn Store,
    resume: bool,
) -> Result<Vec<Result<Vec<Material>, Material>>, Error> {
    let three = Material::three_piece();
    match options.method() {
        Method::Iterate => {
            if let Some(m) = options.materials.iter().find(|m| !three.contains(m)) {
                return Err(Error::Usage(format!(
                    "the iterate method (the study's iteration) runs on the three-piece \
                     materials only, jointly; {m} needs --method solve"
                )));
            }
            Ok(vec![Ok(three.to_vec())])
        }
        Method::Solve => Material::with_dependencies(&options.materials)
            .into_iter()
            .map(|m| {
                if (options.materials.contains(&m) && !resume) || !store.has(m)? {
                    Ok(Ok(vec![m]))
                } else {
                    Ok(Err(m))
                }
            })
            .collect(),
    }
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
    /// Its positions before symmetry, as the run counts them (its summary's `positions`),
    /// if `counted`; else estimated.
    pub positions: u64,
    /// Its positions after symmetry, as the run counts them (`canonical_positions`), if
    /// `counted`; else estimated.
    pub canonical_positions: usize,
    /// Whether the positions were counted (materials of at most [`COUNT_UP_TO`] estimated
    /// positions) or estimated (larger ones, whose count would take as long as a good part
    /// of their index).
    pub counted: bool,
    /// The memory estimate of its job, in bytes (what decides a skip).
    pub memory_bytes: u64,
    /// Its table's size on disk by estimate, in bytes
    /// ([`crate::solve::memory::estimate_table_bytes`]).
    pub disk_bytes: u64,
    /// The temporary files it needs beside its table while it runs, by estimate, in bytes
    /// ([`crate::solve::memory::estimate_scratch_bytes`]: paged numerators, and α's values
    /// while β is solved apart).
    pub scratch_bytes: u64,
}

/// The most positions (after symmetry, estimated) of a material whose positions a plan
/// counts: a million take about half a second; the four-piece materials of 8x8 (two
/// million each, 42 s for the 36 of them) and larger ones are estimated.
pub const COUNT_UP_TO: usize = 1 << 20;

/// The solve method's jobs for `options.materials` in dependency order, one per material,
/// with their dependencies and estimates: what a cluster scheduler needs to run them as
/// jobs of their own.
pub fn plan(options: &Options) -> Vec<Planned> {
    Material::with_dependencies(&options.materials)
        .into_iter()
        .map(|m| {
            // With the run's paging threshold, as its temporary files are planned.
            let (_, memory_bytes) =
                super::job_estimate(options, &[m], options.solve_settings().page_above);
            // Counted where that is cheap: the plan's numbers are then the run's.
            let estimate = crate::index::estimate_positions(options.board, m);
            let counted = estimate <= COUNT_UP_TO;
            let (positions, canonical_positions) = if counted {
                crate::index::count_positions(options.board, m)
            } else {
                let syms = crate::index::symmetries(options.board, m).len() as u64;
                (estimate as u64 * syms, estimate)
            };
            let names = |list: Vec<Material>| list.iter().map(Material::to_string).collect();
            let mut reads = m.dependencies();
            reads.sort();
            Planned {
                material: m.to_string(),
                needs: names(Material::next_outside(&[m])),
                reads: names(reads),
                positions,
                canonical_positions,
                counted,
                memory_bytes,
                disk_bytes: crate::solve::memory::estimate_table_bytes(
                    options.board,
                    m,
                    canonical_positions,
                ),
                scratch_bytes: super::scratch_estimate(options, &[m]),
            }
        })
        .collect()
}

/// How a driven run ended.
pub enum Driven {
    /// Every job finished (each kept by the store) or was skipped: the materials of each
    /// job made, in order, and the jobs skipped.
    Finished(Vec<Vec<Material>>, Vec<Skipped>),
    /// The run was stopped: the jobs under way then (one, or several side by side), each
    /// with what it saved.
    Interrupted(Vec<Stopped>),
}

/// Run every job of a request, each kept by `store` as soon as it finishes. With
/// `control.jobs` above 1, up to that many side by side: a job starts once every material
/// it reads is kept, beside the others only when the memory estimates of all of them fit
/// under the memory guard's limit; of the jobs whose materials are ready, the one that
/// heads the longest chain of work still to do starts first (list scheduling by critical
/// path; the work of a job taken as its memory estimate), and one that does not fit yet
/// is waited for, not overtaken. The store's reports are put in dependency order at
/// the end ([`Store::arrange`]), so a run's files do not depend on which job finished
/// first.
pub fn run(
    options: &Options,
    obs: &dyn Observer,
    control: &Control<'_>,
    store: &mut dyn Store,
) -> Result<Driven, Error> {
    let all = jobs(options, store, control.resume)?;
    let order: Vec<Material> = all
        .iter()
        .flat_map(|j| match j {
            Ok(materials) => materials.clone(),
            Err(m) => vec![*m],
        })
        .collect();
    let mut waiting = std::collections::VecDeque::new();
    for job in all {
        match job {
            Ok(materials) => waiting.push_back(materials),
            Err(reused) => store.reuse(reused)?,
        }
    }
    let total = waiting.len();
    let guard_limit = crate::resources::guard_limit()?;
    let mut waiting: Vec<Job> = waiting
        .into_iter()
        .enumerate()
        .map(|(i, materials)| {
            let (_, estimate) =
                super::job_estimate(options, &materials, options.solve_settings().page_above);
            Job {
                k: i + 1,
                name: materials
                    .iter()
                    .map(Material::to_string)
                    .collect::<Vec<_>>()
                    .join(", "),
                estimate,
                chain: estimate,
                materials,
                alone: false,
            }
        })
        .collect();
    lengthen_chains(&mut waiting);
    // Jobs side by side share what a job alone may use: the guard's limit, and the memory
    // the estimate of a job alone is checked against (the smaller); only where both are
    // known.
    let beside_limit = match (guard_limit, crate::resources::usable_bytes()) {
        (Some(guard), Some((usable, _))) => Some(guard.min(usable)),
        _ => None,
    };
    let lanes = if beside_limit.is_some() {
        control.jobs.max(1)
    } else {
        1
    };
    // Side by side only where jobs can read without the store.
    let lanes = if store.reads_apart() { lanes } else { 1 };
    let halt = AtomicBool::new(false);
    let mut lanes = Lanes {
        options,
        obs,
        control,
        store,
        total,
        lanes,
        limit: guard_limit,
        beside_limit,
        waiting,
        running: Vec::new(),
        done: Vec::new(),
        skipped: Vec::new(),
        stopped: Vec::new(),
        failure: None,
        halt: &halt,
        unwatched: false,
    };
    let outcome = lanes.drive();
    let asked_to_stop = lanes.stopping();
    let Lanes {
        store,
        done,
        skipped,
        mut stopped,
        failure,
        waiting,
        ..
    } = lanes;
    store.arrange(&order);
    if let Err(payload) = outcome {
        std::panic::resume_unwind(payload);
    }
    if let Some(e) = failure {
        return Err(e);
    }
    // A stop that came between jobs (none under way, some waiting) interrupts the run
    // before the first of them: it is not finished.
    if asked_to_stop
        && stopped.is_empty()
        && let Some(next) = waiting.into_iter().next()
    {
        stopped.push(Stopped {
            materials: next.materials,
            n: 0,
            checkpoint: None,
        });
    }
    if !stopped.is_empty() {
        return Ok(Driven::Interrupted(stopped));
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

/// Each job's chain (its own work on entry): the longest chain of work from it to the end
/// of the run, through the jobs that read its materials. A job's work is taken as its
/// memory estimate, its positions times the expected size of their values (measured per
/// material where known): on 8x8 it ranks the jobs as their measured times do at the top,
/// KNvKN's chain (KNvKN, KNvKP, KPvKP) first, where positions alone tie every two-a-side
/// pawnless material. The jobs come in dependency order, so those that read a job's
/// materials come after it.
fn lengthen_chains(jobs: &mut [Job]) {
    for i in (0..jobs.len()).rev() {
        let longest_after = jobs[i + 1..]
            .iter()
            .filter(|later| {
                Material::next_outside(&later.materials)
                    .iter()
                    .any(|m| jobs[i].materials.contains(m))
            })
            .map(|later| later.chain)
            .max()
            .unwrap_or(0);
        jobs[i].chain += longest_after;
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
        Driven::Interrupted(_) => unreachable!("without a stop flag a run never stops"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Board;

    /// The chains of 8x8's four-piece run: through the jobs that read a job's materials,
    /// transitively; KNvKN heads the longest, and KNvKP comes before the other materials
    /// of a piece against a pawn.
    #[test]
    fn chains_run_through_the_jobs_that_read_a_job() {
        let options = Options::solve(Board::new(8, 8).unwrap());
        let work = |m: Material| {
            super::super::job_estimate(&options, &[m], crate::solve::run::PAGE_ABOVE_BYTES).1
        };
        let mut jobs: Vec<Job> = Material::with_dependencies(&Material::all_up_to(4))
            .into_iter()
            .enumerate()
            .map(|(i, m)| Job {
                k: i + 1,
                name: m.to_string(),
                estimate: work(m),
                chain: work(m),
                materials: vec![m],
                alone: false,
            })
            .collect();
        lengthen_chains(&mut jobs);
        let chain = |name: &str| jobs.iter().find(|j| j.name == name).unwrap().chain;
        let own = |name: &str| work(name.parse().unwrap());
        // KPvKP reads KNvKP (a white pawn promoted to a knight), which reads KNvKN; KPPvK
        // reads KNPvK and KBPvK, which reads KBNvK.
        assert_eq!(chain("KPvKP"), own("KPvKP"));
        assert_eq!(chain("KNvKP"), own("KNvKP") + own("KPvKP"));
        assert_eq!(chain("KNvKN"), own("KNvKN") + own("KNvKP") + own("KPvKP"));
        assert_eq!(chain("KNPvK"), own("KNPvK") + own("KPPvK"));
        assert_eq!(chain("KBNvK"), own("KBNvK") + own("KBPvK") + own("KPPvK"));
        let four: Vec<&Job> = jobs
            .iter()
            .filter(|j| j.materials[0].man_count() == 4)
            .collect();
        let longest = four.iter().max_by_key(|j| j.chain).unwrap();
        assert_eq!(longest.name, "KNvKN");
        for other in ["KBvKP", "KRvKP", "KQvKP"] {
            assert!(chain("KNvKP") > chain(other), "{other}");
        }
        // A three-piece material heads a chain longer than any that reads it.
        assert!(chain("KNvK") > chain("KNvKN"));
    }
}
