//! Playing the game against the tables (docs/src/guide/play.md): the referee of one game ([`Game`]:
//! the position, the bankrolls, whose turn it is, what happened), the engine's decisions
//! ([`engine`]), and a game between a person and the engine ([`Match`]) that the terminal,
//! the server and the explorer drive.
//!
//! Three games are played. **Random turn**: a fair coin picks the mover before every move.
//! **Money**: both sides bid a share of the total money (exact fractions); the higher bid
//! wins, equal bids are settled by the coin; the winner pays its bid to the other. **Chips**:
//! whole chips and the tie-break marker, by the rules of docs/src/guide/chips.md. With money and
//! chips the winner of a bid decides who moves: itself, or the opponent. A side without a
//! move keeps the position (its move is written `-`). Capturing the king ends the game.

pub mod chips;
pub mod engine;
pub mod game;
pub mod session;

pub use engine::Choice;
pub use game::{Bid, Game, Mode, Phase, Purse, Refusal, Turn};
pub use session::{Match, Setup};
