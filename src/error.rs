//! The crate's error type: every way a request can be wrong, each with a message that names
//! the problem.

use thiserror::Error;

/// Everything that can go wrong in bidtb, from a bad board size to an unwritable directory.
#[derive(Debug, Error)]
pub enum Error {
    /// A board size outside 2..=16, or a malformed `FxR` string.
    #[error("bad board size: {0}")]
    BoardSize(String),
    /// A position that cannot be used (overlapping pieces, pawn on the first or last rank...).
    #[error("bad position: {0}")]
    Position(String),
    /// A FEN that cannot be read as a position.
    #[error("bad FEN '{fen}': {reason}")]
    Fen {
        /// The FEN as given (shortened if very long).
        fen: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A material name that cannot be read (expected like `KRvKN`: the white king and
    /// White's pieces, `v`, the black king and Black's pieces).
    #[error("bad material {0}")]
    Material(String),
    /// Reading or writing a file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory involved.
        path: String,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A table file whose bytes are not a table this build reads: truncated, damaged,
    /// forged, or of another format version. [`Corruption`] says what is wrong.
    #[error("{path}: {corruption}")]
    Corrupt {
        /// The file.
        path: String,
        /// What is wrong with its bytes.
        corruption: Corruption,
    },
    /// A table file that cannot be used otherwise: it does not fit what it was asked for
    /// (another board or material, a key it does not hold), or it could not be upgraded.
    #[error("{path}: {reason}")]
    Table {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A table file needed for a query or for the exits of a material does not exist.
    #[error(
        "missing table {path}: generate it with `bidtb generate --board {board} --method solve \
         --material {material} --out {dir}`"
    )]
    MissingTable {
        /// The file that was looked for.
        path: String,
        /// The board it belongs to, `FxR`.
        board: String,
        /// The tables directory.
        dir: String,
        /// The material, as stored (`KRvKN`).
        material: String,
    },
    /// A chip table needed for a query does not exist (or was made for other tables).
    #[error("{0}")]
    MissingChips(String),
    /// A checkpoint that cannot be resumed from: truncated, corrupted, of another format
    /// version, board or graph.
    #[error("checkpoint {path}: {reason}")]
    Checkpoint {
        /// The file (or directory).
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A run's report file (`convergence.csv`, `summary.json`) that cannot be read.
    #[error("{path}: {reason}")]
    Report {
        /// The file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The run was stopped by a signal (Ctrl-C, SIGTERM) before it finished.
    #[error("{0}")]
    Interrupted(String),
    /// Another process holds the directory (a second `generate` in the same place).
    #[error("{0}")]
    Busy(String),
    /// Work a request needs is under way (the server's chip ranks): ask again shortly.
    #[error("{0}")]
    Pending(String),
    /// The requested work does not fit in this machine's limits.
    #[error("{0}")]
    Resources(String),
    /// The batch scheduler (Slurm) could not be reached or refused a request.
    #[error("{0}")]
    Scheduler(String),
    /// Arguments that do not go together.
    #[error("{0}")]
    Usage(String),
    /// The certificate did not prove every value exact (α = s = β).
    #[error("{0}")]
    Uncertified(String),
}

impl Error {
    /// Wrap an I/O error with the path it concerns.
    pub fn io(path: impl AsRef<std::path::Path>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.as_ref().display().to_string(),
            source,
        }
    }
}

/// What is wrong with the bytes of a file: the header of any file in bidtb's container
/// (whose kind, `table`, `checkpoint` or `chip`, the messages name), then the sections of a
/// table file. Each kind displays as the message bidtb gives for it; a table's is carried
/// by [`Error::Corrupt`], so that a caller can tell the kinds apart without reading text.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum Corruption {
    /// The file (or header) of `len` bytes is shorter than a container header's prefix and
    /// checksum.
    #[error("truncated: {len} bytes, shorter than a {kind} header")]
    ShorterThanPrefix {
        /// The file's length.
        len: u64,
        /// The kind of file.
        kind: &'static str,
    },
    /// The file of `len` bytes is shorter than the header its version has.
    #[error("truncated: {len} bytes, shorter than the {header}-byte header")]
    ShorterThanHeader {
        /// The file's length.
        len: u64,
        /// The header's length.
        header: usize,
    },
    /// The file's length is not the one its header states.
    #[error("truncated or extended: the header says {stated} bytes, the file has {len}")]
    Length {
        /// The length the header states.
        stated: u64,
        /// The file's length.
        len: u64,
    },
    /// The first eight bytes are not the kind's magic bytes.
    #[error("not a bidtb {kind} file (wrong magic bytes)")]
    Magic {
        /// The kind of file.
        kind: &'static str,
    },
    /// A format version this build does not read.
    #[error(
        "{kind} format version {version}, but this bidtb reads version {} \
         (regenerate the file with this bidtb)",
        list(readable)
    )]
    Version {
        /// The kind of file.
        kind: &'static str,
        /// The version the header states.
        version: u32,
        /// The versions this build reads.
        readable: Vec<u32>,
    },
    /// The header's length field is not its version's header length.
    #[error("header length {stated}, expected {expected}")]
    HeaderLength {
        /// The length the header states.
        stated: u32,
        /// Its version's header length.
        expected: usize,
    },
    /// A field would lie past the end of the header (a header too short for its fields).
    #[error("a header field lies past the header")]
    FieldPastHeader,
    /// A stored checksum does not match the bytes it covers.
    #[error("{0}")]
    Checksum(Checksum),
    /// The padding after the header's fields is not zero.
    #[error("the header's padding is not zero")]
    Padding,
    /// Flags that this build does not know.
    #[error("unknown flags {0:#04x}")]
    UnknownFlags(u8),
    /// Flags that contradict the version (versions 1 and 2: the β section's flag).
    #[error("flags {flags:#04x} do not fit version {version}")]
    Flags {
        /// The flags.
        flags: u8,
        /// The version.
        version: u32,
    },
    /// The board the header states is not a board; the board's error says why.
    #[error("{0}")]
    Board(String),
    /// Versions 1 and 2: a class number that names no three-piece material.
    #[error("unknown class number {0}")]
    Class(u8),
    /// The material's name is not text.
    #[error("the material name is not text")]
    MaterialName,
    /// The material's name names no material; the material's error says why.
    #[error("{0}")]
    Material(String),
    /// The material has another number of men than the header states.
    #[error("{material} has {men} men, the header says {stated}")]
    Men {
        /// The material, by name.
        material: String,
        /// Its men.
        men: usize,
        /// The men the header states.
        stated: u8,
    },
    /// A material that tables do not hold (they hold its stored orientation).
    #[error("{material} is not a stored material (tables hold {stored})")]
    NotStored {
        /// The material, by name.
        material: String,
        /// The material that tables hold, by name.
        stored: String,
    },
    /// More positions than the board's keys of the material, or than the raw positions.
    #[error("impossible position count {0}")]
    PositionCount(u64),
    /// More positions than this machine can index.
    #[error("too many positions")]
    TooManyPositions,
    /// The sections the counts call for do not fit in the file.
    #[error("the sections do not fit in the file")]
    Sections,
    /// The section offsets the header states are not those the counts call for.
    #[error("section offsets do not match the counts")]
    Offsets,
    /// The position keys do not increase, or lie outside the board's keys.
    #[error("position keys are not increasing keys of the board")]
    Keys,
    /// A position's value rank lies outside the dictionary.
    #[error("a value rank lies outside the dictionary")]
    Ranks,
    /// A position's β rank lies outside the dictionary or below its α rank.
    #[error("a beta rank lies outside the dictionary or below its alpha")]
    BetaRanks,
    /// The dictionary's offsets do not start at 0, grow by an entry's least size each and
    /// end at its end.
    #[error("the dictionary index is malformed")]
    DictionaryIndex,
    /// The denominators' offsets are malformed likewise.
    #[error("the denominators' index is malformed")]
    DenominatorsIndex,
    /// A dictionary entry names a denominator past the list.
    #[error("a dictionary entry names a denominator outside the list")]
    DenominatorNumber,
    /// The dictionary's stated size does not fit this machine.
    #[error("the dictionary is too large")]
    DictionaryTooLarge,
    /// The blocks' checksums lie outside the file.
    #[error("the blocks' checksums lie outside the file")]
    BlocksOutside,
    /// The dictionary's blocks are stated to be empty.
    #[error("the dictionary's blocks are empty")]
    BlocksEmpty,
    /// The blocks' checksums do not run exactly to the end of the file.
    #[error("the blocks' checksums do not fill the end of the file")]
    BlocksFill,
    /// The dictionary entry of this number is not a value in [0, 1] (or names a
    /// denominator outside the list).
    #[error("dictionary entry {0} is not a value in [0, 1]")]
    Entry(usize),
    /// Version 7: dictionary entry `.0` is the mean of entries that do not exist, refer
    /// back to it, or lead through more than `table::MAX_MEAN_DEPTH` means.
    #[error("dictionary entry {0} is the mean of entries that do not resolve")]
    Mean(usize),
}

