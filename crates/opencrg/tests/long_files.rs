//! Files of a megabyte and more are read head first: the header into memory, the binary data
//! row by row from the file. What they read to, and every error they give, must be what the
//! same bytes give when read whole (`read_bytes`), in every format and with every line ending.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opencrg::{Crg, ErrorKind, Format};
use roadscan_tests::Scratch;
use std::path::Path;

/// A grid whose binary files are 1.3 MB (KRBI) and more: past the read-whole size.
fn grid() -> Crg {
    let (nu, nv) = (2_000, 161);
    let z: Vec<f32> =
        (0..nu * nv).map(|i| if i % 997 == 5 { f32::NAN } else { (i as f32 * 0.37).sin() * 0.01 }).collect();
    let phi = (0..nu).map(|i| 0.3 + 1e-4 * i as f64).collect();
    Crg::new_grid(0.0, 0.01, nu, -0.8, 0.01, nv, (650_000.0, 240_000.0, 0.3), Some(phi), z)
}

/// The same grid: sizes, long sections and every height, bit for bit.
fn same_z(a: &Crg, b: &Crg) {
    assert_eq!((a.nu, a.nv()), (b.nu, b.nv()));
    assert_eq!(a.v_positions(), b.v_positions());
    assert!(a.z.iter().zip(&b.z).all(|(x, y)| x.to_bits() == y.to_bits()), "z differs");
}

/// The same file read: the grid and everything else.
fn same(a: &Crg, b: &Crg) {
    same_z(a, b);
    assert!(a.phi == b.phi, "phi differs");
    assert_eq!(a.modifiers, b.modifiers);
    assert_eq!(a.options, b.options);
    assert_eq!(a.comment, b.comment);
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn a_long_file_reads_as_its_bytes_do_in_every_format() {
    let d = Scratch::new("crg-long");
    let src = grid();
    for format in [Format::Krbi, Format::Kdbi, Format::Lrbi, Format::Ldbi, Format::Lrfi, Format::Ldfi] {
        let mut bytes = Vec::new();
        opencrg::write(&src, format, &mut bytes).unwrap();
        assert!(bytes.len() > 1 << 20, "{format:?}: {} bytes is not a long file", bytes.len());
        let p = write(&d, &format!("g-{format:?}.crg"), &bytes);
        let streamed = opencrg::read_file(&p).unwrap();
        let whole = opencrg::read_bytes(&bytes).unwrap();
        same(&streamed, &whole);
        if !format.is_text() {
            same_z(&streamed, &src);
        }
    }
}

#[test]
fn a_header_with_crlf_endings_split_anywhere_reads_the_same() {
    let d = Scratch::new("crg-long-crlf");
    let mut bytes = Vec::new();
    opencrg::write(&grid(), Format::Krbi, &mut bytes).unwrap();
    let sep = bytes.windows(5).position(|w| w == b"\n$$$$").unwrap() + 1;
    let data = sep + bytes[sep..].iter().position(|&b| b == b'\n').unwrap() + 1;
    // The header's lines end in CR LF; the data stay as they are.
    let header = String::from_utf8_lossy(&bytes[..data]).replace('\n', "\r\n");
    // A comment long enough to put the separator past the first 64 KiB read.
    let long_comment: String = (0..3000).map(|i| format!("comment line {i:05} of a long $CT block\r\n")).collect();
    let header = header.replacen("$CT\r\n", &format!("$CT\r\n{long_comment}"), 1);
    let mut crlf = header.into_bytes();
    crlf.extend_from_slice(&bytes[data..]);
    let p = write(&d, "crlf.crg", &crlf);
    same(&opencrg::read_file(&p).unwrap(), &opencrg::read_bytes(&crlf).unwrap());
    same_z(&opencrg::read_file(&p).unwrap(), &grid());
}

#[test]
fn a_long_file_errs_where_its_bytes_do() {
    let d = Scratch::new("crg-long-bad");
    let mut bytes = Vec::new();
    opencrg::write(&grid(), Format::Krbi, &mut bytes).unwrap();
    let place = |e: &opencrg::Error| (e.kind().to_string(), e.byte(), e.line());
    // Cut in the middle of a row, far past the first read.
    let cut = &bytes[..bytes.len() - 1_000];
    let p = write(&d, "cut.crg", cut);
    let (a, b) = (opencrg::read_file(&p).unwrap_err(), opencrg::read_bytes(cut).unwrap_err());
    assert!(matches!(a.kind(), ErrorKind::Truncated(_)), "{a}");
    assert_eq!(place(&a), place(&b));
    assert!(a.to_string().contains("cut.crg"), "{a}");
    // An infinite value in row nu - 2, column 11 (phi, then the long sections; KRBI rows are
    // 162 floats of 4 bytes, unpadded): that row, column and byte.
    let sep = bytes.windows(5).position(|w| w == b"\n$$$$").unwrap() + 1;
    let data = sep + bytes[sep..].iter().position(|&b| b == b'\n').unwrap() + 1;
    let at = data + (2_000 - 3) * 162 * 4 + 10 * 4;
    let mut bad = bytes.clone();
    bad[at..at + 4].copy_from_slice(&f32::INFINITY.to_be_bytes());
    let p = write(&d, "inf.crg", &bad);
    let (a, b) = (opencrg::read_file(&p).unwrap_err(), opencrg::read_bytes(&bad).unwrap_err());
    assert!(matches!(a.kind(), ErrorKind::DataValue { row: 1998, column: 11, .. }), "{a}");
    assert_eq!(place(&a), place(&b));
    assert_eq!(a.byte(), Some(at as u64));
}
