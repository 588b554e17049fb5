//! Long inputs (issue 30): a 3 km road of lines, clothoids and arcs surveyed every 0.25 m with
//! 3 mm of noise in x, y and height. The plan view and the elevation are fitted within the
//! tolerance, and the elevation's knot search works on chunks of a bounded number of samples
//! (before, one search over all 12,000 heights: its work grew with the cube of the length).

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::eval::Curve;
use opendrive::fit::{fit_noisy_profile, fit_polyline, FitOptions};
use opendrive::{Extras, Geometry, GeometryKind};

#[allow(dead_code)]
#[path = "support/design.rs"]
mod support;
use support::{design, Rng, Shape};

/// Lines of 150 m, clothoids of 50 m and arcs of R 250 m (200 m long).
const LONG: Shape = Shape { line: 150.0, spiral: 50.0, arc: 200.0, radius: 250.0, hdg: 0.4 };

#[test]
fn a_3_km_noisy_survey_is_fitted_within_the_tolerance_in_bounded_chunks() {
    let design = design(3000.0, &LONG);
    let curves: Vec<Curve> = design.iter().map(Curve::new).collect();
    let length: f64 = design.iter().map(|g| g.length).sum();
    let mut rng = Rng(30);
    let n = (length / 0.25).floor() as usize;
    let mut pts = Vec::with_capacity(n + 1);
    let mut heights = Vec::with_capacity(n + 1);
    let mut truth = Vec::with_capacity(n + 1);
    for i in 0..=n {
        let s = (i as f64 * 0.25).min(length);
        let r = design.partition_point(|g| g.s <= s).clamp(1, design.len()) - 1;
        let p = curves[r].pose(s - design[r].s);
        pts.push([p.x + 0.003 * rng.gauss(), p.y + 0.003 * rng.gauss()]);
        // A grade and a long crest and sag.
        truth.push(20.0 + 0.015 * s + 3.0 * (s / 400.0).sin());
        heights.push(truth[i] + 0.003 * rng.gauss());
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
    let mut sz: Vec<(f64, f64, f64)> =
        plan.stations.iter().zip(heights.iter().zip(&truth)).map(|(st, (&z, &t))| (st[0], z, t)).collect();
    sz.sort_by(|a, b| a.0.total_cmp(&b.0));
    let s: Vec<f64> = sz.iter().map(|p| p.0).collect();
    let z: Vec<f64> = sz.iter().map(|p| p.1).collect();
    let elevation = fit_noisy_profile(&s, &z, &opts).unwrap();
    assert!(elevation.max <= opts.tolerance, "elevation max {:.4} m", elevation.max);
    assert!((elevation.noise - 0.003).abs() < 0.0005, "noise estimated at {:.4} m", elevation.noise);
    // The records against the true heights under every vertex: within the tolerance (the
    // noise is for the fit to average, not to follow).
    let worst = sz
        .iter()
        .map(|&(x, _, t)| (opendrive::eval::profile_value(&elevation.records, x) - t).abs())
        .fold(0.0f64, f64::max);
    assert!(worst <= opts.tolerance, "elevation {worst:.4} m from the true heights");
    // Bounded work: no knot search over more than a chunk of samples (a fifth of them here).
    assert!(elevation.searched <= 1_000, "one knot search over {} of {} samples", elevation.searched, s.len());
    // Few records: the grade, crest and sag, not the noise (while every noisy height was held
    // to the tolerance, the 10 km road of `cargo bench -p opendrive --bench axis` took 562).
    eprintln!("elevation: {} records, {:.4} m from the true heights", elevation.records.len(), worst);
    assert!(elevation.records.len() <= 30, "{} records", elevation.records.len());
}

/// No two adjacent records of `records` are one equation by qc-opendrive's test (its strict run
/// fails on "Redundant elevation declaration"), nor one cubic to a micrometre over the second.
fn assert_no_redundant(records: &[opendrive::Poly3], end: f64, what: &str) {
    for (k, w) in records.windows(2).enumerate() {
        assert!(
            !w[0].same_equation(&w[1]),
            "{what}: records {k} and {} are one equation ({:.3e}): {:?} {:?}",
            k + 1,
            w[0].equation_difference(&w[1]),
            w[0],
            w[1]
        );
        // The first continued over the second's length: it must differ somewhere by more than
        // a micrometre (else the second is the first again).
        let len = records.get(k + 2).map_or(end, |n| n.s) - w[1].s;
        let differs = (0..=20).any(|j| {
            let x = w[1].s + len * j as f64 / 20.0;
            (w[0].value(x - w[0].s) - w[1].value(x - w[1].s)).abs() > 1e-6
        });
        assert!(differs, "{what}: record {} continues record {k} unchanged", k + 1);
    }
}

/// 2 km of heights every 0.25 m (8,001, fitted chunk by chunk) with 3 mm of noise: an even
/// grade between vertical curves, and long straight grades where a chunk's first piece is the
/// kept piece continued (before the joins were merged, two records of one line).
#[test]
fn a_long_noisy_profile_has_no_two_records_of_one_equation() {
    let opts = FitOptions::default();
    for (name, f) in [
        ("crests", (|s: f64| 20.0 + 0.015 * s + 3.0 * (s / 400.0).sin()) as fn(f64) -> f64),
        ("grade", |s: f64| 12.0 + 0.02 * s),
        ("level", |_: f64| 5.0),
        ("grade then crest", |s: f64| {
            if s < 1200.0 {
                0.01 * s
            } else {
                12.0 + 0.01 * (s - 1200.0) - 2e-5 * (s - 1200.0).powi(2)
            }
        }),
    ] {
        for noise in [0.0, 0.003] {
            let mut rng = Rng(7);
            let s: Vec<f64> = (0..=8000).map(|i| i as f64 * 0.25).collect();
            let z: Vec<f64> = s.iter().map(|&x| f(x) + noise * rng.gauss()).collect();
            let fit = fit_noisy_profile(&s, &z, &opts).unwrap();
            let what = format!("{name}, noise {noise}");
            assert!(fit.searched <= 1_000, "{what}: one knot search over {} samples", fit.searched);
            assert!(fit.max <= opts.tolerance, "{what}: max {:.4} m", fit.max);
            // Exact heights: every one within the tolerance but those left out. Noisy ones: the
            // records within the tolerance of the true profile, and no height farther than
            // the tolerance and what noise reaches (5.5 σ).
            let reach = if noise > 0.0 { 5.5 * noise } else { 0.0 };
            let beyond = s
                .iter()
                .zip(&z)
                .filter(|&(&x, &v)| {
                    (opendrive::eval::profile_value(&fit.records, x) - v).abs() > opts.tolerance + reach + 1e-9
                })
                .count();
            assert!(beyond <= fit.rejected, "{what}: {beyond} heights beyond the tolerance");
            let worst =
                s.iter().map(|&x| (opendrive::eval::profile_value(&fit.records, x) - f(x)).abs()).fold(0.0, f64::max);
            assert!(worst <= opts.tolerance, "{what}: {worst:.4} m from the true profile");
            assert_no_redundant(&fit.records, fit.s_last, &what);
            assert_no_redundant(&fit.from_zero(), fit.s_last, &format!("{what}, from s = 0"));
            assert_no_redundant(&fit.held(fit.s_last + 50.0), fit.s_last + 50.0, &format!("{what}, held"));
        }
    }
}

/// `merge_redundant` drops a record that repeats the one before (continued) and keeps one
/// that differs by more than the tolerance; `check` reports the repeated one (a warning, as
/// qc-opendrive's).
#[test]
fn a_repeated_record_is_merged_and_reported() {
    use opendrive::Poly3;
    // 0.01 s + 1e-4 s² from 0; the same from 100 (re-expanded); a different slope from 200.
    let p = Poly3 { s: 0.0, a: 1.0, b: 0.01, c: 1e-4, d: 0.0 };
    let q = Poly3 { s: 100.0, a: p.value(100.0), b: p.slope(100.0), c: 1e-4, d: 0.0 };
    let r = Poly3 { s: 200.0, a: p.value(200.0), b: p.slope(200.0) + 0.01, c: 0.0, d: 0.0 };
    assert!(p.same_equation(&q) && !q.same_equation(&r));
    let mut road = opendrive::Road {
        id: "7".into(),
        length: 300.0,
        junction: "-1".into(),
        plan_view: {
            let mut pv = opendrive::PlanView::default();
            pv.push(Geometry {
                s: 0.0,
                x: 0.0,
                y: 0.0,
                hdg: 0.0,
                length: 300.0,
                kind: GeometryKind::Line,
                extras: Extras::default(),
            });
            pv
        },
        ..Default::default()
    };
    road.elevation_profile.elevations = vec![p, q, r];
    road.lanes.lane_sections = vec![opendrive::LaneSection::default()];
    let odr = opendrive::OpenDrive { roads: vec![road.clone()], ..Default::default() };
    let found: Vec<_> = opendrive::validate::check(&odr, &Default::default())
        .into_iter()
        .filter(|d| d.severity == opendrive::validate::Severity::Warning && d.message.contains("redundant"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!((found[0].road.as_deref(), found[0].s), (Some("7"), Some(100.0)));
    let mut recs = road.elevation_profile.elevations.clone();
    assert_eq!(opendrive::fit::merge_redundant(&mut recs, 300.0, 0.01), 1);
    assert_eq!(recs, vec![p, r]);
}
