//! The solve method's memory model: what a job's graph, strategies and exact values need,
//! from the material's measured growth (digits of its largest denominator, the share of
//! positions with α < β) and the board, checked against the machine
//! ([`crate::resources::check`]) before a job starts, and the plan's estimates.

use crate::geometry::{Board, Square};
use crate::material::{Color, Material, Piece};
use crate::rules;

/// Each four-man material measured on 7x7 (`--pieces 4 --method solve`, 2026-11-23): its
/// largest denominator in digits and the share of its canonical positions with α < β
/// (where β is solved apart, a position holds two large values).
const MEASURED_7X7: [(&str, u32, f64); 30] = [
    ("KBBvK", 57, 0.0),
    ("KBNvK", 654, 0.236),
    ("KBPvK", 872, 0.084),
    ("KBvKB", 2, 0.0),
    ("KBvKN", 381, 0.410),
    ("KBvKP", 380, 0.019),
    ("KNNvK", 106, 0.137),
    ("KNPvK", 524, 0.061),
    ("KNvKN", 7045, 0.0),
    ("KNvKP", 7371, 0.0),
    ("KPPvK", 812, 0.011),
    ("KPvKP", 7137, 0.006),
    ("KQBvK", 13, 0.0),
    ("KQNvK", 35, 0.0),
    ("KQPvK", 34, 0.0),
    ("KQQvK", 9, 0.0),
    ("KQRvK", 15, 0.0),
    ("KQvKB", 12, 0.0),
    ("KQvKN", 77, 0.0),
    ("KQvKP", 77, 0.0),
    ("KQvKQ", 16, 0.0),
    ("KQvKR", 17, 0.0),
    ("KRBvK", 33, 0.003),
    ("KRNvK", 44, 0.0),
    ("KRPvK", 45, 0.0),
    ("KRRvK", 19, 0.0),
    ("KRvKB", 36, 0.0),
    ("KRvKN", 825, 0.0),
    ("KRvKP", 825, 0.001),
    ("KRvKR", 27, 0.0),
];

/// Each four-man material made on 8x8 (the 2026-11-25 runs): its largest denominator in
/// digits. Boards of 64 squares and more start from these where a material has one
/// (KNvKP and KPvKP have none: they start from 7x7, which plans them at 36,900 and 35,700
/// digits where 21,853 and 21,277 were made since; their memory estimates were fitted
/// with those, so they are kept).
const MEASURED_8X8: [(&str, u32); 28] = [
    ("KBBvK", 117),
    ("KBNvK", 3531),
    ("KBPvK", 5558),
    ("KBvKB", 2),
    ("KBvKN", 5632),
    ("KBvKP", 5621),
    ("KNNvK", 859),
    ("KNPvK", 4351),
    ("KNvKN", 19141),
    ("KPPvK", 6042),
    ("KQBvK", 15),
    ("KQNvK", 138),
    ("KQPvK", 138),
    ("KQQvK", 11),
    ("KQRvK", 20),
    ("KQvKB", 17),
    ("KQvKN", 410),
    ("KQvKP", 406),
    ("KQvKQ", 18),
    ("KQvKR", 20),
    ("KRBvK", 44),
    ("KRNvK", 150),
    ("KRPvK", 150),
    ("KRRvK", 24),
    ("KRvKB", 105),
    ("KRvKN", 2482),
    ("KRvKP", 2491),
    ("KRvKR", 33),
];

