//! The `bidtb` command: a thin shell over the library's command-line module.

/// mimalloc: the guess updates make many short-lived big-integer allocations from both
/// threads, which glibc's allocator serves far more slowly.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    bidtb::cli::main()
}
