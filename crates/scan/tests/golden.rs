//! Golden bytes of the LAS writer: 10 points written by `scan::LasWriter` as LAS 1.4 point
//! format 6 (the one layout it writes) and as LAZ must give exactly `data/golden/points10.las`
//! and `data/golden/points10.laz`.
//!
//! The test writes to a scratch directory and compares the bytes with the golden files. A
//! change in the writer's output fails here; when the change is intended, run the test with
//! `ROADSCAN_BLESS=1` to rewrite the golden files, and review their diff before committing.
//!
//! The bytes are deterministic: the writer sets no file creation date (the header's day and
//! year stay 0, checked below), the GUID is zero, the generating software is the fixed
//! "roadscan" and the system identifier comes from the options. The LAZ file also holds the
//! laszip VLR of the `laz` crate, so an upgrade of that crate may change its bytes: rerun
//! with `ROADSCAN_BLESS=1` after checking that the points read back unchanged.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use roadscan_tests::golden;
use scan::{LasOptions, LasPoint, LasWriter};

/// 10 points in EOV with every field varying; coordinates on whole millimetres (exactly
/// representable after the 1 mm quantisation), scan angles on the 0.006 degree step.
fn points() -> Vec<LasPoint> {
    (0..10)
        .map(|i| LasPoint {
            x: 650_000.0 + 0.125 * i as f64,
            y: 240_000.0 - 0.25 * i as f64,
            z: 100.0 + 0.003 * (i * i) as f64,
            gps_time: 3.0e8 + 0.5 * i as f64,
            intensity: (i * 6007) as u16,
            scan_angle_deg: -90.0 + 18.0 * i as f32,
            source: 1 + (i / 5) as u16,
            class: [2, 11, 64, 6, 1][i % 5],
        })
        .collect()
}

#[test]
fn ten_points_written_as_las_and_laz_match_the_golden_bytes() {
    let dir = roadscan_tests::Scratch::new("scan-golden");
    let options = LasOptions {
        wkt: scan::EOV_WKT.into(),
        offset: [650_000.0, 240_000.0, 0.0],
        scale: 0.001,
        system: "golden".into(),
    };
    let pts = points();
    for name in ["points10.las", "points10.laz"] {
        let out = dir.join(name);
        let mut w = LasWriter::create(&out, &options).unwrap_or_else(|e| panic!("{e}"));
        w.write(&pts[..4]).unwrap_or_else(|e| panic!("{e}"));
        w.write(&pts[4..]).unwrap_or_else(|e| panic!("{e}"));
        w.finish().unwrap_or_else(|e| panic!("{e}"));
        golden(name, &out);
        // No creation date in the header (bytes 90..94: day of year, year), so the golden
        // does not go stale with the calendar.
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(&bytes[90..94], &[0, 0, 0, 0], "{name}: a creation date was written");
        // The golden holds the points: read back, the same values.
        let mut r = las::Reader::from_path(&out).unwrap();
        assert_eq!((r.header().version().major, r.header().version().minor), (1, 4));
        assert_eq!(r.header().number_of_points(), 10);
        for (p, q) in pts.iter().zip(r.points()) {
            let q = q.unwrap();
            assert!((p.x - q.x).abs() < 1e-9 && (p.y - q.y).abs() < 1e-9 && (p.z - q.z).abs() < 1e-9, "{name}");
            assert_eq!(
                (q.intensity, q.point_source_id, u8::from(q.classification), q.gps_time),
                (p.intensity, p.source, p.class, Some(p.gps_time)),
                "{name}"
            );
            assert!((q.scan_angle - p.scan_angle_deg).abs() < 0.004, "{name}");
        }
    }
}
