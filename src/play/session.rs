//! A game between a person and the engine: the referee ([`Game`]) with the engine playing
//! one side. After every input of the person the engine acts until the person is to act
//! again (or the game is over); its bid is sealed before the person's is asked for, and
//! shown once both are in. The state, the assessment against the bankrolls and the advice
//! for the person are JSON for the server and the explorer; the terminal prints them.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed};
use serde_json::json;

use super::chips::{self as chip_engine, ChipMemory, Seat};
use super::engine::{self, Choice, MoneyMemory};
use super::game::{Bid, Game, Mode, Phase, Purse, Refusal, color_name, decimal_share, show_share};
use crate::chips::Total;
use crate::error::Error;
use crate::fen;
use crate::material::Color;
use crate::probe::Tablebase;
use crate::probe::chips::ChipOutcome;

/// How a game starts.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The starting position.
    pub fen: String,
    /// The game.
    pub mode: Mode,
    /// The person's colour.
    pub human: Color,
    /// Money: the person's share of the money (1/2 by default).
    pub share: Option<BigRational>,
    /// Chips: White's and Black's chips (100:100 by default).
    pub chips: Option<(u32, u32)>,
    /// Chips: who holds the tie-break marker (White by default).
    pub tiebreak: Color,
    /// The coin's seed (random when absent).
    pub seed: Option<u64>,
}

/// Why an input failed: refused by the rules (the game unchanged), or the tables failed.
#[derive(Debug)]
pub enum PlayError {
    /// The input was refused.
    Refused(Refusal),
    /// Reading the tables failed (a missing or damaged table, a bad FEN at the start).
    Tables(Error),
}

impl From<Refusal> for PlayError {
    fn from(r: Refusal) -> Self {
        PlayError::Refused(r)
    }
}

impl From<Error> for PlayError {
    fn from(e: Error) -> Self {
        PlayError::Tables(e)
    }
}

impl std::fmt::Display for PlayError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlayError::Refused(r) => write!(f, "{r}"),
            PlayError::Tables(e) => write!(f, "{e}"),
        }
    }
}

/// The engine's plan for the bidding round under way.
#[derive(Clone, Debug)]
struct Sealed {
    /// The turn it is for (the number of turns played before it).
    turn: usize,
    bid: Bid,
    control: Choice,
    /// The move it makes if it moves this turn (money).
    own: Option<Choice>,
}

/// A game of a person against the engine.
#[derive(Debug)]
pub struct Match {
    game: Game,
    human: Color,
    memory: MoneyMemory,
    chip_memory: ChipMemory,
    sealed: Option<Sealed>,
}

impl Match {
    /// Start a game and let the engine act if it acts first.
    pub fn new(tb: &Tablebase, setup: &Setup) -> Result<Match, PlayError> {
        Match::with_ranks(tb, setup, ChipMemory::default())
    }

    /// [`Match::new`], sharing the chip ranks of `ranks` with other games of the same tables.
    pub fn with_ranks(
        tb: &Tablebase,
        setup: &Setup,
        ranks: ChipMemory,
    ) -> Result<Match, PlayError> {
        let parsed = fen::parse(&setup.fen)?;
        let (board, position) = (parsed.board, parsed.position);
        // The position must be in the tables (and, with chips, in the chip files).
        tb.entry(board, &position)?;
        let purse = match setup.mode {
            Mode::Random => Purse::Random,
            Mode::Money => {
                let half = BigRational::new(BigInt::from(1), BigInt::from(2));
                let mine = setup.share.clone().unwrap_or(half);
                if mine.is_negative() || mine > BigRational::one() {
                    return Err(Refusal::invalid("the bankroll is a share between 0 and 1").into());
                }
                Purse::Money {
                    white: match setup.human {
                        Color::White => mine,
                        Color::Black => BigRational::one() - mine,
                    },
                }
            }
            Mode::Chips => {
                let (w, b) = setup.chips.unwrap_or((100, 100));
                let total = w
                    .checked_add(b)
                    .filter(|t| (1..=crate::chips::MAX_TOTAL).contains(t))
                    .ok_or_else(|| {
                        Refusal::invalid(format!(
                            "chips {w}:{b}: the total must be 1 to {}",
                            crate::chips::MAX_TOTAL
                        ))
                    })?;
                tb.chip_thresholds(board, &position, total)?;
                Purse::Chips {
                    total,
                    white: 2 * w + u32::from(setup.tiebreak == Color::White),
                }
            }
        };
        let seed = setup.seed.unwrap_or_else(rand::random);
        let mut m = Match {
            game: Game::new(board, position, purse, seed)?,
            human: setup.human,
            memory: MoneyMemory::default(),
            chip_memory: ranks,
            sealed: None,
        };
        m.advance(tb)?;
        Ok(m)
    }

