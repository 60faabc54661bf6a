//! The chip tables (docs/src/guide/chips.md) against what is known: the study's first example at
//! K = 200, the approach to the continuous values as K grows (a measured bound), the
//! files' refusals, and the query's answers. The brute-force comparison is in
//! `tests/chips_reference.rs`.

use std::path::Path;

use crate::common::bidtb;
use bidtb::Tablebase;
use bidtb::{Board, Material, internal::index};
use num_bigint::BigInt;
use num_rational::BigRational;

/// Value tables of `board` (solve method) and chip tables for `ks` under `root`.
fn make(root: &Path, board: &str, ks: &[u32]) {
    let out = root.to_str().unwrap();
    let (code, _, stderr) = bidtb(&[
        "generate", "--board", board, "--method", "solve", "--out", out, "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    for k in ks {
        let (code, _, stderr) = bidtb(&[
            "chips",
            "--tables",
            out,
            "--board",
            board,
            "--chips",
            &k.to_string(),
            "-q",
        ]);
        assert_eq!(code, 0, "{stderr}");
    }
}

/// The largest |h − (1 − α)(2K + 2)| over both thresholds h of every stored position of
/// `board`'s three-piece tables in `root`, in holdings (half chips), exactly.
fn largest_gap(root: &Path, board: Board, k: u32) -> BigRational {
    let tb = Tablebase::open(root).unwrap();
    let zero = BigRational::from_integer(0.into());
    let one = BigRational::from_integer(1.into());
    let scale = BigRational::from_integer(BigInt::from(2 * k + 2));
    let mut worst = zero.clone();
    for m in Material::three_piece() {
        let t = tb.table(board, m).unwrap();
        for i in 0..t.len() {
            let pos = index::position_of_key(board, m, t.key(i).unwrap()).unwrap();
            let th = tb.chip_thresholds(board, &pos, k).unwrap();
            let r = tb.entry(board, &pos).unwrap().value.to_ratio();
            let alpha = BigRational::new(
                BigInt::from(r.numer().clone()),
                BigInt::from(r.denom().clone()),
            );
            let continuous = (&one - &alpha) * &scale;
            for h in [th.win, th.not_lose] {
                let gap = BigRational::from_integer(BigInt::from(h)) - &continuous;
                let gap = if gap < zero { -gap } else { gap };
                if gap > worst {
                    worst = gap;
                }
            }
        }
    }
    worst
}

/// WK d6, WR h8 / BK d8 (value 3/4: White wins with more than a quarter of the money):
/// with 200 chips White wins from 50 chips (a quarter) and loses with 49 and the marker.
#[test]
fn the_study_example_with_200_chips() {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path(), "8x8", &[200]);
    let out = dir.path().to_str().unwrap();
    let fen = "3k3R/8/3K4/8/8/8/8/8";
    let ask = |holdings: &str, marker: &str| {
        let (code, stdout, stderr) = bidtb(&[
            "query",
            "--tables",
            out,
            "--json",
            "--chips",
            holdings,
            "--tiebreak",
            marker,
            fen,
        ]);
        assert_eq!(code, 0, "{stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        json["chips"].clone()
    };
    let c = ask("50:150", "black");
    assert_eq!(c["win"], "50");
    assert_eq!(c["not_lose"], "50");
    assert_eq!(c["outcome"], "white wins");
    assert_eq!(c["advice"][0]["side"], "white");
    assert_eq!(c["advice"][0]["then"], "move h8d8");
    let c = ask("49:151", "white");
    assert_eq!(c["white"]["text"], "49*");
    assert_eq!(c["outcome"], "black wins");
    assert_eq!(c["advice"][0]["then"], "move d8c7");
    // The text answer says the same.
    let (code, stdout, _) = bidtb(&["query", "--tables", out, "--chips", "100:100", fen]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("White wins from 50, does not lose from 50"),
        "{stdout}"
    );
    assert!(stdout.contains("outcome    White wins"), "{stdout}");
}

/// The thresholds approach the continuous values as K grows: measured on 4x4 and 8x8 for
/// K = 10 .. 640, every threshold lies within 2.4 holdings (1.2 chips) of (1 − α)(2K + 2),
/// so the share it stands for is within 1.2/K of the continuous 1 − α. Asserted: within
/// 3 holdings (1.5 chips) at every K tested.
#[test]
fn thresholds_approach_the_continuous_values() {
    let dir = tempfile::tempdir().unwrap();
    let small = [10, 80, 640];
    let large = [10, 40, 200];
    make(dir.path(), "4x4", &small);
    make(dir.path(), "8x8", &large);
    let bound = BigRational::from_integer(3.into());
    for (board, ks) in [("4x4", small), ("8x8", large)] {
        for k in ks {
            let gap = largest_gap(dir.path(), board.parse().unwrap(), k);
            assert!(gap <= bound, "{board} K={k}: {gap} holdings");
        }
    }
}

/// Chip files are checked like tables: damaged, foreign or missing ones are named, and a
/// second run keeps the files that fit.
#[test]
fn chip_files_are_checked_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path(), "4x4", &[12]);
    make(dir.path(), "3x4", &[12]);
    let out = dir.path().to_str().unwrap();
    let file = dir.path().join("4x4/chips-12/KRvK.chips");
    let good = std::fs::read(&file).unwrap();
    let fen = "k3/4/4/K2R";
    let ask = || bidtb(&["query", "--tables", out, "--chips", "6:6", fen]);
    assert_eq!(ask().0, 0);
    for (what, bytes) in [
        ("truncated", good[..good.len() - 3].to_vec()),
        ("flipped", {
            let mut b = good.clone();
            b[good.len() - 5] ^= 0x10;
            b
        }),
        ("header", {
            let mut b = good.clone();
            b[20] ^= 0x01;
            b
        }),
    ] {
        std::fs::write(&file, &bytes).unwrap();
        let (code, _, stderr) = ask();
        assert_eq!(code, 1, "{what}: {stderr}");
        assert!(stderr.contains("KRvK.chips"), "{what}: {stderr}");
    }
    // Another board's file under this name: made for other tables.
    std::fs::copy(dir.path().join("3x4/chips-12/KRvK.chips"), &file).unwrap();
    let (code, _, stderr) = ask();
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("bidtb chips --tables"), "{stderr}");
    // Missing: the command that makes it.
    std::fs::remove_file(&file).unwrap();
    let (code, _, stderr) = ask();
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("missing chip table") && stderr.contains("--chips 12"),
        "{stderr}"
    );
    // A second run makes what is missing and keeps the rest.
    let (code, stdout, stderr) = bidtb(&[
        "chips", "--tables", out, "--board", "4x4", "--chips", "12", "--json",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let made: Vec<(String, bool)> = json["made"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["material"].as_str().unwrap().to_string(),
                m["kept"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(made.contains(&("KRvK".to_string(), false)), "{made:?}");
    assert!(made.contains(&("KQvK".to_string(), true)), "{made:?}");
    assert_eq!(std::fs::read(&file).unwrap(), good);
    assert_eq!(ask().0, 0);
    // Bad arguments.
    for args in [
        vec!["chips", "--tables", out, "--board", "4x4", "--chips", "0"],
        vec![
            "chips", "--tables", out, "--board", "4x4", "--chips", "9..3",
        ],
        vec![
            "chips", "--tables", out, "--board", "4x4", "--chips", "99999",
        ],
        vec!["query", "--tables", out, "--chips", "6", fen],
        vec!["query", "--tables", out, "--chips", "a:b", fen],
    ] {
        let (code, _, stderr) = bidtb(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
    }
    let (code, _, stderr) = bidtb(&["chips", "--tables", out, "--board", "5x5", "--chips", "12"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("generate"), "{stderr}");
}

/// `bidtb verify` re-checks chip files from their stored thresholds: a forged threshold
/// (file checksums recomputed, so it opens) fails the fixed-point equation.
#[test]
fn verify_rechecks_chip_files() {
    use bidtb::internal::chips::file::{self, ChipTable};
    let dir = tempfile::tempdir().unwrap();
    make(dir.path(), "4x4", &[10, 12]);
    let out = dir.path().to_str().unwrap();
    let (code, stdout, stderr) = bidtb(&["verify", "--tables", out]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("chips-12    KRvK"), "{stdout}");
    assert_eq!(
        stdout.matches("equations failing 0").count(),
        12 + 6,
        "{stdout}"
    );
    let path = dir.path().join("4x4/chips-12/KRvK.chips");
    let t = ChipTable::open(&path).unwrap();
    let (mut win, not_lose): (Vec<u16>, Vec<u16>) = (0..t.len())
        .map(|i| {
            let th = t.get(i);
            (th.win as u16, th.not_lose as u16)
        })
        .unzip();
    let i = win.iter().position(|&w| w > 0 && w < 26).unwrap();
    win[i] -= 1;
    let board: Board = "4x4".parse().unwrap();
    let m: Material = "KRvK".parse().unwrap();
    std::fs::write(
        &path,
        file::encode(board, m, 12, t.keys_crc(), &win, &not_lose),
    )
    .unwrap();
    drop(t);
    let (code, stdout, _) = bidtb(&["verify", "--tables", out, "--json"]);
    assert_eq!(code, 1, "{stdout}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let krvk = json[0]["chips"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["material"] == "KRvK" && c["chips"] == 12)
        .unwrap()
        .clone();
    assert!(krvk["failing"].as_u64().unwrap() >= 1, "{krvk}");
}
