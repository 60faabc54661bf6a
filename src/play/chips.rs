//! The engine with whole chips (docs/src/guide/chips.md, docs/src/guide/play.md): holding at least its win
//! threshold it plays by the attractor ranks of the chip game ([`crate::chips::ranks`]),
//! so that every turn lowers the rank of its holding (or leaves the material for a smaller
//! one) and the game ends in a capture whatever the opponent does; otherwise it keeps its
//! not-lose threshold where it can.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::engine::Choice;
use crate::chips::ranks::{Ranks, ranks};
use crate::chips::{Side, Thresholds, Total, terminals, winning_bids};
use crate::error::Error;
use crate::geometry::Board;
use crate::graph::Graph;
use crate::index::Index;
use crate::material::{Color, Material};
use crate::position::Position;
use crate::probe::Tablebase;
use crate::rules::{self, Outcome};

/// The ranks of the materials met, by board, stored material, chip total and side: each
/// computed once, when first needed. Clones share one store (the ranks depend on the
/// tables only), so the games of a server or of a test compute each material once.
///
/// Computing ranks takes time and memory in proportion to the material's positions (its
/// game graph and the staircase of each threshold): each computation is estimated first
/// and refused ([`Error::Resources`], with the estimate) when the memory is not there, and
/// its buffers are allocated fallibly. A memory made by [`ChipMemory::in_background`] (the
/// server's) never computes in the caller: the first request starts the computation on a
/// thread of its own, one at a time, and a request waits a bounded time for the ranks it
/// needs, then answers [`Error::Pending`]; a computation that fails is reported to the
/// next request for them, which may start it again.
#[derive(Clone, Debug, Default)]
pub struct ChipMemory {
    store: Arc<Mutex<RankStore>>,
    /// The tables a background computation reads, and how long a request waits for it
    /// before answering [`Error::Pending`] (None: compute in the caller).
    background: Option<(Arc<Tablebase>, Duration)>,
}

type Key = (Board, Material, u32, Side);

#[derive(Debug, Default)]
struct RankStore {
    ready: HashMap<Key, Arc<Ranks>>,
    /// The computation under way, if any: what for, and since when.
    running: Option<(Key, Instant)>,
    /// Computations that failed, each told once to the next request for it.
    failed: HashMap<Key, Failure>,
}

/// Why a computation failed (the error is not `Clone`; its kind and text are kept).
#[derive(Debug)]
struct Failure {
    resources: bool,
    text: String,
}

/// Stop the background computations (the process is ending): each ends at its next sweep.
static STOP: AtomicBool = AtomicBool::new(false);

/// Bytes the chip ranks of `positions` positions need beside what the process holds: the
/// game graph (its lists, four bytes an option, built run by run, counted twice for the
/// peak, with the index and the lists' offsets) and [`crate::chips::ranks`]'s buffers.
pub fn estimate_bytes(board: Board, material: Material, positions: usize) -> u64 {
    let options = crate::solve::memory::expected_options(board, material);
    let graph = (options * 4.0 * 2.0) as u64 + 64;
    positions as u64 * (graph + crate::chips::ranks::BYTES_PER_POSITION)
}

fn describe(key: &Key) -> String {
    let (board, material, total, side) = key;
    let side = match side {
        Side::White => "White",
        Side::Black => "Black",
    };
    format!("the chip ranks of {material} on {board} with {total} chips ({side} winning)")
}

/// Compute the ranks of `key` (after the memory check).
fn compute(tb: &Tablebase, key: Key) -> Result<Ranks, Error> {
    let before = crate::mapguard::poisonings();
    let ranks = compute_now(tb, key)?;
    if crate::mapguard::poisonings() != before {
        // A file read was truncated under the process (see `crate::mapguard`).
        return Err(Error::Table {
            path: describe(&key),
            reason: "a table file was truncated while they were computed".into(),
        });
    }
    Ok(ranks)
}

