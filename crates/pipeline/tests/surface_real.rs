//! The CRG estimator on a real measured surface: the OpenCRG sample `belgian_block.crg`
//! (setts measured at 1 cm) draped on the demo road, re-surveyed with the profile scanner at
//! 2 mm range noise and gridded against the road; heights, a pothole and a manhole against the
//! draped truth, with the per-cell median (and linear gap filling) side by side.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

mod common;
use common::{grid, height, versus_truth};
use pipeline::{Estimator, SurfaceGrid};
use sim::scanner::{Pass, ScannerConfig};
use sim::survey::Survey;
use sim::{Drape, Scene};

/// The demo scene with the measured setts draped from s 50 to 80 m (its pothole at 75 m and
/// manhole at 55 m on them), and a survey of that section as the other surface tests make
/// theirs (tests/common): two passes at 4 m/s along the lane centres, 200 rev/s (profiles 2 cm
/// apart per pass), 3000 points per revolution, 2 mm range noise, coordinates rounded to the
/// millimetre as in the LAS file. (At 10 m/s and 1000 points per revolution, as `synth`
/// surveys, profiles lie 5 cm apart and no estimator comes near 1 mm on these setts: 3.4 mm.)
fn draped_survey(seed: u64) -> (Scene, Vec<[f64; 3]>) {
    let data = roadscan_tests::shared_data();
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
    (scene, pts.iter().map(|p| [mm(p.x), mm(p.y), mm(p.z)]).collect())
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
/// fits on the measured setts, and meets roadscan issue 23's 1 mm RMS: a sett's dome and the
/// rounded joints bend within a plane's disc (second differences of 1.8 mm RMS between 1 cm
/// nodes), so a plane's height at its centre is biased by the curvature (about the Laplacian
/// times R²/16), which a quadratic's is not. Figures (seed 1): Robust 1.23 mm, Quadratic
/// 0.92 mm, Median 1.28 mm RMS (before the low envelope grew with a rough cell's spread, it
/// cut the setts' crowns: 1.51, 1.24 and 1.39 mm).
#[roadscan_tests::needs_shared_data]
#[test]
fn on_measured_setts_the_quadratic_estimator_is_within_1_mm_and_beats_the_per_cell_median() {
    let (scene, pts) = draped_survey(1);
    let [(robust, _), (quad, mean), (median, _)] = rms_by_estimator(&scene, &pts);
    assert!(quad < median && quad < robust, "quadratic {quad} vs median {median} and planes {robust}");
    assert!(quad <= 1.0e-3 && mean.abs() < 0.2e-3, "quadratic RMS {quad}, mean {mean}");
}

/// Height of grid `g` at (s, t), bilinear between its nodes (NaN outside).
fn at(g: &SurfaceGrid, s: f64, t: f64) -> f64 {
    let c = &g.crg;
    let (x, y) = ((s - c.u_first()) / c.du(), (t - c.road.v_right.unwrap()) / c.du());
    let (iu, iv) = (x.floor(), y.floor());
    if iu < 0.0 || iv < 0.0 || iu as usize + 1 >= c.nu || iv as usize + 1 >= c.nv() {
        return f64::NAN;
    }
    let (iu, iv, fu, fv) = (iu as usize, iv as usize, x - iu, y - iv);
    let lo = height(c, iu, iv) + fv * (height(c, iu, iv + 1) - height(c, iu, iv));
    let hi = height(c, iu + 1, iv) + fv * (height(c, iu + 1, iv + 1) - height(c, iu + 1, iv));
    lo + fu * (hi - lo)
}

/// The algebraic circle fit of points (x, y): centre and radius.
fn circle(p: &[(f64, f64)]) -> ((f64, f64), f64) {
    // Solve [sxx sxy sx; sxy syy sy; sx sy n] [A B C] = -[sxz syz sz]; centre (-A/2, -B/2).
    let mut m = [[0.0; 4]; 3];
    for &(x, y) in p {
        let z = x * x + y * y;
        for (row, a) in m.iter_mut().zip([x, y, 1.0]) {
            for (v, b) in row.iter_mut().zip([x, y, 1.0, -z]) {
                *v += a * b;
            }
        }
    }
    for c in 0..3 {
        for r in 0..3 {
            if r != c {
                let f = m[r][c] / m[c][c];
                let pivot = m[c];
                for (v, p) in m[r].iter_mut().zip(pivot) {
                    *v -= f * p;
                }
            }
        }
    }
    let sol: Vec<f64> = (0..3).map(|i| m[i][3] / m[i][i]).collect();
    let (cx, cy) = (-sol[0] / 2.0, -sol[1] / 2.0);
    ((cx, cy), (cx * cx + cy * cy - sol[2]).sqrt())
}

/// On the measured setts: the pothole's depth (a ring of setts around it less its flat
/// bottom, the sett texture on both) within 2 mm of the truth's, and the raised manhole
/// cover's outline (along the rays from its centre, of 72, on which the truth's edge is the
/// rim, the first radius from 0.1 m where the height leaves the cover's level by more than
/// 3 mm; a circle fitted) within 1 cm of the cover's, by the quadratic estimator; the plane fits and the per-cell median reported.
#[roadscan_tests::needs_shared_data]
#[test]
fn on_measured_setts_pothole_depth_within_2_mm_and_manhole_outline_within_1_cm() {
    let (scene, pts) = draped_survey(1);
    let road = scene.road();
    let p = scene.surface.potholes[0];
    let m = scene.surface.manholes[0];
    let drape = scene.surface.drape.as_ref().unwrap();
    assert!(drape.s0 < m.s - m.radius && p.s + p.radius_s < drape.s1, "both on the drape");
    let depth = |f: &dyn Fn(f64, f64) -> f64| {
        let (mut ring, mut nr, mut bottom, mut nb) = (0.0, 0, 0.0, 0);
        for i in 0..200 {
            for j in 0..200 {
                let (a, b) = (-1.6 + 3.2 * i as f64 / 199.0, -1.6 + 3.2 * j as f64 / 199.0);
                let r = a.hypot(b);
                let (s, t) = (p.s + a * p.radius_s, p.t + b * p.radius_t);
                // Heights above the OpenDRIVE surface (the crossfall is not the pothole's).
                let h = f(s, t) - scene.base_z(&road, s, t);
                if r < 0.6 {
                    bottom += h;
                    nb += 1;
                } else if (1.2..1.5).contains(&r) {
                    ring += h;
                    nr += 1;
                }
            }
        }
        ring / nr as f64 - bottom / nb as f64
    };
    let want_depth = depth(&|s, t| scene.z(&road, s, t).unwrap());
    let edge = |f: &dyn Fn(f64, f64) -> f64, a: f64| {
        (0..=700)
            .map(|i| 0.1 + i as f64 * 0.0005)
            .find(|r| {
                let (s, t) = (m.s + r * a.cos(), m.t + r * a.sin());
                (f(s, t) - scene.base_z(&road, s, t) - m.offset).abs() > 0.003
            })
            .map(|r| (r * a.cos(), r * a.sin()))
    };
    // The rays on which the truth's edge is the cover's rim (within 5 mm): elsewhere the
    // setts next to the cover lie within 3 mm of its level (on 12 of 72 rays, seed 1).
    let rays: Vec<f64> = (0..72)
        .map(|k| k as f64 * std::f64::consts::TAU / 72.0)
        .filter(|&a| {
            edge(&|s, t| scene.z(&road, s, t).unwrap(), a).is_some_and(|(x, y)| (x.hypot(y) - m.radius).abs() < 0.005)
        })
        .collect();
    assert!(rays.len() >= 48, "{} of 72 rays", rays.len());
    // The offset of the outline, and on how many of the rays it was found.
    let outline = |f: &dyn Fn(f64, f64) -> f64| {
        let edges: Vec<(f64, f64)> = rays.iter().filter_map(|&a| edge(f, a)).collect();
        let ((cx, cy), r) = circle(&edges);
        (cx.hypot(cy).max((r - m.radius).abs()), edges.len())
    };
    for e in [Estimator::Quadratic, Estimator::Robust, Estimator::Median] {
        let g = grid(&scene, &pts, (p.s - 1.5, p.s + 1.5), (p.t - 1.5, p.t + 1.5), e);
        let got_depth = depth(&|s, t| at(&g, s, t));
        let g = grid(&scene, &pts, (m.s - 1.0, m.s + 1.0), (m.t - 1.0, m.t + 1.0), e);
        let (off, found) = outline(&|s, t| at(&g, s, t));
        eprintln!(
            "measured setts, {e:?}: pothole depth {:.2} mm (truth {:.2} mm), manhole outline {:.1} mm off ({found} of {} rays)",
            got_depth * 1e3,
            want_depth * 1e3,
            off * 1e3,
            rays.len()
        );
        if e == Estimator::Quadratic {
            assert_eq!(found, rays.len(), "every ray leaves the cover");
            assert!((got_depth - want_depth).abs() <= 0.002, "depth {got_depth} vs {want_depth}");
            assert!(off <= 0.01, "manhole outline {off} m off");
        }
    }
}
