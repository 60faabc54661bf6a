//! The command line: argument parsing and dispatch to the subcommands, each in its own file
//! (`generate`, `query`, `map`, `plot`, `serve`, `verify`, `upgrade`, …), and the exit codes.
//!
//! Exit status: 0 on success (including a run capped by `--max-iterations`, which says so),
//! 1 when work failed at run time (a write error, a missing or corrupt table, a failed
//! verification or certificate), 2 for bad usage or input (arguments, FEN, position).

/// `eprintln!` that never panics: a line of progress or a message on stderr, dropped when
/// stderr is closed (`bidtb generate 2>&1 | head -3`) or cannot be written. What a run
/// reports on stderr is for the reader; the run's work does not depend on it.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod atlas;
mod chips;
mod cluster;
mod dump;
mod generate;
mod map;
mod play;
mod plot;
mod query;
mod serve;
mod upgrade;
mod verify;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use bidtb::Board;
use bidtb::Error;

/// Exact endgame tablebases for bidding chess (and random-turn chess).
///
/// A position's value is the share of the money Black needs to win the bidding game, which
/// equals White's winning probability when a fair coin decides who moves. Materials are
/// named like Syzygy's files (KRvK, KRvKN, KQQvK, KPvKP); any material of up to seven men
/// can be generated, as memory and disk allow (every material up to five men is made on
/// boards up to 5x5). Values are exact rationals (α, and β where play that never ends makes
/// them differ), computed either by the study's method on the three-piece materials
/// (iterating lower and upper bounds αₙ, βₙ and guessing each value as the simplest
/// rational between them until the guesses satisfy every equation) or by exact linear
/// solves under improving strategies (`generate --method solve`, any board, any material),
/// and proved by a certificate either way.
///
/// Typical use: `bidtb generate` (the six three-piece materials on 8x8), then
/// `bidtb query '3k3R/8/3K4/8/8/8/8/8'`, `bidtb verify` to re-prove the files, and
/// `bidtb serve` to explore them in a browser at http://127.0.0.1:8080/.
///
/// Exit status: 0 success; 1 run-time failure (write error, missing or corrupt table or
/// checkpoint, failed certificate or verification, too little memory); 2 bad arguments,
/// FEN or position; 130 a run of `generate` interrupted by Ctrl-C or SIGTERM (`serve` stops
/// on them with 0).
#[derive(Parser, Debug)]
#[command(name = "bidtb", version, about, long_about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Compute every position of some materials on a board: the study's six three-piece
    /// materials (default), every material up to N men (--pieces 4), or the named ones and
    /// what they lead to (--material KRvKN).
    ///
    /// With --method iterate (the default, the study's method, three-piece materials only):
    /// iterates αₙ, βₙ for KvK, KQvK, KRvK, KBvK, KNvK, KPvK jointly, tracks the guesses sₙ,
    /// and stops once they form a Richman function; on 8x8 the first Richman iteration is
    /// 2644. With --method solve (any material): one material at a time in dependency
    /// order, the materials its captures and promotions lead to read from their tables;
    /// floating-point value iteration proposes one move per side and position, exact linear
    /// solves give the values those moves make, strictly worse moves are switched (the
    /// opponent's best reply first, then the side reaching for a capture) until every
    /// equation holds; α and β are solved apart where they differ. Either way every value is
    /// then proved exact (the closures T and T′). Prints a summary and writes
    /// DIR/FxR/summary.json, DIR/FxR/quiescent.txt, DIR/FxR/alpha-below-beta.txt (where α < β),
    /// DIR/FxR/convergence.csv (iterate) and, for each material proved, its table
    /// (DIR/FxR/KRvKN.bidtb; format in docs/src/format.md) and record (DIR/FxR/KRvKN.json). The
    /// two methods write the same tables, apart from the header's iteration fields.
    ///
    /// Each material's memory is estimated before it starts (against BIDTB_MEMORY_LIMIT,
    /// `ulimit -v` and the machine's memory). One that does not fit is skipped with its
    /// estimate and the run goes on; materials that need a skipped one are skipped too. All
    /// are named on stderr and in summary.json ("skipped"), and the exit status is then 1;
    /// with more memory, --resume keeps what was made and makes the rest. While a material
    /// runs, a guard stops it cleanly (and skips it) once its heap passes the limit
    /// (BIDTB_MEMORY_GUARD sets the guard's own). Where α and β are solved apart, α's values
    /// wait in a temporary file while β is solved if they hold more than 256 MiB
    /// (BIDTB_SPILL_ABOVE sets it; 0: always). Once the numerators of the values solved
    /// hold more than 2 GiB, the rest go to temporary files that the operating system may
    /// keep on disk (BIDTB_PAGE_ABOVE sets it; 0: always): both kinds of file are unnamed,
    /// in the output directory, and gone when the run ends, however it ends.
    Generate(generate::Args),
    /// One row of facts per board over a range of boards, solved with --method solve.
    ///
    /// For every board: positions, distinct values, the largest denominator (digits, its
    /// factors by trial division, a position that holds it), quiescent positions and how
    /// many are not 1/2, zugzwangs (negative bids) per class, positions with α < β, the
    /// largest T and T′ levels, seconds and peak memory. Writes DIR/atlas.json and
    /// DIR/atlas.md, and each board's row to DIR/FxR/atlas-row.json as soon as it is known:
    /// run it again after an interruption and finished boards are reused. Boards over the
    /// time budget or the memory estimate are skipped and listed.
    Atlas(atlas::Args),
    /// Look up a position: exact value, every move of each side with its value and progress
    /// level (best first), the bid and whether it is a zugzwang.
    ///
    /// The position is a FEN piece placement, ranks from the top separated by '/', of any
    /// board size from 2x2 to 16x16 (the size follows from the rows) and any material the
    /// tables hold; the side-to-move and castling fields are accepted and ignored (a
    /// bidding-chess position has no side to move), the fourth field is the en-passant
    /// square where a pawn has just double-stepped beside an enemy pawn. A material whose
    /// weaker side is White (KvKR, KNvKR, ...) is answered through its colour mirror. Where
    /// α < β, the value shown is α, with β beside it. Moves are in coordinate notation
    /// (h8d8, d7d8n).
    Query(query::Args),
    /// The value of a position for every square of the black king (a heatmap).
    ///
    /// Keeps every man but the black king where the FEN has it and puts the black king on
    /// each free square in turn. Prints a grid of decimals, or JSON with --json;
    /// with --svg FILE writes a standalone SVG heatmap with a colour scale and the exact
    /// value of each square in its tooltip.
    Map(map::Args),
    /// Plot how a run converged, from DIR/FxR/convergence.csv and DIR/FxR/summary.json.
    ///
    /// Per class, the number of guesses that changed at each iteration (lines) and the
    /// failed equations at each Richman test (circles), against n on a log scale, with the
    /// first Richman iteration marked.
    Plot(plot::Args),
    /// Serve the tables over HTTP: a JSON API and an explorer page.
    ///
    /// GET /api/query?fen=… answers as `bidtb query --json`; GET /api/map?fen=… as
    /// `bidtb map --json`; GET / is the explorer: a board to set up by clicking, the exact
    /// value, both sides' moves (click one to play it), a heatmap, and Play: a game against
    /// the engine. Games over HTTP (docs/src/guide/play.md): POST /api/games {"fen", "mode", "colour",
    /// "bankroll" | "chips", "tiebreak"} starts one; GET /api/games/ID reads it (?advice=1
    /// adds advice); POST /api/games/ID/bid {"bid": "1/8"} and POST /api/games/ID/move
    /// {"move": "h8d8"} or {"hand_over": true} play it. Errors are JSON {"error": "…"} with
    /// status 400 (bad input, a malformed request line), 404 (missing table, unknown path or
    /// game), 405 (another method), 409 (a game's input out of turn or after its end) or 503
    /// (--max-games reached). Stop with Ctrl-C or
    /// SIGTERM: no new connections, those under way get 5 seconds.
    ///
    /// Guarded against slow and idle clients: one request per connection, its line and
    /// headers within --header-timeout, the whole connection within three times that, and
    /// at most 256 connections at once (fewer under a small `ulimit -n`); more wait their
    /// turn.
    ///
    /// The table files are memory-mapped: they must not be modified in place (truncated,
    /// rewritten) while served. A file truncated all the same is refused (500, naming it)
    /// instead of ending the server with SIGBUS; the other tables still answer. `bidtb
    /// generate` never does that: it writes new files and renames them over the old ones,
    /// which leaves the served maps intact; restart the server to serve the new tables.
    Serve(serve::Args),
    /// Re-check table files from their stored values alone.
    ///
    /// Checks every file's checksums and structure, that it lists exactly the positions of
    /// its material, then re-checks every Richman equation exactly (with the values of the
    /// materials its moves lead to read from their tables; α's and β's apart where they
    /// differ) and recomputes the closures T and T′, comparing every stored progress level.
    /// Chip files beside the tables (DIR/FxR/chips-K) are re-checked too: every stored
    /// threshold must be the bidding step of its successors' (docs/src/guide/chips.md). Exit status 0
    /// only if everything holds.
    Verify(verify::Args),
    /// Rewrite the tables of earlier builds in the format this build writes: the help
    /// text is [`upgrade_about`] and [`upgrade_long_about`], which name the format version
    /// from [`bidtb::internal::table::VERSION`].
    #[command(about = upgrade_about(), long_about = upgrade_long_about())]
    Upgrade(upgrade::Args),
    /// Chip tables: bidding chess with whole chips and the tie-break marker (docs/src/guide/chips.md).
    ///
    /// For every table of the board and each chip total K (e.g. 200: a hundred each),
    /// the least holding with which White forces a win and the least with which it does not
    /// lose, for every position, as holdings 0 < 0* < 1 < 1* < … (a star: with the marker).
    /// Written to DIR/FxR/chips-K/<Material>.chips beside the value tables, which must exist;
    /// files that exist and fit their tables are kept. `bidtb query --chips 100:100` reads
    /// them.
    Chips(chips::Args),
    /// Play a game against the engine in the terminal (docs/src/guide/play.md).
    ///
    /// Random turn (a fair coin picks each mover), bidding with continuous money (each side
    /// bids a share of the total; the higher bid pays the other and decides who moves;
    /// equal bids go to the coin) or with whole chips and the tie-break marker
    /// (docs/src/guide/chips.md). The engine plays perfectly from the tables: holding more than the
    /// position needs, it wins by force. At each prompt type a bid (`1/8`, `0.125`; chips
    /// `12` or `12*`), a move (`h8d8`, `d7d8q`), `hand` to let the engine move after you
    /// won a bid, `advice` for the engine's advice, or `quit`. Lines are read from standard
    /// input, so games can be scripted. Exit status 0 at the end of the game or on `quit`,
    /// 1 if the input ends first.
    Play(play::Args),
    /// Print every stored position of a material's table: FEN, alpha, beta, T level, T'
    /// level ('-' outside the closure), one line each, in the table's key order.
    ///
    /// An export for other programs; two tables (of two builds or format versions) of one
    /// material compare position by position with diff. With --digest each value is a
    /// 16-hex-digit digest of its digits (the CRC-32s of its numerator and denominator),
    /// every entry decoded once: the way to compare tables whose values have thousands of
    /// digits (printing 7x7 KNvKN's fractions takes hours; its digests 20 s).
    Dump(dump::Args),
    /// Run a request's jobs on a Slurm cluster, one job per material with dependencies,
    /// memory and time requests, and resume (docs/src/guide/cluster.md): `cluster submit`,
    /// `cluster status`, and `cluster job` (what each job runs).
    Cluster(cluster::Args),
}

