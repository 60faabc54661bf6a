//! The explorer's Play mode end to end in real headless Chromium (Debian's `chromium`,
//! driven by `tests/e2e/play.mjs` through playwright-core; `.ci/run` installs both), against
//! `bidtb serve` on a copy of the 8x8 tables with the chip files of 20 chips beside them.
//! The script plays whole games through the page to a king capture, the way a person does:
//! - money: White with half the money in KPvK, after two refused bids (above the holding,
//!   not a number) that leave the game unchanged; bids typed from the page's advice, moves
//!   clicked on the board (a promotion picked), one hand-over, one move from the move list,
//!   a reload in the middle that comes back into the same game; White captures;
//! - random turn: Black in bare kings, the coin picking the mover;
//! - chips: White with 9 chips and the marker against 11 in bare kings, after a refused bid;
//!   the engine captures;
//! - then the explorer works again.
//!
//! Screenshots go to `target/tmp/e2e-play/` (`play.png` mid-game: the bids and the history).

use crate::common::{Browser, Server, bidtb, tables_8x8};

#[test]
fn play_a_whole_game_in_chromium() {
    let (root, _) = tables_8x8();
    let browser = Browser::new("e2e-play");
    let out = &browser.out;

    // A copy of the 8x8 tables (the shared ones stay as generated) with chip files of 20.
    let tables = tempfile::tempdir().unwrap();
    let board = tables.path().join("8x8");
    std::fs::create_dir_all(&board).unwrap();
    for f in std::fs::read_dir(root.join("8x8")).unwrap().flatten() {
        if f.file_type().unwrap().is_file() && !f.file_name().to_string_lossy().starts_with('.') {
            std::fs::copy(f.path(), board.join(f.file_name())).unwrap();
        }
    }
    let dir = tables.path().to_str().unwrap();
    let (code, _, stderr) = bidtb(&["chips", "--tables", dir, "--chips", "20", "-q"]);
    assert_eq!(code, 0, "{stderr}");

    let server = Server::start(tables.path());
    let started = std::time::Instant::now();
    let stdout = browser.run(
        "play.mjs",
        &[server.url.as_ref(), out.as_os_str(), "9:11".as_ref()],
    );
    eprintln!("play.mjs: {:.1} s", started.elapsed().as_secs_f64());
    let read: serde_json::Value = serde_json::from_str(stdout.trim()).unwrap();
    let history = |game: &str| read[game]["history"].as_array().unwrap().clone();

    // Money. The start: half the money each, White ahead by 189851/1048576 (it needs more
    // than 1 − 714139/1048576), bids first, the game's id in the address.
    let start = &read["money_start"];
    assert_eq!(start["white"], "1/2 = 0.5");
    assert_eq!(start["black"], "1/2 = 0.5");
    assert_eq!(
        start["assessment"],
        "White wins by force: 0.181056 over what it needs (189851/1048576)"
    );
    assert!(start["url"].as_str().unwrap().starts_with("?game="));
    // The refusals: shown, 400, and nothing changed.
    assert_eq!(read["error_above"], "white bids 3/4 but holds 1/2");
    assert_eq!(read["error_above_status"], "400");
    assert!(
        read["error_nan"]
            .as_str()
            .unwrap()
            .starts_with("bid \"lots\""),
        "{}",
        read["error_nan"]
    );
    assert_eq!(read["error_nan_status"], "400");
    assert_eq!(read["unchanged_after_errors"], true);
    // Mid-game: this turn's bids, both revealed; the history so far; the reload.
    let mid = read["mid_bids"].as_str().unwrap();
    assert!(
        mid.starts_with("This turn: you bid ")
            && mid.contains("the engine bid ")
            && mid.ends_with("you won the bid."),
        "{mid}"
    );
    assert!(read["mid_history_rows"].as_u64().unwrap() >= 4);
    assert_eq!(read["reload_same_game"], true);
    assert_eq!(read["handed_over"], true);
    assert_eq!(read["list_move"], true);
    assert_eq!(
        read["promotion_choices"],
        serde_json::json!(["a7a8q", "a7a8r", "a7a8b", "a7a8n"])
    );
    // The end: White captured the king; every turn is in the history with both bids, the
    // first one handed over by White.
    let money = &read["money"];
    assert_eq!(money["winner"], "white");
    assert_eq!(money["phase"], "over");
    assert_eq!(money["status"], "Game over: White captured the king.");
    assert_eq!(money["assessment"], "White captured the king");
    assert_eq!(money["result_visible"], true);
    assert_eq!(money["bid_form_hidden"], true);
    assert_eq!(
        money["black_kings_on_board"], 0,
        "the captured king is gone"
    );
    let turns = history("money");
    assert_eq!(turns.len() as u64, money["turns"].as_u64().unwrap());
    assert!((3..=60).contains(&turns.len()), "{} turns", turns.len());
    assert!(
        money["result"]
            .as_str()
            .unwrap()
            .starts_with("You win: White captured the king with "),
        "{}",
        money["result"]
    );
    for t in &turns {
        assert!(
            t["whiteBid"].is_string() && t["blackBid"].is_string(),
            "{t}"
        );
    }
    assert_eq!(turns[0]["control"], "white");
    assert_eq!(turns[0]["mover"], "black");
    assert!(
        turns[0]["cells"][3]
            .as_str()
            .unwrap()
            .starts_with("White hands over; Black ")
    );
    let last = turns.last().unwrap();
    assert_eq!(last["mover"], "white");
    assert!(
        last["cells"][3]
            .as_str()
            .unwrap()
            .ends_with("takes the king")
    );
    assert!(
        turns.iter().any(|t| t["move"] == "a7a8q"),
        "the pawn promoted"
    );

    // Random turn: no bids, the coin shown; the game ends in a capture.
    assert_eq!(read["random_start"]["bid_form_hidden"], true);
    assert_eq!(read["random_start"]["coin"], "black");
    let random = &read["random"];
    assert!(random["winner"] == "white" || random["winner"] == "black");
    let turns = history("random");
    assert!(!turns.is_empty() && turns.len() <= 60);
    assert!(
        !read["random_log"].as_array().unwrap().is_empty(),
        "the person moved"
    );
    for t in &turns {
        // The coin's pick is the mover.
        assert_eq!(
            t["cells"][1].as_str().unwrap().to_lowercase(),
            t["mover"].as_str().unwrap()
        );
    }
    assert!(
        turns.last().unwrap()["cells"][2]
            .as_str()
            .unwrap()
            .ends_with("takes the king")
    );

    // Chips: 9 with the marker against 11 (Black wins from 11 of 20); the refusal; the
    // engine captures.
    assert_eq!(read["chips_start"]["white"], "9* of 20");
    assert_eq!(read["chips_start"]["black"], "11 of 20");
    assert!(
        read["chips_start"]["assessment"]
            .as_str()
            .unwrap()
            .starts_with("Black wins"),
        "{}",
        read["chips_start"]["assessment"]
    );
    assert_eq!(read["chips_error"], "white bids 15 but holds 9*");
    assert_eq!(read["chips"]["winner"], "black");
    let turns = history("chips");
    assert!(!turns.is_empty() && turns.len() <= 200);
    assert!(
        read["chips"]["result"]
            .as_str()
            .unwrap()
            .starts_with("The engine wins: Black captured the king")
    );

    // The explorer afterwards.
    assert_eq!(read["explorer_after"]["value"], "1/2");
    assert_eq!(read["explorer_after"]["fen"], "3k4/8/3K4/8/8/8/8/8");
    assert_eq!(read["page_errors"], serde_json::json!([]));
    assert!(
        read["seconds"].as_f64().unwrap() < 60.0,
        "{}",
        read["seconds"]
    );

    for name in [
        "play.png",
        "play-over.png",
        "play-random.png",
        "play-chips.png",
    ] {
        let size = std::fs::metadata(out.join(name)).unwrap().len();
        assert!(size > 20_000, "{name}: {size} bytes");
    }
    assert_eq!(server.stop(), Some(0), "SIGTERM stops the server cleanly");
}
