//! `bidtb map`: the value of a position for every square of the black king, as a text grid,
//! JSON, or a standalone SVG heatmap.

use super::TablesDir;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;

use crate::svg;
use bidtb::Error;
use bidtb::fen;
use bidtb::internal::atomic;
use bidtb::internal::probe::map::ValueMap;

/// The arguments of `bidtb map` (its help is the subcommand's, in `cli/mod.rs`).
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    #[command(flatten)]
    pub tables: TablesDir,
    /// Print JSON: rows of exact values from the top rank, null where a piece stands.
    #[arg(long)]
    pub json: bool,
    /// Write the heatmap as SVG to this file (`-`: standard output). A regular file is
    /// replaced whole (through a symbolic link, its target); a device or FIFO is
    /// written into.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// The position, e.g. '3k3R/8/3K4/8/8/8/8/8'.
    #[arg(required = true, num_args = 1.., value_name = "FEN")]
    pub fen: Vec<String>,
}

/// `bidtb map`: the arguments read, the map printed or drawn.
pub(super) fn main(args: Args) -> Result<(), (u8, Error)> {
    let fen = args.fen.join(" ");
    run(&args.tables.tables, args.json, args.svg.as_deref(), &fen)
}

/// The grid as text: three decimals per square, the pieces by their letters.
fn human(map: &ValueMap) -> String {
    let mut out = format!(
        "{} {}  {}: value with the black king on each square\n\n",
        map.board, map.class, map.fen
    );
    for (r, row) in map.rows().iter().enumerate() {
        out += &format!("{:>4} ", map.board.ranks() as usize - r);
        for &s in row {
            let cell = match map.at(s) {
                Some(v) => format!("{:.3}", v.to_f64()),
                None => format!("  {}  ", map.piece_at(s).unwrap_or('?')),
            };
            out += &format!(" {cell}");
        }
        out.push('\n');
    }
    out += "     ";
    for f in 0..map.board.files() {
        out += &format!("   {}  ", (b'a' + f) as char);
    }
    out.push('\n');
    let split = map.betas.iter().filter(|b| b.is_some()).count();
    if split > 0 {
        out += &format!(
            "\nalpha < beta on {split} squares: the grid shows alpha (`--json` has beta_rows)\n"
        );
    }
    out
}

pub(super) fn run(
    dir: &Path,
    json: bool,
    svg_out: Option<&Path>,
    text: &str,
) -> Result<(), (u8, Error)> {
    let fail = |e: Error| (super::exit_code(&e), e);
    if json && svg_out.is_some_and(|p| p.as_os_str() == "-") {
        return Err((
            2,
            Error::Usage("--svg - and --json would both go to standard output".into()),
        ));
    }
    let parsed = fen::parse(text).map_err(fail)?;
    let tables = super::query::open(dir, &parsed).map_err(fail)?;
    let map = ValueMap::of_fen(&tables, text).map_err(fail)?;
    if let Some(path) = svg_out {
        let place = atomic::write_output(path, svg::heatmap(&map).as_bytes()).map_err(fail)?;
        note!("wrote {place}");
        if !json {
            return Ok(());
        }
    }
    let out = if json {
        format!("{}\n", map.to_json())
    } else {
        human(&map)
    };
    std::io::stdout()
        .lock()
        .write_all(out.as_bytes())
        .map_err(|e| (1, Error::io("stdout", e)))
}
