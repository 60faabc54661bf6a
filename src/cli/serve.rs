//! `bidtb serve`: open the tables once and serve the API and the explorer page.

use super::Addrs;
use super::TablesDir;
use super::parse_addr;
use std::io::Write;
use std::path::Path;

use crate::server;
use bidtb::Error;
use bidtb::Tablebase;

/// The arguments of `bidtb serve` (its help is the subcommand's, in `cli/mod.rs`).
#[derive(clap::Args, Debug)]
pub(super) struct Args {
    #[command(flatten)]
    pub tables: TablesDir,
    /// Address to listen on, HOST:PORT: an IP address or a host name that resolves
    /// (localhost:8080, [::1]:8080); port 0 picks a free port. The address bound is
    /// printed.
    #[arg(long, default_value = "127.0.0.1:8080", value_parser = parse_addr)]
    pub addr: Addrs,
    /// Seconds a client gets to send a request's line and headers.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub header_timeout: u64,
    /// The most games against the engine kept at once.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_games: u64,
    /// Seconds an untouched game is kept.
    #[arg(long, default_value_t = 3600, value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub game_age: u64,
    /// Milliseconds a request waits for the engine's chip ranks it needs (computed in the
    /// background, one material at a time, on a chips game's first request per material
    /// and side) before answering 503 with Retry-After; 0: never wait.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(0..=60_000))]
    pub ranks_wait: u64,
}

/// `bidtb serve`: the arguments read, the server run until stopped.
pub(super) fn main(args: Args) -> Result<(), (u8, Error)> {
    let limits = server::GameLimits {
        max: args.max_games as usize,
        max_age: std::time::Duration::from_secs(args.game_age),
        ranks_wait: std::time::Duration::from_millis(args.ranks_wait),
    };
    run(&args.tables.tables, args.addr, args.header_timeout, limits)
}

pub(super) fn run(
    dir: &Path,
    addr: super::Addrs,
    header_timeout: u64,
    limits: server::GameLimits,
) -> Result<(), (u8, Error)> {
    // A served file truncated in place: an error for that file, not SIGBUS for the server
    // (docs/src/reliability.md).
    bidtb::internal::mapguard::install();
    let tables = Tablebase::open(dir).map_err(|e| (1, e))?;
    let boards: Vec<String> = tables.boards().map(|b| b.to_string()).collect();
    if boards.is_empty() {
        note!(
            "bidtb: warning: no tables under {} (make them with `bidtb generate --out {}`)",
            dir.display(),
            dir.display()
        );
    }
    let timeout = std::time::Duration::from_secs(header_timeout);
    server::serve(tables, &addr.0, timeout, limits, |bound| {
        // The first line on stdout is the address, for scripts and tests to read.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "listening on http://{bound}/");
        let _ = out.flush();
        note!(
            "serving {} ({}); stop with Ctrl-C",
            dir.display(),
            if boards.is_empty() {
                "no boards".to_string()
            } else {
                boards.join(", ")
            }
        );
    })
    .map_err(|e| (1, e))
}
