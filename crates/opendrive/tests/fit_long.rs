//! Long inputs (issue 30): a 3 km road of lines, clothoids and arcs surveyed every 0.25 m with
//! 3 mm of noise in x, y and height. The plan view and the elevation are fitted within the
//! tolerance, and the elevation's knot search works on chunks of a bounded number of samples
//! (before, one search over all 12,000 heights: its work grew with the cube of the length).

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::eval::Curve;
use opendrive::fit::{fit_polyline, fit_profile, FitOptions};
use opendrive::{Extras, Geometry, GeometryKind};

/// A seeded generator: uniform in (0, 1) and standard normal.
struct Rng(u64);

impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn gauss(&mut self) -> f64 {
        let (a, b) = (self.uniform(), self.uniform());
        (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
    }
}

/// Lines of 150 m, clothoids of 50 m and arcs of R 250 m (200 m long), turning to alternate
/// sides, until `length`.
fn design(length: f64) -> Vec<Geometry> {
    let k = 1.0 / 250.0;
    let mut out: Vec<Geometry> = Vec::new();
    let (mut x, mut y, mut hdg, mut s) = (0.0, 0.0, 0.4, 0.0);
    let mut side = 1.0;
    let mut push = |kind: GeometryKind, len: f64, out: &mut Vec<Geometry>| {
        let g = Geometry { s, x, y, hdg, length: len, kind, extras: Extras::default() };
        let end = Curve::new(&g).pose(len);
        (x, y, hdg, s) = (end.x, end.y, end.hdg, s + len);
        out.push(g);
        s
    };
    loop {
        if push(GeometryKind::Line, 150.0, &mut out) >= length {
            return out;
        }
        push(GeometryKind::Spiral { curv_start: 0.0, curv_end: side * k }, 50.0, &mut out);
        push(GeometryKind::Arc { curvature: side * k }, 200.0, &mut out);
        push(GeometryKind::Spiral { curv_start: side * k, curv_end: 0.0 }, 50.0, &mut out);
        side = -side;
    }
}

#[test]
fn a_3_km_noisy_survey_is_fitted_within_the_tolerance_in_bounded_chunks() {
    let design = design(3000.0);
    let curves: Vec<Curve> = design.iter().map(Curve::new).collect();
    let length: f64 = design.iter().map(|g| g.length).sum();
    let mut rng = Rng(30);
    let n = (length / 0.25).floor() as usize;
    let mut pts = Vec::with_capacity(n + 1);
    let mut heights = Vec::with_capacity(n + 1);
    for i in 0..=n {
        let s = (i as f64 * 0.25).min(length);
        let r = design.partition_point(|g| g.s <= s).clamp(1, design.len()) - 1;
        let p = curves[r].pose(s - design[r].s);
        pts.push([p.x + 0.003 * rng.gauss(), p.y + 0.003 * rng.gauss()]);
        // A grade and a long crest and sag.
        heights.push(20.0 + 0.015 * s + 3.0 * (s / 400.0).sin() + 0.003 * rng.gauss());
    }
    assert!(pts.len() > 12_000);
    let opts = FitOptions::default();
    let plan = fit_polyline(&pts, &opts).unwrap();
    assert!(plan.within(opts.tolerance), "plan view {:.4} m from the points' local mean", plan.deviation);
    // Every point of the fitted line near the design (the tolerance and the noise's 2σ).
    let length_fit: f64 = plan.geometries.iter().map(|g| g.length).sum();
    assert!((length_fit - length).abs() < 1.0, "length {length_fit} for {length}");
    assert!(plan.geometries.len() < 4 * design.len(), "{} records for {}", plan.geometries.len(), design.len());
    // The elevation at the vertices' stations, as `axis` fits it.
    let mut sz: Vec<(f64, f64)> = plan.stations.iter().zip(&heights).map(|(st, &z)| (st[0], z)).collect();
    sz.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (s, z): (Vec<f64>, Vec<f64>) = sz.into_iter().unzip();
    let elevation = fit_profile(&s, &z, &opts).unwrap();
    assert!(elevation.max <= opts.tolerance, "elevation max {:.4} m", elevation.max);
    // The records evaluated agree with the fit's residuals: beyond the tolerance, only heights
    // left out as outliers (the joined chunks miss none).
    let beyond = s
        .iter()
        .zip(&z)
        .filter(|&(&x, &v)| (opendrive::eval::profile_value(&elevation.records, x) - v).abs() > opts.tolerance + 1e-9)
        .count();
    assert!(beyond <= elevation.rejected, "{beyond} heights beyond the tolerance, {} left out", elevation.rejected);
    // Bounded work: no knot search over more than a chunk of samples (a fifth of them here).
    assert!(elevation.searched <= 1_000, "one knot search over {} of {} samples", elevation.searched, s.len());
    // Fewer records than samples by far (not a dense fallback).
    assert!(elevation.records.len() < s.len() / 20, "{} records", elevation.records.len());
}
