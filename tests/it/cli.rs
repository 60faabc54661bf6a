//! The `bidtb` command as a user meets it: exit codes, error messages, the summary file.

use crate::common::bidtb;

#[test]
fn generate_writes_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, stdout, _) = bidtb(&["generate", "--board", "4x4", "--out", out, "-q"]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("first satisfy every equation at iteration 38"),
        "{stdout}"
    );
    let text = std::fs::read_to_string(dir.path().join("4x4/summary.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["board"], "4x4");
    assert_eq!(json["first_richman_iteration"], 38);
    assert_eq!(json["converged"], true);
    assert!(json["iterations_run"].as_u64().unwrap() >= 38);
    assert!(json["seconds"].as_f64().unwrap() >= 0.0);
    let knvk = &json["classes"]["KNvK"];
    assert_eq!(knvk["positions"], 16 * 15 * 14);
    assert_eq!(knvk["stable_at"], 38);
    assert!(knvk["max_denominator"].is_string());
    for class in ["KvK", "KQvK", "KRvK", "KBvK", "KNvK", "KPvK"] {
        assert!(json["classes"][class].is_object(), "{class} missing");
    }
    assert_eq!(json["certified"], true);
    assert_eq!(knvk["certified_alpha"], true);
    assert_eq!(knvk["violations"], 0);
    assert_eq!(knvk["certified_beta"], true);
    assert!(knvk["max_level_white"].as_u64().unwrap() >= 1);
    assert_eq!(json["classes"]["KvK"]["quiescent"], 21);
    // quiescent.txt: a header, then one line per quiescent position of every class.
    let q = std::fs::read_to_string(dir.path().join("4x4/quiescent.txt")).unwrap();
    let total: u64 = ["KvK", "KQvK", "KRvK", "KBvK", "KNvK", "KPvK"]
        .iter()
        .map(|c| json["classes"][c]["quiescent"].as_u64().unwrap())
        .sum();
    assert_eq!(q.lines().count() as u64, total + 1);
    assert!(q.lines().nth(1).unwrap().starts_with("KvK "));
    // No temporary file is left behind (the directory's lock file stays, empty of meaning
    // once the run is over: the lock is the operating system's, released with the process).
    let mut names: Vec<_> = std::fs::read_dir(dir.path().join("4x4"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            ".bidtb.lock",
            "KBvK.bidtb",
            "KBvK.json",
            "KNvK.bidtb",
            "KNvK.json",
            "KPvK.bidtb",
            "KPvK.json",
            "KQvK.bidtb",
            "KQvK.json",
            "KRvK.bidtb",
            "KRvK.json",
            "KvK.bidtb",
            "KvK.json",
            "convergence.csv",
            "quiescent.txt",
            "summary.json"
        ]
    );
}

#[test]
fn json_output_is_one_object() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, _) = bidtb(&[
        "generate",
        "--board",
        "3x3",
        "--out",
        dir.path().to_str().unwrap(),
        "--json",
        "-q",
    ]);
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["first_richman_iteration"], 11);
}

#[test]
fn capped_run_says_it_did_not_converge() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, stdout, _) = bidtb(&[
        "generate",
        "--board",
        "4x4",
        "--out",
        out,
        "--max-iterations",
        "5",
        "-q",
    ]);
    assert_eq!(code, 0);
    assert!(stdout.contains("NOT CONVERGED"), "{stdout}");
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("4x4/summary.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(json["converged"], false);
    assert!(json["first_richman_iteration"].is_null());
    assert_eq!(json["certified"], false);
    assert!(!dir.path().join("4x4/quiescent.txt").exists());
    assert!(
        !dir.path().join("4x4/KQvK.bidtb").exists(),
        "provisional values are never written as tables"
    );
    assert_eq!(json["iterations_run"], 5);
}

