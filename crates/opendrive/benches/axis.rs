//! Benchmark (issue 30): `fit_polyline` and the elevation `fit_noisy_profile`, as `roadscan axis`
//! runs them, on a 10 km polyline of 40,001 vertices (every 0.25 m) and on a 10 km trajectory
//! at 200 Hz (10 m/s: 200,001 vertices every 0.05 m), both with 3 mm of Gaussian noise in x, y
//! and height. The road: lines of 200 m, clothoids of 60 m and arcs of R 400 m (300 m long),
//! turning to alternate sides; the heights a grade with crests and sags.
//!
//! `cargo bench -p opendrive --bench axis`. Prints `key value` lines (one run each: the fits
//! take seconds).

#![allow(clippy::panic, clippy::unwrap_used)] // benches fail loudly

use opendrive::eval::Curve;
use opendrive::fit::{fit_noisy_profile, fit_polyline, FitOptions};
use std::time::Instant;

#[allow(dead_code)]
#[path = "../tests/support/design.rs"]
mod support;
use support::{design, Rng, BENCH};

/// 10 km of the design every `step` m, noisy: x, y and heights.
fn survey(step: f64, seed: u64) -> (Vec<[f64; 2]>, Vec<f64>) {
    let design = design(10_000.0, &BENCH);
    let curves: Vec<Curve> = design.iter().map(Curve::new).collect();
    let mut rng = Rng(seed);
    let n = (10_000.0 / step).round() as usize;
    (0..=n)
        .map(|i| {
            let s = i as f64 * step;
            let r = design.partition_point(|g| g.s <= s).clamp(1, design.len()) - 1;
            let p = curves[r].pose(s - design[r].s);
            let z = 50.0 + 0.01 * s + 4.0 * (s / 700.0).sin() + 0.003 * rng.gauss();
            ([p.x + 0.003 * rng.gauss(), p.y + 0.003 * rng.gauss()], z)
        })
        .unzip()
}

fn run(name: &str, step: f64) {
    let (pts, z) = survey(step, 30);
    let opts = FitOptions::default();
    let t = Instant::now();
    let plan = fit_polyline(&pts, &opts).unwrap();
    let plan_s = t.elapsed().as_secs_f64();
    let mut sz: Vec<(f64, f64)> = plan.stations.iter().zip(&z).map(|(st, &h)| (st[0], h)).collect();
    sz.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (s, h): (Vec<f64>, Vec<f64>) = sz.into_iter().unzip();
    let t = Instant::now();
    let elevation = fit_noisy_profile(&s, &h, &opts).unwrap();
    let elevation_s = t.elapsed().as_secs_f64();
    println!("{name}_vertices {}", pts.len());
    println!("{name}_plan_records {}", plan.geometries.len());
    println!("{name}_plan_deviation_mm {:.2}", plan.deviation * 1e3);
    println!("{name}_plan_s {plan_s:.2}");
    println!("{name}_elevation_records {}", elevation.records.len());
    println!("{name}_elevation_max_mm {:.2}", elevation.max * 1e3);
    println!("{name}_elevation_largest_search_samples {}", elevation.searched);
    println!("{name}_elevation_s {elevation_s:.2}");
    println!("{name}_total_s {:.2}", plan_s + elevation_s);
}

fn main() {
    run("polyline_10km", 0.25);
    run("trajectory_10km_200hz", 0.05);
}
