//! A request's jobs on a batch cluster: the solve method's plan ([`crate::generate::driver::plan`],
//! one job per material in dependency order) turned into scheduler jobs with dependencies,
//! memory and time requests from the estimates, and resume; the state of each material from
//! the shared tables directory and the scheduler; and what one job runs ([`run_job`]).
//!
//! The layout of a shared directory `SHARED` (on a filesystem every node mounts):
//! - `SHARED/FxR/M.bidtb`, `M.json`: the finished tables, as one `generate` writes them. A
//!   job moves its own there only once certified (a rename within the filesystem).
//! - `SHARED/cluster/FxR/M/`: material M's job directory: its scheduler log
//!   (`slurm-ID.out`), the ids it was submitted under (`jobs`), and while it runs its
//!   working directory `FxR/` (the tables it reads linked in from `SHARED/FxR`, its
//!   checkpoint, its lock). Two jobs of one material share that lock, so they never run at
//!   once; a resubmitted job resumes from the checkpoint there.
//!
//! The scheduler is Slurm ([`slurm`]); another scheduler can run the same jobs from
//! `generate --plan --json` and `bidtb cluster job`.

pub mod slurm;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::generate::driver::Planned;
use crate::geometry::Board;
use crate::material::Material;

/// Memory every job needs beyond its estimate: the process, its thread stacks, the maps of
/// the tables it reads, in MiB.
pub const BASE_MIB: u64 = 256;

/// What a submission asks of the scheduler for every job, beyond each one's estimates.
#[derive(Clone, Debug)]
pub struct Requests {
    /// Memory asked beyond each estimate, in percent of it.
    pub headroom_percent: u64,
    /// Cores per job (the job's `--threads`).
    pub cpus: u32,
    /// A time limit for every job in minutes; `None`: from each job's positions
    /// ([`time_minutes`]).
    pub minutes: Option<u64>,
    /// The job's checkpoint interval in seconds (its `--checkpoint-seconds`).
    pub checkpoint_seconds: u64,
    /// Passed through to `sbatch`: partition, account, QoS.
    pub partition: Option<String>,
    /// The account to charge.
    pub account: Option<String>,
    /// The quality of service.
    pub qos: Option<String>,
    /// The `bidtb` every job runs (a path every node can run).
    pub bidtb: PathBuf,
}

/// The memory a job asks for, in MiB: its estimate with the headroom, plus [`BASE_MIB`].
pub fn memory_mib(job: &Planned, requests: &Requests) -> u64 {
    let with = job.memory_bytes as u128 * (100 + requests.headroom_percent as u128) / 100;
    (with.div_ceil(1 << 20) as u64).saturating_add(BASE_MIB)
}

/// The default time limit of a job in minutes: an hour for every million positions after
/// symmetry, at least an hour. Generous on purpose (6x6 five-man jobs take about 20
/// seconds of CPU a million; 8x8 KNvKP, whose values run to 21,853 digits, about ten
/// minutes): a job that runs out of time has saved its checkpoint, and the next `submit`
/// resumes it.
pub fn time_minutes(job: &Planned) -> u64 {
    (job.canonical_positions as u64).div_ceil(1_000_000).max(1) * 60
}

/// The job name of material `m` on `board`: `bidtb-4x4-KRvKN`.
pub fn job_name(board: Board, m: &str) -> String {
    format!("bidtb-{board}-{m}")
}

/// Material `m`'s job directory in `shared`.
pub fn job_dir(shared: &Path, board: Board, m: &str) -> PathBuf {
    shared.join("cluster").join(board.to_string()).join(m)
}

/// The finished table of `m` in `shared` and its record.
fn finished_files(shared: &Path, board: Board, m: &str) -> [PathBuf; 2] {
    let dir = shared.join(board.to_string());
    [
        dir.join(format!("{m}.bidtb")),
        dir.join(format!("{m}.json")),
    ]
}

/// Whether `shared` holds material `m`'s finished table: its record beside it and the
/// table certified, of this material and board (its header checked, not every checksum:
/// the job that made it verified it, and every job that reads it checks it whole).
pub fn is_done(shared: &Path, board: Board, m: &str) -> bool {
    let [table, record] = finished_files(shared, board, m);
    if !record.is_file() {
        return false;
    }
    let Ok(material) = m.parse() else {
        return false;
    };
    crate::table::Table::open_certified(&table, board, material).is_ok()
}

