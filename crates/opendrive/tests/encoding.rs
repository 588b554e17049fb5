//! Files that are not UTF-8 XML: bytes that are not UTF-8, UTF-16 files, characters XML 1.0
//! forbids (NUL) and inputs that never end are errors naming the file and the place of the
//! first bad byte, read in bounded memory.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::ErrorKind;
use roadscan_tests::Scratch;
use std::path::Path;

const DOC: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<OpenDRIVE>\n  <header revMajor=\"1\" revMinor=\"6\" \
                   name=\"Demo Street\"/>\n</OpenDRIVE>\n";

/// Writes `bytes` to a file in `dir` and reads it; the error it must be.
fn read_err(dir: &Path, name: &str, bytes: &[u8]) -> opendrive::Error {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let err = opendrive::read_file(&path).expect_err(name);
    let text = err.to_string();
    assert!(text.starts_with(&path.display().to_string()), "{name}: {text}");
    err
}

/// Line, column and byte of `needle` in `DOC`.
fn place_of(needle: &str) -> (u32, u32, u64) {
    let at = DOC.find(needle).unwrap();
    let line = DOC[..at].matches('\n').count() as u32 + 1;
    let col = (at - DOC[..at].rfind('\n').map_or(0, |i| i + 1)) as u32 + 1;
    (line, col, at as u64)
}

#[test]
fn the_sample_document_reads() {
    let dir = Scratch::new("odr-enc-ok");
    let path = dir.join("ok.xodr");
    std::fs::write(&path, DOC).unwrap();
    assert_eq!(opendrive::read_file(&path).unwrap().header.name.as_deref(), Some("Demo Street"));
}

#[test]
fn a_byte_that_is_not_utf8_is_named_by_line_column_and_byte() {
    let dir = Scratch::new("odr-enc-bad");
    let mut bytes = DOC.as_bytes().to_vec();
    let (line, column, byte) = place_of("emo Street");
    bytes[byte as usize] = 0xFF;
    let err = read_err(&dir, "bad.xodr", &bytes);
    assert!(matches!(err.kind(), ErrorKind::Xml(_)), "{err}");
    let pos = err.position().unwrap_or_else(|| panic!("no position: {err}"));
    assert_eq!((pos.line, pos.column, pos.byte), (line, column, byte), "{err}");
    let text = err.to_string();
    assert!(text.contains(&format!(":{line}:{column}: ")), "{text}");
    assert!(text.contains("0xFF") && text.contains(&format!("byte {byte}")) && text.contains("UTF-8"), "{text}");
}

#[test]
fn a_latin1_file_names_its_declared_encoding() {
    let dir = Scratch::new("odr-enc-latin1");
    let mut bytes = DOC.replacen("UTF-8", "ISO-8859-1", 1).into_bytes();
    let at = bytes.windows(4).position(|w| w == b"Demo").unwrap() + 1;
    bytes[at] = 0xE9;
    let err = read_err(&dir, "latin1.xodr", &bytes);
    assert_eq!(err.position().map(|p| p.byte), Some(at as u64), "{err}");
    assert!(err.to_string().contains("encoding=\"ISO-8859-1\""), "{err}");
}

#[test]
fn a_file_cut_inside_a_utf8_sequence_is_named() {
    let dir = Scratch::new("odr-enc-cut");
    let mut bytes = DOC.as_bytes().to_vec();
    bytes.push(0xC3);
    let err = read_err(&dir, "cut.xodr", &bytes);
    assert_eq!(err.position().map(|p| p.byte), Some(DOC.len() as u64), "{err}");
    assert!(err.to_string().contains("ends inside a UTF-8 sequence"), "{err}");
}

#[test]
fn utf16_files_are_named_as_utf16() {
    let dir = Scratch::new("odr-enc-utf16");
    for (name, bom, le) in
        [("le.xodr", Some([0xFF, 0xFE]), true), ("be.xodr", Some([0xFE, 0xFF]), false), ("nobom.xodr", None, true)]
    {
        let mut bytes: Vec<u8> = bom.map(|b| b.to_vec()).unwrap_or_default();
        for u in DOC.encode_utf16() {
            bytes.extend_from_slice(&if le { u.to_le_bytes() } else { u.to_be_bytes() });
        }
        let err = read_err(&dir, name, &bytes);
        let text = err.to_string();
        assert!(text.contains("UTF-16") && text.contains("OpenDRIVE files are UTF-8"), "{name}: {text}");
        assert_eq!(err.position().map(|p| (p.line, p.column)), Some((1, 1)), "{name}: {text}");
    }
}

#[test]
fn nul_and_control_characters_are_errors_with_their_place() {
    let dir = Scratch::new("odr-enc-nul");
    for (name, c) in [("nul.xodr", '\0'), ("bell.xodr", '\u{7}'), ("fffe.xodr", '\u{FFFE}')] {
        let (line, column, byte) = place_of(" Street");
        let doc = DOC.replacen("Demo Street", &format!("Demo{c}Street"), 1);
        let err = read_err(&dir, name, doc.as_bytes());
        let pos = err.position().unwrap_or_else(|| panic!("{name}: no position: {err}"));
        assert_eq!((pos.line, pos.column, pos.byte), (line, column, byte), "{name}: {err}");
        assert!(err.to_string().contains(&format!("U+{:04X}", c as u32)), "{name}: {err}");
        // The same from text in memory.
        let err = opendrive::read(&doc).expect_err(name);
        assert_eq!(err.position().map(|p| (p.line, p.column)), Some((line, column)), "{name}: {err}");
    }
    // Text content too, and a character reference to NUL.
    let doc = DOC.replacen("</OpenDRIVE>", "<userData>a\u{1}b</userData></OpenDRIVE>", 1);
    assert!(opendrive::read(&doc).expect_err("text").to_string().contains("U+0001"));
    let doc = DOC.replacen("Demo Street", "Demo&#1;Street", 1);
    let err = opendrive::read(&doc).expect_err("char ref");
    assert!(err.to_string().contains("U+0001") && err.position().is_some(), "{err}");
    // Tab, line feed and carriage return are characters.
    let doc = DOC.replacen("Demo Street", "Demo\t\r\nStreet", 1);
    opendrive::read(&doc).unwrap();
}

#[cfg(unix)]
#[test]
fn a_device_is_refused_at_its_first_byte_not_read_to_the_end() {
    let path = Path::new("/dev/zero");
    if !path.exists() {
        return;
    }
    let t = std::time::Instant::now();
    let err = opendrive::read_file(path).expect_err("/dev/zero");
    assert!(t.elapsed() < std::time::Duration::from_secs(5), "took {:?}", t.elapsed());
    assert_eq!(err.path(), Some(path));
    assert_eq!(err.position().map(|p| p.byte), Some(0), "{err}");
    assert!(err.to_string().contains("U+0000"), "{err}");
}

#[cfg(unix)]
#[test]
fn a_directory_is_an_io_error_naming_it() {
    let dir = Scratch::new("odr-enc-dir");
    let err = opendrive::read_file(&*dir).expect_err("directory");
    assert!(matches!(err.kind(), ErrorKind::Io(_)), "{err}");
    assert_eq!(err.path(), Some(&*dir));
}
