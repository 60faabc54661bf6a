//! bidtb: exact endgame tablebases for bidding chess.
//!
//! Every position of two kings and at most one more piece, on any board from 2x2 to 16x16,
//! has an exact rational value: the share of the money Black needs, or equally White's
//! winning chance when a fair coin decides who moves. [`generate::solve`] computes the lower
//! and upper bounds αₙ, βₙ exactly, guesses each value as the simplest rational between them,
//! and stops once the guesses satisfy every equation (SPEC §2).
//!
//! Data flows one way: [`geometry`] → [`rules`] → [`index`] → [`graph`] → [`kernel`] ⇄
//! [`guess`] → [`certificate`], driven by [`generate`].
#![warn(missing_docs)]

pub mod atomic;
pub mod certificate;
pub mod checkpoint;
pub mod cli;
pub mod convergence;
pub mod error;
pub mod fen;
pub mod generate;
pub mod geometry;
pub mod graph;
pub mod guess;
pub mod index;
pub mod kernel;
pub mod map;
pub mod position;
pub mod probe;
pub mod rational;
pub mod report;
pub mod resources;
pub mod rules;
pub mod server;
pub mod settle;
pub mod solve;
pub mod svg;
pub mod table;
pub mod verify;

pub use error::Error;
pub use generate::{Options, Solution, solve};
pub use geometry::{Board, Square};
pub use guess::Value;
pub use position::{Material, Piece, Position};
