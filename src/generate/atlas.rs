//! The atlas: one row of facts per board, computed from a solved (or iterated) board, and
//! the files that collect them (`atlas.json`, `atlas.md`). A row is saved per board as
//! `DIR/FxR/atlas-row.json` as soon as it is known, so an interrupted atlas continues where
//! it stopped.

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};

use num_bigint::BigUint;
use num_traits::{One, Zero};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::certificate::{UNREACHED, cmp_guess, greedy_max, greedy_min};
use crate::error::Error;
use crate::generate::Solution;
use crate::geometry::Board;
use crate::value::Value;

/// Per class: positions, zugzwangs and the largest denominator.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassRow {
    /// Positions after symmetry reduction.
    pub canonical_positions: usize,
    /// Positions before it.
    pub positions: u64,
    /// Positions (after symmetry) where the bid is negative: max_w s(P_w) < min_b s(P_b),
    /// each side would rather the other moved.
    pub zugzwangs: usize,
    /// Digits of the class's largest denominator, of α's and β's (where they differ).
    pub max_denominator_digits: usize,
}

/// What the atlas says about one board.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// The board, `FxR`.
    pub board: String,
    /// Positions after symmetry reduction, all classes.
    pub canonical_positions: usize,
    /// Positions before symmetry reduction.
    pub positions: u64,
    /// Distinct values over all classes.
    pub distinct_values: usize,
    /// Digits of α's largest denominator (the classes' rows count β's too: where α < β
    /// somewhere, β's may be longer).
    pub max_denominator_digits: usize,
    /// α's largest denominator, factored by trial division up to 10⁵ (the last factor may
    /// be a composite cofactor, written `C<digits>`).
    pub max_denominator_factors: String,
    /// A position holding α's largest denominator (FEN placement) and its class.
    pub max_denominator_position: String,
    /// Quiescent positions (min_b s(P_b) = max_w s(P_w)), after symmetry.
    pub quiescent: usize,
    /// How many of them have a value other than 1/2.
    pub quiescent_not_half: usize,
    /// Zugzwangs (negative bids), all classes.
    pub zugzwangs: usize,
    /// Positions with α < β (0 when the certificate proves α = β everywhere).
    pub alpha_below_beta: usize,
    /// The largest level in White's closure T.
    pub max_level_white: u32,
    /// The largest level in Black's closure T′.
    pub max_level_black: u32,
    /// The first Richman iteration, where the study's iteration was run (null otherwise).
    pub first_richman_iteration: Option<u32>,
    /// How the values were made: `solve` or `iterate`.
    pub method: String,
    /// Seconds the board took.
    pub seconds: f64,
    /// Peak resident memory of the process while the board ran, in MiB (null where
    /// unknown). `bidtb atlas` solves its boards in one process: for small boards this is
    /// mostly memory the allocator kept from earlier boards (a lower bound on nothing, an
    /// upper bound on the board's own need); for the largest boards it is the board's.
    pub peak_mib: Option<u64>,
    /// Per class, by name.
    pub classes: BTreeMap<String, ClassRow>,
}

/// Factor `n` by trial division up to 10⁵: `2^3 · 5 · C41` style.
pub fn factor(n: &BigUint) -> String {
    if n.is_one() {
        return "1".into();
    }
    let mut n = n.clone();
    let mut parts = Vec::new();
    let mut p = 2u32;
    while p < 100_000 && !n.is_one() {
        let mut e = 0;
        while (&n % p).is_zero() {
            n /= p;
            e += 1;
        }
        if e > 0 {
            parts.push(if e == 1 {
                p.to_string()
            } else {
                format!("{p}^{e}")
            });
        }
        p += if p == 2 { 1 } else { 2 };
    }
    if !n.is_one() {
        let digits = n.to_string();
        parts.push(if digits.len() <= 10 {
            digits
        } else {
            format!("C{}", digits.len())
        });
    }
    parts.join(" · ")
}

