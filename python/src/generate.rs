//! `bidtb.generate`: make tables from Python, as `bidtb generate` does, writing the same
//! files. The run goes on a thread of its own, without the GIL; the calling thread waits
//! for it with the GIL released, hands its progress to a Python callback, and checks for
//! signals every 50 ms: Ctrl-C sets the library's stop flag, the run saves what it can
//! (the solve method's state) and stops between two steps, and `KeyboardInterrupt` is
//! raised.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use bidtb::Board;
use bidtb::Error;
use bidtb::Material;
use bidtb::internal::generate::session::{self, Session};
use bidtb::{Control, Method, MethodOptions, Observer, Options};
use bidtb::{Driven, Stopped};
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::error::{IntoPy, bidtb_error, to_py};

/// One thing a run reports, passed to the progress callback of `generate`.
#[pyclass(module = "bidtb", frozen, get_all)]
#[derive(Clone, Debug, Default)]
pub struct Event {
    /// What happened: `material` (a material starts), `stage` (a stage starts),
    /// `stage_done`, `iteration` (the iterate method), `richman_test`, `components` (the
    /// solve method's exact evaluation), `refinement`, `notice` or `detail`.
    kind: &'static str,
    /// The material(s) under way (`material` events; later events keep it).
    material: Option<String>,
    /// `material`: which one (from 1) of `total`.
    index: Option<usize>,
    /// `material`: how many materials the run makes; `components`: how many components.
    total: Option<usize>,
    /// `stage`, `stage_done`: the stage's name (`index`, `graph`, `solve`, `write`, ...).
    stage: Option<String>,
    /// `stage_done`: its seconds.
    seconds: Option<f64>,
    /// `iteration`, `richman_test`: the iteration; `components`: how many are solved.
    done: Option<u64>,
    /// `iteration`: guesses changed; `richman_test`: failing equations; `refinement`:
    /// positions of the system refined.
    count: Option<u64>,
    /// `iteration`, `refinement`: bits of the numbers.
    bits: Option<u64>,
    /// `notice`, `detail`: the text.
    text: Option<String>,
}

#[pymethods]
impl Event {
    fn __repr__(&self) -> String {
        format!("{self:?}")
    }
}

/// Messages from the run's thread.
enum Message {
    Event(Event),
    Done(Result<Driven, Error>),
}

/// The observer on the run's thread: every report goes down the channel.
struct Channel(Sender<Message>);

impl Channel {
    fn send(&self, e: Event) {
        let _ = self.0.send(Message::Event(e));
    }
}

impl Observer for Channel {
    fn material(&self, k: usize, total: usize, name: &str) {
        release_free_memory();
        self.send(Event {
            kind: "material",
            material: Some(name.to_string()),
            index: Some(k),
            total: Some(total),
            ..Event::default()
        });
    }
    fn stage(&self, name: &str) {
        self.send(Event {
            kind: "stage",
            stage: Some(name.to_string()),
            ..Event::default()
        });
    }
    fn stage_done(&self, name: &str, seconds: f64) {
        self.send(Event {
            kind: "stage_done",
            stage: Some(name.to_string()),
            seconds: Some(seconds),
            ..Event::default()
        });
    }
    fn iteration(&self, n: u32, changed: usize, bits: usize) {
        self.send(Event {
            kind: "iteration",
            done: Some(n.into()),
            count: Some(changed as u64),
            bits: Some(bits as u64),
            ..Event::default()
        });
    }
    fn richman_test(&self, n: u32, violations: usize) {
        self.send(Event {
            kind: "richman_test",
            done: Some(n.into()),
            count: Some(violations as u64),
            ..Event::default()
        });
    }
    fn notice(&self, text: &str) {
        self.send(Event {
            kind: "notice",
            text: Some(text.to_string()),
            ..Event::default()
        });
    }
    fn notice_detail(&self, text: &str) {
        self.send(Event {
            kind: "detail",
            text: Some(text.to_string()),
            ..Event::default()
        });
    }
    fn components(&self, done: usize, total: usize) {
        self.send(Event {
            kind: "components",
            done: Some(done as u64),
            total: Some(total),
            ..Event::default()
        });
    }
    fn refinement(&self, positions: usize, bits: u64) {
        self.send(Event {
            kind: "refinement",
            count: Some(positions as u64),
            bits: Some(bits),
            ..Event::default()
        });
    }
}

