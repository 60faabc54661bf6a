//! `bidtb atlas`: every board of a range solved (or its saved row reused), one row of facts
//! each, written to DIR/atlas.json and DIR/atlas.md.

mod men;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bidtb::Error;
use bidtb::internal::atomic;
use bidtb::internal::generate::atlas::{self, Row};
use bidtb::internal::generate::{self, Control, Options, Run, Silent};
use bidtb::internal::resources;

/// The arguments of `bidtb atlas`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    /// Where rows, tables and the atlas go: DIR/FxR/ per board, DIR/atlas.json, DIR/atlas.md.
    #[arg(long, default_value = "atlas")]
    pub out: PathBuf,
    /// The boards: a range FxR..FxR (every board with files and ranks between the ends) or
    /// a list FxR,FxR,...
    #[arg(long, default_value = "2x2..8x8")]
    pub boards: String,
    /// Skip (and report) a board still unsolved after this many seconds, or whose memory
    /// estimate exceeds what the machine has.
    #[arg(long, default_value_t = 600.0)]
    pub max_seconds: f64,
    /// No progress lines on stderr.
    #[arg(long, short)]
    pub quiet: bool,
    /// The men per position: 3 (the study's six materials, jointly: one row per board), 4
    /// or 5 (every material up to N men, one at a time: one row per board and material,
    /// written to DIR/atlasN.json, DIR/atlasN.md and DIR/atlasN-census.svg, the positions
    /// with α < β and the quiescent ones to DIR/FxR/alpha-below-beta.txt and
    /// DIR/FxR/quiescent.txt, for five men alpha-below-beta-5.txt and quiescent-5.txt).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(3..=5))]
    pub pieces: u8,
    /// With --pieces 4 or 5: make the rows of each board that has a directory DIR/FxR from the
    /// tables already generated there (DIR/FxR/M.bidtb and the record DIR/FxR/M.json that
    /// `generate` writes beside each) instead of solving, for boards too large to solve in
    /// one process with every material in memory (8x8); the other boards are solved (or
    /// their saved rows reused) as without it. Materials without a certified table and
    /// record there are listed as skipped.
    #[arg(long, value_name = "DIR")]
    pub from_tables: Option<PathBuf>,
}

/// Run `work` with a stop flag that is raised `max_seconds` after the start (the work then
/// ends at its next step, as on Ctrl-C).
pub(super) fn within<T>(max_seconds: f64, work: impl FnOnce(&Control<'_>) -> T) -> T {
    let stop = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    let started = Instant::now();
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                if started.elapsed().as_secs_f64() > max_seconds {
                    stop.store(true, Ordering::Relaxed);
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let control = Control {
            stop: Some(&stop),
            ..Control::default()
        };
        let result = work(&control);
        done.store(true, Ordering::Relaxed);
        result
    })
}

/// Solve one board under the time budget: its row, or why it was skipped.
fn solve_board(board: bidtb::Board, max_seconds: f64) -> Result<Result<Row, String>, Error> {
    let materials = bidtb::Material::three_piece();
    let nodes: usize = materials
        .iter()
        .map(|&m| bidtb::internal::index::estimate_positions(board, m))
        .sum();
    let needed = bidtb::internal::solve::memory::estimate_solve_bytes(nodes, board, &materials);
    if let Err(e) = resources::check(needed, &format!("solving {board}")) {
        return Ok(Err(e.to_string()));
    }
    let options = Options::solve(board);
    bidtb::internal::resources::release_free_memory();
    resources::reset_peak();
    let started = Instant::now();
    let run = within(max_seconds, |control| {
        // The six three-piece materials jointly: one job, one row.
        generate::solve_job(
            &options,
            &options.materials,
            &Silent,
            control,
            &generate::NothingSolved,
        )
    });
    match run {
        Ok(Run::Finished(sol)) if sol.certified() => {
            let seconds = started.elapsed().as_secs_f64();
            Ok(Ok(atlas::row(&sol, seconds, resources::peak_mib())))
        }
        Ok(Run::Finished(_)) => Ok(Err("the certificate failed".into())),
        Ok(Run::Interrupted { .. }) => Ok(Err(format!("over {max_seconds} s"))),
        Err(e @ Error::Resources(_)) => Ok(Err(e.to_string())),
        Err(e @ Error::Uncertified(_)) => Ok(Err(e.to_string())),
        Err(e) => Err(e),
    }
}

