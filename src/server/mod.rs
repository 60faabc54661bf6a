//! The HTTP side: a JSON API over the memory-mapped tables and the explorer page.
//!
//! - `GET /api/query?fen=…`: the JSON of `bidtb query --json` (with `&chips=W:B` and
//!   `&tiebreak=white|black`, that of `bidtb query --json --chips W:B --tiebreak …`);
//! - `GET /api/map?fen=…`: the JSON of `bidtb map --json`;
//! - `GET /api/boards`: the boards with tables;
//! - `/api/games…`: games against the engine ([`games`]);
//! - `GET /`: the explorer page (its script and style sheet are served by the binary too).
//!
//! Errors are `{"error": "…"}` with status 400 for bad input (FEN, position, parameters),
//! 404 for a missing table or an unknown path, 500 for a table that fails at run time. All
//! requests share one [`Tablebase`]: its tables are memory maps, never copied. The
//! connections are guarded against slow, idle, malformed and too many clients
//! ([`connections`]).
//!
//! The tables must not be modified in place while they are served (truncated, rewritten):
//! they are memory maps. A page that vanishes under one (a truncated file) would end the
//! process with SIGBUS; `bidtb serve` installs [`bidtb::internal::mapguard`]'s handler, so
//! that the request reading it answers 500 and the file is refused from then on. bidtb
//! itself never does this (it writes a new file and renames it over the old one, which
//! leaves the served map intact); restart the server to serve regenerated tables.

mod connections;
pub mod games;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde::Deserialize;
use serde_json::json;

use bidtb::Color;
use bidtb::Error;
use bidtb::Tablebase;
use bidtb::internal::probe::map::ValueMap;

/// What every request shares: the tables, and the games under way.
pub struct AppState {
    /// The tables (memory maps), shared with the chip ranks' background computations.
    pub tb: Arc<Tablebase>,
    /// The games against the engine.
    pub games: games::Games,
    /// The chip ranks the games share.
    pub ranks: bidtb::internal::play::chips::ChipMemory,
}

/// How many games a server keeps, and for how long untouched.
#[derive(Clone, Copy, Debug)]
pub struct GameLimits {
    /// The most games at once.
    pub max: usize,
    /// How long an untouched game is kept.
    pub max_age: std::time::Duration,
    /// How long a request waits for the chip ranks it needs before answering 503.
    pub ranks_wait: std::time::Duration,
}

impl Default for GameLimits {
    fn default() -> Self {
        GameLimits {
            max: 1000,
            max_age: std::time::Duration::from_secs(3600),
            ranks_wait: std::time::Duration::from_millis(1000),
        }
    }
}

const PAGE: &str = include_str!("explorer/index.html");
const SCRIPT: &str = include_str!("explorer/explorer.js");
const STYLE: &str = include_str!("explorer/explorer.css");