/// Quote `s` for a POSIX shell where it needs it.
pub fn shell_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The command a job runs (`bidtb cluster job …`), as one shell line.
pub fn job_command(shared: &Path, board: Board, m: &str, requests: &Requests) -> String {
    [
        "exec".to_string(),
        shell_quote(&requests.bidtb.display().to_string()),
        "cluster job --board".into(),
        board.to_string(),
        "--material".into(),
        m.to_string(),
        "--out".into(),
        shell_quote(&shared.display().to_string()),
        "--checkpoint-seconds".into(),
        requests.checkpoint_seconds.to_string(),
    ]
    .join(" ")
}

/// The `sbatch` arguments of `job` (without the program name): name, comment (the shared
/// directory, which tells two submissions of one board apart), memory, time, cores, log,
/// requeue, dependencies on `after` (job ids, or shell variables for a dry run), and the
/// job's command.
pub fn sbatch_args(
    shared: &Path,
    board: Board,
    job: &Planned,
    requests: &Requests,
    after: &[String],
) -> Vec<String> {
    let m = &job.material;
    let minutes = requests.minutes.unwrap_or_else(|| time_minutes(job));
    let mut args = vec![
        "--parsable".to_string(),
        format!("--job-name={}", job_name(board, m)),
        format!("--comment={}", shared.display()),
        format!("--mem={}M", memory_mib(job, requests)),
        format!("--time={minutes}"),
        format!("--cpus-per-task={}", requests.cpus),
        "--nodes=1".into(),
        "--requeue".into(),
        format!(
            "--output={}",
            job_dir(shared, board, m).join("slurm-%j.out").display()
        ),
    ];
    for (flag, value) in [
        ("partition", &requests.partition),
        ("account", &requests.account),
        ("qos", &requests.qos),
    ] {
        if let Some(v) = value {
            args.push(format!("--{flag}={v}"));
        }
    }
    if !after.is_empty() {
        args.push(format!("--dependency=afterok:{}", after.join(":")));
        // A job whose dependency failed is cancelled rather than left pending forever.
        args.push("--kill-on-invalid-dep=yes".into());
    }
    args.push(format!(
        "--wrap={}",
        job_command(shared, board, m, requests)
    ));
    args
}

/// Where a material stands.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum State {
    /// Its certified table is in the shared directory.
    Done,
    /// A job of it is in the scheduler's queue (pending, running, …).
    Queued {
        /// The job id.
        job: String,
        /// The scheduler's state (PENDING, RUNNING, …).
        scheduler_state: String,
        /// Why it waits, where the scheduler says.
        reason: String,
    },
    /// Its last job ended without its table (failed, cancelled, out of time or memory).
    Failed {
        /// The job id.
        job: String,
        /// The scheduler's state, or "unknown" where it has forgotten the job.
        scheduler_state: String,
        /// Its log.
        log: String,
    },
    /// Never submitted from this directory.
    NotSubmitted,
}

impl State {
    /// Whether a submission leaves it as it is (done, or a job of it queued).
    pub fn settled(&self) -> bool {
        matches!(self, State::Done | State::Queued { .. })
    }
}

/// One material's state, with whether its job directory holds a checkpoint to resume.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Standing {
    /// The stored material.
    pub material: String,
    /// Where it stands.
    #[serde(flatten)]
    pub state: State,
    /// Whether a checkpoint waits in its job directory (the next job resumes from it).
    pub checkpoint: bool,
}

