//! Table files: one per board and material class (`DIR/FxR/KRvK.bidtb`), holding every
//! position's exact value and its progress levels in White's closure T and Black's closure
//! T′. The byte layout is specified in `docs/FORMAT.md`; in short:
//!
//! - a 128-byte little-endian header (magic, version, board, class, counts, the run's
//!   verdicts, section offsets, a CRC-32 of the body and one of the header itself);
//! - the canonical raw key of every position (see [`crate::index::raw_key`]), increasing, so
//!   a position is found by binary search without rebuilding the index;
//! - per position, the rank of its value in the dictionary, and its T and T′ levels, each a
//!   `u32`, read zero-copy from the memory map;
//! - the dictionary: every distinct value once, in increasing order (so ranks compare like
//!   values), as little-endian numerator and denominator bytes.
//!
//! [`Table::open`] checks everything it can before answering anything: magic, version,
//! header checksum, board, class, section offsets and sizes, the body checksum, increasing
//! keys, ranks inside the dictionary and well-formed dictionary offsets. A truncated,
//! bit-flipped or foreign file is an [`Error::Table`] naming the file, never a panic or a
//! wrong value. Files are written atomically ([`crate::atomic`]).

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use num_bigint::BigUint;
use num_traits::Zero;
use rayon::prelude::*;
use zerocopy::little_endian::{U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::error::Error;
use crate::geometry::Board;
use crate::guess::Value;
use crate::position::Material;
use crate::rational::{cmp_shadowed, shadow};

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = *b"BIDTB\r\n\x1a";
/// The format version of a table whose every position has α = β (one value each): what
/// this build writes whenever it can, so that such tables stay byte-identical to earlier
/// builds'.
pub const VERSION: u32 = 1;
/// The format version of a table that also stores β, for boards where α < β somewhere
/// (a `ranks_beta` section after `levels_black`). This build reads both versions.
pub const VERSION_ALPHA_BETA: u32 = 2;
/// The file name extension of table files.
pub const EXTENSION: &str = "bidtb";
/// Size of the header in bytes.
pub const HEADER_LEN: usize = 128;
/// The stored level of a position outside a closure.
pub const UNREACHED: u32 = u32::MAX;
/// The stored first Richman iteration (or stable-at iteration) of a run that has none.
const NO_ITERATION: u32 = u32::MAX;

const FLAG_CONVERGED: u8 = 1;
const FLAG_CERTIFIED_ALPHA: u8 = 2;
const FLAG_CERTIFIED_BETA: u8 = 4;
/// Set exactly in version 2: the file has a `ranks_beta` section.
const FLAG_BETA_SECTION: u8 = 8;
/// Offset of the header checksum, which covers every header byte before it.
const HEADER_CRC_AT: usize = 124;

/// The file name of a class's table, e.g. `KRvK.bidtb`.
pub fn file_name(material: Material) -> String {
    format!("{material}.{EXTENSION}")
}

/// The header as laid out on disk (all integers little-endian, no padding).
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Clone, Copy, Debug)]
#[repr(C)]
struct Header {
    magic: [u8; 8],
    version: U32,
    header_len: U32,
    files: u8,
    ranks: u8,
    class: u8,
    flags: u8,
    first_richman_iteration: U32,
    positions: U64,
    raw_positions: U64,
    stable_at: U32,
    max_level_white: U32,
    max_level_black: U32,
    dictionary_len: U32,
    keys_offset: U64,
    ranks_offset: U64,
    levels_white_offset: U64,
    levels_black_offset: U64,
    dictionary_index_offset: U64,
    dictionary_bytes_offset: U64,
    file_len: U64,
    body_crc: U32,
    /// Version 2: the offset of `ranks_beta`; version 1: reserved, zero.
    ranks_beta_offset: U64,
    header_crc: U32,
}

const _: () = assert!(size_of::<Header>() == HEADER_LEN);

