//! Bidding chess with whole chips and a tie-break marker, solved by brute force on the explicit
//! product states (position, White's chips, holder of the marker). Written from the rules of
//! `docs/src/guide/chips.md` ("The game") alone: no thresholds, no monotonicity, no shortcut in the
//! bidding; every pair of sealed bids is played out.
//!
//! # The rules as implemented
//! - **Chips.** `K` chips in all (`total`). White holds `w` of them, Black `K - w`; exactly one
//!   player holds the marker. A state is (position, `w`, holder of the marker). White's holding
//!   is indexed `h = 2w + m` (`m = 1` when White holds the marker), `h` in `0..=2K+1`.
//! - **Bids.** Both players bid at once: a whole number of chips up to what they hold; the
//!   marker's holder may add the marker. The bids are ordered by (chips, tier) with tier 0 for
//!   a plain bid of the marker's holder, 1 for a plain bid of the other player, 2 for a bid
//!   with the marker ([`rank`]): an equal plain bid is won by the player without the marker,
//!   and `x*` beats plain `x` but loses to `x + 1`. Two bids never compare equal.
//! - **Paying.** The higher bid wins; the winner gives the chips of its bid to the other player,
//!   and the marker too if its bid included it ([`auction`]).
//! - **The move.** The winner chooses who moves: itself or its opponent. The mover makes any of
//!   its moves (the reference's move generator, `super::moves`); a side with no move keeps the
//!   position as its only move. Capturing the enemy king ends the game (a win for the
//!   capturer). A capture of another piece or a promotion leads to another material, solved
//!   first with the same `K` ([`solve`]); its results are used state by state (its whole sets,
//!   not its thresholds).
//! - **Infinite play is a draw.**
//!
//! # What is computed (three separate fixed points per material, [`Analysis::fixed_point`])
//! The one-step operator for a protagonist `P` (the player who wants to stay in a set `X` of
//! states): a state `(pos, h)` is in `F(X)` iff `P` has a bid such that for EVERY bid of the
//! opponent `O` the outcome is good, where, with `h'` White's holding after paying, a move is
//! good if it captures the enemy king of `P` or leads to a state `(pos', h')` in `X` (or, in
//! another material, in that material's set of the same analysis):
//! - if `P` won the bid, `P` may move (good if some move of `P` is good) or hand the move to
//!   `O` (good if every move of `O` is good): good iff either;
//! - if `O` won the bid, `O` picks the mover: good iff some move of `P` is good AND every move
//!   of `O` is good.
//!
//! - **White wins** = least fixed point of `F` for `P = White`, from the empty set (White's king
//!   captures and White's wins in other materials as leaves): the attractor, a win in finitely
//!   many moves whatever Black does.
//! - **Black wins** = the same with `P = Black`.
//! - **White does not lose** = greatest fixed point of `F` for `P = White`, from the full set,
//!   where the leaves are White's king captures and White's not-losing states in other
//!   materials: a safety game (White can keep play in the set forever, or capture the king; a
//!   capture of White's king is never good). It is computed apart, not as a complement of
//!   Black's wins; [`ChipResult::determined`] says whether it is that complement.
//!
//! The bidding ([`Bidding`]) is played out once per total: for every holding and every bid of
//! `P`, every bid of `O` goes through [`auction`], and the holdings it leads to are collected
//! (those after a bid `P` won, those after a bid `O` won); "for every bid of `O`" is then "all
//! these holdings are good", checked with sets of holdings as bit masks ([`Holdings`]).
//!
//! The iteration recomputes the states of a position whenever some state of a successor
//! position (or of itself) changed, until a round changes nothing. `F` is monotone, so from the
//! empty set every step stays inside the least fixed point and only adds states (which are
//! therefore not recomputed once in); the end is a fixed point, so it is the least one. From
//! the full set, likewise, the greatest. At the end every state is recomputed from scratch and
//! `F(X) = X` asserted.
//!
//! Thresholds: `win` = the least `h` at which White wins, `not_lose` = the least `h` at which
//! White does not lose, `2K + 2` for "none". Every `h` is computed separately; whether the sets
//! are upward closed (and Black's wins downward closed) is checked, not assumed
//! ([`ChipResult::monotone`]).

use super::{BLACK, Board, Material, Outcome, Position, Reference, WHITE, fen, moves, positions};
use rayon::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

