//! Table files: one per board and material (`DIR/FxR/KRvKN.bidtb`), holding every
//! position's exact value (α, and β where it differs) and its progress levels in White's
//! closure T and Black's closure T′. The byte layout is specified in `docs/src/format.md`; in
//! short:
//!
//! - a little-endian header in bidtb's container ([`crate::container`]: magic, version,
//!   length, fields, CRC-32): the board, the material by name, counts, the run's verdicts,
//!   section offsets, a CRC-32 of the body and (version 5) one of the sections before the
//!   dictionary;
//! - the canonical key of every position (see [`crate::index`]), increasing, so a position
//!   is found by binary search without rebuilding the index;
//! - per position, the rank of its value in the dictionary, its T and T′ levels, and (where
//!   α < β somewhere) the rank of its β, each a `u32`, read zero-copy from the memory map;
//! - the dictionary ([`dictionary`]): every distinct value once, in increasing order (so
//!   ranks compare like values); each distinct denominator is stored once, and each entry
//!   holds the number of its denominator and its numerator, little-endian;
//! - (version 5) a CRC-32 of each 64 KiB block of the dictionary's bytes.
//!
//! This build writes version 5: version 4 (the material named in the header, 64-bit keys
//! wide enough for every material on every board, denominators shared: about half the
//! bytes of version 3) with the dictionary checked block by block. It reads versions 1 to
//! 4 too, the tables of earlier builds (versions 1 and 2: a class number in the header,
//! 32-bit keys; versions 1 to 3: each value whole), and answers from them exactly as
//! before.
//!
//! [`Table::open`] checks everything it can before answering anything but the
//! dictionary's bytes of a version 5 file: that the file is a regular file, magic,
//! version, header checksum, board, material, section offsets and sizes, the checksum of
//! the sections before the dictionary (of the whole body, before version 5), increasing
//! keys, ranks inside the dictionary, well-formed dictionary and denominator offsets, and
//! (before version 5) denominator numbers inside the list. A version 5 dictionary block is
//! checked the first time a read touches it, so that opening 8x8 KNvKP reads its 115 MB of
//! positions, not its 21.6 GB of values; [`Table::check_all`] checks every block (`bidtb
//! verify`, a run that keeps a table it finds). A truncated, bit-flipped or foreign file is
//! an [`Error::Table`] naming the file, never a panic or a wrong value. Files are written
//! atomically ([`crate::atomic`]).

mod blocks;
mod dictionary;
mod stored;

pub use stored::{Decode, FromFile};

use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use memmap2::Mmap;
use num_bigint::BigUint;
use rayon::prelude::*;
use zerocopy::FromBytes;
use zerocopy::little_endian::{U32, U64};

use crate::container::{Fields, HeaderWriter, PREFIX_LEN, open_regular};
use crate::error::Error;
use crate::geometry::Board;
use crate::material::Material;
use crate::value::Value;
use crate::value::shared::Denominators;
use blocks::{BLOCK_LEN, BlockSums, Blocks, StatedBlocks};
use dictionary::{Dictionary, Form, MIN_ENTRY};

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = *b"BIDTB\r\n\x1a";
/// The format version this build writes.
pub const VERSION: u32 = 5;
/// The versions this build reads: 1 (three-piece, α = β), 2 (three-piece, β apart), 3 (any
/// material, values whole), 4 (denominators shared), 5 (the dictionary checked block by
/// block).
pub const READABLE: [u32; 5] = [1, 2, 3, 4, 5];
/// The file name extension of table files.
pub const EXTENSION: &str = "bidtb";
/// Header length of versions 1 and 2.
const HEADER_LEN_V1: usize = 128;
/// Header length of version 3.
const HEADER_LEN_V3: usize = 160;
/// Header length of version 4.
const HEADER_LEN_V4: usize = 176;
/// Header length of version 5, the version this build writes.
pub const HEADER_LEN: usize = 192;
/// Bytes of the material name in a version 3 header (ASCII, zero-padded).
const NAME_LEN: usize = 16;
/// The stored level of a position outside a closure (the one definition, from the
/// certificate that computes the levels).
pub use crate::boundary::UNREACHED;
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
    /// The format version: 1 to 4.
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
    /// Bytes per key: 4 in versions 1 and 2, 8 from version 3 on.
    key_width: usize,
    keys: Range<usize>,
    ranks: Range<usize>,
    levels_white: Range<usize>,
    levels_black: Range<usize>,
    /// Each position's β rank, where stored (else α's ranks serve as β's).
    ranks_beta: Option<Range<usize>>,
    /// Version 4: the offsets of the distinct denominators' bytes, E + 1 of them.
    denominators_index: Option<Range<usize>>,
    dictionary_index: Range<usize>,
    /// Version 4: the distinct denominators' bytes.
    denominators_bytes: Option<Range<usize>>,
    /// Start of the dictionary entries' bytes (they run to the end of the file).
    dictionary_bytes: usize,
}

impl Layout {
    /// The layout for `positions` positions and `dictionary` values after a header of
    /// `header` bytes, keys of `key_width` bytes, with a `ranks_beta` section if `beta`,
    /// and (version 4) `shared`: the number of distinct denominators and their bytes;
    /// None on overflow.
    fn new(
        header: usize,
        key_width: usize,
        positions: usize,
        dictionary: usize,
        beta: bool,
        shared: Option<(usize, usize)>,
    ) -> Option<Layout> {
        let array = positions.checked_mul(4)?;
        let offsets = |count: usize| count.checked_add(1)?.checked_mul(8);
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
        let denominators_index = match shared {
            Some((count, _)) => Some(next(offsets(count)?)?),
            None => None,
        };
        let dictionary_index = next(offsets(dictionary)?)?;
        let denominators_bytes = match shared {
            Some((_, bytes)) => Some(next(bytes)?),
            None => None,
        };
        Some(Layout {
            key_width,
            dictionary_bytes: at,
            keys,
            ranks,
            levels_white,
            levels_black,
            ranks_beta,
            denominators_index,
            dictionary_index,
            denominators_bytes,
        })
    }