#[test]
fn bad_boards_exit_2_with_one_line() {
    for bad in ["1x8", "17x8", "8x", "axb", "0x0", "8x8x8", "99999999999x2"] {
        let (code, stdout, stderr) = bidtb(&["generate", "--board", bad, "--out", "/tmp/never"]);
        assert_eq!(code, 2, "{bad}: {stderr}");
        assert!(stdout.is_empty());
        assert!(stderr.contains("board"), "{bad}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{bad}: {stderr}");
        assert!(!stderr.contains("panicked"));
    }
}

#[test]
fn zero_threads_and_bad_numbers_exit_2() {
    for args in [
        &["--threads", "0"][..],
        &["--max-iterations", "0"],
        &["--threads", "x"],
        &["--check-every", "0"],
    ] {
        let mut all = vec!["generate", "--board", "2x2", "--out", "/tmp/never"];
        all.extend_from_slice(args);
        let (code, _, stderr) = bidtb(&all);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"));
    }
}

#[test]
fn unwritable_output_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let (code, _, stderr) = bidtb(&[
        "generate",
        "--board",
        "2x2",
        "--out",
        file.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.starts_with("bidtb: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn help_explains_the_numbers() {
    let (code, stdout, _) = bidtb(&["generate", "--help"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("--max-iterations") && stdout.contains("2644"));
}

#[test]
fn one_thread_gives_the_same_results() {
    let summary = |threads: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec![
            "generate",
            "--board",
            "5x4",
            "--out",
            dir.path().to_str().unwrap(),
            "-q",
        ];
        args.extend_from_slice(threads);
        let (code, _, stderr) = bidtb(&args);
        assert_eq!(code, 0, "{stderr}");
        let text = std::fs::read_to_string(dir.path().join("5x4/summary.json")).unwrap();
        let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
        json.as_object_mut().unwrap().remove("seconds");
        json.as_object_mut().unwrap().remove("stage_seconds");
        json.as_object_mut().unwrap().remove("costs");
        (
            json,
            std::fs::read_to_string(dir.path().join("5x4/quiescent.txt")).unwrap(),
        )
    };
    assert_eq!(summary(&["--threads", "1"]), summary(&[]));
}

/// A directory with the 4x4 tables.
fn tables_4x4() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    let (code, _, stderr) = bidtb(&["generate", "--board", "4x4", "--out", out, "-q"]);
    assert_eq!(code, 0, "{stderr}");
    dir
}

#[test]
fn query_json_has_every_documented_key() {
    let dir = tables_4x4();
    let tables = dir.path().to_str().unwrap();
    let (code, stdout, stderr) = bidtb(&["query", "--tables", tables, "--json", "1k2/4/1K2/3R"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.lines().count(), 1, "exactly one object: {stdout}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["board"], "4x4");
    assert_eq!(json["class"], "KRvK");
    // The rook to d4 pins the king to the edge: x_W = 3/4; Black's best is 1/2.
    assert_eq!(json["value"], "5/8");
    assert_eq!(json["value_approx"], 0.625);
    assert_eq!(json["white"][0]["move"], "d1d4");
    assert_eq!(json["white"][0]["value"], "3/4");
    assert_eq!(json["white"][0]["level"], 1);
    assert_eq!(json["white"].as_array().unwrap().len(), 14);
    assert_eq!(json["black"].as_array().unwrap().len(), 5);
    assert_eq!(json["black"][0]["value"], "1/2");
    assert_eq!(json["bid"], "1/8");
    assert_eq!(json["zugzwang"], false);
    assert_eq!(json["level_white"], 2);
    assert_eq!(json["level_black"], 2);
    assert_eq!(json["certified"], true);
    // Trailing FEN fields are accepted, quoted or not.
    let (code, again, _) = bidtb(&[
        "query",
        "--tables",
        tables,
        "--json",
        "1k2/4/1K2/3R",
        "w",
        "-",
    ]);
    assert_eq!(code, 0);
    assert_eq!(again, stdout);
}

#[test]
fn query_text_and_black_pieces() {
    let dir = tables_4x4();
    let tables = dir.path().to_str().unwrap();
    let (code, stdout, _) = bidtb(&["query", "--tables", tables, "1k2/4/1K2/3R"]);
    assert_eq!(code, 0);
    assert!(stdout.contains("value      5/8 = 0.625"), "{stdout}");
    assert!(stdout.contains("White best d1d4 -> 3/4"), "{stdout}");
    assert!(stdout.contains("bid        1/8"), "{stdout}");
    // The colour-flipped position: a black rook on d4, kings swapped and ranks reversed.
    let (code, stdout, stderr) = bidtb(&["query", "--tables", tables, "--json", "3r/1k2/4/1K2"]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["class"], "KvKR");
    assert_eq!(json["value"], "3/8");
    assert_eq!(json["black"][0]["move"], "d4d1");
    assert_eq!(json["black"][0]["value"], "1/4");
}

#[test]
fn malformed_fens_exit_2_with_one_line() {
    let dir = tables_4x4();
    let tables = dir.path().to_str().unwrap();
    for bad in [
        "",
        "8/8/8/8/8/8/8/8",
        "k7/8/8/8/8/8/8/6K",
        "k7/8/8/8/8/8/8/6KX",
        "kk6/8/8/8/8/8/8/7K",
        "K7/8/8/8/8/8/8/7K",
        "kRn5/8/8/8/8/8/8/6KR",
        "k7/8/8/8/8/8/8/P6K",
        "k7/8/8/8/8/8/8/p6K",
        "k7/8/8/8/8/8/8/7K w - e3",
        "kP6/8/8/8/8/8/8/7K",
        "k/K",
        "1k2/4/1K2/3R/",
    ] {
        let (code, stdout, stderr) = bidtb(&["query", "--tables", tables, bad]);
        assert_eq!(code, 2, "{bad:?}: {stderr}");
        assert!(stdout.is_empty());
        assert_eq!(stderr.lines().count(), 1, "{bad:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{bad:?}: {stderr}");
    }
}

/// `bidtb verify` of the 4x4 tables in `tables`, only `materials` (a comma list).
fn verify_4x4<'a>(tables: &'a str, materials: &'a str) -> Vec<&'a str> {
    vec![
        "verify",
        "--tables",
        tables,
        "--board",
        "4x4",
        "--material",
        materials,
    ]
}

#[test]
fn missing_and_corrupt_tables_are_named() {
    let empty = tempfile::tempdir().unwrap();
    let missing = empty.path().join("nothing-here");
    let (code, _, stderr) = bidtb(&[
        "query",
        "--tables",
        missing.to_str().unwrap(),
        "3k3R/8/3K4/8/8/8/8/8",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("8x8/KRvK.bidtb"), "{stderr}");
    assert!(stderr.contains("bidtb generate --board 8x8"), "{stderr}");

    let dir = tables_4x4();
    let tables = dir.path().to_str().unwrap();
    let (code, stdout, _) = bidtb(&["verify", "--tables", tables]);
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.starts_with("4x4: ok"), "{stdout}");
    let (code, stdout, _) = bidtb(&["verify", "--tables", tables, "--board", "4x4", "--json"]);
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json[0]["ok"], true);
    assert_eq!(json[0]["classes"]["KNvK"]["violations"], 0);
    // Only named materials (a mirror name means its stored table): the others are read
    // where moves lead to them, not checked.
    let mut args = verify_4x4(tables, "KvKN,KRvK");
    args.push("--json");
    let (code, stdout, stderr) = bidtb(&args);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let classes: Vec<&String> = json[0]["classes"].as_object().unwrap().keys().collect();
    assert_eq!(classes, ["KNvK", "KRvK"], "{stdout}");
    assert_eq!(stderr.lines().count(), 2, "{stderr}");
    let (code, _, stderr) = bidtb(&[
        "verify",
        "--tables",
        tables,
        "--board",
        "4x4",
        "--material",
        "KQvKQ",
    ]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("4x4/KQvKQ.bidtb"), "{stderr}");
    for bad in [
        &["verify", "--tables", tables, "--material", "KRvK"][..],
        &[
            "verify",
            "--tables",
            tables,
            "--board",
            "4x4",
            "--material",
            "KXvK",
        ],
    ] {
        let (code, _, stderr) = bidtb(bad);
        assert_eq!(code, 2, "{bad:?}: {stderr}");
    }

    let path = dir.path().join("4x4/KNvK.bidtb");
    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 4;
    std::fs::write(&path, &bytes).unwrap();
    for args in [
        &["query", "--tables", tables, "1k2/4/1K2/3N"][..],
        &["verify", "--tables", tables],
    ] {
        let (code, _, stderr) = bidtb(args);
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(
            stderr.contains("KNvK.bidtb") && stderr.contains("checksum"),
            "{stderr}"
        );
    }
    // Checking one material opens only its table and those its moves lead to: KRvK
    // (leading to KvK) passes beside the damaged KNvK, which fails when named.
    for (material, want) in [("KRvK", 0), ("KNvK", 1)] {
        let args = verify_4x4(tables, material);
        let (code, _, stderr) = bidtb(&args);
        assert_eq!(code, want, "{args:?}: {stderr}");
        if want == 1 {
            assert!(
                stderr.contains("KNvK.bidtb") && stderr.contains("checksum"),
                "{stderr}"
            );
        }
    }
    let (code, _, stderr) = bidtb(&["verify", "--tables", tables, "--board", "5x5"]);
    assert_eq!(code, 1);
    assert!(stderr.contains("bidtb generate --board 5x5"), "{stderr}");
}

#[test]
fn map_prints_text_json_and_svg() {
    let dir = tables_4x4();
    let tables = dir.path().to_str().unwrap();
    let fen = "3k/1R2/K3/4";
    let (code, stdout, stderr) = bidtb(&["map", "--tables", tables, fen]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("value with the black king on each square"));
    // One line of decimals per rank.
    assert_eq!(stdout.lines().filter(|l| l.contains('.')).count(), 4);
    let (code, stdout, _) = bidtb(&["map", "--tables", tables, "--json", fen]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["black_king"], "d4");
    assert_eq!(v["rows"][1][1], serde_json::Value::Null); // the rook on b3
    assert_eq!(v["rows"][2][0], serde_json::Value::Null); // the white king on a2
    let (_, q, _) = bidtb(&["query", "--tables", tables, "--json", fen]);
    let q: serde_json::Value = serde_json::from_str(&q).unwrap();
    assert_eq!(v["rows"][0][3], q["value"]);
    let map_svg = |path: &str| bidtb(&["map", "--tables", tables, fen, "--svg", path]);
    let svg = dir.path().join("map.svg");
    let (code, _, stderr) = map_svg(svg.to_str().unwrap());
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"));
    assert_eq!(text.matches("<g class=\"square\"").count(), 16 - 2);
    assert!(text.contains(&format!("<title>d4: {}", q["value"].as_str().unwrap())));
    // Bad input: exit 2 for the FEN, 1 for a missing table or an unwritable file.
    let (code, _, stderr) = bidtb(&["map", "--tables", tables, "3k/1R2/K3/5"]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = bidtb(&["map", "--tables", tables, "2k/1R1/K2"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("missing table"), "{stderr}");
    let (code, _, stderr) = map_svg("/nonexistent/m.svg");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("/nonexistent/m.svg"), "{stderr}");
}

#[test]
fn plot_draws_the_convergence_record() {
    let dir = tables_4x4();
    let run = dir.path().join("4x4");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("summary.json")).unwrap()).unwrap();
    let first = summary["first_richman_iteration"].as_u64().unwrap();
    let svg = dir.path().join("plot.svg");
    let plot = || {
        bidtb(&[
            "plot",
            run.to_str().unwrap(),
            "--svg",
            svg.to_str().unwrap(),
        ])
    };
    let (code, _, stderr) = plot();
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.contains(&format!("first Richman iteration: {first}")));
    assert_eq!(text.matches("<g class=\"class\"").count(), 6);
    // A damaged record is refused with its line; a missing one with its path.
    let csv = run.join("convergence.csv");
    let mut damaged = std::fs::read_to_string(&csv).unwrap();
    damaged.push_str("12,x\n");
    std::fs::write(&csv, damaged).unwrap();
    let (code, _, stderr) = plot();
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("convergence.csv: line"), "{stderr}");
    std::fs::remove_file(&csv).unwrap();
    let (code, _, stderr) = plot();
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("convergence.csv"), "{stderr}");
    let (code, _, stderr) = bidtb(&["plot", run.to_str().unwrap()]);
    assert_eq!(code, 2, "{stderr}");
}

