//! Machine-readable reports of a run: `summary.json` (over every job of the run),
//! `quiescent.txt`, `alpha-below-beta.txt`, and the contents of the table files.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{ClassReport, Cost, Method, Solution, Timings};
use crate::certificate::UNREACHED;
use crate::iterate::KernelStats;
use crate::solve::SolveStats;

/// A job the run did not start: too large for the memory available, or needing a
/// material that was skipped.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Skipped {
    /// The job's materials.
    pub materials: Vec<String>,
    /// Why: the memory estimate against what is available, or the skipped material needed.
    pub reason: String,
}

/// The contents of `DIR/FxR/summary.json`.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// Board, `FxR`.
    pub board: String,
    /// How the values were made: `iterate` (the study's method) or `solve`.
    pub method: Method,
    /// The materials of the run, in the order they were made (those it made, and those it
    /// found already made and reused).
    pub materials: Vec<String>,
    /// Materials found already made (tables and records of an earlier run) and reused.
    pub reused: Vec<String>,
    /// Jobs not started: too large for the memory available, or needing a skipped
    /// material (their tables are not written).
    #[serde(default)]
    pub skipped: Vec<Skipped>,
    /// First n at which sₙ satisfies every equation (null if the run was capped first, or
    /// made by the solve method, which has no iterations).
    pub first_richman_iteration: Option<u32>,
    /// Whether every job's values were proved to be a Richman function.
    pub converged: bool,
    /// Whether every value is proved exact: α by its certificate and β by its own (one
    /// certificate proving both where α = β everywhere).
    pub certified: bool,
    /// Iterations computed (the iterate method).
    pub iterations_run: u32,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
    /// Seconds per stage, summed over the jobs.
    pub stage_seconds: Timings,
    /// What the kernel's shortcuts achieved (the iterate method; null for the solve
    /// method).
    pub kernel: Option<KernelStats>,
    /// What the solve method did, per job (named by its materials): per bound solved (α,
    /// and β where solved apart), the floating-point sweeps and each exact evaluation.
    pub solve: Option<BTreeMap<String, Vec<SolveStats>>>,
    /// Positions whose α is below their β, over all materials (the solve method).
    pub alpha_below_beta: Option<usize>,
    /// Per material, by name (KvK, KQvK, ..., KRvKN, ...).
    pub classes: BTreeMap<String, ClassReport>,
    /// Per material, what its job cost (the three-piece materials' joint job, for the
    /// iteration).
    pub costs: BTreeMap<String, Cost>,
}

impl Summary {
    /// An empty summary of a run of `method` on `board`.
    pub fn new(board: crate::geometry::Board, method: Method) -> Summary {
        Summary {
            board: board.to_string(),
            method,
            materials: Vec::new(),
            reused: Vec::new(),
            skipped: Vec::new(),
            first_richman_iteration: None,
            converged: true,
            certified: true,
            iterations_run: 0,
            seconds: 0.0,
            stage_seconds: Timings::default(),
            kernel: None,
            solve: (method == Method::Solve).then(BTreeMap::new),
            alpha_below_beta: (method == Method::Solve).then_some(0),
            classes: BTreeMap::new(),
            costs: BTreeMap::new(),
        }
    }

    /// Add what belongs to a finished job as a whole (its materials come as records).
    pub fn add_job(&mut self, sol: &Solution) {
        self.converged &= sol.converged();
        self.certified &= sol.certified();
        self.stage_seconds.add(&sol.timings);
        if let Some(it) = sol.iteration() {
            self.first_richman_iteration = it.first_richman_iteration;
            self.iterations_run += it.iterations_run;
            self.kernel = Some(it.kernel.clone());
        }
    }

    /// Add one material's record (of a job of this run, or reused from an earlier one).
    pub fn add_record(&mut self, record: &MaterialRecord) {
        if !self.materials.contains(&record.material) {
            self.materials.push(record.material.clone());
        }
        let r = &record.report;
        self.certified &= r.certified_alpha == Some(true) && r.certified_beta == Some(true);
        if let (Some(all), Some(stats)) = (&mut self.solve, &record.solve) {
            all.insert(record.material.clone(), stats.clone());
        }
        if let (Some(n), Some(k)) = (&mut self.alpha_below_beta, r.alpha_below_beta) {
            *n += k;
        }
        self.classes.insert(record.material.clone(), r.clone());
        self.costs.insert(record.material.clone(), record.cost);
    }
}

