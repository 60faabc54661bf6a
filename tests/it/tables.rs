//! Table files and the probe against the engine: round trips, the colour-flip mirror, the
//! Richman equation seen through the probe, corrupted files, and verification of tampered
//! tables.

use std::path::Path;

use bidtb::Tablebase;
use bidtb::internal::generate::{Options, Silent, Solution, report, solve};
use bidtb::internal::index::{self, Index};
use bidtb::{Board, Error, Material, Position, Value, fen, internal::table, internal::verify};

fn m(name: &str) -> Material {
    name.parse().unwrap()
}

fn solve_board(spec: &str) -> Solution {
    let sol = solve(&Options::new(spec.parse().unwrap()), &Silent).expect("solves");
    assert!(sol.certified(), "{spec}");
    sol
}

/// Write the tables of a solution under `root` (as `bidtb generate` does).
fn write_tables(sol: &Solution, root: &Path) {
    let dir = root.join(sol.board.to_string());
    std::fs::create_dir_all(&dir).unwrap();
    bidtb::internal::generate::write::write_tables(sol, &dir, false).unwrap();
}

/// Every valid position of the board's three-piece materials, without symmetry
/// reduction.
fn all_positions(board: Board) -> Vec<Position> {
    let mut out = Vec::new();
    for m in Material::three_piece() {
        out.extend(
            (0..index::key_space(board, m))
                .filter_map(|k| index::position_of_key(board, m, k))
                .filter(|p| p.validate(board).is_ok()),
        );
    }
    out
}

#[test]
fn round_trip_every_position_and_level() {
    let root = tempfile::tempdir().unwrap();
    for spec in ["4x4", "3x4", "5x3", "2x2"] {
        let sol = solve_board(spec);
        write_tables(&sol, root.path());
        let tb = Tablebase::open(root.path()).unwrap();
        let cert = sol.certificate.as_ref().unwrap();
        for pos in all_positions(sol.board) {
            let e = tb.entry(sol.board, &pos).unwrap();
            let g = sol.index.index_of(&pos).unwrap();
            assert_eq!(&e.value, sol.values.value(g), "{}", pos.describe(sol.board));
            assert_eq!(e.level_white, Some(cert.white_levels[g]));
            assert_eq!(e.level_black, Some(cert.black_levels[g]));
        }
        for m in Material::three_piece() {
            let info = tb.table(sol.board, m).unwrap().info().clone();
            assert_eq!(info.first_richman_iteration, sol.first_richman_iteration());
            assert!(info.certified());
        }
    }
}

#[test]
fn black_pieces_answer_one_minus_the_mirror() {
    let root = tempfile::tempdir().unwrap();
    let sol = solve_board("4x4");
    write_tables(&sol, root.path());
    let tb = Tablebase::open(root.path()).unwrap();
    let board = sol.board;
    let flip_uci = |u: &str| {
        let b = |s: &str| board.square_name(board.flip_ranks(board.parse_square(s).unwrap()));
        format!("{}{}{}", b(&u[0..2]), b(&u[2..4]), &u[4..])
    };
    let mut checked = 0;
    for pos in all_positions(board).into_iter().filter(|p| p.len() == 3) {
        let direct = tb.probe(board, &pos).unwrap();
        let text = fen::write(board, &pos.mirror(board));
        let black = tb.probe_fen(&text).unwrap();
        assert_eq!(black.value, direct.value.complement(), "{text}");
        assert!(black.class.starts_with("KvK"), "{}", black.class);
        // Real White's moves are the mirror's Black moves, squares flipped, values 1 − v.
        let mapped: Vec<_> = direct
            .black
            .iter()
            .map(|m| (flip_uci(&m.uci), m.value.complement(), m.level))
            .collect();
        let mut got: Vec<_> = black
            .white
            .iter()
            .map(|m| (m.uci.clone(), m.value.clone(), m.level))
            .collect();
        let mut want = mapped;
        got.sort();
        want.sort();
        assert_eq!(got, want, "{text}");
        assert_eq!(black.level_white, direct.level_black);
        assert_eq!(black.bid, direct.bid);
        // Every move names the position it leads to, and probing that gives its value.
        assert_eq!(black.fen, text);
        for (p, m) in [&direct, &black]
            .into_iter()
            .flat_map(|p| p.white.iter().chain(&p.black).map(move |m| (p, m)))
        {
            match &m.fen {
                Some(f) => assert_eq!(
                    tb.probe_fen(f).unwrap().value,
                    m.value,
                    "{} {}",
                    p.fen,
                    m.uci
                ),
                None => assert!(m.value.is_one() || m.value.is_zero()),
            }
        }
        checked += 1;
    }
    assert!(checked > 1000);
}

