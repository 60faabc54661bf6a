//! `bidtb atlas --pieces 4` and `--pieces 5`: the census of four or five men, one row per
//! board and material (every material up to N men, solved one at a time in dependency order
//! with the solve method):
//! positions, distinct values, the largest denominator and a position holding it,
//! quiescent positions, zugzwangs, α < β, the closures' depths, time and peak memory. The
//! positions with α < β and the quiescent ones are listed per board.

use std::collections::BTreeMap;
use std::time::Instant;

use bidtb::Board;
use bidtb::Error;
use bidtb::Material;
use bidtb::Table;
use bidtb::internal::atomic;
use bidtb::internal::dirlock::DirLock;
use bidtb::internal::generate::atlas::{self, Row};
use bidtb::internal::generate::driver::{self, Driven, InMemory, Store};
use bidtb::internal::generate::report::MaterialRecord;
use bidtb::internal::generate::{Options, Solution, report};
use bidtb::internal::progress::Silent;
use std::path::Path;

use super::Args;

/// The solutions of a board, kept for the exits of later materials, with a row each.
#[derive(Default)]
struct Census {
    solved: InMemory,
    rows: Vec<Row>,
    alpha_below_beta: String,
    quiescent: String,
}

impl Store for Census {
    fn has(&self, m: Material) -> Result<bool, Error> {
        self.solved.has(m)
    }
    fn reader(&self, _needed: &[Material]) -> driver::Reader<'_> {
        driver::Reader::Store(&self.solved)
    }
    fn keep(&mut self, sol: Solution, written: driver::Written) -> Result<(), Error> {
        if !sol.certified() {
            return Err(Error::Uncertified(format!(
                "{} on {}: the certificate failed",
                sol.classes
                    .iter()
                    .map(|(m, _)| m.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                sol.board
            )));
        }
        self.rows
            .push(atlas::row(&sol, sol.cost.seconds, sol.cost.peak_mib));
        self.alpha_below_beta += &report::alpha_below_beta_lines(&sol);
        self.quiescent += &report::quiescent_lines(&sol);
        self.solved.keep(sol, written)
    }
}

/// A board's rows, or why it was skipped; the materials skipped on memory.
type BoardCensus = (Result<Vec<Row>, String>, Vec<driver::Skipped>);

fn census(board: Board, args: &Args) -> Result<BoardCensus, Error> {
    let mut options = Options::solve(board);
    options.materials = Material::all_up_to(args.pieces.into());
    let mut store = Census::default();
    let run = super::within(args.max_seconds, |control| {
        driver::run(&options, &Silent, control, &mut store)
    });
    let skipped = match run {
        Ok(Driven::Finished(_, skipped)) => skipped,
        Ok(Driven::Interrupted(_)) => {
            return Ok((Err(format!("over {} s", args.max_seconds)), Vec::new()));
        }
        Err(e @ (Error::Resources(_) | Error::Uncertified(_))) => {
            return Ok((Err(e.to_string()), Vec::new()));
        }
        Err(e) => return Err(e),
    };
    write_lists(board, args, &store.alpha_below_beta, &store.quiescent)?;
    Ok((Ok(store.rows), skipped))
}

