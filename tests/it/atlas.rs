//! The atlas: its rows against the study's method and the study's facts, and an atlas that
//! continues where it stopped.

use crate::common::bidtb;

use bidtb::internal::generate::atlas::{self, Row};
use bidtb::internal::generate::{self, Method, Options, Silent, Solution};
use bidtb::{Board, Value, fen};
use std::path::Path;

fn run(board: Board, method: Method) -> Solution {
    let mut options = Options::new(board);
    options.method = method.into();
    generate::solve(&options, &Silent).expect("solves")
}

/// The row of a board without the fields that depend on how and when it was made.
fn facts(mut row: Row) -> Row {
    row.method = String::new();
    row.seconds = 0.0;
    row.peak_mib = None;
    row.first_richman_iteration = None;
    row
}

/// Every board up to 5x5: the row from the solve method's tables is the row from the
/// study's method.
#[test]
fn rows_agree_with_the_iteration_up_to_5x5() {
    for board in atlas::parse_boards("2x2..5x5").unwrap() {
        let solved = atlas::row(&run(board, Method::Solve), 0.0, None);
        let iterated_run = run(board, Method::Iterate);
        let iterated = atlas::row(&iterated_run, 0.0, None);
        assert_eq!(
            iterated.first_richman_iteration,
            iterated_run.first_richman_iteration()
        );
        assert_eq!(facts(solved), facts(iterated), "{board}");
    }
}

fn v(n: u64, d: u64) -> Value {
    Value::small(n, d)
}

/// The study's facts: a quiescent position of value 5/8 on 3x4, the value 653/819 on 8x3,
/// zugzwangs on 4x4 and 8x8, 138 digits on 8x8.
#[test]
fn rows_state_the_studys_facts() {
    let b34: Board = "3x4".parse().unwrap();
    let sol = run(b34, Method::Solve);
    let row = atlas::row(&sol, 0.0, None);
    assert!(row.quiescent_not_half > 0);
    let cert = sol.certificate.as_ref().unwrap();
    assert!(
        cert.quiescent
            .iter()
            .any(|&p| sol.values.value(p as usize) == &v(5, 8)),
        "a quiescent position of value 5/8 on 3x4"
    );
    let b83: Board = "8x3".parse().unwrap();
    let sol = run(b83, Method::Solve);
    assert!((0..sol.graph.positions()).any(|p| sol.values.value(p) == &v(653, 819)));
    let row = atlas::row(&sol, 0.0, None);
    assert!(
        row.max_denominator_factors.contains("3^2 · 7 · 13"),
        "{row:?}"
    );
    let b44: Board = "4x4".parse().unwrap();
    assert!(atlas::row(&run(b44, Method::Solve), 0.0, None).zugzwangs > 0);
    let b88: Board = "8x8".parse().unwrap();
    let row = atlas::row(&run(b88, Method::Solve), 0.0, None);
    assert!(row.zugzwangs > 0);
    assert_eq!(row.max_denominator_digits, 138);
    assert_eq!(row.alpha_below_beta, 0);
    // The position named as holding the largest denominator does.
    let (class, placement) = row.max_denominator_position.split_once(' ').unwrap();
    assert_eq!(class, "KNvK");
    let parsed = fen::parse(placement).unwrap();
    assert_eq!(parsed.board, b88);
}

