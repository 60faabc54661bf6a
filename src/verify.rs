//! Re-proving stored tables from their values alone (`bidtb verify`).
//!
//! Opening a table already checks its checksums and structure. Verification then trusts
//! nothing the generator computed: it rebuilds the index and the game graph, checks that the
//! files list exactly the indexed positions, that each dictionary is strictly increasing and
//! in lowest terms, re-checks every Richman equation exactly, recomputes both closures T and
//! T′ from the stored values and compares every stored level with them.
//!
//! Where a board's tables store β apart from α (format version 2), each bound is checked
//! on its own: α's equations and T (every α > 0 in T proves α is the least Richman
//! function), β's equations and T′ (every β < 1 in T′ proves β is the greatest).

use rayon::prelude::*;
use serde::Serialize;

use crate::certificate;
use crate::error::Error;
use crate::geometry::Board;
use crate::graph::Graph;
use crate::guess::Value;
use crate::index::Index;
use crate::position::Material;
use crate::probe::Tablebase;
use crate::rational::{cmp_shadowed, is_reduced, shadow};
use crate::solve::guesses_of;

/// What verification found in one class.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ClassCheck {
    /// Stored positions.
    pub positions: usize,
    /// Distinct values in the dictionary.
    pub distinct_values: usize,
    /// Richman equations that fail (in version 2, α's and β's are counted apart).
    pub violations: usize,
    /// Positions with value > 0 outside the recomputed T.
    pub alpha_failures: usize,
    /// Positions with value < 1 outside the recomputed T′.
    pub beta_failures: usize,
    /// Positions whose stored T or T′ level differs from the recomputed one.
    pub level_mismatches: usize,
    /// Positions whose stored β lies above their α (version 2 files; 0 otherwise).
    pub alpha_below_beta: usize,
}

/// What verification found on one board.
#[derive(Clone, Debug, Serialize)]
pub struct BoardCheck {
    /// The board, `FxR`.
    pub board: String,
    /// Whether everything holds.
    pub ok: bool,
    /// Per class, by name.
    pub classes: std::collections::BTreeMap<String, ClassCheck>,
    /// Problems with the files themselves (wrong positions, bad dictionary, flags), if any.
    pub problems: Vec<String>,
}

/// Verify every class of `board` in `tables`. Errors are for files that cannot be read at
/// all (missing or unreadable); everything else is reported in the [`BoardCheck`].
pub fn verify_board(tables: &Tablebase, board: Board) -> Result<BoardCheck, Error> {
    let files = Material::ALL
        .iter()
        .map(|&m| tables.table(board, m))
        .collect::<Result<Vec<_>, Error>>()?;
    let index = Index::new(board);
    let mut check = BoardCheck {
        board: board.to_string(),
        ok: false,
        classes: Default::default(),
        problems: Vec::new(),
    };
    let mut values: Vec<Value> = Vec::with_capacity(index.len());
    let mut betas: Vec<Value> = Vec::with_capacity(index.len());
    let first = files[0].info().first_richman_iteration;
    for (class, table) in index.classes().iter().zip(&files) {
        let name = class.material().to_string();
        let info = table.info();
        let mut problem = |what: String| check.problems.push(format!("{name}: {what}"));
        if !info.certified() {
            problem("the table does not carry a certificate (alpha = s = beta unproved)".into());
        }
        if info.first_richman_iteration != first {
            problem("its first Richman iteration differs from the other classes'".into());
        }
        if info.raw_positions != class.raw_count() as u64 {
            problem(format!(
                "{} positions before symmetry, the board has {}",
                info.raw_positions,
                class.raw_count()
            ));
        }
        if table.len() != class.len() || (0..class.len()).any(|i| table.key(i) != class.key(i)) {
            problem("its positions are not the indexed positions of the class".into());
            continue;
        }
        let dictionary = (0..info.dictionary_len)
            .map(|k| table.dictionary_value_as_stored(k))
            .collect::<Result<Vec<Value>, Error>>()?;
        let shadows: Vec<f64> = dictionary.par_iter().map(shadow).collect();
        let increasing = (1..dictionary.len()).into_par_iter().all(|k| {
            let (a, b) = (&dictionary[k - 1], &dictionary[k]);
            cmp_shadowed(a, shadows[k - 1], b, shadows[k]) == std::cmp::Ordering::Less
        });
        if !increasing {
            problem("its dictionary is not strictly increasing".into());
        }
        if dictionary.par_iter().any(|v| !is_reduced(v)) {
            problem("a dictionary value is not in lowest terms".into());
        }
        values.extend((0..class.len()).map(|i| dictionary[table.rank(i) as usize].clone()));
        betas.extend((0..class.len()).map(|i| dictionary[table.rank_beta(i) as usize].clone()));
        check.classes.insert(
            name,
            ClassCheck {
                positions: class.len(),
                distinct_values: dictionary.len(),
                alpha_below_beta: table.alpha_below_beta(),
                ..ClassCheck::default()
            },
        );
    }
    if values.len() != index.len() {
        return Ok(check);
    }
    let split = values != betas;
    let graph = Graph::new(&index);
    let cert = certificate::certify(&guesses_of(values), &graph);
    // β apart where it differs from α: its own equations and its own T′.
    let beta_cert = split.then(|| certificate::certify(&guesses_of(betas), &graph));
    let beta = beta_cert.as_ref().unwrap_or(&cert);
    for (c, (class, table)) in index.classes().iter().zip(&files).enumerate() {
        let range = index.class_range(c);
        let entry = check
            .classes
            .get_mut(&class.material().to_string())
            .expect("every class checked");
        let within = |list: &[u32]| {
            list.iter()
                .filter(|&&p| range.contains(&(p as usize)))
                .count()
        };
        entry.violations =
            within(&cert.violations) + beta_cert.as_ref().map_or(0, |b| within(&b.violations));
        entry.alpha_failures = within(&cert.alpha_failures);
        entry.beta_failures = within(&beta.beta_failures);
        entry.level_mismatches = (0..class.len())
            .filter(|&i| {
                let g = range.start + i;
                table.level_white(i) != cert.white_levels[g]
                    || table.level_black(i) != beta.black_levels[g]
            })
            .count();
    }
    check.ok = check.problems.is_empty()
        && check.classes.values().all(|c| {
            c.violations == 0
                && c.alpha_failures == 0
                && c.beta_failures == 0
                && c.level_mismatches == 0
        });
    Ok(check)
}
