//! The reference values' acceptance (docs/src/game.md), end to end as a user runs it:
//! `bidtb generate` on 8x8 (a few minutes
//! in release mode; the tables are shared with the other tests that need them), the first Richman iteration 2644 and the 138-digit denominators from
//! its summary, every published value through `bidtb query --json`, and `bidtb verify`
//! re-proving the written tables. `.ci/run` runs it.

use crate::common::{bidtb, tables_8x8};

#[test]
fn published_8x8_values_and_iteration_2644() {
    let (root, summary) = tables_8x8();
    let tables = root.to_str().unwrap();
    assert_eq!(summary["board"], "8x8");
    assert_eq!(summary["first_richman_iteration"], 2644);
    assert_eq!(summary["certified"], true);
    let classes = summary["classes"].as_object().unwrap();
    assert_eq!(classes.len(), 6);
    // Per-class stabilisation points: the largest is the first Richman iteration.
    let stable = classes.values().map(|c| c["stable_at"].as_u64().unwrap());
    assert_eq!(stable.max(), Some(2644));
    // The published study's largest denominators have 138 digits.
    let digits = classes
        .values()
        .map(|c| c["max_denominator_digits"].as_u64().unwrap());
    assert_eq!(digits.max(), Some(138));
    // Every three-piece position on 8x8 has α = β: the certificate passes in every class.
    for (name, c) in classes {
        assert_eq!(c["certified_alpha"], true, "{name}");
        assert_eq!(c["certified_beta"], true, "{name}");
    }

    // The convergence record: one row per iteration; each class's last change is where the
    // summary says it stabilised; the last Richman test found nothing.
    let csv = std::fs::read_to_string(root.join("8x8/convergence.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    assert_eq!(
        rows.len() as u64,
        summary["iterations_run"].as_u64().unwrap()
    );
    // The default run knew the exact values: it records where each position reached its
    // final guess (`settled_`), and ran no Richman test.
    for (name, c) in classes {
        let col = header
            .iter()
            .position(|h| *h == format!("settled_{name}"))
            .unwrap();
        let last = rows
            .iter()
            .rev()
            .find(|r| r[col] != "0")
            .map_or("0", |r| r[0]);
        assert_eq!(last, c["stable_at"].to_string(), "{name}");
    }
    assert!(rows.iter().all(|r| r[7..].iter().all(|v| v.is_empty())));

    let cases = [
        ("3k3R/8/3K4/8/8/8/8/8", "KRvK", "3/4"), // WK d6, WR h8 / BK d8
        ("8/8/8/5k2/8/8/2K5/8", "KvK", "1/2"),   // WK c2 / BK f5
        ("8/8/8/8/k3K3/8/6B1/8", "KBvK", "9/16"), // WK e4, WB g2 / BK a4
        ("2k5/8/8/4K3/8/8/1P6/8", "KPvK", "33/64"), // WK e5, WP b2 / BK c8
        ("k7/8/8/8/8/8/8/K6R", "KRvK", "7463/8192"), // WK a1, WR h1 / BK a8
    ];
    for (fen, class, value) in cases {
        let (code, stdout, stderr) = bidtb(&["query", "--tables", tables, "--json", fen]);
        assert_eq!(code, 0, "{fen}: {stderr}");
        let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(json["class"], class, "{fen}");
        assert_eq!(json["value"], value, "{fen}");
        assert_eq!(json["certified"], true, "{fen}");
    }
    // The example: the rook's check along the eighth rank wins at once.
    let (_, stdout, _) = bidtb(&["query", "--tables", tables, "--json", cases[0].0]);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["white"][0]["move"], "h8d8");
    assert_eq!(json["white"][0]["value"], "1/1");
    assert_eq!(json["white"][0]["level"], 0);
    assert_eq!(json["bid"], "1/4");

    let (code, stdout, stderr) = bidtb(&["verify", "--tables", tables]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.starts_with("8x8: ok"), "{stdout}");
}

/// The study's own path (`--guesses`: every intermediate guess computed) reaches the same
/// 2644 and the same per-class stabilisation points as the default run, which found them
/// from the exact values; its convergence record has the guess changes and Richman tests.
#[test]
fn the_guessing_path_agrees_on_8x8() {
    let (_, fast) = tables_8x8();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, stdout, stderr) = bidtb(&["generate", "--guesses", "--out", out, "--json", "-q"]);
    assert_eq!(code, 0, "{stderr}");
    let slow: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(slow["first_richman_iteration"], 2644);
    for (name, c) in slow["classes"].as_object().unwrap() {
        assert_eq!(c["stable_at"], fast["classes"][name]["stable_at"], "{name}");
    }
    let expected = [
        ("KBvK", 30),
        ("KQvK", 156),
        ("KRvK", 331),
        ("KNvK", 2644),
        ("KPvK", 2588),
    ];
    for (name, at) in expected {
        assert_eq!(slow["classes"][name]["stable_at"], at, "{name}");
    }
    let csv = std::fs::read_to_string(dir.path().join("8x8/convergence.csv")).unwrap();
    assert!(csv.starts_with("iteration,changed_KvK"));
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let tested: Vec<&Vec<&str>> = rows.iter().filter(|r| !r[7].is_empty()).collect();
    assert!(tested.last().unwrap()[7..].iter().all(|v| *v == "0"));
    assert!(tested.len() > 1 && tested[0][7..].iter().any(|v| *v != "0"));
}
