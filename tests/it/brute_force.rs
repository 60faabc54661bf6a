//! The engine against an obviously-correct reference: exact rationals (num-rational), every
//! position separately (no symmetry), no fixed point, on tiny boards. Both methods: the
//! iteration step by step, and the solve method's final values.

use std::collections::HashMap;

use bidtb::internal::generate::{self, Options, Silent};
use bidtb::internal::graph::Graph;
use bidtb::internal::index::Index;
use bidtb::internal::iterate::guesses::Guesses;
use bidtb::internal::iterate::kernel::Kernel;
use bidtb::internal::rules::{self, Outcome};
use bidtb::internal::value::simplest_between;
use bidtb::{Board, Material, Position, Square, Value};
use num_rational::Ratio;
use num_traits::{One, Zero};

/// Exact rationals of any size (the reference's own arithmetic).
type Q = Ratio<num_bigint::BigUint>;

/// The reference: every valid position of every class, values as exact rationals.
struct Reference {
    board: Board,
    positions: Vec<Position>,
    slot: HashMap<Position, usize>,
    alpha: Vec<Q>,
    beta: Vec<Q>,
    guess: Vec<Value>,
    last_change: Vec<u32>,
    n: u32,
}

impl Reference {
    fn new(board: Board) -> Reference {
        let s = board.len() as u8;
        let mut positions = Vec::new();
        for m in Material::three_piece() {
            for wk in 0..s {
                for bk in 0..s {
                    let extra: Vec<Vec<Square>> = if m.man_count() == 3 {
                        (0..s).map(|q| vec![Square(q)]).collect()
                    } else {
                        vec![Vec::new()]
                    };
                    for more in extra {
                        let mut squares = vec![Square(wk), Square(bk)];
                        squares.extend(more);
                        let pos = Position::new(m, &squares, None);
                        if pos.validate(board).is_ok() {
                            positions.push(pos);
                        }
                    }
                }
            }
        }
        let slot = positions.iter().enumerate().map(|(i, p)| (*p, i)).collect();
        let k = positions.len();
        Reference {
            board,
            positions,
            slot,
            alpha: vec![Q::zero(); k],
            beta: vec![Q::one(); k],
            guess: vec![Value::zero(); k],
            last_change: vec![0; k],
            n: 0,
        }
    }

    fn outcome_value(&self, o: Outcome, values: &[Q]) -> Q {
        match o {
            Outcome::WhiteWins => Q::one(),
            Outcome::BlackWins => Q::zero(),
            Outcome::Continue(p) => values[self.slot[&p]].clone(),
        }
    }

    /// (max over White's moves, min over Black's moves) of `values`.
    fn options(&self, i: usize, values: &[Q]) -> (Q, Q) {
        let pos = &self.positions[i];
        let w = rules::white_moves(self.board, pos);
        let b = rules::black_moves(self.board, pos);
        let own = values[i].clone();
        let val = |o| self.outcome_value(o, values);
        let max = w
            .iter()
            .map(|m| val(m.outcome))
            .max()
            .unwrap_or_else(|| own.clone());
        let min = b.iter().map(|m| val(m.outcome)).min().unwrap_or(own);
        (max, min)
    }

    fn step(&mut self) {
        let half = Q::new(1u8.into(), 2u8.into());
        let next = |vals: &[Q]| -> Vec<Q> {
            (0..self.positions.len())
                .map(|i| {
                    let (w, b) = self.options(i, vals);
                    (w + b) * half.clone()
                })
                .collect()
        };
        let (a, b) = (next(&self.alpha), next(&self.beta));
        self.alpha = a;
        self.beta = b;
        self.n += 1;
        for i in 0..self.positions.len() {
            let g = simplest_between(
                &Value::from(self.alpha[i].clone()),
                &Value::from(self.beta[i].clone()),
            );
            if g != self.guess[i] {
                self.guess[i] = g;
                self.last_change[i] = self.n;
            }
        }
    }

    fn is_richman(&self) -> bool {
        let guess: Vec<Q> = self.guess.iter().map(|g| g.to_ratio()).collect();
        (0..self.positions.len()).all(|i| {
            let (w, b) = self.options(i, &guess);
            guess[i].clone() * Q::from_integer(2u8.into()) == w + b
        })
    }
}

fn engine_value(kernel_view: &bidtb::internal::iterate::kernel::View<'_>, i: usize) -> Q {
    kernel_view.value(i).to_ratio()
}

