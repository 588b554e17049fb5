//! LAS files crafted byte by byte: every point format 0-10 in the version that introduced it
//! (and LAS 1.0), records longer than their format (extra bytes), bytes between the last VLR
//! and the points; each field read back where the LAS specification puts it.

#![allow(clippy::unwrap_used, clippy::panic)] // tests fail loudly

mod common;

use scan::{LasReader, Points};

/// The version minor that introduced point format `f`, and the format's record size.
fn version_and_size(f: u8) -> (u8, usize) {
    match f {
        0 | 1 => (0, [20, 28][f as usize]),
        2 | 3 => (2, [26, 34][f as usize - 2]),
        4 | 5 => (3, [57, 63][f as usize - 4]),
        _ => (4, [30, 36, 38, 59, 67][f as usize - 6]),
    }
}

/// What point `i` holds: integer x, y, z; intensity; return, returns; class; scan angle (raw:
/// degrees in 0-5, 0.006 degrees in 6-10); source; GPS time; RGB.
struct Want {
    xyz: [i32; 3],
    intensity: u16,
    ret: (u8, u8),
    class: u8,
    angle: i16,
    source: u16,
    gps: f64,
    rgb: [u16; 3],
}

fn want(i: usize) -> Want {
    let i32_ = i as i32;
    Want {
        xyz: [100_000 + 7 * i32_, 200_000 - 3 * i32_, 5_000 + i32_],
        intensity: 100 + i as u16,
        ret: (1 + (i % 3) as u8, 3),
        class: [2, 6, 11][i % 3],
        angle: -10 + i as i16,
        source: 7 + i as u16,
        gps: 1000.5 + i as f64,
        rgb: [256 * i as u16, 2, 3],
    }
}

/// A record of format `f`, `len` bytes (at least the format's size).
fn record(f: u8, len: usize, w: &Want) -> Vec<u8> {
    let mut r = vec![0u8; len];
    for (k, v) in w.xyz.iter().enumerate() {
        r[4 * k..4 * k + 4].copy_from_slice(&v.to_le_bytes());
    }
    r[12..14].copy_from_slice(&w.intensity.to_le_bytes());
    let rgb_at = match f {
        0 | 1 | 4 | 6 | 9 => None,
        2 => Some(20),
        3 | 5 => Some(28),
        _ => Some(30),
    };
    if f < 6 {
        r[14] = w.ret.0 | (w.ret.1 << 3);
        r[15] = w.class;
        r[16] = w.angle as i8 as u8;
        r[18..20].copy_from_slice(&w.source.to_le_bytes());
        if matches!(f, 1 | 3 | 4 | 5) {
            r[20..28].copy_from_slice(&w.gps.to_le_bytes());
        }
    } else {
        r[14] = w.ret.0 | (w.ret.1 << 4);
        r[16] = w.class;
        r[18..20].copy_from_slice(&(w.angle * 100).to_le_bytes());
        r[20..22].copy_from_slice(&w.source.to_le_bytes());
        r[22..30].copy_from_slice(&w.gps.to_le_bytes());
    }
    if let Some(a) = rgb_at {
        for (k, v) in w.rgb.iter().enumerate() {
            r[a + 2 * k..a + 2 * k + 2].copy_from_slice(&v.to_le_bytes());
        }
    }
    r
}

