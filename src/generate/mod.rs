//! The generation pipeline. One *job* solves a set of materials jointly, as named, timed
//! stages:
//!
//! 1. **index**: the positions of the job's materials ([`Index`]);
//! 2. **graph**: their moves ([`Graph`]); moves into other materials become exits;
//! 3. **boundary**: the exits' values, from materials solved before ([`Solved`]), those
//!    that never decide anything left unread ([`crate::boundary`]);
//! 4. **method**: candidate values, by the study's iteration ([`crate::iterate`]: only on
//!    the closed three-piece set, which it iterates jointly and reproduces 2644) or by exact
//!    solves under improving strategies ([`mod@crate::solve`], any material, α and β
//!    apart where they differ);
//! 5. **certify**: the certificate proves them (inside each method);
//! 6. **report**: per material, the facts of `summary.json`.
//!
//! Above the jobs sits the driver ([`driver`]): the materials a request needs, in
//! dependency order, each a job whose tables the next ones read their exits from
//! ([`write`] puts them on disk), the way Syzygy's generator runs one material at a time
//! against finished smaller tables.

pub mod atlas;
pub mod driver;
mod lanes;
mod priority;
pub mod report;
pub mod session;
mod store;
pub mod write;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

pub use crate::boundary::{Glance, Known, NothingSolved, Solved};
use crate::certificate::{Certificate, UNREACHED, cmp_guess, greedy_max, greedy_min};
use crate::error::Error;
use crate::geometry::Board;
use crate::graph::Graph;
use crate::index::Index;
use crate::iterate::{self, Iteration};
use crate::material::Material;
use crate::position::Position;
use crate::progress::timed;
use crate::resources;
use crate::solve::{self, SolveStats};
use crate::value::{Images, Value};

pub use crate::progress::{Control, Observer, Silent};
pub use driver::{Store, solve_all};

/// How the candidate values are made (the certificate proves them either way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// The study's α/β iteration with simplest-rational guesses (reproduces 2644).
    #[default]
    Iterate,
    /// Exact linear solves under improving strategies, α and β apart.
    Solve,
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Method::Iterate => "iterate",
            Method::Solve => "solve",
        })
    }
}

/// The method that makes the candidate values, with its own settings (the certificate
/// proves the values either way).
#[derive(Clone, Debug)]
pub enum MethodOptions {
    /// The study's α/β iteration, with its settings.
    Iterate(iterate::Settings),
    /// Exact linear solves under improving strategies, with the settings of its runs.
    Solve(solve::run::RunSettings),
}

impl MethodOptions {
    /// Which method.
    pub fn kind(&self) -> Method {
        match self {
            MethodOptions::Iterate(_) => Method::Iterate,
            MethodOptions::Solve(_) => Method::Solve,
        }
    }
}

impl From<Method> for MethodOptions {
    /// The method with its default settings.
    fn from(method: Method) -> MethodOptions {
        match method {
            Method::Iterate => MethodOptions::Iterate(iterate::Settings::default()),
            Method::Solve => MethodOptions::Solve(solve::run::RunSettings::default()),
        }
    }
}

/// How a run is configured: the board, the materials, and the method with its settings.
#[derive(Clone, Debug)]
pub struct Options {
    /// The board.
    pub board: Board,
    /// The materials asked for (stored forms); the driver adds what they need. Default: the
    /// study's six three-piece materials.
    pub materials: Vec<Material>,
    /// How the values are made, and that method's settings.
    pub method: MethodOptions,
}

impl Options {
    /// Defaults for a board: the three-piece materials, the study's iteration with its
    /// defaults ([`iterate::Settings::default`]).
    pub fn new(board: Board) -> Options {
        Options {
            board,
            materials: Material::three_piece().to_vec(),
            method: MethodOptions::from(Method::Iterate),
        }
    }

    /// The same options with the solve method.
    pub fn solve(board: Board) -> Options {
        Options {
            method: Method::Solve.into(),
            ..Options::new(board)
        }
    }

