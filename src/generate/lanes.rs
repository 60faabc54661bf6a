//! The jobs of a run under way: which waiting job starts next (its materials kept, its
//! memory estimate fitting beside the others), each on a thread and in a thread pool of its
//! own, the watch that forwards a stop request and holds the process under the memory
//! guard, and what each job's end means (kept, run again alone, skipped, stopped).

use super::priority::{JobThreads, levels};
use super::report::Skipped;
use super::store::{Reader, Store, Written};
use super::{Control, Method, Observer, Options, Run, Solution, Solved, solve_job};
use crate::error::Error;
use crate::material::Material;
use crate::resources;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

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

/// A job of a run, waiting or under way.
pub(super) struct Job {
    /// Its number in the run, from 1.
    pub(super) k: usize,
    pub(super) materials: Vec<Material>,
    pub(super) name: String,
    /// Its memory estimate in bytes.
    pub(super) estimate: u64,
    /// The positions of the longest chain of jobs from it to the end of the run: its own
    /// and, after it, those of the jobs that read its materials (transitively). The ready
    /// job with the longest chain starts first.
    pub(super) chain: u64,
    /// It may only run with no other job beside it: the memory guard stopped it once
    /// beside another.
    pub(super) alone: bool,
}

/// A job under way on a thread of its own.
pub(super) struct Running {
    job: Job,
    /// Raised by the memory guard to stop it.
    over: Arc<AtomicBool>,
    /// Another job ran beside it at some time.
    had_company: bool,
    /// Its pool's threads, which yield to a job on a longer chain beside it.
    threads: JobThreads,
}

/// What a job hands back: its result and what its files' writer wrote (nothing unless it
/// finished), or the payload of its panic.
type Report = (usize, std::thread::Result<Result<(Run, Written), Error>>);

/// The jobs of a run and the threads they run on.
pub(super) struct Lanes<'r, 'c, 's> {
    pub(super) options: &'r Options,
    pub(super) obs: &'r dyn Observer,
    pub(super) control: &'r Control<'c>,
    pub(super) store: &'s mut dyn Store,
    pub(super) total: usize,
    /// At most this many jobs side by side.
    pub(super) lanes: usize,
    /// The memory guard's limit, if known.
    pub(super) limit: Option<u64>,
    /// What the jobs side by side may hold together by their estimates: the guard's limit
    /// or the memory usable when the run started, the smaller.
    pub(super) beside_limit: Option<u64>,
    /// Jobs not started, in dependency order.
    pub(super) waiting: Vec<Job>,
    pub(super) running: Vec<Running>,
    /// The materials of each job made, in the order they were kept.
    pub(super) done: Vec<Vec<Material>>,
    pub(super) skipped: Vec<Skipped>,
    /// Jobs a stop request interrupted.
    pub(super) stopped: Vec<Stopped>,
    /// The first error: no job starts after it, and those under way are stopped.
    pub(super) failure: Option<Error>,
    /// Stops every job under way (a stop request, or a failure).
    pub(super) halt: &'r AtomicBool,
    /// No watch runs (no thread could start): no memory guard, and the jobs see the
    /// caller's stop flag itself.
    pub(super) unwatched: bool,
}

