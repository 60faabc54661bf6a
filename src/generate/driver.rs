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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::report::MaterialRecord;
pub use super::report::Skipped;
use crate::error::Error;
use crate::material::Material;

/// Where finished materials go and where later jobs read their exits from.
pub trait Store: Solved + Send {
    /// Whether the store holds material `m`, finished and usable.
    fn has(&self, m: Material) -> bool;
    /// Get ready to answer [`Solved::known`] for the materials `needed`, those the job's
    /// moves lead to (open their tables, let go of the others); called before each job.
    fn prepare(&mut self, _needed: &[Material]) -> Result<(), Error> {
        Ok(())
    }
    /// A reader of the materials `needed` (opened by [`Store::prepare`]) that holds
    /// nothing of the store, for a job run on a thread of its own beside others; None (the
    /// default) where the store answers only itself: its jobs then run one at a time.
    fn reader(&self, _needed: &[Material]) -> Option<Box<dyn Solved + Send>> {
        None
    }
    /// What writes a finished job's files (the slow part of keeping it, which needs
    /// nothing of the store's state): run on the job's own thread, so that the other jobs
    /// go on meanwhile. Writes nothing by default.
    fn writer(&self) -> Writer {
        Arc::new(|_| Ok(Written::default()))
    }
    /// Keep a finished job whose files `written` made (remember its values, note its
    /// records).
    fn keep(&mut self, solution: Solution, written: Written) -> Result<(), Error>;
    /// A material of the request that the store holds already and the run reuses.
    fn reuse(&mut self, _m: Material) -> Result<(), Error> {
        Ok(())
    }
    /// Put what the store reports in the run's order, `order` (the materials in
    /// dependency order): jobs side by side are kept in the order they finish.
    fn arrange(&mut self, _order: &[Material]) {}
}

/// What a [`Store::writer`] wrote of a finished job.
#[derive(Debug, Default)]
pub struct Written {
    /// The records of its materials.
    pub records: Vec<MaterialRecord>,
    /// Table files written.
    pub files: usize,
    /// Seconds it took.
    pub seconds: f64,
}

