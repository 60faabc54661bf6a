//! The `bidtb` command: the command line ([`cli`]), the HTTP server and explorer page
//! ([`server`]) and the pictures ([`svg`]), as a thin shell over the library.

mod cli;
mod server;
mod svg;

/// mimalloc: the guess updates make many short-lived big-integer allocations from both
/// threads, which glibc's allocator serves far more slowly.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    cli::main()
}
