//! Table files: one per board and material (`DIR/FxR/KRvKN.bidtb`), holding every
//! position's exact value (α, and β where it differs) and its progress levels in White's
//! closure T and Black's closure T′. The byte layout is specified in `docs/src/format.md`; in
//! short:
//!
//! - a little-endian header in bidtb's container ([`crate::container`]: magic, version,
//!   length, fields, CRC-32): the board, the material by name, counts, the run's verdicts,
//!   section offsets, a CRC-32 of the body and (versions 5 and 6) one of what is checked
//!   at open;
//! - the canonical key of every position (see [`crate::index`]), increasing, so a position
//!   is found by binary search without rebuilding the index;
//! - per position, the rank of its value in the dictionary, its T and T′ levels, and (where
//!   α < β somewhere) the rank of its β, each a `u32`, read zero-copy from the memory map;
//! - the dictionary ([`dictionary`]): every distinct value once, in increasing order (so
//!   ranks compare like values); each distinct denominator is stored once, and each entry
//!   holds the number of its denominator and its numerator, little-endian, or (versions 7
//!   and 8) the numbers of the two entries it is the mean of ([`means`] picks which) and
//!   (version 8) a hint;
//! - (version 6) a CRC-32 of each block (4 KiB; 64 KiB before) of the bytes after the
//!   header.
//!
//! This build writes version 8 where values are long enough to be stored as means, and
//! version 6 elsewhere (and everywhere with `generate --whole`). Version 6 is version 4
//! (the material named in the header, 64-bit keys wide enough for every material on every
//! board, denominators shared: about half the bytes of version 3) with every section
//! checked block by block; version 8 stores long values as the mean of two other entries
//! (a tenth of the bytes where values are long), each with a hint that spares the reader a
//! gcd ([`crate::value::hints`]). It reads versions 1 to 5 and 7 too, the tables of earlier
//! builds (versions 1 and 2: a class number in the header, 32-bit keys; versions 1 to 3:
//! each value whole; version 5: blocks over the dictionary alone; version 7: means without
//! hints), and answers from them exactly as before.
//!
//! [`Table::open`] checks the header (magic, version, checksum, board, material, section
//! offsets and sizes, a regular file of the stated length) and the blocks' checksums; a
//! version 6 block is checked the first time a read touches it, and so is the structure a
//! read relies on (a rank inside the dictionary, a β rank not below α's, an entry's
//! offsets, a mean's entries), so that opening 8x8 KNvKP reads 1.3 MB of checksums, not its 115 MB of
//! positions or its 21.6 GB of values. Older versions are checked at open as they always
//! were: the whole body before version 5; in version 5 the sections before the dictionary
//! and their structure (increasing keys, ranks inside the dictionary, well-formed offsets).
//! [`Table::check_all`] checks every block and, in version 6, the whole structure (`bidtb
//! verify`, a run that keeps a table it finds). A truncated, bit-flipped or foreign file
//! is an [`Error::Corrupt`](crate::error::Error::Corrupt) naming the file and what is
//! wrong with it ([`Corruption`]), never a panic or a wrong value. Files are written
//! atomically ([`crate::atomic`]).
//!
//! The module owns the table files and nothing else, split by concern: `header` (the
//! format's constants and versions, what a header states, the layout of the sections, the
//! decoding and checking of every version's header), `write` (encoding and writing a file),
//! `read` (opening, validating and reading a file, mapped or in memory: `source`),
//! `upgrade` (rewriting an older file in the current version), `stored` (one reading of a
//! stored position), `dictionary` (the encoding of the values), `means` (which values it
//! stores as the mean of two others) `blocks` (the checksums of the blocks) and `walk` (every entry decoded once).

mod blocks;
mod dictionary;
mod header;
mod means;
mod read;
mod source;
mod stored;
#[cfg(test)]
pub(crate) mod testing;
mod upgrade;
mod walk;
mod write;

/// The stored level of a position outside a closure (the one definition, from the
/// certificate that computes the levels).
pub use crate::boundary::UNREACHED;

pub use crate::error::{Checksum, Corruption};
pub use dictionary::Mean;
pub use header::{EXTENSION, HEADER_LEN, MAGIC, MEANS, READABLE, TableInfo, VERSION, file_name};
pub use means::{CONE_CAP, MAX_MEAN_DEPTH};
pub use read::{REDUCED_BITS, ReadOnce, Table, as_read};
pub use stored::{Decode, FromFile};
pub use upgrade::{Upgraded, upgrade};
pub use walk::{SHADOWS_WITHIN, Stored as WalkedEntry, Walked};
pub use write::{Contents, encode, encode_to, fixed_bytes, write};