/// `--method solve`: the same table bodies as the default method, a summary that says how
/// they were made, `verify` passing on them, `query` answering from them.
#[test]
fn the_solve_method_writes_tables_that_verify() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("solve");
    let iterated = dir.path().join("iterate");
    let (code, stdout, stderr) = bidtb(&[
        "generate",
        "--board",
        "5x4",
        "--method",
        "solve",
        "--out",
        root.to_str().unwrap(),
        "--json",
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["method"], "solve");
    assert!(json["first_richman_iteration"].is_null());
    assert_eq!(json["certified"], true);
    assert_eq!(json["alpha_below_beta"], 0);
    assert!(json["classes"]["KNvK"]["stable_at"].is_null());
    assert_eq!(json["solve"]["KNvK"][0]["bound"], "alpha");
    assert!(json["stage_seconds"]["solve"].as_f64().unwrap() > 0.0);
    assert!(json["stage_seconds"].get("kernel").is_none());
    assert!(!root.join("5x4/convergence.csv").exists());
    let (code, _, stderr) = bidtb(&[
        "generate",
        "--board",
        "5x4",
        "--out",
        iterated.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    for class in ["KvK", "KQvK", "KRvK", "KBvK", "KNvK", "KPvK"] {
        let read =
            |d: &std::path::Path| std::fs::read(d.join(format!("5x4/{class}.bidtb"))).unwrap();
        let (a, b) = (read(&root), read(&iterated));
        let h = bidtb::internal::table::HEADER_LEN;
        assert_eq!(a[h..], b[h..], "{class}");
    }
    let (code, stdout, _) = bidtb(&[
        "verify",
        "--tables",
        root.to_str().unwrap(),
        "--board",
        "5x4",
    ]);
    assert_eq!(code, 0, "{stdout}");
    let (code, stdout, _) = bidtb(&[
        "query",
        "--tables",
        root.to_str().unwrap(),
        "--json",
        "1k3/5/5/K3R",
    ]);
    assert_eq!(code, 0);
    let probe: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(probe["certified"], true);
}

/// Flags that only make sense for the iteration are refused with the solve method.
#[test]
fn iteration_flags_are_refused_with_the_solve_method() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().to_str().unwrap();
    for extra in [
        &["--max-iterations", "5"][..],
        &["--checkpoint-every", "5"][..],
        &["--guesses"][..],
    ] {
        let mut args = vec![
            "generate", "--board", "4x4", "--method", "solve", "--out", out,
        ];
        args.extend_from_slice(extra);
        let (code, _, stderr) = bidtb(&args);
        assert_eq!(code, 2, "{extra:?}");
        assert!(stderr.contains("--method iterate only"), "{stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    }
    let (code, _, stderr) = bidtb(&[
        "generate", "--board", "4x4", "--method", "guess", "--out", out,
    ]);
    assert_eq!(code, 2, "{stderr}");
    // `--resume` serves both methods (the solve method's own checkpoint, none here yet).
    let (code, _, stderr) = bidtb(&[
        "generate", "--board", "4x4", "--method", "solve", "--out", out, "--resume",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("no checkpoint to resume from"), "{stderr}");
}