/// Each five-man material made on 5x5 (`--pieces 5 --method solve`, 2026-11-27, the
/// record `five-men-5x5`): its largest denominator in digits. They fall in two groups: 333
/// to 2,829 digits where both sides hold a knight or a pawn, at most 47 for the others.
const MEASURED_5X5: [(&str, u32); 110] = [
    ("KBBBvK", 22),
    ("KBBNvK", 25),
    ("KBBPvK", 23),
    ("KBBvKB", 20),
    ("KBBvKN", 47),
    ("KBBvKP", 47),
    ("KBBvKQ", 17),
    ("KBBvKR", 19),
    ("KBNNvK", 25),
    ("KBNPvK", 25),
    ("KBNvKB", 32),
    ("KBNvKN", 1035),
    ("KBNvKP", 1038),
    ("KBNvKQ", 26),
    ("KBNvKR", 32),
    ("KBPPvK", 19),
    ("KBPvKB", 29),
    ("KBPvKN", 1049),
    ("KBPvKP", 1044),
    ("KBPvKQ", 27),
    ("KBPvKR", 33),
    ("KNNNvK", 12),
    ("KNNPvK", 14),
    ("KNNvKB", 18),
    ("KNNvKN", 655),
    ("KNNvKP", 652),
    ("KNNvKQ", 16),
    ("KNNvKR", 25),
    ("KNPPvK", 13),
    ("KNPvKB", 21),
    ("KNPvKN", 2708),
    ("KNPvKP", 2701),
    ("KNPvKQ", 24),
    ("KNPvKR", 30),
    ("KPPPvK", 13),
    ("KPPvKB", 15),
    ("KPPvKN", 2829),
    ("KPPvKP", 2676),
    ("KPPvKQ", 22),
    ("KPPvKR", 33),
    ("KQBBvK", 17),
    ("KQBNvK", 22),
    ("KQBPvK", 19),
    ("KQBvKB", 11),
    ("KQBvKN", 18),
    ("KQBvKP", 20),
    ("KQBvKQ", 11),
    ("KQBvKR", 8),
    ("KQNNvK", 10),
    ("KQNPvK", 12),
    ("KQNvKB", 17),
    ("KQNvKN", 333),
    ("KQNvKP", 337),
    ("KQNvKQ", 13),
    ("KQNvKR", 21),
    ("KQPPvK", 11),
    ("KQPvKB", 15),
    ("KQPvKN", 339),
    ("KQPvKP", 337),
    ("KQPvKQ", 14),
    ("KQPvKR", 21),
    ("KQQBvK", 7),
    ("KQQNvK", 11),
    ("KQQPvK", 8),
    ("KQQQvK", 5),
    ("KQQRvK", 6),
    ("KQQvKB", 8),
    ("KQQvKN", 13),
    ("KQQvKP", 14),
    ("KQQvKQ", 9),
    ("KQQvKR", 8),
    ("KQRBvK", 9),
    ("KQRNvK", 10),
    ("KQRPvK", 11),
    ("KQRRvK", 7),
    ("KQRvKB", 9),
    ("KQRvKN", 21),
    ("KQRvKP", 21),
    ("KQRvKQ", 9),
    ("KQRvKR", 9),
    ("KRBBvK", 17),
    ("KRBNvK", 22),
    ("KRBPvK", 22),
    ("KRBvKB", 11),
    ("KRBvKN", 31),
    ("KRBvKP", 29),
    ("KRBvKQ", 12),
    ("KRBvKR", 10),
    ("KRNNvK", 11),
    ("KRNPvK", 13),
    ("KRNvKB", 16),
    ("KRNvKN", 335),
    ("KRNvKP", 342),
    ("KRNvKQ", 16),
    ("KRNvKR", 21),
    ("KRPPvK", 11),
    ("KRPvKB", 18),
    ("KRPvKN", 355),
    ("KRPvKP", 348),
    ("KRPvKQ", 16),
    ("KRPvKR", 21),
    ("KRRBvK", 8),
    ("KRRNvK", 10),
    ("KRRPvK", 11),
    ("KRRRvK", 7),
    ("KRRvKB", 8),
    ("KRRvKN", 23),
    ("KRRvKP", 23),
    ("KRRvKQ", 11),
    ("KRRvKR", 10),
];

/// How much the largest denominator's digits grow per step from 7x7 to 8x8 (the power of
/// the board's squares): fivefold. Measured on 8x8 (2026-11-23): KBBvK 2.1, KRvKN 3.0,
/// KRNvK 3.4, KQNvK 3.9, KBNvK 5.4, KNNvK 8.1, KBvKN 14.8. A material that grows faster
/// than the estimate says is stopped by the memory guard ([`sample_anonymous`]) while it runs.
const GROWTH_PER_STEP: f64 = 5.0;

/// The 7x7 measurement of a four-man material: digits of its largest denominator and its
/// share of positions with α < β.
fn measured_7x7(material: Material) -> Option<(f64, f64)> {
    let name = material.stored().0.to_string();
    MEASURED_7X7
        .iter()
        .find(|(m, _, _)| *m == name)
        .map(|&(_, digits, split)| (digits as f64, split))
}

/// The 8x8 measurement of a four-man material: digits of its largest denominator.
fn measured_8x8(material: Material) -> Option<f64> {
    measured_digits(&MEASURED_8X8, material)
}

/// The 5x5 measurement of a five-man material: digits of its largest denominator.
fn measured_5x5(material: Material) -> Option<f64> {
    measured_digits(&MEASURED_5X5, material)
}

/// The digits `rows` (material, digits of its largest denominator) give `material`, looked
/// up as its stored form.
fn measured_digits(rows: &[(&str, u32)], material: Material) -> Option<f64> {
    let name = material.stored().0.to_string();
    rows.iter()
        .find(|(m, _)| *m == name)
        .map(|&(_, digits)| f64::from(digits))
}