/// Hand the memory mimalloc keeps for reuse back to the system between materials, on every
/// thread of the pool (as the command line does), so that one material's peak does not
/// hide memory from the next one's memory check.
fn release_free_memory() {
    let collect = || {
        // SAFETY: `mi_collect` only frees what the calling thread's heap no longer uses.
        unsafe { libmimalloc_sys::mi_collect(true) }
    };
    rayon::broadcast(|_| collect());
    collect();
}

/// The materials a run asks for: `pieces`, `materials` (a list of names or one
/// comma-separated string), or the three-piece set (as `--pieces` and `--material`).
fn requested(pieces: Option<u8>, materials: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Material>> {
    let names: Option<Vec<String>> = match materials {
        None => None,
        Some(m) if m.is_none() => None,
        Some(m) => Some(match m.cast::<PyString>() {
            Ok(s) => s.to_str()?.split(',').map(str::to_string).collect(),
            Err(_) => m.extract()?,
        }),
    };
    session::requested(pieces, names.as_deref(), ("pieces", "materials"))
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Hand a batch of events to the callback, in order, skipping a `components`,
/// `iteration` or `refinement` event that the next one of its kind supersedes.
fn deliver(py: Python<'_>, callback: &Bound<'_, PyAny>, batch: Vec<Event>) -> PyResult<()> {
    for (i, e) in batch.iter().enumerate() {
        let superseded = matches!(e.kind, "components" | "iteration" | "refinement")
            && batch.get(i + 1).is_some_and(|n| n.kind == e.kind);
        if !superseded {
            callback.call1((Py::new(py, e.clone())?,))?;
        }
    }
    Ok(())
}

/// Wait for the run's thread: hand its events to `callback`, check for signals, and on
/// Ctrl-C (or an exception in the callback) ask the run to stop. Returns the run's result
/// and the exception that stopped it, if any.
fn wait(
    py: Python<'_>,
    rx: Receiver<Message>,
    stop: &AtomicBool,
    callback: Option<&Bound<'_, PyAny>>,
) -> (Option<Result<Driven, Error>>, Option<PyErr>) {
    let mut rx = rx;
    let mut pending: Option<PyErr> = None;
    let mut done = None;
    let mut current: Option<String> = None;
    loop {
        // Wait without the GIL (other Python threads run meanwhile), then take whatever
        // else has arrived.
        let (first, back) = py.detach(move || {
            let first = rx.recv_timeout(Duration::from_millis(50));
            (first, rx)
        });
        rx = back;
        let mut batch = Vec::new();
        let mut disconnected = false;
        let mut take = |m: Result<Message, ()>| match m {
            Ok(Message::Event(e)) => batch.push(e),
            Ok(Message::Done(r)) => done = Some(r),
            Err(()) => disconnected = true,
        };
        match first {
            Ok(m) => take(Ok(m)),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => take(Err(())),
        }
        while let Ok(m) = rx.try_recv() {
            take(Ok(m));
        }
        // Every event names the material under way.
        for e in &mut batch {
            if e.kind == "material" {
                current = e.material.clone();
            } else {
                e.material = current.clone();
            }
        }
        if let (Some(cb), None, false) = (callback, &pending, batch.is_empty())
            && let Err(e) = deliver(py, cb, batch)
        {
            stop.store(true, Ordering::SeqCst);
            pending = Some(e);
        }
        if done.is_some() || disconnected {
            return (done, pending);
        }
        if pending.is_none()
            && let Err(e) = py.check_signals()
        {
            stop.store(true, Ordering::SeqCst);
            pending = Some(e);
        }
    }
}

/// Make the tables of a board: the library's `generate` (see `bidtb/__init__.py` for the
/// documented signature).
#[pyfunction]
#[pyo3(signature = (
    board = "8x8",
    method = "solve",
    out = PathBuf::from("tables"),
    pieces = None,
    materials = None,
    progress = None,
    resume = false,
    allow_uncertified = false,
    max_iterations = None,
    jobs = 2,
))]
#[allow(clippy::too_many_arguments)]
pub fn generate(
    py: Python<'_>,
    board: &str,
    method: &str,
    out: PathBuf,
    pieces: Option<u8>,
    materials: Option<&Bound<'_, PyAny>>,
    progress: Option<&Bound<'_, PyAny>>,
    resume: bool,
    allow_uncertified: bool,
    max_iterations: Option<u32>,
    jobs: i64,
) -> PyResult<Py<PyAny>> {
    let board: Board = board.parse().py(py)?;
    let method = match method {
        "solve" => Method::Solve,
        "iterate" => Method::Iterate,
        other => {
            return Err(PyValueError::new_err(format!(
                "method is 'solve' (exact solves, any material) or 'iterate' (the study's \
                 iteration, three-piece materials), not '{other}'"
            )));
        }
    };
    if method == Method::Solve && max_iterations.is_some() {
        return Err(PyValueError::new_err(
            "max_iterations applies to method='iterate' only (the solve method has no \
             iterations to cap)",
        ));
    }
    let jobs = match u8::try_from(jobs) {
        Ok(jobs @ 1..=16) => jobs,
        _ => {
            return Err(PyValueError::new_err(format!(
                "jobs is 1 to 16 (jobs side by side; 1: one after another), not {jobs}"
            )));
        }
    };
    if max_iterations == Some(0) {
        return Err(PyValueError::new_err("max_iterations must be at least 1"));
    }
    let materials = requested(pieces, materials)?;
    session::check_method(method, &materials, "method='solve'")
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let callback = progress.filter(|p| !p.is_none());
    if let Some(cb) = callback
        && !cb.is_callable()
    {
        return Err(PyValueError::new_err(
            "progress is a callable taking a bidtb.Event (or None)",
        ));
    }
    let mut session = Session::open(&out, board, method, allow_uncertified).py(py)?;
    let dir = session.dir.clone();
    let mut options = Options::new(board);
    options.method = method.into();
    options.materials = materials;
    match &mut options.method {
        MethodOptions::Iterate(settings) => settings.max_iterations = max_iterations,
        MethodOptions::Solve(settings) => {
            *settings = bidtb::SolveSettings::from_env().map_err(|e| to_py(py, e))?
        }
    }

    let stop = AtomicBool::new(false);
    let control = Control {
        checkpoint_dir: Some(dir.clone()),
        resume,
        jobs: jobs.into(),
        stop: Some(&stop),
        ..Control::default()
    };
    let (tx, rx) = mpsc::channel();
    let (done, pending, panicked) = std::thread::scope(|s| {
        let (options, control, session) = (&options, &control, &mut session);
        let worker = s.spawn(move || {
            let observer = Channel(tx);
            let result = session.run(options, &observer, control);
            let _ = observer.0.send(Message::Done(result));
        });
        let (done, pending) = wait(py, rx, &stop, callback);
        // The run has ended (or its thread died): wait for it to be gone.
        let panicked = py.detach(|| worker.join().is_err());
        (done, pending, panicked)
    });
    if let Some(e) = pending {
        // Ctrl-C or the callback's exception: raised whatever the run did meanwhile.
        if e.is_instance_of::<PyKeyboardInterrupt>(py)
            && let Some(Ok(Driven::Interrupted(stopped))) = &done
        {
            return Err(PyKeyboardInterrupt::new_err(interrupted(
                method, &out, board, stopped,
            )));
        }
        return Err(e);
    }
    let done = match (done, panicked) {
        (Some(done), false) => done,
        _ => {
            return Err(PyRuntimeError::new_err(
                "the generation thread panicked (a bug in bidtb)",
            ));
        }
    };
    let failure = match done {
        Ok(Driven::Finished(_, skipped)) if !skipped.is_empty() => Some(Error::Resources(
            skipped
                .iter()
                .map(|s| format!("{} skipped: {}", s.materials.join(", "), s.reason))
                .collect::<Vec<_>>()
                .join("; "),
        )),
        Ok(Driven::Finished(..)) => None,
        Ok(Driven::Interrupted(stopped)) => {
            return Err(PyKeyboardInterrupt::new_err(interrupted(
                method, &out, board, &stopped,
            )));
        }
        Err(e @ Error::Uncertified(_)) => Some(e),
        Err(e) => return Err(to_py(py, e)),
    };
    let text = session.finish(failure.is_some()).py(py)?;
    if let Some(e) = failure {
        return Err(bidtb_error(
            py,
            format!("{e} (pass allow_uncertified=True to accept it)"),
        ));
    }
    let json = py.import("json")?;
    Ok(json.call_method1("loads", (text,))?.unbind())
}

/// What a stopped run says: where it stopped, what was saved, how to resume.
fn interrupted(method: Method, out: &Path, board: Board, stopped: &[Stopped]) -> String {
    let again = format!(
        "bidtb.generate(board=\"{board}\", method=\"{method}\", out=\"{}\", resume=True)",
        out.display()
    );
    stopped
        .iter()
        .map(|s| {
            session::interrupted_message(method, &s.materials, s.n, s.checkpoint.as_deref(), &again)
        })
        .collect::<Vec<_>>()
        .join("\n")
}
