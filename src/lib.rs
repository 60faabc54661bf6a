//! bidtb: exact endgame tablebases for bidding chess.
//!
//! Every position of a material (two kings and any pieces of either colour, named like
//! Syzygy's files: `KRvKN`), on any board from 2x2 to 16x16, has exact rational values: α,
//! the least share of the money Black needs when play that never ends counts for Black,
//! and β, the same when it counts for White; both equal White's winning chance when a
//! fair coin decides who moves, and they coincide wherever some play ends the game.
//!
//! - [`material`], [`position`] and [`fen`]: material as data, positions of any material,
//!   FEN of any board size;
//! - [`generate`]: the pipeline that makes tables, one material at a time in dependency
//!   order ([`generate::solve`], [`generate::solve_all`]), by the study's iteration
//!   (reproducing 2644 on 8x8) or by exact solves under improving strategies; a
//!   certificate proves every value either way;
//! - [`table`]: the file format, memory-mapped;
//! - [`probe`]: a position's values, every move with its value and progress level, the bid.
//!
//! Data flows one way: [`value`] → [`geometry`] → [`material`] → [`position`] → rules →
//! index → graph → (iterate | solve) → certificate → [`table`]; the query side reads
//! [`table`] through [`probe`]. The engine's other parts are public only for the project's
//! own tests and benches; they are hidden from the documentation and are not API.
#![warn(missing_docs)]

pub mod chips;
pub mod error;
pub mod fen;
pub mod generate;
pub mod geometry;
pub mod material;
pub mod play;
pub mod position;
pub mod probe;
pub mod table;
pub mod value;

// The engine's parts: public for the project's own tests and benches only, hidden from
// the documentation and not part of the API (names and signatures change without notice).
#[doc(hidden)]
pub mod atomic;
#[doc(hidden)]
pub mod boundary;
#[doc(hidden)]
pub mod certificate;
#[doc(hidden)]
pub mod container;
#[doc(hidden)]
pub mod dirlock;
#[doc(hidden)]
pub mod graph;
#[doc(hidden)]
pub mod index;
#[doc(hidden)]
pub mod iterate;
#[doc(hidden)]
pub mod progress;
#[doc(hidden)]
pub mod resources;
#[doc(hidden)]
pub mod rules;
#[doc(hidden)]
pub mod solve;
#[doc(hidden)]
pub mod verify;

pub use error::Error;
pub use generate::{Method, Options, Solution, solve, solve_all};
pub use geometry::{Board, Square};
pub use material::{Color, Material, Piece};
pub use position::Position;
pub use probe::{Probe, Tablebase};
pub use value::Value;
pub use verify::{BoardCheck, verify_board};
