//! `bidtb cluster`: a request's jobs on a Slurm cluster (`submit`, `status`) and what each
//! job runs (`job`). The jobs, their requests and the shared directory's layout are the
//! library's (`internal::cluster`); this shell reads the arguments and prints.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::parse_board;
use bidtb::Board;
use bidtb::Error;
use bidtb::Options;
use bidtb::internal::cluster::{self, Requests, Standing, State, slurm};
use bidtb::internal::generate::driver::{self, Planned};
use bidtb::internal::generate::session;

/// The arguments of `bidtb cluster`.
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    #[command(subcommand)]
    command: Sub,
}

#[derive(clap::Subcommand, Debug)]
enum Sub {
    /// Submit a request's jobs to Slurm: one job per material not yet done, in dependency
    /// order, each after the jobs of the materials it reads (`--dependency=afterok`).
    ///
    /// Each job asks for its memory estimate plus --mem-headroom percent and 256 MiB,
    /// --cpus-per-task cores and a time limit (--time, or an hour per million positions
    /// after symmetry, at least an hour); its name says board and material
    /// (bidtb-6x6-KRPvKR) and its comment the shared directory. A job runs `bidtb cluster
    /// job` (what it reads linked in from SHARED/FxR, `generate --resume` in its own
    /// directory SHARED/cluster/FxR/MATERIAL, the finished table moved into SHARED/FxR), so
    /// a job requeued, out of time or resubmitted continues from its checkpoint. Materials
    /// done or queued already are left alone: submitting again resubmits exactly the
    /// failed and the missing ones. If any job would ask more memory than the partition's
    /// largest node has, nothing is submitted and each such material is named (exit 1).
    /// Prints each material's job id; --dry-run prints the sbatch lines instead (a shell
    /// script) and submits nothing.
    Submit(SubmitArgs),
    /// Each material's state: done (its table in SHARED/FxR), queued (pending or running,
    /// from squeue), failed (its last job ended without a table; the scheduler's word and
    /// its log), or not submitted; and whether a checkpoint waits to be resumed.
    Status(StatusArgs),
    /// What one Slurm job runs (not usually typed by hand): link the finished tables the
    /// material reads from SHARED/FxR into SHARED/cluster/FxR/MATERIAL/FxR, run `bidtb
    /// generate --resume` there, and move the finished table and record into SHARED/FxR.
    /// Its memory limit is the job's (SLURM_MEM_PER_NODE) and its threads the job's cores
    /// (SLURM_CPUS_PER_TASK) unless set. Exit status: generate's.
    Job(JobArgs),
}

/// What names a request's jobs: board, materials, shared directory.
#[derive(clap::Args, Debug)]
struct Request {
    /// The board.
    #[arg(long, value_parser = parse_board)]
    board: Board,
    /// Every material with up to N men, kings included.
    #[arg(long, value_parser = clap::value_parser!(u8).range(2..=7), value_name = "N",
          conflicts_with = "material")]
    pieces: Option<u8>,
    /// These materials (comma-separated, KRvKN,KQQvK) and what they lead to.
    #[arg(long, value_name = "MATERIALS")]
    material: Option<String>,
    /// The shared tables directory (on a filesystem every node mounts).
    #[arg(long, value_name = "SHARED")]
    out: PathBuf,
}

