//! The CRG estimator on a real measured surface: the OpenCRG sample `belgian_block.crg`
//! (setts measured at 1 cm) draped on the demo road, re-surveyed with the profile scanner at
//! 2 mm range noise and gridded against the road; heights, a pothole and a manhole against the
//! draped truth, with the per-cell median (and linear gap filling) side by side.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use pipeline::{grid_surface, Estimator, SurfaceGrid, SurfaceOptions};
use sim::scanner::{Pass, ScannerConfig};
use sim::survey::Survey;
use sim::{Drape, Scene};

/// The demo scene with the measured setts draped from s 50 to 80 m (its pothole at 75 m and
/// manhole at 55 m on them), and a survey of that section as the other surface tests make
/// theirs (tests/common): two passes at 4 m/s along the lane centres, 200 rev/s (profiles 2 cm
/// apart per pass), 3000 points per revolution, 2 mm range noise, coordinates rounded to the
/// millimetre as in the LAS file. (At 10 m/s and 1000 points per revolution, as `synth`
/// surveys, profiles lie 5 cm apart and no estimator comes near 1 mm on these setts: 3.4 mm.)
fn draped_survey(seed: u64) -> Option<(Scene, Vec<[f64; 3]>)> {
    let data = roadscan_tests::shared_data()?;
    let crg = opencrg::read_file(data.join("opencrg/crg-bin/belgian_block.crg")).unwrap();
    let mut scene = Scene::demo(seed);
    scene.surface.drape = Some(Drape::from_crg(&crg, 50.0, 80.0, -1.7).unwrap());
    let mut sv = Survey::demo(seed);
    sv.scanner = ScannerConfig { points_per_rev: 3000, ..Default::default() };
    sv.passes = vec![
        Pass { t: -1.625, speed: 4.0, s_start: 52.0, s_end: 78.0, id: 1 },
        Pass { t: 1.625, speed: 4.0, s_start: 78.0, s_end: 52.0, id: 2 },
    ];
    let (pts, _, _) = sim::survey::measure(&scene, &sv);
    let mm = |v: f64| (v * 1000.0).round() / 1000.0;
    Some((scene, pts.iter().map(|p| [mm(p.x), mm(p.y), mm(p.z)]).collect()))
}

fn grid(scene: &Scene, pts: &[[f64; 3]], s: (f64, f64), v: (f64, f64), estimator: Estimator) -> SurfaceGrid {
    let opts = SurfaceOptions { s_range: Some(s), v_range: Some(v), estimator, ..Default::default() };
    grid_surface(&scene.odr.roads[0], scene.odr.header.offset, pts, opts).unwrap()
}

fn height(crg: &opencrg::Crg, iu: usize, iv: usize) -> f64 {
    crg.road.start_z.unwrap_or(0.0) + crg.z_at(iu, iv) as f64
}

/// RMS and mean of (grid - truth) over the covered nodes, m; the node count.
fn versus_truth(scene: &Scene, g: &SurfaceGrid) -> (f64, f64, usize) {
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

/// The grid of the measured setts by each estimator: (RMS, mean) against the truth, m.
fn rms_by_estimator(scene: &Scene, pts: &[[f64; 3]]) -> [(f64, f64); 3] {
    let s = (58.0, 72.0);
    [Estimator::Robust, Estimator::Quadratic, Estimator::Median].map(|e| {
        let g = grid(scene, pts, s, (-3.2, 3.2), e);
        let (rms, mean, n) = versus_truth(scene, &g);
        eprintln!(
            "measured setts, {e:?}: RMS {:.3} mm, mean {:.3} mm over {n} nodes, coverage {:.3}",
            rms * 1e3,
            mean * 1e3,
            g.coverage
        );
        assert!(g.coverage >= 0.95, "{e:?}: coverage {}", g.coverage);
        (rms, mean)
    })
}

/// The quadratic estimator beats the per-cell median (with linear gap filling) and the plane
/// fits on the measured setts: a sett's dome and the rounded joints bend within a plane's disc
/// (second differences of 1.8 mm RMS between 1 cm nodes), so a plane's height at its centre is
/// biased by the curvature (about the Laplacian times R²/16), which a quadratic's is not.
/// Figures (seed 1): Robust 1.51 mm, Quadratic 1.24 mm, Median 1.39 mm RMS.
#[test]
fn on_measured_setts_the_quadratic_estimator_beats_the_per_cell_median() {
    let Some((scene, pts)) = draped_survey(1) else { return };
    let [(robust, _), (quad, mean), (median, _)] = rms_by_estimator(&scene, &pts);
    assert!(quad < median && quad < robust, "quadratic {quad} vs median {median} and planes {robust}");
    assert!(quad <= 1.3e-3 && mean.abs() < 0.2e-3, "quadratic RMS {quad}, mean {mean}");
}

/// The target (roadscan issue 23, "CRG on real textures"): 1 mm RMS on the measured
/// setts. Not met yet: the quadratic estimator reaches 1.24 mm. Smoothing the truth itself
/// with a Gaussian of 1 cm already leaves 1.03 mm RMS (the joints are sharp at 1 cm), so the
/// estimator must resolve sub-centimetre detail from about 1.5 points per cm² at 2 mm noise.
#[test]
#[ignore = "not met yet: 1.24 mm RMS (roadscan issue 23)"]
fn measured_setts_within_1_mm_rms() {
    let Some((scene, pts)) = draped_survey(1) else { return };
    let [_, (quad, _), _] = rms_by_estimator(&scene, &pts);
    assert!(quad <= 1.0e-3, "RMS {quad}");
}