    /// Which method makes the values.
    pub fn method(&self) -> Method {
        self.method.kind()
    }

    /// The iteration's settings (the defaults when the method is not the iteration).
    pub fn iterate_settings(&self) -> iterate::Settings {
        match &self.method {
            MethodOptions::Iterate(settings) => settings.clone(),
            MethodOptions::Solve(_) => iterate::Settings::default(),
        }
    }

    /// The solve method's run settings (the defaults when the method is not the solve).
    pub fn solve_settings(&self) -> solve::run::RunSettings {
        match &self.method {
            MethodOptions::Solve(settings) => settings.clone(),
            MethodOptions::Iterate(_) => solve::run::RunSettings::default(),
        }
    }

    /// The iteration's settings to change, the method set to the iteration first if it was
    /// another.
    pub fn iterate_settings_mut(&mut self) -> &mut iterate::Settings {
        if !matches!(self.method, MethodOptions::Iterate(_)) {
            self.method = MethodOptions::from(Method::Iterate);
        }
        match &mut self.method {
            MethodOptions::Iterate(settings) => settings,
            MethodOptions::Solve(_) => unreachable!("set to the iteration above"),
        }
    }
}

/// Per-material results.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClassReport {
    /// Number of positions before symmetry reduction.
    pub positions: u64,
    /// Number of positions after symmetry reduction (what is computed and stored).
    pub canonical_positions: usize,
    /// The largest iteration at which a guess of this material changed (null for the solve
    /// method, which has no iterations).
    pub stable_at: Option<u32>,
    /// The largest denominator among the material's values (α and β), in decimal.
    pub max_denominator: String,
    /// Number of decimal digits of `max_denominator`.
    pub max_denominator_digits: usize,
    /// How many times a guess of this material changed over the run (the iterate
    /// method's guessing path).
    pub guess_changes: Option<u64>,
    /// Positions whose guess reached its final value during the run (the iterate method's
    /// default path).
    pub settled: Option<u64>,
    /// Positions whose α and β differ (the solve method; null for the iterate method).
    pub alpha_below_beta: Option<usize>,
    /// Positions whose Richman equation fails (null if the run did not converge).
    pub violations: Option<usize>,
    /// α proved for every position of the material (null if the run did not converge).
    pub certified_alpha: Option<bool>,
    /// β proved for every position of the material.
    pub certified_beta: Option<bool>,
    /// Number of quiescent positions (min_b s(P_b) = max_w s(P_w)), after symmetry.
    pub quiescent: Option<usize>,
    /// Positions (after symmetry) in zugzwang: the bid (max_w α(P_w) − min_b α(P_b)) / 2 is
    /// negative, each side would rather the other moved.
    #[serde(default)]
    pub zugzwangs: Option<usize>,
    /// Distinct values among the material's positions (α and β together).
    #[serde(default)]
    pub distinct_values: usize,
    /// Largest progress level in White's closure T among the material's positions.
    pub max_level_white: Option<u32>,
    /// Largest progress level in Black's closure T′.
    pub max_level_black: Option<u32>,
}

fn is_zero(x: &f64) -> bool {
    *x == 0.0
}

/// Seconds spent in each stage (summed over a run's jobs): the stages every job runs, then
/// the method's own, by the names the method gives them ([`iterate::Timings::stages`],
/// [`SolveStats::stages`]). Stages that took no time are left out of `summary.json`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Timings {
    /// Enumerating and indexing positions.
    pub index: f64,
    /// Building the game graph.
    pub graph: f64,
    /// Reading the exits' values from the materials solved before.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub boundary: f64,
    /// The certificate: exact equations and both closures (for the solve method: the
    /// certificates of its candidates, part of its `solve` stage).
    pub certify: f64,
    /// Encoding and writing the table files (after each job).
    #[serde(skip_serializing_if = "is_zero", default)]
    pub write: f64,
    /// The method's stages by name: the iteration's `iterate` (with its parts `kernel`,
    /// `guess_updates`, `richman_tests`, `retirement`), `parents` and the exact `solve`
    /// before it; the solve method's `solve` (with its parts `float`, `strategies`,
    /// `exact`, `improve`).
    #[serde(flatten)]
    pub method: BTreeMap<String, f64>,
}

