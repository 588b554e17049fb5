//! Benchmark: rays per second of the virtual scanner over the whole demo road (150 m at
//! 10 m/s, 200 rev/s, 1000 points per revolution: 3,001 profiles, 3.0 M rays).
//! `cargo bench -p sim --bench scan`; prints `key value` lines.

#![allow(clippy::panic, clippy::unwrap_used)] // benches fail loudly

use sim::scanner::{scan, Pass, ScannerConfig};
use std::time::Instant;

fn main() {
    let scene = sim::Scene::demo(1);
    let cfg = ScannerConfig::default();
    let pass = Pass { t: -1.625, speed: 10.0, s_start: 0.0, s_end: 150.0, id: 1 };
    let t = Instant::now();
    let pts = scan(&scene, &cfg, &pass, 1);
    let secs = t.elapsed().as_secs_f64();
    let rays = (150.0 / 10.0 * 200.0 + 1.0) * cfg.points_per_rev as f64;
    println!("rays {rays}");
    println!("points {}", pts.len());
    println!("seconds {secs:.3}");
    println!("rays_per_second {:.0}", rays / secs);
}
