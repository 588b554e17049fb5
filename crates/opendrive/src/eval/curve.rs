//! Reference-line geometry records: position, heading and curvature at a distance along the
//! record, for every OpenDRIVE geometry type.
//!
//! * line and arc: closed forms (the arc through the chord `ds·sinc(k·ds/2)`, exact also for
//!   tiny curvatures where `(sin θ1 − sin θ0)/k` would cancel).
//! * spiral (clothoid): `∫ exp(i·θ(u)) du` by Gauss-Legendre panels whose heading change is at
//!   most 2 rad; the quadrature error is then below 1e-15 m per metre, so this equals the
//!   Fresnel-integral closed form to rounding, with no special case for zero or constant
//!   curvature rate.
//! * paramPoly3 and poly3: evaluated by true arc length. A table of the arc length at panel
//!   ends is built once (Gauss-Legendre, 10 points per panel); `ds -> p` is then solved by
//!   safeguarded Newton on `∫|r'(p)|dp = ds` to 1e-12 m. This is the exact re-parameterisation
//!   that libOpenDRIVE and esmini approximate with polyline tables.
//!
//! # Units
//! Metres, radians, 1/m.

use super::quad::{gl10, gl10_pair};
use crate::model::{Geometry, GeometryKind, PRange};

/// Position, heading and curvature on the reference line.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Pose {
    /// m.
    pub x: f64,
    /// m.
    pub y: f64,
    /// rad, counter-clockwise from +x.
    pub hdg: f64,
    /// 1/m, positive = turning left.
    pub curvature: f64,
}

/// A geometry record prepared for evaluation.
#[derive(Debug, Clone)]
pub struct Curve {
    /// Start s on the road.
    pub s0: f64,
    /// Declared length.
    pub length: f64,
    x0: f64,
    y0: f64,
    hdg0: f64,
    /// `hdg0.sin()`, `hdg0.cos()` (a line's direction) and `hdg0.sin_cos()` (the frame of a
    /// spiral or cubic), once: a pose is asked for millions of times (each wheel's inverse).
    line_dir: (f64, f64),
    frame: (f64, f64),
    kind: CurveKind,
}

#[derive(Debug, Clone)]
enum CurveKind {
    Line,
    Arc { k: f64 },
    Spiral { k0: f64, rate: f64 },
    Cubic(Box<ParamCubic>),
}

/// Maximum heading change in one quadrature panel of a spiral, rad.
const SPIRAL_PANEL_PHASE: f64 = 2.0;

impl Curve {
    /// Prepares a geometry record.
    pub fn new(g: &Geometry) -> Curve {
        let kind = match g.kind {
            GeometryKind::Line => CurveKind::Line,
            GeometryKind::Arc { curvature } => CurveKind::Arc { k: curvature },
            GeometryKind::Spiral { curv_start, curv_end } => {
                let rate = if g.length > 0.0 { (curv_end - curv_start) / g.length } else { 0.0 };
                CurveKind::Spiral { k0: curv_start, rate }
            }
            GeometryKind::Poly3 { a, b, c, d } => {
                CurveKind::Cubic(Box::new(ParamCubic::new([0.0, 1.0, 0.0, 0.0], [a, b, c, d], g.length.max(0.0))))
            }
            GeometryKind::ParamPoly3 { u, v, p_range } => {
                let p_end = match p_range {
                    PRange::Normalized => 1.0,
                    PRange::ArcLength => g.length,
                };
                CurveKind::Cubic(Box::new(ParamCubic::new(u, v, p_end)))
            }
        };
        let (line_dir, frame) = ((g.hdg.sin(), g.hdg.cos()), g.hdg.sin_cos());
        Curve { s0: g.s, length: g.length, x0: g.x, y0: g.y, hdg0: g.hdg, line_dir, frame, kind }
    }