fn compute_now(tb: &Tablebase, key: Key) -> Result<Ranks, Error> {
    let (board, material, total, side) = key;
    // The bidding step is bisected where needed: its table would take (2K + 3)² cells.
    let t = Total::new_lean(total);
    let index = Index::new(board, &[material]);
    let table = tb.table(board, material)?;
    if table.len() != index.len() {
        return Err(Error::Table {
            path: table.path().display().to_string(),
            reason: format!("its positions are not those of {material} on {board}"),
        });
    }
    let graph = Graph::new(&index);
    drop(index);
    let mut exits = Vec::new();
    exits
        .try_reserve_exact(graph.exits().len())
        .map_err(|_| Error::Resources(format!("{}: no memory for the exits", describe(&key))))?;
    for e in graph.exits() {
        let i = tb
            .table(board, e.material)?
            .find(e.key)?
            .ok_or_else(|| Error::Table {
                path: e.material.to_string(),
                reason: format!("no position with key {}", e.key),
            })?;
        let th = tb.chip_table(board, e.material, total)?.get(i);
        let th = if e.mirrored { th.mirrored(&t) } else { th };
        exits.push(th.win_of(&t, side) as u16);
    }
    ranks(
        &graph,
        &t,
        side,
        &terminals(&t, side, exits.into_iter()),
        &STOP,
    )
}

impl ChipMemory {
    /// A memory that computes missing ranks in the background (one computation at a time,
    /// on a thread of its own, from `tb`): a request waits up to `wait` for the ranks it
    /// needs, then answers [`Error::Pending`].
    pub fn in_background(tb: Arc<Tablebase>, wait: Duration) -> ChipMemory {
        ChipMemory {
            store: Default::default(),
            background: Some((tb, wait)),
        }
    }

    /// Abandon the computations under way and refuse to start more (the server stops).
    pub fn stop_all() {
        STOP.store(true, Ordering::Relaxed);
    }

    /// Refuse the computation of `key` if its estimate does not fit the memory left.
    fn check_fits(tb: &Tablebase, key: &Key) -> Result<u64, Error> {
        let (board, material, ..) = *key;
        let positions = tb.table(board, material)?.len();
        let needed = estimate_bytes(board, material, positions);
        crate::resources::check_more(needed, &describe(key))?;
        Ok(needed)
    }