/// How five-man denominators grow with the board from 5x5 (a power of the squares), the
/// least that covers every 6x6 material made (2026-11-30), rounded up, in three kinds:
/// - both sides hold a knight or a pawn and White no queen or rook: 8.1 (KNNvKN 655 to
///   12,120 digits, 8.0);
/// - both sides hold a knight or a pawn otherwise: 4.9 (KRNvKN 335 to 1,972, 4.86;
///   KQNvKN 333 to 1,837, 4.68);
/// - the others: 5.65 (KQRvKN 21 to 162, 5.61; KRBvKN 31 to 184, 4.9; KQRvKQ 9 to 15,
///   1.4).
const FIVE_MAN_GROWTH: [f64; 3] = [8.1, 4.9, 5.65];

/// The largest denominator, in bits, expected of `material` on a board of `squares`
/// squares: power laws through the measured boards, for memory planning only.
///
/// - Three men: 8x8 460 bits, 10x10 5,300, 12x12 22,800 (KNvK and KPvK).
/// - Four men on boards of 64 squares and more: the material's own 8x8 measurement
///   ([`MEASURED_8X8`]), on boards of 49 and more without one its 7x7 measurement
///   ([`MEASURED_7X7`]), growing [`GROWTH_PER_STEP`]-fold per board step (a power law in
///   the squares through 49 and 64).
/// - Four men on smaller boards, where both sides hold a knight or a pawn (KNvKN, KNvKP,
///   KPvKP: their denominators grow like KNvK's squared): 5x5 1,100 bits, 6x6 6,040, 7x7
///   24,490; the other four-man materials: the largest of them (KBPvK, KBNvK, KRvKN) 5x5
///   66 bits, 6x6 538, 7x7 2,900.
///
/// - Five men: the material's 5x5 measurement ([`MEASURED_5X5`]) grown by
///   [`FIVE_MAN_GROWTH`] (6x6 KRNvKN 1,972 digits made, 2,000 expected; KQRvKQ 15 made,
///   71 expected).
///
/// Materials of six men and more have not been measured; they get the four-man law of
/// the first kind, which is a guess.
pub fn expected_value_bits(squares: usize, material: Material) -> f64 {
    // A mirror is planned as the material stored for it.
    let material = material.stored().0;
    let s = squares as f64;
    let slow =
        |color| material.count(color, Piece::Knight) + material.count(color, Piece::Pawn) > 0;
    let both_slow = slow(Color::White) && slow(Color::Black);
    if let Some(digits) = measured_5x5(material) {
        let heavy = [Piece::Queen, Piece::Rook]
            .iter()
            .any(|&p| material.count(Color::White, p) > 0);
        let power = match (both_slow, heavy) {
            (true, false) => FIVE_MAN_GROWTH[0],
            (true, true) => FIVE_MAN_GROWTH[1],
            (false, _) => FIVE_MAN_GROWTH[2],
        };
        return digits * std::f64::consts::LOG2_10 * (s / 25.0).powf(power);
    }
    if material.man_count() <= 3 {
        460.0 * (s / 64.0).powf(4.8)
    } else if let Some((digits, from)) = measured_8x8(material)
        .map(|d| (d, 64.0))
        .filter(|_| squares >= 64)
        .or_else(|| measured_7x7(material).map(|(d, _)| (d, 49.0)))
        .filter(|_| squares >= 49)
    {
        let power = GROWTH_PER_STEP.ln() / (64.0f64 / 49.0).ln();
        digits * std::f64::consts::LOG2_10 * (s / from).powf(power)
    } else if both_slow || material.man_count() > 4 {
        24_490.0 * (s / 49.0).powf(4.54)
    } else {
        2_900.0 * (s / 49.0).powf(5.47)
    }
}

/// The moves a position of `material` offers both sides together, on average, on `board`:
/// each man's moves on an empty board averaged over its squares (a
/// pawn's push, its double step and its promotions; its captures are rare), never fewer than
/// the 20 the estimates were first calibrated with. A queen has 23 on 8x8 where a knight
/// has 5: 8x8 KQvKQ offers about 59, and with 20 it was planned at two thirds of its peak.
pub fn expected_options(board: Board, material: Material) -> f64 {
    let ranks = board.ranks() as i32;
    let moves = |piece: Option<Piece>, from: Square| -> f64 {
        match piece {
            None => rules::king_targets(board, from).count() as f64,
            // White's pawn: four promotions from the last rank but one, a double step from
            // its second rank where the board has four ranks or more.
            Some(Piece::Pawn) => match board.rank_of(from) {
                r if r == ranks - 2 => 4.0,
                1 if ranks >= 4 => 2.0,
                _ => 1.0,
            },
            Some(p) => rules::piece_targets(board, p, from, &[]).len() as f64,
        }
    };
    let average = |piece: Option<Piece>| {
        let on_board = |sq: &Square| {
            piece != Some(Piece::Pawn) || (1..ranks - 1).contains(&board.rank_of(*sq))
        };
        let squares: Vec<Square> = board.squares().filter(on_board).collect();
        let total: f64 = squares.iter().map(|&sq| moves(piece, sq)).sum();
        total / squares.len().max(1) as f64
    };
    let men: f64 = material
        .men()
        .into_iter()
        .map(|(_, p)| average(Some(p)))
        .sum();
    (2.0 * average(None) + men).max(20.0)
}

