//! The real LAS/LAZ samples in shared/data/las all read, with the counts, CRS and units their
//! README states (inspected with laspy); the two broken PDAL fixtures read as laspy reads
//! them, with a warning, or fail cleanly.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use scan::{LasReader, Points};

fn read(path: &std::path::Path) -> (LasReader, usize, [f64; 6]) {
    let mut r = LasReader::open(path).unwrap_or_else(|e| panic!("{e}"));
    let mut p = Points::default();
    let mut n = 0;
    let mut b = [f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
    while r.read(&mut p, 4096).unwrap_or_else(|e| panic!("{e}")) > 0 {
        n += p.len();
        for i in 0..p.len() {
            for (k, v) in [p.x[i], p.y[i], p.z[i]].into_iter().enumerate() {
                b[k] = b[k].min(v);
                b[k + 3] = b[k + 3].max(v);
            }
        }
    }
    (r, n, b)
}

#[roadscan_tests::needs_shared_data]
#[test]
fn real_samples_read_with_their_crs_and_units() {
    let data = roadscan_tests::shared_data();
    let dir = data.join("las");
    let ft = 0.3048;
    let us_ft = 1200.0 / 3937.0;
    // file, points, point format, EPSG, unit (m per unit), CRS source
    type Case = (&'static str, usize, u8, Option<u32>, Option<f64>, &'static str);
    let cases: [Case; 7] = [
        ("jakarto_montreal_mls_0.02s.las", 10_310, 1, None, None, "none"),
        ("lasrs_32-1-472-150-76.laz", 5_658, 1, Some(25832), Some(1.0), "geotiff"),
        ("lasrs_autzen.laz", 106, 3, Some(2994), Some(ft), "geotiff"),
        ("lasrs_extrabytes.laz", 1_065, 3, None, None, "none"),
        // User-defined Lambert (GeoTIFF code 32767, WKT without an authority): recognised as
        // EPSG:2994 by its parameters (Crs::epsg_by).
        ("pdal_autzen_trim.las", 110_000, 3, Some(2994), Some(ft), "geotiff"),
        ("pdal_warsaw_small.las", 3_000, 3, None, None, "none"),
        ("pdal_4_6_crop.las", 23_875, 3, Some(2903), Some(us_ft), "geotiff"),
    ];
    for (name, count, format, epsg, unit, source) in cases {
        let (r, n, b) = read(&dir.join(name));
        let h = r.header();
        assert_eq!((n, h.point_format), (count, format), "{name}");
        assert_eq!((h.crs.epsg, h.crs.source), (epsg, source), "{name}: {:?}", h.crs);
        match (h.crs.unit, unit) {
            (Some(a), Some(b)) => assert!((a - b).abs() < 1e-12, "{name}: unit {a}"),
            (a, b) => assert_eq!(a, b, "{name}"),
        }
        // The points lie within the header's bounds (to half the scale).
        for k in 0..3 {
            let tol = h.scale[k];
            assert!(
                b[k] >= h.min[k] - tol && b[k + 3] <= h.max[k] + tol,
                "{name}: axis {k} {b:?} vs {:?} {:?}",
                h.min,
                h.max
            );
        }
    }
    let (r, _, _) = read(&dir.join("pdal_autzen_trim.las"));
    assert!(r.header().crs.wkt.as_deref().is_some_and(|w| w.starts_with("PROJCS[\"NAD_1983_HARN_Lambert")));
    // Compound CRS: 4_6_crop's VerticalCSTypeGeoKey says 5103, a vertical datum (the writer
    // swapped it with the datum key, which says 5703, NAVD88 height): the CRS is reported,
    // 5703. z is in US survey feet.
    let (r, _, _) = read(&dir.join("pdal_4_6_crop.las"));
    assert_eq!(r.header().crs.vertical_epsg, Some(5703));
    assert!((r.header().crs.vertical_unit.unwrap() - us_ft).abs() < 1e-15);
    // The empty WKT VLR of warsaw_small is reported.
    let (r, _, _) = read(&dir.join("pdal_warsaw_small.las"));
    assert!(r.warnings().iter().any(|w| w.contains("WKT VLR (2112) is empty or not WKT")), "{:?}", r.warnings());
    // MLS week-second GPS time in the Jakarto sample.
    let (r, _, _) = read(&dir.join("jakarto_montreal_mls_0.02s.las"));
    assert!(!r.header().gps_standard_time);
}

#[roadscan_tests::needs_shared_data]
#[test]
fn broken_samples_read_as_laspy_reads_them_with_a_warning() {
    let data = roadscan_tests::shared_data();
    let dir = data.join("las/broken");
    // 3 VLRs announced, ~202 bytes before the points: laspy reads the 10 points.
    let (r, n, _) = read(&dir.join("bad_vlr_count.las"));
    assert_eq!(n, 10);
    assert!(r.warnings().iter().any(|w| w.contains("VLR")), "{:?}", r.warnings());
    // A billion VLRs announced, none fit: no allocation (laspy runs out of memory on it). The
    // header's 719 points of 20 bytes need 14,380 bytes; 14,374 follow the header: the 718
    // whole records are read.
    let (r, n, _) = read(&dir.join("garbage_nVariableLength.las"));
    assert_eq!(n, 718);
    assert!(r.warnings().iter().any(|w| w.contains("1069128089 VLRs")), "{:?}", r.warnings());
    assert!(
        r.warnings().iter().any(|w| w.contains("header says 719 points") && w.contains("reading 718")),
        "{:?}",
        r.warnings()
    );
}
