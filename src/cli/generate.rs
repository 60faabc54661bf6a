//! `bidtb generate`: progress display, the human summary, and writing the results
//! (summary.json, convergence.csv, quiescent.txt and the table files).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::parse_board;
use crate::atomic;
use crate::error::Error;
use crate::generate::{self, Method, Observer, Options, Solution};
use crate::geometry::Board;
use crate::report;

/// Progress on stderr: a bar when stderr is a terminal, stage lines otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    quiet: bool,
    positions: usize,
    started: Mutex<Option<std::time::Instant>>,
}

impl Progress {
    fn new(quiet: bool, method: Method, max_iterations: Option<u32>, positions: usize) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = match (method, max_iterations) {
                (Method::Iterate, Some(m)) => ProgressBar::new(m as u64),
                (Method::Solve, _) => ProgressBar::new(0),
                _ => ProgressBar::new_spinner(),
            };
            bar.set_draw_target(ProgressDrawTarget::stderr());
            let template = match (method, max_iterations) {
                (Method::Solve, _) => {
                    "{spinner} components {pos}/{len} {wide_bar} {msg} [{elapsed}]"
                }
                (_, Some(_)) => "{spinner} iteration {pos}/{len} {wide_bar} {msg} eta {eta}",
                _ => "{spinner} iteration {pos} ({per_sec}) {msg} [{elapsed}]",
            };
            bar.set_style(ProgressStyle::with_template(template).expect("valid template"));
            bar
        });
        Progress {
            bar,
            quiet,
            positions,
            started: Mutex::new(None),
        }
    }

    fn line(&self, text: &str) {
        if self.quiet {
            return;
        }
        match &self.bar {
            Some(bar) if !bar.is_finished() => bar.println(text),
            _ => eprintln!("{text}"),
        }
    }
}

impl Observer for Progress {
    fn stage(&self, name: &str) {
        if name == "iterate" || name == "solve" {
            *self.started.lock().expect("not poisoned") = Some(std::time::Instant::now());
        }
    }
    fn stage_done(&self, name: &str, seconds: f64) {
        if let (Some(bar), "iterate" | "solve") = (&self.bar, name) {
            bar.finish_and_clear();
        }
        self.line(&format!("stage {name}: {seconds:.3} s"));
    }
    fn iteration(&self, n: u32, changed: usize, bits: usize) {
        if let Some(bar) = &self.bar {
            bar.set_position(n as u64);
            if n.is_multiple_of(8) {
                let secs = self
                    .started
                    .lock()
                    .expect("not poisoned")
                    .map(|t| t.elapsed().as_secs_f64());
                let rate = secs
                    .filter(|&s| s > 0.0)
                    .map(|s| n as f64 * self.positions as f64 / s / 1e6);
                bar.set_message(format!(
                    "{changed} guesses changed, {bits} bits, {:.1} M positions/s",
                    rate.unwrap_or(0.0)
                ));
            }
        }
    }
    fn notice_detail(&self, text: &str) {
        self.line(text);
    }
    fn components(&self, done: usize, total: usize) {
        if let Some(bar) = &self.bar {
            bar.set_length(total as u64);
            bar.set_position(done as u64);
            bar.set_message("");
        }
    }
    fn refinement(&self, positions: usize, bits: u64) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("system of {positions} positions: {bits} bits"));
        }
    }
    fn notice(&self, text: &str) {
        match &self.bar {
            Some(bar) if !bar.is_finished() => bar.println(text),
            _ => eprintln!("{text}"),
        }
    }
    fn richman_test(&self, n: u32, violations: usize) {
        if violations == 0 {
            self.line(&format!(
                "iteration {n}: the guesses satisfy every equation"
            ));
        }
    }
}

/// Make `dir` and check that a file can be created in it.
fn prepare_dir(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let probe = dir.join(".bidtb-write-test");
    std::fs::write(&probe, b"").map_err(|e| Error::io(dir, e))?;
    std::fs::remove_file(&probe).map_err(|e| Error::io(&probe, e))
}

