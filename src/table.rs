//! Table files: one per board and material (`DIR/FxR/KRvKN.bidtb`), holding every
//! position's exact value (α, and β where it differs) and its progress levels in White's
//! closure T and Black's closure T′. The byte layout is specified in `docs/FORMAT.md`; in
//! short:
//!
//! - a little-endian header in bidtb's container ([`crate::container`]: magic, version,
//!   length, fields, CRC-32): the board, the material by name, counts, the run's verdicts,
//!   section offsets, a CRC-32 of the body;
//! - the canonical key of every position (see [`crate::index`]), increasing, so a position
//!   is found by binary search without rebuilding the index;
//! - per position, the rank of its value in the dictionary, its T and T′ levels, and (where
//!   α < β somewhere) the rank of its β, each a `u32`, read zero-copy from the memory map;
//! - the dictionary: every distinct value once, in increasing order (so ranks compare like
//!   values), as little-endian numerator and denominator bytes.
//!
//! This build writes version 3 (the material named in the header, 64-bit keys wide enough
//! for every material on every board). It reads versions 1 and 2 too, the three-piece
//! tables of earlier builds (a class number in the header, 32-bit keys), and answers from
//! them exactly as before.
//!
//! [`Table::open`] checks everything it can before answering anything: that the file is a
//! regular file, magic, version, header checksum, board, material, section offsets and
//! sizes, the body checksum, increasing keys, ranks inside the dictionary and well-formed
//! dictionary offsets. A truncated, bit-flipped or foreign file is an [`Error::Table`]
//! naming the file, never a panic or a wrong value. Files are written atomically
//! ([`crate::atomic`]).

use std::collections::HashMap;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};

use memmap2::Mmap;
use num_bigint::BigUint;
use num_traits::Zero;
use rayon::prelude::*;
use zerocopy::FromBytes;
use zerocopy::little_endian::{U32, U64};

use crate::container::{Fields, HeaderWriter, PREFIX_LEN, open_regular};
use crate::error::Error;
use crate::geometry::Board;
use crate::material::Material;
use crate::value::Value;
use crate::value::arith::{cmp_shadowed, shadow};

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = *b"BIDTB\r\n\x1a";
/// The format version this build writes.
pub const VERSION: u32 = 3;
/// The versions this build reads: 1 (three-piece, α = β), 2 (three-piece, β apart), 3.
pub const READABLE: [u32; 3] = [1, 2, 3];
/// The file name extension of table files.
pub const EXTENSION: &str = "bidtb";
/// Header length of versions 1 and 2.
const HEADER_LEN_V1: usize = 128;
/// Header length of version 3.
pub const HEADER_LEN: usize = 160;
/// Bytes of the material name in a version 3 header (ASCII, zero-padded).
const NAME_LEN: usize = 16;
/// The stored level of a position outside a closure.
pub const UNREACHED: u32 = u32::MAX;
/// The stored first Richman iteration (or stable-at iteration) of a run that has none.
const NO_ITERATION: u32 = u32::MAX;

const FLAG_CONVERGED: u8 = 1;
const FLAG_CERTIFIED_ALPHA: u8 = 2;
const FLAG_CERTIFIED_BETA: u8 = 4;
/// Set exactly when the file has a `ranks_beta` section (α < β somewhere).
const FLAG_BETA_SECTION: u8 = 8;

/// The file name of a material's table, e.g. `KRvKN.bidtb`.
pub fn file_name(material: Material) -> String {
    format!("{material}.{EXTENSION}")
}

/// What a table says about itself (its header, decoded and checked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableInfo {
    /// The format version: 1, 2 or 3.
    pub version: u32,
    /// The board.
    pub board: Board,
    /// The material.
    pub material: Material,
    /// Number of stored (canonical) positions.
    pub positions: usize,
    /// Number of positions before symmetry reduction.
    pub raw_positions: u64,
    /// The run's first Richman iteration (the study's iteration), if it converged.
    pub first_richman_iteration: Option<u32>,
    /// The iteration at which this material's guesses stopped changing (None for tables
    /// made by the solve method, which has no iterations).
    pub stable_at: Option<u32>,
    /// Whether the run proved the values a Richman function.
    pub converged: bool,
    /// Whether the certificate proved the stored α to be α.
    pub certified_alpha: bool,
    /// Whether the certificate proved the stored β (the α where none is stored) to be β.
    pub certified_beta: bool,
    /// Number of distinct values.
    pub dictionary_len: usize,
    /// The largest T level in the file (ignoring unreached positions).
    pub max_level_white: u32,
    /// The largest T′ level.
    pub max_level_black: u32,
    /// Whether the file stores β apart from α (α < β somewhere).
    pub has_beta: bool,
}