/// A LAS 1.`minor` file of `n` points of format `f`, records `extra` bytes longer than the
/// format, one VLR (of no CRS) and `gap` bytes after it before the points.
fn las(minor: u8, f: u8, n: usize, extra: usize, gap: usize) -> Vec<u8> {
    let header = match minor {
        0..=2 => 227,
        3 => 235,
        _ => 375,
    };
    let len = version_and_size(f).1 + extra;
    let vlr_len = 54 + 10;
    let offset = header + vlr_len + gap;
    let mut b = vec![0u8; offset];
    b[0..4].copy_from_slice(b"LASF");
    b[24] = 1;
    b[25] = minor;
    b[94..96].copy_from_slice(&(header as u16).to_le_bytes());
    b[96..100].copy_from_slice(&(offset as u32).to_le_bytes());
    b[100..104].copy_from_slice(&1u32.to_le_bytes());
    b[104] = f;
    b[105..107].copy_from_slice(&(len as u16).to_le_bytes());
    if f < 6 {
        b[107..111].copy_from_slice(&(n as u32).to_le_bytes());
    }
    for k in 0..3 {
        b[131 + 8 * k..139 + 8 * k].copy_from_slice(&0.01f64.to_le_bytes());
        b[155 + 8 * k..163 + 8 * k].copy_from_slice(&[-50.0f64, 10.0, 0.0][k].to_le_bytes());
    }
    // Bounds (max x, min x, max y, min y, max z, min z) around the points.
    for (k, v) in [1e5, -1e5, 1e5, -1e5, 1e4, -1e4].iter().enumerate() {
        b[179 + 8 * k..187 + 8 * k].copy_from_slice(&f64::to_le_bytes(*v));
    }
    if minor >= 4 {
        b[247..255].copy_from_slice(&(n as u64).to_le_bytes());
    }
    // A VLR of 10 bytes of a user of our own.
    let v = header;
    b[v + 2..v + 10].copy_from_slice(b"roadscan");
    b[v + 18..v + 20].copy_from_slice(&1u16.to_le_bytes());
    b[v + 20..v + 22].copy_from_slice(&10u16.to_le_bytes());
    for i in 0..n {
        b.extend(record(f, len, &want(i)));
    }
    b
}

fn read(bytes: &[u8], name: &str) -> (Points, LasReader) {
    let d = roadscan_tests::Scratch::new("scan-formats");
    let path = d.join(name);
    std::fs::write(&path, bytes).unwrap();
    common::read_all(&path, 7)
}

#[test]
fn every_point_format_reads_its_fields_where_the_specification_puts_them() {
    let n = 20;
    for f in 0..=10u8 {
        let (minor, _) = version_and_size(f);
        // The format's own version, and LAS 1.4 (which reads every format); plain records, and
        // records with 5 extra bytes behind 3 bytes between the VLR and the points.
        for (minor, extra, gap) in [(minor, 0, 0), (4, 5, 3)] {
            let what = format!("format {f}, LAS 1.{minor}, {extra} extra bytes, {gap} bytes before the points");
            let (p, r) = read(&las(minor, f, n, extra, gap), &format!("f{f}-{minor}-{extra}.las"));
            let h = r.header();
            assert_eq!((h.point_format, h.version, h.point_count), (f, (1, minor), n as u64), "{what}");
            assert!(r.warnings().iter().all(|w| w.contains("CRS")), "{what}: {:?}", r.warnings());
            assert_eq!(p.x.len(), n, "{what}");
            for i in 0..n {
                let w = want(i);
                let xyz = [p.x[i], p.y[i], p.z[i]];
                for k in 0..3 {
                    let v = w.xyz[k] as f64 * 0.01 + [-50.0, 10.0, 0.0][k];
                    assert!((xyz[k] - v).abs() < 1e-9, "{what}: point {i} coordinate {k}: {} vs {v}", xyz[k]);
                }
                assert_eq!(
                    (p.intensity[i], p.return_number[i], p.number_of_returns[i], p.class[i], p.source[i]),
                    (w.intensity, w.ret.0, w.ret.1, w.class, w.source),
                    "{what}: point {i}"
                );
                let angle = if f < 6 { w.angle as f32 } else { (w.angle * 100) as f32 * 0.006 };
                assert!((p.scan_angle_deg[i] - angle).abs() < 1e-4, "{what}: point {i} angle {}", p.scan_angle_deg[i]);
                if matches!(f, 0 | 2) {
                    assert!(p.gps_time[i].is_nan(), "{what}: point {i} has no GPS time");
                } else {
                    assert_eq!(p.gps_time[i], w.gps, "{what}: point {i}");
                }
                if matches!(f, 2 | 3 | 5 | 7 | 8 | 10) {
                    assert_eq!(p.rgb[i], w.rgb, "{what}: point {i}");
                } else {
                    assert!(p.rgb.is_empty(), "{what}");
                }
            }
        }
    }
}

/// The problems `info` reports for `bytes` (LAS), after reading every point.
fn problems(bytes: &[u8], name: &str) -> Vec<String> {
    let d = roadscan_tests::Scratch::new(&format!("scan-tails-{name}"));
    let path = d.join(name);
    std::fs::write(&path, bytes).unwrap();
    let mut r = LasReader::open(&path).unwrap_or_else(|e| panic!("{e}"));
    // What the points do not need is no warning of every read (crg, voxel), only info's.
    assert!(r.warnings().iter().all(|w| w.contains("CRS")), "{name}: {:?}", r.warnings());
    let s = scan::summarize(&mut r).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(s.points, 30, "{name}: every point is read");
    s.problems.into_iter().filter(|p| !p.contains("no CRS")).collect()
}

