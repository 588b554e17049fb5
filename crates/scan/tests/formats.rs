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
