//! The solve method as a stage of a job: α by exact solves under improving strategies
//! ([`crate::solve`]), then β too, unless α's certificate also proves β (which needs the
//! exits' α and β to agree). The certificate of each candidate is part of its solve: no
//! value leaves here unproved.
//!
//! A stopped run (Ctrl-C, SIGTERM) saves what its solve has kept ([`super::keep`]) as
//! `solve.ckpt` in the board's directory, and with `checkpoint_seconds` also saves it that
//! often while it runs; `resume` continues from it ([`super::checkpoint`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::checkpoint::{self as solve_checkpoint, Job, Loaded};
use super::spill::{self, Filing, Spilled};
use super::{
    Bound, BoundState, BoundStateRef, Candidate, Event, Game, Keeper, Settings, SolveError,
    SolveStats, Terminals,
};
use crate::certificate::{self, Certificate};
use crate::error::Error;
use crate::geometry::Board;
use crate::graph::Graph;
use crate::material::Material;
use crate::progress::{Control, Observer};
use crate::resources;
use crate::value::{Images, Value};

/// The default of [`RunSettings::spill_above`]: 256 MiB (below it the file costs more time
/// than the memory is worth).
pub const SPILL_ABOVE_BYTES: u64 = 256 << 20;

/// The default of [`RunSettings::page_above`]: 2 GiB (jobs whose values hold less never
/// touch the disk for them; 8x8 KNvKP's hold 16 GB).
pub const PAGE_ABOVE_BYTES: u64 = 2 << 30;

/// The solve method's run settings beside the solver's own: how often a running job saves
/// its state, and when its exact values leave memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunSettings {
    /// Also save the job's state every this many seconds while it runs (it is always saved
    /// when stopped, if the run has a checkpoint directory).
    pub checkpoint_seconds: Option<u64>,
    /// α's values are moved to a temporary file while β is solved apart when they hold more
    /// than this many bytes.
    pub spill_above: u64,
    /// Once the numerators of the values an exact evaluation has solved hold more than this
    /// many bytes, those solved after them move to temporary files mapped back read-only,
    /// which the operating system may keep on disk (`u64::MAX`: never).
    pub page_above: u64,
}

impl Default for RunSettings {
    /// No periodic saves; [`SPILL_ABOVE_BYTES`] and [`PAGE_ABOVE_BYTES`].
    fn default() -> RunSettings {
        RunSettings {
            checkpoint_seconds: None,
            spill_above: SPILL_ABOVE_BYTES,
            page_above: PAGE_ABOVE_BYTES,
        }
    }
}

impl RunSettings {
    /// The defaults, with `BIDTB_SPILL_ABOVE` and `BIDTB_PAGE_ABOVE` from the environment
    /// where they are set (an unparsable size is an error naming the accepted forms).
    pub fn from_env() -> Result<RunSettings, Error> {
        let default = RunSettings::default();
        Ok(RunSettings {
            spill_above: resources::spill_above()?.unwrap_or(default.spill_above),
            page_above: resources::page_above()?.unwrap_or(default.page_above),
            ..default
        })
    }
}

/// What the solve method hands back: α proved, β proved apart where it had to be.
pub struct Outcome {
    /// α with its certificate (which proves β too when `beta` is None).
    pub alpha: Candidate,
    /// β where α's certificate does not prove it: solved apart, or α's values proved to be
    /// β with the exits' β (the exits' bounds differ, the material's do not).
    pub beta: Option<Proved>,
    /// What each solve did (α's, then β's where solved apart).
    pub stats: Vec<SolveStats>,
}

/// Values of every node proved to be a bound by their certificate.
pub struct Proved {
    /// The values, terminal nodes included.
    pub values: Images,
    /// Their certificate.
    pub certificate: Certificate,
}

