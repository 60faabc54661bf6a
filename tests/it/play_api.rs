//! Playing through the command line and over HTTP (docs/src/guide/play.md): `bidtb play` scripted
//! from standard input to a king capture, with its refusals and exit codes; the games API
//! with every error it promises (400 bad bid or move, 404 unknown game, 409 out of turn or
//! after the end, 503 when full), each leaving the game unchanged.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::{Server, bidtb};

/// KRvK on 4x4, value 81/128: White wins with more than 47/128 of the money.
const FEN: &str = "3k/4/1K2/2R1";

fn tables(root: &Path) {
    let out = root.to_str().unwrap();
    let (code, _, err) = bidtb(&[
        "generate", "--board", "4x4", "--pieces", "4", "--method", "solve", "--out", out, "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = bidtb(&[
        "chips", "--tables", out, "--board", "4x4", "--chips", "20", "-q",
    ]);
    assert_eq!(code, 0, "{err}");
}

/// `bidtb play ARGS` with `input` on standard input: exit code, stdout, stderr.
fn play(args: &[&str], input: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_bidtb"))
        .arg("play")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn play_in_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    tables(dir.path());
    let t = dir.path().to_str().unwrap();
    // Black with nothing: the engine (White, everything) wins every bid and captures.
    let zeros = "0\n".repeat(50);
    let (code, out, err) = play(
        &["--tables", t, "--colour", "black", "--bankroll", "0", FEN],
        &format!("abc\n1/2\n{zeros}"),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("White wins by force"), "{out}");
    assert!(out.contains("\"abc\": give a share"), "{out}");
    assert!(out.contains("black bids 1/2 but holds 0"), "{out}");
    assert!(
        out.contains("game over: white captured the king (the engine wins)"),
        "{out}"
    );
    // Chips: the same, with the marker refused to the side without it.
    let (code, out, err) = play(
        &[
            "--tables", t, "--mode", "chips", "--colour", "black", "--chips", "20:0", FEN,
        ],
        &format!("0*\n{zeros}"),
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("does not hold the marker"), "{out}");
    assert!(out.contains("game over: white captured the king"), "{out}");
    // Random turn: the coin, an illegal move refused, advice; input ends: exit 1.
    let (code, out, err) = play(
        &["--tables", t, "--mode", "random", "--seed", "1", FEN],
        "a1a1\nadvice\n",
    );
    assert!(
        out.contains("coin:") || out.contains("the coin picks you"),
        "{out}"
    );
    if out.contains("the coin picks you") {
        assert!(out.contains("is not a legal move of white"), "{out}");
        assert!(out.contains("advice: if the coin picks you: move"), "{out}");
        assert_eq!(code, 1, "{err}");
        assert!(err.contains("left unfinished"), "{err}");
    }
    // Usage errors: exit 2, one line each.
    for args in [
        vec!["--tables", t, "--bankroll", "3/2", FEN],
        vec!["--tables", t, "--mode", "money", "--chips", "10:10", FEN],
        vec!["--tables", t, "--mode", "random", "--bankroll", "1/2", FEN],
        vec!["--tables", t, "--mode", "chips", "--chips", "ten", FEN],
        vec!["--tables", t, "--mode", "dice", FEN],
    ] {
        let (code, _, err) = play(&args, "");
        assert_eq!(code, 2, "{args:?}: {err}");
    }
    // A position without tables: exit 1 naming the command that makes them.
    let (code, _, err) = play(&["--tables", t, "4k3/8/8/8/8/8/8/K7"], "");
    assert_ne!(code, 0);
    assert!(err.contains("generate"), "{err}");
    // Chips without chip files for that total: the command that makes them.
    let (code, _, err) = play(
        &["--tables", t, "--mode", "chips", "--chips", "3:4", FEN],
        "",
    );
    assert_ne!(code, 0);
    assert!(err.contains("bidtb chips"), "{err}");
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

fn call(
    agent: &ureq::Agent,
    url: &str,
    path: &str,
    body: Option<&str>,
) -> (u16, serde_json::Value) {
    let full = format!("{}{}", url, path.trim_start_matches('/'));
    let mut resp = match body {
        Some(b) => agent
            .post(&full)
            .header("content-type", "application/json")
            .send(b)
            .unwrap(),
        None => agent.get(&full).call().unwrap(),
    };
    let status = resp.status().as_u16();
    let text = resp.body_mut().read_to_string().unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("{text}")),
    )
}

