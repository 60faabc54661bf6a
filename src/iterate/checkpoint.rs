//! Checkpoints of a generation run: the full iteration state (αₙ and βₙ of every node, the
//! guesses and their last-change iterations, n, the quiet-iteration count and the per
//! iteration history), saved atomically so that a run can be resumed after a crash, a kill
//! or Ctrl-C and reach exactly the result of an uninterrupted run.
//!
//! Files are `DIR/FxR/checkpoint-<n>.ckpt`; the newest two are kept. Layout (little-endian):
//! a 64-byte header (magic `BIDTBCKP`, version, board, n, width, node count, quiet count,
//! history length, checkpoint interval, CRC-32 of the body, CRC-32 of the header), then the
//! rows (`2 · nodes · width` u64), the last-change iterations (u32 per node), the history
//! (per iteration: n and one u32 per class), and the guesses (per node: u32 numerator
//! length, numerator, u32 denominator length, denominator). Loading checks all of it and
//! refuses, with an error naming the file, anything truncated, corrupted, of another format
//! version, another board or another graph.

use std::path::{Path, PathBuf};

use num_bigint::BigUint;
use num_traits::Zero;

use super::IterationRecord;
use crate::container::{Fields, HeaderWriter, open_regular, read_body, read_header};
use crate::error::Error;
use crate::geometry::Board;
use crate::value::Value;
use crate::value::bytes::{from_le_bytes, le_bytes};

/// The first eight bytes of every checkpoint.
pub const MAGIC: [u8; 8] = *b"BIDTBCKP";
/// The checkpoint format version.
pub const VERSION: u32 = 2;
const HEADER_LEN: usize = 64;

/// The complete state of a run between two iterations.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// The board.
    pub board: Board,
    /// The iteration n the state is at.
    pub n: u32,
    /// Limbs per value.
    pub width: usize,
    /// αₙ and βₙ rows, as [`super::kernel::Kernel::rows`] gives them.
    pub rows: Vec<u64>,
    /// sₙ of every node.
    pub values: Vec<Value>,
    /// The iteration of each node's last guess change.
    pub last_change: Vec<u32>,
    /// Iterations since a guess last changed (or since the last failed Richman test).
    pub quiet: u32,
    /// Guess changes per iteration so far.
    pub history: Vec<IterationRecord>,
    /// The interval the run saves checkpoints at.
    pub every: u32,
}

/// The file name of the checkpoint at iteration `n`.
pub fn file_name(n: u32) -> String {
    format!("checkpoint-{n:06}.ckpt")
}

/// The checkpoint files in `dir`, newest (highest n) first.
pub fn list(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(u32, PathBuf)> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let n = name
                .strip_prefix("checkpoint-")?
                .strip_suffix(".ckpt")?
                .parse()
                .ok()?;
            Some((n, e.path()))
        })
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    found.into_iter().map(|(_, p)| p).collect()
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The file image of a state.
pub fn encode(s: &State) -> Vec<u8> {
    let nodes = s.values.len();
    let classes = s.history.first().map_or(0, |r| r.changed.len());
    assert!(
        s.history.iter().all(|r| r.changed.len() == classes),
        "one count per class in every record"
    );
    let mut body = Vec::with_capacity(s.rows.len() * 8 + nodes * 64);
    for limb in &s.rows {
        body.extend_from_slice(&limb.to_le_bytes());
    }
    for l in &s.last_change {
        body.extend_from_slice(&l.to_le_bytes());
    }
    for r in &s.history {
        body.extend_from_slice(&r.n.to_le_bytes());
        for x in &r.changed {
            body.extend_from_slice(&x.to_le_bytes());
        }
    }
    for v in &s.values {
        put_bytes(&mut body, &le_bytes(&v.numer()));
        put_bytes(&mut body, &le_bytes(&v.denom()));
    }
    let mut h = HeaderWriter::new(MAGIC, VERSION, HEADER_LEN);
    h.u8(s.board.files())
        .u8(s.board.ranks())
        .u8(classes as u8)
        .u8(0)
        .u32(s.n)
        .u32(s.width as u32)
        .u64(nodes as u64)
        .u32(s.quiet)
        .u32(s.history.len() as u32)
        .u32(s.every)
        .u64(body.len() as u64)
        .u32(crc32fast::hash(&body));
    let mut out = h.finish();
    out.extend_from_slice(&body);
    out
}

