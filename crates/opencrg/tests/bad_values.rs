//! Real samples with one bad value each (mutated in memory, written to a scratch file): every
//! one is a typed error naming the file and the line (header) or the line/byte (data), never a
//! panic, and never an allocation from a declared count. Then: render and write never hang or
//! allocate absurdly on what the reader still accepts.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use opencrg::Error;
use roadscan_tests::Scratch;
use std::path::Path;

fn sample(sub: &str, name: &str) -> Vec<u8> {
    let data = roadscan_tests::shared_data();
    std::fs::read(data.join("opencrg").join(sub).join(name)).unwrap()
}

/// The 1-based line numbers and byte offsets of a file's lines, up to its data section.
fn lines(bytes: &[u8]) -> Vec<(usize, &[u8])> {
    let mut out = Vec::new();
    let mut at = 0;
    for l in bytes.split(|&b| b == b'\n') {
        out.push((at, l));
        at += l.len() + 1;
    }
    out
}

/// 1-based line number of the first line starting with `prefix` (case-insensitive).
fn line_of(bytes: &[u8], prefix: &str) -> usize {
    lines(bytes)
        .iter()
        .position(|(_, l)| l.len() >= prefix.len() && l[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes()))
        .unwrap_or_else(|| panic!("no line {prefix}"))
        + 1
}

/// Replaces the line starting with `prefix` by `new`; returns the bytes and the line number.
fn set_line(bytes: &[u8], prefix: &str, new: &str) -> (Vec<u8>, usize) {
    let n = line_of(bytes, prefix);
    let ls = lines(bytes);
    let (at, l) = ls[n - 1];
    ([&bytes[..at], new.as_bytes(), &bytes[at + l.len()..]].concat(), n)
}

/// Inserts `new` as a line before the line starting with `prefix`; returns the bytes and the
/// new line's number.
fn insert_before(bytes: &[u8], prefix: &str, new: &str) -> (Vec<u8>, usize) {
    let n = line_of(bytes, prefix);
    let at = lines(bytes)[n - 1].0;
    ([&bytes[..at], new.as_bytes(), b"\n", &bytes[at..]].concat(), n)
}

/// Removes every header line starting with `prefix` (case-insensitive).
fn drop_lines(bytes: &[u8], prefix: &str) -> Vec<u8> {
    let data_at = data_start(bytes);
    let mut out = Vec::new();
    for l in bytes[..data_at].split_inclusive(|&b| b == b'\n') {
        if !(l.len() >= prefix.len() && l[..prefix.len()].eq_ignore_ascii_case(prefix.as_bytes())) {
            out.extend_from_slice(l);
        }
    }
    out.extend_from_slice(&bytes[data_at..]);
    out
}

/// Byte offset of the data section (after the `$$$$` line).
fn data_start(bytes: &[u8]) -> usize {
    let n = line_of(bytes, "$$$$");
    let (at, l) = lines(bytes)[n - 1];
    at + l.len() + 1
}

/// (bytes, line, byte offset) of the text data line `k` (0-based) after the separator.
fn data_line(bytes: &[u8], k: usize) -> (usize, usize, usize) {
    let n = line_of(bytes, "$$$$") + 1 + k;
    let (at, l) = lines(bytes)[n - 1];
    (n, at, l.len())
}

/// Where the error must point.
#[derive(Debug, Clone, Copy)]
enum At {
    /// A header line.
    Line(usize),
    /// A text data line and the exact byte.
    LineByte(usize, usize),
    /// A byte of binary data (exact), with no line.
    Byte(usize),
}

struct Case {
    name: String,
    bytes: Vec<u8>,
    /// The variant (its Debug name).
    kind: &'static str,
    at: At,
    /// Text the message must contain.
    says: String,
}

fn case(name: &str, bytes: Vec<u8>, kind: &'static str, at: At, says: &str) -> Case {
    Case { name: name.into(), bytes, kind, at, says: says.into() }
}