/// The ids a material was submitted under, oldest first (from its job directory).
fn submitted_ids(shared: &Path, board: Board, m: &str) -> Vec<String> {
    std::fs::read_to_string(job_dir(shared, board, m).join("jobs"))
        .map(|t| t.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Note that material `m` was submitted as job `id`.
fn note_submitted(shared: &Path, board: Board, m: &str, id: &str) -> Result<(), Error> {
    use std::io::Write;
    let path = job_dir(shared, board, m).join("jobs");
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(|e| Error::io(&path, e))?;
    writeln!(f, "{id}").map_err(|e| Error::io(&path, e))
}

/// Whether material `m`'s job directory holds a solve checkpoint.
fn has_checkpoint(shared: &Path, board: Board, m: &str) -> bool {
    let dir = job_dir(shared, board, m).join(board.to_string());
    std::fs::read_dir(dir).is_ok_and(|entries| {
        entries.flatten().any(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            name.starts_with("solve-") && name.ends_with(".ckpt")
        })
    })
}

/// Every job's state: done from the shared directory, queued from the scheduler's queue
/// (`queue`, by job name and comment), failed from the scheduler's word on the last id
/// submitted (or "unknown" once it has forgotten it).
pub fn standings(
    shared: &Path,
    board: Board,
    jobs: &[Planned],
    queue: &[slurm::Queued],
    scheduler: &dyn Fn(&str) -> Option<String>,
) -> Vec<Standing> {
    let comment = shared.display().to_string();
    jobs.iter()
        .map(|job| {
            let m = job.material.as_str();
            let name = job_name(board, m);
            let queued = queue
                .iter()
                .find(|q| q.name == name && q.comment == comment);
            let state = if is_done(shared, board, m) {
                State::Done
            } else if let Some(q) = queued {
                State::Queued {
                    job: q.id.clone(),
                    scheduler_state: q.state.clone(),
                    reason: q.reason.clone(),
                }
            } else if let Some(id) = submitted_ids(shared, board, m).pop() {
                State::Failed {
                    scheduler_state: scheduler(&id).unwrap_or_else(|| "unknown".into()),
                    log: job_dir(shared, board, m)
                        .join(format!("slurm-{id}.out"))
                        .display()
                        .to_string(),
                    job: id,
                }
            } else {
                State::NotSubmitted
            };
            Standing {
                material: m.to_string(),
                checkpoint: has_checkpoint(shared, board, m),
                state,
            }
        })
        .collect()
}

/// The jobs a submission would send, with the materials whose memory request exceeds
/// `largest_mib` (the partition's largest node): an error naming them and their requests
/// if there are any (nothing is submitted then).
pub fn check_fits(
    jobs: &[&Planned],
    requests: &Requests,
    largest_mib: u64,
    board: Board,
) -> Result<(), Error> {
    let over: Vec<String> = jobs
        .iter()
        .filter(|j| memory_mib(j, requests) > largest_mib)
        .map(|j| {
            format!(
                "{} asks {} MiB ({} MiB estimated)",
                j.material,
                memory_mib(j, requests),
                j.memory_bytes.div_ceil(1 << 20)
            )
        })
        .collect();
    if over.is_empty() {
        return Ok(());
    }
    Err(Error::Resources(format!(
        "nothing submitted: {} on {board} {} more memory than the largest node of the \
         partition has ({largest_mib} MiB): {}",
        if over.len() == 1 {
            "one job"
        } else {
            "some jobs"
        },
        if over.len() == 1 { "needs" } else { "need" },
        over.join("; ")
    )))
}

/// The jobs `job` waits for: those in `ids` (a job id, or a shell variable in a dry run,
/// per material) of the materials it needs.
fn waits_for(job: &Planned, ids: &HashMap<&str, String>) -> Vec<String> {
    job.needs
        .iter()
        .filter_map(|n| ids.get(n.as_str()).cloned())
        .collect()
}

/// What one submission did per material.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Submitted {
    /// The stored material.
    pub material: String,
    /// "submitted", "queued" (a job of it was queued already), or "done".
    pub action: String,
    /// Its job id, where it has one.
    pub job: Option<String>,
    /// The ids it waits for.
    pub after: Vec<String>,
}

