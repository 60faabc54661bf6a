//! The explorer page end to end in real headless Chromium (Debian's `chromium`, driven by
//! `tests/e2e/explorer.mjs` through playwright-core; `.ci/run` installs both), against
//! `bidtb serve` on the 8x8 tables with four-piece tables of small boards beside them: the
//! SPEC position's value and best moves read off the page, a move played and pieces placed
//! by clicking (a black knight making four men), an en-passant right set in its field, the
//! heatmap, and the SVGs of `bidtb map`, `bidtb plot` and `bidtb atlas` rendered.
//! Screenshots go to `target/tmp/e2e/`.

use crate::common::{Browser, Server, bidtb, tables_8x8};

const FEN: &str = "3k3R/8/3K4/8/8/8/8/8"; // WK d6, WR h8 / BK d8

#[test]
fn explorer_page_in_chromium() {
    let (root, _) = tables_8x8();
    let browser = Browser::new("e2e");
    let out = &browser.out;
    let (map_svg, plot_svg) = (out.join("map.svg"), out.join("plot.svg"));
    let tables = root.to_str().unwrap();
    let (code, _, stderr) = bidtb(&[
        "map",
        "--tables",
        tables,
        FEN,
        "--svg",
        map_svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    let run = root.join("8x8");
    let (code, _, stderr) = bidtb(&[
        "plot",
        run.to_str().unwrap(),
        "--svg",
        plot_svg.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{stderr}");
    // A small atlas, for its plots.
    let atlas = out.join("atlas");
    let (code, _, stderr) = bidtb(&[
        "atlas",
        "--out",
        atlas.to_str().unwrap(),
        "--boards",
        "2x2..4x4",
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let (grid_svg, cost_svg) = (atlas.join("atlas-grid.svg"), atlas.join("atlas-cost.svg"));
    let (_, map_json, _) = bidtb(&["map", "--tables", tables, "--json", FEN]);
    let map: serde_json::Value = serde_json::from_str(&map_json).unwrap();

    // The 8x8 tables beside four-piece ones: every material up to four men on 4x4, and
    // KPvKP (with en passant) on 3x5.
    let mixed = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(root.join("8x8"), mixed.path().join("8x8")).unwrap();
    let m = mixed.path().to_str().unwrap();
    for args in [
        &["--board", "4x4", "--pieces", "4"][..],
        &["--board", "3x5", "--material", "KPvKP"][..],
    ] {
        let mut full = vec!["generate", "--method", "solve", "--out", m, "-q"];
        full.extend_from_slice(args);
        let (code, _, stderr) = bidtb(&full);
        assert_eq!(code, 0, "{stderr}");
    }
    let tb = bidtb::Tablebase::open(mixed.path()).unwrap();
    let server = Server::start(mixed.path());
    let stdout = browser.run(
        "explorer.mjs",
        &[
            server.url.as_ref(),
            out.as_os_str(),
            map_svg.as_os_str(),
            plot_svg.as_os_str(),
            grid_svg.as_os_str(),
            cost_svg.as_os_str(),
        ],
    );
    let read: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();

    // The reference values (docs/src/game.md): 3/4, the rook takes the king along the eighth rank; Black steps off it.
    assert_eq!(read["value"], "3/4");
    assert_eq!(read["decimal"], "0.75");
    assert_eq!(read["best_white"], "h8d8 → 1/1");
    assert_eq!(read["best_black"], "d8c7 → 1/2");
    assert_eq!(read["bid"], "1/4");
    assert_eq!(read["best_marked"], serde_json::json!(["h8d8"]));
    assert_eq!(read["white_moves"].as_array().unwrap().len(), 19);
    // Playing d8c7 by clicking it, then placing pieces by clicking squares.
    assert_eq!(read["after_d8c7"], "1/2");
    assert_eq!(read["bare_kings"], "1/2");
    assert_eq!(read["queen_fen"], "7Q/2k5/3K4/8/8/8/8/8");
    // The heatmap: the black king's own square has the position's value, c8 what the API
    // says (Black's d8c8 leads there: 3/4), the rook's square none.
    assert_eq!(read["heat_d8"], "3/4");
    assert_eq!(read["heat_c8"], map["rows"][0][2]);
    assert_eq!(read["heat_c8"], "3/4");
    assert_eq!(read["heat_h8"], serde_json::Value::Null);
    assert_eq!(read["heat_squares"], 62);
    assert_eq!(read["page_errors"], serde_json::json!([]));
    // Four pieces: a black knight placed by clicking; the page says what the library says.
    assert_eq!(read["four_fen"], "k3/4/1n2/K2R");
    let four = tb.probe_fen("k3/4/1n2/K2R").unwrap();
    assert_eq!(read["four_value"], four.value.to_string());
    let black: Vec<String> = four.black.iter().map(|m| m.uci.clone()).collect();
    assert_eq!(read["four_black_moves"], serde_json::json!(black));
    // En passant: the right set in its field adds Black's capture a4b3.
    assert_eq!(read["ep_fen"], "2k/pP1/3/3/K2 - - b3");
    let without = tb.probe_fen("2k/pP1/3/3/K2").unwrap();
    let with = tb.probe_fen("2k/pP1/3/3/K2 - - b3").unwrap();
    assert_eq!(read["ep_without"], without.value.to_string());
    assert_eq!(read["ep_with"], with.value.to_string());
    assert!(
        !read["ep_without_black"]
            .as_array()
            .unwrap()
            .contains(&"a4b3".into())
    );
    assert!(with.black.iter().any(|m| m.uci == "a4b3"));
    // The SVGs.
    assert_eq!(read["map_squares"], 62);
    assert_eq!(read["map_d8_title"], "d8: 3/4 ≈ 0.75");
    assert_eq!(read["plot_classes"].as_array().unwrap().len(), 6);
    assert_eq!(read["plot_first"], "first Richman iteration: 2644");
    assert_eq!(read["grid_boards"].as_array().unwrap().len(), 9);
    assert_eq!(read["grid_4x4_title"], "4x4: largest denominator 5 digits");
    assert_eq!(read["cost_points"], 18);
    for name in [
        "explorer.png",
        "explorer-heatmap.png",
        "explorer-four.png",
        "map.png",
        "plot.png",
        "grid.png",
        "cost.png",
    ] {
        let size = std::fs::metadata(out.join(name)).unwrap().len();
        // A blank page is about 3 kB; the small atlas grid (nine squares) about 8 kB.
        let least = if name == "grid.png" { 6_000 } else { 10_000 };
        assert!(size > least, "{name}: {size} bytes");
    }
    assert_eq!(server.stop(), Some(0), "SIGTERM stops the server cleanly");
}
