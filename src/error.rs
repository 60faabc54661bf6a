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
    /// A table file that cannot be used: truncated, corrupted, of another format version,
    /// board or class.
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
    /// The requested work does not fit in this machine's limits.
    #[error("{0}")]
    Resources(String),
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