    /// The referee's game.
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// The person's colour.
    pub fn human(&self) -> Color {
        self.human
    }

    fn engine(&self) -> Color {
        self.human.other()
    }

    /// Apply an input of the person with the engine's answer, or nothing: an input whose
    /// answer fails (the engine's chip ranks not yet computed, a table that fails) leaves
    /// the game as it was, so that the same input can be sent again.
    fn whole(
        &mut self,
        input: impl FnOnce(&mut Match) -> Result<(), PlayError>,
    ) -> Result<(), PlayError> {
        let before = (self.game.clone(), self.sealed.clone());
        let done = input(self);
        if done.is_err() {
            (self.game, self.sealed) = before;
        }
        done
    }

    /// The person's bid, as typed. The engine's sealed bid goes in with it.
    pub fn bid(&mut self, tb: &Tablebase, text: &str) -> Result<(), PlayError> {
        self.whole(|m| m.bid_now(tb, text))
    }

    fn bid_now(&mut self, tb: &Tablebase, text: &str) -> Result<(), PlayError> {
        if self.game.phase() != Phase::Bid {
            return Err(self.game.out_of_turn("bid").into());
        }
        let mine = Bid::parse(self.game.purse().mode(), text)?;
        let theirs = self.sealed.as_ref().expect("sealed at the bid").bid.clone();
        let (white, black) = match self.human {
            Color::White => (mine, theirs),
            Color::Black => (theirs, mine),
        };
        self.game.bid(white, black)?;
        self.advance(tb)
    }

    /// The person's move (after winning the bid, or when it is theirs to make).
    pub fn play(&mut self, tb: &Tablebase, uci: &str) -> Result<(), PlayError> {
        self.whole(|m| {
            m.game.play(m.human, uci)?;
            m.advance(tb)
        })
    }

    /// The person, having won the bid, lets the engine move.
    pub fn hand_over(&mut self, tb: &Tablebase) -> Result<(), PlayError> {
        self.whole(|m| {
            m.game.hand_over(m.human)?;
            m.advance(tb)
        })
    }

    /// Let the engine act until the person is to act or the game is over.
    fn advance(&mut self, tb: &Tablebase) -> Result<(), PlayError> {
        let me = self.engine();
        let (board, mode) = (self.game.board(), self.game.purse().mode());
        // Each pass makes one input; a game cannot run on without the person for long
        // except in random turn, where the coin must keep choosing the engine.
        for _ in 0..100_000 {
            let pos = *self.game.position();
            match self.game.phase() {
                Phase::Over(_) => return Ok(()),
                Phase::Bid => {
                    let turn = self.game.history().len();
                    if self.sealed.as_ref().is_none_or(|s| s.turn != turn) {
                        self.sealed = Some(self.seal(tb)?);
                    }
                    return Ok(());
                }
                Phase::Control(s) | Phase::Move(s) if s != me => return Ok(()),
                Phase::Control(_) => {
                    let sealed = self.sealed.take().expect("sealed before the bid");
                    match sealed.control {
                        Choice::HandOver => self.game.hand_over(me)?,
                        Choice::Move(uci) => {
                            let uci = match (mode, uci.is_empty()) {
                                (Mode::Chips, _) | (_, true) => self.chip_or_own_move(tb, None)?,
                                _ => uci,
                            };
                            self.game.play(me, &uci)?;
                        }
                    }
                }
                Phase::Move(_) => {
                    let turn = self.game.history().len();
                    let uci = match mode {
                        Mode::Random => {
                            engine::random_turn_move(tb, board, &pos, me, self.game.visits())?
                        }
                        _ => {
                            let own = self
                                .sealed
                                .take()
                                .filter(|s| s.turn == turn)
                                .and_then(|s| s.own);
                            self.chip_or_own_move(tb, own)?
                        }
                    };
                    self.game.play(me, &uci)?;
                }
            }
        }
        Ok(())
    }