/// The chip thresholds of every position of one material for one total `K`.
pub struct ChipResult {
    /// FEN key "<placement> <ep>" (as [`super::solve_material`]) to `(win, not_lose)`: the
    /// least holding index `h = 2w + m` with which White forces a win, and with which White
    /// does not lose; `2K + 2` means "no holding does".
    pub by_fen: BTreeMap<String, (u32, u32)>,
    /// Every position's sets are monotone: White's wins and White's not-losing holdings are
    /// upward closed in `h`, and Black's wins downward closed.
    pub monotone: bool,
    /// At every state White does not lose exactly where Black cannot force a win (the safety
    /// fixed point is the complement of Black's attractor).
    pub determined: bool,
    /// A few examples of each violation of `monotone` or `determined` (empty if none).
    pub notes: Vec<String>,
}

/// Solves `material` (and first every material it leads to) with `total` chips on the board of
/// `reference`, and returns its thresholds and the checks. Results are cached per board,
/// material and total, across calls (and across threads).
pub fn chip_thresholds(reference: &mut Reference, material: &str, total: u32) -> ChipResult {
    assert!(total >= 1, "at least one chip");
    let board = reference.board;
    let solved = solve(board, Material::parse(material), total);
    summarize(board, &solved, total)
}

// ---------------------------------------------------------------------------------------------
// Holdings, bids, the auction.

/// The number of holdings of White: `0, 0*, 1, 1*, ..., K, K*`.
fn holdings(total: u32) -> usize {
    2 * total as usize + 2
}

/// A set of White's holdings: bit `h` for holding `h` (so `K` is at most 15).
type Holdings = u32;

/// Every holding of `total` chips.
fn all_holdings(total: u32) -> Holdings {
    let hn = holdings(total);
    assert!(hn <= 32, "at most 15 chips");
    (((1u64) << hn) - 1) as u32
}

fn contains(set: Holdings, h: usize) -> bool {
    set >> h & 1 == 1
}

/// White's chips and whether White holds the marker, from the holding index `h = 2w + m`.
fn split(h: usize) -> (u32, bool) {
    ((h / 2) as u32, h % 2 == 1)
}

/// A sealed bid: a number of chips, and whether the marker is added to them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bid {
    chips: u32,
    marker: bool,
}

/// Every bid of a player holding `chips` chips (and the marker if `holds_marker`).
fn bids(chips: u32, holds_marker: bool) -> Vec<Bid> {
    let mut out = Vec::new();
    for c in 0..=chips {
        out.push(Bid {
            chips: c,
            marker: false,
        });
        if holds_marker {
            out.push(Bid {
                chips: c,
                marker: true,
            });
        }
    }
    out
}

/// The rank of a bid: by chips, then plain bid of the marker's holder (0) < plain bid of the
/// other player (1) < bid with the marker (2).
fn rank(bid: Bid, bidder_holds_marker: bool) -> (u32, u8) {
    let tier = if bid.marker {
        assert!(bidder_holds_marker, "only the holder may bid the marker");
        2
    } else if bidder_holds_marker {
        0
    } else {
        1
    };
    (bid.chips, tier)
}

/// The auction at White's holding `h` with these bids: the winner (WHITE or BLACK) and White's
/// holding after the winner paid its chips (and the marker, if bid) to the other player.
fn auction(total: u32, h: usize, white: Bid, black: Bid) -> (u8, usize) {
    let (w, white_marker) = split(h);
    assert!(w <= total && white.chips <= w && black.chips <= total - w);
    let rw = rank(white, white_marker);
    let rb = rank(black, !white_marker);
    assert_ne!(rw, rb, "bids never tie");
    let (winner, w2, white_marker2) = if rw > rb {
        // White pays Black; the marker goes to Black if White bid it.
        (WHITE, w - white.chips, white_marker && !white.marker)
    } else {
        // Black pays White; the marker goes to White if Black bid it.
        (BLACK, w + black.chips, white_marker || black.marker)
    };
    assert!(w2 <= total);
    (winner, 2 * w2 as usize + white_marker2 as usize)
}

/// The bidding seen by one player (the protagonist `P`), played out once per total:
/// `choices[h]` has one entry per bid of `P` at White's holding `h`: what EVERY bid of the
/// opponent can make of it, as two sets of White's holdings after paying: those reached when
/// `P` wins the bid, and those reached when the opponent wins it.
struct Bidding {
    choices: Vec<Vec<Outcomes>>,
}

