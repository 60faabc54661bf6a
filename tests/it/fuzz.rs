//! Fuzzing the two ways data comes in: FEN text and table files. Every input must give an
//! error or a correct answer: never a panic, an out-of-bounds read or a hang. Damaged
//! table files are read in memory (`Table::from_bytes`, the validation a mapped file
//! gets); those that open are also written and read as files.
//!
//! Case counts per CI run: 100,000 FEN strings (40,000 arbitrary, 30,000 over the FEN
//! alphabet, 30,000 mutations of valid FENs) and 10,000 mutated table files. Multiply them
//! with `BIDTB_FUZZ_SCALE`, e.g. `BIDTB_FUZZ_SCALE=100 cargo test --release --test fuzz`
//! for a long run.

use std::path::Path;
use std::sync::LazyLock;

use bidtb::Tablebase;
use bidtb::internal::generate::{Options, Silent, report, solve_all};
use bidtb::{Board, Material, Position, Square, fen, internal::table};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

fn scaled(cases: u32) -> u32 {
    let scale: u32 = std::env::var("BIDTB_FUZZ_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1);
    cases.saturating_mul(scale.max(1))
}

fn runner(cases: u32) -> TestRunner {
    TestRunner::new(Config {
        cases: scaled(cases),
        failure_persistence: None,
        ..Config::default()
    })
}

/// A parse result is correct when it is a valid position and writing it back gives the
/// input's placement exactly (the parser accepts only canonical placements), and the whole
/// FEN written back parses to the same position.
fn check_parse(text: &str) -> Result<(), TestCaseError> {
    if let Ok(p) = fen::parse(text) {
        prop_assert!(p.position.validate(p.board).is_ok(), "{text}");
        let field = text.split_whitespace().next().unwrap_or_default();
        prop_assert_eq!(fen::placement(p.board, &p.position), field, "{}", text);
        let again = fen::parse(&fen::write(p.board, &p.position)).unwrap();
        prop_assert_eq!(again, p, "{}", text);
    }
    Ok(())
}

/// Every material up to four men, in both colour orientations.
static MATERIALS: LazyLock<Vec<Material>> = LazyLock::new(|| {
    let mut all = Material::all_up_to(4);
    all.extend(all.clone().iter().map(Material::mirror));
    all.sort();
    all.dedup();
    all
});

/// A valid FEN of a random position of a random material on a random board.
fn valid_fen() -> impl Strategy<Value = String> {
    (2u8..=16, 2u8..=16, any::<u64>(), any::<usize>()).prop_filter_map(
        "a valid position",
        |(f, r, seed, which)| {
            let board = Board::new(f, r).unwrap();
            let s = board.len() as u64;
            let material = MATERIALS[which % MATERIALS.len()];
            let squares: Vec<Square> = (0..material.man_count() as u64)
                .map(|k| Square(((seed >> (13 * k)) % s) as u8))
                .collect();
            let pos = Position::new(material, &squares, None);
            pos.validate(board).ok()?;
            Some(fen::write(board, &pos))
        },
    )
}

#[derive(Clone, Debug)]
enum Edit {
    Insert(usize, char),
    Delete(usize),
    Replace(usize, char),
}

fn edits() -> impl Strategy<Value = Vec<Edit>> {
    let ch = prop::sample::select("kKqQrRbBnNpPx0123456789/ -".chars().collect::<Vec<_>>());
    let edit = prop_oneof![
        (any::<usize>(), ch.clone()).prop_map(|(i, c)| Edit::Insert(i, c)),
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), ch).prop_map(|(i, c)| Edit::Replace(i, c)),
    ];
    prop::collection::vec(edit, 1..4)
}

fn apply(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for e in edits {
        let n = chars.len();
        match *e {
            Edit::Insert(i, c) => chars.insert(i % (n + 1), c),
            Edit::Delete(i) if n > 0 => {
                chars.remove(i % n);
            }
            Edit::Replace(i, c) if n > 0 => chars[i % n] = c,
            _ => {}
        }
    }
    chars.into_iter().collect()
}

#[test]
fn fen_parser_on_arbitrary_text() {
    runner(40_000)
        .run(&"\\PC{0,60}", |s| check_parse(&s))
        .unwrap();
}

#[test]
fn fen_parser_on_fen_alphabet() {
    runner(30_000)
        .run(&"[kKqQrRbBnNpP0-9/ ]{0,80}", |s| check_parse(&s))
        .unwrap();
}

#[test]
fn fen_parser_on_mutated_valid_fens() {
    runner(30_000)
        .run(&(valid_fen(), edits()), |(fen_text, edits)| {
            // The valid FEN itself parses and writes back.
            prop_assert!(fen::parse(&fen_text).is_ok(), "{}", fen_text);
            check_parse(&fen_text)?;
            check_parse(&apply(&fen_text, &edits))
        })
        .unwrap();
}

/// The 4x4 tables of a few four-piece materials (KBvKN has α < β: a β section) and what
/// they need, encoded.
static TABLES: LazyLock<Vec<(Material, Vec<u8>)>> = LazyLock::new(|| {
    let mut options = Options::solve("4x4".parse().unwrap());
    options.materials = ["KRvKN", "KPvKP", "KBvKN"]
        .iter()
        .map(|m| m.parse().unwrap())
        .collect();
    solve_all(&options, &Silent)
        .unwrap()
        .iter()
        .flat_map(|sol| {
            report::table_contents(sol, false)
                .unwrap()
                .iter()
                .map(|c| (c.material, table::encode(c)))
                .collect::<Vec<_>>()
        })
        .collect()
});