/// Writes a finished job's files: see [`Store::writer`].
pub type Writer = Arc<dyn Fn(&Solution) -> Result<Written, Error> + Send + Sync>;

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
    fn keep(&mut self, solution: Solution, _written: Written) -> Result<(), Error> {
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

/// A job that a stop request interrupted.
#[derive(Debug)]
pub struct Stopped {
    /// The job's materials.
    pub materials: Vec<Material>,
    /// The iteration reached (0 for the solve method).
    pub n: u32,
    /// The checkpoint written, if any.
    pub checkpoint: Option<std::path::PathBuf>,
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

/// A job of a run, waiting or under way.
struct Job {
    /// Its number in the run, from 1.
    k: usize,
    materials: Vec<Material>,
    name: String,
    /// Its memory estimate in bytes.
    estimate: u64,
    /// It may only run with no other job beside it: the memory guard stopped it once
    /// beside another.
    alone: bool,
}

/// A job under way on a thread of its own.
struct Running {
    job: Job,
    /// Raised by the memory guard to stop it.
    over: Arc<AtomicBool>,
    /// Another job ran beside it at some time.
    had_company: bool,
}

/// What a job hands back: its result and what its files' writer wrote (nothing unless it
/// finished), or the payload of its panic.
type Report = (usize, std::thread::Result<Result<(Run, Written), Error>>);

/// Run every job of a request, each kept by `store` as soon as it finishes. With
/// `control.jobs` above 1, up to that many side by side: a job starts once every material
/// it reads is kept, beside the others only when the memory estimates of all of them fit
/// under the memory guard's limit; the first job waiting (in dependency order) whose
/// materials are ready starts first. The store's reports are put in dependency order at
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
    let waiting: Vec<Job> = waiting
        .into_iter()
        .enumerate()
        .map(|(i, materials)| Job {
            k: i + 1,
            name: materials
                .iter()
                .map(Material::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            estimate: estimate(options, &materials, control.page_above),
            materials,
            alone: false,
        })
        .collect();
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
    let lanes = if store.reader(&[]).is_some() {
        lanes
    } else {
        1
    };
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

/// The memory estimate of a job (what decides whether it may start beside others).
fn estimate(options: &Options, materials: &[Material], page_above: u64) -> u64 {
    let positions: usize = materials
        .iter()
        .map(|&m| crate::index::estimate_positions(options.board, m))
        .sum();
    match options.method {
        Method::Iterate => u64::MAX,
        Method::Solve => crate::resources::estimate_paged_solve_bytes(
            positions,
            options.board,
            materials,
            page_above,
        ),
    }
}

/// The jobs of a run and the threads they run on.
struct Lanes<'r, 'c, 's> {
    options: &'r Options,
    obs: &'r dyn Observer,
    control: &'r Control<'c>,
    store: &'s mut dyn Store,
    total: usize,
    /// At most this many jobs side by side.
    lanes: usize,
    /// The memory guard's limit, if known.
    limit: Option<u64>,
    /// What the jobs side by side may hold together by their estimates: the guard's limit
    /// or the memory usable when the run started, the smaller.
    beside_limit: Option<u64>,
    /// Jobs not started, in dependency order.
    waiting: Vec<Job>,
    running: Vec<Running>,
    /// The materials of each job made, in the order they were kept.
    done: Vec<Vec<Material>>,
    skipped: Vec<Skipped>,
    /// Jobs a stop request interrupted.
    stopped: Vec<Stopped>,
    /// The first error: no job starts after it, and those under way are stopped.
    failure: Option<Error>,
    /// Stops every job under way (a stop request, or a failure).
    halt: &'r AtomicBool,
    /// No watch runs (no thread could start): no memory guard, and the jobs see the
    /// caller's stop flag itself.
    unwatched: bool,
}

impl Lanes<'_, '_, '_> {
    /// Start jobs while lanes are free, collect them as they end; until every job has
    /// ended. The payload of a job's panic, once the others have ended.
    fn drive(&mut self) -> Result<(), Box<dyn std::any::Any + Send>> {
        let (tx, rx) = std::sync::mpsc::channel::<Report>();
        let guarded: Mutex<Vec<(usize, Arc<AtomicBool>)>> = Mutex::new(Vec::new());
        let finished = AtomicBool::new(false);
        let mut panic = None;
        std::thread::scope(|scope| {
            let (stop, halt, limit) = (self.control.stop, self.halt, self.limit);
            let (guarded, finished) = (&guarded, &finished);
            let watch = move || watch(stop, halt, limit, guarded, finished);
            let watcher = std::thread::Builder::new()
                .name("job watch".into())
                .stack_size(64 << 10)
                .spawn_scoped(scope, watch);
            if watcher.is_err() {
                // Under a tight `ulimit -v` no thread starts: one job at a time, unwatched,
                // stopped by the caller's flag itself.
                self.lanes = 1;
                self.unwatched = true;
            }
            // The watch ends with this loop, even when it unwinds.
            let _end = Finish(finished);
            loop {
                if self.failure.is_none() && !self.stopping() {
                    self.start_ready(scope, &tx, guarded);
                }
                if self.running.is_empty() {
                    break;
                }
                let Ok((k, result)) = rx.recv() else {
                    break;
                };
                let at = self
                    .running
                    .iter()
                    .position(|r| r.job.k == k)
                    .expect("a running job reports");
                let ended = self.running.remove(at);
                guarded
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .retain(|(g, _)| *g != k);
                match result {
                    Ok(result) => self.ended(ended, result),
                    Err(payload) => {
                        self.halt.store(true, Ordering::Relaxed);
                        panic.get_or_insert(payload);
                    }
                }
            }
        });
        match panic {
            Some(payload) => Err(payload),
            None => Ok(()),
        }
    }

    /// Whether a stop was asked for (by the caller, or by a failure).
    fn stopping(&self) -> bool {
        self.halt.load(Ordering::Relaxed)
            || self.control.stop.is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// Start the first waiting jobs whose materials are ready, while lanes are free and
    /// memory allows; skip those that cannot run at all.
    fn start_ready<'scope>(
        &mut self,
        scope: &'scope std::thread::Scope<'scope, '_>,
        tx: &std::sync::mpsc::Sender<Report>,
        guarded: &Mutex<Vec<(usize, Arc<AtomicBool>)>>,
    ) where
        Self: 'scope,
    {
        while self.running.len() < self.lanes {
            let Some(at) = self.next_ready() else {
                return;
            };
            let job = self.waiting.remove(at);
            if self.running.is_empty() {
                if let Some(reason) = cannot_start(
                    self.options,
                    &job.materials,
                    &self.skipped,
                    self.control.page_above,
                ) {
                    self.skip(&job, reason);
                    continue;
                }
            } else if let Some(reason) = needs_skipped(&job.materials, &self.skipped) {
                self.skip(&job, reason);
                continue;
            }
            self.start(job, scope, tx, guarded);
        }
    }

    /// The first waiting job that may start now: every material it reads kept (or
    /// skipped, which skips it), and room beside the jobs under way.
    fn next_ready(&self) -> Option<usize> {
        let unfinished = |m: &Material| {
            self.waiting
                .iter()
                .chain(self.running.iter().map(|r| &r.job))
                .any(|j| j.materials.contains(m))
        };
        let beside = self.running.iter().map(|r| r.job.estimate).sum::<u64>();
        let fits = |job: &Job| {
            self.running.is_empty()
                || (!job.alone
                    && !self.running.iter().any(|r| r.job.alone)
                    && self
                        .beside_limit
                        .is_some_and(|l| beside.saturating_add(job.estimate) <= l))
        };
        self.waiting.iter().position(|job| {
            let needed = Material::next_outside(&job.materials);
            needed.iter().all(|m| !unfinished(m)) && fits(job)
        })
    }

    fn skip(&mut self, job: &Job, reason: String) {
        self.obs.skipped(job.k, self.total, &job.name, &reason);
        self.skipped.push(Skipped {
            materials: job.materials.iter().map(Material::to_string).collect(),
            reason,
        });
    }

    /// Open what the job reads and start it on a thread of its own.
    fn start<'scope>(
        &mut self,
        job: Job,
        scope: &'scope std::thread::Scope<'scope, '_>,
        tx: &std::sync::mpsc::Sender<Report>,
        guarded: &Mutex<Vec<(usize, Arc<AtomicBool>)>>,
    ) where
        Self: 'scope,
    {
        let beside = !self.running.is_empty();
        if !beside {
            crate::resources::release_free_memory();
        }
        self.obs.material(job.k, self.total, &job.name);
        let mut needed = Material::next_outside(&job.materials);
        for r in &self.running {
            needed.extend(Material::next_outside(&r.job.materials));
        }
        if let Err(e) = self.store.prepare(&needed) {
            self.fail(e);
            return;
        }
        let over = Arc::new(AtomicBool::new(false));
        guarded
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((job.k, over.clone()));
        for r in &mut self.running {
            r.had_company = true;
        }
        let (options, obs, halt) = (self.options, self.obs, self.halt);
        let writer = self.store.writer();
        let control = Control {
            checkpoint_dir: self.control.checkpoint_dir.clone(),
            checkpoint_every: self.control.checkpoint_every,
            checkpoint_seconds: self.control.checkpoint_seconds,
            resume: self.control.resume,
            stop: if self.unwatched {
                self.control.stop
            } else {
                Some(halt)
            },
            saved: self.control.saved.clone(),
            over_memory: over.clone(),
            spill_above: self.control.spill_above,
            page_above: self.control.page_above,
            jobs: 1,
            beside_others: beside,
        };
        let (k, materials, name) = (job.k, job.materials.clone(), job.name.clone());
        let job_name = job.name.clone();
        let reader = self.store.reader(&Material::next_outside(&job.materials));
        self.running.push(Running {
            job,
            over,
            had_company: beside,
        });
        let work = move |solved: &dyn Solved, obs: &dyn Observer| {
            let run = solve_or_start_over(options, &materials, &name, obs, &control, solved)?;
            let written = match &run {
                Run::Finished(sol) => writer(sol)?,
                Run::Interrupted { .. } => Written::default(),
            };
            Ok((run, written))
        };
        let reader = reader.map(Arc::new);
        if let Some(own) = reader.clone().filter(|_| self.lanes > 1) {
            // The work goes to the job's thread, or stays here if no thread starts.
            let work = Arc::new(Mutex::new(Some(work)));
            let (sender, name, handed) = (tx.clone(), job_name, work.clone());
            let spawned = std::thread::Builder::new()
                .name(format!("job {name}"))
                .stack_size(JOB_STACK)
                .spawn_scoped(scope, move || {
                    let named = Named {
                        inner: obs,
                        name: &name,
                    };
                    let work = handed.lock().ok().and_then(|mut w| w.take());
                    let Some(work) = work else { return };
                    let run = || work(&**own, &named);
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        match job_pool(&name) {
                            Some(pool) => pool.install(run),
                            None => run(),
                        }
                    }));
                    let _ = sender.send((k, result));
                });
            if spawned.is_ok() {
                return;
            }
            // No thread (a tight `ulimit -v`): this job, and the rest, one at a time here.
            self.lanes = 1;
            let work = work.lock().ok().and_then(|mut w| w.take());
            if let Some(work) = work {
                self.inline(k, work, reader.as_deref().map(|r| &**r), tx);
            }
            return;
        }
        let reader = reader.as_deref().map(|r| &**r);
        self.inline(k, work, reader, tx);
    }

    /// Run a job on this thread (one at a time), reading its exits from `reader`, or from
    /// the store itself where it has no reader; its report goes to `tx` as a thread's would.
    fn inline(
        &self,
        k: usize,
        work: impl FnOnce(&dyn Solved, &dyn Observer) -> Result<(Run, Written), Error>,
        reader: Option<&(dyn Solved + Send)>,
        tx: &std::sync::mpsc::Sender<Report>,
    ) {
        let solved: &dyn Solved = match reader {
            Some(reader) => reader,
            None => &*self.store,
        };
        let obs = self.obs;
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(solved, obs)));
        let _ = tx.send((k, result));
    }

    /// A job has ended: keep it, requeue it, skip it, or note why the run stops.
    fn ended(&mut self, ended: Running, result: Result<(Run, Written), Error>) {
        let Running {
            job,
            over,
            had_company,
        } = ended;
        match result {
            Ok((Run::Finished(sol), written)) => {
                self.obs.finished(job.k, self.total, &finished_line(&sol));
                match self.store.keep(*sol, written) {
                    Ok(()) => self.done.push(job.materials),
                    Err(e) => self.fail(e),
                }
            }
            Ok((Run::Interrupted { .. }, _))
                if over.load(Ordering::Relaxed) && !self.stopping() && had_company =>
            {
                // Stopped by the guard beside another job: it runs again later, alone.
                self.obs.notice(&format!(
                    "{} stopped beside another job above the memory limit; it runs again \
                     alone",
                    job.name
                ));
                let at = self
                    .waiting
                    .iter()
                    .position(|w| w.k > job.k)
                    .unwrap_or(self.waiting.len());
                self.waiting.insert(at, Job { alone: true, ..job });
            }
            Ok((Run::Interrupted { .. }, _))
                if over.load(Ordering::Relaxed) && !self.stopping() =>
            {
                // Stopped by the guard, not asked to: skipped like a job refused up front.
                let reason = crate::resources::over_limit_reason(
                    OVER.load(Ordering::Relaxed),
                    self.limit.unwrap_or(0),
                );
                self.skip(&job, reason);
            }
            Ok((Run::Interrupted { n, checkpoint }, _)) => {
                if self.failure.is_none() {
                    self.stopped.push(Stopped {
                        materials: job.materials,
                        n,
                        checkpoint,
                    });
                }
            }
            Err(e) => self.fail(e),
        }
    }

    /// Note the run's first failure and stop the jobs under way.
    fn fail(&mut self, e: Error) {
        self.halt.store(true, Ordering::Relaxed);
        self.failure.get_or_insert(e);
    }
}

