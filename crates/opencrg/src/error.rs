//! The one error type of the crate.

use std::fmt;
use std::path::{Path, PathBuf};

/// What went wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be read or written.
    #[error("{0}")]
    Io(String),
    /// A header line is malformed or not understood.
    #[error("{0}")]
    Header(String),
    /// The `#:` format tag is missing or unknown.
    #[error("data format: {0}")]
    Format(String),
    /// No `$$$$` line starts a data section.
    #[error("no data section: the header has no line starting with $$$$")]
    NoDataSection,
    /// Fewer than two long sections are defined.
    #[error("{0} long section(s) defined, at least 2 are needed")]
    TooFewLongSections(usize),
    /// The data section is shorter than the header says.
    #[error("data section truncated: {0}")]
    Truncated(String),
    /// The header and the data disagree.
    #[error("inconsistent: {0}")]
    Inconsistent(String),
    /// `$ROAD_CRG_FILE` includes form a loop or nest too deep.
    #[error("include loop: {0}")]
    IncludeLoop(String),
    /// A header value (`$ROAD_CRG`, `$ROAD_CRG_OPTS`, `$ROAD_CRG_MODS`, a `D:` position) is not a
    /// number, not finite, or outside the range the reader can use. `text` is the value as
    /// written (so NaN shows as NaN), or as computed from other keys.
    #[error("{key} = {text}: {problem}")]
    HeaderValue {
        /// The key, upper case.
        key: String,
        /// The value as written.
        text: String,
        /// What is wrong with it.
        problem: String,
    },
    /// A value of the data section cannot be used. Rows and columns are 1-based: row 1 is the
    /// first cross section, column 1 the first `D:` channel.
    #[error("row {row}, column {column}: {problem}")]
    DataValue {
        /// Row (cross section), 1-based.
        row: usize,
        /// Column (`D:` channel in file order), 1-based.
        column: usize,
        /// What is wrong, with the value as written.
        problem: String,
    },
    /// A text data line holds more or fewer values than the row layout needs: the rest of the
    /// grid would shift.
    #[error("row {row}: the line holds {found} value(s), {expected} expected ({channels} channels per row, {per_line} per line)")]
    RowLength {
        /// Row (cross section), 1-based.
        row: usize,
        /// Values found on the line.
        found: usize,
        /// Values the line must hold.
        expected: usize,
        /// Channels per row (`D:` lines).
        channels: usize,
        /// Values per 80-character line of the format.
        per_line: usize,
    },
    /// A value cannot be written in the requested format.
    #[error("cannot write: {0}")]
    Write(String),
}

/// An error with the file and the place in it (line for the header, byte offset for data).
#[derive(Debug, Clone, PartialEq)]
pub struct Error(Box<Inner>);

#[derive(Debug, Clone, PartialEq)]
struct Inner {
    path: Option<PathBuf>,
    line: Option<usize>,
    byte: Option<u64>,
    kind: ErrorKind,
}

impl Error {
    /// An error of `kind` without a place (a row callback of [`crate::write_rows`] uses it).
    pub fn new(kind: ErrorKind) -> Self {
        Error(Box::new(Inner { path: None, line: None, byte: None, kind }))
    }
    pub(crate) fn at_line(kind: ErrorKind, line: usize) -> Self {
        Error(Box::new(Inner { path: None, line: Some(line), byte: None, kind }))
    }
    pub(crate) fn at_byte(kind: ErrorKind, byte: u64) -> Self {
        Error(Box::new(Inner { path: None, line: None, byte: Some(byte), kind }))
    }
    pub(crate) fn at_line_byte(kind: ErrorKind, line: usize, byte: u64) -> Self {
        Error(Box::new(Inner { path: None, line: Some(line), byte: Some(byte), kind }))
    }
    /// Attaches the file name (unless one is already attached, e.g. by an included file).
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        if self.0.path.is_none() {
            self.0.path = Some(path.into());
        }
        self
    }
    /// The file.
    pub fn path(&self) -> Option<&Path> {
        self.0.path.as_deref()
    }
    /// 1-based line: of the header, or of text data (also for a header key or data separator
    /// that a later check names).
    pub fn line(&self) -> Option<usize> {
        self.0.line
    }
    /// Byte offset in the file, when the error is in the data section (text or binary).
    pub fn byte(&self) -> Option<u64> {
        self.0.byte
    }
    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.0.path {
            write!(f, "{}", p.display())?;
            if let Some(l) = self.0.line {
                write!(f, ":{l}")?;
            }
            if let Some(b) = self.0.byte {
                write!(f, " (byte {b})")?;
            }
            write!(f, ": ")?;
        } else if let Some(l) = self.0.line {
            write!(f, "line {l}: ")?;
        } else if let Some(b) = self.0.byte {
            write!(f, "byte {b}: ")?;
        }
        write!(f, "{}", self.0.kind)
    }
}

impl std::error::Error for Error {}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, Error>;
