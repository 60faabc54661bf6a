//! Tables that keep α and β apart (a `ranks_beta` section): what the solve method writes
//! where α < β somewhere, and how `query`, `verify`, `map` and the server read it.
//!
//! Real four-piece materials have α < β (KPvKP on 3x4, KBvKN on 4x4): generated, verified
//! and queried end to end. Three-piece tables are also rewritten here with a β section: β
//! = α written out (a valid file that must verify and answer exactly like one without),
//! and a β raised on one material (which every reader must report beside α, swap under the
//! colour mirror, and which verify must refuse, since the raised β is no Richman
//! function).

use crate::common;
use std::path::Path;

use bidtb::internal::certificate;
use bidtb::internal::generate::{Options, Silent, Solution, UpperBound, report, solve};
use bidtb::internal::probe::map::ValueMap;
use bidtb::internal::probe::{Tablebase, fraction};
use bidtb::internal::value::Images;
use bidtb::{Material, Value, internal::table, internal::verify};

fn solve_board(spec: &str) -> Solution {
    let sol = solve(&Options::solve(spec.parse().unwrap()), &Silent).expect("solves");
    assert!(sol.certified() && sol.alpha_below_beta.is_empty(), "{spec}");
    sol
}

/// Write every material of `sol`, with `beta` (per material, in the index's order) as the
/// β section where given.
fn write_with_betas(sol: &Solution, root: &Path, beta: impl Fn(usize, usize) -> Option<Value>) {
    let dir = root.join(sol.board.to_string());
    std::fs::create_dir_all(&dir).unwrap();
    let raised: Vec<Vec<Option<Value>>> = (0..sol.index.classes().len())
        .map(|c| {
            sol.index
                .class_range(c)
                .map(|g| beta(c, g))
                .collect::<Vec<_>>()
        })
        .collect();
    for (c, mut contents) in report::table_contents(sol, false)
        .unwrap()
        .into_iter()
        .enumerate()
    {
        if raised[c].iter().any(Option::is_some) {
            contents.values_beta = Some(
                raised[c]
                    .iter()
                    .zip(&contents.values)
                    .map(|(b, a)| b.as_ref().unwrap_or(a))
                    .collect(),
            );
        }
        table::write(&dir.join(table::file_name(contents.material)), &contents).unwrap();
    }
}

fn open(root: &Path) -> Tablebase {
    Tablebase::open(root).unwrap()
}

