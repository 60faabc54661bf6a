//! Surviving a mapped file truncated under the process (docs/src/reliability.md).
//!
//! Tables and chip files are read through read-only memory maps. A file truncated in place
//! while it is mapped makes every read of a page past its new end raise SIGBUS, which ends
//! the process. A long-running server installs [`install`]: a SIGBUS handler that, for a
//! fault inside a map registered here ([`Guard`]), maps a page of zeros over the faulting
//! page (so that the read completes), marks that map as *poisoned* and counts the event
//! ([`poisonings`]); a fault anywhere else goes to the handler that was there before (the
//! standard library's, or the default action). Readers check afterwards: a poisoned map is
//! refused ([`Guard::poisoned`]), and work that read any map while the count changed throws
//! its answer away, so the zeros are never taken for data.
//!
//! The cost is one atomic load per table looked up and two per request: nothing
//! on the path of a read (measured with `benches/query.rs`, docs/src/reliability.md).

use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// The most maps guarded at once; beyond them a map is read unguarded.
const SLOTS: usize = 4096;

struct Slot {
    start: AtomicUsize,
    len: AtomicUsize,
    poisoned: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Slot = Slot {
    start: AtomicUsize::new(0),
    len: AtomicUsize::new(0),
    poisoned: AtomicBool::new(false),
};

static REGIONS: [Slot; SLOTS] = [EMPTY; SLOTS];

/// How many faults the handler has absorbed.
static POISONINGS: AtomicU64 = AtomicU64::new(0);

/// The page size, read once at installation.
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// The handler installed before ours (the standard library's stack-overflow handler,
/// usually), to pass foreign faults on to.
static mut PREVIOUS: Option<libc::sigaction> = None;

static INSTALL: Once = Once::new();

/// A registered map: the handler knows its addresses while the guard lives. Drop it
/// before unmapping.
#[derive(Debug)]
pub struct Guard {
    slot: Option<usize>,
}

impl Guard {
    /// Register the `len` bytes at `start` (a map). Without a free slot the map is not
    /// guarded (a fault in it ends the process as before).
    pub fn new(start: *const u8, len: usize) -> Guard {
        let start = start as usize;
        if start == 0 || len == 0 {
            return Guard { slot: None };
        }
        for (i, s) in REGIONS.iter().enumerate() {
            if s.start.load(Ordering::Relaxed) == 0 {
                // Claim the slot with its length first: the handler reads start, then len.
                if s.start
                    .compare_exchange(0, usize::MAX, Ordering::AcqRel, Ordering::Relaxed)
                    .is_ok()
                {
                    s.len.store(len, Ordering::Release);
                    s.poisoned.store(false, Ordering::Release);
                    s.start.store(start, Ordering::Release);
                    return Guard { slot: Some(i) };
                }
            }
        }
        Guard { slot: None }
    }

    /// Whether a read of the map faulted (its file was truncated): its bytes can no longer
    /// be trusted.
    pub fn poisoned(&self) -> bool {
        self.slot
            .is_some_and(|i| REGIONS[i].poisoned.load(Ordering::Acquire))
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            REGIONS[i].start.store(0, Ordering::Release);
        }
    }
}

/// How many faults in guarded maps the handler has absorbed so far: work that read maps
/// compares it before and after.
pub fn poisonings() -> u64 {
    POISONINGS.load(Ordering::Acquire)
}

/// Install the SIGBUS handler (once; Unix). Returns whether it is installed.
pub fn install() -> bool {
    static OK: AtomicBool = AtomicBool::new(false);
    INSTALL.call_once(|| {
        // SAFETY: sysconf and sigaction with valid arguments; PREVIOUS is written here,
        // once, before the handler that reads it can run.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
            libc::sigemptyset(&mut action.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, &action, &mut old) == 0 {
                PREVIOUS = Some(old);
                OK.store(true, Ordering::Release);
            }
        }
    });
    OK.load(Ordering::Acquire)
}

/// The handler: a fault inside a guarded map gets a page of zeros and poisons the map;
/// any other goes to the previous handler (or the default action).
extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    for s in &REGIONS {
        let start = s.start.load(Ordering::Acquire);
        if start == 0 || start == usize::MAX || addr < start {
            continue;
        }
        if addr - start < s.len.load(Ordering::Acquire) {
            s.poisoned.store(true, Ordering::SeqCst);
            POISONINGS.fetch_add(1, Ordering::SeqCst);
            let page = addr & !(PAGE.load(Ordering::Relaxed) - 1);
            // SAFETY: replaces one page of a read-only file map this process owns (the
            // guard is alive: the map is) with anonymous zeros; mmap is a system call.
            let mapped = unsafe {
                libc::mmap(
                    page as *mut libc::c_void,
                    PAGE.load(Ordering::Relaxed),
                    libc::PROT_READ,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                    -1,
                    0,
                )
            };
            if mapped != libc::MAP_FAILED {
                return;
            }
            break;
        }
    }
    // Not ours (or the page could not be replaced): as before this handler.
    // SAFETY: PREVIOUS was set before the handler was installed and never changes after.
    unsafe {
        match *std::ptr::addr_of!(PREVIOUS) {
            Some(prev)
                if prev.sa_sigaction != libc::SIG_DFL && prev.sa_sigaction != libc::SIG_IGN =>
            {
                if prev.sa_flags & libc::SA_SIGINFO != 0 {
                    let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        std::mem::transmute(prev.sa_sigaction);
                    f(sig, info, ctx);
                } else {
                    let f: extern "C" fn(libc::c_int) = std::mem::transmute(prev.sa_sigaction);
                    f(sig);
                }
            }
            _ => {
                // The default action: restore it and return; the read faults again and
                // ends the process with SIGBUS, as without this handler.
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
            }
        }
    }
}
