//! End-to-end tests of `roadscan` on LAS/LAZ inputs: `info` on the real samples and the broken
//! fixtures of shared/data/las, and `crg` and `info` on broken files made here from a valid
//! survey (exit code 2 with one line naming the file and nothing written, or a warning and
//! the recoverable points; never a panic).

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

mod common;

use roadscan_tests::Scratch;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the binary as a user would: without RUST_BACKTRACE, which turns panics the LAZ
/// decoder makes on corrupt data (and the reader reports as errors) into printed backtraces.
fn roadscan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).env_remove("RUST_BACKTRACE").output().expect("run roadscan")
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
#[roadscan_tests::needs_shared_data]
#[test]
fn info_reports_counts_crs_and_units_of_real_samples() {
    let data = roadscan_tests::shared_data();
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
#[roadscan_tests::needs_shared_data]
#[test]
fn info_reports_the_problems_of_the_broken_samples() {
    let data = roadscan_tests::shared_data();
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

/// A virtual survey of s 50..60 of the demo road (2 passes, 1000 points a revolution) in
/// `d/survey`, and its points again as LAZ: (axis, LAS, LAZ).
fn small_survey(d: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let survey = d.join("survey");
    let xodr = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/opendrive/demo.xodr");
    let o = roadscan(&[
        "synth",
        "--scene",
        xodr.to_str().unwrap(),
        "--s-range",
        "50..60",
        "--points-per-rev",
        "1000",
        "--out",
        survey.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let las = survey.join("scan.las");
    let laz = survey.join("scan.laz");
    let mut r = scan::LasReader::open(&las).unwrap();
    let opts = scan::LasOptions {
        wkt: r.header().crs.wkt.clone().unwrap(),
        offset: r.header().offset,
        scale: r.header().scale[0],
        system: "test".into(),
    };
    let mut w = scan::LasWriter::create(&laz, &opts).unwrap();
    let mut p = scan::Points::default();
    while r.read(&mut p, 100_000).unwrap() > 0 {
        w.write(&common::las_points(&p)).unwrap();
    }
    w.finish().unwrap();
    (survey.join("truth/road.xodr"), las, laz)
}

/// What a broken input must give, in `crg` and in `info`.
#[derive(Debug)]
enum Want {
    /// Exit code 2, one stderr line "roadscan: error: FILE: ..." holding this, nothing written.
    Error(String),
    /// Success, a warning "roadscan: warning: FILE: ..." holding this (`info`: a problem), and
    /// this many points read (the recoverable ones).
    Warning(String, usize),
}

/// Broken copies of a valid LAS 1.4 (format 6) and LAZ survey through `crg` and `info`: a
/// clean error naming the file and no output (nor temporary) file, or a warning and a grid of
/// the recoverable points; never a panic (exit code 101).
#[test]
fn crg_and_info_on_broken_las_fail_cleanly_or_warn() {
    let d = Scratch::new("cli-las-broken");
    let (axis, las, laz) = small_survey(&d);
    let good = std::fs::read(&las).unwrap();
    let u16_at = |b: &[u8], k: usize| u16::from_le_bytes(b[k..k + 2].try_into().unwrap()) as usize;
    let u32_at = |b: &[u8], k: usize| u32::from_le_bytes(b[k..k + 4].try_into().unwrap()) as usize;
    let (offset, stride) = (u32_at(&good, 96), u16_at(&good, 105));
    let n = (good.len() - offset) / stride;
    assert_eq!(
        (good[24], good[25], good[104], offset + n * stride),
        (1, 4, 6, good.len()),
        "a LAS 1.4 file of format 6"
    );
    assert_eq!(u64::from_le_bytes(good[247..255].try_into().unwrap()), n as u64);
    // The point count, in the legacy field (our writer fills it for format 6 too) and the
    // 64-bit one, so that only the count is wrong.
    let with_count = |b: &[u8], count: usize| {
        let mut b = b.to_vec();
        b[107..111].copy_from_slice(&(count as u32).to_le_bytes());
        b[247..255].copy_from_slice(&(count as u64).to_le_bytes());
        b
    };
    let patched = |at: usize, bytes: &[u8]| {
        let mut b = good.clone();
        b[at..at + bytes.len()].copy_from_slice(bytes);
        b
    };
    let half = n / 2;
    // Records read 4 bytes too long: misaligned, mostly garbage far from the road. Only the
    // first 30,000 records' bytes: points kilometres away cost ~55 µs each in the road frame's
    // search, the whole file's 277,000 took 15 s.
    let mut long = patched(105, &((stride + 4) as u16).to_le_bytes());
    long.truncate(offset + 30_000 * stride);
    let long_records = 30_000 * stride / (stride + 4);
    let lz = std::fs::read(&laz).unwrap();
    let lz_offset = u32_at(&lz, 96);
    let mut garbled = lz.clone();
    for b in garbled[lz_offset + 100..lz_offset + 5000].iter_mut() {
        *b = b.wrapping_mul(31).wrapping_add(7);
    }
    let cases: Vec<(&str, Vec<u8>, Want)> = vec![
        (
            "truncated.las",
            good[..offset + half * stride + 7].to_vec(),
            Want::Warning(format!("header says {n} points, the file holds {half} whole records"), half),
        ),
        (
            "count_over.las",
            with_count(&good, 2 * n),
            Want::Warning(format!("header says {} points, the file holds {n} whole records", 2 * n), n),
        ),
        (
            "record_short.las",
            patched(105, &((stride - 1) as u16).to_le_bytes()),
            Want::Error(format!("byte 105: point record length {} is below the {stride} bytes", stride - 1)),
        ),
        (
            "record_long.las",
            long,
            Want::Warning(format!("header says {n} points, the file holds {long_records} whole records"), long_records),
        ),
        ("nan_scale.las", patched(131, &f64::NAN.to_le_bytes()), Want::Error("byte 131: x scale factor NaN".into())),
        ("empty.las", Vec::new(), Want::Error("byte 0: not a LAS file".into())),
        ("cut.laz", lz[..lz.len() * 2 / 3].to_vec(), Want::Error("LAZ".into())),
        // Audit M6: a LAZ whose count exceeds its chunks fails whole ("LAZ points A..B of
        // COUNT"; not yet a warning and the points of the whole chunks).
        ("count_over.laz", with_count(&lz, n + 1000), Want::Error(format!(" of {}: ", n + 1000))),
        ("garbled.laz", garbled, Want::Error("LAZ points 0..".into())),
    ];
    for (name, bytes, want) in &cases {
        let f = d.join(name);
        let fs = f.to_str().unwrap();
        std::fs::write(&f, bytes).unwrap();
        // Each run in a directory of its own, made empty: whatever is in it afterwards was
        // left by the run (the output, a temporary file, a spill file).
        let out_dir = d.join(format!("out-{name}"));
        std::fs::create_dir(&out_dir).unwrap();
        let out = out_dir.join("road.crg");
        let o = roadscan(&[
            "crg",
            "--axis",
            axis.to_str().unwrap(),
            "--input",
            fs,
            "--out",
            out.to_str().unwrap(),
            "--width-left",
            "3",
            "--width-right",
            "3",
        ]);
        let err = stderr(&o);
        let mut left: Vec<String> = std::fs::read_dir(&out_dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        eprintln!("crg {name}: exit {:?}, left {left:?}\n{err}", o.status.code());
        match want {
            Want::Error(w) => {
                assert_eq!(o.status.code(), Some(2), "crg {name}: {err}");
                assert!(
                    err.lines().count() == 1
                        && err.starts_with(&format!("roadscan: error: {fs}: "))
                        && err.contains(w.as_str()),
                    "crg {name}: want one line with '{w}', got {err}"
                );
                assert!(left.is_empty(), "crg {name} left {left:?}");
            }
            Want::Warning(w, _) if o.status.code() == Some(2) => {
                // The records read are garbage (a record length one byte long shifts every
                // field): the warning, then a grid too empty to be a road, refused in one line.
                let prefix = format!("roadscan: warning: {fs}: ");
                assert!(err.lines().any(|l| l.starts_with(&prefix) && l.contains(w.as_str())), "crg {name}: {err}");
                let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("roadscan: error: ")).collect();
                assert!(errors.len() == 1 && errors[0].contains("nearly empty"), "crg {name}: {err}");
                assert!(left.is_empty(), "crg {name} left {left:?}");
            }
            Want::Warning(w, points) => {
                assert!(o.status.success(), "crg {name}: {err}");
                // Records that decode as noise (class 7 or 18) or withheld are left out.
                let noise: u64 = err
                    .lines()
                    .find_map(|l| l.strip_prefix(&format!("roadscan: {fs}: "))?.split_once(" noise ")?.0.parse().ok())
                    .unwrap_or(0);
                let points = *points as u64 - noise;
                assert!(
                    err.contains(&format!("points: {points} read")),
                    "crg {name}: want {points} points read: {err}"
                );
                let prefix = format!("roadscan: warning: {fs}: ");
                assert!(
                    err.lines().any(|l| l.starts_with(&prefix) && l.contains(w.as_str())),
                    "crg {name}: no warning with '{w}' in {err}"
                );
                assert!(!err.contains("error"), "crg {name}: {err}");
                assert_eq!(left, ["road.crg"], "crg {name}");
                opencrg::read_file(&out).unwrap_or_else(|e| panic!("crg {name}: {e}"));
            }
        }
        // info: the same outcome; JSON when it succeeds.
        for args in [vec!["info", fs], vec!["info", "--json", fs]] {
            let o = roadscan(&args);
            let (out, err) = (stdout(&o), stderr(&o));
            eprintln!("{args:?}: exit {:?}\n{out}{err}", o.status.code());
            assert_ne!(o.status.code(), Some(101), "{args:?} panicked: {err}");
            match want {
                Want::Error(w) => {
                    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
                    assert!(
                        err.lines().count() == 1
                            && err.starts_with(&format!("roadscan: error: {fs}: "))
                            && err.contains(w.as_str()),
                        "{args:?}: want one line with '{w}', got {err}"
                    );
                }
                Want::Warning(w, points) => {
                    assert!(o.status.success() && err.is_empty(), "{args:?}: {err}");
                    if args.len() == 3 {
                        let j: serde_json::Value =
                            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"));
                        assert_eq!(j["points"].as_u64(), Some(*points as u64), "{args:?}");
                        let p = problems(&j);
                        assert!(p.iter().any(|p| p.contains(w.as_str())), "{args:?}: no problem '{w}' in {p:?}");
                    } else {
                        assert!(out.lines().any(|l| l.starts_with("  warning: ") && l.contains(w.as_str())), "{out}");
                    }
                }
            }
        }
    }
}

/// A valid LAS file of no points, and one whose header promises points but holds no whole
/// record: `info --json` prints JSON (bounds of no points are no numbers).
#[test]
fn info_json_of_a_file_without_points_is_json() {
    let d = Scratch::new("cli-las-no-points");
    let opts = scan::LasOptions {
        wkt: scan::CrsDef::wkt_of(23700).unwrap().into(),
        offset: [650_000.0, 240_000.0, 0.0],
        scale: 0.001,
        system: "test".into(),
    };
    let none = d.join("none.las");
    scan::write_las(&none, &[], &opts).unwrap();
    let some = d.join("some.las");
    let p = scan::LasPoint {
        x: 650_000.0,
        y: 240_000.0,
        z: 100.0,
        gps_time: 1.0,
        intensity: 0,
        scan_angle_deg: 0.0,
        source: 1,
        class: 2,
    };
    scan::write_las(&some, &[p; 10], &opts).unwrap();
    let b = std::fs::read(&some).unwrap();
    let cut = d.join("cut.las");
    std::fs::write(&cut, &b[..b.len() - 10 * 30 + 7]).unwrap();
    for (f, header_points) in [(none, 0), (cut, 10)] {
        let j = info_json(&f);
        assert_eq!((j["points"].as_u64(), j["header_points"].as_u64()), (Some(0), Some(header_points)), "{j}");
        assert!(j["min"].as_array().unwrap().iter().all(|v| v.is_null()), "{j}");
    }
}

/// PDAL's autzen_trim.las has its CRS as a WKT without an EPSG authority (and GeoTIFF keys of a
/// user-defined projection): `info` names it (was "no EPSG code") with its unit, and gives the
/// statistics PDAL and lasinfo users expect, in text and JSON.
#[roadscan_tests::needs_shared_data]
#[test]
fn info_names_a_wkt_crs_without_authority_and_gives_statistics() {
    let data = roadscan_tests::shared_data();
    let f = data.join("las/pdal_autzen_trim.las");
    let j = info_json(&f);
    assert_eq!((j["crs"]["epsg"].as_u64(), j["crs"]["epsg_by"].as_str()), (Some(2994), Some("parameters")), "{j}");
    assert_eq!((j["crs"]["unit"].as_str(), j["crs"]["unit_m"].as_f64()), (Some("foot"), Some(0.3048)), "{j}");
    assert!(j["crs"]["proj"].as_str().unwrap().contains("+units=ft"), "{j}");
    // 110,000 points over 1177.46 x 562.7 ft.
    let d = &j["density"];
    let over_bounds = d["over_bounds_per_m2"].as_f64().unwrap();
    assert!((over_bounds - 110_000.0 / (1177.46 * 562.7 * 0.3048 * 0.3048)).abs() < 1e-6, "{d}");
    assert!(d["over_cells_per_m2"].as_f64().unwrap() > over_bounds && d["cell_m"].as_f64() == Some(1.0), "{d}");
    let i = &j["intensity"];
    let v = |k: &str| i[k].as_f64().unwrap();
    assert!(v("min") <= v("p5") && v("p5") <= v("median") && v("median") <= v("p95") && v("p95") <= v("max"), "{i}");
    let sum = |h: &serde_json::Value| h.as_object().unwrap().values().map(|n| n.as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum(&j["returns"]["return_numbers"]), 110_000);
    assert_eq!(sum(&j["returns"]["numbers_of_returns"]), 110_000);
    assert!(j["scan_angle_deg"]["min"].as_f64().unwrap() <= j["scan_angle_deg"]["max"].as_f64().unwrap());
    let text = info_text(&f);
    for part in [
        "EPSG:2994, matched by",
        "horizontal unit foot",
        "density: ",
        "intensity: min",
        "numbers of returns: 1: ",
        "scan angle: ",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
}
