//! `bidtb chips`: the chip tables of a board's value tables, for one chip total or a range
//! (docs/src/guide/chips.md).

use std::io::Write;

use bidtb::Board;
use bidtb::Error;
use bidtb::internal::chips::make::{self, Made};
use bidtb::internal::chips::{MAX_TOTAL, Total};
use bidtb::internal::dirlock::DirLock;

use super::parse_board;

/// Arguments of `bidtb chips`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    #[command(flatten)]
    tables: super::TablesDir,
    /// The board.
    #[arg(long, value_parser = parse_board, default_value = "8x8")]
    board: Board,
    /// Chips in all: K (e.g. 200 for a hundred each), or a range A..B (every K from A to
    /// B), up to 16000.
    #[arg(long, value_parser = parse_totals, default_value = "200")]
    chips: Totals,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Then count, for the largest K, the positions where the best move with chips differs
    /// from the best move with continuous money (no move best in both), per material and
    /// side, with an example.
    #[arg(long)]
    census: bool,
    /// No progress lines.
    #[arg(short, long)]
    quiet: bool,
}

/// A range of chip totals.
#[derive(Clone, Debug)]
pub(super) struct Totals(std::ops::RangeInclusive<u32>);

fn parse_totals(s: &str) -> Result<Totals, String> {
    let one = |t: &str| -> Result<u32, String> {
        let k: u32 = t
            .trim()
            .parse()
            .map_err(|_| format!("'{t}' is not a number of chips"))?;
        if (1..=MAX_TOTAL).contains(&k) {
            Ok(k)
        } else {
            Err(format!("{k} chips: give 1 to {MAX_TOTAL}"))
        }
    };
    match s.split_once("..") {
        Some((a, b)) => {
            let (a, b) = (one(a)?, one(b.trim_start_matches('='))?);
            if a > b {
                return Err(format!("the range {a}..{b} is empty"));
            }
            Ok(Totals(a..=b))
        }
        None => one(s).map(|k| Totals(k..=k)),
    }
}

pub(super) fn run(args: Args) -> Result<(), (u8, Error)> {
    let board_dir = args.tables.tables.join(args.board.to_string());
    if !board_dir.is_dir() {
        return Err((
            1,
            Error::Usage(format!(
                "no tables of {} in {}: generate them first with `bidtb generate --board {} \
                 --method solve --out {}`",
                args.board,
                args.tables.tables.display(),
                args.board,
                args.tables.tables.display()
            )),
        ));
    }
    let _lock = DirLock::acquire(&board_dir).map_err(|e| match e {
        e @ Error::Busy(_) => (1, e),
        e => (2, e),
    })?;
    let materials = make::materials_in(&board_dir).map_err(|e| (1, e))?;
    if materials.is_empty() {
        return Err((
            1,
            Error::Usage(format!("{} holds no table", board_dir.display())),
        ));
    }
    let started = std::time::Instant::now();
    let stdout = &mut std::io::stdout().lock();
    let mut all: Vec<Made> = Vec::new();
    for k in args.chips.0.clone() {
        let total = Total::new(k);
        let say = |m: &Made| {
            if !args.quiet && !args.json {
                let what = if m.kept {
                    "kept".to_string()
                } else {
                    format!("{:.2} s, {} + {} sweeps", m.seconds, m.sweeps.0, m.sweeps.1)
                };
                note!(
                    "{} chips: {:<7} {:>10} positions  {what}",
                    m.chips,
                    m.material,
                    m.positions
                );
            }
        };
        let made = make::make(&board_dir, args.board, &total, &materials, &say)
            .map_err(|e| (super::exit_code(&e), e))?;
        all.extend(made);
    }
    let seconds = started.elapsed().as_secs_f64();
    let census = if args.census {
        let tb = bidtb::internal::probe::Tablebase::open_board(&args.tables.tables, args.board)
            .map_err(|e| (1, e))?;
        let k = *args.chips.0.end();
        Some(tb.chip_move_census(args.board, k).map_err(|e| (1, e))?)
    } else {
        None
    };
    if let (Some(census), false) = (&census, args.json) {
        for c in census {
            let _ = writeln!(
                stdout,
                "{:<7} {:>9} positions: best move differs with {} chips for White at {}, for Black at {}",
                c.material,
                c.positions,
                args.chips.0.end(),
                c.white_differs,
                c.black_differs
            );
            for (side, ex) in [("White", &c.white_example), ("Black", &c.black_example)] {
                if let Some((fen, chips, money)) = ex {
                    let _ = writeln!(
                        stdout,
                        "        e.g. {fen}: {side} with chips {}, with money {}",
                        chips.join(" "),
                        money.join(" ")
                    );
                }
            }
        }
    }
    let written = if args.json {
        let json = serde_json::json!({
            "board": args.board.to_string(),
            "seconds": seconds,
            "made": all,
            "census": census,
        });
        writeln!(
            stdout,
            "{}",
            serde_json::to_string_pretty(&json).expect("serialises")
        )
    } else {
        let made = all.iter().filter(|m| !m.kept).count();
        writeln!(
            stdout,
            "{} chip files for {} ({} made, {} kept) in {seconds:.1} s: {}",
            all.len(),
            args.board,
            made,
            all.len() - made,
            bidtb::internal::chips::file::dir(&board_dir, *args.chips.0.start()).display()
        )
    };
    super::reader_gone_is_fine(written).map_err(|e| (1, Error::io("stdout", e)))
}
