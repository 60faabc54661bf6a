//! Up to five men against the independent reference (`tests/it/reference/`, written from
//! the rules alone, sharing no code with the engine): every position of every material with
//! up to four men, both colour orientations, α and β separately, on 3x3, 3x4 and 4x4; every
//! material with up to five men the same way on 3x3 and 3x4 (both in every CI run); and the en-passant material
//! KPvKP on 3x5. The engine's side goes the whole way: `bidtb generate --pieces N --method
//! solve` writes tables one material at a time in dependency order, and every position is
//! read back through the query side (the index, the format version 4 reader, the colour
//! mirror for the materials not stored). Two symmetries check the engine against itself:
//! the colour mirror within self-mirror materials (there is none with five men: the sides
//! differ in count) and the transposition of pawnless positions between 3x4 and 4x3, up to
//! five men.

use crate::common;
use crate::reference;
use std::collections::BTreeMap;
use std::path::Path;

use bidtb::{Board, Material, Tablebase, Value, fen};

/// The engine's (α, β) of the reference's FEN key `"<placement> <ep>"`.
fn engine(tb: &Tablebase, key: &str) -> (Value, Value) {
    let (placement, ep) = key.split_once(' ').expect("placement and en-passant field");
    let parsed = fen::parse(&format!("{placement} - - {ep}")).expect("the reference's FEN");
    let e = tb
        .entry(parsed.board, &parsed.position)
        .expect("a stored position");
    let beta = e.beta.clone().unwrap_or_else(|| e.value.clone());
    (e.value, beta)
}

/// Generate `args` into a fresh directory and compare every position of `materials` (and
/// their colour mirrors) with the reference. Returns the α < β count per stored material.
fn compare(files: u8, ranks: u8, args: &[&str], materials: &[Material]) -> BTreeMap<String, usize> {
    let board = Board::new(files, ranks).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let b = board.to_string();
    let mut full = vec![
        "generate", "--board", &b, "--method", "solve", "--out", out, "-q",
    ];
    full.extend_from_slice(args);
    let (code, _, stderr) = common::bidtb(&full);
    assert_eq!(code, 0, "{stderr}");
    let tb = Tablebase::open(Path::new(out)).unwrap();
    let mut reference = reference::Reference::new(files, ranks);
    let mut split = BTreeMap::new();
    for &m in materials {
        let mut count = 0;
        for name in [m, m.mirror()] {
            let name = name.to_string();
            let positions = reference.material(&name);
            assert!(!positions.is_empty(), "{board} {name}: no positions");
            for (key, (alpha, beta)) in positions {
                let (a, b) = engine(&tb, key);
                assert_eq!(&a.to_ratio(), alpha, "{board} {name} {key}: alpha");
                assert_eq!(&b.to_ratio(), beta, "{board} {name} {key}: beta");
                if name == m.to_string() && alpha != beta {
                    count += 1;
                }
            }
            reference.forget_keys(&name);
            if m.is_self_mirror() {
                break;
            }
        }
        split.insert(m.to_string(), count);
    }
    split
}

fn all_four() -> Vec<Material> {
    Material::all_up_to(4)
}

fn all_five() -> Vec<Material> {
    let all = Material::all_up_to(5);
    assert_eq!(all.len(), 146, "materials up to five men, up to the mirror");
    all
}

#[test]
fn every_material_up_to_four_men_matches_the_reference_on_3x3() {
    let split = compare(3, 3, &["--pieces", "4"], &all_four());
    assert!(split.values().all(|&n| n == 0), "{split:?}");
}

#[test]
fn every_material_up_to_four_men_matches_the_reference_on_3x4() {
    let split = compare(3, 4, &["--pieces", "4"], &all_four());
    // The blocked pawns of KPvKP: α < β at 21 placements (no symmetry used here).
    assert_eq!(split["KPvKP"], 21, "{split:?}");
    assert_eq!(split.values().sum::<usize>(), 21, "{split:?}");
}

