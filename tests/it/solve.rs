//! The solve method against the study's method and against games built to fool it.

use bidtb::internal::generate::{self, Method, Options, Silent, Solution, report};
use bidtb::internal::graph::Graph;
use bidtb::internal::index::Index;
use bidtb::internal::solve::{self, Bound, Game, Settings, SolveError, proves};
use bidtb::{Board, Position, Square, Value, internal::table};

fn run(board: Board, method: Method) -> Solution {
    let mut options = Options::new(board);
    options.method = method.into();
    generate::solve(&options, &Silent).expect("solves")
}

/// The table files of a run, without their headers (which hold the iteration
/// fields: first Richman iteration, stable-at).
fn bodies(sol: &Solution) -> Vec<Vec<u8>> {
    report::table_contents(sol, false)
        .expect("a certified run has tables")
        .iter()
        .map(|c| table::encode(c)[table::HEADER_LEN..].to_vec())
        .collect()
}

/// Every board with both sides from 2 to 6: the same table bytes after the header, every
/// class (`scripts/compare-methods.sh` does all 49 boards up to 8x8 through the CLI).
#[test]
fn both_methods_write_the_same_tables_on_small_boards() {
    for files in 2..=6 {
        for ranks in 2..=6 {
            let board = Board::new(files, ranks).unwrap();
            let (iterate, solved) = (run(board, Method::Iterate), run(board, Method::Solve));
            assert!(iterate.certified() && solved.certified(), "{board}");
            assert_eq!(solved.first_richman_iteration(), None);
            assert!(solved.alpha_below_beta.is_empty());
            assert_eq!(bodies(&iterate), bodies(&solved), "{board}");
        }
    }
}

fn v(n: u64, d: u64) -> Value {
    Value::small(n, d)
}

/// The exact values of the first `n` nodes of a candidate (the positions).
fn values(c: &solve::Candidate, n: usize) -> Vec<Value> {
    c.values.values()[..n].to_vec()
}

fn quiet() -> impl Fn(solve::Event<'_>) -> bool + Sync {
    |_| true
}

fn solve_bound(graph: &Graph, bound: Bound, settings: &Settings) -> solve::Candidate {
    match solve::solve_bound(Game::closed(graph), bound, settings, &quiet()) {
        Ok(c) => c,
        Err(e) => panic!("{bound:?}: {e:?}"),
    }
}

/// P0, P1: a certified pair (2/3, 1/3); P2, P3 only lead to each other, so α = 0 and β = 1
/// there, while every constant satisfies their equations; P4 moves into both pairs.
fn mixed_game() -> Graph {
    let (win, loss) = (5, 6);
    Graph::from_lists(
        vec![vec![win, 1], vec![0], vec![3], vec![2], vec![0, 2]],
        vec![vec![1], vec![loss, 0], vec![3], vec![2], vec![1, 3]],
    )
}

#[test]
fn alpha_and_beta_apart_on_a_game_where_they_differ() {
    let graph = mixed_game();
    let settings = Settings::default();
    let alpha = solve_bound(&graph, Bound::Alpha, &settings);
    // P4: White's best is P0 (2/3), Black's best P3 (0 under α, 1 under β).
    assert_eq!(
        values(&alpha, 5),
        vec![v(2, 3), v(1, 3), v(0, 1), v(0, 1), v(1, 3)]
    );
    assert!(proves(&alpha.certificate, Bound::Alpha));
    assert!(
        !proves(&alpha.certificate, Bound::Beta),
        "β differs at P2, P3"
    );
    let beta = solve_bound(&graph, Bound::Beta, &settings);
    // P4 under β: White max(2/3, 1) = 1 (P2), Black min(1/3, 1) = 1/3: (1 + 1/3)/2.
    assert_eq!(
        values(&beta, 5),
        vec![v(2, 3), v(1, 3), v(1, 1), v(1, 1), v(2, 3)]
    );
    assert!(proves(&beta.certificate, Bound::Beta));
    assert!(!proves(&beta.certificate, Bound::Alpha));
}

