//! Bad input gives a clear error naming the file and the place, never a panic, and never an
//! allocation the file cannot back. One test per case; the broken files are made here from a
//! small valid grid.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opencrg::{Crg, ErrorKind, Format};
use roadscan_tests::Scratch;
use std::path::{Path, PathBuf};

fn dir(name: &str) -> Scratch {
    Scratch::new(&format!("crg-bad-{name}"))
}

fn grid() -> Crg {
    let (nu, nv) = (21, 5);
    let z: Vec<f32> = (0..nu * nv).map(|i| (i as f32 * 0.37).sin() * 0.01).collect();
    Crg::new_grid(0.0, 0.5, nu, -1.0, 0.5, nv, (100.0, 200.0, 0.3), None, z)
}

fn write(d: &Path, name: &str, format: Format) -> (PathBuf, Vec<u8>) {
    let p = d.join(name);
    opencrg::write_file(&grid(), &p, format).unwrap();
    let bytes = std::fs::read(&p).unwrap();
    (p, bytes)
}

fn data_start(bytes: &[u8]) -> usize {
    let pos = bytes.windows(5).position(|w| w == b"\n$$$$").unwrap() + 1;
    pos + bytes[pos..].iter().position(|&b| b == b'\n').unwrap() + 1
}

fn err(p: &Path) -> opencrg::Error {
    opencrg::read_file(p).expect_err("must fail")
}

#[test]
fn truncated_binary_data() {
    let d = dir("trunc");
    let (p, bytes) = write(&d, "t.crg", Format::Krbi);
    std::fs::write(&p, &bytes[..bytes.len() - 200]).unwrap();
    let e = err(&p);
    assert!(matches!(e.kind(), ErrorKind::Truncated(_)), "{e}");
    assert!(e.byte().is_some() && e.to_string().contains("t.crg (byte "), "{e}");
}

#[test]
fn end_u_disagrees_with_the_data() {
    let d = dir("endu");
    // Text: 21 rows of 0.5 m end at 10, the header says 30.
    let (p, bytes) = write(&d, "text.crg", Format::Lrfi);
    let text =
        String::from_utf8(bytes).unwrap().replace("REFERENCE_LINE_END_U      = 10", "REFERENCE_LINE_END_U      = 30");
    std::fs::write(&p, text).unwrap();
    let e = err(&p);
    assert!(matches!(e.kind(), ErrorKind::Inconsistent(_)) && e.to_string().contains("END_U is 30"), "{e}");
    // Binary: the header asks for 11 rows, the file holds 21.
    let (p, bytes) = write(&d, "bin.crg", Format::Krbi);
    let fixed: Vec<u8> = replace(&bytes, b"REFERENCE_LINE_END_U      = 10", b"REFERENCE_LINE_END_U      = 5.");
    std::fs::write(&p, fixed).unwrap();
    let e = err(&p);
    assert!(matches!(e.kind(), ErrorKind::Inconsistent(_)) && e.to_string().contains("END_U disagrees"), "{e}");
}

fn replace(hay: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let i = hay.windows(from.len()).position(|w| w == from).unwrap();
    [&hay[..i], to, &hay[i + from.len()..]].concat()
}

#[test]
fn missing_data_separator() {
    let d = dir("sep");
    let (p, bytes) = write(&d, "s.crg", Format::Lrfi);
    let text = String::from_utf8(bytes).unwrap();
    let text: String = text.lines().filter(|l| !l.starts_with("$$$$")).map(|l| format!("{l}\n")).collect();
    std::fs::write(&p, text).unwrap();
    assert!(matches!(err(&p).kind(), ErrorKind::NoDataSection));
}

#[test]
fn unknown_format_tag() {
    let d = dir("tag");
    let (p, bytes) = write(&d, "f.crg", Format::Lrfi);
    let text = String::from_utf8(bytes).unwrap().replace("#:LRFI", "#:XRZI");
    std::fs::write(&p, &text).unwrap();
    let e = err(&p);
    let line = text.lines().position(|l| l.starts_with("#:")).unwrap() + 1;
    assert!(matches!(e.kind(), ErrorKind::Format(_)), "{e}");
    assert_eq!(e.line(), Some(line), "{e}");
    assert!(e.to_string().contains(&format!("f.crg:{line}: data format: unknown tag #:XRZI")), "{e}");
}

#[test]
fn fewer_than_two_long_sections() {
    let d = dir("long");
    let p = d.join("one.crg");
    let mut c = grid();
    c.long_sections = opencrg::LongSections::Indexed(1);
    c.z = (0..c.nu).map(|i| i as f32 * 0.001).collect();
    c.channel_order = vec![opencrg::ChannelKind::LongSection(0)];
    // The writer refuses such a grid; build the file by hand from a valid one.
    assert!(opencrg::write_file(&c, &p, Format::Lrfi).is_err());
    let (q, bytes) = write(&d, "two.crg", Format::Lrfi);
    let text = String::from_utf8(bytes).unwrap();
    let mut out = String::new();
    let mut in_data = false;
    for l in text.lines() {
        if l.starts_with("D:long section") && !l.starts_with("D:long section 1,") {
            continue;
        }
        if in_data {
            out.push_str(&l[..10]);
            out.push('\n');
            continue;
        }
        if l.starts_with("$$$$") {
            in_data = true;
        }
        out.push_str(l);
        out.push('\n');
    }
    std::fs::write(&q, out).unwrap();
    assert!(matches!(err(&q).kind(), ErrorKind::TooFewLongSections(1)), "{}", err(&q));
}