    /// The ranks of `side` (as the stored material sees it) on `material`'s graph.
    fn ranks(
        &mut self,
        tb: &Tablebase,
        board: Board,
        material: Material,
        total: u32,
        side: Side,
    ) -> Result<Arc<Ranks>, Error> {
        let key = (board, material, total, side);
        let Some((shared, wait)) = self.background.clone() else {
            // In the caller (the terminal game, tests): one computation at a time.
            let mut store = self.store.lock().expect("ranks lock");
            if let Some(r) = store.ready.get(&key) {
                return Ok(r.clone());
            }
            ChipMemory::check_fits(tb, &key)?;
            let r = Arc::new(compute(tb, key)?);
            store.ready.insert(key, r.clone());
            return Ok(r);
        };
        let deadline = Instant::now() + wait;
        let mut started = None;
        loop {
            if let Some(done) = self.look(&shared, key, &mut started)? {
                return Ok(done);
            }
            if Instant::now() >= deadline || STOP.load(Ordering::Relaxed) {
                let (running, since) = self
                    .store
                    .lock()
                    .expect("ranks lock")
                    .running
                    .unwrap_or((key, Instant::now()));
                let age = since.elapsed().as_secs_f64();
                return Err(Error::Pending(if running == key {
                    let size = started.map_or(String::new(), |mb| format!("about {mb} MB, "));
                    format!(
                        "{} are being computed ({size}{age:.1} s so far): ask again shortly",
                        describe(&key)
                    )
                } else {
                    format!(
                        "{} are computed one at a time, and {} are under way ({age:.1} s so \
                         far): ask again shortly",
                        describe(&key),
                        describe(&running)
                    )
                }));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// The ranks of `key` if they are there; else start their computation if none is
    /// under way (`started` gets its estimate in MB), and None. A failed computation is
    /// its error, once.
    fn look(
        &self,
        tb: &Arc<Tablebase>,
        key: Key,
        started: &mut Option<u64>,
    ) -> Result<Option<Arc<Ranks>>, Error> {
        let mut store = self.store.lock().expect("ranks lock");
        if let Some(r) = store.ready.get(&key) {
            return Ok(Some(r.clone()));
        }
        if let Some(f) = store.failed.remove(&key) {
            return Err(if f.resources {
                Error::Resources(f.text)
            } else {
                Error::Table {
                    path: describe(&key),
                    reason: f.text,
                }
            });
        }
        if store.running.is_some() || STOP.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let needed = ChipMemory::check_fits(tb, &key)?;
        // The thread's stack, where an address-space limit is tight.
        const STACK: u64 = 2 << 20;
        if !crate::resources::thread_fits(STACK) {
            return Err(Error::Resources(format!(
                "{}: no address space left for the thread that would compute them",
                describe(&key)
            )));
        }
        let (store_arc, tb) = (self.store.clone(), tb.clone());
        std::thread::Builder::new()
            .name("chip ranks".into())
            .stack_size(STACK as usize)
            .spawn(move || {
                let done = compute(&tb, key);
                let mut store = store_arc.lock().expect("ranks lock");
                store.running = None;
                match done {
                    Ok(r) => {
                        store.ready.insert(key, Arc::new(r));
                    }
                    Err(e) => {
                        store.failed.insert(
                            key,
                            Failure {
                                resources: matches!(e, Error::Resources(_)),
                                text: e.to_string(),
                            },
                        );
                    }
                }
            })
            .map_err(|e| {
                Error::Resources(format!(
                    "{}: the thread that would compute them cannot start: {e}",
                    describe(&key)
                ))
            })?;
        store.running = Some((key, Instant::now()));
        *started = Some(needed.div_ceil(1 << 20));
        Ok(None)
    }
}

/// The engine's plan for one bidding round with chips.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChipPlan {
    /// The bid as a holding index (2 · chips, plus 1 with the marker).
    pub bid: u32,
    /// What it does with a bid won (a move is chosen when it moves, with its holding then).
    pub control: Choice,
    /// Whether the side wins by force with its holding.
    pub winning: bool,
    /// The rank of its holding (winning only): the turns within which it wins, at most,
    /// before the game leaves the material.
    pub rank: Option<u32>,
}

fn side_of(c: Color) -> Side {
    match c {
        Color::White => Side::White,
        Color::Black => Side::Black,
    }
}

/// The thresholds seen from `side` in its own holdings: (win, not lose).
fn own_thresholds(t: &Thresholds, total: &Total, side: Color) -> (u32, u32) {
    let side = side_of(side);
    (t.win_of(total, side), t.not_lose_of(total, side))
}

/// Where a position sits: its stored material, its index there, whether it is the mirror.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Place {
    material: Material,
    index: usize,
    mirrored: bool,
}

fn place(tb: &Tablebase, board: Board, pos: &Position) -> Result<Place, Error> {
    let (t, index, mirrored) = tb.locate(board, pos)?;
    Ok(Place {
        material: t.info().material,
        index,
        mirrored,
    })
}

/// One move with what it needs: after `sweep` sweeps of the current material's ranks (a
/// capture, or a move into another material, needs its final threshold).
struct Need {
    uci: String,
    outcome: Outcome,
}

fn moves(board: Board, pos: &Position, mover: Color) -> Vec<Need> {
    let list = match mover {
        Color::White => rules::white_moves(board, pos),
        Color::Black => rules::black_moves(board, pos),
    };
    if list.is_empty() {
        // A side without a move keeps the position.
        return vec![Need {
            uci: "-".into(),
            outcome: Outcome::Continue(*pos),
        }];
    }
    list.iter()
        .map(|m| Need {
            uci: m.uci(board),
            outcome: m.outcome,
        })
        .collect()
}

/// The engine's view of one material with one side and chip total.
struct View<'a> {
    tb: &'a Tablebase,
    board: Board,
    side: Color,
    total: Total,
    here: Place,
    ranks: Arc<Ranks>,
}

