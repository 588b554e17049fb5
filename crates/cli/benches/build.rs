//! Benchmark: `roadscan build` (every product, the points read once) on virtual surveys of the
//! demo road, LAS at 10 M and 40 M points and LAZ at 40 M (set ROADSCAN_BENCH_POINTS, e.g.
//! `10e6,40e6`), against a plain las-crate read of the same file in the same run: las 0.11's
//! bulk column read for LAS, las 0.9 (laz) for LAZ, and our LAZ decode alone; peak RSS of each
//! build. `cargo bench -p cli --bench build`; prints `key value` lines. With
//! ROADSCAN_BENCH_LENGTHS, peak memory against the road's length instead (see [`lengths`]).

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // benches fail loudly

mod common;

use std::ffi::OsStr;

/// Peak RSS of `build` against the road's length (issue 30: flat in length), with
/// ROADSCAN_BENCH_LENGTHS=A,B (metres of esmini's curves.xodr road 1, at most 1,154): virtual
/// surveys from s = 0 at the same points per metre (400 a revolution: about 12,000 a metre),
/// built with the truth road as the axis.
fn lengths(dir: &std::path::Path, lengths: &[f64]) {
    let mut peaks = Vec::new();
    for &len in lengths {
        let s = common::survey_curves(dir, (0.0, len), 12_000.0);
        let out = dir.join(format!("out-{len}"));
        let o = OsStr::new;
        let (input, axis) = (s.join("scan.las"), s.join("truth/road.xodr"));
        let args = [o("build"), o("-q"), o("--input"), input.as_os_str(), o("--axis"), axis.as_os_str()];
        let (t, rss) = common::roadscan(&[&args[..], &[o("--out"), out.as_os_str()]].concat());
        let mb = rss as f64 / 1024.0;
        println!("length_{len}_build_s {t:.3}");
        println!("length_{len}_build_peak_rss_mb {mb:.0}");
        peaks.push(mb);
        let _ = std::fs::remove_dir_all(&s);
        let _ = std::fs::remove_dir_all(&out);
    }
    if let (Some(first), Some(last)) = (peaks.first(), peaks.last()) {
        println!("length_peak_rss_ratio {:.3}", last / first);
    }
}

fn main() {
    if let Ok(l) = std::env::var("ROADSCAN_BENCH_LENGTHS") {
        let dir = std::env::temp_dir().join(format!("roadscan-bench-lengths-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        lengths(&dir, &l.split(',').filter_map(|x| x.trim().parse().ok()).collect::<Vec<f64>>());
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    let sizes: Vec<f64> = std::env::var("ROADSCAN_BENCH_POINTS")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10e6, 40e6]);
    let dir = std::env::temp_dir().join(format!("roadscan-bench-build-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    println!("threads {}", std::thread::available_parallelism().map_or(1, |n| n.get()));
    let largest = sizes.iter().copied().fold(0.0, f64::max);
    for &n in &sizes {
        for laz in [false, true] {
            if laz && n < largest {
                continue;
            }
            let s = common::survey(&dir, n, laz);
            let input = s.join(if laz { "scan.laz" } else { "scan.las" });
            let tag = format!("{}{}", if laz { "laz_" } else { "las_" }, (n / 1e6).round() as u64);
            let (t_base, points) = if laz {
                let _ = common::our_read(&input);
                let (t, points) = common::las_read(&input);
                println!("{tag}_our_decode_s {:.3}", common::our_read(&input));
                println!("{tag}_las_crate_read_s {t:.3}");
                (t, points)
            } else {
                let _ = common::las_bulk_read(&input); // warm the page cache
                let t = common::las_bulk_read(&input);
                let (_, points) = common::las_read(&input);
                println!("{tag}_las_crate_bulk_read_s {t:.3}");
                (t, points)
            };
            let out = dir.join(format!("out-{tag}"));
            let traj = s.join("trajectory.csv");
            let o = OsStr::new;
            let mut args =
                vec![o("build"), o("-q"), o("--input"), input.as_os_str(), o("--trajectory"), traj.as_os_str()];
            args.extend(common::DEMO_TRAJECTORY.iter().map(|a| OsStr::new(*a)));
            args.extend([o("--out"), out.as_os_str()]);
            let (t, rss) = common::roadscan(&args);
            println!("{tag}_points {points}");
            println!("{tag}_build_s {t:.3}");
            println!("{tag}_build_points_per_s {:.0}", points as f64 / t);
            println!("{tag}_build_vs_las_crate_read {:.3}", t_base / t);
            println!("{tag}_build_peak_rss_mb {:.0}", rss as f64 / 1024.0);
            let _ = std::fs::remove_dir_all(&s);
            let _ = std::fs::remove_dir_all(&out);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