#[test]
fn every_material_up_to_four_men_matches_the_reference_on_4x4() {
    let split = compare(4, 4, &["--pieces", "4"], &all_four());
    assert_eq!(split["KBvKN"], 660, "{split:?}");
    assert_eq!(split.values().sum::<usize>(), 660, "{split:?}");
}

/// About 35 s of CPU time in release mode, most of it the reference's (exact rationals,
/// no symmetry: 1.6 million five-man positions).
#[test]
fn every_material_up_to_five_men_matches_the_reference_on_3x3() {
    let split = compare(3, 3, &["--pieces", "5"], &all_five());
    assert!(split.values().all(|&n| n == 0), "{split:?}");
}

/// 11.5 million five-man positions: about 6 min of CPU time and 2.3 GiB of memory, nearly
/// all of it the reference's (the engine makes the tables in 10 to 15 s; reading every
/// position back through `Tablebase::entry` is a small part of the rest). The longest
/// test of the suite, run in CI like the others: on two cores its α and β solves run side
/// by side, about 3 minutes of the suite's time.
#[test]
fn every_material_up_to_five_men_matches_the_reference_on_3x4() {
    let split = compare(3, 4, &["--pieces", "5"], &all_five());
    // α < β at these placements (no symmetry used here, so each one counts; KPvKP's 21
    // as with four men); α = β everywhere else.
    let below: BTreeMap<&str, usize> = split
        .iter()
        .filter(|&(_, &n)| n > 0)
        .map(|(m, &n)| (m.as_str(), n))
        .collect();
    let want = BTreeMap::from([
        ("KBNvKB", 956),
        ("KBPvKB", 684),
        ("KBPvKP", 92),
        ("KNPvKN", 46),
        ("KNPvKP", 102),
        ("KPPvKN", 38),
        ("KPPvKP", 46),
        ("KPvKP", 21),
        ("KQPvKP", 84),
        ("KRPvKP", 98),
    ]);
    assert_eq!(below, want);
}

/// En passant needs five ranks: KPvKP on 3x5, with every position where a right is
/// pending, and what it leads to.
#[test]
fn en_passant_positions_match_the_reference_on_3x5() {
    let kpvkp: Material = "KPvKP".parse().unwrap();
    compare(3, 5, &["--material", "KPvKP"], &[kpvkp]);
}