/// What a table says about itself (its header, decoded and checked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableInfo {
    /// The format version: 1 (one value per position, α = β) or 2 (α and β stored apart).
    pub version: u32,
    /// The board.
    pub board: Board,
    /// The material class.
    pub material: Material,
    /// Number of stored (canonical) positions.
    pub positions: usize,
    /// Number of positions before symmetry reduction.
    pub raw_positions: u64,
    /// The run's first Richman iteration (the whole board's), if it converged.
    pub first_richman_iteration: Option<u32>,
    /// The iteration at which this class's guesses stopped changing (None for tables made
    /// by the solve method, which has no iterations).
    pub stable_at: Option<u32>,
    /// Whether the run proved the guesses a Richman function.
    pub converged: bool,
    /// Whether the certificate proved α = s for every position of the board.
    pub certified_alpha: bool,
    /// Whether the certificate proved β = s for every position of the board.
    pub certified_beta: bool,
    /// Number of distinct values.
    pub dictionary_len: usize,
    /// The largest T level in the class (ignoring unreached positions).
    pub max_level_white: u32,
    /// The largest T′ level in the class.
    pub max_level_black: u32,
}

impl TableInfo {
    /// Whether every stored value is proved exact: α = s = β in version 1; in version 2
    /// the stored α is the limit α and the stored β the limit β.
    pub fn certified(&self) -> bool {
        self.converged && self.certified_alpha && self.certified_beta
    }

    /// Whether the file stores β apart from α (version 2).
    pub fn has_beta(&self) -> bool {
        self.version == VERSION_ALPHA_BETA
    }
}

/// Where each section lies, as computed from the position and dictionary counts.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Layout {
    keys: Range<usize>,
    ranks: Range<usize>,
    levels_white: Range<usize>,
    levels_black: Range<usize>,
    /// Version 2 only: each position's β rank (version 1: α's ranks serve as β's).
    ranks_beta: Option<Range<usize>>,
    dictionary_index: Range<usize>,
    /// Start of the dictionary bytes (they run to the end of the file).
    dictionary_bytes: usize,
}

impl Layout {
    /// The layout for `positions` positions and `dictionary` values, with a `ranks_beta`
    /// section if `beta`, or None on overflow.
    fn new(positions: usize, dictionary: usize, beta: bool) -> Option<Layout> {
        let array = positions.checked_mul(4)?;
        let index = dictionary.checked_add(1)?.checked_mul(8)?;
        let mut at = HEADER_LEN;
        let mut next = |len: usize| -> Option<Range<usize>> {
            let r = at..at.checked_add(len)?;
            at = r.end;
            Some(r)
        };
        let keys = next(array)?;
        let ranks = next(array)?;
        let levels_white = next(array)?;
        let levels_black = next(array)?;
        let ranks_beta = if beta { Some(next(array)?) } else { None };
        let dictionary_index = next(index)?;
        Some(Layout {
            dictionary_bytes: dictionary_index.end,
            keys,
            ranks,
            levels_white,
            levels_black,
            ranks_beta,
            dictionary_index,
        })
    }
}

/// Everything a table file holds, ready to be encoded. All per-position vectors are in the
/// generator's index order and have one entry per position.
#[derive(Debug)]
pub struct Contents<'a> {
    /// The board.
    pub board: Board,
    /// The material class.
    pub material: Material,
    /// Number of positions before symmetry reduction.
    pub raw_positions: u64,
    /// The run's first Richman iteration, if it converged.
    pub first_richman_iteration: Option<u32>,
    /// Where this class's guesses stopped changing (None: the solve method).
    pub stable_at: Option<u32>,
    /// Whether the values were proved to form a Richman function.
    pub converged: bool,
    /// Whether α = s was proved for the whole board (with `values_beta`: α = `values`).
    pub certified_alpha: bool,
    /// Whether β = s was proved for the whole board (with `values_beta`: β = `values_beta`).
    pub certified_beta: bool,
    /// The canonical raw key of each position, increasing.
    pub keys: Vec<u32>,
    /// The value of each position: α (which is also β unless `values_beta` is given).
    pub values: Vec<&'a Value>,
    /// β of each position, on boards where it differs from α somewhere: the file is then
    /// written in version 2. None: version 1, whose values are α = β.
    pub values_beta: Option<Vec<&'a Value>>,
    /// The T level of each position ([`UNREACHED`] outside T), T computed from α.
    pub levels_white: Vec<u32>,
    /// The T′ level of each position, T′ computed from β.
    pub levels_black: Vec<u32>,
}