#[derive(clap::Args, Debug)]
struct SubmitArgs {
    #[command(flatten)]
    request: Request,
    /// The partition to submit to (its largest node bounds the memory a job may ask).
    #[arg(long)]
    partition: Option<String>,
    /// The account to charge.
    #[arg(long)]
    account: Option<String>,
    /// The quality of service.
    #[arg(long)]
    qos: Option<String>,
    /// A time limit for every job, in minutes (default: an hour per million positions
    /// after symmetry, at least an hour).
    #[arg(long, value_name = "MINUTES", value_parser = clap::value_parser!(u64).range(1..))]
    time: Option<u64>,
    /// Cores per job (its worker threads).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1024))]
    cpus_per_task: u32,
    /// Memory asked beyond each job's estimate, in percent of it.
    #[arg(long, default_value_t = 25, value_name = "PERCENT")]
    mem_headroom: u64,
    /// How often a job saves its checkpoint, in seconds.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    checkpoint_seconds: u64,
    /// The bidtb the jobs run (default: this one; it must be a path every node can run).
    #[arg(long, value_name = "PATH")]
    bidtb: Option<PathBuf>,
    /// Print the sbatch lines (a shell script) instead of submitting.
    #[arg(long)]
    dry_run: bool,
    /// Print what was done as JSON: [{material, action, job, after}].
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct StatusArgs {
    #[command(flatten)]
    request: Request,
    /// Print JSON: [{material, state, job, scheduler_state, reason | log, checkpoint}].
    #[arg(long)]
    json: bool,
}

#[derive(clap::Args, Debug)]
struct JobArgs {
    /// The board.
    #[arg(long, value_parser = parse_board)]
    board: Board,
    /// The material (one, as stored).
    #[arg(long)]
    material: String,
    /// The shared tables directory.
    #[arg(long, value_name = "SHARED")]
    out: PathBuf,
    /// How often to save the checkpoint, in seconds.
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    checkpoint_seconds: u64,
}

/// `bidtb cluster`.
pub(super) fn run(args: Args) -> Result<(), (u8, Error)> {
    match args.command {
        Sub::Submit(a) => submit(a),
        Sub::Status(a) => status(a),
        Sub::Job(a) => job(a),
    }
}

/// The request's jobs (the plan of `generate --plan`) and the shared directory, made
/// absolute (every node and the comment see the same path).
fn plan(request: &Request) -> Result<(Vec<Planned>, PathBuf), (u8, Error)> {
    let names: Option<Vec<String>> = request
        .material
        .as_ref()
        .map(|m| m.split(',').map(str::to_string).collect());
    let materials =
        session::requested(request.pieces, names.as_deref(), ("--pieces", "--material"))
            .map_err(|e| (2, e))?;
    if let Some(m) = materials
        .iter()
        .find(|&&m| !bidtb::internal::index::has_positions(request.board, m))
    {
        return Err((
            2,
            Error::Usage(format!("{m} has no position on {}", request.board)),
        ));
    }
    let mut options = Options::new(request.board);
    options.method = bidtb::Method::Solve.into();
    options.materials = materials;
    let shared = std::path::absolute(&request.out).map_err(|e| (2, Error::io(&request.out, e)))?;
    Ok((driver::plan(&options), shared))
}

/// Every job's state, asking the scheduler for the queue.
fn standings(
    shared: &Path,
    board: Board,
    jobs: &[Planned],
    need_scheduler: bool,
) -> Result<Vec<Standing>, (u8, Error)> {
    let queue = match slurm::queue() {
        Ok(q) => q,
        Err(e) if need_scheduler => return Err((1, e)),
        Err(_) => Vec::new(),
    };
    Ok(cluster::standings(
        shared,
        board,
        jobs,
        &queue,
        &slurm::job_state,
    ))
}

fn submit(a: SubmitArgs) -> Result<(), (u8, Error)> {
    let (jobs, shared) = plan(&a.request)?;
    let board = a.request.board;
    let bidtb = match a.bidtb {
        Some(p) => std::path::absolute(&p).map_err(|e| (2, Error::io(&p, e)))?,
        None => std::env::current_exe().map_err(|e| (1, Error::io("bidtb", e)))?,
    };
    let requests = Requests {
        headroom_percent: a.mem_headroom,
        cpus: a.cpus_per_task,
        minutes: a.time,
        checkpoint_seconds: a.checkpoint_seconds,
        partition: a.partition.clone(),
        account: a.account,
        qos: a.qos,
        bidtb,
    };
    let standings = standings(&shared, board, &jobs, !a.dry_run)?;
    let to_send: Vec<&Planned> = jobs
        .iter()
        .zip(&standings)
        .filter(|(_, s)| !s.state.settled())
        .map(|(j, _)| j)
        .collect();
    match slurm::largest_node_mib(a.partition.as_deref()) {
        Ok(largest) => {
            cluster::check_fits(&to_send, &requests, largest, board).map_err(|e| (1, e))?
        }
        Err(e) if !a.dry_run => return Err((1, e)),
        Err(_) => {}
    }
    let stdout = &mut std::io::stdout().lock();
    let io = |e: std::io::Error| (1, Error::io("stdout", e));
    if a.dry_run {
        writeln!(
            stdout,
            "# {} of {} jobs on {board} to submit; SHARED={}",
            to_send.len(),
            jobs.len(),
            shared.display()
        )
        .map_err(io)?;
        for line in cluster::dry_run(&shared, board, &jobs, &standings, &requests) {
            writeln!(stdout, "{line}").map_err(io)?;
        }
        return Ok(());
    }
    if !to_send.is_empty() {
        bidtb::internal::dirlock::ensure_dir(&shared).map_err(|e| (1, e))?;
    }
    let mut sent: Vec<String> = Vec::new();
    let mut send = |args: &[String]| {
        let id = slurm::submit(args)?;
        sent.push(id.clone());
        Ok(id)
    };
    let done = cluster::submit_all(&shared, board, &jobs, &standings, &requests, &mut send);
    let done = match done {
        Ok(d) => d,
        Err(e) => {
            // Half a submission would leave jobs waiting for ones never sent: cancel them.
            let _ = slurm::cancel(&sent);
            return Err((1, e));
        }
    };
    if a.json {
        let text = serde_json::to_string_pretty(&done).expect("serialises");
        return writeln!(stdout, "{text}").map_err(io);
    }
    for d in &done {
        let id = d.job.as_deref().unwrap_or("-");
        let after = if d.after.is_empty() {
            String::new()
        } else {
            format!(" after {}", d.after.join(","))
        };
        writeln!(stdout, "{:<10} {:<9} {id}{after}", d.material, d.action).map_err(io)?;
    }
    let count = |what: &str| done.iter().filter(|d| d.action == what).count();
    writeln!(
        stdout,
        "{} submitted, {} queued already, {} done; `bidtb cluster status --board {board} {} \
         --out {}` follows them",
        count("submitted"),
        count("queued"),
        count("done"),
        request_flag(&a.request),
        shared.display()
    )
    .map_err(io)
}

/// The request's flag as typed: `--pieces N` or `--material LIST`.
fn request_flag(r: &Request) -> String {
    match (&r.pieces, &r.material) {
        (Some(n), _) => format!("--pieces {n}"),
        (None, Some(m)) => format!("--material {m}"),
        (None, None) => String::new(),
    }
}

fn status(a: StatusArgs) -> Result<(), (u8, Error)> {
    let (jobs, shared) = plan(&a.request)?;
    let standings = standings(&shared, a.request.board, &jobs, false)?;
    let stdout = &mut std::io::stdout().lock();
    let io = |e: std::io::Error| (1, Error::io("stdout", e));
    if a.json {
        let text = serde_json::to_string_pretty(&standings).expect("serialises");
        return writeln!(stdout, "{text}").map_err(io);
    }
    for s in &standings {
        let detail = match &s.state {
            State::Done => "done".to_string(),
            State::Queued {
                job,
                scheduler_state,
                reason,
            } => format!("{} job {job} ({reason})", scheduler_state.to_lowercase()),
            State::Failed {
                job,
                scheduler_state,
                log,
            } => format!("failed: job {job} {scheduler_state}; log {log}"),
            State::NotSubmitted => "not submitted".to_string(),
        };
        let ckpt = if s.checkpoint {
            ", checkpoint saved"
        } else {
            ""
        };
        writeln!(stdout, "{:<10} {detail}{ckpt}", s.material).map_err(io)?;
    }
    let n = |f: fn(&State) -> bool| standings.iter().filter(|s| f(&s.state)).count();
    writeln!(
        stdout,
        "{} of {} done, {} queued, {} failed, {} not submitted",
        n(|s| *s == State::Done),
        standings.len(),
        n(|s| matches!(s, State::Queued { .. })),
        n(|s| matches!(s, State::Failed { .. })),
        n(|s| *s == State::NotSubmitted),
    )
    .map_err(io)
}

fn job(a: JobArgs) -> Result<(), (u8, Error)> {
    let material: bidtb::Material = a.material.parse().map_err(|e| (2, e))?;
    let (stored, _) = material.stored();
    let request = Request {
        board: a.board,
        pieces: None,
        material: Some(stored.to_string()),
        out: a.out.clone(),
    };
    let (jobs, shared) = plan(&request)?;
    let job = cluster::find(&jobs, stored).expect("a material's plan holds it");
    let dir = cluster::prepare_job(&shared, a.board, job).map_err(|e| (1, e))?;
    let exe = std::env::current_exe().map_err(|e| (1, Error::io("bidtb", e)))?;
    let mut generate = std::process::Command::new(exe);
    generate.args(["generate", "--board", &a.board.to_string()]);
    generate.args(["--method", "solve", "--material", &job.material, "--resume"]);
    generate.args(["--jobs", "1", "--checkpoint-seconds"]);
    generate
        .arg(a.checkpoint_seconds.to_string())
        .arg("--out")
        .arg(&dir);
    if let Ok(cpus) = std::env::var("SLURM_CPUS_PER_TASK") {
        generate.args(["--threads", cpus.trim()]);
    }
    if std::env::var_os("BIDTB_MEMORY_LIMIT").is_none()
        && let Ok(mb) = std::env::var("SLURM_MEM_PER_NODE")
    {
        generate.env("BIDTB_MEMORY_LIMIT", format!("{}M", mb.trim()));
    }
    let status = generate
        .status()
        .map_err(|e| (1, Error::io("bidtb generate", e)))?;
    if !status.success() {
        let code = status.code().unwrap_or(1).clamp(1, 255) as u8;
        return Err((
            code,
            Error::Interrupted(format!(
                "{} on {}: generate ended with {status}; its checkpoint (if any) is in {}",
                job.material,
                a.board,
                dir.display()
            )),
        ));
    }
    cluster::publish_job(&shared, a.board, &job.material).map_err(|e| (1, e))?;
    note!(
        "{} on {}: certified and moved to {}",
        job.material,
        a.board,
        shared.join(a.board.to_string()).display()
    );
    Ok(())
}