/// β solved with α's values as twins (as a run solves β apart): the same values, and
/// where they equal α's (the certified pair P0, P1) β holds α's copies, not new ones.
#[test]
fn beta_takes_alphas_copies_where_the_values_agree() {
    let graph = mixed_game();
    let alpha = solve_bound(&graph, Bound::Alpha, &Settings::default());
    let alone = solve_bound(&graph, Bound::Beta, &Settings::default());
    let twins: std::sync::Arc<[Option<Value>]> =
        alpha.values.values().iter().cloned().map(Some).collect();
    let settings = Settings {
        twins: Some(twins.clone()),
        ..Settings::default()
    };
    let shared = std::sync::atomic::AtomicUsize::new(0);
    let counting = |event: solve::Event<'_>| {
        if let solve::Event::Twins { shared: n } = event {
            shared.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        }
        true
    };
    let beta = solve::solve_bound(Game::closed(&graph), Bound::Beta, &settings, &counting)
        .expect("β solves");
    assert_eq!(values(&beta, 5), values(&alone, 5));
    assert!(proves(&beta.certificate, Bound::Beta));
    let shared = shared.into_inner();
    // P0 and P1 agree; P2, P3 and P4 differ.
    assert_eq!(shared, 2);
    for p in 0..2 {
        // Solved alone, β's own copy; with the twins, α's (held by α, the twins and β).
        assert!(alone.values.values()[p].is_only_copy(), "P{p}");
        assert!(!beta.values.values()[p].is_only_copy(), "P{p}");
    }
    drop(twins);
}

/// The two-position cycle of the certificate tests: 1/2 everywhere satisfies every
/// equation, but α = 0 and β = 1; the solver must not publish 1/2.
#[test]
fn a_cycle_with_no_exit_gives_alpha_zero_and_beta_one() {
    let graph = Graph::from_lists(vec![vec![1], vec![0]], vec![vec![1], vec![0]]);
    let settings = Settings::default();
    let alpha = solve_bound(&graph, Bound::Alpha, &settings);
    let beta = solve_bound(&graph, Bound::Beta, &settings);
    assert_eq!(values(&alpha, 2), vec![v(0, 1), v(0, 1)]);
    assert_eq!(values(&beta, 2), vec![v(1, 1), v(1, 1)]);
}

/// Strategies chosen without any floating-point iteration (every approximate value 0, so
/// the first moves are near-greedy only towards captures): the exact step finds the moves
/// that are strictly worse, improves them, and ends on the study's values, never on the
/// first strategies' values.
#[test]
fn wrong_strategies_are_detected_and_improved() {
    for (files, ranks) in [(4, 4), (5, 4), (3, 5)] {
        let board = Board::new(files, ranks).unwrap();
        let index = Index::three_piece(board);
        let graph = Graph::new(&index);
        let blind = Settings {
            max_sweeps: 0,
            ..Settings::default()
        };
        let c = solve_bound(&graph, Bound::Alpha, &blind);
        let first = &c.stats.rounds[0];
        assert!(
            first.white_switches + first.black_switches > 0,
            "{board}: the blind strategies are wrong somewhere"
        );
        assert!(c.stats.rounds.len() > 1);
        let reference = run(board, Method::Iterate);
        for p in 0..graph.positions() {
            assert_eq!(c.value(p), reference.values.value(p), "{board} {p}");
        }
    }
}

/// A stop requested by the progress callback stops the solve, with no values.
#[test]
fn a_solve_can_be_stopped() {
    let board = Board::new(4, 4).unwrap();
    let graph = Graph::new(&Index::three_piece(board));
    let stop = |e: solve::Event<'_>| !matches!(e, solve::Event::Stage("exact"));
    let out = solve::solve_bound(
        Game::closed(&graph),
        Bound::Alpha,
        &Settings::default(),
        &stop,
    );
    assert!(matches!(out, Err(SolveError::Stopped)));
}

/// The mirror image of a position across the diagonal, from a F x R board to R x F.
fn transposed(from: Board, to: Board, pos: &Position) -> Position {
    let t = |sq: Square| {
        to.square(from.rank_of(sq), from.file_of(sq))
            .expect("inside the transposed board")
    };
    let squares: Vec<Square> = pos.squares().iter().map(|&s| t(s)).collect();
    Position::new(pos.material(), &squares, None)
}

/// Without pawns nothing distinguishes files from ranks: every pawnless value on F x R is
/// the value of the transposed position on R x F.
#[test]
fn pawnless_values_agree_under_transposition() {
    for (files, ranks) in [(5, 3), (6, 4), (7, 5)] {
        let (a, b) = (
            Board::new(files, ranks).unwrap(),
            Board::new(ranks, files).unwrap(),
        );
        let (sa, sb) = (run(a, Method::Solve), run(b, Method::Solve));
        let mut compared = 0;
        for p in 0..sa.graph.positions() {
            let pos = sa.index.position(p);
            if pos.material().has_pawns() {
                continue;
            }
            let there = transposed(a, b, &pos);
            assert_eq!(sa.value(&pos), sb.value(&there), "{a} {pos:?}");
            compared += 1;
        }
        assert!(compared > 1000, "{a}: {compared}");
    }
}

