//! The referee of one game: the position, the bankrolls, the phase (bids, the bid winner's
//! choice, a move, the end), and the history. It checks every input and changes nothing
//! when it refuses one; it knows nothing of who is the engine.

use std::collections::HashMap;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, Zero};
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use serde_json::json;

use crate::chips::Total;
use crate::fen;
use crate::geometry::Board;
use crate::material::Color;
use crate::position::Position;
use crate::rules::{self, Outcome};

/// Which game is played.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A fair coin picks the mover.
    Random,
    /// Bids of exact shares of the money.
    Money,
    /// Bids of whole chips with the tie-break marker.
    Chips,
}

impl Mode {
    /// `random`, `money` or `chips`.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Random => "random",
            Mode::Money => "money",
            Mode::Chips => "chips",
        }
    }

    /// From its name.
    pub fn parse(text: &str) -> Option<Mode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "random" | "random-turn" => Some(Mode::Random),
            "money" => Some(Mode::Money),
            "chips" => Some(Mode::Chips),
            _ => None,
        }
    }
}

/// The bankrolls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Purse {
    /// Random turn: no money.
    Random,
    /// White's share of the total money (Black holds the rest).
    Money {
        /// White's share, in [0, 1].
        white: BigRational,
    },
    /// Whole chips: White's holding 2w + m of `total` chips (Black holds 2·total + 1 − it).
    Chips {
        /// The total K.
        total: u32,
        /// White's holding index.
        white: u32,
    },
}

impl Purse {
    /// The game this purse is for.
    pub fn mode(&self) -> Mode {
        match self {
            Purse::Random => Mode::Random,
            Purse::Money { .. } => Mode::Money,
            Purse::Chips { .. } => Mode::Chips,
        }
    }

    /// A side's money share (money only).
    pub fn share(&self, side: Color) -> Option<BigRational> {
        match self {
            Purse::Money { white } => Some(match side {
                Color::White => white.clone(),
                Color::Black => BigRational::one() - white,
            }),
            _ => None,
        }
    }

    /// A side's chip holding index (chips only).
    pub fn holding(&self, side: Color) -> Option<u32> {
        match self {
            Purse::Chips { total, white } => Some(match side {
                Color::White => *white,
                Color::Black => 2 * total + 1 - white,
            }),
            _ => None,
        }
    }

    /// A side's bankroll as people write it: `3/8`, `100*`.
    pub fn show(&self, side: Color) -> String {
        match self {
            Purse::Random => "-".into(),
            Purse::Money { .. } => show_share(&self.share(side).expect("money")),
            Purse::Chips { total, .. } => {
                Total::new_lean(*total).show(self.holding(side).expect("chips"))
            }
        }
    }
}

/// A share as a fraction, `0` and `1` at the ends.
pub fn show_share(x: &BigRational) -> String {
    if x.is_integer() {
        x.numer().to_string()
    } else {
        format!("{}/{}", x.numer(), x.denom())
    }
}

/// A share's decimal expansion to six places (display only).
pub fn decimal_share(x: &BigRational) -> String {
    let scaled = (x * BigInt::from(1_000_000)).round();
    let n: BigInt = scaled.to_integer();
    let sign = if n.is_negative() { "-" } else { "" };
    let n = n.abs();
    let (int, frac) = (&n / 1_000_000, &n % 1_000_000);
    format!("{sign}{int}.{frac:0>6}")
}

/// A bid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Bid {
    /// A share of the total money.
    Money(BigRational),
    /// A chip bid as a holding index: 2 · chips, plus 1 with the marker.
    Chips(u32),
}

