//! Benchmark: `fit_polyline` on a 10 km noisy polyline (roadscan issue 23: "a 10 km polyline
//! in < 5 s").
//!
//! `cargo bench -p opendrive --bench fit10k`. The polyline is generated in-process (seeded):
//! lines of 200 m, clothoids of 60 m and arcs of R 400 m (300 m long), turning to alternate
//! sides, sampled every 0.25 m (about 40,500 vertices over 10.1 km), with 3 mm of Gaussian
//! noise in x and y and 1 % of the vertices moved 0.5 m. Prints `key value` lines: medians
//! over a few runs of the fit, and of a baseline measured in the same run on the same
//! vertices: a cubic smoothing of one coordinate (`fit_profile` of the vertices' x against
//! their index at a 1 m tolerance: the spline fit alone, without the axis fit's noise
//! analysis, reference line, chunked knot search and model selection), and their ratio.

#![allow(clippy::panic, clippy::unwrap_used)] // tests and benches fail loudly

use opendrive::eval::Curve;
use opendrive::fit::{fit_polyline, fit_profile, FitOptions};
use opendrive::Geometry;
use std::hint::black_box;
use std::time::Instant;

#[allow(dead_code)]
#[path = "../tests/support/design.rs"]
mod support;
use support::{design, Rng, BENCH};

/// The design's vertices every `step` m, noisy, with outliers.
fn survey(design: &[Geometry], step: f64, sigma: f64, seed: u64) -> Vec<[f64; 2]> {
    let mut rng = Rng(seed);
    let curves: Vec<Curve> = design.iter().map(Curve::new).collect();
    let length: f64 = design.iter().map(|g| g.length).sum();
    let n = (length / step).floor() as usize;
    (0..=n)
        .map(|i| {
            let s = (i as f64 * step).min(length);
            let r = design.partition_point(|g| g.s <= s).clamp(1, design.len()) - 1;
            let p = curves[r].pose(s - design[r].s);
            let (mut px, mut py) = (p.x + sigma * rng.gauss(), p.y + sigma * rng.gauss());
            if rng.uniform() < 0.01 {
                let a = std::f64::consts::TAU * rng.uniform();
                px += 0.5 * a.cos();
                py += 0.5 * a.sin();
            }
            [px, py]
        })
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                black_box(f());
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

fn main() {
    let runs = 3;
    let design = design(10_100.0, &BENCH);
    let points = survey(&design, 0.25, 0.003, 23);
    let opts = FitOptions::default();
    let fit = fit_polyline(&points, &opts).unwrap();
    let fit_ms = time(runs, || fit_polyline(&points, &opts).map(|f| f.geometries.len()).unwrap_or(0));
    // Baseline: one cubic smoothing of the same vertices.
    let index: Vec<f64> = (0..points.len()).map(|i| 0.25 * i as f64).collect();
    let xs: Vec<f64> = points.iter().map(|p| p[0]).collect();
    let smooth = FitOptions { tolerance: 1.0, min_length: 1.0 };
    let baseline_ms = time(runs, || fit_profile(&index, &xs, &smooth).map(|f| f.records.len()).unwrap_or(0));
    let length: f64 = design.iter().map(|g| g.length).sum();
    println!("vertices {}", points.len());
    println!("length_m {length:.1}");
    println!("designed_records {}", design.len());
    println!("records {}", fit.geometries.len());
    println!("deviation_mm {:.2}", fit.deviation * 1e3);
    println!("noise_mm {:.2}", fit.noise * 1e3);
    println!("outliers {}", fit.outliers);
    println!("fit_ms {fit_ms:.1}");
    println!("baseline_smoothing_ms {baseline_ms:.1}");
    println!("ratio_fit_to_baseline {:.1}", fit_ms / baseline_ms.max(1e-9));
}