#[test]
fn declared_size_far_larger_than_the_file_is_not_allocated() {
    let d = dir("huge");
    let (p, bytes) = write(&d, "h.crg", Format::Krbi);
    // 1e12 rows of 20 bytes: 20 TB. Must fail at once, without trying to allocate it.
    let fixed = replace(&bytes, b"REFERENCE_LINE_END_U      = 10", b"REFERENCE_LINE_END_U      = 5e11");
    std::fs::write(&p, fixed).unwrap();
    let t = std::time::Instant::now();
    let e = err(&p);
    assert!(t.elapsed().as_secs_f64() < 1.0);
    assert!(
        matches!(e.kind(), ErrorKind::Truncated(_)) && e.to_string().contains("asks for 1000000000001 rows"),
        "{e}"
    );
}

#[test]
fn include_loops() {
    let d = dir("loop");
    let a = d.join("a.crg");
    let b = d.join("b.crg");
    std::fs::write(&a, "$CT\nloop\n$!***\n$ROAD_CRG_FILE\nb.crg\n$!***\n").unwrap();
    std::fs::write(&b, "$CT\nloop\n$!***\n$ROAD_CRG_FILE\na.crg\n$!***\n").unwrap();
    let e = err(&a);
    assert!(matches!(e.kind(), ErrorKind::IncludeLoop(_)), "{e}");
    assert!(e.to_string().contains("a.crg") && e.to_string().contains("b.crg"), "{e}");
    // The error is at the statement that closes the loop: b.crg, line 5 (its file name).
    assert_eq!((e.path(), e.line()), (Some(b.as_path()), Some(5)), "{e}");
    assert!(e.to_string().starts_with(&format!("{}:5: include loop: ", b.display())), "{e}");
    // A file that includes itself: its own include statement.
    std::fs::write(&a, "$ROAD_CRG_FILE\na.crg\n$!***\n").unwrap();
    let e = err(&a);
    assert!(matches!(e.kind(), ErrorKind::IncludeLoop(_)), "{e}");
    assert_eq!((e.path(), e.line()), (Some(a.as_path()), Some(2)), "{e}");
}

#[test]
fn include_chains_too_deep_name_the_statement_and_are_not_called_loops() {
    let d = dir("chain");
    // c0 -> c1 -> ... -> c11, no loop; c8 is the ninth file, which c7 includes (line 3).
    for i in 0..12 {
        std::fs::write(d.join(format!("c{i}.crg")), format!("$CT\nchain\n$ROAD_CRG_FILE\nc{}.crg\n$!***\n", i + 1))
            .unwrap();
    }
    let e = err(&d.join("c0.crg"));
    assert!(matches!(e.kind(), ErrorKind::Header(_)), "{e}");
    assert!(e.to_string().contains("more than 8 files deep") && !e.to_string().contains("loop"), "{e}");
    assert_eq!((e.path(), e.line()), (Some(d.join("c7.crg").as_path()), Some(4)), "{e}");
}

#[test]
fn two_includes_name_each_its_own_line() {
    let d = dir("two-includes");
    let a = d.join("a.crg");
    std::fs::write(d.join("ok.crg"), "$CT\nfine\n$!***\n").unwrap();
    // The second include (line 6) names a missing file: the error names line 6, not line 2.
    std::fs::write(&a, "$ROAD_CRG_FILE\nok.crg\n$!***\n$CT\nx\n$ROAD_CRG_FILE\nmissing.crg\n$!***\n").unwrap();
    let e = err(&a);
    assert_eq!(e.line(), Some(7), "{e}");
    assert!(e.to_string().contains("missing.crg"), "{e}");
}

#[test]
fn a_directory_is_an_io_error_naming_it() {
    let d = dir("is-dir");
    let e = err(&d);
    assert!(matches!(e.kind(), ErrorKind::Io(_)), "{e}");
    assert_eq!(e.path(), Some(&*d));
}

#[test]
fn garbage_and_every_prefix_never_panic() {
    let d = dir("prefix");
    for format in [Format::Krbi, Format::Lrfi] {
        let (p, bytes) = write(&d, "p.crg", format);
        let start = data_start(&bytes);
        for cut in (0..bytes.len()).step_by(7).chain([start - 1, start, start + 1]) {
            std::fs::write(&p, &bytes[..cut]).unwrap();
            let _ = opencrg::read_file(&p);
        }
    }
    let p = d.join("g.crg");
    std::fs::write(&p, [0xffu8, 0x00, 0x24, 0x24, 0x24, 0x24, 0x0a, 0x01]).unwrap();
    let _ = opencrg::read_file(&p);
}

#[test]
fn folding_grid_is_an_error_of_check() {
    // A 2 m radius reference line under a grid reaching 3 m to the left.
    let (nu, nv) = (41, 7);
    let du = 0.1;
    let phi: Vec<f64> = (0..nu).map(|i| 0.2 + i as f64 * du / 2.0).collect();
    let z = vec![0.0f32; nu * nv];
    let crg = Crg::new_grid(0.0, du, nu, -3.0, 1.0, nv, (0.0, 0.0, 0.2), Some(phi), z.clone());
    let diags = opencrg::check::check(&crg);
    assert!(
        diags.iter().any(|d| d.severity == opencrg::check::Severity::Error && d.message.contains("folds")),
        "{diags:?}"
    );
    // The same grid along a 20 m radius does not fold.
    let phi: Vec<f64> = (0..nu).map(|i| 0.2 + i as f64 * du / 20.0).collect();
    let crg = Crg::new_grid(0.0, du, nu, -3.0, 1.0, nv, (0.0, 0.0, 0.2), Some(phi), z);
    assert!(!opencrg::check::check(&crg).iter().any(|d| d.message.contains("folds")));
}
