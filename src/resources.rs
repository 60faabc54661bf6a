//! What the machine has: the memory a run may use (the configured limit, what is
//! available, the address space), its use as the run goes (resident and anonymous bytes,
//! peaks, a pool's CPU seconds), the memory guard's settings, and a clear refusal when an
//! estimate exceeds what is usable, before a run starts instead of half-way. The estimates
//! themselves belong to the methods that know their data ([`crate::iterate::memory`],
//! [`crate::solve::memory`]); nothing here knows chess.

use crate::error::Error;

/// The forms `BIDTB_MEMORY_LIMIT` accepts, for error messages.
pub const SIZE_FORMS: &str = "a number of bytes with an optional unit B, K, M, G or T (powers of \
     1024; KB, KiB and the like too) and an optional decimal fraction: 1048576, 512M, 1.5G, 2 GiB";

/// Parse a size like `512M`, `1.5G`, `2 GiB`, `1048576` (bytes), exactly (integers only;
/// a fraction of a byte is dropped). None for anything else: empty, negative, not a
/// number, an unknown unit, or more bytes than a u64 holds.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.len() > 18 {
        return None;
    }
    let scale: u128 = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        "T" | "TB" | "TIB" => 1 << 40,
        _ => return None,
    };
    let digits = |d: &str| -> Option<u128> {
        if d.is_empty() {
            Some(0)
        } else if d.bytes().all(|b| b.is_ascii_digit()) && d.len() <= 30 {
            d.parse().ok()
        } else {
            None
        }
    };
    let bytes = digits(whole)?.checked_mul(scale)?
        + digits(fraction)? * scale / 10u128.pow(fraction.len() as u32);
    u64::try_from(bytes).ok()
}

/// The limit set by `BIDTB_MEMORY_LIMIT`: None when unset; an error naming the accepted
/// forms when it is set to anything that does not parse (a limit that is meant to hold is
/// never silently dropped).
pub fn configured_limit() -> Result<Option<u64>, Error> {
    match std::env::var_os("BIDTB_MEMORY_LIMIT") {
        None => Ok(None),
        Some(raw) => {
            let text = raw.to_string_lossy();
            match parse_size(&text) {
                Some(n) => Ok(Some(n)),
                None => Err(Error::Usage(format!(
                    "BIDTB_MEMORY_LIMIT={text:?} is not a size: give {SIZE_FORMS}"
                ))),
            }
        }
    }
}

