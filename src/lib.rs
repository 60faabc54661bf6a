//! bidtb: exact endgame tablebases for bidding chess.
//!
//! Every position of two kings and at most one more piece, on any board from 2x2 to 16x16,
//! has an exact rational value: the share of the money Black needs, or equally White's
//! winning chance when a fair coin decides who moves. [`generate::solve`] runs one of two
//! methods: the study's (compute the lower and upper bounds αₙ, βₙ exactly, take each value
//! as the simplest rational between them, stop once those satisfy every equation; SPEC §2)
//! or exact linear solves under improving strategies ([`mod@solve`]); the certificate proves the
//! values either way.
//!
//! Data flows one way: [`geometry`] → [`rules`] → [`index`] → [`graph`] → either
//! [`kernel`] ⇄ [`guess`] (or [`settle`] once the values are known) or [`mod@solve`] →
//! [`certificate`], driven by [`generate`].
#![warn(missing_docs)]

pub mod atlas;
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
pub mod solve_checkpoint;
pub mod svg;
pub mod table;
pub mod verify;

pub use error::Error;
pub use generate::{Options, Solution, solve};
pub use geometry::{Board, Square};
pub use guess::Value;
pub use position::{Material, Piece, Position};