impl<'a> View<'a> {
    fn new(seat: Seat<'a>, memory: &mut ChipMemory) -> Result<View<'a>, Error> {
        let Seat {
            tb,
            board,
            pos,
            side,
            total,
        } = seat;
        let here = place(tb, board, pos)?;
        let stored_side = side_of(if here.mirrored { side.other() } else { side });
        let ranks = memory.ranks(tb, board, here.material, total, stored_side)?;
        Ok(View {
            tb,
            board,
            side,
            total: Total::new_lean(total),
            here,
            ranks,
        })
    }

    /// The holding the side needs after `outcome` to be at rank `sweep` or less (`None`
    /// for sweep: the final threshold), and, for a move within the material, its index.
    fn need(&self, outcome: &Outcome, sweep: Option<u32>) -> Result<u32, Error> {
        let none = self.total.none();
        Ok(match outcome {
            Outcome::WhiteWins => {
                if self.side == Color::White {
                    0
                } else {
                    none
                }
            }
            Outcome::BlackWins => {
                if self.side == Color::Black {
                    0
                } else {
                    none
                }
            }
            Outcome::Continue(q) => {
                let p = place(self.tb, self.board, q)?;
                if p.material == self.here.material && p.mirrored == self.here.mirrored {
                    match sweep {
                        Some(s) => self.ranks.threshold_after(p.index, s),
                        None => self.ranks.threshold(p.index),
                    }
                } else {
                    let th = self.tb.chip_thresholds(self.board, q, self.total.chips())?;
                    own_thresholds(&th, &self.total, self.side).0
                }
            }
        })
    }

    /// The rank of holding `h` after `outcome`: 0 for a capture by the side or a winning
    /// move into another material, None where `h` does not win.
    fn rank_after(&self, outcome: &Outcome, h: u32) -> Result<Option<u32>, Error> {
        Ok(match outcome {
            Outcome::Continue(q) => {
                let p = place(self.tb, self.board, q)?;
                if p.material == self.here.material && p.mirrored == self.here.mirrored {
                    self.ranks.rank(p.index, h)
                } else {
                    (self.need(outcome, None)? <= h).then_some(0)
                }
            }
            _ => (self.need(outcome, None)? == 0).then_some(0),
        })
    }
}

/// Whose decision, where: the tables, the board and position, the side, the chip total.
#[derive(Clone, Copy, Debug)]
pub struct Seat<'a> {
    /// The tables (with their chip files).
    pub tb: &'a Tablebase,
    /// The board.
    pub board: Board,
    /// The position.
    pub pos: &'a Position,
    /// The side deciding.
    pub side: Color,
    /// The chip total K.
    pub total: u32,
}

/// The plan of the seat's side holding `holding` (its own, 2w + m).
pub fn chip_plan(seat: Seat<'_>, holding: u32, memory: &mut ChipMemory) -> Result<ChipPlan, Error> {
    let Seat {
        tb,
        board,
        pos,
        side,
        total,
    } = seat;
    let t = Total::new_lean(total);
    let here = own_thresholds(&tb.chip_thresholds(board, pos, total)?, &t, side);
    let own = moves(board, pos, side);
    let opp = moves(board, pos, side.other());
    let plan = |need: &dyn Fn(&Outcome) -> Result<u32, Error>, most: bool| {
        let mut a_w = u32::MAX;
        for m in &own {
            a_w = a_w.min(need(&m.outcome)?);
        }
        let mut a_b = 0;
        for m in &opp {
            a_b = a_b.max(need(&m.outcome)?);
        }
        let (lo, hi) = (a_w.min(a_b), a_w.max(a_b));
        let mut bids = winning_bids(total, holding, lo, hi);
        let bid = if most { bids.last() } else { bids.next() };
        Ok::<_, Error>(bid.map(|bid| {
            let control = if a_w <= holding - bid {
                Choice::Move(String::new())
            } else {
                Choice::HandOver
            };
            (bid, control)
        }))
    };
    if holding >= here.0 {
        // Winning: against the thresholds of the sweep before the holding's rank.
        let view = View::new(seat, memory)?;
        let rank = view.ranks.rank(view.here.index, holding);
        let Some(r) = rank.filter(|&r| r >= 1) else {
            return Err(Error::Table {
                path: view.here.material.to_string(),
                reason: "the chip ranks disagree with the chip file".into(),
            });
        };
        let need = |o: &Outcome| view.need(o, Some(r - 1));
        let (bid, control) = plan(&need, true)?.ok_or_else(|| Error::Table {
            path: view.here.material.to_string(),
            reason: "no bid wins the step the ranks promise".into(),
        })?;
        return Ok(ChipPlan {
            bid,
            control,
            winning: true,
            rank,
        });
    }
    let safe = |o: &Outcome| -> Result<u32, Error> {
        Ok(match o {
            Outcome::Continue(q) => {
                own_thresholds(&tb.chip_thresholds(board, q, total)?, &t, side).1
            }
            Outcome::WhiteWins => {
                if side == Color::White {
                    0
                } else {
                    t.none()
                }
            }
            Outcome::BlackWins => {
                if side == Color::Black {
                    0
                } else {
                    t.none()
                }
            }
        })
    };
    let (bid, control) = if holding >= here.1 {
        plan(&safe, false)?
    } else {
        None
    }
    // Losing by force: a modest even bid, and the move that asks least of it.
    .unwrap_or(((holding / 4) & !1, Choice::Move(String::new())));
    Ok(ChipPlan {
        bid,
        control,
        winning: false,
        rank: None,
    })
}