/// A board's rows from the tables and records in `tables` (`--from-tables`), with the
/// position lists written as [`census`] writes them; the materials without a certified
/// table and record there are skipped.
fn from_tables(board: Board, tables: &Path, args: &Args) -> Result<BoardCensus, Error> {
    let source = tables.join(board.to_string());
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    let (mut alpha_below_beta, mut quiescent) = (String::new(), String::new());
    for m in Material::all_up_to(args.pieces.into()) {
        let record = source.join(format!("{m}.json"));
        let table = source.join(bidtb::internal::table::file_name(m));
        // Reasons name the files relative to the tables' directory: they go into the
        // atlas, which should not carry the paths of the machine that made it.
        let read = || -> Result<(MaterialRecord, Table), String> {
            let text = std::fs::read_to_string(&record).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    format!("not made here: no record {board}/{m}.json")
                }
                _ => format!("record {board}/{m}.json unreadable: {}", e.kind()),
            })?;
            let r: MaterialRecord = serde_json::from_str(&text)
                .map_err(|e| format!("{board}/{m}.json does not parse: {e}"))?;
            let t = Table::open(&table).map_err(|e| {
                let why = match e {
                    Error::Table { reason, .. } => reason,
                    Error::Corrupt { corruption, .. } => corruption.to_string(),
                    Error::MissingTable { .. } => "no such file".to_string(),
                    e => e.to_string(),
                };
                format!("{board}/{}: {why}", bidtb::internal::table::file_name(m))
            })?;
            let info = t.info();
            if info.board != board || info.material != m || !info.certified() {
                return Err(format!(
                    "{board}/{} is not a certified table of {m} on {board}",
                    bidtb::internal::table::file_name(m)
                ));
            }
            Ok((r, t))
        };
        match read() {
            Ok((record, table)) => {
                rows.push(atlas::row_from_table(&record, &table)?);
                alpha_below_beta += &record.alpha_below_beta;
                quiescent += &record.quiescent;
            }
            Err(reason) => skipped.push(driver::Skipped {
                materials: vec![m.to_string()],
                reason,
            }),
        }
    }
    write_lists(board, args, &alpha_below_beta, &quiescent)?;
    Ok((Ok(rows), skipped))
}

/// Write a board's lists of the positions with α < β and of the quiescent ones.
fn write_lists(
    board: Board,
    args: &Args,
    alpha_below_beta: &str,
    quiescent: &str,
) -> Result<(), Error> {
    let dir = args.out.join(board.to_string());
    std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
    let lists = [
        (
            "alpha-below-beta",
            report::ALPHA_BELOW_BETA_HEADING,
            alpha_below_beta,
        ),
        ("quiescent", report::QUIESCENT_HEADING, quiescent),
    ];
    for (name, heading, body) in lists {
        let file = list_name(name, args.pieces);
        let whole = format!(
            "{board}/{name}.txt beside the tables: bidtb generate --board {board} --pieces {} \
             --method solve writes it",
            args.pieces
        );
        let path = dir.join(&file);
        let text = format!("{heading}{}", fit_list(body, LIST_LIMIT, &whole));
        atomic::write_output(&path, text.as_bytes())?;
    }
    Ok(())
}

/// The most bytes of a list the atlas writes (its directory, docs/atlas in this
/// repository, is committed): 5x5's five-man list of α < β alone would be about 60 MB.
const LIST_LIMIT: usize = 1 << 20;

/// A list's lines (`material placement …`, a material's lines together) as the atlas writes
/// them: all of them where they fit in `limit` bytes; else the first lines of every
/// material, an equal share of `limit` each, after a line saying how many of how many and
/// where the whole list is (`whole`).
fn fit_list(body: &str, limit: usize, whole: &str) -> String {
    if body.len() <= limit {
        return body.to_string();
    }
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for line in body.lines() {
        let material = line.split(' ').next().unwrap_or("");
        match groups.last_mut() {
            Some((m, lines)) if *m == material => lines.push(line),
            _ => groups.push((material, vec![line])),
        }
    }
    let share = limit / groups.len();
    let (mut kept, mut out) = (0, String::new());
    for (_, lines) in &groups {
        let mut used = 0;
        for line in lines {
            used += line.len() + 1;
            if used > share {
                break;
            }
            out.push_str(line);
            out.push('\n');
            kept += 1;
        }
    }
    let total = body.lines().count();
    format!(
        "# {kept} of {total} lines, the first of each material (the whole list: {whole})\n{out}"
    )
}

/// The file of a board's list `name` in the atlas of `men` men: `alpha-below-beta.txt`
/// for four (as `generate` names it), `alpha-below-beta-5.txt` for five, beside it.
fn list_name(name: &str, men: u8) -> String {
    match men {
        4 => format!("{name}.txt"),
        _ => format!("{name}-{men}.txt"),
    }
}

/// The material of a row (its one class).
fn material(r: &Row) -> &str {
    r.classes.keys().next().map_or("?", String::as_str)
}

/// Digits of the material's largest denominator, of α's and β's (the row's own counts α's).
fn digits(r: &Row) -> usize {
    r.classes
        .values()
        .next()
        .map_or(0, |c| c.max_denominator_digits)
}