impl Lanes<'_, '_, '_> {
    /// Start jobs while lanes are free, collect them as they end; until every job has
    /// ended. The payload of a job's panic, once the others have ended.
    pub(super) fn drive(&mut self) -> Result<(), Box<dyn std::any::Any + Send>> {
        let (tx, rx) = std::sync::mpsc::channel::<Report>();
        let guarded: Mutex<Vec<(usize, Arc<AtomicBool>)>> = Mutex::new(Vec::new());
        let finished = AtomicBool::new(false);
        let mut panic = None;
        std::thread::scope(|scope| {
            let (stop, halt, limit) = (self.control.stop, self.halt, self.limit);
            let (guarded, finished) = (&guarded, &finished);
            let watch = move || watch(stop, halt, limit, guarded, finished);
            const WATCH_STACK: usize = 64 << 10;
            // A thread that starts without room for its signal stack aborts the process:
            // under a tight `ulimit -v` no thread is started at all.
            let watcher = if resources::thread_fits(WATCH_STACK as u64) {
                std::thread::Builder::new()
                    .name("job watch".into())
                    .stack_size(WATCH_STACK)
                    .spawn_scoped(scope, watch)
                    .map_err(|_| ())
            } else {
                Err(())
            };
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
    pub(super) fn stopping(&self) -> bool {
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
                    self.options.solve_settings().page_above,
                )
                .or_else(|| no_room(self.options, &job.materials, self.store.free_disk()))
                {
                    self.skip(&job, reason);
                    continue;
                }
            } else if let Some(reason) = needs_skipped(&job.materials, &self.skipped)
                .or_else(|| no_room(self.options, &job.materials, self.store.free_disk()))
            {
                self.skip(&job, reason);
                continue;
            }
            self.start(job, scope, tx, guarded);
        }
    }

    /// The waiting job that starts now, if any: of those whose materials are all kept (or
    /// skipped, which skips them), the one with the longest chain still to make after it
    /// (ties, and with one lane all: the first in dependency order), if it fits beside the
    /// jobs under way. A job
    /// that does not fit yet is not overtaken: the lane waits for it (list scheduling by
    /// critical path, which puts 8x8 KNvKN, the head of the run's longest chain, first).
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
        let (at, job) = self
            .waiting
            .iter()
            .enumerate()
            .filter(|(_, job)| {
                let needed = Material::next_outside(&job.materials);
                needed.iter().all(|m| !unfinished(m))
            })
            .max_by_key(|(_, job)| {
                // One lane: one after another in dependency order, the order kept in
                // memory by stores without `arrange` (the atlas's census).
                let chain = if self.lanes > 1 { job.chain } else { 0 };
                (chain, std::cmp::Reverse(job.k))
            })?;
        fits(job).then_some(at)
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
        if let Some(warning) = short_of_disk(self.options, &job.materials, self.store.free_disk()) {
            self.obs.notice(&format!("{}: {warning}", job.name));
        }
        // The store keeps open what the jobs under way read too, so that a later job
        // reading the same tables shares them instead of opening them again.
        let needed = Material::next_outside(&job.materials);
        let mut open = needed.clone();
        for r in &self.running {
            open.extend(Material::next_outside(&r.job.materials));
        }
        if let Err(e) = self.store.prepare(&open) {
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
            resume: self.control.resume,
            stop: if self.unwatched {
                self.control.stop
            } else {
                Some(halt)
            },
            saved: self.control.saved.clone(),
            over_memory: over.clone(),
            jobs: 1,
            beside_others: beside,
        };
        let (k, materials, name) = (job.k, job.materials.clone(), job.name.clone());
        let job_name = job.name.clone();
        let reader = match self.store.reader(&needed) {
            Reader::Own(own) => Some(Arc::new(own)),
            Reader::Store(_) => None,
        };
        let threads = self.yield_to_the_longest_chain(job.chain);
        self.running.push(Running {
            job,
            over,
            had_company: beside,
            threads: threads.clone(),
        });
        let work = move |solved: &dyn Solved, obs: &dyn Observer| {
            let run = solve_or_start_over(options, &materials, &name, obs, &control, solved)?;
            let written = match &run {
                Run::Finished(sol) => writer(sol)?,
                Run::Interrupted { .. } => Written::default(),
            };
            Ok((run, written))
        };
        if let Some(own) = reader.clone().filter(|_| self.lanes > 1) {
            // The work goes to the job's thread, or stays here if no thread starts.
            let work = Arc::new(Mutex::new(Some(work)));
            let (sender, name, handed) = (tx.clone(), job_name, work.clone());
            // No thread without room for its signal stack (see `resources::thread_fits`).
            let spawned = if resources::thread_fits(JOB_STACK as u64) {
                std::thread::Builder::new()
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
                        let result =
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(
                                || match job_pool(&name, threads) {
                                    Some(pool) => pool.install(run),
                                    None => run(),
                                },
                            ));
                        let _ = sender.send((k, result));
                    })
                    .map_err(|_| ())
            } else {
                Err(())
            };
            if spawned.is_ok() {
                return;
            }
            // No thread (a tight `ulimit -v`): this job, and the rest, one at a time here.
            self.lanes = 1;
            let work = work.lock().ok().and_then(|mut w| w.take());
            if let Some(work) = work {
                self.inline(k, work, reader.as_deref().map(|r| &**r), &needed, tx);
            }
            return;
        }
        let reader = reader.as_deref().map(|r| &**r);
        self.inline(k, work, reader, &needed, tx);
    }

    /// The threads of a job starting on a chain of work `chain` beside those under way, at
    /// its level among them; theirs raised where the new job's chain puts them further
    /// behind ([`super::priority`]).
    fn yield_to_the_longest_chain(&self, chain: u64) -> JobThreads {
        let running: Vec<(u64, i32)> = self
            .running
            .iter()
            .map(|r| (r.job.chain, r.threads.level()))
            .collect();
        let (raised, level) = levels(&running, chain);
        for (r, level) in self.running.iter().zip(raised) {
            r.threads.raise_to(level);
        }
        let threads = JobThreads::default();
        threads.raise_to(level);
        threads
    }

    /// Run a job on this thread (one at a time), reading its exits from `reader`, or from
    /// the store itself where it has no reader; its report goes to `tx` as a thread's would.
    fn inline(
        &self,
        k: usize,
        work: impl FnOnce(&dyn Solved, &dyn Observer) -> Result<(Run, Written), Error>,
        reader: Option<&(dyn Solved + Send)>,
        needed: &[Material],
        tx: &std::sync::mpsc::Sender<Report>,
    ) {
        let store;
        let solved: &dyn Solved = match reader {
            Some(reader) => reader,
            None => {
                store = self.store.reader(needed);
                store.solved()
            }
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
            ..
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
/// pool each the operating system shares the cores between the jobs' threads, those of a
/// job behind another at a lower priority (`threads`, [`super::priority`]). None where no
/// pool can be built, or where its threads would not fit the address space left (see
/// [`resources::thread_fits`]; the global pool then serves).
fn job_pool(name: &str, threads: JobThreads) -> Option<rayon::ThreadPool> {
    let name = name.to_string();
    let count = rayon::current_num_threads();
    if !resources::thread_fits((count * (POOL_STACK + resources::THREAD_HEADROOM as usize)) as u64)
    {
        return None;
    }
    rayon::ThreadPoolBuilder::new()
        .num_threads(count)
        .stack_size(POOL_STACK)
        .thread_name(move |i| format!("{name} {i}"))
        .start_handler(move |_| threads.enter())
        .build()
        .ok()
}

/// The stack of each thread of a job's own pool (the standard library's default, stated
/// so that [`job_pool`] can ask whether the threads fit).
const POOL_STACK: usize = 2 << 20;

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
    let cpu = sol
        .cost
        .cpu_seconds
        .map_or(String::new(), |c| format!(" ({c:.1} s of CPU)"));
    format!(
        "{}: {:.1} s{cpu}{peak}",
        classes.join("; "),
        sol.cost.seconds
    )
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

/// Why a job cannot start for lack of disk, if it cannot: `free` bytes are fewer than its
/// tables need at least ([`crate::table::fixed_bytes`] of its positions, before any value's
/// digits). A run skips it (as on memory) instead of failing at its end after hours.
fn no_room(options: &Options, materials: &[Material], free: Option<u64>) -> Option<String> {
    let free = free?;
    let least: u64 = materials
        .iter()
        .map(|&m| {
            let positions = crate::index::estimate_positions(options.board, m) as u64;
            crate::table::fixed_bytes(positions, false)
        })
        .sum();
    (least > free).then(|| {
        format!(
            "its table needs at least {} MB on disk, and {} MB are free there",
            least.div_ceil(1 << 20),
            free >> 20
        )
    })
}

/// A warning for a job whose table and temporary files may not fit in the `free` bytes
/// of the output directory's disk, by estimate (the estimates lie above what was made:
/// the job starts, and fails with the disk's error if the disk does fill).
fn short_of_disk(options: &Options, materials: &[Material], free: Option<u64>) -> Option<String> {
    let free = free?;
    let table: u64 = materials
        .iter()
        .map(|&m| {
            let positions = crate::index::estimate_positions(options.board, m);
            crate::solve::memory::estimate_table_bytes(options.board, m, positions)
        })
        .sum();
    let scratch = super::scratch_estimate(options, materials);
    let mb = |bytes: u64| bytes.div_ceil(1 << 20);
    (table + scratch > free).then(|| {
        format!(
            "may need about {} MB of disk (its table about {} MB, temporary files about {} \
             MB), and {} MB are free there; if the disk fills, the job fails",
            mb(table + scratch),
            mb(table),
            mb(scratch),
            free >> 20
        )
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
        (Some(dir), true) => checkpoints(options.method(), dir, materials),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::Board;

    /// A job is refused when the disk cannot hold its table's keys, ranks and levels, and
    /// started where it can, or where the free space cannot be told.
    #[test]
    fn a_job_without_room_for_its_table_is_refused() {
        let options = Options::solve(Board::new(4, 4).unwrap());
        let job = ["KRvKN".parse::<Material>().unwrap()];
        let least = crate::table::fixed_bytes(
            crate::index::estimate_positions(options.board, job[0]) as u64,
            false,
        );
        let why = no_room(&options, &job, Some(least - 1)).unwrap();
        assert!(why.contains("MB on disk"), "{why}");
        assert_eq!(no_room(&options, &job, Some(least)), None);
        assert_eq!(no_room(&options, &job, None), None);
    }

    /// A job whose table and temporary files may not fit is warned about as it starts: 6x6
    /// KBNvKN, whose paged values filled 38 GB of this machine's 53 GB before it was
    /// stopped, is warned about with 53 GB free and not with 200 GB; a small job pages
    /// nothing.
    #[test]
    fn a_job_short_of_disk_for_its_temporary_files_is_warned_about() {
        let options = Options::solve(Board::new(6, 6).unwrap());
        let job = ["KBNvKN".parse::<Material>().unwrap()];
        let why = short_of_disk(&options, &job, Some(53_000_000_000)).unwrap();
        assert!(why.contains("temporary files about"), "{why}");
        assert_eq!(short_of_disk(&options, &job, Some(200_000_000_000)), None);
        assert_eq!(short_of_disk(&options, &job, None), None);
        let small = ["KRvK".parse::<Material>().unwrap()];
        assert_eq!(super::super::scratch_estimate(&options, &small), 0);
        assert_eq!(short_of_disk(&options, &small, Some(100_000_000)), None);
    }
}