/// Which stored checksum does not match ([`Corruption::Checksum`]).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum Checksum {
    /// The header's, over every header byte before it.
    #[error("corrupted: the header checksum does not match")]
    Header,
    /// The body's, over every byte after the header, checked when the file is opened
    /// (versions 1 to 4).
    #[error("corrupted: the body checksum does not match")]
    Body,
    /// Versions 5 and 6: the body's, over every byte after the header, checked by
    /// `Table::check_all` after each block's own checksum held.
    #[error("the body checksum does not match")]
    BodyOverBlocks,
    /// Versions 5 and 6: the one checked at open, over the blocks' checksums (and in
    /// version 5 the sections before the dictionary).
    #[error("corrupted: the checksum checked at open (of the blocks' checksums) does not match")]
    Front,
    /// Versions 5 and 6: the checksum of one block (version 6: of the bytes after the
    /// header; version 5: of the dictionary's bytes).
    #[error("corrupted: the checksum of block {index} (bytes {}..{}) does not match", bytes.start, bytes.end)]
    Block {
        /// The block's number.
        index: usize,
        /// The block's bytes in the file.
        bytes: std::ops::Range<usize>,
    },
}

/// `1, 2, 3`.
fn list(versions: &[u32]) -> String {
    versions
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The files whose errors are still text (checkpoints, chip tables) take the message.
impl From<Corruption> for String {
    fn from(c: Corruption) -> String {
        c.to_string()
    }
}

/// `text` safe to print on a terminal: control characters other than the newline (an
/// escape sequence's ESC, a carriage return, a bell) and the invisible marks that reorder
/// text (bidirectional overrides and isolates) are written as escapes (`\u{1b}`), so that a
/// message quoting user input (a FEN, a path, a name) can neither drive the terminal nor
/// disguise itself.
pub fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let hidden = |c: char| {
        (c.is_control() && c != '\n')
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(hidden) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if hidden(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_and_direction_marks_are_escaped() {
        assert_eq!(printable("3k3R/8 a2\nb"), "3k3R/8 a2\nb");
        assert_eq!(
            printable("\u{1b}[31mred\u{7}\r\u{202e}x"),
            "\\u{1b}[31mred\\u{7}\\u{d}\\u{202e}x"
        );
    }
}
