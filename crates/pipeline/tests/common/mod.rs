//! Shared by the surface tests.

use sim::scanner::{Pass, ScannerConfig};
use sim::survey::Survey;
use sim::Scene;

/// A survey of s0..s1 on the demo road: two passes (lanes -1 and 1) at 4 m/s, 200 rev/s
/// (profiles 2 cm apart per pass), 3000 points per revolution, 2 mm noise, coordinates rounded
/// to the millimetre as in the LAS file.
pub fn survey(seed: u64, s0: f64, s1: f64) -> (Scene, Vec<[f64; 3]>) {
    let scene = Scene::demo(seed);
    let mut sv = Survey::demo(seed);
    sv.scanner = ScannerConfig { points_per_rev: 3000, ..Default::default() };
    sv.passes = vec![
        Pass { t: -1.625, speed: 4.0, s_start: s0 - 1.0, s_end: s1 + 1.0, id: 1 },
        Pass { t: 1.625, speed: 4.0, s_start: s1 + 1.0, s_end: s0 - 1.0, id: 2 },
    ];
    let (pts, _, _) = sim::survey::measure(&scene, &sv);
    // Quantised to the 1 mm of the LAS file.
    let mm = |v: f64| (v * 1000.0).round() / 1000.0;
    (scene, pts.iter().map(|p| [mm(p.x), mm(p.y), mm(p.z)]).collect())
}