impl Bid {
    /// Read a bid as people type it: a fraction or decimal (`1/8`, `0.125`) with money,
    /// chips with an optional marker (`12`, `12*`) with chips.
    pub fn parse(mode: Mode, text: &str) -> Result<Bid, Refusal> {
        let t = text.trim();
        if let Err(why) = check_share_length(t) {
            return Err(Refusal::invalid(format!("bid: {why}")));
        }
        match mode {
            Mode::Random => Err(Refusal::invalid("random turn has no bids")),
            Mode::Money => parse_share(t).map(Bid::Money).ok_or_else(|| {
                Refusal::invalid(format!(
                    "bid {t:?}: give a share of the money as a fraction or decimal, e.g. 1/8 or 0.125"
                ))
            }),
            Mode::Chips => {
                let (digits, marker) = match t.strip_suffix('*') {
                    Some(d) => (d.trim(), 1),
                    None => (t, 0),
                };
                digits
                    .parse::<u32>()
                    .ok()
                    .filter(|&c| c <= crate::chips::MAX_TOTAL)
                    .map(|c| Bid::Chips(2 * c + marker))
                    .ok_or_else(|| {
                        Refusal::invalid(format!(
                            "bid {t:?}: give whole chips, with * to add the marker, e.g. 12 or 12*"
                        ))
                    })
            }
        }
    }

    /// The bid as people write it.
    pub fn show(&self) -> String {
        match self {
            Bid::Money(x) => show_share(x),
            Bid::Chips(b) => format!("{}{}", b / 2, if b % 2 == 1 { "*" } else { "" }),
        }
    }
}

/// The most digits a number typed or sent may have (a bid, a bankroll; each of a
/// fraction's two numbers): room for the longest value of any table so far (19,141
/// digits, 8x8), which a client may send as it got it. Reading a number, and the game's
/// arithmetic with it, cost time quadratic in its digits (1.5 million took over 100 s to
/// read; a bid of 50,000 digits made a round take 1.5 s): the bound keeps a round within
/// about a quarter of a second.
pub const MAX_DIGITS: usize = 20_000;

/// Whether `t` holds no number longer than [`MAX_DIGITS`] digits (nor more characters
/// than two such numbers and their punctuation could); else why not, naming the bound,
/// without quoting `t`.
pub fn check_share_length(t: &str) -> Result<(), String> {
    let longest = t
        .split(|c: char| !c.is_ascii_digit())
        .map(str::len)
        .max()
        .unwrap_or(0);
    if longest > MAX_DIGITS || t.len() > 2 * MAX_DIGITS + 16 {
        return Err(format!(
            "{} characters, a number of {longest} digits: a number here has at most \
             {MAX_DIGITS} digits",
            t.len()
        ));
    }
    Ok(())
}

/// A non-negative exact share from `p/q`, a decimal or an integer (None also for a
/// number longer than [`MAX_DIGITS`] digits: see [`check_share_length`]).
pub fn parse_share(t: &str) -> Option<BigRational> {
    let t = t.trim();
    if t.is_empty() || t.starts_with(['-', '+']) || check_share_length(t).is_err() {
        return None;
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((p, q)) = t.split_once('/') {
        let (p, q) = (p.trim(), q.trim());
        if !digits(p) || !digits(q) {
            return None;
        }
        let q: BigInt = q.parse().ok()?;
        if q.is_zero() {
            return None;
        }
        return Some(BigRational::new(p.parse().ok()?, q));
    }
    let (int, frac) = t.split_once('.').unwrap_or((t, ""));
    if !(digits(int) || (int.is_empty() && digits(frac))) || !(frac.is_empty() || digits(frac)) {
        return None;
    }
    if frac.len() > 200 {
        return None;
    }
    let whole: BigInt = format!("{int}{frac}").parse().ok()?;
    Some(BigRational::new(
        whole,
        BigInt::from(10).pow(frac.len() as u32),
    ))
}

/// Why an input was refused (the game is unchanged).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Whether the input itself is bad (else it comes at the wrong time).
    pub invalid: bool,
    /// What is wrong, for people.
    pub text: String,
}

impl Refusal {
    /// A bad input: not a number, above one's holding, an illegal move.
    pub fn invalid(text: impl Into<String>) -> Refusal {
        Refusal {
            invalid: true,
            text: text.into(),
        }
    }

