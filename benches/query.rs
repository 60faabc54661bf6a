//! Benchmarks of the query side: opening a board's tables (memory maps, checksums and
//! structure checks) and probing positions.
//!
//! Uses the 8x8 tables in `tables/8x8` (or under `BIDTB_BENCH_TABLES`) when they exist
//! (`cargo run --release -- generate` makes them); otherwise generates 6x6 tables into a
//! temporary directory. Four-piece tables found there (KBNvK, KBvKB, KBBvK on 8x8) are
//! probed too: a whole probe (every move of both sides looked up) and one position's entry.

use std::path::PathBuf;

use bidtb::Board;
use bidtb::Tablebase;
use bidtb::{Options, Silent, solve};
use criterion::{Criterion, criterion_group, criterion_main};

/// The allocator the `bidtb` binary uses, so that the figures match it.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The tables directory and board to use, and the temporary directory to keep alive.
fn tables() -> (PathBuf, Board, Option<tempfile::TempDir>) {
    let repo = std::env::var_os("BIDTB_BENCH_TABLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tables"));
    let eight: Board = "8x8".parse().unwrap();
    if Tablebase::open_board(&repo, eight)
        .is_ok_and(|t| t.table(eight, bidtb::Material::KVK).is_ok())
    {
        return (repo, eight, None);
    }
    eprintln!("no tables/8x8: generating 6x6 tables for the query benchmarks");
    let six: Board = "6x6".parse().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sol = solve(&Options::new(six), &Silent).expect("solves");
    let out = dir.path().join("6x6");
    std::fs::create_dir_all(&out).unwrap();
    bidtb::internal::generate::write::write_tables(&sol, &out, false).unwrap();
    (dir.path().to_path_buf(), six, Some(dir))
}

fn query(c: &mut Criterion) {
    let (dir, board, _keep) = tables();
    let mut g = c.benchmark_group("query");
    g.bench_function(format!("open {board} tables"), |b| {
        b.iter(|| Tablebase::open_board(&dir, board).unwrap())
    });
    let tb = Tablebase::open_board(&dir, board).unwrap();
    let (rook, knight, black) = if board.files() == 8 {
        (
            "3k3R/8/3K4/8/8/8/8/8",
            "8/8/8/3k4/8/8/1N6/K7",
            "1n6/8/8/8/8/8/8/K1k5",
        )
    } else {
        ("3k1R/6/3K2/6/6/6", "6/6/3k2/6/1N4/K5", "1n4/6/6/6/6/K1k3")
    };
    for (name, fen) in [("KRvK", rook), ("KNvK", knight), ("KvKN mirror", black)] {
        g.bench_function(format!("probe {board} {name}"), |b| {
            b.iter(|| tb.probe_fen(fen).unwrap())
        });
    }
    let four = [
        ("KBNvK", "8/8/3k4/8/8/2B5/1N6/K7"),
        ("KvKBN mirror", "k7/1n6/2b5/8/8/3K4/8/8"),
        ("KBvKB", "8/8/3k4/5b2/8/2B5/8/K7"),
        ("KBBvK", "8/8/3k4/8/8/2BB4/8/K7"),
    ];
    for (name, fen) in four {
        let parsed = bidtb::fen::parse(fen).unwrap();
        if board.files() != 8 || tb.entry(parsed.board, &parsed.position).is_err() {
            continue;
        }
        g.bench_function(format!("probe {board} {name}"), |b| {
            b.iter(|| tb.probe_fen(fen).unwrap())
        });
        g.bench_function(format!("entry {board} {name}"), |b| {
            b.iter(|| tb.entry(parsed.board, &parsed.position).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, query);
criterion_main!(benches);
