//! Reading CRG files: the text header (blocks and keys as the reference C-API recognises them)
//! and the data section in all six formats.
//!
//! Where the C-API is lenient in ways that misread data we are strict and say why: an unknown
//! `D:` channel or `#:` tag, a binary data section shorter than the header says (never read
//! past the end), END_U that disagrees with the rows of a text file, a declared size larger than
//! the file (nothing is allocated for it), include loops. Also errors here where the C-API reads
//! on silently: a header value that is no number (the C-API takes 0), NaN or infinite, an
//! increment below [`MIN_INCREMENT`], a header v range declaring more long sections than the data
//! hold, a text field that is not one number or a `*` placeholder (the C-API makes it NaN or
//! reads its first number), an infinite data value, a text line holding more or fewer values
//! than the row layout (the C-API reads across line ends, shifting the rest of the grid). NaN in
//! the data stays what it is in OpenCRG: no height. Header errors name the line; data errors the
//! byte (and the line of text data), the row and the column.
//!
//! A regular file of a megabyte or more is read head first: the header into memory, a binary
//! data section row by row from the file into the grid, so reading a tile holds one copy of its
//! heights, not two (text data are read whole).
//!
//! The parts: this module holds the entry points, the bounded file read and the include chain;
//! `header` walks the blocks of the text header, `lex` reads its lines and numbers as the
//! C-API does, `data` decodes the data section, and `accumulate` gathers what the files say
//! and checks it into a [`Crg`].

mod accumulate;
mod data;
mod header;
mod lex;

use crate::error::{Error, ErrorKind, Result};
use crate::model::*;
use accumulate::Accumulator;
use header::parse;
use std::path::{Path, PathBuf};

/// Options for [`read_with`].
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Directory against which `$ROAD_CRG_FILE` names are resolved; default: the including
    /// file's directory (the C-API uses the process's working directory).
    pub include_dir: Option<PathBuf>,
}

/// Reads a CRG file.
pub fn read_file(path: impl AsRef<Path>) -> Result<Crg> {
    read_with(path.as_ref(), &ReadOptions::default())
}

/// Reads a CRG file with options.
pub fn read_with(path: &Path, options: &ReadOptions) -> Result<Crg> {
    let mut stack = Vec::new();
    let mut acc = Accumulator::default();
    load(path, None, options, &mut stack, &mut acc)?;
    acc.finish().map_err(|e| e.with_path(path))
}

/// Parses CRG bytes that have no `$ROAD_CRG_FILE` include.
pub fn read_bytes(bytes: &[u8]) -> Result<Crg> {
    let mut acc = Accumulator::default();
    parse(bytes, None, 0, None, &ReadOptions::default(), &mut Vec::new(), &mut acc)?;
    acc.finish()
}

/// The smallest increment (u and v) and long-section spacing read: the reference C-API's own
/// limit for u, v and reference-line spacing (1e-6 m). Smaller increments are not a grid.
pub const MIN_INCREMENT: f64 = 1e-6;

/// Most files in a chain of `$ROAD_CRG_FILE` includes, the top file counted.
const MAX_INCLUDE_DEPTH: usize = 8;

/// Largest CRG file read, bytes: 2 GiB. A regular file that is larger is refused by its size
/// before anything is read; anything else (a pipe, a device such as `/dev/zero`) is read up to
/// that many bytes, then refused: the bound, not the kind of file, keeps the memory finite.
pub const MAX_FILE_BYTES: u64 = 1 << 31;

/// The bytes of `path`, at most `max` ([`MAX_FILE_BYTES`]) of them.
fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let io = |e: std::io::Error| Error::new(ErrorKind::Io(e.to_string()));
    let file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(Error::new(ErrorKind::Io("is a directory, not a CRG file".into())));
    }
    if meta.is_file() && meta.len() > max {
        return Err(Error::new(ErrorKind::Io(format!(
            "the file is {} bytes long; CRG files over {max} bytes are not read",
            meta.len()
        ))));
    }
    let mut bytes = Vec::with_capacity(if meta.is_file() { meta.len() as usize + 1 } else { 1 << 16 });
    file.take(max + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > max {
        return Err(Error::new(ErrorKind::Io(format!(
            "more than {max} bytes read and the input goes on; CRG files over {max} bytes are not read (is it a \
             device or an endless pipe?)"
        ))));
    }
    Ok(bytes)
}

/// Regular files at least this long are read head first ([`read_head`]): the header into
/// memory, the binary data section row by row from the file (no copy of the whole file beside
/// the grid).
const STREAM_FROM: u64 = 1 << 20;

/// Bytes first read of such a file; doubled until the `$$$$` line is whole.
const HEAD_BYTES: usize = 1 << 16;

/// What of a file is not read yet: the reader at the first byte not read, and its length.
pub(super) struct Tail {
    pub(super) reader: std::io::BufReader<std::fs::File>,
    pub(super) len: u64,
}

