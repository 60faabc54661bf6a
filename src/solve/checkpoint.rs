//! Checkpoints of the solve method (`DIR/FxR/solve-MATERIALS.ckpt`, e.g.
//! `solve-KNvKN.ckpt`): the kept state of each bound solved so far ([`super::keep`]): α's,
//! and β's after it when β is solved apart. One file per job under way (a run may have
//! two side by side), named by the job's materials and naming them in its header too,
//! replaced atomically at each save, removed when the run finishes. A `solve.ckpt` left by
//! an earlier version (one file per board directory) is still resumed from.
//!
//! The file is framed in bidtb's container ([`crate::container`]): a 112-byte header (magic
//! `BIDTBSOL`, format version, length, files, ranks, the graph's node and option counts,
//! the job's materials by name, the body length and its CRC-32, the header's CRC-32), then
//! the body: the states in postcard's encoding (a sequence of [`BoundState`]; the solved
//! values as each distinct denominator once, then position, numerator and the
//! denominator's number, see [`super::keep::SolvedRef`]; version 3 kept each value's
//! denominator with it, and is still read, one copy of each denominator kept). Loading
//! refuses anything that is not a regular file, reads the header first and never more of
//! the body than the header states, and refuses, with an error naming the file, anything
//! truncated, corrupted, of another version, board or graph; states whose strategies are
//! not moves of this graph are refused too. A checkpoint of another job's materials is
//! left alone (the job starts from the beginning). Values kept in a checkpoint are not
//! trusted: the certificate checks every value that leaves a solve.

use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use super::{BoundState, BoundStateRef};
use crate::container::{Fields, HeaderWriter, check_body_streamed, open_regular, read_header};
use crate::error::Error;
use crate::geometry::Board;
use crate::graph::Graph;
use crate::material::Material;

/// The first eight bytes of a solve checkpoint.
pub const MAGIC: [u8; 8] = *b"BIDTBSOL";
/// The format version (4: solved values keep each distinct denominator once; version 3,
/// which kept it with every value, is still read).
pub const VERSION: u32 = 4;
/// The versions read.
const READ: [u32; 2] = [3, VERSION];
/// The file name earlier versions gave the one checkpoint of a board's directory (still
/// resumed from, when it names the job).
pub const LEGACY_FILE_NAME: &str = "solve.ckpt";
const HEADER_LEN: usize = 112;
/// Bytes of the materials' names in the header (comma-separated, zero-padded).
const NAMES_LEN: usize = 48;

/// The checkpoint file of the job on `materials` in a board's directory:
/// `solve-KNvKN.ckpt` (materials solved jointly joined by `+`).
pub fn path(dir: &Path, materials: &[Material]) -> PathBuf {
    let names: Vec<String> = materials.iter().map(Material::to_string).collect();
    dir.join(format!("solve-{}.ckpt", names.join("+")))
}

/// The checkpoint file in a board's directory that a job on `materials` resumes from, if
/// any: its own, else an earlier version's `solve.ckpt`.
pub fn candidates(dir: &Path, materials: &[Material]) -> Vec<PathBuf> {
    [path(dir, materials), dir.join(LEGACY_FILE_NAME)]
        .into_iter()
        .find(|p| p.is_file())
        .into_iter()
        .collect()
}

/// Whether `name` is the name of a solve checkpoint (of any job, or an earlier version's).
fn is_checkpoint_name(name: &str) -> bool {
    name == LEGACY_FILE_NAME || (name.starts_with("solve-") && name.ends_with(".ckpt"))
}

/// The job's materials as the header names them.
fn names(materials: &[Material]) -> [u8; NAMES_LEN] {
    let text = materials
        .iter()
        .map(Material::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let mut out = [0u8; NAMES_LEN];
    let n = text.len().min(NAMES_LEN);
    out[..n].copy_from_slice(&text.as_bytes()[..n]);
    out
}

/// What a checkpoint belongs to: the board, the job's materials and its graph.
#[derive(Clone, Copy)]
pub struct Job<'a> {
    /// The board.
    pub board: Board,
    /// The materials solved jointly.
    pub materials: &'a [Material],
    /// Their graph.
    pub graph: &'a Graph,
}

/// The header of a body of `len` bytes with checksum `crc`.
fn header(job: Job<'_>, len: u64, crc: u32) -> Vec<u8> {
    header_of_version(job, VERSION, len, crc)
}