fn encode_value(v: &Value, out: &mut Vec<u8>) {
    let numer = v.numer().to_bytes_le();
    out.extend_from_slice(&(numer.len() as u32).to_le_bytes());
    out.extend_from_slice(&numer);
    out.extend_from_slice(&v.denom().to_bytes_le());
}

/// The file image of a table.
pub fn encode(c: &Contents<'_>) -> Vec<u8> {
    let p = c.keys.len();
    assert!(
        c.values.len() == p && c.levels_white.len() == p && c.levels_black.len() == p,
        "one value and two levels per position"
    );
    assert!(
        c.values_beta.as_ref().is_none_or(|b| b.len() == p),
        "one beta per position"
    );
    let betas = c.values_beta.as_deref().unwrap_or_default();
    // The dictionary: distinct values of α and β (found by numerator and denominator, which
    // are in lowest terms), sorted; each position stores its values' ranks.
    let mut distinct: HashMap<(&BigUint, &BigUint), u32> = HashMap::new();
    let mut dictionary: Vec<&Value> = Vec::new();
    for v in c.values.iter().chain(betas) {
        distinct.entry((v.numer(), v.denom())).or_insert_with(|| {
            dictionary.push(v);
            0
        });
    }
    // Sort by a floating-point shadow, exactly only where shadows come close (values of
    // thousands of digits make every cross-multiplication costly).
    let mut keyed: Vec<(f64, &Value)> =
        dictionary.into_par_iter().map(|v| (shadow(v), v)).collect();
    keyed.par_sort_by(|(fa, a), (fb, b)| cmp_shadowed(a, *fa, b, *fb));
    let dictionary: Vec<&Value> = keyed.into_iter().map(|(_, v)| v).collect();
    for (rank, v) in dictionary.iter().enumerate() {
        distinct.insert((v.numer(), v.denom()), rank as u32);
    }
    let layout =
        Layout::new(p, dictionary.len(), c.values_beta.is_some()).expect("a table fits in memory");

    let mut bytes = vec![0u8; layout.dictionary_bytes];
    let mut put = |range: &Range<usize>, items: &mut dyn Iterator<Item = u32>| {
        for (chunk, x) in bytes[range.clone()].chunks_exact_mut(4).zip(items) {
            chunk.copy_from_slice(&x.to_le_bytes());
        }
    };
    put(&layout.keys, &mut c.keys.iter().copied());
    put(
        &layout.ranks,
        &mut c.values.iter().map(|v| distinct[&(v.numer(), v.denom())]),
    );
    put(&layout.levels_white, &mut c.levels_white.iter().copied());
    put(&layout.levels_black, &mut c.levels_black.iter().copied());
    if let Some(range) = &layout.ranks_beta {
        put(
            range,
            &mut betas.iter().map(|v| distinct[&(v.numer(), v.denom())]),
        );
    }
    let mut entries = Vec::new();
    let mut offsets = Vec::with_capacity(dictionary.len() + 1);
    for v in &dictionary {
        offsets.push(entries.len() as u64);
        encode_value(v, &mut entries);
    }
    offsets.push(entries.len() as u64);
    for (chunk, x) in bytes[layout.dictionary_index.clone()]
        .chunks_exact_mut(8)
        .zip(&offsets)
    {
        chunk.copy_from_slice(&x.to_le_bytes());
    }
    bytes.extend_from_slice(&entries);

    let max_level = |levels: &[u32]| {
        levels
            .iter()
            .copied()
            .filter(|&l| l != UNREACHED)
            .max()
            .unwrap_or(0)
    };
    let flag = |on: bool, bit: u8| if on { bit } else { 0 };
    let flags = flag(c.converged, FLAG_CONVERGED)
        | flag(c.certified_alpha, FLAG_CERTIFIED_ALPHA)
        | flag(c.certified_beta, FLAG_CERTIFIED_BETA)
        | flag(c.values_beta.is_some(), FLAG_BETA_SECTION);
    let class = Material::ALL
        .iter()
        .position(|&m| m == c.material)
        .expect("a known class") as u8;
    let offset = |x: usize| U64::new(x as u64);
    let mut header = Header {
        magic: MAGIC,
        version: U32::new(if c.values_beta.is_some() {
            VERSION_ALPHA_BETA
        } else {
            VERSION
        }),
        header_len: U32::new(HEADER_LEN as u32),
        files: c.board.files(),
        ranks: c.board.ranks(),
        class,
        flags,
        first_richman_iteration: U32::new(c.first_richman_iteration.unwrap_or(NO_ITERATION)),
        positions: offset(p),
        raw_positions: U64::new(c.raw_positions),
        stable_at: U32::new(c.stable_at.unwrap_or(NO_ITERATION)),
        max_level_white: U32::new(max_level(&c.levels_white)),
        max_level_black: U32::new(max_level(&c.levels_black)),
        dictionary_len: U32::new(dictionary.len() as u32),
        keys_offset: offset(layout.keys.start),
        ranks_offset: offset(layout.ranks.start),
        levels_white_offset: offset(layout.levels_white.start),
        levels_black_offset: offset(layout.levels_black.start),
        dictionary_index_offset: offset(layout.dictionary_index.start),
        dictionary_bytes_offset: offset(layout.dictionary_bytes),
        file_len: offset(bytes.len()),
        body_crc: U32::new(crc32fast::hash(&bytes[HEADER_LEN..])),
        ranks_beta_offset: offset(layout.ranks_beta.as_ref().map_or(0, |r| r.start)),
        header_crc: U32::new(0),
    };
    header.header_crc = U32::new(crc32fast::hash(&header.as_bytes()[..HEADER_CRC_AT]));
    bytes[..HEADER_LEN].copy_from_slice(header.as_bytes());
    bytes
}