    /// Pose at `ds` metres from the record start (not clamped: lines, arcs and spirals
    /// extrapolate; parametric cubics clamp to their parameter range).
    pub fn pose(&self, ds: f64) -> Pose {
        match &self.kind {
            CurveKind::Line => Pose {
                x: self.x0 + ds * self.line_dir.1,
                y: self.y0 + ds * self.line_dir.0,
                hdg: self.hdg0,
                curvature: 0.0,
            },
            CurveKind::Arc { k } => {
                let half = 0.5 * k * ds;
                let chord = ds * sinc(half);
                let mid = self.hdg0 + half;
                Pose {
                    x: self.x0 + chord * mid.cos(),
                    y: self.y0 + chord * mid.sin(),
                    hdg: self.hdg0 + k * ds,
                    curvature: *k,
                }
            }
            CurveKind::Spiral { k0, rate } => {
                let (lx, ly) = spiral_local(*k0, *rate, ds);
                let (sin0, cos0) = self.frame;
                Pose {
                    x: self.x0 + lx * cos0 - ly * sin0,
                    y: self.y0 + lx * sin0 + ly * cos0,
                    hdg: self.hdg0 + ds * (k0 + 0.5 * rate * ds),
                    curvature: k0 + rate * ds,
                }
            }
            CurveKind::Cubic(c) => {
                let p = c.p_at_arc_length(ds);
                let (u, v) = (c.u(p), c.v(p));
                let (du, dv) = (c.du(p), c.dv(p));
                let (ddu, ddv) = (c.ddu(p), c.ddv(p));
                let (sin0, cos0) = self.frame;
                let speed2 = du * du + dv * dv;
                let curvature = if speed2 > 0.0 { (du * ddv - dv * ddu) / (speed2 * speed2.sqrt()) } else { 0.0 };
                Pose {
                    x: self.x0 + u * cos0 - v * sin0,
                    y: self.y0 + u * sin0 + v * cos0,
                    hdg: self.hdg0 + dv.atan2(du),
                    curvature,
                }
            }
        }
    }

    /// For paramPoly3 and poly3: the arc length of the curve over its whole parameter range
    /// (p in [0, 1] or [0, length]; for poly3 u in [0, length]), m.
    pub fn parametric_length(&self) -> Option<f64> {
        match &self.kind {
            CurveKind::Cubic(c) => c.arc.last().copied(),
            _ => None,
        }
    }

    /// For paramPoly3 and poly3: the curve's cubics u(p), v(p) in the record's local frame (for
    /// poly3 u(p) = p) and the parameter at `ds` metres along the curve, as [`Curve::pose`]
    /// finds it (clamped to the parameter range). None for other records.
    pub(crate) fn cubic_at(&self, ds: f64) -> Option<([f64; 4], [f64; 4], f64)> {
        match &self.kind {
            CurveKind::Cubic(c) => Some((c.u, c.v, c.p_at_arc_length(ds))),
            _ => None,
        }
    }

    /// Largest |curvature| on the record, 1/m (sampled for parametric cubics).
    pub fn max_abs_curvature(&self) -> f64 {
        match &self.kind {
            CurveKind::Line => 0.0,
            CurveKind::Arc { k } => k.abs(),
            CurveKind::Spiral { k0, rate } => k0.abs().max((k0 + rate * self.length).abs()),
            CurveKind::Cubic(_) => {
                (0..=32).map(|i| self.pose(self.length * i as f64 / 32.0).curvature.abs()).fold(0.0, f64::max)
            }
        }
    }
}

/// sin(x)/x, 1 at 0.
#[inline]
fn sinc(x: f64) -> f64 {
    if x.abs() < 1e-8 {
        1.0 - x * x / 6.0
    } else {
        x.sin() / x
    }
}

/// Most quadrature panels one spiral evaluation takes: a heading change of 8192 rad (1300
/// turns) at full accuracy, far beyond any road's record. Beyond it see [`spiral_local`].
const SPIRAL_MAX_PANELS: f64 = 4096.0;

