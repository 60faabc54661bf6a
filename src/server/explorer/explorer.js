// The bidtb explorer: set up a position by clicking (kings and up to two more men of
// either colour, an en-passant square where pawns of both sides allow one), read its exact
// value and both sides' moves from /api/query, play a move by clicking it, and colour the
// board by /api/map. Play: a game against the engine from the position on the board
// (/api/games, docs/src/guide/play.md): bids, moves on the board, hand-overs, advice, the history.
"use strict";

const GLYPHS = { K: "♔", Q: "♕", R: "♖", B: "♗", N: "♘", P: "♙",
                 k: "♚", q: "♛", r: "♜", b: "♝", n: "♞", p: "♟" };
const PALETTE = ["K", "Q", "R", "B", "N", "P", "k", "q", "r", "b", "n", "p", "x"];
// The colour scale of `bidtb map --svg` (src/svg.rs): blue 0, near-white 1/2, red 1.
const STOPS = [[0, [33, 102, 172]], [0.25, [103, 169, 207]], [0.5, [247, 247, 247]],
               [0.75, [239, 138, 98]], [1, [178, 24, 43]]];

// Men besides the kings that the palette places (the tables go up to four men); a third
// one replaces the one placed first.
const MAX_OTHERS = 2;

const state = { files: 8, ranks: 8, pieces: new Map(), ep: "", selected: null, probe: null, map: null };
const $ = (id) => document.getElementById(id);

function colour(v) {
  v = Math.min(1, Math.max(0, v));
  let i = 0;
  while (i < STOPS.length - 2 && v > STOPS[i + 1][0]) i++;
  const [a, ca] = STOPS[i], [b, cb] = STOPS[i + 1];
  const t = (v - a) / (b - a);
  return "rgb(" + [0, 1, 2].map((k) => Math.round(ca[k] + t * (cb[k] - ca[k]))).join(",") + ")";
}

function squareName(file, rank) { return String.fromCharCode(97 + file) + (rank + 1); }

// Read a FEN leniently (the server is the judge of validity): the placement, and the
// en-passant square of the fourth field if any.
function parseFen(text) {
  const fields = text.trim().split(/\s+/);
  const ep = fields[3] && fields[3] !== "-" ? fields[3] : "";
  const rows = fields[0].split("/");
  const pieces = new Map();
  let files = 0;
  rows.forEach((row, i) => {
    const rank = rows.length - 1 - i;
    let file = 0;
    for (const m of row.matchAll(/(\d+)|([a-zA-Z])/g)) {
      if (m[1]) file += parseInt(m[1], 10);
      else { pieces.set(squareName(file, rank), m[2]); file += 1; }
    }
    files = Math.max(files, file);
  });
  return { files: Math.min(Math.max(files, 2), 16), ranks: Math.min(Math.max(rows.length, 2), 16), pieces, ep };
}

// The full FEN: the placement, and the en-passant square where one is set.
function fullFen() {
  return state.ep ? `${toFen()} - - ${state.ep}` : toFen();
}

function toFen() {
  const rows = [];
  for (let rank = state.ranks - 1; rank >= 0; rank--) {
    let row = "", empty = 0;
    for (let file = 0; file < state.files; file++) {
      const p = state.pieces.get(squareName(file, rank));
      if (p) { if (empty) row += empty; empty = 0; row += p; } else empty++;
    }
    if (empty) row += empty;
    rows.push(row);
  }
  return rows.join("/");
}

// n/d to `digits` decimals, exactly (BigInt long division), marked with … when cut.
function decimal(fraction, digits) {
  const [n, d] = fraction.split("/").map((s) => BigInt(s));
  let out = (n / d).toString() + ".";
  let r = n % d;
  for (let i = 0; i < digits && r !== 0n; i++) { r *= 10n; out += (r / d).toString(); r %= d; }
  if (out.endsWith(".")) out += "0";
  return r === 0n ? out : out + "…";
}

