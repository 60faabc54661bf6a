//! How a long run reports what it does and how it is steered: the [`Observer`] that
//! receives stages, iterations and notices (progress bars, logs), and the [`Control`] that
//! carries checkpoints, resumption and the stop flag. Both methods and the generation
//! pipeline above them use these; nothing here knows either method.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What a run reports as it goes (progress bars, logs). Every method has a no-op default.
pub trait Observer: Sync {
    /// A named stage starts.
    fn stage(&self, _name: &str) {}
    /// A stage ended after `seconds`.
    fn stage_done(&self, _name: &str, _seconds: f64) {}
    /// Material `k` (from 1) of `total` starts: `name` (a run over several materials).
    fn material(&self, _k: usize, _total: usize, _name: &str) {}
    /// Material `k` of `total` is skipped: `reason` (too large for the memory available,
    /// or needing a skipped material).
    fn skipped(&self, _k: usize, _total: usize, _name: &str, _reason: &str) {}
    /// Material `k` of `total` is finished: `line` says what it took and holds (positions,
    /// seconds, peak memory, largest denominator, α < β count).
    fn finished(&self, _k: usize, _total: usize, _line: &str) {}
    /// Iteration `n` is done; `changed` guesses changed; values use `bits` fraction bits.
    fn iteration(&self, _n: u32, _changed: usize, _bits: usize) {}
    /// A Richman test ran at iteration `n` and found `violations` failing equations
    /// (a lower bound when the cheap filter already failed).
    fn richman_test(&self, _n: u32, _violations: usize) {}
    /// Something the user should know (a checkpoint skipped, a run resumed).
    fn notice(&self, _text: &str) {}
    /// A line of detail on a long stage (the solve method's rounds), for the progress
    /// display only.
    fn notice_detail(&self, _text: &str) {}
    /// The solve method's exact evaluation has solved `done` of `total` components.
    fn components(&self, _done: usize, _total: usize) {}
    /// The solve method is refining a system of `positions` positions, now at `bits` bits.
    fn refinement(&self, _positions: usize, _bits: u64) {}
}

/// An observer that reports nothing.
pub struct Silent;
impl Observer for Silent {}

/// Checkpoints, resumption and interruption of a run (all off by default).
#[derive(Debug)]
pub struct Control<'a> {
    /// Where checkpoints are saved and looked for (`DIR/FxR`).
    pub checkpoint_dir: Option<PathBuf>,
    /// Start from the newest valid checkpoint in `checkpoint_dir` (from the start if there
    /// is none).
    pub resume: bool,
    /// Checked between steps; once set, the run saves a checkpoint (if checkpoints are on)
    /// and stops.
    pub stop: Option<&'a AtomicBool>,
    /// The solve method: when its state was last saved, across the materials of a run (the
    /// period of `checkpoint_seconds` runs on across them).
    pub saved: SaveClock,
    /// Raised by the driver's memory guard ([`crate::resources::sample_anonymous`]) when a job
    /// holds more memory than it may: the job stops as on [`Control::stop`], but saves no
    /// checkpoint (saving needs memory too), and the driver skips it. Shared with the
    /// controls made from this one ([`Control::afresh`]), so that a job started over is
    /// watched too.
    pub over_memory: std::sync::Arc<AtomicBool>,
    /// A run of several jobs ([`crate::generate::driver::run`]): at most this many side by
    /// side (1: one after another). A job starts beside others only when the memory
    /// estimates of all of them fit together under the memory guard's limit.
    pub jobs: usize,
    /// The job runs beside others (the driver started it while they ran): its memory
    /// estimate was checked by the driver against theirs, not against the memory available
    /// now, which they hold part of, and it leaves the process's peak memory alone (its
    /// reported peak is the process's while it ran, theirs included).
    pub beside_others: bool,
}

impl Default for Control<'_> {
    fn default() -> Self {
        Control {
            checkpoint_dir: None,
            resume: false,
            stop: None,
            saved: SaveClock::default(),
            over_memory: Default::default(),
            jobs: 1,
            beside_others: false,
        }
    }
}

impl<'a> Control<'a> {
    /// The same control, starting from the beginning instead of from a checkpoint.
    pub fn afresh(&self) -> Control<'a> {
        Control {
            checkpoint_dir: self.checkpoint_dir.clone(),
            resume: false,
            stop: self.stop,
            saved: SaveClock::default(),
            over_memory: self.over_memory.clone(),
            jobs: self.jobs,
            beside_others: self.beside_others,
        }
    }

    /// Whether the run has been asked to stop, or the job under way holds too much memory.
    pub fn stopping(&self) -> bool {
        self.stop.is_some_and(|s| s.load(Ordering::Relaxed)) || self.is_over_memory()
    }

    /// Whether the memory guard stopped the job under way.
    pub fn is_over_memory(&self) -> bool {
        self.over_memory.load(Ordering::Relaxed)
    }
}

/// Run `f` as the stage `name`: announce it, time it into `seconds`, report its end.
pub fn timed<T>(obs: &dyn Observer, name: &str, seconds: &mut f64, f: impl FnOnce() -> T) -> T {
    obs.stage(name);
    let t = std::time::Instant::now();
    let out = f();
    *seconds = t.elapsed().as_secs_f64();
    obs.stage_done(name, *seconds);
    out
}

/// When the state was last saved: the start of the period of periodic saves, which a run
/// of several solves (one per material) shares so that the period runs across them.
/// Clones share the clock: the jobs a run holds side by side save in turn.
#[derive(Clone, Debug)]
pub struct SaveClock(std::sync::Arc<Mutex<Instant>>);

impl Default for SaveClock {
    fn default() -> SaveClock {
        SaveClock(std::sync::Arc::new(Mutex::new(Instant::now())))
    }
}

impl SaveClock {
    /// Whether `every` has passed since the last save (or the clock's start).
    pub fn due(&self, every: Duration) -> bool {
        self.0
            .lock()
            .map(|last| last.elapsed() >= every)
            .unwrap_or(false)
    }

    /// A save was made now.
    pub fn restart(&self) {
        if let Ok(mut last) = self.0.lock() {
            *last = Instant::now();
        }
    }
}