/// The outcomes of one bid of the protagonist against every bid of the opponent.
#[derive(Clone, Copy, Debug, Default)]
struct Outcomes {
    /// White's holdings after paying, over the opponent's bids that the protagonist beats.
    won: Holdings,
    /// White's holdings after paying, over the opponent's bids that beat the protagonist's.
    lost: Holdings,
}

impl Bidding {
    fn new(total: u32, protagonist: u8) -> Bidding {
        let choices = (0..holdings(total))
            .map(|h| {
                let (w, white_marker) = split(h);
                let white_bids = bids(w, white_marker);
                let black_bids = bids(total - w, !white_marker);
                let (own, other) = if protagonist == WHITE {
                    (&white_bids, &black_bids)
                } else {
                    (&black_bids, &white_bids)
                };
                own.iter()
                    .map(|&p| {
                        let mut outcomes = Outcomes::default();
                        for &o in other {
                            let (white, black) = if protagonist == WHITE { (p, o) } else { (o, p) };
                            let (winner, after) = auction(total, h, white, black);
                            if winner == protagonist {
                                outcomes.won |= 1 << after;
                            } else {
                                outcomes.lost |= 1 << after;
                            }
                        }
                        outcomes
                    })
                    .collect()
            })
            .collect();
        Bidding { choices }
    }
}

// ---------------------------------------------------------------------------------------------
// One material's game graph.

/// The three analyses, as indices into [`Solved::sets`] and the leaves' sets.
const WIN: usize = 0;
const BLACK_WIN: usize = 1;
const SAFE: usize = 2;

/// Where a move leads.
#[derive(Clone, Copy, Debug)]
enum Opt {
    /// A position of this material (possibly the position itself).
    Node(usize),
    /// White captured the black king.
    WhiteCaptures,
    /// Black captured the white king.
    BlackCaptures,
    /// A position of another material: `Graph::exits[e]`.
    Exit(usize),
}

/// A material's positions and their moves (the same for every number of chips).
struct Graph {
    positions: Vec<Position>,
    index: HashMap<Position, usize>,
    /// `options[colour][i]`: the moves of `colour` at position `i` (never empty).
    options: [Vec<Vec<Opt>>; 2],
    /// `preds[j]`: the positions with a move to `j` (either colour), without repeats.
    preds: Vec<Vec<usize>>,
    /// The positions of other materials reached by a move: (material, position).
    exits: Vec<(Material, Position)>,
}

/// One solved material: for every position `i`, `sets[a][i]` is the set of White's holdings
/// at which the state is in analysis `a` (White wins, Black wins, White does not lose).
struct Solved {
    graph: Arc<Graph>,
    sets: [Vec<Holdings>; 3],
}

/// The solved materials, per board, material and total (shared by every test of a binary).
type SolvedCache = Mutex<HashMap<(Board, Material, u32), Arc<Solved>>>;
/// The materials' graphs, per board and material.
type GraphCache = Mutex<HashMap<(Board, Material), Arc<Graph>>>;

fn solved_cache() -> &'static SolvedCache {
    static CACHE: OnceLock<SolvedCache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

fn graph_cache() -> &'static GraphCache {
    static CACHE: OnceLock<GraphCache> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// Material `m` with `total` chips, solving (or reusing) the materials it leads to first.
fn solve(board: Board, m: Material, total: u32) -> Arc<Solved> {
    if let Some(s) = solved_cache().lock().unwrap().get(&(board, m, total)) {
        return s.clone();
    }
    let children: HashMap<Material, Arc<Solved>> = m
        .children()
        .into_iter()
        .map(|c| (c, solve(board, c, total)))
        .collect();
    let graph = graph(board, m);
    let all = all_holdings(total);
    let sets = [WIN, BLACK_WIN, SAFE].map(|a| {
        // The king captures: good for White's analyses (WIN, SAFE) if White captured, good
        // for BLACK_WIN if Black did.
        let (white_captures, black_captures) = if a == BLACK_WIN { (0, all) } else { (all, 0) };
        let protagonist = if a == BLACK_WIN { BLACK } else { WHITE };
        // The exits: the same analysis' set in the solved material they belong to.
        let exits = graph
            .exits
            .iter()
            .map(|(nm, next)| {
                let child = &children[nm];
                child.sets[a][child.graph.index[next]]
            })
            .collect();
        Analysis {
            graph: &graph,
            total,
            protagonist,
            greatest: a == SAFE,
            bidding: Bidding::new(total, protagonist),
            white_captures,
            black_captures,
            exits,
        }
        .fixed_point()
    });
    let solved = Arc::new(Solved { graph, sets });
    solved_cache()
        .lock()
        .unwrap()
        .entry((board, m, total))
        .or_insert(solved)
        .clone()
}