/// `bidtb atlas` writes both files; run again, it reuses every row; a board whose row is
/// gone is computed again, alone.
#[test]
fn an_interrupted_atlas_continues() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, _, stderr) = bidtb(&["atlas", "--out", out, "--boards", "2x2..3x4"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("atlas.json")).unwrap())
            .unwrap();
    assert_eq!(json["rows"].as_array().unwrap().len(), 6);
    let md = std::fs::read_to_string(dir.path().join("atlas.md")).unwrap();
    assert_eq!(md.lines().count(), 2 + 6);
    std::fs::remove_file(dir.path().join("3x3/atlas-row.json")).unwrap();
    let (code, _, stderr) = bidtb(&["atlas", "--out", out, "--boards", "2x2..3x4"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr.matches("reusing").count(), 5, "{stderr}");
    assert!(stderr.contains("3x3: "), "{stderr}");
    let again: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("atlas.json")).unwrap())
            .unwrap();
    let without_time = |j: &serde_json::Value| {
        j["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r["board"].clone(),
                    r["distinct_values"].clone(),
                    r["zugzwangs"].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(without_time(&json), without_time(&again));
    // Bad ranges are usage errors.
    let (code, _, _) = bidtb(&["atlas", "--out", out, "--boards", "2x2..20x20"]);
    assert_eq!(code, 2);
}

/// The pictures, as `bidtb atlas` writes them: one square per board in the grid with its
/// digits, one point per board and series in the scatters.
#[test]
fn the_plots_have_one_mark_per_board() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, _, stderr) = bidtb(&["atlas", "--out", out, "--boards", "2x2..4x4", "-q"]);
    assert_eq!(code, 0, "{stderr}");
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    let grid = read("atlas-grid.svg");
    assert_eq!(grid.matches(r#"<g class="board""#).count(), 9);
    assert!(
        grid.contains(r#"data-board="4x4" data-digits="5""#),
        "{grid}"
    );
    let cost = read("atlas-cost.svg");
    assert_eq!(cost.matches(r#"class="point""#).count(), 18);
    let digits = read("atlas-digits.svg");
    assert_eq!(digits.matches(r#"class="point""#).count(), 9);
}

/// The four-piece atlas (`bidtb atlas --pieces 4`): one row per board and material, whose
/// counts are those of `bidtb generate --pieces 4` on the same board (α < β, quiescent,
/// largest denominators), with the α < β positions listed as generate lists them.
/// `bidtb atlas --pieces 4` on 3x4 and 4x4 into `out` (from the tables in `tables` if
/// given), which must succeed: the `atlas4.json` it writes.
fn atlas4(out: &Path, tables: Option<&Path>) -> serde_json::Value {
    atlas_of(4, "3x4,4x4", out, tables)
}

/// `bidtb atlas --pieces MEN --boards BOARDS` into `out`, which must succeed: the
/// `atlasMEN.json` it writes.
fn atlas_of(men: u8, boards: &str, out: &Path, tables: Option<&Path>) -> serde_json::Value {
    let men = men.to_string();
    let mut args = vec!["atlas", "--pieces", &men, "--boards", boards, "-q"];
    args.extend(["--out", out.to_str().unwrap()]);
    if let Some(t) = tables {
        args.extend(["--from-tables", t.to_str().unwrap()]);
    }
    let (code, _, err) = bidtb(&args);
    assert_eq!(code, 0, "{err}");
    let json = out.join(format!("atlas{men}.json"));
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

/// The five-man atlas on 3x3: a row for each of the 146 materials up to five men, whose
/// counts are those of `bidtb generate --pieces 5` (α < β, zugzwangs, quiescent, the
/// largest denominators), the same rows again from those tables (`--from-tables`), and the
/// findings and picture over the five-man materials.
#[test]
fn the_five_man_atlas_counts_what_generate_counts() {
    let dir = tempfile::tempdir().unwrap();
    let (out, tables) = (dir.path().join("atlas"), dir.path().join("tables"));
    let atlas = atlas_of(5, "3x3", &out, None);
    let rows = atlas["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 146);
    assert_eq!(atlas["pieces"], 5);
    let (code, _, err) = bidtb(&[
        "generate",
        "--board",
        "3x3",
        "--pieces",
        "5",
        "--method",
        "solve",
        "--out",
        tables.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tables.join("3x3").join("summary.json")).unwrap(),
    )
    .unwrap();
    let mut five = 0;
    for r in rows {
        let (m, class) = r["classes"].as_object().unwrap().iter().next().unwrap();
        let c = &summary["classes"][m];
        for field in [
            "alpha_below_beta",
            "quiescent",
            "zugzwangs",
            "canonical_positions",
        ] {
            assert_eq!(r[field], c[field], "3x3 {m} {field}");
        }
        assert_eq!(
            class["max_denominator_digits"], c["max_denominator_digits"],
            "{m}"
        );
        five += (m.chars().filter(char::is_ascii_uppercase).count() == 5) as usize;
    }
    assert_eq!(five, 110);
    let again = atlas_of(5, "3x3", &dir.path().join("again"), Some(&tables));
    assert_eq!(without_cost(&again["rows"]), without_cost(&atlas["rows"]));
    let md = std::fs::read_to_string(out.join("atlas5.md")).unwrap();
    assert!(md.starts_with("# The five-man atlas"), "{md}");
    let line = md
        .lines()
        .find(|l| l.starts_with("- Five-man materials with α < β somewhere: "))
        .unwrap_or_else(|| panic!("{md}"));
    let split = rows
        .iter()
        .filter(|r| {
            let m = r["classes"].as_object().unwrap().keys().next().unwrap();
            m.chars().filter(char::is_ascii_uppercase).count() == 5
                && r["alpha_below_beta"].as_u64().unwrap() > 0
        })
        .count();
    assert!(line.contains(&format!("{split} of 110")), "{line}");
    let svg = std::fs::read_to_string(out.join("atlas5-census.svg")).unwrap();
    assert!(
        svg.contains(">KRPvKR<") && !svg.contains(">KRvKN<"),
        "five-man rows only"
    );
}

#[test]
fn the_four_piece_atlas_counts_what_generate_counts() {
    let dir = tempfile::tempdir().unwrap();
    let (out, tables) = (dir.path().join("atlas"), dir.path().join("tables"));
    let atlas = atlas4(&out, None);
    let rows = atlas["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 72, "36 materials on each board");
    for board in ["3x4", "4x4"] {
        let (code, _, err) = bidtb(&[
            "generate",
            "--board",
            board,
            "--pieces",
            "4",
            "--method",
            "solve",
            "--out",
            tables.to_str().unwrap(),
            "-q",
        ]);
        assert_eq!(code, 0, "{err}");
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(tables.join(board).join("summary.json")).unwrap(),
        )
        .unwrap();
        let mut split = 0;
        for r in rows.iter().filter(|r| r["board"] == board) {
            let (m, class) = r["classes"].as_object().unwrap().iter().next().unwrap();
            let c = &summary["classes"][m];
            assert_eq!(r["alpha_below_beta"], c["alpha_below_beta"], "{board} {m}");
            assert_eq!(r["quiescent"], c["quiescent"], "{board} {m}");
            assert_eq!(r["zugzwangs"], c["zugzwangs"], "{board} {m}");
            assert_eq!(
                class["max_denominator_digits"], c["max_denominator_digits"],
                "{board} {m}"
            );
            assert_eq!(
                r["canonical_positions"], c["canonical_positions"],
                "{board} {m}"
            );
            split += r["alpha_below_beta"].as_u64().unwrap();
        }
        assert_eq!(split, if board == "4x4" { 83 } else { 11 });
        let listed = |path: std::path::PathBuf| {
            let mut lines: Vec<String> = std::fs::read_to_string(path)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect();
            lines.sort();
            lines
        };
        assert_eq!(
            listed(out.join(board).join("alpha-below-beta.txt")),
            listed(tables.join(board).join("alpha-below-beta.txt"))
        );
    }
    // Rows made from the tables and records instead (`--from-tables`, how 8x8 gets its
    // rows) are the solved rows, apart from time and memory, with the same lists.
    let again = dir.path().join("again");
    let from_tables = atlas4(&again, Some(&tables));
    assert_eq!(from_tables["skipped"].as_array().unwrap().len(), 0);
    assert_eq!(
        without_cost(&from_tables["rows"]),
        without_cost(&atlas["rows"])
    );
    for board in ["3x4", "4x4"] {
        for list in ["alpha-below-beta.txt", "quiescent.txt"] {
            assert_eq!(
                std::fs::read(again.join(board).join(list)).unwrap(),
                std::fs::read(out.join(board).join(list)).unwrap(),
                "{board} {list}"
            );
        }
    }
    // A material whose record is missing is skipped by name (KQvKR: α = β everywhere, so
    // the findings would otherwise count it among the materials that never have α < β).
    // KQvKR is then made on 3x4, not on 4x4.
    std::fs::remove_file(tables.join("4x4").join("KQvKR.json")).unwrap();
    let partial = atlas4(&again, Some(&tables));
    let skipped = partial["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 1, "{partial}");
    assert!(
        skipped[0][0].as_str().unwrap().contains("KQvKR"),
        "{partial}"
    );
    // The reason names the file within the tables' directory, not the machine's path.
    let why = skipped[0][1].as_str().unwrap();
    assert!(why.contains("4x4/KQvKR.json"), "{why}");
    assert!(!why.contains(tables.to_str().unwrap()), "{why}");
    // The findings say it was not made, and do not count it as a material without α < β.
    let md = std::fs::read_to_string(again.join("atlas4.md")).unwrap();
    let line = |start: &str| -> String {
        md.lines()
            .find(|l| l.starts_with(start))
            .unwrap_or_else(|| panic!("no line {start}: {md}"))
            .to_string()
    };
    assert!(
        line("- 4x4:").ends_with("not made: KQvKR (see below)"),
        "{md}"
    );
    let never = line("- Four-man materials with α = β");
    assert!(
        never.contains("KQvKQ") && !never.contains("KQvKR"),
        "{never}"
    );
    let (code, _, err) = bidtb(&[
        "atlas",
        "--from-tables",
        ".",
        "--out",
        again.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--pieces 4"), "{err}");
    let md = std::fs::read_to_string(out.join("atlas4.md")).unwrap();
    assert!(md.contains("| 4x4 | KBvKN |"), "{md}");
    let svg = std::fs::read_to_string(out.join("atlas4-census.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("KBvKN"));
}

/// An atlas's rows without what a run costs (seconds, peak memory), which differs between
/// two runs that agree on every fact.
fn without_cost(rows: &serde_json::Value) -> Vec<serde_json::Value> {
    let mut rows = rows.as_array().unwrap().clone();
    for r in &mut rows {
        let r = r.as_object_mut().unwrap();
        r.remove("seconds");
        r.remove("peak_mib");
    }
    rows
}