/// The status an error answers with.
pub fn status(e: &Error) -> StatusCode {
    match e {
        Error::BoardSize(_) | Error::Position(_) | Error::Fen { .. } | Error::Material(_) => {
            StatusCode::BAD_REQUEST
        }
        Error::MissingTable { .. } | Error::MissingChips(_) => StatusCode::NOT_FOUND,
        // Work under way (the chip ranks): ask again; the server is stopping: likewise.
        Error::Pending(_) | Error::Interrupted(_) => StatusCode::SERVICE_UNAVAILABLE,
        // Work the server will not start for lack of memory.
        Error::Resources(_) => StatusCode::INSUFFICIENT_STORAGE,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

/// Seconds a 503 asks the client to wait before asking again (`Retry-After`).
pub const RETRY_AFTER: u64 = 2;

fn error(code: StatusCode, text: impl Into<String>) -> Response {
    let body = axum::Json(json!({"error": text.into()}));
    if code == StatusCode::SERVICE_UNAVAILABLE {
        // Work under way, or a full store of games: both pass.
        let wait = RETRY_AFTER.to_string();
        return (code, [(header::RETRY_AFTER, wait)], body).into_response();
    }
    (code, body).into_response()
}

/// The most threads that run requests' work at once ([`blocking`]); more requests wait
/// for one, while the async workers go on accepting and answering the rest.
const WORK_THREADS: usize = 64;

/// Run a request's work on the blocking pool (at most [`WORK_THREADS`] threads): reading
/// long numbers, the engine's moves, probes and maps take CPU time that must not hold an
/// async worker, so that one costly request cannot stall the others (`/api/boards`).
pub(crate) async fn blocking(work: impl FnOnce() -> Response + Send + 'static) -> Response {
    // A table truncated under the server while this work read it: the handler gave the
    // read zeros (`mapguard`), so the answer is withheld.
    let guarded = move || {
        let before = bidtb::internal::mapguard::poisonings();
        let answer = work();
        if bidtb::internal::mapguard::poisonings() != before {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "a table file was truncated while this request read it (modified in place): \
                 its answer is withheld, and the file is no longer read; replace it by rename \
                 and restart the server",
            );
        }
        answer
    };
    tokio::task::spawn_blocking(guarded)
        .await
        .unwrap_or_else(|e| {
            error(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the request's work failed: {e}"),
            )
        })
}

fn answer(result: Result<serde_json::Value, Error>) -> Response {
    match result {
        Ok(v) => axum::Json(v).into_response(),
        Err(e) => error(status(&e), e.to_string()),
    }
}

/// The query string of the API: one FEN; for `/api/query` also whole-chip holdings
/// (`chips=100:100`) and who holds the tie-break marker (`tiebreak=white|black`).
#[derive(Deserialize)]
struct FenParam {
    fen: Option<String>,
    chips: Option<String>,
    tiebreak: Option<String>,
}

/// Answer a request that names a FEN with `f`, or with 400 when the FEN is missing or the
/// query string cannot be read.
fn with_fen(
    q: Result<Query<FenParam>, QueryRejection>,
    f: impl FnOnce(&str) -> Result<serde_json::Value, Error>,
) -> Response {
    match q {
        Ok(Query(FenParam { fen: Some(fen), .. })) if !fen.trim().is_empty() => answer(f(&fen)),
        Ok(_) => error(
            StatusCode::BAD_REQUEST,
            "missing parameter fen, e.g. /api/query?fen=3k3R/8/3K4/8/8/8/8/8",
        ),
        Err(e) => error(StatusCode::BAD_REQUEST, e.body_text()),
    }
}

async fn query(
    State(app): State<Arc<AppState>>,
    q: Result<Query<FenParam>, QueryRejection>,
) -> Response {
    let chips = match &q {
        Ok(Query(p)) => match chip_request(p) {
            Ok(c) => c,
            Err(text) => return error(StatusCode::BAD_REQUEST, text),
        },
        Err(_) => None,
    };
    blocking(move || {
        with_fen(q, |fen| {
            let tb = &app.tb;
            let parsed = bidtb::fen::parse(fen)?;
            let mut json = tb.probe(parsed.board, &parsed.position)?.to_json();
            if let Some((w, b, marker)) = chips {
                let advice = tb.chip_advice(parsed.board, &parsed.position, w, b, marker)?;
                json["chips"] = advice.to_json();
            }
            Ok(json)
        })
    })
    .await
}

/// The holdings a query asks about, if any: `chips=W:B`, `tiebreak=white|black` (white by
/// default).
fn chip_request(p: &FenParam) -> Result<Option<(u32, u32, Color)>, String> {
    let Some(text) = p.chips.as_deref() else {
        return match p.tiebreak {
            Some(_) => Err("tiebreak goes with chips=W:B".into()),
            None => Ok(None),
        };
    };
    if text.trim().is_empty() {
        return Err(
            "chips= is empty: give White's and Black's chips as W:B, e.g. chips=100:100 (or \
             leave chips out)"
                .into(),
        );
    }
    let bad = || format!("chips={text}: give White's and Black's chips as W:B, e.g. 100:100");
    let (w, b) = text.split_once(':').ok_or_else(bad)?;
    let w: u32 = w.trim().parse().map_err(|_| bad())?;
    let b: u32 = b.trim().parse().map_err(|_| bad())?;
    // The chip tables exist for 1 to MAX_TOTAL chips in all (`bidtb query --chips` says
    // the same).
    match w.checked_add(b) {
        Some(k) if (1..=bidtb::internal::chips::MAX_TOTAL).contains(&k) => {}
        _ => {
            return Err(format!(
                "chips={text}: the chips in all must be 1 to {}",
                bidtb::internal::chips::MAX_TOTAL
            ));
        }
    }
    let marker = match p.tiebreak.as_deref() {
        None | Some("white") => Color::White,
        Some("black") => Color::Black,
        Some(other) => return Err(format!("tiebreak={other}: white or black")),
    };
    Ok(Some((w, b, marker)))
}

async fn map(
    State(app): State<Arc<AppState>>,
    q: Result<Query<FenParam>, QueryRejection>,
) -> Response {
    blocking(move || with_fen(q, |fen| ValueMap::of_fen(&app.tb, fen).map(|m| m.to_json()))).await
}

async fn boards(State(app): State<Arc<AppState>>) -> Response {
    let list: Vec<String> = app.tb.boards().map(|b| b.to_string()).collect();
    axum::Json(json!({ "boards": list })).into_response()
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// The routes, over one shared tablebase and store of games.
pub fn router(app: Arc<AppState>) -> Router {
    Router::new()
        .route(
            "/",
            get(|| async { asset("text/html; charset=utf-8", PAGE) }),
        )
        .route(
            "/explorer.js",
            get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }),
        )
        .route(
            "/explorer.css",
            get(|| async { asset("text/css; charset=utf-8", STYLE) }),
        )
        .route("/api/query", get(query))
        .route("/api/map", get(map))
        .route("/api/boards", get(boards))
        .route("/api/games", post(games::create))
        .route("/api/games/{id}", get(games::read))
        .route("/api/games/{id}/bid", post(games::bid))
        .route("/api/games/{id}/move", post(games::play))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "no such page") })
        .method_not_allowed_fallback(|| async {
            error(
                StatusCode::METHOD_NOT_ALLOWED,
                "method not allowed: GET (and HEAD) everywhere, POST for /api/games",
            )
        })
        .with_state(app)
}

