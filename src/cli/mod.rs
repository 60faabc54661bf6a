//! The command line: argument parsing, progress display, human and JSON output, exit codes.
//!
//! Exit status: 0 on success (including a run capped by `--max-iterations`, which says so),
//! 1 when work failed at run time (for example a write error), 2 for bad usage or input.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::Error;
use crate::generate::{self, Observer, Options, Solution};
use crate::geometry::Board;
use crate::report;

/// Exact endgame tablebases for bidding chess (and random-turn chess).
///
/// A position's value is the share of the money Black needs to win the bidding game, which
/// equals White's winning probability when a fair coin decides who moves. Values are exact
/// rationals, computed by iterating lower and upper bounds (αₙ, βₙ) and guessing each value
/// as the simplest rational between them until the guesses satisfy every equation.
#[derive(Parser, Debug)]
#[command(name = "bidtb", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compute every position of two kings and at most one more piece on a board.
    ///
    /// Iterates αₙ, βₙ for all classes (KvK, KQvK, KRvK, KBvK, KNvK, KPvK) jointly, tracks the
    /// guesses sₙ, and stops once they form a Richman function. Prints a summary and writes
    /// DIR/FxR/summary.json. On 8x8 the first Richman iteration is 2644.
    Generate {
        /// Board as FILESxRANKS, each 2..=16 (e.g. 8x8, 4x4, 3x4 = 3 files by 4 ranks).
        #[arg(long, default_value = "8x8", value_parser = parse_board)]
        board: Board,
        /// Output directory; results go to DIR/FxR/.
        #[arg(long, default_value = "tables")]
        out: PathBuf,
        /// Worker threads (default: one per core).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
        threads: Option<u16>,
        /// Stop after N iterations even if not converged (the summary then says so).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        max_iterations: Option<u32>,
        /// Test for a Richman function once no guess has changed for N iterations (does not
        /// change any result: a Richman function never changes again).
        #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..))]
        check_every: u32,
        /// Print the summary as JSON on stdout instead of text.
        #[arg(long)]
        json: bool,
        /// No progress display or stage lines on stderr.
        #[arg(long, short)]
        quiet: bool,
        /// Accept a board whose certificate fails (α = s = β not proved): without this the
        /// command reports the failing positions and exits with status 1.
        #[arg(long)]
        allow_uncertified: bool,
    },
}

fn parse_board(s: &str) -> Result<Board, String> {
    s.parse::<Board>().map_err(|e| e.to_string())
}

/// Progress on stderr: a bar when stderr is a terminal, stage lines otherwise.
struct Progress {
    bar: Option<ProgressBar>,
    quiet: bool,
    positions: usize,
    started: Mutex<Option<std::time::Instant>>,
}

impl Progress {
    fn new(quiet: bool, max_iterations: Option<u32>, positions: usize) -> Progress {
        let bar = (!quiet && std::io::stderr().is_terminal()).then(|| {
            let bar = match max_iterations {
                Some(m) => ProgressBar::new(m as u64),
                None => ProgressBar::new_spinner(),
            };
            bar.set_draw_target(ProgressDrawTarget::stderr());
            let template = if max_iterations.is_some() {
                "{spinner} iteration {pos}/{len} {wide_bar} {msg} eta {eta}"
            } else {
                "{spinner} iteration {pos} ({per_sec}) {msg} [{elapsed}]"
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
        if name == "iterate" {
            *self.started.lock().expect("not poisoned") = Some(std::time::Instant::now());
        }
    }
    fn stage_done(&self, name: &str, seconds: f64) {
        if let (Some(bar), "iterate") = (&self.bar, name) {
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
    writeln!(
        out,
        "board {}: {} iterations in {:.1} s",
        sol.board, sol.iterations_run, sol.timings.iterate
    )?;
    match sol.first_richman_iteration {
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
        let verdict = if sol.certified() {
            "every value is proved exact (alpha = s = beta)"
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
            c.stable_at.to_string(),
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
    let cert = sol.certificate.as_ref().filter(|c| !c.certified())?;
    let mut text = String::new();
    for (what, list) in [
        ("Richman equations fail", &cert.violations),
        (
            "positions with s > 0 lie outside White's closure (alpha = s unproved)",
            &cert.alpha_failures,
        ),
        (
            "positions with s < 1 lie outside Black's closure (beta = s unproved)",
            &cert.beta_failures,
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

fn generate(
    board: Board,
    out: PathBuf,
    max_iterations: Option<u32>,
    check_every: u32,
    json: bool,
    quiet: bool,
    allow_uncertified: bool,
) -> Result<(), (u8, Error)> {
    let dir = out.join(board.to_string());
    prepare_dir(&dir).map_err(|e| (2, e))?;
    let mut options = Options::new(board);
    options.max_iterations = max_iterations;
    options.check_every = check_every;
    let estimate = crate::index::estimate_positions(board);
    let progress = Progress::new(quiet, max_iterations, estimate);
    let started = std::time::Instant::now();
    let sol = generate::solve(&options, &progress);
    let seconds = started.elapsed().as_secs_f64();
    let summary = report::summary(&sol, seconds);
    let text = serde_json::to_string_pretty(&summary).expect("summary serialises");
    report::write_atomic(&dir.join("summary.json"), text.as_bytes()).map_err(|e| (1, e))?;
    if sol.certificate.is_some() {
        let lines = report::quiescent_lines(&sol);
        report::write_atomic(&dir.join("quiescent.txt"), lines.as_bytes()).map_err(|e| (1, e))?;
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

/// Run the command line; returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            eprintln!(
                "bidtb: {} (see bidtb --help)",
                first.trim_start_matches("error: ")
            );
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Generate {
            board,
            out,
            threads,
            max_iterations,
            check_every,
            json,
            quiet,
            allow_uncertified,
        } => {
            if let Some(t) = threads
                && let Err(e) = rayon::ThreadPoolBuilder::new()
                    .num_threads(t as usize)
                    .build_global()
            {
                eprintln!("bidtb: cannot start {t} threads: {e}");
                return ExitCode::from(1);
            }
            generate(
                board,
                out,
                max_iterations,
                check_every,
                json,
                quiet,
                allow_uncertified,
            )
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, e)) => {
            eprintln!("bidtb: {e}");
            ExitCode::from(code)
        }
    }
}
