// The bidtb explorer: set up a position by clicking (kings and up to two more men of
// either colour, an en-passant square where pawns of both sides allow one), read its exact
// value and both sides' moves from /api/query, play a move by clicking it, and colour the
// board by /api/map.
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
  const heat = $("heatmap").checked && state.map && state.map.fen === fullFen() ? state.map : null;
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
      sq.addEventListener("click", () => place(name));
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
  $("fen-form").addEventListener("submit", (e) => { e.preventDefault(); show($("fen").value); });
  $("ep-form").addEventListener("submit", (e) => {
    e.preventDefault();
    state.ep = $("ep").value.trim() === "-" ? "" : $("ep").value.trim();
    show(fullFen());
  });
  $("chips-form").addEventListener("submit", (e) => { e.preventDefault(); show(fullFen()); });
  $("heatmap").addEventListener("change", () => refreshHeat(generation));
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
}

start();
