//! The engine's decisions, read from the tables: its move, its bid, and what it does with a
//! bid won (move, or hand the move over), in each of the three games (docs/src/guide/play.md).
//!
//! Everything is seen from one side. For that side a position has a *winning value* g (α
//! for White, 1 − β for Black: the game where play that never ends counts against the side)
//! with its progress level (T for White, T′ for Black), and a *safety value* u (β for
//! White, 1 − α for Black: play that never ends counts for it). With money, the side holding
//! share s wins by force when s > 1 − g(P) and cannot lose when s ≥ 1 − u(P).
//!
//! **Winning with money.** Richman's bid (half the gap between the side's best move and the
//! opponent's) keeps the side above its threshold but, in a game that need not end, does
//! not by itself make progress. The engine adds to it a small premium δₖ = c · 4⁻ᵏ, where k
//! is the position's progress level and c half of its first surplus, and takes the control
//! it buys toward the closure's next level (its own best move where that goes lower, else
//! handing the move over, where every opposing move goes lower). Every turn then either
//! makes progress, costing the surplus at most 3δₖ, or gains it at least δₖ; with the
//! premiums falling by four per level, the surplus less the cost of the remaining descent
//! never decreases and grows by at least c · 4⁻ᴸ at every turn without progress, so the
//! game ends in a capture whatever the opponent does (docs/src/guide/play.md has the argument).

use std::collections::HashMap;

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed};

use crate::error::Error;
use crate::fen;
use crate::geometry::Board;
use crate::material::Color;
use crate::position::Position;
use crate::probe::{Entry, Tablebase};
use crate::rules::{self, Move, Outcome};
use crate::value::Value;

/// What the winner of a bid does with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Make this move (coordinate notation; `-` for a side without a move).
    Move(String),
    /// Let the opponent move.
    HandOver,
}

/// An exact value as a signed rational.
pub fn ratio(v: &Value) -> BigRational {
    BigRational::new(
        BigInt::from(v.numer().into_owned()),
        BigInt::from(v.denom().into_owned()),
    )
}

/// Which of a side's two values a decision reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Goal {
    /// Win: α for White, 1 − β for Black, with the side's progress levels.
    Win,
    /// Not lose: β for White, 1 − α for Black.
    Safe,
}

/// A position as the side sees it.
fn seen(e: &Entry, side: Color, goal: Goal) -> (BigRational, Option<u32>) {
    let one = BigRational::one();
    match (side, goal) {
        (Color::White, Goal::Win) => (ratio(&e.value), e.level_white),
        (Color::White, Goal::Safe) => (ratio(e.upper()), e.level_white),
        (Color::Black, Goal::Win) => (one - ratio(e.upper()), e.level_black),
        (Color::Black, Goal::Safe) => (one - ratio(&e.value), e.level_black),
    }
}

/// One move, with what it leads to as the deciding side sees it.
#[derive(Clone, Debug)]
struct Option_ {
    uci: String,
    value: BigRational,
    level: Option<u32>,
    captures_king: bool,
    fen: Option<String>,
}

fn options(
    tb: &Tablebase,
    board: Board,
    pos: &Position,
    mover: Color,
    side: Color,
    goal: Goal,
) -> Result<Vec<Option_>, Error> {
    let moves = match mover {
        Color::White => rules::white_moves(board, pos),
        Color::Black => rules::black_moves(board, pos),
    };
    moves
        .iter()
        .map(|m: &Move| {
            let (value, level) = seen(&tb.entry_after(board, &m.outcome)?, side, goal);
            Ok(Option_ {
                uci: m.uci(board),
                value,
                level,
                captures_king: !matches!(m.outcome, Outcome::Continue(_)),
                fen: match &m.outcome {
                    Outcome::Continue(p) => Some(fen::write(board, p)),
                    _ => None,
                },
            })
        })
        .collect()
}

/// The side's best of its options: greatest value, then a king capture, then lowest level,
/// then the fewest earlier visits of the position it leads to, then the name.
fn best<'a>(list: &'a [Option_], visits: &HashMap<String, u32>) -> Option<&'a Option_> {
    let key = |o: &Option_| {
        (
            !o.captures_king,
            o.level.unwrap_or(u32::MAX),
            o.fen
                .as_ref()
                .and_then(|f| visits.get(f))
                .copied()
                .unwrap_or(0),
        )
    };
    list.iter().min_by(|a, b| {
        b.value
            .cmp(&a.value)
            .then_with(|| key(a).cmp(&key(b)))
            .then_with(|| a.uci.cmp(&b.uci))
    })
}

/// A position's choices for one side under one goal: the side's best move, the best it
/// can get from moving (a_own) and from letting the opponent move (a_opp), and whether
/// every opposing move reaches a lower level than the position's.
struct Outlook {
    value: BigRational,
    level: Option<u32>,
    own: Option<Option_>,
    a_own: BigRational,
    a_opp: BigRational,
    opp_all_lower: bool,
}

