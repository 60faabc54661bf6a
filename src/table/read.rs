//! Reading a table file: [`Table`] opens a file, validates it (see the module comment of
//! [`crate::table`] for what is checked) and answers zero-copy from its memory map;
//! [`ReadOnce`] decodes a table's values one at a time, each once.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use memmap2::Mmap;
use num_bigint::BigUint;
use rayon::prelude::*;
use zerocopy::FromBytes;
use zerocopy::little_endian::{U32, U64};

use crate::container::{Fields, PREFIX_LEN, open_regular};
use crate::error::{Checksum, Corruption, Error};
use crate::value::Value;
use crate::value::hints::{Hint, mean_hinted};
use crate::value::shared::Denominators;

use super::blocks::Blocks;
use super::dictionary::{self, Entry, MIN_ENTRY};
use super::header::*;
use super::means::MAX_MEAN_DEPTH;
use super::source::Source;

/// An open, validated table file: memory-mapped ([`Table::open`], [`Table::map`]) or in
/// memory ([`Table::from_bytes`]).
#[derive(Debug)]
pub struct Table {
    pub(super) path: PathBuf,
    /// The file's bytes, mapped or in memory.
    pub(super) bytes: Source,
    pub(super) info: TableInfo,
    pub(super) layout: Layout,
    /// [`Table::dictionary_size_bytes`].
    pub(super) whole_dictionary_bytes: usize,
    /// The body's CRC-32 as the header states it.
    pub(super) body_crc: u32,
    /// Versions 5 and 6: the blocks, checked as they are read (older versions' bodies are
    /// checked whole at open).
    pub(super) blocks: Option<Blocks>,
    /// Version 6: the positions' sections and the indexes are in the blocks too, read
    /// unchecked at open; their structure (increasing keys, ranks inside the dictionary,
    /// offsets that grow) is checked where a read touches it, and whole by
    /// [`Table::check_all`].
    pub(super) positions_in_blocks: bool,
    /// Where the dictionary's bytes (denominators, then entries) start and end.
    pub(super) dictionary: Range<usize>,
    /// Version 7: the means decoded so far, for every reader of the table (a probe's
    /// values share most of the means below them).
    means: Mutex<Means>,
}

/// A dictionary entry stored as the mean of entries `a` and `b`, with its hint if it has one.
#[derive(Clone, Copy, Debug)]
pub(super) struct MeanOf {
    pub(super) a: usize,
    pub(super) b: usize,
    pub(super) hint: Option<Hint>,
}

/// Decoded means, up to [`Means::BUDGET`] bytes of digits (then forgotten, all at once),
/// and those pinned by [`Table::pin_mean`] (never forgotten).
#[derive(Debug, Default)]
struct Means {
    values: HashMap<usize, Value>,
    bytes: usize,
    pinned: HashMap<usize, Value>,
    pinned_bytes: usize,
}

impl Means {
    /// The digits held at most.
    const BUDGET: usize = 256 << 20;

    fn get(&self, k: usize) -> Option<Value> {
        self.pinned.get(&k).or_else(|| self.values.get(&k)).cloned()
    }

    /// The bytes `v` is counted at.
    fn size(v: &Value) -> usize {
        (v.numer_bits() as usize + v.shared_odd().bits() as usize) / 8 + 64
    }

    fn keep(&mut self, k: usize, v: &Value) {
        let bytes = Self::size(v);
        if self.bytes + bytes > Self::BUDGET {
            self.values.clear();
            self.bytes = 0;
        }
        if self.values.insert(k, v.clone()).is_none() {
            self.bytes += bytes;
        }
    }

    fn pin(&mut self, k: usize, v: &Value, budget: usize) -> bool {
        let bytes = Self::size(v);
        if self.pinned.contains_key(&k) {
            return true;
        }
        if self.pinned_bytes + bytes > budget {
            return false;
        }
        self.pinned.insert(k, v.clone());
        self.pinned_bytes += bytes;
        true
    }
}

impl Table {
    /// Whether a read of this table's map faulted because its file was truncated in place
    /// (see [`crate::mapguard`]): its bytes can no longer be trusted.
    pub fn poisoned(&self) -> bool {
        self.bytes.poisoned()
    }

    /// Open and validate a table file (see the module comment for what is checked),
    /// memory-mapped ([`Table::map`]). The file must not be modified in place while it is
    /// open (`docs/src/format.md`, *Memory maps: the contract*).
    pub fn open(path: impl AsRef<Path>) -> Result<Table, Error> {
        // SAFETY: tables are opened from the program's own tables directory, where bidtb
        // never writes a file in place: it writes a table (and `upgrade` rewrites one) to a
        // temporary file and renames it over the old one, which leaves an existing map of
        // the old file intact. The documented contract (`docs/src/format.md`, *Memory maps:
        // the contract*) asks the same of anyone else who puts tables there; a table
        // truncated in place while it is open would end the process with SIGBUS at the
        // next read past its new end.
        unsafe { Table::map(path) }
    }

    /// Open a table file ([`Table::open`]) that must hold certified values of `material`
    /// on `board`: a table of another material or board, or one whose values are not
    /// certified, is an [`Error::Table`] saying which.
    pub fn open_certified(
        path: impl AsRef<Path>,
        board: crate::geometry::Board,
        material: crate::material::Material,
    ) -> Result<Table, Error> {
        let path = path.as_ref();
        let t = Table::open(path)?;
        let info = t.info();
        let wrong = |why: String| Error::Table {
            path: path.display().to_string(),
            reason: why,
        };
        if info.board != board || info.material != material {
            return Err(wrong(format!(
                "holds {} on {}, not {material} on {board}",
                info.material, info.board
            )));
        }
        if !info.certified() {
            return Err(wrong("its values are not certified".into()));
        }
        Ok(t)
    }

    /// Map a table file into memory, read-only, and validate it exactly as
    /// [`Table::from_bytes`] validates bytes in memory; reads then go to the map, never
    /// copying it.
    ///
    /// # Safety
    ///
    /// The file must not change while the returned table lives: nobody may write to it,
    /// truncate it or extend it in place (replacing it by rename is fine: the map keeps the
    /// old file). The table validates the file's bytes once, when it opens it (a version 6
    /// block, or a version 5 dictionary block, when it is first read), and then trusts them: bytes changed under
    /// the map are not validated again, and a read past the end of a file truncated in
    /// place raises SIGBUS, which ends the process.
    pub unsafe fn map(path: impl AsRef<Path>) -> Result<Table, Error> {
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
        if len < (PREFIX_LEN + 4) as u64 {
            return Err(Error::Corrupt {
                path: path.display().to_string(),
                corruption: Corruption::ShorterThanPrefix { len, kind: "table" },
            });
        }
        // SAFETY: the map is read-only and private to this process, and the caller
        // promises that the file does not change while it is mapped.
        let map = unsafe { Mmap::map(&file) }.map_err(|e| Error::io(path, e))?;
        Table::validated(path, Source::mapped(map))
    }

    /// A table over bytes in memory, the image of a table file, validated exactly as
    /// [`Table::map`] validates a file; `path` is the name its errors and [`Table::path`]
    /// give. Safe whatever the bytes: a fuzz test feeds it damaged files.
    pub fn from_bytes(path: impl AsRef<Path>, bytes: Vec<u8>) -> Result<Table, Error> {
        Table::validated(path.as_ref(), Source::Memory(bytes.into_boxed_slice()))
    }

    /// Validate `bytes`, the image of the table file at `path`.
    fn validated(path: &Path, bytes: Source) -> Result<Table, Error> {
        let bad = |corruption: Corruption| Error::Corrupt {
            path: path.display().to_string(),
            corruption,
        };
        if bytes.len() < PREFIX_LEN + 4 {
            return Err(bad(Corruption::ShorterThanPrefix {
                len: bytes.len() as u64,
                kind: "table",
            }));
        }
        let v = validate(&bytes).map_err(bad)?;
        Ok(Table {
            path: path.to_path_buf(),
            bytes,
            positions_in_blocks: v.info.version >= ALL_IN_BLOCKS,
            info: v.info,
            layout: v.layout,
            whole_dictionary_bytes: v.whole,
            body_crc: v.body_crc,
            blocks: v.blocks,
            dictionary: v.dictionary,
            means: Mutex::default(),
        })
    }