function renderPalette() {
  const pal = $("palette");
  for (const p of PALETTE) {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.piece = p;
    b.textContent = p === "x" ? "⌫" : GLYPHS[p];
    b.title = p === "x" ? "remove a piece" : (p === p.toUpperCase() ? "white " : "black ") +
      { k: "king", q: "queen", r: "rook", b: "bishop", n: "knight", p: "pawn" }[p.toLowerCase()];
    b.addEventListener("click", () => {
      state.selected = state.selected === p ? null : p;
      for (const o of pal.querySelectorAll("button")) o.classList.toggle("selected", o.dataset.piece === state.selected);
    });
    pal.appendChild(b);
  }
}

function renderBoard() {
  const board = $("board");
  board.style.gridTemplateColumns = `repeat(${state.files}, 52px)`;
  board.replaceChildren();
  const heat = !play.game && $("heatmap").checked && state.map && state.map.fen === fullFen() ? state.map : null;
  // In a game: the last move, the selected man and its targets, the advised move.
  const marks = play.game ? playMarks() : null;
  for (let rank = state.ranks - 1; rank >= 0; rank--) {
    for (let file = 0; file < state.files; file++) {
      const name = squareName(file, rank);
      const sq = document.createElement("div");
      sq.className = "sq " + ((file + rank) % 2 ? "light" : "dark");
      sq.dataset.square = name;
      const coord = document.createElement("span");
      coord.className = "coord";
      coord.textContent = name;
      sq.appendChild(coord);
      const p = state.pieces.get(name);
      if (p) {
        const s = document.createElement("span");
        s.className = "piece " + (p === p.toUpperCase() ? "white" : "black");
        s.dataset.piece = p;
        s.textContent = GLYPHS[p] || p;
        sq.appendChild(s);
      }
      if (heat) {
        const row = heat.rows[state.ranks - 1 - rank][file];
        const approx = heat.approx[state.ranks - 1 - rank][file];
        if (row !== null) {
          sq.style.background = colour(approx);
          sq.dataset.value = row;
          sq.title = `black king on ${name}: ${row} ≈ ${decimal(row, 12)}`;
          const t = document.createElement("span");
          t.className = "heat";
          t.textContent = approx.toFixed(2);
          t.style.color = approx > 0.2 && approx < 0.8 ? "#222" : "#fff";
          sq.appendChild(t);
        }
      }
      if (marks) for (const c of marks.get(name) || []) sq.classList.add(c);
      sq.addEventListener("click", () => (play.game ? playClick(name) : place(name)));
      board.appendChild(sq);
    }
  }
}

function place(name) {
  const p = state.selected;
  if (!p) return;
  state.pieces.delete(name);
  if (p !== "x") {
    const king = (q) => q === "K" || q === "k";
    if (king(p)) {
      // One king of each colour.
      for (const [sq, q] of [...state.pieces]) if (q === p) state.pieces.delete(sq);
    } else {
      const others = [...state.pieces].filter(([, q]) => !king(q));
      if (others.length >= MAX_OTHERS) state.pieces.delete(others[0][0]);
    }
    state.pieces.set(name, p);
  }
  // A changed placement has no pending en-passant right.
  state.ep = "";
  show(fullFen());
}

function moveList(id, moves) {
  const ol = $(id);
  ol.replaceChildren();
  const best = moves.length ? moves[0].value : null;
  for (const m of moves) {
    const li = document.createElement("li");
    li.dataset.move = m.move;
    li.dataset.value = m.value;
    if (m.fen) li.dataset.fen = m.fen;
    if (m.value === best) li.classList.add("best");
    const level = m.level === null ? "unreached" : m.level;
    li.title = `${m.move}: ${m.value} ≈ ${decimal(m.value, 12)} (level ${level})` +
      (m.fen ? "" : " — captures the king");
    li.innerHTML = "";
    li.append((m.value === best ? "★ " : "") + m.move.padEnd(6) + " ");
    const v = document.createElement("span");
    v.className = "val";
    v.textContent = m.value;
    li.appendChild(v);
    li.addEventListener("click", () => {
      if (m.fen) show(m.fen);
      else showError(`${m.move} captures the king: ${m.value === "1/1" ? "White" : "Black"} wins`);
    });
    ol.appendChild(li);
  }
  if (!moves.length) {
    const li = document.createElement("li");
    li.textContent = "no move (the position stays)";
    ol.appendChild(li);
  }
}

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = false;
}