/// Raises its flag when dropped.
struct Finish<'a>(&'a AtomicBool);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// Every 100 ms until `finished`: pass a stop request (`stop`) on to the jobs (`halt`), and
/// hold the process's memory under the guard's `limit` by stopping the job started last
/// (its flag in `guarded`, the jobs under way in the order they started).
fn watch(
    stop: Option<&AtomicBool>,
    halt: &AtomicBool,
    limit: Option<u64>,
    guarded: &Mutex<Vec<(usize, Arc<AtomicBool>)>>,
    finished: &AtomicBool,
) {
    let mut highest = 0;
    while !finished.load(Ordering::Relaxed) {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            halt.store(true, Ordering::Relaxed);
        }
        if let (Some(limit), Some(now)) = (limit, crate::resources::sample_anonymous()) {
            highest = highest.max(now);
            let guarded = guarded.lock().unwrap_or_else(|e| e.into_inner());
            let stopping_one = guarded.iter().any(|(_, f)| f.load(Ordering::Relaxed));
            if now > limit && !stopping_one {
                if let Some((_, flag)) = guarded.last() {
                    flag.store(true, Ordering::Relaxed);
                }
                OVER.store(highest, Ordering::Relaxed);
            }
        }
        std::thread::sleep(crate::resources::GUARD_PERIOD);
    }
}