    /// The offsets a header states, in its order: keys, ranks, levels_white, levels_black,
    /// dictionary_index, dictionary_bytes, ranks_beta, denominators_index,
    /// denominators_bytes (0 for an absent section).
    fn offsets(&self) -> [u64; 9] {
        let start = |r: &Option<Range<usize>>| r.as_ref().map_or(0, |r| r.start as u64);
        [
            self.keys.start as u64,
            self.ranks.start as u64,
            self.levels_white.start as u64,
            self.levels_black.start as u64,
            self.dictionary_index.start as u64,
            self.dictionary_bytes as u64,
            start(&self.ranks_beta),
            start(&self.denominators_index),
            start(&self.denominators_bytes),
        ]
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

/// Dictionary values encoded per parallel batch while the writer streams them.
const ENCODE_BATCH: usize = 4096;

/// The file image of a table (version 4), in memory: [`encode_to`] into a vector.
pub fn encode(c: &Contents<'_>) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    encode_to(c, &mut out).expect("writing to memory cannot fail");
    out.into_inner()
}

/// Write the file image of a table (version 4) to `out`, streaming: only the fixed-size
/// sections (about 24 bytes a position) and the distinct denominators are assembled in
/// memory, the dictionary's numerators (gigabytes where values have thousands of digits)
/// go out in batches as they are encoded, and the header, which holds the body's checksum,
/// is written last, at the start.
pub fn encode_to<W: Write + Seek>(c: &Contents<'_>, out: &mut W) -> std::io::Result<()> {
    encode_version(c, VERSION, out)
}

/// The file image of a table in version 3 (each value whole), as earlier builds wrote it:
/// for the tests that check this build still reads such files.
#[cfg(test)]
fn encode_v3(c: &Contents<'_>) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    encode_version(c, 3, &mut out).expect("writing to memory cannot fail");
    out.into_inner()
}

/// The file image of a table in version 4 (the dictionary under the body's checksum
/// alone), as earlier builds wrote it: for the tests that check this build still reads
/// such files.
#[cfg(test)]
fn encode_v4(c: &Contents<'_>) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    encode_version(c, 4, &mut out).expect("writing to memory cannot fail");
    out.into_inner()
}

/// [`encode_to`] in format `version`: 5, or 4 and 3 (for tests).
fn encode_version<W: Write + Seek>(
    c: &Contents<'_>,
    version: u32,
    out: &mut W,
) -> std::io::Result<()> {
    let p = c.keys.len();
    assert!(
        c.values.len() == p && c.levels_white.len() == p && c.levels_black.len() == p,
        "one value and two levels per position"
    );
    assert!(
        c.values_beta.as_ref().is_none_or(|b| b.len() == p),
        "one beta per position"
    );
    let (form, header_len) = match version {
        3 => (Form::Whole, HEADER_LEN_V3),
        4 => (Form::SharedDenominators, HEADER_LEN_V4),
        _ => (Form::SharedDenominators, HEADER_LEN),
    };
    let betas = c.values_beta.as_deref().unwrap_or_default();
    let mut dictionary = Dictionary::new(c.values.iter().chain(betas).copied(), form);
    // The denominators' lengths only: their bytes are streamed after the fixed sections
    // (8x8 KNvKP's 1.4 million denominators are gigabytes of digits: assembled in memory
    // beside the values, they did not fit in 24 GB).
    let denominator_lens: Vec<usize> = dictionary
        .denominators
        .iter()
        .map(|&(odd, twos)| (odd.bits() + u64::from(twos)).div_ceil(8) as usize)
        .collect();
    let shared = (form == Form::SharedDenominators)
        .then(|| (denominator_lens.len(), denominator_lens.iter().sum()));
    let layout = Layout::new(
        header_len,
        8,
        p,
        dictionary.values.len(),
        c.values_beta.is_some(),
        shared,
    )
    .expect("a table fits in memory");

    // The fixed-size sections, after a header left blank until the checksum is known; the
    // denominators' and the entries' bytes follow them, streamed.
    let fixed_end = layout
        .denominators_bytes
        .as_ref()
        .map_or(layout.dictionary_bytes, |area| area.start);
    let mut bytes = vec![0u8; fixed_end];
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
        &mut c.values.iter().map(|v| dictionary.rank(v)),
    );
    put(&layout.levels_white, &mut c.levels_white.iter().copied());
    put(&layout.levels_black, &mut c.levels_black.iter().copied());
    if let Some(range) = &layout.ranks_beta {
        put(range, &mut betas.iter().map(|v| dictionary.rank(v)));
    }
    dictionary.drop_ranks();
    let put_offsets = |bytes: &mut [u8], lens: &mut dyn Iterator<Item = u64>| -> u64 {
        let mut at = 0u64;
        let mut chunks = bytes.chunks_exact_mut(8);
        for len in lens {
            chunks
                .next()
                .expect("one offset per entry")
                .copy_from_slice(&at.to_le_bytes());
            at += len;
        }
        chunks
            .next()
            .expect("the end offset")
            .copy_from_slice(&at.to_le_bytes());
        at
    };
    if let Some(index) = &layout.denominators_index {
        put_offsets(
            &mut bytes[index.clone()],
            &mut denominator_lens.iter().map(|&len| len as u64),
        );
    }
    drop(denominator_lens);
    let entries_len = put_offsets(
        &mut bytes[layout.dictionary_index.clone()],
        &mut dictionary.values.iter().map(|v| dictionary.entry_len(v)),
    );
    // What the dictionary takes in the whole form (each entry with its denominator), as a
    // reader of version 4 adds it up entry by entry: version 5 states it in its header, so
    // that a reader need not touch every entry when it opens the file.
    let whole_bytes = entries_len
        + dictionary
            .values
            .iter()
            .map(|v| (v.shared_odd().bits() + u64::from(v.twos())).div_ceil(8))
            .sum::<u64>();
    let blocks_offset = layout.dictionary_bytes as u64 + entries_len;
    let blocks_len = blocks_offset - fixed_end as u64;
    let block_count = blocks_len.div_ceil(BLOCK_LEN as u64);
    let file_len = match version {
        ..=4 => blocks_offset,
        _ => blocks_offset + 4 * block_count,
    };

    out.seek(SeekFrom::Start(0))?;
    // The body's checksum: the fixed sections', the dictionary's combined from its
    // blocks', then the blocks' checksums.
    let mut crc = crc32fast::Hasher::new();
    crc.update(&bytes[header_len..]);
    let mut front = crc.clone();
    let mut blocks = BlockSums::new(BLOCK_LEN);
    {
        let mut w = BufWriter::with_capacity(1 << 20, &mut *out);
        w.write_all(&bytes)?;
        drop(bytes);
        if layout.denominators_bytes.is_some() {
            for batch in dictionary.denominators.chunks(ENCODE_BATCH) {
                let encoded: Vec<u8> = batch
                    .par_iter()
                    .map(|&(odd, twos)| crate::value::bytes::le_bytes(&(odd << twos)))
                    .collect::<Vec<_>>()
                    .concat();
                blocks.update(&encoded);
                w.write_all(&encoded)?;
            }
        }
        for batch in dictionary.values.chunks(ENCODE_BATCH) {
            let encoded: Vec<u8> = batch
                .par_iter()
                .map(|v| {
                    let mut e = Vec::with_capacity(dictionary.entry_len(v) as usize);
                    dictionary.encode_entry(v, &mut e);
                    e
                })
                .collect::<Vec<_>>()
                .concat();
            blocks.update(&encoded);
            w.write_all(&encoded)?;
        }
        let (sums, dictionary_crc) = blocks.finish();
        crc.combine(&dictionary_crc);
        if version >= 5 {
            let sums: Vec<u8> = sums.iter().flat_map(|s| s.to_le_bytes()).collect();
            debug_assert_eq!(sums.len() as u64, 4 * block_count);
            crc.update(&sums);
            front.update(&sums);
            w.write_all(&sums)?;
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
    let offsets = layout.offsets();
    let mut h = HeaderWriter::new(MAGIC, version, header_len);
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
        .u32(dictionary.values.len() as u32);
    // keys, ranks, levels_white, levels_black, ranks_beta, dictionary_index,
    // dictionary_bytes: the order of version 3's header.
    for k in [0, 1, 2, 3, 6, 4, 5] {
        h.u64(offsets[k]);
    }
    h.u64(file_len).u32(crc.finalize());
    if let Some((count, _)) = shared {
        h.u32(count as u32).u64(offsets[7]).u64(offsets[8]);
    }
    if version >= 5 {
        h.u32(front.finalize())
            .u32(BLOCK_LEN as u32)
            .u64(blocks_offset)
            .u64(whole_bytes);
    }
    out.seek(SeekFrom::Start(0))?;
    out.write_all(&h.finish())?;
    out.seek(SeekFrom::End(0))?;
    Ok(())
}

/// Encode a table and write it atomically to `path`, streaming ([`encode_to`]).
pub fn write(path: &Path, contents: &Contents<'_>) -> Result<(), Error> {
    crate::atomic::write_atomic_with(path, |f| encode_to(contents, f))
}

/// What [`upgrade`] did to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Upgraded {
    /// The version the file had.
    pub from: u32,
    /// Its length before, in bytes.
    pub bytes_before: u64,
    /// Its length after (the same where it was already current).
    pub bytes_after: u64,
}

/// Rewrite the table at `path` in the current version ([`VERSION`]) if it is older,
/// atomically: the same positions, values, levels and header facts, in the layout this
/// build writes, so that the file is the one this build would have generated. The new file
/// is read back and compared with the old one, still open, position by position and entry
/// by entry; if anything differs the old bytes are put back and the error says so. Holds
/// the old file's values decoded (8x8 KBvKN: 9.5 GB of digits).
pub fn upgrade(path: &Path) -> Result<Upgraded, Error> {
    let old = Table::open(path)?;
    let info = old.info().clone();
    let bytes_before = old.map.len() as u64;
    if info.version == VERSION {
        return Ok(Upgraded {
            from: info.version,
            bytes_before,
            bytes_after: bytes_before,
        });
    }
    let dictionary: Vec<Value> = (0..info.dictionary_len)
        .into_par_iter()
        .map(|k| old.dictionary_value_as_stored(k))
        .collect::<Result<_, Error>>()?;
    let n = old.len();
    let contents = Contents {
        board: info.board,
        material: info.material,
        raw_positions: info.raw_positions,
        first_richman_iteration: info.first_richman_iteration,
        stable_at: info.stable_at,
        converged: info.converged,
        certified_alpha: info.certified_alpha,
        certified_beta: info.certified_beta,
        keys: (0..n).map(|i| old.key(i)).collect(),
        values: (0..n).map(|i| &dictionary[old.rank(i) as usize]).collect(),
        values_beta: info.has_beta.then(|| {
            (0..n)
                .map(|i| &dictionary[old.rank_beta(i) as usize])
                .collect()
        }),
        levels_white: (0..n).map(|i| old.level_white(i)).collect(),
        levels_black: (0..n).map(|i| old.level_black(i)).collect(),
    };
    write(path, &contents)?;
    drop(contents);
    let same = Table::open(path).and_then(|new| {
        let facts = |i: &TableInfo| {
            let mut i = i.clone();
            i.version = VERSION;
            i
        };
        let rows = (0..n).into_par_iter().all(|i| {
            (new.key(i), new.rank(i), new.rank_beta(i))
                == (old.key(i), old.rank(i), old.rank_beta(i))
                && (new.level_white(i), new.level_black(i))
                    == (old.level_white(i), old.level_black(i))
        });
        let entries = (0..info.dictionary_len)
            .into_par_iter()
            .map(|k| Ok(new.dictionary_value_as_stored(k)? == dictionary[k]))
            .collect::<Result<Vec<bool>, Error>>()?;
        Ok(
            (facts(&info) == *new.info() && rows && entries.iter().all(|&e| e))
                .then_some(new.map.len() as u64),
        )
    });
    match same {
        Ok(Some(bytes_after)) => Ok(Upgraded {
            from: info.version,
            bytes_before,
            bytes_after,
        }),
        other => {
            // The old file's map outlives its replacement: put its bytes back.
            crate::atomic::write_atomic(path, &old.map)?;
            let why = match other {
                Err(e) => format!("the rewritten file could not be read back ({e})"),
                Ok(_) => "the rewritten file differs from it".to_string(),
            };
            Err(Error::Table {
                path: path.display().to_string(),
                reason: format!("not upgraded, the file is as it was: {why}"),
            })
        }
    }
}

/// An open, validated table file, memory-mapped.
#[derive(Debug)]
pub struct Table {
    path: PathBuf,
    map: Mmap,
    info: TableInfo,
    layout: Layout,
    /// [`Table::dictionary_size_bytes`].
    whole_dictionary_bytes: usize,
    /// The body's CRC-32 as the header states it.
    body_crc: u32,
    /// Version 5: the dictionary's blocks, checked as they are read (older versions'
    /// bodies are checked whole at open).
    blocks: Option<Blocks>,
}

impl Table {
    /// Open and validate a table file (see the module comment for what is checked). The
    /// file must not be modified while it is open.
    pub fn open(path: impl AsRef<Path>) -> Result<Table, Error> {
        let path = path.as_ref();
        // A dangling link is not an absent table (which a query reports as missing, with
        // the command that makes it): it says where the table was meant to be.
        let (file, len) =
            open_regular(path).map_err(|e| match crate::container::dangling(path) {
                Some(target) => Error::Table {
                    path: path.display().to_string(),
                    reason: format!(
                        "a dangling symbolic link: it points to {}, which does not exist (remove \
                     the link, or make the table it names)",
                        target.display()
                    ),
                },
                None => e,
            })?;
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
        let v = validate(&map).map_err(bad)?;
        Ok(Table {
            path: path.to_path_buf(),
            map,
            info: v.info,
            layout: v.layout,
            whole_dictionary_bytes: v.whole,
            body_crc: v.body_crc,
            blocks: v.blocks,
        })
    }

    /// Check every checksum of the file: a version 5 table's dictionary is otherwise
    /// checked block by block as it is read (older versions are checked whole at open, and
    /// this does nothing for them). `bidtb verify`, and a run that finds a table already
    /// made, call it before they trust a file. Reads the whole file.
    pub fn check_all(&self) -> Result<(), Error> {
        let Some(blocks) = &self.blocks else {
            return Ok(());
        };
        // Each block read once: its own checksum, and its part of the body's (which
        // covers the whole file after the header, for tools that do not read the format).
        let sums = (0..blocks.count())
            .into_par_iter()
            .map(|b| blocks.check_block(&self.map, b))
            .collect::<Result<Vec<crc32fast::Hasher>, String>>()
            .map_err(|reason| self.corrupted(reason))?;
        let mut body = crc32fast::Hasher::new();
        body.update(&self.map[HEADER_LEN..blocks.start]);
        for s in &sums {
            body.combine(s);
        }
        body.update(&self.map[blocks.sums.clone()]);
        if body.finalize() != self.body_crc {
            return Err(self.corrupted("the body checksum does not match".into()));
        }
        Ok(())
    }

    /// An error naming this file.
    fn corrupted(&self, reason: String) -> Error {
        Error::Table {
            path: self.path.display().to_string(),
            reason,
        }
    }

    /// Bytes `range` of the dictionary (denominators and entries), their blocks checked.
    fn dictionary_bytes(&self, range: Range<usize>) -> Result<&[u8], Error> {
        if let Some(blocks) = &self.blocks {
            blocks
                .check(&self.map, &range)
                .map_err(|reason| self.corrupted(reason))?;
        }
        Ok(&self.map[range])
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Let go of the file's pages that this process has read (Linux: `MADV_DONTNEED` on
    /// the mapping): they leave its resident memory, stay in the page cache, and are read
    /// again from there if asked for. A job calls it once its exits are read, so that the
    /// pages of the tables it read (gigabytes, for a pawn material whose promotions reach a
    /// large four-piece table) do not stay in its resident memory for the rest of the job.
    pub fn release_pages(&self) {
        // SAFETY: the mapping is read-only and backed by the file (see `open`): dropping its
        // pages only makes the next read fault them in again, with the same bytes. A
        // failure leaves the pages where they were, which is harmless.
        let _ = unsafe {
            self.map
                .unchecked_advise(memmap2::UncheckedAdvice::DontNeed)
        };
    }

    /// Tell the system that this table's pages will be read in no order (a job's exits
    /// into a large table), so that a fault reads the page asked for rather than the
    /// pages around it: 8x8 KNvKP reads its exits' values out of KNvKN's 11.3 GB table,
    /// and beside other work, with the table larger than the page cache left to it, it
    /// read 950 GB from disk in 13 minutes with the default read-ahead, the pages read
    /// around each entry evicted before they were used.
    pub fn advise_random(&self) {
        // A failure leaves the default read-ahead, which is only slower.
        let _ = self.map.advise(memmap2::Advice::Random);
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
            v.numer().into_owned(),
            v.denom().into_owned(),
        ))
    }

    /// Bytes of the dictionary with every value whole, as versions 1 to 3 store it (a
    /// length word, the numerator and the denominator of each entry): what its values
    /// take decoded, whatever the file's version.
    pub fn dictionary_size_bytes(&self) -> usize {
        self.whole_dictionary_bytes
    }

    /// Dictionary entry `k` exactly as stored: the generator stores lowest terms, and
    /// `bidtb verify` checks that it did.
    pub fn dictionary_value_as_stored(&self, k: usize) -> Result<Value, Error> {
        let bad = |reason: String| Error::Table {
            path: self.path.display().to_string(),
            reason,
        };
        if k + 1 >= self.dictionary_index().len() {
            return Err(bad(format!("no dictionary entry {k}")));
        }
        let entry = self.dictionary_entry(k)?;
        let value = match self.denominators_index() {
            None => dictionary::decode_whole(entry),
            Some(_) => match dictionary::denominator_number(entry) {
                Some(n) => self
                    .denominator_bytes(n as usize)?
                    .and_then(|denominator| dictionary::decode_shared(entry, denominator)),
                None => None,
            },
        };
        value.ok_or_else(|| bad(format!("dictionary entry {k} is not a value in [0, 1]")))
    }

    /// Every dictionary entry as stored, in order, each distinct denominator held once
    /// (version 4 stores it once; older versions' entries are shared as they are read):
    /// what the generator keeps of a table it reads whole.
    pub fn dictionary_values(&self) -> Result<Vec<Value>, Error> {
        let len = self.info().dictionary_len;
        let Some(offsets) = self.denominators_index() else {
            let mut values = (0..len)
                .into_par_iter()
                .map(|k| self.dictionary_value_as_stored(k))
                .collect::<Result<Vec<_>, Error>>()?;
            Denominators::new().share_all(&mut values);
            return Ok(values);
        };
        let denominators: Vec<(Arc<BigUint>, u32)> = (0..offsets.len() - 1)
            .into_par_iter()
            .map(|n| Ok(self.denominator(n)?.expect("offsets checked at open")))
            .collect::<Result<_, Error>>()?;
        (0..len)
            .into_par_iter()
            .map(|k| self.dictionary_value_on(k, |n| Ok(denominators.get(n).cloned())))
            .collect()
    }

    /// The number of distinct denominators the dictionary stores (version 4 on; 0 before,
    /// where each entry holds its own).
    pub fn denominators_len(&self) -> usize {
        self.denominators_index()
            .map_or(0, |o| o.len().saturating_sub(1))
    }

    /// Version 4 on: denominator number `n`, decoded as its odd part and power of two
    /// (None past the last).
    pub fn denominator(&self, n: usize) -> Result<Option<(Arc<BigUint>, u32)>, Error> {
        Ok(self
            .denominator_bytes(n)?
            .map(|bytes| crate::value::split(crate::value::bytes::from_le_bytes(bytes))))
    }

    /// Version 4 on: dictionary entry `k` as stored, its numerator read onto the
    /// denominator that `denominator` gives for the entry's denominator number.
    fn dictionary_value_on(
        &self,
        k: usize,
        denominator: impl FnOnce(usize) -> Result<Option<(Arc<BigUint>, u32)>, Error>,
    ) -> Result<Value, Error> {
        let bad = || Error::Table {
            path: self.path.display().to_string(),
            reason: format!("dictionary entry {k} is not a value in [0, 1]"),
        };
        if k + 1 >= self.dictionary_index().len() {
            return Err(bad());
        }
        let entry = self.dictionary_entry(k)?;
        let Some(n) = dictionary::denominator_number(entry) else {
            return Err(bad());
        };
        denominator(n as usize)?
            .and_then(|d| dictionary::decode_with(entry, &d))
            .ok_or_else(bad)
    }

    /// The number of the shared denominator dictionary entry `k` names (version 4 on; None
    /// for older versions, whose entries hold their own, or for no such entry). Entries
    /// with one number have one denominator.
    pub fn dictionary_denominator_number(&self, k: usize) -> Result<Option<u32>, Error> {
        if self.denominators_index().is_none() || k + 1 >= self.dictionary_index().len() {
            return Ok(None);
        }
        Ok(dictionary::denominator_number(self.dictionary_entry(k)?))
    }

    /// The bytes of dictionary entry `k` (which must exist), their blocks checked.
    fn dictionary_entry(&self, k: usize) -> Result<&[u8], Error> {
        let index = self.dictionary_index();
        let start = self.layout.dictionary_bytes + index[k].get() as usize;
        let end = self.layout.dictionary_bytes + index[k + 1].get() as usize;
        self.dictionary_bytes(start..end)
    }

    /// Version 4 on: the denominators' offsets.
    fn denominators_index(&self) -> Option<&[U64]> {
        let index = self.layout.denominators_index.as_ref()?;
        Some(<[U64]>::ref_from_bytes(&self.map[index.clone()]).expect("sizes checked at open"))
    }

    /// Version 4 on: the bytes of denominator `n`, their blocks checked (None past the
    /// last, or before version 4).
    fn denominator_bytes(&self, n: usize) -> Result<Option<&[u8]>, Error> {
        let (Some(offsets), Some(area)) = (
            self.denominators_index(),
            self.layout.denominators_bytes.as_ref(),
        ) else {
            return Ok(None);
        };
        let Some(o) = offsets.get(n..n + 2) else {
            return Ok(None);
        };
        let range = area.start + o[0].get() as usize..area.start + o[1].get() as usize;
        self.dictionary_bytes(range).map(Some)
    }
}

/// A table's values read one at a time (a job's exits, from a dictionary too large to
/// decode whole), each distinct value and each denominator decoded once: exits that share a
/// value, α and β where they agree included, share its digits. Entries are as stored
/// ([`Table::dictionary_value_as_stored`]).
pub struct ReadOnce {
    denominators: Vec<OnceLock<(Arc<BigUint>, u32)>>,
    values: Vec<OnceLock<Value>>,
}

impl ReadOnce {
    /// Nothing decoded yet, room for every entry of `table`.
    pub fn new(table: &Table) -> ReadOnce {
        let denominators = table.denominators_len();
        ReadOnce {
            denominators: (0..denominators).map(|_| OnceLock::new()).collect(),
            values: (0..table.info().dictionary_len)
                .map(|_| OnceLock::new())
                .collect(),
        }
    }

