//! Shared by the surface tests.

use pipeline::{grid_surface, Estimator, SurfaceGrid, SurfaceOptions};
use sim::scanner::{Pass, ScannerConfig};
use sim::survey::Survey;
use sim::Scene;

/// A survey of s0..s1 on the demo road: two passes (lanes -1 and 1) at 4 m/s, 200 rev/s
/// (profiles 2 cm apart per pass), 3000 points per revolution, 2 mm noise, coordinates rounded
/// to the millimetre as in the LAS file.
#[allow(dead_code)] // not every test file surveys the demo road
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

/// The surface of `pts` gridded on the scene's road over s and v.
#[allow(dead_code)] // not every test file grids
pub fn grid(scene: &Scene, pts: &[[f64; 3]], s: (f64, f64), v: (f64, f64), estimator: Estimator) -> SurfaceGrid {
    let opts = SurfaceOptions { s_range: Some(s), v_range: Some(v), estimator, ..Default::default() };
    grid_surface(&scene.odr.roads[0], scene.odr.header.offset, pts, opts).unwrap()
}

/// A node's height: the grid's above the datum in REFERENCE_LINE_START_Z (absolute heights;
/// 0 for residual ones), m.
#[allow(dead_code)]
pub fn height(crg: &opencrg::Crg, iu: usize, iv: usize) -> f64 {
    crg.road.start_z.unwrap_or(0.0) + crg.z_at(iu, iv) as f64
}

/// RMS and mean of (grid - truth) over the covered nodes, m; and the node count.
#[allow(dead_code)]
pub fn versus_truth(scene: &Scene, g: &SurfaceGrid) -> (f64, f64, usize) {
    let road = scene.road();
    let crg = &g.crg;
    let (u0, du, nv) = (crg.u_first(), crg.du(), crg.nv());
    let v0 = crg.road.v_right.unwrap();
    let (mut sq, mut sum, mut n) = (0.0, 0.0, 0usize);
    for iu in 0..crg.nu {
        let st = scene.station(&road, u0 + iu as f64 * du);
        for iv in 0..nv {
            let z = height(crg, iu, iv);
            let Some(want) = scene.z_at(&st, v0 + iv as f64 * du) else { continue };
            if z.is_nan() {
                continue;
            }
            let e = z - want;
            sq += e * e;
            sum += e;
            n += 1;
        }
    }
    ((sq / n as f64).sqrt(), sum / n as f64, n)
}