/// The first paragraph of `upgrade --help` (and its line in `bidtb --help`).
fn upgrade_about() -> String {
    format!(
        "Rewrite the tables of earlier builds in the format this build writes (version {}, \
         docs/src/format.md), in place",
        bidtb::internal::table::VERSION
    )
}

/// `upgrade --help`: the format version written is [`bidtb::internal::table::VERSION`], never a
/// literal that a new version leaves behind.
fn upgrade_long_about() -> String {
    let v = bidtb::internal::table::VERSION;
    format!(
        "{}: fewer bytes where values are long (each distinct denominator stored once), the \
         same positions, values and levels.\n\n\
         Every table file of the board (or of every board directory in DIR) older than \
         version {v} is rewritten atomically, read back and compared with the old file \
         position by position and value by value; if anything differed the old file would \
         be put back. Files already current are left alone. Holds the board directory's \
         lock, so not while `generate` writes there. Holds one file's values decoded at a \
         time, and maps the old and the new file. Tables of earlier versions are read as \
         they are; upgrading saves space and lets a query check only the blocks it reads. Exit status 1 if any file was not upgraded (each is named).",
        upgrade_about()
    )
}

/// `--tables DIR`: where the tables are read from, for every subcommand that reads them.
#[derive(clap::Args, Debug)]
pub(crate) struct TablesDir {
    /// Directory holding the tables (as written by `bidtb generate --out DIR`).
    #[arg(long = "tables", default_value = "tables")]
    pub tables: PathBuf,
}

