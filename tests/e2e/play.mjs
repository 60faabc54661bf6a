// Play whole games against the engine through the explorer page in headless Chromium
// (Debian's /usr/bin/chromium, through playwright-core), the way a person would: set the
// position up, press Play, choose the game, then type bids, click moves on the board, hand
// the move over, ask for advice, until a king is captured.
//
// usage: node play.mjs URL OUTDIR [CHIPS]
//   CHIPS (e.g. 9:11): also play a chips game with those holdings (the server must have the
//   chip files of their total).
// Prints one JSON object with what it read; screenshots go to OUTDIR (play.png mid-game,
// play-over.png, play-random.png, play-chips.png). Exits non-zero with a message on the
// first thing that does not hold.
import { chromium } from "playwright-core";
import path from "node:path";

const [url, outDir, chips] = process.argv.slice(2);
const executablePath = process.env.BIDTB_CHROMIUM || "/usr/bin/chromium";
const KPK = "7k/8/8/8/8/8/P7/K7"; // the pawn runs to a8 (value 714139/1048576)
const SPEC = "3k3R/8/3K4/8/8/8/8/8"; // WK d6, WR h8 / BK d8 (docs/src/game.md, reference values: 3/4)
const KK = "k7/8/8/8/8/8/8/7K";
const MAX_ACTIONS = 200;

function check(cond, what) {
  if (!cond) throw new Error("e2e: " + what);
}

