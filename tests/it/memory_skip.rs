//! A run over many materials skips those too large for the memory available and goes on
//! with the others; the materials that need a skipped one are skipped too; all are named
//! (on stderr, in summary.json, in the exit status), and `--resume` with more memory makes
//! the rest, ending with tables identical to an uninterrupted run's.

use crate::common::{bidtb, run_with_env};
use std::path::Path;
use std::process::Command;

fn generate(out: &Path, limit: Option<&str>, resume: bool) -> (i32, String) {
    generate_guarded(out, limit, None, resume)
}

fn generate_guarded(
    out: &Path,
    limit: Option<&str>,
    guard: Option<&str>,
    resume: bool,
) -> (i32, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_bidtb"));
    c.args([
        "generate", "--board", "5x5", "--pieces", "4", "--method", "solve", "-q",
    ])
    .arg("--out")
    .arg(out);
    if resume {
        c.arg("--resume");
    }
    run_with_env(
        c,
        &[("BIDTB_MEMORY_LIMIT", limit), ("BIDTB_MEMORY_GUARD", guard)],
    )
}

#[test]
fn materials_too_large_are_skipped_and_made_on_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (part, whole) = (dir.path().join("part"), dir.path().join("whole"));
    // 78.5 MiB (82.31 MB): KNvKP's estimate (82.71 MB) is above it, the others' (up to
    // 81.52 MB, KQPvK) below; KPvKP promotes into KNvKP. The guard, which would hold the
    // jobs to the same limit while they run, is set aside: here the estimate alone decides.
    let (code, err) = generate_guarded(&part, Some("78.5M"), Some("100G"), false);
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
    let summary = summary_of(&board);
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
    let summary = summary_of(&board);
    assert_eq!(summary["reused"].as_array().unwrap().len(), 34, "{summary}");
    assert_eq!(summary["skipped"].as_array().unwrap().len(), 0);
    let (code, err) = generate(&whole, None, false);
    assert_eq!(code, 0, "{err}");
    assert_eq!(same_tables(&whole.join("5x5"), &board), 36);
    let (code, _, err) = bidtb(&[
        "verify",
        "--tables",
        part.to_str().unwrap(),
        "--board",
        "5x5",
    ]);
    assert_eq!(code, 0, "{err}");
}

/// The tables of `a` and `b` (each a board's directory) are the same files, byte for byte;
/// returns how many.
/// The summary.json of the board directory `board`.
fn summary_of(board: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(board.join("summary.json")).unwrap()).unwrap()
}

fn same_tables(a: &Path, b: &Path) -> usize {
    let mut files = 0;
    for entry in std::fs::read_dir(a).unwrap() {
        let name = entry.unwrap().file_name();
        if name.to_string_lossy().ends_with(".bidtb") {
            let x = std::fs::read(a.join(&name)).unwrap();
            let y = std::fs::read(b.join(&name)).unwrap();
            assert!(x == y, "{name:?} differs");
            files += 1;
        }
    }
    files
}