impl Timings {
    /// Add another job's seconds.
    pub fn add(&mut self, o: &Timings) {
        self.index += o.index;
        self.graph += o.graph;
        self.boundary += o.boundary;
        self.certify += o.certify;
        self.write += o.write;
        for (name, &seconds) in &o.method {
            self.add_stage(name, seconds);
        }
    }

    /// The seconds of the method's stage `name` (0 if it did not run).
    pub fn stage(&self, name: &str) -> f64 {
        self.method.get(name).copied().unwrap_or(0.0)
    }

    /// Add `seconds` to the method's stage `name` (a stage that took no time is not kept).
    pub fn add_stage(&mut self, name: &str, seconds: f64) {
        if seconds != 0.0 {
            *self.method.entry(name.to_string()).or_default() += seconds;
        }
    }

    fn add_solve(&mut self, s: &SolveStats) {
        for (name, seconds) in s.stages() {
            self.add_stage(name, seconds);
        }
        self.certify += s.certify_seconds;
    }

    fn add_iterate(&mut self, t: &iterate::Timings) {
        for (name, seconds) in t.stages() {
            self.add_stage(name, seconds);
        }
        self.certify += t.certify;
    }
}

/// What the method that made a solution adds to it.
pub enum Details {
    /// The study's iteration: its record.
    Iterate(Box<Iteration>),
    /// The solve method: what each bound's solve did (α's, and β's if solved apart).
    Solve(Vec<SolveStats>),
}

/// β where it had to be solved apart from α: its exact values and the certificate that
/// proves them (its T′ levels are the ones stored with β).
pub struct UpperBound {
    /// β of every node.
    pub values: Images,
    /// The certificate of those values: its T′ covers every position with β < 1.
    pub certificate: Certificate,
}

/// A finished (or capped) job: the positions, the graph, the values and the report.
pub struct Solution {
    /// The board.
    pub board: Board,
    /// The positions of the job's materials.
    pub index: Index,
    /// The game graph.
    pub graph: Graph,
    /// α of every node, terminal nodes included (the value wherever α = β).
    pub values: Images,
    /// The certificate of `values`, when the run converged: T from α, and T′ too unless β
    /// was solved apart.
    pub certificate: Option<Certificate>,
    /// β solved apart, where `certificate` does not prove it equal to α.
    pub beta: Option<UpperBound>,
    /// Positions whose α is below their β (their β is in `beta`: the list holds no copy
    /// of a value, which with four men would be gigabytes).
    pub alpha_below_beta: Vec<u32>,
    /// Per-material results, in the index's order.
    pub classes: Vec<(Material, ClassReport)>,
    /// Stage timings.
    pub timings: Timings,
    /// What the job cost.
    pub cost: Cost,
    /// What the method adds.
    pub details: Details,
}

/// What a job cost: its wall-clock seconds and the process's peak resident memory while it
/// ran.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub struct Cost {
    /// Seconds, from the index to the reports.
    pub seconds: f64,
    /// Peak resident memory in MiB (Linux; None elsewhere), the pages of tables read
    /// included.
    pub peak_mib: Option<u64>,
    /// Peak of the heap alone (anonymous resident memory) in MiB, as the driver's memory
    /// guard sampled it (None where no guard watched, and in records of earlier builds).
    #[serde(default)]
    pub peak_heap_mib: Option<u64>,
    /// CPU seconds over the same span, of the threads working for it (see
    /// [`resources::pool_cpu_seconds`]; None in records of earlier builds).
    #[serde(default)]
    pub cpu_seconds: Option<f64>,
}

