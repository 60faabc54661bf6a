//! Load: 50 concurrent clients send 20,000 `/api/query` requests (one request per
//! connection: the server closes each after its answer) to `bidtb serve` on the 8x8 tables. Every answer must be exactly
//! what the library answers; the median and p99 latency are printed and written to
//! `target/tmp/load.json` (docs/records/server-load.json records them).

use std::time::{Duration, Instant};

use crate::common::{Server, tables_8x8};
use bidtb::{Board, Material, fen, internal::index};

const CLIENTS: usize = 50;
const QUERIES: usize = 20_000;

/// A deterministic mix of 8x8 positions: every class, white and black pieces.
fn positions(count: usize) -> Vec<String> {
    let board = Board::new(8, 8).unwrap();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = |m: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % m as u64) as usize
    };
    let mut out = Vec::with_capacity(count);
    let three = Material::three_piece();
    while out.len() < count {
        let material = three[next(three.len())];
        let keys = index::key_space(board, material) as usize;
        let Some(pos) = index::position_of_key(board, material, next(keys) as u64) else {
            continue;
        };
        if pos.validate(board).is_ok() {
            let shown = if material.man_count() == 3 && next(2) == 1 {
                pos.mirror(board)
            } else {
                pos
            };
            out.push(fen::write(board, &shown));
        }
    }
    out
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

#[test]
fn fifty_clients_twenty_thousand_queries() {
    let (root, _) = tables_8x8();
    let tb = bidtb::internal::probe::Tablebase::open(&root).unwrap();
    let fens = positions(QUERIES);
    let want: Vec<String> = fens
        .iter()
        .map(|f| tb.probe_fen(f).unwrap().to_json().to_string())
        .collect();
    let server = Server::start(&root);
    let started = Instant::now();
    let mut latencies: Vec<Duration> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (url, fens, want) = (&server.url, &fens, &want);
                s.spawn(move || {
                    let agent: ureq::Agent = ureq::Agent::config_builder()
                        .http_status_as_error(false)
                        .build()
                        .into();
                    let mut times = Vec::new();
                    for i in (c..QUERIES).step_by(CLIENTS) {
                        let t = Instant::now();
                        let mut resp = agent
                            .get(format!("{url}api/query"))
                            .query("fen", &fens[i])
                            .call()
                            .unwrap_or_else(|e| panic!("{}: {e}", fens[i]));
                        let status = resp.status().as_u16();
                        let body = resp.body_mut().read_to_string().unwrap();
                        times.push(t.elapsed());
                        assert_eq!(status, 200, "{}: {body}", fens[i]);
                        assert_eq!(body, want[i], "{}", fens[i]);
                    }
                    times
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let wall = started.elapsed();
    assert_eq!(latencies.len(), QUERIES);
    latencies.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let report = serde_json::json!({
        "clients": CLIENTS,
        "queries": QUERIES,
        "errors": 0,
        "seconds": wall.as_secs_f64(),
        "queries_per_second": QUERIES as f64 / wall.as_secs_f64(),
        "median_ms": ms(percentile(&latencies, 0.5)),
        "p99_ms": ms(percentile(&latencies, 0.99)),
        "max_ms": ms(*latencies.last().unwrap()),
    });
    println!("load: {report}");
    let out = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("load.json");
    std::fs::write(out, report.to_string()).unwrap();
    assert_eq!(server.stop(), Some(0));
}
