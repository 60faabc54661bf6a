//! The priority of jobs side by side: the threads of a job behind another on the run's
//! longest chain yield the cores to it. On two cores a job on the chain spends long stages
//! on one thread (a large system's refinement) and the rest on two; a job beside it at the
//! same priority takes a share of both, and 8x8 KNvKN's exact evaluation took 1,330 s
//! beside the others instead of 736 alone. Its threads' nice value raised by
//! [`BEHIND_NICE`], a job behind takes what the one ahead leaves idle (Linux; elsewhere
//! the jobs share the cores equally). An unprivileged process may lower its threads'
//! priority but not raise it again, so a job that falls behind stays behind until it ends.

use std::sync::{Arc, Mutex};

/// How much nicer than the process the threads of a job behind another run: at 10 the
/// kernel gives them about a tenth of the time of a thread at the process's own.
pub const BEHIND_NICE: i32 = 10;

/// The threads of one job's pool, and whether they yield to other jobs'.
#[derive(Clone, Default)]
pub struct JobThreads(Arc<Mutex<Threads>>);

#[derive(Default)]
struct Threads {
    /// The kernel's ids of the job's threads.
    ids: Vec<i64>,
    /// The job is behind another: its threads yield.
    behind: bool,
}

impl JobThreads {
    /// Note the calling thread as one of the job's (its pool's start handler); it yields
    /// at once if the job is behind.
    pub fn enter(&self) {
        let mut threads = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(id) = current_thread() {
            threads.ids.push(id);
            if threads.behind {
                lower(id);
            }
        }
    }

    /// From now on the job's threads, those under way and those to come, yield to other
    /// jobs' (for good: see the module's comment).
    pub fn fall_behind(&self) {
        let mut threads = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !threads.behind {
            threads.behind = true;
            for &id in &threads.ids {
                lower(id);
            }
        }
    }

    /// Whether the job's threads yield to others'.
    #[cfg(test)]
    pub fn is_behind(&self) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).behind
    }
}

/// The kernel's id of the calling thread.
#[cfg(target_os = "linux")]
fn current_thread() -> Option<i64> {
    // SAFETY: gettid has no arguments and cannot fail.
    Some(unsafe { libc::syscall(libc::SYS_gettid) })
}

#[cfg(not(target_os = "linux"))]
fn current_thread() -> Option<i64> {
    None
}

/// The nice value of thread `id` (Linux sets it per thread).
#[cfg(target_os = "linux")]
fn nice_of(id: i64) -> Option<i32> {
    // SAFETY: plain system calls on a thread id; getpriority's -1 is told from an error
    // by errno, cleared before.
    unsafe {
        *libc::__errno_location() = 0;
        let nice = libc::getpriority(libc::PRIO_PROCESS, id as libc::id_t);
        (nice != -1 || *libc::__errno_location() == 0).then_some(nice)
    }
}

/// Raise thread `id`'s nice value by [`BEHIND_NICE`] (at most 19); a failure leaves it as
/// it was, which only costs the order of work.
#[cfg(target_os = "linux")]
fn lower(id: i64) {
    if let Some(nice) = nice_of(id) {
        // SAFETY: a plain system call on a thread id of this process.
        unsafe {
            libc::setpriority(
                libc::PRIO_PROCESS,
                id as libc::id_t,
                (nice + BEHIND_NICE).min(19),
            );
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn lower(_id: i64) {}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    /// A thread of a job that falls behind is nicer afterwards; one that enters a job
    /// already behind is nicer at once; a job not behind leaves its threads alone.
    #[test]
    fn threads_of_a_job_behind_yield() {
        let nice = || nice_of(current_thread().unwrap()).unwrap();
        std::thread::spawn(move || {
            let ahead = JobThreads::default();
            let before = nice();
            ahead.enter();
            assert_eq!(nice(), before);
            assert!(!ahead.is_behind());
            ahead.fall_behind();
            assert!(ahead.is_behind());
            assert_eq!(nice(), (before + BEHIND_NICE).min(19));
        })
        .join()
        .unwrap();
        std::thread::spawn(move || {
            let behind = JobThreads::default();
            behind.fall_behind();
            let before = nice();
            behind.enter();
            assert_eq!(nice(), (before + BEHIND_NICE).min(19));
            // Falling behind again changes nothing.
            behind.fall_behind();
            assert_eq!(nice(), (before + BEHIND_NICE).min(19));
        })
        .join()
        .unwrap();
    }
}
