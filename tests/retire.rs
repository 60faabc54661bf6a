//! Retiring proved positions changes nothing a run reports: the same guesses, last changes,
//! first Richman iteration and certificate as a run that computes every position to the
//! end; and it does retire positions.

use bidtb::generate::{self, Options, Silent, Solution};
use bidtb::{Board, Material};

fn solve(board: Board, retire_every: u32) -> Solution {
    let mut options = Options::new(board);
    // Retirement by the certificate belongs to the guessing path.
    options.guesses = true;
    options.retire_every = retire_every;
    // A broken retirement may keep the run from converging: fail, do not hang.
    options.max_iterations = Some(5000);
    generate::solve(&options, &Silent)
}

fn same_results(files: u8, ranks: u8) {
    let board = Board::new(files, ranks).unwrap();
    let (plain, retiring) = (solve(board, 0), solve(board, 4));
    assert_eq!(plain.kernel_stats.as_ref().unwrap().retired, 0);
    assert!(
        retiring.kernel_stats.as_ref().unwrap().retired > 0,
        "{board}: some positions are proved and retired before the end"
    );
    assert_eq!(
        plain.first_richman_iteration,
        retiring.first_richman_iteration
    );
    assert!(plain.certified() && retiring.certified());
    for i in 0..plain.graph.positions() {
        assert_eq!(
            plain.guesses.value(i),
            retiring.guesses.value(i),
            "{board} {i}"
        );
        assert_eq!(
            plain.guesses.last_change(i),
            retiring.guesses.last_change(i),
            "{board} {i}"
        );
    }
    let stable = |s: &Solution| -> Vec<(Material, Option<u32>)> {
        s.classes.iter().map(|(m, r)| (*m, r.stable_at)).collect()
    };
    assert_eq!(stable(&plain), stable(&retiring));
}

#[test]
fn retiring_changes_no_result_on_4x4() {
    same_results(4, 4);
}

#[test]
fn retiring_changes_no_result_on_5x4() {
    same_results(5, 4);
}
