//! `bidtb generate`: progress display, the human summary, and writing the results
//! (summary.json, convergence.csv, quiescent.txt and the table files).

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::parse_board;
use bidtb::Board;
use bidtb::Error;
use bidtb::internal::generate;
use bidtb::internal::generate::driver::Driven;
use bidtb::internal::generate::report::Summary;
use bidtb::internal::generate::session::{self, Session};
use bidtb::{IterateSettings, MethodOptions, SolveSettings};
use bidtb::{Method, Observer, Options};

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
            _ => note!("{text}"),
        }
    }
}

impl Observer for Progress {
    fn skipped(&self, k: usize, total: usize, name: &str, reason: &str) {
        // Shown even with -q: the run will not make these tables (a run of one job ends
        // with the reason instead).
        if total > 1 {
            note!("material {k}/{total}: {name} skipped: {reason}");
        }
    }
    fn finished(&self, k: usize, total: usize, line: &str) {
        if total > 1 {
            self.line(&format!("material {k}/{total} done: {line}"));
        }
    }
    fn material(&self, k: usize, total: usize, name: &str) {
        bidtb::internal::resources::release_free_memory();
        if total > 1 {
            self.line(&format!("material {k}/{total}: {name}"));
        }
    }
    fn stage(&self, name: &str) {
        if name == "iterate" || name == "solve" {
            *self.started.lock().expect("not poisoned") = Some(std::time::Instant::now());
        }
    }
    fn stage_done(&self, name: &str, seconds: f64) {
        // A job beside others names itself: `solve (KNvKN)`.
        let stage = name.split(" (").next().unwrap_or(name);
        if let (Some(bar), "iterate" | "solve") = (&self.bar, stage) {
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
            _ => note!("{text}"),
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

fn human_summary(summary: &Summary, out: &mut impl Write) -> std::io::Result<()> {
    let stages = &summary.stage_seconds;
    if summary.method == Method::Solve {
        let rounds: usize = summary
            .solve
            .iter()
            .flat_map(|jobs| jobs.values())
            .flatten()
            .map(|s| s.rounds.len())
            .sum();
        writeln!(
            out,
            "board {}: {} material{} solved in {:.1} s ({rounds} exact evaluations)",
            summary.board,
            summary.materials.len(),
            if summary.materials.len() == 1 {
                ""
            } else {
                "s"
            },
            stages.stage("solve")
        )?;
        if !summary.reused.is_empty() {
            writeln!(out, "reused: {}", summary.reused.join(", "))?;
        }
        match summary.alpha_below_beta {
            Some(n) if n > 0 => writeln!(
                out,
                "ALPHA < BETA at {n} positions: listed in alpha-below-beta.txt; the tables of \
                 their materials keep both"
            )?,
            _ => {}
        }
    } else {
        writeln!(
            out,
            "board {}: {} iterations in {:.1} s",
            summary.board,
            summary.iterations_run,
            stages.stage("iterate")
        )?;
        match summary.first_richman_iteration {
            Some(n) => writeln!(
                out,
                "the guesses first satisfy every equation at iteration {n}"
            )?,
            None => writeln!(
                out,
                "NOT CONVERGED: the guesses are not yet a Richman function after {} \
                 iterations; values are provisional (raise --max-iterations)",
                summary.iterations_run
            )?,
        }
    }
    if summary.converged {
        let split = summary.alpha_below_beta.is_some_and(|n| n > 0);
        let verdict = if summary.certified && !split {
            "every value is proved exact (alpha = s = beta)"
        } else if summary.certified {
            "alpha and beta are each proved exact by their own certificate"
        } else {
            "CERTIFICATE FAILED"
        };
        writeln!(out, "certificate: {verdict}")?;
    }
    let row = |cells: [&str; 12]| {
        format!(
            "{:<8} {:>10} {:>10} {:>9} {:>8} {:>5} {:>5} {:>9} {:>7} {:>7} {:>6} {:>6}",
            cells[0],
            cells[1],
            cells[2],
            cells[3],
            cells[4],
            cells[5],
            cells[6],
            cells[7],
            cells[8],
            cells[9],
            cells[10],
            cells[11]
        )
    };
    let header = [
        "material",
        "positions",
        "canonical",
        "stable at",
        "max den",
        "alpha",
        "beta",
        "quiescent",
        "zugzw",
        "a<b",
        "T max",
        "T' max",
    ];
    writeln!(out, "{}", row(header))?;
    let opt = |x: Option<String>| x.unwrap_or_else(|| "-".into());
    let yes = |b: Option<bool>| opt(b.map(|b| if b { "yes" } else { "NO" }.to_string()));
    for m in &summary.materials {
        let c = &summary.classes[m];
        let cells = [
            m.to_string(),
            c.positions.to_string(),
            c.canonical_positions.to_string(),
            opt(c.stable_at.map(|n| n.to_string())),
            format!("{} dig", c.max_denominator_digits),
            yes(c.certified_alpha),
            yes(c.certified_beta),
            opt(c.quiescent.map(|q| q.to_string())),
            opt(c.zugzwangs.map(|q| q.to_string())),
            opt(c.alpha_below_beta.map(|q| q.to_string())),
            opt(c.max_level_white.map(|q| q.to_string())),
            opt(c.max_level_black.map(|q| q.to_string())),
        ];
        writeln!(out, "{}", row(std::array::from_fn(|i| cells[i].as_str())))?;
    }
    Ok(())
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
    /// values are solved first (the solve method) and each position's last change is
    /// found by comparing αₙ and βₙ with the Stern–Brocot parents of its value: the same
    /// first Richman iteration, stable_at and tables, several times faster. Checkpoints and
    /// --resume always use the guesses.
    #[arg(long)]
    pub guesses: bool,
    /// Worker threads, 1 to 1024 (default: one per core; more than the cores start one per
    /// core, with a warning).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=super::MAX_THREADS as i64))]
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
    /// Store long values as the mean of the two values their best moves lead to (table
    /// format version 8): the default, stated. Where values are long the tables take a
    /// tenth of the bytes or less (7x7 KNvKN 1.31 GB -> 139 MB; 6x6 four pieces 329 ->
    /// 198 MB), the same values, decoded at each read without a gcd.
    #[arg(long, conflicts_with = "whole")]
    pub means: bool,
    /// Store every value whole (table format version 6, as builds before format 8 wrote
    /// it): larger files, no means to decode.
    #[arg(long)]
    pub whole: bool,
    /// Save the full iteration state to DIR/FxR/checkpoint-N.ckpt every N iterations
    /// (atomically; the newest two are kept, and removed once the run converges).
    /// Ctrl-C or SIGTERM, and reaching --max-iterations, then also save one.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..), value_name = "N")]
    pub checkpoint_every: Option<u32>,
    /// With --method solve: also save the solve's state to DIR/FxR/solve-MATERIAL.ckpt
    /// (solve-KNvKN.ckpt; materials solved jointly joined by +) every S
    /// seconds while it runs (it is always saved when the run is stopped by Ctrl-C or
    /// SIGTERM: strategies, the values solved so far, the refinement of systems under way).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..), value_name = "S")]
    pub checkpoint_seconds: Option<u64>,
    /// Continue from the newest valid checkpoint in DIR/FxR (from the start if there is
    /// none): for --method iterate also past an earlier --max-iterations; for --method
    /// solve, materials whose tables are already there (and valid) are kept, and the one
    /// under way continues from DIR/FxR/solve-MATERIAL.ckpt. The result is exactly that of an
    /// uninterrupted run.
    #[arg(long)]
    pub resume: bool,
    /// Start afresh: delete the checkpoints of earlier runs in DIR/FxR that this run would
    /// replace or remove (the iteration's for --method iterate; for --method solve those of
    /// its materials). Without it (or --resume) a run over such checkpoints is refused,
    /// naming them and the command that resumes them: saved work is never deleted unasked.
    #[arg(long, conflicts_with = "resume")]
    pub fresh: bool,
    /// Make every material with up to N men, kings included (3: the study's six
    /// three-piece materials; 4: also the thirty four-piece ones; 5: also the 110
    /// five-man ones), each in dependency order. Four and more need --method solve.
    #[arg(
        long,
        value_parser = clap::value_parser!(u8).range(2..=7),
        value_name = "N",
        conflicts_with = "material"
    )]
    pub pieces: Option<u8>,
    /// Print the jobs of the request without running them (--method solve): one per
    /// material in dependency order, with the materials it needs, its positions before and
    /// after symmetry (counted as the run counts them up to a million, estimated above),
    /// memory estimate, table size estimate and the temporary files it needs beside its
    /// table (paged numerators; α's values while β is solved apart), and the commands that
    /// run it as a job of its own in a directory of its own (for a cluster scheduler: the
    /// needs are the job's dependencies). With --json, an array of {material, needs, reads,
    /// positions, canonical_positions, counted, memory_bytes, disk_bytes, scratch_bytes}. A
    /// run skips a material whose table cannot fit on the disk even without its values'
    /// digits, and warns as it starts one whose table and temporary files may not.
    #[arg(long)]
    pub plan: bool,
    /// Make these materials (comma-separated Syzygy-style names: KRvKN,KQQvK; a name of
    /// the weaker side first, KNvKR, means its stored mirror KRvKN) and, first, what their
    /// captures and promotions lead to (reused where valid tables already exist).
    #[arg(long, value_name = "MATERIALS")]
    pub material: Option<String>,
    /// With --method solve and several materials: run up to N jobs (materials) side by
    /// side, 1 to 16 (1: one after another). A job starts as soon as every material it
    /// reads is made, and beside others only when the memory estimates of all of them fit
    /// together under the memory limit (BIDTB_MEMORY_GUARD, or the memory available); of
    /// the jobs ready, the one heading the longest chain of work still to do goes first
    /// (on 8x8, KNvKN). The files are the same either way. On a few cores the second job
    /// uses what the first leaves idle: a large system refined on one core, tables written
    /// to disk.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=16), value_name = "N")]
    pub jobs: u8,
}

/// The `--method` values.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(super) enum MethodArg {
    /// The study's iteration (reproduces 2644).
    Iterate,
    /// Exact solves under improving strategies.
    Solve,
}

