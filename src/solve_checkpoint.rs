//! Checkpoints of the solve method (`DIR/FxR/solve.ckpt`): the kept state of each bound
//! solved so far ([`crate::solve::keep`]): α's, and β's after it when β is solved apart.
//! One file per board, replaced atomically at each save, removed when the run finishes.
//!
//! Layout (little-endian): a 48-byte header (magic `BIDTBSOL`, format version, files,
//! ranks, two zero bytes, the graph's node and option counts, the body length, a CRC-32 of
//! the body, a CRC-32 of the header), then the body: the states in postcard's encoding (a
//! sequence of [`BoundState`]). Loading checks all of it and refuses, with an error naming
//! the file, anything truncated, corrupted, of another version, board or graph; states
//! whose strategies are not moves of this graph are refused too. Values kept in a
//! checkpoint are not trusted: the certificate checks every value that leaves a solve.

use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::geometry::Board;
use crate::graph::Graph;
use crate::solve::{BoundState, BoundStateRef};

/// The first eight bytes of a solve checkpoint.
pub const MAGIC: [u8; 8] = *b"BIDTBSOL";
/// The format version.
pub const VERSION: u32 = 1;
/// The file name in a board's directory.
pub const FILE_NAME: &str = "solve.ckpt";
const HEADER_LEN: usize = 48;
const HEADER_CRC_AT: usize = 44;

/// The checkpoint file of a board's directory.
pub fn path(dir: &Path) -> PathBuf {
    dir.join(FILE_NAME)
}

/// What identifies the graph a checkpoint belongs to.
fn identity(graph: &Graph) -> (u64, u64) {
    (graph.nodes() as u64, graph.edge_count() as u64)
}

/// The header of a body of `len` bytes with checksum `crc`.
fn header(board: Board, graph: &Graph, len: u64, crc: u32) -> Vec<u8> {
    let (nodes, edges) = identity(graph);
    let mut out = Vec::with_capacity(HEADER_LEN);
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&[board.files(), board.ranks(), 0, 0]);
    out.extend_from_slice(&nodes.to_le_bytes());
    out.extend_from_slice(&edges.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&crc.to_le_bytes());
    let header_crc = crc32fast::hash(&out);
    out.extend_from_slice(&header_crc.to_le_bytes());
    debug_assert_eq!(out.len(), HEADER_LEN);
    out
}

/// The file image of the states of a solve of `board` on `graph`.
pub fn encode(board: Board, graph: &Graph, states: &[&BoundStateRef<'_>]) -> Vec<u8> {
    let body = postcard::to_allocvec(states).expect("states serialise");
    let mut out = header(board, graph, body.len() as u64, crc32fast::hash(&body));
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

/// Save the states atomically as `dir/solve.ckpt`; returns the file written. The body is
/// streamed to the file (a late 12x12 state holds gigabytes of values), and the header
/// written last.
pub fn save(
    dir: &Path,
    board: Board,
    graph: &Graph,
    states: &[&BoundStateRef<'_>],
) -> Result<PathBuf, Error> {
    let path = path(dir);
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
        file.write_all(&header(board, graph, len, crc))
    })?;
    Ok(path)
}

/// Remove the checkpoint of a board's directory (after the run has finished).
pub fn remove(dir: &Path) {
    let _ = std::fs::remove_file(path(dir));
}

fn word(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn long(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// Decode and check a checkpoint image for `board` and `graph`.
pub fn decode(bytes: &[u8], board: Board, graph: &Graph) -> Result<Vec<BoundState>, String> {
    if bytes.len() < HEADER_LEN {
        return Err(format!(
            "truncated: {} bytes, shorter than the header",
            bytes.len()
        ));
    }
    let (header, body) = bytes.split_at(HEADER_LEN);
    if header[..8] != MAGIC {
        return Err("not a bidtb solve checkpoint (wrong magic bytes)".into());
    }
    if word(header, HEADER_CRC_AT) != crc32fast::hash(&header[..HEADER_CRC_AT]) {
        return Err("corrupted: the header checksum does not match".into());
    }
    let version = word(header, 8);
    if version != VERSION {
        return Err(format!(
            "solve checkpoint format version {version}, but this bidtb reads version {VERSION}"
        ));
    }
    if (header[12], header[13]) != (board.files(), board.ranks()) {
        return Err(format!(
            "a checkpoint of board {}x{}, not {board}",
            header[12], header[13]
        ));
    }
    let (nodes, edges) = identity(graph);
    if (long(header, 16), long(header, 24)) != (nodes, edges) {
        return Err(format!(
            "{} nodes and {} options, but the graph of {board} has {nodes} and {edges}",
            long(header, 16),
            long(header, 24)
        ));
    }
    if long(header, 32) != body.len() as u64 {
        return Err(format!(
            "truncated or extended: the header says {} body bytes, the file has {}",
            long(header, 32),
            body.len()
        ));
    }
    if word(header, 40) != crc32fast::hash(body) {
        return Err("corrupted: the body checksum does not match".into());
    }
    let states: Vec<BoundState> =
        postcard::from_bytes(body).map_err(|e| format!("the body does not decode: {e}"))?;
    if states.is_empty() || states.len() > 2 || !states.iter().all(|s| s.fits(graph)) {
        return Err("its states do not fit the graph of this board".into());
    }
    Ok(states)
}

/// Load the checkpoint of a board's directory: None if there is none, an error naming the
/// file if it cannot be resumed from.
pub fn load(dir: &Path, board: Board, graph: &Graph) -> Result<Option<Vec<BoundState>>, Error> {
    let path = path(dir);
    let bytes = match std::fs::read(&path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(&path, e)),
    };
    decode(&bytes, board, graph)
        .map(Some)
        .map_err(|reason| Error::Checkpoint {
            path: path.display().to_string(),
            reason,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::index::Index;
    use crate::solve::{self, Bound, Settings};

    #[test]
    fn streamed_saves_equal_the_image_and_load_back() {
        let board = Board::new(3, 4).unwrap();
        let graph = Graph::new(&Index::new(board));
        let alpha =
            solve::solve_bound(&graph, Bound::Alpha, &Settings::default(), &|_| true).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = save(dir.path(), board, &graph, &[&alpha.kept()]).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(bytes, encode(board, &graph, &[&alpha.kept()]));
        let states = load(dir.path(), board, &graph).unwrap().unwrap();
        assert_eq!(states.len(), 1);
        assert_eq!(states[0].strategies, alpha.strategies);
        assert_eq!(states[0].stats.rounds.len(), alpha.stats.rounds.len());
        // Another board of the same size of graph is refused by name.
        let other = Board::new(4, 3).unwrap();
        let err = decode(&bytes, other, &graph).unwrap_err();
        assert!(err.contains("not 4x3"), "{err}");
        remove(dir.path());
        assert!(load(dir.path(), board, &graph).unwrap().is_none());
    }
}