impl Solution {
    /// The method that made the values.
    pub fn method(&self) -> Method {
        match self.details {
            Details::Iterate(_) => Method::Iterate,
            Details::Solve(_) => Method::Solve,
        }
    }

    /// The iteration's record (the iterate method).
    pub fn iteration(&self) -> Option<&Iteration> {
        match &self.details {
            Details::Iterate(it) => Some(it),
            Details::Solve(_) => None,
        }
    }

    /// What the solve method did (α's solve, and β's if one was needed).
    pub fn solve_stats(&self) -> Option<&[SolveStats]> {
        match &self.details {
            Details::Solve(s) => Some(s),
            Details::Iterate(_) => None,
        }
    }

    /// The first n at which sₙ is a Richman function (the iterate method, if it got there).
    pub fn first_richman_iteration(&self) -> Option<u32> {
        self.iteration().and_then(|it| it.first_richman_iteration)
    }

    /// Whether the values were proved to form a Richman function.
    pub fn converged(&self) -> bool {
        self.certificate.is_some()
    }

    /// Whether every value kept is proved exact: α = s = β everywhere by one certificate,
    /// or α by `certificate` and β by `beta`'s.
    pub fn certified(&self) -> bool {
        use crate::solve::{Bound, proves};
        match (&self.certificate, self.beta_certificate()) {
            (Some(alpha), Some(beta)) => proves(alpha, Bound::Alpha) && proves(beta, Bound::Beta),
            _ => false,
        }
    }

    /// The certificate that answers for β: β's own where β was solved apart.
    pub fn beta_certificate(&self) -> Option<&Certificate> {
        match &self.beta {
            Some(upper) => Some(&upper.certificate),
            None => self.certificate.as_ref(),
        }
    }

    /// β of every node: β's own values where solved apart, else α's.
    pub fn beta_values(&self) -> &Images {
        self.beta.as_ref().map_or(&self.values, |u| &u.values)
    }

    /// The value (α) of a position of one of the job's materials.
    pub fn value(&self, pos: &Position) -> Option<&Value> {
        self.index.index_of(pos).map(|i| self.values.value(i))
    }

    /// α and β of a position of one of the job's materials.
    pub fn bounds(&self, pos: &Position) -> Option<(&Value, &Value)> {
        let i = self.index.index_of(pos)?;
        Some((self.values.value(i), self.beta_values().value(i)))
    }
}

/// The exact values of a closed game for the iterate method, if the solve method proves
/// them (α = β everywhere): with them the iteration needs no intermediate guesses.
fn exact_values(graph: &Graph, obs: &dyn Observer, control: &Control<'_>) -> iterate::ExactValues {
    use solve::{Bound, Game, SolveError};
    let go_on = |_: solve::Event<'_>| !control.stopping();
    let mut seconds = 0.0;
    let solved = timed(obs, "solve", &mut seconds, || {
        solve::solve_bound(
            Game::closed(graph),
            Bound::Alpha,
            &solve::Settings::default(),
            &go_on,
        )
    });
    match solved {
        Ok(c) if c.certificate.certified() => {
            let exact = iterate::Exact {
                certify_seconds: c.stats.certify_seconds,
                values: c.values,
                certificate: c.certificate,
            };
            iterate::ExactValues::Solved(Box::new(exact), seconds)
        }
        Ok(_) => {
            obs.notice("alpha < beta somewhere: computing the guesses instead");
            iterate::ExactValues::Unproved
        }
        Err(SolveError::Failed(why)) => {
            obs.notice(&format!(
                "no exact values ({why}): computing the guesses instead"
            ));
            iterate::ExactValues::Unproved
        }
        Err(SolveError::Stopped) => iterate::ExactValues::Stopped,
    }
}

/// How a job ended.
pub enum Run {
    /// It ran to the end (converged or capped).
    Finished(Box<Solution>),
    /// It was stopped at iteration `n` (0 for the solve method); the checkpoint saved
    /// then, if any.
    Interrupted {
        /// The iteration reached.
        n: u32,
        /// The checkpoint written.
        checkpoint: Option<std::path::PathBuf>,
    },
}

