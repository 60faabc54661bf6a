//! The chip tables (docs/src/guide/chips.md) against an independent brute force
//! (`tests/reference/chips.rs`: written from the rules of the game alone, sharing no code with
//! the engine, solving the explicit states (position, chips, marker) with every pair of sealed
//! bids played out, three fixed points computed apart and no threshold or monotonicity
//! assumed). Every position of every material (both colour orientations: the engine answers
//! the one it does not store through the colour mirror), both thresholds, every total asked.
//! The engine's side goes the whole way: `bidtb generate --method solve`, `bidtb chips`, and
//! `Tablebase::chip_thresholds` reading the chip tables back. The reference also reports
//! whether the game came out monotone (more chips never hurt) and determined (White avoids
//! losing exactly where Black cannot force a win), which the engine's threshold method takes
//! for granted: asserted at every position of every case.
//!
//! Times in release mode on 2 cores (reference and engine together): three pieces on 3x3 and
//! 3x4 for 2 to 12 chips, under a second each; up to four men on 3x3 for 2 to 8 chips, about
//! 5 s; on 3x4 for 2 to 6 chips, about 15 s; KPvKP on 3x5 for 2 and 3 chips, about 11 s.

use crate::common;
use std::ops::RangeInclusive;
use std::path::Path;

use crate::reference::Reference;
use crate::reference::chips::chip_thresholds;
use bidtb::{Board, Material, Tablebase, fen};

/// The engine's (win, not-lose) thresholds of the reference's FEN key `"<placement> <ep>"`.
fn engine(tb: &Tablebase, key: &str, total: u32) -> (u32, u32) {
    let (placement, ep) = key.split_once(' ').expect("placement and en-passant field");
    let parsed = fen::parse(&format!("{placement} - - {ep}")).expect("the reference's FEN");
    let t = tb
        .chip_thresholds(parsed.board, &parsed.position, total)
        .unwrap_or_else(|e| panic!("{key} with {total} chips: {e}"));
    (t.win, t.not_lose)
}

/// Generate the value tables of `files` x `ranks` (`bidtb generate --method solve` and the
/// arguments `generate`) and the chip tables for every total in `totals`, then compare every
/// position of `materials` (and of their colour mirrors) with the reference for every total.
/// Returns the number of (position, total) compared.
fn compare(
    files: u8,
    ranks: u8,
    generate: &[&str],
    materials: &[Material],
    totals: RangeInclusive<u32>,
) -> usize {
    let board = Board::new(files, ranks).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let b = board.to_string();
    let mut args = vec![
        "generate", "--board", &b, "--method", "solve", "--out", out, "-q",
    ];
    args.extend_from_slice(generate);
    let (code, _, stderr) = common::bidtb(&args);
    assert_eq!(code, 0, "{stderr}");
    let range = format!("{}..{}", totals.start(), totals.end());
    let (code, _, stderr) = common::bidtb(&[
        "chips", "--tables", out, "--board", &b, "--chips", &range, "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let tb = Tablebase::open(Path::new(out)).unwrap();
    let mut reference = Reference::new(files, ranks);
    let mut compared = 0;
    for total in totals {
        for &m in materials {
            for name in [m, m.mirror()] {
                let name = name.to_string();
                let result = chip_thresholds(&mut reference, &name, total);
                assert!(
                    result.monotone,
                    "{board} {name} {total} chips: not monotone: {:#?}",
                    result.notes
                );
                assert!(
                    result.determined,
                    "{board} {name} {total} chips: not determined: {:#?}",
                    result.notes
                );
                assert!(!result.by_fen.is_empty() || m.has_pawns(), "{board} {name}");
                for (key, &want) in &result.by_fen {
                    let got = engine(&tb, key, total);
                    assert_eq!(
                        got, want,
                        "{board} {name} {key} with {total} chips: (win, not-lose) of the engine, \
                         of the reference"
                    );
                    compared += 1;
                }
                if m.is_self_mirror() {
                    break;
                }
            }
        }
    }
    compared
}

#[test]
fn three_pieces_match_the_reference_on_3x3_for_2_to_12_chips() {
    let n = compare(3, 3, &["--pieces", "3"], &Material::all_up_to(3), 2..=12);
    assert!(n > 40_000, "{n}");
}

#[test]
fn three_pieces_match_the_reference_on_3x4_for_2_to_12_chips() {
    let n = compare(3, 4, &["--pieces", "3"], &Material::all_up_to(3), 2..=12);
    assert!(n > 100_000, "{n}");
}

#[test]
fn up_to_four_men_match_the_reference_on_3x3_for_2_to_8_chips() {
    let n = compare(3, 3, &["--pieces", "4"], &Material::all_up_to(4), 2..=8);
    assert!(n > 500_000, "{n}");
}

#[test]
fn up_to_four_men_match_the_reference_on_3x4_for_2_to_6_chips() {
    let n = compare(3, 4, &["--pieces", "4"], &Material::all_up_to(4), 2..=6);
    assert!(n > 2_000_000, "{n}");
}

/// En passant needs five ranks: KPvKP on 3x5 (positions with a pending right and what
/// they lead to).
#[test]
fn en_passant_positions_match_the_reference_on_3x5() {
    let kpvkp: Material = "KPvKP".parse().unwrap();
    let n = compare(3, 5, &["--material", "KPvKP"], &[kpvkp], 2..=3);
    assert!(n > 10_000, "{n}");
    // Solved above (cached): the keys with a pending right were among those compared.
    let result = chip_thresholds(&mut Reference::new(3, 5), "KPvKP", 3);
    assert!(result.by_fen.keys().any(|k| !k.ends_with(" -")));
}

/// The reference by hand: KvK on 3x3 with the kings side by side: whoever wins the bid
/// captures the king. White forces that iff its highest bid beats Black's highest: more
/// chips than Black, or as many plus the marker, i.e. the holding K + 1 (K even: K/2 chips
/// and the marker; K odd: (K + 1)/2 chips). Below it Black's highest bid wins, so White
/// loses: win = not-lose = K + 1.
#[test]
fn reference_kings_side_by_side() {
    let mut reference = Reference::new(3, 3);
    for total in 1..=12 {
        let result = chip_thresholds(&mut reference, "KvK", total);
        assert!(result.monotone && result.determined);
        let mut adjacent = 0;
        for (key, &t) in &result.by_fen {
            let rows: Vec<&str> = key.split(' ').next().unwrap().split('/').collect();
            let at = |c: char| {
                rows.iter()
                    .enumerate()
                    .find_map(|(r, row)| {
                        let mut f = 0;
                        for ch in row.chars() {
                            if ch == c {
                                return Some((f, r as i32));
                            }
                            f += ch.to_digit(10).map_or(1, |d| d as i32);
                        }
                        None
                    })
                    .unwrap()
            };
            let ((wf, wr), (bf, br)) = (at('K'), at('k'));
            if (wf - bf).abs() <= 1 && (wr - br).abs() <= 1 {
                assert_eq!(t, (total + 1, total + 1), "{key} with {total} chips");
                adjacent += 1;
            }
        }
        assert_eq!(adjacent, 40, "{total}");
    }
}
