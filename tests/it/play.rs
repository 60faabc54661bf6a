//! The engine at play (docs/src/guide/play.md, issue "Play it"): thousands of games on small boards
//! against a random player and a greedy one, with money and with chips, from positions and
//! bankrolls where the tables say the engine wins by force: it must capture the king in
//! every one. In random turn, the engine playing both sides from one position wins for
//! White as often as the position's value says, within a stated bound.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use crate::common::bidtb;
use bidtb::Board;
use bidtb::Color;
use bidtb::Position;
use bidtb::Tablebase;
use bidtb::fen;
use bidtb::internal::chips::Total;
use bidtb::internal::play::chips::{self as chip_engine, ChipMemory, Seat};
use bidtb::internal::play::engine::{self, Choice, MoneyMemory, ratio};
use bidtb::internal::play::{Bid, Game, Phase, Purse};
use bidtb::internal::rules;
use std::str::FromStr;

const CHIPS: u32 = 12;

thread_local! {
    /// The chip ranks, shared by the games of a test.
    static RANKS: ChipMemory = ChipMemory::default();
}

/// Every material up to four men on `board` (4x4 or 5x5), with chip files for [`CHIPS`],
/// made once per test binary.
fn shared(board: &str) -> &'static Tablebase {
    static SMALL: OnceLock<Tablebase> = OnceLock::new();
    static LARGER: OnceLock<Tablebase> = OnceLock::new();
    let cell = if board == "4x4" { &SMALL } else { &LARGER };
    cell.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap().keep();
        tables(&dir, board)
    })
}