/// Where the exits' α and β differ, α's values of the positions may still be β: they are
/// when, with the exits' β in place of their α, every equation holds and T′ covers every
/// value below 1 (the certificate of SPEC §2 for β). Checking that costs one certificate,
/// whose equations are checked again only at the positions with an option into an exit
/// whose β differs from its α (the others' were checked by α's certificate, on the same
/// values); solving β apart costs a whole solve.
///
/// The check reads α's values in place (8x8 KNPvK: a copy was 4 GB more, the job's peak);
/// only when it proves β are they copied, as β's.
fn alpha_as_beta(graph: &Graph, terminals: &Terminals, alpha: &Candidate) -> Option<Proved> {
    let n = graph.positions();
    let joined = alpha.values.joined(n, terminals.beta.clone());
    // Only the positions with an option into an exit whose β is not its α are checked again.
    let changed = terminals.changed(n);
    let certificate = certificate::certify_again(
        &joined,
        graph,
        &terminals.start,
        &alpha.certificate,
        &changed,
    );
    if !super::proves(&certificate, Bound::Beta) {
        return None;
    }
    let values: Vec<Value> = alpha.values.values()[..n]
        .iter()
        .chain(&terminals.beta)
        .cloned()
        .collect();
    Some(Proved {
        values: Images::of(values),
        certificate,
    })
}

/// Where α's values are spilled: the board's directory, else the system's temporary one.
fn spill_dir(control: &Control<'_>) -> PathBuf {
    control
        .checkpoint_dir
        .clone()
        .unwrap_or_else(std::env::temp_dir)
}

/// Move α's values out of memory while β is solved apart, when they are large enough
/// (above `settings.spill_above` bytes): β's solve does not read them. A failure to write
/// them is a notice, and they stay in memory.
fn spill_alpha(
    alpha: &mut Candidate,
    control: &Control<'_>,
    settings: &RunSettings,
    obs: &dyn Observer,
) -> Option<Spilled> {
    let bytes = spill::value_bytes(alpha.values.values());
    if bytes <= settings.spill_above {
        return None;
    }
    let dir = spill_dir(control);
    match Spilled::out(&mut alpha.values, Some(&dir)) {
        Ok(spilled) => {
            obs.notice_detail(&format!(
                "alpha: values moved to a temporary file of {} MiB in {} while beta is solved",
                spilled.bytes() >> 20,
                dir.display()
            ));
            Some(spilled)
        }
        Err(e) => {
            obs.notice(&format!(
                "alpha's values kept in memory (spilling them failed: {e})"
            ));
            None
        }
    }
}

/// How the solve stage ended.
pub enum Run {
    /// Both bounds proved.
    Finished(Box<Outcome>),
    /// Stopped; the state saved, if any.
    Interrupted {
        /// The checkpoint written (or the one resumed from, if nothing new was saved).
        checkpoint: Option<PathBuf>,
    },
}

/// Where a solve run's checkpoints go, and the last one written.
struct Checkpoints<'a> {
    dir: Option<&'a Path>,
    /// Raised when the job holds too much memory: then nothing is saved (a save needs
    /// memory too), and the driver skips the job.
    over_memory: &'a std::sync::atomic::AtomicBool,
    job: Job<'a>,
    obs: &'a dyn Observer,
    saved: Mutex<Option<PathBuf>>,
    /// Saves made by this run.
    saves: AtomicUsize,
}

impl Checkpoints<'_> {
    /// Save `states` (α's, then β's if it is being solved); a failure is a notice, and the
    /// run goes on.
    fn save(&self, states: &[&BoundStateRef<'_>]) {
        let Some(dir) = self.dir else {
            return;
        };
        if self.over_memory.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        // One save at a time (systems refined in parallel may both find a save due).
        let Ok(mut saved) = self.saved.lock() else {
            return;
        };
        match solve_checkpoint::save(dir, self.job, states) {
            Ok(path) => {
                *saved = Some(path);
                self.saves.fetch_add(1, Ordering::Relaxed);
            }
            Err(e) => self.obs.notice(&format!("checkpoint not saved: {e}")),
        }
    }

    fn last(&self) -> Option<PathBuf> {
        self.saved.lock().ok().and_then(|s| s.clone())
    }
}

/// A line about a state resumed from.
fn resumed_notice(name: &str, state: &BoundState) -> String {
    format!(
        "{name}: resumed after {} exact evaluations, with {} positions of the current one \
         solved and {} systems part-way",
        state.stats.rounds.len(),
        state.evaluation.solved.len(),
        state.evaluation.running.len()
    )
}

