//! What a hostile user, a careless operator or a second run in the same directory can do,
//! and what bidtb does about it: one regression test per finding of the hostile probe
//! (issue 23), run through the binary as the probe ran it.

use crate::common;
use crate::common::bidtb;

use bidtb::internal::dirlock::DirLock;

/// A second `generate` in a directory that a live run holds is refused, names the holder
/// and touches nothing there (the first run's checkpoints and temporaries stay).
#[test]
fn a_second_run_in_a_held_directory_is_refused_and_touches_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let board = dir.path().join("4x4");
    std::fs::create_dir_all(&board).unwrap();
    // This test process plays the first run: it holds the lock, has a checkpoint and a
    // temporary file in flight.
    let held = DirLock::acquire(&board).unwrap();
    let checkpoint = board.join("checkpoint-000040.ckpt");
    let temporary = board.join(format!(".KQvK.bidtb.tmp{}", std::process::id()));
    std::fs::write(&checkpoint, b"the first run's state").unwrap();
    std::fs::write(&temporary, b"half written").unwrap();
    let out = dir.path().to_str().unwrap();
    for method in ["iterate", "solve"] {
        let (code, _, stderr) = bidtb(&[
            "generate", "--board", "4x4", "--method", method, "--out", out, "-q",
        ]);
        assert_eq!(code, 1, "{stderr}");
        assert!(
            stderr.contains(&format!("process {}", std::process::id()))
                && stderr.contains("in use"),
            "{stderr}"
        );
        assert!(
            checkpoint.exists() && temporary.exists(),
            "{method} touched the directory"
        );
        assert!(!board.join("KQvK.bidtb").exists());
    }
    // Once the first run is over, the directory is free; its leftover temporary (of a
    // process that is gone by then, here a process id that cannot exist) is cleared.
    drop(held);
    std::fs::remove_file(&temporary).unwrap();
    let dead = board.join(".KQvK.bidtb.tmp4294967295");
    std::fs::write(&dead, b"half written").unwrap();
    // The first run's checkpoint is kept unless a run asks to start afresh (issue 66,
    // item 7).
    let (code, _, stderr) = bidtb(&["generate", "--board", "4x4", "--out", out, "-q"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(checkpoint.exists());
    let (code, _, stderr) = bidtb(&["generate", "--board", "4x4", "--out", out, "-q", "--fresh"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!dead.exists());
    assert!(!checkpoint.exists());
    assert!(board.join("KQvK.bidtb").exists());
}

/// An output path that is a file, or lies under one, is named as not a directory.
#[test]
fn an_output_path_that_is_a_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("afile");
    std::fs::write(&file, b"x").unwrap();
    let path = file.to_str().unwrap();
    for args in [
        vec!["atlas", "--boards", "3x3", "--out", path, "-q"],
        vec!["generate", "--board", "3x3", "--out", path, "-q"],
    ] {
        let (code, _, stderr) = bidtb(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.contains("afile: not a directory"),
            "{args:?}: {stderr}"
        );
        assert!(
            !stderr.contains("os error") && !stderr.contains("exists"),
            "{args:?}: {stderr}"
        );
    }
}

/// A solve checkpoint with valid checksums and a forged value: the resumed state does not
/// prove out; the run says so, names the file, sets it aside and solves the material again
/// from the start, ending with the right table.
#[test]
fn a_forged_checkpoint_is_named_set_aside_and_the_material_solved_afresh() {
    use bidtb::Material;
    use bidtb::internal::graph::Graph;
    use bidtb::internal::index::Index;
    use bidtb::internal::solve::checkpoint::{self, Job};
    use bidtb::internal::solve::{self, Bound, Game, Settings};
    use bidtb::{Board, Value};

    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let plain = tempfile::tempdir().unwrap();
    let args = [
        "generate",
        "--board",
        "4x4",
        "--method",
        "solve",
        "--material",
        "KvK",
        "-q",
    ];
    let (code, _, stderr) =
        bidtb(&[&args[..], &["--out", plain.path().to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{stderr}");

    // The state a finished α solve keeps, with one position's value forged as solved.
    let board = Board::new(4, 4).unwrap();
    let materials: [Material; 1] = ["KvK".parse().unwrap()];
    let graph = Graph::new(&Index::new(board, &materials));
    let alpha = solve::solve_bound(
        Game::closed(&graph),
        Bound::Alpha,
        &Settings::default(),
        &|_| true,
    )
    .unwrap();
    let job = Job {
        board,
        materials: &materials,
        graph: &graph,
    };
    let bytes = checkpoint::encode(job, &[&alpha.kept()]);
    let checkpoint::Loaded::States(mut states) = checkpoint::decode(&bytes, job).unwrap() else {
        panic!("the state decodes")
    };
    let board_dir = dir.path().join("4x4");
    std::fs::create_dir_all(&board_dir).unwrap();
    let forged = (0..graph.positions() as u32)
        .map(|p| (p, Value::new(1u32.into(), 3u32.into())))
        .collect();
    states[0].evaluation.solved = forged;
    checkpoint::save(&board_dir, job, &[&states[0].as_ref()]).unwrap();

    let (code, _, stderr) = bidtb(&[&args[..], &["--out", out, "--resume"]].concat());
    eprintln!("{stderr}");
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("solve-KvK.ckpt") && stderr.contains("did not prove out"),
        "{stderr}"
    );
    assert!(board_dir.join("solve-KvK.ckpt.rejected").exists());
    assert!(!board_dir.join("solve-KvK.ckpt").exists());
    assert_eq!(
        std::fs::read(board_dir.join("KvK.bidtb")).unwrap(),
        std::fs::read(plain.path().join("4x4/KvK.bidtb")).unwrap()
    );
}

/// `bidtb` run by `sh` under an address-space limit (`ulimit -v`, in KiB).
fn bidtb_under_ulimit(kib: u64, args: &[&str]) -> (i32, String) {
    let script = format!("ulimit -v {kib} && exec \"$0\" \"$@\"");
    let out = std::process::Command::new("sh")
        .args(["-c", &script, env!("CARGO_BIN_EXE_bidtb")])
        .args(args)
        .output()
        .expect("sh runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A memory limit that does not parse is refused (exit 2, naming the accepted forms),
/// never silently ignored; the forms it names are accepted.
#[test]
fn memory_limits_parse_or_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let run = |limit: &str, args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_bidtb"))
            .args(args)
            .env("BIDTB_MEMORY_LIMIT", limit)
            .output()
            .unwrap();
        (
            out.status.code().unwrap(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let generate = ["generate", "--board", "3x3", "--out", out, "-q"];
    for bad in ["abc", "-1", "", "1.2.3", "12Q", "99999999999999999999999"] {
        for args in [&generate[..], &["query", "--tables", out, "k2/3/K1R"]] {
            let (code, stderr) = run(bad, args);
            assert_eq!(code, 2, "{bad:?} {args:?}: {stderr}");
            assert!(
                stderr.contains("BIDTB_MEMORY_LIMIT") && stderr.contains("1.5G"),
                "{stderr}"
            );
        }
    }
    for good in ["1.5G", "1T", "2 GiB", "1073741824"] {
        let (code, stderr) = run(good, &generate);
        assert_eq!(code, 0, "{good:?}: {stderr}");
    }
    // A small fraction of a gigabyte is a limit, and it holds.
    let (code, stderr) = run("0.03G", &["generate", "--board", "6x6", "--out", out, "-q"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("needs about") && stderr.contains("31 MB"),
        "{stderr}"
    );
}

/// Under `ulimit -v`, work that cannot fit ends with one line and exit status 1: refused
/// up front (too little to start, or less than the estimate), or, where the estimate did not
/// foresee it, out of memory when an allocation fails; never an abort with a backtrace.
#[test]
fn an_address_space_limit_gives_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    assert_eq!(
        bidtb(&["generate", "--board", "4x4", "--out", out, "-q"]).0,
        0
    );
    let one_line = |code: i32, stderr: &str| {
        assert_eq!(code, 1, "{stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("backtrace"),
            "{stderr}"
        );
    };
    for args in [
        vec!["verify", "--tables", out],
        vec!["query", "--tables", out, "k3/4/4/K2R"],
        vec!["generate", "--board", "3x3", "--out", out, "-q"],
    ] {
        let (code, stderr) = bidtb_under_ulimit(40_000, &args);
        one_line(code, &stderr);
        assert!(stderr.contains("ulimit -v"), "{stderr}");
    }
    // Above the floor, the estimate counts the limit.
    let six = ["generate", "--board", "6x6", "--out", out, "-q"];
    let (code, stderr) = bidtb_under_ulimit(90_000, &six);
    one_line(code, &stderr);
    assert!(
        stderr.contains("needs about") && stderr.contains("ulimit -v"),
        "{stderr}"
    );
    // Between the estimate and the real peak: out of memory, said in one line (or, where
    // the allocator's reservations leave no room for the worker threads, which depends on
    // the binary's layout, that refusal: one line too).
    let (code, stderr) = bidtb_under_ulimit(150_000, &six);
    one_line(code, &stderr);
    assert!(
        stderr.contains("out of memory")
            || stderr.contains("needs about")
            || stderr.contains("cannot start the worker threads"),
        "{stderr}"
    );
    // Small tables are still answered under a modest limit.
    let (code, stderr) =
        bidtb_under_ulimit(100_000, &["verify", "--tables", out, "--board", "4x4"]);
    assert_eq!(code, 0, "{stderr}");
}

/// Across a sweep of tight `ulimit -v` values, a run ends with one line or succeeds: never
/// an abort. (A thread started without room for its signal stack aborts the process in
/// the standard library: at 150 MB the job watch once did, so no thread starts without
/// room.)
#[test]
fn tight_address_space_limits_never_abort() {
    let dir = tempfile::tempdir().unwrap();
    for kib in (120_000..=200_000).step_by(5_000) {
        let out = dir.path().join(kib.to_string());
        let six = [
            "generate",
            "--board",
            "6x6",
            "--out",
            out.to_str().unwrap(),
            "-q",
        ];
        let (code, stderr) = bidtb_under_ulimit(kib, &six);
        assert!(
            code == 0 || code == 1,
            "ulimit -v {kib}: exit {code}: {stderr}"
        );
        assert!(
            stderr.trim_end().lines().count() <= 1 && !stderr.contains("panicked"),
            "ulimit -v {kib}: {stderr}"
        );
    }
}

/// `--threads` above the stated bound is refused before any thread starts.
#[test]
fn thread_counts_are_bounded() {
    let started = std::time::Instant::now();
    let (code, _, stderr) = bidtb(&[
        "generate",
        "--board",
        "3x3",
        "--threads",
        "65535",
        "--out",
        "/nonexistent",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("1..=1024"), "{stderr}");
    assert!(started.elapsed().as_secs() < 10);
    let (code, _, stderr) = bidtb(&[
        "generate",
        "--board",
        "3x3",
        "--threads",
        "0",
        "--out",
        "/nonexistent",
    ]);
    assert_eq!(code, 2, "{stderr}");
}

/// Usage errors say what is missing; bare `bidtb` shows its commands (exit 2).
#[test]
fn usage_errors_name_what_is_missing() {
    for (args, missing) in [
        (vec!["query"], "<FEN>"),
        (vec!["query", "--json"], "<FEN>"),
        (vec!["map"], "<FEN>"),
        (vec!["plot"], "--svg <FILE>"),
    ] {
        let (code, _, stderr) = bidtb(&args);
        assert_eq!(code, 2, "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains("not provided")
                && stderr.contains(missing)
                && stderr.contains("usage: bidtb"),
            "{args:?}: {stderr}"
        );
    }
    let (code, stdout, stderr) = bidtb(&[]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("Usage: bidtb <COMMAND>") && stderr.contains("generate"),
        "{stderr}"
    );
    assert!(!stderr.starts_with("bidtb: Exact"), "{stderr}");
}

/// Table directories as a careless operator leaves them: a board's directory given as the
/// root, look-alike board directories beside the real one, a directory or FIFO under a
/// table's name. Each is named, none shadows the real tables, nothing hangs.
#[test]
fn table_directories_are_read_by_their_canonical_names_only() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let out = root.to_str().unwrap();
    assert_eq!(
        bidtb(&["generate", "--board", "4x4", "--out", out, "-q"]).0,
        0
    );
    // A board's directory as the root: named, with the root to give instead.
    let board_dir = root.join("4x4");
    for args in [
        vec![
            "query",
            "--tables",
            board_dir.to_str().unwrap(),
            "k3/4/4/K3",
        ],
        vec!["verify", "--tables", board_dir.to_str().unwrap()],
        vec!["map", "--tables", board_dir.to_str().unwrap(), "k3/4/4/K3"],
    ] {
        let (code, _, stderr) = bidtb(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.contains("one board's directory") && stderr.contains(&format!("--tables {out}")),
            "{stderr}"
        );
        assert!(!stderr.contains("generate"), "{stderr}");
    }
    // Look-alikes beside 4x4, one holding a table of its own: ignored.
    for name in ["04x04", "4X4", " 4x4", "4x4 "] {
        std::fs::create_dir(root.join(name)).unwrap();
    }
    std::fs::copy(board_dir.join("KvK.bidtb"), root.join("04x04/KvK.bidtb")).unwrap();
    std::fs::copy(board_dir.join("KvK.bidtb"), board_dir.join("kvk.bidtb")).unwrap();
    let (code, stdout, stderr) = bidtb(&["query", "--tables", out, "--json", "k3/4/4/K2R"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["value"], "23/32", "{stdout}");
    let (code, stdout, stderr) = bidtb(&["verify", "--tables", out, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 1, "{stdout}");
    // A directory, or a FIFO, under a table's name: refused by name, at once.
    std::fs::remove_file(board_dir.join("KNvK.bidtb")).unwrap();
    std::fs::create_dir(board_dir.join("KNvK.bidtb")).unwrap();
    let (code, _, stderr) = bidtb(&["query", "--tables", out, "k3/4/4/KN2"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("KNvK.bidtb: not a regular file"),
        "{stderr}"
    );
    std::fs::remove_dir(board_dir.join("KNvK.bidtb")).unwrap();
    let fifo = board_dir.join("KNvK.bidtb");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for args in [
        vec!["query", "--tables", out, "k3/4/4/KN2"],
        vec!["verify", "--tables", out],
    ] {
        let (code, _, stderr) = bidtb(&args);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("KNvK.bidtb: not a regular file"),
            "{stderr}"
        );
    }
}

/// A black pawn on the first rank is reported on its own square.
#[test]
fn a_pawn_on_a_back_rank_is_named_on_its_square() {
    let (code, _, stderr) = bidtb(&["query", "k3/4/4/Kp2"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("(b1)"), "{stderr}");
    let (code, _, stderr) = bidtb(&["query", "kP2/4/4/K3"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("(b4)"), "{stderr}");
}

/// Send raw bytes to the server and read its answer until it closes (or 5 s pass).
fn raw_exchange(host: &str, request: &[u8]) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(5)))
        .unwrap();
    s.write_all(request).unwrap();
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

/// The JSON body of a raw HTTP answer.
fn json_body(answer: &str) -> serde_json::Value {
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("");
    serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {answer}"))
}

fn serve_4x4() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    assert_eq!(
        bidtb(&["generate", "--board", "4x4", "--out", out, "-q"]).0,
        0
    );
    let root = dir.path().to_path_buf();
    (dir, root)
}

/// Malformed request lines and other methods get JSON errors, like every other error.
#[test]
fn the_server_answers_malformed_requests_with_json() {
    let (_dir, root) = serve_4x4();
    let server = common::Server::start(&root);
    let host = server.host();
    for (request, status) in [
        (&b"GET /\xff\xfe HTTP/1.1\r\nHost: x\r\n\r\n"[..], "400"),
        (
            b"GET /api/query?fen=\xff HTTP/1.1\r\nHost: x\r\n\r\n",
            "400",
        ),
        (b"GARBAGE\r\n\r\n", "400"),
        (
            b"POST /api/query HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
            "405",
        ),
        (b"DELETE / HTTP/1.1\r\nHost: x\r\n\r\n", "405"),
        (b"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n", "404"),
    ] {
        let answer = raw_exchange(&host, request);
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status}")),
            "{answer}"
        );
        assert!(json_body(&answer)["error"].is_string(), "{answer}");
    }
    // A good request still works, on its own connection.
    let answer = raw_exchange(
        &host,
        b"GET /api/query?fen=k3/4/4/K2R HTTP/1.1\r\nHost: x\r\n\r\n",
    );
    assert_eq!(json_body(&answer)["value"], "23/32", "{answer}");
}

/// Slow and idle clients: a client holding an unfinished request does not keep SIGTERM
/// from stopping the server; under `ulimit -n 64`, a hundred unfinished requests neither
/// crash the server nor keep a good client out for longer than the header timeout.
#[test]
fn slow_clients_neither_block_shutdown_nor_starve_others() {
    use std::io::Write;
    use std::time::{Duration, Instant};
    let (_dir, root) = serve_4x4();

    let mut server = common::Server::start(&root);
    let mut held = std::net::TcpStream::connect(server.host()).unwrap();
    held.write_all(b"GET /api/boards HTTP/1.1\r\nHost: x\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let asked = Instant::now();
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status();
    while server.exited().is_none() {
        assert!(
            asked.elapsed() < Duration::from_secs(9),
            "still running after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(server.exited(), Some(Some(0)));
    drop(held);

    let server = common::Server::start_with(&root, &["--header-timeout", "1"], Some(64));
    let host = server.host();
    let slow: Vec<std::net::TcpStream> = (0..100)
        .filter_map(|_| {
            let mut s = std::net::TcpStream::connect(&host).ok()?;
            s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").ok()?;
            Some(s)
        })
        .collect();
    assert!(slow.len() >= 60, "{} connections", slow.len());
    let started = Instant::now();
    let answer = raw_exchange(&host, b"GET /api/boards HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(json_body(&answer)["boards"][0], "4x4", "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    drop(slow);
    assert_eq!(server.stop(), Some(0));
}

/// The memory-map contract: regenerating the tables a server has open (files replaced by
/// rename) leaves it answering; the contract is stated in the server's help and the format
/// document.
#[test]
fn regenerating_served_tables_keeps_the_server_answering() {
    let (_dir, root) = serve_4x4();
    let server = common::Server::start(&root);
    let host = server.host();
    let ask = || {
        raw_exchange(
            &host,
            b"GET /api/query?fen=k3/4/4/K2R HTTP/1.1\r\nHost: x\r\n\r\n",
        )
    };
    assert_eq!(json_body(&ask())["value"], "23/32");
    for method in ["solve", "iterate"] {
        let (code, _, stderr) = bidtb(&[
            "generate",
            "--board",
            "4x4",
            "--method",
            method,
            "--out",
            root.to_str().unwrap(),
            "-q",
        ]);
        assert_eq!(code, 0, "{stderr}");
        assert_eq!(json_body(&ask())["value"], "23/32");
    }
    assert_eq!(server.stop(), Some(0));
    let (_, help, _) = bidtb(&["serve", "--help"]);
    assert!(help.contains("must not be modified in place"), "{help}");
    let format =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/format.md"))
            .unwrap();
    assert!(format.contains("must not be modified in place while it is open"));
}

/// Run `bidtb` with `args` in directory `cwd`; its exit code, stdout and stderr.
fn bidtb_in(cwd: &std::path::Path, args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bidtb"))
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Make a FIFO at `path`.
fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

/// Open a FIFO's reading end without waiting for a writer; read it to its end once the
/// writer is gone with [`drain`].
fn open_fifo_reader(path: &std::path::Path) -> std::fs::File {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .unwrap()
}

/// What a writer that has finished left in a FIFO opened by [`open_fifo_reader`].
fn drain(mut f: std::fs::File) -> String {
    use std::io::Read;
    let mut text = String::new();
    let _ = f.read_to_string(&mut text);
    text
}

fn is_svg(text: &str) -> bool {
    text.starts_with("<svg") && text.trim_end().ends_with("</svg>")
}

/// Output files (issue 66, item 1): `-` is standard output; a symbolic link is written
/// through to its target (the link stays); a FIFO and a link to this process's standard
/// output are written into, not replaced; a directory is refused and left alone. For
/// `map --svg`, `plot --svg` and the atlas's files.
#[test]
fn outputs_write_through_links_into_fifos_and_to_standard_output() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let out = root.to_str().unwrap();
    assert_eq!(
        bidtb(&["generate", "--board", "4x4", "--out", out, "-q"]).0,
        0
    );
    let fen = "3k/1R2/K3/4";
    let map = |svg: &str| bidtb_in(root, &["map", "--tables", out, fen, "--svg", svg]);
    let run = root.join("4x4");
    let plot = |svg: &str| bidtb_in(root, &["plot", run.to_str().unwrap(), "--svg", svg]);
    type Draw<'a> = &'a dyn Fn(&str) -> (i32, String, String);
    for (name, draw) in [("map", &map as Draw<'_>), ("plot", &plot as Draw<'_>)] {
        // `-`: standard output, no file named `-`.
        let (code, stdout, stderr) = draw("-");
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(is_svg(&stdout), "{name}: {stdout}");
        assert!(stderr.contains("standard output"), "{name}: {stderr}");
        assert!(!root.join("-").exists(), "{name} wrote a file named -");
        // A symbolic link (relative, into another directory): the target gets the picture.
        let elsewhere = root.join(format!("{name}-pictures"));
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("p.svg"), b"old").unwrap();
        let link = root.join(format!("{name}-link.svg"));
        std::os::unix::fs::symlink(format!("{name}-pictures/p.svg"), &link).unwrap();
        let (code, _, stderr) = draw(link.to_str().unwrap());
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink(),
            "{name} replaced the link"
        );
        assert!(is_svg(
            &std::fs::read_to_string(elsewhere.join("p.svg")).unwrap()
        ));
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 1);
        // A FIFO: written into, still a FIFO.
        let fifo = root.join(format!("{name}.fifo"));
        mkfifo(&fifo);
        let reader = open_fifo_reader(&fifo);
        let (code, _, stderr) = draw(fifo.to_str().unwrap());
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo(),
            "{name} replaced the FIFO"
        );
        assert!(
            is_svg(&drain(reader)),
            "{name}: nothing came through the FIFO"
        );
        // A link to this process's standard output (as /dev/stdout is): the picture goes
        // there, the link stays.
        let stdout_link = root.join(format!("{name}-stdout"));
        std::os::unix::fs::symlink("/proc/self/fd/1", &stdout_link).unwrap();
        let (code, stdout, stderr) = draw(stdout_link.to_str().unwrap());
        assert_eq!(code, 0, "{name}: {stderr}");
        assert!(is_svg(&stdout), "{name}: {stdout}");
        assert!(
            std::fs::symlink_metadata(&stdout_link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        // A directory: refused, named, left alone.
        let (code, _, stderr) = draw(elsewhere.to_str().unwrap());
        assert_eq!(code, 1, "{name}: {stderr}");
        assert!(stderr.contains("a directory"), "{name}: {stderr}");
        assert!(elsewhere.is_dir());
    }
    // The atlas's files: atlas.md as a link to a file elsewhere, atlas.json as a FIFO.
    let atlas = root.join("atlas");
    std::fs::create_dir(&atlas).unwrap();
    let kept = root.join("kept.md");
    std::fs::write(&kept, b"old").unwrap();
    std::os::unix::fs::symlink(&kept, atlas.join("atlas.md")).unwrap();
    mkfifo(&atlas.join("atlas.json"));
    let reader = open_fifo_reader(&atlas.join("atlas.json"));
    let (code, _, stderr) = bidtb(&[
        "atlas",
        "--boards",
        "3x3",
        "--out",
        atlas.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        std::fs::symlink_metadata(atlas.join("atlas.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(std::fs::read_to_string(&kept).unwrap().contains("3x3"));
    assert!(
        std::fs::symlink_metadata(atlas.join("atlas.json"))
            .unwrap()
            .file_type()
            .is_fifo()
    );
    assert!(drain(reader).contains("\"rows\""));
}

/// A closed pipe (issue 66, item 4): `generate … 2>&1 | head -3` whose reader is gone
/// before the run's first line, and `dump | head`, end quietly: no panic (exit 101), the
/// run's work done and its status its own.
#[test]
fn a_closed_pipe_ends_output_quietly() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    for method in ["iterate", "solve"] {
        // Both streams into one pipe whose reading end is closed at once.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let status = Command::new(env!("CARGO_BIN_EXE_bidtb"))
            .args([
                "generate", "--board", "4x4", "--method", method, "--out", out,
            ])
            .stdin(Stdio::null())
            .stdout(writer.try_clone().unwrap())
            .stderr(writer)
            .status()
            .unwrap();
        assert_eq!(status.code(), Some(0), "{method}");
        assert!(dir.path().join("4x4/KQvK.bidtb").exists(), "{method}");
    }
    // Standard output closed, standard error open: nothing said, exit 0.
    for args in [
        vec!["dump", "--tables", out, "--board", "4x4", "KRvK"],
        vec!["query", "--tables", out, "3k/1R2/K3/4"],
        vec!["verify", "--tables", out, "--board", "4x4"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let done = Command::new(env!("CARGO_BIN_EXE_bidtb"))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("Broken pipe") && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
    }
}

/// Help texts (issue 66, item 11): `upgrade` names the format version this build writes,
/// `generate` the solve checkpoints' real names.
#[test]
fn help_texts_name_the_current_version_and_files() {
    let v = bidtb::internal::table::VERSION;
    let (code, stdout, _) = bidtb(&["upgrade", "--help"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains(&format!("(version {v}, docs/src/format.md)")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("older than version {v} is")),
        "{stdout}"
    );
    for old in 1..v {
        assert!(!stdout.contains(&format!("version {old},")), "{stdout}");
    }
    let (_, stdout, _) = bidtb(&["--help"]);
    assert!(
        stdout.contains(&format!("(version {v}, docs/src/format.md)")),
        "{stdout}"
    );
    let (code, stdout, _) = bidtb(&["generate", "--help"]);
    assert_eq!(code, 0);
    assert!(!stdout.contains("solve.ckpt"), "{stdout}");
    assert!(stdout.contains("solve-MATERIAL.ckpt"), "{stdout}");
}

/// Messages and guards (issue 66, item 13): control characters from user input (a FEN, a
/// path, an argument) are escaped in error messages, never sent to the terminal raw.
#[test]
fn error_messages_escape_control_characters() {
    let nasty = "\u{1b}]0;owned\u{7}\u{1b}[2J";
    for args in [
        vec!["query".to_string(), format!("3k/1R2/K3/4{nasty}")],
        vec![
            "query".to_string(),
            "--tables".to_string(),
            format!("/nonexistent/{nasty}"),
            "3k/1R2/K3/4".to_string(),
        ],
        vec!["dump".to_string(), format!("KRvK{nasty}")],
        vec!["serve".to_string(), "--addr".to_string(), nasty.to_string()],
    ] {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, _, stderr) = bidtb(&args);
        assert_ne!(code, 0, "{args:?}");
        assert!(
            !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
            "{args:?}: {stderr:?}"
        );
        // Shown escaped (clap's own messages drop them instead).
        assert!(
            args[0] == "serve" || stderr.contains("\\u{1b}]0;owned\\u{7}"),
            "{args:?}: {stderr:?}"
        );
    }
}

/// `atlas --from-tables` naming no directory fails, named (issue 66, item 13).
#[test]
fn atlas_from_missing_tables_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("atlas");
    let (code, _, stderr) = bidtb(&[
        "atlas",
        "--pieces",
        "4",
        "--boards",
        "3x3",
        "--from-tables",
        "/nonexistent/tables",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("--from-tables /nonexistent/tables: No such file or directory"),
        "{stderr}"
    );
    assert!(!out.join("atlas4.json").exists());
}

/// `verify` and `atlas` in a board directory that a run holds (a `generate` there) are
/// refused, naming the holder, as `chips` and `upgrade` are (issue 66, item 13).
#[test]
fn verify_and_atlas_respect_the_directory_lock() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap();
    assert_eq!(
        bidtb(&["generate", "--board", "4x4", "--out", root, "-q"]).0,
        0
    );
    let board = dir.path().join("4x4");
    let held = DirLock::acquire(&board).unwrap();
    let holder = format!("process {}", std::process::id());
    for args in [
        vec!["verify", "--tables", root],
        vec!["verify", "--tables", root, "--board", "4x4"],
        vec!["atlas", "--boards", "4x4", "--out", root, "-q"],
        vec![
            "atlas",
            "--pieces",
            "4",
            "--boards",
            "4x4",
            "--from-tables",
            root,
            "--out",
            root,
            "-q",
        ],
    ] {
        let (code, _, stderr) = bidtb(&args);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains(&holder) && stderr.contains("in use"),
            "{args:?}: {stderr}"
        );
    }
    assert!(!board.join("atlas-row.json").exists());
    assert!(!dir.path().join("atlas.json").exists());
    drop(held);
    let (code, _, stderr) = bidtb(&["verify", "--tables", root]);
    assert_eq!(code, 0, "{stderr}");
}

/// `serve --addr localhost:0` listens on a free port of what localhost resolves to and
/// prints the address bound (issue 66, item 13).
#[test]
fn serve_accepts_a_host_name_and_port_0() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let (_dir, root) = serve_4x4();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bidtb"))
        .args(["serve", "--addr", "localhost:0", "--tables"])
        .arg(&root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let host = line
        .trim()
        .strip_prefix("listening on http://")
        .and_then(|h| h.strip_suffix('/'))
        .map(str::to_string);
    let answer = host
        .as_deref()
        .map(|h| raw_exchange(h, b"GET /api/boards HTTP/1.1\r\nHost: x\r\n\r\n"));
    let _ = child.kill();
    let _ = child.wait();
    let host = host.unwrap_or_else(|| panic!("first line: {line:?}"));
    let addr: std::net::SocketAddr = host.parse().unwrap();
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{host}");
    assert_eq!(json_body(&answer.unwrap())["boards"][0], "4x4");
    // A name that does not resolve, and a missing port, are named.
    let (code, _, stderr) = bidtb(&["serve", "--addr", "no-such-host.invalid:80"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("'no-such-host.invalid' does not resolve"),
        "{stderr}"
    );
    let (code, _, stderr) = bidtb(&["serve", "--addr", "localhost"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("HOST:PORT"), "{stderr}");
}

/// `--threads` above the cores starts one thread per core, with a warning (issue 66,
/// item 14: 1024 threads took 20.6 s on 4x4 against 0.22 s with 2).
#[test]
fn threads_beyond_the_cores_are_capped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, _, stderr) = bidtb(&[
        "generate",
        "--board",
        "4x4",
        "--threads",
        "1024",
        "--out",
        out,
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let cores = std::thread::available_parallelism().unwrap().get();
    assert!(
        stderr.contains(&format!(
            "warning: --threads 1024 is more than the {cores} core"
        )) && stderr.contains(&format!("starting {cores}")),
        "{stderr}"
    );
    // As many as the cores: no warning.
    let cores = cores.to_string();
    let (code, _, stderr) = bidtb(&[
        "generate",
        "--board",
        "4x4",
        "--threads",
        &cores,
        "--out",
        out,
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}

/// `--resume` with a `--max-iterations` that the checkpoint has already reached says so
/// (issue 66, item 14).
#[test]
fn resuming_past_the_cap_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec![
            "generate",
            "--board",
            "4x4",
            "--guesses",
            "--out",
            out,
            "-q",
        ];
        args.extend_from_slice(extra);
        bidtb(&args)
    };
    let (code, _, stderr) = run(&["--max-iterations", "6", "--checkpoint-every", "3"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(dir.path().join("4x4/checkpoint-000006.ckpt").exists());
    let (code, stdout, stderr) = run(&["--resume", "--max-iterations", "4"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains(
            "the checkpoint is at iteration 6: --max-iterations 4 has already been reached"
        ) && stderr.contains("above 6"),
        "{stderr}"
    );
    assert!(stdout.contains("NOT CONVERGED"), "{stdout}");
}

/// `plot` on a run of the solve method says that such runs write no convergence.csv and
/// how to make one; a solve run removes an earlier iteration's convergence.csv, which is
/// not its own (issue 66, item 14).
#[test]
fn plot_explains_solve_runs_and_stale_records_go() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let run = dir.path().join("3x3");
    let csv = run.join("convergence.csv");
    let svg = dir.path().join("p.svg");
    let plot = || {
        bidtb(&[
            "plot",
            run.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ])
    };
    assert_eq!(
        bidtb(&["generate", "--board", "3x3", "--out", out, "-q"]).0,
        0
    );
    assert!(csv.exists());
    assert_eq!(plot().0, 0);
    let (code, _, stderr) = bidtb(&[
        "generate", "--board", "3x3", "--method", "solve", "--out", out, "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !csv.exists(),
        "the iteration's record survived the solve run"
    );
    std::fs::remove_file(&svg).unwrap();
    let (code, _, stderr) = plot();
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("made by `generate --method solve`")
            && stderr.contains("writes no convergence.csv")
            && stderr.contains(&format!(
                "`bidtb generate --board 3x3 --method iterate --out {out}`"
            )),
        "{stderr}"
    );
    assert!(!svg.exists());
    // No record and no summary: what to run.
    let empty = dir.path().join("5x5");
    std::fs::create_dir(&empty).unwrap();
    let (code, _, stderr) = bidtb(&["plot", empty.to_str().unwrap(), "--svg", "-"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("convergence.csv: no such file; plot draws the record")
            && stderr.contains("--board 5x5 --method iterate"),
        "{stderr}"
    );
}

/// A table that is a dangling symbolic link is named as one, with where it points, not
/// reported as a missing table (issue 66, item 14).
#[test]
fn a_dangling_table_link_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    assert_eq!(
        bidtb(&["generate", "--board", "4x4", "--out", out, "-q"]).0,
        0
    );
    let table = dir.path().join("4x4/KQvK.bidtb");
    std::fs::remove_file(&table).unwrap();
    std::os::unix::fs::symlink("/nonexistent/KQvK.bidtb", &table).unwrap();
    let (code, _, stderr) = bidtb(&["query", "--tables", out, "3k/1Q2/K3/4"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr
            .contains("KQvK.bidtb: a dangling symbolic link: it points to /nonexistent/KQvK.bidtb"),
        "{stderr}"
    );
    assert!(!stderr.contains("missing table"), "{stderr}");
}

/// `/api/query`'s `chips=`: totals outside 1 to 16000 and an empty value are bad requests
/// (400, naming the bound), not server errors (issue 66, item 9).
#[test]
fn query_chips_out_of_range_or_empty_are_bad_requests() {
    let (_dir, root) = serve_4x4();
    let server = common::Server::start(&root);
    let host = server.host();
    let ask = |chips: &str| {
        let request = format!("GET /api/query?fen=k3/4/4/K2R{chips} HTTP/1.1\r\nHost: x\r\n\r\n");
        raw_exchange(&host, request.as_bytes())
    };
    for chips in ["0:0", "16000:1", "65535:65535", "4294967295:1"] {
        let answer = ask(&format!("&chips={chips}"));
        assert!(answer.starts_with("HTTP/1.1 400"), "{chips}: {answer}");
        let error = json_body(&answer)["error"].as_str().unwrap().to_string();
        assert!(
            error.contains(&format!(
                "chips={chips}: the chips in all must be 1 to 16000"
            )),
            "{error}"
        );
    }
    for empty in ["&chips=", "&chips=%20", "&chips=&tiebreak=black"] {
        let answer = ask(empty);
        assert!(answer.starts_with("HTTP/1.1 400"), "{empty}: {answer}");
        let error = json_body(&answer)["error"].as_str().unwrap().to_string();
        assert!(error.contains("chips= is empty"), "{error}");
    }
    // Within the bounds, on tables without chip files: 404 naming what is missing.
    let answer = ask("&chips=1:1");
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer}");
    // The server is still up and answers.
    let answer = ask("");
    assert_eq!(json_body(&answer)["value"], "23/32", "{answer}");
}

/// `bidtb play` with `input` (bytes) on standard input: exit code, stdout, stderr.
fn play_with(args: &[&str], input: &[u8]) -> (i32, String, String) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_bidtb"))
        .arg("play")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The terminal game (issue 66, item 10): a line that is not UTF-8 is refused and asked
/// again (it ended the game), and each turn is shown once (the previous turn's lines came
/// again after every bid the person won).
#[test]
fn play_refuses_bad_bytes_and_shows_each_turn_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    assert_eq!(
        bidtb(&["generate", "--board", "4x4", "--out", out, "-q"]).0,
        0
    );
    // White with all the money wins both bids and hands the move over each time.
    let (code, stdout, stderr) = play_with(
        &[
            "--tables",
            out,
            "--bankroll",
            "1",
            "--seed",
            "1",
            "3k/4/1K2/2R1",
        ],
        b"\xff\xfe\n1/4\nhand\n1/2\nhand\nquit\n",
    );
    assert_eq!(code, 0, "{stderr}\n{stdout}");
    assert!(stdout.contains("that line is not UTF-8 text"), "{stdout}");
    let played: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.split_once("> ").map_or(Some(l), |(_, rest)| Some(rest)))
        .filter(|l| l.contains(" played "))
        .collect();
    assert_eq!(played.len(), 2, "{stdout}");
    assert_ne!(played[0], played[1], "{stdout}");
    assert_eq!(
        stdout
            .matches("bids: White 1/4 / Black 0 -> white won the bid")
            .count(),
        1,
        "{stdout}"
    );
}

/// Numbers in a bid or a bankroll are bounded in digits (issue 66, item 2: 1.5 million
/// digits took over 100 s to read, and three such requests froze the server): longer ones
/// are refused at once, naming the bound, in the terminal game and over HTTP, and the
/// server answers others meanwhile.
#[test]
fn long_numbers_are_refused_at_once() {
    let max = bidtb::internal::play::game::MAX_DIGITS;
    let (_dir, root) = serve_4x4();
    let tables = root.to_str().unwrap();
    let huge = format!("1/{}", "1".repeat(1_500_000));
    let over = format!("1/{}", "1".repeat(max + 1));
    let started = std::time::Instant::now();
    let (code, stdout, stderr) = play_with(
        &["--tables", tables, "--bankroll", "1", "3k/4/1K2/2R1"],
        format!("{huge}\n{over}\nquit\n").as_bytes(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!("a number has at most {max} digits")),
        "{stdout:.2000}"
    );
    assert!(
        stdout.contains(&format!("a number of {} digits", max + 1)),
        "{stdout:.2000}"
    );
    assert!(stdout.contains("game abandoned"), "{stdout:.2000}");
    assert!(started.elapsed().as_secs() < 10);
    // --bankroll too.
    let (code, _, stderr) = play_with(
        &["--tables", tables, "--bankroll", &over, "3k/4/1K2/2R1"],
        b"quit\n",
    );
    assert_eq!(code, 2, "{stderr:.2000}");
    assert!(
        stderr.contains(&format!("at most {max} digits")),
        "{stderr:.2000}"
    );
    // Over HTTP: a bankroll and a bid, each answered 400 at once, without the number.
    let server = common::Server::start(&root);
    let host = server.host();
    let post = |path: &str, body: &str| {
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        raw_exchange(&host, request.as_bytes())
    };
    let started = std::time::Instant::now();
    let answer = post(
        "/api/games",
        &format!(r#"{{"fen": "3k/4/1K2/2R1", "bankroll": "{huge}"}}"#),
    );
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer:.500}");
    let error = json_body(&answer)["error"].as_str().unwrap().to_string();
    assert!(
        error.contains(&format!("at most {max} digits")) && error.len() < 1000,
        "{error:.500}"
    );
    let answer = post("/api/games", r#"{"fen": "3k/4/1K2/2R1", "bankroll": "1"}"#);
    assert!(answer.starts_with("HTTP/1.1 201"), "{answer}");
    let id = json_body(&answer)["id"].as_str().unwrap().to_string();
    let answer = post(
        &format!("/api/games/{id}/bid"),
        &format!(r#"{{"bid": "{huge}"}}"#),
    );
    assert!(answer.starts_with("HTTP/1.1 400"), "{answer:.500}");
    let error = json_body(&answer)["error"].as_str().unwrap().to_string();
    assert!(
        error.contains(&format!("at most {max} digits")) && error.len() < 1000,
        "{error:.500}"
    );
    assert!(started.elapsed().as_secs() < 10, "{:?}", started.elapsed());
    // The game is unchanged and the server answers.
    let answer = raw_exchange(&host, b"GET /api/boards HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(json_body(&answer)["boards"][0], "4x4");
}

/// `query` on a five-man position whose table is absent, in a directory that holds a
/// five-man table, names the missing table (it said the tables held at most 4); a position
/// with more men than any table is refused with the real count (issue 66, item 8).
#[test]
fn query_counts_the_men_of_every_table_in_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, _, stderr) = bidtb(&[
        "generate",
        "--board",
        "3x3",
        "--method",
        "solve",
        "--material",
        "KRBvKN",
        "--out",
        out,
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = bidtb(&["query", "--tables", out, "kn1/3/KRB"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("KRBvKN"), "{stdout}");
    let (code, _, stderr) = bidtb(&["query", "--tables", out, "kq1/3/KRB"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("missing table") && stderr.contains("KRBvKQ"),
        "{stderr}"
    );
    assert!(!stderr.contains("hold at most"), "{stderr}");
    let (code, _, stderr) = bidtb(&["query", "--tables", out, "kqn/3/KRB"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("KRBvKQN has 6 men") && stderr.contains("hold at most 5"),
        "{stderr}"
    );
}

/// Saved work is not deleted unasked (issue 66, item 7): a run that would replace or
/// remove the checkpoints of an earlier run (a capped iteration's, an interrupted solve's)
/// without --resume is refused, naming them and the command that resumes; --fresh deletes
/// them and says so; a finished run removes its own checkpoints only.
#[test]
fn checkpoints_are_kept_unless_a_fresh_start_is_asked() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let board = dir.path().join("4x4");
    let run = |extra: &[&str]| {
        let mut args = vec!["generate", "--board", "4x4", "--out", out, "-q"];
        args.extend_from_slice(extra);
        bidtb(&args)
    };
    // A capped iteration keeps its checkpoints; a later run without --resume is refused.
    let capped = [
        "--guesses",
        "--max-iterations",
        "6",
        "--checkpoint-every",
        "3",
    ];
    assert_eq!(run(&capped).0, 0);
    let newest = board.join("checkpoint-000006.ckpt");
    assert!(newest.exists());
    for extra in [&[][..], &["--guesses"][..], &capped[..]] {
        let (code, _, stderr) = run(extra);
        assert_eq!(code, 2, "{extra:?}: {stderr}");
        assert!(
            stderr.contains("checkpoint-000006.ckpt")
                && stderr.contains(&format!(
                    "`bidtb generate --board 4x4 --method iterate --out {out} --resume`"
                ))
                && stderr.contains("--fresh"),
            "{stderr}"
        );
        assert!(newest.exists(), "{extra:?} deleted the checkpoint");
    }
    // --fresh and --resume do not go together; --fresh deletes them and says so.
    assert_eq!(run(&["--fresh", "--resume"]).0, 2);
    let (code, _, stderr) = run(&["--fresh"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("--fresh: deleted 2 checkpoints"),
        "{stderr}"
    );
    assert!(!newest.exists());
    // The solve method: a checkpoint of one of the run's jobs is kept (the run refused);
    // one of another material's job survives a finished run.
    let mine = board.join("solve-KRvK.ckpt");
    let other = board.join("solve-KRvKN.ckpt");
    std::fs::write(&mine, b"an interrupted job's state").unwrap();
    std::fs::write(&other, b"another run's state").unwrap();
    let solve = ["--method", "solve", "--material", "KRvK"];
    let (code, _, stderr) = run(&solve);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("solve-KRvK.ckpt")
            && !stderr.contains("solve-KRvKN.ckpt")
            && stderr.contains("--method solve --material KRvK --out"),
        "{stderr}"
    );
    assert!(mine.exists() && other.exists());
    std::fs::remove_file(&mine).unwrap();
    let (code, _, stderr) = run(&solve);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        other.exists(),
        "a finished run removed another job's checkpoint"
    );
}

/// A solve checkpoint that fails its checksum, is truncated or does not fit the job no
/// longer stops every `--resume` run: it is set aside (renamed, kept), the material solved
/// afresh, and the run says so (issue 66, item 6).
#[test]
fn a_damaged_solve_checkpoint_is_set_aside_and_the_material_solved_afresh() {
    use bidtb::internal::graph::Graph;
    use bidtb::internal::index::Index;
    use bidtb::internal::material::Material;
    use bidtb::internal::solve::checkpoint::{self, Job};
    use bidtb::internal::solve::{self, Bound, Game, Settings};

    let plain = tempfile::tempdir().unwrap();
    let args = [
        "generate",
        "--board",
        "4x4",
        "--method",
        "solve",
        "--material",
        "KvK",
        "-q",
    ];
    let (code, _, stderr) =
        bidtb(&[&args[..], &["--out", plain.path().to_str().unwrap()]].concat());
    assert_eq!(code, 0, "{stderr}");
    let made = std::fs::read(plain.path().join("4x4/KvK.bidtb")).unwrap();

    let board = bidtb::Board::new(4, 4).unwrap();
    let materials: [Material; 1] = ["KvK".parse().unwrap()];
    let graph = Graph::new(&Index::new(board, &materials));
    let alpha = solve::solve_bound(
        Game::closed(&graph),
        Bound::Alpha,
        &Settings::default(),
        &|_| true,
    )
    .unwrap();
    let job = Job {
        board,
        materials: &materials,
        graph: &graph,
    };
    let good = checkpoint::encode(job, &[&alpha.kept()]);
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x20;
    let damages: [(&str, &[u8]); 3] = [
        ("a flipped bit", &flipped),
        ("truncated", &good[..good.len() / 2]),
        ("empty", &[]),
    ];
    for (what, bytes) in damages {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().to_str().unwrap();
        let board_dir = dir.path().join("4x4");
        std::fs::create_dir_all(&board_dir).unwrap();
        let ck = board_dir.join("solve-KvK.ckpt");
        std::fs::write(&ck, bytes).unwrap();
        let resume = [&args[..], &["--out", out, "--resume"]].concat();
        let (code, _, stderr) = bidtb(&resume);
        assert_eq!(code, 0, "{what}: {stderr}");
        assert!(
            stderr.contains("solve-KvK.ckpt cannot be resumed from")
                && stderr.contains("set aside as")
                && stderr.contains("solving KvK from the start"),
            "{what}: {stderr}"
        );
        let rejected = board_dir.join("solve-KvK.ckpt.rejected");
        assert_eq!(
            std::fs::read(&rejected).unwrap(),
            bytes,
            "{what}: kept as it was"
        );
        assert!(!ck.exists(), "{what}");
        assert_eq!(
            std::fs::read(board_dir.join("KvK.bidtb")).unwrap(),
            made,
            "{what}"
        );
        // The next run is not stopped by it either.
        let (code, _, stderr) = bidtb(&resume);
        assert_eq!(code, 0, "{what}: {stderr}");
    }
}

/// A table that is there but cannot be mapped now (too little address space) is named as
/// such and kept: it is not reported missing, nor made again over the file (issue 66,
/// item 5: a valid table was regenerated after a transient failure).
#[test]
fn a_table_that_cannot_be_mapped_is_kept_not_remade() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let args = [
        "generate",
        "--board",
        "3x3",
        "--method",
        "solve",
        "--material",
        "KRvKN",
        "--out",
        out,
        "-q",
    ];
    let (code, _, stderr) = bidtb(&args);
    assert_eq!(code, 0, "{stderr}");
    // KRvK's table, which KRvKN reads, as a file of 1 TiB (sparse): mapping it needs more
    // than the 4 GB of address space the run gets.
    let table = dir.path().join("3x3/KRvK.bidtb");
    std::fs::remove_file(&table).unwrap();
    let f = std::fs::File::create(&table).unwrap();
    f.set_len(1 << 40).unwrap();
    drop(f);
    let (code, stderr) = bidtb_under_ulimit(4_000_000, &args);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("KRvK.bidtb: cannot be opened")
            && stderr.contains("the file is kept, not made again"),
        "{stderr}"
    );
    assert!(!stderr.contains("missing table"), "{stderr}");
    assert_eq!(std::fs::metadata(&table).unwrap().len(), 1 << 40, "remade");
}

/// `--plan` counts the positions of each job as the run counts them (issue 66, item 12:
/// KvK 94 against 240, 6x6 KNvKN 176,779 against 176,805), and says which numbers are
/// estimates (materials too large to count quickly).
#[test]
fn a_plan_counts_positions_as_the_run_does() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let args = [
        "generate",
        "--board",
        "4x4",
        "--method",
        "solve",
        "--material",
        "KNvKN",
        "--out",
        out,
        "--json",
    ];
    let (code, stdout, stderr) = bidtb(&[&args[..], &["--plan"]].concat());
    assert_eq!(code, 0, "{stderr}");
    let plan: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let (code, stdout, stderr) = bidtb(&[&args[..], &["-q"]].concat());
    assert_eq!(code, 0, "{stderr}");
    let summary: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let jobs = plan.as_array().unwrap();
    assert_eq!(jobs.len(), summary["materials"].as_array().unwrap().len());
    for job in jobs {
        let m = job["material"].as_str().unwrap();
        let class = &summary["classes"][m];
        assert_eq!(job["counted"], true, "{m}");
        assert_eq!(job["positions"], class["positions"], "{m}");
        assert_eq!(
            job["canonical_positions"], class["canonical_positions"],
            "{m}"
        );
    }
    // The text says the same; large materials are marked as estimated.
    let (code, stdout, _) = bidtb(&[
        "generate",
        "--board",
        "4x4",
        "--method",
        "solve",
        "--material",
        "KvK",
        "--plan",
    ]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("# KvK: needs []; 240 positions (33 after symmetry)"),
        "{stdout}"
    );
    let (code, stdout, _) = bidtb(&[
        "generate",
        "--board",
        "8x8",
        "--method",
        "solve",
        "--material",
        "KNvKP",
        "--plan",
    ]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("# KNvKP: needs [") && stdout.contains("after symmetry, estimated)"),
        "{stdout}"
    );
}

/// Bad input with five and more men (issue 63): exit status 2 and one line naming the
/// problem, never a panic, from `generate --material` and from `query`. A missing five-man
/// table in a directory of five-man tables is named, with the command that makes it (exit
/// 1, as for any missing table); a position with more men than the directory's tables hold
/// (six, here) is refused with the limit and the command that makes its table. Six and
/// seven men are not bad input in themselves: nothing in the design caps the count below
/// seven (SPEC §1), so `generate --material KQRBvKN` (and `KPPPPvK`) plan their jobs.
#[test]
fn five_and_more_men_bad_input_gets_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, _, stderr) = bidtb(&[
        "generate",
        "--board",
        "3x4",
        "--method",
        "solve",
        "--material",
        "KRBvKN",
        "--out",
        out,
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let one_line = |code: i32, want: i32, stderr: &str, needles: &[&str], what: &str| {
        assert_eq!(code, want, "{what}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "{what}: {stderr}");
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
        for n in needles {
            assert!(stderr.contains(n), "{what}: {n:?} not in {stderr}");
        }
    };
    // Materials that are not materials, or hold more men than a position can.
    for (material, needle) in [
        ("KvKK", "'K' is not a piece letter"),
        ("KQKvK", "'K' is not a piece letter"),
        ("KQvKvK", "'v' is not a piece letter"),
        ("KPPPPPPvK", "more than 7 men"),
        ("KQRBNPvKQ", "more than 7 men"),
        ("KQRBvKN,KvKK", "KvKK"),
    ] {
        let (code, stdout, stderr) = bidtb(&[
            "generate",
            "--board",
            "3x4",
            "--method",
            "solve",
            "--material",
            material,
            "--out",
            out,
            "-q",
        ]);
        one_line(code, 2, &stderr, &[needle], material);
        assert!(stdout.is_empty(), "{material}: {stdout}");
    }
    // A material named that has no position on the board (four pawns, three squares on
    // 3x3 where pawns may stand) is refused, not made as an empty table.
    let (code, _, stderr) = bidtb(&[
        "generate",
        "--board",
        "3x3",
        "--method",
        "solve",
        "--material",
        "KPPPPvK",
        "--out",
        out,
    ]);
    one_line(
        code,
        2,
        &stderr,
        &["KPPPPvK has no position on 3x3"],
        "KPPPPvK",
    );
    assert!(!dir.path().join("3x3").join("KPPPPvK.bidtb").exists());
    for material in ["KQRBvKN", "KPPPPvK"] {
        let (code, stdout, stderr) = bidtb(&[
            "generate",
            "--board",
            "3x4",
            "--method",
            "solve",
            "--material",
            material,
            "--out",
            out,
            "--plan",
        ]);
        assert_eq!(code, 0, "{material}: {stderr}");
        assert!(stdout.contains(&format!("# {material}: needs")), "{stdout}");
    }
    // Positions: the FEN's own faults, then the tables' limits.
    for (fen, want, needles) in [
        (
            "KQK/3/3/k2",
            2,
            &["bad FEN", "one white king", "has 2 and 1"][..],
        ),
        ("KQ1/3/3/kKk", 2, &["bad FEN", "has 2 and 2"]),
        ("KRB/3/3/k1P", 2, &["bad FEN", "first or last rank", "c1"]),
        ("KRP/3/3/k1n", 2, &["bad FEN", "first or last rank", "c4"]),
        ("KRB/3/3/k1p", 2, &["bad FEN", "first or last rank", "c1"]),
        ("KRB/BNN/NN1/kr1", 2, &["bad FEN", "10 men", "at most 7"]),
        (
            "KRB/N2/3/kq1",
            2,
            &["KRBNvKQ has 6 men", "hold at most 5", "--material KRBNvKQ"],
        ),
        (
            "kqr/n2/3/KB1",
            2,
            &["KBvKQRN has 6 men", "hold at most 5", "--material KQRNvKB"],
        ),
        (
            "KRB/3/3/kq1",
            1,
            &["missing table", "KRBvKQ.bidtb", "--material KRBvKQ"],
        ),
        ("KRB/3/3/kn1", 0, &[]),
        ("krb/3/3/KN1", 0, &[]),
    ] {
        let (code, _, stderr) = bidtb(&["query", "--tables", out, fen]);
        if want == 0 {
            assert_eq!(code, 0, "{fen}: {stderr}");
        } else {
            one_line(code, want, &stderr, needles, fen);
        }
    }
}

/// 4x4 tables with chip files for `chips` chips in all.
fn chips_4x4(chips: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let (dir, root) = serve_4x4();
    let out = root.to_str().unwrap();
    let (code, _, err) = bidtb(&[
        "chips", "--tables", out, "--board", "4x4", "--chips", chips, "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    (dir, root)
}

/// An HTTP client that reads error statuses as answers.
fn http() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(std::time::Duration::from_secs(30)))
        .build()
        .into()
}

/// `GET` or (with a body) `POST` `path`: the status, the Retry-After header, the JSON.
fn call(
    agent: &ureq::Agent,
    url: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, Option<String>, serde_json::Value) {
    let full = format!("{}{}", url, path.trim_start_matches('/'));
    let mut resp = match body {
        Some(b) => agent
            .post(&full)
            .header("content-type", "application/json")
            .send(b)
            .unwrap(),
        None => agent.get(&full).call().unwrap(),
    };
    let retry = resp
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    let text = resp.body_mut().read_to_string().unwrap();
    let json = serde_json::from_str(&text).unwrap_or_else(|_| panic!("{text}"));
    (resp.status().as_u16(), retry, json)
}

/// A chips game on 4x4 KRvK in which the engine (White) holds every chip: its first bid
/// needs its chip ranks.
const WINNING_ENGINE: &str =
    r#"{"fen": "3k/4/1K2/2R1", "mode": "chips", "colour": "black", "chips": "2000:0"}"#;

/// The engine's chip ranks are computed off the request, on a thread of their own: with
/// `--ranks-wait 0` the first chips game answers 503 at once with a JSON reason and
/// Retry-After while `/api/boards` answers; a later request gets the game, and its inputs
/// are answered. With the default wait a small material is answered directly. SIGTERM
/// while ranks are computed stops the server within its 5 s.
#[test]
fn chip_ranks_are_computed_off_the_request() {
    use std::time::{Duration, Instant};
    let (_dir, root) = chips_4x4("2000");
    let agent = http();
    let server = common::Server::start_with(&root, &["--ranks-wait", "0"], None);
    let url = server.url.clone();
    let asked = Instant::now();
    let (status, retry, json) = call(&agent, &url, "/api/games", Some(WINNING_ENGINE));
    assert!(
        asked.elapsed() < Duration::from_secs(2),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(status, 503, "{json}");
    assert_eq!(retry.as_deref(), Some("2"));
    let text = json["error"].as_str().unwrap();
    assert!(
        text.contains("chip ranks of KRvK on 4x4 with 2000 chips"),
        "{text}"
    );
    assert!(text.contains("ask again"), "{text}");
    let asked = Instant::now();
    let (status, _, boards) = call(&agent, &url, "/api/boards", None);
    assert_eq!((status, boards["boards"][0].as_str()), (200, Some("4x4")));
    assert!(
        asked.elapsed() < Duration::from_secs(1),
        "{:?}",
        asked.elapsed()
    );
    let game = loop {
        let (status, _, json) = call(&agent, &url, "/api/games", Some(WINNING_ENGINE));
        if status != 503 {
            assert_eq!(status, 201, "{json}");
            break json;
        }
        assert!(asked.elapsed() < Duration::from_secs(30), "{json}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let path = format!("/api/games/{}/bid", game["id"].as_str().unwrap());
    let (status, _, json) = call(&agent, &url, &path, Some(r#"{"bid": "0"}"#));
    assert_eq!(status, 200, "{json}");
    assert_eq!(server.stop(), Some(0));

    // The default wait (1 s) covers a small material: no 503.
    let server = common::Server::start(&root);
    let (status, _, json) = call(&agent, &server.url, "/api/games", Some(WINNING_ENGINE));
    assert_eq!(status, 201, "{json}");
    assert_eq!(server.stop(), Some(0));

    // SIGTERM just after a computation started.
    let mut server = common::Server::start_with(&root, &["--ranks-wait", "0"], None);
    let (status, _, json) = call(&agent, &server.url, "/api/games", Some(WINNING_ENGINE));
    assert_eq!(status, 503, "{json}");
    let asked = Instant::now();
    let _ = std::process::Command::new("kill")
        .args(["-TERM", &server.id().to_string()])
        .status();
    while server.exited().is_none() {
        assert!(asked.elapsed() < Duration::from_secs(5), "still running");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(server.exited(), Some(Some(0)));
}

/// Under tight address-space limits (`ulimit -v`) a chips game whose ranks would not fit
/// is refused with 507 and the estimate, and the server stays up and answers; where they
/// fit (without a limit) the game starts. Never an exit.
#[test]
fn chip_ranks_that_would_not_fit_are_refused() {
    use std::io::{BufRead, BufReader};
    let (_dir, root) = chips_4x4("2000");
    let agent = http();
    let mut refused = 0;
    let mut started = 0;
    for kib in ["80000", "100000", "130000", "200000", "unlimited"] {
        let mut child = std::process::Command::new("sh")
            .args([
                "-c",
                &format!("ulimit -v {kib} && exec \"$0\" \"$@\""),
                env!("CARGO_BIN_EXE_bidtb"),
            ])
            .args(["serve", "--addr", "127.0.0.1:0", "--tables"])
            .arg(&root)
            .args(["--ranks-wait", "10000"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let Some(url) = line.trim().strip_prefix("listening on ") else {
            // Too tight to start: one line, exit 1.
            let out = child.wait_with_output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "ulimit -v {kib}: {err}");
            continue;
        };
        let (status, _, json) = call(&agent, url, "/api/games", Some(WINNING_ENGINE));
        match status {
            201 => started += 1,
            507 => {
                refused += 1;
                let text = json["error"].as_str().unwrap();
                assert!(
                    text.contains("would need about") && text.contains("ulimit -v"),
                    "{text}"
                );
            }
            _ => panic!("ulimit -v {kib}: {status} {json}"),
        }
        let (status, _, json) = call(&agent, url, "/api/query?fen=3k/4/1K2/2R1", None);
        assert_eq!(status, 200, "ulimit -v {kib}: {json}");
        assert!(
            child.try_wait().unwrap().is_none(),
            "ulimit -v {kib}: exited"
        );
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status();
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "ulimit -v {kib}");
    }
    // The allocator reserves more address space under a looser limit, which counts as
    // used: which limits refuse varies, but the tightest that starts does, and no limit
    // does not.
    assert!(
        refused >= 1 && started >= 1,
        "{refused} refused, {started} started"
    );
}

/// A served table truncated in place (against the memory-map contract) does not kill the
/// server with SIGBUS: the request that reads it gets a JSON error, later ones name the
/// file, other tables still answer, and the server stops cleanly.
#[test]
fn a_table_truncated_while_served_is_refused_and_the_server_stays_up() {
    let (_dir, root) = serve_4x4();
    let mut server = common::Server::start(&root);
    let agent = http();
    let url = server.url.clone();
    let rook = "/api/query?fen=3k/4/1K2/2R1";
    let queen = "/api/query?fen=3k/4/1K2/2Q1";
    let (status, _, json) = call(&agent, &url, rook, None);
    assert_eq!(
        (status, json["value"].as_str()),
        (200, Some("81/128")),
        "{json}"
    );
    // Truncate KRvK's file in place: its pages go from under the map.
    std::fs::OpenOptions::new()
        .write(true)
        .open(root.join("4x4/KRvK.bidtb"))
        .unwrap()
        .set_len(0)
        .unwrap();
    let (status, _, json) = call(&agent, &url, rook, None);
    assert_eq!(status, 500, "{json}");
    assert!(
        json["error"].as_str().unwrap().contains("truncated"),
        "{json}"
    );
    let (status, _, json) = call(&agent, &url, rook, None);
    assert_eq!(status, 500, "{json}");
    let text = json["error"].as_str().unwrap();
    assert!(
        text.contains("KRvK.bidtb") && text.contains("truncated"),
        "{text}"
    );
    let (status, _, json) = call(&agent, &url, queen, None);
    assert_eq!(status, 200, "{json}");
    assert!(server.exited().is_none());
    assert_eq!(server.stop(), Some(0));
}