/// Submit every job of `jobs` (in dependency order) that is neither done nor queued, each
/// after the queued or submitted jobs of the materials it needs; `submit` sends one job's
/// `sbatch` arguments and gives its id.
pub fn submit_all(
    shared: &Path,
    board: Board,
    jobs: &[Planned],
    standings: &[Standing],
    requests: &Requests,
    submit: &mut dyn FnMut(&[String]) -> Result<String, Error>,
) -> Result<Vec<Submitted>, Error> {
    let mut ids: HashMap<&str, String> = HashMap::new();
    let mut out = Vec::new();
    for (job, standing) in jobs.iter().zip(standings) {
        let m = job.material.as_str();
        let (action, id, after) = match &standing.state {
            State::Done => ("done", None, vec![]),
            State::Queued { job: id, .. } => ("queued", Some(id.clone()), vec![]),
            _ => {
                let after = waits_for(job, &ids);
                let dir = job_dir(shared, board, m);
                crate::dirlock::ensure_dir(&dir)?;
                let id = submit(&sbatch_args(shared, board, job, requests, &after))?;
                note_submitted(shared, board, m, &id)?;
                ("submitted", Some(id), after)
            }
        };
        if let Some(id) = &id {
            ids.insert(m, id.clone());
        }
        out.push(Submitted {
            material: m.to_string(),
            action: action.into(),
            job: id,
            after,
        });
    }
    Ok(out)
}

/// A dry run: the shell lines that would submit the jobs not done or queued, each job's id
/// kept in a shell variable named for its material that later jobs depend on.
pub fn dry_run(
    shared: &Path,
    board: Board,
    jobs: &[Planned],
    standings: &[Standing],
    requests: &Requests,
) -> Vec<String> {
    let mut lines = Vec::new();
    let mut known: HashMap<&str, String> = HashMap::new();
    for (job, standing) in jobs.iter().zip(standings) {
        let m = job.material.as_str();
        match &standing.state {
            State::Done => lines.push(format!("# {m}: done")),
            State::Queued { job: id, .. } => {
                lines.push(format!("# {m}: queued as job {id}"));
                known.insert(m, id.clone());
            }
            _ => {
                let after = waits_for(job, &known);
                let args: Vec<String> = sbatch_args(shared, board, job, requests, &after)
                    .iter()
                    .map(|a| {
                        // The dependency names shell variables: leave them unquoted.
                        if a.starts_with("--dependency=") {
                            a.clone()
                        } else {
                            shell_quote(a)
                        }
                    })
                    .collect();
                lines.push(format!(
                    "mkdir -p {}",
                    shell_quote(&job_dir(shared, board, m).display().to_string())
                ));
                lines.push(format!("{m}=$(sbatch {})", args.join(" ")));
                known.insert(m, format!("${m}"));
            }
        }
    }
    lines
}

/// What one job does (`bidtb cluster job`): in material `m`'s job directory, link the
/// finished tables it reads from `shared`, run `generate` there with `--resume` (by
/// `generate`, a command that is the program's own `generate` with the arguments given),
/// and on success move its table and record into `shared`. The tables it reads must all be
/// done: one missing is an error naming it (its job has not finished).
pub fn prepare_job(shared: &Path, board: Board, job: &Planned) -> Result<PathBuf, Error> {
    let dir = job_dir(shared, board, &job.material);
    let work = dir.join(board.to_string());
    crate::dirlock::ensure_dir(&work)?;
    for r in &job.reads {
        if !is_done(shared, board, r) {
            return Err(Error::Table {
                path: finished_files(shared, board, r)[0].display().to_string(),
                reason: format!(
                    "is not there or not certified: {} reads {r}, whose job has not \
                     finished (see `bidtb cluster status`)",
                    job.material
                ),
            });
        }
        for file in finished_files(shared, board, r) {
            let link = work.join(file.file_name().expect("a file"));
            // A link left by an earlier attempt may point at an older file: make it anew.
            let _ = std::fs::remove_file(&link);
            let target = std::fs::canonicalize(&file).map_err(|e| Error::io(&file, e))?;
            std::os::unix::fs::symlink(&target, &link).map_err(|e| Error::io(&link, e))?;
        }
    }
    Ok(dir)
}