#[test]
fn games_over_http() {
    let dir = tempfile::tempdir().unwrap();
    tables(dir.path());
    let server = Server::start_with(dir.path(), &["--max-games", "3"], None);
    let (a, url) = (agent(), server.url.clone());
    let new = |body: &str| call(&a, &url, "/api/games", Some(body));
    // Bad setups: 400; a position without tables: 404.
    for body in [
        r#"{"fen": "3k/4/1K2/2R1", "mode": "dice"}"#,
        r#"{"fen": "3k/4/1K2/2R1", "bankroll": "2"}"#,
        r#"{"fen": "3k/4/1K2/2R1", "colour": "green"}"#,
        r#"{"fen": "3k/4/1K2/2R1", "mode": "random", "chips": "1:1"}"#,
        r#"{"fen": "not a fen"}"#,
        r#"{"fen": 7}"#,
        "nonsense",
    ] {
        let (status, json) = new(body);
        assert_eq!(status, 400, "{body}: {json}");
        assert!(json["error"].is_string(), "{json}");
    }
    let (status, json) = new(r#"{"fen": "4k3/8/8/8/8/8/8/K7"}"#);
    assert_eq!(status, 404, "{json}");
    // A game: the person is Black with nothing; the engine wins every bid.
    let (status, game) =
        new(r#"{"fen": "3k/4/1K2/2R1", "colour": "black", "bankroll": "0", "seed": 1}"#);
    assert_eq!(status, 201, "{game}");
    let id = game["id"].as_str().unwrap().to_string();
    assert_eq!(game["phase"], "bid");
    assert_eq!(game["assessment"]["leader"], "white");
    let path = |what: &str| format!("/api/games/{id}{what}");
    // Refusals leave the game as it was.
    for (body, status_wanted, what) in [
        (r#"{"bid": "1/2"}"#, 400, "holds 0"),
        (r#"{"bid": "x"}"#, 400, "give a share"),
        (r#"{"bid": true}"#, 400, "a number or a string"),
        (r#"{"offer": 1}"#, 400, "unknown field"),
    ] {
        let (status, json) = call(&a, &url, &path("/bid"), Some(body));
        assert_eq!(status, status_wanted, "{body}: {json}");
        assert!(
            json["error"].as_str().unwrap().contains(what),
            "{body}: {json}"
        );
    }
    let (status, json) = call(&a, &url, &path("/move"), Some(r#"{"move": "d4c4"}"#));
    assert_eq!(status, 409, "{json}");
    assert!(
        json["error"].as_str().unwrap().contains("bid first"),
        "{json}"
    );
    let (status, json) = call(
        &a,
        &url,
        &path("/move"),
        Some(r#"{"move": "d4c4", "hand_over": true}"#),
    );
    assert_eq!(status, 400, "{json}");
    let (_, now) = call(&a, &url, &path(""), None);
    assert_eq!(now["history"], game["history"]);
    assert_eq!(now["purse"], game["purse"]);
    // Advice on request.
    let (status, advised) = call(&a, &url, &path("?advice=1"), None);
    assert_eq!(status, 200);
    assert!(advised["advice"]["text"].is_string(), "{advised}");
    // Bid nothing until the engine captures the king.
    let mut state = game;
    for _ in 0..50 {
        if state["phase"] == "over" {
            break;
        }
        let (status, s) = call(&a, &url, &path("/bid"), Some(r#"{"bid": "0"}"#));
        assert_eq!(status, 200, "{s}");
        state = s;
    }
    assert_eq!(state["phase"], "over", "{state}");
    assert_eq!(state["winner"], "white");
    let last = state["history"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["mover"], "white");
    assert!(last["bids"]["white"].is_string());
    // After the end: 409.
    let (status, json) = call(&a, &url, &path("/bid"), Some(r#"{"bid": "0"}"#));
    assert_eq!(status, 409, "{json}");
    assert!(json["error"].as_str().unwrap().contains("over"), "{json}");
    // Unknown games: 404.
    let (status, _) = call(&a, &url, "/api/games/0123456789abcdef", None);
    assert_eq!(status, 404);
    let (status, _) = call(
        &a,
        &url,
        "/api/games/0123456789abcdef/bid",
        Some(r#"{"bid": "0"}"#),
    );
    assert_eq!(status, 404);
    // Random turn: every answer waits on the person; an illegal move is refused (400).
    let (status, random) = new(r#"{"fen": "3k/4/1K2/2R1", "mode": "random", "seed": 3}"#);
    assert_eq!(status, 201, "{random}");
    assert_eq!(random["phase"], "move", "{random}");
    {
        assert_eq!(random["to_act"], "white");
        let rid = random["id"].as_str().unwrap();
        let (status, json) = call(
            &a,
            &url,
            &format!("/api/games/{rid}/move"),
            Some(r#"{"move": "a1a1"}"#),
        );
        assert_eq!(status, 400, "{json}");
        assert!(
            json["error"].as_str().unwrap().contains("not a legal move"),
            "{json}"
        );
        let (_, again) = call(&a, &url, &format!("/api/games/{rid}"), None);
        assert_eq!(again["history"], random["history"]);
    }
    // Chips start; the store holds three games, a fourth is refused.
    let (status, chips) =
        new(r#"{"fen": "3k/4/1K2/2R1", "mode": "chips", "chips": "10:10", "tiebreak": "black"}"#);
    assert_eq!(status, 201, "{chips}");
    assert_eq!(chips["purse"]["black"], "10*");
    let (status, json) = new(r#"{"fen": "3k/4/1K2/2R1", "mode": "random"}"#);
    assert_eq!(status, 503, "{json}");
    // Wrong methods.
    let (status, _) = call(&a, &url, "/api/games", None);
    assert_eq!(status, 405);
    server.stop();
}

#[test]
fn games_are_forgotten_when_untouched() {
    let dir = tempfile::tempdir().unwrap();
    tables(dir.path());
    let server = Server::start_with(dir.path(), &["--game-age", "1"], None);
    let (a, url) = (agent(), server.url.clone());
    let (status, game) = call(&a, &url, "/api/games", Some(r#"{"fen": "3k/4/1K2/2R1"}"#));
    assert_eq!(status, 201);
    let path = format!("/api/games/{}", game["id"].as_str().unwrap());
    assert_eq!(call(&a, &url, &path, None).0, 200);
    std::thread::sleep(std::time::Duration::from_millis(2200));
    let (status, json) = call(&a, &url, &path, None);
    assert_eq!(status, 404, "{json}");
    assert!(
        json["error"].as_str().unwrap().contains("forgotten"),
        "{json}"
    );
    server.stop();
}
