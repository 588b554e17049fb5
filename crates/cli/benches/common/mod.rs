//! What the benches share: virtual surveys of the demo road, baseline reads, and timing a
//! `roadscan` run with its peak RSS.

#![allow(dead_code)] // each bench uses a part

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// A virtual survey of the demo road with about `points` points (two passes at 10 m/s,
/// 200 rev/s, points per revolution chosen for the size), LAS or LAZ, in `dir`.
pub fn survey(dir: &Path, points: f64, laz: bool) -> PathBuf {
    let scene = sim::Scene::demo(1);
    let mut sv = sim::survey::Survey::demo(1);
    // 2 passes x 3001 profiles x ~77 % returns.
    sv.scanner.points_per_rev = (points / (2.0 * 3001.0 * 0.77)).round() as usize;
    let out = dir.join(format!("survey-{}{}", points as u64, if laz { "-laz" } else { "" }));
    let s = sim::survey::run(&scene, &sv, &out, laz).unwrap();
    eprintln!("survey: {} points in {}", s.points, out.display());
    // Written back to disk now, not by the kernel during the timed runs.
    let scan = out.join(if laz { "scan.laz" } else { "scan.las" });
    std::fs::File::open(&scan).and_then(|f| f.sync_all()).unwrap();
    out
}

/// A virtual survey of esmini's curves.xodr road 1 (from ROADSCAN_SHARED_DATA, default
/// ../shared/data) over `s_range`, two passes, about `per_metre` points per metre of road.
pub fn survey_curves(dir: &Path, s_range: (f64, f64), per_metre: f64) -> PathBuf {
    let shared = roadscan_tests::shared_data();
    let odr = opendrive::read_file(shared.join("opendrive/esmini/curves.xodr")).unwrap();
    let scene = sim::Scene::from_road(&odr, "1", Some(s_range), 1).unwrap();
    let mut sv = sim::survey::Survey::along(&scene, 1);
    // 2 passes x 20 profiles a metre x ~77 % returns (as on the demo road).
    sv.scanner.points_per_rev = (per_metre / (2.0 * 20.0 * 0.77)).round() as usize;
    let out = dir.join(format!("curves-{}-{}", s_range.0, s_range.1));
    let s = sim::survey::run(&scene, &sv, &out, false).unwrap();
    eprintln!("survey: {} points in {}", s.points, out.display());
    std::fs::File::open(out.join("scan.las")).and_then(|f| f.sync_all()).unwrap();
    out
}

/// How `axis` and `build` take the demo survey's trajectory: pass 1 drives lane -1, 1.625 m
/// right of the reference line, the scanner 2.2 m up, in EOV.
pub const DEMO_TRAJECTORY: [&str; 6] = ["--offset", "1.625", "--sensor-height", "2.2", "--crs", "EPSG:23700"];

/// las 0.9 read of every point (chunks of 1 M into `Point`s), seconds and points.
pub fn las_read(path: &Path) -> (f64, u64) {
    let t = Instant::now();
    let mut r = las::Reader::from_path(path).unwrap();
    let mut pts = Vec::new();
    let mut n = 0;
    let mut sum = 0.0;
    loop {
        let k = r.read_points_into(1_000_000, &mut pts).unwrap();
        if k == 0 {
            break;
        }
        n += k;
        sum += pts.iter().map(|p| p.z).sum::<f64>();
    }
    assert!(sum.is_finite());
    (t.elapsed().as_secs_f64(), n)
}

/// las 0.11's bulk column read of an uncompressed file (`fill_points` 1 M and the x, y, z
/// columns), seconds: the baseline the issues name.
pub fn las_bulk_read(path: &Path) -> f64 {
    let t = Instant::now();
    let mut r = las011::Reader::from_path(path).unwrap();
    let mut pd = las011::PointDataBuilder::new().for_header(r.header()).build();
    let mut sum = 0.0;
    while r.fill_points(1_000_000, &mut pd).unwrap() > 0 {
        sum += pd.x().sum::<f64>() + pd.y().sum::<f64>() + pd.z().sum::<f64>();
    }
    assert!(sum.is_finite());
    t.elapsed().as_secs_f64()
}

/// Our column reader over every point, all columns, seconds.
pub fn our_read(path: &Path) -> f64 {
    our_read_columns(path, false)
}

/// Our column reader over every point, seconds: all columns, or x, y and z only as `crg` reads
/// them (LAS 1.4 LAZ then skips the other fields' layers).
pub fn our_read_columns(path: &Path, xyz_only: bool) -> f64 {
    let t = Instant::now();
    let mut r = scan::LasReader::open(path).unwrap();
    r.set_xyz_only(xyz_only);
    let mut p = scan::Points::default();
    let mut sum = 0.0;
    while r.read(&mut p, 1 << 20).unwrap() > 0 {
        sum += p.z.iter().sum::<f64>();
    }
    assert!(sum.is_finite());
    t.elapsed().as_secs_f64()
}

/// `roadscan ARGS`: wall seconds and peak RSS in KiB (VmHWM polled).
pub fn roadscan(args: &[&std::ffi::OsStr]) -> (f64, u64) {
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).spawn().unwrap();
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    loop {
        if let Ok(s) = std::fs::read_to_string(&status_path) {
            if let Some(l) = s.lines().find(|l| l.starts_with("VmHWM:")) {
                let kb: u64 = l.split_whitespace().nth(1).and_then(|v| v.parse().ok()).unwrap_or(0);
                peak = peak.max(kb);
            }
        }
        if let Some(st) = child.try_wait().unwrap() {
            assert!(st.success());
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    (t.elapsed().as_secs_f64(), peak)
}