/// The estimate decides before a job starts; the guard while it runs. A job that passes
/// the guard's limit (here forced low with BIDTB_MEMORY_GUARD; on 8x8 KBvKN, estimated at
/// 11 GiB, needed 19) stops cleanly, writes nothing, is skipped with what it held, and
/// the run goes on; `--resume` without the limit makes the rest, identical to one run's.
#[test]
fn jobs_above_the_guard_stop_and_are_skipped_while_the_run_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (part, whole) = (dir.path().join("part"), dir.path().join("whole"));
    // 90 MB: the 5x5 pawn materials hold 95 to 140 MB at their peaks here, the others
    // less; where exactly a job is stopped depends on the allocator, so the test asks for
    // some stopped, not which.
    let (code, err) = generate_guarded(&part, None, Some("90M"), false);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("skipped: stopped while running: it held"),
        "{err}"
    );
    assert!(err.contains("--resume"), "{err}");
    let board = part.join("5x5");
    let summary = summary_of(&board);
    let skipped = summary["skipped"].as_array().unwrap();
    let stopped: Vec<&str> = skipped
        .iter()
        .filter(|s| {
            s["reason"]
                .as_str()
                .unwrap()
                .starts_with("stopped while running")
        })
        .map(|s| s["materials"][0].as_str().unwrap())
        .collect();
    assert!(!stopped.is_empty(), "{summary}");
    for s in skipped {
        let m = s["materials"][0].as_str().unwrap();
        assert!(
            !board.join(format!("{m}.bidtb")).exists(),
            "{m} was written"
        );
    }
    assert!(
        !std::fs::read_dir(&board)
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().ends_with(".ckpt")),
        "a stopped job saved its state"
    );
    let made = 36 - skipped.len();
    let (code, err) = generate_guarded(&part, None, None, true);
    assert_eq!(code, 0, "{err}");
    let summary = summary_of(&board);
    assert_eq!(
        summary["reused"].as_array().unwrap().len(),
        made,
        "{summary}"
    );
    // Each job's record has its peak and the peak of its heap alone (the guard's samples),
    // which the pages of tables read do not count in.
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(board.join(format!("{}.json", stopped[0]))).unwrap(),
    )
    .unwrap();
    let heap = record["cost"]["peak_heap_mib"].as_u64().unwrap();
    let peak = record["cost"]["peak_mib"].as_u64().unwrap();
    assert!(heap > 0 && heap <= peak + 1, "{}", record["cost"]);
    let (code, err) = generate(&whole, None, false);
    assert_eq!(code, 0, "{err}");
    assert_eq!(same_tables(&whole.join("5x5"), &board), 36);
}

#[test]
fn an_unparsable_guard_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = generate_guarded(dir.path(), None, Some("lots"), false);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("BIDTB_MEMORY_GUARD=\"lots\" is not a size"),
        "{err}"
    );
}

/// α's values, moved to a temporary file while β is solved apart (always, with
/// BIDTB_SPILL_ABOVE=0; by default only above 256 MiB), come back exactly: the tables are
/// those of a run that kept them in memory, and the board's directory holds nothing more.
/// So do values whose numerators are paged (always, with BIDTB_PAGE_ABOVE=0; by default
/// beyond 2 GiB), alone and spilled as well.
#[test]
fn alpha_spilled_while_beta_is_solved_makes_the_same_tables() {
    let dir = tempfile::tempdir().unwrap();
    let run_with = |out: &Path, spill: &str, page: &str| -> (i32, String) {
        let o = Command::new(env!("CARGO_BIN_EXE_bidtb"))
            .args(["generate", "--board", "4x4", "--pieces", "4"])
            .args(["--method", "solve", "--out"])
            .arg(out)
            .env("BIDTB_SPILL_ABOVE", spill)
            .env("BIDTB_PAGE_ABOVE", page)
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let run = |out: &Path, spill: &str| run_with(out, spill, "1T");
    let (spilled, kept) = (dir.path().join("spilled"), dir.path().join("kept"));
    let (code, err) = run(&spilled, "0");
    assert_eq!(code, 0, "{err}");
    // 4x4 has materials with α < β (KBNvK, KBvKN): β is solved apart there.
    assert!(err.contains("values moved to a temporary file of"), "{err}");
    let (code, err) = run(&kept, "1T");
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("moved to a temporary file"), "{err}");
    assert_eq!(same_tables(&spilled.join("4x4"), &kept.join("4x4")), 36);
    let names = |d: &Path| -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&spilled.join("4x4")), names(&kept.join("4x4")));
    for (name, spill) in [("paged", "1T"), ("paged-spilled", "0")] {
        let out = dir.path().join(name);
        let (code, err) = run_with(&out, spill, "0");
        assert_eq!(code, 0, "{err}");
        assert!(err.contains("of numerators moved out of memory"), "{err}");
        assert_eq!(same_tables(&out.join("4x4"), &kept.join("4x4")), 36);
        assert_eq!(names(&out.join("4x4")), names(&kept.join("4x4")));
    }
    let (code, err) = run_with(&dir.path().join("bad"), "1T", "lots");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("BIDTB_PAGE_ABOVE=\"lots\" is not a size"),
        "{err}"
    );
    let (code, err) = run(&dir.path().join("bad"), "lots");
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("BIDTB_SPILL_ABOVE=\"lots\" is not a size"),
        "{err}"
    );
}