/// [`header`] naming format `version`.
fn header_of_version(job: Job<'_>, version: u32, len: u64, crc: u32) -> Vec<u8> {
    let mut h = HeaderWriter::new(MAGIC, version, HEADER_LEN);
    h.u8(job.board.files())
        .u8(job.board.ranks())
        .u8(0)
        .u8(0)
        .u64(job.graph.nodes() as u64)
        .u64(job.graph.edge_count() as u64)
        .bytes(&names(job.materials))
        .u64(len)
        .u32(crc);
    h.finish()
}

/// The file image of the states of a solve.
pub fn encode(job: Job<'_>, states: &[&BoundStateRef<'_>]) -> Vec<u8> {
    let body = postcard::to_allocvec(states).expect("states serialise");
    let mut out = header(job, body.len() as u64, crc32fast::hash(&body));
    out.extend_from_slice(&body);
    out
}

/// A writer that counts and checksums what passes through it.
struct Summed<W> {
    inner: W,
    len: u64,
    crc: crc32fast::Hasher,
}

impl<W: Write> Write for Summed<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.len += n as u64;
        self.crc.update(&buf[..n]);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Save the states atomically as the job's file in `dir` ([`path`]); returns the file
/// written. The body is streamed to the file (a late 12x12 state holds gigabytes of
/// values), and the header written last.
pub fn save(dir: &Path, job: Job<'_>, states: &[&BoundStateRef<'_>]) -> Result<PathBuf, Error> {
    let path = path(dir, job.materials);
    crate::atomic::write_atomic_with(&path, |file| {
        file.write_all(&[0; HEADER_LEN])?;
        let body = Summed {
            inner: BufWriter::with_capacity(1 << 20, &mut *file),
            len: 0,
            crc: crc32fast::Hasher::new(),
        };
        let mut body = postcard::to_io(states, body).map_err(std::io::Error::other)?;
        body.flush()?;
        let (len, crc) = (body.len, body.crc.clone().finalize());
        drop(body);
        file.seek(SeekFrom::Start(0))?;
        file.write_all(&header(job, len, crc))
    })?;
    Ok(path)
}

/// Remove the checkpoints of a board's directory, every job's (after the run has
/// finished).
pub fn remove(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_str().is_some_and(is_checkpoint_name) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The solve checkpoints of a board's directory, each with the materials its name gives
/// (`solve-KNvKN.ckpt`, `solve-KvK+KQvK.ckpt`; None for an earlier version's `solve.ckpt`,
/// whose job only its header names), in name order.
pub fn list(dir: &Path) -> Vec<(PathBuf, Option<Vec<String>>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(PathBuf, Option<Vec<String>>)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_str()?.to_string();
            if !is_checkpoint_name(&name) {
                return None;
            }
            let materials = name
                .strip_prefix("solve-")
                .and_then(|n| n.strip_suffix(".ckpt"))
                .map(|n| n.split('+').map(str::to_string).collect());
            Some((e.path(), materials))
        })
        .collect();
    found.sort();
    found
}