/// ∫₀^ds (cos φ(u), sin φ(u)) du with φ(u) = k0·u + rate·u²/2: a clothoid in its start frame.
///
/// The work is bounded whatever the values: at most [`SPIRAL_MAX_PANELS`] panels. Where the
/// whole record would need more (only for curvatures and lengths no road has, which
/// [`crate::validate`] reports), the parts where |κ| exceeds a threshold K are not integrated:
/// the curvature is linear in u, so those parts are at most two end pieces on which |κ| is
/// monotonic, and by the Tait-Kneser theorem such a piece lies inside its osculating circle at
/// its least-curved end (radius ≤ 1/K). The piece's displacement is taken as that circle's
/// centre, within 1/K of the truth. K is the least threshold whose remaining part fits the
/// panel budget, so the error is at most 2/K (K ≥ 8192/|ds| and K ≥ √(4096·|rate|)).
fn spiral_local(k0: f64, rate: f64, ds: f64) -> (f64, f64) {
    if ds == 0.0 {
        return (0.0, 0.0);
    }
    let k_max = k0.abs().max((k0 + rate * ds).abs());
    let n = ((ds.abs() * k_max) / SPIRAL_PANEL_PHASE).ceil().max(1.0);
    if n <= SPIRAL_MAX_PANELS {
        return spiral_panels(k0, rate, 0.0, ds, n as usize);
    }
    let (lo, hi) = if ds > 0.0 { (0.0, ds) } else { (ds, 0.0) };
    // Constant curvature: the arc's closed form.
    if rate == 0.0 {
        let half = 0.5 * k0 * ds;
        let chord = ds * sinc(half);
        return (chord * half.cos(), chord * half.sin());
    }
    // The threshold: the part with |κ| ≤ K is at most 2K/|rate| long and |ds| long, and takes
    // length·K/2 panels.
    let k_cut = (SPIRAL_MAX_PANELS * rate.abs()).sqrt().max(2.0 * SPIRAL_MAX_PANELS / ds.abs());
    let phi = |u: f64| u * (k0 + 0.5 * rate * u);
    let kappa = |u: f64| k0 + rate * u;
    // Where κ = ±K, in increasing u.
    let (mut u_a, mut u_b) = ((-k_cut - k0) / rate, (k_cut - k0) / rate);
    if u_a > u_b {
        std::mem::swap(&mut u_a, &mut u_b);
    }
    let (m0, m1) = (u_a.clamp(lo, hi), u_b.clamp(lo, hi));
    // From lo to hi: a strongly curved piece [lo, m0], the middle [m0, m1], another [m1, hi].
    let (mut x, mut y) = (0.0, 0.0);
    // Centre of the osculating circle at u, from the point at u: the left normal over κ.
    let to_centre = |u: f64| {
        let (sn, c) = phi(u).sin_cos();
        let k = kappa(u);
        (-sn / k, c / k)
    };
    if m0 > lo {
        // |κ| falls towards m0: the piece ends at m0, starts near the centre there.
        let (cx, cy) = to_centre(m0);
        x -= cx;
        y -= cy;
    }
    if m1 > m0 {
        let n = ((m1 - m0) * k_cut / SPIRAL_PANEL_PHASE).ceil().clamp(1.0, SPIRAL_MAX_PANELS) as usize;
        let (px, py) = spiral_panels(k0, rate, m0, m1, n);
        x += px;
        y += py;
    }
    if hi > m1 {
        // |κ| grows from m1: the piece winds in towards the centre at m1.
        let (cx, cy) = to_centre(m1);
        x += cx;
        y += cy;
    }
    // The integral from 0 to ds: lo..hi is 0..ds or, backwards, its negative.
    if ds > 0.0 {
        (x, y)
    } else {
        (-x, -y)
    }
}

/// ∫ from a to b of (cos φ, sin φ) by `n` Gauss-Legendre panels.
fn spiral_panels(k0: f64, rate: f64, a: f64, b: f64, n: usize) -> (f64, f64) {
    let h = (b - a) / n as f64;
    let (mut x, mut y) = (0.0, 0.0);
    for i in 0..n {
        let p = a + i as f64 * h;
        let (px, py) = gl10_pair(p, p + h, |u| {
            let (s, c) = (u * (k0 + 0.5 * rate * u)).sin_cos();
            (c, s)
        });
        x += px;
        y += py;
    }
    (x, y)
}

/// A cubic curve u(p), v(p) with an arc-length table.
#[derive(Debug, Clone)]
struct ParamCubic {
    u: [f64; 4],
    v: [f64; 4],
    /// Parameter at the panel ends, from 0 to p_end.
    p: Vec<f64>,
    /// Arc length at the panel ends.
    arc: Vec<f64>,
}