/// Evaluations stopped at many points (between levels, inside refinements of systems
/// running in parallel) and resumed from what they kept give the uninterrupted values.
#[test]
fn stopped_evaluations_resume_to_the_same_values() {
    use bidtb::internal::solve::BoundState;
    use bidtb::internal::solve::evaluate;
    use bidtb::internal::solve::keep::{BoundStateRef, EvalState, EvalStateRef, Keeper};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let board = Board::new(8, 8).unwrap();
    let index = Index::three_piece(board);
    let graph = Graph::new(&index);
    let game = Game::closed(&graph);
    let alpha = solve_bound(&graph, Bound::Alpha, &Settings::default());
    let (want, whole) =
        evaluate::evaluate(game, &alpha.strategies, Bound::Alpha, &quiet()).unwrap();
    assert!(whole.systems > 10 && whole.largest > 100, "{whole:?}");
    let mut with_refinements = 0;
    let mut with_systems = 0;
    // How often an evaluation asks whether to stop (per level, per refinement round).
    let asked = AtomicUsize::new(0);
    let count = || {
        asked.fetch_add(1, Ordering::SeqCst);
        false
    };
    let counting = Keeper::new(&count, None, &|_| {});
    // Every numerator paged (BIDTB_PAGE_ABOVE=0): the same values.
    let dir = tempfile::tempdir().unwrap();
    let paging = bidtb::internal::solve::spill::Filing {
        dir: dir.path().to_path_buf(),
        above: 0,
    };
    let (same, _) = evaluate::evaluate_kept(
        game,
        &alpha.strategies,
        Bound::Alpha,
        &quiet(),
        EvalState::default(),
        &counting,
        &|_| {},
        Some(&paging),
        None,
    )
    .unwrap();
    assert!(same == want);
    assert!(same.iter().filter(|v| v.is_paged()).count() > 1000);
    let total = asked.load(Ordering::SeqCst);
    assert!(total > 100, "{total}");
    // About 30 stops spread over the whole evaluation (the questions come in bursts: a
    // level's start, each system's start, each refinement round).
    for (k, stop_after) in (1..total).step_by(total / 30 + 1).enumerate() {
        // Every other run pages its numerators: they are saved and taken back the same.
        let filing = (k % 2 == 0).then_some(&paging);
        let asked = AtomicUsize::new(0);
        let stop = || asked.fetch_add(1, Ordering::SeqCst) >= stop_after;
        let keeper = Keeper::new(&stop, None, &|_| {});
        let kept: Mutex<Option<Vec<u8>>> = Mutex::new(None);
        let save = |evaluation: EvalStateRef<'_>| {
            let state = BoundStateRef {
                stats: &alpha.stats,
                strategies: &alpha.strategies,
                white_levels: &alpha.levels.0,
                black_levels: &alpha.levels.1,
                evaluation,
            };
            *kept.lock().unwrap() = Some(postcard::to_allocvec(&state).unwrap());
        };
        let out = evaluate::evaluate_kept(
            game,
            &alpha.strategies,
            Bound::Alpha,
            &quiet(),
            EvalState::default(),
            &keeper,
            &save,
            filing,
            None,
        );
        assert!(matches!(out, Err(SolveError::Stopped)), "{stop_after}");
        let bytes = kept
            .lock()
            .unwrap()
            .take()
            .expect("a stopped evaluation keeps its state");
        let state: BoundState = postcard::from_bytes(&bytes).unwrap();
        assert!(state.fits(&graph));
        with_refinements += usize::from(!state.evaluation.running.is_empty());
        with_systems += usize::from(!state.evaluation.solved.is_empty());
        let (got, stats) = evaluate::evaluate_kept(
            game,
            &alpha.strategies,
            Bound::Alpha,
            &quiet(),
            state.evaluation,
            &Keeper::none(),
            &|_| {},
            filing,
            None,
        )
        .unwrap();
        assert!(got == want, "resumed after {stop_after} questions");
        assert_eq!(stats.components, whole.components);
    }
    assert!(
        with_refinements > 0 && with_systems > 0,
        "{with_refinements} {with_systems} {total} {whole:?}"
    );
}

