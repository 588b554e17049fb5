//! The one error type of the crate.

use std::fmt;
use std::path::PathBuf;

/// Where in an input file something was found: 1-based line and column, and the byte offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    /// 1-based line number.
    pub line: u32,
    /// 1-based column, counted in characters.
    pub column: u32,
    /// 0-based byte offset from the start of the input.
    pub byte: u64,
}

impl Position {
    /// Computes line and column of `byte` in `text`.
    pub fn locate(text: &str, byte: usize) -> Position {
        let byte = byte.min(text.len());
        let before = text.as_bytes().get(..byte).unwrap_or_default();
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
        Position { line: line as u32, column: column as u32, byte: byte as u64 }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// What went wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The file could not be read or written.
    #[error("{0}")]
    Io(String),
    /// The text is not well-formed XML.
    #[error("malformed XML: {0}")]
    Xml(String),
    /// The root element is not `<OpenDRIVE>`.
    #[error("root element is <{found}>, expected <OpenDRIVE>")]
    NotOpenDrive {
        /// Name of the root element found.
        found: String,
    },
    /// A required element is missing.
    #[error("<{parent}> has no <{child}> element, which is required")]
    MissingElement {
        /// The element that lacks the child.
        parent: String,
        /// The missing child.
        child: &'static str,
    },
    /// A required attribute is missing.
    #[error("<{element}> lacks required attribute '{attribute}'")]
    MissingAttribute {
        /// The element.
        element: String,
        /// The attribute.
        attribute: &'static str,
    },
    /// An attribute value does not parse or is out of its domain.
    #[error("<{element}> attribute {attribute}=\"{value}\": {reason}")]
    InvalidAttribute {
        /// The element.
        element: String,
        /// The attribute.
        attribute: String,
        /// The raw value.
        value: String,
        /// Why it is rejected.
        reason: String,
    },
    /// A `<geometry>` has no known geometry child.
    #[error("<geometry> has no line, arc, spiral, poly3 or paramPoly3 child{0}")]
    UnknownGeometry(String),
    /// Records that must be ordered by `s` are not.
    #[error("<{element}> s={s} is less than the previous record's s={previous}")]
    DescendingS {
        /// The element.
        element: String,
        /// Its `s`.
        s: f64,
        /// The previous record's `s`.
        previous: f64,
    },
    /// The input exceeds a limit that bounds the work or memory of reading it (nesting depth,
    /// elements per byte, a length or station no road can have).
    #[error("{0}")]
    Limit(String),
    /// The model cannot be written (for example a NaN value in it).
    #[error("cannot write: {0}")]
    Write(String),
}

/// An error with the file and the place in it. Boxed, so `Result`s stay small.
#[derive(Debug, Clone, PartialEq)]
pub struct Error(Box<Inner>);

#[derive(Debug, Clone, PartialEq)]
struct Inner {
    path: Option<PathBuf>,
    position: Option<Position>,
    kind: ErrorKind,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind) -> Self {
        Error(Box::new(Inner { path: None, position: None, kind }))
    }
    pub(crate) fn at(kind: ErrorKind, position: Position) -> Self {
        Error(Box::new(Inner { path: None, position: Some(position), kind }))
    }
    /// Attaches the file name.
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.0.path = Some(path.into());
        self
    }
    /// The file, when reading from or writing to one.
    pub fn path(&self) -> Option<&std::path::Path> {
        self.0.path.as_deref()
    }
    /// The place in the input, when known.
    pub fn position(&self) -> Option<Position> {
        self.0.position
    }
    /// What went wrong.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }
    pub(crate) fn kind_mut(&mut self) -> &mut ErrorKind {
        &mut self.0.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.0.path, &self.0.position) {
            (Some(p), Some(pos)) => write!(f, "{}:{}:{}: {}", p.display(), pos.line, pos.column, self.0.kind),
            (Some(p), None) => write!(f, "{}: {}", p.display(), self.0.kind),
            (None, Some(pos)) => write!(f, "{}: {}", pos, self.0.kind),
            (None, None) => write!(f, "{}", self.0.kind),
        }
    }
}

impl std::error::Error for Error {}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, Error>;