/// The engine's move with chips, holding `holding` when it moves: winning, a move of least
/// rank (a capture first); else a move that keeps it from losing, else the least
/// demanding; ties to the position seen least often, then the name.
pub fn chip_move(
    seat: Seat<'_>,
    holding: u32,
    memory: &mut ChipMemory,
    visits: &HashMap<String, u32>,
) -> Result<String, Error> {
    let Seat {
        tb,
        board,
        pos,
        side,
        total,
    } = seat;
    let t = Total::new_lean(total);
    let own = moves(board, pos, side);
    let view = View::new(seat, memory)?;
    // (class: wins, safe, neither; rank; visits; win and not-lose thresholds), the move.
    type Scored = ((u32, u32, u32, u32, u32), String);
    let mut best: Option<Scored> = None;
    for m in own {
        let rank = view.rank_after(&m.outcome, holding)?.unwrap_or(u32::MAX);
        let (win, safe) = match &m.outcome {
            Outcome::Continue(q) => own_thresholds(&tb.chip_thresholds(board, q, total)?, &t, side),
            o => {
                let n = view.need(o, None)?;
                (n, n)
            }
        };
        let seen = match &m.outcome {
            Outcome::Continue(q) => visits
                .get(&crate::fen::write(board, q))
                .copied()
                .unwrap_or(0),
            _ => 0,
        };
        let class = if rank < u32::MAX {
            0
        } else if safe <= holding {
            1
        } else {
            2
        };
        let key = (class, rank, seen, win, safe);
        if best.as_ref().is_none_or(|(k, u)| (key, &m.uci) < (*k, u)) {
            best = Some((key, m.uci));
        }
    }
    Ok(best.map_or("-".into(), |(_, u)| u))
}

/// What the seat's side, having won the bid and now holding `holding`, does: move (the move
/// [`chip_move`] picks) or hand the move over, whichever leaves the lesser rank in the worst
/// case (winning), else whichever keeps it from losing.
pub fn chip_control(
    seat: Seat<'_>,
    holding: u32,
    memory: &mut ChipMemory,
    visits: &HashMap<String, u32>,
) -> Result<Choice, Error> {
    let Seat {
        board, pos, side, ..
    } = seat;
    let view = View::new(seat, memory)?;
    let worst = |mover: Color, best_of: bool| -> Result<u32, Error> {
        let mut out = if best_of { u32::MAX } else { 0 };
        for m in moves(board, pos, mover) {
            let r = view.rank_after(&m.outcome, holding)?.unwrap_or(u32::MAX);
            out = if best_of { out.min(r) } else { out.max(r) };
        }
        Ok(out)
    };
    let (own, theirs) = (worst(side, true)?, worst(side.other(), false)?);
    if own > theirs {
        return Ok(Choice::HandOver);
    }
    Ok(Choice::Move(chip_move(seat, holding, memory, visits)?))
}