    /// An input at the wrong time: out of turn, or after the end.
    pub fn conflict(text: impl Into<String>) -> Refusal {
        Refusal {
            invalid: false,
            text: text.into(),
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Where the game stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Both sides bid (money and chips).
    Bid,
    /// `side` won the bid and decides who moves: it moves, or hands the move over.
    Control(Color),
    /// `side` moves.
    Move(Color),
    /// `winner` captured the king.
    Over(Color),
}

/// One turn of the history.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Turn {
    /// The bids, White's and Black's (money and chips).
    pub bids: Option<(Bid, Bid)>,
    /// The coin, where one was tossed (random turn; equal money bids): whom it chose.
    pub coin: Option<Color>,
    /// Who won the bid (money and chips).
    pub control: Option<Color>,
    /// Whether the bid's winner handed the move over.
    pub handed_over: bool,
    /// Who moved.
    pub mover: Color,
    /// The move (`-` for a side without one).
    pub uci: String,
    /// The placement after it (None after a king capture).
    pub fen: Option<String>,
    /// The bankrolls after the turn, White's and Black's, as people write them.
    pub purse: (String, String),
}

impl Turn {
    /// As JSON.
    pub fn to_json(&self) -> serde_json::Value {
        json!({
            "bids": self.bids.as_ref().map(|(w, b)| json!({"white": w.show(), "black": b.show()})),
            "coin": self.coin.map(color_name),
            "control": self.control.map(color_name),
            "handed_over": self.handed_over,
            "mover": color_name(self.mover),
            "move": self.uci,
            "fen": self.fen,
            "purse": {"white": self.purse.0, "black": self.purse.1},
        })
    }
}

/// `white` or `black`.
pub fn color_name(c: Color) -> &'static str {
    match c {
        Color::White => "white",
        Color::Black => "black",
    }
}

/// One game: position, bankrolls, phase and history.
#[derive(Clone, Debug)]
pub struct Game {
    board: Board,
    position: Position,
    purse: Purse,
    phase: Phase,
    history: Vec<Turn>,
    /// This turn's bids and coin, until the move is made.
    pending: Pending,
    /// How often each placement has stood on the board.
    visits: HashMap<String, u32>,
    rng: Coin,
}

/// The coin: a seeded generator that can be copied (by replaying its tosses from the
/// seed), so that a game can be set back to where it was before an input.
#[derive(Debug)]
struct Coin {
    seed: u64,
    tosses: u64,
    rng: StdRng,
}

