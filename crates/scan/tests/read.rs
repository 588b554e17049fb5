//! The reader: our own LAS/LAZ read back chunk by chunk to the points written; broken files
//! made here give a warning and the recoverable points, or an error naming file and byte;
//! never a panic.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

mod common;

use common::{dir, options, points, read_all};
use scan::{write_las, LasReader, Points};
use std::path::Path;

#[test]
fn our_las_and_laz_read_back_in_chunks() {
    let d = dir("ours");
    // Enough points for several of the LAZ reader's batches of decoded chunks.
    let pts = points(456_789);
    for name in ["a.las", "a.laz"] {
        let path = d.join(name);
        write_las(&path, &pts, &options()).unwrap();
        let (got, r) = read_all(&path, 10_000);
        let h = r.header();
        assert_eq!((h.version, h.point_format, h.compressed), ((1, 4), 6, name.ends_with(".laz")));
        assert_eq!(h.point_count, pts.len() as u64);
        assert_eq!(got.len(), pts.len());
        assert!(r.warnings().is_empty(), "{:?}", r.warnings());
        assert_eq!((h.crs.source, h.crs.epsg, h.crs.unit), ("wkt", Some(23700), Some(1.0)));
        assert!(h.gps_standard_time);
        for (i, p) in pts.iter().enumerate() {
            // 1 mm quantisation.
            assert!((got.x[i] - p.x).abs() <= 5e-4 && (got.y[i] - p.y).abs() <= 5e-4 && (got.z[i] - p.z).abs() <= 5e-4);
            assert_eq!((got.intensity[i], got.class[i], got.source[i]), (p.intensity, p.class, p.source));
            assert_eq!(got.gps_time[i], p.gps_time);
            // LAS 1.4 stores the scan angle in steps of 0.006 degrees.
            assert!(
                (got.scan_angle_deg[i] - p.scan_angle_deg).abs() <= 0.0061,
                "{} {}",
                got.scan_angle_deg[i],
                p.scan_angle_deg
            );
        }
        // Other chunk sizes (within a batch, across batches) give the same points; x, y, z
        // only leaves the other columns empty.
        for chunk in [777, 1 << 20] {
            assert!(read_all(&path, chunk).0 == got, "{name}: chunks of {chunk}");
        }
        let mut r = LasReader::open(&path).unwrap();
        r.set_xyz_only(true);
        let (mut p, mut n) = (Points::default(), 0);
        while r.read(&mut p, 50_000).unwrap() > 0 {
            assert!(p.x == got.x[n..n + p.len()] && p.z == got.z[n..n + p.len()]);
            assert!(p.intensity.is_empty() && p.gps_time.is_empty() && p.class.is_empty());
            n += p.len();
        }
        assert_eq!(n, pts.len());
        // All columns again after some points of x, y, z only (LAZ: a decoder of all fields,
        // past the points served): the rest read as before.
        let mut r = LasReader::open(&path).unwrap();
        r.set_xyz_only(true);
        assert_eq!(r.read(&mut p, 123_456).unwrap(), 123_456);
        r.set_xyz_only(false);
        let mut n = 123_456;
        while r.read(&mut p, 100_000).unwrap() > 0 {
            let k = n + p.len();
            assert!(p.x == got.x[n..k] && p.z == got.z[n..k] && p.gps_time == got.gps_time[n..k]);
            assert!(p.intensity == got.intensity[n..k] && p.class == got.class[n..k], "{name}: points {n}..{k}");
            n = k;
        }
        assert_eq!(n, pts.len());
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A valid 1.4 file of `n` points, as bytes.
fn las_bytes(d: &Path, n: usize) -> Vec<u8> {
    let path = d.join("base.las");
    write_las(&path, &points(n), &options()).unwrap();
    std::fs::read(&path).unwrap()
}

fn error_of(d: &Path, name: &str, bytes: &[u8]) -> String {
    let path = d.join(name);
    std::fs::write(&path, bytes).unwrap();
    let mut r = match LasReader::open(&path) {
        Err(e) => return e.to_string(),
        Ok(r) => r,
    };
    let mut p = Points::default();
    loop {
        match r.read(&mut p, 1000) {
            Err(e) => return e.to_string(),
            Ok(0) => return format!("no error; warnings {:?}", r.warnings()),
            Ok(_) => {}
        }
    }
}

#[test]
fn broken_files_give_warnings_or_errors_with_the_place() {
    let d = dir("broken");
    let good = las_bytes(&d, 1000);
    std::fs::write(d.join("good.las"), &good).unwrap();
    let offset = u32::from_le_bytes(good[96..100].try_into().unwrap()) as usize;
    let stride = u16::from_le_bytes(good[105..107].try_into().unwrap()) as usize;
    assert_eq!(good.len(), offset + 1000 * stride);

    // Truncated in the points: the whole records are read, with a warning.
    let path = d.join("truncated.las");
    std::fs::write(&path, &good[..offset + 600 * stride + 7]).unwrap();
    let (got, r) = read_all(&path, 256);
    assert_eq!(got.len(), 600);
    assert!(
        r.warnings().iter().any(|w| w.contains("header says 1000 points") && w.contains("reading 600")),
        "{:?}",
        r.warnings()
    );

    // Truncated in the header or the VLRs.
    let e = error_of(&d, "stub.las", &good[..100]);
    assert!(e.contains("stub.las") && e.contains("byte 0") && e.contains("not a LAS file"), "{e}");
    let e = error_of(&d, "novlr.las", &good[..offset - 10]);
    assert!(e.contains("novlr.las") && e.contains("byte 96") && e.contains("offset to point data"), "{e}");

    // Empty file; a valid file of no points.
    let e = error_of(&d, "empty.las", &[]);
    assert!(e.contains("empty.las") && e.contains("not a LAS file"), "{e}");
    let none = las_bytes(&d, 0);
    let path = d.join("none.las");
    std::fs::write(&path, &none).unwrap();
    let (got, r) = read_all(&path, 100);
    assert_eq!((got.len(), r.header().point_count), (0, 0));

    // A count smaller than the data: the header's count is read (the rest may be anything).
    let mut fewer = good.clone();
    fewer[247..255].copy_from_slice(&400u64.to_le_bytes());
    let path = d.join("fewer.las");
    std::fs::write(&path, &fewer).unwrap();
    assert_eq!(read_all(&path, 1000).0.len(), 400);

    // Record length below the format's 30 bytes: an error at byte 105.
    let mut short = good.clone();
    short[105..107].copy_from_slice(&29u16.to_le_bytes());
    let e = error_of(&d, "short.las", &short);
    assert!(e.contains("byte 105") && e.contains("below the 30 bytes"), "{e}");

    // Record length above the format (undeclared extra bytes): the points read right.
    let mut wide = good[..offset].to_vec();
    wide[105..107].copy_from_slice(&((stride + 4) as u16).to_le_bytes());
    for rec in good[offset..].chunks(stride) {
        wide.extend_from_slice(rec);
        wide.extend_from_slice(&[0xAB; 4]);
    }
    let path = d.join("wide.las");
    std::fs::write(&path, &wide).unwrap();
    let (got, _) = read_all(&path, 333);
    let (want, _) = read_all(&d.join("good.las"), 1000);
    assert!(got.len() == 1000 && got == want, "extra bytes change the points");

    // NaN scale, zero scale, bad version, bad format.
    for (at, bytes, name, expect) in [
        (131, f64::NAN.to_le_bytes().to_vec(), "nan-scale.las", "byte 131: x scale factor NaN"),
        (147, 0f64.to_le_bytes().to_vec(), "zero-scale.las", "byte 147: z scale factor 0"),
        (24, vec![2u8], "v2.las", "byte 24: LAS version 2.4"),
        (104, vec![12u8], "pf12.las", "byte 104: point data format 12"),
    ] {
        let mut b = good.clone();
        b[at..at + bytes.len()].copy_from_slice(&bytes);
        let e = error_of(&d, name, &b);
        assert!(e.contains(name) && e.contains(expect), "{e}");
    }

    // A VLR count larger than the VLRs: a warning, the points read.
    let mut vlrs = good.clone();
    vlrs[100..104].copy_from_slice(&7u32.to_le_bytes());
    let path = d.join("vlrs.las");
    std::fs::write(&path, &vlrs).unwrap();
    let (got, r) = read_all(&path, 1000);
    assert_eq!(got.len(), 1000);
    assert!(r.warnings().iter().any(|w| w.contains("header says 7 VLRs, 1 fit")), "{:?}", r.warnings());

    // LAZ truncated or corrupt: an error naming the points, no panic.
    let laz = d.join("base.laz");
    write_las(&laz, &points(60_000), &options()).unwrap();
    let lz = std::fs::read(&laz).unwrap();
    let e = error_of(&d, "cut.laz", &lz[..lz.len() * 2 / 3]);
    assert!(e.contains("cut.laz") && (e.contains("LAZ") || e.contains("chunk")), "{e}");
    let mut garbled = lz.clone();
    let lz_offset = u32::from_le_bytes(lz[96..100].try_into().unwrap()) as usize;
    for b in garbled[lz_offset + 100..lz_offset + 5000].iter_mut() {
        *b = b.wrapping_mul(31).wrapping_add(7);
    }
    let e = error_of(&d, "garbled.laz", &garbled);
    assert!(e.contains("garbled.laz") || e.starts_with("no error"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn noise_classes_and_withheld_points_are_left_out_when_asked() {
    let d = dir("noise");
    // Classes 2, 7 (low noise), 6, 18 (high noise) in turn; in the LAS file every fifth point
    // is also flagged withheld (format 6: bit 2 of byte 15).
    let mut pts = points(30_000);
    for (i, p) in pts.iter_mut().enumerate() {
        p.class = [2, 7, 6, 18][i % 4];
    }
    let (las, laz) = (d.join("noise.las"), d.join("noise.laz"));
    write_las(&las, &pts, &options()).unwrap();
    write_las(&laz, &pts, &options()).unwrap();
    let mut bytes = std::fs::read(&las).unwrap();
    let at = u32::from_le_bytes(bytes[96..100].try_into().unwrap()) as usize;
    let stride = u16::from_le_bytes(bytes[105..107].try_into().unwrap()) as usize;
    for i in (0..pts.len()).step_by(5) {
        bytes[at + i * stride + 15] |= 0x04;
    }
    std::fs::write(&las, &bytes).unwrap();
    let noise_at = |i: usize| matches!(pts[i].class, 7 | 18);
    let kept = |withheld: bool| -> Vec<f64> {
        let noise = |i: usize| matches!(pts[i].class, 7 | 18) || (withheld && i.is_multiple_of(5));
        (0..pts.len()).filter(|&i| !noise(i)).map(|i| pts[i].x).collect()
    };
    for (path, withheld) in [(&las, true), (&laz, false)] {
        for (xyz_only, chunk) in [(false, 1000), (true, 1000), (true, 7)] {
            let mut r = LasReader::open(path).unwrap();
            r.set_xyz_only(xyz_only);
            r.set_drop_noise(true);
            let (mut x, mut class, mut p) = (Vec::new(), Vec::new(), Points::default());
            while r.read(&mut p, chunk).unwrap() > 0 {
                assert!(p.y.len() == p.x.len() && p.z.len() == p.x.len());
                // Each point knows its index in the file (for errors that name it).
                for i in 0..p.len() {
                    let k = p.file_index(i) as usize;
                    assert!((p.x[i] - pts[k].x).abs() < 1e-3 && !noise_at(k), "point {i} is not record {k}");
                }
                x.extend(&p.x);
                class.extend(&p.class);
            }
            let want = kept(withheld);
            let what = format!("{} xyz_only {xyz_only} chunk {chunk}", path.display());
            assert_eq!(x.len(), want.len(), "{what}");
            assert!(x.iter().zip(&want).all(|(a, b)| (a - b).abs() < 1e-3), "{what}");
            assert_eq!(r.dropped(), (pts.len() - want.len()) as u64, "{what}");
            if !xyz_only {
                assert!(class.len() == x.len() && class.iter().all(|c| matches!(c, 2 | 6)), "{what}");
            }
        }
        // Not asked: every point.
        let (all, r) = read_all(path, 1000);
        assert_eq!((all.x.len(), r.dropped()), (pts.len(), 0));
    }
}

#[test]
fn a_laz_header_counting_more_points_than_the_data_is_a_clear_error() {
    let d = dir("laz-count");
    let laz = d.join("base.laz");
    write_las(&laz, &points(5_000), &options()).unwrap();
    let mut b = std::fs::read(&laz).unwrap();
    // LAS 1.4, format 6: the 64-bit count at byte 247 (the legacy one is 0).
    assert_eq!(u64::from_le_bytes(b[247..255].try_into().unwrap()), 5_000);
    b[247..255].copy_from_slice(&6_000u64.to_le_bytes());
    let e = error_of(&d, "more.laz", &b);
    assert!(e.contains("more.laz") && e.contains("the compressed data end before the header's 6000 points"), "{e}");
}