#[test]
fn a_beta_section_equal_to_alpha_verifies_and_answers_like_none() {
    let sol = solve_board("4x4");
    let (v1, v2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    write_with_betas(&sol, v1.path(), |_, _| None);
    write_with_betas(&sol, v2.path(), |_, g| Some(sol.values.value(g).clone()));
    let (t1, t2) = (open(v1.path()), open(v2.path()));
    for m in Material::three_piece() {
        assert!(!t1.table(sol.board, m).unwrap().info().has_beta());
        let info = t2.table(sol.board, m).unwrap().info();
        assert!(info.has_beta(), "{m}");
        assert_eq!(
            t2.table(sol.board, m).unwrap().alpha_below_beta().unwrap(),
            0
        );
    }
    let check = verify::verify_board(&t2, sol.board).unwrap();
    assert!(check.ok, "{check:?}");
    for g in (0..sol.index.len()).step_by(7) {
        let pos = sol.index.position(g);
        for shown in [pos, pos.mirror(sol.board)] {
            let (a, b) = (
                t1.probe(sol.board, &shown).unwrap(),
                t2.probe(sol.board, &shown).unwrap(),
            );
            assert_eq!(a, b, "{}", shown.describe(sol.board));
            assert_eq!(a.to_json(), b.to_json());
            assert!(a.beta.is_none() && a.bid_beta.is_none());
        }
    }
}

/// KQvK's β raised to 1 wherever α < 1: a version 2 file whose β is no Richman function.
#[test]
fn a_raised_beta_is_reported_beside_alpha_swapped_by_the_mirror_and_refused_by_verify() {
    let sol = solve_board("4x4");
    let queen = 1; // KQvK in the three-piece order
    let root = tempfile::tempdir().unwrap();
    let raised =
        |c: usize, g: usize| (c == queen && !sol.values.value(g).is_one()).then(Value::one);
    write_with_betas(&sol, root.path(), raised);
    let tb = open(root.path());
    let board = sol.board;
    let split = sol
        .index
        .class_range(queen)
        .filter(|&g| !sol.values.value(g).is_one())
        .count();
    assert!(split > 10);
    let three = Material::three_piece();
    let kqvk = tb.table(board, three[queen]).unwrap();
    assert!(kqvk.info().has_beta());
    assert_eq!(kqvk.alpha_below_beta().unwrap(), split);
    // Only the material with α < β has a β section.
    assert!(!tb.table(board, three[2]).unwrap().info().has_beta());

    let mut seen = 0;
    for g in sol.index.class_range(queen) {
        let pos = sol.index.position(g);
        let alpha = sol.values.value(g);
        let direct = tb.probe(board, &pos).unwrap();
        assert_eq!(&direct.value, alpha);
        if alpha.is_one() {
            assert_eq!(direct.beta, None);
            continue;
        }
        seen += 1;
        assert_eq!(direct.beta, Some(Value::one()));
        assert_eq!(direct.to_json()["beta"], "1/1");
        assert!(direct.bid_beta.is_some() && direct.to_json()["bid_beta"].is_string());
        // The colour-flipped position (a black queen): α' = 1 − β, β' = 1 − α.
        let black = tb.probe(board, &pos.mirror(board)).unwrap();
        assert_eq!(black.value, Value::zero());
        assert_eq!(black.beta, Some(alpha.complement()));
        // Its Black moves are the table position's White moves, bounds swapped the same way;
        // Black's moves are ordered by β.
        let betas: Vec<Value> = black.black.iter().map(|m| m.upper().clone()).collect();
        assert!(betas.windows(2).all(|w| w[0] <= w[1]), "{betas:?}");
        for m in &black.black {
            if let Some(b) = &m.beta {
                assert!(&m.value < b);
            }
        }
        // The value map of the black-queen position shows α, with β beside it.
        if seen <= 3 {
            let fen = bidtb::fen::write(board, &pos.mirror(board));
            let map = ValueMap::of_fen(&tb, &fen).unwrap();
            assert!(map.betas.iter().any(Option::is_some));
            let json = map.to_json();
            assert!(json["beta_rows"].is_array(), "{json}");
            for s in board.squares() {
                if let (Some(a), Some(b)) = (map.at(s), &map.betas[s.0 as usize]) {
                    assert!(a < b);
                    assert_eq!(fraction(a), "0/1");
                }
            }
        }
    }
    assert_eq!(seen, split);
    // A bare-kings position reads no β and says so in its JSON.
    let kvk = tb.probe_fen("4/4/4/K2k").unwrap();
    assert!(kvk.to_json().get("beta").is_none());

    // Verify: α still proves itself; the raised β fails its equations, and the split count
    // is reported.
    let check = verify::verify_board(&tb, board).unwrap();
    assert!(!check.ok);
    let c = &check.classes["KQvK"];
    assert_eq!(c.alpha_below_beta, split);
    assert!(c.violations > 0, "{c:?}");
    assert_eq!(c.alpha_failures, 0);
    assert_eq!(check.classes["KRvK"].violations, 0);
}

#[test]
fn query_and_map_on_the_command_line_print_beta() {
    let sol = solve_board("4x4");
    let root = tempfile::tempdir().unwrap();
    write_with_betas(&sol, root.path(), |c, g| {
        (c == 1 && !sol.values.value(g).is_one()).then(Value::one)
    });
    let tables = root.path().to_str().unwrap();
    // A white queen whose α < 1: find one through the library, ask the binary.
    let g = sol
        .index
        .class_range(1)
        .find(|&g| !sol.values.value(g).is_one())
        .unwrap();
    let fen = bidtb::fen::write(sol.board, &sol.index.position(g));
    let (code, stdout, stderr) = common::bidtb(&["query", "--tables", tables, &fen]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("beta       1/1"), "{stdout}");
    assert!(stdout.contains("bid beta"), "{stdout}");
    let (code, stdout, stderr) = common::bidtb(&["query", "--tables", tables, "--json", &fen]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["beta"], "1/1");
    let (code, stdout, _) = common::bidtb(&["map", "--tables", tables, &fen]);
    assert_eq!(code, 0);
    assert!(stdout.contains("alpha < beta on"), "{stdout}");
    let (code, stdout, stderr) = common::bidtb(&["verify", "--tables", tables]);
    assert_eq!(code, 1);
    assert!(stdout.contains("alpha < beta at"), "{stdout}");
    // The progress line of the material that fails says so.
    assert!(
        stderr
            .lines()
            .any(|l| l.ends_with(" s") && l.contains(" FAILED in ")),
        "{stderr}"
    );
}

/// The values of every node of `sol`'s graph: `positions`, then the terminal nodes' (1, 0).
fn with_terminals(sol: &Solution, positions: Vec<Value>) -> Images {
    let mut all = positions;
    all.extend((sol.graph.positions()..sol.graph.nodes()).map(|t| sol.values.value(t).clone()));
    Images::of(all)
}

/// A solution that carries β apart writes a β section exactly for the materials where β
/// differs, with T′ from β's certificate, and counts as certified only if β's certificate
/// proves β.
#[test]
fn solutions_with_beta_apart_write_beta_where_it_differs() {
    let mut sol = solve_board("3x4");
    let positions = sol.index.len();
    let rook = sol.index.class_range(2);
    let betas: Vec<Value> = (0..positions)
        .map(|g| {
            if rook.contains(&g) {
                Value::one()
            } else {
                sol.values.value(g).clone()
            }
        })
        .collect();
    sol.alpha_below_beta = (0..positions)
        .filter(|&g| betas[g] != *sol.values.value(g))
        .map(|g| g as u32)
        .collect();
    assert!(!sol.alpha_below_beta.is_empty());
    let values = with_terminals(&sol, betas);
    let certificate = certificate::certify(&values, &sol.graph);
    let black_levels = certificate.black_levels.clone();
    sol.beta = Some(UpperBound {
        values,
        certificate,
    });
    // β = 1 on KRvK is no Richman function: its certificate fails, so the run is not
    // certified.
    assert!(!sol.certified());
    let contents = report::table_contents(&sol, false).unwrap();
    for (c, table) in contents.iter().enumerate() {
        assert_eq!(table.values_beta.is_some(), c == 2, "{}", table.material);
        let range = sol.index.class_range(c);
        assert_eq!(table.levels_black, black_levels[range].to_vec());
        assert!(!table.certified_beta);
    }

    // β solved apart but equal to α, with its own certificate: certified, no β section.
    let mut honest = solve_board("3x4");
    let same: Vec<Value> = (0..honest.index.len())
        .map(|g| honest.values.value(g).clone())
        .collect();
    let values = with_terminals(&honest, same);
    let certificate = certificate::certify(&values, &honest.graph);
    honest.beta = Some(UpperBound {
        values,
        certificate,
    });
    assert!(honest.certified());
    assert!(
        report::table_contents(&honest, false)
            .unwrap()
            .iter()
            .all(|t| t.values_beta.is_none() && t.certified_beta)
    );
}

/// Real α < β: KPvKP on 3x4 (blocked pawns: play can go on forever), generated with
/// what it needs, listed, counted, verified and queried.
#[test]
fn blocked_pawns_on_3x4_have_alpha_below_beta_end_to_end() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().to_str().unwrap();
    let (code, stdout, stderr) = common::bidtb(&[
        "generate",
        "--board",
        "3x4",
        "--method",
        "solve",
        "--material",
        "KPvKP",
        "--out",
        out,
        "--json",
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(summary["certified"], true);
    assert_eq!(summary["classes"]["KPvKP"]["alpha_below_beta"], 11);
    assert_eq!(summary["alpha_below_beta"], 11);
    let listed = std::fs::read_to_string(root.path().join("3x4/alpha-below-beta.txt")).unwrap();
    let lines: Vec<&str> = listed.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(lines.len(), 11);
    assert!(lines.iter().all(|l| l.starts_with("KPvKP ")));
    // Every listed position: the query reports β beside α, the mirror swaps them.
    let tb = open(root.path());
    for line in &lines {
        let parts: Vec<&str> = line.split(' ').collect();
        let (fen, alpha, beta) = (parts[1], parts[2], parts[3]);
        let p = tb.probe_fen(fen).unwrap();
        assert_eq!(p.value.to_string(), alpha);
        assert_eq!(p.beta.as_ref().unwrap().to_string(), beta);
        let parsed = bidtb::fen::parse(fen).unwrap();
        let m = tb
            .probe(parsed.board, &parsed.position.mirror(parsed.board))
            .unwrap();
        assert_eq!(m.value, p.beta.as_ref().unwrap().complement());
        assert_eq!(m.beta, Some(p.value.complement()));
    }
    let (code, stdout, stderr) = common::bidtb(&["verify", "--tables", out]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("alpha < beta at 11"), "{stdout}");
    // One progress line per material on stderr, in order, each ok.
    let lines: Vec<&str> = stderr.lines().collect();
    let count = lines.len();
    assert!(count >= 6, "{stderr}");
    for (i, l) in lines.iter().enumerate() {
        assert!(
            l.contains(&format!("({} of {count}) ok in ", i + 1)),
            "{stderr}"
        );
    }
}

#[test]
fn verify_reads_in_full_only_the_exits_that_may_decide() {
    let root = tempfile::tempdir().unwrap();
    let out = root.path().to_str().unwrap();
    let (code, _, stderr) = common::bidtb(&[
        "generate",
        "--board",
        "4x4",
        "--method",
        "solve",
        "--material",
        "KNvKP",
        "--out",
        out,
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let check = verify::verify_board(&open(root.path()), "4x4".parse().unwrap()).unwrap();
    assert!(check.ok, "{:?}", check.problems);
    // The generator's boundary stage reads 4,134 of 4x4 KNvKP's 16,496 exits in full;
    // verify reads the same ones, and every equation, closure and level holds.
    let class = &check.classes["KNvKP"];
    assert_eq!((class.exits, class.exits_read), (16_496, 4_134));
    // A material without exits has nothing to read.
    assert_eq!(check.classes["KvK"].exits, 0);
}