/// Serve until Ctrl-C or SIGTERM on the first of `addrs` that can be bound (a host name's
/// addresses); `ready` gets the bound address once listening. Clients
/// get `header_timeout` to send a request's line and headers.
pub fn serve(
    tb: Tablebase,
    addrs: &[SocketAddr],
    header_timeout: std::time::Duration,
    limits: GameLimits,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(WORK_THREADS)
        .build()
        .map_err(|e| Error::io("the server's runtime", e))?;
    let served = runtime.block_on(async move {
        let named = addrs
            .iter()
            .map(SocketAddr::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let listener = tokio::net::TcpListener::bind(addrs)
            .await
            .map_err(|e| Error::io(&named, e))?;
        let bound = listener.local_addr().map_err(|e| Error::io(&named, e))?;
        ready(bound);
        let tb = Arc::new(tb);
        let app = Arc::new(AppState {
            tb: tb.clone(),
            games: games::Games::new(limits.max, limits.max_age),
            ranks: bidtb::internal::play::chips::ChipMemory::in_background(tb, limits.ranks_wait),
        });
        connections::serve(listener, router(app), header_timeout, async {
            shutdown().await;
            // A computation of chip ranks under way is abandoned at its next sweep (its
            // thread is not waited for: the process ends with the connections).
            bidtb::internal::play::chips::ChipMemory::stop_all();
        })
        .await;
        Ok(())
    });
    // A request's work still running on the blocking pool once the connections' 5 s are
    // over is not waited for (dropping the runtime would wait for it): the process ends.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    served
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {},
        _ = terminate => {},
    }
}