#[test]
fn probes_satisfy_the_richman_equation_and_order_moves() {
    let root = tempfile::tempdir().unwrap();
    let sol = solve_board("4x3");
    write_tables(&sol, root.path());
    let tb = Tablebase::open(root.path()).unwrap();
    let two = num_rational::Ratio::from_integer(2u8.into());
    let mut zugzwangs = 0;
    for pos in all_positions(sol.board) {
        let p = tb.probe(sol.board, &pos).unwrap();
        let x_w = p.best_white().map_or(&p.value, |m| &m.value);
        let x_b = p.best_black().map_or(&p.value, |m| &m.value);
        assert_eq!(
            p.value.to_ratio() * &two,
            x_w.to_ratio() + x_b.to_ratio(),
            "{}",
            pos.describe(sol.board)
        );
        assert!(p.white.windows(2).all(|w| w[0].value >= w[1].value));
        assert!(p.black.windows(2).all(|w| w[0].value <= w[1].value));
        // Best moves come first among the greedy ones with the lowest level, and a greedy
        // move into level k puts the position at level k + 1 at most.
        for (list, own) in [(&p.white, p.level_white), (&p.black, p.level_black)] {
            let Some(best) = list.first() else { continue };
            let greedy = list.iter().take_while(|m| m.value == best.value);
            let key = |l: Option<u32>| l.unwrap_or(u32::MAX);
            assert!(greedy.clone().all(|m| key(m.level) >= key(best.level)));
            if let (Some(own), Some(l)) = (own, best.level) {
                assert!(own <= l + 1, "{}", pos.describe(sol.board));
            }
        }
        zugzwangs += p.zugzwang as usize;
        assert_eq!(p.zugzwang, x_w < x_b);
    }
    assert!(zugzwangs < all_positions(sol.board).len());
}

/// Write bytes as the KRvK table of a board directory and open the directory.
fn open_with(root: &Path, board: &str, bytes: &[u8]) -> Result<Tablebase, Error> {
    let path = root.join(board).join("KRvK.bidtb");
    std::fs::write(&path, bytes).unwrap();
    Tablebase::open(root)
}

#[test]
fn truncated_and_flipped_files_are_errors_naming_the_file() {
    let root = tempfile::tempdir().unwrap();
    let sol = solve_board("4x4");
    write_tables(&sol, root.path());
    let path = root.path().join("4x4/KRvK.bidtb");
    let good = std::fs::read(&path).unwrap();
    let mut offsets: Vec<usize> = (0..table::HEADER_LEN).collect();
    offsets.extend((table::HEADER_LEN..good.len()).step_by(7));
    for &len in &offsets {
        let err = open_with(root.path(), "4x4", &good[..len]).unwrap_err();
        assert!(err.to_string().contains("KRvK.bidtb"), "{len}: {err}");
    }
    // A flip is refused at open, or (in the dictionary's bytes, whose blocks are checked
    // as they are read) the file opens, every value reads as before or is refused, and
    // checking every checksum names the file.
    let board: Board = "4x4".parse().unwrap();
    let before: Vec<Value> = {
        let tb = open_with(root.path(), "4x4", &good).unwrap();
        let t = tb.table(board, m("KRvK")).unwrap();
        (0..t.len()).map(|i| t.value(i).unwrap()).collect()
    };
    let mut opened = 0;
    for &at in &offsets {
        for bit in [0x01u8, 0x80] {
            let mut bytes = good.clone();
            bytes[at] ^= bit;
            let tb = match open_with(root.path(), "4x4", &bytes) {
                Err(err) => {
                    assert!(err.to_string().contains("KRvK.bidtb"), "{at}: {err}");
                    continue;
                }
                Ok(tb) => tb,
            };
            opened += 1;
            let t = tb.table(board, m("KRvK")).unwrap();
            let mut refused = 0;
            for (i, want) in before.iter().enumerate() {
                match t.value(i) {
                    Ok(v) => assert_eq!(v, *want, "{at}: position {i}"),
                    Err(_) => refused += 1,
                }
            }
            assert!(refused > 0, "{at}: every value read");
            let err = t.check_all().unwrap_err();
            assert!(err.to_string().contains("KRvK.bidtb"), "{at}: {err}");
        }
    }
    assert!(opened > 0, "no flip reached the dictionary");
    // A file of another board or class under this board's name is refused.
    let other = std::fs::read(root.path().join("4x4/KQvK.bidtb")).unwrap();
    let err = open_with(root.path(), "4x4", &other)
        .unwrap_err()
        .to_string();
    assert!(err.contains("holds KQvK"), "{err}");
    // Restored, it opens again.
    assert!(open_with(root.path(), "4x4", &good).is_ok());
}

