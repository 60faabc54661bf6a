//! Issue acceptance: every class certified (α = s = β proved) on small boards, and the
//! closures' levels consistent with the values.

use bidtb::internal::certificate::UNREACHED;
use bidtb::{Options, Silent, solve};

#[test]
fn small_boards_are_certified_in_every_class() {
    for board in ["4x4", "3x4", "8x3", "2x2", "3x3"] {
        let sol = solve(&Options::new(board.parse().unwrap()), &Silent).expect("solves");
        assert!(sol.converged(), "{board}");
        assert!(sol.certified(), "{board}");
        for (m, c) in &sol.classes {
            assert_eq!(c.certified_alpha, Some(true), "{board} {m}");
            assert_eq!(c.certified_beta, Some(true), "{board} {m}");
        }
        // Level 0 is only for the terminal nodes; every position that must be in T is at a
        // positive level, and positions with value 0 may stay out.
        let cert = sol.certificate.as_ref().unwrap();
        for p in 0..sol.graph.positions() {
            let v = sol.values.value(p);
            if !v.is_zero() {
                assert!(cert.white_levels[p] >= 1 && cert.white_levels[p] != UNREACHED);
            }
            if !v.is_one() {
                assert!(cert.black_levels[p] >= 1 && cert.black_levels[p] != UNREACHED);
            }
        }
    }
}

#[test]
fn a_capped_run_has_no_certificate() {
    let mut options = Options::new("4x4".parse().unwrap());
    options.iterate_settings_mut().max_iterations = Some(10);
    let sol = solve(&options, &Silent).expect("solves");
    assert!(!sol.converged());
    assert!(sol.certificate.is_none());
    assert!(!sol.certified());
    assert!(sol.classes.iter().all(|(_, c)| c.certified_alpha.is_none()));
}
