//! A run over many materials skips those too large for the memory available and goes on
//! with the others; the materials that need a skipped one are skipped too; all are named
//! (on stderr, in summary.json, in the exit status), and `--resume` with more memory makes
//! the rest, ending with tables identical to an uninterrupted run's.

mod common;

use common::bidtb;
use std::path::Path;
use std::process::Command;

fn generate(out: &Path, limit: Option<&str>, resume: bool) -> (i32, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bidtb"));
    c.args([
        "generate", "--board", "5x5", "--pieces", "4", "--method", "solve", "-q",
    ])
    .arg("--out")
    .arg(out);
    if resume {
        c.arg("--resume");
    }
    match limit {
        Some(l) => c.env("BIDTB_MEMORY_LIMIT", l),
        None => c.env_remove("BIDTB_MEMORY_LIMIT"),
    };
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn materials_too_large_are_skipped_and_made_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (part, whole) = (dir.path().join("part"), dir.path().join("whole"));
    // 120 MB: KNvKP's estimate (about 162 MB) is above it; KPvKP promotes into KNvKP.
    let (code, err) = generate(&part, Some("120M"), false);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("KNvKP skipped: solving KNvKP on 5x5 needs about"),
        "{err}"
    );
    assert!(
        err.contains("KPvKP skipped: needs KNvKP, which was skipped"),
        "{err}"
    );
    assert!(err.contains("--resume"), "{err}");
    let board = part.join("5x5");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(board.join("summary.json")).unwrap())
            .unwrap();
    let skipped: Vec<&str> = summary["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["materials"][0].as_str().unwrap())
        .collect();
    assert_eq!(skipped, ["KNvKP", "KPvKP"]);
    assert!(!board.join("KNvKP.bidtb").exists() && !board.join("KPvKP.bidtb").exists());
    assert!(board.join("KNvKN.bidtb").exists() && board.join("KQvKP.bidtb").exists());
    // With the memory, --resume keeps the 34 and makes the 2.
    let (code, err) = generate(&part, None, true);
    assert_eq!(code, 0, "{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(board.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(summary["reused"].as_array().unwrap().len(), 34, "{summary}");
    assert_eq!(summary["skipped"].as_array().unwrap().len(), 0);
    let (code, err) = generate(&whole, None, false);
    assert_eq!(code, 0, "{err}");
    let mut files = 0;
    for entry in std::fs::read_dir(whole.join("5x5")).unwrap() {
        let name = entry.unwrap().file_name();
        if name.to_string_lossy().ends_with(".bidtb") {
            let a = std::fs::read(whole.join("5x5").join(&name)).unwrap();
            let b = std::fs::read(board.join(&name)).unwrap();
            assert!(a == b, "{name:?} differs");
            files += 1;
        }
    }
    assert_eq!(files, 36);
    let (code, _, err) = bidtb(&[
        "verify",
        "--tables",
        part.to_str().unwrap(),
        "--board",
        "5x5",
    ]);
    assert_eq!(code, 0, "{err}");
}
