//! `bidtb generate --plan`: the jobs of a request, one per material, with what each needs.
//! Run as a cluster scheduler would run them (each job in a directory of its own, the
//! tables it reads linked in from a shared directory, its own copied back), they make
//! tables identical to one run's.

use crate::common;
use std::path::Path;
use std::process::Command;

fn run(args: &[&str], out: &Path) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_bidtb"))
        .args(args)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn jobs_of_a_plan_make_the_tables_of_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let (shared, whole) = (dir.path().join("shared"), dir.path().join("whole"));
    let base = [
        "generate", "--board", "4x4", "--pieces", "4", "--method", "solve",
    ];
    let (code, text, err) = run(&[&base[..], &["--plan", "--json"]].concat(), &shared);
    assert_eq!(code, 0, "{err}");
    assert!(!shared.exists(), "a plan writes nothing");
    let plan: serde_json::Value = serde_json::from_str(&text).unwrap();
    let jobs = plan.as_array().unwrap();
    assert_eq!(jobs.len(), 36);
    // Dependency order: everything a job reads comes before it.
    let names: Vec<&str> = jobs
        .iter()
        .map(|j| j["material"].as_str().unwrap())
        .collect();
    for (k, j) in jobs.iter().enumerate() {
        for r in j["reads"].as_array().unwrap() {
            let at = names
                .iter()
                .position(|n| *n == r.as_str().unwrap())
                .unwrap();
            assert!(at < k, "{} reads {r}", names[k]);
        }
        for n in j["needs"].as_array().unwrap() {
            assert!(j["reads"].as_array().unwrap().contains(n));
        }
        assert!(j["memory_bytes"].as_u64().unwrap() > 0);
        // 4x4's values are far below the 2 GiB past which numerators are paged.
        assert_eq!(j["scratch_bytes"].as_u64(), Some(0), "{}", names[k]);
    }
    let kpvkp = jobs.iter().find(|j| j["material"] == "KPvKP").unwrap();
    assert!(
        kpvkp["needs"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == "KQvKP"),
        "promotion"
    );
    // The text form names the commands.
    let (_, text, _) = run(&[&base[..], &["--plan"]].concat(), &shared);
    assert!(text.contains(
        "bidtb generate --board 4x4 --method solve --material KRvKN --out $JOB --resume -q"
    ));
    assert!(text.contains("# The tables take about "), "{text}");
    assert!(
        text.contains("of temporary files beside its table"),
        "{text}"
    );
    // Each job in a directory of its own.
    std::fs::create_dir_all(shared.join("4x4")).unwrap();
    for (k, j) in jobs.iter().enumerate() {
        let m = j["material"].as_str().unwrap();
        let job = dir.path().join(format!("job-{k}"));
        std::fs::create_dir_all(job.join("4x4")).unwrap();
        for r in j["reads"].as_array().unwrap() {
            for ext in ["bidtb", "json"] {
                let name = format!("{}.{ext}", r.as_str().unwrap());
                std::os::unix::fs::symlink(
                    shared.join("4x4").join(&name),
                    job.join("4x4").join(&name),
                )
                .unwrap();
            }
        }
        let (code, _, err) = run(
            &[
                "generate",
                "--board",
                "4x4",
                "--method",
                "solve",
                "--material",
                m,
                "--resume",
                "-q",
            ],
            &job,
        );
        assert_eq!(code, 0, "{m}: {err}");
        for ext in ["bidtb", "json"] {
            let name = format!("{m}.{ext}");
            std::fs::copy(job.join("4x4").join(&name), shared.join("4x4").join(&name)).unwrap();
        }
    }
    let (code, _, err) = run(&base, &whole);
    assert_eq!(code, 0, "{err}");
    let (mut sizes, mut planned_in_all) = (0, 0);
    for (m, j) in names.into_iter().zip(jobs) {
        let name = format!("{m}.bidtb");
        let a = std::fs::read(whole.join("4x4").join(&name)).unwrap();
        let b = std::fs::read(shared.join("4x4").join(&name)).unwrap();
        assert!(a == b, "{name} differs");
        // The table's size estimate: within half and 20 times of each table, and the
        // tables' sum covered.
        let (size, planned) = (a.len() as u64, j["disk_bytes"].as_u64().unwrap());
        assert!(
            (size / 2..20 * size).contains(&planned),
            "{m}: {size} bytes, planned {planned}"
        );
        sizes += size;
        planned_in_all += planned;
    }
    assert!(
        (sizes..3 * sizes).contains(&planned_in_all),
        "{sizes} bytes, planned {planned_in_all}"
    );
    let (code, _, err) = common::bidtb(&["verify", "--tables", shared.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
}