#[test]
fn missing_tables_say_how_to_generate_them() {
    let root = tempfile::tempdir().unwrap();
    let sol = solve_board("3x3");
    write_tables(&sol, root.path());
    std::fs::remove_file(root.path().join("3x3/KvK.bidtb")).unwrap();
    let tb = Tablebase::open(root.path()).unwrap();
    // KRvK itself is there, but the rook capture leads to KvK.
    let err = tb.probe_fen("k2/1R1/K2").unwrap_err().to_string();
    assert!(err.contains("KvK.bidtb"), "{err}");
    assert!(err.contains("bidtb generate --board 3x3"), "{err}");
    let err = tb.probe_fen("k3/4/4/K2R").unwrap_err().to_string();
    assert!(err.contains("4x4"), "{err}");
}

/// Re-encode one class of a solution with its values or levels changed.
fn tamper<'a>(
    sol: &'a Solution,
    root: &Path,
    material: Material,
    change: impl Fn(&mut table::Contents<'a>),
) {
    let mut all = report::table_contents(sol, false).unwrap();
    let c = all.iter_mut().find(|c| c.material == material).unwrap();
    change(c);
    let path = root
        .join(sol.board.to_string())
        .join(table::file_name(material));
    table::write(&path, c).unwrap();
}

#[test]
fn verification_catches_tampered_values_and_levels() {
    let root = tempfile::tempdir().unwrap();
    let sol = solve_board("4x4");
    write_tables(&sol, root.path());
    let board = sol.board;
    let check = |root: &Path| verify::verify_board(&Tablebase::open(root).unwrap(), board).unwrap();
    assert!(check(root.path()).ok);

    // One value changed by 1/1024: the checksums are right, the equations are not.
    let nudged = Value::from(
        sol.values
            .value(sol.index.class_range(4).start + 7)
            .to_ratio()
            + Value::small(1, 1024).to_ratio(),
    );
    tamper(&sol, root.path(), m("KNvK"), |c| c.values[7] = &nudged);
    let report = check(root.path());
    assert!(!report.ok);
    assert!(report.classes["KNvK"].violations > 0, "{report:?}");

    // Levels changed: the closures say otherwise.
    write_tables(&sol, root.path());
    tamper(&sol, root.path(), m("KRvK"), |c| c.levels_white[3] += 1);
    let report = check(root.path());
    assert!(!report.ok);
    assert_eq!(report.classes["KRvK"].level_mismatches, 1);

    // A table claiming no certificate is reported.
    write_tables(&sol, root.path());
    tamper(&sol, root.path(), m("KQvK"), |c| c.certified_beta = false);
    let report = check(root.path());
    assert!(
        !report.ok && report.problems[0].contains("KQvK"),
        "{report:?}"
    );

    // KvK's 1/2 stored as 2/4 (a factor of two) or 3/6 (an odd numerator sharing a factor
    // with the denominator's odd part): the same number, but not in lowest terms, which the
    // format requires (and the probe would otherwise print).
    for (p, q) in [(2u8, 4u8), (3, 6)] {
        write_tables(&sol, root.path());
        let unreduced = Value::new_raw(p.into(), q.into());
        tamper(&sol, root.path(), Material::KVK, |c| {
            c.values.iter_mut().for_each(|v| *v = &unreduced)
        });
        let report = check(root.path());
        assert!(
            !report.ok && report.problems.iter().any(|p| p.contains("lowest terms")),
            "{p}/{q}: {report:?}"
        );
        let probed = Tablebase::open(root.path())
            .unwrap()
            .probe_fen("4/4/4/K2k")
            .unwrap();
        assert_eq!(bidtb::internal::probe::fraction(&probed.value), "1/2");
    }

    // KvK is 1/2 everywhere; 1/3 everywhere is refused.
    write_tables(&sol, root.path());
    let third = Value::new(1u8.into(), 3u8.into());
    tamper(&sol, root.path(), Material::KVK, |c| {
        c.values.iter_mut().for_each(|v| *v = &third)
    });
    assert!(!check(root.path()).ok);
}

