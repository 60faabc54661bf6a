//! Retiring proved positions changes nothing a run reports: the same guesses, last changes,
//! first Richman iteration and certificate as a run that computes every position to the
//! end; and it does retire positions.

use bidtb::internal::generate::{self, Options, Silent, Solution};
use bidtb::{Board, Material};

fn solve(board: Board, retire_every: u32) -> Solution {
    let mut options = Options::new(board);
    // Retirement by the certificate belongs to the guessing path.
    let settings = options.iterate_settings_mut();
    settings.guesses = true;
    settings.retire_every = retire_every;
    // A broken retirement may keep the run from converging: fail, do not hang.
    options.iterate_settings_mut().max_iterations = Some(5000);
    generate::solve(&options, &Silent).expect("solves")
}

fn same_results(files: u8, ranks: u8) {
    let board = Board::new(files, ranks).unwrap();
    let (plain, retiring) = (solve(board, 0), solve(board, 4));
    let (pi, ri) = (plain.iteration().unwrap(), retiring.iteration().unwrap());
    assert_eq!(pi.kernel.retired, 0);
    assert!(
        ri.kernel.retired > 0,
        "{board}: some positions are proved and retired before the end"
    );
    assert_eq!(
        plain.first_richman_iteration(),
        retiring.first_richman_iteration()
    );
    assert!(plain.certified() && retiring.certified());
    for i in 0..plain.graph.positions() {
        assert_eq!(
            plain.values.value(i),
            retiring.values.value(i),
            "{board} {i}"
        );
        assert_eq!(pi.last_change[i], ri.last_change[i], "{board} {i}");
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

/// Compacting the kernel to the positions some sought ones need changes none of their
/// values: every kept position's αₙ and βₙ equal those of a kernel that computes every
/// position, at every later iteration, across a widening.
#[test]
fn compacting_the_kernel_changes_no_kept_value() {
    use bidtb::internal::graph::Graph;
    use bidtb::internal::index::Index;
    use bidtb::internal::iterate::kernel::Kernel;

    let index = Index::three_piece(Board::new(5, 4).unwrap());
    let graph = Graph::new(&index);
    let (mut full, mut compact) = (Kernel::new(&graph, 2), Kernel::new(&graph, 2));
    let step = |k: &mut Kernel| {
        k.ensure_capacity();
        k.step(|_| false);
    };
    for _ in 0..20 {
        step(&mut full);
        step(&mut compact);
    }
    // Seek every third position of the last class (KPvK): the rest of the class and other
    // classes stay only where these read them.
    let last = index.classes().len() - 1;
    let range = index.class_range(last);
    let sought: Vec<bool> = (0..graph.positions())
        .map(|p| range.contains(&p) && p % 3 == 0)
        .collect();
    let kept = compact.compact(&sought);
    assert!(kept.len() < graph.positions(), "something is dropped");
    assert!(
        (0..graph.positions()).all(|p| !sought[p] || kept.contains(&(p as u32))),
        "every sought position is kept"
    );
    assert_eq!(
        compact.retired(),
        graph.positions() - kept.len(),
        "dropped positions count as retired"
    );
    let mut widened = false;
    for _ in 0..200 {
        widened |= full.needs_widening();
        step(&mut full);
        step(&mut compact);
        for (new, &old) in kept.iter().enumerate() {
            let old = old as usize;
            assert_eq!(
                compact.alpha().row(new),
                full.alpha().row(old),
                "α of {old}"
            );
            assert_eq!(compact.beta().row(new), full.beta().row(old), "β of {old}");
        }
    }
    assert!(widened, "the test crosses a widening");
}