/// The row of a finished, certified run that took `seconds` (peak memory if known).
pub fn row(sol: &Solution, seconds: f64, peak_mib: Option<u64>) -> Row {
    let graph = &sol.graph;
    let g = &sol.values;
    // Per position, x_W against x_B: Less is a zugzwang (a negative bid), Equal quiescent.
    let bids: Vec<Ordering> = (0..graph.positions())
        .into_par_iter()
        .map(|p| {
            let (w, b) = (greedy_max(g, graph.white(p)), greedy_min(g, graph.black(p)));
            cmp_guess(g, w as usize, b as usize)
        })
        .collect();
    let half = Value::small(1, 2);
    let cert = sol.certificate.as_ref();
    let mut classes = BTreeMap::new();
    let mut distinct = HashSet::new();
    let mut largest: Option<usize> = None;
    for (c, (material, report)) in sol.classes.iter().enumerate() {
        let range = sol.index.class_range(c);
        for p in range.clone() {
            let v = g.value(p);
            distinct.insert((v.numer().clone(), v.denom().into_owned()));
            if largest.is_none_or(|l| g.value(l).denom() < v.denom()) {
                largest = Some(p);
            }
        }
        classes.insert(
            material.to_string(),
            ClassRow {
                canonical_positions: report.canonical_positions,
                positions: report.positions,
                zugzwangs: range.filter(|&p| bids[p] == Ordering::Less).count(),
                max_denominator_digits: report.max_denominator_digits,
            },
        );
    }
    let quiescent: Vec<usize> = (0..graph.positions())
        .filter(|&p| bids[p] == Ordering::Equal)
        .collect();
    // A material without a position on a tiny board (a pawn on two ranks) has none.
    let pos = largest.map(|p| sol.index.position(p));
    let largest = largest.unwrap_or(0);
    let max_level = |levels: Option<&Vec<u32>>| {
        levels
            .map(|l| {
                l[..graph.positions()]
                    .iter()
                    .copied()
                    .filter(|&x| x != UNREACHED)
                    .max()
                    .unwrap_or(0)
            })
            .unwrap_or(0)
    };
    let one = Value::one();
    let den = if pos.is_some() {
        g.value(largest)
    } else {
        &one
    }
    .denom();
    Row {
        board: sol.board.to_string(),
        canonical_positions: sol.classes.iter().map(|(_, r)| r.canonical_positions).sum(),
        positions: sol.classes.iter().map(|(_, r)| r.positions).sum(),
        distinct_values: distinct.len(),
        max_denominator_digits: den.to_string().len(),
        max_denominator_factors: factor(&den),
        max_denominator_position: pos.map_or("–".into(), |pos| {
            format!("{} {}", pos.material(), crate::fen::write(sol.board, &pos))
        }),
        quiescent: quiescent.len(),
        quiescent_not_half: quiescent.iter().filter(|&&p| g.value(p) != &half).count(),
        zugzwangs: bids.iter().filter(|&&b| b == Ordering::Less).count(),
        alpha_below_beta: sol.alpha_below_beta.len(),
        max_level_white: max_level(cert.map(|c| &c.white_levels)),
        max_level_black: max_level(cert.map(|c| &c.black_levels)),
        first_richman_iteration: sol.first_richman_iteration(),
        method: sol.method().to_string(),
        seconds,
        peak_mib,
        classes,
    }
}

/// The row of one material from its table and the record its run wrote beside it
/// (`DIR/FxR/M.json`), for boards too large to solve in one process with every material
/// kept in memory (8x8 four pieces): the counts come from the record, the largest
/// denominator of α and the first position holding it (in the table's order, which is the
/// index's) from the table, the distinct values of α from its ranks. On boards that
/// [`row`] can make, both give the same row apart from the time and memory.
pub fn row_from_table(
    record: &crate::generate::report::MaterialRecord,
    table: &crate::table::Table,
) -> Result<Row, Error> {
    let info = table.info();
    let r = &record.report;
    // α's ranks: which dictionary entries α uses, and the largest denominator among them
    // (compared by length first, exactly only among the longest).
    let mut used = vec![false; info.dictionary_len];
    for i in 0..table.len() {
        used[table.rank(i)? as usize] = true;
    }
    let ranks: Vec<usize> = (0..used.len()).filter(|&k| used[k]).collect();
    let bits: Vec<u64> = ranks
        .par_iter()
        .map(|&k| Ok(table.dictionary_value_as_stored(k)?.denom().bits()))
        .collect::<Result<_, Error>>()?;
    let longest = bits.iter().copied().max().unwrap_or(0);
    let mut den = BigUint::one();
    let mut holding: Vec<u32> = Vec::new();
    for (&k, _) in ranks.iter().zip(&bits).filter(|(_, b)| **b == longest) {
        let d = table.dictionary_value_as_stored(k)?.denom().into_owned();
        match d.cmp(&den) {
            Ordering::Greater => {
                den = d;
                holding = vec![k as u32];
            }
            Ordering::Equal => holding.push(k as u32),
            Ordering::Less => {}
        }
    }
    let mut position = None;
    for i in 0..table.len() {
        if holding.contains(&table.rank(i)?) {
            position = crate::index::position_of_key(info.board, info.material, table.key(i)?);
            break;
        }
    }
    let mut classes = BTreeMap::new();
    classes.insert(
        record.material.clone(),
        ClassRow {
            canonical_positions: r.canonical_positions,
            positions: r.positions,
            zugzwangs: r.zugzwangs.unwrap_or(0),
            max_denominator_digits: r.max_denominator_digits,
        },
    );
    let quiescent_not_half = record
        .quiescent
        .lines()
        .filter(|l| l.split(' ').nth(2) != Some("1/2"))
        .count();
    Ok(Row {
        board: info.board.to_string(),
        canonical_positions: r.canonical_positions,
        positions: r.positions,
        distinct_values: ranks.len(),
        max_denominator_digits: den.to_string().len(),
        max_denominator_factors: factor(&den),
        max_denominator_position: position.map_or("–".into(), |pos| {
            format!("{} {}", pos.material(), crate::fen::write(info.board, &pos))
        }),
        quiescent: r.quiescent.unwrap_or(0),
        quiescent_not_half,
        zugzwangs: r.zugzwangs.unwrap_or(0),
        alpha_below_beta: r.alpha_below_beta.unwrap_or(0),
        max_level_white: r.max_level_white.unwrap_or(0),
        max_level_black: r.max_level_black.unwrap_or(0),
        first_richman_iteration: info.first_richman_iteration,
        method: record.method.to_string(),
        seconds: record.cost.seconds,
        peak_mib: record.cost.peak_mib,
        classes,
    })
}