#[test]
fn the_index_order_is_the_file_order() {
    let board: Board = "5x5".parse().unwrap();
    let index = Index::new(board, &Material::all_up_to(4));
    for class in index.classes() {
        for i in 0..class.len() {
            let pos = class.position(i);
            assert_eq!(class.key(i), index::canonical_key(board, &pos));
            assert_eq!(class.index_of(&pos), Some(i));
        }
        assert!((1..class.len()).all(|i| class.key(i - 1) < class.key(i)));
    }
}

/// The FEN with the black king moved to `file`, `rank` (0-based from a1), by editing the text.
fn with_black_king(fen: &str, file: usize, rank: usize) -> String {
    let rows: Vec<&str> = fen.split('/').collect();
    let mut grid: Vec<Vec<char>> = rows
        .iter()
        .map(|row| {
            let mut cells = Vec::new();
            let mut run = 0;
            for c in row.chars() {
                if let Some(d) = c.to_digit(10) {
                    run = run * 10 + d as usize;
                } else {
                    cells.extend(std::iter::repeat_n('.', run));
                    run = 0;
                    cells.push(if c == 'k' { '.' } else { c });
                }
            }
            cells.extend(std::iter::repeat_n('.', run));
            cells
        })
        .collect();
    let r = grid.len() - 1 - rank;
    grid[r][file] = 'k';
    grid.iter()
        .map(|cells| {
            let mut row = String::new();
            let mut run = 0;
            for &c in cells {
                if c == '.' {
                    run += 1;
                    continue;
                }
                if run > 0 {
                    row += &run.to_string();
                    run = 0;
                }
                row.push(c);
            }
            if run > 0 {
                row += &run.to_string();
            }
            row
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[test]
fn value_maps_agree_with_probes_square_by_square() {
    let root = tempfile::tempdir().unwrap();
    let sol = solve_board("4x3");
    write_tables(&sol, root.path());
    let tb = Tablebase::open(root.path()).unwrap();
    let board = sol.board;
    let mut checked = 0;
    for pos in all_positions(board) {
        for shown in [pos, pos.mirror(board)] {
            let fen = fen::write(board, &shown);
            let map = bidtb::internal::probe::map::ValueMap::of_fen(&tb, &fen).unwrap();
            assert_eq!(map.fen, fen);
            for (r, row) in map.rows().iter().enumerate() {
                for (f, &s) in row.iter().enumerate() {
                    let rank = board.ranks() as usize - 1 - r;
                    let occupied = map.pieces.iter().any(|&(q, _)| q == s);
                    match map.at(s) {
                        None => assert!(occupied, "{fen} {f} {rank}"),
                        Some(v) => {
                            assert!(!occupied);
                            let there = with_black_king(&fen, f, rank);
                            assert_eq!(&tb.probe_fen(&there).unwrap().value, v, "{there}");
                            checked += 1;
                        }
                    }
                }
            }
            assert_eq!(map.pieces.len(), pos.len() - 1);
            assert_eq!(
                map.at(map.black_king),
                Some(&tb.probe_fen(&fen).unwrap().value)
            );
        }
    }
    assert!(checked > 10_000, "{checked}");
}