/// Remove the checkpoints of the jobs whose materials are all among `done` (a finished
/// run's, made or reused), and an earlier version's `solve.ckpt`; other jobs' checkpoints
/// (an interrupted run of other materials) are kept.
pub fn remove_done(dir: &Path, done: &[String]) {
    for (path, materials) in list(dir) {
        if materials.is_none_or(|ms| ms.iter().all(|m| done.contains(m))) {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// What a checkpoint file holds for a job.
#[derive(Debug)]
pub enum Loaded {
    /// No checkpoint.
    Nothing,
    /// A checkpoint of another job's materials (named), left alone.
    Other(String),
    /// The states kept for this job.
    States(Vec<BoundState>),
}

/// What a checked header says of its body.
struct Body {
    version: u32,
    len: u64,
    crc: u32,
}

/// Check a header for `job`; returns what it says of the body, or `Other` when it belongs
/// to other materials.
fn check_header(header: &[u8], job: Job<'_>) -> Result<Result<Body, String>, String> {
    let mut f = Fields::check(header, MAGIC, &READ, "solve checkpoint")?;
    let version = f.version;
    let (files, ranks) = (f.u8()?, f.u8()?);
    let _ = (f.u8()?, f.u8()?);
    let (nodes, edges) = (f.u64()?, f.u64()?);
    let stored = f.bytes(NAMES_LEN)?;
    let (len, crc) = (f.u64()?, f.u32()?);
    if (files, ranks) != (job.board.files(), job.board.ranks()) {
        return Err(format!(
            "a checkpoint of board {files}x{ranks}, not {}",
            job.board
        ));
    }
    if stored != names(job.materials) {
        let text = String::from_utf8_lossy(stored)
            .trim_end_matches('\0')
            .to_string();
        return Ok(Err(text));
    }
    if (nodes, edges) != (job.graph.nodes() as u64, job.graph.edge_count() as u64) {
        return Err(format!(
            "{nodes} nodes and {edges} options, but the graph has {} and {}",
            job.graph.nodes(),
            job.graph.edge_count()
        ));
    }
    Ok(Ok(Body { version, len, crc }))
}

/// Decode and check a checkpoint image for `job`.
pub fn decode(bytes: &[u8], job: Job<'_>) -> Result<Loaded, String> {
    if bytes.len() < HEADER_LEN {
        return Err(format!(
            "truncated: {} bytes, shorter than the {HEADER_LEN}-byte header",
            bytes.len()
        ));
    }
    let (header, body) = bytes.split_at(HEADER_LEN);
    let Body { version, len, crc } = match check_header(header, job)? {
        Ok(x) => x,
        Err(other) => return Ok(Loaded::Other(other)),
    };
    if len != body.len() as u64 {
        return Err(format!(
            "truncated or extended: the header says {len} body bytes, the file has {}",
            body.len()
        ));
    }
    if crc32fast::hash(body) != crc {
        return Err("corrupted: the body checksum does not match".into());
    }
    let states = match version {
        3 => postcard::from_bytes::<Vec<version3::BoundState>>(body)
            .map(|states| states.into_iter().map(BoundState::from).collect()),
        _ => postcard::from_bytes(body),
    };
    let states = states.map_err(|e| format!("the body does not decode: {e}"))?;
    fitting(states, job.graph).map(Loaded::States)
}

/// The decoded states, if they can belong to a solve on `graph` (one or two of them).
fn fitting(states: Vec<BoundState>, graph: &Graph) -> Result<Vec<BoundState>, String> {
    if states.is_empty() || states.len() > 2 || !states.iter().all(|s| s.fits(graph)) {
        return Err("its states do not fit the graph of these materials".into());
    }
    Ok(states)
}

/// Load the checkpoint of `job` from a board's directory: its own file, or else an earlier
/// version's `solve.ckpt`; with the file it came from. An error naming the file if it
/// cannot be resumed from.
pub fn load(dir: &Path, job: Job<'_>) -> Result<(Loaded, PathBuf), Error> {
    let own = path(dir, job.materials);
    match load_file(&own, job)? {
        Loaded::Nothing => {
            let legacy = dir.join(LEGACY_FILE_NAME);
            Ok((load_file(&legacy, job)?, legacy))
        }
        loaded => Ok((loaded, own)),
    }
}

/// A decoded state takes its body's bytes and about one part in this many more (the
/// vectors' headers of its values).
const DECODED_OVERHEAD: u64 = 8;

/// Load one checkpoint file for `job` (Nothing if there is no such file). A state too
/// large for the memory available is an [`Error::Resources`], the file left as it is.
fn load_file(path: &Path, job: Job<'_>) -> Result<Loaded, Error> {
    let bad = |reason: String| Error::Checkpoint {
        path: path.display().to_string(),
        reason,
    };
    let (mut file, file_len) = match open_regular(path) {
        Ok(f) => f,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Loaded::Nothing);
        }
        Err(e) => return Err(e),
    };
    let header = read_header(&mut file, file_len, HEADER_LEN).map_err(bad)?;
    let Body { version, len, crc } = match check_header(&header, job).map_err(bad)? {
        Ok(x) => x,
        Err(other) => return Ok(Loaded::Other(other)),
    };
    // Decoding holds the whole state on the heap, numerators the job had paged to files
    // included: refused before reading where it cannot fit, instead of the kernel killing
    // the process (6x6 KBNvKN's 27.4 GB checkpoint on this machine's 24 GiB).
    crate::resources::check_more(
        len.saturating_add(len / DECODED_OVERHEAD),
        &format!("resuming from {}", path.display()),
    )?;
    // The body is checked, then decoded as it is read: holding it whole beside its decoded
    // states needed twice the memory (8x8 KNvKN's 14.5 GB checkpoint was killed at 24 GB).
    check_body_streamed(&mut file, file_len, HEADER_LEN, len, crc).map_err(bad)?;
    let reader = std::io::BufReader::with_capacity(1 << 20, file.take(len));
    let mut scratch = vec![0u8; 1 << 16];
    let input = (reader, &mut scratch[..]);
    let states = match version {
        3 => postcard::from_io::<Vec<version3::BoundState>, _>(input)
            .map(|(states, _)| states.into_iter().map(BoundState::from).collect()),
        _ => postcard::from_io(input).map(|(states, _)| states),
    };
    let states = states.map_err(|e| bad(format!("the body does not decode: {e}")))?;
    fitting(states, job.graph).map(Loaded::States).map_err(bad)
}

/// Reading format version 3, whose solved values each carry their own denominator: the
/// same fields, the values given one copy of each denominator as they are decoded (a
/// version-3 checkpoint of 8x8 KNvKP, 19.5 GB, then decodes into about half that).
mod version3 {
    use serde::Deserialize;

    use super::super::keep::{self, RunningSystem};
    use super::super::{SolveStats, Strategies};
    use crate::value::Value;

    /// An evaluation's progress as version 3 kept it.
    #[derive(Deserialize)]
    pub struct EvalState {
        #[serde(deserialize_with = "keep::solved_pairs_shared")]
        solved: Vec<(u32, Value)>,
        running: Vec<RunningSystem>,
    }

    /// A bound's state as version 3 kept it.
    #[derive(Deserialize)]
    pub struct BoundState {
        stats: SolveStats,
        strategies: Strategies,
        white_levels: Vec<u32>,
        black_levels: Vec<u32>,
        evaluation: EvalState,
    }

    impl From<BoundState> for keep::BoundState {
        fn from(s: BoundState) -> keep::BoundState {
            keep::BoundState {
                stats: s.stats,
                strategies: s.strategies,
                white_levels: s.white_levels,
                black_levels: s.black_levels,
                evaluation: keep::EvalState {
                    solved: s.evaluation.solved,
                    running: s.evaluation.running,
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Index;
    use crate::solve::{self, Bound, Game, Settings};

    /// The study's three-piece job on 3x4: its board, materials and graph.
    fn three_pieces_on_3x4() -> (Board, Vec<Material>, Graph) {
        let board = Board::new(3, 4).unwrap();
        (
            board,
            Material::three_piece().to_vec(),
            Graph::new(&Index::three_piece(board)),
        )
    }

    /// α solved on `graph` (a closed game).
    fn solved_alpha(graph: &Graph) -> solve::Candidate {
        solve::solve_bound(
            Game::closed(graph),
            Bound::Alpha,
            &Settings::default(),
            &|_| true,
        )
        .unwrap()
    }

    #[test]
    fn streamed_saves_equal_the_image_and_load_back() {
        let (board, materials, graph) = three_pieces_on_3x4();
        let alpha = solved_alpha(&graph);
        let job = Job {
            board,
            materials: &materials,
            graph: &graph,
        };
        let dir = tempfile::tempdir().unwrap();
        let path = save(dir.path(), job, &[&alpha.kept()]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes, encode(job, &[&alpha.kept()]));
        assert_eq!(
            path.file_name().unwrap(),
            "solve-KvK+KQvK+KRvK+KBvK+KNvK+KPvK.ckpt"
        );
        let (Loaded::States(states), from) = load(dir.path(), job).unwrap() else {
            panic!("the states come back")
        };
        assert_eq!(from, path);
        assert_eq!(states.len(), 1);
        assert_eq!(states[0].strategies, alpha.strategies);
        assert_eq!(states[0].stats.rounds.len(), alpha.stats.rounds.len());
        // Another board of the same size of graph is refused by name.
        let other = Job {
            board: Board::new(4, 3).unwrap(),
            ..job
        };
        let err = decode(&bytes, other).unwrap_err();
        assert!(err.contains("not 4x3"), "{err}");
        // Another job's checkpoint is left alone.
        let krvk = ["KRvK".parse().unwrap()];
        let another = Job {
            materials: &krvk,
            ..job
        };
        assert!(matches!(decode(&bytes, another), Ok(Loaded::Other(_))));
        // Every truncation and flip is refused.
        for at in (0..bytes.len()).step_by(7) {
            let mut b = bytes.clone();
            b[at] ^= 0x20;
            assert!(
                !matches!(decode(&b, job), Ok(Loaded::States(_))),
                "flip at {at}"
            );
        }
        // Another job's file beside it is not read, and both go when the run ends.
        std::fs::write(dir.path().join("solve-KRvK.ckpt"), &bytes).unwrap();
        assert!(matches!(
            load(dir.path(), job).unwrap().0,
            Loaded::States(_)
        ));
        remove(dir.path());
        assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
        assert!(matches!(load(dir.path(), job).unwrap().0, Loaded::Nothing));
    }

    #[test]
    fn version_3_is_read_with_one_copy_of_each_denominator() {
        use crate::solve::keep::{EvalStateRef, RunningRef, SolvedRef};
        use crate::solve::{SolveStats, Strategies};
        use crate::value::Value;
        use num_bigint::BigUint;
        use serde::Serialize;

        /// Version 3's evaluation: each value with its own denominator.
        #[derive(Serialize)]
        struct EvalState3<'a> {
            solved: &'a [(u32, Value)],
            running: Vec<RunningRef<'a>>,
        }
        #[derive(Serialize)]
        struct BoundState3<'a> {
            stats: &'a SolveStats,
            strategies: &'a Strategies,
            white_levels: &'a [u32],
            black_levels: &'a [u32],
            evaluation: EvalState3<'a>,
        }

        let (board, materials, graph) = three_pieces_on_3x4();
        let alpha = solved_alpha(&graph);
        let job = Job {
            board,
            materials: &materials,
            graph: &graph,
        };
        // Every position solved, over equal copies of one long denominator (3^150).
        let d = BigUint::from(3u8).pow(150);
        let pairs: Vec<(u32, Value)> = (0..graph.positions() as u32)
            .map(|p| {
                (
                    p,
                    Value::new_raw(BigUint::from(1u8) << (p % 100), d.clone()),
                )
            })
            .collect();
        let state3 = BoundState3 {
            stats: &alpha.stats,
            strategies: &alpha.strategies,
            white_levels: &alpha.levels.0,
            black_levels: &alpha.levels.1,
            evaluation: EvalState3 {
                solved: &pairs,
                running: Vec::new(),
            },
        };
        let body = postcard::to_allocvec(&vec![state3]).unwrap();
        let mut bytes3 = header_of_version(job, 3, body.len() as u64, crc32fast::hash(&body));
        bytes3.extend_from_slice(&body);
        let state4 = BoundStateRef {
            evaluation: EvalStateRef {
                solved: SolvedRef::Pairs(&pairs),
                running: Vec::new(),
            },
            ..alpha.kept()
        };
        let bytes4 = encode(job, &[&state4]);
        // Version 4 keeps the denominator once: less than half of version 3.
        assert!(
            2 * bytes4.len() < bytes3.len(),
            "{} against {}",
            bytes4.len(),
            bytes3.len()
        );
        let dir = tempfile::tempdir().unwrap();
        // As an earlier version saved it: `solve.ckpt`, found when the job has no file.
        let legacy = dir.path().join(LEGACY_FILE_NAME);
        std::fs::write(&legacy, &bytes3).unwrap();
        assert_eq!(candidates(dir.path(), &materials), vec![legacy.clone()]);
        let (from_legacy, from) = load(dir.path(), job).unwrap();
        assert_eq!(from, legacy);
        let loaded = [
            decode(&bytes3, job).unwrap(),
            from_legacy,
            decode(&bytes4, job).unwrap(),
        ];
        for states in loaded {
            let Loaded::States(states) = states else {
                panic!("the states come back")
            };
            assert_eq!(states.len(), 1);
            assert_eq!(states[0].strategies, alpha.strategies);
            assert_eq!(states[0].evaluation.solved, pairs);
            let copy = states[0].evaluation.solved[0].1.shared_odd();
            assert!(
                states[0]
                    .evaluation
                    .solved
                    .iter()
                    .all(|(_, v)| std::sync::Arc::ptr_eq(v.shared_odd(), copy))
            );
        }
        // A version-3 body that is cut short is refused.
        let mut cut = bytes3[..bytes3.len() - 9].to_vec();
        cut[HEADER_LEN..].fill(0);
        assert!(!matches!(decode(&cut, job), Ok(Loaded::States(_))));
    }
}