/// Who holds the tie-break marker.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum TieBreak {
    /// White holds it.
    White,
    /// Black holds it.
    Black,
}

/// Holdings `W:B` in whole chips.
fn parse_holdings(s: &str) -> Result<(u32, u32), String> {
    let (w, b) = s
        .split_once(':')
        .ok_or_else(|| format!("'{s}': give White's and Black's chips as W:B, e.g. 100:100"))?;
    let n = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("'{t}' is not a number of chips"))
    };
    let (w, b) = (n(w)?, n(b)?);
    match w.checked_add(b) {
        Some(k) if (1..=bidtb::internal::chips::MAX_TOTAL).contains(&k) => Ok((w, b)),
        _ => Err(format!(
            "{s}: the chips in all must be 1 to {}",
            bidtb::internal::chips::MAX_TOTAL
        )),
    }
}

/// The addresses `--addr HOST:PORT` names, in the resolver's order (the server listens on
/// the first it can bind).
#[derive(Clone, Debug)]
pub(crate) struct Addrs(pub Vec<std::net::SocketAddr>);

/// Read `--addr`: an address, or a host name with a port, resolved now.
fn parse_addr(s: &str) -> Result<Addrs, String> {
    use std::net::ToSocketAddrs;
    if let Ok(a) = s.parse::<std::net::SocketAddr>() {
        return Ok(Addrs(vec![a]));
    }
    let Some((host, port)) = s.rsplit_once(':') else {
        return Err(format!(
            "'{s}': give HOST:PORT, e.g. 127.0.0.1:8080 or localhost:0 (port 0: any free port)"
        ));
    };
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(format!(
            "'{s}': give HOST:PORT with a port 0 to 65535, e.g. localhost:8080"
        ));
    }
    let found: Vec<std::net::SocketAddr> = s
        .to_socket_addrs()
        .map_err(|e| format!("'{host}' does not resolve: {e}"))?
        .collect();
    if found.is_empty() {
        return Err(format!("'{host}' resolves to no address"));
    }
    Ok(Addrs(found))
}