/// The positions and moves of material `m` (cached per board and material).
fn graph(board: Board, m: Material) -> Arc<Graph> {
    if let Some(g) = graph_cache().lock().unwrap().get(&(board, m)) {
        return g.clone();
    }
    let positions = positions(board, m);
    let index: HashMap<Position, usize> = positions
        .iter()
        .enumerate()
        .map(|(i, p)| (p.clone(), i))
        .collect();
    let mut exit_index: HashMap<Position, usize> = HashMap::new();
    let mut exits = Vec::new();
    let mut options: [Vec<Vec<Opt>>; 2] = [Vec::new(), Vec::new()];
    let mut preds = vec![Vec::new(); positions.len()];
    for (i, pos) in positions.iter().enumerate() {
        for colour in [WHITE, BLACK] {
            let mut opts = Vec::new();
            for outcome in moves(board, pos, colour) {
                opts.push(match outcome {
                    Outcome::KingCaptured if colour == WHITE => Opt::WhiteCaptures,
                    Outcome::KingCaptured => Opt::BlackCaptures,
                    Outcome::Moved(next) => match index.get(&next) {
                        Some(&j) => Opt::Node(j),
                        None => {
                            let nm = Material::of(&next);
                            assert_ne!(nm, m, "{} is not enumerated", fen(board, &next));
                            let e = *exit_index.entry(next.clone()).or_insert_with(|| {
                                exits.push((nm, next));
                                exits.len() - 1
                            });
                            Opt::Exit(e)
                        }
                    },
                });
            }
            if opts.is_empty() {
                // No move at all: the position itself is this side's only move.
                opts.push(Opt::Node(i));
            }
            for o in &opts {
                if let Opt::Node(j) = *o
                    && !preds[j].contains(&i)
                {
                    preds[j].push(i);
                }
            }
            options[colour as usize].push(opts);
        }
    }
    let graph = Arc::new(Graph {
        positions,
        index,
        options,
        preds,
        exits,
    });
    graph_cache()
        .lock()
        .unwrap()
        .entry((board, m))
        .or_insert(graph)
        .clone()
}

/// One analysis of one material with one total: whose win (or safety) it is, which fixed point,
/// and what the leaves are worth.
struct Analysis<'a> {
    graph: &'a Graph,
    total: u32,
    /// The player who wants to stay in the set: White (WIN, SAFE) or Black (BLACK_WIN).
    protagonist: u8,
    /// The greatest fixed point (SAFE) rather than the least (WIN, BLACK_WIN).
    greatest: bool,
    bidding: Bidding,
    /// The holdings at which a king capture by White, by Black, and each exit of
    /// `graph.exits` are good for the protagonist.
    white_captures: Holdings,
    black_captures: Holdings,
    exits: Vec<Holdings>,
}