/// Solve one bound, reporting progress to `obs`, stopping when `control` says so, from
/// `from` if given; its states go to `keep` (with `before`, α's final state, ahead of β's).
#[allow(clippy::too_many_arguments)]
fn solve_bound(
    graph: &Graph,
    terminals: &Terminals,
    bound: Bound,
    obs: &dyn Observer,
    control: &Control<'_>,
    run_settings: &RunSettings,
    from: Option<BoundState>,
    keep: &Checkpoints<'_>,
    before: Option<&BoundStateRef<'_>>,
    twins: Option<Arc<[Option<Value>]>>,
) -> Result<Candidate, SolveError> {
    let name = match bound {
        Bound::Alpha => "alpha",
        Bound::Beta => "beta",
    };
    let progress = |event: Event<'_>| {
        match event {
            Event::Stage(stage) => obs.notice_detail(&format!("{name}: {stage}")),
            Event::Round(r) => obs.notice_detail(&format!(
                "{name}: exact evaluation {:.2} s ({} components, {} systems, largest {} \
                 positions, {} bits); {} White and {} Black moves switched",
                r.evaluate_seconds,
                r.evaluation.components,
                r.evaluation.systems,
                r.evaluation.largest,
                r.evaluation.max_bits,
                r.white_switches,
                r.black_switches
            )),
            Event::Components { done, total } => obs.components(done, total),
            Event::Twins { shared } => obs.notice_detail(&format!(
                "{name}: {shared} values equal to alpha's, held once"
            )),
            Event::Paged { bytes, copies } => obs.notice_detail(&format!(
                "{name}: {} MiB of numerators moved out of memory to temporary files \
                 ({copies} values share the pages of an equal one)",
                bytes >> 20
            )),
            Event::Refinement { positions, bits } => obs.refinement(positions, bits),
        }
        true
    };
    let stopping = || control.stopping();
    let sink = |state: &BoundStateRef<'_>| match before {
        Some(alpha) => keep.save(&[alpha, state]),
        None => keep.save(&[state]),
    };
    let every = run_settings.checkpoint_seconds.map(Duration::from_secs);
    let keeper = Keeper::with_clock(&stopping, every, &control.saved, &sink);
    if let Some(state) = &from {
        obs.notice(&resumed_notice(name, state));
    }
    let settings = Settings {
        filing: (run_settings.page_above != u64::MAX).then(|| Filing {
            dir: spill_dir(control),
            above: run_settings.page_above,
        }),
        twins,
        ..Settings::default()
    };
    super::solve_bound_kept(
        Game::of(terminals, graph, bound),
        bound,
        &settings,
        &progress,
        from,
        &keeper,
    )
}

/// With `control.resume`, the states kept in the board's checkpoint for this job (none if
/// there is no checkpoint, or one of another job) and its path.
fn states_to_resume(
    control: &Control<'_>,
    job: Job<'_>,
    obs: &dyn Observer,
) -> Result<(Vec<BoundState>, Option<PathBuf>), Error> {
    let Some(dir) = control.checkpoint_dir.as_deref().filter(|_| control.resume) else {
        return Ok((Vec::new(), None));
    };
    let loaded = match solve_checkpoint::load(dir, job) {
        Ok(loaded) => loaded,
        // A checkpoint that fails its checksums, does not decode or does not fit this
        // job: kept aside for whoever wants to look at it, and the job solved afresh
        // (stopping here would stop every later `--resume` the same way).
        Err(Error::Checkpoint { path, reason }) => {
            let mut aside = std::ffi::OsString::from(&path);
            aside.push(".rejected");
            std::fs::rename(&path, &aside).map_err(|e| Error::io(&path, e))?;
            let names: Vec<String> = job.materials.iter().map(Material::to_string).collect();
            obs.notice(&format!(
                "checkpoint {path} cannot be resumed from ({reason}); set aside as {}; \
                 solving {} from the start",
                Path::new(&aside).display(),
                names.join(", ")
            ));
            return Ok((Vec::new(), None));
        }
        // A state too large to decode here (the job had paged what it now would hold
        // whole): solved afresh, as the job fits where its state does not; the file stays
        // until this job's own saves replace it.
        Err(Error::Resources(reason)) => {
            obs.notice(&format!("{reason}: solving from the start"));
            return Ok((Vec::new(), None));
        }
        Err(e) => return Err(e),
    };
    match loaded {
        (Loaded::States(states), path) => Ok((states, Some(path))),
        (Loaded::Other(other), _) => {
            obs.notice(&format!(
                "the checkpoint belongs to {other}: solving from the start"
            ));
            Ok((Vec::new(), None))
        }
        (Loaded::Nothing, _) => {
            obs.notice("no checkpoint to resume from: solving from the start");
            Ok((Vec::new(), None))
        }
    }
}

