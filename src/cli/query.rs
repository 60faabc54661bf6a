//! `bidtb query`: one position's value, moves, bid and zugzwang flag, as text or JSON.

use super::TablesDir;
use super::TieBreak;
use super::parse_holdings;
use std::io::Write;
use std::path::Path;

use bidtb::Error;
use bidtb::Value;
use bidtb::fen;
use bidtb::internal::generate::report;
use bidtb::internal::probe::chips::{ChipAdvice, ChipOutcome};
use bidtb::internal::probe::{self, MoveInfo, Probe, Tablebase};
use bidtb::internal::table;
use bidtb::{Color, Material};

/// The arguments of `bidtb query` (its help is the subcommand's, in `cli/mod.rs`).
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    #[command(flatten)]
    pub tables: TablesDir,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print every value exactly. By default the text shows values of more than 60
    /// digits (8x8 four-piece tables hold values of thousands) by their first decimals
    /// and their digit counts; --json always gives them exactly.
    #[arg(long)]
    pub full: bool,
    /// With whole chips: White's and Black's holdings, W:B (e.g. 100:100), read from
    /// the chip tables of W + B chips (`bidtb chips --chips W+B`): who wins, the bid to
    /// make and what to do with a bid won, and the thresholds (docs/src/guide/chips.md).
    #[arg(long, value_name = "W:B", value_parser = parse_holdings)]
    pub chips: Option<(u32, u32)>,
    /// Who holds the tie-break marker, with --chips.
    #[arg(long, value_enum, default_value = "white", requires = "chips")]
    pub tiebreak: TieBreak,
    /// The position, e.g. '3k3R/8/3K4/8/8/8/8/8' (quote it; unquoted trailing fields
    /// are accepted too).
    #[arg(required = true, num_args = 1.., value_name = "FEN")]
    pub fen: Vec<String>,
}

/// `bidtb query`: the arguments read, the position answered.
pub(super) fn main(args: Args) -> Result<(), (u8, Error)> {
    let marker = match args.tiebreak {
        TieBreak::White => Color::White,
        TieBreak::Black => Color::Black,
    };
    let format = match (args.json, args.full) {
        (true, _) => Format::Json,
        (false, true) => Format::Full,
        (false, false) => Format::Text,
    };
    let chips = args.chips.map(|c| (c, marker));
    run(&args.tables.tables, format, chips, &args.fen.join(" "))
}

/// The board drawn from a FEN placement (already validated), ranks numbered, files lettered.
fn diagram(placement: &str) -> String {
    let mut out = String::new();
    let rows: Vec<&str> = placement.split('/').collect();
    let mut files = 0;
    for (i, row) in rows.iter().enumerate() {
        let mut cells = Vec::new();
        let mut run = 0;
        for c in row.chars() {
            if let Some(d) = c.to_digit(10) {
                run = run * 10 + d as usize;
                continue;
            }
            cells.extend(std::iter::repeat_n('.', run));
            run = 0;
            cells.push(c);
        }
        cells.extend(std::iter::repeat_n('.', run));
        files = cells.len();
        let line: Vec<String> = cells.iter().map(char::to_string).collect();
        out += &format!("{:>4}  {}\n", rows.len() - i, line.join(" "));
    }
    let letters: Vec<String> = (0..files)
        .map(|f| ((b'a' + f as u8) as char).to_string())
        .collect();
    out += &format!("      {}\n", letters.join(" "));
    out
}

fn level(l: Option<u32>) -> String {
    l.map_or("unreached".into(), |l| l.to_string())
}

/// How `query` prints its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Text, values over [`report::LISTED_DIGITS`] digits by their first decimals.
    Text,
    /// Text, every value exact.
    Full,
    /// One JSON object, every value exact.
    Json,
}

/// A value as the text shows it: `p/q`, or for a value of more than
/// [`report::LISTED_DIGITS`] digits (unless `full`) as the lists show it: its first
/// decimals and the digits of its denominator, `≈0.866004645245…/3484`.
fn shown(v: &Value, full: bool) -> String {
    let short = v.numer().bits() + v.denom().bits() < 200;
    if full || (short && probe::fraction(v).len() <= report::LISTED_DIGITS) {
        // Always `p/q`, `1/1` at the end (the lists print `1`).
        probe::fraction(v)
    } else {
        report::listed(v)
    }
}

/// A signed fraction (a bid) as the text shows it, a long one approximately and with the
/// digits of its denominator, like [`shown`] (a display only: nothing is decided from it).
fn shown_signed(v: &num_rational::BigRational, full: bool) -> String {
    // Printed whole only where it may be short: printing thousands of digits just to count
    // them was most of an 8x8 KNvKN query's formatting.
    let short = v.numer().bits() + v.denom().bits() < 200;
    if full || short {
        let exact = probe::signed_fraction(v);
        if full || exact.len() <= report::LISTED_DIGITS {
            return exact;
        }
    }
    use num_traits::ToPrimitive;
    format!(
        "≈{:.12}…/{}",
        v.to_f64().unwrap_or(f64::NAN),
        bidtb::internal::value::arith::decimal_digits(v.denom().magnitude())
    )
}