/// En passant by hand, on 3x5 (the values read from the tables, which the reference above
/// confirms position by position). In `3/p2/3/kP1/2K` (Black: king a2, pawn a4; White: king
/// c1, pawn b2) White's double step b2-b4 lands beside the black pawn and gives it the right
/// to take en passant: the position after it is `3/pP1/3/k2/2K - - b3`, its own position.
/// There White's options are those of the same placement without the right (every White
/// move ends the right), and Black has one more: a4xb3 e.p. Black's best without it is a
/// king step beside White's king (a2b1: then either side captures the other king on its
/// coin, worth 1/2); White's best is b4-b5=Q (5/8). So without the right the value is
/// (5/8 + 1/2)/2 = 9/16; with it, the capture (3/8, to `3/3/1p1/k2/2K`) is Black's best and
/// the value is (5/8 + 3/8)/2 = 1/2. A second White move lapses the right: c1c2 leads to
/// the placement without it.
#[test]
fn en_passant_by_hand_on_3x5() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, _, stderr) = common::bidtb(&[
        "generate",
        "--board",
        "3x5",
        "--method",
        "solve",
        "--material",
        "KPvKP",
        "--out",
        out,
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let tb = Tablebase::open(Path::new(out)).unwrap();
    let probe = |f: &str| tb.probe_fen(f).unwrap();
    let half = |a: &Value, b: &Value| {
        Value::from((a.to_ratio() + b.to_ratio()) / num_rational::Ratio::from_integer(2u8.into()))
    };
    let v = Value::small;

    // The double step creates the right; the single step does not.
    let before = probe("3/p2/3/kP1/2K");
    let fen_of = |p: &bidtb::Probe, m: &str| {
        p.white
            .iter()
            .chain(&p.black)
            .find(|x| x.uci == m)
            .and_then(|x| x.fen.clone())
            .unwrap()
    };
    assert_eq!(fen_of(&before, "b2b4"), "3/pP1/3/k2/2K - - b3");
    assert_eq!(fen_of(&before, "b2b3"), "3/p2/1P1/k2/2K");

    let with = probe("3/pP1/3/k2/2K - - b3");
    let without = probe("3/pP1/3/k2/2K");
    // White's options are the same (the right lapses on every White move).
    let targets = |p: &bidtb::Probe| {
        let mut t: Vec<(String, Value)> = p
            .white
            .iter()
            .map(|m| (m.uci.clone(), m.value.clone()))
            .collect();
        t.sort();
        t
    };
    assert_eq!(targets(&with), targets(&without));
    assert_eq!(fen_of(&with, "c1c2"), "3/pP1/3/k1K/3");
    // Black has the capture only with the right.
    assert!(without.black.iter().all(|m| m.uci != "a4b3"));
    assert_eq!(fen_of(&with, "a4b3"), "3/3/1p1/k2/2K");
    assert_eq!(with.black.len(), without.black.len() + 1);

    // The values, by hand from the best options.
    let best_white = with.best_white().unwrap();
    assert_eq!(
        (best_white.uci.as_str(), &best_white.value),
        ("b4b5q", &v(5, 8))
    );
    let kings_side_by_side = without.best_black().unwrap();
    assert_eq!(kings_side_by_side.uci, "a2b1");
    assert_eq!(kings_side_by_side.value, v(1, 2));
    assert_eq!(without.value, half(&v(5, 8), &v(1, 2)));
    assert_eq!(without.value, v(9, 16));
    let capture = with.best_black().unwrap();
    assert_eq!((capture.uci.as_str(), &capture.value), ("a4b3", &v(3, 8)));
    assert_eq!(with.value, half(&v(5, 8), &v(3, 8)));
    assert_eq!(with.value, v(1, 2));
    assert_eq!(with.fen, "3/pP1/3/k2/2K - - b3");
}

/// Two facts no single table can fake: within one table of a material that is its own
/// colour mirror, α(P) = 1 − β(mirror P) at every position; and without pawns nothing
/// tells files from ranks, so every pawnless position on 3x4 has the values (α and β) of
/// the transposed position on 4x3. `generate` makes `args` on both boards; every position
/// of the `materials` is checked. Returns the positions checked (mirrored, transposed).
fn mirror_and_transpose(args: &[&str], materials: &[Material]) -> (usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    for board in ["3x4", "4x3"] {
        let mut full = vec![
            "generate", "--board", board, "--method", "solve", "--out", out, "-q",
        ];
        full.extend_from_slice(args);
        let (code, _, stderr) = common::bidtb(&full);
        assert_eq!(code, 0, "{stderr}");
    }
    let boards = ("3x4".parse().unwrap(), "4x3".parse().unwrap());
    check_mirror_and_transpose(Path::new(out), boards, materials)
}

/// [`mirror_and_transpose`] on the tables in `out` of boards `a` and `b` (its transpose).
fn check_mirror_and_transpose(
    out: &Path,
    (a, b): (Board, Board),
    materials: &[Material],
) -> (usize, usize) {
    use bidtb::internal::index::MaterialIndex;
    let tb = Tablebase::open(out).unwrap();
    let bounds = |board: Board, p: &bidtb::Position| {
        let e = tb.entry(board, p).unwrap();
        let beta = e.beta.clone().unwrap_or_else(|| e.value.clone());
        (e.value, beta)
    };
    let (mut mirrored, mut transposed) = (0, 0);
    for &m in materials {
        let index = MaterialIndex::new(a, m);
        for i in 0..index.len() {
            let pos = index.position(i);
            let (alpha, beta) = bounds(a, &pos);
            if m.is_self_mirror() {
                let (ma, mb) = bounds(a, &pos.mirror(a));
                assert_eq!(alpha, mb.complement(), "{m} {}", fen::write(a, &pos));
                assert_eq!(beta, ma.complement(), "{m} {}", fen::write(a, &pos));
                mirrored += 1;
            }
            if !m.has_pawns() {
                let t = |s: bidtb::Square| b.square(a.rank_of(s), a.file_of(s)).unwrap();
                let squares: Vec<bidtb::Square> = pos.squares().iter().map(|&s| t(s)).collect();
                let there = bidtb::Position::new(m, &squares, None);
                assert_eq!(
                    bounds(b, &there),
                    (alpha, beta),
                    "{m} {}",
                    fen::write(a, &pos)
                );
                transposed += 1;
            }
        }
    }
    (mirrored, transposed)
}

#[test]
fn self_mirror_materials_and_transposed_boards() {
    let (mirrored, transposed) = mirror_and_transpose(&["--pieces", "4"], &all_four());
    assert!(
        mirrored > 1000 && transposed > 10_000,
        "{mirrored} {transposed}"
    );
}

/// Five men: no material is its own colour mirror (its sides hold three men and two), so
/// the mirror identity has nothing to check within one table; every pawnless material up
/// to five men (the five-man ones made with `--material`, and all they lead to) agrees
/// under transposition between 3x4 and 4x3.
#[test]
fn five_men_transposed_boards() {
    let five: Vec<Material> = all_five()
        .into_iter()
        .filter(|m| m.man_count() == 5)
        .collect();
    assert!(five.iter().all(|m| !m.is_self_mirror()));
    let pawnless: Vec<Material> = five.into_iter().filter(|m| !m.has_pawns()).collect();
    let names = pawnless
        .iter()
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let everything: Vec<Material> = all_five().into_iter().filter(|m| !m.has_pawns()).collect();
    let (mirrored, transposed) = mirror_and_transpose(&["--material", &names], &everything);
    // Self-mirror pawnless materials below five men: KvK, KQvKQ, KRvKR, KBvKB, KNvKN.
    assert!(mirrored > 0, "{mirrored}");
    assert!(transposed > 1_000_000, "{transposed}");
}

/// The same on 4x5 and 5x4, from tables made by `scripts/five-men.sh 4x5 DIR` and
/// `scripts/five-men.sh 5x4 DIR` (about 20 minutes together): every pawnless position up to
/// five men on 4x5 has the values of its transpose on 5x4. Run with
/// `BIDTB_TABLES_4X5=DIR cargo test --release -- --ignored five_men_transposed_on_4x5`.
#[test]
#[ignore = "needs the 4x5 and 5x4 five-man tables (BIDTB_TABLES_4X5)"]
fn five_men_transposed_on_4x5_and_5x4() {
    let dir = std::env::var("BIDTB_TABLES_4X5").expect("BIDTB_TABLES_4X5=DIR");
    let pawnless: Vec<Material> = all_five().into_iter().filter(|m| !m.has_pawns()).collect();
    let boards = ("4x5".parse().unwrap(), "5x4".parse().unwrap());
    let (_, transposed) = check_mirror_and_transpose(Path::new(&dir), boards, &pawnless);
    eprintln!("{transposed} pawnless positions agree on 4x5 and 5x4");
    assert!(transposed > 10_000_000, "{transposed}");
}

/// Every reader answers a five-man position (issue 63): on 3x4 tables of KRBvKN (and what
/// it leads to), `bidtb query` (text and JSON, the stored material and its colour mirror),
/// `bidtb map`, `bidtb dump` (every stored position, checked against the library's
/// look-up), `bidtb verify` and the server's `/api/query` and `/api/map` (the same JSON as
/// the command line).
#[test]
fn five_men_through_every_reader() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, _, stderr) = common::bidtb(&[
        "generate",
        "--board",
        "3x4",
        "--method",
        "solve",
        "--material",
        "KRBvKN",
        "--out",
        out,
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let tb = Tablebase::open(Path::new(out)).unwrap();
    let board: Board = "3x4".parse().unwrap();
    // White: king a4, rook b4, bishop c4; Black: king a1, knight b1. Its colour mirror
    // (a KNvKRB position) is answered through the same table.
    let (fen_w, fen_b) = ("KRB/3/3/kn1", "KN1/3/3/krb");
    let (pw, pb) = (tb.probe_fen(fen_w).unwrap(), tb.probe_fen(fen_b).unwrap());
    assert_eq!(pw.value.complement(), pb.value);
    assert!(!pw.white.is_empty() && !pw.black.is_empty());

    // query, text and JSON.
    for (fen, probe, class) in [(fen_w, &pw, "KRBvKN"), (fen_b, &pb, "KNvKRB")] {
        let (code, stdout, stderr) = common::bidtb(&["query", "--tables", out, fen]);
        assert_eq!(code, 0, "{fen}: {stderr}");
        assert!(stdout.contains(class), "{stdout}");
        assert!(
            stdout.contains(&format!("value      {}", probe.value)),
            "{stdout}"
        );
        let (code, stdout, stderr) = common::bidtb(&["query", "--tables", out, "--json", fen]);
        assert_eq!(code, 0, "{fen}: {stderr}");
        assert_eq!(stdout.trim_end(), probe.to_json().to_string(), "{fen}");
    }

    // map: the black king's own square holds the position's value.
    let (code, stdout, stderr) = common::bidtb(&["map", "--tables", out, "--json", fen_w]);
    assert_eq!(code, 0, "{stderr}");
    let map: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(map["class"], "KRBvKN");
    assert_eq!(map["rows"][3][0], pw.value.to_string());
    let free = map["rows"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r.as_array().unwrap())
        .filter(|v| v.is_string())
        .count();
    assert_eq!(free, 12 - 4, "every square but the other men's: {stdout}");

    // dump: every stored position, each as the library reads it.
    let (code, stdout, stderr) =
        common::bidtb(&["dump", "--tables", out, "--board", "3x4", "KRBvKN"]);
    assert_eq!(code, 0, "{stderr}");
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some("# fen alpha beta T-level T'-level"));
    let mut count = 0;
    for line in lines {
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(fields.len(), 5, "{line}");
        let parsed = fen::parse(fields[0]).unwrap();
        assert_eq!(parsed.board, board);
        assert_eq!(parsed.position.material().to_string(), "KRBvKN", "{line}");
        let e = tb.entry(board, &parsed.position).unwrap();
        let beta = e.beta.clone().unwrap_or_else(|| e.value.clone());
        assert_eq!(
            (fields[1], fields[2]),
            (&*e.value.to_string(), &*beta.to_string()),
            "{line}"
        );
        count += 1;
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("3x4/KRBvKN.json")).unwrap())
            .unwrap();
    assert_eq!(
        count,
        json["report"]["canonical_positions"].as_u64().unwrap()
    );

    // verify: the five-man table alone, then the whole board.
    for args in [&["--material", "KRBvKN"][..], &[]] {
        let mut full = vec!["verify", "--tables", out, "--board", "3x4"];
        full.extend_from_slice(args);
        let (code, stdout, stderr) = common::bidtb(&full);
        assert_eq!(code, 0, "{args:?}: {stdout}{stderr}");
        assert!(
            stdout.contains("KRBvKN") && stdout.contains("3x4: ok"),
            "{stdout}"
        );
    }

    // The server answers as the command line does.
    let server = common::Server::start(dir.path());
    for (path, command) in [("api/query", "query"), ("api/map", "map")] {
        for fen in [fen_w, fen_b] {
            let mut resp = ureq::get(format!("{}{path}", server.url))
                .query("fen", fen)
                .call()
                .unwrap();
            assert_eq!(resp.status().as_u16(), 200, "{path} {fen}");
            let body = resp.body_mut().read_to_string().unwrap();
            let (code, stdout, _) = common::bidtb(&[command, "--tables", out, "--json", fen]);
            assert_eq!(code, 0);
            assert_eq!(body, stdout.trim_end(), "{path} {fen}");
        }
    }
    assert_eq!(server.stop(), Some(0));
}