async function getJson(path) {
  const r = await fetch(path);
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

function showProbe(p) {
  $("class").textContent = `${p.board} ${p.class}`;
  $("value").textContent = p.value;
  $("decimal").textContent = decimal(p.value, 20);
  // Tables keep β where it lies above α (play that never ends counts for White there, for
  // Black in α); the value shown is α.
  $("beta").hidden = !p.beta;
  $("beta").textContent = p.beta ? ` (that is α; β = ${p.beta} ≈ ${decimal(p.beta, 20)})` : "";
  const best = (m) => m.length ? `${m[0].move} → ${m[0].value}` : "no move";
  $("best-white").textContent = best(p.white);
  $("best-black").textContent = best(p.black);
  $("bid").textContent = p.bid;
  $("zugzwang").replaceChildren(p.zugzwang ? "yes: each player would rather the other moved" : "no");
  if (p.zugzwang) {
    const b = document.createElement("span");
    b.className = "badge";
    b.textContent = "zugzwang";
    $("zugzwang").appendChild(b);
  }
  const lv = (l) => l === null ? "unreached" : l;
  $("levels").textContent = `T ${lv(p.level_white)}, T′ ${lv(p.level_black)}`;
  $("certified").textContent = p.certified ? "yes (α = s = β proved)" : "NO: values not proved exact";
  moveList("white-moves", p.white);
  moveList("black-moves", p.black);
  // Whole chips: who wins with the holdings set, the thresholds and the bid to make.
  $("chips-row").hidden = !p.chips;
  if (p.chips) {
    const c = p.chips;
    const advice = c.advice
      .map((a) => `${a.side} bids ${a.bid} and, winning the bid, ${a.then}`)
      .join("; ");
    $("chips-result").textContent =
      `${c.outcome} (White ${c.white.text}, Black ${c.black.text} of ${c.total}; ` +
      `White wins from ${c.win}, does not lose from ${c.not_lose})` +
      (advice ? `: ${advice}` : "");
  }
  $("result").hidden = false;
}

// The query string's chip part, from the chips field (empty: none).
function chipQuery() {
  const chips = $("chips").value.trim();
  if (!chips) return "";
  return "&chips=" + encodeURIComponent(chips) + "&tiebreak=" + $("tiebreak").value;
}

let generation = 0;
async function show(fen) {
  const g = ++generation;
  const parsed = parseFen(fen);
  Object.assign(state, parsed);
  $("fen").value = fullFen();
  $("ep").value = state.ep;
  $("play-setup-fen").textContent = fullFen();
  history.replaceState(null, "", "?fen=" + encodeURIComponent(fullFen()));
  $("error").hidden = true;
  renderBoard();
  try {
    const p = await getJson("/api/query?fen=" + encodeURIComponent(fullFen()) + chipQuery());
    if (g !== generation) return;
    state.probe = p;
    showProbe(p);
  } catch (e) {
    if (g !== generation) return;
    state.probe = null;
    $("result").hidden = true;
    showError(e.message);
  }
  await refreshHeat(g);
}

async function refreshHeat(g) {
  $("legend").hidden = !$("heatmap").checked;
  if ($("heatmap").checked && state.probe) {
    try {
      const m = await getJson("/api/map?fen=" + encodeURIComponent(fullFen()));
      if (g !== generation) return;
      state.map = m;
    } catch (e) {
      if (g !== generation) return;
      state.map = null;
      showError(e.message);
    }
  }
  renderBoard();
  document.body.dataset.ready = String(g);
}

async function start() {
  renderPalette();
  setupPlay();
  $("fen-form").addEventListener("submit", (e) => { e.preventDefault(); show($("fen").value); });
  $("ep-form").addEventListener("submit", (e) => {
    e.preventDefault();
    state.ep = $("ep").value.trim() === "-" ? "" : $("ep").value.trim();
    show(fullFen());
  });
  $("chips-form").addEventListener("submit", (e) => { e.preventDefault(); show(fullFen()); });
  $("heatmap").addEventListener("change", () => refreshHeat(generation));
  // ?game=ID: back into a game under way (after a reload).
  const game = new URLSearchParams(location.search).get("game");
  let lost = null;
  if (game) {
    const r = await gameApi("/api/games/" + encodeURIComponent(game));
    if (r.ok) {
      enterPlay(r.state);
      document.body.dataset.ready = String(generation);
      return;
    }
    lost = r.error;
  }
  let fen = new URLSearchParams(location.search).get("fen");
  if (!fen) {
    fen = "3k3R/8/3K4/8/8/8/8/8";
    try {
      const { boards } = await getJson("/api/boards");
      if (boards.length && !boards.includes("8x8")) {
        const [f, r] = boards[0].split("x").map(Number);
        const rows = Array.from({ length: r }, () => String(f));
        rows[0] = "k" + (f > 1 ? f - 1 : "");
        rows[r - 1] = (f > 1 ? f - 1 : "") + "K";
        fen = rows.join("/");
      }
    } catch (e) { /* keep the 8x8 default */ }
  }
  await show(fen);
  if (lost) showError(lost);
}

// ---- Play: a game against the engine ----
//
// The server keeps the game (POST /api/games, GET /api/games/ID, POST …/bid, POST …/move);
// every answer is the whole state, and the engine has acted by then: the person is to act,
// or the game is over. The page draws the state: the board, the bankrolls, the assessment,
// the bids, the person's moves, the history.

const play = {
  game: null,      // the last state from the server
  setup: null,     // the body that started it (for "New game")
  sel: null,       // the square of the man picked to move
  promo: null,     // moves waiting for a promotion choice
  advice: null,    // the advice for this state, once asked
  busy: false,     // a request under way
  version: 0,      // states drawn (for the test)
};

const title = (c) => (c === "white" ? "White" : "Black");
const PROMO = { q: "Q", r: "R", b: "B", n: "N" };

// A move in coordinate notation: from, to, promotion piece.
function parseUci(uci) {
  const m = /^([a-p])(\d{1,2})([a-p])(\d{1,2})([qrbn]?)$/.exec(uci || "");
  return m ? { from: m[1] + m[2], to: m[3] + m[4], promo: m[5] } : null;
}

// A request to the games API: {ok, state} or {ok: false, status, error}.
async function gameApi(path, body) {
  const init = body === undefined ? {} : {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  };
  try {
    const r = await fetch(path, init);
    const data = await r.json();
    return r.ok ? { ok: true, state: data } : { ok: false, status: r.status, error: data.error || r.statusText };
  } catch (e) {
    return { ok: false, status: 0, error: "no answer from the server: " + e.message };
  }
}

// A share of the money or a chip holding, as a span: short decimals shown, the exact
// fraction in the title (fractions run to hundreds of digits). `compact`: the decimals
// alone (the history's columns).
function amount(text, mode, compact) {
  const span = document.createElement("span");
  span.className = "share";
  span.dataset.exact = text;
  if (mode === "money" && /^\d+\/\d+$/.test(text)) {
    const d = decimal(text, 6);
    const exact = !d.endsWith("…");
    span.textContent = compact ? d.replace("…", "")
      : text.length <= 13 ? `${text} ${exact ? "=" : "≈"} ${d}` : `≈ ${d}`;
    span.title = text;
  } else {
    span.textContent = text;
    if (mode === "chips") span.title = text.endsWith("*") ? `${text.slice(0, -1)} chips and the tie-break marker` : `${text} chips`;
  }
  return span;
}

function setupPlay() {
  $("play-open").addEventListener("click", () => openSetup());
  $("play-mode").addEventListener("change", syncSetup);
  $("play-cancel").addEventListener("click", () => { $("play-setup").hidden = true; });
  $("play-setup").addEventListener("submit", (e) => { e.preventDefault(); startGame(); });
  $("play-bid-form").addEventListener("submit", (e) => { e.preventDefault(); submitBid(); });
  $("play-handover").addEventListener("click", () => act("move", { hand_over: true }));
  $("play-advice-button").addEventListener("click", () => getAdvice());
  $("play-leave").addEventListener("click", () => leavePlay());
  $("play-back").addEventListener("click", () => leavePlay());
  $("play-again").addEventListener("click", () => {
    const fen = play.setup ? play.setup.fen : play.game.fen;
    leavePlay(fen).then(() => openSetup());
  });
}

function openSetup() {
  $("play-setup-fen").textContent = fullFen();
  // The explorer's chips field, where set, is the default holding.
  const chips = $("chips").value.trim();
  if (chips) {
    $("play-chips").value = chips;
    $("play-tiebreak").value = $("tiebreak").value;
  }
  $("play-setup-error").hidden = true;
  syncSetup();
  $("play-setup").hidden = false;
  $("play-start").focus();
}

function syncSetup() {
  const mode = $("play-mode").value;
  $("play-money-row").hidden = mode !== "money";
  $("play-chips-row").hidden = mode !== "chips";
}

function setupError(text) {
  $("play-setup-error").textContent = text;
  $("play-setup-error").hidden = false;
}

async function startGame() {
  const mode = $("play-mode").value;
  const body = { fen: fullFen(), mode, colour: $("play-colour").value };
  if (mode === "money") body.bankroll = $("play-bankroll").value.trim() || "1/2";
  if (mode === "chips") {
    body.chips = $("play-chips").value.trim() || "100:100";
    body.tiebreak = $("play-tiebreak").value;
  }
  const seed = $("play-seed").value.trim();
  if (seed) {
    if (!/^\d{1,15}$/.test(seed)) { setupError(`seed ${seed}: a whole number (up to 15 digits)`); return; }
    body.seed = Number(seed);
  }
  $("play-start").disabled = true;
  const r = await gameApi("/api/games", body);
  $("play-start").disabled = false;
  if (!r.ok) { setupError(r.error); return; }
  play.setup = body;
  enterPlay(r.state);
}

function enterPlay(s) {
  generation++; // an explorer query still under way draws nothing
  document.body.classList.add("playing");
  $("play-setup").hidden = true;
  $("play").hidden = false;
  history.replaceState(null, "", "?game=" + encodeURIComponent(s.id));
  renderGame(s);
  $("play-bid").value = "";
}

// Back to the explorer, at `fen` (the game's position by default).
async function leavePlay(fen) {
  const at = fen || play.game.fen;
  play.game = null;
  play.sel = play.promo = play.advice = null;
  document.body.classList.remove("playing");
  $("play").hidden = true;
  await show(at);
}

function playError(text, status) {
  $("play-error").textContent = text;
  $("play-error").dataset.status = String(status);
  $("play-error").hidden = false;
}

function setBusy(busy) {
  play.busy = busy;
  $("play").dataset.busy = busy ? "1" : "";
  for (const b of $("play").querySelectorAll("button:not(#play-leave)")) b.disabled = busy;
}

// An input of the person: a bid, a move, a hand-over.
async function act(what, body) {
  if (!play.game || play.busy) return;
  setBusy(true);
  const r = await gameApi(`/api/games/${encodeURIComponent(play.game.id)}/${what}`, body);
  setBusy(false);
  if (!r.ok) {
    // The game is unchanged (400: a bad input; 409: out of turn or over).
    playError(r.error, r.status);
    return;
  }
  if (what === "bid") $("play-bid").value = "";
  renderGame(r.state);
}

function submitBid() {
  const text = $("play-bid").value.trim();
  if (!text) { playError("type a bid first", 0); return; }
  act("bid", { bid: text });
}

function sendMove(uci) { act("move", { move: uci }); }

async function getAdvice() {
  if (!play.game || play.busy) return;
  setBusy(true);
  const r = await gameApi(`/api/games/${encodeURIComponent(play.game.id)}?advice=1`);
  setBusy(false);
  if (!r.ok) { playError(r.error, r.status); return; }
  renderGame(r.state);
  const a = r.state.advice;
  const el = $("play-advice");
  if (!a) { el.textContent = "the game is over"; return; }
  play.advice = a;
  // With chips the advice to keep the move names no move ("move " alone): the engine picks
  // its chip move only when it moves. Say so rather than show an empty move.
  const keep = /\bmove\s*$/.test(a.text);
  el.textContent = keep ? a.text.replace(/\bmove\s*$/, "keep the move (the advice names no move)") : a.text;
  // For the phase at hand: the bid to make, the move (or the hand-over) advised. While
  // bidding, the move is the one for after winning the bid.
  const m = /move (\S+)$/.exec(a.text);
  el.dataset.bid = a.bid || "";
  el.dataset.move = m ? m[1] : "";
  el.dataset.keep = keep ? "1" : "";
  el.dataset.handOver = /let the opponent move$/.test(a.text) ? "1" : "";
  for (const b of $("play-moves").querySelectorAll("button")) b.classList.toggle("advised", b.dataset.move === el.dataset.move);
  renderBoard();
}

// The classes of the squares in a game: the last move, the picked man and where it can go,
// the advised move, the men that can move.
function playMarks() {
  const s = play.game;
  const marks = new Map();
  const add = (sq, c) => { if (!marks.has(sq)) marks.set(sq, []); marks.get(sq).push(c); };
  const last = s.history.length ? parseUci(s.history[s.history.length - 1].move) : null;
  if (last) { add(last.from, "last"); add(last.to, "last"); }
  for (const u of s.moves) {
    const m = parseUci(u);
    if (!m) continue;
    add(m.from, "movable");
    if (play.sel === m.from) add(m.to, "target");
  }
  if (play.sel) add(play.sel, "sel");
  const advised = play.advice && s.phase !== "bid" ? parseUci($("play-advice").dataset.move) : null;
  if (advised) { add(advised.from, "advised"); add(advised.to, "advised"); }
  return marks;
}

// A click on the board in a game: pick a man of the person's, then its target.
function playClick(name) {
  const s = play.game;
  if (!s || play.busy || !s.moves.length) return;
  const moves = s.moves.map((u) => [u, parseUci(u)]).filter(([, m]) => m);
  if (play.sel) {
    const hits = moves.filter(([, m]) => m.from === play.sel && m.to === name).map(([u]) => u);
    if (hits.length === 1) { sendMove(hits[0]); return; }
    if (hits.length > 1) { showPromo(hits); return; }
  }
  play.sel = play.sel !== name && moves.some(([, m]) => m.from === name) ? name : null;
  play.promo = null;
  $("play-promo").hidden = true;
  renderBoard();
}

// A pawn reaching its last rank: one button per piece.
function showPromo(list) {
  const box = $("play-promo");
  box.replaceChildren();
  const white = play.game.human === "white";
  for (const u of list) {
    const p = parseUci(u).promo;
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.move = u;
    b.title = u;
    b.textContent = GLYPHS[white ? PROMO[p] : p] || u;
    b.addEventListener("click", () => sendMove(u));
    box.appendChild(b);
  }
  box.hidden = false;
}

// The board after a king capture (the state's FEN is the position before it).
function capture(pieces, uci) {
  const m = parseUci(uci);
  if (!m || !pieces.has(m.from)) return;
  const p = pieces.get(m.from);
  pieces.delete(m.from);
  const white = p === p.toUpperCase();
  pieces.set(m.to, m.promo ? (white ? m.promo.toUpperCase() : m.promo) : p);
}

function renderGame(s) {
  play.game = s;
  play.version += 1;
  play.sel = play.promo = play.advice = null;
  const you = (c) => (c === s.human ? " (you)" : " (engine)");
  const turns = s.history;
  const last = turns.length ? turns[turns.length - 1] : null;

  // The board.
  const parsed = parseFen(s.fen);
  if (s.phase === "over" && last && last.fen === null) capture(parsed.pieces, last.move);
  Object.assign(state, parsed, { probe: null, map: null });
  renderBoard();

  const modeName = { random: "random turn", money: "money", chips: "chips" }[s.mode];
  $("play-title").textContent = `You play ${title(s.human)} against the engine: ${modeName}`;

  // Bankrolls.
  for (const c of ["white", "black"]) {
    const th = $(`play-${c}-label`);
    th.replaceChildren(title(c));
    const who = document.createElement("span");
    who.className = "who";
    who.textContent = you(c);
    th.appendChild(who);
    const td = $(`play-${c}`);
    td.replaceChildren();
    if (s.mode === "random") td.textContent = "no money: the coin decides";
    else {
      td.appendChild(amount(s.purse[c], s.mode));
      if (s.mode === "chips") td.append(` of ${s.purse.total}`);
    }
  }
  // The assessment, without a margin's exact fraction where it is long (kept in the title).
  const judged = s.assessment && s.assessment.text ? s.assessment.text : "";
  $("play-assessment").textContent = judged.replace(/ \((\d+\/\d+)\)/g, (all, f) => (f.length > 15 ? "" : all));
  $("play-assessment").title = judged;

  // The coin (random turn; with money, equal bids).
  const coin = $("play-coin");
  coin.hidden = !s.coin;
  coin.replaceChildren();
  if (s.coin) {
    coin.append(s.mode === "random" ? "The coin picked " : "Equal bids: the coin gave the bid to ");
    const b = document.createElement("strong");
    b.textContent = title(s.coin) + you(s.coin);
    coin.appendChild(b);
  }
  coin.dataset.coin = s.coin || "";

  // The bids: this turn's once both are in, else the last turn's.
  const bidsEl = $("play-bids");
  const shown = s.bids ? { bids: s.bids, control: s.to_act && s.phase === "control" ? s.to_act : null, now: true }
    : last && last.bids ? { bids: last.bids, control: last.control, now: false } : null;
  bidsEl.hidden = !shown;
  bidsEl.replaceChildren();
  if (shown) {
    const mine = shown.bids[s.human], theirs = shown.bids[s.engine];
    bidsEl.dataset.you = mine;
    bidsEl.dataset.engine = theirs;
    bidsEl.append(shown.now ? "This turn: you bid " : "Last turn: you bid ");
    bidsEl.appendChild(amount(mine, s.mode));
    bidsEl.append(", the engine bid ");
    bidsEl.appendChild(amount(theirs, s.mode));
    let control = shown.control;
    if (!control && shown.now && s.phase === "move") control = s.engine; // it won and handed over
    if (control) bidsEl.append(control === s.human ? ": you won the bid." : ": the engine won the bid.");
  } else {
    delete bidsEl.dataset.you;
    delete bidsEl.dataset.engine;
  }

  // What the person does now.
  const over = s.phase === "over";
  let status;
  if (over) status = `Game over: ${title(s.winner)} captured the king.`;
  else if (s.phase === "bid") status = `Your bid: you hold ${s.mode === "money" ? amount(s.purse[s.human], "money").textContent : s.purse[s.human]}.`;
  else if (s.phase === "control") status = "You won the bid: make a move (click it on the board or below), or hand the move over.";
  else if (s.mode === "random") status = "The coin picked you: your move.";
  else status = "The engine won the bid and handed you the move: your move.";
  $("play-status").textContent = status;

  $("play-error").hidden = true;
  $("play-bid-form").hidden = s.phase !== "bid";
  $("play-bid").placeholder = s.mode === "chips" ? "e.g. 12 or 12*" : "e.g. 1/8 or 0.125";
  $("play-bid-hint").textContent = s.mode === "chips" ? "whole chips; add * to bid the marker too" : "a share of the money, fraction or decimal";
  $("play-control").hidden = !s.may_hand_over;
  $("play-promo").hidden = true;
  const list = $("play-moves");
  list.replaceChildren();
  for (const u of s.moves) {
    const b = document.createElement("button");
    b.type = "button";
    b.dataset.move = u;
    b.textContent = u === "-" ? "- (no move: the position stays)" : u;
    b.addEventListener("click", () => sendMove(u));
    list.appendChild(b);
  }
  list.hidden = !s.moves.length;
  const advice = $("play-advice");
  advice.textContent = "";
  for (const k of ["bid", "move", "keep", "handOver"]) delete advice.dataset[k];
  $("play-advice-button").hidden = over;

  // The result.
  $("play-result").hidden = !over;
  if (over) {
    const n = turns.length;
    $("play-result-text").textContent = (s.winner === s.human ? "You win: " : "The engine wins: ") +
      `${title(s.winner)} captured the king with ${last.move} after ${n} turn${n === 1 ? "" : "s"}.`;
  }

  renderTurns(s);
  const el = $("play");
  Object.assign(el.dataset, {
    phase: s.phase, version: String(play.version), turns: String(turns.length),
    mode: s.mode, human: s.human, winner: s.winner || "", id: s.id,
  });
}

// The history: one row per turn.
function renderTurns(s) {
  const table = $("play-history");
  const head = s.mode === "random" ? ["#", "coin", "move"] : ["#", "White bids", "Black bids", "move", "White after", "Black after"];
  const tr = document.createElement("tr");
  for (const h of head) { const th = document.createElement("th"); th.textContent = h; tr.appendChild(th); }
  table.tHead.replaceChildren(tr);
  $("play-history-hint").hidden = s.mode === "random";
  const body = table.tBodies[0];
  body.replaceChildren();
  s.history.forEach((t, i) => {
    const row = document.createElement("tr");
    row.dataset.mover = t.mover;
    row.dataset.move = t.move;
    if (t.mover === s.human) row.classList.add("mine");
    const cell = (content, cls) => {
      const td = document.createElement("td");
      if (cls) td.className = cls;
      if (content instanceof Node) td.appendChild(content); else td.textContent = content;
      row.appendChild(td);
      return td;
    };
    cell(String(i + 1), "num");
    let mv = `${title(t.mover)} ${t.move}${t.fen === null ? " takes the king" : ""}`;
    if (s.mode === "random") {
      cell(t.coin ? title(t.coin) : "");
      cell(mv, "mv");
    } else {
      for (const c of ["white", "black"]) {
        const td = cell(t.bids ? amount(t.bids[c], s.mode, true) : "", "num");
        if (t.control === c) td.classList.add("won");
      }
      if (t.bids) { row.dataset.whiteBid = t.bids.white; row.dataset.blackBid = t.bids.black; }
      if (t.control) row.dataset.control = t.control;
      if (t.handed_over) mv = `${title(t.control)} hands over; ${mv}`;
      if (t.coin) mv += " (equal bids: coin)";
      cell(mv, "mv");
      for (const c of ["white", "black"]) cell(amount(t.purse[c], s.mode, true), "num");
    }
    body.appendChild(row);
  });
  const wrap = table.parentElement;
  wrap.scrollTop = wrap.scrollHeight;
}

start();
