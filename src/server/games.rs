//! Games over HTTP (docs/src/guide/play.md): a person's games against the engine, kept in memory.
//!
//! - `POST /api/games` with `{"fen", "mode": "random"|"money"|"chips", "colour":
//!   "white"|"black", "bankroll": "1/2" (the person's share, money), "chips": "100:100"
//!   (White's:Black's), "tiebreak": "white"|"black", "seed": 7}` starts one: 201 and its state
//!   with its `id`.
//! - `GET /api/games/{id}` (`?advice=1` adds the engine's advice for the person) reads it.
//! - `POST /api/games/{id}/bid` with `{"bid": "1/8"}` (chips: `"12"`, `"12*"`) bids;
//! - `POST /api/games/{id}/move` with `{"move": "h8d8"}`, or `{"hand_over": true}` after
//!   winning a bid, moves.
//!
//! Answers carry the whole state. A bad input (a bid above one's holding or not a number,
//! an illegal move, a malformed body) is 400, an unknown game 404, an input out of turn or
//! after the end 409, a full store 503: each `{"error": …}`, the game unchanged. At most
//! `max` games live at once; one untouched for `max_age` is forgotten.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Json;
use axum::extract::rejection::{JsonRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use super::{AppState, error, status};
use bidtb::Color;
use bidtb::internal::play::session::PlayError;
use bidtb::internal::play::{Match, Mode, Setup};

/// The games under way.
pub struct Games {
    max: usize,
    max_age: Duration,
    games: Mutex<HashMap<String, Slot>>,
}

struct Slot {
    game: Arc<Mutex<Match>>,
    touched: Instant,
}

impl Games {
    /// A store of at most `max` games, each forgotten after `max_age` untouched.
    pub fn new(max: usize, max_age: Duration) -> Games {
        Games {
            max,
            max_age,
            games: Mutex::new(HashMap::new()),
        }
    }

    fn insert(&self, m: Match) -> Result<(String, Arc<Mutex<Match>>), Fail> {
        let mut games = self.games.lock().expect("games lock");
        let now = Instant::now();
        games.retain(|_, s| now.duration_since(s.touched) < self.max_age);
        if games.len() >= self.max {
            return Err((
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "{} games are under way, the most this server keeps; one is forgotten after {} s untouched",
                    self.max,
                    self.max_age.as_secs()
                ),
            ));
        }
        let id = loop {
            let id = format!("{:016x}", rand::random::<u64>());
            if !games.contains_key(&id) {
                break id;
            }
        };
        let game = Arc::new(Mutex::new(m));
        games.insert(
            id.clone(),
            Slot {
                game: game.clone(),
                touched: now,
            },
        );
        Ok((id, game))
    }

    fn get(&self, id: &str) -> Result<Arc<Mutex<Match>>, Fail> {
        let mut games = self.games.lock().expect("games lock");
        let now = Instant::now();
        match games.get_mut(id) {
            Some(s) if now.duration_since(s.touched) < self.max_age => {
                s.touched = now;
                Ok(s.game.clone())
            }
            Some(_) => {
                games.remove(id);
                Err(unknown(id))
            }
            None => Err(unknown(id)),
        }
    }
}

/// A refusal: its status and text.
type Fail = (StatusCode, String);

fn unknown(id: &str) -> Fail {
    (
        StatusCode::NOT_FOUND,
        format!("no game {id:?} (games are forgotten after a while untouched, and on restart)"),
    )
}

fn refused(e: PlayError) -> Fail {
    match e {
        PlayError::Refused(r) if r.invalid => (StatusCode::BAD_REQUEST, r.text),
        PlayError::Refused(r) => (StatusCode::CONFLICT, r.text),
        PlayError::Tables(e) => (status(&e), e.to_string()),
    }
}

/// The body of `POST /api/games`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewGame {
    fen: String,
    #[serde(default)]
    mode: Option<String>,
    #[serde(default, alias = "color")]
    colour: Option<String>,
    #[serde(default)]
    bankroll: Option<String>,
    #[serde(default)]
    chips: Option<String>,
    #[serde(default)]
    tiebreak: Option<String>,
    #[serde(default)]
    seed: Option<u64>,
}

fn colour(text: Option<&str>, what: &str, default: Color) -> Result<Color, Fail> {
    match text.map(|t| t.trim().to_ascii_lowercase()) {
        None => Ok(default),
        Some(t) if t == "white" || t == "w" => Ok(Color::White),
        Some(t) if t == "black" || t == "b" => Ok(Color::Black),
        Some(t) => Err((
            StatusCode::BAD_REQUEST,
            format!("{what} {t:?}: white or black"),
        )),
    }
}