impl Coin {
    fn new(seed: u64) -> Coin {
        Coin {
            seed,
            tosses: 0,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// A fair toss.
    fn heads(&mut self) -> bool {
        self.tosses += 1;
        self.rng.random_bool(0.5)
    }
}

impl Clone for Coin {
    fn clone(&self) -> Coin {
        let mut c = Coin::new(self.seed);
        for _ in 0..self.tosses {
            c.heads();
        }
        c
    }
}

#[derive(Clone, Debug, Default)]
struct Pending {
    bids: Option<(Bid, Bid)>,
    coin: Option<Color>,
    control: Option<Color>,
    handed_over: bool,
}

impl Game {
    /// A game from `position` with `purse`; `seed` drives the coin.
    pub fn new(board: Board, position: Position, purse: Purse, seed: u64) -> Result<Game, Refusal> {
        match &purse {
            Purse::Money { white } if white.is_negative() || *white > BigRational::one() => {
                return Err(Refusal::invalid(
                    "a share of the money lies between 0 and 1",
                ));
            }
            Purse::Chips { total, white }
                if !(1..=crate::chips::MAX_TOTAL).contains(total) || *white > 2 * total + 1 =>
            {
                return Err(Refusal::invalid(format!(
                    "chips: the total must be 1 to {} and the holdings within it",
                    crate::chips::MAX_TOTAL
                )));
            }
            _ => {}
        }
        let mut game = Game {
            board,
            position,
            purse,
            phase: Phase::Bid,
            history: Vec::new(),
            pending: Pending::default(),
            visits: HashMap::new(),
            rng: Coin::new(seed),
        };
        game.visit();
        game.next_turn();
        Ok(game)
    }

    fn visit(&mut self) {
        *self
            .visits
            .entry(fen::write(self.board, &self.position))
            .or_insert(0) += 1;
    }

    /// Start a turn: bids, or the coin in random turn.
    fn next_turn(&mut self) {
        self.pending = Pending::default();
        self.phase = match self.purse {
            Purse::Random => {
                let side = self.toss();
                self.pending.coin = Some(side);
                Phase::Move(side)
            }
            _ => Phase::Bid,
        };
    }

    fn toss(&mut self) -> Color {
        if self.rng.heads() {
            Color::White
        } else {
            Color::Black
        }
    }

    /// The board.
    pub fn board(&self) -> Board {
        self.board
    }

    /// The position on the board.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The bankrolls.
    pub fn purse(&self) -> &Purse {
        &self.purse
    }

    /// Where the game stands.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// The turns played.
    pub fn history(&self) -> &[Turn] {
        &self.history
    }

    /// How often each placement has stood on the board (for the engine's tie-breaks).
    pub fn visits(&self) -> &HashMap<String, u32> {
        &self.visits
    }

    /// This turn's coin, if one was tossed.
    pub fn coin(&self) -> Option<Color> {
        self.pending.coin
    }

    /// This turn's bids, once both are in.
    pub fn bids(&self) -> Option<&(Bid, Bid)> {
        self.pending.bids.as_ref()
    }

    /// The legal moves of `side`, in coordinate notation (`-` alone when it has none).
    pub fn moves(&self, side: Color) -> Vec<String> {
        let list = match side {
            Color::White => rules::white_moves(self.board, &self.position),
            Color::Black => rules::black_moves(self.board, &self.position),
        };
        if list.is_empty() {
            return vec!["-".into()];
        }
        list.iter().map(|m| m.uci(self.board)).collect()
    }

    fn check_bid(&self, side: Color, bid: &Bid) -> Result<(), Refusal> {
        let name = color_name(side);
        match (bid, &self.purse) {
            (Bid::Money(x), Purse::Money { .. }) => {
                let share = self.purse.share(side).expect("money");
                if x.is_negative() {
                    return Err(Refusal::invalid(format!("{name}'s bid is negative")));
                }
                if *x > share {
                    return Err(Refusal::invalid(format!(
                        "{name} bids {} but holds {}",
                        show_share(x),
                        show_share(&share)
                    )));
                }
            }
            (Bid::Chips(b), Purse::Chips { total, .. }) => {
                let h = self.purse.holding(side).expect("chips");
                let t = Total::new_lean(*total);
                if b % 2 == 1 && h.is_multiple_of(2) {
                    return Err(Refusal::invalid(format!(
                        "{name} bids {} but does not hold the marker",
                        bid.show()
                    )));
                }
                if *b > h {
                    return Err(Refusal::invalid(format!(
                        "{name} bids {} but holds {}",
                        bid.show(),
                        t.show(h)
                    )));
                }
            }
            _ => return Err(Refusal::invalid("that bid is not for this game")),
        }
        Ok(())
    }

    /// Both sealed bids: the higher wins (chips: docs/src/guide/chips.md; money: equal bids go to the
    /// coin), pays its bid to the other, and decides who moves. Returns the winner.
    pub fn bid(&mut self, white: Bid, black: Bid) -> Result<Color, Refusal> {
        if self.phase != Phase::Bid {
            return Err(self.out_of_turn("bid"));
        }
        self.check_bid(Color::White, &white)?;
        self.check_bid(Color::Black, &black)?;
        let winner = match (&white, &black, &mut self.purse) {
            (Bid::Money(bw), Bid::Money(bb), Purse::Money { .. }) => {
                let w = match bw.cmp(bb) {
                    std::cmp::Ordering::Greater => Color::White,
                    std::cmp::Ordering::Less => Color::Black,
                    std::cmp::Ordering::Equal => {
                        let c = if self.rng.heads() {
                            Color::White
                        } else {
                            Color::Black
                        };
                        self.pending.coin = Some(c);
                        c
                    }
                };
                if let Purse::Money { white: share } = &mut self.purse {
                    match w {
                        Color::White => *share -= bw,
                        Color::Black => *share += bb,
                    }
                }
                w
            }
            (Bid::Chips(bw), Bid::Chips(bb), Purse::Chips { white: h, .. }) => {
                let white_marker = *h % 2 == 1;
                if (white_marker && bw > bb) || (!white_marker && bw >= bb) {
                    *h -= bw;
                    Color::White
                } else {
                    *h += bb;
                    Color::Black
                }
            }
            _ => unreachable!("bids checked against the purse"),
        };
        self.pending.bids = Some((white, black));
        self.pending.control = Some(winner);
        self.phase = Phase::Control(winner);
        Ok(winner)
    }

    /// The bid's winner hands the move over.
    pub fn hand_over(&mut self, side: Color) -> Result<(), Refusal> {
        if self.phase != Phase::Control(side) {
            return Err(self.out_of_turn("hand the move over"));
        }
        self.pending.handed_over = true;
        self.phase = Phase::Move(side.other());
        Ok(())
    }

    /// `side` makes `uci` (after winning the bid, keeping the move; or when it is to move).
    pub fn play(&mut self, side: Color, uci: &str) -> Result<(), Refusal> {
        match self.phase {
            Phase::Move(s) | Phase::Control(s) if s == side => {}
            _ => return Err(self.out_of_turn("move")),
        }
        let uci = uci.trim().to_ascii_lowercase();
        let list = match side {
            Color::White => rules::white_moves(self.board, &self.position),
            Color::Black => rules::black_moves(self.board, &self.position),
        };
        let outcome = if list.is_empty() && uci == "-" {
            Outcome::Continue(self.position)
        } else {
            let Some(m) = list.iter().find(|m| m.uci(self.board) == uci) else {
                let legal = self.moves(side).join(" ");
                return Err(Refusal::invalid(format!(
                    "{uci:?} is not a legal move of {} here; legal: {legal}",
                    color_name(side)
                )));
            };
            m.outcome
        };
        let fen = match &outcome {
            Outcome::Continue(p) => {
                self.position = *p;
                Some(fen::write(self.board, p))
            }
            _ => None,
        };
        let pending = std::mem::take(&mut self.pending);
        self.history.push(Turn {
            bids: pending.bids,
            coin: pending.coin,
            control: pending.control,
            handed_over: pending.handed_over,
            mover: side,
            uci,
            fen,
            purse: (self.purse.show(Color::White), self.purse.show(Color::Black)),
        });
        match outcome {
            Outcome::WhiteWins => self.phase = Phase::Over(Color::White),
            Outcome::BlackWins => self.phase = Phase::Over(Color::Black),
            Outcome::Continue(_) => {
                self.visit();
                self.next_turn();
            }
        }
        Ok(())
    }

    /// The refusal of an input that comes at the wrong time (`what`: "bid", "move").
    pub fn out_of_turn(&self, what: &str) -> Refusal {
        Refusal::conflict(match self.phase {
            Phase::Over(w) => format!("the game is over: {} captured the king", color_name(w)),
            Phase::Bid => format!("cannot {what} now: both sides bid first"),
            Phase::Control(s) => format!(
                "cannot {what} now: {} won the bid and decides who moves",
                color_name(s)
            ),
            Phase::Move(s) => format!("cannot {what} now: {} is to move", color_name(s)),
        })
    }
}