/// The plan as JSON, or as text with each job's commands: link what it reads from the
/// shared directory into a directory of its own, make it there, copy its files back.
fn print_plan(
    jobs: &[generate::driver::Planned],
    board: bidtb::Board,
    out: &std::path::Path,
    json: bool,
) -> std::io::Result<()> {
    let stdout = &mut std::io::stdout().lock();
    if json {
        return writeln!(
            stdout,
            "{}",
            serde_json::to_string_pretty(jobs).expect("serialises")
        );
    }
    let shared = out.display();
    writeln!(
        stdout,
        "# {} jobs on {board}, in dependency order. SHARED={shared} holds the finished \
         tables;\n# JOB is a fresh directory per job (two runs never share a directory).",
        jobs.len()
    )?;
    let gb = |bytes: u64| format!("{:.1} GB", bytes as f64 / 1e9);
    let free = bidtb::internal::resources::free_disk_bytes(out)
        .map_or(String::new(), |f| format!(" ({} free there now)", gb(f)));
    writeln!(
        stdout,
        "# The tables take about {} by estimate{free}; the largest job about {} of memory \
         and {} of temporary files beside its table.",
        gb(jobs.iter().map(|j| j.disk_bytes).sum()),
        gb(jobs.iter().map(|j| j.memory_bytes).max().unwrap_or(0)),
        gb(jobs.iter().map(|j| j.scratch_bytes).max().unwrap_or(0)),
    )?;
    for j in jobs {
        let mb = j.memory_bytes.div_ceil(1 << 20);
        let disk = j.disk_bytes.div_ceil(1 << 20);
        let about = if j.counted { "" } else { "about " };
        let scratch = match j.scratch_bytes.div_ceil(1 << 20) {
            0 => String::new(),
            s => format!("; temporary files about {s} MiB"),
        };
        writeln!(
            stdout,
            "\n# {}: needs [{}]; {about}{} positions ({about}{} after symmetry{}); memory \
             about {mb} MiB; table about {disk} MiB{scratch}",
            j.material,
            j.needs.join(" "),
            j.positions,
            j.canonical_positions,
            if j.counted { "" } else { ", estimated" }
        )?;
        writeln!(stdout, "mkdir -p $JOB/{board}")?;
        for r in &j.reads {
            writeln!(
                stdout,
                "ln -s $SHARED/{board}/{r}.bidtb $SHARED/{board}/{r}.json $JOB/{board}/"
            )?;
        }
        let m = &j.material;
        writeln!(
            stdout,
            "bidtb generate --board {board} --method solve --material {m} --out $JOB --resume -q"
        )?;
        writeln!(
            stdout,
            "cp $JOB/{board}/{m}.bidtb $JOB/{board}/{m}.json $SHARED/{board}/"
        )?;
    }
    Ok(())
}

