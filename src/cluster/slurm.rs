//! Talking to Slurm through its commands: `sbatch` submits, `squeue` lists the queue,
//! `scontrol show job` (or `sacct`, where accounting is kept) tells how a job ended, and
//! `sinfo` gives the nodes' memory. Each answer is parsed here and nowhere else.

use std::process::Command;

use crate::error::Error;

/// A job in the queue, as `squeue` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queued {
    /// Its id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// PENDING, RUNNING, CONFIGURING, COMPLETING, REQUEUED, SUSPENDED, …
    pub state: String,
    /// Why it waits (`Dependency`, `Resources`, `None`).
    pub reason: String,
    /// Its comment (the shared directory, for bidtb's jobs).
    pub comment: String,
}

/// Run a Slurm command and give its standard output, or an error that names the command
/// and says what it printed.
fn run(program: &str, args: &[&str]) -> Result<String, Error> {
    let out = Command::new(program).args(args).output().map_err(|e| {
        Error::Scheduler(format!(
            "cannot run `{program}`: {e} (is Slurm installed here? scripts/slurm-local \
             starts a single-node Slurm on this machine)"
        ))
    })?;
    if !out.status.success() {
        let said = String::from_utf8_lossy(&out.stderr);
        return Err(Error::Scheduler(format!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            out.status,
            said.trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The memory of the largest node of `partition` (the default partition's nodes if None),
/// in MiB, as `sinfo` reports it.
pub fn largest_node_mib(partition: Option<&str>) -> Result<u64, Error> {
    let mut args = vec!["-h", "-N", "-o", "%m"];
    if let Some(p) = partition {
        args.extend(["-p", p]);
    }
    let text = run("sinfo", &args)?;
    parse_node_memory(&text).ok_or_else(|| {
        Error::Scheduler(format!(
            "`sinfo` lists no node{}",
            partition.map_or(String::new(), |p| format!(" in partition {p}"))
        ))
    })
}

/// The largest of `sinfo -o %m`'s lines (MiB; a trailing `+` is dropped).
fn parse_node_memory(text: &str) -> Option<u64> {
    text.lines()
        .filter_map(|l| l.trim().trim_end_matches('+').parse::<u64>().ok())
        .max()
}

/// The calling user's jobs in the queue.
pub fn queue() -> Result<Vec<Queued>, Error> {
    Ok(parse_queue(&run(
        "squeue",
        &["-h", "--me", "-o", "%i|%j|%T|%r|%k"],
    )?))
}

/// `squeue -o "%i|%j|%T|%r|%k"`'s lines.
fn parse_queue(text: &str) -> Vec<Queued> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.splitn(5, '|');
            Some(Queued {
                id: f.next()?.trim().to_string(),
                name: f.next()?.to_string(),
                state: f.next()?.to_string(),
                reason: f.next()?.to_string(),
                comment: f.next()?.to_string(),
            })
        })
        .collect()
}

/// How job `id` ended or stands, as the scheduler says (`FAILED, exit 1:0`), or None where
/// it no longer knows the job (`scontrol` forgets finished jobs after MinJobAge; `sacct`
/// answers where accounting is kept).
pub fn job_state(id: &str) -> Option<String> {
    if let Ok(text) = run("scontrol", &["show", "job", "-o", id]) {
        let field = |key: &str| {
            text.split_whitespace()
                .find_map(|w| w.strip_prefix(key))
                .map(str::to_string)
        };
        if let Some(state) = field("JobState=") {
            let exit = field("ExitCode=").unwrap_or_default();
            return Some(format!("{state}, exit {exit}"));
        }
    }
    let text = run(
        "sacct",
        &["-n", "-P", "-X", "-j", id, "-o", "State,ExitCode"],
    )
    .ok()?;
    let line = text.lines().next()?;
    let (state, exit) = line.split_once('|')?;
    Some(format!("{state}, exit {exit}"))
}

/// The start and end times of job `id` (`scontrol show job`'s StartTime and EndTime, as it
/// prints them: ISO 8601, comparable as text), where it still knows the job.
pub fn job_times(id: &str) -> Option<(String, String)> {
    let text = run("scontrol", &["show", "job", "-o", id]).ok()?;
    let field = |key: &str| {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(key))
            .map(str::to_string)
    };
    Some((field("StartTime=")?, field("EndTime=")?))
}

/// Submit a job with `sbatch args` (which include `--parsable`) and give its id.
pub fn submit(args: &[String]) -> Result<String, Error> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let text = run("sbatch", &args)?;
    // `--parsable` prints `ID` or `ID;CLUSTER`.
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        return Err(Error::Scheduler(format!(
            "`sbatch` printed no job id: {:?}",
            text.trim()
        )));
    }
    Ok(id)
}

/// Cancel jobs `ids`.
pub fn cancel(ids: &[String]) -> Result<(), Error> {
    if ids.is_empty() {
        return Ok(());
    }
    let args: Vec<&str> = ids.iter().map(String::as_str).collect();
    run("scancel", &args).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answers_parse() {
        assert_eq!(parse_node_memory("24105\n 1000+\n"), Some(24105));
        assert_eq!(parse_node_memory(""), None);
        let q = parse_queue("12|bidtb-4x4-KRvK|PENDING|Dependency|/s/a|b\n");
        assert_eq!(q.len(), 1);
        assert_eq!(q[0].id, "12");
        assert_eq!(q[0].reason, "Dependency");
        assert_eq!(q[0].comment, "/s/a|b");
    }
}