/// A thread pool of the job's own, as many threads as the global pool: a job beside
/// others runs its parallel stages there. In a shared pool a job's parallel stages wait
/// until a worker is free, and the other job's long tasks (a large system's refinement)
/// hold the workers for minutes: beside 8x8 KNvKN, KQvKQ took 329 s instead of 27. With a
/// pool each the operating system shares the cores between the jobs' threads. None where
/// no pool can be built (the global pool then serves).
fn job_pool(name: &str) -> Option<rayon::ThreadPool> {
    let name = name.to_string();
    rayon::ThreadPoolBuilder::new()
        .num_threads(rayon::current_num_threads())
        .thread_name(move |i| format!("{name} {i}"))
        .build()
        .ok()
}

/// The stack of a job's thread: the main thread's (a job runs there one at a time).
const JOB_STACK: usize = 8 << 20;

/// The highest memory the guard saw when it last stopped a job, for the reason given.
static OVER: AtomicU64 = AtomicU64::new(0);

/// What one job among others side by side reports: its stage lines and notices name it.
struct Named<'a> {
    inner: &'a dyn Observer,
    name: &'a str,
}

impl Observer for Named<'_> {
    fn stage(&self, name: &str) {
        self.inner.stage(name)
    }
    fn stage_done(&self, name: &str, seconds: f64) {
        self.inner
            .stage_done(&format!("{name} ({})", self.name), seconds)
    }
    fn iteration(&self, n: u32, changed: usize, bits: usize) {
        self.inner.iteration(n, changed, bits)
    }
    fn richman_test(&self, n: u32, violations: usize) {
        self.inner.richman_test(n, violations)
    }
    fn notice(&self, text: &str) {
        self.inner.notice(&format!("{}: {text}", self.name))
    }
    fn notice_detail(&self, text: &str) {
        self.inner.notice_detail(&format!("{}: {text}", self.name))
    }
    fn components(&self, done: usize, total: usize) {
        self.inner.components(done, total)
    }
    fn refinement(&self, positions: usize, bits: u64) {
        self.inner.refinement(positions, bits)
    }
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
    needs_skipped(materials, skipped).or_else(|| {
        match super::check_memory(options, materials, page_above) {
            Err(Error::Resources(why)) => Some(why),
            _ => None,
        }
    })
}

/// Why a job cannot start because a material it leads to was skipped, if one was.
fn needs_skipped(materials: &[Material], skipped: &[Skipped]) -> Option<String> {
    let needed = Material::next_outside(materials);
    needed
        .iter()
        .find(|m| skipped.iter().any(|s| s.materials.contains(&m.to_string())))
        .map(|m| format!("needs {m}, which was skipped"))
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
    store: &dyn Solved,
) -> Result<Run, Error> {
    let resumable = match (&control.checkpoint_dir, control.resume) {
        (Some(dir), true) => checkpoints(options.method, dir, materials),
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

/// The checkpoint files of `method` in a board directory that the job on `materials`
/// reads when resumed.
fn checkpoints(
    method: Method,
    dir: &std::path::Path,
    materials: &[Material],
) -> Vec<std::path::PathBuf> {
    match method {
        Method::Iterate => crate::iterate::checkpoint::list(dir),
        Method::Solve => crate::solve::checkpoint::candidates(dir, materials),
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