/// Copies of the largest value's digits a four-man position holds at the solve's peak: its
/// numerator (the denominators are shared, [`crate::value::shared`]), what the evaluation
/// and the certificate hold beside it, less what the values below the largest save.
/// Fitted on the four-man heaps measured on 8x8 (2026-11-25, with each material's own 8x8
/// digits, beyond [`FOUR_MAN_POSITION_BYTES`] and [`FOUR_MAN_OPTION_BYTES`]): KBvKN 0.87,
/// KBNvK 0.82, KNvKN 0.78, KNNvK 0.53, KRvKN 0.33; the least factor that covers each,
/// rounded up.
const FOUR_MAN_COPIES: f64 = 1.0;

/// [`FOUR_MAN_COPIES`] for materials with a pawn, most of whose positions hold values far
/// below the largest (those near a promotion or a capture of the pawn inherit the large
/// denominators): measured 0.19 on 8x8 KNPvK, 0.17 KPPvK, 0.10 KBPvK, 0.05 KRvKP, 0.0
/// KBvKP, and on 7x7 0.29 KNvKP, 0.12 KPvKP; the least that covers each, with a margin.
const FOUR_MAN_PAWN_COPIES: f64 = 0.35;

/// Bytes a job of four men holds per position apart from its values, and per option of a
/// position (the graph's lists, four bytes a node, and what the solve and the certificate
/// keep per move): fitted on the 8x8 materials whose values are small (2026-11-25, the
/// graph built run by run; each job's heap in a `--pieces 4` run, which counts some of
/// what earlier jobs left), a least-squares slope and the least intercept that covers
/// each of them. Three men keep the 850 bytes a position and 16 an option they were
/// calibrated with on 8x8 to 12x12 (their values dominate there).
const FOUR_MAN_POSITION_BYTES: f64 = 532.0;
const FOUR_MAN_OPTION_BYTES: f64 = 5.6;

/// Bytes the solve method needs with `nodes` nodes on `board` for `materials`: the graph
/// (its options, [`expected_options`] a position, and what the solve keeps per move),
/// the approximate and exact values with their fixed-point images, the strategies and
/// the components of the chain, and the large values. With three men about a third of
/// the positions inherit denominators near the largest, numerator and denominator each
/// (calibrated on the 8x8, 10x10 and 12x12 runs before the denominators were shared, so
/// an estimate above what the solve now takes); with four, nearly all of them do, as the
/// exits bring the large denominators of the materials below, and a position holds
/// [`FOUR_MAN_COPIES`] of a value's digits at the peak ([`FOUR_MAN_PAWN_COPIES`] with a
/// pawn). Where β is solved apart its values
/// come on top, in proportion to the positions with α < β (measured on 7x7).
pub fn estimate_solve_bytes(nodes: usize, board: Board, materials: &[Material]) -> u64 {
    estimate_paged_solve_bytes(nodes, board, materials, u64::MAX)
}

/// The bytes of large values' digits a position of `material` holds at the solve's peak
/// on a board of `squares` squares, for one bound: [`FOUR_MAN_COPIES`] (with a pawn
/// [`FOUR_MAN_PAWN_COPIES`]; three men 0.7) of the expected largest value
/// ([`expected_value_bits`]).
fn large_digit_bytes(squares: usize, material: Material) -> f64 {
    let copies = match material.man_count() {
        ..=3 => 0.7,
        _ if material.has_pawns() => FOUR_MAN_PAWN_COPIES,
        _ => FOUR_MAN_COPIES,
    };
    copies * expected_value_bits(squares, material) / 8.0
}

/// Each five-man material whose 5x5 table has positions with α < β (38 of the 110 made
/// on 2026-11-29, the record five-men-5x5.json): β is solved apart there.
const SPLIT_5X5: [&str; 38] = [
    "KBBNvK", "KBBPvK", "KBBvKN", "KBBvKP", "KBNNvK", "KBNPvK", "KBNvKB", "KBNvKN", "KBNvKP",
    "KBNvKQ", "KBNvKR", "KBPPvK", "KBPvKB", "KBPvKN", "KBPvKP", "KBPvKQ", "KBPvKR", "KNNvKB",
    "KNNvKP", "KNPvKB", "KNPvKP", "KPPvKB", "KPPvKN", "KPPvKP", "KQBNvK", "KQBPvK", "KQBvKN",
    "KQBvKP", "KQNvKB", "KQPvKB", "KQPvKP", "KRBNvK", "KRBPvK", "KRBvKN", "KRBvKP", "KRNvKB",
    "KRPvKB", "KRPvKP",
];

