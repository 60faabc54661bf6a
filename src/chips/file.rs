//! Chip files: a material's chip thresholds for one chip total, beside its value table
//! (`DIR/FxR/chips-K/KRvK.chips`), memory-mapped like the tables and indexed like them.
//!
//! Framed in bidtb's container ([`crate::container`]): a 96-byte header (magic
//! `BIDTBCHP`, version 1, header length, files, ranks, the material's name (16 bytes, zero
//! padded), the chip total K, the position count, the CRC-32 of the value table's keys
//! section — the file answers for exactly those positions in that order, and is refused
//! beside a table with other keys —, the body's length and CRC-32, the header's CRC-32);
//! then the body: the positions' win thresholds, then their not-lose thresholds, each a
//! little-endian u16, as White's holdings 2w + m (2K + 2: none). Opening checks the header,
//! the length, the body's CRC and that no threshold exceeds 2K + 2.

use std::path::{Path, PathBuf};

use memmap2::Mmap;

use super::{Thresholds, Total};
use crate::container::{Fields, HeaderWriter, open_regular};
use crate::error::{Corruption, Error};
use crate::geometry::Board;
use crate::material::Material;

/// The first eight bytes of a chip file.
pub const MAGIC: [u8; 8] = *b"BIDTBCHP";
/// The format version.
pub const VERSION: u32 = 1;
/// The file name extension.
pub const EXTENSION: &str = "chips";
const HEADER_LEN: usize = 96;
const NAME_LEN: usize = 16;

/// The directory of a board's chip files for total `k`.
pub fn dir(board_dir: &Path, k: u32) -> PathBuf {
    board_dir.join(format!("chips-{k}"))
}

/// The file of `material` in a chip directory.
pub fn path(chip_dir: &Path, material: Material) -> PathBuf {
    chip_dir.join(format!("{material}.{EXTENSION}"))
}

/// The bytes of a chip file.
pub fn encode(
    board: Board,
    material: Material,
    k: u32,
    keys_crc: u32,
    win: &[u16],
    not_lose: &[u16],
) -> Vec<u8> {
    assert_eq!(win.len(), not_lose.len());
    let mut body = Vec::with_capacity(4 * win.len());
    for x in win.iter().chain(not_lose) {
        body.extend_from_slice(&x.to_le_bytes());
    }
    let mut name = [0u8; NAME_LEN];
    let text = material.to_string();
    name[..text.len()].copy_from_slice(text.as_bytes());
    let mut h = HeaderWriter::new(MAGIC, VERSION, HEADER_LEN);
    h.u8(board.files())
        .u8(board.ranks())
        .u8(0)
        .u8(0)
        .bytes(&name)
        .u32(k)
        .u64(win.len() as u64)
        .u32(keys_crc)
        .u64(body.len() as u64)
        .u32(crc32fast::hash(&body));
    let mut out = h.finish();
    out.extend_from_slice(&body);
    out
}

/// A chip file, memory-mapped and checked.
#[derive(Debug)]
pub struct ChipTable {
    /// Registered with the SIGBUS handler ([`crate::mapguard`]); dropped before the map.
    guard: crate::mapguard::Guard,
    map: Mmap,
    total: Total,
    material: Material,
    board: Board,
    positions: usize,
    keys_crc: u32,
}

impl ChipTable {
    /// Whether a read of this file's map faulted: it was truncated in place
    /// ([`crate::mapguard`]).
    pub fn poisoned(&self) -> bool {
        self.guard.poisoned()
    }

    /// Open and check a chip file.
    pub fn open(path: &Path) -> Result<ChipTable, Error> {
        let bad = |reason: String| Error::Table {
            path: path.display().to_string(),
            reason,
        };
        let (file, len) = open_regular(path)?;
        if len < HEADER_LEN as u64 {
            return Err(bad(format!(
                "truncated: {len} bytes, shorter than a chip file's header"
            )));
        }
        // SAFETY: read-only and private; files are replaced by rename, never modified in
        // place (docs/src/format.md, "Memory maps: the contract").
        let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        // The container's errors are typed; a chip file's are text.
        let field = |e: Corruption| bad(e.into());
        let mut f = Fields::check(&map[..HEADER_LEN], MAGIC, &[VERSION], "chip").map_err(field)?;
        let (files, ranks) = (f.u8().map_err(field)?, f.u8().map_err(field)?);
        f.u8().map_err(field)?;
        f.u8().map_err(field)?;
        let board = Board::new(files, ranks).map_err(|e| bad(e.to_string()))?;
        let name = f.bytes(NAME_LEN).map_err(field)?;
        let name = std::str::from_utf8(name)
            .map_err(|_| bad("the material's name is not text".into()))?
            .trim_end_matches('\0');
        let material: Material = name.parse().map_err(|e: Error| bad(e.to_string()))?;
        let k = f.u32().map_err(field)?;
        if !(1..=super::MAX_TOTAL).contains(&k) {
            return Err(bad(format!("a chip total of {k}")));
        }
        let positions = f.u64().map_err(field)?;
        let keys_crc = f.u32().map_err(field)?;
        let body_len = f.u64().map_err(field)?;
        let body_crc = f.u32().map_err(field)?;
        if !f.padding_is_zero() {
            return Err(bad("non-zero header padding".into()));
        }
        if positions.checked_mul(4) != Some(body_len)
            || (HEADER_LEN as u64).checked_add(body_len) != Some(map.len() as u64)
        {
            return Err(bad(format!(
                "truncated or extended: {positions} positions, {} bytes",
                map.len()
            )));
        }
        if crc32fast::hash(&map[HEADER_LEN..]) != body_crc {
            return Err(bad("corrupted: the body checksum does not match".into()));
        }
        let total = Total::new_lean(k);
        let none = total.none() as u16;
        let table = ChipTable {
            guard: crate::mapguard::Guard::new(map.as_ptr(), map.len()),
            map,
            total,
            material,
            board,
            positions: positions as usize,
            keys_crc,
        };
        if (0..2 * table.positions).any(|i| table.word(i) > none) {
            return Err(bad(format!("a threshold above {none} (none)")));
        }
        Ok(table)
    }

    fn word(&self, i: usize) -> u16 {
        let at = HEADER_LEN + 2 * i;
        u16::from_le_bytes([self.map[at], self.map[at + 1]])
    }

    /// The thresholds of position `i` (in the value table's order).
    pub fn get(&self, i: usize) -> Thresholds {
        Thresholds {
            win: u32::from(self.word(i)),
            not_lose: u32::from(self.word(self.positions + i)),
        }
    }

    /// The chip total and its holdings.
    pub fn total(&self) -> &Total {
        &self.total
    }

    /// The material.
    pub fn material(&self) -> Material {
        self.material
    }

    /// The board.
    pub fn board(&self) -> Board {
        self.board
    }

    /// The number of positions.
    pub fn len(&self) -> usize {
        self.positions
    }

    /// Whether the file holds no position.
    pub fn is_empty(&self) -> bool {
        self.positions == 0
    }

    /// Whether the file answers for `table` (same board, material and keys) with `total`
    /// chips (an error if the table's keys are damaged).
    pub fn fits(&self, table: &crate::table::Table, total: u32) -> Result<bool, Error> {
        let info = table.info();
        Ok(self.board == info.board
            && self.material == info.material
            && self.total.chips() == total
            && self.positions == table.len()
            && self.keys_crc == table.keys_crc()?)
    }

    /// The CRC-32 of the value table's keys it was made for.
    pub fn keys_crc(&self) -> u32 {
        self.keys_crc
    }
}
