//! The native part of the `bidtb` Python package (`bidtb._bidtb`): the tablebase that
//! probes positions ([`probe`]) and generation with progress and Ctrl-C ([`generate`]),
//! over the `bidtb` crate. The pure-Python part (`python/bidtb/__init__.py`) re-exports it,
//! adds `open_tablebase` and the tqdm progress bar, and defines the exception classes that
//! [`error`] raises.

mod error;
mod generate;
mod probe;

use pyo3::prelude::*;

/// mimalloc, as in the `bidtb` command: the solve method makes many short-lived big-integer
/// allocations from every thread, which the system allocator serves far more slowly. It
/// serves this extension's own allocations only (Python keeps its own allocator).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Native part of bidtb: exact tablebases for bidding chess. Use the `bidtb` package.
#[pymodule]
mod _bidtb {
    #[pymodule_export]
    use super::generate::{Event, generate};
    #[pymodule_export]
    use super::probe::{Move, Probe, Tablebase};
}