fn straight_cases(s: &[u8]) -> Vec<Case> {
    let mut c = Vec::new();
    for (value, says) in [
        ("NaN", "REFERENCE_LINE_INCREMENT = NaN: not a finite number"),
        ("nan", "= nan: not a finite number"),
        ("0", "= 0: an increment must be at least 1e-6 m"),
        ("0.0", "= 0.0: an increment must be at least"),
        ("1e-300", "= 1e-300: an increment must be at least"),
        ("-1.0", "= -1.0: an increment must be at least"),
        ("inf", "= inf: not a finite number"),
        ("", "= : no value"),
    ] {
        let (b, n) = set_line(s, "REFERENCE_LINE_INCREMENT", &format!("REFERENCE_LINE_INCREMENT = {value}"));
        c.push(case(&format!("u increment {value:?}"), b, "HeaderValue", At::Line(n), says));
    }
    for value in ["NaN", "0", "1e-300", "-0.5"] {
        let (b, n) = set_line(s, "LONG_SECTION_V_INCREMENT", &format!("LONG_SECTION_V_INCREMENT = {value} ! c"));
        c.push(case(
            &format!("v increment {value}"),
            b,
            "HeaderValue",
            At::Line(n),
            &format!("V_INCREMENT = {value}:"),
        ));
    }
    // 3 m at 10 µm: 300001 long sections declared, 7 in the data.
    let (b, n) = set_line(s, "LONG_SECTION_V_INCREMENT", "LONG_SECTION_V_INCREMENT = 1e-5");
    c.push(case(
        "v increment 1e-5 (300001 long sections)",
        b,
        "Inconsistent",
        At::Line(n),
        "declare 300001 long sections, the data hold 7",
    ));
    let (b, n) = set_line(s, "REFERENCE_LINE_START_PHI", "REFERENCE_LINE_START_PHI = inf");
    c.push(case("START_PHI inf", b, "HeaderValue", At::Line(n), "REFERENCE_LINE_START_PHI = inf: not a finite"));
    let (b, n) = insert_before(s, "REFERENCE_LINE_INCREMENT", "REFERENCE_LINE_END_Z     = nan ! end height");
    c.push(case("END_Z nan", b, "HeaderValue", At::Line(n), "REFERENCE_LINE_END_Z = nan: not a finite"));
    let (b, n) = set_line(s, "REFERENCE_LINE_START_X", "REFERENCE_LINE_START_X   = abc");
    c.push(case("START_X abc", b, "HeaderValue", At::Line(n), "= abc: not a number"));
    let (b, n) = set_line(s, "REFERENCE_LINE_END_U", "REFERENCE_LINE_END_U     = 1e999");
    c.push(case("END_U 1e999", b, "HeaderValue", At::Line(n), "= 1e999: not a finite number"));
    let (b, n) = set_line(s, "REFERENCE_LINE_END_U", "REFERENCE_LINE_END_U     = 1e300");
    c.push(case("END_U 1e300 (text)", b, "Inconsistent", At::Line(n), "END_U is 1e300 but the 23 rows"));
    let (b, n) = insert_before(s, "$KD_Definition", "$ROAD_CRG_MODS\nSCALE_Z_GRID = NaN\n$!****");
    c.push(case("modifier NaN", b, "HeaderValue", At::Line(n + 1), "SCALE_Z_GRID = NaN: not a finite"));
    let (b, n) = set_line(s, "D:long section 3,m", "D:long section x,m");
    c.push(case("long section number x", b, "Header", At::Line(n), "long section number is not a finite number"));
    // Keys and lines missing.
    let sep = line_of(s, "$$$$");
    c.push(case("no #: line", drop_lines(s, "#:"), "Format", At::Line(sep - 1), "no '#:' line"));
    c.push(case("no D: lines", drop_lines(s, "D:"), "Header", At::Line(sep - 7), "defines no data channel"));
    let no_sep = drop_lines(s, "$$$$");
    let last = lines(&no_sep).len() - 1;
    c.push(case("no $$$$ line", no_sep, "NoDataSection", At::Line(last), "no data section"));
    // Data values: row 2 is " 0.0000000 0.0000000 0.0000000 0.0111111 ...".
    let (n, at, _) = data_line(s, 1);
    let field = at + 3 * 10;
    for (value, kind, says) in [
        (" abcdefghi", "DataValue", "row 2, column 4: 'abcdefghi' is not a number"),
        ("    1.5d-3", "DataValue", "row 2, column 4: '1.5d-3' is not a number"),
        ("          ", "DataValue", "row 2, column 4: an empty field"),
        ("  1.0e+400", "DataValue", "'1.0e+400' is infinite"),
        ("  1.0e+039", "DataValue", "'1.0e+039' is beyond the range of single precision"),
    ] {
        let b = [&s[..field], value.as_bytes(), &s[field + 10..]].concat();
        c.push(case(&format!("data {value:?}"), b, kind, At::LineByte(n, field), says));
    }
    // Row 5 with 6 of 7 values, then with 8.
    let (n, at, len) = data_line(s, 4);
    let b = [&s[..at + len - 10], &s[at + len..]].concat();
    c.push(case(
        "row with 6 of 7 values",
        b,
        "RowLength",
        At::LineByte(n, at),
        "row 5: the line holds 6 value(s), 7 expected",
    ));
    let b = [&s[..at + len], b" 0.0000000", &s[at + len..]].concat();
    c.push(case(
        "row with 8 of 7 values",
        b,
        "RowLength",
        At::LineByte(n, at),
        "row 5: the line holds 8 value(s), 7 expected",
    ));
    // Truncated: in the middle of the last row, and after a whole row (END_U then disagrees).
    let (n, at, _) = data_line(s, 22);
    c.push(case(
        "truncated mid-row",
        s[..at + 35].to_vec(),
        "RowLength",
        At::LineByte(n, at),
        "holds 4 value(s), 7 expected",
    ));
    let end_u = line_of(s, "REFERENCE_LINE_END_U");
    c.push(case("truncated after row 22", s[..at].to_vec(), "Inconsistent", At::Line(end_u), "the 22 rows of data"));
    c
}