/// One line per move; `*` marks the moves whose `key` (α for White, β for Black) equals
/// the best move's.
fn move_lines(
    moves: &[MoveInfo],
    key: fn(&MoveInfo) -> &Value,
    closure: &str,
    full: bool,
) -> String {
    let mut out = String::new();
    let best = moves.first().map(key);
    // Columns as wide as their longest entry (a long fraction shown in full, a long move
    // name on a large board), at least the usual widths.
    let values: Vec<String> = moves.iter().map(|m| shown(&m.value, full)).collect();
    let chars = |t: &str| t.chars().count();
    let uci_width = moves.iter().map(|m| chars(&m.uci)).fold(7, usize::max);
    let value_width = values.iter().map(|v| chars(v)).fold(24, usize::max);
    for (m, value) in moves.iter().zip(&values) {
        let mark = if Some(key(m)) == best { "*" } else { " " };
        out += &format!(
            "  {mark} {:<uci_width$} {:<value_width$} {:<18} {closure} level {}",
            m.uci,
            value,
            probe::decimal(&m.value, 12),
            level(m.level)
        );
        if let Some(beta) = &m.beta {
            out += &format!("  beta {}", shown(beta, full));
        }
        out.push('\n');
    }
    out
}

fn human(p: &Probe, placement: &str, full: bool) -> String {
    let mut out = format!("{} {}  {}\n\n", p.board, p.class, p.fen);
    out += &diagram(placement);
    out += &format!(
        "\nvalue      {} = {}\n",
        shown(&p.value, full),
        probe::decimal(&p.value, 20)
    );
    if let Some(beta) = &p.beta {
        out += &format!(
            "beta       {} = {}\n           (alpha < beta: the value above is alpha, where \
             play that never ends counts for Black; beta counts it for White)\n",
            shown(beta, full),
            probe::decimal(beta, 20)
        );
    }
    let best = |m: Option<&MoveInfo>| {
        m.map_or("no move (keeps the position)".into(), |m| {
            let beta = m
                .beta
                .as_ref()
                .map_or(String::new(), |b| format!(" (beta {})", shown(b, full)));
            format!("{} -> {}{beta}", m.uci, shown(&m.value, full))
        })
    };
    out += &format!("White best {}\n", best(p.best_white()));
    out += &format!("Black best {}\n", best(p.best_black()));
    out += &format!(
        "bid        {} of the money (each player bids this)\n",
        shown_signed(&p.bid, full)
    );
    if let Some(bid) = &p.bid_beta {
        out += &format!("bid beta   {}\n", shown_signed(bid, full));
    }
    out += &format!(
        "zugzwang   {}\n",
        if p.zugzwang {
            "yes: each player would rather the other moved"
        } else {
            "no"
        }
    );
    out += &format!(
        "levels     T {}, T' {}\n",
        level(p.level_white),
        level(p.level_black)
    );
    if !p.certified {
        out += "WARNING    a table used is not certified: values are not proved exact\n";
    }
    if !p.white.is_empty() {
        out += "\nWhite's moves (best first; * = greedy):\n";
        out += &move_lines(&p.white, MoveInfo::lower, "T", full);
    }
    if !p.black.is_empty() {
        out += "\nBlack's moves (best first; * = greedy):\n";
        out += &move_lines(&p.black, MoveInfo::upper, "T'", full);
    }
    out
}

/// Open the tables a question about `parsed`'s position reads: its material's and those
/// of the materials one move leads to, not the board's others (8x8 holds 50 GB of tables),
/// turning an absent directory into a "missing table" error that says how to generate it.
pub(super) fn open(dir: &Path, parsed: &fen::Parsed) -> Result<Tablebase, Error> {
    let material = parsed.position.material().stored().0;
    open_materials(dir, parsed, material, &[material])
}

/// Open the tables of every material a game from `parsed`'s position can reach.
pub(super) fn open_for_game(dir: &Path, parsed: &fen::Parsed) -> Result<Tablebase, Error> {
    let material = parsed.position.material().stored().0;
    let mut all = material.dependencies();
    all.push(material);
    open_materials(dir, parsed, material, &all)
}

/// Open `materials`' tables for `parsed`'s position, whose stored material is `material`
/// (named when the tables directory is absent).
fn open_materials(
    dir: &Path,
    parsed: &fen::Parsed,
    material: Material,
    materials: &[Material],
) -> Result<Tablebase, Error> {
    Tablebase::open_around(dir, parsed.board, materials).map_err(|e| match e {
        Error::Io { ref source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
            Error::MissingTable {
                path: dir
                    .join(parsed.board.to_string())
                    .join(table::file_name(material))
                    .display()
                    .to_string(),
                board: parsed.board.to_string(),
                dir: dir.display().to_string(),
                material: material.to_string(),
            }
        }
        e => e,
    })
}

