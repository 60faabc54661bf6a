//! The `bidtb` command: the command line ([`cli`]), the HTTP server and explorer page
//! ([`server`]) and the pictures ([`svg`]), as a thin shell over the library.

mod cli;
mod server;
mod svg;

use std::alloc::{GlobalAlloc, Layout};

/// mimalloc: the guess updates make many short-lived big-integer allocations from both
/// threads, which glibc's allocator serves far more slowly. Wrapped so that running out of
/// memory ends the process with one line and exit status 1 (see [`out_of_memory`]).
#[global_allocator]
static GLOBAL: Allocator = Allocator(mimalloc::MiMalloc);

/// The global allocator: mimalloc, with a clean exit when an allocation fails.
struct Allocator(mimalloc::MiMalloc);

// SAFETY: every call is passed to mimalloc unchanged; a null result (allocation failed)
// never returns: the process exits.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's guarantees are passed on.
        checked(unsafe { self.0.alloc(layout) }, layout.size())
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        checked(unsafe { self.0.alloc_zeroed(layout) }, layout.size())
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        checked(unsafe { self.0.realloc(ptr, layout, new_size) }, new_size)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { self.0.dealloc(ptr, layout) }
    }
}

fn checked(ptr: *mut u8, size: usize) -> *mut u8 {
    if ptr.is_null() {
        out_of_memory(size);
    }
    ptr
}

/// An allocation failed: say so on one line and exit with status 1 instead of Rust's
/// abort with a backtrace (status 134), which also can hang when the backtrace itself
/// cannot allocate. Allocates nothing (the message is assembled on the stack); said once,
/// however many threads fail. Tables and
/// checkpoints are written to temporary files and renamed, so none is left half-written.
fn out_of_memory(size: usize) -> ! {
    use std::io::Write;
    // One line, from the first thread whose allocation fails: the others (two threads can
    // fail at once under `ulimit -v`, and each said so) wait for the process to end.
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if SAID.swap(true, std::sync::atomic::Ordering::SeqCst) {
        loop {
            // SAFETY: `pause` only waits for a signal.
            unsafe { libc::pause() };
        }
    }
    let mut buf = [0u8; 256];
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        let n = bytes.len().min(buf.len() - at);
        buf[at..at + n].copy_from_slice(&bytes[..n]);
        at += n;
    };
    put(b"bidtb: out of memory: an allocation of ");
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    let mut n = size;
    loop {
        k -= 1;
        digits[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    put(&digits[k..]);
    put(
        b" bytes failed (see `ulimit -v` and BIDTB_MEMORY_LIMIT; smaller boards or fewer \
          materials need less)\n",
    );
    let _ = std::io::stderr().write_all(&buf[..at]);
    std::process::exit(1)
}

/// Under an address-space limit (`ulimit -v`), keep the C library's allocator (which a few
/// system calls of the runtime use) to one arena: by default it reserves 64 MB of address
/// space for each thread that calls it, which a limit of a few hundred MB cannot spare.
fn fit_address_space() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if bidtb::internal::resources::address_space_limit().is_some() {
        unsafe extern "C" {
            fn mallopt(param: std::ffi::c_int, value: std::ffi::c_int) -> std::ffi::c_int;
        }
        const M_ARENA_MAX: std::ffi::c_int = -8;
        // SAFETY: glibc's mallopt, called before any other thread starts.
        unsafe { mallopt(M_ARENA_MAX, 1) };
    }
}

fn main() -> std::process::ExitCode {
    fit_address_space();
    cli::main()
}
