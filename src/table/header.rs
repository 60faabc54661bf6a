//! The header of a table file: the format's constants and versions, what a header states
//! ([`TableInfo`]), where each section lies ([`Layout`]), and the decoding and checking of
//! the header of every readable version (1 to 5) into a [`Header`].

use std::ops::Range;

use crate::container::Fields;
use crate::error::{Corruption, Error};
use crate::geometry::Board;
use crate::material::Material;

use super::blocks::StatedBlocks;

/// The first eight bytes of every table file.
pub const MAGIC: [u8; 8] = *b"BIDTB\r\n\x1a";
/// The format version this build writes.
pub const VERSION: u32 = 6;
/// The versions this build reads: 1 (three-piece, α = β), 2 (three-piece, β apart), 3 (any
/// material, values whole), 4 (denominators shared), 5 (the dictionary checked block by
/// block), 6 (every section checked block by block), 7 (entries stored as the mean of two
/// others), 8 (such entries with a hint that spares the reader a gcd).
pub const READABLE: [u32; 8] = [1, 2, 3, 4, 5, 6, 7, 8];
/// The version this build writes for a table with values stored as the mean of two other
/// entries (`bidtb generate --means`), each with a hint where one fits; one with every
/// value whole is [`VERSION`].
pub const MEANS: u32 = 8;
/// The first version with entries stored as means (version 7 writes them without hints).
pub(super) const FIRST_MEANS: u32 = 7;
/// The first version whose checksummed blocks cover every section after the header, the
/// positions' too (version 5's cover the dictionary's bytes alone).
pub(super) const ALL_IN_BLOCKS: u32 = 6;
/// The file name extension of table files.
pub const EXTENSION: &str = "bidtb";
/// Header length of versions 1 and 2.
pub(super) const HEADER_LEN_V1: usize = 128;
/// Header length of version 3.
pub(super) const HEADER_LEN_V3: usize = 160;
/// Header length of version 4.
pub(super) const HEADER_LEN_V4: usize = 176;
/// Header length of versions 5 to 7 (the same fields), 6 and 7 being the versions this
/// build writes.
pub const HEADER_LEN: usize = 192;
/// Bytes of the material name in a version 3 header (ASCII, zero-padded).
pub(super) const NAME_LEN: usize = 16;
/// The stored first Richman iteration (or stable-at iteration) of a run that has none.
pub(super) const NO_ITERATION: u32 = u32::MAX;

pub(super) const FLAG_CONVERGED: u8 = 1;
pub(super) const FLAG_CERTIFIED_ALPHA: u8 = 2;
pub(super) const FLAG_CERTIFIED_BETA: u8 = 4;
/// Set exactly when the file has a `ranks_beta` section (α < β somewhere).
pub(super) const FLAG_BETA_SECTION: u8 = 8;

/// The file name of a material's table, e.g. `KRvKN.bidtb`.
pub fn file_name(material: Material) -> String {
    format!("{material}.{EXTENSION}")
}

/// What a table says about itself (its header, decoded and checked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TableInfo {
    /// The format version: 1 to 7.
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
pub(super) struct Layout {
    /// Bytes per key: 4 in versions 1 and 2, 8 from version 3 on.
    pub(super) key_width: usize,
    pub(super) keys: Range<usize>,
    pub(super) ranks: Range<usize>,
    pub(super) levels_white: Range<usize>,
    pub(super) levels_black: Range<usize>,
    /// Each position's β rank, where stored (else α's ranks serve as β's).
    pub(super) ranks_beta: Option<Range<usize>>,
    /// Version 4: the offsets of the distinct denominators' bytes, E + 1 of them.
    pub(super) denominators_index: Option<Range<usize>>,
    pub(super) dictionary_index: Range<usize>,
    /// Version 4: the distinct denominators' bytes.
    pub(super) denominators_bytes: Option<Range<usize>>,
    /// Start of the dictionary entries' bytes (they run to the end of the file).
    pub(super) dictionary_bytes: usize,
}