/// What a finished job says of one of its materials, kept as `DIR/FxR/<Material>.json` so
/// that a later run that reuses the material's table reports it as if it had made it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct MaterialRecord {
    /// The material (stored form).
    pub material: String,
    /// The method that made it.
    pub method: Method,
    /// Its report.
    pub report: ClassReport,
    /// What the solve method did on its job (α's solve, β's if solved apart).
    pub solve: Option<Vec<SolveStats>>,
    /// Its lines of `quiescent.txt`.
    pub quiescent: String,
    /// Its lines of `alpha-below-beta.txt`.
    pub alpha_below_beta: String,
    /// What its job cost.
    pub cost: Cost,
}

/// The record of each material of a job, in the index's order.
pub fn records(sol: &Solution) -> Vec<MaterialRecord> {
    let quiescent = quiescent_lines(sol);
    let split = alpha_below_beta_lines(sol);
    let of = |text: &str, m: &str| -> String {
        text.lines()
            .filter(|l| l.split(' ').next() == Some(m))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    sol.classes
        .iter()
        .map(|(m, report)| {
            let name = m.to_string();
            MaterialRecord {
                method: sol.method(),
                report: report.clone(),
                solve: sol.solve_stats().map(<[_]>::to_vec),
                quiescent: of(&quiescent, &name),
                alpha_below_beta: of(&split, &name),
                cost: sol.cost,
                material: name,
            }
        })
        .collect()
}

fn level(l: u32) -> String {
    if l == UNREACHED {
        "unreached".to_string()
    } else {
        l.to_string()
    }
}

/// Values with more digits than this (numerator and denominator together) are listed as
/// decimals in the text lists: a million positions with denominators of thousands of digits
/// would make lists of gigabytes (8x8 KBNvK, 1.15 million positions with α < β); the
/// tables hold every value exactly.
pub const LISTED_DIGITS: usize = 60;

/// A value as the text lists show it: exact (`p/q`) when short, else `≈` and its first
/// twelve decimals (truncated) and the digits of its denominator, e.g. `≈0.723456789012…/3531`.
pub fn listed(v: &crate::value::Value) -> String {
    // Printing a value of thousands of digits costs far more than its first decimals: a
    // value whose numerator and denominator have 200 bits or more together has more than
    // 60 digits, and is never printed here (8x8 KBvKN: 2.4 million such values).
    if v.numer().bits() + v.denom().bits() < 200 {
        let exact = v.to_string();
        if exact.len() <= LISTED_DIGITS {
            return exact;
        }
    }
    format!("≈{}/{}", v.decimal(12), v.denominator_digits())
}

/// The lines of `quiescent.txt` for a job: material, FEN, value, T level, T′ level (no
/// heading line).
pub fn quiescent_lines(sol: &Solution) -> String {
    let Some(cert) = &sol.certificate else {
        return String::new();
    };
    let mut out = String::new();
    for &p in &cert.quiescent {
        let p = p as usize;
        let pos = sol.index.position(p);
        out += &format!(
            "{} {} {} {} {}\n",
            pos.material(),
            crate::fen::write(sol.board, &pos),
            listed(sol.values.value(p)),
            level(cert.white_levels[p]),
            level(cert.black_levels[p])
        );
    }
    out
}

/// The heading line of `quiescent.txt`.
pub const QUIESCENT_HEADING: &str = "# class placement value T-level T'-level (values over 60 digits: ≈decimals/denominator digits)\n";

/// The heading line of `alpha-below-beta.txt`.
pub const ALPHA_BELOW_BETA_HEADING: &str =
    "# class placement alpha beta (values over 60 digits: ≈decimals/denominator digits)\n";

/// The lines of `alpha-below-beta.txt` for a job: material, FEN, α, β (no heading line).
pub fn alpha_below_beta_lines(sol: &Solution) -> String {
    let mut out = String::new();
    for &p in &sol.alpha_below_beta {
        let p = p as usize;
        let pos = sol.index.position(p);
        out += &format!(
            "{} {} {} {}\n",
            pos.material(),
            crate::fen::write(sol.board, &pos),
            listed(sol.values.value(p)),
            listed(sol.beta_values().value(p))
        );
    }
    out
}

/// The contents of each material's table file, in the index's order, with (where `means`)
/// every position's equation with its best moves, so that the writer stores long values
/// as means (format version 7). None when the job has no certificate (it did not
/// converge): such values are provisional and are never written as tables.
pub fn table_contents(sol: &Solution, means: bool) -> Option<Vec<crate::table::Contents<'_>>> {
    let cert = sol.certificate.as_ref()?;
    let beta_cert = sol.beta_certificate()?;
    // β solved apart: its own equations must hold too (`converged` speaks for α's).
    let certified_beta = beta_cert.beta_failures.is_empty()
        && (sol.beta.is_none() || beta_cert.violations.is_empty());
    let first = sol.first_richman_iteration();
    let contents = sol
        .index
        .classes()
        .iter()
        .zip(&sol.classes)
        .enumerate()
        .map(|(c, (class, (material, rep)))| {
            let range = sol.index.class_range(c);
            crate::table::Contents {
                board: sol.board,
                material: *material,
                raw_positions: class.raw_count(),
                first_richman_iteration: first,
                stable_at: rep.stable_at,
                converged: sol.converged(),
                certified_alpha: cert.alpha_failures.is_empty(),
                certified_beta,
                keys: class.keys().to_vec(),
                values: range.clone().map(|i| sol.values.value(i)).collect(),
                // A β section only for materials with α < β somewhere.
                values_beta: sol
                    .beta
                    .as_ref()
                    .filter(|upper| {
                        range
                            .clone()
                            .any(|i| sol.values.value(i) != upper.values.value(i))
                    })
                    .map(|upper| range.clone().map(|i| upper.values.value(i)).collect()),
                levels_white: cert.white_levels[range.clone()].to_vec(),
                levels_black: beta_cert.black_levels[range.clone()].to_vec(),
                means: if means {
                    proved_equations(sol, range.clone())
                } else {
                    Vec::new()
                },
            }
        })
        .collect();
    Some(contents)
}