/// The memory a job on `materials` will need, checked before anything is built.
/// `page_above` is the job's [`Control::page_above`].
pub(crate) fn check_memory(
    options: &Options,
    materials: &[Material],
    page_above: u64,
) -> Result<(), Error> {
    let what = format!(
        "{} on {}",
        materials
            .iter()
            .map(Material::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        options.board
    );
    let verb = match options.method() {
        Method::Iterate => "generating",
        Method::Solve => "solving",
    };
    let (_, bytes) = job_estimate(options, materials, page_above);
    resources::check(bytes, &format!("{verb} {what}"))
}

/// What a job on `materials` holds by its estimate: its positions, and the bytes its
/// method needs at most (the solve method's numerators paged to files past `page_above`).
/// What a job is checked against before it starts, and what decides whether it may run
/// beside others.
pub(crate) fn job_estimate(
    options: &Options,
    materials: &[Material],
    page_above: u64,
) -> (usize, u64) {
    let board = options.board;
    let positions: usize = materials
        .iter()
        .map(|&m| crate::index::estimate_positions(board, m))
        .sum();
    let bytes = match options.method() {
        Method::Iterate => crate::iterate::memory::estimate_bytes(
            positions,
            20 * positions,
            iterate::guessing::initial_width(options.iterate_settings().max_iterations),
        ),
        Method::Solve => crate::solve::memory::estimate_paged_solve_bytes(
            positions, board, materials, page_above,
        ),
    };
    (positions, bytes)
}

/// The temporary disk a job on `materials` needs beside its tables, by estimate (the solve
/// method's paged numerators and spilled values,
/// [`crate::solve::memory::estimate_scratch_bytes`]; the iteration keeps none).
pub(crate) fn scratch_estimate(options: &Options, materials: &[Material]) -> u64 {
    match options.method() {
        Method::Iterate => 0,
        Method::Solve => {
            let positions = materials
                .iter()
                .map(|&m| crate::index::estimate_positions(options.board, m))
                .sum();
            crate::solve::memory::estimate_scratch_bytes(
                positions,
                options.board,
                materials,
                options.solve_settings().page_above,
            )
        }
    }
}

/// Run one job: the materials `materials` solved jointly, their exits' values taken from
/// `solved`. Errors: too little memory, an unusable checkpoint, a needed material missing,
/// or (the solve method) no proof reached.
pub fn solve_job(
    options: &Options,
    materials: &[Material],
    obs: &dyn Observer,
    control: &Control<'_>,
    solved: &dyn Solved,
) -> Result<Run, Error> {
    if !control.beside_others {
        check_memory(options, materials, options.solve_settings().page_above)?;
    }
    let board = options.board;
    let started = std::time::Instant::now();
    let cpu_before = resources::pool_cpu_seconds();
    if !control.beside_others {
        resources::reset_peak();
    }
    let mut timings = Timings::default();
    let index = timed(obs, "index", &mut timings.index, || {
        Index::new(board, materials)
    });
    let graph = timed(obs, "graph", &mut timings.graph, || {
        Graph::unless(&index, &|| control.stopping())
    });
    let Some(graph) = graph else {
        return Ok(Run::Interrupted {
            n: 0,
            checkpoint: None,
        });
    };
    let terminals = timed(obs, "boundary", &mut timings.boundary, || {
        crate::boundary::terminals(&graph, solved, &|| control.stopping())
    });
    solved.release();
    let Some((terminals, read)) = terminals? else {
        // Stopped while reading the exits: nothing of this job was saved.
        return Ok(Run::Interrupted {
            n: 0,
            checkpoint: None,
        });
    };
    if read.exits > 0 {
        obs.notice_detail(&format!(
            "exits: {} of {} read in full (the others are never their side's best option)",
            read.needed, read.exits
        ));
    }
    let outcome = match options.method() {
        Method::Iterate => {
            let settings = options.iterate_settings();
            let exact = if iterate::wants_exact_values(&settings, control) {
                exact_values(&graph, obs, control)
            } else {
                iterate::ExactValues::NotAsked
            };
            match iterate::run(&index, &graph, &settings, obs, control, exact)? {
                iterate::Run::Finished(out) => {
                    timings.add_iterate(&out.iteration.timings);
                    let iterate::Outcome {
                        values,
                        certificate,
                        iteration,
                    } = *out;
                    (
                        values,
                        certificate,
                        None,
                        Details::Iterate(Box::new(iteration)),
                    )
                }
                iterate::Run::Interrupted { n, checkpoint } => {
                    return Ok(Run::Interrupted { n, checkpoint });
                }
            }
        }
        Method::Solve => {
            let started = std::time::Instant::now();
            obs.stage("solve");
            let out = match solve::run::run(
                board,
                materials,
                &graph,
                &terminals,
                obs,
                control,
                &options.solve_settings(),
            )? {
                solve::run::Run::Finished(out) => out,
                solve::run::Run::Interrupted { checkpoint } => {
                    return Ok(Run::Interrupted { n: 0, checkpoint });
                }
            };
            let seconds = started.elapsed().as_secs_f64();
            timings.add_stage("solve", seconds);
            obs.stage_done("solve", seconds);
            for s in &out.stats {
                timings.add_solve(s);
            }
            let beta = out.beta.map(|b| UpperBound {
                values: b.values,
                certificate: b.certificate,
            });
            (
                out.alpha.values,
                Some(out.alpha.certificate),
                beta,
                Details::Solve(out.stats),
            )
        }
    };
    let (values, certificate, beta, details) = outcome;
    let alpha_below_beta: Vec<u32> = match &beta {
        Some(upper) => (0..graph.positions())
            .filter(|&p| values.value(p) != upper.values.value(p))
            .map(|p| p as u32)
            .collect(),
        None => Vec::new(),
    };
    let classes = class_reports(
        &index,
        &graph,
        &values,
        certificate.as_ref(),
        beta.as_ref(),
        &alpha_below_beta,
        &details,
    );
    let cost = Cost {
        seconds: started.elapsed().as_secs_f64(),
        peak_mib: resources::peak_mib(),
        peak_heap_mib: resources::anonymous_peak_mib(),
        cpu_seconds: resources::pool_cpu_seconds()
            .zip(cpu_before)
            .map(|(after, before)| after - before),
    };
    Ok(Run::Finished(Box::new(Solution {
        board,
        index,
        graph,
        values,
        certificate,
        beta,
        alpha_below_beta,
        classes,
        timings,
        cost,
        details,
    })))
}

/// Solve `options.materials` jointly in memory, after solving in memory whatever they need
/// (each needed material alone, by the solve method): the library's one-call entry.
pub fn solve(options: &Options, obs: &dyn Observer) -> Result<Solution, Error> {
    let needed: Vec<Material> = Material::with_dependencies(&options.materials)
        .into_iter()
        .filter(|m| !options.materials.contains(m))
        .collect();
    let mut solved = driver::InMemory::default();
    let never_stopped = || Error::Usage("a run without a stop flag was stopped".into());
    if !needed.is_empty() {
        let mut deps = Options::solve(options.board);
        deps.materials = needed;
        match driver::run(&deps, obs, &Control::default(), &mut solved)? {
            driver::Driven::Finished(_, skipped) if skipped.is_empty() => {}
            driver::Driven::Finished(_, skipped) => {
                return Err(Error::Resources(format!(
                    "the materials needed on {} were skipped: {}",
                    options.board,
                    skipped
                        .iter()
                        .map(|s| format!("{} ({})", s.materials.join(", "), s.reason))
                        .collect::<Vec<_>>()
                        .join("; ")
                )));
            }
            driver::Driven::Interrupted(_) => return Err(never_stopped()),
        }
    }
    match solve_job(
        options,
        &options.materials,
        obs,
        &Control::default(),
        &solved,
    )? {
        Run::Finished(sol) => Ok(*sol),
        Run::Interrupted { .. } => Err(never_stopped()),
    }
}

/// The per-material reports of a job.
fn class_reports(
    index: &Index,
    index_graph: &Graph,
    values: &Images,
    cert: Option<&Certificate>,
    beta: Option<&UpperBound>,
    alpha_below_beta: &[u32],
    details: &Details,
) -> Vec<(Material, ClassReport)> {
    let iteration = match details {
        Details::Iterate(it) => Some(it),
        Details::Solve(_) => None,
    };
    let stable_at = iteration.map(|it| it.stable_at(index));
    let beta_cert = beta.map(|b| &b.certificate).or(cert);
    index
        .classes()
        .iter()
        .enumerate()
        .map(|(c, ci)| {
            let range = index.class_range(c);
            let dens = range.clone().map(|i| values.value(i).denom()).chain(
                beta.iter()
                    .flat_map(|b| range.clone().map(|i| b.values.value(i).denom())),
            );
            let max_den = dens
                .max()
                .map_or_else(|| 1u8.into(), std::borrow::Cow::into_owned);
            let max_den = max_den.to_string();
            let in_class = |list: &[u32]| {
                list.iter()
                    .filter(|&&p| range.contains(&(p as usize)))
                    .count()
            };
            let max_level = |levels: &[u32]| {
                range
                    .clone()
                    .map(|i| levels[i])
                    .filter(|&l| l != UNREACHED)
                    .max()
                    .unwrap_or(0)
            };
            let beta_violations = beta.map_or(0, |b| in_class(&b.certificate.violations));
            let graph = index_graph;
            let zugzwangs = cert.map(|_| {
                use rayon::prelude::*;
                range
                    .clone()
                    .into_par_iter()
                    .filter(|&p| {
                        let w = greedy_max(values, graph.white(p));
                        let b = greedy_min(values, graph.black(p));
                        cmp_guess(values, w as usize, b as usize) == std::cmp::Ordering::Less
                    })
                    .count()
            });
            let distinct: std::collections::HashSet<crate::value::Key<'_>> = range
                .clone()
                .flat_map(|i| {
                    std::iter::once(values.value(i)).chain(beta.map(|b| b.values.value(i)))
                })
                .map(crate::value::Key)
                .collect();
            let report = ClassReport {
                guess_changes: iteration
                    .and_then(|it| it.guess_changes.as_ref())
                    .map(|x| x[c]),
                settled: iteration
                    .and_then(|it| it.settled_counts.as_ref())
                    .map(|x| x[c]),
                alpha_below_beta: match details {
                    Details::Solve(_) => Some(
                        alpha_below_beta
                            .iter()
                            .filter(|&&p| range.contains(&(p as usize)))
                            .count(),
                    ),
                    Details::Iterate(_) => None,
                },
                violations: cert.map(|x| in_class(&x.violations) + beta_violations),
                certified_alpha: cert
                    .map(|x| in_class(&x.violations) == 0 && in_class(&x.alpha_failures) == 0),
                certified_beta: beta_cert
                    .map(|x| in_class(&x.violations) == 0 && in_class(&x.beta_failures) == 0),
                quiescent: cert.map(|x| in_class(&x.quiescent)),
                zugzwangs,
                distinct_values: distinct.len(),
                max_level_white: cert.map(|x| max_level(&x.white_levels)),
                max_level_black: beta_cert.map(|x| max_level(&x.black_levels)),
                positions: ci.raw_count(),
                canonical_positions: ci.len(),
                stable_at: stable_at.as_ref().map(|x| x[c]),
                max_denominator_digits: max_den.len(),
                max_denominator: max_den,
            };
            (ci.material(), report)
        })
        .collect()
}