/// The first bytes of `path`, through the `$$$$` line that ends the header (the whole file
/// when it has none, or when it is not a regular file of at least [`STREAM_FROM`] bytes: then
/// as [`read_bounded`] reads it), and the rest of the file, unread.
fn read_head(path: &Path) -> Result<(Vec<u8>, Option<Tail>)> {
    use std::io::Read;
    let io = |e: std::io::Error| Error::new(ErrorKind::Io(e.to_string()));
    let meta = std::fs::metadata(path).map_err(io)?;
    let len = meta.len();
    if !meta.is_file() || !(STREAM_FROM..=MAX_FILE_BYTES).contains(&len) {
        return Ok((read_bounded(path, MAX_FILE_BYTES)?, None));
    }
    let file = std::fs::File::open(path).map_err(io)?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut head: Vec<u8> = Vec::new();
    let mut want = HEAD_BYTES;
    loop {
        let need = ((want as u64).min(len) as usize).saturating_sub(head.len());
        let got = (&mut reader).take(need as u64).read_to_end(&mut head).map_err(io)?;
        let at_end = head.len() as u64 >= len || got < need;
        if at_end || separator_is_whole(&head) {
            let rest = len.saturating_sub(head.len() as u64);
            let tail = (!at_end && rest > 0).then_some(Tail { reader, len: rest });
            return Ok((head, tail));
        }
        want = want.saturating_mul(2);
    }
}

/// Whether `head` holds a line starting with `$$$$` and at least two bytes after its end (so
/// a CR LF ending is not cut in two).
fn separator_is_whole(head: &[u8]) -> bool {
    let mut rest = head;
    while !rest.is_empty() {
        let (raw, after) = lex::next_line(rest);
        if raw.starts_with(b"$$$$") {
            let end = head.len() - rest.len() + raw.len();
            return end + 2 <= head.len();
        }
        rest = after;
    }
    false
}

/// The `$ROAD_CRG_FILE` statement that includes a file: the including file (None for
/// [`read_bytes`]) and the line of the statement.
type Includer<'a> = Option<(Option<&'a Path>, usize)>;

/// Reads `path` (included by `from`, None for the top file) and what it includes. A loop or a
/// chain deeper than [`MAX_INCLUDE_DEPTH`] is an error at the include statement that closes the
/// loop or goes too deep: its file and line.
fn load(
    path: &Path,
    from: Includer,
    options: &ReadOptions,
    stack: &mut Vec<PathBuf>,
    acc: &mut Accumulator,
) -> Result<()> {
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let looped = stack.contains(&canonical);
    if looped || stack.len() >= MAX_INCLUDE_DEPTH {
        let chain: Vec<String> =
            stack.iter().chain(std::iter::once(&canonical)).map(|p| p.display().to_string()).collect();
        let chain = chain.join(" -> ");
        let kind = if looped {
            ErrorKind::IncludeLoop(format!("$ROAD_CRG_FILE includes {} again: {chain}", path.display()))
        } else {
            ErrorKind::Header(format!("$ROAD_CRG_FILE includes nest more than {MAX_INCLUDE_DEPTH} files deep: {chain}"))
        };
        return Err(match from {
            Some((Some(includer), line)) => Error::at_line(kind, line).with_path(includer),
            Some((None, line)) => Error::at_line(kind, line),
            None => Error::new(kind).with_path(path),
        });
    }
    let (bytes, tail) = read_head(path).map_err(|e| e.with_path(path))?;
    stack.push(canonical);
    let level = stack.len() - 1;
    let dir = options.include_dir.clone().or_else(|| path.parent().map(Path::to_path_buf));
    // This file's tail while it is parsed (an included file sets its own).
    let outer = std::mem::replace(&mut acc.tail, tail);
    let r = parse(&bytes, Some(path), level, dir.as_deref(), options, stack, acc).map_err(|e| e.with_path(path));
    acc.tail = outer;
    stack.pop();
    r
}

/// Where something was read: the file (None for [`read_bytes`]) and the 1-based line.
#[derive(Debug, Clone, Default)]
struct Origin {
    path: Option<PathBuf>,
    line: usize,
}

impl Origin {
    /// An error at this place (the path set here wins over the top file's, added later).
    fn err(&self, kind: ErrorKind) -> Error {
        let e = Error::at_line(kind, self.line);
        match &self.path {
            Some(p) => e.with_path(p),
            None => e,
        }
    }
}

#[cfg(test)]
mod bound_tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn a_regular_file_over_the_bound_is_refused_by_its_size() {
        let path = std::env::temp_dir().join(format!("roadscan-crg-bound-{}.crg", std::process::id()));
        std::fs::write(&path, "$CT\n".repeat(50)).unwrap();
        let r = read_bounded(&path, 100);
        let _ = std::fs::remove_file(&path);
        let e = r.unwrap_err();
        assert!(e.to_string().contains("200 bytes long"), "{e}");
    }

    /// /proc files say they are regular and 0 bytes long: what they hold is only found by
    /// reading, as for a pipe or a device (`/dev/zero` never ends); the bound stops the read.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_input_of_unknown_size_is_read_up_to_the_bound_only() {
        let whole = read_bounded(Path::new("/proc/self/maps"), MAX_FILE_BYTES).unwrap();
        assert!(whole.len() > 100);
        let e = read_bounded(Path::new("/proc/self/maps"), 100).unwrap_err();
        assert!(e.to_string().contains("the input goes on"), "{e}");
        let t = std::time::Instant::now();
        let e = read_bounded(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(e.to_string().contains("the input goes on") && t.elapsed().as_secs() < 5, "{e}");
    }
}
