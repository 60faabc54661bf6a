//! SPEC §4 acceptance: the published 8x8 values and the first Richman iteration 2644.
//! One full 8x8 run (several minutes in release mode); `.ci/run` runs it.

use bidtb::generate::{Options, Silent, solve};
use bidtb::{Board, Piece, Position, Value};

fn value(n: u64, d: u64) -> Value {
    Value::new(n.into(), d.into())
}

#[test]
fn published_8x8_values_and_iteration_2644() {
    let board: Board = "8x8".parse().unwrap();
    let sol = solve(&Options::new(board), &Silent);
    assert_eq!(sol.first_richman_iteration, Some(2644));
    let sq = |s: &str| board.parse_square(s).unwrap();
    let pos = |wk: &str, piece: Option<(Piece, &str)>, bk: &str| Position {
        wk: sq(wk),
        bk: sq(bk),
        piece: piece.map(|(p, s)| (p, sq(s))),
    };
    let cases = [
        (pos("d6", Some((Piece::Rook, "h8")), "d8"), value(3, 4)),
        (pos("c2", None, "f5"), value(1, 2)),
        (pos("e4", Some((Piece::Bishop, "g2")), "a4"), value(9, 16)),
        (pos("e5", Some((Piece::Pawn, "b2")), "c8"), value(33, 64)),
        (
            pos("a1", Some((Piece::Rook, "h1")), "a8"),
            value(7463, 8192),
        ),
    ];
    for (p, want) in cases {
        assert_eq!(sol.value(&p), Some(&want), "{}", p.describe(board));
    }
    // The published study's largest denominators have 138 digits.
    let digits = sol
        .classes
        .iter()
        .map(|(_, c)| c.max_denominator_digits)
        .max()
        .unwrap();
    assert_eq!(digits, 138);
    // Per-class stabilisation points: the largest is the first Richman iteration.
    let stable = sol.classes.iter().map(|(_, c)| c.stable_at).max().unwrap();
    assert_eq!(stable, 2644);
    // Every three-piece position on 8x8 has α = β: the certificate must pass, per class.
    assert!(sol.certified());
    for (m, c) in &sol.classes {
        assert_eq!(
            (c.certified_alpha, c.certified_beta),
            (Some(true), Some(true)),
            "{m}"
        );
    }
}