impl Analysis<'_> {
    /// The set of the analysis, one set of holdings per position: iterated from the empty
    /// set (least) or the full set (greatest), recomputing the positions with a successor
    /// that changed, until nothing changes.
    fn fixed_point(&self) -> Vec<Holdings> {
        let n = self.graph.positions.len();
        let start = if self.greatest {
            all_holdings(self.total)
        } else {
            0
        };
        let mut set = vec![start; n];
        let mut dirty: Vec<usize> = (0..n).collect();
        while !dirty.is_empty() {
            let rows: Vec<(usize, Holdings)> = dirty
                .par_iter()
                .map(|&i| (i, self.step(&set, i, true)))
                .collect();
            let mut mark = vec![false; n];
            for (j, row) in rows {
                if row != set[j] {
                    set[j] = row;
                    for &i in &self.graph.preds[j] {
                        mark[i] = true;
                    }
                }
            }
            dirty = (0..n).filter(|&i| mark[i]).collect();
        }
        // An independent check of the end: every state recomputed from scratch, set = F(set).
        let fixed = (0..n)
            .into_par_iter()
            .all(|i| self.step(&set, i, false) == set[i]);
        assert!(fixed, "not a fixed point");
        set
    }

    /// The operator `F` at position `i`, given the current `set`: the holdings at which the
    /// protagonist has a bid that works against every bid of the opponent. While `iterating`,
    /// the states already decided are kept.
    fn step(&self, set: &[Holdings], i: usize, iterating: bool) -> Holdings {
        let good = |o: &Opt| match *o {
            Opt::Node(j) => set[j],
            Opt::WhiteCaptures => self.white_captures,
            Opt::BlackCaptures => self.black_captures,
            Opt::Exit(e) => self.exits[e],
        };
        let protagonist = self.protagonist as usize;
        let mine = &self.graph.options[protagonist][i];
        let theirs = &self.graph.options[1 - protagonist][i];
        // The holdings at which some move of the protagonist is good, and every move of the
        // opponent is.
        let some_mine = mine.iter().fold(0, |acc, o| acc | good(o));
        let all_theirs = theirs
            .iter()
            .fold(all_holdings(self.total), |acc, o| acc & good(o));
        // After the protagonist won the bid it picks the mover: itself or the opponent.
        let after_mine = some_mine | all_theirs;
        // After the opponent won the bid, the opponent picks the mover.
        let after_theirs = some_mine & all_theirs;
        let mut out = 0;
        for h in 0..holdings(self.total) {
            // `F` is monotone and the iteration moves one way (up from the empty set, down from
            // the full set), so a state already in (out of) a least (greatest) set stays so.
            let decided = iterating && contains(set[i], h) != self.greatest;
            let wins = if decided {
                contains(set[i], h)
            } else {
                // Some bid of the protagonist whose every outcome is good: the holdings it can
                // lead to are inside the good ones, after a won and after a lost bid alike.
                self.bidding.choices[h]
                    .iter()
                    .any(|o| o.won & !after_mine == 0 && o.lost & !after_theirs == 0)
            };
            if wins {
                out |= 1 << h;
            }
        }
        out
    }
}

// ---------------------------------------------------------------------------------------------
// Thresholds and checks.

/// A holding for the notes: White's and Black's, e.g. "White 2*, Black 3".
fn holding_name(total: u32, h: usize) -> String {
    let (w, white_marker) = split(h);
    let star = |b: bool| if b { "*" } else { "" };
    format!(
        "White {w}{}, Black {}{}",
        star(white_marker),
        total - w,
        star(!white_marker)
    )
}

fn summarize(board: Board, s: &Solved, total: u32) -> ChipResult {
    let hn = holdings(total);
    let (mut monotone, mut determined) = (true, true);
    let mut notes = Vec::new();
    let note = |notes: &mut Vec<String>, text: String| {
        if notes.len() < 12 {
            notes.push(text);
        }
    };
    let mut by_fen = BTreeMap::new();
    for (i, pos) in s.graph.positions.iter().enumerate() {
        let key = fen(board, pos);
        let row = |a: usize| -> Vec<bool> { (0..hn).map(|h| contains(s.sets[a][i], h)).collect() };
        let (win, black, safe) = (row(WIN), row(BLACK_WIN), row(SAFE));
        for h in 0..hn {
            // Theorems (a bug if they fail): nobody both wins and is safe from the other's win.
            assert!(!(win[h] && black[h]), "{key} {h}: both win");
            assert!(!(safe[h] && black[h]), "{key} {h}: safe and lost");
            assert!(!win[h] || safe[h], "{key} {h}: a win that is not safe");
            if safe[h] == black[h] {
                determined = false;
                note(
                    &mut notes,
                    format!(
                        "not determined: {key} with {}: neither White avoids losing nor Black forces a win",
                        holding_name(total, h)
                    ),
                );
            }
        }
        let least = |r: &[bool]| r.iter().position(|&b| b).unwrap_or(hn);
        let (w_thr, s_thr) = (least(&win), least(&safe));
        for (name, r, t) in [("win", &win, w_thr), ("not-lose", &safe, s_thr)] {
            if let Some(h) = (t..hn).find(|&h| !r[h]) {
                monotone = false;
                note(
                    &mut notes,
                    format!(
                        "not monotone: {key}: White's {name} at {} but not at {}",
                        holding_name(total, t),
                        holding_name(total, h)
                    ),
                );
            }
        }
        if let Some(h) = (1..hn).find(|&h| black[h] && !black[h - 1]) {
            monotone = false;
            note(
                &mut notes,
                format!(
                    "not monotone: {key}: Black wins at {} but not at {}",
                    holding_name(total, h),
                    holding_name(total, h - 1)
                ),
            );
        }
        by_fen.insert(key, (w_thr as u32, s_thr as u32));
    }
    assert_eq!(by_fen.len(), s.graph.positions.len(), "distinct FEN keys");
    ChipResult {
        by_fen,
        monotone,
        determined,
        notes,
    }
}