/// Memory this process may use: `BIDTB_MEMORY_LIMIT` if set (e.g. `8G`), else the smaller
/// of the kernel's MemAvailable and the cgroup's remaining limit. None when unknown (or when
/// the variable does not parse, which the command line refuses before any work).
pub fn available_bytes() -> Option<u64> {
    if std::env::var_os("BIDTB_MEMORY_LIMIT").is_some() {
        return configured_limit().ok().flatten();
    }
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok();
    let available = meminfo.as_deref().and_then(|m| {
        let line = m.lines().find(|l| l.starts_with("MemAvailable:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    });
    let read = |p: &str| std::fs::read_to_string(p).ok()?.trim().parse::<u64>().ok();
    let cgroup = match (
        read("/sys/fs/cgroup/memory.max"),
        read("/sys/fs/cgroup/memory.current"),
    ) {
        (Some(max), Some(cur)) => Some(max.saturating_sub(cur)),
        _ => None,
    };
    match (available, cgroup) {
        (Some(a), Some(c)) => Some(a.min(c)),
        (a, c) => a.or(c),
    }
}

/// The process's address-space limit (`ulimit -v`, RLIMIT_AS's soft limit, Linux), if any.
pub fn address_space_limit() -> Option<u64> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max address space"))?;
    let soft = line["Max address space".len()..]
        .split_whitespace()
        .next()?;
    soft.parse().ok()
}

/// The address space left under `ulimit -v` (the limit less the process's `VmSize`); None
/// without a limit (or off Linux).
pub fn address_space_headroom() -> Option<u64> {
    let limit = address_space_limit()?;
    let used = status_kb("VmSize")? << 10;
    Some(limit.saturating_sub(used))
}

/// Address space a new thread needs beyond its stack: the signal stack the standard
/// library maps in it (whose failure aborts the process, where a failed `spawn` would not),
/// guard pages, with room to spare.
pub const THREAD_HEADROOM: u64 = 1 << 20;

/// Whether a thread with a stack of `stack` bytes may start: always without an
/// address-space limit; under one, only with [`THREAD_HEADROOM`] to spare beyond the stack.
/// Under a tight `ulimit -v` the standard library aborts a new thread whose signal stack
/// cannot be mapped; callers run the work on the current thread instead.
pub fn thread_fits(stack: u64) -> bool {
    address_space_headroom().is_none_or(|room| room >= stack + THREAD_HEADROOM)
}

/// Address space that is not heap: the binary and its libraries, threads' stacks (measured
/// on a running `serve`: about 19 MB besides mimalloc's arena and glibc's lazily reserved
/// per-thread arenas, which give way under a limit).
pub const ADDRESS_SPACE_OVERHEAD: u64 = 32 << 20;

/// The least address space (`ulimit -v`) the command needs to start at all: its threads'
/// stacks, the allocator's first segments, the binary and its libraries (measured: under
/// 40 MB a 4x4 run aborts, at 60 MB queries and verifications of small tables work).
pub const MIN_ADDRESS_SPACE: u64 = 64 << 20;

/// Refuse to start under an address-space limit too small for any work, with a one-line
/// reason, instead of aborting on the first allocation that fails.
pub fn check_address_space() -> Result<(), Error> {
    match address_space_limit() {
        Some(limit) if limit < MIN_ADDRESS_SPACE => Err(Error::Resources(format!(
            "the address-space limit (ulimit -v) is {} MB; bidtb needs at least {} MB to \
             start (raise it, e.g. `ulimit -v unlimited`)",
            limit >> 20,
            MIN_ADDRESS_SPACE >> 20
        ))),
        _ => Ok(()),
    }
}

fn mb(bytes: u64) -> u64 {
    bytes.div_ceil(1 << 20)
}

/// A field of `/proc/self/status` in kB (Linux), such as `VmRSS` or `VmHWM`.
fn status_kb(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| {
        l.strip_prefix(field)
            .is_some_and(|rest| rest.starts_with(':'))
    })?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The process's resident memory now (Linux `VmRSS`), in bytes.
fn resident_bytes() -> Option<u64> {
    Some(status_kb("VmRSS")? * 1024)
}

/// The memory this process may count on in all: `BIDTB_MEMORY_LIMIT` if set, else what
/// the machine has available plus what the process already holds (the estimates are of
/// the whole process, and memory a finished job freed stays with the allocator for reuse).
/// An address-space limit (`ulimit -v`) counts too: what it leaves beside the mappings that
/// are not the heap ([`ADDRESS_SPACE_OVERHEAD`]). (The allocator's reservations are heap:
/// under a limit mimalloc reserves less and serves allocations from what it reserved.)
/// Also says where the amount comes from, for messages.
pub fn usable_bytes() -> Option<(u64, &'static str)> {
    let have = available_bytes().map(|have| {
        if std::env::var_os("BIDTB_MEMORY_LIMIT").is_some() {
            (have, "BIDTB_MEMORY_LIMIT")
        } else {
            let held = have + resident_bytes().unwrap_or(0);
            (held, "detected; set BIDTB_MEMORY_LIMIT to override")
        }
    });
    let address_space = address_space_limit().map(|limit| {
        let room = limit.saturating_sub(ADDRESS_SPACE_OVERHEAD);
        (room, "within the address-space limit, ulimit -v")
    });
    match (have, address_space) {
        (Some(a), Some(b)) => Some(if b.0 < a.0 { b } else { a }),
        (a, b) => a.or(b),
    }
}

/// Refuse work needing `needed` bytes (the whole process's) when less is usable. `what`
/// says what for.
pub fn check(needed: u64, what: &str) -> Result<(), Error> {
    match usable_bytes() {
        Some((have, source)) if needed > have => Err(Error::Resources(format!(
            "{what} needs about {} MB of memory, but only {} MB are available to it \
             ({source})",
            mb(needed),
            mb(have)
        ))),
        _ => Ok(()),
    }
}

/// The bytes free to an unprivileged writer on the filesystem of `dir` (`statvfs`'s
/// available blocks), None where that cannot be told.
pub fn free_disk_bytes(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    let mut stat = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: `path` is a NUL-terminated string and `stat` room for one `statvfs`, which
    // the call fills when it returns 0.
    let stat = unsafe {
        if libc::statvfs(path.as_ptr(), stat.as_mut_ptr()) != 0 {
            return None;
        }
        stat.assume_init()
    };
    Some(stat.f_bavail as u64 * stat.f_frsize as u64)
}

/// Address space that work started inside a running process takes beyond its bytes: the
/// allocator's segments of each thread that allocates for it (mimalloc reserves 32 MB at a
/// time: the computing thread's and the pool's), its stack and signal stack. Measured on a
/// `serve` under `ulimit -v`: 6x6 KRvK's chip ranks (3 MB estimated) grew `VmSize` by 37 MB.
pub const WORK_ADDRESS_SPACE: u64 = 96 << 20;

/// Refuse work that needs `needed` bytes more than the process holds now (work started
/// inside a running process, such as a server's), when the memory available (less
/// [`ADDRESS_SPACE_OVERHEAD`] for what else runs meanwhile) or the address space left
/// under `ulimit -v` (less [`WORK_ADDRESS_SPACE`]) is smaller. `what` says what for.
pub fn check_more(needed: u64, what: &str) -> Result<(), Error> {
    // BIDTB_MEMORY_LIMIT bounds the whole process: what it holds already counts.
    let memory = match std::env::var_os("BIDTB_MEMORY_LIMIT") {
        Some(_) => available_bytes().map(|l| l.saturating_sub(resident_bytes().unwrap_or(0))),
        None => available_bytes(),
    };
    let room = [
        memory.map(|b| (b, ADDRESS_SPACE_OVERHEAD, "the memory available")),
        // VmSize counts what the allocator reserved and has not handed out, so this is on
        // the safe side.
        address_space_headroom().map(|b| {
            (
                b,
                WORK_ADDRESS_SPACE,
                "the address space left under ulimit -v",
            )
        }),
    ]
    .into_iter()
    .flatten()
    .min_by_key(|&(have, margin, _)| have.saturating_sub(margin));
    match room {
        Some((have, margin, source)) if needed > have.saturating_sub(margin) => {
            Err(Error::Resources(format!(
                "{what} would need about {} MB of memory, more than {source} allows ({} MB, \
                 less a margin of {} MB)",
                mb(needed),
                have >> 20,
                margin >> 20
            )))
        }
        _ => Ok(()),
    }
}

/// The process's anonymous resident memory now (Linux `RssAnon`: the heap, without the
/// pages of memory-mapped tables, which the kernel can drop), in bytes.
pub fn anonymous_bytes() -> Option<u64> {
    Some(status_kb("RssAnon")? * 1024)
}

/// How often the memory guard looks.
pub const GUARD_PERIOD: std::time::Duration = std::time::Duration::from_millis(100);

/// The limit the memory guard holds a job to: `BIDTB_MEMORY_GUARD` if set (a size, as
/// `BIDTB_MEMORY_LIMIT`), else all the memory the process may count on (see
/// [`check`]); None when neither is known. An unparsable `BIDTB_MEMORY_GUARD` is an
/// error naming the accepted forms.
pub fn guard_limit() -> Result<Option<u64>, Error> {
    Ok(env_size("BIDTB_MEMORY_GUARD")?.or_else(|| usable_bytes().map(|(bytes, _)| bytes)))
}

/// The size in the environment variable `name`, None if it is not set; an unparsable one
/// is a usage error naming the accepted forms.
fn env_size(name: &str) -> Result<Option<u64>, Error> {
    let Some(raw) = std::env::var_os(name) else {
        return Ok(None);
    };
    let text = raw.to_string_lossy();
    parse_size(&text)
        .map(Some)
        .ok_or_else(|| Error::Usage(format!("{name}={text:?} is not a size: give {SIZE_FORMS}")))
}

/// `BIDTB_SPILL_ABOVE`: above how many bytes α's values are moved to a temporary file
/// while β is solved apart (the solve method; `0` always, a large size never). None when
/// it is not set; an unparsable value is an error naming the accepted forms.
pub fn spill_above() -> Result<Option<u64>, Error> {
    env_size("BIDTB_SPILL_ABOVE")
}

/// `BIDTB_PAGE_ABOVE`: above how many bytes of numerators an exact evaluation moves the
/// rest to temporary files mapped back read-only (the solve method; `0` always). None when
/// it is not set; an unparsable value is an error naming the accepted forms.
pub fn page_above() -> Result<Option<u64>, Error> {
    env_size("BIDTB_PAGE_ABOVE")
}

/// Sample the process's anonymous resident memory now ([`anonymous_bytes`]) for the
/// memory guard, which the run's driver holds while jobs run (see
/// [`crate::generate::driver::run`]): the estimate decides before a job starts, the guard
/// while it runs, so that a job the estimate let through but that needs more (8x8 KBvKN:
/// estimated 11 GiB, measured 19 GiB) stops cleanly instead of being killed by the kernel.
/// The sample also raises the peak that [`anonymous_peak_mib`] reports.
pub fn sample_anonymous() -> Option<u64> {
    let now = anonymous_bytes()?;
    ANONYMOUS_PEAK.fetch_max(now, std::sync::atomic::Ordering::Relaxed);
    Some(now)
}

/// Why the memory guard stopped a job, for messages: the most the process held against
/// the limit.
pub fn over_limit_reason(highest: u64, limit: u64) -> String {
    format!(
        "stopped while running: it held {} MB of memory, above the {} MB it may use \
         (BIDTB_MEMORY_GUARD, or the memory available)",
        mb(highest),
        mb(limit)
    )
}

/// The process's peak resident memory since the last [`reset_peak`], in MiB (Linux).
pub fn peak_mib() -> Option<u64> {
    Some(status_kb("VmHWM")? / 1024)
}

/// Reset the peak resident memory to the current (Linux: `5` to `/proc/self/clear_refs`),
/// and the peak of anonymous memory that the memory guard records.
pub fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    ANONYMOUS_PEAK.store(
        anonymous_bytes().unwrap_or(0),
        std::sync::atomic::Ordering::Relaxed,
    );
}

/// The highest anonymous resident memory the memory guard saw since the last
/// [`reset_peak`], in bytes (0 where no guard watched).
static ANONYMOUS_PEAK: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The peak of the process's anonymous resident memory (its heap, without the pages of
/// memory-mapped tables, which the kernel can drop) since the last [`reset_peak`], in MiB,
/// as the memory guard sampled it ten times a second; None where no guard watched. The
/// peak resident memory of [`peak_mib`] counts the pages of tables read too: a job that
/// reads a 5.8 GB table shows them in it.
pub fn anonymous_peak_mib() -> Option<u64> {
    let peak = ANONYMOUS_PEAK.load(std::sync::atomic::Ordering::Relaxed);
    (peak > 0).then_some(peak >> 20)
}

/// CPU seconds the calling thread has used (user and system; None where the clock is not
/// available).
fn thread_cpu_seconds() -> Option<f64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `clock_gettime` writes the clock into `t`, which outlives the call.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0;
    ok.then_some(t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9)
}

/// CPU seconds used so far by the threads of the current thread pool (rayon's, the job's
/// own when a job runs beside others), and by the calling thread if it is not one of
/// them: the difference of two readings is what a job took of the processors, its waiting
/// behind a job at a higher priority apart (its clock counts that too).
pub fn pool_cpu_seconds() -> Option<f64> {
    let pool: Option<f64> = rayon::broadcast(|_| thread_cpu_seconds()).into_iter().sum();
    let caller = match rayon::current_thread_index() {
        Some(_) => Some(0.0),
        None => thread_cpu_seconds(),
    };
    Some(pool? + caller?)
}

/// Hand the memory that the allocator keeps for reuse back to the system, on every thread
/// of the pool (each has its own heap), between the jobs of a run: what one material freed
/// would otherwise stay resident, inflate the next job's measured peak and hide memory from
/// its memory check. Also inside a job, before a large allocation after a large release
/// (α's values read back after β is solved). The program's allocator is mimalloc; under
/// another (the Python module's) this frees nothing.
pub fn release_free_memory() {
    let collect = || {
        // SAFETY: `mi_collect` only frees what the calling thread's heap no longer uses.
        unsafe { libmimalloc_sys::mi_collect(true) }
    };
    rayon::broadcast(|_| collect());
    collect();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work on every thread of a pool shows in its CPU seconds, each thread's counted
    /// (a count of the calling thread alone would see about a third of it).
    #[test]
    fn a_pools_cpu_seconds_count_its_threads() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap();
        // Busy until the thread itself has used 0.2 s (the cores may be fewer than three).
        let busy = || {
            let start = thread_cpu_seconds().unwrap();
            while thread_cpu_seconds().unwrap() - start < 0.2 {
                std::hint::spin_loop();
            }
        };
        let (before, after, wall) = pool.install(|| {
            let before = pool_cpu_seconds().unwrap();
            let t = std::time::Instant::now();
            rayon::broadcast(|_| busy());
            (
                before,
                pool_cpu_seconds().unwrap(),
                t.elapsed().as_secs_f64(),
            )
        });
        let used = after - before;
        assert!(
            used >= 0.5,
            "{used} s of CPU for three threads busy 0.2 s each"
        );
        assert!(
            used <= 3.0 * wall + 0.05,
            "{used} s of CPU in {wall} s on three threads"
        );
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("1000"), Some(1000));
        assert_eq!(parse_size("2 GiB"), Some(2 << 30));
        assert_eq!(parse_size("1T"), Some(1 << 40));
        assert_eq!(parse_size("1.5G"), Some(3 << 29));
        assert_eq!(parse_size("0.03G"), Some(32_212_254));
        assert_eq!(parse_size(".5K"), Some(512));
        assert_eq!(parse_size("7."), Some(7));
        for bad in [
            "lots",
            "abc",
            "-1",
            "",
            " ",
            ".",
            "1.2.3",
            "1 X",
            "G",
            "1e9",
            "99999999999999999999G",
            "18446744073709551616",
            "16777216T",
        ] {
            assert_eq!(parse_size(bad), None, "{bad:?}");
        }
        assert_eq!(parse_size("18446744073709551615"), Some(u64::MAX));
    }
}
