//! `bidtb dump`: every stored position of a material's table, one line each: its FEN, α,
//! β, its T and T′ levels. An export for other programs, and the way two tables (of two
//! format versions, or two builds) are compared position by position.

use super::TablesDir;
use super::parse_board;
use std::io::Write;
use std::path::Path;

use bidtb::Board;
use bidtb::Error;
use bidtb::Material;
use bidtb::Tablebase;
use bidtb::internal::table::{FromFile, UNREACHED};

/// The arguments of `bidtb dump` (its help is the subcommand's, in `cli/mod.rs`).
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    #[command(flatten)]
    pub tables: TablesDir,
    /// The board.
    #[arg(long, value_parser = parse_board, default_value = "8x8")]
    pub board: Board,
    /// The material, as stored (KRvKN, not KNvKR).
    pub material: String,
}

/// `bidtb dump`: the arguments read, the table printed.
pub(super) fn main(args: Args) -> Result<(), (u8, Error)> {
    run(&args.tables.tables, args.board, &args.material)
}

fn level(l: u32) -> String {
    if l == UNREACHED {
        "-".into()
    } else {
        l.to_string()
    }
}

pub(super) fn run(dir: &Path, board: Board, material: &str) -> Result<(), (u8, Error)> {
    let material: Material = material.parse().map_err(|e| (2, e))?;
    let (stored, mirrored) = material.stored();
    if mirrored {
        return Err((
            2,
            Error::Usage(format!(
                "{material} is answered through its mirror: dump {stored} instead"
            )),
        ));
    }
    let tables = Tablebase::open_board(dir, board).map_err(|e| (1, e))?;
    let t = tables.table(board, stored).map_err(|e| (1, e))?;
    let out = &mut std::io::BufWriter::new(std::io::stdout().lock());
    let io = |e: std::io::Error| (1, Error::io("stdout", e));
    writeln!(out, "# fen alpha beta T-level T'-level").map_err(io)?;
    for i in 0..t.len() {
        let key = t.key(i).map_err(|e| (1, e))?;
        let pos = bidtb::internal::index::position_of_key(board, stored, key).ok_or_else(|| {
            (
                1,
                Error::Table {
                    path: t.path().display().to_string(),
                    reason: format!("key {key} is not a position of {stored}"),
                },
            )
        })?;
        let known = t.known(i, &FromFile).map_err(|e| (1, e))?;
        writeln!(
            out,
            "{} {} {} {} {}",
            bidtb::fen::write(board, &pos),
            known.alpha.fraction(),
            known.beta.fraction(),
            level(known.level_white),
            level(known.level_black)
        )
        .map_err(io)?;
    }
    out.flush().map_err(io)
}