fn double_cases(d: &[u8]) -> Vec<Case> {
    // LDFI, 7 channels: each row is a line of 4 values and one of 3. Drop row 3's second line:
    // row 4's first line (4 values) comes where 3 are expected.
    let (_, at, len) = data_line(d, 5);
    let b = [&d[..at], &d[at + len + 1..]].concat();
    let (n, at, _) = data_line(&b, 5);
    vec![case(
        "LDFI row missing its second line",
        b,
        "RowLength",
        At::LineByte(n, at),
        "row 3: the line holds 4 value(s), 3 expected",
    )]
}

fn belgian_cases(b: &[u8]) -> Vec<Case> {
    let mut c = Vec::new();
    for (value, says) in [
        ("NaN", "REFERENCE_LINE_INCREMENT = NaN: not a finite"),
        ("0", "= 0: an increment must be at least 1e-6 m"),
        ("1e-300", "= 1e-300: an increment must be at least"),
    ] {
        let (m, n) = set_line(b, "reference_line_increment", &format!("reference_line_increment = {value}"));
        c.push(case(&format!("binary u increment {value}"), m, "HeaderValue", At::Line(n), says));
    }
    let (m, n) = set_line(b, "reference_line_start_phi", "reference_line_start_phi = inf");
    c.push(case("binary START_PHI inf", m, "HeaderValue", At::Line(n), "= inf: not a finite"));
    let (m, n) = set_line(b, "reference_line_end_z", "reference_line_end_z = nan");
    c.push(case("binary END_Z nan", m, "HeaderValue", At::Line(n), "= nan: not a finite"));
    // Huge row counts: fail at once from the file size, before any allocation.
    for (key, value) in
        [("reference_line_end_u", "1e300"), ("reference_line_start_u", "-1e300"), ("reference_line_end_u", "5e11")]
    {
        let (m, _) = set_line(b, key, &format!("{key} = {value}"));
        let end = m.len();
        c.push(case(&format!("binary {key} {value}"), m, "Truncated", At::Byte(end), "END_U asks for"));
    }
    let (m, n) = set_line(b, "reference_line_end_u", "reference_line_end_u = 0");
    c.push(case("binary END_U before START_U", m, "HeaderValue", At::Line(n), "lies before REFERENCE_LINE_START_U"));
    let m = drop_lines(b, "reference_line_end_u");
    let sep = line_of(&m, "$$$$");
    c.push(case("binary without END_U", m, "Header", At::Line(sep), "need REFERENCE_LINE_END_U"));
    // An infinite height at row 10, column 5 (column 1 is phi).
    let start = data_start(b);
    let at = start + (9 * 342 + 4) * 4;
    let m = [&b[..at], &f32::INFINITY.to_be_bytes(), &b[at + 4..]].concat();
    c.push(case("binary z +inf", m, "DataValue", At::Byte(at), "row 10, column 5: inf is infinite"));
    let m = b[..b.len() - 1000].to_vec();
    let end = m.len();
    c.push(case("binary truncated", m, "Truncated", At::Byte(end), "END_U asks for 1001 rows"));
    c
}