    /// The engine's move when it moves: with chips chosen with its holding now; with money
    /// the move of its plan.
    fn chip_or_own_move(
        &mut self,
        tb: &Tablebase,
        own: Option<Choice>,
    ) -> Result<String, PlayError> {
        let me = self.engine();
        let (board, pos) = (self.game.board(), *self.game.position());
        Ok(match self.game.purse() {
            p @ Purse::Chips { total, .. } => chip_engine::chip_move(
                Seat {
                    tb,
                    board,
                    pos: &pos,
                    side: me,
                    total: *total,
                },
                p.holding(me).expect("chips"),
                &mut self.chip_memory,
                self.game.visits(),
            )?,
            _ => match own {
                Some(Choice::Move(u)) if !u.is_empty() => u,
                _ => engine::random_turn_move(tb, board, &pos, me, self.game.visits())?,
            },
        })
    }

    /// The engine's bid and plan for this round.
    fn seal(&mut self, tb: &Tablebase) -> Result<Sealed, Error> {
        let me = self.engine();
        let (board, pos) = (self.game.board(), *self.game.position());
        match self.game.purse().clone() {
            p @ Purse::Money { .. } => {
                let share = p.share(me).expect("money");
                let plan = engine::money_plan(
                    tb,
                    board,
                    &pos,
                    me,
                    &share,
                    &mut self.memory,
                    self.game.visits(),
                )?;
                Ok(Sealed {
                    turn: self.game.history().len(),
                    bid: Bid::Money(plan.bid),
                    control: plan.control,
                    own: Some(plan.own),
                })
            }
            p @ Purse::Chips { total, .. } => {
                let seat = Seat {
                    tb,
                    board,
                    pos: &pos,
                    side: me,
                    total,
                };
                let plan = chip_engine::chip_plan(
                    seat,
                    p.holding(me).expect("chips"),
                    &mut self.chip_memory,
                )?;
                Ok(Sealed {
                    turn: self.game.history().len(),
                    bid: Bid::Chips(plan.bid),
                    control: plan.control,
                    own: None,
                })
            }
            Purse::Random => unreachable!("no bids in random turn"),
        }
    }

