//! The text of an OpenDRIVE file, read a chunk at a time and checked as it comes: UTF-8 only
//! (a UTF-16 or Latin-1 file named as such), no character XML 1.0 forbids, at most
//! [`MAX_FILE_BYTES`] bytes; errors give the line, column and byte of the first fault.

#[cfg(doc)]
use super::{read_file, MAX_FILE_BYTES};
use crate::error::{Error, ErrorKind, Position, Result};
use crate::xml;
use std::path::Path;

/// Bytes read (and checked) at a time by [`read_file`].
const CHUNK: usize = 1 << 16;

/// The text of a file, checked to be UTF-8 XML characters as it is read, at most `max`
/// ([`MAX_FILE_BYTES`]) bytes of it (see [`read_file`]).
pub(super) fn read_text(path: &Path, max: u64) -> Result<String> {
    use std::io::Read;
    let io = |e: std::io::Error| Error::new(ErrorKind::Io(e.to_string()));
    let mut file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(Error::new(ErrorKind::Io("is a directory, not an OpenDRIVE file".into())));
    }
    if meta.is_file() && meta.len() > max {
        return Err(Error::new(ErrorKind::Limit(format!(
            "the file is {} bytes long; OpenDRIVE files over {max} bytes are not read",
            meta.len()
        ))));
    }
    let mut buf: Vec<u8> = Vec::with_capacity(if meta.is_file() { meta.len() as usize + 1 } else { CHUNK });
    // buf[..valid] is UTF-8 and free of forbidden characters; a multi-byte sequence cut by
    // the chunk's end waits for the next chunk.
    let mut valid = 0usize;
    loop {
        let n = file.by_ref().take(CHUNK as u64).read_to_end(&mut buf).map_err(io)?;
        if valid == 0 {
            if let Some(e) = utf16_error(&buf, n == 0) {
                return Err(e);
            }
        }
        let ended = n == 0;
        match std::str::from_utf8(&buf[valid..]) {
            Ok(s) => {
                check_chars(&buf, valid, s)?;
                valid = buf.len();
            }
            Err(e) => {
                let good = valid + e.valid_up_to();
                // The part before the bad (or cut) sequence is UTF-8.
                let s = std::str::from_utf8(&buf[valid..good]).unwrap_or_default();
                check_chars(&buf, valid, s)?;
                if e.error_len().is_some() || ended {
                    return Err(not_utf8(&buf, good, ended && e.error_len().is_none()));
                }
                valid = good;
            }
        }
        if ended {
            break;
        }
        if buf.len() as u64 > max {
            return Err(Error::new(ErrorKind::Limit(format!(
                "more than {max} bytes read and the input goes on; OpenDRIVE files over {max} bytes are not read (is \
                 it a device or an endless pipe?)"
            ))));
        }
    }
    // valid == buf.len(): all of it was checked above.
    String::from_utf8(buf).map_err(|e| not_utf8(e.as_bytes(), e.utf8_error().valid_up_to(), false))
}

/// The position of byte `at` of `buf`, whose bytes before `at` are UTF-8.
fn position_in(buf: &[u8], at: usize) -> Position {
    let at = at.min(buf.len());
    let before = std::str::from_utf8(&buf[..at]).unwrap_or_default();
    Position::locate(before, at)
}

/// A character XML 1.0 forbids in `s`, which starts at byte `start` of `buf`.
fn check_chars(buf: &[u8], start: usize, s: &str) -> Result<()> {
    match xml::forbidden_char(s) {
        Some((i, c)) => Err(Error::at(ErrorKind::Xml(xml::forbidden_message(c)), position_in(buf, start + i))),
        None => Ok(()),
    }
}

/// The error for the bytes at `at` that are not UTF-8 (`cut`: the file ends inside a sequence).
fn not_utf8(buf: &[u8], at: usize, cut: bool) -> Error {
    let byte = buf.get(at).copied().unwrap_or(0);
    let what = if cut {
        format!("the file ends inside a UTF-8 sequence (byte 0x{byte:02X} at byte {at})")
    } else {
        format!("byte 0x{byte:02X} at byte {at} is not UTF-8")
    };
    let declared = declared_encoding(buf)
        .filter(|e| !e.eq_ignore_ascii_case("UTF-8") && !e.eq_ignore_ascii_case("UTF8"))
        .map(|e| format!(" (the XML declaration says encoding=\"{e}\")"))
        .unwrap_or_default();
    Error::at(ErrorKind::Xml(format!("{what}{declared}; OpenDRIVE files are UTF-8")), position_in(buf, at))
}

/// The `encoding` of the XML declaration, if the file starts with one.
fn declared_encoding(buf: &[u8]) -> Option<String> {
    let head = &buf[..buf.len().min(256)];
    let head = String::from_utf8_lossy(head);
    let decl = &head[head.find("<?xml")?..];
    let decl = &decl[..decl.find("?>")?];
    let at = decl.find("encoding")? + "encoding".len();
    let rest = decl[at..].trim_start().strip_prefix('=')?.trim_start();
    let quote = rest.chars().next().filter(|&q| q == '"' || q == '\'')?;
    let rest = &rest[1..];
    Some(rest[..rest.find(quote)?].to_string())
}

/// A UTF-16 file (by its byte order mark, or a `<` as its first 16-bit unit) is named as one.
fn utf16_error(buf: &[u8], ended: bool) -> Option<Error> {
    if buf.len() < 2 && !ended {
        return None;
    }
    let order = match buf.get(..2)? {
        [0xFF, 0xFE] => "little-endian, byte order mark FF FE",
        [0xFE, 0xFF] => "big-endian, byte order mark FE FF",
        [b'<', 0] => "little-endian, no byte order mark",
        [0, b'<'] => "big-endian, no byte order mark",
        _ => return None,
    };
    Some(Error::at(
        ErrorKind::Xml(format!(
            "the file is UTF-16 ({order}); OpenDRIVE files are UTF-8: convert it (e.g. iconv -f UTF-16 -t UTF-8)"
        )),
        Position { line: 1, column: 1, byte: 0 },
    ))
}

#[cfg(test)]
mod bound_tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;
    use crate::read::MAX_FILE_BYTES;

    #[test]
    fn a_regular_file_over_the_bound_is_refused_by_its_size() {
        let path = std::env::temp_dir().join(format!("roadscan-odr-bound-{}.xodr", std::process::id()));
        std::fs::write(&path, "<OpenDRIVE>".repeat(20)).unwrap();
        let r = read_text(&path, 100);
        let _ = std::fs::remove_file(&path);
        let e = r.unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Limit(m) if m.contains("220 bytes long")), "{e}");
    }

    /// /proc files say they are regular and 0 bytes long: what they hold is only found by
    /// reading, as for a pipe or a device; the bound stops the read.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_input_of_unknown_size_is_read_up_to_the_bound_only() {
        let path = Path::new("/proc/self/maps");
        let whole = read_text(path, MAX_FILE_BYTES).unwrap();
        assert!(whole.len() > 100);
        let e = read_text(path, 100).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Limit(m) if m.contains("the input goes on")), "{e}");
    }
}
