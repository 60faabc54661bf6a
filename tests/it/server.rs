//! `bidtb serve` on small boards: the API answers exactly what `bidtb query --json` and
//! `bidtb map --json` print, errors are JSON with 400 or 404, the page and its assets are
//! served, concurrent clients get the right answers, and SIGTERM stops it cleanly.

use std::path::Path;

use crate::common::{Server, bidtb};

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into()
}

/// GET `path` with an optional `fen` parameter: status, content type and body.
fn get(agent: &ureq::Agent, url: &str, path: &str, fen: Option<&str>) -> (u16, String, String) {
    let mut req = agent.get(format!("{}{}", url, path.trim_start_matches('/')));
    if let Some(f) = fen {
        req = req.query("fen", f);
    }
    let mut resp = req.call().unwrap();
    let kind = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let status = resp.status().as_u16();
    (status, kind, resp.body_mut().read_to_string().unwrap())
}

fn generate(root: &Path, board: &str) {
    let (code, _, stderr) = bidtb(&[
        "generate",
        "--board",
        board,
        "--out",
        root.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(code, 0, "{stderr}");
}

const FENS: [&str; 6] = [
    "3k/1R2/K3/4",
    "k3/4/2n1/K3",
    "k3/4/1P2/K3",
    "4/1k2/4/2K1",
    "k3/p3/4/2K1",
    "K2k/4/4/b3 w - - 0 1",
];

#[test]
fn the_api_answers_as_the_command_line_does() {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), "4x4");
    let tables = dir.path().to_str().unwrap();
    let server = Server::start(dir.path());
    let a = agent();
    for fen in FENS {
        let (status, kind, body) = get(&a, &server.url, "/api/query", Some(fen));
        assert_eq!(status, 200, "{fen}: {body}");
        assert_eq!(kind, "application/json");
        let (code, stdout, _) = bidtb(&["query", "--tables", tables, "--json", fen]);
        assert_eq!(code, 0);
        assert_eq!(body, stdout.trim_end(), "{fen}");
        let (status, _, body) = get(&a, &server.url, "/api/map", Some(fen));
        assert_eq!(status, 200, "{fen}: {body}");
        let (_, stdout, _) = bidtb(&["map", "--tables", tables, "--json", fen]);
        assert_eq!(body, stdout.trim_end(), "{fen}");
    }
    let (status, _, body) = get(&a, &server.url, "/api/boards", None);
    assert_eq!((status, body.as_str()), (200, r#"{"boards":["4x4"]}"#));

    // Errors: JSON, 400 for bad input, 404 for a missing table or page.
    for (path, fen, want, needle) in [
        ("/api/query", Some("3k/1R2/K3"), 404, "missing table"),
        ("/api/query", Some("3k/1R2/K3/4/4"), 404, "generate it with"),
        ("/api/query", Some("3k/1R2/K3/5"), 400, "bad FEN"),
        ("/api/query", Some("3k/1RR1/K3/4"), 404, "KRRvK"),
        ("/api/query", Some("3k/1RRn/K3/4"), 400, "5 men"),
        ("/api/query", Some("P2k/4/K3/4"), 400, "bad FEN"),
        ("/api/query", Some(""), 400, "missing parameter fen"),
        ("/api/query", None, 400, "missing parameter fen"),
        ("/api/map", Some("xyz"), 400, "bad FEN"),
        ("/api/map", Some("k2/3/2K"), 404, "missing table"),
        ("/nowhere", None, 404, "no such page"),
    ] {
        let (status, kind, body) = get(&a, &server.url, path, fen);
        assert_eq!(status, want, "{path} {fen:?}: {body}");
        assert_eq!(kind, "application/json", "{path} {fen:?}");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        let text = v["error"].as_str().unwrap();
        assert!(text.contains(needle), "{path} {fen:?}: {text}");
    }

    // The page and its assets come from the binary.
    let (status, kind, page) = get(&a, &server.url, "/", None);
    assert_eq!((status, kind.as_str()), (200, "text/html; charset=utf-8"));
    assert!(page.contains(r#"<script src="/explorer.js">"#));
    assert!(
        !page.contains("http://") && !page.contains("https://"),
        "no CDN"
    );
    let (status, kind, script) = get(&a, &server.url, "/explorer.js", None);
    assert_eq!(
        (status, kind.as_str()),
        (200, "text/javascript; charset=utf-8")
    );
    assert!(script.contains("/api/map"));
    let (status, kind, _) = get(&a, &server.url, "/explorer.css", None);
    assert_eq!((status, kind.as_str()), (200, "text/css; charset=utf-8"));
    assert_eq!(server.stop(), Some(0));
}

#[test]
fn concurrent_clients_get_the_right_answers() {
    let dir = tempfile::tempdir().unwrap();
    generate(dir.path(), "4x4");
    let tb = bidtb::internal::probe::Tablebase::open(dir.path()).unwrap();
    let want: Vec<String> = FENS
        .iter()
        .map(|f| tb.probe_fen(f).unwrap().to_json().to_string())
        .collect();
    let server = Server::start(dir.path());
    std::thread::scope(|s| {
        for t in 0..8 {
            let (url, want) = (&server.url, &want);
            s.spawn(move || {
                let a = agent();
                for i in 0..60 {
                    let k = (t + i) % FENS.len();
                    let (status, _, body) = get(&a, url, "/api/query", Some(FENS[k]));
                    assert_eq!(status, 200);
                    assert_eq!(body, want[k]);
                }
            });
        }
    });
}

#[test]
fn serve_refuses_bad_arguments() {
    let (code, _, stderr) = bidtb(&["serve", "--tables", "/nonexistent/tables"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("/nonexistent/tables"), "{stderr}");
    let (code, _, stderr) = bidtb(&["serve", "--addr", "localhost:eighty"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("--addr"), "{stderr}");
}