/// The skipped jobs, one clause each.
fn skipped_list(skipped: &[bidtb::internal::generate::driver::Skipped]) -> String {
    skipped
        .iter()
        .map(|s| format!("{} skipped: {}", s.materials.join(", "), s.reason))
        .collect::<Vec<_>>()
        .join("; ")
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
        means: _,
        whole,
        checkpoint_every,
        checkpoint_seconds,
        resume,
        fresh,
        pieces,
        material,
        plan,
        jobs,
    } = args;
    let method = match method {
        MethodArg::Iterate => Method::Iterate,
        MethodArg::Solve => Method::Solve,
    };
    let usage = |text: String| (2, Error::Usage(text));
    if method == Method::Solve {
        let iterate_only = [
            ("--max-iterations", max_iterations.is_some()),
            ("--checkpoint-every", checkpoint_every.is_some()),
            ("--guesses", guesses),
        ];
        if let Some((flag, _)) = iterate_only.iter().find(|(_, given)| *given) {
            return Err(usage(format!(
                "{flag} applies to --method iterate only (the solve method has no \
                 iterations to cap or checkpoint; it saves its state with \
                 --checkpoint-seconds S and when stopped)"
            )));
        }
    } else if checkpoint_seconds.is_some() {
        return Err(usage(
            "--checkpoint-seconds applies to --method solve only (the iteration saves \
             checkpoints with --checkpoint-every N)"
                .into(),
        ));
    }
    let names: Option<Vec<String>> = material.map(|m| m.split(',').map(str::to_string).collect());
    let materials = session::requested(pieces, names.as_deref(), ("--pieces", "--material"))
        .map_err(|e| (2, e))?;
    session::check_method(method, &materials, "--method solve").map_err(|e| (2, e))?;
    if names.is_some()
        && let Some(m) = materials
            .iter()
            .find(|&&m| !bidtb::internal::index::has_positions(board, m))
    {
        return Err(usage(format!(
            "{m} has no position on {board}: its men do not fit (pawns stand only between \
             the first and the last rank)"
        )));
    }
    if plan {
        if method != Method::Solve {
            return Err(usage("--plan lists the jobs of --method solve".into()));
        }
        let mut options = Options::new(board);
        options.method = method.into();
        options.materials = materials;
        return print_plan(&generate::driver::plan(&options), board, &out, json)
            .map_err(|e| (1, Error::io("stdout", e)));
    }
    let mut session =
        Session::open(&out, board, method, allow_uncertified).map_err(|e| match e {
            e @ Error::Busy(_) => (1, e),
            e => (2, e),
        })?;
    session.store.means = !whole;
    let dir = session.dir.clone();
    // The request as the command line gave it, for the commands a message suggests.
    let what = match (pieces, &names) {
        (Some(n), _) => format!(" --pieces {n}"),
        (None, Some(list)) => format!(" --material {}", list.join(",")),
        (None, None) => String::new(),
    };
    if !resume {
        let earlier = session::earlier_checkpoints(&dir, method, &materials);
        if !earlier.is_empty() && !fresh {
            let files: Vec<String> = earlier
                .iter()
                .filter_map(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .collect();
            return Err(usage(format!(
                "{} holds the checkpoint{} {} of an earlier run, which this run would replace \
                 or remove: continue that run with `bidtb generate --board {board} --method \
                 {method}{what} --out {} --resume`, or start afresh with --fresh (which \
                 deletes {})",
                dir.display(),
                if files.len() == 1 { "" } else { "s" },
                files.join(", "),
                out.display(),
                if files.len() == 1 { "it" } else { "them" },
            )));
        }
        for p in &earlier {
            std::fs::remove_file(p).map_err(|e| (1, Error::io(p, e)))?;
        }
        if !earlier.is_empty() {
            note!(
                "--fresh: deleted {} checkpoint{} of an earlier run in {}",
                earlier.len(),
                if earlier.len() == 1 { "" } else { "s" },
                dir.display()
            );
        }
    }
    let mut options = Options::new(board);
    options.materials = materials;
    options.method = match method {
        Method::Iterate => MethodOptions::Iterate(IterateSettings {
            guesses,
            max_iterations,
            check_every,
            measure_every,
            checkpoint_every,
            ..IterateSettings::default()
        }),
        Method::Solve => MethodOptions::Solve(SolveSettings {
            checkpoint_seconds,
            ..SolveSettings::from_env().map_err(|e| (2, e))?
        }),
    };
    let estimate: usize = options
        .materials
        .iter()
        .map(|&m| bidtb::internal::index::estimate_positions(board, m))
        .sum();
    let progress = Progress::new(quiet, method, max_iterations, estimate);
    // Ctrl-C and SIGTERM stop the run between two steps (a second one kills it).
    static STOP: AtomicBool = AtomicBool::new(false);
    let _ = ctrlc::set_handler(|| {
        if STOP.swap(true, Ordering::SeqCst) {
            std::process::exit(130);
        }
    });
    let control = generate::Control {
        checkpoint_dir: Some(dir.clone()),
        resume,
        stop: Some(&STOP),
        jobs: usize::from(jobs),
        ..generate::Control::default()
    };
    let driven = session.run(&options, &progress, &control);
    let failure = match driven {
        Ok(Driven::Finished(made, skipped)) if !skipped.is_empty() => {
            let list = skipped_list(&skipped);
            session.store.summary.skipped = skipped;
            let rest = if made.is_empty() {
                "nothing else was made"
            } else {
                "the other materials were made"
            };
            Some(Error::Resources(format!(
                "{list}; {rest} (rerun with more memory, or on a larger machine, with \
                 --resume to make the rest)"
            )))
        }
        Ok(Driven::Finished(..)) => None,
        Ok(Driven::Interrupted(stopped)) => {
            let again = format!(
                "`bidtb generate --board {board} --method {method}{what} --out {} --resume`",
                out.display()
            );
            let msg: Vec<String> = stopped
                .iter()
                .map(|s| {
                    session::interrupted_message(
                        method,
                        &s.materials,
                        s.n,
                        s.checkpoint.as_deref(),
                        &again,
                    )
                })
                .collect();
            return Err((130, Error::Interrupted(msg.join("\n"))));
        }
        Err(e @ Error::Uncertified(_)) => Some(e),
        Err(e) => return Err((super::exit_code(&e), e)),
    };
    let uncertified = matches!(failure, Some(Error::Uncertified(_)));
    let text = session.finish(uncertified).map_err(|e| (1, e))?;
    let store = &session.store;
    let stdout = &mut std::io::stdout().lock();
    let written = if json {
        writeln!(stdout, "{text}")
    } else {
        human_summary(&store.summary, stdout)
    };
    super::reader_gone_is_fine(written).map_err(|e| (1, Error::io("stdout", e)))?;
    if !quiet {
        note!("wrote {}", dir.join("summary.json").display());
        if store.written > 0 {
            note!("wrote {} table files to {}", store.written, dir.display());
        } else if uncertified {
            note!("no table files written: the values are not proved exact");
        }
    }
    match failure {
        Some(e) => Err((1, e)),
        None => Ok(()),
    }
}