/// The boards of a range `2x2..10x10` (every F x R with F and R between the ends) or a
/// comma-separated list `8x8,9x9`.
pub fn parse_boards(text: &str) -> Result<Vec<Board>, Error> {
    if let Some((a, b)) = text.split_once("..") {
        let (a, b): (Board, Board) = (a.parse()?, b.parse()?);
        let mut out = Vec::new();
        for f in a.files().min(b.files())..=a.files().max(b.files()) {
            for r in a.ranks().min(b.ranks())..=a.ranks().max(b.ranks()) {
                out.push(Board::new(f, r)?);
            }
        }
        Ok(out)
    } else {
        text.split(',').map(|b| b.trim().parse()).collect()
    }
}

/// The Markdown table of the rows.
pub fn markdown(rows: &[Row], skipped: &[(String, String)]) -> String {
    let mut out = String::from(
        "| board | positions (canonical / all) | distinct values | largest denominator | factors | held by | quiescent (≠ 1/2) | zugzwangs | α < β | T max | T′ max | first Richman iteration | seconds | peak MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let zz: Vec<String> = r
            .classes
            .iter()
            .filter(|(_, c)| c.zugzwangs > 0)
            .map(|(n, c)| format!("{n} {}", c.zugzwangs))
            .collect();
        out += &format!(
            "| {} | {} / {} | {} | {} digits | {} | `{}` | {} ({}) | {} | {} | {} | {} | {} | {:.2} | {} |\n",
            r.board,
            r.canonical_positions,
            r.positions,
            r.distinct_values,
            r.max_denominator_digits,
            r.max_denominator_factors,
            r.max_denominator_position,
            r.quiescent,
            r.quiescent_not_half,
            if zz.is_empty() {
                "0".to_string()
            } else {
                format!("{} ({})", r.zugzwangs, zz.join(", "))
            },
            r.alpha_below_beta,
            r.max_level_white,
            r.max_level_black,
            r.first_richman_iteration
                .map_or("–".to_string(), |n| n.to_string()),
            r.seconds,
            r.peak_mib.map_or("–".to_string(), |m| m.to_string()),
        );
    }
    for (board, why) in skipped {
        out += &format!("| {board} | skipped: {why} |||||||||||||\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_and_board_ranges() {
        assert_eq!(factor(&BigUint::from(819u32)), "3^2 · 7 · 13");
        assert_eq!(factor(&BigUint::from(8192u32)), "2^13");
        assert_eq!(factor(&BigUint::one()), "1");
        let big = BigUint::from(2u8).pow(3) * BigUint::from(10u8).pow(30) + BigUint::one();
        assert!(factor(&big).len() < 40);
        let boards = parse_boards("2x2..3x4").unwrap();
        assert_eq!(boards.len(), 6);
        assert_eq!(parse_boards("8x8, 3x4").unwrap().len(), 2);
        assert!(parse_boards("8x8..20x20").is_err());
        assert!(parse_boards("nonsense").is_err());
    }
}
