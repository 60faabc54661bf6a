//! The priority of jobs side by side, from the chains of work they head: the threads of a
//! job on a shorter chain than another's yield the cores to it. On two cores a job on the
//! run's longest chain spends long stages on one thread (a large system's refinement) and
//! the rest on two; a job beside it at the same priority takes a share of both, and 8x8
//! KNvKN's exact evaluation took 1,330 s beside the others instead of 736 alone. Even one
//! level apart is too little: with KBvKN one level behind it (KBvKN's chain 0.93 of
//! KNvKN's), KNvKN's α evaluation took 1,130 s instead of 785, and KNvKP, which reads both,
//! started later than with KBvKN ten levels behind.
//!
//! So each job has a *level*, the nice value its threads run at above the process's: the
//! job on the longest chain is at the lowest level, and one on a shorter chain
//! [`MOST_BEHIND`] levels above it (Linux; elsewhere the jobs share the cores equally). An
//! unprivileged process may raise its threads' nice value but not lower it again, so levels
//! only rise: a job keeps its level when the job it yielded to ends, and the jobs that
//! start later are placed above it (the ladder in [`levels`]), so that it stays ahead of
//! those on shorter chains. Without the ladder, 8x8 KBvKN, which KNvKP reads too, went on
//! at the level of the jobs that started after KNvKN ended, and ended 300 s after it.

use std::sync::{Arc, Mutex};

/// The levels a job on a shorter chain runs behind the one on the longest: at 10 the
/// kernel gives its threads about a tenth of the time of a thread 10 levels lower.
const MOST_BEHIND: i32 = 10;

/// The highest nice value.
const NICEST: i32 = 19;

/// How many levels a job on a chain of `chain` runs behind one on a chain of `top`: none
/// where it is as long, [`MOST_BEHIND`] where it is shorter.
fn behind(chain: u64, top: u64) -> i32 {
    if chain >= top { 0 } else { MOST_BEHIND }
}

/// The levels of the jobs under way when one on a chain of `chain` starts beside them:
/// `running` holds each one's chain and level, and the result their new levels (never
/// lower) and the new job's. The job on the longest chain is at the lowest level that
/// keeps every other at least [`behind`] levels above it without lowering any, the others
/// are raised to their place above it where they are below it, and none is put above
/// [`NICEST`].
pub fn levels(running: &[(u64, i32)], chain: u64) -> (Vec<i32>, i32) {
    let top = running.iter().map(|r| r.0).max().unwrap_or(0).max(chain);
    let base = running
        .iter()
        .map(|&(c, level)| level - behind(c, top))
        .max()
        .unwrap_or(0)
        .max(0);
    let place = |c: u64| (base + behind(c, top)).min(NICEST);
    let raised = running
        .iter()
        .map(|&(c, level)| level.max(place(c)))
        .collect();
    (raised, place(chain))
}

/// The threads of one job's pool, and the level they run at.
#[derive(Clone, Default)]
pub struct JobThreads(Arc<Mutex<Threads>>);

#[derive(Default)]
struct Threads {
    /// The kernel's ids of the job's threads, each with its nice value when it entered.
    ids: Vec<(i64, i32)>,
    /// The levels its threads run above their nice value on entry.
    level: i32,
}

impl JobThreads {
    /// Note the calling thread as one of the job's (its pool's start handler); it runs at
    /// the job's level at once.
    pub fn enter(&self) {
        let mut threads = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(id) = current_thread()
            && let Some(nice) = nice_of(id)
        {
            threads.ids.push((id, nice));
            if threads.level > 0 {
                set_nice(id, nice + threads.level);
            }
        }
    }

    /// The level the job's threads run at.
    pub fn level(&self) -> i32 {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).level
    }

    /// From now on the job's threads, those under way and those to come, run at `level`
    /// or above (a lower level is ignored: see the module's comment).
    pub fn raise_to(&self, level: i32) {
        let mut threads = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if level > threads.level {
            threads.level = level;
            for &(id, nice) in &threads.ids {
                set_nice(id, nice + level);
            }
        }
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

#[cfg(not(target_os = "linux"))]
fn nice_of(_id: i64) -> Option<i32> {
    None
}

/// Set thread `id`'s nice value to `nice` (at most [`NICEST`]); a failure leaves it as it
/// was, which only costs the order of work.
#[cfg(target_os = "linux")]
fn set_nice(id: i64, nice: i32) {
    // SAFETY: a plain system call on a thread id of this process.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, id as libc::id_t, nice.min(NICEST));
    }
}