    /// Check every checksum of the file, and (version 6) the structure of its sections: a
    /// version 6 table's bytes, and a version 5 table's dictionary, are otherwise checked
    /// block by block as they are read (older versions are checked whole at open, and
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
            .map(|b| blocks.check_block(&self.bytes, b))
            .collect::<Result<Vec<crc32fast::Hasher>, Corruption>>()
            .map_err(|c| self.corrupted(c))?;
        let mut body = crc32fast::Hasher::new();
        body.update(&self.bytes[HEADER_LEN..blocks.start]);
        for s in &sums {
            body.combine(s);
        }
        body.update(&self.bytes[blocks.sums.clone()]);
        if body.finalize() != self.body_crc {
            return Err(self.corrupted(Corruption::Checksum(Checksum::BodyOverBlocks)));
        }
        if self.positions_in_blocks {
            check_sections(&self.bytes, &self.layout, &self.info, self.dictionary.end)
                .map_err(|c| self.corrupted(c))?;
        }
        if self.info.version >= FIRST_MEANS {
            self.check_means()?;
        }
        Ok(())
    }

    /// Version 7: every mean entry names two other entries, and no chain of means is
    /// longer than [`MAX_MEAN_DEPTH`] or comes back to where it started.
    fn check_means(&self) -> Result<(), Error> {
        let len = self.info.dictionary_len;
        let pick = (0..len)
            .into_par_iter()
            .map(|k| {
                let m = self.mean_of(k, self.dictionary_entry(k)?, 0)?;
                Ok(m.map(|m| (m.a as u32, m.b as u32)))
            })
            .collect::<Result<Vec<_>, Error>>()?;
        match super::means::longest_chain(&pick) {
            Ok((depth, _)) if depth < MAX_MEAN_DEPTH => Ok(()),
            Ok((_, head)) | Err(head) => Err(self.corrupted(Corruption::Mean(head))),
        }
    }

    /// An error naming this file.
    pub(super) fn corrupted(&self, corruption: Corruption) -> Error {
        Error::Corrupt {
            path: self.path.display().to_string(),
            corruption,
        }
    }

    /// Bytes `range` of the dictionary (denominators and entries), their blocks checked.
    /// A range outside the dictionary is refused, never read.
    fn dictionary_bytes(&self, range: Range<usize>) -> Result<&[u8], Error> {
        if range.start < self.dictionary.start || range.end > self.dictionary.end {
            return Err(self.corrupted(Corruption::DictionaryIndex));
        }
        self.checked(range)
    }

    /// Bytes `range` of the file (inside its sections), their blocks checked where they are
    /// checked as they are read.
    fn checked(&self, range: Range<usize>) -> Result<&[u8], Error> {
        if let Some(blocks) = &self.blocks
            && range.start >= blocks.start
        {
            blocks
                .check(&self.bytes, &range)
                .map_err(|c| self.corrupted(c))?;
        }
        Ok(&self.bytes[range])
    }

    /// An error for a read past the last position or entry: not a fault of the file, the
    /// caller asked for something the table does not have.
    fn no_such(&self, what: &str, n: usize) -> Error {
        Error::Table {
            path: self.path.display().to_string(),
            reason: format!("no {what} {n}"),
        }
    }

    /// Word `i` of a section of one `u32` a position, its block checked.
    fn word(&self, section: &Range<usize>, i: usize) -> Result<u32, Error> {
        if i >= self.info.positions {
            return Err(self.no_such("position", i));
        }
        let at = section.start + 4 * i;
        let b = self.checked(at..at + 4)?;
        Ok(u32::from_le_bytes(b.try_into().expect("4")))
    }

    /// Offsets `k` and `k + 1` of an index section (`u64` each), their blocks checked, if
    /// they lie in it, and if they grow by at least `min` and end at most at `end` (else
    /// `bad`).
    fn offsets(
        &self,
        index: &Range<usize>,
        k: usize,
        min: u64,
        end: usize,
        bad: Corruption,
    ) -> Result<Option<Range<usize>>, Error> {
        let at = index.start + 8 * k;
        if at + 16 > index.end {
            return Ok(None);
        }
        let b = self.checked(at..at + 16)?;
        let word = |w: &[u8]| u64::from_le_bytes(w.try_into().expect("8"));
        let (from, to) = (word(&b[..8]), word(&b[8..]));
        if to < from.saturating_add(min) || to > end as u64 {
            return Err(self.corrupted(bad));
        }
        Ok(Some(from as usize..to as usize))
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
    /// A table in memory ([`Table::from_bytes`]) has nothing to let go of.
    pub fn release_pages(&self) {
        self.bytes.release_pages();
    }

    /// Tell the system that this table's pages will be read in no order (a job's exits
    /// into a large table), so that a fault reads the page asked for rather than the
    /// pages around it: 8x8 KNvKP reads its exits' values out of KNvKN's 11.3 GB table,
    /// and beside other work, with the table larger than the page cache left to it, it
    /// read 950 GB from disk in 13 minutes with the default read-ahead, the pages read
    /// around each entry evicted before they were used. Nothing for a table in memory.
    pub fn advise_random(&self) {
        self.bytes.advise_random();
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

    /// The local index of the position with canonical key `key`, if stored: a binary
    /// search, each key it reads checked.
    pub fn find(&self, key: u64) -> Result<Option<usize>, Error> {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let mid = low + (high - low) / 2;
            match self.key(mid)?.cmp(&key) {
                std::cmp::Ordering::Less => low = mid + 1,
                std::cmp::Ordering::Greater => high = mid,
                std::cmp::Ordering::Equal => return Ok(Some(mid)),
            }
        }
        Ok(None)
    }

    /// The CRC-32 of the keys section: which positions the table holds, in which order
    /// (files indexed like the table, such as the chip tables, are bound to it).
    pub fn keys_crc(&self) -> Result<u32, Error> {
        Ok(crc32fast::hash(self.checked(self.layout.keys.clone())?))
    }

    /// Whether the table's positions are exactly `keys`, in order (the indexed positions
    /// of its material): a reader that walks positions by index checks this first.
    pub fn holds_keys(&self, keys: &[u64]) -> Result<bool, Error> {
        if self.len() != keys.len() {
            return Ok(false);
        }
        for (i, &key) in keys.iter().enumerate() {
            if self.key(i)? != key {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The canonical key of position `i`.
    pub fn key(&self, i: usize) -> Result<u64, Error> {
        if self.layout.key_width == 4 {
            return self.word(&self.layout.keys, i).map(u64::from);
        }
        if i >= self.info.positions {
            return Err(self.no_such("position", i));
        }
        let at = self.layout.keys.start + 8 * i;
        let b = self.checked(at..at + 8)?;
        Ok(u64::from_le_bytes(b.try_into().expect("8")))
    }

    /// The rank of position `i`'s value in the dictionary (ranks compare like values).
    pub fn rank(&self, i: usize) -> Result<u32, Error> {
        let rank = self.word(&self.layout.ranks, i)?;
        if rank as usize >= self.info.dictionary_len {
            return Err(self.corrupted(Corruption::Ranks));
        }
        Ok(rank)
    }

    /// Position `i`'s level in White's closure T ([`UNREACHED`] outside it).
    pub fn level_white(&self, i: usize) -> Result<u32, Error> {
        self.word(&self.layout.levels_white, i)
    }

    /// Position `i`'s level in Black's closure T′.
    pub fn level_black(&self, i: usize) -> Result<u32, Error> {
        self.word(&self.layout.levels_black, i)
    }

    /// The rank of position `i`'s β in the dictionary (its α rank where no β is stored).
    pub fn rank_beta(&self, i: usize) -> Result<u32, Error> {
        self.ranks(i).map(|(_, beta)| beta)
    }

    /// Position `i`'s α and β ranks, α's read once (β's is α's where no β is stored).
    pub fn ranks(&self, i: usize) -> Result<(u32, u32), Error> {
        let alpha = self.rank(i)?;
        let Some(range) = &self.layout.ranks_beta else {
            return Ok((alpha, alpha));
        };
        let beta = self.word(range, i)?;
        // Ranks compare like values, so α ≤ β is a comparison of ranks.
        if beta as usize >= self.info.dictionary_len || beta < alpha {
            return Err(self.corrupted(Corruption::BetaRanks));
        }
        Ok((alpha, beta))
    }

    /// The exact value of position `i`: α, which is the value where α = β.
    pub fn value(&self, i: usize) -> Result<Value, Error> {
        self.dictionary_value(self.rank(i)? as usize)
    }

    /// The exact β of position `i`, if it differs from α.
    pub fn beta_if_above(&self, i: usize) -> Result<Option<Value>, Error> {
        let (a, b) = self.ranks(i)?;
        if a == b {
            return Ok(None);
        }
        self.dictionary_value(b as usize).map(Some)
    }

    /// Every position's α rank (`beta` false) or β rank (α's where no β is stored), in
    /// position order, their blocks checked and each inside the dictionary: for a reader
    /// of every position (`bidtb verify`).
    pub fn all_ranks(&self, beta: bool) -> Result<&[U32], Error> {
        let (range, bad) = match (&self.layout.ranks_beta, beta) {
            (Some(range), true) => (range, Corruption::BetaRanks),
            _ => (&self.layout.ranks, Corruption::Ranks),
        };
        let ranks = <[U32]>::ref_from_bytes(self.checked(range.clone())?).expect("sized");
        if ranks
            .iter()
            .any(|r| r.get() as usize >= self.info.dictionary_len)
        {
            return Err(self.corrupted(bad));
        }
        Ok(ranks)
    }

    /// Positions whose β lies above their α (0 where no β is stored).
    pub fn alpha_below_beta(&self) -> Result<usize, Error> {
        let Some(range) = &self.layout.ranks_beta else {
            return Ok(0);
        };
        let words = |range: &Range<usize>| -> Result<&[U32], Error> {
            Ok(<[U32]>::ref_from_bytes(self.checked(range.clone())?).expect("sized"))
        };
        Ok(words(range)?
            .iter()
            .zip(words(&self.layout.ranks)?)
            .filter(|(b, a)| b.get() != a.get())
            .count())
    }

    /// Dictionary entry `k` (the k-th smallest distinct value), in lowest terms. Entries of
    /// up to [`REDUCED_BITS`] bits are reduced again here (a gcd of that size costs about a
    /// microsecond); longer ones are taken as stored: a gcd of two numbers of thousands of
    /// digits costs about 150 µs and a probe reads some forty values (8x8 KBNvK, 3,531
    /// digits: 11.7 ms a probe with the gcd). The checksums guard the stored form against
    /// damage and `bidtb verify` checks that every entry is in lowest terms; a forged long
    /// entry out of lowest terms would still be the right number, printed unreduced.
    pub fn dictionary_value(&self, k: usize) -> Result<Value, Error> {
        Ok(as_read(self.dictionary_value_as_stored(k)?))
    }

    /// Bytes of the dictionary with every value whole, as versions 1 to 3 store it (a
    /// length word, the numerator and the denominator of each entry): what its values
    /// take decoded, whatever the file's version.
    pub fn dictionary_size_bytes(&self) -> usize {
        self.whole_dictionary_bytes
    }

    /// Dictionary entry `k` exactly as stored: the generator stores lowest terms, and
    /// `bidtb verify` checks that it did.
    /// A version 7 entry stored as the mean of two others is decoded from them, in lowest
    /// terms (the entries stored whole are, and the mean is reduced).
    pub fn dictionary_value_as_stored(&self, k: usize) -> Result<Value, Error> {
        self.entry_value(k, &mut HashMap::new(), 0)
    }

    /// Entry `k` as [`Table::dictionary_value_as_stored`] gives it, `memo` holding the
    /// means decoded so far, `depth` means above it.
    fn entry_value(
        &self,
        k: usize,
        memo: &mut HashMap<usize, Value>,
        depth: usize,
    ) -> Result<Value, Error> {
        if k >= self.info.dictionary_len {
            return Err(self.no_such("dictionary entry", k));
        }
        if let Some(v) = memo.get(&k) {
            return Ok(v.clone());
        }
        let entry = self.dictionary_entry(k)?;
        if let Some(m) = self.mean_of(k, entry, depth)? {
            if let Some(v) = self.lock_means().get(k) {
                return Ok(v);
            }
            let v = self.decode_mean(k, m, |h| self.entry_value(h, memo, depth + 1))?;
            memo.insert(k, v.clone());
            self.lock_means().keep(k, &v);
            return Ok(v);
        }
        let value = match self.layout.denominators_index {
            None => dictionary::decode_whole(entry),
            Some(_) => match dictionary::denominator_number(entry) {
                Some(n) => self
                    .denominator_bytes(n as usize)?
                    .and_then(|denominator| dictionary::decode_shared(entry, denominator)),
                None => None,
            },
        };
        value.ok_or_else(|| self.corrupted(Corruption::Entry(k)))
    }

    /// Every dictionary entry as stored, in order, each distinct denominator held once
    /// (version 4 stores it once; older versions' entries are shared as they are read):
    /// what the generator keeps of a table it reads whole.
    pub fn dictionary_values(&self) -> Result<Vec<Value>, Error> {
        let len = self.info().dictionary_len;
        if self.layout.denominators_index.is_none() {
            let mut values = (0..len)
                .into_par_iter()
                .map(|k| self.dictionary_value_as_stored(k))
                .collect::<Result<Vec<_>, Error>>()?;
            Denominators::new().share_all(&mut values);
            return Ok(values);
        }
        if self.info.version >= FIRST_MEANS {
            // Each mean decoded once from its halves, whole entries' denominators shared.
            let once = ReadOnce::new(self);
            return (0..len)
                .into_par_iter()
                .map(|k| once.value(self, k))
                .collect();
        }
        let denominators: Vec<(Arc<BigUint>, u32)> = (0..self.denominators_len())
            .into_par_iter()
            .map(|n| Ok(self.denominator(n)?.expect("one of the list")))
            .collect::<Result<_, Error>>()?;
        (0..len)
            .into_par_iter()
            .map(|k| self.dictionary_value_on(k, |n| Ok(denominators.get(n).cloned())))
            .collect()
    }

    /// The number of distinct denominators the dictionary stores (version 4 on; 0 before,
    /// where each entry holds its own).
    pub fn denominators_len(&self) -> usize {
        self.layout
            .denominators_index
            .as_ref()
            .map_or(0, |o| (o.len() / 8).saturating_sub(1))
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
        let bad = || self.corrupted(Corruption::Entry(k));
        if k >= self.info.dictionary_len {
            return Err(bad());
        }
        let entry = self.dictionary_entry(k)?;
        let Some(n) = dictionary::denominator_number(entry) else {
            return Err(bad());
        };
        if self.mean_of(k, entry, 0)?.is_some() {
            return self.dictionary_value_as_stored(k);
        }
        denominator(n as usize)?
            .and_then(|d| dictionary::decode_with(entry, &d))
            .ok_or_else(bad)
    }

    /// The number of the shared denominator dictionary entry `k` names (version 4 on; None
    /// for older versions, whose entries hold their own, or for no such entry). Entries
    /// with one number have one denominator.
    pub fn dictionary_denominator_number(&self, k: usize) -> Result<Option<u32>, Error> {
        if self.layout.denominators_index.is_none() || k >= self.info.dictionary_len {
            return Ok(None);
        }
        Ok(dictionary::denominator_number(self.dictionary_entry(k)?))
    }

    /// How many dictionary entries are stored as the mean of two others (version 7; 0
    /// before). Reads every entry's first word.
    pub fn means_len(&self) -> Result<usize, Error> {
        if self.info.version < FIRST_MEANS {
            return Ok(0);
        }
        (0..self.info.dictionary_len)
            .into_par_iter()
            .map(|k| Ok(self.mean_of(k, self.dictionary_entry(k)?, 0)?.is_some() as usize))
            .sum()
    }

    /// Hold mean `k`'s value `v` (as [`Table::dictionary_value_as_stored`] decodes it) for
    /// every later decoding of this table, while the means pinned so take at most `budget`
    /// bytes of digits; whether it is held. For a tool that reads the means without a hint
    /// again and again after a walk has decoded them once ([`Table::walk`]): each costs
    /// long gcds, and the reader's own cache, cleared when full, lost them (on 8x8 KNvKP
    /// `verify` spent 80 % of its equations in those gcds).
    pub(crate) fn pin_mean(&self, k: usize, v: &Value, budget: usize) -> bool {
        self.lock_means().pin(k, v, budget)
    }

    /// Let go of every decoded mean, those pinned ([`Table::pin_mean`]) and those cached:
    /// for a table kept open after the work that pinned them (`verify` keeps each table
    /// open while it checks the materials that lead to it, and pins held that way added
    /// up, table after table). Later reads decode again as needed.
    pub(crate) fn forget_means(&self) {
        *self.lock_means() = Means::default();
    }

    /// The bytes of digits the pinned means take ([`Table::pin_mean`]).
    #[cfg(test)]
    pub(crate) fn pinned_bytes(&self) -> usize {
        self.lock_means().pinned_bytes
    }

    /// The means decoded so far (a panic elsewhere leaves them as valid as before).
    fn lock_means(&self) -> std::sync::MutexGuard<'_, Means> {
        self.means.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Version 7 on: the mean entry `k` (whose bytes are `entry`, `depth` means below the
    /// entry being decoded) is stored as, if it is one; an error if it does not name two
    /// other entries, or the chain is longer than a writer makes.
    pub(super) fn mean_of(
        &self,
        k: usize,
        entry: &[u8],
        depth: usize,
    ) -> Result<Option<MeanOf>, Error> {
        if self.info.version < FIRST_MEANS {
            return Ok(None);
        }
        let bad = |c| Err(self.corrupted(c));
        match dictionary::entry_kind(entry) {
            Entry::Malformed => bad(Corruption::Entry(k)),
            Entry::Whole => Ok(None),
            Entry::Mean(a, b, hint) => {
                let (a, b) = (a as usize, b as usize);
                let len = self.info.dictionary_len;
                if a >= len || b >= len || a == k || b == k || depth >= MAX_MEAN_DEPTH {
                    return bad(Corruption::Mean(k));
                }
                Ok(Some(MeanOf { a, b, hint }))
            }
        }
    }

    /// Entry `k`, stored as the mean `m`, from its halves' values as `half` gives them: with
    /// the mean's hint where it has one ([`mean_hinted`], no gcd), else reduced by a gcd. A
    /// hint that does not hold is [`Corruption::Mean`].
    pub(super) fn decode_mean(
        &self,
        k: usize,
        m: MeanOf,
        mut half: impl FnMut(usize) -> Result<Value, Error>,
    ) -> Result<Value, Error> {
        let (x, y) = (half(m.a)?, half(m.b)?);
        match m.hint {
            None => Ok(crate::value::arith::mean(&x, &y)),
            Some(hint) => {
                mean_hinted(&x, &y, hint).ok_or_else(|| self.corrupted(Corruption::Mean(k)))
            }
        }
    }

    /// The bytes of dictionary entry `k` (which must exist), their blocks checked.
    pub(super) fn dictionary_entry(&self, k: usize) -> Result<&[u8], Error> {
        let start = self.layout.dictionary_bytes;
        let range = self
            .offsets(
                &self.layout.dictionary_index,
                k,
                MIN_ENTRY,
                self.dictionary.end - start,
                Corruption::DictionaryIndex,
            )?
            .ok_or_else(|| self.no_such("dictionary entry", k))?;
        self.dictionary_bytes(start + range.start..start + range.end)
    }

    /// Version 4 on: the bytes of denominator `n`, their blocks checked (None past the
    /// last, or before version 4).
    fn denominator_bytes(&self, n: usize) -> Result<Option<&[u8]>, Error> {
        let (Some(index), Some(area)) = (
            self.layout.denominators_index.as_ref(),
            self.layout.denominators_bytes.as_ref(),
        ) else {
            return Ok(None);
        };
        let Some(range) = self.offsets(index, n, 1, area.len(), Corruption::DenominatorsIndex)?
        else {
            return Ok(None);
        };
        self.dictionary_bytes(area.start + range.start..area.start + range.end)
            .map(Some)
    }
}

/// A table's values read one at a time (a job's exits, from a dictionary too large to
/// decode whole), each distinct value and each denominator decoded once: exits that share a
/// value, α and β where they agree included, share its digits. Entries are as stored
/// ([`Table::dictionary_value_as_stored`]).
pub struct ReadOnce {
    denominators: Vec<OnceLock<(Arc<BigUint>, u32)>>,
    values: Vec<OnceLock<Value>>,
    /// Every entry's shadow, once [`ReadOnce::ready_to_glance`] has found them.
    shadows: OnceLock<Vec<f64>>,
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
            shadows: OnceLock::new(),
        }
    }

    /// Where `table` stores means: find every entry's shadow now ([`Table::shadows`]: a
    /// mean's from its halves', within [`super::SHADOWS_WITHIN`]), so that
    /// [`ReadOnce::shadow`] costs a lookup. A glance at a mean otherwise decodes the mean
    /// and its cone through the table's own cache of means, again for each glance where
    /// the cones do not fit it (8x8 KNvKP's exits into KNvKN: 448 s). Tables of whole
    /// entries are read entry by entry as before. Call it before glancing from many
    /// threads (not from inside a parallel loop that glances).
    pub fn ready_to_glance(&self, table: &Table) -> Result<(), Error> {
        if table.info.version < FIRST_MEANS || self.shadows.get().is_some() {
            return Ok(());
        }
        let all = table.shadows()?;
        let _ = self.shadows.set(all);
        Ok(())
    }

    /// The shadow of dictionary entry `k` of `table` (the table this was made for): looked
    /// up once [`ReadOnce::ready_to_glance`] has run, else decoded from the file and let go.
    pub fn shadow(&self, table: &Table, k: usize) -> Result<f64, Error> {
        match self.shadows.get() {
            Some(all) => all
                .get(k)
                .copied()
                .ok_or_else(|| table.corrupted(Corruption::Entry(k))),
            None => Ok(table.dictionary_value_as_stored(k)?.to_f64()),
        }
    }

    /// How many distinct values are held decoded.
    pub fn decoded(&self) -> usize {
        self.values.iter().filter(|v| v.get().is_some()).count()
    }

    /// Dictionary entry `k` of `table` (the table this was made for), decoded the first
    /// time it is asked for.
    pub fn value(&self, table: &Table, k: usize) -> Result<Value, Error> {
        self.value_at(table, k, 0)
    }

    /// [`ReadOnce::value`], `depth` means above entry `k`.
    fn value_at(&self, table: &Table, k: usize, depth: usize) -> Result<Value, Error> {
        let Some(cell) = self.values.get(k) else {
            return table.dictionary_value_as_stored(k);
        };
        if let Some(v) = cell.get() {
            return Ok(v.clone());
        }
        if table.info.version >= FIRST_MEANS
            && let Some(m) = table.mean_of(k, table.dictionary_entry(k)?, depth)?
        {
            let v = table.decode_mean(k, m, |h| self.value_at(table, h, depth + 1))?;
            return Ok(cell.get_or_init(|| v).clone());
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

/// An entry's value `v` as stored, as [`Table::dictionary_value`] gives it: reduced again
/// where its denominator has at most [`REDUCED_BITS`] bits.
pub fn as_read(v: Value) -> Value {
    if v.denom().bits() > REDUCED_BITS {
        return v;
    }
    crate::value::arith::reduced(v.numer().into_owned(), v.denom().into_owned())
}

/// The longest denominator (in bits) that [`Table::dictionary_value`] reduces again.
pub const REDUCED_BITS: u64 = 1024;

/// What [`validate`] found: the header's facts, the section layout, the bytes of the
/// dictionary in whole form ([`Table::dictionary_size_bytes`]), the body's checksum, where
/// the dictionary's bytes lie and (versions 5 and 6) the blocks, not yet checked.
struct Validated {
    info: TableInfo,
    layout: Layout,
    whole: usize,
    body_crc: u32,
    blocks: Option<Blocks>,
    dictionary: Range<usize>,
}

/// Check a file image: all of it for versions 1 to 4; for version 5 all but the
/// dictionary's bytes, whose blocks are checked as they are read ([`Blocks`]); for version
/// 6 the header and the blocks' checksums (every section is checked as it is read, and
/// whole by [`Table::check_all`]).
fn validate(bytes: &[u8]) -> Result<Validated, Corruption> {
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
        return Err(Corruption::ShorterThanHeader {
            len: bytes.len() as u64,
            header: header_len,
        });
    }
    let header = &bytes[..header_len];
    let fields = Fields::check(header, MAGIC, &READABLE, "table")?;
    let h = match fields.version {
        1 | 2 => header_v1(fields)?,
        _ => header_v3(fields)?,
    };
    let info = h.info;
    if h.file_len != bytes.len() as u64 {
        return Err(Corruption::Length {
            stated: h.file_len,
            len: bytes.len() as u64,
        });
    }
    let key_width = if info.version >= 3 { 8 } else { 4 };
    // The denominators' bytes run from their stated offset to the entries' stated offset;
    // the layout then checks every offset against the counts.
    let shared = match h.denominators {
        Some(count) => {
            let len = h.offsets[5]
                .checked_sub(h.offsets[8])
                .and_then(|l| usize::try_from(l).ok())
                .ok_or(Corruption::Offsets)?;
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
    .ok_or(Corruption::Sections)?;
    if h.offsets != layout.offsets() {
        return Err(Corruption::Offsets);
    }
    // The dictionary's bytes: the denominators' (version 4 on), then the entries', which
    // run to the blocks' checksums (versions 5 and 6) or to the end of the file.
    let dictionary_start = layout
        .denominators_bytes
        .as_ref()
        .map_or(layout.dictionary_bytes, |d| d.start);
    let (entries_end, blocks) = match &h.blocks {
        None => {
            if h.body_crc != crc32fast::hash(&bytes[h.header_len..]) {
                return Err(Corruption::Checksum(Checksum::Body));
            }
            (bytes.len(), None)
        }
        Some(stated) => {
            let start = if info.version >= ALL_IN_BLOCKS {
                h.header_len
            } else {
                dictionary_start
            };
            let blocks = Blocks::stated(stated, start, layout.dictionary_bytes, bytes)?;
            let mut front = crc32fast::Hasher::new();
            front.update(&bytes[h.header_len..start]);
            front.update(&bytes[blocks.sums.clone()]);
            if front.finalize() != stated.front_crc {
                return Err(Corruption::Checksum(Checksum::Front));
            }
            (blocks.end, Some(blocks))
        }
    };
    if info.version < ALL_IN_BLOCKS {
        check_sections(bytes, &layout, &info, entries_end)?;
    }
    let entries_len = entries_end - layout.dictionary_bytes;
    let whole = match (h.denominators, &h.blocks) {
        // Reading every entry's denominator number would read the whole dictionary:
        // versions 5 and 6 state the sum, and a number outside the list is refused when
        // its entry is decoded.
        (Some(_), Some(stated)) => {
            usize::try_from(stated.whole).map_err(|_| Corruption::DictionaryTooLarge)?
        }
        (Some(count), None) => {
            let index =
                <[U64]>::ref_from_bytes(&bytes[layout.dictionary_index.clone()]).expect("sized");
            let offsets = <[U64]>::ref_from_bytes(
                &bytes[layout.denominators_index.clone().expect("version 4")],
            )
            .expect("sized");
            let entries = &bytes[layout.dictionary_bytes..];
            let mut whole = entries_len;
            for w in index.windows(2) {
                let n = dictionary::denominator_number(&entries[w[0].get() as usize..])
                    .map(|n| n as usize)
                    .filter(|&n| n < count)
                    .ok_or(Corruption::DenominatorNumber)?;
                whole += (offsets[n + 1].get() - offsets[n].get()) as usize;
            }
            whole
        }
        (None, _) => entries_len,
    };
    Ok(Validated {
        info,
        layout,
        whole,
        body_crc: h.body_crc,
        blocks,
        dictionary: dictionary_start..entries_end,
    })
}

/// Check the structure of a file's sections, whose dictionary entries end at
/// `entries_end`: keys increasing inside the key space, ranks inside the dictionary, β's
/// ranks not below α's, and the offsets of the entries and the denominators growing by at
/// least their least length from 0 to their section's end. Reads every position.
fn check_sections(
    bytes: &[u8],
    layout: &Layout,
    info: &TableInfo,
    entries_end: usize,
) -> Result<(), Corruption> {
    let key_space = crate::index::key_space(info.board, info.material);
    let increasing = if layout.key_width == 8 {
        let keys = <[U64]>::ref_from_bytes(&bytes[layout.keys.clone()]).expect("sized");
        keys.windows(2).all(|w| w[0].get() < w[1].get())
            && keys.last().is_none_or(|k| k.get() < key_space)
    } else {
        let keys = <[U32]>::ref_from_bytes(&bytes[layout.keys.clone()]).expect("sized");
        keys.windows(2).all(|w| w[0].get() < w[1].get())
            && keys.last().is_none_or(|k| (k.get() as u64) < key_space)
    };
    if !increasing {
        return Err(Corruption::Keys);
    }
    let words = |r: &Range<usize>| <[U32]>::ref_from_bytes(&bytes[r.clone()]).expect("sized");
    let dictionary_len = info.dictionary_len;
    let ranks = words(&layout.ranks);
    if ranks.iter().any(|r| r.get() as usize >= dictionary_len) {
        return Err(Corruption::Ranks);
    }
    if let Some(range) = &layout.ranks_beta {
        // Ranks compare like values, so α ≤ β is a comparison of ranks.
        if words(range)
            .iter()
            .zip(ranks)
            .any(|(b, a)| b.get() as usize >= dictionary_len || b.get() < a.get())
        {
            return Err(Corruption::BetaRanks);
        }
    }
    let index = <[U64]>::ref_from_bytes(&bytes[layout.dictionary_index.clone()]).expect("sized");
    let entries_len = (entries_end - layout.dictionary_bytes) as u64;
    // Each entry holds at least the length word (or the denominator number) and one byte.
    if !offsets_well_formed(index, MIN_ENTRY, entries_len) {
        return Err(Corruption::DictionaryIndex);
    }
    if let (Some(di), Some(db)) = (&layout.denominators_index, &layout.denominators_bytes) {
        let offsets = <[U64]>::ref_from_bytes(&bytes[di.clone()]).expect("sized");
        if !offsets_well_formed(offsets, 1, db.len() as u64) {
            return Err(Corruption::DenominatorsIndex);
        }
    }
    Ok(())
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
    use crate::table::means::CONE_CAP;
    use crate::table::testing::*;
    use crate::value::arith::mean;
    use num_bigint::BigUint;

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
                assert_eq!(t.key(i).unwrap(), 3 * i as u64 + 1);
                assert_eq!(t.find(3 * i as u64 + 1).unwrap(), Some(i));
                assert_eq!(t.level_white(i).unwrap(), i as u32);
                assert_eq!(t.level_black(i).unwrap(), UNREACHED);
            }
            assert_eq!(t.find(2).unwrap(), None);
            // Ranks follow the values: 0 < 1/3 < 1/2 < big < 1.
            let ranks: Vec<u32> = (0..6).map(|i| t.rank(i).unwrap()).collect();
            assert_eq!(ranks, vec![2, 0, 3, 2, 4, 1]);
            assert_eq!(t.ranks(2).unwrap(), (3, 3));
            // The positions are exactly the keys, in order, or they are not.
            let keys: Vec<u64> = (0..6).map(|i| 3 * i + 1).collect();
            assert!(t.holds_keys(&keys).unwrap());
            assert!(!t.holds_keys(&keys[..5]).unwrap());
            let mut other = keys.clone();
            other[5] += 1;
            assert!(!t.holds_keys(&other).unwrap());
        }
    }

    /// A file image in memory opens, reads and fails exactly as the file does: the same
    /// facts and values, the same errors naming the same file.
    #[test]
    fn bytes_in_memory_are_read_as_the_file_is() {
        let values = [v(1, 2), v(3, 4), v(0, 1), v(5, 8)];
        let bytes = sample_with_beta(&values, Some(&[v(1, 2), v(1, 1), v(0, 1), v(5, 8)]));
        let path = Path::new("somewhere/KRvK.bidtb");
        let t = Table::from_bytes(path, bytes.clone()).unwrap();
        let f = open_bytes(&bytes).unwrap();
        assert_eq!((t.info(), t.path()), (f.info(), path));
        for i in 0..t.len() {
            assert_eq!(t.value(i).unwrap(), f.value(i).unwrap());
            assert_eq!(t.beta_if_above(i).unwrap(), f.beta_if_above(i).unwrap());
        }
        t.release_pages();
        t.advise_random();
        assert!(t.check_all().is_ok());
        let message = |r: Result<Table, Error>| {
            r.unwrap_err()
                .to_string()
                .replace(path.to_str().unwrap(), "P")
        };
        for len in 0..bytes.len() {
            let dir = tempfile::tempdir().unwrap();
            let file = dir.path().join("KRvK.bidtb");
            std::fs::write(&file, &bytes[..len]).unwrap();
            let from_file = Table::open(&file).unwrap_err().to_string();
            assert_eq!(
                message(Table::from_bytes(path, bytes[..len].to_vec())),
                from_file.replace(file.to_str().unwrap(), "P"),
            );
        }
    }

    /// What is wrong with a file is a [`Corruption`] that callers can match on, and says
    /// what it always said.
    #[test]
    fn corruption_is_typed_and_says_what_it_said() {
        let kind = |r: Result<Table, Error>| match r {
            Err(Error::Corrupt { path, corruption }) => {
                assert!(path.ends_with("KRvK.bidtb"), "{path}");
                corruption
            }
            other => panic!("{other:?}"),
        };
        let said = |c: Corruption| c.to_string();
        let values = [v(1, 2), v(3, 4), v(0, 1)];
        let bytes = sample(&values);
        assert_eq!(
            kind(open_bytes(&bytes[..10])),
            Corruption::ShorterThanPrefix {
                len: 10,
                kind: "table"
            }
        );
        assert_eq!(
            said(kind(open_bytes(&bytes[..100]))),
            "truncated: 100 bytes, shorter than the 192-byte header"
        );
        let n = bytes.len() as u64;
        assert_eq!(
            kind(open_bytes(&bytes[..bytes.len() - 1])),
            Corruption::Length {
                stated: n,
                len: n - 1
            }
        );
        let mut b = bytes.clone();
        b[0] ^= 1;
        assert_eq!(
            said(kind(open_bytes(&b))),
            "not a bidtb table file (wrong magic bytes)"
        );
        b = bytes.clone();
        b[HEADER_LEN - 1] ^= 1;
        assert_eq!(kind(open_bytes(&b)), Corruption::Checksum(Checksum::Header));
        let c = kind(open_bytes(&forged(bytes.clone(), HEADER_LEN, 8, 9)));
        assert!(matches!(c, Corruption::Version { version: 9, .. }), "{c:?}");
        assert_eq!(
            said(c),
            "table format version 9, but this bidtb reads version 1, 2, 3, 4, 5, 6, 7, 8 \
             (regenerate the file with this bidtb)"
        );
        // The body of version 4 is checked whole at open; version 5's front sections;
        // version 6's blocks' checksums (its sections as they are read).
        let mut b = encode_v4(&contents(&values, None));
        let last = b.len() - 1;
        b[last] ^= 1;
        let c = kind(open_bytes(&b));
        assert_eq!(c, Corruption::Checksum(Checksum::Body));
        assert_eq!(said(c), "corrupted: the body checksum does not match");
        b = encode_v5(&contents(&values, None));
        b[HEADER_LEN] ^= 1;
        assert_eq!(kind(open_bytes(&b)), Corruption::Checksum(Checksum::Front));
        b = bytes.clone();
        let last = b.len() - 1;
        b[last] ^= 1;
        assert_eq!(kind(open_bytes(&b)), Corruption::Checksum(Checksum::Front));
        b = bytes.clone();
        b[HEADER_LEN] ^= 1;
        let t = open_bytes(&b).unwrap();
        let e = t.key(0).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Corrupt {
                    corruption: Corruption::Checksum(Checksum::Block { index: 0, .. }),
                    ..
                }
            ),
            "{e:?}"
        );
        // Forged past every checksum: the structure's checks.
        let c = kind(open_bytes(&forged(bytes.clone(), HEADER_LEN, 21, b'v')));
        assert!(matches!(c, Corruption::Material(_)), "{c:?}");
        let c = kind(open_bytes(&forged(bytes.clone(), HEADER_LEN, 72, 0xc8)));
        assert!(matches!(c, Corruption::Offsets), "{c:?}");
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

    /// Open a file image, read every position and every dictionary value, each way a
    /// reader does: what a flip anywhere must stop.
    fn open_and_read(bytes: &[u8]) -> Result<Table, Error> {
        let t = open_bytes(bytes)?;
        for i in 0..t.len() {
            let key = t.key(i)?;
            if t.find(key)? != Some(i) {
                return Err(t.no_such("position with key", key as usize));
            }
            t.known(i, &super::super::FromFile)?;
        }
        for k in 0..t.info().dictionary_len {
            t.dictionary_value_as_stored(k)?;
        }
        t.alpha_below_beta()?;
        t.all_ranks(true)?;
        t.keys_crc()?;
        Ok(t)
    }

    /// Every single-byte flip of `bytes` is an error: at open, or (version 6, and version
    /// 5's dictionary) when the position or value it lies in is read, and for
    /// [`Table::check_all`].
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
            encode_v5(&contents(&values, None)),
            encode_v4(&contents(&values, None)),
            encode_v3(&contents(&values[..4], None)),
            encode_legacy(&contents(&[v(1, 2), v(3, 4)], None)),
        ] {
            assert!(open_and_read(&bytes).unwrap().check_all().is_ok());
            every_flip_is_noticed(&bytes);
        }
    }

    /// The image of a table of [`chained`] values with their means (version 8, hinted),
    /// the same without hints (version 7), the same in the 64 KiB blocks of earlier builds,
    /// and the image with every value whole (version 6).
    fn with_means(count: usize) -> (Vec<Value>, Value, [Vec<u8>; 3], Vec<u8>) {
        let (values, outside, triples) = chained(count);
        let at = |i: usize| {
            if i == values.len() {
                &outside
            } else {
                &values[i]
            }
        };
        let mut c = Contents {
            board: crate::geometry::Board::new(8, 8).unwrap(),
            raw_positions: 200_000,
            ..contents(&values, None)
        };
        c.means = triples.iter().map(|t| t.map(at)).collect();
        let means = [
            encode(&c),
            encode_v7(&c),
            encode_blocks(&c, MEANS, EARLIER_BLOCK_LEN),
        ];
        (values.clone(), outside.clone(), means, encode_v6(&c))
    }

    /// The entries of `t` stored as means, and the two each names.
    fn mean_entries(t: &Table) -> Vec<(usize, (usize, usize))> {
        (0..t.info().dictionary_len)
            .filter_map(|k| {
                let m = t.mean_of(k, t.dictionary_entry(k).unwrap(), 0).unwrap();
                m.map(|m| (k, (m.a, m.b)))
            })
            .collect()
    }

    #[test]
    fn values_stored_as_means_read_back_exactly() {
        let (values, outside, [hinted, unhinted, earlier], whole) = with_means(40);
        let t = open_bytes(&unhinted).unwrap();
        assert_eq!(t.info().version, 7);
        let plain = t.dictionary_values().unwrap();
        let t = open_bytes(&hinted).unwrap();
        assert_eq!(t.info().version, 8);
        let hints = (0..t.info().dictionary_len)
            .filter_map(|k| t.mean_of(k, t.dictionary_entry(k).unwrap(), 0).unwrap())
            .filter(|m| m.hint.is_some())
            .count();
        assert_eq!(hints, 38, "every mean over one odd part has a hint");
        assert_eq!(t.dictionary_values().unwrap(), plain);
        let t = open_bytes(&earlier).unwrap();
        assert_eq!(t.blocks.as_ref().unwrap().len, EARLIER_BLOCK_LEN);
        assert_eq!(t.dictionary_values().unwrap(), plain);
        for bytes in [hinted, unhinted, earlier] {
            read_back_means(&bytes, &values, &outside, &whole);
        }
        // A chain longer than the cap: entries along it are stored whole.
        let (values, _, [bytes, ..], _) = with_means(3 * CONE_CAP);
        let t = open_bytes(&bytes).unwrap();
        t.check_all().unwrap();
        read_back(&t, &values);
        let whole = t.info().dictionary_len - mean_entries(&t).len();
        assert!((4..=8).contains(&whole), "{whole}");
    }

    /// The values of a [`with_means`] image read back exactly, every way, and the file
    /// smaller than `whole` (the same values whole), and checked against every flip.
    fn read_back_means(bytes: &[u8], values: &[Value], outside: &Value, whole: &[u8]) {
        let t = open_bytes(bytes).unwrap();
        t.check_all().unwrap();
        // Every value but the first two is a mean; `outside` joins the dictionary.
        assert_eq!(t.info().dictionary_len, 41);
        let means = mean_entries(&t);
        assert_eq!(means.len(), 38);
        for (k, (a, b)) in &means {
            let (x, y) = (
                t.dictionary_value_as_stored(*a).unwrap(),
                t.dictionary_value_as_stored(*b).unwrap(),
            );
            assert_eq!(t.dictionary_value_as_stored(*k).unwrap(), mean(&x, &y));
        }
        read_back(&t, values);
        let once = ReadOnce::new(&t);
        let all = t.dictionary_values().unwrap();
        assert!(all.windows(2).all(|w| w[0] < w[1]), "still in order");
        assert!(all.contains(outside));
        for (k, v) in all.iter().enumerate() {
            assert_eq!(&once.value(&t, k).unwrap(), v);
            assert_eq!(&t.dictionary_value(k).unwrap(), v);
        }
        // The walk visits every entry once with its value and the halves it is the mean
        // of, holding a chain's last two.
        type Visits = std::sync::Mutex<Vec<(Value, Option<[usize; 2]>)>>;
        let seen: Vec<Visits> = all.iter().map(|_| Default::default()).collect();
        let walked = t
            .walk(|k, v, stored| {
                seen[k].lock().unwrap().push((v.clone(), stored.halves()));
                Ok(())
            })
            .unwrap();
        let halves: HashMap<usize, (usize, usize)> = means.iter().copied().collect();
        for (k, v) in all.iter().enumerate() {
            let pair = halves.get(&k).map(|&(a, b)| [a, b]);
            assert_eq!(*seen[k].lock().unwrap(), [(v.clone(), pair)], "entry {k}");
        }
        assert_eq!(walked.means, 38);
        assert!(walked.depth >= 19, "{walked:?}");
        assert!((1..=3).contains(&walked.held_most), "{walked:?}");
        // Glances: the shadows found without decoding a mean are within SHADOWS_WITHIN of
        // the values' own, before and after the reader gets ready.
        let shadows = t.shadows().unwrap();
        assert_eq!(shadows.len(), all.len());
        let glancing = ReadOnce::new(&t);
        for (k, v) in all.iter().enumerate() {
            assert_eq!(glancing.shadow(&t, k).unwrap(), v.to_f64(), "entry {k}");
        }
        glancing.ready_to_glance(&t).unwrap();
        for (k, v) in all.iter().enumerate() {
            let exact = v.to_f64();
            assert!(
                (shadows[k] - exact).abs() <= super::super::SHADOWS_WITHIN,
                "entry {k}"
            );
            assert_eq!(glancing.shadow(&t, k).unwrap(), shadows[k], "entry {k}");
        }
        assert!(
            glancing.shadow(&t, all.len()).is_err(),
            "no entry past the last"
        );
        // The same values as the file with every value whole, in fewer bytes.
        let w = open_bytes(whole).unwrap();
        assert_eq!(w.info().version, 6);
        read_back(&w, values);
        assert!(bytes.len() < whole.len(), "{} {}", bytes.len(), whole.len());
        every_flip_is_noticed(bytes);
    }

    #[test]
    fn forged_means_are_refused_where_they_are_read() {
        let (_, _, [bytes, ..], _) = with_means(6);
        let t = open_bytes(&bytes).unwrap();
        let means = mean_entries(&t);
        let (k, _) = means[means.len() - 1];
        let entry = |t: &Table, k: usize| {
            let start = t.layout.dictionary_bytes;
            let r = t
                .offsets(
                    &t.layout.dictionary_index,
                    k,
                    1,
                    usize::MAX / 2,
                    Corruption::Keys,
                )
                .unwrap()
                .unwrap();
            start + r.start
        };
        let at = entry(&t, k);
        let len = t.info().dictionary_len as u32;
        // Itself; an entry past the last; a hint that does not hold (the first half's
        // ratio 3 where it is 1, or even).
        let forgeries: Vec<(usize, u32)> = vec![
            (at + 4, k as u32),
            (at + 8, len),
            (at + 12, 3),
            (at + 16, 2),
        ];
        for (offset, word) in forgeries {
            let mut b = bytes.clone();
            b[offset..offset + 4].copy_from_slice(&word.to_le_bytes());
            let t = open_bytes(&reforged(b)).unwrap();
            let e = t.dictionary_value_as_stored(k).unwrap_err().to_string();
            assert!(e.contains("mean of entries that do not resolve"), "{e}");
            // `check_all` checks the structure; a hint is checked where it is decoded.
            if offset < at + 12 {
                assert!(t.check_all().is_err());
            }
            let e = t.dictionary_values().unwrap_err().to_string();
            assert!(e.contains("do not resolve"), "{e}");
            let e = t.walk(|_, _, _| Ok(())).unwrap_err().to_string();
            assert!(e.contains("do not resolve"), "{e}");
            // The entries that do not lead to k still answer.
            assert!(t.dictionary_value_as_stored(0).is_ok());
        }
        // A cycle: a mean k whose first half a is a mean too, made a mean of k.
        let (k, a) = means
            .iter()
            .find_map(|&(k, (a, _))| means.iter().any(|m| m.0 == a).then_some((k, a)))
            .expect("a mean of a mean");
        let mut b = bytes.clone();
        let at_a = entry(&t, a);
        b[at_a + 4..at_a + 8].copy_from_slice(&(k as u32).to_le_bytes());
        let t = open_bytes(&reforged(b)).unwrap();
        let e = t.dictionary_value_as_stored(k).unwrap_err().to_string();
        assert!(e.contains("do not resolve"), "{e}");
        let e = t.check_all().unwrap_err().to_string();
        assert!(e.contains("do not resolve"), "{e}");
        let e = ReadOnce::new(&t).value(&t, a).unwrap_err().to_string();
        assert!(e.contains("do not resolve"), "{e}");
        let e = t.walk(|_, _, _| Ok(())).unwrap_err().to_string();
        assert!(e.contains("do not resolve"), "{e}");
    }

    /// The block length earlier builds wrote (this one writes [`BLOCK_LEN`]).
    const EARLIER_BLOCK_LEN: usize = 1 << 16;

    #[test]
    fn a_damaged_block_fails_only_the_values_in_it() {
        // 100 values of about 25,000 digits, over 16 blocks of 64 KiB (as earlier builds
        // wrote them) or 253 of 4 KiB: a flip in one block's bytes lets the file open and
        // answer from the other blocks; the values in it, and `check_all`, name the block.
        let den = BigUint::from(7u8).pow(30_000);
        let values: Vec<Value> = (1..=100u32)
            .map(|k| Value::new(&den * k / 101u32, den.clone()))
            .collect();
        for len in [BLOCK_LEN, EARLIER_BLOCK_LEN] {
            damaged_block(&values, len);
        }
    }

    /// [`a_damaged_block_fails_only_the_values_in_it`] with blocks of `len` bytes.
    fn damaged_block(values: &[Value], len: usize) {
        let bytes = encode_blocks(&contents(values, None), VERSION, len);
        let t = open_bytes(&bytes).unwrap();
        let blocks = t.blocks.as_ref().unwrap();
        assert_eq!(blocks.len, len);
        assert!(blocks.count() >= 10, "{} blocks", blocks.count());
        let at = blocks.start + 5 * len + 100;
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
                    assert!(e.to_string().contains("block 5 (bytes"), "{e}");
                    assert!(
                        matches!(
                            e,
                            Error::Corrupt {
                                corruption: Corruption::Checksum(Checksum::Block { index: 5, .. }),
                                ..
                            }
                        ),
                        "{e:?}"
                    );
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
            assert_eq!(t.alpha_below_beta().unwrap(), 2);
            for i in 0..4 {
                assert_eq!(t.value(i).unwrap(), alphas[i]);
                let beta = t.beta_if_above(i).unwrap();
                assert_eq!(beta.as_ref().unwrap_or(&alphas[i]), &betas[i]);
                assert_eq!(beta.is_some(), alphas[i] != betas[i]);
            }
            // 0 and 2/3 are ranks 0 and 3.
            assert_eq!(t.ranks(1).unwrap(), (0, 3));
        }
        let bytes = sample(&alphas);
        let t = open_bytes(&bytes).unwrap();
        assert!(!t.info().has_beta());
        assert_eq!(t.alpha_below_beta().unwrap(), 0);
        assert_eq!(t.rank_beta(1).unwrap(), t.rank(1).unwrap());
        assert_eq!(t.beta_if_above(0).unwrap(), None);
    }

    #[test]
    fn beta_below_alpha_and_every_flip_are_refused() {
        // Version 5 refuses the file at open; version 6 the position when it is read, and
        // the file when it is checked whole.
        let (alphas, betas) = ([v(1, 2), v(1, 3)], [v(1, 3), v(1, 3)]);
        let err = open_bytes(&encode_v5(&contents(&alphas, Some(&betas))))
            .unwrap_err()
            .to_string();
        assert!(err.contains("below its alpha"), "{err}");
        let t = open_bytes(&sample_with_beta(&alphas, Some(&betas))).unwrap();
        let err = t.beta_if_above(0).unwrap_err().to_string();
        assert!(err.contains("below its alpha"), "{err}");
        assert_eq!(t.beta_if_above(1).unwrap(), None);
        let err = t.check_all().unwrap_err().to_string();
        assert!(err.contains("below its alpha"), "{err}");
        let bytes = sample_with_beta(&[v(1, 2), v(1, 3)], Some(&[v(3, 4), v(1, 3)]));
        assert!(open_bytes(&bytes).is_ok());
        every_flip_is_noticed(&bytes);
        for len in 0..bytes.len() {
            assert!(open_bytes(&bytes[..len]).is_err());
        }
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

    /// Make every checksum of a file image good again after its body was changed, as a
    /// forger would (versions 4 to 6).
    fn reforged(mut b: Vec<u8>) -> Vec<u8> {
        let version = u32::from_le_bytes(b[8..12].try_into().unwrap());
        let header_len = if version == 4 {
            HEADER_LEN_V4
        } else {
            HEADER_LEN
        };
        if version >= 5 {
            let field = |at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
            let start = if version == 5 {
                field(152) as usize
            } else {
                header_len
            };
            let end = field(168) as usize;
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
        // entry's number there); versions 5 and 6 refuse the entry when it is read.
        let values = [v(1, 2), v(1, 3)];
        let c = contents(&values, None);
        for bytes in [encode(&c), encode_v5(&c), encode_v4(&c)] {
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
    fn positions_are_checked_where_they_are_read() {
        // 20,000 positions: keys, ranks and levels over several blocks. A flip in the
        // middle of the keys lets the file open; the positions in that block are refused,
        // naming it, the others answer; `check_all` refuses the file.
        let values: Vec<Value> = (0..20_000u64).map(|k| v(k % 7, 7)).collect();
        let mut c = contents(&values, None);
        (c.board, c.raw_positions) = (crate::geometry::Board::new(8, 8).unwrap(), 1 << 18);
        let bytes = encode(&c);
        let t = open_bytes(&bytes).unwrap();
        let keys = t.layout.keys.clone();
        assert!(keys.len() > 2 * BLOCK_LEN, "{keys:?}");
        let mut b = bytes.clone();
        let at = keys.start + 8 * 10_000;
        b[at] ^= 1;
        let t = open_bytes(&b).unwrap();
        let block = (at - HEADER_LEN) / BLOCK_LEN;
        let named = |e: Error| {
            matches!(e, Error::Corrupt {
                corruption: Corruption::Checksum(Checksum::Block { index, .. }),
                ..
            } if index == block)
        };
        assert!(named(t.key(10_000).unwrap_err()));
        assert!(named(t.find(3 * 10_000 + 1).unwrap_err()));
        assert_eq!(t.key(0).unwrap(), 1);
        assert_eq!(t.value(19_999).unwrap(), values[19_999]);
        assert!(named(t.check_all().unwrap_err()));

        // Forged past every checksum: keys out of order, a rank past the dictionary.
        let mut b = bytes.clone();
        b[keys.start..keys.start + 8].copy_from_slice(&5u64.to_le_bytes());
        let t = open_bytes(&reforged(b)).unwrap();
        assert_eq!(t.value(1).unwrap(), values[1]);
        let e = t.check_all().unwrap_err().to_string();
        assert!(e.contains("keys"), "{e}");
        let mut b = bytes.clone();
        let ranks = t.layout.ranks.start;
        b[ranks..ranks + 4].copy_from_slice(&7u32.to_le_bytes());
        let t = open_bytes(&reforged(b)).unwrap();
        let e = t.value(0).unwrap_err().to_string();
        assert!(e.contains("rank"), "{e}");
        assert_eq!(t.value(1).unwrap(), values[1]);
        assert!(t.check_all().is_err());
        // An entry's offsets that do not grow.
        let mut b = bytes.clone();
        let index = t.layout.dictionary_index.start;
        b[index + 8..index + 16].copy_from_slice(&0u64.to_le_bytes());
        let t = open_bytes(&reforged(b)).unwrap();
        let e = t.dictionary_value_as_stored(0).unwrap_err().to_string();
        assert!(e.contains("dictionary"), "{e}");
        assert!(t.check_all().is_err());
    }

    #[test]
    fn an_empty_material_round_trips() {
        let t = open_bytes(&sample(&[])).unwrap();
        assert!(t.is_empty());
        assert_eq!(t.find(0).unwrap(), None);
    }

    #[test]
    fn only_regular_files_are_tables() {
        let dir = tempfile::tempdir().unwrap();
        let err = Table::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
    }
}