fn parse_board(s: &str) -> Result<Board, String> {
    s.parse::<Board>().map_err(|e| e.to_string())
}

/// clap's error text on one line: the error with what it lists (the arguments missing,
/// say), then the usage line: "the following required arguments were not provided: <FEN>...
/// (usage: bidtb query <FEN>...; see --help)".
fn usage_error(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let error: Vec<&str> = lines
        .iter()
        .take_while(|l| !l.is_empty())
        .map(|l| l.trim_start_matches("error: "))
        .collect();
    let usage = lines
        .iter()
        .find_map(|l| l.strip_prefix("Usage: "))
        .map(|u| format!("usage: {u}; "))
        .unwrap_or_default();
    let error = error.join(" ");
    let error = if error.is_empty() {
        "invalid arguments"
    } else {
        &error
    };
    format!("{error} ({usage}see --help)")
}

/// Run the command line; returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            // Bare `bidtb` (or a command group without its command): the help, as usage.
            let _ = write!(std::io::stderr(), "{}", e.render());
            return ExitCode::from(2);
        }
        Err(e) => {
            let text = usage_error(&e.render().to_string());
            note!("bidtb: {}", bidtb::internal::error::printable(&text));
            return ExitCode::from(2);
        }
    };
    if let Err((code, e)) = start_up(&cli.command) {
        note!(
            "bidtb: {}",
            bidtb::internal::error::printable(&e.to_string())
        );
        return ExitCode::from(code);
    }
    let result = match cli.command {
        Command::Generate(args) => generate::run(args),
        Command::Atlas(args) => atlas::run(args),
        Command::Chips(args) => chips::run(args),
        Command::Play(args) => play::run(args),
        Command::Query(args) => query::main(args),
        Command::Map(args) => map::main(args),
        Command::Plot(args) => plot::main(args),
        Command::Serve(args) => serve::main(args),
        Command::Verify(args) => verify::main(args),
        Command::Upgrade(args) => upgrade::main(args),
        Command::Dump(args) => dump::main(args),
        Command::Cluster(args) => cluster::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of standard output (or of a FIFO written into) went away: `bidtb dump
        // | head`. It has all it wanted; end quietly.
        Err((_, Error::Io { source, .. })) if source.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err((code, e)) => {
            note!(
                "bidtb: {}",
                bidtb::internal::error::printable(&e.to_string())
            );
            ExitCode::from(code)
        }
    }
}