impl TableInfo {
    /// Whether every stored value is proved exact: the stored α is the limit α and the
    /// stored β (or α, where α = β) the limit β.
    pub fn certified(&self) -> bool {
        self.converged && self.certified_alpha && self.certified_beta
    }

    /// Whether the file stores β apart from α.
    pub fn has_beta(&self) -> bool {
        self.has_beta
    }
}

/// Where each section lies, as computed from the counts.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Layout {
    /// Bytes per key: 4 in versions 1 and 2, 8 in version 3.
    key_width: usize,
    keys: Range<usize>,
    ranks: Range<usize>,
    levels_white: Range<usize>,
    levels_black: Range<usize>,
    /// Each position's β rank, where stored (else α's ranks serve as β's).
    ranks_beta: Option<Range<usize>>,
    dictionary_index: Range<usize>,
    /// Start of the dictionary bytes (they run to the end of the file).
    dictionary_bytes: usize,
}

impl Layout {
    /// The layout for `positions` positions and `dictionary` values after a header of
    /// `header` bytes, keys of `key_width` bytes, with a `ranks_beta` section if `beta`;
    /// None on overflow.
    fn new(
        header: usize,
        key_width: usize,
        positions: usize,
        dictionary: usize,
        beta: bool,
    ) -> Option<Layout> {
        let array = positions.checked_mul(4)?;
        let index = dictionary.checked_add(1)?.checked_mul(8)?;
        let mut at = header;
        let mut next = |len: usize| -> Option<Range<usize>> {
            let r = at..at.checked_add(len)?;
            at = r.end;
            Some(r)
        };
        let keys = next(positions.checked_mul(key_width)?)?;
        let ranks = next(array)?;
        let levels_white = next(array)?;
        let levels_black = next(array)?;
        let ranks_beta = if beta { Some(next(array)?) } else { None };
        let dictionary_index = next(index)?;
        Some(Layout {
            key_width,
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
    /// The material.
    pub material: Material,
    /// Number of positions before symmetry reduction.
    pub raw_positions: u64,
    /// The run's first Richman iteration, if the study's iteration made the values.
    pub first_richman_iteration: Option<u32>,
    /// Where this material's guesses stopped changing (None: the solve method).
    pub stable_at: Option<u32>,
    /// Whether the values were proved to form a Richman function.
    pub converged: bool,
    /// Whether `values` were proved to be α.
    pub certified_alpha: bool,
    /// Whether `values_beta` (or `values`, without it) were proved to be β.
    pub certified_beta: bool,
    /// The canonical key of each position, increasing.
    pub keys: Vec<u64>,
    /// The value of each position: α (which is also β unless `values_beta` is given).
    pub values: Vec<&'a Value>,
    /// β of each position, where it differs from α somewhere: then the file has a
    /// `ranks_beta` section.
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

/// The bytes [`encode_value`] writes for `v`, without writing them (`to_bytes_le` writes
/// one byte for zero).
fn encoded_len(v: &Value) -> u64 {
    let len = |n: &BigUint| n.bits().div_ceil(8).max(1);
    4 + len(v.numer()) + len(v.denom())
}

/// Dictionary values encoded per parallel batch while the writer streams them.
const ENCODE_BATCH: usize = 4096;

/// The file image of a table (version 3), in memory: [`encode_to`] into a vector.
pub fn encode(c: &Contents<'_>) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    encode_to(c, &mut out).expect("writing to memory cannot fail");
    out.into_inner()
}

/// Write the file image of a table (version 3) to `out`, streaming: only the fixed-size
/// sections (about 24 bytes a position) are assembled in memory, the dictionary's values
/// (gigabytes where values have thousands of digits) go out in batches as they are
/// encoded, and the header, which holds the body's checksum, is written last, at the start.
pub fn encode_to<W: Write + Seek>(c: &Contents<'_>, out: &mut W) -> std::io::Result<()> {
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
    let layout = Layout::new(HEADER_LEN, 8, p, dictionary.len(), c.values_beta.is_some())
        .expect("a table fits in memory");

    // The fixed-size sections, after a header left blank until the checksum is known.
    let mut bytes = vec![0u8; layout.dictionary_bytes];
    for (chunk, k) in bytes[layout.keys.clone()].chunks_exact_mut(8).zip(&c.keys) {
        chunk.copy_from_slice(&k.to_le_bytes());
    }
    let mut put = |range: &Range<usize>, items: &mut dyn Iterator<Item = u32>| {
        for (chunk, x) in bytes[range.clone()].chunks_exact_mut(4).zip(items) {
            chunk.copy_from_slice(&x.to_le_bytes());
        }
    };
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
    drop(distinct);
    let mut offsets = Vec::with_capacity(dictionary.len() + 1);
    let mut at = 0u64;
    for v in &dictionary {
        offsets.push(at);
        at += encoded_len(v);
    }
    offsets.push(at);
    let entries_len = at;
    for (chunk, x) in bytes[layout.dictionary_index.clone()]
        .chunks_exact_mut(8)
        .zip(&offsets)
    {
        chunk.copy_from_slice(&x.to_le_bytes());
    }
    let file_len = bytes.len() as u64 + entries_len;

    out.seek(SeekFrom::Start(0))?;
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes[HEADER_LEN..]);
    {
        let mut w = BufWriter::with_capacity(1 << 20, &mut *out);
        w.write_all(&bytes)?;
        for batch in dictionary.chunks(ENCODE_BATCH) {
            let encoded: Vec<u8> = batch
                .par_iter()
                .map(|v| {
                    let mut e = Vec::with_capacity(encoded_len(v) as usize);
                    encode_value(v, &mut e);
                    e
                })
                .collect::<Vec<_>>()
                .concat();
            crc.update(&encoded);
            w.write_all(&encoded)?;
        }
        w.flush()?;
    }

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
    let mut name = [0u8; NAME_LEN];
    let text = c.material.to_string();
    name[..text.len()].copy_from_slice(text.as_bytes());
    let mut h = HeaderWriter::new(MAGIC, VERSION, HEADER_LEN);
    h.u8(c.board.files())
        .u8(c.board.ranks())
        .u8(c.material.man_count() as u8)
        .u8(flags)
        .bytes(&name)
        .u32(c.first_richman_iteration.unwrap_or(NO_ITERATION))
        .u64(p as u64)
        .u64(c.raw_positions)
        .u32(c.stable_at.unwrap_or(NO_ITERATION))
        .u32(max_level(&c.levels_white))
        .u32(max_level(&c.levels_black))
        .u32(dictionary.len() as u32)
        .u64(layout.keys.start as u64)
        .u64(layout.ranks.start as u64)
        .u64(layout.levels_white.start as u64)
        .u64(layout.levels_black.start as u64)
        .u64(layout.ranks_beta.as_ref().map_or(0, |r| r.start as u64))
        .u64(layout.dictionary_index.start as u64)
        .u64(layout.dictionary_bytes as u64)
        .u64(file_len)
        .u32(crc.finalize());
    out.seek(SeekFrom::Start(0))?;
    out.write_all(&h.finish())?;
    out.seek(SeekFrom::End(0))?;
    Ok(())
}

/// Encode a table and write it atomically to `path`, streaming ([`encode_to`]).
pub fn write(path: &Path, contents: &Contents<'_>) -> Result<(), Error> {
    crate::atomic::write_atomic_with(path, |f| encode_to(contents, f))
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
        let (file, len) = open_regular(path)?;
        let bad = |reason: String| Error::Table {
            path: path.display().to_string(),
            reason,
        };
        if len < (PREFIX_LEN + 4) as u64 {
            return Err(bad(format!(
                "truncated: {len} bytes, shorter than a table header"
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

    fn wide_keys(&self) -> &[U64] {
        <[U64]>::ref_from_bytes(&self.map[self.layout.keys.clone()]).expect("sizes checked at open")
    }

    /// The local index of the position with canonical key `key`, if stored.
    pub fn find(&self, key: u64) -> Option<usize> {
        if self.layout.key_width == 8 {
            self.wide_keys()
                .binary_search_by(|k| k.get().cmp(&key))
                .ok()
        } else {
            self.words(&self.layout.keys)
                .binary_search_by(|k| (k.get() as u64).cmp(&key))
                .ok()
        }
    }

    /// The CRC-32 of the keys section: which positions the table holds, in which order
    /// (files indexed like the table, such as the chip tables, are bound to it).
    pub fn keys_crc(&self) -> u32 {
        crc32fast::hash(&self.map[self.layout.keys.clone()])
    }

    /// The canonical key of position `i`.
    pub fn key(&self, i: usize) -> u64 {
        if self.layout.key_width == 8 {
            self.wide_keys()[i].get()
        } else {
            self.words(&self.layout.keys)[i].get() as u64
        }
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

    /// The rank of position `i`'s β in the dictionary (its α rank where no β is stored).
    pub fn rank_beta(&self, i: usize) -> u32 {
        match &self.layout.ranks_beta {
            Some(range) => self.words(range)[i].get(),
            None => self.rank(i),
        }
    }

    /// The exact value of position `i`: α, which is the value where α = β.
    pub fn value(&self, i: usize) -> Result<Value, Error> {
        self.dictionary_value(self.rank(i) as usize)
    }

    /// The exact β of position `i`, if it differs from α.
    pub fn beta_if_above(&self, i: usize) -> Result<Option<Value>, Error> {
        let (a, b) = (self.rank(i), self.rank_beta(i));
        if a == b {
            return Ok(None);
        }
        self.dictionary_value(b as usize).map(Some)
    }

    /// Positions whose β lies above their α (0 where no β is stored).
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

    /// Dictionary entry `k` (the k-th smallest distinct value), in lowest terms. Entries of
    /// up to [`REDUCED_BITS`] bits are reduced again here (a gcd of that size costs about a
    /// microsecond); longer ones are taken as stored: a gcd of two numbers of thousands of
    /// digits costs about 150 µs and a probe reads some forty values (8x8 KBNvK, 3,531
    /// digits: 11.7 ms a probe with the gcd). The checksums guard the stored form against
    /// damage and `bidtb verify` checks that every entry is in lowest terms; a forged long
    /// entry out of lowest terms would still be the right number, printed unreduced.
    pub fn dictionary_value(&self, k: usize) -> Result<Value, Error> {
        let v = self.dictionary_value_as_stored(k)?;
        if v.denom().bits() > REDUCED_BITS {
            return Ok(v);
        }
        Ok(crate::value::arith::reduced(
            v.numer().clone(),
            v.denom().clone(),
        ))
    }

    /// Bytes of the dictionary's values (the end of the file).
    pub fn dictionary_size_bytes(&self) -> usize {
        self.map.len() - self.layout.dictionary_bytes
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

/// The longest denominator (in bits) that [`Table::dictionary_value`] reduces again.
pub const REDUCED_BITS: u64 = 1024;

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

/// The header fields of any version, decoded but not yet checked against the body.
struct Header {
    info: TableInfo,
    /// Stated offsets: keys, ranks, levels_white, levels_black, dictionary_index,
    /// dictionary_bytes, ranks_beta (0 where none).
    offsets: [u64; 7],
    file_len: u64,
    body_crc: u32,
    header_len: usize,
}

/// Decode a version 1 or 2 header (128 bytes, a class number).
fn header_v1(mut f: Fields<'_>) -> Result<Header, String> {
    let version = f.version;
    let (files, ranks, class, flags) = (f.u8()?, f.u8()?, f.u8()?, f.u8()?);
    let board = Board::new(files, ranks).map_err(|e| e.to_string())?;
    let material = *Material::three_piece()
        .get(class as usize)
        .ok_or_else(|| format!("unknown class number {class}"))?;
    let first = f.u32()?;
    let (positions, raw) = (f.u64()?, f.u64()?);
    let (stable_at, lw, lb, dictionary_len) = (f.u32()?, f.u32()?, f.u32()?, f.u32()?);
    let mut offsets = [0u64; 7];
    for o in &mut offsets[..6] {
        *o = f.u64()?;
    }
    let file_len = f.u64()?;
    let body_crc = f.u32()?;
    offsets[6] = f.u64()?;
    let beta = version == 2;
    if (flags & FLAG_BETA_SECTION != 0) != beta || flags >> 4 != 0 {
        return Err(format!("flags {flags:#04x} do not fit version {version}"));
    }
    Ok(Header {
        info: info(
            version,
            board,
            material,
            positions,
            raw,
            first,
            stable_at,
            flags,
            dictionary_len,
            lw,
            lb,
        )?,
        offsets,
        file_len,
        body_crc,
        header_len: HEADER_LEN_V1,
    })
}

/// Decode a version 3 header (160 bytes, the material by name).
fn header_v3(mut f: Fields<'_>) -> Result<Header, String> {
    let (files, ranks, men, flags) = (f.u8()?, f.u8()?, f.u8()?, f.u8()?);
    let board = Board::new(files, ranks).map_err(|e| e.to_string())?;
    let name = f.bytes(NAME_LEN)?;
    let text = std::str::from_utf8(name)
        .ok()
        .map(|t| t.trim_end_matches('\0'))
        .filter(|t| !t.contains('\0'))
        .ok_or("the material name is not text")?;
    let material: Material = text.parse().map_err(|e: Error| e.to_string())?;
    if material.man_count() != men as usize {
        return Err(format!(
            "{material} has {} men, the header says {men}",
            material.man_count()
        ));
    }
    if !material.is_stored() {
        return Err(format!(
            "{material} is not a stored material (tables hold {})",
            material.stored().0
        ));
    }
    let first = f.u32()?;
    let (positions, raw) = (f.u64()?, f.u64()?);
    let (stable_at, lw, lb, dictionary_len) = (f.u32()?, f.u32()?, f.u32()?, f.u32()?);
    let mut offsets = [0u64; 7];
    let (keys, ranks_off, lwo, lbo, rbo) = (f.u64()?, f.u64()?, f.u64()?, f.u64()?, f.u64()?);
    let (dio, dbo) = (f.u64()?, f.u64()?);
    offsets.copy_from_slice(&[keys, ranks_off, lwo, lbo, dio, dbo, rbo]);
    let file_len = f.u64()?;
    let body_crc = f.u32()?;
    if !f.padding_is_zero() {
        return Err("the header's padding is not zero".into());
    }
    if flags >> 4 != 0 {
        return Err(format!("unknown flags {flags:#04x}"));
    }
    Ok(Header {
        info: info(
            3,
            board,
            material,
            positions,
            raw,
            first,
            stable_at,
            flags,
            dictionary_len,
            lw,
            lb,
        )?,
        offsets,
        file_len,
        body_crc,
        header_len: HEADER_LEN,
    })
}

/// The facts of a header.
#[allow(clippy::too_many_arguments)]
fn info(
    version: u32,
    board: Board,
    material: Material,
    positions: u64,
    raw_positions: u64,
    first: u32,
    stable_at: u32,
    flags: u8,
    dictionary_len: u32,
    max_level_white: u32,
    max_level_black: u32,
) -> Result<TableInfo, String> {
    let key_space = crate::index::key_space(board, material);
    if positions > key_space || positions > raw_positions {
        return Err(format!("impossible position count {positions}"));
    }
    let positions = usize::try_from(positions).map_err(|_| "too many positions")?;
    Ok(TableInfo {
        version,
        board,
        material,
        positions,
        raw_positions,
        first_richman_iteration: (first != NO_ITERATION).then_some(first),
        stable_at: (stable_at != NO_ITERATION).then_some(stable_at),
        converged: flags & FLAG_CONVERGED != 0,
        certified_alpha: flags & FLAG_CERTIFIED_ALPHA != 0,
        certified_beta: flags & FLAG_CERTIFIED_BETA != 0,
        dictionary_len: dictionary_len as usize,
        max_level_white,
        max_level_black,
        has_beta: flags & FLAG_BETA_SECTION != 0,
    })
}

/// Check a whole file image; returns the header's facts and the section layout.
fn validate(bytes: &[u8]) -> Result<(TableInfo, Layout), String> {
    let header_len = match bytes
        .get(8..12)
        .map(|v| u32::from_le_bytes(v.try_into().expect("4")))
    {
        Some(1 | 2) => HEADER_LEN_V1,
        _ => HEADER_LEN,
    };
    if bytes.len() < header_len {
        return Err(format!(
            "truncated: {} bytes, shorter than the {header_len}-byte header",
            bytes.len()
        ));
    }
    let header = &bytes[..header_len];
    let fields = Fields::check(header, MAGIC, &READABLE, "table")?;
    let h = match fields.version {
        1 | 2 => header_v1(fields)?,
        _ => header_v3(fields)?,
    };
    let info = h.info;
    if h.file_len != bytes.len() as u64 {
        return Err(format!(
            "truncated or extended: the header says {} bytes, the file has {}",
            h.file_len,
            bytes.len()
        ));
    }
    let key_width = if info.version == 3 { 8 } else { 4 };
    let layout = Layout::new(
        h.header_len,
        key_width,
        info.positions,
        info.dictionary_len,
        info.has_beta,
    )
    .filter(|l| l.dictionary_bytes <= bytes.len())
    .ok_or("the sections do not fit in the file")?;
    let expected = [
        layout.keys.start,
        layout.ranks.start,
        layout.levels_white.start,
        layout.levels_black.start,
        layout.dictionary_index.start,
        layout.dictionary_bytes,
        layout.ranks_beta.as_ref().map_or(0, |r| r.start),
    ];
    if h.offsets.iter().zip(expected).any(|(&s, e)| s != e as u64) {
        return Err("section offsets do not match the counts".into());
    }
    if h.body_crc != crc32fast::hash(&bytes[h.header_len..]) {
        return Err("corrupted: the body checksum does not match".into());
    }
    let key_space = crate::index::key_space(info.board, info.material);
    let increasing = if key_width == 8 {
        let keys = <[U64]>::ref_from_bytes(&bytes[layout.keys.clone()]).expect("sized");
        keys.windows(2).all(|w| w[0].get() < w[1].get())
            && keys.last().is_none_or(|k| k.get() < key_space)
    } else {
        let keys = <[U32]>::ref_from_bytes(&bytes[layout.keys.clone()]).expect("sized");
        keys.windows(2).all(|w| w[0].get() < w[1].get())
            && keys.last().is_none_or(|k| (k.get() as u64) < key_space)
    };
    if !increasing {
        return Err("position keys are not increasing keys of the board".into());
    }
    let words = |r: &Range<usize>| <[U32]>::ref_from_bytes(&bytes[r.clone()]).expect("sized");
    let dictionary_len = info.dictionary_len;
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
    Ok((info, layout))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(n: u64, d: u64) -> Value {
        Value::small(n, d)
    }

    fn contents<'a>(values: &'a [Value], betas: Option<&'a [Value]>) -> Contents<'a> {
        let p = values.len();
        Contents {
            board: Board::new(3, 3).unwrap(),
            material: "KRvK".parse().unwrap(),
            raw_positions: 100,
            first_richman_iteration: Some(7),
            stable_at: Some(5),
            converged: true,
            certified_alpha: true,
            certified_beta: true,
            keys: (0..p as u64).map(|k| 3 * k + 1).collect(),
            values: values.iter().collect(),
            values_beta: betas.map(|b| b.iter().collect()),
            levels_white: (0..p as u32).collect(),
            levels_black: vec![UNREACHED; p],
        }
    }

    fn sample(values: &[Value]) -> Vec<u8> {
        encode(&contents(values, None))
    }

    fn sample_with_beta(values: &[Value], betas: Option<&[Value]>) -> Vec<u8> {
        encode(&contents(values, betas))
    }

    /// The layout of versions 1 and 2 as earlier builds wrote it (128-byte header, a class
    /// number, 32-bit keys), to check that this build still reads them.
    fn encode_legacy(c: &Contents<'_>) -> Vec<u8> {
        let v3 = encode(c);
        let t = {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("x.bidtb");
            std::fs::write(&path, &v3).unwrap();
            Table::open(&path).unwrap()
        };
        let beta = c.values_beta.is_some();
        let p = c.keys.len();
        let layout = Layout::new(HEADER_LEN_V1, 4, p, t.info().dictionary_len, beta).unwrap();
        let mut bytes = vec![0u8; HEADER_LEN_V1];
        for k in &c.keys {
            bytes.extend_from_slice(&(*k as u32).to_le_bytes());
        }
        // Everything after the keys is laid out alike in both versions.
        bytes.extend_from_slice(&v3[t.layout.ranks.start..]);
        let class = Material::three_piece()
            .iter()
            .position(|m| *m == c.material)
            .unwrap() as u8;
        let version = if beta { 2 } else { 1 };
        let mut h = HeaderWriter::new(MAGIC, version, HEADER_LEN_V1);
        h.u8(3)
            .u8(3)
            .u8(class)
            .u8(v3[19])
            .u32(7)
            .u64(p as u64)
            .u64(100)
            .u32(5)
            .u32(t.info().max_level_white)
            .u32(t.info().max_level_black)
            .u32(t.info().dictionary_len as u32);
        for o in [
            layout.keys.start,
            layout.ranks.start,
            layout.levels_white.start,
            layout.levels_black.start,
            layout.dictionary_index.start,
            layout.dictionary_bytes,
        ] {
            h.u64(o as u64);
        }
        h.u64(bytes.len() as u64)
            .u32(crc32fast::hash(&bytes[HEADER_LEN_V1..]))
            .u64(layout.ranks_beta.map_or(0, |r| r.start as u64));
        bytes[..HEADER_LEN_V1].copy_from_slice(&h.finish());
        bytes
    }

    fn open_bytes(bytes: &[u8]) -> Result<Table, Error> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("KRvK.bidtb");
        std::fs::write(&path, bytes).unwrap();
        Table::open(&path)
    }

    #[test]
    fn a_streamed_file_is_the_image_in_memory() {
        // Values whose byte lengths cross every case of `encoded_len`: zero, one, a byte
        // boundary, a few limbs, and more values than one encoding batch.
        let mut values = vec![v(0, 1), v(1, 1), v(255, 256), v(256, 257)];
        let big = BigUint::from(7u8).pow(300);
        values.extend(
            (0..(ENCODE_BATCH as u64 + 5)).map(|k| Value::new(&big / 3u8 + k, big.clone())),
        );
        for v in &values {
            let mut e = Vec::new();
            encode_value(v, &mut e);
            assert_eq!(e.len() as u64, encoded_len(v), "{v}");
        }
        // 8x8 KRvK has room for the 4,105 positions.
        let c = Contents {
            board: Board::new(8, 8).unwrap(),
            raw_positions: 200_000,
            ..contents(&values, None)
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("KRvK.bidtb");
        write(&path, &c).unwrap();
        let on_disk = std::fs::read(&path).unwrap();
        assert_eq!(on_disk, encode(&c));
        let t = Table::open(&path).unwrap();
        for (i, want) in values.iter().enumerate() {
            assert_eq!(&t.value(t.find(3 * i as u64 + 1).unwrap()).unwrap(), want);
        }
    }

    #[test]
    fn round_trip_with_a_sorted_dictionary() {
        let big = Value::new(
            BigUint::from(3u8).pow(200),
            BigUint::from(3u8).pow(200) + 1u8,
        );
        let values = [v(1, 2), v(0, 1), big.clone(), v(1, 2), v(1, 1), v(1, 3)];
        for bytes in [sample(&values), encode_legacy(&contents(&values, None))] {
            let t = open_bytes(&bytes).unwrap();
            assert_eq!(t.len(), 6);
            assert_eq!(t.info().material.to_string(), "KRvK");
            assert_eq!(t.info().dictionary_len, 5);
            assert_eq!(t.info().first_richman_iteration, Some(7));
            assert!(t.info().certified());
            assert_eq!(t.info().max_level_white, 5);
            for (i, want) in values.iter().enumerate() {
                assert_eq!(&t.value(i).unwrap(), want);
                assert_eq!(t.key(i), 3 * i as u64 + 1);
                assert_eq!(t.find(3 * i as u64 + 1), Some(i));
                assert_eq!(t.level_white(i), i as u32);
                assert_eq!(t.level_black(i), UNREACHED);
            }
            assert_eq!(t.find(2), None);
            // Ranks follow the values: 0 < 1/3 < 1/2 < big < 1.
            let ranks: Vec<u32> = (0..6).map(|i| t.rank(i)).collect();
            assert_eq!(ranks, vec![2, 0, 3, 2, 4, 1]);
        }
    }

    #[test]
    fn the_header_names_the_material() {
        let bytes = sample(&[v(1, 2)]);
        assert_eq!(&bytes[20..24], b"KRvK");
        assert_eq!(
            u32::from_le_bytes(bytes[8..12].try_into().unwrap()),
            VERSION
        );
        // A four-piece material with wide keys.
        let mut c = contents(&[], None);
        c.material = "KRvKN".parse().unwrap();
        c.board = Board::new(8, 8).unwrap();
        c.raw_positions = 1 << 30;
        let values = [v(1, 2), v(1, 3)];
        c.values = values.iter().collect();
        c.keys = vec![5, (64u64.pow(4)) - 1];
        c.levels_white = vec![1, 2];
        c.levels_black = vec![1, 2];
        let t = open_bytes(&encode(&c)).unwrap();
        assert_eq!(t.info().material.to_string(), "KRvKN");
        assert_eq!(t.find(64u64.pow(4) - 1), Some(1));
    }

    #[test]
    fn every_truncation_is_an_error() {
        for bytes in [
            sample(&[v(1, 2), v(3, 4), v(0, 1)]),
            encode_legacy(&contents(&[v(1, 2), v(3, 4)], None)),
        ] {
            for len in 0..bytes.len() {
                let err = open_bytes(&bytes[..len]).unwrap_err().to_string();
                assert!(err.contains("KRvK.bidtb"), "{err}");
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert!(open_bytes(&longer).is_err());
        }
    }

    #[test]
    fn every_single_byte_flip_is_an_error() {
        for bytes in [
            sample(&[v(1, 2), v(3, 4), v(0, 1), v(5, 8)]),
            encode_legacy(&contents(&[v(1, 2), v(3, 4)], None)),
        ] {
            for at in 0..bytes.len() {
                let mut b = bytes.clone();
                b[at] ^= 0x10;
                assert!(open_bytes(&b).is_err(), "flip at {at} went unnoticed");
            }
        }
    }

    /// Rewrite header byte `at` and fix the header checksum, as a forger would.
    fn forged(mut bytes: Vec<u8>, header_len: usize, at: usize, byte: u8) -> Vec<u8> {
        bytes[at] = byte;
        let crc = crc32fast::hash(&bytes[..header_len - 4]);
        bytes[header_len - 4..header_len].copy_from_slice(&crc.to_le_bytes());
        bytes
    }

    #[test]
    fn another_version_or_material_is_refused_by_name() {
        let err = open_bytes(&forged(sample(&[v(1, 2)]), HEADER_LEN, 8, 4))
            .unwrap_err()
            .to_string();
        assert!(err.contains("format version 4"), "{err}");
        // A version 1 file relabelled 2 lacks the beta section and its flag.
        let legacy = encode_legacy(&contents(&[v(1, 2)], None));
        let err = open_bytes(&forged(legacy, HEADER_LEN_V1, 8, 2))
            .unwrap_err()
            .to_string();
        assert!(err.contains("do not fit version 2"), "{err}");
        // A material name that is not stored, or not a material.
        let err = open_bytes(&forged(sample(&[v(1, 2)]), HEADER_LEN, 21, b'v'))
            .unwrap_err()
            .to_string();
        assert!(err.contains("KvvK") || err.contains("material"), "{err}");
    }

    #[test]
    fn beta_is_kept_apart_where_it_differs() {
        let alphas = [v(1, 2), v(0, 1), v(1, 3), v(1, 1)];
        let betas = [v(1, 2), v(2, 3), v(1, 1), v(1, 1)];
        for bytes in [
            sample_with_beta(&alphas, Some(&betas)),
            encode_legacy(&contents(&alphas, Some(&betas))),
        ] {
            let t = open_bytes(&bytes).unwrap();
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
        }
        let bytes = sample(&alphas);
        let t = open_bytes(&bytes).unwrap();
        assert!(!t.info().has_beta());
        assert_eq!(t.alpha_below_beta(), 0);
        assert_eq!(t.rank_beta(1), t.rank(1));
        assert_eq!(t.beta_if_above(0).unwrap(), None);
    }

    #[test]
    fn beta_below_alpha_and_every_flip_are_refused() {
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
    fn an_empty_material_round_trips() {
        let t = open_bytes(&sample(&[])).unwrap();
        assert!(t.is_empty());
        assert_eq!(t.find(0), None);
    }

    #[test]
    fn only_regular_files_are_tables() {
        let dir = tempfile::tempdir().unwrap();
        let err = Table::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
    }
}
