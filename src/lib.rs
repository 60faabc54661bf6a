//! bidtb: exact endgame tablebases for bidding chess.
//!
//! Every position of a material (two kings and any pieces of either colour, named like
//! Syzygy's files: `KRvKN`), on any board from 2x2 to 16x16, has exact rational values: α,
//! the least share of the money Black needs when play that never ends counts for Black,
//! and β, the same when it counts for White; both equal White's winning chance when a
//! fair coin decides who moves, and they coincide wherever some play ends the game.
//!
//! The library is this one page of names:
//! - the game: [`Board`], [`Square`], [`Material`], [`Piece`], [`Color`], [`Position`] and
//!   [`fen`] (FEN of any board size), exact values as [`Value`], every failure as [`Error`];
//! - making tables: [`Options`] and [`Method`] say what to make, [`solve`] makes one set of
//!   materials in memory, [`solve_all`] and [`Session`] a whole request on disk, one
//!   material at a time in dependency order, [`Control`] and [`Observer`] steer and watch a
//!   run; every value comes with a certificate that proves it ([`Solution`]);
//! - reading them: [`Table`] (one file, memory-mapped and checked), [`Tablebase`] (a
//!   directory of tables) and its answers [`Probe`] and [`MoveInfo`]; [`verify_board`]
//!   re-proves stored tables from the files alone.
//!
//! ```
//! use bidtb::{Board, Material, Options, Silent, fen};
//!
//! // Make the 4x4 tables of KRvK in memory (and KvK, which its captures lead to first).
//! let mut options = Options::solve(Board::new(4, 4)?);
//! options.materials = vec!["KRvK".parse::<Material>()?];
//! let solution = bidtb::solve(&options, &Silent)?;
//! assert!(solution.certified());
//!
//! // Probe a position: White's king a1 and rook d1, Black's king a4.
//! let parsed = fen::parse("k3/4/4/K2R")?;
//! let value = solution.value(&parsed.position).expect("a KRvK position");
//! assert_eq!(value.to_string(), "23/32");
//! # Ok::<(), bidtb::Error>(())
//! ```
//!
//! Tables on disk: a [`Session`] holds a board's directory (its lock, atomic writes) while
//! a run writes each material's table as soon as it is proved; a [`Tablebase`] reads them.
//!
//! ```
//! use bidtb::{Board, Control, Material, Method, Options, Session, Silent, Tablebase};
//!
//! let dir = tempfile::tempdir()?;
//! let board = Board::new(4, 4)?;
//! let mut options = Options::solve(board);
//! options.materials = vec!["KRvK".parse::<Material>()?];
//! let mut session = Session::open(dir.path(), board, Method::Solve, false)?;
//! session.run(&options, &Silent, &Control::default())?;
//! session.finish(false)?;
//!
//! let tables = Tablebase::open(dir.path())?;
//! let probe = tables.probe_fen("k3/4/4/K2R")?;
//! assert_eq!(probe.value.to_string(), "23/32");
//! assert_eq!(probe.best_white().map(|m| m.uci.as_str()), Some("d1d4"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Data flows one way: value → geometry → material → position → rules → index → graph →
//! (iterate | solve) → certificate → table; the query side reads the table through the
//! probe. The engine's parts are private; [`internal`] names them for the project's own
//! command line, tests and benches only.
#![warn(missing_docs)]

pub mod fen {
    //! FEN of any board size: see [`parse`] and [`write()`].
    pub use crate::internal::fen::{Parsed, parse, placement, write};
}

pub use error::Error;
pub use generate::driver::{Driven, Skipped, Stopped};
pub use generate::session::Session;
pub use generate::{
    Control, Method, MethodOptions, Observer, Options, Silent, Solution, solve, solve_all,
};
pub use geometry::{Board, Square};
pub use iterate::Settings as IterateSettings;
pub use material::{Color, Material, Piece};
pub use position::Position;
pub use probe::{MoveInfo, Probe, Tablebase};
pub use solve::run::RunSettings as SolveSettings;
pub use table::Table;
pub use value::Value;
pub use verify::{BoardCheck, verify_board};

/// The engine's parts, named for the project's own command line, server, Python bindings,
/// tests and benches: not API (names and signatures change without notice), hidden from
/// the documentation.
#[doc(hidden)]
pub mod internal;

// The engine's parts by their short names inside the crate (`crate::value`, …).
use internal::{
    atomic, boundary, certificate, chips, container, dirlock, error, generate, geometry, graph,
    index, iterate, mapguard, material, position, probe, progress, resources, rules, solve, table,
    value, verify,
};