    /// Who is winning against the bankrolls, and by how much (JSON).
    pub fn assessment(&self, tb: &Tablebase) -> Result<serde_json::Value, Error> {
        let (board, pos) = (self.game.board(), *self.game.position());
        if let Phase::Over(w) = self.game.phase() {
            return Ok(
                json!({"text": format!("{} captured the king", title(w)), "winner": color_name(w)}),
            );
        }
        let e = tb.entry(board, &pos)?;
        let alpha = engine::ratio(&e.value);
        let beta = engine::ratio(e.upper());
        let mut out = json!({
            "value": e.value.fraction(),
            "value_decimal": decimal_share(&alpha),
        });
        if e.beta.is_some() {
            out["beta"] = json!(show_share(&beta));
        }
        match self.game.purse() {
            Purse::Random => {
                out["text"] = json!(if e.beta.is_some() {
                    format!(
                        "White wins with probability between {} and {} under best play",
                        decimal_share(&alpha),
                        decimal_share(&beta)
                    )
                } else {
                    format!(
                        "White wins with probability {} ({}) under best play",
                        e.value.fraction(),
                        decimal_share(&alpha)
                    )
                });
            }
            p @ Purse::Money { .. } => {
                let w = p.share(Color::White).expect("money");
                let b = p.share(Color::Black).expect("money");
                let need_white = BigRational::one() - &alpha;
                let (leader, margin) = if w > need_white {
                    (Some(Color::White), &w - &need_white)
                } else if b > beta {
                    (Some(Color::Black), &b - &beta)
                } else {
                    (None, BigRational::from_integer(0.into()))
                };
                out["white_needs"] = json!(format!("more than {}", show_share(&need_white)));
                out["black_needs"] = json!(format!("more than {}", show_share(&beta)));
                out["leader"] = json!(leader.map(color_name));
                out["margin"] = json!(show_share(&margin));
                out["margin_decimal"] = json!(decimal_share(&margin));
                out["text"] = json!(match leader {
                    Some(c) => format!(
                        "{} wins by force: {} over what it needs ({})",
                        title(c),
                        decimal_share(&margin),
                        show_share(&margin)
                    ),
                    None => format!(
                        "neither side can force a capture: White needs more than {}, Black more than {}",
                        decimal_share(&need_white),
                        decimal_share(&beta)
                    ),
                });
            }
            p @ Purse::Chips { total, .. } => {
                let (w, b) = (
                    p.holding(Color::White).expect("chips"),
                    p.holding(Color::Black).expect("chips"),
                );
                let advice = tb.chip_advice(
                    board,
                    &pos,
                    w / 2,
                    b / 2,
                    if w % 2 == 1 {
                        Color::White
                    } else {
                        Color::Black
                    },
                )?;
                let t = Total::new_lean(*total);
                let (win_w, win_b) = advice.thresholds.wins(&t);
                let text = advice.outcome.describe();
                let margin = match advice.outcome {
                    ChipOutcome::WhiteWins => Some(w - win_w),
                    ChipOutcome::BlackWins => Some(b - win_b),
                    ChipOutcome::Draw => None,
                };
                out["white_needs"] = json!(t.show(win_w));
                out["black_needs"] = json!(t.show(win_b));
                out["leader"] = json!(advice.outcome.winner().map(color_name));
                out["text"] = json!(match margin {
                    Some(m) => format!("{text}: {} holdings over what it needs", m),
                    None => format!(
                        "{text}: White needs {} to win, Black {}",
                        t.show(win_w),
                        t.show(win_b)
                    ),
                });
            }
        }
        Ok(out)
    }

