//! The checksums of a table's blocks: a CRC-32 per block of its bytes (version 6: every
//! byte after the header; version 5: the dictionary's, denominators and entries), written
//! as the bytes stream out ([`BlockSums`]) and checked by a reader the first time it
//! touches a block ([`Blocks`]), so that opening a table need not read its positions or
//! its values. The layout is in `docs/src/format.md`, *Checksums*.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use super::source::Source;
use crate::error::{Checksum, Corruption};

/// Bytes per checksummed block, as this build writes them (a reader takes the length the
/// header states): a query checks the blocks it reads instead of the whole file when it
/// opens it (8x8 KNvKP: 21.6 GB of values, most of a minute from disk, and 115 MB of
/// positions, read and checked at every open of a version 5 file). A page: a query of a
/// table of means reads entries scattered over the dictionary (the cones below its values),
/// one block each, and checking 64 KiB blocks, as before, took most of its time (7x7
/// KNvKN: 16 to 25 ms a query with 4 KiB blocks, 17 to 35 ms with 64 KiB).
pub(super) const BLOCK_LEN: usize = 1 << 12;

/// What a version 5 or 6 header states about the blocks.
pub(super) struct StatedBlocks {
    /// CRC-32 of what is checked at open: version 5, the sections before the dictionary's
    /// bytes, then the blocks' checksums; version 6, the blocks' checksums alone.
    pub(super) front_crc: u32,
    /// Bytes per block.
    pub(super) len: u32,
    /// Offset of the blocks' checksums (the end of the dictionary entries).
    pub(super) offset: u64,
    /// The dictionary's bytes in the whole form ([`super::Table::dictionary_size_bytes`]).
    pub(super) whole: u64,
}

/// The blocks of a file's checksummed bytes and their checksums, each block
/// checked the first time a read touches it and remembered as checked: the file must not
/// change while it is open (see `docs/src/format.md`, *Memory maps*).
#[derive(Debug)]
pub(super) struct Blocks {
    /// Where the checksummed bytes start (version 6: after the header; version 5: at the
    /// dictionary) and end (the end of the dictionary).
    pub(super) start: usize,
    pub(super) end: usize,
    /// Bytes per block (the last may be shorter).
    pub(super) len: usize,
    /// Where the blocks' CRC-32s lie (u32 each), to the end of the file.
    pub(super) sums: Range<usize>,
    /// One bit per block: checked.
    pub(super) checked: Box<[AtomicU64]>,
}

impl Blocks {
    /// The blocks a header states for a file image of `bytes`, whose checksummed bytes start
    /// at `start` and whose dictionary entries start at `entries` (not after the stated
    /// end).
    pub(super) fn stated(
        stated: &StatedBlocks,
        start: usize,
        entries: usize,
        bytes: &[u8],
    ) -> Result<Blocks, Corruption> {
        let end = usize::try_from(stated.offset)
            .ok()
            .filter(|&end| end >= entries && end <= bytes.len())
            .ok_or(Corruption::BlocksOutside)?;
        let len = stated.len as usize;
        if len == 0 {
            return Err(Corruption::BlocksEmpty);
        }
        let count = (end - start).div_ceil(len);
        if end + 4 * count != bytes.len() {
            return Err(Corruption::BlocksFill);
        }
        Ok(Blocks {
            start,
            end,
            len,
            sums: end..bytes.len(),
            checked: (0..count.div_ceil(64)).map(|_| AtomicU64::new(0)).collect(),
        })
    }

    /// How many blocks there are.
    pub(super) fn count(&self) -> usize {
        (self.end - self.start).div_ceil(self.len)
    }

    /// Check block `b` of `map` against its checksum, and mark it checked; returns the
    /// block's hasher (for the body's checksum).
    pub(super) fn check_block(
        &self,
        map: &Source,
        b: usize,
    ) -> Result<crc32fast::Hasher, Corruption> {
        let from = self.start + b * self.len;
        let to = (from + self.len).min(self.end);
        // The whole block is about to be read: ask for it in one request. A table read
        // in no order (`advise_random`, a job's exits) would otherwise fault it in a page
        // at a time (the ninth whole 8x8 run: 7.3 million major faults, KPvKP's exits
        // 538 s against 84).
        map.will_need(from..to);
        let at = self.sums.start + 4 * b;
        let stated = u32::from_le_bytes(map[at..at + 4].try_into().expect("4"));
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&map[from..to]);
        if hasher.clone().finalize() != stated {
            return Err(Corruption::Checksum(Checksum::Block {
                index: b,
                bytes: from..to,
            }));
        }
        self.checked[b / 64].fetch_or(1 << (b % 64), Ordering::Relaxed);
        Ok(hasher)
    }

    /// Check the blocks that bytes `range` of `map` (inside the checksummed bytes) lie in,
    /// those not checked before.
    pub(super) fn check(&self, map: &Source, range: &Range<usize>) -> Result<(), Corruption> {
        if range.is_empty() {
            return Ok(());
        }
        let first = (range.start - self.start) / self.len;
        let last = (range.end - 1 - self.start) / self.len;
        for b in first..=last {
            if self.checked[b / 64].load(Ordering::Relaxed) & (1 << (b % 64)) == 0 {
                self.check_block(map, b)?;
            }
        }
        Ok(())
    }
}

/// The CRC-32s of consecutive blocks of a stream of bytes, the last one possibly short,
/// and the CRC-32 of the whole stream, combined from the blocks' (each byte hashed once).
pub(super) struct BlockSums {
    len: usize,
    hasher: crc32fast::Hasher,
    filled: usize,
    sums: Vec<u32>,
    whole: crc32fast::Hasher,
}

impl BlockSums {
    pub(super) fn new(len: usize) -> BlockSums {
        BlockSums {
            len,
            hasher: crc32fast::Hasher::new(),
            filled: 0,
            sums: Vec::new(),
            whole: crc32fast::Hasher::new(),
        }
    }

    /// The stream's next bytes.
    pub(super) fn update(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let take = (self.len - self.filled).min(bytes.len());
            self.hasher.update(&bytes[..take]);
            self.filled += take;
            bytes = &bytes[take..];
            if self.filled == self.len {
                let full = std::mem::replace(&mut self.hasher, crc32fast::Hasher::new());
                self.whole.combine(&full);
                self.sums.push(full.finalize());
                self.filled = 0;
            }
        }
    }

    /// The sums of every block, the last short one included, and the whole stream's
    /// hasher.
    pub(super) fn finish(mut self) -> (Vec<u32>, crc32fast::Hasher) {
        if self.filled > 0 {
            self.whole.combine(&self.hasher);
            self.sums.push(self.hasher.finalize());
        }
        (self.sums, self.whole)
    }
}