fn human_summary(sol: &Solution, out: &mut impl Write) -> std::io::Result<()> {
    if sol.method == Method::Solve {
        let rounds: usize = sol
            .solve_stats
            .iter()
            .flatten()
            .map(|s| s.rounds.len())
            .sum();
        writeln!(
            out,
            "board {}: solved in {:.1} s ({rounds} exact evaluations)",
            sol.board, sol.timings.solve
        )?;
        if !sol.alpha_below_beta.is_empty() {
            writeln!(
                out,
                "ALPHA < BETA at {} positions: listed in alpha-below-beta.txt; the tables \
                 of their classes keep both (format version 2)",
                sol.alpha_below_beta.len()
            )?;
        }
    } else {
        writeln!(
            out,
            "board {}: {} iterations in {:.1} s",
            sol.board, sol.iterations_run, sol.timings.iterate
        )?;
    }
    match sol.first_richman_iteration {
        _ if sol.method == Method::Solve => {}
        Some(n) => writeln!(
            out,
            "the guesses first satisfy every equation at iteration {n}"
        )?,
        None => writeln!(
            out,
            "NOT CONVERGED: the guesses are not yet a Richman function after {} iterations; \
             values are provisional (raise --max-iterations)",
            sol.iterations_run
        )?,
    }
    if sol.certificate.is_some() {
        let verdict = if sol.certified() && sol.alpha_below_beta.is_empty() {
            "every value is proved exact (alpha = s = beta)"
        } else if sol.certified() {
            "alpha and beta are each proved exact by their own certificate"
        } else {
            "CERTIFICATE FAILED"
        };
        writeln!(out, "certificate: {verdict}")?;
    }
    let row = |cells: [&str; 10]| {
        format!(
            "{:<6} {:>10} {:>10} {:>9} {:>8} {:>5} {:>5} {:>9} {:>6} {:>6}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            cells[6],
            cells[7],
            cells[8],
            cells[9]
        )
    };
    let header = [
        "class",
        "positions",
        "canonical",
        "stable at",
        "max den",
        "alpha",
        "beta",
        "quiescent",
        "T max",
        "T' max",
    ];
    writeln!(out, "{}", row(header))?;
    let opt = |x: Option<String>| x.unwrap_or_else(|| "-".into());
    let yes = |b: Option<bool>| opt(b.map(|b| if b { "yes" } else { "NO" }.to_string()));
    for (m, c) in &sol.classes {
        let cells = [
            m.to_string(),
            c.positions.to_string(),
            c.canonical_positions.to_string(),
            opt(c.stable_at.map(|n| n.to_string())),
            format!("{} dig", c.max_denominator_digits),
            yes(c.certified_alpha),
            yes(c.certified_beta),
            opt(c.quiescent.map(|q| q.to_string())),
            opt(c.max_level_white.map(|q| q.to_string())),
            opt(c.max_level_black.map(|q| q.to_string())),
        ];
        writeln!(out, "{}", row(std::array::from_fn(|i| cells[i].as_str())))?;
    }
    Ok(())
}

/// An account of a failed certificate: what failed, how often, the first few positions.
fn certificate_failures(sol: &Solution) -> Option<String> {
    let cert = sol.certificate.as_ref().filter(|_| !sol.certified())?;
    // Where β was solved apart, its own certificate answers for β (the solve method only
    // returns proved bounds, so this lists nothing there; kept for completeness).
    let beta_failures = &sol.beta_certificate().unwrap_or(cert).beta_failures;
    let mut text = String::new();
    for (what, list) in [
        ("Richman equations fail", &cert.violations),
        (
            "positions with s > 0 lie outside White's closure (alpha = s unproved)",
            &cert.alpha_failures,
        ),
        (
            "positions with s < 1 lie outside Black's closure (beta = s unproved)",
            beta_failures,
        ),
    ] {
        if list.is_empty() {
            continue;
        }
        let first: Vec<String> = list
            .iter()
            .take(5)
            .map(|&p| {
                let pos = sol.index.position(p as usize);
                format!(
                    "{} {}",
                    pos.material(),
                    crate::fen::placement(sol.board, &pos)
                )
            })
            .collect();
        text += &format!("{} {what}; first: {}\n", list.len(), first.join(", "));
    }
    Some(text)
}

