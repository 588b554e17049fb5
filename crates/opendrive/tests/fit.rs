//! The axis fitter against a designed road: esmini's curves.xodr road 1 (13 records: lines,
//! clothoids, arcs), its reference line sampled every metre with a few millimetres of noise,
//! fitted back within 1 cm.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::eval::Curve;
use opendrive::fit::{fit_polyline, FitOptions};
use opendrive::RoadEval;

/// Uniform noise in ±a from a seeded generator.
fn noise(state: &mut u64, a: f64) -> f64 {
    *state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
    ((*state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0) * a
}

#[roadscan_tests::needs_shared_data]
#[test]
fn curves_road_1_is_fitted_within_1_cm_with_few_records() {
    let data = roadscan_tests::shared_data();
    let odr = opendrive::read_file(data.join("opendrive/esmini/curves.xodr")).unwrap();
    let road = odr.road("1").unwrap();
    let truth = RoadEval::new(road);
    for seed in [1u64, 2, 3, 4] {
        let mut state = seed;
        let n = road.length.ceil() as usize;
        let pts: Vec<[f64; 2]> = (0..=n)
            .map(|i| {
                let p = truth.pose((i as f64).min(road.length));
                [p.x + noise(&mut state, 0.003), p.y + noise(&mut state, 0.003)]
            })
            .collect();
        let t0 = std::time::Instant::now();
        let fit = fit_polyline(&pts, &FitOptions::default()).unwrap();
        let secs = t0.elapsed().as_secs_f64();
        let kinds: Vec<&str> = fit
            .geometries
            .iter()
            .map(|g| match g.kind {
                opendrive::GeometryKind::Line => "line",
                opendrive::GeometryKind::Arc { .. } => "arc",
                opendrive::GeometryKind::Spiral { .. } => "spiral",
                _ => "other",
            })
            .collect();
        eprintln!(
            "seed {seed}: {} records ({kinds:?}), input max {:.4} m rms {:.4} m, {secs:.2} s",
            fit.geometries.len(),
            fit.max,
            fit.rms
        );
        // Every point of the fitted line within 1 cm of the true reference line.
        let curves: Vec<Curve> = fit.geometries.iter().map(Curve::new).collect();
        let mut worst = 0.0f64;
        for c in &curves {
            let k = (c.length / 0.25).ceil() as usize;
            for i in 0..=k {
                let p = c.pose(c.length * i as f64 / k as f64);
                // Beyond the truth's ends: the distance to its end point.
                let d = match truth.xy_to_st(p.x, p.y, 5.0) {
                    Some(st) => st.t.abs(),
                    None => [truth.pose(0.0), truth.pose(road.length)]
                        .iter()
                        .map(|e| (e.x - p.x).hypot(e.y - p.y))
                        .fold(f64::INFINITY, f64::min),
                };
                worst = worst.max(d);
            }
        }
        eprintln!("seed {seed}: fitted line vs truth: max {worst:.4} m");
        assert!(worst <= 0.01, "fitted line {worst} m from the truth");
        // The tolerance bounds the line's distance from local means of the points, not from
        // single noisy points (which the ±3 mm noise alone moves); a point can lie no
        // farther than the line's error and the noise (±3 mm on x and on y: at most 3√2 mm
        // across the line).
        assert!(fit.within(0.01), "{} m from the local mean of the points", fit.deviation);
        assert!(fit.max <= worst + 0.003 * std::f64::consts::SQRT_2 + 1e-4, "input points up to {} m away", fit.max);
        assert!(
            fit.geometries.len() as f64 <= 1.5 * road.plan_view.geometries.len() as f64,
            "{} records",
            fit.geometries.len()
        );
        // Continuous heading and curvature at every joint.
        for w in curves.windows(2) {
            let (a, b) = (w[0].pose(w[0].length), w[1].pose(0.0));
            assert!((a.x - b.x).abs() < 1e-9 && (a.y - b.y).abs() < 1e-9, "gap at a joint");
            let dh = (a.hdg - b.hdg + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
            assert!(dh.abs() < 1e-9, "heading jump {dh}");
            assert!((a.curvature - b.curvature).abs() < 1e-9, "curvature jump {} -> {}", a.curvature, b.curvature);
        }
        // Length within a few centimetres of the truth.
        let len: f64 = fit.geometries.iter().map(|g| g.length).sum();
        assert!((len - road.length).abs() < 0.05, "length {len} vs {}", road.length);
    }
}

#[test]
fn a_designed_elevation_profile_is_fitted_within_1_cm() {
    // Grades joined by parabolic vertical curves (slope continuous, second derivative
    // jumping at the tangent points), sampled every 0.5 m with ±3 mm noise.
    let z = |s: f64| -> f64 {
        let crest = |s: f64, a: f64, b: f64, g0: f64, g1: f64| -> f64 {
            // Height gained from a to s on a vertical curve from grade g0 to g1 over [a, b].
            let u = (s - a).clamp(0.0, b - a);
            g0 * u + 0.5 * (g1 - g0) / (b - a) * u * u
        };
        let g = [0.02, -0.03, 0.01];
        let base = 100.0;
        if s < 150.0 {
            base + g[0] * s
        } else if s < 250.0 {
            base + g[0] * 150.0 + crest(s, 150.0, 250.0, g[0], g[1])
        } else if s < 400.0 {
            base + g[0] * 150.0 + crest(250.0, 150.0, 250.0, g[0], g[1]) + g[1] * (s - 250.0)
        } else {
            base + g[0] * 150.0
                + crest(250.0, 150.0, 250.0, g[0], g[1])
                + g[1] * 150.0
                + crest(s, 400.0, 480.0, g[1], g[2])
                + g[2] * (s - 480.0).max(0.0)
        }
    };
    let mut state = 7u64;
    let s: Vec<f64> = (0..=1200).map(|i| i as f64 * 0.5).collect();
    let v: Vec<f64> = s.iter().map(|&x| z(x) + noise(&mut state, 0.003)).collect();
    let fit = opendrive::fit::fit_profile(&s, &v, &FitOptions::default()).unwrap();
    eprintln!("{} records, max {:.4} m, rms {:.4} m", fit.records.len(), fit.max, fit.rms);
    assert!(fit.max <= 0.01);
    // Against the truth, every 0.1 m.
    let mut worst = 0.0f64;
    for i in 0..=6000 {
        let x = i as f64 * 0.1;
        worst = worst.max((opendrive::eval::profile_value(&fit.records, x) - z(x)).abs());
    }
    eprintln!("vs truth: max {worst:.4} m");
    assert!(worst <= 0.01, "{worst} m from the designed profile");
    // 5 design elements; the C2 spline needs short transitions at the tangent points.
    assert!(fit.records.len() <= 12, "{} records", fit.records.len());
    // Value and slope continuous at the joints.
    for w in fit.records.windows(2) {
        let ds = w[1].s - w[0].s;
        let (a, b) = (&w[0], &w[1]);
        let end = a.a + a.b * ds + a.c * ds * ds + a.d * ds * ds * ds;
        let slope = a.b + 2.0 * a.c * ds + 3.0 * a.d * ds * ds;
        assert!((end - b.a).abs() < 1e-6 && (slope - b.b).abs() < 1e-6, "jump at s = {}", b.s);
    }
}

/// A profile sampled over part of a road (s 47..63 of 150 m) holds its end values over the
/// rest instead of extrapolating its cubics; one sampled from s 0.25 is re-expanded to s 0.
#[test]
fn a_profile_of_part_of_a_road_holds_its_values_outside_the_samples() {
    let value = |s: f64| 0.5 + 0.01 * (s - 47.0) + 0.002 * (s - 47.0).powi(2);
    let s: Vec<f64> = (0..=64).map(|i| 47.0 + 0.25 * i as f64).collect();
    let v: Vec<f64> = s.iter().map(|&x| value(x)).collect();
    let fit = opendrive::fit::fit_profile(&s, &v, &FitOptions::default()).unwrap();
    let held = fit.held(150.0);
    let at = |x: f64| opendrive::eval::profile_value(&held, x);
    assert_eq!(held[0].s, 0.0);
    for x in [0.0, 20.0, 46.9] {
        assert!((at(x) - value(47.0)).abs() < 1e-3, "s {x}: {}", at(x));
    }
    for x in [47.0, 55.0, 62.9] {
        assert!((at(x) - value(x)).abs() < 0.01, "s {x}: {} against {}", at(x), value(x));
    }
    for x in [63.5, 100.0, 150.0] {
        assert!((at(x) - value(63.0)).abs() < 0.01, "s {x}: {}", at(x));
    }
    // From s 0.25 to the end: the cubic re-expanded, nothing added.
    let s: Vec<f64> = (0..=200).map(|i| 0.25 + 0.5 * i as f64).collect();
    let v: Vec<f64> = s.iter().map(|&x| 0.01 * x).collect();
    let fit = opendrive::fit::fit_profile(&s, &v, &FitOptions::default()).unwrap();
    assert_eq!(fit.held(100.5), fit.from_zero());
}
