//! Writing a table file: the [`Contents`] of a table, encoded into the bytes of the current
//! version ([`encode`], [`encode_to`], streaming) and written atomically ([`write`]).

use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::Path;

use rayon::prelude::*;

use crate::container::HeaderWriter;
use crate::error::Error;
use crate::geometry::Board;
use crate::material::Material;
use crate::value::Value;

use super::UNREACHED;
use super::blocks::{BLOCK_LEN, BlockSums};
use super::dictionary::{Dictionary, Form, Mean};
use super::header::*;

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
    /// Equations `2v = a + b` between values (`[v, a, b]`, `v` a value of the table; `a`
    /// and `b` any values, which the dictionary then holds too): the writer stores such a
    /// `v` as the mean of `a` and `b` where it can ([`super::means`]). Each must hold
    /// exactly; the generator gives every position's equation with its best moves, which
    /// the certificate proved. Empty: every value stored whole.
    pub means: Vec<Mean<'a>>,
}

/// Dictionary values encoded per parallel batch while the writer streams them.
pub(super) const ENCODE_BATCH: usize = 4096;

/// The bytes of a table of `positions` positions apart from its values' digits (its
/// dictionary and denominators): the header, each position's key, α's rank and both
/// levels, and β's rank where `beta` (α < β somewhere). What a table needs on disk at
/// least, known before its values are.
pub fn fixed_bytes(positions: u64, beta: bool) -> u64 {
    let per_position = 8 + 4 + 4 + 4 + if beta { 4 } else { 0 };
    super::HEADER_LEN as u64 + positions * per_position
}

/// The file image of a table in the current version, in memory: [`encode_to`] into a
/// vector.
pub fn encode(c: &Contents<'_>) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    encode_to(c, &mut out).expect("writing to memory cannot fail");
    out.into_inner()
}

/// Write the file image of a table to `out`, in version 6 ([`VERSION`]), or 8 ([`MEANS`])
/// where `c.means` stores a value as a mean, streaming: only the fixed-size
/// sections (about 24 bytes a position) and the distinct denominators are assembled in
/// memory, the dictionary's numerators (gigabytes where values have thousands of digits)
/// go out in batches as they are encoded, and the header, which holds the body's checksum,
/// is written last, at the start.
pub fn encode_to<W: Write + Seek>(c: &Contents<'_>, out: &mut W) -> std::io::Result<()> {
    let version = if c.means.is_empty() { VERSION } else { MEANS };
    encode_version(c, version, BLOCK_LEN, out)
}

/// The file image of a table in version 3 (each value whole), as earlier builds wrote it:
/// for the tests that check this build still reads such files.
#[cfg(test)]
pub(super) fn encode_v3(c: &Contents<'_>) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    encode_version(c, 3, BLOCK_LEN, &mut out).expect("writing to memory cannot fail");
    out.into_inner()
}

/// The file image of a table in version 5 (the positions' sections checked at open), as
/// earlier builds wrote it: for the tests that check this build still reads such files.
#[cfg(test)]
pub(super) fn encode_v5(c: &Contents<'_>) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    encode_version(c, 5, BLOCK_LEN, &mut out).expect("writing to memory cannot fail");
    out.into_inner()
}

/// The file image of a table in version 6 (every value whole), as earlier builds wrote
/// it: for the tests that check this build still reads such files.
#[cfg(test)]
pub(super) fn encode_v6(c: &Contents<'_>) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    encode_version(c, VERSION, BLOCK_LEN, &mut out).expect("writing to memory cannot fail");
    out.into_inner()
}

/// The file image of a table in version 7 (means without hints), as the build before
/// version 8 wrote it: for the tests that check this build still reads such files.
#[cfg(test)]
pub(crate) fn encode_v7(c: &Contents<'_>) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    encode_version(c, FIRST_MEANS, BLOCK_LEN, &mut out).expect("writing to memory cannot fail");
    out.into_inner()
}

/// The file image of a table in version 4 (the dictionary under the body's checksum
/// alone), as earlier builds wrote it: for the tests that check this build still reads
/// such files.
#[cfg(test)]
pub(super) fn encode_v4(c: &Contents<'_>) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    encode_version(c, 4, BLOCK_LEN, &mut out).expect("writing to memory cannot fail");
    out.into_inner()
}

/// The file image of a table in `version` with checksummed blocks of `block_len` bytes (earlier
/// builds wrote 64 KiB blocks): for the tests that check this build still reads such files.
#[cfg(test)]
pub(super) fn encode_blocks(c: &Contents<'_>, version: u32, block_len: usize) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    encode_version(c, version, block_len, &mut out).expect("writing to memory cannot fail");
    out.into_inner()
}

