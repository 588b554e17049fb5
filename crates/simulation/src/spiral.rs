//! Reference-line poses for the wheels' and actors' Newton steps, spirals without their
//! quadrature from the record start and arcs without their sine and cosine.
//!
//! `RoadEval::pose` integrates a spiral (clothoid) from its record start by Gauss-Legendre
//! panels, ten sines and cosines a pose: the step's largest cost. Here each spiral (and arc) record keeps
//! its poses at knots every [`KNOT`] m (`RoadEval::pose`'s own values) with their headings'
//! sines and cosines, and a pose between knots is the nearest knot's plus the displacement over
//! the rest, at most half a knot spacing: `∫ exp(iθ(u)) du` with `θ(u) = κ_k u + rate u²/2` by
//! four Gauss-Legendre nodes, each `exp(iθ)` by its series to θ⁷ (|θ| <= [`MAX_TURN`]: terms
//! beyond below 1e-19, the quadrature's error below 1e-17 m). The heading and curvature are
//! the record's closed forms, as `RoadEval::pose` computes them (the same bits); positions
//! agree with it within rounding (1e-12 m, tested), and the heading's sine and cosine are the
//! knot's turned by the series (within 1e-15; a line's heading's are kept). Lines and cubics, points beyond a
//! spiral's knots, and spirals too tight for the series take `RoadEval::pose` itself.

use opendrive::{GeometryKind, Pose, RoadEval};

/// Knot spacing along a spiral, m.
pub const KNOT: f64 = 0.25;
/// Largest heading change over the rest from a knot taken by the series, rad.
const MAX_TURN: f64 = 0.02;
/// Most knots of a road.
const MAX_KNOTS: usize = 1 << 20;

/// A spiral or arc record's knots.
#[derive(Debug, Clone)]
struct Spiral {
    /// An arc (its heading `hdg0 + k0 ds`, as `RoadEval::pose` has it).
    arc: bool,
    hdg0: f64,
    k0: f64,
    rate: f64,
    /// (x, y, sin heading, cos heading) at `k KNOT` from the record start, k = 0, 1, ...
    knots: Vec<[f64; 4]>,
}

/// The spiral records of a road with their knots, by the index of their geometry record.
#[derive(Debug, Clone)]
pub(crate) struct SpiralKnots {
    /// The records' starts (as the road's records).
    starts: Vec<f64>,
    spirals: Vec<Option<Spiral>>,
    /// A line record's heading's `sin_cos` (its poses' heading is the record's).
    lines: Vec<Option<(f64, f64)>>,
}

impl SpiralKnots {
    /// The knots of `road`'s spiral records (over each record's length).
    pub(crate) fn new(road: &RoadEval) -> SpiralKnots {
        let geometries = &road.road().plan_view.geometries;
        let mut budget = MAX_KNOTS;
        let spirals = geometries
            .iter()
            .map(|g| {
                let (arc, curv_start, curv_end) = match g.kind {
                    GeometryKind::Spiral { curv_start, curv_end } => (false, curv_start, curv_end),
                    GeometryKind::Arc { curvature } => (true, curvature, curvature),
                    _ => return None,
                };
                if !(g.length.is_finite() && g.length > 0.0 && g.s.is_finite()) {
                    return None;
                }
                let n = (g.length / KNOT).floor() as usize + 1;
                if n > budget {
                    return None;
                }
                budget -= n;
                let curve = road.curve_at(g.s).filter(|c| c.s0.to_bits() == g.s.to_bits())?;
                let knots = (0..n)
                    .map(|k| {
                        let p = curve.pose(k as f64 * KNOT);
                        let (sn, cs) = p.hdg.sin_cos();
                        [p.x, p.y, sn, cs]
                    })
                    .collect();
                // As `Curve::new` takes them.
                let rate = if arc { 0.0 } else { (curv_end - curv_start) / g.length };
                Some(Spiral { arc, hdg0: g.hdg, k0: curv_start, rate, knots })
            })
            .collect();
        let lines = geometries.iter().map(|g| matches!(g.kind, GeometryKind::Line).then(|| g.hdg.sin_cos())).collect();
        SpiralKnots { starts: geometries.iter().map(|g| g.s).collect(), spirals, lines }
    }