impl Layout {
    /// The layout for `positions` positions and `dictionary` values after a header of
    /// `header` bytes, keys of `key_width` bytes, with a `ranks_beta` section if `beta`,
    /// and (version 4) `shared`: the number of distinct denominators and their bytes;
    /// None on overflow.
    pub(super) fn new(
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
    pub(super) fn offsets(&self) -> [u64; 9] {
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

/// The header fields of any version, decoded but not yet checked against the body.
pub(super) struct Header {
    pub(super) info: TableInfo,
    /// Stated offsets: keys, ranks, levels_white, levels_black, dictionary_index,
    /// dictionary_bytes, ranks_beta, denominators_index, denominators_bytes (0 where none).
    pub(super) offsets: [u64; 9],
    /// Version 4: the number of distinct denominators.
    pub(super) denominators: Option<usize>,
    pub(super) file_len: u64,
    pub(super) body_crc: u32,
    pub(super) header_len: usize,
    /// Versions 5 and 6: the checksums of the blocks, and of what is checked at open.
    pub(super) blocks: Option<StatedBlocks>,
}

/// Decode a version 1 or 2 header (128 bytes, a class number).
pub(super) fn header_v1(mut f: Fields<'_>) -> Result<Header, Corruption> {
    let version = f.version;
    let (files, ranks, class, flags) = (f.u8()?, f.u8()?, f.u8()?, f.u8()?);
    let board = Board::new(files, ranks).map_err(|e| Corruption::Board(e.to_string()))?;
    let material = *Material::three_piece()
        .get(class as usize)
        .ok_or(Corruption::Class(class))?;
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
        return Err(Corruption::Flags { flags, version });
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
/// bytes: version 3's fields, then the denominators' count and offsets) or a version 5 or 6
/// one (192 bytes: version 4's fields, then the checksums' facts).
pub(super) fn header_v3(mut f: Fields<'_>) -> Result<Header, Corruption> {
    let version = f.version;
    let (files, ranks, men, flags) = (f.u8()?, f.u8()?, f.u8()?, f.u8()?);
    let board = Board::new(files, ranks).map_err(|e| Corruption::Board(e.to_string()))?;
    let name = f.bytes(NAME_LEN)?;
    let text = std::str::from_utf8(name)
        .ok()
        .map(|t| t.trim_end_matches('\0'))
        .filter(|t| !t.contains('\0'))
        .ok_or(Corruption::MaterialName)?;
    let material: Material = text
        .parse()
        .map_err(|e: Error| Corruption::Material(e.to_string()))?;
    if material.man_count() != men as usize {
        return Err(Corruption::Men {
            material: material.to_string(),
            men: material.man_count(),
            stated: men,
        });
    }
    if !material.is_stored() {
        return Err(Corruption::NotStored {
            material: material.to_string(),
            stored: material.stored().0.to_string(),
        });
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
        return Err(Corruption::Padding);
    }
    if flags >> 4 != 0 {
        return Err(Corruption::UnknownFlags(flags));
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
pub(super) fn info(
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
) -> Result<TableInfo, Corruption> {
    let key_space = crate::index::key_space(board, material);
    if positions > key_space || positions > raw_positions {
        return Err(Corruption::PositionCount(positions));
    }
    let positions = usize::try_from(positions).map_err(|_| Corruption::TooManyPositions)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::testing::*;

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
        assert_eq!(t.find(64u64.pow(4) - 1).unwrap(), Some(1));
    }

    #[test]
    fn another_version_or_material_is_refused_by_name() {
        let err = open_bytes(&forged(sample(&[v(1, 2)]), HEADER_LEN, 8, 9))
            .unwrap_err()
            .to_string();
        assert!(err.contains("format version 9"), "{err}");
        // A version 5 file relabelled 6: its open-time checksum covers other bytes.
        let err = open_bytes(&forged(encode_v5(&contents(&[v(1, 2)], None)), 192, 8, 6))
            .unwrap_err()
            .to_string();
        assert!(err.contains("checksum"), "{err}");
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
}