/// [`encode_to`] in format `version`: 8, or 7, 6, 5, 4 and 3 (for tests), with blocks of
/// `block_len` bytes (versions 5 on).
pub(super) fn encode_version<W: Write + Seek>(
    c: &Contents<'_>,
    version: u32,
    block_len: usize,
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
    let means = if version >= FIRST_MEANS {
        &c.means[..]
    } else {
        &[]
    };
    let all = c.values.iter().chain(betas).copied();
    let mut dictionary = Dictionary::new(all, means, form, version >= MEANS);
    // Version 7 on only where a value is stored as a mean.
    let version = if version >= FIRST_MEANS && !dictionary.has_means() {
        ALL_IN_BLOCKS
    } else {
        version
    };
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
        &mut (0..dictionary.values.len()).map(|k| dictionary.entry_len(k)),
    );
    // What the dictionary takes in the whole form (each entry with its denominator), as a
    // reader of version 4 adds it up entry by entry: version 5 states it in its header, so
    // that a reader need not touch every entry when it opens the file.
    let whole_bytes: u64 = dictionary
        .values
        .iter()
        .map(|v| {
            let numer = v.numer_bits().div_ceil(8).max(1);
            4 + numer + (v.shared_odd().bits() + u64::from(v.twos())).div_ceil(8)
        })
        .sum();
    let blocks_offset = layout.dictionary_bytes as u64 + entries_len;
    // Version 6's blocks cover every byte after the header; version 5's the dictionary's.
    let all_in_blocks = version >= ALL_IN_BLOCKS;
    let blocks_start = if all_in_blocks { header_len } else { fixed_end };
    let blocks_len = blocks_offset - blocks_start as u64;
    let block_count = blocks_len.div_ceil(block_len as u64);
    let file_len = match version {
        ..=4 => blocks_offset,
        _ => blocks_offset + 4 * block_count,
    };

    out.seek(SeekFrom::Start(0))?;
    // The body's checksum: the fixed sections', the dictionary's (combined from the
    // blocks', which take in the fixed sections too in version 6), then the blocks'
    // checksums; what is checked at open: version 5, the fixed sections and the blocks'
    // checksums; version 6, the blocks' checksums alone.
    let mut crc = crc32fast::Hasher::new();
    let mut blocks = BlockSums::new(block_len);
    if all_in_blocks {
        blocks.update(&bytes[header_len..]);
    } else {
        crc.update(&bytes[header_len..]);
    }
    let mut front = crc.clone();
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
        let entries = dictionary.values.len();
        for batch in (0..entries).step_by(ENCODE_BATCH) {
            let encoded: Vec<u8> = (batch..entries.min(batch + ENCODE_BATCH))
                .into_par_iter()
                .map(|k| {
                    let mut e = Vec::with_capacity(dictionary.entry_len(k) as usize);
                    dictionary.encode_entry(k, &mut e);
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
            .u32(block_len as u32)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::*;
    use num_bigint::BigUint;

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

    #[test]
    fn denominators_are_stored_once_and_read_back_exactly() {
        let short = [v(0, 1), v(1, 1), v(1, 2), v(5, 8), v(3, 8), v(1, 3)];
        let (_, values) = long_and_short(40, &short);
        let c = contents(&values, None);
        let (new, old) = (encode(&c), encode_v3(&c));
        // 46 values, 5 denominators (1, 2, 8, 3 and the long one): the long denominator,
        // 80 bytes, is written once instead of 40 times, against 88 bytes more of
        // denominators' index (48), header (32) and the two blocks' checksums (8).
        let t = open_bytes(&new).unwrap();
        assert_eq!(t.info().version, 6);
        assert_eq!(t.info().dictionary_len, 46);
        assert_eq!(t.layout.denominators_index.as_ref().unwrap().len(), 8 * 6);
        assert_eq!(t.blocks.as_ref().unwrap().count(), 2);
        assert!(
            new.len() + 39 * 80 - 88 <= old.len(),
            "{} {}",
            new.len(),
            old.len()
        );
        let old = open_bytes(&old).unwrap();
        for (i, want) in values.iter().enumerate() {
            assert_eq!(&t.value(i).unwrap(), want);
            assert_eq!(t.rank(i).unwrap(), old.rank(i).unwrap());
        }
        for k in 0..46 {
            assert_eq!(
                t.dictionary_value_as_stored(k).unwrap(),
                old.dictionary_value_as_stored(k).unwrap()
            );
        }
        // What the values take decoded does not depend on the version (6 states it, 4 adds
        // it up).
        assert_eq!(t.dictionary_size_bytes(), old.dictionary_size_bytes());
        let v4 = open_bytes(&encode_v4(&c)).unwrap();
        assert_eq!(v4.dictionary_size_bytes(), old.dictionary_size_bytes());
        assert_eq!(
            old.dictionary_size_bytes(),
            old.bytes.len() - old.layout.dictionary_bytes
        );
    }
}