/// Whether β may be solved apart from α for `material`: where it was on the board the
/// material's values were measured on (7x7 for four men, 5x5 for five; three men never
/// were, six men are assumed to be).
fn may_split(material: Material) -> bool {
    let name = material.stored().0.to_string();
    match material.man_count() {
        ..=3 => false,
        4 => measured_7x7(material).is_none_or(|(_, split)| split > 0.0),
        5 => SPLIT_5X5.contains(&name.as_str()),
        _ => true,
    }
}

/// The numerators of a material with a pawn, as a share of its positions times the
/// expected largest value: most of its values are far shorter (8x8 KNvKP's numerators
/// were 15.3 GiB, 0.18 of that; KPvKP's and KBPvK's below the 2 GiB that would page them).
const PAWN_NUMERATOR_SHARE: f64 = 0.2;

/// The temporary disk a job needs beside its table, by estimate: the numerators its exact
/// evaluations page past their first `page_above` bytes ([`crate::solve::spill::Shelf`]:
/// a position's numerator at the expected largest value, [`PAWN_NUMERATOR_SHARE`] of it
/// with a pawn), and where β may be solved apart ([`may_split`]) as many again for β,
/// whose pages come while α's are kept, with α's held values spilled beside them past
/// [`crate::solve::run::SPILL_ABOVE_BYTES`] (at most the threshold's numerators and as
/// much of denominators). Measured against it (the paged numerators each run reported):
/// 8x8 KNvKN 9,275 MiB and KNvKP 13,240 (α = β), 8x8 KBvKN 1,081 and a spill, 6x6 KBNvKN
/// 23,776 MiB for α alone, which with β's pages coming as fast filled 38 GB of disk
/// before it was stopped. Over for pawn materials whose values are mostly short (8x8
/// KPvKP paged nothing, planned at 28 GB).
pub fn estimate_scratch_bytes(
    nodes: usize,
    board: Board,
    materials: &[Material],
    page_above: u64,
) -> u64 {
    let above = page_above as f64;
    materials
        .iter()
        .map(|&m| {
            let share = match m.man_count() {
                4.. if m.has_pawns() => PAWN_NUMERATOR_SHARE,
                _ => 1.0,
            };
            let digits = nodes as f64 * share * expected_value_bits(board.len(), m) / 8.0;
            let paged = (digits - above).max(0.0);
            if may_split(m) {
                // α's held values, numerators and denominators, spilled past 256 MiB.
                let held = 2.0 * digits.min(above);
                let spilled = if held > crate::solve::run::SPILL_ABOVE_BYTES as f64 {
                    held
                } else {
                    0.0
                };
                2.0 * paged + spilled
            } else {
                paged
            }
        })
        .fold(0.0, f64::max) as u64
}

/// What stays on the heap of a value whose numerator is paged
/// ([`crate::solve::spill::Shelf`]), as a share of its digits: its denominator's odd part
/// (8x8 KNvKP: 2.19 GB of odd parts beside 16 GB of numerators, 0.14), with a margin.
const PAGED_HELD_SHARE: f64 = 0.25;

/// [`estimate_solve_bytes`] for a job whose exact evaluations page the numerators solved
/// beyond their first `page_above` bytes (`crate::progress::Control::page_above`): of the
/// large values' digits beyond those, [`PAGED_HELD_SHARE`] stays on the heap. Only jobs of
/// four men or more count the paging: it was measured there (8x8 KNvKP, KNvKN); the
/// three-man law counts numerators and denominators whole from runs before either was
/// shared, and a three-man board beyond 12x12 has not been tried with it, so those keep
/// their estimate (and 13x13 and larger are still refused).
pub fn estimate_paged_solve_bytes(
    nodes: usize,
    board: Board,
    materials: &[Material],
    page_above: u64,
) -> u64 {
    let squares = board.len();
    let four = materials.iter().any(|m| m.man_count() >= 4);
    // Three men keep the 20 options a position they were calibrated with.
    let options = materials
        .iter()
        .map(|&m| match m.man_count() {
            ..=3 => 20.0,
            _ => expected_options(board, m),
        })
        .fold(20.0, f64::max);
    let (per_position, per_option) = if four {
        (FOUR_MAN_POSITION_BYTES, FOUR_MAN_OPTION_BYTES)
    } else {
        (850.0, 16.0)
    };
    let graph = nodes as f64 * (per_position + options * per_option);
    let per_node = materials
        .iter()
        .map(|&m| {
            let split = match m.man_count() {
                ..=3 => 0.0,
                _ => measured_7x7(m).map_or(0.0, |(_, split)| split),
            };
            large_digit_bytes(squares, m) * (1.0 + split)
        })
        .fold(0.0, f64::max);
    let large = nodes as f64 * per_node;
    let above = page_above as f64;
    let large = if four && large > above {
        above + (large - above) * PAGED_HELD_SHARE
    } else {
        large
    };
    ((graph + large) * 1.15) as u64
}