/// The atlas's pictures, by file name: the grid of boards coloured by the largest
/// denominator, the largest denominator against the board's squares, and time and peak
/// memory against positions.
fn plots(rows: &[Row]) -> Vec<(&'static str, String)> {
    let squares = |r: &Row| {
        let (f, k) = r.board.split_once('x').unwrap_or(("0", "0"));
        f.parse::<f64>().unwrap_or(0.0) * k.parse::<f64>().unwrap_or(0.0)
    };
    let digits = |r: &Row| Some(r.max_denominator_digits as f64);
    let seconds = |r: &Row| Some(r.seconds);
    let peak = |r: &Row| r.peak_mib.map(|m| m as f64);
    let positions = |r: &Row| r.canonical_positions as f64;
    vec![
        ("atlas-grid.svg", crate::svg::atlas_grid(rows)),
        (
            "atlas-digits.svg",
            crate::svg::atlas_scatter(
                rows,
                "Digits of the largest denominator against the board's squares",
                &[("digits", &digits)],
                "squares (files x ranks)",
                &squares,
            ),
        ),
        (
            "atlas-cost.svg",
            crate::svg::atlas_scatter(
                rows,
                "Solve time and peak memory against positions (after symmetry)",
                &[("seconds", &seconds), ("peak MiB", &peak)],
                "positions",
                &positions,
            ),
        ),
    ]
}

/// The lock of the board directory `dir` if it exists (a directory that does not exist
/// has no run in it), or the refusal naming the run that holds it.
pub(super) fn lock_if_there(
    dir: &std::path::Path,
) -> Result<Option<bidtb::internal::dirlock::DirLock>, (u8, Error)> {
    if !dir.is_dir() {
        return Ok(None);
    }
    bidtb::internal::dirlock::DirLock::acquire(dir)
        .map(Some)
        .map_err(|e| (super::exit_code(&e), e))
}

pub(super) fn run(args: Args) -> Result<(), (u8, Error)> {
    let boards = atlas::parse_boards(&args.boards).map_err(|e| (2, e))?;
    if args.from_tables.is_some() && args.pieces < 4 {
        return Err((
            2,
            Error::Usage(
                "--from-tables makes the four- or five-man atlas: give --pieces 4 or 5".into(),
            ),
        ));
    }
    if let Some(tables) = &args.from_tables
        && !tables.is_dir()
    {
        let why = match std::fs::metadata(tables) {
            Ok(_) => "not a directory".to_string(),
            Err(e) => e.to_string(),
        };
        return Err((
            2,
            Error::Usage(format!(
                "--from-tables {}: {why} (give the directory that `bidtb generate --out DIR` \
                 made, holding DIR/FxR/)",
                tables.display()
            )),
        ));
    }
    bidtb::internal::dirlock::ensure_dir(&args.out).map_err(|e| (2, e))?;
    if args.pieces >= 4 {
        return men::run(&args, &boards);
    }
    let say = |text: String| {
        if !args.quiet {
            note!("{text}");
        }
    };
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for board in boards {
        let dir = args.out.join(board.to_string());
        // No other run (a `generate --out` the same directory) may write the board's
        // directory meanwhile: its lock is held while the board is made.
        let lock = lock_if_there(&dir)?;
        let saved = dir.join("atlas-row.json");
        if let Ok(text) = std::fs::read_to_string(&saved)
            && let Ok(row) = serde_json::from_str::<Row>(&text)
        {
            say(format!("{board}: reusing {}", saved.display()));
            rows.push(row);
            continue;
        }
        match solve_board(board, args.max_seconds).map_err(|e| (1, e))? {
            Ok(row) => {
                say(format!(
                    "{board}: {:.2} s, largest denominator {} digits",
                    row.seconds, row.max_denominator_digits
                ));
                std::fs::create_dir_all(&dir).map_err(|e| (1, Error::io(&dir, e)))?;
                let _made_now = match lock {
                    Some(_) => None,
                    None => lock_if_there(&dir)?,
                };
                let text = serde_json::to_string_pretty(&row).expect("a row serialises");
                atomic::write_atomic(&saved, text.as_bytes()).map_err(|e| (1, e))?;
                rows.push(row);
            }
            Err(why) => {
                say(format!("{board}: skipped ({why})"));
                skipped.push((board.to_string(), why));
            }
        }
    }
    let json = serde_json::json!({ "rows": rows, "skipped": skipped });
    let text = serde_json::to_string_pretty(&json).expect("serialises");
    atomic::write_output(&args.out.join("atlas.json"), text.as_bytes()).map_err(|e| (1, e))?;
    let md = atlas::markdown(&rows, &skipped);
    atomic::write_output(&args.out.join("atlas.md"), md.as_bytes()).map_err(|e| (1, e))?;
    for (name, svg) in plots(&rows) {
        atomic::write_output(&args.out.join(name), svg.as_bytes()).map_err(|e| (1, e))?;
    }
    say(format!(
        "wrote {}, {} and three plots ({} boards, {} skipped)",
        args.out.join("atlas.json").display(),
        args.out.join("atlas.md").display(),
        rows.len(),
        skipped.len()
    ));
    Ok(())
}
