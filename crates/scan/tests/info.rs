//! CRS recognition and `info` statistics on the shared real samples and on files we write with
//! known contents.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

mod common;

use common::{dir, options};
use scan::{summarize, write_las, LasPoint, LasReader, US_FOOT};

fn summary(path: &std::path::Path) -> (scan::Summary, scan::Header) {
    let mut r = LasReader::open(path).unwrap_or_else(|e| panic!("{e}"));
    let s = summarize(&mut r).unwrap_or_else(|e| panic!("{e}"));
    (s, r.header().clone())
}

/// Every real sample names its CRS and the unit of its coordinates as its README says
/// (pyproj): the WKT of autzen_trim has no AUTHORITY (the CRS used to be "no EPSG code"), the
/// GeoTIFF keys of 4_6_crop put the vertical datum where the vertical CRS goes.
#[roadscan_tests::needs_shared_data]
#[test]
fn real_samples_name_their_crs_and_units() {
    let data = roadscan_tests::shared_data();
    let las = data.join("las");
    // File, EPSG code, how it was found, metres per unit, vertical EPSG code.
    type Case<'a> = (&'a str, Option<u32>, Option<&'a str>, Option<f64>, Option<u32>);
    let cases: [Case; 6] = [
        ("pdal_autzen_trim.las", Some(2994), Some("parameters"), Some(0.3048), None),
        ("lasrs_autzen.laz", Some(2994), Some("geotiff"), Some(0.3048), None),
        ("pdal_4_6_crop.las", Some(2903), Some("geotiff"), Some(US_FOOT), Some(5703)),
        ("lasrs_32-1-472-150-76.laz", Some(25832), Some("geotiff"), Some(1.0), Some(5941)),
        ("jakarto_montreal_mls_0.02s.las", None, None, None, None),
        ("pdal_warsaw_small.las", None, None, None, None),
    ];
    for (file, epsg, by, unit, vertical) in cases {
        let r = LasReader::open(las.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let c = &r.header().crs;
        assert_eq!((c.epsg, c.epsg_by, c.vertical_epsg), (epsg, by, vertical), "{file}: {c:?}");
        match (c.unit, unit) {
            (Some(a), Some(b)) => assert!((a - b).abs() < 1e-12, "{file}: {a} {b}"),
            (a, b) => assert_eq!(a, b, "{file}"),
        }
        // A CRS to reproject from, and its twin in metres, wherever there is a code.
        if let Some(code) = epsg {
            let def = c.def().unwrap().unwrap();
            assert_eq!(def.epsg, Some(code));
            assert_eq!(def.in_metres().unwrap().unit(), Some(1.0), "{file}");
            assert!(c.name.as_deref().is_some_and(|n| !n.is_empty()), "{file}: {c:?}");
        } else {
            assert!(c.def().is_none(), "{file}");
        }
    }
}

/// The statistics of the real samples agree with their headers and with each other.
#[roadscan_tests::needs_shared_data]
#[test]
fn real_samples_statistics_are_consistent() {
    let data = roadscan_tests::shared_data();
    for file in ["pdal_autzen_trim.las", "pdal_4_6_crop.las", "lasrs_autzen.laz", "jakarto_montreal_mls_0.02s.las"] {
        let (s, h) = summary(&data.join("las").join(file));
        assert_eq!(s.return_numbers.iter().sum::<u64>(), s.points, "{file}");
        assert_eq!(s.numbers_of_returns.iter().sum::<u64>(), s.points, "{file}");
        // The header's points by return are those counted (where it states them).
        if h.points_by_return.iter().any(|&n| n > 0) {
            assert_eq!(&s.return_numbers[..5], &h.points_by_return[..5], "{file}");
        }
        let i = s.intensity.unwrap();
        let [p5, p50, p95] = i.p5_p50_p95;
        assert!(i.min <= p5 && p5 <= p50 && p50 <= p95 && p95 <= i.max, "{file}: {i:?}");
        assert!(i.mean >= i.min as f64 && i.mean <= i.max as f64);
        let d = s.density.unwrap();
        assert_eq!((d.points, d.cell), (s.points, 1.0), "{file}");
        // Occupied cells cover at most the bounds (plus a cell's border).
        let u = h.crs.unit.unwrap_or(1.0);
        let area = ((h.max[0] - h.min[0]) * u + 1.0) * ((h.max[1] - h.min[1]) * u + 1.0);
        assert!(d.cells as f64 <= area && d.over_cells >= d.over_bounds.unwrap() * 0.99, "{file}: {d:?}");
        let (a0, a1) = s.scan_angle.unwrap();
        assert!(a0 <= a1 && a0 >= -90.0 && a1 <= 90.0, "{file}");
    }
    // autzen_trim in feet: 110,000 points on 1177.46 x 562.7 ft = 61,553 m².
    let (s, _) = summary(&data.join("las/pdal_autzen_trim.las"));
    let d = s.density.unwrap();
    assert!((d.over_bounds.unwrap() - 110_000.0 / (1177.46 * 562.7 * 0.3048 * 0.3048)).abs() < 1e-6, "{d:?}");
    assert!(!d.unit_assumed);
    // The Jakarto MLS file has no CRS: metres assumed, and said.
    let (s, _) = summary(&data.join("las/jakarto_montreal_mls_0.02s.las"));
    assert!(s.density.unwrap().unit_assumed);
}

/// A file of known points: 4 occupied 1 m cells of 100 points each over 10 x 10 m bounds (and
/// the far corner's),
/// intensities 0..399, two scan angles.
#[test]
fn statistics_of_known_points() {
    let d = dir("info-known");
    let mut pts: Vec<LasPoint> = Vec::new();
    for (c, (cx, cy)) in [(0.5, 0.5), (9.5, 9.5), (3.5, 7.5), (3.5, 6.5)].into_iter().enumerate() {
        for k in 0..100 {
            let i = c * 100 + k;
            pts.push(LasPoint {
                x: 650_000.0 + cx + (k % 10) as f64 * 0.02 - 0.09,
                y: 240_000.0 + cy + (k / 10) as f64 * 0.02 - 0.09,
                z: 100.0,
                gps_time: 3.0e8 + i as f64,
                intensity: i as u16,
                scan_angle_deg: if i % 2 == 0 { -12.0 } else { 30.0 },
                source: 1,
                class: 11,
            });
        }
    }
    // Corners of the 10 x 10 m bounds.
    pts[0].x = 650_000.0;
    pts[0].y = 240_000.0;
    pts[399].x = 650_010.0;
    pts[399].y = 240_010.0;
    let path = d.join("known.las");
    write_las(&path, &pts, &options()).unwrap();
    let (s, h) = summary(&path);
    assert_eq!(s.points, 400);
    let dens = s.density.unwrap();
    assert!((dens.over_bounds.unwrap() - 4.0).abs() < 1e-3, "{dens:?}");
    // Cells are half-open: the point on the far corner (10, 10) has a cell of its own.
    assert_eq!((dens.cells, dens.points), (5, 400), "{dens:?} {:?} {:?}", h.min, h.max);
    assert!((dens.over_cells - 80.0).abs() < 1e-9);
    let i = s.intensity.unwrap();
    assert_eq!((i.min, i.max, i.p5_p50_p95), (0, 399, [19, 199, 379]));
    assert!((i.mean - 199.5).abs() < 1e-12);
    assert_eq!(s.scan_angle, Some((-12.0, 30.0)));
    // Our writer: single returns.
    assert_eq!((s.return_numbers[0], s.numbers_of_returns[0]), (400, 400));
}