#[cfg(not(target_os = "linux"))]
fn set_nice(_id: i64, _nice: i32) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Equal or longer chains run level with the top, shorter ones (8x8 KBvKN's, 0.93 of
    /// KNvKN's in the run's estimates) the most behind.
    #[test]
    fn shorter_chains_run_behind() {
        assert_eq!(behind(100, 100), 0);
        assert_eq!(behind(120, 100), 0);
        assert_eq!(behind(32_420, 34_809), MOST_BEHIND);
        assert_eq!(behind(99, 100), MOST_BEHIND);
        assert_eq!(behind(0, 100), MOST_BEHIND);
    }

    /// The ladder: a job alone runs at level 0; one beside the top job on a shorter chain
    /// runs its levels behind; a job on a longer chain goes to the front by raising the
    /// others; a job left behind when the job it yielded to ended stays ahead of a later
    /// job on a shorter chain; no level is lowered, and none goes above the nicest.
    #[test]
    fn levels_rise_as_a_ladder() {
        assert_eq!(levels(&[], 7), (vec![], 0));
        assert_eq!(levels(&[(34_809, 0)], 32_420), (vec![0], MOST_BEHIND));
        assert_eq!(levels(&[(100, 0)], 200), (vec![MOST_BEHIND], 0));
        // Left at 10 behind a job that has ended, the job on a chain of 100 is the top:
        // a job on a shorter chain starts above it, one on a longer chain below.
        assert_eq!(levels(&[(100, 10)], 80), (vec![10], NICEST));
        assert_eq!(levels(&[(100, 10)], 110), (vec![10], 0));
        assert_eq!(levels(&[(100, 15)], 10), (vec![15], NICEST));
        // Several under way: the top's level is the lowest that keeps each at least its
        // levels behind it.
        let (raised, new) = levels(&[(90, 3), (50, 4), (100, 0)], 200);
        assert_eq!((raised, new), (vec![10, 10, 10], 0));
        let (raised, new) = levels(&[(90, 9), (80, 4), (100, 2)], 95);
        assert_eq!((raised, new), (vec![12, 12, 2], 12));
        // 8x8 (chains of the run's estimates): KBvKN starts behind KNvKN; KNvKN ends, and
        // KQvKQ starts behind KBvKN; KBvKN ends, and KNvKP starts ahead of KQvKQ.
        let (knkn, bnkn, qkq, nkp) = (34_809, 32_420, 19_770, 27_500);
        let (_, bn) = levels(&[(knkn, 0)], bnkn);
        let (_, qq) = levels(&[(bnkn, bn)], qkq);
        let (raised, np) = levels(&[(qkq, qq)], nkp);
        assert_eq!((bn, qq, np, raised), (10, NICEST, 9, vec![NICEST]));
        for running in [
            vec![(5, 0), (9, 12), (7, 3)],
            vec![(1_000, 19), (10, 0)],
            vec![(3, 2), (3, 2)],
        ] {
            for chain in [0, 4, 8, 2_000] {
                let (raised, new) = levels(&running, chain);
                let all: Vec<(u64, i32)> = running
                    .iter()
                    .zip(&raised)
                    .map(|(r, &l)| (r.0, l))
                    .chain([(chain, new)])
                    .collect();
                for (r, &l) in running.iter().zip(&raised) {
                    assert!(l >= r.1 && l <= NICEST, "{running:?} {chain}");
                }
                // The job on the longest chain runs at the lowest level, each other at
                // least its levels behind it (or at the nicest).
                let top = all.iter().map(|a| a.0).max().unwrap();
                let lowest = all.iter().map(|a| a.1).min().unwrap();
                for &(c, l) in &all {
                    if c == top {
                        assert_eq!(l, lowest, "{running:?} {chain}");
                    }
                    assert!(
                        l == NICEST || l - lowest >= behind(c, top),
                        "{running:?} {chain}"
                    );
                }
            }
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod thread_tests {
    use super::*;

    /// A thread of a job raised to a level runs that much nicer; one that enters a job
    /// already at a level runs there at once; a lower level changes nothing; a job at
    /// level 0 leaves its threads alone.
    #[test]
    fn threads_of_a_job_behind_yield() {
        let nice = || nice_of(current_thread().unwrap()).unwrap();
        std::thread::spawn(move || {
            let ahead = JobThreads::default();
            let before = nice();
            ahead.enter();
            assert_eq!(nice(), before);
            assert_eq!(ahead.level(), 0);
            ahead.raise_to(3);
            assert_eq!(ahead.level(), 3);
            assert_eq!(nice(), (before + 3).min(NICEST));
            ahead.raise_to(5);
            assert_eq!(nice(), (before + 5).min(NICEST));
            ahead.raise_to(2);
            assert_eq!((ahead.level(), nice()), (5, (before + 5).min(NICEST)));
        })
        .join()
        .unwrap();
        std::thread::spawn(move || {
            let behind = JobThreads::default();
            behind.raise_to(MOST_BEHIND);
            let before = nice();
            behind.enter();
            assert_eq!(nice(), (before + MOST_BEHIND).min(NICEST));
        })
        .join()
        .unwrap();
    }
}