/// The arguments of `bidtb generate`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// Board as FILESxRANKS, each 2..=16 (e.g. 8x8, 4x4, 3x4 = 3 files by 4 ranks).
    #[arg(long, default_value = "8x8", value_parser = parse_board)]
    pub board: Board,
    /// How the values are made: `iterate` (the study's αₙ/βₙ iteration with
    /// simplest-rational guesses; reproduces 2644 on 8x8, reaches boards up to about 8x8)
    /// or `solve` (exact linear solves under improving strategies; every board). The
    /// certificate proves the values either way, and both write the same tables.
    #[arg(long, value_enum, default_value_t = MethodArg::Iterate)]
    pub method: MethodArg,
    /// Output directory; results go to DIR/FxR/.
    #[arg(long, default_value = "tables")]
    pub out: PathBuf,
    /// With --method iterate: compute every intermediate guess sₙ, the study's own way (and
    /// record guess changes and Richman tests in convergence.csv). Without it the exact
    /// values are solved first (about a second on 8x8) and each position's last change is
    /// found by comparing αₙ and βₙ with the Stern–Brocot parents of its value: the same
    /// first Richman iteration, stable_at and tables, several times faster. Checkpoints and
    /// --resume always use the guesses.
    #[arg(long)]
    pub guesses: bool,
    /// Worker threads (default: one per core).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Stop after N iterations even if not converged (the summary then says so, and no
    /// table file is written).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_iterations: Option<u32>,
    /// With --guesses: test for a Richman function once no guess has changed for N
    /// iterations (does not change any result: a Richman function never changes again).
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
    pub check_every: u32,
    /// With --guesses: also test at every Nth iteration, recording the failing equations
    /// per class in convergence.csv for `bidtb plot` (0: only the tests above; changes no
    /// result).
    #[arg(long, default_value_t = 256)]
    pub measure_every: u32,
    /// Print the summary as JSON on stdout instead of text.
    #[arg(long)]
    pub json: bool,
    /// No progress display or stage lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// Accept a board whose certificate fails (α = s = β not proved): without this the
    /// command reports the failing positions, writes no table file and exits with 1.
    #[arg(long)]
    pub allow_uncertified: bool,
    /// Save the full iteration state to DIR/FxR/checkpoint-N.ckpt every N iterations
    /// (atomically; the newest two are kept, and removed once the run converges).
    /// Ctrl-C or SIGTERM, and reaching --max-iterations, then also save one.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..), value_name = "N")]
    pub checkpoint_every: Option<u32>,
    /// With --method solve: also save the solve's state to DIR/FxR/solve.ckpt every S
    /// seconds while it runs (it is always saved when the run is stopped by Ctrl-C or
    /// SIGTERM: strategies, the values solved so far, the refinement of systems under way).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), value_name = "S")]
    pub checkpoint_seconds: Option<u64>,
    /// Continue from the newest valid checkpoint in DIR/FxR (from the start if there is
    /// none): for --method iterate also past an earlier --max-iterations; for --method
    /// solve from DIR/FxR/solve.ckpt. The result is exactly that of an uninterrupted run.
    #[arg(long)]
    pub resume: bool,
}

/// The `--method` values.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(super) enum MethodArg {
    /// The study's iteration (reproduces 2644).
    Iterate,
    /// Exact solves under improving strategies.
    Solve,
}

/// Write the table file of every class, unless the run has no certificate or a failed one
/// that was not accepted. Returns how many files were written.
fn write_tables(sol: &Solution, dir: &Path, accept_failed: bool) -> Result<usize, Error> {
    let Some(contents) = report::table_contents(sol) else {
        return Ok(0);
    };
    if !sol.certified() && !accept_failed {
        return Ok(0);
    }
    // All tables or none: a failure (a full disk) leaves the previous tables intact.
    let files: Vec<(PathBuf, Vec<u8>)> = contents
        .iter()
        .map(|c| {
            (
                dir.join(crate::table::file_name(c.material)),
                crate::table::encode(c),
            )
        })
        .collect();
    atomic::write_all_atomic(&files)?;
    Ok(files.len())
}