impl ParamCubic {
    fn new(u: [f64; 4], v: [f64; 4], p_end: f64) -> ParamCubic {
        let mut c = ParamCubic { u, v, p: Vec::new(), arc: Vec::new() };
        // Panels: enough that |r'| (the square root of a quartic) is smooth on each.
        let n = 8 + (c.chord_bound(p_end) / 2.0).ceil().min(248.0) as usize;
        let mut total = 0.0;
        c.p.push(0.0);
        c.arc.push(0.0);
        for i in 0..n {
            let a = p_end * i as f64 / n as f64;
            let b = p_end * (i + 1) as f64 / n as f64;
            total += gl10(a, b, |p| c.speed(p));
            c.p.push(b);
            c.arc.push(total);
        }
        c
    }

    /// A cheap upper bound of the curve length (control-polygon length), to size the panels.
    fn chord_bound(&self, p_end: f64) -> f64 {
        let pts: Vec<(f64, f64)> =
            (0..=8).map(|i| (self.u(p_end * i as f64 / 8.0), self.v(p_end * i as f64 / 8.0))).collect();
        let l: f64 = pts.windows(2).map(|w| (w[1].0 - w[0].0).hypot(w[1].1 - w[0].1)).sum();
        if l.is_finite() {
            l
        } else {
            0.0
        }
    }

    fn u(&self, p: f64) -> f64 {
        let c = &self.u;
        c[0] + p * (c[1] + p * (c[2] + p * c[3]))
    }
    fn v(&self, p: f64) -> f64 {
        let c = &self.v;
        c[0] + p * (c[1] + p * (c[2] + p * c[3]))
    }
    fn du(&self, p: f64) -> f64 {
        let c = &self.u;
        c[1] + p * (2.0 * c[2] + 3.0 * p * c[3])
    }
    fn dv(&self, p: f64) -> f64 {
        let c = &self.v;
        c[1] + p * (2.0 * c[2] + 3.0 * p * c[3])
    }
    fn ddu(&self, p: f64) -> f64 {
        2.0 * self.u[2] + 6.0 * self.u[3] * p
    }
    fn ddv(&self, p: f64) -> f64 {
        2.0 * self.v[2] + 6.0 * self.v[3] * p
    }
    fn speed(&self, p: f64) -> f64 {
        let (du, dv) = (self.du(p), self.dv(p));
        (du * du + dv * dv).sqrt()
    }

