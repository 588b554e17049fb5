//! Benchmark: `roadscan crg` on a virtual survey of the demo road (default 20 M points; set
//! ROADSCAN_BENCH_POINTS), LAS and LAZ, against plain las-crate reads of the same file in the
//! same run (las 0.11 bulk columns for LAS; las 0.9 `Point`s and our own decoder for LAZ, of all
//! fields, and of x, y and z only as `crg` decodes them), peak RSS of `crg` at half and
//! twice that size on the same road, and on 150 m and 600 m of another road (esmini's
//! curves.xodr, from ROADSCAN_SHARED_DATA) at the same points per metre. `crg`, the bulk read
//! and our decoder are timed best of 5, `crg` taking turns with its baseline: this machine's
//! speed drifts by 15-30 % between minutes. The survey is
//! flushed to disk before the timed runs. `cargo bench -p cli --bench crg`; prints `key value`
//! lines.
//!
//! The survey: two passes at 10 m/s, 200 rev/s, points per revolution chosen for the size
//! (about 4,300 for 20 M points, a Z+F profiler at 0.9 M points/s).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // benches fail loudly

mod common;

use common::{las_bulk_read, las_read, our_read, our_read_columns, survey};
use std::ffi::OsStr;
use std::path::Path;

/// `roadscan crg` on `input` (tiles of 50 m), wall seconds and peak RSS.
fn crg(axis: &Path, input: &Path, out: &Path) -> (f64, u64) {
    crg_with(axis, input, out, &[])
}

/// `crg` with more arguments.
fn crg_with(axis: &Path, input: &Path, out: &Path, more: &[&'static str]) -> (f64, u64) {
    let o = |s: &'static str| OsStr::new(s);
    let more: Vec<&OsStr> = more.iter().map(|m| OsStr::new(*m)).collect();
    let args = [
        o("crg"),
        o("-q"),
        o("--tile"),
        o("50"),
        o("--axis"),
        axis.as_os_str(),
        o("--input"),
        input.as_os_str(),
        o("--out"),
        out.as_os_str(),
    ];
    common::roadscan(&[&args[..], &more[..]].concat())
}

/// The shortest of five runs of `f` (seconds).
fn best_of_5(mut f: impl FnMut() -> f64) -> f64 {
    (0..5).map(|_| f()).fold(f64::INFINITY, f64::min)
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
        // Warm the page cache, then time (best of 5 where the machine's noise matters).
        let _ = las_read(&input);
        let (t_las, points) = las_read(&input);
        let t_ours_xyz = best_of_5(|| our_read_columns(&input, true));
        let out = dir.join(format!("out-{kind}.crg"));
        // `crg` and its baseline (the bulk read for LAS, our decoder for LAZ) take turns, so that
        // both bests come from the same minutes.
        let (mut rss, mut t_crg, mut t_base) = (0, f64::INFINITY, f64::INFINITY);
        for _ in 0..5 {
            let (t, r) = crg(&axis, &input, &out);
            rss = rss.max(r);
            t_crg = t_crg.min(t);
            t_base = t_base.min(if laz { our_read(&input) } else { las_bulk_read(&input) });
        }
        let t_ours = if laz { t_base } else { best_of_5(|| our_read(&input)) };
        println!("{kind}_points {points}");
        if !laz {
            let t_bulk = t_base;
            println!("las_las_crate_bulk_read_s {t_bulk:.3}");
            println!("las_crg_vs_las_crate_bulk_read {:.3}", t_bulk / t_crg);
        }
        println!("{kind}_las_crate_read_s {t_las:.3}");
        println!("{kind}_our_read_s {t_ours:.3}");
        println!("{kind}_our_read_xyz_only_s {t_ours_xyz:.3}");
        println!("{kind}_crg_s {t_crg:.3}");
        println!("{kind}_crg_points_per_s {:.0}", points as f64 / t_crg);
        println!("{kind}_crg_vs_las_crate_read {:.3}", t_las / t_crg);
        println!("{kind}_crg_vs_our_decode {:.3}", t_ours / t_crg);
        println!("{kind}_crg_vs_our_decode_xyz_only {:.3}", t_ours_xyz / t_crg);
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
    // Peak RSS against the road's length at the same points per metre: half the points on
    // 150 m and twice them on 600 m of another road (10 M and 40 M by default), 8 m wide.
    for (name, s_range) in [("short", (100.0, 250.0)), ("long", (100.0, 700.0))] {
        let s = common::survey_curves(&dir, s_range, 0.5 * n / 150.0);
        // The same width (the road's lanes widen along it).
        let (axis, out) = (s.join("truth/road.xodr"), dir.join(format!("out-{name}.crg")));
        let (t, rss) = crg_with(&axis, &s.join("scan.las"), &out, &["--width-left", "4", "--width-right", "4"]);
        let points = scan::LasReader::open(s.join("scan.las")).unwrap().header().point_count;
        println!("las_crg_{name}_road_m {}", s_range.1 - s_range.0);
        println!("las_crg_{name}_road_points {points}");
        println!("las_crg_{name}_road_s {t:.3}");
        println!("las_crg_{name}_road_peak_rss_mb {:.0}", rss as f64 / 1024.0);
        let _ = std::fs::remove_dir_all(&s);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
