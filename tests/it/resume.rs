//! Checkpoints and interruption, as a user meets them: runs killed with SIGKILL at random
//! points and resumed reach exactly the uninterrupted result; Ctrl-C stops cleanly; a capped
//! run continues past its cap; unusable checkpoints are refused by name.

use crate::common::{bidtb, run_with_env};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Pseudo-random moments for signals, from a seed printed so that a failure can be replayed.
struct Schedule(u64);

impl Schedule {
    fn new(what: &str) -> Schedule {
        let seed = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64;
        eprintln!("{what} schedule seed {seed}");
        Schedule(seed)
    }

    /// The next number below `n` (a linear congruential step).
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// Everything a finished run leaves in `DIR/board`, with the timings and the kernel's
/// work statistics (which describe the last process, not the result) taken out, and the
/// directory's lock file (which names the last process).
fn result(dir: &Path, board: &str) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir.join(board))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name() != bidtb::internal::dirlock::LOCK_FILE)
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            let mut bytes = std::fs::read(e.path()).unwrap();
            if name.ends_with(".json") && name != "summary.json" {
                // A material's record: its cost describes the process.
                let mut json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                json.as_object_mut().unwrap().remove("cost");
                bytes = json.to_string().into_bytes();
            }
            if name == "summary.json" {
                let mut json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
                for key in ["seconds", "stage_seconds", "kernel", "reused", "costs"] {
                    json.as_object_mut().unwrap().remove(key);
                }
                bytes = json.to_string().into_bytes();
            }
            (name, bytes)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn killed_runs_resume_to_the_uninterrupted_result() {
    let plain = tempfile::tempdir().unwrap();
    let p = plain.path().to_str().unwrap();
    // Checkpoints hold the state of the guessing path: the uninterrupted run to match.
    let (code, _, stderr) = bidtb(&["generate", "--board", "6x6", "--guesses", "--out", p, "-q"]);
    assert_eq!(code, 0, "{stderr}");

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let mut schedule = Schedule::new("kill");
    // Kill runs until at least five were killed mid-run, two of them after resuming from a
    // checkpoint (kills landing before the first checkpoint or after the end don't count).
    let (mut kills, mut resumed_kills) = (0, 0);
    for _ in 0..40 {
        if kills >= 5 && resumed_kills >= 2 {
            break;
        }
        let after = Duration::from_millis(100 + schedule.below(600));
        let resuming = std::fs::read_dir(dir.path().join("6x6"))
            .map(|r| {
                r.flatten()
                    .any(|e| e.file_name().to_string_lossy().ends_with(".ckpt"))
            })
            .unwrap_or(false);
        let mut child = Command::new(env!("CARGO_BIN_EXE_bidtb"))
            .args([
                "generate",
                "--board",
                "6x6",
                "--out",
                d,
                "--checkpoint-every",
                "10",
                "--resume",
                "-q",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(after);
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            kills += 1;
            resumed_kills += resuming as usize;
        }
        child.wait().unwrap();
    }
    eprintln!("{kills} kills, {resumed_kills} after resuming");
    assert!(
        kills >= 5 && resumed_kills >= 2,
        "{kills} kills, {resumed_kills} resumed"
    );
    let (code, _, stderr) = bidtb(&["generate", "--board", "6x6", "--out", d, "--resume", "-q"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(result(dir.path(), "6x6"), result(plain.path(), "6x6"));
}

#[test]
fn a_capped_run_continues_past_its_cap() {
    let plain = tempfile::tempdir().unwrap();
    let p = plain.path().to_str().unwrap();
    assert_eq!(
        bidtb(&["generate", "--board", "5x4", "--guesses", "--out", p, "-q"]).0,
        0
    );

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let capped = [
        "generate",
        "--board",
        "5x4",
        "--out",
        d,
        "-q",
        "--checkpoint-every",
        "7",
        "--max-iterations",
        "20",
    ];
    let (code, stdout, _) = bidtb(&capped);
    assert_eq!(code, 0);
    assert!(stdout.contains("NOT CONVERGED"));
    assert!(dir.path().join("5x4/checkpoint-000020.ckpt").exists());
    let (code, _, stderr) = bidtb(&["generate", "--board", "5x4", "--out", d, "--resume"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("resuming from iteration 20"), "{stderr}");
    assert_eq!(result(dir.path(), "5x4"), result(plain.path(), "5x4"));
}

/// The checkpoint `ck` (whose good bytes are `good`) damaged at about `samples` offsets,
/// truncated there or with a bit flipped: `bidtb` with `args` refuses each one, naming the
/// file, without a panic.
fn every_damage_is_refused(ck: &Path, good: &[u8], args: &[&str], samples: usize) {
    let name = ck.file_name().unwrap().to_string_lossy().into_owned();
    for at in (0..good.len())
        .step_by(good.len() / samples + 1)
        .chain([good.len() - 1])
    {
        let mut flipped = good.to_vec();
        flipped[at] ^= 0x20;
        for bytes in [&good[..at], &flipped[..]] {
            std::fs::write(ck, bytes).unwrap();
            let (code, _, stderr) = bidtb(args);
            assert_eq!(code, 1, "offset {at}: {stderr}");
            assert!(stderr.contains(&name), "{stderr}");
            assert!(!stderr.contains("panicked"), "{stderr}");
        }
    }
}

#[test]
fn unusable_checkpoints_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let cap = ["-q", "--checkpoint-every", "5", "--max-iterations", "10"];
    for board in ["5x5", "4x5"] {
        let mut args = vec!["generate", "--board", board, "--out", d];
        args.extend_from_slice(&cap);
        assert_eq!(bidtb(&args).0, 0);
    }
    let ck = dir.path().join("5x5/checkpoint-000010.ckpt");
    let good = std::fs::read(&ck).unwrap();
    let resume = ["generate", "--board", "5x5", "--out", d, "--resume", "-q"];

    // Damaged at many offsets: truncated or flipped, each refused, naming the file.
    let older = dir.path().join("5x5/checkpoint-000005.ckpt");
    std::fs::remove_file(&older).unwrap();
    every_damage_is_refused(&ck, &good, &resume, 40);
    // Another board's checkpoint under this board's name.
    std::fs::copy(dir.path().join("4x5/checkpoint-000010.ckpt"), &ck).unwrap();
    let (code, _, stderr) = bidtb(&resume);
    assert_eq!(code, 1);
    assert!(stderr.contains("not 5x5"), "{stderr}");
    // Another format version (header checksum recomputed so that the version is read).
    let mut b = good.clone();
    b[8] = 9;
    let crc = crc32fast::hash(&b[..60]);
    b[60..64].copy_from_slice(&crc.to_le_bytes());
    std::fs::write(&ck, &b).unwrap();
    let (code, _, stderr) = bidtb(&resume);
    assert_eq!(code, 1);
    assert!(stderr.contains("version 9"), "{stderr}");
    // Restored, it resumes.
    std::fs::write(&ck, &good).unwrap();
    let (code, _, stderr) = bidtb(&resume);
    assert_eq!(code, 0, "{stderr}");
    assert!(!ck.exists(), "a converged run removes its checkpoints");
}

#[test]
fn ctrl_c_stops_cleanly_with_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_bidtb"))
        .args([
            "generate",
            "--board",
            "8x8",
            "--out",
            d,
            "--checkpoint-every",
            "100000",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted at iteration"), "{stderr}");
    assert!(stderr.contains("--resume"), "{stderr}");
    let names: Vec<String> = std::fs::read_dir(dir.path().join("8x8"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != bidtb::internal::dirlock::LOCK_FILE)
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.ends_with(".bidtb") && !n.starts_with('.')),
        "{names:?}"
    );
    assert_eq!(
        names.iter().filter(|n| n.ends_with(".ckpt")).count(),
        1,
        "{names:?}"
    );
}

/// The solve method's result without what describes the process rather than the result
/// (the solve's rounds, in the summary and in each material's record).
fn solve_result(dir: &Path, board: &str) -> Vec<(String, Vec<u8>)> {
    result(dir, board)
        .into_iter()
        .map(|(name, bytes)| {
            if !name.ends_with(".json") {
                return (name, bytes);
            }
            let mut json: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
            json.as_object_mut().unwrap().remove("solve");
            (name, json.to_string().into_bytes())
        })
        .collect()
}

/// Start `bidtb generate --method solve` on `board` into `d` with `extra` arguments, and
/// send `signal` `after` the first time its progress shows an exact evaluation under way or
/// a state resumed (a material's strategies exist then, so a stop has a state to save); its
/// exit code and stderr.
fn signalled_solve(
    board: &str,
    d: &str,
    extra: &[&str],
    signal: &str,
    after: Duration,
) -> (i32, String) {
    use std::io::{BufRead, BufReader};
    let mut args = vec![
        "generate", "--board", board, "--method", "solve", "--out", d,
    ];
    args.extend_from_slice(extra);
    let mut child = Command::new(env!("CARGO_BIN_EXE_bidtb"))
        .args(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let id = child.id().to_string();
    let lines = BufReader::new(child.stderr.take().unwrap());
    let mut text = String::new();
    let mut sent = false;
    for line in lines.lines() {
        let line = line.unwrap();
        // After an exact evaluation starts, or after a resume (a run resumed inside the
        // last material may print no further evaluation line before it finishes).
        if !sent && (line.contains(": exact") || line.contains(": resumed after")) {
            std::thread::sleep(after);
            let _ = Command::new("kill").args([signal, &id]).status();
            sent = true;
        }
        text += &line;
        text.push('\n');
    }
    let status = child.wait().unwrap();
    (status.code().unwrap_or(-1), text)
}

#[test]
fn stopped_and_killed_solve_runs_resume_to_the_uninterrupted_result() {
    let plain = tempfile::tempdir().unwrap();
    let p = plain.path().to_str().unwrap();
    let solve = ["generate", "--board", "9x9", "--method", "solve", "-q"];
    let started = std::time::Instant::now();
    let (code, _, stderr) = bidtb(&[&solve[..], &["--out", p]].concat());
    assert_eq!(code, 0, "{stderr}");
    // Signals land anywhere in a run of this length (on this machine, now).
    let whole = started.elapsed().as_millis() as u64;

    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let ckpt = dir.path().join("9x9");
    let mut schedule = Schedule::new("signal");
    // Ctrl-C until two runs were stopped with their state saved, one of them after resuming
    // from a saved state (α's or β's): a little after an exact evaluation started or a state
    // was resumed, in whichever material is under way (the materials solved before are kept
    // as tables).
    let (mut saved, mut saved_after_resuming) = (0, 0);
    // The window the signal lands in; halved whenever a run finishes before its signal (the
    // machine got faster than when `whole` was measured, for instance because another load
    // ended), so that stops keep landing inside runs.
    let mut window = whole / 6 + 1;
    for _ in 0..40 {
        if saved >= 2 && saved_after_resuming >= 1 {
            break;
        }
        let after = Duration::from_millis(schedule.below(window));
        let (code, stderr) = signalled_solve("9x9", d, &["--resume"], "-INT", after);
        assert!(!stderr.contains("panicked"), "{stderr}");
        match code {
            130 if stderr.contains("state is saved") => {
                assert!(stderr.contains("--method solve") && stderr.contains("--resume"));
                assert!(has_solve_checkpoint(&ckpt), "{stderr}");
                saved += 1;
                saved_after_resuming += stderr.contains(": resumed after") as usize;
            }
            130 => assert!(stderr.contains("nothing was saved"), "{stderr}"),
            // Finished before the signal: start again from nothing, signalling sooner.
            0 => {
                std::fs::remove_dir_all(dir.path().join("9x9")).unwrap();
                window = window / 2 + 1;
            }
            _ => panic!("exit {code}: {stderr}"),
        }
    }
    eprintln!(
        "{saved} stopped with their state, {saved_after_resuming} after resuming (window \
         {window} ms of {whole} ms)"
    );
    assert!(saved >= 2 && saved_after_resuming >= 1);
    let (code, _, stderr) = bidtb(&[&solve[..], &["--out", d, "--resume"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains(": resumed after"), "{stderr}");
    assert!(
        !has_solve_checkpoint(&ckpt),
        "a finished run removes its state"
    );
    assert_eq!(
        solve_result(dir.path(), "9x9"),
        solve_result(plain.path(), "9x9")
    );

    // Killed (SIGKILL: no chance to save) with periodic saves every second.
    let killed = tempfile::tempdir().unwrap();
    let k = killed.path().to_str().unwrap();
    let saved = killed.path().join("9x9");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bidtb"))
        .args([&solve[..], &["--out", k, "--checkpoint-seconds", "1"]].concat())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // SIGKILL as soon as the first periodic save is there (it is complete once visible).
    while !has_solve_checkpoint(&saved) && child.try_wait().unwrap().is_none() {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let status = child.wait().unwrap();
    assert!(
        has_solve_checkpoint(&saved),
        "no periodic save before the run ended ({status})"
    );
    let (code, _, stderr) = bidtb(&[&solve[..], &["--out", k, "--resume"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("alpha: resumed after"), "{stderr}");
    assert_eq!(
        solve_result(killed.path(), "9x9"),
        solve_result(plain.path(), "9x9")
    );
}

/// The solve checkpoint `ck` (good bytes `good`) damaged at about `samples` offsets,
/// truncated there or with a bit flipped: `bidtb` with `args` (a `--resume` run) sets each
/// aside (`NAME.rejected`, kept as it was), names it, solves afresh and exits 0 (issue 66,
/// item 6: a damaged checkpoint stopped every `--resume` run).
fn every_damage_is_set_aside(ck: &Path, good: &[u8], args: &[&str], samples: usize) {
    let name = ck.file_name().unwrap().to_string_lossy().into_owned();
    for at in (0..good.len())
        .step_by(good.len() / samples + 1)
        .chain([good.len() - 1])
    {
        let mut flipped = good.to_vec();
        flipped[at] ^= 0x20;
        for bytes in [&good[..at], &flipped[..]] {
            std::fs::write(ck, bytes).unwrap();
            let (code, _, stderr) = bidtb(args);
            assert_eq!(code, 0, "offset {at}: {stderr}");
            assert!(
                stderr.contains(&name) && stderr.contains("set aside"),
                "{stderr}"
            );
            assert!(!stderr.contains("panicked"), "{stderr}");
            let mut rejected = ck.as_os_str().to_owned();
            rejected.push(".rejected");
            assert_eq!(std::fs::read(&rejected).unwrap(), bytes);
            clear_after_set_aside(ck);
        }
    }
}

/// Undo a run that set `ck` aside: its `.rejected` copy and the files it made beside it,
/// so that the next run resumes the same job again.
fn clear_after_set_aside(ck: &Path) {
    let dir = ck.parent().unwrap();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        if n.ends_with(".rejected") || n.ends_with(".bidtb") || n.ends_with(".json") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
}

/// A state kept by the library for the first job of a `board` run, KvK: α's final
/// strategies, as a checkpoint file holds them.
fn kvk_state(board: &str) -> Vec<u8> {
    use bidtb::Material;
    use bidtb::internal::graph::Graph;
    use bidtb::internal::index::Index;
    use bidtb::internal::solve::checkpoint::{self, Job};
    use bidtb::internal::solve::{self, Bound, Game, Settings};

    let board: bidtb::Board = board.parse().unwrap();
    let kvk = [Material::KVK];
    let graph = Graph::new(&Index::new(board, &kvk));
    let alpha = solve::solve_bound(
        Game::closed(&graph),
        Bound::Alpha,
        &Settings::default(),
        &|_| true,
    )
    .unwrap();
    let job = Job {
        board,
        materials: &kvk,
        graph: &graph,
    };
    checkpoint::encode(job, &[&alpha.kept()])
}

/// [`kvk_state`] saved where a `board` run in `out` resumes KvK from; its path.
fn kvk_checkpoint(out: &Path, board: &str) -> std::path::PathBuf {
    let board_dir = out.join(board);
    std::fs::create_dir_all(&board_dir).unwrap();
    let ck = bidtb::internal::solve::checkpoint::path(&board_dir, &[bidtb::Material::KVK]);
    std::fs::write(&ck, kvk_state(board)).unwrap();
    ck
}

#[test]
fn unusable_solve_checkpoints_are_refused_by_name() {
    let plain = tempfile::tempdir().unwrap();
    let p = plain.path().to_str().unwrap();
    let solve_args = ["generate", "--board", "5x5", "--method", "solve", "-q"];
    assert_eq!(bidtb(&[&solve_args[..], &["--out", p]].concat()).0, 0);

    // A state kept by the library: α's final strategies for the first job, KvK.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let ck = kvk_checkpoint(dir.path(), "5x5");
    let good = std::fs::read(&ck).unwrap();
    let resume = [&solve_args[..], &["--out", d, "--resume"]].concat();

    every_damage_is_set_aside(&ck, &good, &resume, 8);
    // Another board's state under this board's name: set aside as well.
    std::fs::write(&ck, kvk_state("4x6")).unwrap();
    let (code, _, stderr) = bidtb(&resume);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("not 5x5") && stderr.contains("set aside"),
        "{stderr}"
    );
    clear_after_set_aside(&ck);
    // Restored, it resumes from α's final strategies: one more evaluation, same result.
    std::fs::write(&ck, &good).unwrap();
    let loud = [
        "generate", "--board", "5x5", "--method", "solve", "--out", d, "--resume",
    ];
    let (code, _, stderr) = bidtb(&loud);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("alpha: resumed after 1 exact evaluations"),
        "{stderr}"
    );
    assert!(!ck.exists(), "a finished run removes its state");
    assert_eq!(
        solve_result(dir.path(), "5x5"),
        solve_result(plain.path(), "5x5")
    );
    // The flag of the other method is refused.
    let (code, _, stderr) = bidtb(&[
        "generate",
        "--board",
        "5x5",
        "--out",
        d,
        "--checkpoint-seconds",
        "5",
    ]);
    assert_eq!(code, 2);
    assert!(stderr.contains("--method solve only"), "{stderr}");
}

/// Four pieces (issue "Four pieces on the real board"): a run over every material up to
/// four men, killed with SIGKILL inside a four-piece material once its first periodic save
/// is there, and started again with --resume, keeps the finished materials and ends with
/// the files of an uninterrupted run.
#[test]
fn a_killed_four_piece_run_resumes_to_the_uninterrupted_result() {
    let four = [
        "generate", "--board", "5x5", "--pieces", "4", "--method", "solve", "-q",
    ];
    let plain = tempfile::tempdir().unwrap();
    let (code, _, stderr) =
        bidtb(&[&four[..], &["--out", plain.path().to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{stderr}");
    let killed = tempfile::tempdir().unwrap();
    let k = killed.path().to_str().unwrap();
    let saved = killed.path().join("5x5");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bidtb"))
        .args([&four[..], &["--out", k, "--checkpoint-seconds", "1"]].concat())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // The first save of a four-piece material: the three-piece tables exist by then.
    let first_four = killed.path().join("5x5/KBBvK.bidtb");
    while !(has_solve_checkpoint(&saved) && first_four.exists())
        && child.try_wait().unwrap().is_none()
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let status = child.wait().unwrap();
    assert!(
        has_solve_checkpoint(&saved),
        "no periodic save before the run ended ({status})"
    );
    let made_before: Vec<_> = std::fs::read_dir(killed.path().join("5x5"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".bidtb"))
        .collect();
    assert!(made_before.len() < 36, "killed inside the run");
    let (code, _, stderr) = bidtb(&[&four[..], &["--out", k, "--resume"]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        solve_result(killed.path(), "5x5"),
        solve_result(plain.path(), "5x5")
    );
}

/// Whether a board directory holds a solve checkpoint (any job's: `solve-KNvKN.ckpt`).
fn has_solve_checkpoint(board_dir: &std::path::Path) -> bool {
    std::fs::read_dir(board_dir)
        .map(|r| {
            r.flatten().any(|e| {
                let name = e.file_name().to_string_lossy().to_string();
                name.starts_with("solve-") && name.ends_with(".ckpt")
            })
        })
        .unwrap_or(false)
}

/// Asks the run to stop when a stage line names `stage` (`beta: float`).
struct StopAt<'a> {
    stage: &'a str,
    flag: &'a std::sync::atomic::AtomicBool,
}

impl bidtb::internal::progress::Observer for StopAt<'_> {
    fn notice_detail(&self, text: &str) {
        if text == self.stage {
            self.flag.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

#[test]
fn a_stop_before_beta_keeps_a_state_keeps_alphas_final_one() {
    use bidtb::internal::boundary;
    use bidtb::internal::generate::driver::{self, InMemory};
    use bidtb::internal::graph::Graph;
    use bidtb::internal::index::Index;
    use bidtb::internal::progress::Control;
    use bidtb::internal::solve::Bound;
    use bidtb::internal::solve::checkpoint::{self, Job, Loaded};
    use bidtb::internal::solve::run::{Run, run};
    use bidtb::{Board, Material};
    use bidtb::{Options, Silent};

    // 3x4 KPvKP: α < β at 11 positions, so β is solved apart after α.
    let board = Board::new(3, 4).unwrap();
    let m: Material = "KPvKP".parse().unwrap();
    let mut solved = InMemory::default();
    let mut deps = Options::solve(board);
    deps.materials = Material::next_outside(&[m]);
    assert!(matches!(
        driver::run(&deps, &Silent, &Control::default(), &mut solved),
        Ok(driver::Driven::Finished(_, skipped)) if skipped.is_empty()
    ));
    let graph = Graph::new(&Index::new(board, &[m]));
    let (terminals, _) = boundary::terminals(&graph, &solved, &|| false)
        .unwrap()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let settings = bidtb::SolveSettings::default();
    let flag = std::sync::atomic::AtomicBool::new(false);
    let stopping = Control {
        checkpoint_dir: Some(dir.path().to_path_buf()),
        stop: Some(&flag),
        ..Control::default()
    };
    let stop_at_beta = StopAt {
        stage: "beta: float",
        flag: &flag,
    };
    let stopped = run(
        board,
        &[m],
        &graph,
        &terminals,
        &stop_at_beta,
        &stopping,
        &settings,
    )
    .unwrap();
    let Run::Interrupted {
        checkpoint: Some(path),
    } = stopped
    else {
        panic!("stopped in beta's first stage, nothing was saved")
    };
    assert_eq!(path, checkpoint::path(dir.path(), &[m]));
    // The checkpoint holds α's final state alone: its strategies after its rounds.
    let job = Job {
        board,
        materials: &[m],
        graph: &graph,
    };
    let (Loaded::States(states), _) = checkpoint::load(dir.path(), job).unwrap() else {
        panic!("the checkpoint loads")
    };
    assert_eq!(states.len(), 1);
    assert_eq!(states[0].stats.bound, Bound::Alpha);
    assert!(!states[0].stats.rounds.is_empty());
    // Resumed, the run ends with the values of an uninterrupted one.
    let resuming = Control {
        checkpoint_dir: Some(dir.path().to_path_buf()),
        resume: true,
        ..Control::default()
    };
    let finished = |r: Run| match r {
        Run::Finished(out) => out,
        Run::Interrupted { .. } => panic!("not finished"),
    };
    let resumed = finished(
        run(
            board,
            &[m],
            &graph,
            &terminals,
            &Silent,
            &resuming,
            &settings,
        )
        .unwrap(),
    );
    let plain = finished(
        run(
            board,
            &[m],
            &graph,
            &terminals,
            &Silent,
            &Control::default(),
            &settings,
        )
        .unwrap(),
    );
    assert_eq!(resumed.alpha.values.values(), plain.alpha.values.values());
    let beta = |o: &bidtb::internal::solve::run::Outcome| {
        o.beta
            .as_ref()
            .expect("beta apart")
            .values
            .values()
            .to_vec()
    };
    assert_eq!(beta(&resumed), beta(&plain));
    assert!(beta(&plain) != plain.alpha.values.values());
}

/// A checkpoint too large to decode in the memory available is not loaded (on this machine
/// 6x6 KBNvKN's 27.4 GB one got the process killed by the kernel): the job says so,
/// naming the file, and is solved from the start; with the memory, `--resume` uses it.
#[test]
fn a_checkpoint_too_large_for_the_memory_is_not_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let ck = kvk_checkpoint(dir.path(), "5x5");
    let run = |limit: Option<&str>| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_bidtb"));
        c.args([
            "generate",
            "--board",
            "5x5",
            "--material",
            "KvK",
            "--method",
            "solve",
        ])
        .args(["-q", "--resume", "--out"])
        .arg(dir.path());
        // The guard's own limit apart, so that only the resume is short of memory.
        run_with_env(
            c,
            &[
                ("BIDTB_MEMORY_LIMIT", limit),
                ("BIDTB_MEMORY_GUARD", Some("8G")),
            ],
        )
    };
    // 33 MB, less what the process holds (more than 1 MB) and a margin of 32 MB: no room
    // for any state, where the job itself is planned at less.
    let (code, stderr) = run(Some("33M"));
    assert_eq!(code, 0, "{stderr}");
    let named = format!("resuming from {}", ck.display());
    assert!(
        stderr.contains(&named) && stderr.contains("MB of memory"),
        "{stderr}"
    );
    assert!(stderr.contains("solving from the start"), "{stderr}");
    assert!(!stderr.contains("resumed after"), "{stderr}");
    let board_dir = dir.path().join("5x5");
    let made = std::fs::read(board_dir.join("KvK.bidtb")).unwrap();
    // The same state again, resumed from where the memory allows: the same table.
    std::fs::remove_file(board_dir.join("KvK.bidtb")).unwrap();
    std::fs::remove_file(board_dir.join("KvK.json")).unwrap();
    let ck = kvk_checkpoint(dir.path(), "5x5");
    let (code, stderr) = run(None);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("resumed after"), "{stderr}");
    assert!(!ck.exists(), "{stderr}");
    assert_eq!(std::fs::read(board_dir.join("KvK.bidtb")).unwrap(), made);
}

/// A run of `--pieces 4` stopped with Ctrl-C names the command that resumes it, the request
/// included: without `--pieces 4` the same command would resume the three-piece set.
#[test]
fn a_stopped_run_names_its_request_in_the_resume_command() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, stderr) = signalled_solve(
        "5x5",
        d,
        &["--pieces", "4"],
        "-INT",
        Duration::from_millis(0),
    );
    assert_eq!(code, 130, "{stderr}");
    let again =
        format!("`bidtb generate --board 5x5 --method solve --pieces 4 --out {d} --resume`");
    assert!(stderr.contains(&again), "{stderr}");
}

/// Jobs side by side (`--jobs 2`, the default) make the files of one job after another:
/// the same tables, records, lists and summary, in the same order; and they do run side
/// by side (a job starts before the one started last is done).
#[test]
fn jobs_side_by_side_make_the_files_of_one_after_another() {
    let four = [
        "generate", "--board", "5x5", "--pieces", "4", "--method", "solve",
    ];
    let (one, two) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let out = |d: &tempfile::TempDir| d.path().to_str().unwrap().to_string();
    let (code, _, stderr) =
        bidtb(&[&four[..], &["--jobs", "1", "-q", "--out", &out(&one)]].concat());
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = bidtb(&[&four[..], &["--jobs", "2", "--out", &out(&two)]].concat());
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        solve_result(one.path(), "5x5"),
        solve_result(two.path(), "5x5")
    );
    // `material 9/36: KBvKB` starts, `material 9/36 done: …` ends.
    let mut under_way: Vec<String> = Vec::new();
    let mut overlapped = 0;
    for line in stderr.lines() {
        let Some(rest) = line.strip_prefix("material ") else {
            continue;
        };
        let number = rest.split([':', ' ']).next().unwrap().to_string();
        if rest.contains(" done:") {
            under_way.retain(|n| *n != number);
        } else if !rest.contains("skipped") {
            overlapped += !under_way.is_empty() as usize;
            under_way.push(number);
        }
    }
    assert!(overlapped > 0, "no job started beside another:\n{stderr}");
    assert!(stderr.contains("stage solve ("), "{stderr}");
}

/// Raises the stop flag when the first job has finished.
struct StopAfterFirst<'a>(&'a std::sync::atomic::AtomicBool);

impl bidtb::internal::progress::Observer for StopAfterFirst<'_> {
    fn finished(&self, k: usize, _total: usize, _line: &str) {
        if k == 1 {
            self.0.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// A stop that comes between jobs (the first kept, the next not begun) interrupts the run
/// before the next job: the run is not reported finished with materials missing.
#[test]
fn a_stop_between_jobs_interrupts_the_run_before_the_next() {
    use bidtb::Options;
    use bidtb::internal::generate::driver::{self, Driven, InMemory};
    use bidtb::internal::progress::Control;
    use bidtb::{Board, Material};

    let mut options = Options::solve(Board::new(4, 4).unwrap());
    options.materials = vec!["KRvK".parse::<Material>().unwrap(), "KQvK".parse().unwrap()];
    let flag = std::sync::atomic::AtomicBool::new(false);
    let control = Control {
        stop: Some(&flag),
        ..Control::default()
    };
    let mut store = InMemory::default();
    let result = driver::run(&options, &StopAfterFirst(&flag), &control, &mut store);
    let Ok(Driven::Interrupted(stopped)) = result else {
        panic!("a stop between two jobs interrupts the run");
    };
    assert_eq!(stopped.len(), 1);
    assert_eq!(
        stopped[0].materials,
        vec!["KQvK".parse::<Material>().unwrap()]
    );
    assert_eq!((stopped[0].n, stopped[0].checkpoint.as_deref()), (0, None));
}

/// A job's checkpoint goes once its table is written, not at the end of the run: a long
/// run (6x6 five men) would otherwise keep every finished job's saved state on disk. 6x6
/// KRvKN and KBvKN, one after the other, save every second; while the run goes on, a
/// material whose table has been there for a while has no checkpoint left, and one of them
/// was seen with a checkpoint before its table came (so the check is not empty).
#[test]
fn a_finished_jobs_checkpoint_goes_with_its_table() {
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("6x6");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bidtb"))
        .args([
            "generate",
            "--board",
            "6x6",
            "--method",
            "solve",
            "--material",
            "KRvKN,KBvKN",
            "--jobs",
            "1",
            "--checkpoint-seconds",
            "1",
            "-q",
            "--out",
        ])
        .arg(dir.path())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (mut saved_then_made, mut checked) = (false, 0);
    let mut seen_saved: Vec<String> = Vec::new();
    while child.try_wait().unwrap().is_none() {
        for m in ["KRvKN", "KBvKN"] {
            let (table, ckpt) = (
                board.join(format!("{m}.bidtb")),
                board.join(format!("solve-{m}.ckpt")),
            );
            if !table.exists() && ckpt.exists() && !seen_saved.contains(&m.to_string()) {
                seen_saved.push(m.to_string());
            }
            if table.exists() {
                // Give the writer a moment between the table's rename and the removal.
                std::thread::sleep(Duration::from_millis(300));
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                assert!(
                    !ckpt.exists(),
                    "{m}'s checkpoint is still there while the run goes on"
                );
                checked += 1;
                saved_then_made |= seen_saved.contains(&m.to_string());
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(child.wait().unwrap().success());
    assert!(
        saved_then_made && checked > 0,
        "no material was seen saved and then made while the run went on ({seen_saved:?}, \
         {checked} checks)"
    );
}