    /// The parameter where the arc length from p = 0 is `ds`; clamped to the parameter range.
    fn p_at_arc_length(&self, ds: f64) -> f64 {
        let n = self.arc.len() - 1;
        if ds <= 0.0 {
            return 0.0;
        }
        if ds >= self.arc[n] {
            return self.p[n];
        }
        let k = self.arc.partition_point(|&a| a <= ds).clamp(1, n) - 1;
        let (pa, pb) = (self.p[k], self.p[k + 1]);
        let (aa, ab) = (self.arc[k], self.arc[k + 1]);
        let target = ds - aa;
        let (mut lo, mut hi) = (pa, pb);
        let mut p = pa + (pb - pa) * (target / (ab - aa)).clamp(0.0, 1.0);
        for _ in 0..60 {
            let f = gl10(pa, p, |q| self.speed(q)) - target;
            if f.abs() < 1e-13 {
                break;
            }
            if f > 0.0 {
                hi = p;
            } else {
                lo = p;
            }
            let d = self.speed(p);
            let newton = if d > 0.0 { p - f / d } else { f64::NAN };
            p = if newton > lo && newton < hi { newton } else { 0.5 * (lo + hi) };
            if hi - lo < 1e-15 * (1.0 + pb.abs()) {
                break;
            }
        }
        p
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Extras;

    fn geom(kind: GeometryKind, length: f64) -> Geometry {
        Geometry { s: 0.0, x: 0.0, y: 0.0, hdg: 0.0, length, kind, extras: Extras::default() }
    }

    #[test]
    fn spiral_matches_published_end_point() {
        // A 30 m clothoid from 0 to 0.01 1/m after a 50 m line (specs/opendrive.md): scipy's
        // Fresnel integrals and quad both give (79.93257028, 1.49759101).
        let mut g = geom(GeometryKind::Spiral { curv_start: 0.0, curv_end: 0.01 }, 30.0);
        g.x = 50.0;
        let p = Curve::new(&g).pose(30.0);
        assert!((p.x - 79.932_570_28).abs() < 1e-8 && (p.y - 1.497_591_01).abs() < 1e-8, "{p:?}");
        assert!((p.hdg - 0.15).abs() < 1e-15);
        assert!((p.curvature - 0.01).abs() < 1e-15);
    }

    #[test]
    fn spiral_beyond_the_panel_budget_is_within_its_stated_bound() {
        // Heading changes of 2.5e4 to 5e5 rad: the budget's 4096 panels do not cover them. The
        // exact value: the same quadrature with every panel it needs.
        for (k0, rate, ds) in [(0.0, 10.0, 100.0), (80.0, -1.0, 200.0), (-3.0, 0.5, -300.0), (200.0, 0.0, 500.0)] {
            let k_max: f64 = f64::abs(k0).max(f64::abs(k0 + rate * ds));
            let n = (ds.abs() * k_max / SPIRAL_PANEL_PHASE).ceil();
            assert!(n > SPIRAL_MAX_PANELS, "{n}");
            let exact = spiral_panels(k0, rate, 0.0, ds, n as usize);
            let got = spiral_local(k0, rate, ds);
            let k_cut = (SPIRAL_MAX_PANELS * f64::abs(rate)).sqrt().max(2.0 * SPIRAL_MAX_PANELS / ds.abs());
            let err = (got.0 - exact.0).hypot(got.1 - exact.1);
            assert!(err <= 2.0 / k_cut, "k0 {k0} rate {rate} ds {ds}: error {err} m, bound {} m", 2.0 / k_cut);
        }
    }

    #[test]
    fn arc_is_exact_for_tiny_curvature() {
        let c = Curve::new(&geom(GeometryKind::Arc { curvature: 1e-12 }, 100.0));
        let p = c.pose(100.0);
        assert!((p.x - 100.0).abs() < 1e-9 && (p.y - 100.0 * 100.0 * 1e-12 / 2.0).abs() < 1e-12);
    }

    #[test]
    fn param_poly3_straight_line_is_arc_length() {
        let c = Curve::new(&geom(
            GeometryKind::ParamPoly3 { u: [0.0, 3.0, 0.0, 0.0], v: [0.0, 4.0, 0.0, 0.0], p_range: PRange::Normalized },
            5.0,
        ));
        let p = c.pose(2.5);
        assert!((p.x - 1.5).abs() < 1e-12 && (p.y - 2.0).abs() < 1e-12, "{p:?}");
    }

    #[test]
    fn poly3_is_evaluated_by_arc_length() {
        // v(u) = 0.01·u²: arc length ∫sqrt(1 + (0.02u)²) du; at u = 10 it is
        // (u·sqrt(1+a²u²) + asinh(a·u)/a)/2 with a = 0.02.
        let a = 0.02f64;
        let u = 10.0f64;
        let arc = 0.5 * (u * (1.0 + a * a * u * u).sqrt() + (a * u).asinh() / a);
        let c = Curve::new(&geom(GeometryKind::Poly3 { a: 0.0, b: 0.0, c: 0.01, d: 0.0 }, 30.0));
        let p = c.pose(arc);
        assert!((p.x - u).abs() < 1e-9 && (p.y - 0.01 * u * u).abs() < 1e-9, "{p:?}");
        assert!((p.hdg - (0.02 * u).atan()).abs() < 1e-12);
        // Curvature of y = c·x²: 2c / (1 + (2cx)²)^1.5.
        assert!((p.curvature - 0.02 / (1.0 + 0.04f64).powf(1.5)).abs() < 1e-12);
    }

    #[test]
    fn plan_view_push_keeps_exact_s_bookkeeping() {
        let mut pv = crate::model::PlanView::default();
        for len in [0.1, 0.2, 0.3, 1e-3, 1234.5678] {
            pv.push(geom(GeometryKind::Line, len));
        }
        let mut s = 0.0;
        for g in &pv.geometries {
            assert_eq!(g.s, s);
            s += g.length;
        }
        assert_eq!(pv.end_s(), s);
    }
}