/// The share of a table's positions whose values its dictionary holds whole at the size
/// of the largest ([`expected_value_bits`]): most positions share a value, most values
/// are far shorter than the largest, and most of the rest are stored as means of two
/// others (format 8). Fitted on the tables of format 8: the whole 8x8 four-man run 0.023,
/// the first 44 tables of 6x6 up to five men 0.020; single materials lie on both sides of
/// it (8x8 KBvKN 0.067, KNvKN 0.043, 6x6 KQNvKN 0.013). Planned with it: 8x8 four men
/// 16.7 GB (9.34 made; KNvKP and KPvKP are planned from their 7x7 digits), the 49 6x6
/// tables made 4.9 GB (3.81 made), 5x5 five men 3.6 GB (3.19 made).
const DICTIONARY_SHARE: f64 = 0.03;

/// The bytes of `material`'s table on `board` with `positions` positions (after symmetry),
/// by estimate: its fixed part ([`crate::table::fixed_bytes`], β's ranks counted unless
/// the material never had α < β where measured) and a dictionary of
/// [`DICTIONARY_SHARE`] of its positions at the expected size of the largest value,
/// numerator and denominator, with the entry's offsets.
pub fn estimate_table_bytes(board: Board, material: Material, positions: usize) -> u64 {
    let beta = measured_7x7(material).is_none_or(|(_, split)| split > 0.0);
    // An entry: its offset (8 bytes) and its numerator's, the digits of numerator and
    // denominator.
    let entry = 16.0 + expected_value_bits(board.len(), material) / 4.0;
    let values = positions as f64 * DICTIONARY_SHARE * entry;
    crate::table::fixed_bytes(positions as u64, beta) + values as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each man's moves on the empty board, averaged: on 8x8 a king 420/64, a queen
    /// 1456/64, a knight 336/64 (the known totals), a pawn 1 + 1/6 (double step) + 3/6
    /// (promotions); never fewer than 20 in all.
    #[test]
    fn expected_options_count_the_pieces_moves() {
        let m = |name: &str| name.parse::<Material>().unwrap();
        let b8 = Board::new(8, 8).unwrap();
        let (king, queen, knight) = (420.0 / 64.0, 1456.0 / 64.0, 336.0 / 64.0);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(close(
            expected_options(b8, m("KQvKQ")),
            2.0 * king + 2.0 * queen
        ));
        assert!(close(
            expected_options(b8, m("KNvKN")),
            2.0 * king + 2.0 * knight
        ));
        let pawn = 1.0 + 1.0 / 6.0 + 3.0 / 6.0;
        assert!(close(
            expected_options(b8, m("KQPvK")),
            2.0 * king + queen + pawn
        ));
        assert_eq!(expected_options(b8, m("KvK")), 20.0);
    }

    /// Four men on 7x7, each job's heap solved alone (2026-11-25, the graph built run by run,
    /// exits that never decide left unread): KNvKP 3,186 MiB (1,816,380 positions), KPvKP
    /// 1,440 (1,310,350), KNvKN 1,884 (636,048), KQPvK 1,045 (1,816,380). The estimate
    /// covers each. It plans every position at the largest denominator, and most are below
    /// it, KPvKP's most of all (its own numerators take 60 MB in all; a few positions
    /// inherit KNvKP's 7,137 digits, [`FOUR_MAN_PAWN_COPIES`]): KNvKN and KNvKP within 1.5
    /// times, KPvKP 2; KQPvK, whose values are small, within 1.5.
    #[test]
    fn the_estimate_covers_the_measured_four_man_peaks() {
        let m = |name: &str| name.parse::<Material>().unwrap();
        let est = |n: usize, side: u8, name: &str| {
            estimate_solve_bytes(n, Board::new(side, side).unwrap(), &[m(name)]) >> 20
        };
        for (n, name, measured, over) in [
            (1_816_380, "KNvKP", 3_186, 1.5),
            (1_310_350, "KPvKP", 1_440, 2.0),
            (636_048, "KNvKN", 1_884, 1.5),
            (1_816_380, "KQPvK", 1_045, 1.5),
        ] {
            let e = est(n, 7, name);
            let most = (measured as f64 * over) as u64;
            assert!((measured..most).contains(&e), "{name}: {e} MiB");
        }
        // Three men keep the law calibrated on 12x12 (22,800 bits).
        let bits = expected_value_bits(144, m("KNvK"));
        assert!((20_000.0..26_000.0).contains(&bits), "{bits}");
    }

    /// With the numerators paged past 2 GiB (2026-11-26, alone): 8x8 KNvKP's heap peaked
    /// at 9,647 MiB (23.4 GiB held whole), covered within 1.6 times. Paging never raises
    /// an estimate, and changes none whose values stay below the threshold.
    #[test]
    fn the_paged_estimate_covers_the_measured_peak() {
        let m = |name: &str| name.parse::<Material>().unwrap();
        let b8 = Board::new(8, 8).unwrap();
        let paged = |name: &str| {
            estimate_paged_solve_bytes(
                5_718_384,
                b8,
                &[m(name)],
                crate::solve::run::PAGE_ABOVE_BYTES,
            )
        };
        let e = paged("KNvKP") >> 20;
        assert!((9_647..15_435).contains(&e), "{e} MiB");
        for name in ["KNvKN", "KPvKP", "KBvKN", "KQvKQ", "KRRvK"] {
            let whole = estimate_solve_bytes(5_718_384, b8, &[m(name)]);
            assert!(paged(name) <= whole, "{name}");
        }
        let small = estimate_solve_bytes(100_000, b8, &[m("KQvKQ")]);
        assert_eq!(
            estimate_paged_solve_bytes(100_000, b8, &[m("KQvKQ")], 1 << 30),
            small
        );
    }

    /// Four men on 8x8, the heap's peak per job in the `--pieces 4` run of 2026-11-25 (the
    /// graph built run by run; the pawn materials with exits that never decide left
    /// unread; every table byte for byte the earlier run's). The materials with small
    /// values, where the graph and the solve's per-position state are most of it: covered,
    /// within 1.6 times (KBBvK's 1.56 the most). Those with large values (KNvKN's heap from before the graph was
    /// built run by run): covered, within 2.5 times (KBvKP's 2.3 the most: few of its
    /// positions hold large values).
    #[test]
    fn the_estimate_follows_each_material_on_8x8() {
        let m = |name: &str| name.parse::<Material>().unwrap();
        let board = Board::new(8, 8).unwrap();
        let est = |n: usize, name: &str| estimate_solve_bytes(n, board, &[m(name)]) >> 20;
        let n = |name: &str| match name {
            "KBBvK" | "KNNvK" | "KQQvK" | "KRRvK" => 953_666,
            "KPPvK" => 2_133_048,
            _ if m(name).has_pawns() => 5_718_384,
            _ => 1_906_548,
        };
        // Each estimate at least what was measured, at most `most` (a fraction) times it.
        let covered = |list: &[(&str, u64)], most: (u64, u64)| {
            for &(name, measured) in list {
                let e = est(n(name), name);
                let top = measured * most.0 / most.1;
                assert!((measured..top).contains(&e), "{name}: {e} MiB");
            }
        };
        covered(
            &[
                ("KBBvK", 503),
                ("KBvKB", 1_049),
                ("KQBvK", 1_212),
                ("KQNvK", 1_254),
                ("KQQvK", 869),
                ("KQRvK", 1_228),
                ("KQvKB", 1_422),
                ("KQvKQ", 1_481),
                ("KQvKR", 1_356),
                ("KRBvK", 1_359),
                ("KRNvK", 1_223),
                ("KRRvK", 739),
                ("KRvKB", 1_249),
                ("KRvKR", 1_224),
                ("KQPvK", 3_757),
                ("KRPvK", 4_355),
                ("KQvKP", 3_982),
                ("KQvKN", 1_342),
            ],
            (8, 5),
        );
        covered(
            &[
                ("KBNvK", 4_550),
                ("KBvKN", 7_464),
                ("KNNvK", 906),
                ("KNvKN", 14_414),
                ("KRvKN", 2_209),
                ("KBPvK", 5_814),
                ("KBvKP", 4_089),
                ("KNPvK", 6_304),
                ("KPPvK", 2_519),
                ("KRvKP", 4_675),
            ],
            (5, 2),
        );
    }

    /// The five-man law against every five-man material made on 6x6 (2026-11-30, digits
    /// of its largest denominator): each covered; those beyond 100 digits within 1.4 times
    /// (KRNvKN 1.01, KNNvKN 1.04, KQNvKN 1.08, KRBvKN 1.32), the short ones within 7
    /// (KQQvKQ 6.4: 11 made, 71 expected).
    #[test]
    fn the_five_man_law_covers_6x6() {
        let made = [
            ("KBNvKQ", 183),
            ("KQBvKB", 14),
            ("KQBvKN", 62),
            ("KQBvKQ", 15),
            ("KQBvKR", 15),
            ("KQNvKB", 49),
            ("KQNvKN", 1837),
            ("KQNvKQ", 27),
            ("KQNvKR", 141),
            ("KQQvKQ", 11),
            ("KQRvKB", 16),
            ("KQRvKN", 162),
            ("KQRvKQ", 15),
            ("KQRvKR", 16),
            ("KRBvKB", 22),
            ("KRBvKN", 184),
            ("KRBvKQ", 20),
            ("KRBvKR", 20),
            ("KRNvKB", 49),
            ("KRNvKN", 1972),
            ("KRNvKQ", 32),
            ("KRNvKR", 143),
        ];
        for (name, digits) in made {
            let m: Material = name.parse().unwrap();
            let expected = expected_value_bits(36, m) / std::f64::consts::LOG2_10;
            let ratio = expected / digits as f64;
            assert!((1.0..7.0).contains(&ratio), "{name}: {expected:.0} digits");
            if digits > 100 {
                assert!(ratio < 1.4, "{name}: {expected:.0} digits");
            }
            // A mirror is planned as its stored material.
            assert_eq!(
                expected_value_bits(36, m.mirror()),
                expected_value_bits(36, m)
            );
        }
    }

    /// The tables' size against the whole 8x8 four-man run in format 8 (2026-11-30, 36
    /// tables, 9,341,086,947 bytes): covered, within 1.75 times (KNvKP and KPvKP are
    /// planned with 1.7 times their digits, [`MEASURED_8X8`]).
    #[test]
    fn the_scratch_estimate_covers_the_measured_pages() {
        let m = |name: &str| name.parse::<Material>().unwrap();
        let mib = |bytes: u64| bytes >> 20;
        let above = crate::solve::run::PAGE_ABOVE_BYTES;
        let scratch = |n: usize, side: u8, name: &str| {
            estimate_scratch_bytes(n, Board::new(side, side).unwrap(), &[m(name)], above)
        };
        // 8x8 KNvKP and KNvKN (α = β): 13,240 and 9,275 MiB paged.
        let e = mib(scratch(5_999_680, 8, "KNvKP"));
        assert!((13_240..13_240 * 3 / 2).contains(&e), "KNvKP: {e} MiB");
        let e = mib(scratch(1_906_192, 8, "KNvKN"));
        assert!((9_275..9_275 * 3 / 2).contains(&e), "KNvKN: {e} MiB");
        // 6x6 KBNvKN (α < β): α paged 23,776 MiB, and β pages as many beside them.
        let e = mib(scratch(5_654_944, 6, "KBNvKN"));
        assert!((2 * 23_776..4 * 23_776).contains(&e), "KBNvKN: {e} MiB");
        // Small values page nothing; nothing is paged with the threshold out of reach.
        assert_eq!(scratch(1_906_548, 8, "KRvK"), 0);
        let whole = estimate_scratch_bytes(
            5_718_384,
            Board::new(8, 8).unwrap(),
            &[m("KNvKP")],
            u64::MAX,
        );
        assert_eq!(whole, 0);
    }

    /// The five-man materials planned with β apart are those whose 5x5 tables have α < β,
    /// as the record of the 5x5 run lists them.
    #[test]
    fn the_split_five_man_materials_are_the_recorded_ones() {
        let record: serde_json::Value =
            serde_json::from_str(include_str!("../../docs/records/five-men-5x5.json")).unwrap();
        let columns = record["columns"].as_array().unwrap();
        let split = columns.iter().position(|c| c == "α < β").unwrap();
        let mut recorded: Vec<&str> = record["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r[split] != "0")
            .map(|r| r[0].as_str().unwrap())
            .collect();
        recorded.sort();
        assert_eq!(recorded, SPLIT_5X5);
        let m = |name: &str| name.parse::<Material>().unwrap();
        assert!(may_split(m("KBNvKN")) && may_split(m("KNvKBN")) && !may_split(m("KRNvKN")));
        assert!(may_split(m("KBvKN")) && !may_split(m("KNvKN")) && !may_split(m("KNvK")));
    }

    #[test]
    fn the_table_estimate_covers_the_8x8_run() {
        let board = Board::new(8, 8).unwrap();
        let planned: u64 = Material::all_up_to(4)
            .into_iter()
            .map(|m| {
                let n = match (m.man_count(), m.to_string().as_str()) {
                    (2, _) => 518,
                    (3, "KPvK") => 93_744,
                    (3, _) => 31_332,
                    (_, "KBBvK" | "KNNvK" | "KQQvK" | "KRRvK") => 953_666,
                    (_, "KPPvK") => 2_133_048,
                    (_, "KPvKP") => 4_315_656,
                    _ if m.has_pawns() => 5_718_384,
                    _ => 1_906_548,
                };
                estimate_table_bytes(board, m, n)
            })
            .sum();
        let made = 9_341_086_947u64;
        assert!((made..made * 7 / 4).contains(&planned), "{planned}");
    }
}
