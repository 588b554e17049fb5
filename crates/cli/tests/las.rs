//! End-to-end tests of `roadscan` on LAS/LAZ inputs: `info` on the real samples and the broken
//! fixtures of shared/data/las.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use std::path::Path;
use std::process::{Command, Output};

fn roadscan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).output().expect("run roadscan")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `roadscan info --json FILE`, which must succeed, parsed.
fn info_json(f: &Path) -> serde_json::Value {
    let o = roadscan(&["info", "--json", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}: {}", f.display(), stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{}: {e}: {}", f.display(), stdout(&o)))
}

/// `roadscan info FILE` (text), which must succeed.
fn info_text(f: &Path) -> String {
    let o = roadscan(&["info", f.to_str().unwrap()]);
    assert!(o.status.success(), "{}: {}", f.display(), stderr(&o));
    stdout(&o)
}

fn problems(j: &serde_json::Value) -> Vec<String> {
    j["problems"].as_array().unwrap().iter().map(|p| p.as_str().unwrap().to_string()).collect()
}

/// Counts, CRS and unit as shared/data/las/README.md states them (laspy, pyproj): a LAS in US
/// survey feet (GeoTIFF keys, EPSG:2903) and a LAZ in metres (GeoTIFF keys, EPSG:25832).
#[test]
fn info_reports_counts_crs_and_units_of_real_samples() {
    let Some(data) = roadscan_tests::shared_data() else { return };
    let dir = data.join("las");
    let us_ft = 1200.0 / 3937.0;
    // file, points, point format, compressed, EPSG, unit (m), unit's name in the text, z range
    // of the README
    type Case = (&'static str, u64, u64, bool, u64, f64, &'static str, (f64, f64));
    let cases: [Case; 2] = [
        ("pdal_4_6_crop.las", 23_875, 3, false, 2903, us_ft, "US survey foot", (7078.0, 7140.0)),
        ("lasrs_32-1-472-150-76.laz", 5_658, 1, true, 25832, 1.0, "metre", (-0.37, 202.7)),
    ];
    for (name, points, format, compressed, epsg, unit, unit_name, (z0, z1)) in cases {
        let f = dir.join(name);
        let j = info_json(&f);
        eprintln!("{name}: {j}");
        assert_eq!(j["points"].as_u64(), Some(points), "{name}");
        assert_eq!(j["header_points"].as_u64(), Some(points), "{name}");
        assert_eq!(j["compressed"].as_bool(), Some(compressed), "{name}");
        assert_eq!(j["point_format"].as_u64(), Some(format), "{name}");
        assert_eq!((j["crs"]["source"].as_str(), j["crs"]["epsg"].as_u64()), (Some("geotiff"), Some(epsg)), "{name}");
        let u = j["crs"]["unit_m"].as_f64().unwrap();
        assert!((u - unit).abs() < 1e-12, "{name}: unit {u} m");
        // z in the file's unit, as the README gives it (rounded to its last digit).
        let (zmin, zmax) = (j["min"][2].as_f64().unwrap(), j["max"][2].as_f64().unwrap());
        let tol = if z1 > 1000.0 { 1.0 } else { 0.1 };
        assert!((zmin - z0).abs() <= tol && (zmax - z1).abs() <= tol, "{name}: z {zmin}..{zmax}");
        assert!(problems(&j).is_empty(), "{name}: {:?}", problems(&j));
        let text = info_text(&f);
        eprintln!("{text}");
        assert!(text.contains(&format!("points: {points} (header: {points})")), "{text}");
        assert!(
            text.contains(&format!("EPSG:{epsg}")) && text.contains(&format!("horizontal unit {unit_name}")),
            "{text}"
        );
        assert_eq!(text.lines().next().unwrap().contains("(LAZ)"), compressed, "{text}");
        assert!(!text.contains("warning:"), "{text}");
    }
}

/// The two PDAL fixtures read as laspy reads them, and `info` says what is wrong with them.
#[test]
fn info_reports_the_problems_of_the_broken_samples() {
    let Some(data) = roadscan_tests::shared_data() else { return };
    let dir = data.join("las/broken");
    // 3 VLRs announced, ~202 bytes before the points: the 10 points, the CRS of the GeoTIFF
    // keys in the VLRs that fit (UTM 17N).
    // A billion VLRs announced: the header's 719 points of 20 bytes need 14,380 bytes, 14,374
    // follow the header: 718 points; no CRS.
    type Case = (&'static str, u64, u64, Option<u64>, &'static [&'static str]);
    let cases: [Case; 2] = [
        ("bad_vlr_count.las", 10, 10, Some(32617), &["header says 3 VLRs, 2 fit"]),
        (
            "garbage_nVariableLength.las",
            718,
            719,
            None,
            &["header says 1069128089 VLRs, 0 fit", "header says 719 points", "reading 718", "no CRS in the file"],
        ),
    ];
    for (name, points, header_points, epsg, want) in cases {
        let f = dir.join(name);
        let j = info_json(&f);
        eprintln!("{name}: {j}");
        assert_eq!((j["points"].as_u64(), j["header_points"].as_u64()), (Some(points), Some(header_points)), "{name}");
        assert_eq!(j["crs"]["epsg"].as_u64(), epsg, "{name}");
        let p = problems(&j);
        for w in want {
            assert!(p.iter().any(|p| p.contains(w)), "{name}: no problem with '{w}' in {p:?}");
        }
        // The text lists every problem as a warning.
        let text = info_text(&f);
        eprintln!("{text}");
        assert!(text.contains(&format!("points: {points} (header: {header_points})")), "{text}");
        for p in &p {
            assert!(text.contains(&format!("  warning: {p}")), "{p} not in {text}");
        }
    }
}