/// The most worker threads `--threads` accepts (far more than any machine bidtb runs on
/// has cores; a larger number is a typo, and would start that many threads); clap refuses
/// more with exit status 2.
pub const MAX_THREADS: u16 = 1024;

/// Checks before any work, whatever the command: the memory limit parses, the address
/// space suffices to start, and the worker threads start (a clear error now rather than a
/// panic deep inside the thread pool).
fn start_up(command: &Command) -> Result<(), (u8, Error)> {
    bidtb::internal::resources::configured_limit().map_err(|e| (2, e))?;
    bidtb::internal::resources::check_address_space().map_err(|e| (1, e))?;
    let threads = match command {
        Command::Generate(args) => args.threads,
        _ => None,
    };
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        pool = pool.num_threads(thread_count(t as usize, cores()));
    }
    pool.build_global().map_err(|e| {
        (
            1,
            Error::Resources(format!(
                "cannot start the worker threads: {e} (too little memory or address space? \
                 see `ulimit -v`)"
            )),
        )
    })
}

/// A write to standard output whose reader went away (EPIPE) counts as done: for output
/// beside work whose outcome decides the exit status (a summary after a run, a
/// verification's report), so that the run ends as its work did.
fn reader_gone_is_fine(written: std::io::Result<()>) -> std::io::Result<()> {
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// The cores this process may run on (1 if that cannot be told).
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
}

/// The worker threads to start for `--threads asked` on a machine with `cores` cores: as
/// asked up to the cores, which the work cannot outrun (on 4x4, 1024 threads took 20.6 s
/// against 0.22 s with 2), else the cores, with a warning.
fn thread_count(asked: usize, cores: usize) -> usize {
    if asked <= cores {
        return asked;
    }
    note!(
        "bidtb: warning: --threads {asked} is more than the {cores} core{} this process may \
         use: starting {cores} (more threads only wait for each other)",
        if cores == 1 { "" } else { "s" }
    );
    cores
}

/// The exit code for an error: 2 for bad input, 1 for everything that failed at run time.
fn exit_code(e: &Error) -> u8 {
    match e {
        Error::BoardSize(_)
        | Error::Position(_)
        | Error::Fen { .. }
        | Error::Material(_)
        | Error::Usage(_) => 2,
        _ => 1,
    }
}
