//! Shared by the fitting tests and benches (each includes this file with `#[path]`): a seeded
//! generator and a designed road of lines, clothoids and arcs turning to alternate sides.

use opendrive::eval::Curve;
use opendrive::{Extras, Geometry, GeometryKind};

/// A seeded generator: uniform in (0, 1) and standard normal.
pub struct Rng(pub u64);

impl Rng {
    pub fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    pub fn gauss(&mut self) -> f64 {
        let (a, b) = (self.uniform(), self.uniform());
        (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
    }
}

/// The pieces of a design: line, clothoid and arc lengths (m), the arcs' radius (m) and the
/// start heading (rad).
pub struct Shape {
    pub line: f64,
    pub spiral: f64,
    pub arc: f64,
    pub radius: f64,
    pub hdg: f64,
}

/// The benches' 10 km roads: lines of 200 m, clothoids of 60 m, arcs of R 400 m (300 m long).
pub const BENCH: Shape = Shape { line: 200.0, spiral: 60.0, arc: 300.0, radius: 400.0, hdg: 0.3 };

/// Records chained from the origin until `length` is reached (ending on a line).
pub fn design(length: f64, shape: &Shape) -> Vec<Geometry> {
    let k = 1.0 / shape.radius;
    let mut out: Vec<Geometry> = Vec::new();
    let (mut x, mut y, mut hdg, mut s) = (0.0, 0.0, shape.hdg, 0.0);
    let mut side = 1.0;
    let mut push = |kind: GeometryKind, len: f64, out: &mut Vec<Geometry>| {
        let g = Geometry { s, x, y, hdg, length: len, kind, extras: Extras::default() };
        let end = Curve::new(&g).pose(len);
        (x, y, hdg, s) = (end.x, end.y, end.hdg, s + len);
        out.push(g);
        s
    };
    loop {
        if push(GeometryKind::Line, shape.line, &mut out) >= length {
            return out;
        }
        push(GeometryKind::Spiral { curv_start: 0.0, curv_end: side * k }, shape.spiral, &mut out);
        push(GeometryKind::Arc { curvature: side * k }, shape.arc, &mut out);
        push(GeometryKind::Spiral { curv_start: side * k, curv_end: 0.0 }, shape.spiral, &mut out);
        side = -side;
    }
}