    /// The reference line's pose at `s` (see the module; `RoadEval::pose` where no knot
    /// serves) and its heading's (sin, cos): from a knot the knot's turned by the series
    /// (within 1e-15 of `sin_cos`), on a line the record's `sin_cos` kept, else `sin_cos`.
    pub(crate) fn pose_sc(&self, road: &RoadEval, s: f64) -> (Pose, (f64, f64)) {
        // The record `RoadEval::pose` takes: the last that starts at or before s, else the first.
        let i = self.starts.partition_point(|&a| a <= s).max(1) - 1;
        if let (Some(Some(sp)), Some(&s0)) = (self.spirals.get(i), self.starts.get(i)) {
            let ds = s - s0;
            let k = (ds / KNOT).round();
            if k >= 0.0 && (k as usize) < sp.knots.len() {
                let [x, y, sn, cs] = sp.knots[k as usize];
                let d = ds - k * KNOT;
                let a = sp.k0 + sp.rate * (k * KNOT);
                let b = 0.5 * sp.rate;
                if (a * d).abs() + (b * d * d).abs() <= MAX_TURN {
                    let (lx, ly) = short_spiral(a, b, d);
                    let (hdg, curvature) = if sp.arc {
                        (sp.hdg0 + sp.k0 * ds, sp.k0)
                    } else {
                        (sp.hdg0 + ds * (sp.k0 + 0.5 * sp.rate * ds), sp.k0 + sp.rate * ds)
                    };
                    let pose = Pose { x: x + lx * cs - ly * sn, y: y + lx * sn + ly * cs, hdg, curvature };
                    let (ts, tc) = sin_cos_small(d * (a + b * d));
                    return (pose, (sn * tc + cs * ts, cs * tc - sn * ts));
                }
            }
        }
        let pose = road.pose(s);
        match self.lines.get(i) {
            Some(Some(sc)) => (pose, *sc),
            _ => (pose, pose.hdg.sin_cos()),
        }
    }
}

/// (sin t, cos t) for |t| <= [`MAX_TURN`] by their series to t⁷.
fn sin_cos_small(t: f64) -> (f64, f64) {
    let t2 = t * t;
    (
        t * (1.0 - t2 / 6.0 * (1.0 - t2 / 20.0 * (1.0 - t2 / 42.0))),
        1.0 - t2 / 2.0 * (1.0 - t2 / 12.0 * (1.0 - t2 / 30.0)),
    )
}

/// ∫₀^d (cos θ, sin θ) du with θ(u) = a u + b u², |θ| small: four Gauss-Legendre nodes and the
/// series of cos and sin.
fn short_spiral(a: f64, b: f64, d: f64) -> (f64, f64) {
    const X: [f64; 2] = [0.339_981_043_584_856_3, 0.861_136_311_594_052_6];
    const W: [f64; 2] = [0.652_145_154_862_546_1, 0.347_854_845_137_453_9];
    let h = 0.5 * d;
    let (mut cx, mut cy) = (0.0, 0.0);
    for (x, w) in X.iter().zip(W) {
        for u in [h * (1.0 - x), h * (1.0 + x)] {
            let (s, c) = sin_cos_small(u * (a + b * u));
            cx += w * c;
            cy += w * s;
        }
    }
    (h * cx, h * cy)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Knot poses agree with the road's own: at 0.7 mm steps over the demo road (two spirals
    /// and an arc between two lines), positions within 1e-12 m and headings and
    /// curvatures to the bit; and tight or long spirals beyond the series take the road's
    /// pose.
    #[test]
    fn spiral_poses_from_knots_agree_with_the_road() {
        let odr = opendrive::read(include_str!("../../../data/opendrive/demo.xodr")).expect("demo road");
        let road = RoadEval::new(&odr.roads[0]);
        let knots = SpiralKnots::new(&road);
        assert_eq!(knots.spirals.iter().filter(|s| s.is_some()).count(), 3);
        let mut worst = 0.0f64;
        for k in 0..=215_000 {
            let s = k as f64 * 0.000_7;
            let ((got, (sn, cs)), want) = (knots.pose_sc(&road, s), road.pose(s));
            worst = worst.max((got.x - want.x).hypot(got.y - want.y));
            let (ws, wc) = want.hdg.sin_cos();
            assert!((sn - ws).abs() < 1e-15 && (cs - wc).abs() < 1e-15, "heading's sine and cosine at {s}");
            assert_eq!(got.hdg.to_bits(), want.hdg.to_bits(), "heading at {s}");
            assert_eq!(got.curvature.to_bits(), want.curvature.to_bits(), "curvature at {s}");
        }
        assert!(worst < 1e-12, "largest position difference {worst} m");
        // The series against the quadrature over the largest turn it takes, both ways.
        for (a, b, d) in [(0.16, 0.0, 0.125), (-0.1, 0.3, -0.125), (0.0, 1.28, 0.125), (0.159, -0.01, 0.125)] {
            let (x, y) = short_spiral(a, b, d);
            let n = 20_000;
            let (mut qx, mut qy) = (0.0, 0.0);
            for i in 0..n {
                let u = d * (i as f64 + 0.5) / n as f64;
                let (sn, cs) = (u * (a + b * u)).sin_cos();
                qx += cs * d / n as f64;
                qy += sn * d / n as f64;
            }
            // The midpoint rule's own error: d³ θ''/24 n², below 1e-12 here.
            assert!((x - qx).hypot(y - qy) < 1e-12, "a {a} b {b} d {d}: ({x}, {y}) vs ({qx}, {qy})");
        }
    }
}
