//! `bidtb cluster` against a real Slurm (scripts/slurm-local starts a single-node one; the
//! test command, scripts/test, starts it where it can): a request's jobs submitted with
//! their dependencies make the tables of one `generate` run, byte for byte; a job killed
//! inside its material and submitted again completes to identical tables; a job larger than
//! any node is refused before anything is submitted; no job starts before the tables it
//! reads are certified. Without Slurm these tests say so and pass, unless
//! BIDTB_SLURM_REQUIRED is set (CI sets it: there they must run). The dry run needs no
//! Slurm.

use crate::common;
use bidtb::internal::cluster::slurm;
use std::path::Path;
use std::time::{Duration, Instant};

/// Whether a Slurm controller answers and has a node up; if not, a panic where Slurm is
/// required, else a note that the test is skipped.
fn slurm_here(test: &str) -> bool {
    let up = std::process::Command::new("sinfo")
        .args(["-h", "-o", "%T"])
        .output()
        .is_ok_and(|o| {
            o.status.success()
                && String::from_utf8_lossy(&o.stdout)
                    .lines()
                    .any(|s| ["idle", "mixed", "allocated"].contains(&s.trim_end_matches('*')))
        });
    if !up {
        assert!(
            std::env::var_os("BIDTB_SLURM_REQUIRED").is_none(),
            "{test}: BIDTB_SLURM_REQUIRED is set but no Slurm node is up (scripts/slurm-local \
             start)"
        );
        eprintln!("{test}: skipped: no Slurm here (scripts/slurm-local start runs one)");
    }
    up
}

/// Cancels, when dropped, every job of the calling user whose comment is `dir`: a test that
/// fails leaves no job behind.
struct Jobs<'a>(&'a Path);

impl Drop for Jobs<'_> {
    fn drop(&mut self) {
        let dir = self.0.display().to_string();
        let ids: Vec<String> = slurm::queue()
            .unwrap_or_default()
            .into_iter()
            .filter(|q| q.comment == dir)
            .map(|q| q.id)
            .collect();
        let _ = slurm::cancel(&ids);
    }
}