/// Save a state as `dir/checkpoint-<n>.ckpt` atomically, then remove all but the newest
/// two checkpoints. Returns the file written.
pub fn save(dir: &Path, state: &State) -> Result<PathBuf, Error> {
    let path = dir.join(file_name(state.n));
    crate::atomic::write_atomic(&path, &encode(state))?;
    for old in list(dir).into_iter().skip(2) {
        let _ = std::fs::remove_file(old);
    }
    Ok(path)
}

/// Remove every checkpoint in `dir` (after a run has finished).
pub fn remove_all(dir: &Path) {
    for p in list(dir) {
        let _ = std::fs::remove_file(p);
    }
}

/// A cursor over the body that fails instead of reading past the end.
struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if n > self.bytes.len() {
            return Err("truncated body".into());
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Ok(head)
    }
    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn big(&mut self) -> Result<BigUint, String> {
        let n = self.u32()? as usize;
        Ok(from_le_bytes(self.take(n)?))
    }
}

/// The header's fields: (n, width, classes, quiet, history length, every, body length,
/// body CRC), checked against `board` and `nodes`.
type HeaderFields = (u32, usize, usize, u32, usize, u32, u64, u32);

fn check_header(header: &[u8], board: Board, nodes: usize) -> Result<HeaderFields, String> {
    let mut h = Fields::check(header, MAGIC, &[VERSION], "checkpoint")?;
    let (files, ranks, classes, _) = (h.u8()?, h.u8()?, h.u8()? as usize, h.u8()?);
    if (files, ranks) != (board.files(), board.ranks()) {
        return Err(format!(
            "a checkpoint of board {files}x{ranks}, not {board}"
        ));
    }
    let n = h.u32()?;
    let width = h.u32()? as usize;
    let stored_nodes = h.u64()?;
    let quiet = h.u32()?;
    let history_len = h.u32()? as usize;
    let every = h.u32()?;
    let body_len = h.u64()?;
    let body_crc = h.u32()?;
    if stored_nodes != nodes as u64 {
        return Err(format!(
            "{stored_nodes} nodes, but the graph of {board} has {nodes}"
        ));
    }
    Ok((
        n,
        width,
        classes,
        quiet,
        history_len,
        every,
        body_len,
        body_crc,
    ))
}

/// Decode and check a checkpoint image for `board` with `nodes` graph nodes.
pub fn decode(bytes: &[u8], board: Board, nodes: usize) -> Result<State, String> {
    if bytes.len() < HEADER_LEN {
        return Err(format!(
            "truncated: {} bytes, shorter than the header",
            bytes.len()
        ));
    }
    let (header, body) = bytes.split_at(HEADER_LEN);
    let fields = check_header(header, board, nodes)?;
    if fields.6 != body.len() as u64 {
        return Err(format!(
            "truncated or extended: the header says {} body bytes, the file has {}",
            fields.6,
            body.len()
        ));
    }
    if fields.7 != crc32fast::hash(body) {
        return Err("corrupted: the body checksum does not match".into());
    }
    decode_body(body, board, nodes, fields)
}

/// Decode a checked body.
fn decode_body(
    body: &[u8],
    board: Board,
    nodes: usize,
    (n, width, classes, quiet, history_len, every, _, _): HeaderFields,
) -> Result<State, String> {
    if !(2..=1 << 20).contains(&width) || (64 * width - 1) < n as usize || history_len != n as usize
    {
        return Err("inconsistent iteration, width and history".into());
    }
    let mut r = Reader { bytes: body };
    let row_limbs = 2 * nodes * width;
    let rows: Vec<u64> = r
        .take(row_limbs.checked_mul(8).ok_or("too many rows")?)?
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect();
    let last_change = (0..nodes).map(|_| r.u32()).collect::<Result<Vec<_>, _>>()?;
    if last_change.iter().any(|&l| l > n) {
        return Err("a last change lies after the checkpoint's iteration".into());
    }
    let mut history = Vec::with_capacity(history_len);
    for _ in 0..history_len {
        let n = r.u32()?;
        let changed = (0..classes).map(|_| r.u32()).collect::<Result<_, _>>()?;
        history.push(IterationRecord { n, changed });
    }
    let mut values = Vec::with_capacity(nodes);
    for _ in 0..nodes {
        let (p, q) = (r.big()?, r.big()?);
        if q.is_zero() || p > q {
            return Err("a guess is not a value in [0, 1]".into());
        }
        values.push(Value::new(p, q));
    }
    if !r.bytes.is_empty() {
        return Err("trailing bytes after the guesses".into());
    }
    Ok(State {
        board,
        n,
        width,
        rows,
        values,
        last_change,
        quiet,
        history,
        every,
    })
}

