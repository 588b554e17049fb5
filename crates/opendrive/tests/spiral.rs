//! Spiral (clothoid) evaluation against an independent high-precision integration: composite
//! Simpson with 200,000 panels and compensated summation of (cos θ(u), sin θ(u)), θ the
//! quadratic heading of the record. Tolerance 1e-9 m over a sweep of curvStart, curvEnd and
//! length with both signs, zero, near-zero curvatures and near-zero curvature rates.

#![allow(clippy::panic, clippy::unwrap_used)] // tests and benches fail loudly

use opendrive::eval::Curve;
use opendrive::{Extras, Geometry, GeometryKind};

const TOL: f64 = 1e-9;

fn reference(x0: f64, y0: f64, hdg0: f64, k0: f64, k1: f64, len: f64, ds: f64) -> (f64, f64) {
    let rate = (k1 - k0) / len;
    let n = 200_000;
    let h = ds / n as f64;
    let f = |u: f64| {
        let th = hdg0 + k0 * u + 0.5 * rate * u * u;
        (th.cos(), th.sin())
    };
    // Kahan-compensated Simpson.
    let (mut sx, mut cx, mut sy, mut cy) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let add = |s: &mut f64, c: &mut f64, v: f64| {
        let y = v - *c;
        let t = *s + y;
        *c = (t - *s) - y;
        *s = t;
    };
    for i in 0..=n {
        let w = if i == 0 || i == n {
            1.0
        } else if i % 2 == 1 {
            4.0
        } else {
            2.0
        };
        let (c, s) = f(h * i as f64);
        add(&mut sx, &mut cx, w * c);
        add(&mut sy, &mut cy, w * s);
    }
    (x0 + sx * h / 3.0, y0 + sy * h / 3.0)
}

#[test]
fn spiral_end_points_match_high_precision_integration() {
    let curvatures = [-0.2, -0.05, -1e-3, -1e-7, 0.0, 1e-7, 1e-3, 0.05, 0.2];
    let lengths = [0.5, 10.0, 100.0, 300.0];
    let mut cases: Vec<(f64, f64, f64)> = Vec::new();
    for &k0 in &curvatures {
        for &k1 in &curvatures {
            for &l in &lengths {
                cases.push((k0, k1, l));
            }
        }
    }
    // Near-zero curvature rates, where closed forms divide by (k1 - k0).
    for &k in &[-0.02, 0.0, 0.013] {
        for &dk in &[1e-15, -1e-12, 1e-9, 1e-6] {
            cases.push((k, k + dk, 120.0));
        }
    }
    let mut worst = 0.0f64;
    for (i, &(k0, k1, len)) in cases.iter().enumerate() {
        let hdg = -2.5 + 0.37 * i as f64;
        // Small coordinates: at UTM northings one ulp (9.3e-10 m) would eat the tolerance.
        let (x0, y0) = (12.5 - i as f64, -30.25 + i as f64);
        let g = Geometry {
            s: 0.0,
            x: x0,
            y: y0,
            hdg,
            length: len,
            kind: GeometryKind::Spiral { curv_start: k0, curv_end: k1 },
            extras: Extras::default(),
        };
        let c = Curve::new(&g);
        for frac in [0.37, 1.0] {
            let ds = len * frac;
            let p = c.pose(ds);
            let (rx, ry) = reference(x0, y0, hdg, k0, k1, len, ds);
            let d = (p.x - rx).hypot(p.y - ry);
            worst = worst.max(d);
            assert!(d < TOL, "k0 {k0} k1 {k1} len {len} ds {ds}: {d:e} m off ({}, {}) vs ({rx}, {ry})", p.x, p.y);
            let want_hdg = hdg + k0 * ds + 0.5 * (k1 - k0) / len * ds * ds;
            assert!((p.hdg - want_hdg).abs() < 1e-12);
            assert!((p.curvature - (k0 + (k1 - k0) * frac)).abs() < 1e-12);
        }
    }
    eprintln!("{} spiral cases, worst {worst:e} m", cases.len());
}