/// The chip game's lines of the text answer.
fn chip_lines(a: &ChipAdvice) -> String {
    let k = a.total.chips();
    let side = |c: Color| if c == Color::White { "White" } else { "Black" };
    let mut out = format!(
        "\nchips      {} in all: White {}, Black {} (a star: the tie-break marker)\n",
        k,
        a.show(a.holding),
        a.show(2 * k + 1 - a.holding)
    );
    out += &format!(
        "thresholds White wins from {}, does not lose from {}\n",
        a.show(a.thresholds.win),
        a.show(a.thresholds.not_lose)
    );
    out += &format!(
        "outcome    {}\n",
        match a.outcome {
            ChipOutcome::WhiteWins => "White wins",
            ChipOutcome::BlackWins => "Black wins",
            ChipOutcome::Draw => "draw: neither side can force a king capture",
        }
    );
    for adv in &a.advice {
        let then = adv
            .then
            .as_ref()
            .map_or("let the opponent move".to_string(), |m| format!("play {m}"));
        out += &format!(
            "{:<10} bid {}; if the bid is won, {then}\n",
            side(adv.side),
            a.show(adv.bid)
        );
    }
    out
}

pub(super) fn run(
    dir: &Path,
    format: Format,
    chips: Option<((u32, u32), Color)>,
    text: &str,
) -> Result<(), (u8, Error)> {
    let fail = |e: Error| (super::exit_code(&e), e);
    let parsed = fen::parse(text).map_err(fail)?;
    let tables = open(dir, &parsed).map_err(fail)?;
    let probe = tables.probe(parsed.board, &parsed.position).map_err(fail)?;
    let advice = match chips {
        Some(((w, b), marker)) => Some(
            tables
                .chip_advice(parsed.board, &parsed.position, w, b, marker)
                .map_err(fail)?,
        ),
        None => None,
    };
    let placement = bidtb::fen::placement(parsed.board, &parsed.position);
    let out = if format == Format::Json {
        let mut v = probe.to_json();
        if let Some(a) = &advice {
            v["chips"] = a.to_json();
        }
        format!("{v}\n")
    } else {
        let mut text = human(&probe, &placement, format == Format::Full);
        if let Some(a) = &advice {
            text += &chip_lines(a);
        }
        text
    };
    std::io::stdout()
        .lock()
        .write_all(out.as_bytes())
        .map_err(|e| (1, Error::io("stdout", e)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagrams_expand_runs() {
        let d = diagram("3k3R/8/3K4/8/8/8/8/8");
        assert!(d.starts_with("   8  . . . k . . . R\n"), "{d}");
        assert!(d.ends_with("      a b c d e f g h\n"), "{d}");
        let wide = diagram("11k/K11");
        assert!(wide.contains("k\n"), "{wide}");
        assert!(wide.contains("a b c d e f g h i j k l"), "{wide}");
    }

    #[test]
    fn long_values_are_shown_by_decimals_unless_full() {
        use num_bigint::{BigInt, BigUint};
        assert_eq!(shown(&Value::small(7463, 8192), false), "7463/8192");
        assert_eq!(shown(&Value::one(), false), "1/1");
        let den = BigUint::from(3u8).pow(200);
        let long = Value::new(&den / BigUint::from(4u8), den.clone());
        let digits = den.to_string().len();
        assert_eq!(shown(&long, false), format!("≈0.249999999999…/{digits}"));
        assert_eq!(shown(&long, true), long.fraction());
        let bid = num_rational::BigRational::new(BigInt::from(-1), BigInt::from(den));
        assert_eq!(
            shown_signed(&bid, false),
            format!("≈-0.000000000000…/{digits}")
        );
        assert_eq!(shown_signed(&bid, true), format!("-1/{}", bid.denom()));
        let small = num_rational::BigRational::new(BigInt::from(-3), BigInt::from(64));
        assert_eq!(shown_signed(&small, false), "-3/64");
    }

    /// A value longer than the column widens the column for every move, so that the
    /// decimals and levels stay aligned (a long fraction shown in full used to push its
    /// line's columns right).
    #[test]
    fn move_columns_stay_aligned_with_long_values() {
        let move_info = |uci: &str, value: Value| MoveInfo {
            uci: uci.to_string(),
            value,
            beta: None,
            level: Some(1),
            fen: None,
        };
        let three = num_bigint::BigUint::from(3u32);
        let long = Value::new(
            1u32.into(),
            three * num_bigint::BigUint::from(10u32).pow(40),
        );
        let moves = [move_info("d1d4", long), move_info("a1b1", Value::one())];
        let text = move_lines(&moves, |m| &m.value, "T", true);
        let columns: Vec<usize> = text
            .lines()
            .map(|l| l[..l.find("level").unwrap()].chars().count())
            .collect();
        assert_eq!(columns.len(), 2);
        assert_eq!(columns[0], columns[1], "{text}");
    }
}
