//! Points shared by the scan tests.

#![allow(dead_code, clippy::unwrap_used, clippy::panic)] // each test file uses part of it

use roadscan_tests::Scratch;
use scan::{LasOptions, LasPoint, LasReader, Points};

/// A fresh directory for one test, removed when dropped.
pub fn dir(name: &str) -> Scratch {
    Scratch::new(&format!("scan-{name}"))
}

/// EOV (EPSG:23700) WKT, offsets near the points, 1 mm.
pub fn options() -> LasOptions {
    LasOptions { wkt: scan::EOV_WKT.into(), offset: [650_000.0, 240_000.0, 0.0], scale: 0.001, system: "t".into() }
}

/// `n` points near EOV 650000 / 240000 with every field varying.
pub fn points(n: usize) -> Vec<LasPoint> {
    (0..n)
        .map(|i| LasPoint {
            x: 650_000.0 + i as f64 * 0.0127,
            y: 240_000.0 - i as f64 * 0.0031,
            z: 100.0 + (i as f64 * 0.1).sin(),
            gps_time: 3.0e8 + i as f64 * 1e-5,
            intensity: (i * 61 % 65536) as u16,
            scan_angle_deg: -170.0 + (i % 1000) as f32 * 0.3,
            source: 1 + (i / 500) as u16,
            class: [11, 64, 65, 6][i % 4],
        })
        .collect()
}

/// Every point of `path`, read in chunks of `chunk` (all columns), and the reader after it.
pub fn read_all(path: &std::path::Path, chunk: usize) -> (Points, LasReader) {
    let mut r = LasReader::open(path).unwrap_or_else(|e| panic!("{e}"));
    let (mut all, mut p) = (Points::default(), Points::default());
    while r.read(&mut p, chunk).unwrap_or_else(|e| panic!("{e}")) > 0 {
        all.x.extend(&p.x);
        all.y.extend(&p.y);
        all.z.extend(&p.z);
        all.intensity.extend(&p.intensity);
        all.class.extend(&p.class);
        all.return_number.extend(&p.return_number);
        all.number_of_returns.extend(&p.number_of_returns);
        all.scan_angle_deg.extend(&p.scan_angle_deg);
        all.source.extend(&p.source);
        all.gps_time.extend(&p.gps_time);
        all.rgb.extend(&p.rgb);
    }
    (all, r)
}