/// The materials skipped on each board, from the skipped entries ("8x8 KNvKN, KBvKP" for
/// materials; a board skipped whole names no material and is not listed).
fn not_made(skipped: &[(String, String)]) -> BTreeMap<&str, Vec<&str>> {
    let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (what, _) in skipped {
        if let Some((board, materials)) = what.split_once(' ') {
            out.entry(board).or_default().extend(materials.split(", "));
        }
    }
    out
}

/// What the rows show, in sentences: per board the positions with α < β and the materials
/// holding them (and those not made), the materials that never have any where they were
/// made, the largest denominator.
fn findings(men: u8, rows: &[Row], skipped: &[(String, String)]) -> String {
    let missing = not_made(skipped);
    let mut boards: Vec<&str> = Vec::new();
    let mut by_material: BTreeMap<&str, usize> = BTreeMap::new();
    for r in rows {
        if !boards.contains(&r.board.as_str()) {
            boards.push(&r.board);
        }
        *by_material.entry(material(r)).or_default() += r.alpha_below_beta;
    }
    let mut out = String::from("## Findings\n\n");
    for b in &boards {
        let here: Vec<&Row> = rows.iter().filter(|r| r.board == *b).collect();
        let total: usize = here.iter().map(|r| r.alpha_below_beta).sum();
        let positions: usize = here.iter().map(|r| r.canonical_positions).sum();
        let holders: Vec<String> = here
            .iter()
            .filter(|r| r.alpha_below_beta > 0)
            .map(|r| format!("{} {}", material(r), r.alpha_below_beta))
            .collect();
        let absent = match missing.get(b) {
            Some(ms) => format!("; not made: {} (see below)", ms.join(", ")),
            None => String::new(),
        };
        out += &format!(
            "- {b}: α < β at {total} of {positions} positions{}{absent}\n",
            if holders.is_empty() {
                String::new()
            } else {
                format!(" ({})", holders.join(", "))
            }
        );
    }
    let skipped_somewhere = |m: &str| missing.values().any(|ms| ms.contains(&m));
    let never: Vec<&str> = by_material
        .iter()
        .filter(|(m, n)| **n == 0 && men_of(m) == men && !skipped_somewhere(m))
        .map(|(m, _)| *m)
        .collect();
    out += &format!(
        "- {}-man materials with α = β at every position of every board here (a material \
         not made on some board is not counted): {}.\n",
        word(men),
        list_or_none(&never)
    );
    // What the N-th man adds: materials of N men with α < β somewhere, and those with a
    // queen among them.
    let split: Vec<&str> = by_material
        .iter()
        .filter(|(m, n)| **n > 0 && men_of(m) == men)
        .map(|(m, _)| *m)
        .collect();
    let queens: Vec<&str> = split.iter().copied().filter(|m| m.contains('Q')).collect();
    out += &format!(
        "- {}-man materials with α < β somewhere: {} of {}; with a queen: {}.\n",
        word(men),
        split.len(),
        by_material.keys().filter(|m| men_of(m) == men).count(),
        list_or_none(&queens)
    );
    if let Some(r) = rows.iter().max_by_key(|r| digits(r)) {
        out += &format!(
            "- The largest denominator: {} digits, {} on {} (`{}` holds α's largest).\n",
            digits(r),
            material(r),
            r.board,
            r.max_denominator_position
        );
    }
    out + "\n"
}

/// The men of a material's name (`KRvKN`: 4).
fn men_of(material: &str) -> u8 {
    material.chars().filter(|c| c.is_ascii_uppercase()).count() as u8
}

/// `4` as `Four`, `5` as `Five`.
fn word(men: u8) -> &'static str {
    match men {
        3 => "Three",
        4 => "Four",
        5 => "Five",
        _ => "N",
    }
}

fn list_or_none(items: &[&str]) -> String {
    if items.is_empty() {
        "none".to_string()
    } else {
        items.join(", ")
    }
}