/// Encode a table and write it atomically to `path`.
pub fn write(path: &Path, contents: &Contents<'_>) -> Result<(), Error> {
    crate::atomic::write_atomic(path, &encode(contents))
}

/// An open, validated table file, memory-mapped.
#[derive(Debug)]
pub struct Table {
    path: PathBuf,
    map: Mmap,
    info: TableInfo,
    layout: Layout,
}

impl Table {
    /// Open and validate a table file (see the module comment for what is checked). The
    /// file must not be modified while it is open.
    pub fn open(path: impl AsRef<Path>) -> Result<Table, Error> {
        let path = path.as_ref();
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let len = file.metadata().map_err(|e| Error::io(path, e))?.len();
        let bad = |reason: String| Error::Table {
            path: path.display().to_string(),
            reason,
        };
        if len < HEADER_LEN as u64 {
            return Err(bad(format!(
                "truncated: {len} bytes, shorter than the {HEADER_LEN}-byte header"
            )));
        }
        // SAFETY: the map is read-only and private to this process; bidtb never writes a
        // table in place (writes replace the file by rename), and the documented contract is
        // that nobody modifies a table file while it is open.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        let (info, layout) = validate(&map).map_err(bad)?;
        Ok(Table {
            path: path.to_path_buf(),
            map,
            info,
            layout,
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The header's facts.
    pub fn info(&self) -> &TableInfo {
        &self.info
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.info.positions
    }

    /// Whether the class has no positions on this board.
    pub fn is_empty(&self) -> bool {
        self.info.positions == 0
    }

    fn words(&self, range: &Range<usize>) -> &[U32] {
        <[U32]>::ref_from_bytes(&self.map[range.clone()]).expect("sizes checked at open")
    }

    fn dictionary_index(&self) -> &[U64] {
        <[U64]>::ref_from_bytes(&self.map[self.layout.dictionary_index.clone()])
            .expect("sizes checked at open")
    }

    /// The local index of the position with canonical raw key `key`, if stored.
    pub fn find(&self, key: usize) -> Option<usize> {
        self.words(&self.layout.keys)
            .binary_search_by(|k| (k.get() as usize).cmp(&key))
            .ok()
    }

    /// The canonical raw key of position `i`.
    pub fn key(&self, i: usize) -> usize {
        self.words(&self.layout.keys)[i].get() as usize
    }

    /// The rank of position `i`'s value in the dictionary (ranks compare like values).
    pub fn rank(&self, i: usize) -> u32 {
        self.words(&self.layout.ranks)[i].get()
    }

    /// Position `i`'s level in White's closure T ([`UNREACHED`] outside it).
    pub fn level_white(&self, i: usize) -> u32 {
        self.words(&self.layout.levels_white)[i].get()
    }

    /// Position `i`'s level in Black's closure T′.
    pub fn level_black(&self, i: usize) -> u32 {
        self.words(&self.layout.levels_black)[i].get()
    }

    /// The rank of position `i`'s β in the dictionary: in version 1, its α rank.
    pub fn rank_beta(&self, i: usize) -> u32 {
        match &self.layout.ranks_beta {
            Some(range) => self.words(range)[i].get(),
            None => self.rank(i),
        }
    }

    /// The exact value of position `i`: α, which is the value where α = β (always, in a
    /// version 1 file).
    pub fn value(&self, i: usize) -> Result<Value, Error> {
        self.dictionary_value(self.rank(i) as usize)
    }

    /// The exact β of position `i`, if it differs from α (only in version 2 files).
    pub fn beta_if_above(&self, i: usize) -> Result<Option<Value>, Error> {
        let (a, b) = (self.rank(i), self.rank_beta(i));
        if a == b {
            return Ok(None);
        }
        self.dictionary_value(b as usize).map(Some)
    }

    /// Positions whose β lies above their α (0 in a version 1 file).
    pub fn alpha_below_beta(&self) -> usize {
        match &self.layout.ranks_beta {
            Some(range) => self
                .words(range)
                .iter()
                .zip(self.words(&self.layout.ranks))
                .filter(|(b, a)| b.get() != a.get())
                .count(),
            None => 0,
        }
    }

    /// Dictionary entry `k` (the k-th smallest distinct value), in lowest terms.
    pub fn dictionary_value(&self, k: usize) -> Result<Value, Error> {
        let v = self.dictionary_value_as_stored(k)?;
        Ok(crate::rational::reduced(
            v.numer().clone(),
            v.denom().clone(),
        ))
    }

    /// Dictionary entry `k` exactly as stored: the generator stores lowest terms, and
    /// `bidtb verify` checks that it did.
    pub fn dictionary_value_as_stored(&self, k: usize) -> Result<Value, Error> {
        let bad = |reason: String| Error::Table {
            path: self.path.display().to_string(),
            reason,
        };
        let index = self.dictionary_index();
        if k + 1 >= index.len() {
            return Err(bad(format!("no dictionary entry {k}")));
        }
        let start = self.layout.dictionary_bytes + index[k].get() as usize;
        let end = self.layout.dictionary_bytes + index[k + 1].get() as usize;
        decode_value(&self.map[start..end])
            .ok_or_else(|| bad(format!("dictionary entry {k} is not a value in [0, 1]")))
    }
}

/// A dictionary entry: numerator length (u32), numerator bytes, denominator bytes, all
/// little-endian. None unless it is a fraction in [0, 1] with a non-zero denominator.
fn decode_value(entry: &[u8]) -> Option<Value> {
    let (len, rest) = entry.split_first_chunk::<4>()?;
    let len = u32::from_le_bytes(*len) as usize;
    if len >= rest.len() {
        return None;
    }
    let (numer, denom) = rest.split_at(len);
    let numer = BigUint::from_bytes_le(numer);
    let denom = BigUint::from_bytes_le(denom);
    if denom.is_zero() || numer > denom {
        return None;
    }
    Some(Value::new_raw(numer, denom))
}

/// Check a whole file image; returns the header's facts and the section layout.
fn validate(bytes: &[u8]) -> Result<(TableInfo, Layout), String> {
    let header = Header::ref_from_bytes(&bytes[..HEADER_LEN]).expect("128 bytes");
    if header.magic != MAGIC {
        return Err("not a bidtb table file (wrong magic bytes)".into());
    }
    if header.header_crc.get() != crc32fast::hash(&bytes[..HEADER_CRC_AT]) {
        return Err("corrupted: the header checksum does not match".into());
    }
    let version = header.version.get();
    if version != VERSION && version != VERSION_ALPHA_BETA {
        return Err(format!(
            "format version {version}, but this bidtb reads versions {VERSION} and \
             {VERSION_ALPHA_BETA} (regenerate the tables with this bidtb)"
        ));
    }
    let beta = version == VERSION_ALPHA_BETA;
    if (header.flags & FLAG_BETA_SECTION != 0) != beta || header.flags >> 4 != 0 {
        return Err(format!(
            "flags {:#04x} do not fit version {version}",
            header.flags
        ));
    }
    if header.header_len.get() as usize != HEADER_LEN {
        return Err(format!("header length {}", header.header_len.get()));
    }
    let board = Board::new(header.files, header.ranks).map_err(|e| e.to_string())?;
    let material = *Material::ALL
        .get(header.class as usize)
        .ok_or_else(|| format!("unknown class number {}", header.class))?;
    let file_len = header.file_len.get();
    if file_len != bytes.len() as u64 {
        return Err(format!(
            "truncated or extended: the header says {file_len} bytes, the file has {}",
            bytes.len()
        ));
    }
    let positions = header.positions.get();
    let dictionary_len = header.dictionary_len.get() as usize;
    let key_space = (board.len() as u64).pow(if material.0.is_some() { 3 } else { 2 });
    if positions > key_space || positions > header.raw_positions.get() {
        return Err(format!("impossible position count {positions}"));
    }
    let positions = positions as usize;
    let layout = Layout::new(positions, dictionary_len, beta)
        .filter(|l| l.dictionary_bytes <= bytes.len())
        .ok_or("the sections do not fit in the file")?;
    let stated = [
        header.keys_offset.get(),
        header.ranks_offset.get(),
        header.levels_white_offset.get(),
        header.levels_black_offset.get(),
        header.dictionary_index_offset.get(),
        header.dictionary_bytes_offset.get(),
        header.ranks_beta_offset.get(),
    ];
    let expected = [
        layout.keys.start,
        layout.ranks.start,
        layout.levels_white.start,
        layout.levels_black.start,
        layout.dictionary_index.start,
        layout.dictionary_bytes,
        layout.ranks_beta.as_ref().map_or(0, |r| r.start),
    ];
    if stated.iter().zip(expected).any(|(&s, e)| s != e as u64) {
        return Err("section offsets do not match the counts".into());
    }
    if header.body_crc.get() != crc32fast::hash(&bytes[HEADER_LEN..]) {
        return Err("corrupted: the body checksum does not match".into());
    }
    let words = |r: &Range<usize>| <[U32]>::ref_from_bytes(&bytes[r.clone()]).expect("sized");
    let keys = words(&layout.keys);
    if keys.windows(2).any(|w| w[0].get() >= w[1].get())
        || keys.last().is_some_and(|k| k.get() as u64 >= key_space)
    {
        return Err("position keys are not increasing keys of the board".into());
    }
    let ranks = words(&layout.ranks);
    if ranks.iter().any(|r| r.get() as usize >= dictionary_len) {
        return Err("a value rank lies outside the dictionary".into());
    }
    if let Some(range) = &layout.ranks_beta {
        // Ranks compare like values, so α ≤ β is a comparison of ranks.
        if words(range)
            .iter()
            .zip(ranks)
            .any(|(b, a)| b.get() as usize >= dictionary_len || b.get() < a.get())
        {
            return Err("a beta rank lies outside the dictionary or below its alpha".into());
        }
    }
    let index = <[U64]>::ref_from_bytes(&bytes[layout.dictionary_index.clone()]).expect("sized");
    let entries_len = (bytes.len() - layout.dictionary_bytes) as u64;
    // Each entry holds at least the length word and one denominator byte.
    if index[0].get() != 0
        || index
            .windows(2)
            .any(|w| w[1].get() < w[0].get().saturating_add(5))
        || index[dictionary_len].get() != entries_len
    {
        return Err("the dictionary index is malformed".into());
    }
    let flags = header.flags;
    let first = header.first_richman_iteration.get();
    let info = TableInfo {
        version,
        board,
        material,
        positions,
        raw_positions: header.raw_positions.get(),
        first_richman_iteration: (first != NO_ITERATION).then_some(first),
        stable_at: (header.stable_at.get() != NO_ITERATION).then_some(header.stable_at.get()),
        converged: flags & FLAG_CONVERGED != 0,
        certified_alpha: flags & FLAG_CERTIFIED_ALPHA != 0,
        certified_beta: flags & FLAG_CERTIFIED_BETA != 0,
        dictionary_len,
        max_level_white: header.max_level_white.get(),
        max_level_black: header.max_level_black.get(),
    };
    Ok((info, layout))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: u64, d: u64) -> Value {
        Value::new(n.into(), d.into())
    }

    fn sample(values: &[Value]) -> Vec<u8> {
        sample_with_beta(values, None)
    }

    fn sample_with_beta(values: &[Value], betas: Option<&[Value]>) -> Vec<u8> {
        let p = values.len();
        encode(&Contents {
            board: Board::new(3, 3).unwrap(),
            material: Material::ALL[2],
            raw_positions: 100,
            first_richman_iteration: Some(7),
            stable_at: Some(5),
            converged: true,
            certified_alpha: true,
            certified_beta: true,
            keys: (0..p as u32).map(|k| 3 * k + 1).collect(),
            values: values.iter().collect(),
            values_beta: betas.map(|b| b.iter().collect()),
            levels_white: (0..p as u32).collect(),
            levels_black: vec![UNREACHED; p],
        })
    }

    fn open_bytes(bytes: &[u8]) -> Result<Table, Error> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("KRvK.bidtb");
        std::fs::write(&path, bytes).unwrap();
        Table::open(&path)
    }

    #[test]
    fn round_trip_with_a_sorted_dictionary() {
        let big = Value::new(
            BigUint::from(3u8).pow(200),
            BigUint::from(3u8).pow(200) + 1u8,
        );
        let values = [v(1, 2), v(0, 1), big.clone(), v(1, 2), v(1, 1), v(1, 3)];
        let t = open_bytes(&sample(&values)).unwrap();
        assert_eq!(t.len(), 6);
        assert_eq!(t.info().dictionary_len, 5);
        assert_eq!(t.info().first_richman_iteration, Some(7));
        assert!(t.info().certified());
        assert_eq!(t.info().max_level_white, 5);
        for (i, want) in values.iter().enumerate() {
            assert_eq!(&t.value(i).unwrap(), want);
            assert_eq!(t.key(i), 3 * i + 1);
            assert_eq!(t.find(3 * i + 1), Some(i));
            assert_eq!(t.level_white(i), i as u32);
            assert_eq!(t.level_black(i), UNREACHED);
        }
        assert_eq!(t.find(2), None);
        // Ranks follow the values: 0 < 1/3 < 1/2 < big < 1.
        let ranks: Vec<u32> = (0..6).map(|i| t.rank(i)).collect();
        assert_eq!(ranks, vec![2, 0, 3, 2, 4, 1]);
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = sample(&[v(1, 2), v(3, 4), v(0, 1)]);
        for len in 0..bytes.len() {
            let err = open_bytes(&bytes[..len]).unwrap_err().to_string();
            assert!(err.contains("KRvK.bidtb"), "{err}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(open_bytes(&longer).is_err());
    }

    #[test]
    fn every_single_byte_flip_is_an_error() {
        let bytes = sample(&[v(1, 2), v(3, 4), v(0, 1), v(5, 8)]);
        for at in 0..bytes.len() {
            let mut b = bytes.clone();
            b[at] ^= 0x10;
            assert!(open_bytes(&b).is_err(), "flip at {at} went unnoticed");
        }
    }

    /// Rewrite header byte `at` and fix the header checksum, as a forger would.
    fn forged(mut bytes: Vec<u8>, at: usize, byte: u8) -> Vec<u8> {
        bytes[at] = byte;
        let crc = crc32fast::hash(&bytes[..HEADER_CRC_AT]);
        bytes[HEADER_CRC_AT..HEADER_LEN].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    #[test]
    fn another_version_is_refused_by_name() {
        let err = open_bytes(&forged(sample(&[v(1, 2)]), 8, 3))
            .unwrap_err()
            .to_string();
        assert!(err.contains("format version 3"), "{err}");
        // A version 1 file relabelled 2 lacks the beta section and its flag.
        let err = open_bytes(&forged(sample(&[v(1, 2)]), 8, 2))
            .unwrap_err()
            .to_string();
        assert!(err.contains("do not fit version 2"), "{err}");
    }

    #[test]
    fn version_2_keeps_alpha_and_beta() {
        let alphas = [v(1, 2), v(0, 1), v(1, 3), v(1, 1)];
        let betas = [v(1, 2), v(2, 3), v(1, 1), v(1, 1)];
        let bytes = sample_with_beta(&alphas, Some(&betas));
        let t = open_bytes(&bytes).unwrap();
        assert_eq!(t.info().version, VERSION_ALPHA_BETA);
        assert!(t.info().has_beta());
        // The dictionary is the union: 0, 1/3, 1/2, 2/3, 1.
        assert_eq!(t.info().dictionary_len, 5);
        assert_eq!(t.alpha_below_beta(), 2);
        for i in 0..4 {
            assert_eq!(t.value(i).unwrap(), alphas[i]);
            let beta = t.beta_if_above(i).unwrap();
            assert_eq!(beta.as_ref().unwrap_or(&alphas[i]), &betas[i]);
            assert_eq!(beta.is_some(), alphas[i] != betas[i]);
        }
        // The β ranks follow the T′ levels; the dictionary index follows them.
        let at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
        assert_eq!(at(116), (HEADER_LEN + 16 * 4) as u64);
        assert_eq!(at(88), (HEADER_LEN + 20 * 4) as u64);
        assert_eq!(bytes[19], FLAG_CONVERGED | 2 | 4 | FLAG_BETA_SECTION);
    }

    #[test]
    fn version_1_is_written_without_beta_and_reads_beta_as_alpha() {
        let alphas = [v(1, 2), v(0, 1)];
        let bytes = sample(&alphas);
        assert_eq!(bytes[8], 1);
        assert_eq!(&bytes[116..124], &[0; 8], "the reserved bytes of version 1");
        let t = open_bytes(&bytes).unwrap();
        assert!(!t.info().has_beta());
        assert_eq!(t.alpha_below_beta(), 0);
        assert_eq!(t.rank_beta(1), t.rank(1));
        assert_eq!(t.beta_if_above(0).unwrap(), None);
    }

    #[test]
    fn version_2_refuses_beta_below_alpha_and_every_flip() {
        let bytes = sample_with_beta(&[v(1, 2), v(1, 3)], Some(&[v(1, 3), v(1, 3)]));
        let err = open_bytes(&bytes).unwrap_err().to_string();
        assert!(err.contains("below its alpha"), "{err}");
        let bytes = sample_with_beta(&[v(1, 2), v(1, 3)], Some(&[v(3, 4), v(1, 3)]));
        assert!(open_bytes(&bytes).is_ok());
        for at in 0..bytes.len() {
            let mut b = bytes.clone();
            b[at] ^= 0x10;
            assert!(open_bytes(&b).is_err(), "flip at {at} went unnoticed");
        }
        for len in 0..bytes.len() {
            assert!(open_bytes(&bytes[..len]).is_err());
        }
    }

    #[test]
    fn an_empty_class_round_trips() {
        let t = open_bytes(&sample(&[])).unwrap();
        assert!(t.is_empty());
        assert_eq!(t.find(0), None);
    }
}
