//! Benchmark: rays per second of the virtual scanner over the whole demo road (150 m at
//! 10 m/s, 200 rev/s, 1000 points per revolution: 3,001 profiles, 3.0 M rays), five runs.
//! `cargo bench -p sim --bench scan`; prints `key value` lines (median and best run).

#![allow(clippy::panic, clippy::unwrap_used)] // benches fail loudly

use sim::scanner::{scan_with, Pass, ScannerConfig};
use std::time::Instant;

fn main() {
    let scene = sim::Scene::demo(1);
    let cfg = ScannerConfig::default();
    let pass = Pass { t: -1.625, speed: 10.0, s_start: 0.0, s_end: 150.0, id: 1 };
    let rays = (150.0 / 10.0 * 200.0 + 1.0) * cfg.points_per_rev as f64;
    let mut secs = Vec::new();
    let mut points = 0;
    for _ in 0..5 {
        let t = Instant::now();
        points = 0;
        scan_with(&scene, &cfg, &pass, 1, |chunk| points += chunk.len());
        secs.push(t.elapsed().as_secs_f64());
    }
    secs.sort_by(f64::total_cmp);
    println!("rays {rays}");
    println!("points {points}");
    println!("threads {}", std::thread::available_parallelism().map_or(1, |n| n.get()));
    println!("seconds_median {:.3}", secs[2]);
    println!("rays_per_second_median {:.0}", rays / secs[2]);
    println!("rays_per_second_best {:.0}", rays / secs[0]);
}