/// After a job's `generate` succeeded: move its table, then its record, into `shared` (the
/// record last: a material counts as done once both are there), and drop the job's working
/// directory (its links and lock).
pub fn publish_job(shared: &Path, board: Board, m: &str) -> Result<(), Error> {
    let work = job_dir(shared, board, m).join(board.to_string());
    let target = shared.join(board.to_string());
    crate::dirlock::ensure_dir(&target)?;
    for (name, to) in [format!("{m}.bidtb"), format!("{m}.json")]
        .iter()
        .zip(finished_files(shared, board, m))
    {
        move_into(&work.join(name), &to)?;
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok(())
}

/// Move `from` to `to` by a rename; across filesystems, by a copy under a temporary name
/// beside `to` renamed into place.
fn move_into(from: &Path, to: &Path) -> Result<(), Error> {
    match std::fs::rename(from, to) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::CrossesDevices => {
            let name = to.file_name().expect("a file").to_string_lossy();
            let part = to.with_file_name(format!(".{name}.part"));
            std::fs::copy(from, &part).map_err(|e| Error::io(&part, e))?;
            std::fs::rename(&part, to).map_err(|e| Error::io(to, e))?;
            std::fs::remove_file(from).map_err(|e| Error::io(from, e))
        }
        Err(e) => Err(Error::io(from, e)),
    }
}

/// Find `material` in `jobs`.
pub fn find(jobs: &[Planned], material: Material) -> Option<&Planned> {
    let name = material.to_string();
    jobs.iter().find(|j| j.material == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(m: &str, needs: &[&str], memory_bytes: u64) -> Planned {
        Planned {
            material: m.into(),
            needs: needs.iter().map(|s| s.to_string()).collect(),
            reads: needs.iter().map(|s| s.to_string()).collect(),
            positions: 10,
            canonical_positions: 2_500_000,
            counted: true,
            memory_bytes,
            disk_bytes: 1,
            scratch_bytes: 0,
        }
    }

    fn requests() -> Requests {
        Requests {
            headroom_percent: 25,
            cpus: 2,
            minutes: None,
            checkpoint_seconds: 600,
            partition: Some("big".into()),
            account: None,
            qos: None,
            bidtb: "/opt/bin/bidtb".into(),
        }
    }

    #[test]
    fn a_job_asks_its_estimate_with_headroom_and_time_by_positions() {
        let j = job("KRvK", &["KvK"], 1 << 30);
        assert_eq!(memory_mib(&j, &requests()), 1280 + BASE_MIB);
        assert_eq!(time_minutes(&j), 180);
        let args = sbatch_args(
            Path::new("/shared"),
            "4x4".parse().unwrap(),
            &j,
            &requests(),
            &["17".into()],
        );
        for want in [
            "--job-name=bidtb-4x4-KRvK",
            "--comment=/shared",
            "--mem=1536M",
            "--time=180",
            "--cpus-per-task=2",
            "--partition=big",
            "--dependency=afterok:17",
            "--output=/shared/cluster/4x4/KRvK/slurm-%j.out",
            "--wrap=exec /opt/bin/bidtb cluster job --board 4x4 --material KRvK --out /shared \
             --checkpoint-seconds 600",
        ] {
            assert!(args.iter().any(|a| a == want), "{want} not in {args:?}");
        }
        assert!(!args.iter().any(|a| a.starts_with("--account")));
    }

    #[test]
    fn a_job_over_the_largest_node_is_named() {
        let (small, big) = (job("KRvK", &[], 1 << 20), job("KQRvKQ", &[], 40 << 30));
        let r = requests();
        assert!(check_fits(&[&small], &r, 1024, "4x4".parse().unwrap()).is_ok());
        let e = check_fits(&[&small, &big], &r, 24_000, "8x8".parse().unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("KQRvKQ asks 51456 MiB") && !e.contains("KRvK "),
            "{e}"
        );
    }

    #[test]
    fn quoting_keeps_what_the_shell_would_split() {
        assert_eq!(shell_quote("/a/b-c"), "/a/b-c");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }

    #[test]
    fn a_dry_run_names_each_dependency_by_its_variable() {
        let jobs = [job("KvK", &[], 1), job("KRvK", &["KvK"], 1)];
        let standings: Vec<Standing> = jobs
            .iter()
            .map(|j| Standing {
                material: j.material.clone(),
                state: State::NotSubmitted,
                checkpoint: false,
            })
            .collect();
        let lines = dry_run(
            Path::new("/s"),
            "4x4".parse().unwrap(),
            &jobs,
            &standings,
            &requests(),
        );
        assert!(lines[1].starts_with("KvK=$(sbatch --parsable"), "{lines:?}");
        assert!(!lines[1].contains("--dependency"), "{lines:?}");
        assert!(lines[3].contains("--dependency=afterok:$KvK "), "{lines:?}");
    }
}
