//! Benchmark: `roadscan voxel`, `roadscan ribbons`, `roadscan axis` (from the trajectory) and
//! `roadscan xodr` on a virtual survey of the demo road
//! (default 20 M points; set ROADSCAN_BENCH_POINTS), against a plain las-crate bulk read of the
//! same file in the same run, and (when ROADSCAN_BENCH_PYTHON names a Python with open3d and
//! laspy) against Open3D's `voxel_down_sample` on the same points, end to end (read included).
//! `cargo bench -p cli --bench roadside`; prints `key value` lines.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // benches fail loudly

mod common;

use std::ffi::OsStr;
use std::path::Path;

fn main() {
    let n: f64 = std::env::var("ROADSCAN_BENCH_POINTS").ok().and_then(|v| v.parse().ok()).unwrap_or(20e6);
    let dir = std::env::temp_dir().join(format!("roadscan-bench-roadside-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    println!("threads {}", std::thread::available_parallelism().map_or(1, |n| n.get()));
    let s = common::survey(&dir, n, false);
    let input = s.join("scan.las");
    let axis = s.join("truth/road.xodr");
    let _ = common::las_bulk_read(&input); // warm the page cache
    let t_bulk = common::las_bulk_read(&input);
    let (_, points) = common::las_read(&input);
    println!("points {points}");
    println!("las_crate_bulk_read_s {t_bulk:.3}");
    let o = |s: &'static str| OsStr::new(s);
    for size in ["1.0", "0.1"] {
        let obj = dir.join(format!("scene-{size}.obj"));
        let glb = dir.join(format!("scene-{size}.glb"));
        let (t, rss) = common::roadscan(&[
            o("voxel"),
            o("-q"),
            o("--size"),
            OsStr::new(size),
            o("--axis"),
            axis.as_os_str(),
            o("--input"),
            input.as_os_str(),
            o("--out"),
            obj.as_os_str(),
            o("--glb"),
            glb.as_os_str(),
        ]);
        let side = std::fs::read_to_string(obj.with_extension("json")).unwrap();
        let voxels =
            side.split("\"voxels\": ").nth(1).and_then(|v| v.split(',').next()).unwrap_or("?").trim().to_string();
        println!("voxel_{size}_s {t:.3}");
        println!("voxel_{size}_points_per_s {:.0}", points as f64 / t);
        println!("voxel_{size}_vs_las_crate_bulk_read {:.3}", t_bulk / t);
        println!("voxel_{size}_peak_rss_mb {:.0}", rss as f64 / 1024.0);
        println!("voxel_{size}_voxels {voxels}");
        println!("voxel_{size}_obj_mb {:.2}", std::fs::metadata(&obj).unwrap().len() as f64 / 1e6);
        println!("voxel_{size}_glb_mb {:.2}", std::fs::metadata(&glb).unwrap().len() as f64 / 1e6);
        if let Ok(py) = std::env::var("ROADSCAN_BENCH_PYTHON") {
            open3d(&py, &input, size);
        }
    }
    let rib = dir.join("ribbons");
    let (t, rss) = common::roadscan(&[
        o("ribbons"),
        o("-q"),
        o("--axis"),
        axis.as_os_str(),
        o("--input"),
        input.as_os_str(),
        o("--out"),
        rib.as_os_str(),
    ]);
    println!("ribbons_0.1_s {t:.3}");
    println!("ribbons_0.1_points_per_s {:.0}", points as f64 / t);
    println!("ribbons_0.1_vs_las_crate_bulk_read {:.3}", t_bulk / t);
    println!("ribbons_0.1_peak_rss_mb {:.0}", rss as f64 / 1024.0);
    // The surveyed road: its axis from the trajectory, then the road from the points.
    let (traj, ax, road) = (s.join("trajectory.csv"), dir.join("axis.xodr"), dir.join("road.xodr"));
    let rows = std::fs::read_to_string(&traj).unwrap().lines().count() - 1;
    let mut args = vec![o("axis"), o("-q"), o("--trajectory"), traj.as_os_str()];
    args.extend(common::DEMO_TRAJECTORY.iter().map(|a| OsStr::new(*a)));
    args.extend([o("--out"), ax.as_os_str()]);
    let (t, _) = common::roadscan(&args);
    println!("axis_trajectory_rows {rows}");
    println!("axis_s {t:.3}");
    let (t, rss) = common::roadscan(&[
        o("xodr"),
        o("-q"),
        o("--axis"),
        ax.as_os_str(),
        o("--input"),
        input.as_os_str(),
        o("--out"),
        road.as_os_str(),
    ]);
    println!("xodr_s {t:.3}");
    println!("xodr_points_per_s {:.0}", points as f64 / t);
    println!("xodr_vs_las_crate_bulk_read {:.3}", t_bulk / t);
    println!("xodr_peak_rss_mb {:.0}", rss as f64 / 1024.0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Open3D's voxel_down_sample on the same file (laspy read included), via `py`.
fn open3d(py: &str, input: &Path, size: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/bench_open3d.py");
    let out = std::process::Command::new(py).arg(script).arg(input).arg(size).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        println!("open3d_{size}_{line}");
    }
}