fn markdown(men: u8, rows: &[Row], skipped: &[(String, String)]) -> String {
    let mut out = format!(
        "# The {}-man atlas\n\nWritten by `bidtb atlas --pieces {men}`: every material up to {men} men on each \
         board, solved and proved one at a time (--method solve). The rows of boards too large to \
         solve in one process with every material in memory are made with `--from-tables DIR` \
         from tables generated beforehand (`bidtb generate`, one job per material): their \
         seconds and peak memory are each material's own job's, and a material without a \
         certified table there is listed as skipped.\n\n{}## By board and material\n\n",
        word(men).to_lowercase(),
        findings(men, rows, skipped)
    );
    out += &String::from(
        "| board | material | positions (canonical / all) | distinct values | largest denominator (α and β) | α's largest held by | quiescent (≠ 1/2) | zugzwangs | α < β | T max | T′ max | seconds | peak MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        out += &format!(
            "| {} | {} | {} / {} | {} | {} digits | `{}` | {} ({}) | {} | {} | {} | {} | {:.2} | {} |\n",
            r.board,
            material(r),
            r.canonical_positions,
            r.positions,
            r.distinct_values,
            digits(r),
            r.max_denominator_position,
            r.quiescent,
            r.quiescent_not_half,
            r.zugzwangs,
            r.alpha_below_beta,
            r.max_level_white,
            r.max_level_black,
            r.seconds,
            r.peak_mib.map_or("–".to_string(), |m| m.to_string()),
        );
    }
    for (what, why) in skipped {
        out += &format!("| {what} | skipped: {why} |||||||||||\n");
    }
    out
}

/// The census as a picture: per material (rows) and board (columns), the positions with
/// α < β, shaded by their share of the material's positions.
fn picture(men: u8, rows: &[Row]) -> String {
    let mut boards: Vec<String> = Vec::new();
    let mut grid: BTreeMap<String, BTreeMap<String, (usize, usize)>> = BTreeMap::new();
    for r in rows {
        if !boards.contains(&r.board) {
            boards.push(r.board.clone());
        }
        grid.entry(material(r).to_string())
            .or_default()
            .insert(r.board.clone(), (r.alpha_below_beta, r.canonical_positions));
    }
    let materials: Vec<&String> = grid
        .iter()
        .filter(|(m, _)| men_of(m) == men)
        .map(|(m, _)| m)
        .collect();
    let (cell_w, cell_h, left, top) = (70.0, 18.0, 70.0, 40.0);
    let width = left + cell_w * boards.len() as f64 + 10.0;
    let height = top + cell_h * materials.len() as f64 + 30.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <text x=\"{left}\" y=\"16\" font-size=\"13\">Positions with α &lt; β, by {}-man material and board (shade: share of the material)</text>\n",
        word(men).to_lowercase()
    );
    for (j, b) in boards.iter().enumerate() {
        let x = left + cell_w * j as f64 + cell_w / 2.0;
        svg += &format!(
            "<text x=\"{x}\" y=\"{}\" text-anchor=\"middle\">{b}</text>\n",
            top - 6.0
        );
    }
    for (i, m) in materials.iter().enumerate() {
        let y = top + cell_h * i as f64;
        svg += &format!(
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{m}</text>\n",
            left - 6.0,
            y + 13.0
        );
        for (j, b) in boards.iter().enumerate() {
            let x = left + cell_w * j as f64;
            let (fill, label) = match grid[*m].get(b) {
                Some(&(n, of)) => {
                    let share = if of == 0 { 0.0 } else { n as f64 / of as f64 };
                    let t = (share * 4.0).min(1.0);
                    let shade = (255.0 - 200.0 * t) as u8;
                    (format!("rgb(255,{shade},{shade})"), n.to_string())
                }
                None => ("#eee".to_string(), "–".to_string()),
            };
            svg += &format!(
                "<rect x=\"{x}\" y=\"{y}\" width=\"{cell_w}\" height=\"{cell_h}\" fill=\"{fill}\" stroke=\"#fff\"/>\n\
                 <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{label}</text>\n",
                x + cell_w / 2.0,
                y + 13.0
            );
        }
    }
    svg += "</svg>\n";
    svg
}

/// Whether `a` and `b` are one directory (a second lock on it would wait for the first).
fn same_dir(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    }
}

