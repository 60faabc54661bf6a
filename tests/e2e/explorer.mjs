// Drive the explorer page in headless Chromium (Debian's /usr/bin/chromium, through
// playwright-core) and open the SVGs of `bidtb map` and `bidtb plot`.
//
// usage: node explorer.mjs URL OUTDIR MAP.svg PLOT.svg ATLAS-GRID.svg ATLAS-COST.svg
// Prints one JSON object with what it read; screenshots go to OUTDIR. Exits non-zero with a
// message on the first thing that does not hold.
import { chromium } from "playwright-core";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [url, outDir, mapSvg, plotSvg, gridSvg, costSvg] = process.argv.slice(2);
const executablePath = process.env.BIDTB_CHROMIUM || "/usr/bin/chromium";
const FEN = "3k3R/8/3K4/8/8/8/8/8"; // WK d6, WR h8 / BK d8 (docs/src/game.md, reference values: 3/4)

function check(cond, what) {
  if (!cond) throw new Error("e2e: " + what);
}

const browser = await chromium.launch({
  executablePath,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const read = {};
try {
  const page = await browser.newPage({ viewport: { width: 1200, height: 820 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => { if (m.type() === "error") errors.push(m.text()); });
  await page.goto(url);
  await page.waitForSelector("body[data-ready]");

  // Enter the FEN and read the value and the best moves.
  await page.fill("#fen", FEN);
  await page.click("#load");
  await page.waitForFunction(() => document.getElementById("value").textContent === "3/4");
  read.value = await page.textContent("#value");
  read.decimal = await page.textContent("#decimal");
  read.best_white = await page.textContent("#best-white");
  read.best_black = await page.textContent("#best-black");
  read.bid = await page.textContent("#bid");
  read.white_moves = await page.$$eval("#white-moves li", (l) => l.map((e) => e.dataset.move));
  read.best_marked = await page.$$eval("#white-moves li.best", (l) => l.map((e) => e.dataset.move));
  check(read.best_white.startsWith("h8d8"), "White's best move is h8d8: " + read.best_white);
  await page.screenshot({ path: path.join(outDir, "explorer.png"), fullPage: true });

  // Click a Black move: the page plays it.
  await page.click('#black-moves li[data-move="d8c7"]');
  await page.waitForFunction(() => document.getElementById("fen").value === "7R/2k5/3K4/8/8/8/8/8");
  await page.waitForFunction(() => document.getElementById("value").textContent === "1/2");
  read.after_d8c7 = await page.textContent("#value");

  // Place pieces by clicking: remove the rook (bare kings, 1/2), put a queen on h8.
  await page.click('#palette button[data-piece="x"]');
  await page.click('.sq[data-square="h8"]');
  await page.waitForFunction(() => document.getElementById("class").textContent.endsWith("KvK"));
  read.bare_kings = await page.textContent("#value");
  await page.click('#palette button[data-piece="Q"]');
  await page.click('.sq[data-square="h8"]');
  await page.waitForFunction(() => document.getElementById("class").textContent.endsWith("KQvK"));
  read.queen_fen = await page.inputValue("#fen");

  // Back to the SPEC position, then the heatmap.
  await page.fill("#fen", FEN);
  await page.click("#load");
  await page.waitForFunction(() => document.getElementById("value").textContent === "3/4");
  await page.check("#heatmap");
  await page.waitForSelector('.sq[data-square="c8"][data-value]');
  read.heat_c8 = await page.getAttribute('.sq[data-square="c8"]', "data-value");
  read.heat_d8 = await page.getAttribute('.sq[data-square="d8"]', "data-value");
  read.heat_h8 = await page.getAttribute('.sq[data-square="h8"]', "data-value");
  read.heat_squares = await page.$$eval(".sq[data-value]", (l) => l.length);
  await page.screenshot({ path: path.join(outDir, "explorer-heatmap.png"), fullPage: true });

  // Four pieces (the 4x4 tables): a black knight placed beside White's rook.
  await page.uncheck("#heatmap");
  await page.fill("#fen", "k3/4/4/K2R");
  await page.click("#load");
  await page.waitForFunction(() => document.getElementById("class").textContent === "4x4 KRvK");
  await page.click('#palette button[data-piece="n"]');
  await page.click('.sq[data-square="b2"]');
  await page.waitForFunction(() => document.getElementById("class").textContent === "4x4 KRvKN");
  read.four_fen = await page.inputValue("#fen");
  read.four_value = await page.textContent("#value");
  read.four_black_moves = await page.$$eval("#black-moves li", (l) => l.map((e) => e.dataset.move));
  await page.screenshot({ path: path.join(outDir, "explorer-four.png"), fullPage: true });

  // En passant (the 3x5 KPvKP tables): the same placement without and with the right.
  await page.fill("#fen", "2k/pP1/3/3/K2");
  await page.click("#load");
  await page.waitForFunction(() => document.getElementById("class").textContent === "3x5 KPvKP");
  read.ep_without = await page.textContent("#value");
  read.ep_without_black = await page.$$eval("#black-moves li", (l) => l.map((e) => e.dataset.move));
  await page.fill("#ep", "b3");
  await page.click("#set-ep");
  await page.waitForSelector('#black-moves li[data-move="a4b3"]');
  read.ep_fen = await page.inputValue("#fen");
  read.ep_with = await page.textContent("#value");
  read.page_errors = errors;

  // The SVGs render.
  for (const [name, file] of [["map", mapSvg], ["plot", plotSvg], ["grid", gridSvg], ["cost", costSvg]]) {
    const p = await browser.newPage({ viewport: { width: 1000, height: 600 } });
    await p.goto(pathToFileURL(path.resolve(file)).href);
    const box = await p.$eval("svg", (s) => { const r = s.getBoundingClientRect(); return [r.width, r.height]; });
    read[name + "_size"] = box;
    if (name === "map") {
      read.map_squares = await p.$$eval("g.square", (l) => l.length);
      read.map_d8_title = await p.$eval('g.square[data-square="d8"] title', (t) => t.textContent);
    } else if (name === "plot") {
      read.plot_classes = await p.$$eval("g.class", (l) => l.map((g) => g.dataset.class));
      read.plot_first = await p.$eval("g.first-richman title", (t) => t.textContent);
    } else if (name === "grid") {
      read.grid_boards = await p.$$eval("g.board", (l) => l.map((g) => g.dataset.board));
      read.grid_4x4_title = await p.$eval('g.board[data-board="4x4"] title', (t) => t.textContent);
    } else {
      read.cost_points = await p.$$eval("circle.point", (l) => l.length);
    }
    await p.screenshot({ path: path.join(outDir, name + ".png") });
    await p.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(read));