#[derive(Clone, Debug)]
enum Damage {
    Flip(usize, u8),
    Truncate(usize),
    Append(Vec<u8>),
    Overwrite(usize, Vec<u8>),
}

fn damage() -> impl Strategy<Value = Damage> {
    prop_oneof![
        (any::<usize>(), 1u8..=255).prop_map(|(i, b)| Damage::Flip(i, b)),
        any::<usize>().prop_map(Damage::Truncate),
        prop::collection::vec(any::<u8>(), 1..16).prop_map(Damage::Append),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(i, b)| Damage::Overwrite(i, b)),
    ]
}

fn damaged(bytes: &[u8], damage: &[Damage]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    for d in damage {
        let n = b.len().max(1);
        match d {
            Damage::Flip(i, x) => {
                if !b.is_empty() {
                    b[i % n] ^= x;
                }
            }
            Damage::Truncate(i) => b.truncate(i % n),
            Damage::Append(more) => b.extend_from_slice(more),
            Damage::Overwrite(i, with) => {
                for (k, x) in with.iter().enumerate() {
                    if let Some(slot) = b.get_mut(i % n + k) {
                        *slot = *x;
                    }
                }
            }
        }
    }
    b
}

/// Recompute every checksum (of a version 5 or 6 header: the blocks' where the header's
/// offsets allow, those checked at open, the body's and the header's), so that the damage
/// reaches the structural checks.
fn fix_checksums(b: &mut [u8]) {
    let h = table::HEADER_LEN;
    if b.len() < h {
        return;
    }
    let field = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    // Version 6's blocks start after the header, version 5's at the dictionary.
    let version = u32::from_le_bytes(b[8..12].try_into().unwrap());
    let start = if version == 5 {
        field(b, 152) as usize
    } else {
        h
    };
    let end = field(b, 168) as usize;
    let block = u32::from_le_bytes(b[164..168].try_into().unwrap()) as usize;
    if h <= start && start <= end && end <= b.len() && block > 0 {
        let sums: Vec<u8> = b[start..end]
            .chunks(block)
            .flat_map(|c| crc32fast::hash(c).to_le_bytes())
            .collect();
        let n = sums.len().min(b.len() - end);
        b[end..end + n].copy_from_slice(&sums[..n]);
        let mut front = crc32fast::Hasher::new();
        front.update(&b[h..start]);
        front.update(&b[end..]);
        b[160..164].copy_from_slice(&front.finalize().to_le_bytes());
    }
    let body = crc32fast::hash(&b[h..]);
    b[136..140].copy_from_slice(&body.to_le_bytes());
    let header = crc32fast::hash(&b[..h - 4]);
    b[h - 4..h].copy_from_slice(&header.to_le_bytes());
}

fn probe_everything(dir: &Path, material: Material) {
    let Ok(tb) = Tablebase::open(dir) else {
        return;
    };
    let board: Board = "4x4".parse().unwrap();
    let space = bidtb::internal::index::key_space(board, material);
    for k in (0..space).step_by(371) {
        let Some(pos) = bidtb::internal::index::position_of_key(board, material, k) else {
            continue;
        };
        if pos.validate(board).is_ok() {
            // An answer or an error; with forged checksums values may be anything, but
            // nothing may panic.
            let _ = tb.probe(board, &pos);
        }
    }
}

#[test]
fn table_loader_on_mutated_files() {
    let dir = tempfile::tempdir().unwrap();
    let board_dir = dir.path().join("4x4");
    std::fs::create_dir_all(&board_dir).unwrap();
    let strategy = (
        any::<usize>(),
        prop::collection::vec(damage(), 1..4),
        any::<bool>(),
    );
    runner(10_000)
        .run(&strategy, |(which, damage, forge)| {
            let (material, good) = &TABLES[which % TABLES.len()];
            let mut bytes = damaged(good, &damage);
            if forge {
                fix_checksums(&mut bytes);
            }
            let name = table::file_name(*material);
            let path = board_dir.join(&name);
            // The loader reads the bytes in memory, through the same validation as a file;
            // a file that opens is then written and read through the memory map as well.
            match table::Table::from_bytes(&path, bytes.clone()) {
                Err(e) => prop_assert!(e.to_string().contains(&name), "{e}"),
                Ok(t) => {
                    // Without forged checksums a damaged file may open only where the
                    // damage lies in the dictionary, whose blocks are checked as they are
                    // read: then checking every checksum refuses it.
                    if !forge && bytes != *good {
                        let e = t.check_all().expect_err("damaged file passed");
                        prop_assert!(e.to_string().contains("block"), "{e}");
                    }
                    for i in 0..t.len() {
                        let _ = t.value(i);
                    }
                    std::fs::write(&path, &bytes).unwrap();
                    let mapped = table::Table::open(&path).unwrap();
                    prop_assert_eq!(mapped.info(), t.info());
                    probe_everything(dir.path(), *material);
                    std::fs::remove_file(&path).unwrap();
                }
            }
            Ok(())
        })
        .unwrap();
}