fn check(dir: &Path, c: &Case) -> Result<String, String> {
    let p = dir.join("m.crg");
    std::fs::write(&p, &c.bytes).unwrap();
    let t = std::time::Instant::now();
    let r = std::panic::catch_unwind(|| opencrg::read_file(&p));
    let secs = t.elapsed().as_secs_f64();
    let e: Error = match r {
        Err(_) => return Err("panicked".into()),
        Ok(Ok(crg)) => return Err(format!("read with exit 0 ({} x {} nodes, du {})", crg.nu, crg.nv(), crg.du())),
        Ok(Err(e)) => e,
    };
    let msg = e.to_string();
    let kind = format!("{:?}", e.kind());
    let mut wrong = Vec::new();
    if !kind.starts_with(c.kind) {
        wrong.push(format!("kind {kind}, expected {}", c.kind));
    }
    if e.path() != Some(p.as_path()) {
        wrong.push(format!("path {:?}", e.path()));
    }
    let (line, byte) = match c.at {
        At::Line(n) => (Some(n), None),
        At::LineByte(n, b) => (Some(n), Some(b as u64)),
        At::Byte(b) => (None, Some(b as u64)),
    };
    if e.line() != line || e.byte() != byte {
        wrong.push(format!("at line {:?} byte {:?}, expected {line:?} {byte:?}", e.line(), e.byte()));
    }
    if !msg.contains(&c.says) {
        wrong.push(format!("message lacks {:?}", c.says));
    }
    if secs > 2.0 {
        wrong.push(format!("took {secs:.1} s"));
    }
    if wrong.is_empty() {
        Ok(msg)
    } else {
        Err(format!("{}: {msg}", wrong.join("; ")))
    }
}

#[roadscan_tests::needs_shared_data]
#[test]
fn every_bad_value_is_a_typed_error_with_its_place() {
    let (s, d, b) = (
        sample("crg-txt", "handmade_straight.crg"),
        sample("crg-txt", "handmade_straight_double.crg"),
        sample("crg-bin", "belgian_block.crg"),
    );
    // The unmutated samples read (so each failure below is the mutation's).
    let dir = Scratch::new("crg-bad-values");
    for (name, bytes) in [("straight", &s), ("double", &d), ("belgian", &b)] {
        let p = dir.join("ok.crg");
        std::fs::write(&p, bytes).unwrap();
        opencrg::read_file(&p).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    let cases: Vec<Case> = straight_cases(&s).into_iter().chain(double_cases(&d)).chain(belgian_cases(&b)).collect();
    let mut failed = Vec::new();
    for c in &cases {
        match check(&dir, c) {
            Ok(msg) => eprintln!("ok   {}: {msg}", c.name),
            Err(why) => {
                eprintln!("FAIL {}: {why}", c.name);
                failed.push(c.name.clone());
            }
        }
    }
    assert!(failed.is_empty(), "{} of {} cases failed: {failed:?}", failed.len(), cases.len());
}

/// The finest grid the reader accepts (1 µm along u) renders and writes quickly, with a mark
/// box reaching far beyond it, and reads back the same.
#[roadscan_tests::needs_shared_data]
#[test]
fn finest_accepted_grid_renders_and_writes() {
    let s = sample("crg-txt", "handmade_straight.crg");
    let dir = Scratch::new("crg-bad-values-fine");
    let m = drop_lines(&s, "REFERENCE_LINE_END");
    let (m, _) = set_line(&m, "REFERENCE_LINE_INCREMENT", "REFERENCE_LINE_INCREMENT = 1e-6");
    let p = dir.join("fine.crg");
    std::fs::write(&p, &m).unwrap();
    let crg = opencrg::read_file(&p).unwrap();
    assert_eq!((crg.nu, crg.du()), (23, 1e-6));
    let t = std::time::Instant::now();
    let opts = opencrg::render::RenderOptions {
        marks: vec![[0.0, 1e9, -1.0, 1.0], [-1e12, 1e12, -1e9, 1e9]],
        ..Default::default()
    };
    let (img, info) = opencrg::render::render_rgb(&crg, &opts).unwrap();
    assert_eq!(img.len(), info.width * info.height * 3);
    assert!(t.elapsed().as_secs_f64() < 2.0, "render took {:?}", t.elapsed());
    for format in [opencrg::Format::Lrfi, opencrg::Format::Krbi] {
        let q = dir.join("back.crg");
        opencrg::write_file(&crg, &q, format).unwrap();
        let back = opencrg::read_file(&q).unwrap();
        assert_eq!((back.nu, back.du(), back.nv()), (crg.nu, crg.du(), crg.nv()), "{format:?}");
        // LRFI keeps 9 characters of a negative value.
        assert!(
            back.z.iter().zip(&crg.z).all(|(a, b)| (a - b).abs() < 1e-6 || (a.is_nan() && b.is_nan())),
            "{format:?}"
        );
    }
}