fn json(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = common::bidtb(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
}

/// The arguments that name a request: `--board BOARD`, `which` (`--pieces N` or
/// `--material M`), `--out OUT`.
fn request<'a>(board: &'a str, which: [&'a str; 2], out: &'a Path) -> [&'a str; 6] {
    let out = out.to_str().unwrap();
    ["--board", board, which[0], which[1], "--out", out]
}

/// The rows of a JSON answer (`cluster status` or `cluster submit`).
fn rows(answer: &serde_json::Value) -> &[serde_json::Value] {
    answer.as_array().unwrap()
}

/// The row of material `m` in a JSON answer.
fn row(answer: &serde_json::Value, m: &str) -> serde_json::Value {
    rows(answer)
        .iter()
        .find(|r| r["material"] == m)
        .unwrap_or_else(|| panic!("no row of {m}: {answer}"))
        .clone()
}

/// The strings of a JSON array.
fn strings(list: &serde_json::Value) -> Vec<String> {
    rows(list)
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

/// `cluster status --json` until every material is done (or `until` says stop), failing
/// on a failed job or after `seconds`.
fn wait(request: &[&str], seconds: u64, until: &dyn Fn(&serde_json::Value) -> bool) {
    let start = Instant::now();
    loop {
        let status = json(&[&["cluster", "status", "--json"], request].concat());
        if let Some(f) = rows(&status).iter().find(|r| r["state"] == "failed") {
            let log = std::fs::read_to_string(f["log"].as_str().unwrap()).unwrap_or_default();
            panic!("a job failed: {f}\n{log}");
        }
        if until(&status) {
            return;
        }
        assert!(
            start.elapsed() < Duration::from_secs(seconds),
            "not done after {seconds} s: {status}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

fn all_done(status: &serde_json::Value) -> bool {
    rows(status).iter().all(|r| r["state"] == "done")
}

/// The ids each material was submitted under, oldest first.
fn ids(shared: &Path, board: &str, m: &str) -> Vec<String> {
    let file = shared.join("cluster").join(board).join(m).join("jobs");
    std::fs::read_to_string(file)
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

fn same_tables(a: &Path, b: &Path, board: &str, materials: &[String]) {
    for m in materials {
        let name = format!("{m}.bidtb");
        let x = std::fs::read(a.join(board).join(&name)).unwrap();
        let y = std::fs::read(b.join(board).join(&name)).unwrap();
        assert!(x == y, "{name} differs between the cluster and one run");
    }
}

#[test]
fn a_dry_run_prints_one_sbatch_per_job_after_its_needs() {
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let (code, out, err) = common::bidtb(&[
        "cluster",
        "submit",
        "--board",
        "4x4",
        "--pieces",
        "4",
        "--out",
        shared.to_str().unwrap(),
        "--dry-run",
        "--partition",
        "big",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(!shared.exists(), "a dry run writes nothing");
    let submits: Vec<&str> = out.lines().filter(|l| l.contains("=$(sbatch ")).collect();
    assert_eq!(submits.len(), 36, "{out}");
    let line = |m: &str| {
        *submits
            .iter()
            .find(|l| l.starts_with(&format!("{m}=$(")))
            .unwrap()
    };
    assert!(!line("KvK").contains("--dependency"));
    let krvkn = line("KRvKN");
    for want in [
        "--job-name=bidtb-4x4-KRvKN",
        "--partition=big",
        "--requeue",
        "cluster job --board 4x4 --material KRvKN",
    ] {
        assert!(krvkn.contains(want), "{want}: {krvkn}");
    }
    let after = krvkn
        .split_whitespace()
        .find_map(|w| w.strip_prefix("--dependency=afterok:"))
        .unwrap();
    let mut after: Vec<&str> = after.split(':').collect();
    after.sort();
    // Its captures lead to KRvK and KNvK (KvK only through them).
    assert_eq!(after, ["$KNvK", "$KRvK"], "{krvkn}");
}

#[test]
fn cluster_jobs_make_the_tables_of_one_run() {
    if !slurm_here("cluster_jobs_make_the_tables_of_one_run") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (shared, whole) = (dir.path().join("shared"), dir.path().join("whole"));
    let _cancel = Jobs(&shared);
    let request = request("4x4", ["--pieces", "4"], &shared);
    let sent = json(&[&["cluster", "submit", "--json"], &request[..]].concat());
    let sent = rows(&sent);
    assert_eq!(sent.len(), 36);
    assert!(sent.iter().all(|s| s["action"] == "submitted"), "{sent:?}");
    // Submitting again while they wait or run sends nothing twice.
    let again = json(&[&["cluster", "submit", "--json"], &request[..]].concat());
    assert!(
        rows(&again)
            .iter()
            .all(|s| s["action"] == "queued" || s["action"] == "done"),
        "{again}"
    );
    // Meanwhile, the same request as one run.
    let (code, _, err) = common::bidtb(&[
        "generate",
        "--board",
        "4x4",
        "--pieces",
        "4",
        "--method",
        "solve",
        "--out",
        whole.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    wait(&request, 900, &all_done);
    let materials: Vec<String> = sent
        .iter()
        .map(|s| s["material"].as_str().unwrap().to_string())
        .collect();
    same_tables(&shared, &whole, "4x4", &materials);
    // Each job waited for the jobs of what it needs, and started only after they ended.
    let plan = json(&[
        "generate", "--board", "4x4", "--pieces", "4", "--method", "solve", "--plan", "--json",
    ]);
    for (job, s) in rows(&plan).iter().zip(sent) {
        let m = job["material"].as_str().unwrap();
        assert_eq!(s["material"], m);
        let id = &ids(&shared, "4x4", m)[0];
        let (start, _) = slurm::job_times(id).expect("scontrol knows the job");
        let mut after = strings(&s["after"]);
        let mut needs: Vec<String> = strings(&job["needs"])
            .iter()
            .map(|n| ids(&shared, "4x4", n)[0].clone())
            .collect();
        after.sort();
        needs.sort();
        assert_eq!(after, needs, "{m}");
        for need in &needs {
            let (_, end) = slurm::job_times(need).unwrap();
            assert!(
                start >= end,
                "{m} (job {id}) started at {start}, before {need} ended at {end}"
            );
        }
    }
    // Done means done: a third submission sends nothing.
    let third = json(&[&["cluster", "submit", "--json"], &request[..]].concat());
    assert!(
        rows(&third).iter().all(|s| s["action"] == "done"),
        "{third}"
    );
}

#[test]
fn a_job_cancelled_inside_its_material_resumes_to_identical_tables() {
    if !slurm_here("a_job_cancelled_inside_its_material_resumes_to_identical_tables") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (shared, whole) = (dir.path().join("shared"), dir.path().join("whole"));
    let _cancel = Jobs(&shared);
    // 5x5 KRBvKN takes about 15 s on one core, and saves its state every second.
    let request = request("5x5", ["--material", "KRBvKN"], &shared);
    let submit = [
        &["cluster", "submit", "--json", "--checkpoint-seconds", "1"],
        &request[..],
    ]
    .concat();
    json(&submit);
    let work = shared.join("cluster/5x5/KRBvKN/5x5");
    let checkpoint = work.join("solve-KRBvKN.ckpt");
    let start = Instant::now();
    while !checkpoint.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "no checkpoint of KRBvKN after 600 s"
        );
        let status = json(&[&["cluster", "status", "--json"], &request[..]].concat());
        assert_ne!(
            row(&status, "KRBvKN")["state"],
            "done",
            "KRBvKN ended before it was cancelled"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let id = ids(&shared, "5x5", "KRBvKN")[0].clone();
    slurm::cancel(std::slice::from_ref(&id)).unwrap();
    let start = Instant::now();
    let cancelled = loop {
        let (code, out, err) =
            common::bidtb(&[&["cluster", "status", "--json"], &request[..]].concat());
        assert_eq!(code, 0, "{err}");
        let krbvkn = row(&serde_json::from_str(&out).unwrap(), "KRBvKN");
        if krbvkn["state"] == "failed" {
            break krbvkn;
        }
        assert_ne!(
            krbvkn["state"], "done",
            "KRBvKN finished although cancelled"
        );
        assert!(start.elapsed() < Duration::from_secs(120), "{krbvkn}");
        std::thread::sleep(Duration::from_millis(300));
    };
    assert!(
        cancelled["scheduler_state"]
            .as_str()
            .unwrap()
            .starts_with("CANCELLED"),
        "{cancelled}"
    );
    assert_eq!(cancelled["checkpoint"], true, "{cancelled}");
    // Submitted again: only KRBvKN goes, and it resumes.
    let again = json(&submit);
    let sent: Vec<&str> = rows(&again)
        .iter()
        .filter(|s| s["action"] == "submitted")
        .map(|s| s["material"].as_str().unwrap())
        .collect();
    assert_eq!(sent, ["KRBvKN"]);
    let (code, _, err) = common::bidtb(&[
        "generate",
        "--board",
        "5x5",
        "--material",
        "KRBvKN",
        "--method",
        "solve",
        "--out",
        whole.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    wait(&request, 900, &all_done);
    let log = std::fs::read_to_string(
        shared
            .join("cluster/5x5/KRBvKN")
            .join(format!("slurm-{}.out", ids(&shared, "5x5", "KRBvKN")[1])),
    )
    .unwrap();
    assert!(
        log.contains("resum"),
        "the second job did not resume: {log}"
    );
    let materials: Vec<String> = rows(&again)
        .iter()
        .map(|s| s["material"].as_str().unwrap().to_string())
        .collect();
    same_tables(&shared, &whole, "5x5", &materials);
}

#[test]
fn a_job_larger_than_any_node_is_refused_before_anything_is_submitted() {
    if !slurm_here("a_job_larger_than_any_node_is_refused_before_anything_is_submitted") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let shared = dir.path().join("shared");
    let _cancel = Jobs(&shared);
    let (code, _, err) = common::bidtb(&[
        "cluster",
        "submit",
        "--board",
        "8x8",
        "--material",
        "KQRvKQ",
        "--out",
        shared.to_str().unwrap(),
    ]);
    assert_eq!(code, 1, "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("nothing submitted") && err.contains("KQRvKQ asks"),
        "{err}"
    );
    assert!(!shared.exists(), "nothing written");
    let mine = slurm::queue().unwrap();
    assert!(
        !mine
            .iter()
            .any(|q| q.comment == shared.display().to_string()),
        "{mine:?}"
    );
}