/// The solve stage of a job on `materials` of `board`, on its graph with the terminal
/// values `terminals` (its memory checked by the caller, before the graph was built).
/// Errors: a checkpoint that cannot be read (one that fails its checks is set aside and
/// the job solved afresh), or a game where no proof was reached.
pub fn run(
    board: Board,
    materials: &[Material],
    graph: &Graph,
    terminals: &Terminals,
    obs: &dyn Observer,
    control: &Control<'_>,
    settings: &RunSettings,
) -> Result<Run, Error> {
    let what = materials
        .iter()
        .map(Material::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let dir = control.checkpoint_dir.as_deref();
    let job = Job {
        board,
        materials,
        graph,
    };
    let (kept, resumed_from) = states_to_resume(control, job, obs)?;
    let mut kept = kept.into_iter();
    let keep = Checkpoints {
        dir,
        over_memory: &control.over_memory,
        job,
        obs,
        saved: Mutex::new(None),
        saves: AtomicUsize::new(0),
    };
    // Stopped before saving anything new, a resumed run leaves the state it resumed from.
    let interrupted = || Run::Interrupted {
        checkpoint: keep.last().or_else(|| resumed_from.clone()),
    };
    let failed = |bound: Bound, why: String| {
        Error::Uncertified(format!(
            "the solve method reached no proof of {bound:?} for {what} on {board}: {why}"
        ))
    };
    let mut alpha = match solve_bound(
        graph,
        terminals,
        Bound::Alpha,
        obs,
        control,
        settings,
        kept.next(),
        &keep,
        None,
        None,
    ) {
        Ok(c) => c,
        Err(SolveError::Stopped) => return Ok(interrupted()),
        Err(SolveError::Failed(why)) => return Err(failed(Bound::Alpha, why)),
    };
    let mut stats = vec![alpha.stats.clone()];
    // α's certificate proves β too when the exits agree and every x < 1 lies in T′; where
    // the exits differ, α's values may still prove to be β with the exits' β; otherwise β
    // is solved apart.
    let same_exits = terminals.alpha == terminals.beta;
    let mut beta = if same_exits && super::proves(&alpha.certificate, Bound::Beta) {
        None
    } else if let Some(proved) = (!same_exits)
        .then(|| alpha_as_beta(graph, terminals, &alpha))
        .flatten()
    {
        Some(proved)
    } else {
        // α is certified: its images are not read again.
        alpha.values.release_images();
        let spilled = spill_alpha(&mut alpha, control, settings, obs);
        // α's values where β's come out equal to them: those held (not spilled), and the
        // paged ones, which stay where they are.
        let twins: Arc<[Option<Value>]> = match &spilled {
            Some(spilled) => spilled.paged_values().into(),
            None => alpha.values.values().iter().cloned().map(Some).collect(),
        };
        let before = alpha.kept();
        let beta_from = kept.next();
        let resumed_beta = beta_from.is_some();
        let saves = keep.saves.load(Ordering::Relaxed);
        let beta = match solve_bound(
            graph,
            terminals,
            Bound::Beta,
            obs,
            control,
            settings,
            beta_from,
            &keep,
            Some(&before),
            Some(twins),
        ) {
            Ok(c) => c,
            Err(SolveError::Stopped) => {
                // Stopped before β had a state to keep (in its float or strategy stage):
                // α's final state alone, so that a resumed run evaluates α's strategies
                // once instead of solving α again.
                if !resumed_beta && keep.saves.load(Ordering::Relaxed) == saves {
                    keep.save(&[&before]);
                }
                return Ok(interrupted());
            }
            Err(SolveError::Failed(why)) => return Err(failed(Bound::Beta, why)),
        };
        let Candidate {
            mut values,
            certificate,
            stats: beta_stats,
            ..
        } = beta;
        stats.push(beta_stats);
        values.release_images();
        if let Some(spilled) = spilled {
            // What β's solve freed goes back to the system before α's values return.
            resources::release_free_memory();
            spilled
                .back(&mut alpha.values)
                .map_err(|e| Error::io(spill_dir(control), e))?;
        }
        Some(Proved {
            values,
            certificate,
        })
    };
    // Certified: from here on the values are only read, one by one.
    alpha.values.release_images();
    if let Some(beta) = &mut beta {
        beta.values.release_images();
    }
    Ok(Run::Finished(Box::new(Outcome { alpha, beta, stats })))
}
