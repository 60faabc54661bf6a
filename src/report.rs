//! Machine-readable reports of a run: `summary.json`, `quiescent.txt`, and the contents of
//! the table files.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::generate::{ClassReport, KernelStats, Method, Solution, Timings};
use crate::solve::SolveStats;

/// The contents of `DIR/FxR/summary.json`.
#[derive(Debug, Serialize)]
pub struct Summary {
    /// Board, `FxR`.
    pub board: String,
    /// How the values were made: `iterate` (the study's method) or `solve`.
    pub method: Method,
    /// First n at which sₙ satisfies every equation (null if the run was capped first, or
    /// made by the solve method, which has no iterations).
    pub first_richman_iteration: Option<u32>,
    /// Whether the guesses were proved to be a Richman function.
    pub converged: bool,
    /// Whether every value is proved exact: the guesses are a Richman function and both
    /// closures cover every position they must (α = s = β); where β had to be solved
    /// apart (`alpha_below_beta` > 0), α and β are each proved by their own certificate.
    pub certified: bool,
    /// Iterations computed (the run stops at the first Richman test that passes).
    pub iterations_run: u32,
    /// Wall-clock seconds of the whole run.
    pub seconds: f64,
    /// Seconds per stage.
    pub stage_seconds: Timings,
    /// What the kernel's shortcuts achieved (pruned options, frozen bounds); null for the
    /// solve method.
    pub kernel: Option<KernelStats>,
    /// What the solve method did: per bound solved (α, and β if α's certificate did not
    /// prove it too), the floating-point sweeps and each exact evaluation round; null for
    /// the iterate method.
    pub solve: Option<Vec<SolveStats>>,
    /// Positions whose α is below their β (the solve method; 0 when the certificate proves
    /// α = β everywhere).
    pub alpha_below_beta: Option<usize>,
    /// Per material class, by name (KvK, KQvK, ...).
    pub classes: BTreeMap<String, ClassReport>,
}

/// Build the summary of a run that took `seconds`.
pub fn summary(sol: &Solution, seconds: f64) -> Summary {
    Summary {
        board: sol.board.to_string(),
        method: sol.method,
        first_richman_iteration: sol.first_richman_iteration,
        converged: sol.converged(),
        certified: sol.certified(),
        iterations_run: sol.iterations_run,
        seconds,
        stage_seconds: sol.timings.clone(),
        kernel: sol.kernel_stats.clone(),
        solve: sol.solve_stats.clone(),
        alpha_below_beta: (sol.method == Method::Solve).then_some(sol.alpha_below_beta.len()),
        classes: sol
            .classes
            .iter()
            .map(|(m, c)| (m.to_string(), c.clone()))
            .collect(),
    }
}

/// The lines of `quiescent.txt`: class, placement, value, T level, T′ level.
pub fn quiescent_lines(sol: &Solution) -> String {
    let Some(cert) = &sol.certificate else {
        return String::new();
    };
    let level = |l: u32| {
        if l == crate::certificate::UNREACHED {
            "unreached".to_string()
        } else {
            l.to_string()
        }
    };
    let mut out = String::from("# class placement value T-level T'-level\n");
    for &p in &cert.quiescent {
        let p = p as usize;
        let pos = sol.index.position(p);
        out += &format!(
            "{} {} {} {} {}\n",
            pos.material(),
            crate::fen::placement(sol.board, &pos),
            sol.guesses.value(p),
            level(cert.white_levels[p]),
            level(cert.black_levels[p])
        );
    }
    out
}

/// The lines of `alpha-below-beta.txt` (the solve method, where α < β somewhere): class,
/// placement, α, β.
pub fn alpha_below_beta_lines(sol: &Solution) -> String {
    let mut out = String::from("# class placement alpha beta\n");
    for (p, beta) in &sol.alpha_below_beta {
        let p = *p as usize;
        let pos = sol.index.position(p);
        out += &format!(
            "{} {} {} {}\n",
            pos.material(),
            crate::fen::placement(sol.board, &pos),
            sol.guesses.value(p),
            beta
        );
    }
    out
}

/// The contents of each class's table file, in [`crate::position::Material::ALL`] order.
/// None when the run has no certificate (it did not converge): such values are provisional
/// and are never written as tables.
pub fn table_contents(sol: &Solution) -> Option<Vec<crate::table::Contents<'_>>> {
    let cert = sol.certificate.as_ref()?;
    let beta_cert = sol.beta_certificate()?;
    // β solved apart: its own equations must hold too (`converged` speaks for α's).
    let certified_beta = beta_cert.beta_failures.is_empty()
        && (sol.beta.is_none() || beta_cert.violations.is_empty());
    let classes = sol.index.classes();
    let contents = classes
        .iter()
        .zip(&sol.classes)
        .enumerate()
        .map(|(c, (class, (material, rep)))| {
            let range = sol.index.class_range(c);
            crate::table::Contents {
                board: sol.board,
                material: *material,
                raw_positions: class.raw_count() as u64,
                first_richman_iteration: sol.first_richman_iteration,
                stable_at: rep.stable_at,
                converged: sol.converged(),
                certified_alpha: cert.alpha_failures.is_empty(),
                certified_beta,
                keys: (0..class.len()).map(|i| class.key(i) as u32).collect(),
                values: range.clone().map(|i| sol.guesses.value(i)).collect(),
                // Version 2 only for classes with α < β somewhere; the others keep
                // version 1 (their α is their β).
                values_beta: sol
                    .beta
                    .as_ref()
                    .filter(|upper| {
                        // Both in lowest terms: equal exactly when their parts are.
                        let (a, b) = (&sol.guesses, &upper.guesses);
                        range.clone().any(|i| {
                            a.value(i).numer() != b.value(i).numer()
                                || a.value(i).denom() != b.value(i).denom()
                        })
                    })
                    .map(|upper| range.clone().map(|i| upper.guesses.value(i)).collect()),
                levels_white: cert.white_levels[range.clone()].to_vec(),
                levels_black: beta_cert.black_levels[range].to_vec(),
            }
        })
        .collect();
    Some(contents)
}