    /// How many distinct values are held decoded.
    pub fn decoded(&self) -> usize {
        self.values.iter().filter(|v| v.get().is_some()).count()
    }

    /// Dictionary entry `k` of `table` (the table this was made for), decoded the first
    /// time it is asked for.
    pub fn value(&self, table: &Table, k: usize) -> Result<Value, Error> {
        let Some(cell) = self.values.get(k) else {
            return table.dictionary_value_as_stored(k);
        };
        if let Some(v) = cell.get() {
            return Ok(v.clone());
        }
        // Older versions store each entry whole: its value is still decoded once.
        let v = if self.denominators.is_empty() {
            table.dictionary_value_as_stored(k)?
        } else {
            table.dictionary_value_on(k, |n| {
                let Some(cell) = self.denominators.get(n) else {
                    return Ok(None);
                };
                if let Some(d) = cell.get() {
                    return Ok(Some(d.clone()));
                }
                let Some(d) = table.denominator(n)? else {
                    return Ok(None);
                };
                Ok(Some(cell.get_or_init(|| d).clone()))
            })?
        };
        // Two threads may decode the same entry at once: both return the one kept.
        Ok(cell.get_or_init(|| v).clone())
    }
}

/// The longest denominator (in bits) that [`Table::dictionary_value`] reduces again.
pub const REDUCED_BITS: u64 = 1024;

/// The header fields of any version, decoded but not yet checked against the body.
struct Header {
    info: TableInfo,
    /// Stated offsets: keys, ranks, levels_white, levels_black, dictionary_index,
    /// dictionary_bytes, ranks_beta, denominators_index, denominators_bytes (0 where none).
    offsets: [u64; 9],
    /// Version 4: the number of distinct denominators.
    denominators: Option<usize>,
    file_len: u64,
    body_crc: u32,
    header_len: usize,
    /// Version 5: the checksums of the front sections and of the dictionary's blocks.
    blocks: Option<StatedBlocks>,
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
    let mut offsets = [0u64; 9];
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
        denominators: None,
        file_len,
        body_crc,
        header_len: HEADER_LEN_V1,
        blocks: None,
    })
}