/// The equations [`equations`] gives for α, and for β where it is solved apart, of each
/// bound whose certificate found no violation.
fn proved_equations(sol: &Solution, range: std::ops::Range<usize>) -> Vec<crate::table::Mean<'_>> {
    let alpha = sol.certificate.as_ref().map(|c| (&sol.values, c));
    let beta = sol
        .beta
        .as_ref()
        .map(|upper| (&upper.values, &upper.certificate));
    [alpha, beta]
        .into_iter()
        .flatten()
        .filter(|(_, cert)| cert.violations.is_empty())
        .flat_map(|(values, _)| equations(&sol.graph, values, range.clone()))
        .collect()
}

/// The Richman equation of each position of `range` with its best moves by `values`
/// (White's first greatest option, Black's first least, as the certificate picks them),
/// as `[v, a, b]` with `2v = a + b`: where the certificate found no violation, the writer
/// may store `v` as the mean of `a` and `b`.
fn equations<'a>(
    graph: &crate::graph::Graph,
    values: &'a crate::value::Images,
    range: std::ops::Range<usize>,
) -> Vec<crate::table::Mean<'a>> {
    use crate::certificate::{greedy_max, greedy_min};
    use rayon::prelude::*;
    range
        .into_par_iter()
        .map(|p| {
            let w = greedy_max(values, graph.white(p)) as usize;
            let b = greedy_min(values, graph.black(p)) as usize;
            [values.value(p), values.value(w), values.value(b)]
        })
        .collect()
}

#[cfg(test)]
mod listing {
    use super::listed;
    use crate::value::Value;
    use num_bigint::BigUint;

    /// Around the 60-digit boundary the shortcut through bits lists exactly what printing
    /// every value and measuring it would.
    #[test]
    fn the_bits_shortcut_decides_as_printing_would() {
        for q_digits in 20..45u32 {
            let q = BigUint::from(10u8).pow(q_digits) + 3u8;
            for p in [BigUint::from(1u8), &q / 3u8, &q - 1u8, &q / 1000u32] {
                let v = Value::new(p, q.clone());
                let exact = v.to_string();
                let want = if exact.len() <= super::LISTED_DIGITS {
                    exact
                } else {
                    format!("≈{}/{}", v.decimal(12), v.denom().to_string().len())
                };
                assert_eq!(listed(&v), want);
            }
        }
    }

    #[test]
    fn short_values_are_exact_and_long_ones_marked() {
        assert_eq!(listed(&Value::small(7463, 8192)), "7463/8192");
        let den = BigUint::from(3u8).pow(120);
        let long = Value::new(&den / BigUint::from(4u8), den.clone());
        let shown = listed(&long);
        assert!(shown.starts_with("≈0.249999999999…/"), "{shown}");
        assert!(
            shown.ends_with(&format!("/{}", den.to_string().len())),
            "{shown}"
        );
    }
}