pub(super) fn run(args: &Args, boards: &[Board]) -> Result<(), (u8, Error)> {
    let men = args.pieces;
    let say = |text: String| {
        if !args.quiet {
            note!("{text}");
        }
    };
    let mut rows: Vec<Row> = Vec::new();
    let mut skipped: Vec<(String, String)> = Vec::new();
    for &board in boards {
        let saved = args
            .out
            .join(board.to_string())
            .join(format!("atlas{men}-rows.json"));
        // A board whose tables are given is made afresh from them (they may have grown
        // since); the others' saved rows are reused.
        let tables = args
            .from_tables
            .as_ref()
            .filter(|dir| dir.join(board.to_string()).is_dir());
        // No other run (a `generate` in the same directory) may write the board's
        // directories meanwhile: the one written and the one read are locked while the
        // board is made.
        let out_dir = args.out.join(board.to_string());
        std::fs::create_dir_all(&out_dir).map_err(|e| (1, Error::io(&out_dir, e)))?;
        let _lock = super::lock_if_there(&out_dir)?;
        let _source_lock = match tables.map(|t| t.join(board.to_string())) {
            Some(source) if !same_dir(&source, &out_dir) => {
                DirLock::acquire_to_read(&source).map_err(|e| (crate::cli::exit_code(&e), e))?
            }
            _ => None,
        };
        if tables.is_none()
            && let Ok(text) = std::fs::read_to_string(&saved)
            && let Ok(mut kept) = serde_json::from_str::<Vec<Row>>(&text)
        {
            say(format!("{board}: reusing {}", saved.display()));
            rows.append(&mut kept);
            continue;
        }
        bidtb::internal::resources::release_free_memory();
        let started = Instant::now();
        let (result, dropped) = match tables {
            Some(tables) => from_tables(board, tables, args),
            None => census(board, args),
        }
        .map_err(|e| (1, e))?;
        for s in dropped {
            skipped.push((format!("{board} {}", s.materials.join(", ")), s.reason));
        }
        match result {
            Ok(mut made) => {
                let split: usize = made.iter().map(|r| r.alpha_below_beta).sum();
                say(format!(
                    "{board}: {} materials in {:.1} s, alpha < beta at {split}",
                    made.len(),
                    started.elapsed().as_secs_f64()
                ));
                let text = serde_json::to_string_pretty(&made).expect("rows serialise");
                atomic::write_atomic(&saved, text.as_bytes()).map_err(|e| (1, e))?;
                rows.append(&mut made);
            }
            Err(why) => {
                say(format!("{board}: skipped ({why})"));
                skipped.push((board.to_string(), why));
            }
        }
    }
    let json = serde_json::json!({ "pieces": men, "rows": rows, "skipped": skipped });
    let text = serde_json::to_string_pretty(&json).expect("serialises");
    let files = [
        (format!("atlas{men}.json"), text),
        (format!("atlas{men}.md"), markdown(men, &rows, &skipped)),
        (format!("atlas{men}-census.svg"), picture(men, &rows)),
    ];
    for (name, body) in &files {
        atomic::write_output(&args.out.join(name), body.as_bytes()).map_err(|e| (1, e))?;
    }
    say(format!(
        "wrote {}, atlas{men}.md and atlas{men}-census.svg ({} rows, {} skipped)",
        args.out.join(format!("atlas{men}.json")).display(),
        rows.len(),
        skipped.len()
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::fit_list;

    #[test]
    fn a_list_that_fits_is_written_whole() {
        let body = "KRvK a b\nKRvK c d\nKQvK e f\n";
        assert_eq!(fit_list(body, body.len(), "there"), body);
    }

    #[test]
    fn a_long_list_keeps_the_first_lines_of_every_material() {
        // Three materials of 9-byte lines ("KRvK 000\n"), a share of 20 bytes each: the
        // first two lines of each.
        let mut body = String::new();
        for (m, n) in [("KRvK", 10), ("KQvK", 3), ("KBvK", 1)] {
            for i in 0..n {
                body += &format!("{m} {i:03}\n");
            }
        }
        let out = fit_list(&body, 60, "elsewhere");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "# 5 of 14 lines, the first of each material (the whole list: elsewhere)"
        );
        assert_eq!(
            &lines[1..],
            ["KRvK 000", "KRvK 001", "KQvK 000", "KQvK 001", "KBvK 000"]
        );
    }
}