const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const read = {};
const started = Date.now();
try {
  const page = await browser.newPage({ viewport: { width: 1180, height: 640 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  // The console reports every 4xx answer as an error; the game's refusals are expected.
  const expected = (t) => /status of (400|409)/.test(t);

  const data = () => page.$eval("#play", (e) => ({ ...e.dataset }));
  const version = async () => Number((await data()).version || 0);
  // Do something that draws a new state, and wait for it.
  async function step(action) {
    const v = await version();
    await action();
    await page.waitForFunction((v) => {
      const e = document.getElementById("play");
      return Number(e.dataset.version) > v && !e.dataset.busy;
    }, v);
    return data();
  }
  async function advice() {
    await step(() => page.click("#play-advice-button"));
    return page.$eval("#play-advice", (e) => ({ text: e.textContent, ...e.dataset }));
  }
  // A move the way a person makes it: click the man, then its square (then the piece, for
  // a promotion).
  async function boardMove(uci) {
    const m = /^([a-p]\d+)([a-p]\d+)([qrbn]?)$/.exec(uci);
    check(m, "a move on the board: " + uci);
    return step(async () => {
      await page.click(`.sq[data-square="${m[1]}"]`);
      check(await page.$(`.sq[data-square="${m[1]}"].sel`), `${m[1]} is picked`);
      check(await page.$(`.sq[data-square="${m[2]}"].target`), `${m[2]} is a target of ${m[1]}`);
      await page.click(`.sq[data-square="${m[2]}"]`);
      if (m[3]) {
        await page.waitForSelector("#play-promo:not([hidden])");
        read.promotion_choices = await page.$$eval("#play-promo button", (l) => l.map((b) => b.dataset.move));
        await page.click(`#play-promo button[data-move="${uci}"]`);
      }
    });
  }
  async function history() {
    return page.$$eval("#play-history tbody tr", (rows) => rows.map((r) => ({
      ...r.dataset, cells: [...r.cells].map((c) => c.textContent),
    })));
  }
  async function startGame(fen, options) {
    await page.fill("#fen", fen);
    await page.click("#load");
    await page.waitForFunction((f) => document.getElementById("fen").value === f &&
      !document.getElementById("result").hidden, fen);
    await page.click("#play-open");
    await page.waitForSelector("#play-setup:not([hidden])");
    check(await page.textContent("#play-setup-fen") === fen, "the setup names the position");
    await page.selectOption("#play-colour", options.colour);
    await page.selectOption("#play-mode", options.mode);
    if (options.bankroll) await page.fill("#play-bankroll", options.bankroll);
    if (options.chips) {
      await page.fill("#play-chips", options.chips);
      await page.selectOption("#play-tiebreak", options.tiebreak);
    }
    await page.fill("#play-seed", String(options.seed));
    await page.click("#play-start");
    await page.waitForSelector("#play:not([hidden])");
    await page.waitForFunction(() => document.body.classList.contains("playing"));
    return data();
  }
  // Follow the page's advice to the end; `choose` may override a decision.
  async function playOut(name, choose) {
    const log = [];
    for (let i = 0; i < MAX_ACTIONS; i++) {
      const d = await data();
      if (d.phase === "over") return log;
      const a = await advice();
      const own = choose ? await choose(d, a) : null;
      if (own) { log.push(own); continue; }
      if (d.phase === "bid") {
        check(a.bid, `${name}: advice has a bid: ${a.text}`);
        await page.fill("#play-bid", a.bid);
        await step(() => page.click("#play-bid-submit"));
        log.push("bid " + a.bid);
      } else if (a.handOver) {
        check(d.phase === "control", `${name}: hand over only after winning the bid`);
        await step(() => page.click("#play-handover"));
        log.push("hand over");
      } else if (a.move) {
        await boardMove(a.move);
        log.push(a.move);
      } else {
        // Chips: the advice to keep the move names none; make the first listed move.
        check(a.keep && d.mode === "chips", `${name}: advice has a move: ${a.text}`);
        const first = await page.getAttribute("#play-moves button", "data-move");
        await boardMove(first);
        log.push(first + " (advice named none)");
      }
    }
    throw new Error(`e2e: ${name}: no capture after ${MAX_ACTIONS} actions`);
  }

  await page.goto(url);
  await page.waitForSelector("body[data-ready]");

  // 1. Money: the person is White with half the money in KPvK (White needs more than
  //    1 − 714139/1048576 ≈ 0.32), follows the advice, and once hands the move over.
  let d = await startGame(KPK, { colour: "white", mode: "money", bankroll: "1/2", seed: 7 });
  check(d.phase === "bid" && d.human === "white" && d.mode === "money", "a money game starts with bids: " + JSON.stringify(d));
  read.money_start = {
    status: await page.textContent("#play-status"),
    white: await page.textContent("#play-white"),
    black: await page.textContent("#play-black"),
    assessment: await page.textContent("#play-assessment"),
    url: new URL(page.url()).search,
  };
  check(await page.isHidden("#fen-form"), "the explorer's controls hide in a game");
  // Refusals: a bid above the holding, a bid that is not a number. The game is unchanged.
  const before = await data();
  await page.fill("#play-bid", "3/4");
  await page.click("#play-bid-submit");
  await page.waitForSelector("#play-error:not([hidden])");
  read.error_above = await page.textContent("#play-error");
  read.error_above_status = await page.getAttribute("#play-error", "data-status");
  await page.fill("#play-bid", "lots");
  await page.click("#play-bid-submit");
  await page.waitForFunction(() => /lots/.test(document.getElementById("play-error").textContent));
  read.error_nan = await page.textContent("#play-error");
  read.error_nan_status = await page.getAttribute("#play-error", "data-status");
  const after = await data();
  read.unchanged_after_errors = after.version === before.version && after.turns === "0" && after.phase === "bid" &&
    await page.textContent("#play-white") === read.money_start.white;

  let handedOver = false, shot = false, reloaded = false, listMove = false;
  read.money_log = await playOut("money", async (d, a) => {
    // The first time the person wins the bid: hand the move over (the engine moves).
    if (d.phase === "control" && !handedOver) {
      handedOver = true;
      await step(() => page.click("#play-handover"));
      return "hand over (own choice)";
    }
    // Mid-game, with this turn's bids shown and the advice on the board: the screenshot;
    // then a reload, which must come back into the same game.
    if (d.phase === "control" && Number(d.turns) >= 4 && !shot) {
      shot = true;
      read.mid_bids = await page.textContent("#play-bids");
      read.mid_history_rows = (await history()).length;
      read.mid_advice = a.text;
      await page.screenshot({ path: path.join(outDir, "play.png"), fullPage: true });
      const id = d.id;
      await page.reload();
      await page.waitForSelector("body[data-ready]");
      const back = await data();
      read.reload_same_game = back.id === id && back.turns === d.turns && back.phase === d.phase;
      // The advice again (the reload forgot it), then a move from the list rather than the board.
      const again = await advice();
      check(again.move, "advice after the reload: " + again.text);
      await step(() => page.click(`#play-moves button[data-move="${again.move}"]`));
      listMove = true;
      return again.move + " (from the list)";
    }
    return null;
  });
  d = await data();
  read.money = {
    winner: d.winner, turns: Number(d.turns), phase: d.phase,
    status: await page.textContent("#play-status"),
    result: await page.textContent("#play-result-text"),
    assessment: await page.textContent("#play-assessment"),
    history: await history(),
    black_kings_on_board: await page.$$eval('.sq .piece[data-piece="k"]', (l) => l.length),
    result_visible: await page.isVisible("#play-result"),
    bid_form_hidden: await page.isHidden("#play-bid-form"),
  };
  read.handed_over = handedOver;
  read.list_move = listMove;
  check(shot, "a mid-game screenshot was taken");
  await page.screenshot({ path: path.join(outDir, "play-over.png"), fullPage: true });

  // 2. Random turn: the person is Black in bare kings (value 1/2); the coin picks the mover.
  await page.click("#play-back");
  await page.waitForFunction(() => !document.body.classList.contains("playing") &&
    !document.getElementById("result").hidden);
  read.back_value = await page.textContent("#value");
  d = await startGame(KK, { colour: "black", mode: "random", seed: 8 });
  read.random_start = { phase: d.phase, coin: await page.getAttribute("#play-coin", "data-coin"),
    bid_form_hidden: await page.isHidden("#play-bid-form") };
  const coins = [];
  read.random_log = await playOut("random", async (d) => {
    coins.push(await page.getAttribute("#play-coin", "data-coin"));
    return null;
  });
  d = await data();
  read.random = { winner: d.winner, turns: Number(d.turns), history: await history(), coins,
    result: await page.textContent("#play-result-text") };
  await page.screenshot({ path: path.join(outDir, "play-random.png"), fullPage: true });

  // 3. Chips: the person is White with 9 chips and the marker against 11 in bare kings
  //    (the engine wins), after a refusal.
  if (chips) {
    await page.click("#play-again");
    await page.waitForSelector("#play-setup:not([hidden])");
    await page.click("#play-cancel");
    d = await startGame(KK, { colour: "white", mode: "chips", chips, tiebreak: "white", seed: 5 });
    check(d.phase === "bid" && d.mode === "chips", "a chips game starts with bids: " + JSON.stringify(d));
    read.chips_start = { white: await page.textContent("#play-white"), black: await page.textContent("#play-black"),
      assessment: await page.textContent("#play-assessment") };
    await page.fill("#play-bid", "15");
    await page.click("#play-bid-submit");
    await page.waitForSelector("#play-error:not([hidden])");
    read.chips_error = await page.textContent("#play-error");
    read.chips_log = await playOut("chips");
    d = await data();
    read.chips = { winner: d.winner, turns: Number(d.turns), history: await history(),
      result: await page.textContent("#play-result-text") };
    await page.screenshot({ path: path.join(outDir, "play-chips.png"), fullPage: true });
  }

  // 4. Back in the explorer, it still works: the value, placing a man by clicking.
  await page.click("#play-back");
  await page.waitForFunction(() => !document.body.classList.contains("playing") &&
    !document.getElementById("result").hidden);
  await page.fill("#fen", SPEC);
  await page.click("#load");
  await page.waitForFunction(() => document.getElementById("value").textContent === "3/4");
  await page.click('#palette button[data-piece="x"]');
  await page.click('.sq[data-square="h8"]');
  await page.waitForFunction(() => document.getElementById("class").textContent.endsWith("KvK"));
  read.explorer_after = { value: await page.textContent("#value"), fen: await page.inputValue("#fen"),
    url: new URL(page.url()).search };
  read.page_errors = errors.filter((e) => !expected(e));
} finally {
  await browser.close();
}
read.seconds = (Date.now() - started) / 1000;
console.log(JSON.stringify(read));