/// Load and check one checkpoint file for `board` with `nodes` graph nodes: a regular
/// file, its header first, then exactly the body it states.
pub fn load(path: &Path, board: Board, nodes: usize) -> Result<State, Error> {
    let bad = |reason: String| Error::Checkpoint {
        path: path.display().to_string(),
        reason,
    };
    let (mut file, len) = open_regular(path)?;
    let header = read_header(&mut file, len, HEADER_LEN).map_err(bad)?;
    let fields = check_header(&header, board, nodes).map_err(bad)?;
    let body = read_body(&mut file, len, HEADER_LEN, fields.6, fields.7).map_err(bad)?;
    decode_body(&body, board, nodes, fields).map_err(bad)
}

/// The newest checkpoint in `dir` that loads, with an error for each newer one that did
/// not. None when there is no checkpoint at all; an error when there are some but none
/// loads (each one's reason is in the message).
pub fn newest(
    dir: &Path,
    board: Board,
    nodes: usize,
) -> Result<(Option<State>, Vec<Error>), Error> {
    let mut refused = Vec::new();
    for path in list(dir) {
        match load(&path, board, nodes) {
            Ok(s) => return Ok((Some(s), refused)),
            Err(e) => refused.push(e),
        }
    }
    if refused.is_empty() {
        return Ok((None, refused));
    }
    let reasons: Vec<String> = refused.iter().map(|e| e.to_string()).collect();
    Err(Error::Checkpoint {
        path: dir.display().to_string(),
        reason: format!(
            "no usable checkpoint to resume from: {}",
            reasons.join("; ")
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> State {
        let v = |n: u64, d: u64| Value::new(n.into(), d.into());
        State {
            board: Board::new(3, 3).unwrap(),
            n: 2,
            width: 2,
            rows: (0..12).collect(),
            values: vec![v(1, 2), v(1, 1), v(0, 1)],
            last_change: vec![1, 0, 0],
            quiet: 1,
            history: vec![
                IterationRecord {
                    n: 1,
                    changed: vec![1, 0, 0, 0, 0, 0],
                },
                IterationRecord {
                    n: 2,
                    changed: vec![0; 6],
                },
            ],
            every: 5,
        }
    }

    #[test]
    fn round_trip() {
        let s = sample();
        let b = s.board;
        assert_eq!(decode(&encode(&s), b, 3).unwrap(), s);
    }

    #[test]
    fn damage_and_mismatches_are_refused() {
        let s = sample();
        let bytes = encode(&s);
        for len in 0..bytes.len() {
            assert!(decode(&bytes[..len], s.board, 3).is_err(), "{len}");
        }
        for at in 0..bytes.len() {
            let mut b = bytes.clone();
            b[at] ^= 0x41;
            assert!(decode(&b, s.board, 3).is_err(), "{at}");
        }
        let other = Board::new(4, 3).unwrap();
        assert!(decode(&bytes, other, 3).unwrap_err().contains("not 4x3"));
        assert!(decode(&bytes, s.board, 4).unwrap_err().contains("nodes"));
    }

    #[test]
    fn save_keeps_the_newest_two() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = sample();
        for n in [2u32, 4, 6] {
            s.n = n;
            s.history.resize(
                n as usize,
                IterationRecord {
                    n,
                    changed: vec![0; 6],
                },
            );
            save(dir.path(), &s).unwrap();
        }
        let names: Vec<String> = list(dir.path())
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, vec![file_name(6), file_name(4)]);
        let (state, refused) = newest(dir.path(), s.board, 3).unwrap();
        assert_eq!(state.unwrap().n, 6);
        assert!(refused.is_empty());
        // A damaged newest one is skipped with its reason; the older one is used.
        let newest_path = &list(dir.path())[0];
        let mut b = std::fs::read(newest_path).unwrap();
        let last = b.len() - 1;
        b[last] ^= 1;
        std::fs::write(newest_path, b).unwrap();
        let (state, refused) = newest(dir.path(), s.board, 3).unwrap();
        assert_eq!(state.unwrap().n, 4);
        assert!(refused[0].to_string().contains("checksum"));
    }
}
