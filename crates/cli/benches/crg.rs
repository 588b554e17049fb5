//! Benchmark: `roadscan crg` on a virtual survey of the demo road (default 20 M points; set
//! ROADSCAN_BENCH_POINTS), LAS and LAZ, against plain las-crate reads of the same file in the
//! same run (las 0.11 bulk columns for LAS; las 0.9 `Point`s and our own decoder for LAZ), and
//! peak RSS of `crg` at half and twice that size.
//! `cargo bench -p cli --bench crg`; prints `key value` lines.
//!
//! The survey: two passes at 10 m/s, 200 rev/s, points per revolution chosen for the size
//! (about 4,300 for 20 M points, a Z+F profiler at 0.9 M points/s).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // benches fail loudly

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

fn survey(dir: &Path, points: f64, laz: bool) -> PathBuf {
    let scene = sim::Scene::demo(1);
    let mut sv = sim::survey::Survey::demo(1);
    // 2 passes x 3001 profiles x ~77 % returns.
    sv.scanner.points_per_rev = (points / (2.0 * 3001.0 * 0.77)).round() as usize;
    let out = dir.join(format!("survey-{}{}", points as u64, if laz { "-laz" } else { "" }));
    let s = sim::survey::run(&scene, &sv, &out, laz).unwrap();
    eprintln!("survey: {} points in {}", s.points, out.display());
    out
}

/// las 0.9 read of every point (chunks of 1 M into `Point`s), seconds and points.
fn las_read(path: &Path) -> (f64, u64) {
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
/// columns), seconds: the baseline the issue names.
fn las_bulk_read(path: &Path) -> f64 {
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

/// Our column reader over every point, seconds.
fn our_read(path: &Path) -> f64 {
    let t = Instant::now();
    let mut r = scan::LasReader::open(path).unwrap();
    let mut p = scan::Points::default();
    let mut sum = 0.0;
    while r.read(&mut p, 1 << 20).unwrap() > 0 {
        sum += p.z.iter().sum::<f64>();
    }
    assert!(sum.is_finite());
    t.elapsed().as_secs_f64()
}

/// `roadscan crg` on `input` (tiles of 50 m), wall seconds and peak RSS (VmHWM polled).
fn crg(axis: &Path, input: &Path, out: &Path) -> (f64, u64) {
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_roadscan"))
        .args(["crg", "-q", "--tile", "50", "--axis"])
        .arg(axis)
        .arg("--input")
        .arg(input)
        .arg("--out")
        .arg(out)
        .spawn()
        .unwrap();
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

fn main() {
    let n: f64 = std::env::var("ROADSCAN_BENCH_POINTS").ok().and_then(|v| v.parse().ok()).unwrap_or(20e6);
    let dir = std::env::temp_dir().join(format!("roadscan-bench-crg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    println!("threads {}", std::thread::available_parallelism().map_or(1, |n| n.get()));
    for laz in [false, true] {
        let s = survey(&dir, n, laz);
        let input = s.join(if laz { "scan.laz" } else { "scan.las" });
        let axis = s.join("truth/road.xodr");
        let kind = if laz { "laz" } else { "las" };
        // Warm the page cache, then time.
        let _ = las_read(&input);
        let (t_las, points) = las_read(&input);
        let t_ours = our_read(&input);
        let (t_crg, rss) = crg(&axis, &input, &dir.join(format!("out-{kind}.crg")));
        println!("{kind}_points {points}");
        if !laz {
            let t_bulk = las_bulk_read(&input);
            println!("las_las_crate_bulk_read_s {t_bulk:.3}");
            println!("las_crg_vs_las_crate_bulk_read {:.3}", t_bulk / t_crg);
        }
        println!("{kind}_las_crate_read_s {t_las:.3}");
        println!("{kind}_our_read_s {t_ours:.3}");
        println!("{kind}_crg_s {t_crg:.3}");
        println!("{kind}_crg_points_per_s {:.0}", points as f64 / t_crg);
        println!("{kind}_crg_vs_las_crate_read {:.3}", t_las / t_crg);
        println!("{kind}_crg_vs_our_decode {:.3}", t_ours / t_crg);
        println!("{kind}_crg_peak_rss_mb {:.0}", rss as f64 / 1024.0);
        let _ = std::fs::remove_dir_all(&s);
    }
    // Peak RSS against survey size on the same road: half and twice the points (10 M and
    // 40 M by default).
    for (name, k) in [("half", 0.5), ("double", 2.0)] {
        let s = survey(&dir, n * k, false);
        let (t, rss) = crg(&s.join("truth/road.xodr"), &s.join("scan.las"), &dir.join(format!("out-{name}.crg")));
        println!("las_crg_{name}_points {:.0}", n * k);
        println!("las_crg_{name}_s {t:.3}");
        println!("las_crg_{name}_peak_rss_mb {:.0}", rss as f64 / 1024.0);
        let _ = std::fs::remove_dir_all(&s);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