fn outlook(
    tb: &Tablebase,
    board: Board,
    pos: &Position,
    side: Color,
    goal: Goal,
    visits: &HashMap<String, u32>,
) -> Result<Outlook, Error> {
    let (value, level) = seen(&tb.entry(board, pos)?, side, goal);
    let own = options(tb, board, pos, side, side, goal)?;
    let opp = options(tb, board, pos, side.other(), side, goal)?;
    let own_best = best(&own, visits).cloned();
    // A side without a move keeps the position: its option is the position's value.
    let a_own = own_best.as_ref().map_or(value.clone(), |o| o.value.clone());
    let a_opp = opp.iter().map(|o| &o.value).min().unwrap_or(&value).clone();
    let lower = |l: Option<u32>| matches!((l, level), (Some(a), Some(k)) if a < k);
    Ok(Outlook {
        opp_all_lower: !opp.is_empty() && opp.iter().all(|o| lower(o.level)),
        value,
        level,
        own: own_best,
        a_own,
        a_opp,
    })
}

impl Outlook {
    fn own_move(&self) -> Choice {
        Choice::Move(self.own.as_ref().map_or("-".into(), |o| o.uci.clone()))
    }

    /// The better of moving and handing over (moving where they are equal).
    fn better_control(&self) -> Choice {
        if self.a_opp > self.a_own {
            Choice::HandOver
        } else {
            self.own_move()
        }
    }

    /// Half the gap between the two: the value of deciding who moves.
    fn gap(&self) -> BigRational {
        (&self.a_own - &self.a_opp).abs() / BigInt::from(2)
    }
}

/// The engine's plan for one bidding round with money: its bid and what it does if it wins.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MoneyPlan {
    /// The bid, a share of the total money (at most the side's share).
    pub bid: BigRational,
    /// What it does with a bid won.
    pub control: Choice,
    /// The move it makes whenever it moves this turn (also when handed the move).
    pub own: Choice,
    /// Whether the side wins by force with its share (share > 1 − g).
    pub winning: bool,
}

/// The engine's state across a game with money: c, half the surplus it first had when
/// winning (kept for the whole game so that the premiums stay consistent).
#[derive(Clone, Debug, Default)]
pub struct MoneyMemory {
    margin: Option<BigRational>,
}

/// The plan of `side`, holding `share` of the money, at `pos` (module comment).
pub fn money_plan(
    tb: &Tablebase,
    board: Board,
    pos: &Position,
    side: Color,
    share: &BigRational,
    memory: &mut MoneyMemory,
    visits: &HashMap<String, u32>,
) -> Result<MoneyPlan, Error> {
    let win = outlook(tb, board, pos, side, Goal::Win, visits)?;
    let surplus = share - (BigRational::one() - &win.value);
    if surplus.is_positive()
        && let Some(k) = win.level
    {
        let c = memory
            .margin
            .get_or_insert_with(|| &surplus / BigInt::from(2))
            .clone();
        let premium = c / BigInt::from(4).pow(k);
        let own_lower = matches!(win.own.as_ref().and_then(|o| o.level), Some(l) if l < k);
        // Progress: the own best move where it goes lower, else the opponent's moves.
        let progress = if own_lower || !win.opp_all_lower {
            win.own_move()
        } else {
            Choice::HandOver
        };
        let progress_is_high = match progress {
            Choice::HandOver => win.a_opp >= win.a_own,
            Choice::Move(_) => win.a_own >= win.a_opp,
        };
        let gap = win.gap();
        let (bid, control) = if progress_is_high || gap < premium {
            (gap + premium, progress)
        } else {
            (gap - premium, win.better_control())
        };
        return Ok(MoneyPlan {
            bid: bid.min(share.clone()),
            control,
            own: win.own_move(),
            winning: true,
        });
    }
    // Not winning by force: Richman's bid and moves on the safety value.
    let safe = outlook(tb, board, pos, side, Goal::Safe, visits)?;
    Ok(MoneyPlan {
        bid: safe.gap().min(share.clone()),
        control: safe.better_control(),
        own: safe.own_move(),
        winning: false,
    })
}

/// The engine's move in random-turn chess: the greatest winning value, then the lowest
/// progress level (SPEC §2, best play).
pub fn random_turn_move(
    tb: &Tablebase,
    board: Board,
    pos: &Position,
    side: Color,
    visits: &HashMap<String, u32>,
) -> Result<String, Error> {
    Ok(
        match outlook(tb, board, pos, side, Goal::Win, visits)?.own_move() {
            Choice::Move(u) => u,
            Choice::HandOver => "-".into(),
        },
    )
}