    /// What the engine would do in the person's place now (JSON).
    pub fn advice(&mut self, tb: &Tablebase) -> Result<serde_json::Value, Error> {
        let me = self.human;
        let (board, pos) = (self.game.board(), *self.game.position());
        let visits = self.game.visits();
        let text_of = |c: &Choice| match c {
            Choice::Move(u) => format!("move {u}"),
            Choice::HandOver => "let the opponent move".to_string(),
        };
        Ok(match (self.game.phase(), self.game.purse()) {
            (Phase::Over(_), _) => json!(null),
            (_, Purse::Random) => {
                let m = Choice::Move(engine::random_turn_move(tb, board, &pos, me, visits)?);
                json!({"move": text_of(&m), "text": format!("if the coin picks you: {}", text_of(&m))})
            }
            (phase, p @ Purse::Money { .. }) => {
                let share = p.share(me).expect("money");
                let plan = engine::money_plan(
                    tb,
                    board,
                    &pos,
                    me,
                    &share,
                    &mut MoneyMemory::default(),
                    visits,
                )?;
                let now = match phase {
                    Phase::Bid => format!(
                        "bid {} ({}); if you win it, {}",
                        show_share(&plan.bid),
                        decimal_share(&plan.bid),
                        text_of(&plan.control)
                    ),
                    Phase::Control(_) => text_of(&plan.control),
                    _ => text_of(&plan.own),
                };
                json!({"bid": show_share(&plan.bid), "then": text_of(&plan.control), "move": text_of(&plan.own), "text": now})
            }
            (phase, p @ Purse::Chips { total, .. }) => {
                let h = p.holding(me).expect("chips");
                let total = *total;
                let seat = Seat {
                    tb,
                    board,
                    pos: &pos,
                    side: me,
                    total,
                };
                let plan = chip_engine::chip_plan(seat, h, &mut self.chip_memory)?;
                let t = Total::new_lean(total);
                let visits = self.game.visits();
                let then = match &plan.control {
                    Choice::Move(_) => Choice::Move(chip_engine::chip_move(
                        seat,
                        h - plan.bid,
                        &mut self.chip_memory,
                        visits,
                    )?),
                    Choice::HandOver => Choice::HandOver,
                };
                let now = match phase {
                    Phase::Bid => format!(
                        "bid {}; if you win it, {}",
                        t.show(plan.bid),
                        text_of(&then)
                    ),
                    Phase::Control(_) => text_of(&chip_engine::chip_control(
                        seat,
                        h,
                        &mut self.chip_memory,
                        visits,
                    )?),
                    _ => format!(
                        "move {}",
                        chip_engine::chip_move(seat, h, &mut self.chip_memory, visits)?
                    ),
                };
                json!({"bid": t.show(plan.bid), "then": text_of(&then), "text": now})
            }
        })
    }

    /// The whole state as JSON; with `advice`, the engine's advice for the person.
    pub fn to_json(&mut self, tb: &Tablebase, advice: bool) -> Result<serde_json::Value, Error> {
        let g = &self.game;
        let phase = g.phase();
        let (name, to_act, winner) = match phase {
            Phase::Bid => ("bid", None, None),
            Phase::Control(s) => ("control", Some(s), None),
            Phase::Move(s) => ("move", Some(s), None),
            Phase::Over(w) => ("over", None, Some(w)),
        };
        let human_acts = match phase {
            Phase::Bid => true,
            Phase::Control(s) | Phase::Move(s) => s == self.human,
            Phase::Over(_) => false,
        };
        let purse = g.purse();
        let mut out = json!({
            "board": g.board().to_string(),
            "fen": fen::write(g.board(), g.position()),
            "mode": purse.mode().name(),
            "human": color_name(self.human),
            "engine": color_name(self.engine()),
            "phase": name,
            "to_act": to_act.map(color_name),
            "your_turn": human_acts,
            "winner": winner.map(color_name),
            "purse": {"white": purse.show(Color::White), "black": purse.show(Color::Black)},
            "coin": g.coin().map(color_name),
            "bids": g.bids().map(|(w, b)| json!({"white": w.show(), "black": b.show()})),
            "moves": match phase {
                Phase::Control(s) | Phase::Move(s) if s == self.human => json!(g.moves(s)),
                _ => json!([]),
            },
            "may_hand_over": phase == Phase::Control(self.human),
            "history": g.history().iter().map(|t| t.to_json()).collect::<Vec<_>>(),
            "assessment": self.assessment(tb)?,
        });
        if let Purse::Money { .. } = purse {
            let d = |c| decimal_share(&purse.share(c).expect("money"));
            out["purse"]["white_decimal"] = json!(d(Color::White));
            out["purse"]["black_decimal"] = json!(d(Color::Black));
        }
        if let Purse::Chips { total, .. } = purse {
            out["purse"]["total"] = json!(total);
        }
        if advice {
            out["advice"] = self.advice(tb)?;
        }
        Ok(out)
    }
}

/// `White` or `Black`.
pub fn title(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}
