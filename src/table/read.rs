//! Reading a table file: [`Table`] opens a file, validates it (see the module comment of
//! [`crate::table`] for what is checked) and answers zero-copy from its memory map;
//! [`ReadOnce`] decodes a table's values one at a time, each once.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use memmap2::Mmap;
use num_bigint::BigUint;
use rayon::prelude::*;
use zerocopy::FromBytes;
use zerocopy::little_endian::{U32, U64};

use crate::container::{Fields, PREFIX_LEN, open_regular};
use crate::error::{Checksum, Corruption, Error};
use crate::value::Value;
use crate::value::shared::Denominators;

use super::blocks::Blocks;
use super::dictionary::{self, MIN_ENTRY};
use super::header::*;
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
    /// Version 5: the dictionary's blocks, checked as they are read (older versions'
    /// bodies are checked whole at open).
    pub(super) blocks: Option<Blocks>,
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
    /// old file). The table validates the file's bytes once, when it opens it (a version 5
    /// dictionary block when it is first read), and then trusts them: bytes changed under
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
        Ok(())
    }

    /// An error naming this file.
    fn corrupted(&self, corruption: Corruption) -> Error {
        Error::Corrupt {
            path: self.path.display().to_string(),
            corruption,
        }
    }

    /// Bytes `range` of the dictionary (denominators and entries), their blocks checked.
    /// The offsets were checked at open; a range outside the dictionary is refused all the
    /// same, never read.
    fn dictionary_bytes(&self, range: Range<usize>) -> Result<&[u8], Error> {
        let outside = || self.corrupted(Corruption::DictionaryIndex);
        let bytes = self.bytes.get(range.clone()).ok_or_else(outside)?;
        if let Some(blocks) = &self.blocks {
            if range.start < blocks.start || range.end > blocks.end {
                return Err(outside());
            }
            blocks
                .check(&self.bytes, &range)
                .map_err(|c| self.corrupted(c))?;
        }
        Ok(bytes)
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

    fn words(&self, range: &Range<usize>) -> &[U32] {
        <[U32]>::ref_from_bytes(&self.bytes[range.clone()]).expect("sizes checked at open")
    }

    fn dictionary_index(&self) -> &[U64] {
        <[U64]>::ref_from_bytes(&self.bytes[self.layout.dictionary_index.clone()])
            .expect("sizes checked at open")
    }

    fn wide_keys(&self) -> &[U64] {
        <[U64]>::ref_from_bytes(&self.bytes[self.layout.keys.clone()])
            .expect("sizes checked at open")
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
        crc32fast::hash(&self.bytes[self.layout.keys.clone()])
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
        if k + 1 >= self.dictionary_index().len() {
            // Not a fault of the file: the caller asked past the last entry.
            return Err(Error::Table {
                path: self.path.display().to_string(),
                reason: format!("no dictionary entry {k}"),
            });
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
        value.ok_or_else(|| self.corrupted(Corruption::Entry(k)))
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
        let bad = || self.corrupted(Corruption::Entry(k));
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
        Some(<[U64]>::ref_from_bytes(&self.bytes[index.clone()]).expect("sizes checked at open"))
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
    // run to the blocks' checksums (version 5) or to the end of the file.
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
            let blocks = Blocks::stated(stated, dictionary_start, layout.dictionary_bytes, bytes)?;
            let mut front = crc32fast::Hasher::new();
            front.update(&bytes[h.header_len..dictionary_start]);
            front.update(&bytes[blocks.sums.clone()]);
            if front.finalize() != stated.front_crc {
                return Err(Corruption::Checksum(Checksum::Front));
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
    let mut whole = entries_len as usize;
    if let (Some(count), Some(di), Some(db)) = (
        h.denominators,
        &layout.denominators_index,
        &layout.denominators_bytes,
    ) {
        let offsets = <[U64]>::ref_from_bytes(&bytes[di.clone()]).expect("sized");
        if !offsets_well_formed(offsets, 1, db.len() as u64) {
            return Err(Corruption::DenominatorsIndex);
        }
        if let Some(stated) = &h.blocks {
            // Reading every entry's denominator number would read the whole dictionary:
            // version 5 states the sum, and a number outside the list is refused when its
            // entry is decoded.
            let whole =
                usize::try_from(stated.whole).map_err(|_| Corruption::DictionaryTooLarge)?;
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
                .ok_or(Corruption::DenominatorNumber)?;
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
    use crate::table::testing::*;
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
        let c = kind(open_bytes(&forged(bytes.clone(), HEADER_LEN, 8, 6)));
        assert!(matches!(c, Corruption::Version { version: 6, .. }), "{c:?}");
        assert_eq!(
            said(c),
            "table format version 6, but this bidtb reads version 1, 2, 3, 4, 5 \
             (regenerate the file with this bidtb)"
        );
        // The body of version 4 is checked whole at open; version 5's front sections.
        let mut b = encode_v4(&contents(&values, None));
        let last = b.len() - 1;
        b[last] ^= 1;
        let c = kind(open_bytes(&b));
        assert_eq!(c, Corruption::Checksum(Checksum::Body));
        assert_eq!(said(c), "corrupted: the body checksum does not match");
        b = bytes.clone();
        b[HEADER_LEN] ^= 1;
        assert_eq!(kind(open_bytes(&b)), Corruption::Checksum(Checksum::Front));
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
