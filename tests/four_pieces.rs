//! Four pieces against the independent reference (`tests/reference/`, written from the
//! rules alone, sharing no code with the engine): every position of every material with up
//! to four men, both colour orientations, α and β separately, on 3x3, 3x4 and 4x4, and the
//! en-passant material KPvKP on 3x5. The engine's side goes the whole way: `bidtb generate
//! --pieces 4 --method solve` writes tables one material at a time in dependency order,
//! and every position is read back through the query side (the index, the format version 3
//! reader, the colour mirror for the materials not stored).

mod common;
mod reference;

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
            let positions = reference.material(&name.to_string()).clone();
            for (key, (alpha, beta)) in &positions {
                let (a, b) = engine(&tb, key);
                assert_eq!(a.as_ratio(), alpha, "{board} {name} {key}: alpha");
                assert_eq!(b.as_ratio(), beta, "{board} {name} {key}: beta");
                if name == m && alpha != beta {
                    count += 1;
                }
            }
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

/// En passant needs five ranks: KPvKP on 3x5, with every position where a right is
/// pending, and what it leads to.
#[test]
fn en_passant_positions_match_the_reference_on_3x5() {
    let kpvkp: Material = "KPvKP".parse().unwrap();
    compare(3, 5, &["--material", "KPvKP"], &[kpvkp]);
}