/// Solves stopped anywhere (before their first strategies, inside an evaluation, between
/// improvement rounds, before the certificate) and resumed from what they kept end on the
/// uninterrupted values after as many rounds: with blind first strategies (several rounds)
/// on a small board, and for both bounds on a game where they differ.
#[test]
fn stopped_solves_resume_to_the_same_values() {
    use bidtb::internal::solve::keep::{BoundStateRef, Keeper};
    use bidtb::internal::solve::{BoundState, solve_bound_kept};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let real = Graph::new(&Index::three_piece(Board::new(5, 4).unwrap()));
    let mixed = mixed_game();
    let blind = Settings {
        max_sweeps: 0,
        ..Settings::default()
    };
    let cases = [
        (&real, Bound::Alpha, blind),
        (&mixed, Bound::Alpha, Settings::default()),
        (&mixed, Bound::Beta, Settings::default()),
    ];
    for (graph, bound, settings) in cases {
        let n = graph.positions();
        let whole = solve_bound(graph, bound, &settings);
        let mut resumed = 0;
        // Every stop point of the small game, every fourth of the board's.
        let step = if n > 100 { 4 } else { 1 };
        for stop_after in (0..5000).step_by(step) {
            let asked = AtomicUsize::new(0);
            let stop = || asked.fetch_add(1, Ordering::SeqCst) >= stop_after;
            let kept: Mutex<Option<Vec<u8>>> = Mutex::new(None);
            let sink = |state: &BoundStateRef<'_>| {
                *kept.lock().unwrap() = Some(postcard::to_allocvec(&[state][..]).unwrap());
            };
            let keeper = Keeper::new(&stop, None, &sink);
            match solve_bound_kept(
                Game::closed(graph),
                bound,
                &settings,
                &quiet(),
                None,
                &keeper,
            ) {
                Ok(c) => {
                    // Finished before the stop: every stop point was tried.
                    assert!(values(&c, n) == values(&whole, n));
                    break;
                }
                Err(SolveError::Stopped) => {}
                Err(SolveError::Failed(why)) => panic!("{why}"),
            }
            // Stopped before the first strategies: nothing to keep.
            let Some(bytes) = kept.lock().unwrap().take() else {
                continue;
            };
            let states: Vec<BoundState> = postcard::from_bytes(&bytes).unwrap();
            let from = states.into_iter().next();
            let c = solve_bound_kept(
                Game::closed(graph),
                bound,
                &settings,
                &quiet(),
                from,
                &Keeper::none(),
            )
            .unwrap();
            assert!(
                values(&c, n) == values(&whole, n),
                "{bound:?} after {stop_after}"
            );
            // Stopped before the certificate, the resumed run re-checks the final moves
            // from the kept values: one more round in its statistics.
            let rounds = c.stats.rounds.len();
            assert!(
                rounds == whole.stats.rounds.len() || rounds == whole.stats.rounds.len() + 1,
                "{rounds}"
            );
            resumed += 1;
        }
        assert!(resumed >= 3, "{bound:?}: {resumed}");
        if bound == Bound::Alpha && n > 100 {
            assert!(
                whole.stats.rounds.len() > 1,
                "blind strategies take several rounds"
            );
        }
    }
}

/// The solve's values hold one copy of each distinct odd part of their denominators
/// between them (what halves their memory with four men, where most have thousands of
/// digits): on 6x6, where the three-piece values have hundreds of distinct denominators,
/// as many copies as distinct odd parts, and under a quarter as many odd parts as
/// denominators (a system's denominator times powers of two below it). Odd part 1 aside (0, 1 and the dyadic
/// values): a value held elsewhere too (the game's terminals are) keeps its own copy when
/// shared (`Value::with_odd`), and theirs is 1, a word.
#[test]
fn solved_values_hold_each_denominator_once() {
    use num_traits::One;
    use std::collections::{BTreeSet, HashSet};
    let sol = run(Board::new(6, 6).unwrap(), Method::Solve);
    let values: Vec<&bidtb::Value> = sol
        .values
        .values()
        .iter()
        .filter(|v| !v.shared_odd().is_one())
        .collect();
    let denominators: BTreeSet<num_bigint::BigUint> =
        values.iter().map(|v| v.denom().into_owned()).collect();
    let odd: BTreeSet<&num_bigint::BigUint> = values.iter().map(|v| &**v.shared_odd()).collect();
    let copies: HashSet<*const num_bigint::BigUint> = values
        .iter()
        .map(|v| std::sync::Arc::as_ptr(v.shared_odd()))
        .collect();
    assert!(
        denominators.len() > 100,
        "{} denominators",
        denominators.len()
    );
    assert_eq!(copies.len(), odd.len());
    assert!(
        4 * odd.len() < denominators.len(),
        "{} denominators, {} odd parts",
        denominators.len(),
        odd.len()
    );
}