/// Every material up to four men on `board`, with chip files for [`CHIPS`].
fn tables(root: &Path, board: &str) -> Tablebase {
    let out = root.to_str().unwrap();
    let (code, _, err) = bidtb(&[
        "generate", "--board", board, "--pieces", "4", "--method", "solve", "--out", out, "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    let k = CHIPS.to_string();
    let (code, _, err) = bidtb(&[
        "chips", "--tables", out, "--board", board, "--chips", &k, "-q",
    ]);
    assert_eq!(code, 0, "{err}");
    Tablebase::open(root).unwrap()
}

/// A random position of the tables: two kings and up to two more men.
fn random_position(tb: &Tablebase, board: Board, rng: &mut StdRng) -> Position {
    let pieces = ['Q', 'R', 'B', 'N', 'P', 'q', 'r', 'b', 'n', 'p'];
    loop {
        let mut cells = vec!['.'; board.len()];
        let extra = rng.random_range(0..=2);
        let mut men = vec!['K', 'k'];
        for _ in 0..extra {
            men.push(pieces[rng.random_range(0..pieces.len())]);
        }
        let mut ok = true;
        for m in men {
            let free: Vec<usize> = (0..cells.len()).filter(|&i| cells[i] == '.').collect();
            if free.is_empty() {
                ok = false;
                break;
            }
            cells[free[rng.random_range(0..free.len())]] = m;
        }
        if !ok {
            continue;
        }
        let f = board.files() as usize;
        let rows: Vec<String> = cells
            .chunks(f)
            .rev()
            .map(|row| {
                let mut s = String::new();
                let mut empty = 0;
                for &c in row {
                    if c == '.' {
                        empty += 1;
                    } else {
                        if empty > 0 {
                            s += &empty.to_string();
                            empty = 0;
                        }
                        s.push(c);
                    }
                }
                if empty > 0 {
                    s += &empty.to_string();
                }
                s
            })
            .collect();
        // Positions where no king can be taken at once: games of some length.
        let quiet = |p: &Position| {
            rules::white_moves(board, p)
                .iter()
                .chain(&rules::black_moves(board, p))
                .all(|m| matches!(m.outcome, rules::Outcome::Continue(_)))
        };
        if let Ok(p) = fen::parse(&rows.join("/"))
            && quiet(&p.position)
            && tb.entry(p.board, &p.position).is_ok()
        {
            return p.position;
        }
    }
}

/// A player of one side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Player {
    /// The engine.
    Engine,
    /// Uniform random bids, choices and moves.
    Random,
    /// Richman's bid on the values, a best move by value (ties at random), no progress.
    Greedy,
}

struct Side {
    player: Player,
    memory: MoneyMemory,
    chips: ChipMemory,
    /// The engine's last winning chip rank, with the material it was in.
    rank: Option<(String, u32)>,
    plan: Option<(Bid, Choice, Choice)>,
}

fn random_share(rng: &mut StdRng, most: &BigRational) -> BigRational {
    let n = rng.random_range(0..=1000u32);
    most * BigRational::new(BigInt::from(n), BigInt::from(1000))
}

/// The greedy player's bid, choice and move with money: from the probe.
fn greedy_money(
    tb: &Tablebase,
    g: &Game,
    side: Color,
    rng: &mut StdRng,
) -> (BigRational, Choice, Choice) {
    let p = tb.probe(g.board(), g.position()).unwrap();
    let share = g.purse().share(side).unwrap();
    let bid = p.bid.abs().min(share);
    let (mine, want_hand_over) = match side {
        Color::White => (&p.white, p.zugzwang),
        Color::Black => (&p.black, p.zugzwang),
    };
    let mv = if mine.is_empty() {
        "-".to_string()
    } else {
        let best: Vec<&str> = mine
            .iter()
            .filter(|m| match side {
                Color::White => m.value == mine[0].value,
                Color::Black => m.upper() == mine[0].upper(),
            })
            .map(|m| m.uci.as_str())
            .collect();
        best[rng.random_range(0..best.len())].to_string()
    };
    let control = if want_hand_over {
        Choice::HandOver
    } else {
        Choice::Move(mv.clone())
    };
    (bid, control, Choice::Move(mv))
}

fn random_move(g: &Game, side: Color, rng: &mut StdRng) -> String {
    let moves = g.moves(side);
    moves[rng.random_range(0..moves.len())].clone()
}

/// The greedy player's move with chips: a move with the least threshold for its side.
fn greedy_chip_move(tb: &Tablebase, g: &Game, side: Color, rng: &mut StdRng) -> String {
    let Purse::Chips { total, .. } = g.purse() else {
        unreachable!()
    };
    let t = Total::new_lean(*total);
    let board = g.board();
    let list = match side {
        Color::White => rules::white_moves(board, g.position()),
        Color::Black => rules::black_moves(board, g.position()),
    };
    if list.is_empty() {
        return "-".into();
    }
    let scored: Vec<(u32, String)> = list
        .iter()
        .map(|m| {
            let th = tb.chips_after(board, &m.outcome, &t).unwrap();
            let w = match side {
                Color::White => th.win,
                Color::Black => th.win_of(&t, bidtb::internal::chips::Side::Black),
            };
            (w, m.uci(board))
        })
        .collect();
    let least = scored.iter().map(|s| s.0).min().unwrap();
    let best: Vec<&String> = scored
        .iter()
        .filter(|s| s.0 == least)
        .map(|s| &s.1)
        .collect();
    best[rng.random_range(0..best.len())].clone()
}

/// Plays one game to the end or to `cap` turns; the winner, if any.
fn play(
    tb: &Tablebase,
    mut g: Game,
    players: [Player; 2],
    rng: &mut StdRng,
    cap: usize,
) -> (Option<Color>, usize) {
    let mut sides = players.map(|player| Side {
        player,
        memory: MoneyMemory::default(),
        chips: RANKS.with(|r| r.clone()),
        rank: None,
        plan: None,
    });
    for _ in 0..cap {
        let (board, pos) = (g.board(), *g.position());
        match g.phase() {
            Phase::Over(w) => return (Some(w), g.history().len()),
            Phase::Bid => {
                let mut bids = Vec::new();
                for c in Color::BOTH {
                    let s = &mut sides[c.index()];
                    let plan = match (s.player, g.purse()) {
                        (Player::Engine, p @ Purse::Money { .. }) => {
                            let share = p.share(c).unwrap();
                            let plan = engine::money_plan(
                                tb,
                                board,
                                &pos,
                                c,
                                &share,
                                &mut s.memory,
                                g.visits(),
                            )
                            .unwrap();
                            (Bid::Money(plan.bid), plan.control, plan.own)
                        }
                        (Player::Engine, p @ Purse::Chips { total, .. }) => {
                            let seat = Seat {
                                tb,
                                board,
                                pos: &pos,
                                side: c,
                                total: *total,
                            };
                            let plan =
                                chip_engine::chip_plan(seat, p.holding(c).unwrap(), &mut s.chips)
                                    .unwrap();
                            // Winning, the rank falls at every turn within a material.
                            let material = pos.material().to_string();
                            if let Some(r) = plan.rank {
                                if let Some((m, last)) = &s.rank
                                    && *m == material
                                {
                                    assert!(r < *last, "rank {r} after {last} in {material}");
                                }
                                s.rank = Some((material, r));
                            }
                            (
                                Bid::Chips(plan.bid),
                                plan.control,
                                Choice::Move(String::new()),
                            )
                        }
                        (Player::Random, p @ Purse::Money { .. }) => {
                            let share = p.share(c).unwrap();
                            let mv = random_move(&g, c, rng);
                            let control = if rng.random_range(0..5) == 0 {
                                Choice::HandOver
                            } else {
                                Choice::Move(mv.clone())
                            };
                            (
                                Bid::Money(random_share(rng, &share)),
                                control,
                                Choice::Move(mv),
                            )
                        }
                        (Player::Random, p @ Purse::Chips { .. }) => {
                            let h = p.holding(c).unwrap();
                            let mut b = rng.random_range(0..=h);
                            if h % 2 == 0 {
                                b &= !1;
                            }
                            let control = if rng.random_range(0..5) == 0 {
                                Choice::HandOver
                            } else {
                                Choice::Move(String::new())
                            };
                            (Bid::Chips(b), control, Choice::Move(String::new()))
                        }
                        (Player::Greedy, Purse::Money { .. }) => {
                            let (bid, control, own) = greedy_money(tb, &g, c, rng);
                            (Bid::Money(bid), control, own)
                        }
                        (Player::Greedy, p @ Purse::Chips { .. }) => {
                            let h = p.holding(c).unwrap();
                            let (w, b) = (
                                p.holding(Color::White).unwrap(),
                                p.holding(Color::Black).unwrap(),
                            );
                            let marker = if w % 2 == 1 {
                                Color::White
                            } else {
                                Color::Black
                            };
                            let advice = tb.chip_advice(board, &pos, w / 2, b / 2, marker).unwrap();
                            let bid = advice
                                .advice
                                .iter()
                                .find(|a| a.side == c)
                                .map(|a| a.bid)
                                .unwrap_or((h / 3) & !1);
                            let hand = advice
                                .advice
                                .iter()
                                .find(|a| a.side == c)
                                .is_some_and(|a| a.then.is_none());
                            let control = if hand {
                                Choice::HandOver
                            } else {
                                Choice::Move(String::new())
                            };
                            (Bid::Chips(bid), control, Choice::Move(String::new()))
                        }
                        (_, Purse::Random) => unreachable!(),
                    };
                    bids.push(plan.0.clone());
                    s.plan = Some(plan);
                }
                g.bid(bids[0].clone(), bids[1].clone()).unwrap();
            }
            Phase::Control(c) => {
                let (_, control, _) = sides[c.index()].plan.clone().unwrap();
                match control {
                    Choice::HandOver => g.hand_over(c).unwrap(),
                    Choice::Move(_) => {
                        let mv = next_move(tb, &g, &mut sides, c, rng);
                        g.play(c, &mv).unwrap();
                    }
                }
            }
            Phase::Move(c) => {
                let mv = next_move(tb, &g, &mut sides, c, rng);
                g.play(c, &mv).unwrap();
            }
        }
    }
    let n = g.history().len();
    if std::env::var("PLAY_DEBUG").is_ok() {
        for t in &g.history()[..40.min(n)] {
            eprintln!("{}", t.to_json());
        }
    }
    match g.phase() {
        Phase::Over(w) => (Some(w), n),
        _ => (None, n),
    }
}

fn next_move(
    tb: &Tablebase,
    g: &Game,
    sides: &mut [Side; 2],
    c: Color,
    rng: &mut StdRng,
) -> String {
    let (board, pos) = (g.board(), *g.position());
    let s = &mut sides[c.index()];
    let planned = s.plan.take().and_then(|(_, _, own)| match own {
        Choice::Move(u) if !u.is_empty() => Some(u),
        _ => None,
    });
    match (s.player, g.purse()) {
        (Player::Random, _) => random_move(g, c, rng),
        (Player::Engine, p @ Purse::Chips { total, .. }) => {
            let h = p.holding(c).unwrap();
            let seat = Seat {
                tb,
                board,
                pos: &pos,
                side: c,
                total: *total,
            };
            chip_engine::chip_move(seat, h, &mut s.chips, g.visits()).unwrap()
        }
        (Player::Greedy, Purse::Chips { .. }) => greedy_chip_move(tb, g, c, rng),
        (Player::Engine, Purse::Random) => {
            engine::random_turn_move(tb, board, &pos, c, g.visits()).unwrap()
        }
        (Player::Greedy, Purse::Random) => match greedy_money(tb, g, c, rng).2 {
            Choice::Move(u) => u,
            Choice::HandOver => unreachable!(),
        },
        (_, Purse::Money { .. }) => planned.expect("a plan made at the bid"),
    }
}

/// The games of the "never loses a won game" tests: how many, and the turn cap (never
/// reached by a game the engine wins).
const GAMES: usize = 1000;
const CAP: usize = 5000;

/// The engine's winning value g (α for White, 1 − β for Black).
fn winning_value(tb: &Tablebase, board: Board, pos: &Position, side: Color) -> BigRational {
    let e = tb.entry(board, pos).unwrap();
    match side {
        Color::White => ratio(&e.value),
        Color::Black => BigRational::one() - ratio(e.upper()),
    }
}

#[test]
fn with_money_the_engine_wins_every_game_the_tables_give_it() {
    for (name, seed) in [("4x4", 2026), ("5x5", 2027)] {
        money_games(shared(name), Board::from_str(name).unwrap(), seed);
    }
}

/// [`GAMES`] games with money from random positions and shares where the engine wins.
fn money_games(tb: &Tablebase, board: Board, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut played: HashMap<(Player, bool), usize> = HashMap::new();
    let mut turns = Vec::new();
    while played.values().sum::<usize>() < 2 * GAMES {
        let pos = random_position(tb, board, &mut rng);
        let me = if rng.random_bool(0.5) {
            Color::White
        } else {
            Color::Black
        };
        let g_value = winning_value(tb, board, &pos, me);
        if g_value.is_zero() {
            continue;
        }
        // A share above the engine's threshold 1 − g, by a margin of up to a quarter.
        let need = BigRational::one() - &g_value;
        let room = (BigRational::one() - &need).min(BigRational::new(1.into(), 4.into()));
        let margin = &room * BigRational::new(rng.random_range(1..=1000).into(), 1000.into());
        let share = &need + margin;
        let white = match me {
            Color::White => share,
            Color::Black => BigRational::one() - share,
        };
        let opponent = if rng.random_bool(0.5) {
            Player::Random
        } else {
            Player::Greedy
        };
        let mut players = [Player::Engine; 2];
        players[me.other().index()] = opponent;
        let game = Game::new(board, pos, Purse::Money { white }, rng.random()).unwrap();
        let fen = fen::write(board, &pos);
        let (winner, n) = play(tb, game, players, &mut rng, CAP);
        assert_eq!(
            winner,
            Some(me),
            "{board} {fen}: the engine ({me:?}) against {opponent:?}"
        );
        *played.entry((opponent, me == Color::White)).or_default() += 1;
        turns.push(n);
    }
    turns.sort();
    eprintln!(
        "{board} money: {played:?}; turns: median {}, max {}",
        turns[turns.len() / 2],
        turns.last().unwrap()
    );
}

#[test]
fn with_chips_the_engine_wins_from_its_threshold() {
    for (name, seed) in [("4x4", 24), ("5x5", 25)] {
        chip_games(shared(name), Board::from_str(name).unwrap(), seed);
    }
}

/// [`GAMES`] games with chips from random positions and holdings where the engine wins.
fn chip_games(tb: &Tablebase, board: Board, seed: u64) {
    let total = Total::new_lean(CHIPS);
    let mut rng = StdRng::seed_from_u64(seed);
    let mut played: HashMap<Player, usize> = HashMap::new();
    let mut turns = Vec::new();
    while played.values().sum::<usize>() < 2 * GAMES {
        let pos = random_position(tb, board, &mut rng);
        let me = if rng.random_bool(0.5) {
            Color::White
        } else {
            Color::Black
        };
        let t = tb.chip_thresholds(board, &pos, CHIPS).unwrap();
        let need = match me {
            Color::White => t.win,
            Color::Black => t.win_of(&total, bidtb::internal::chips::Side::Black),
        };
        if need > 2 * CHIPS + 1 {
            continue;
        }
        // Holding its threshold, or a little more.
        let mine = (need + rng.random_range(0..3)).min(2 * CHIPS + 1);
        let white = match me {
            Color::White => mine,
            Color::Black => 2 * CHIPS + 1 - mine,
        };
        let opponent = if rng.random_bool(0.5) {
            Player::Random
        } else {
            Player::Greedy
        };
        let mut players = [Player::Engine; 2];
        players[me.other().index()] = opponent;
        let purse = Purse::Chips {
            total: CHIPS,
            white,
        };
        let game = Game::new(board, pos, purse, rng.random()).unwrap();
        let fen = fen::write(board, &pos);
        let (winner, n) = play(tb, game, players, &mut rng, CAP);
        assert_eq!(
            winner,
            Some(me),
            "{board} {fen}: the engine ({me:?}, holding {}) against {opponent:?}",
            total.show(mine)
        );
        *played.entry(opponent).or_default() += 1;
        turns.push(n);
    }
    turns.sort();
    eprintln!(
        "{board} chips: {played:?}; turns: median {}, max {}",
        turns[turns.len() / 2],
        turns.last().unwrap()
    );
}

/// Hoeffding: n games of a win-or-lose outcome put the frequency within
/// sqrt(ln(2/p) / 2n) of its expectation except with probability p.
fn hoeffding(n: usize, p: f64) -> f64 {
    ((2.0 / p).ln() / (2.0 * n as f64)).sqrt()
}

#[test]
fn in_random_turn_the_engine_wins_as_often_as_the_value_says() {
    let tb = shared("4x4");
    let board = Board::new(4, 4).unwrap();
    let n = 4000;
    let bound = hoeffding(n, 1e-6);
    for fen_text in ["3k/4/1K2/2R1", "k3/4/2K1/N3", "3k/4/4/K3", "1k2/p3/4/1K1R"] {
        let p = fen::parse(fen_text).unwrap();
        let e = tb.entry(board, &p.position).unwrap();
        assert!(e.beta.is_none(), "{fen_text}: a position with alpha = beta");
        let v = e.value.to_f64();
        let mut rng = StdRng::seed_from_u64(7);
        for players in [
            [Player::Engine; 2],
            [Player::Engine, Player::Random],
            [Player::Random, Player::Engine],
        ] {
            let mut wins = 0;
            for _ in 0..n {
                let game = Game::new(board, p.position, Purse::Random, rng.random()).unwrap();
                let (winner, _) = play(tb, game, players, &mut rng, CAP);
                assert!(winner.is_some(), "{fen_text}: a game of {players:?} ended");
                wins += usize::from(winner == Some(Color::White));
            }
            let f = wins as f64 / n as f64;
            eprintln!(
                "{fen_text} value {} ({v:.4}) {players:?}: White won {f:.4} of {n}",
                e.value.fraction()
            );
            match players {
                [Player::Engine, Player::Engine] => {
                    assert!((f - v).abs() <= bound, "{f} vs {v} ± {bound}")
                }
                [Player::Engine, _] => assert!(f >= v - bound, "{f} vs {v} - {bound}"),
                _ => assert!(f <= v + bound, "{f} vs {v} + {bound}"),
            }
        }
    }
}

/// The engine's sealed bid is made afresh for every round, from the position and holdings
/// of that round (the bid a person sees revealed is the engine's plan for that round), in
/// games a person wins by following the advice.
#[test]
fn the_engine_bids_afresh_every_round() {
    use bidtb::internal::play::{Match, Mode, Setup};
    let tb = shared("4x4");
    let board = Board::new(4, 4).unwrap();
    for seed in 0..20u64 {
        let setup = Setup {
            fen: "3k/4/1K2/2R1".into(),
            mode: Mode::Money,
            human: Color::White,
            share: Some(BigRational::new(3.into(), 4.into())),
            chips: None,
            tiebreak: Color::White,
            seed: Some(seed),
        };
        let mut m = Match::new(tb, &setup).unwrap();
        for _ in 0..200 {
            match m.game().phase() {
                Phase::Over(w) => {
                    assert_eq!(w, Color::White, "advice wins a won game");
                    break;
                }
                Phase::Bid => {
                    let pos = *m.game().position();
                    let share = m.game().purse().share(Color::Black).unwrap();
                    let expected = engine::money_plan(
                        tb,
                        board,
                        &pos,
                        Color::Black,
                        &share,
                        &mut MoneyMemory::default(),
                        m.game().visits(),
                    )
                    .unwrap();
                    let advice = m.advice(tb).unwrap();
                    let bid = advice["bid"].as_str().unwrap().to_string();
                    m.bid(tb, &bid).unwrap();
                    let revealed = match m.game().bids() {
                        Some((_, b)) => b.clone(),
                        None => m.game().history().last().unwrap().bids.clone().unwrap().1,
                    };
                    assert_eq!(revealed, Bid::Money(expected.bid), "seed {seed}");
                }
                Phase::Control(_) | Phase::Move(_) => {
                    let advice = m.advice(tb).unwrap();
                    let text = advice["text"].as_str().unwrap();
                    if text == "let the opponent move" {
                        m.hand_over(tb).unwrap();
                    } else {
                        m.play(tb, text.trim_start_matches("move ")).unwrap();
                    }
                }
            }
        }
        assert!(
            matches!(m.game().phase(), Phase::Over(_)),
            "seed {seed}: finished"
        );
    }
}

/// The ranks' Jacobi sweeps end at the chip files' thresholds (the same least fixed point),
/// for both sides of every material, and the staircase is consistent: a holding's rank is
/// the first sweep whose threshold it meets.
#[test]
fn chip_ranks_end_at_the_chip_files() {
    use bidtb::internal::chips::ranks::ranks;
    use bidtb::internal::chips::{Side, terminals};
    use bidtb::internal::graph::Graph;
    use bidtb::internal::index::Index;
    let tb = shared("4x4");
    let board = Board::new(4, 4).unwrap();
    let total = Total::new(CHIPS);
    for m in tb.materials(board) {
        let index = Index::new(board, &[m]);
        let graph = Graph::new(&index);
        let chips = tb.chip_table(board, m, CHIPS).unwrap();
        for side in [Side::White, Side::Black] {
            let exits: Vec<u16> = graph
                .exits()
                .iter()
                .map(|e| {
                    let i = tb
                        .table(board, e.material)
                        .unwrap()
                        .find(e.key)
                        .unwrap()
                        .unwrap();
                    let th = tb.chip_table(board, e.material, CHIPS).unwrap().get(i);
                    let th = if e.mirrored { th.mirrored(&total) } else { th };
                    th.win_of(&total, side) as u16
                })
                .collect();
            let terminal = terminals(&total, side, exits.iter().copied());
            let go = std::sync::atomic::AtomicBool::new(false);
            let r = ranks(&graph, &total, side, &terminal, &go).unwrap();
            assert_eq!(r.len(), chips.len());
            // Without the step's table (the step bisected), the same staircase.
            let lean = ranks(&graph, &Total::new_lean(CHIPS), side, &terminal, &go).unwrap();
            assert_eq!(lean.sweeps(), r.sweeps());
            for p in 0..r.len() {
                for s in 0..=r.sweeps() {
                    assert_eq!(lean.threshold_after(p, s), r.threshold_after(p, s));
                }
                assert_eq!(
                    r.threshold(p),
                    chips.get(p).win_of(&total, side),
                    "{m} {side:?} {p}"
                );
                for h in 0..=2 * CHIPS + 1 {
                    match r.rank(p, h) {
                        Some(s) => {
                            assert!(r.threshold_after(p, s) <= h);
                            assert!(s == 1 || r.threshold_after(p, s - 1) > h);
                        }
                        None => assert!(h < r.threshold(p)),
                    }
                }
            }
        }
    }
}

/// With chips, a person who follows the advice from a winning holding wins, and the
/// advice always names a move or a hand-over (at the bid, for a bid won, and after it).
#[test]
fn with_chips_the_advice_wins() {
    use bidtb::internal::play::{Match, Mode, Setup};
    let tb = shared("4x4");
    let board = Board::new(4, 4).unwrap();
    let mut rng = StdRng::seed_from_u64(99);
    let total = Total::new_lean(CHIPS);
    let mut games = 0;
    while games < 100 {
        let pos = random_position(tb, board, &mut rng);
        let t = tb.chip_thresholds(board, &pos, CHIPS).unwrap();
        let (need, human) = if rng.random_bool(0.5) {
            (t.win, Color::White)
        } else {
            (
                t.win_of(&total, bidtb::internal::chips::Side::Black),
                Color::Black,
            )
        };
        if need > 2 * CHIPS + 1 {
            continue;
        }
        let mine = need + rng.random_range(0..2).min(2 * CHIPS + 1 - need);
        let white = if human == Color::White {
            mine
        } else {
            2 * CHIPS + 1 - mine
        };
        let setup = Setup {
            fen: fen::write(board, &pos),
            mode: Mode::Chips,
            human,
            share: None,
            chips: Some((white / 2, CHIPS - white / 2)),
            tiebreak: if white % 2 == 1 {
                Color::White
            } else {
                Color::Black
            },
            seed: Some(games),
        };
        let mut m = Match::new(tb, &setup).unwrap();
        for _ in 0..200 {
            if let Phase::Over(_) = m.game().phase() {
                break;
            }
            let advice = m.advice(tb).unwrap();
            let text = advice["text"].as_str().unwrap().to_string();
            assert!(
                !text.ends_with("move ") && !text.contains("move ;"),
                "{text}"
            );
            match m.game().phase() {
                Phase::Bid => m.bid(tb, advice["bid"].as_str().unwrap()).unwrap(),
                _ if text == "let the opponent move" => m.hand_over(tb).unwrap(),
                _ => m.play(tb, text.trim_start_matches("move ")).unwrap(),
            }
        }
        assert_eq!(m.game().phase(), Phase::Over(human), "{}", setup.fen);
        games += 1;
    }
}
