//! The `bidtb` command: the command line ([`cli`]), the HTTP server and explorer page
//! ([`server`]) and the pictures ([`svg`]), as a thin shell over the library.

mod cli;
mod server;
mod svg;

/// mimalloc: the guess updates make many short-lived big-integer allocations from both
/// threads, which glibc's allocator serves far more slowly.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Hand the memory that the allocator keeps for reuse back to the system, on every thread
/// of the pool (each has its own heap), between the jobs of a run: what one material freed
/// would otherwise stay resident, inflate the next job's measured peak and hide memory from
/// its memory check.
pub fn release_free_memory() {
    let collect = || {
        // SAFETY: `mi_collect` only frees what the calling thread's heap no longer uses.
        unsafe { libmimalloc_sys::mi_collect(true) }
    };
    rayon::broadcast(|_| collect());
    collect();
}

fn main() -> std::process::ExitCode {
    cli::main()
}