/// Asserts that exactly one problem is reported and that it holds every `parts`.
fn one_problem(bytes: &[u8], name: &str, parts: &[&str]) {
    let p = problems(bytes, name);
    assert!(p.len() == 1 && parts.iter().all(|s| p[0].contains(s)), "{name}: {p:?}");
}

#[test]
fn info_reports_bad_evlrs_waveform_offsets_and_lying_return_counts() {
    // LAS 1.4, format 6: 30 points, 10 each of returns 1, 2 and 3; the points end at `end`.
    let good = las(4, 6, 30, 0, 0);
    let end = good.len();
    assert!(problems(&good, "good.las").is_empty());
    let set = |b: &mut Vec<u8>, at: usize, v: &[u8]| b[at..at + v.len()].copy_from_slice(v);

    // EVLRs: the start outside the file; one EVLR whose length runs past the end; a count of
    // 2^32 - 1 with one EVLR present.
    let mut b = good.clone();
    set(&mut b, 235, &(1u64 << 40).to_le_bytes());
    set(&mut b, 243, &2u32.to_le_bytes());
    one_problem(&b, "evlr-start.las", &["2 EVLRs from byte 1099511627776", "header byte 235"]);
    let mut evlr = vec![0u8; 60];
    evlr[20..28].copy_from_slice(&10u64.to_le_bytes());
    evlr.extend([7u8; 10]);
    let mut b = good.clone();
    b.extend(&evlr);
    set(&mut b, 235, &(end as u64).to_le_bytes());
    set(&mut b, 243, &1u32.to_le_bytes());
    assert!(problems(&b, "evlr.las").is_empty());
    set(&mut b, end + 20, &(1u64 << 40).to_le_bytes());
    one_problem(&b, "evlr-length.las", &[&format!("EVLR 0 at byte {end} says 1099511627776 bytes")]);
    set(&mut b, end + 20, &10u64.to_le_bytes());
    set(&mut b, 243, &u32::MAX.to_le_bytes());
    one_problem(&b, "evlr-count.las", &["header says 4294967295 EVLRs", "1 fit"]);

    // Points by return: summing to the count but not the points' (lying); not summing to it.
    let by_return = |counts: &[u64]| {
        let mut b = good.clone();
        for (k, n) in counts.iter().enumerate() {
            set(&mut b, 255 + 8 * k, &n.to_le_bytes());
        }
        b
    };
    assert!(problems(&by_return(&[10, 10, 10]), "returns.las").is_empty());
    one_problem(&by_return(&[30]), "lying.las", &["points by return (30, 0, 0", "return numbers (10, 10, 10, 0"]);
    let p = problems(&by_return(&[100, 10, 10]), "sum.las");
    assert!(p.iter().any(|p| p.contains("sum to 120, the header's point count is 30")), "{p:?}");

    // LAS 1.3 format 4, waveform packets in the file (global encoding bit 1): the start
    // outside the file; a packet past the packet data.
    let mut b = las(3, 4, 30, 0, 0);
    let end = b.len();
    let stride = 57;
    let offset = end - 30 * stride;
    set(&mut b, 6, &2u16.to_le_bytes());
    for i in 0..30 {
        // Descriptor 1, packet i at byte 3 i, 4 bytes.
        b[offset + i * stride + 28] = 1;
        set(&mut b, offset + i * stride + 29, &(3 * i as u64).to_le_bytes());
        set(&mut b, offset + i * stride + 37, &4u32.to_le_bytes());
    }
    let mut w = b.clone();
    set(&mut w, 227, &(1u64 << 50).to_le_bytes());
    one_problem(&w, "wave-start.las", &["waveform data packets start at byte 1125899906842624"]);
    b.extend(vec![0u8; 60 + 100]);
    set(&mut b, 227, &(end as u64).to_le_bytes());
    assert!(problems(&b, "waves.las").is_empty());
    set(&mut b, offset + 5 * stride + 29, &u64::MAX.to_le_bytes());
    set(&mut b, offset + 7 * stride + 29, &97u64.to_le_bytes());
    one_problem(&b, "wave-offset.las", &["2 points (the first is point 5)", "outside the 100 bytes"]);
}