/// Decode a version 3 header (160 bytes, the material by name), a version 4 one (176
/// bytes: version 3's fields, then the denominators' count and offsets) or a version 5 one
/// (192 bytes: version 4's fields, then the checksums' facts).
fn header_v3(mut f: Fields<'_>) -> Result<Header, String> {
    let version = f.version;
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
    let (keys, ranks_off, lwo, lbo, rbo) = (f.u64()?, f.u64()?, f.u64()?, f.u64()?, f.u64()?);
    let (dio, dbo) = (f.u64()?, f.u64()?);
    let file_len = f.u64()?;
    let body_crc = f.u32()?;
    let (denominators, dno, dnbo) = if version >= 4 {
        (Some(f.u32()? as usize), f.u64()?, f.u64()?)
    } else {
        (None, 0, 0)
    };
    let offsets = [keys, ranks_off, lwo, lbo, dio, dbo, rbo, dno, dnbo];
    let blocks = if version >= 5 {
        Some(StatedBlocks {
            front_crc: f.u32()?,
            len: f.u32()?,
            offset: f.u64()?,
            whole: f.u64()?,
        })
    } else {
        None
    };
    if !f.padding_is_zero() {
        return Err("the header's padding is not zero".into());
    }
    if flags >> 4 != 0 {
        return Err(format!("unknown flags {flags:#04x}"));
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
        denominators,
        file_len,
        body_crc,
        header_len: match version {
            ..=3 => HEADER_LEN_V3,
            4 => HEADER_LEN_V4,
            _ => HEADER_LEN,
        },
        blocks,
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

/// What [`validate`] found: the header's facts, the section layout, the bytes of the
/// dictionary in whole form ([`Table::dictionary_size_bytes`]), the body's checksum, and
/// (version 5) the dictionary's blocks, not yet checked.
struct Validated {
    info: TableInfo,
    layout: Layout,
    whole: usize,
    body_crc: u32,
    blocks: Option<Blocks>,
}

/// Check a file image: all of it for versions 1 to 4; for version 5 all but the
/// dictionary's bytes, whose blocks are checked as they are read ([`Blocks`]).
fn validate(bytes: &[u8]) -> Result<Validated, String> {
    let header_len = match bytes
        .get(8..12)
        .map(|v| u32::from_le_bytes(v.try_into().expect("4")))
    {
        Some(1 | 2) => HEADER_LEN_V1,
        Some(3) => HEADER_LEN_V3,
        Some(4) => HEADER_LEN_V4,
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
    let key_width = if info.version >= 3 { 8 } else { 4 };
    // The denominators' bytes run from their stated offset to the entries' stated offset;
    // the layout then checks every offset against the counts.
    let shared = match h.denominators {
        Some(count) => {
            let len = h.offsets[5]
                .checked_sub(h.offsets[8])
                .and_then(|l| usize::try_from(l).ok())
                .ok_or("section offsets do not match the counts")?;
            Some((count, len))
        }
        None => None,
    };
    let layout = Layout::new(
        h.header_len,
        key_width,
        info.positions,
        info.dictionary_len,
        info.has_beta,
        shared,
    )
    .filter(|l| l.dictionary_bytes <= bytes.len())
    .ok_or("the sections do not fit in the file")?;
    if h.offsets != layout.offsets() {
        return Err("section offsets do not match the counts".into());
    }
    // The dictionary's bytes: the denominators' (version 4 on), then the entries', which
    // run to the blocks' checksums (version 5) or to the end of the file.
    let dictionary_start = layout
        .denominators_bytes
        .as_ref()
        .map_or(layout.dictionary_bytes, |d| d.start);
    let (entries_end, blocks) = match &h.blocks {
        None => {
            if h.body_crc != crc32fast::hash(&bytes[h.header_len..]) {
                return Err("corrupted: the body checksum does not match".into());
            }
            (bytes.len(), None)
        }
        Some(stated) => {
            let blocks = Blocks::stated(stated, dictionary_start, layout.dictionary_bytes, bytes)?;
            let mut front = crc32fast::Hasher::new();
            front.update(&bytes[h.header_len..dictionary_start]);
            front.update(&bytes[blocks.sums.clone()]);
            if front.finalize() != stated.front_crc {
                return Err(
                    "corrupted: the checksum of the sections before the dictionary does not match"
                        .into(),
                );
            }
            (blocks.end, Some(blocks))
        }
    };
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
    let entries_len = (entries_end - layout.dictionary_bytes) as u64;
    // Each entry holds at least the length word (or the denominator number) and one byte.
    if !offsets_well_formed(index, MIN_ENTRY, entries_len) {
        return Err("the dictionary index is malformed".into());
    }
    let mut whole = entries_len as usize;
    if let (Some(count), Some(di), Some(db)) = (
        h.denominators,
        &layout.denominators_index,
        &layout.denominators_bytes,
    ) {
        let offsets = <[U64]>::ref_from_bytes(&bytes[di.clone()]).expect("sized");
        if !offsets_well_formed(offsets, 1, db.len() as u64) {
            return Err("the denominators' index is malformed".into());
        }
        if let Some(stated) = &h.blocks {
            // Reading every entry's denominator number would read the whole dictionary:
            // version 5 states the sum, and a number outside the list is refused when its
            // entry is decoded.
            let whole = usize::try_from(stated.whole).map_err(|_| "the dictionary is too large")?;
            return Ok(Validated {
                info,
                layout,
                whole,
                body_crc: h.body_crc,
                blocks,
            });
        }
        let entries = &bytes[layout.dictionary_bytes..];
        for w in index.windows(2) {
            let n = dictionary::denominator_number(&entries[w[0].get() as usize..])
                .map(|n| n as usize)
                .filter(|&n| n < count)
                .ok_or("a dictionary entry names a denominator outside the list")?;
            whole += (offsets[n + 1].get() - offsets[n].get()) as usize;
        }
    }
    Ok(Validated {
        info,
        layout,
        whole,
        body_crc: h.body_crc,
        blocks,
    })
}

/// Whether `offsets` start at 0, grow by at least `min` each and end at `end`.
fn offsets_well_formed(offsets: &[U64], min: u64, end: u64) -> bool {
    offsets.first().is_some_and(|o| o.get() == 0)
        && offsets
            .windows(2)
            .all(|w| w[1].get() >= w[0].get().saturating_add(min))
        && offsets.last().is_some_and(|o| o.get() == end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigUint;

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
        let v3 = encode_v3(c);
        let t = {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("x.bidtb");
            std::fs::write(&path, &v3).unwrap();
            Table::open(&path).unwrap()
        };
        let beta = c.values_beta.is_some();
        let p = c.keys.len();
        let layout = Layout::new(HEADER_LEN_V1, 4, p, t.info().dictionary_len, beta, None).unwrap();
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

    /// Resident kilobytes of the mappings of `path` in this process (Linux's smaps).
    fn mapped_kb(path: &Path) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let name = path.to_str().unwrap();
        let mut in_file = false;
        let mut kb = 0;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().unwrap_or("");
            if range.contains('-') && range.chars().all(|c| c.is_ascii_hexdigit() || c == '-') {
                in_file = line.ends_with(name);
            } else if in_file && let Some(rest) = line.strip_prefix("Rss:") {
                kb += rest
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .unwrap();
            }
        }
        kb
    }

    /// The pages a job read leave its resident memory when it lets them go, and reading
    /// again gives the same values.
    #[test]
    fn released_pages_leave_resident_memory_and_read_back() {
        let big = BigUint::from(7u8).pow(3000);
        let values: Vec<Value> = (0..400u64)
            .map(|k| Value::new(&big / 3u8 + k, big.clone() + k))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let (path, _) = write_8x8_krvk(dir.path(), &values);
        let t = Table::open(&path).unwrap();
        let read_all = || read_back(&t, &values);
        read_all();
        let before = mapped_kb(&path);
        assert!(before >= 256, "{before} kB resident after reading");
        t.release_pages();
        assert_eq!(mapped_kb(&path), 0);
        read_all();
        // Read in no order from then on: the same values.
        t.advise_random();
        t.release_pages();
        read_all();
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
        let dir = tempfile::tempdir().unwrap();
        let (path, image) = write_8x8_krvk(dir.path(), &values);
        assert_eq!(std::fs::read(&path).unwrap(), image);
        read_back(&Table::open(&path).unwrap(), &values);
    }

    #[test]
    fn denominators_stream_in_batches() {
        // More distinct denominators than one batch, odd and even (7^300·(k+1)), each
        // read back over its own denominator.
        let big = BigUint::from(7u8).pow(300);
        let values: Vec<Value> = (1..(ENCODE_BATCH as u64 + 6))
            .map(|k| Value::new(BigUint::from(1u8), &big * k))
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let (path, image) = write_8x8_krvk(dir.path(), &values);
        assert_eq!(std::fs::read(&path).unwrap(), image);
        let t = Table::open(&path).unwrap();
        read_back(&t, &values);
    }

    /// `values` written (streamed) as an 8x8 KRvK table in `dir` (it has room for 4,105
    /// positions and more); its path and the image [`encode`] makes of the same contents.
    fn write_8x8_krvk(dir: &Path, values: &[Value]) -> (PathBuf, Vec<u8>) {
        let c = Contents {
            board: Board::new(8, 8).unwrap(),
            raw_positions: 200_000,
            ..contents(values, None)
        };
        let path = dir.join("KRvK.bidtb");
        write(&path, &c).unwrap();
        (path, encode(&c))
    }

    /// Every value of `values` read back from `t` at its position.
    fn read_back(t: &Table, values: &[Value]) {
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
        let c = contents(&values, None);
        for bytes in [sample(&values), encode_v3(&c), encode_legacy(&c)] {
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
            encode_v3(&contents(&[v(1, 2), v(3, 4), v(0, 1)], None)),
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

    /// Open a file image and read every dictionary value: what a flip anywhere must stop.
    fn open_and_read(bytes: &[u8]) -> Result<Table, Error> {
        let t = open_bytes(bytes)?;
        for k in 0..t.info().dictionary_len {
            t.dictionary_value_as_stored(k)?;
        }
        Ok(t)
    }

    /// Every single-byte flip of `bytes` is an error: at open, or (version 5's dictionary)
    /// when the value it lies in is read, and for [`Table::check_all`].
    fn every_flip_is_noticed(bytes: &[u8]) {
        for at in 0..bytes.len() {
            let mut b = bytes.to_vec();
            b[at] ^= 0x10;
            assert!(open_and_read(&b).is_err(), "flip at {at} went unnoticed");
            assert!(
                open_bytes(&b).and_then(|t| t.check_all()).is_err(),
                "flip at {at} went unnoticed by check_all"
            );
        }
    }

    #[test]
    fn every_single_byte_flip_is_an_error() {
        let values = [v(1, 2), v(3, 4), v(0, 1), v(5, 8), v(1, 8)];
        for bytes in [
            sample(&values),
            encode_v4(&contents(&values, None)),
            encode_v3(&contents(&values[..4], None)),
            encode_legacy(&contents(&[v(1, 2), v(3, 4)], None)),
        ] {
            assert!(open_and_read(&bytes).unwrap().check_all().is_ok());
            every_flip_is_noticed(&bytes);
        }
    }

    #[test]
    fn a_damaged_block_fails_only_the_values_in_it() {
        // 100 values of about 25,000 digits, over 16 blocks: a flip in one block's bytes
        // lets the file open and answer from the other blocks; the values in it, and
        // `check_all`, name the block.
        let den = BigUint::from(7u8).pow(30_000);
        let values: Vec<Value> = (1..=100u32)
            .map(|k| Value::new(&den * k / 101u32, den.clone()))
            .collect();
        let bytes = sample(&values);
        let t = open_bytes(&bytes).unwrap();
        let blocks = t.blocks.as_ref().unwrap();
        assert!(blocks.count() >= 10, "{} blocks", blocks.count());
        let at = blocks.start + 5 * BLOCK_LEN + 100;
        let mut b = bytes.clone();
        b[at] ^= 1;
        let t = open_bytes(&b).unwrap();
        let (mut good, mut bad) = (0, 0);
        for (i, want) in values.iter().enumerate() {
            match t.value(i) {
                Ok(x) => {
                    assert_eq!(x, *want);
                    good += 1;
                }
                Err(e) => {
                    assert!(e.to_string().contains("dictionary block 5"), "{e}");
                    bad += 1;
                }
            }
        }
        assert!(bad > 0 && good > 80, "{good} read, {bad} refused");
        let err = t.check_all().unwrap_err().to_string();
        assert!(
            err.contains("block 5") && err.contains("KRvK.bidtb"),
            "{err}"
        );
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
        let err = open_bytes(&forged(sample(&[v(1, 2)]), HEADER_LEN, 8, 6))
            .unwrap_err()
            .to_string();
        assert!(err.contains("format version 6"), "{err}");
        // A version 4 file relabelled 5 lacks the blocks' fields.
        let err = open_bytes(&forged(encode_v4(&contents(&[v(1, 2)], None)), 176, 8, 5))
            .unwrap_err()
            .to_string();
        assert!(err.contains("KRvK.bidtb"), "{err}");
        // A version 3 file relabelled 4 has no denominators' fields where 4 has them.
        let err = open_bytes(&forged(encode_v3(&contents(&[v(1, 2)], None)), 160, 8, 4))
            .unwrap_err()
            .to_string();
        assert!(err.contains("KRvK.bidtb"), "{err}");
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
            encode_v3(&contents(&alphas, Some(&betas))),
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
        every_flip_is_noticed(&bytes);
        for len in 0..bytes.len() {
            assert!(open_bytes(&bytes[..len]).is_err());
        }
    }

    /// `count` values k/41 of one long denominator (3^400 + 2, 80 bytes; k = 1..=count),
    /// then `short`: the long denominator and the values.
    fn long_and_short(count: u32, short: &[Value]) -> (BigUint, Vec<Value>) {
        let den = BigUint::from(3u8).pow(400) + 2u8;
        let mut values: Vec<Value> = (1..=count)
            .map(|k| Value::new(&den * k / 41u8, den.clone()))
            .collect();
        values.extend_from_slice(short);
        (den, values)
    }

    /// Values read one by one (a job's exits) are decoded once each, their denominators
    /// once each: entries that share a denominator share its digits, an entry read twice
    /// is one copy, and every value is the one stored, for version 4 and version 3 files.
    #[test]
    fn values_read_once_share_their_digits() {
        let (den, values) = long_and_short(20, &[v(0, 1), v(1, 1), v(1, 2), v(3, 8)]);
        let c = contents(&values, None);
        for bytes in [encode(&c), encode_v3(&c)] {
            let t = open_bytes(&bytes).unwrap();
            let once = ReadOnce::new(&t);
            let len = t.info().dictionary_len;
            let first: Vec<Value> = (0..len).map(|k| once.value(&t, k).unwrap()).collect();
            for (k, x) in first.iter().enumerate() {
                assert_eq!(*x, t.dictionary_value_as_stored(k).unwrap());
                assert!(
                    once.value(&t, k).unwrap().is_same_copy(x),
                    "entry {k} twice"
                );
            }
            let long: Vec<&Value> = first.iter().filter(|x| *x.denom() == den).collect();
            assert_eq!(long.len(), 20);
            if t.info().version >= 4 {
                assert!(
                    long.iter()
                        .all(|x| Arc::ptr_eq(x.shared_odd(), long[0].shared_odd())),
                    "one copy of the long denominator"
                );
            }
            assert!(once.value(&t, len).is_err(), "no entry past the last");
        }
    }

    #[test]
    fn denominators_are_stored_once_and_read_back_exactly() {
        let short = [v(0, 1), v(1, 1), v(1, 2), v(5, 8), v(3, 8), v(1, 3)];
        let (_, values) = long_and_short(40, &short);
        let c = contents(&values, None);
        let (new, old) = (encode(&c), encode_v3(&c));
        // 46 values, 5 denominators (1, 2, 8, 3 and the long one): the long denominator,
        // 80 bytes, is written once instead of 40 times, against 84 bytes more of
        // denominators' index (48), header (32) and the one block's checksum (4).
        let t = open_bytes(&new).unwrap();
        assert_eq!(t.info().version, 5);
        assert_eq!(t.info().dictionary_len, 46);
        assert_eq!(t.layout.denominators_index.as_ref().unwrap().len(), 8 * 6);
        assert!(
            new.len() + 39 * 80 - 84 <= old.len(),
            "{} {}",
            new.len(),
            old.len()
        );
        let old = open_bytes(&old).unwrap();
        for (i, want) in values.iter().enumerate() {
            assert_eq!(&t.value(i).unwrap(), want);
            assert_eq!(t.rank(i), old.rank(i));
        }
        for k in 0..46 {
            assert_eq!(
                t.dictionary_value_as_stored(k).unwrap(),
                old.dictionary_value_as_stored(k).unwrap()
            );
        }
        // What the values take decoded does not depend on the version (5 states it, 4 adds
        // it up).
        assert_eq!(t.dictionary_size_bytes(), old.dictionary_size_bytes());
        let v4 = open_bytes(&encode_v4(&c)).unwrap();
        assert_eq!(v4.dictionary_size_bytes(), old.dictionary_size_bytes());
        assert_eq!(
            old.dictionary_size_bytes(),
            old.map.len() - old.layout.dictionary_bytes
        );
    }

    /// Make every checksum of a file image good again after its body was changed, as a
    /// forger would (versions 4 and 5).
    fn reforged(mut b: Vec<u8>) -> Vec<u8> {
        let version = u32::from_le_bytes(b[8..12].try_into().unwrap());
        let header_len = if version == 4 {
            HEADER_LEN_V4
        } else {
            HEADER_LEN
        };
        if version == 5 {
            let field = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
            let (start, end) = (field(152) as usize, field(168) as usize);
            let mut sums = BlockSums::new(BLOCK_LEN);
            sums.update(&b[start..end]);
            let sums: Vec<u8> = sums
                .finish()
                .0
                .iter()
                .flat_map(|s| s.to_le_bytes())
                .collect();
            b[end..].copy_from_slice(&sums);
            let mut front = crc32fast::Hasher::new();
            front.update(&b[header_len..start]);
            front.update(&sums);
            b[160..164].copy_from_slice(&front.finalize().to_le_bytes());
        }
        let body = crc32fast::hash(&b[header_len..]);
        b[136..140].copy_from_slice(&body.to_le_bytes());
        let header = crc32fast::hash(&b[..header_len - 4]);
        b[header_len - 4..header_len].copy_from_slice(&header.to_le_bytes());
        b
    }

    #[test]
    fn a_forged_denominator_number_is_refused() {
        // Every checksum made good again, as a forger would: the entry's denominator number
        // then lies outside the list. Version 4 refuses the file at open (it reads every
        // entry's number there); version 5 refuses the entry when it is read.
        let values = [v(1, 2), v(1, 3)];
        let c = contents(&values, None);
        for bytes in [encode(&c), encode_v4(&c)] {
            let t = open_bytes(&bytes).unwrap();
            let entries = t.layout.dictionary_bytes;
            let version = t.info().version;
            for (number, outside) in [(2u32, true), (1, false)] {
                let mut b = bytes.clone();
                b[entries..entries + 4].copy_from_slice(&number.to_le_bytes());
                let b = reforged(b);
                if outside && version == 4 {
                    let e = open_bytes(&b).unwrap_err().to_string();
                    assert!(e.contains("outside the list"), "{e}");
                    continue;
                }
                let t = open_bytes(&b).unwrap();
                assert!(t.check_all().is_ok(), "version {version}");
                if outside {
                    let e = t.dictionary_value_as_stored(0).unwrap_err().to_string();
                    assert!(e.contains("not a value"), "{e}");
                } else {
                    // Entry 0 (1/3) now names denominator 1 (2): 1/2, which the
                    // dictionary's order (checked by `bidtb verify`) would refuse; the
                    // reader answers 1/2.
                    assert_eq!(t.dictionary_value_as_stored(0).unwrap(), v(1, 2));
                }
            }
        }
    }

    #[test]
    fn an_upgraded_file_is_the_file_this_build_writes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("KRvK.bidtb");
        let den = BigUint::from(3u8).pow(300) + 2u8;
        let mut alphas: Vec<Value> = (1..=9u32)
            .map(|k| Value::new(&den * k / 11u8, den.clone()))
            .collect();
        alphas.extend([v(0, 1), v(1, 2)]);
        let mut betas = alphas.clone();
        betas[3] = v(1, 1);
        for c in [contents(&alphas, None), contents(&alphas, Some(&betas))] {
            let current = encode(&c);
            let legacy = if c.values_beta.is_some() { 2 } else { 1 };
            for (old, from) in [
                (encode_v4(&c), 4),
                (encode_v3(&c), 3),
                (encode_legacy(&c), legacy),
            ] {
                std::fs::write(&path, &old).unwrap();
                let u = upgrade(&path).unwrap();
                assert_eq!(u.from, from);
                let sizes = (old.len() as u64, current.len() as u64);
                assert_eq!((u.bytes_before, u.bytes_after), sizes);
                assert_eq!(std::fs::read(&path).unwrap(), current);
                // A current file is left alone.
                let again = upgrade(&path).unwrap();
                assert_eq!(
                    (again.from, again.bytes_after),
                    (VERSION, current.len() as u64)
                );
            }
        }
        // A damaged file is refused and left as it was.
        let mut bad = encode_v3(&contents(&alphas, None));
        let last = bad.len() - 1;
        bad[last] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        assert!(upgrade(&path).unwrap_err().to_string().contains("checksum"));
        assert_eq!(std::fs::read(&path).unwrap(), bad);
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