/// αₙ and βₙ identical for every position for the first 40 iterations; guesses and
/// last changes identical throughout; the first Richman iteration identical.
fn compare(files: u8, ranks: u8) {
    let board = Board::new(files, ranks).unwrap();
    let index = Index::three_piece(board);
    let graph = Graph::new(&index);
    let mut reference = Reference::new(board);
    let mut kernel = Kernel::new(&graph, 1);
    let mut guesses = Guesses::new(graph.nodes(), kernel.width());
    let map: Vec<usize> = reference
        .positions
        .iter()
        .map(|p| index.index_of(p).unwrap())
        .collect();
    let mut first_richman = None;
    for _ in 0..400 {
        if kernel.ensure_capacity() {
            guesses.sync_width(&kernel);
        }
        let out = kernel.step(|f| guesses.falls_out(f));
        guesses.update(&kernel, &out);
        reference.step();
        let n = kernel.iteration();
        for (r, &e) in map.iter().enumerate() {
            if n <= 40 {
                assert_eq!(
                    engine_value(&kernel.alpha(), e),
                    reference.alpha[r],
                    "alpha_{n} {:?}",
                    reference.positions[r]
                );
                assert_eq!(
                    engine_value(&kernel.beta(), e),
                    reference.beta[r],
                    "beta_{n} {:?}",
                    reference.positions[r]
                );
            }
            assert_eq!(
                guesses.value(e),
                &reference.guess[r],
                "s_{n} {:?}",
                reference.positions[r]
            );
            assert_eq!(guesses.last_change(e), reference.last_change[r]);
        }
        if reference.is_richman() {
            first_richman = Some(n);
            break;
        }
    }
    let n = first_richman.expect("the reference converges on tiny boards");
    let max_last = reference.last_change.iter().copied().max().unwrap();
    assert_eq!(
        n,
        max_last.max(1),
        "first Richman iteration is the last change"
    );
    // The full run agrees too, both ways: computing every guess and retiring proved
    // positions as early as it can, and (the default) solving the values first and finding
    // each last change from the Stern–Brocot parents of the value.
    for guesses in [true, false] {
        let mut options = Options::new(board);
        let settings = options.iterate_settings_mut();
        settings.guesses = guesses;
        settings.check_every = 1;
        settings.retire_every = 1;
        settings.max_iterations = Some(5000);
        let sol = generate::solve(&options, &Silent).expect("solves");
        let it = sol.iteration().unwrap();
        assert_eq!(it.settled, !guesses);
        assert_eq!(sol.first_richman_iteration(), Some(max_last), "{board}");
        for (r, pos) in reference.positions.iter().enumerate() {
            assert_eq!(sol.value(pos), Some(&reference.guess[r]));
            let e = sol.index.index_of(pos).unwrap();
            assert_eq!(
                it.last_change[e], reference.last_change[r],
                "guesses {guesses}: {pos:?}"
            );
        }
    }
    // The solve method reaches the reference's Richman function by another road: the
    // materials jointly, and one material at a time in dependency order.
    let options = Options::solve(board);
    let solved = generate::solve(&options, &Silent).expect("solves");
    assert!(solved.certified(), "{board}");
    let one_by_one = generate::solve_all(&options, &Silent).unwrap();
    assert_eq!(one_by_one.len(), 6);
    for (r, pos) in reference.positions.iter().enumerate() {
        assert_eq!(
            solved.value(pos),
            Some(&reference.guess[r]),
            "solve {pos:?}"
        );
        let alone = one_by_one
            .iter()
            .find(|s| s.index.class_number(pos.material()).is_some())
            .unwrap();
        assert!(alone.certified());
        assert_eq!(alone.value(pos), Some(&reference.guess[r]), "alone {pos:?}");
    }
}

#[test]
fn engine_matches_reference_on_2x2() {
    compare(2, 2);
}

#[test]
fn engine_matches_reference_on_3x3() {
    compare(3, 3);
}

#[test]
fn engine_matches_reference_on_4x3() {
    compare(4, 3);
}

#[test]
fn engine_matches_reference_on_3x4() {
    compare(3, 4);
}

#[test]
fn engine_matches_reference_on_2x5() {
    compare(2, 5);
}

/// Properties of the reference itself on a small board: αₙ non-decreasing, βₙ
/// non-increasing, αₙ ≤ βₙ, and every value invariant under the board's symmetries.
#[test]
fn bounds_are_monotone_and_symmetric() {
    let board = Board::new(4, 3).unwrap();
    let index = Index::three_piece(board);
    let mut reference = Reference::new(board);
    for _ in 0..30 {
        let (a0, b0) = (reference.alpha.clone(), reference.beta.clone());
        reference.step();
        for i in 0..a0.len() {
            assert!(a0[i] <= reference.alpha[i], "alpha must not decrease");
            assert!(b0[i] >= reference.beta[i], "beta must not increase");
            assert!(reference.alpha[i] <= reference.beta[i]);
        }
        for (i, pos) in reference.positions.iter().enumerate() {
            let c = &index.classes()[index.class_of(index.index_of(pos).unwrap())];
            for &sym in c.symmetries() {
                let j = reference.slot[&pos.transform(board, sym)];
                assert_eq!(reference.alpha[i], reference.alpha[j]);
                assert_eq!(reference.beta[i], reference.beta[j]);
            }
        }
    }
}