fn setup(body: NewGame) -> Result<Setup, Fail> {
    let bad = |t: String| (StatusCode::BAD_REQUEST, t);
    let mode = match body.mode.as_deref() {
        None => Mode::Money,
        Some(m) => {
            Mode::parse(m).ok_or_else(|| bad(format!("mode {m:?}: random, money or chips")))?
        }
    };
    let share = match body.bankroll.as_deref() {
        Some(b) if mode == Mode::Money => {
            bidtb::internal::play::game::check_share_length(b)
                .map_err(|why| bad(format!("bankroll: {why}")))?;
            Some(
                bidtb::internal::play::game::parse_share(b)
                    .filter(|x| *x <= num_rational::BigRational::from_integer(1.into()))
                    .ok_or_else(|| {
                        bad(format!(
                            "bankroll {b:?}: your share of the money, a fraction or decimal from 0 to 1"
                        ))
                    })?,
            )
        }
        Some(_) => return Err(bad("bankroll goes with mode money".into())),
        None => None,
    };
    let chips = match body.chips.as_deref() {
        Some(c) if mode == Mode::Chips => Some(
            c.split_once(':')
                .and_then(|(w, b)| Some((w.trim().parse().ok()?, b.trim().parse().ok()?)))
                .ok_or_else(|| bad(format!("chips {c:?}: White's and Black's chips as W:B")))?,
        ),
        Some(_) => return Err(bad("chips go with mode chips".into())),
        None => None,
    };
    if body.tiebreak.is_some() && mode != Mode::Chips {
        return Err(bad("tiebreak goes with mode chips".into()));
    }
    Ok(Setup {
        fen: body.fen,
        mode,
        human: colour(body.colour.as_deref(), "colour", Color::White)?,
        share,
        chips,
        tiebreak: colour(body.tiebreak.as_deref(), "tiebreak", Color::White)?,
        seed: body.seed,
    })
}

fn state(app: &AppState, id: &str, m: &mut Match, advice: bool) -> Response {
    match m.to_json(&app.tb, advice) {
        Ok(mut v) => {
            v["id"] = json!(id);
            Json(v).into_response()
        }
        Err(e) => error(status(&e), e.to_string()),
    }
}

fn body<T>(b: Result<Json<T>, JsonRejection>) -> Result<T, Fail> {
    b.map(|Json(t)| t)
        .map_err(|e| (StatusCode::BAD_REQUEST, e.body_text()))
}

/// `POST /api/games`.
pub async fn create(
    State(app): State<Arc<AppState>>,
    b: Result<Json<NewGame>, JsonRejection>,
) -> Response {
    super::blocking(move || {
        let run = || -> Result<Response, Fail> {
            let setup = setup(body(b)?)?;
            let m = Match::with_ranks(&app.tb, &setup, app.ranks.clone()).map_err(refused)?;
            let (id, game) = app.games.insert(m)?;
            let answer = state(&app, &id, &mut game.lock().expect("game lock"), false);
            Ok((StatusCode::CREATED, answer).into_response())
        };
        run().unwrap_or_else(|(code, text)| error(code, text))
    })
    .await
}

/// The query string of `GET /api/games/{id}`.
#[derive(Deserialize)]
pub struct Read {
    advice: Option<String>,
}

/// `GET /api/games/{id}`.
pub async fn read(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    q: Result<Query<Read>, QueryRejection>,
) -> Response {
    let advice = match q {
        Ok(Query(r)) => matches!(r.advice.as_deref(), Some("1" | "true" | "yes")),
        Err(e) => return error(StatusCode::BAD_REQUEST, e.body_text()),
    };
    super::blocking(move || match app.games.get(&id) {
        Ok(g) => state(&app, &id, &mut g.lock().expect("game lock"), advice),
        Err((code, text)) => error(code, text),
    })
    .await
}

/// The body of a bid.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BidBody {
    bid: serde_json::Value,
}

/// `POST /api/games/{id}/bid`.
pub async fn bid(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    b: Result<Json<BidBody>, JsonRejection>,
) -> Response {
    super::blocking(move || {
        let run = || -> Result<Response, Fail> {
            let g = app.games.get(&id)?;
            let text = match body(b)?.bid {
                serde_json::Value::String(s) => s,
                serde_json::Value::Number(n) => n.to_string(),
                other => {
                    return Err((
                        StatusCode::BAD_REQUEST,
                        format!("bid {other}: a number or a string such as \"1/8\" or \"12*\""),
                    ));
                }
            };
            let mut m = g.lock().expect("game lock");
            m.bid(&app.tb, &text).map_err(refused)?;
            Ok(state(&app, &id, &mut m, false))
        };
        run().unwrap_or_else(|(code, text)| error(code, text))
    })
    .await
}

/// The body of a move.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MoveBody {
    #[serde(default, rename = "move")]
    uci: Option<String>,
    #[serde(default)]
    hand_over: bool,
}

/// `POST /api/games/{id}/move`.
pub async fn play(
    State(app): State<Arc<AppState>>,
    Path(id): Path<String>,
    b: Result<Json<MoveBody>, JsonRejection>,
) -> Response {
    super::blocking(move || {
        let run = || -> Result<Response, Fail> {
            let g = app.games.get(&id)?;
            let mv = body(b)?;
            let mut m = g.lock().expect("game lock");
            match (mv.uci, mv.hand_over) {
                (Some(_), true) | (None, false) => {
                    return Err((
                        StatusCode::BAD_REQUEST,
                        "give either {\"move\": \"h8d8\"} or {\"hand_over\": true}".into(),
                    ));
                }
                (Some(u), false) => m.play(&app.tb, &u),
                (None, true) => m.hand_over(&app.tb),
            }
            .map_err(refused)?;
            Ok(state(&app, &id, &mut m, false))
        };
        run().unwrap_or_else(|(code, text)| error(code, text))
    })
    .await
}