pub(super) fn run(args: Args) -> Result<(), (u8, Error)> {
    let Args {
        board,
        method,
        guesses,
        threads: _,
        out,
        max_iterations,
        check_every,
        measure_every,
        json,
        quiet,
        allow_uncertified,
        checkpoint_every,
        checkpoint_seconds,
        resume,
    } = args;
    let method = match method {
        MethodArg::Iterate => Method::Iterate,
        MethodArg::Solve => Method::Solve,
    };
    if method == Method::Solve {
        let iterate_only = [
            ("--max-iterations", max_iterations.is_some()),
            ("--checkpoint-every", checkpoint_every.is_some()),
            ("--guesses", guesses),
        ];
        if let Some((flag, _)) = iterate_only.iter().find(|(_, given)| *given) {
            return Err((
                2,
                Error::Usage(format!(
                    "{flag} applies to --method iterate only (the solve method has no \
                     iterations to cap or checkpoint; it saves its state with \
                     --checkpoint-seconds S and when stopped)"
                )),
            ));
        }
    } else if checkpoint_seconds.is_some() {
        return Err((
            2,
            Error::Usage(
                "--checkpoint-seconds applies to --method solve only (the iteration saves \
                 checkpoints with --checkpoint-every N)"
                    .into(),
            ),
        ));
    }
    let dir = out.join(board.to_string());
    prepare_dir(&dir).map_err(|e| (2, e))?;
    atomic::remove_stale_temporaries(&dir);
    let mut options = Options::new(board);
    options.method = method;
    options.guesses = guesses;
    options.max_iterations = max_iterations;
    options.check_every = check_every;
    options.measure_every = measure_every;
    let estimate = crate::index::estimate_positions(board);
    let progress = Progress::new(quiet, method, max_iterations, estimate);
    // Ctrl-C and SIGTERM stop the run between two iterations (a second one kills it).
    static STOP: AtomicBool = AtomicBool::new(false);
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    let control = generate::Control {
        checkpoint_dir: Some(dir.clone()),
        checkpoint_every,
        checkpoint_seconds,
        resume,
        stop: Some(&STOP),
    };
    let started = std::time::Instant::now();
    let sol = match generate::solve_with(&options, &progress, &control).map_err(|e| (1, e))? {
        generate::Run::Finished(sol) => sol,
        generate::Run::Interrupted { checkpoint, .. } if method == Method::Solve => {
            let how = match checkpoint {
                Some(path) => format!(
                    "its state is saved as {}; resume with `bidtb generate --board {board} \
                     --method solve --out {} --resume`",
                    path.display(),
                    out.display()
                ),
                None => "nothing was saved (it stopped before its first strategies): run it \
                         again"
                    .to_string(),
            };
            let msg = format!("interrupted; no table written; {how}");
            return Err((130, Error::Interrupted(msg)));
        }
        generate::Run::Interrupted { n, checkpoint } => {
            let how = match checkpoint {
                Some(path) => format!(
                    "checkpoint saved as {}; resume with `bidtb generate --board {board} \
                     --out {} --resume`",
                    path.display(),
                    out.display()
                ),
                None => "nothing saved (with --checkpoint-every N a stopped run can be resumed)"
                    .to_string(),
            };
            let msg = format!("interrupted at iteration {n}; no table written; {how}");
            return Err((130, Error::Interrupted(msg)));
        }
    };
    let tables = write_tables(&sol, &dir, allow_uncertified).map_err(|e| (1, e))?;
    // Converged: the checkpoints have served their purpose. (A capped run keeps them, so
    // that `--resume` with a higher cap continues it.)
    if sol.converged() {
        crate::checkpoint::remove_all(&dir);
    }
    // A finished solve needs its state no more. (A failed one returned above and left it.)
    if method == Method::Solve {
        crate::solve_checkpoint::remove(&dir);
    }
    let seconds = started.elapsed().as_secs_f64();
    let summary = report::summary(&sol, seconds);
    let text = serde_json::to_string_pretty(&summary).expect("summary serialises");
    atomic::write_atomic(&dir.join("summary.json"), text.as_bytes()).map_err(|e| (1, e))?;
    if method == Method::Iterate {
        let record = crate::convergence::Convergence::of(&sol).to_csv();
        atomic::write_atomic(&dir.join("convergence.csv"), record.as_bytes())
            .map_err(|e| (1, e))?;
    }
    let split = dir.join("alpha-below-beta.txt");
    if sol.alpha_below_beta.is_empty() {
        let _ = std::fs::remove_file(&split);
    } else {
        let lines = report::alpha_below_beta_lines(&sol);
        atomic::write_atomic(&split, lines.as_bytes()).map_err(|e| (1, e))?;
    }
    if sol.certificate.is_some() {
        let lines = report::quiescent_lines(&sol);
        atomic::write_atomic(&dir.join("quiescent.txt"), lines.as_bytes()).map_err(|e| (1, e))?;
    }
    let stdout = &mut std::io::stdout().lock();
    let written = if json {
        writeln!(stdout, "{text}")
    } else {
        human_summary(&sol, stdout)
    };
    written.map_err(|e| (1, Error::io("stdout", e)))?;
    if !quiet {
        eprintln!("wrote {}", dir.join("summary.json").display());
        if tables > 0 {
            eprintln!("wrote {tables} table files to {}", dir.display());
        } else {
            eprintln!("no table files written: the values are not proved exact");
        }
    }
    if let Some(failures) = certificate_failures(&sol) {
        eprint!("{failures}");
        if !allow_uncertified {
            let msg =
                format!("the certificate of {board} failed; pass --allow-uncertified to accept it");
            return Err((1, Error::Uncertified(msg)));
        }
    }
    Ok(())
}
