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
use bidtb::internal::table::{FromFile, Table, UNREACHED, as_read};
use num_bigint::BigUint;
use std::sync::atomic::{AtomicU64, Ordering};

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
    /// Print each α and β as a 16-hex-digit digest of its digits instead of its fraction.
    #[arg(long)]
    pub digest: bool,
}

/// `bidtb dump`: the arguments read, the table printed.
pub(super) fn main(args: Args) -> Result<(), (u8, Error)> {
    run(&args.tables.tables, args.board, &args.material, args.digest)
}

fn level(l: u32) -> String {
    if l == UNREACHED {
        "-".into()
    } else {
        l.to_string()
    }
}

pub(super) fn run(
    dir: &Path,
    board: Board,
    material: &str,
    digest: bool,
) -> Result<(), (u8, Error)> {
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
    let digests = if digest {
        Some(digests(t).map_err(|e| (1, e))?)
    } else {
        None
    };
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
        if let Some(digests) = &digests {
            let (a, b) = t.ranks(i).map_err(|e| (1, e))?;
            writeln!(
                out,
                "{} {:016x} {:016x} {} {}",
                bidtb::fen::write(board, &pos),
                digests[a as usize],
                digests[b as usize],
                level(t.level_white(i).map_err(|e| (1, e))?),
                level(t.level_black(i).map_err(|e| (1, e))?)
            )
            .map_err(io)?;
            continue;
        }
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

/// The digest of every dictionary entry of `t`, in lowest terms ([`Table::dictionary_value`]):
/// the CRC-32 of its numerator's bytes (little-endian) above that of its denominator's.
/// Each entry is decoded once ([`Table::walk`]), so that a table of long values stored as
/// means (8x8 KNvKN) is digested in minutes where printing its fractions takes hours.
fn digests(t: &Table) -> Result<Vec<u64>, Error> {
    let digests: Vec<AtomicU64> = (0..t.info().dictionary_len)
        .map(|_| AtomicU64::new(0))
        .collect();
    t.walk(|k, v, _| {
        let v = as_read(v.clone());
        let crc = |n: &BigUint| u64::from(crc32fast::hash(&n.to_bytes_le()));
        digests[k].store(crc(&v.numer()) << 32 | crc(&v.denom()), Ordering::Relaxed);
        Ok(())
    })?;
    Ok(digests.into_iter().map(AtomicU64::into_inner).collect())
}
