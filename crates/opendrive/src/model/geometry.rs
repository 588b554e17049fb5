use super::Extras;

/// A `<planView>` `<geometry>` record.
#[derive(Debug, Clone, PartialEq)]
pub struct Geometry {
    /// Start s on the road, m.
    pub s: f64,
    /// Start x, m.
    pub x: f64,
    /// Start y, m.
    pub y: f64,
    /// Start heading, rad, counter-clockwise from +x.
    pub hdg: f64,
    /// Length along the curve, m.
    pub length: f64,
    /// The curve type and its parameters.
    pub kind: GeometryKind,
    /// Unknown attributes and children of `<geometry>`.
    pub extras: Extras,
}

/// The curve of a geometry record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GeometryKind {
    /// `<line/>`.
    Line,
    /// `<arc curvature>`, 1/m, positive = left turn.
    Arc {
        /// 1/m.
        curvature: f64,
    },
    /// `<spiral curvStart curvEnd>`: curvature linear in s (a clothoid).
    Spiral {
        /// 1/m.
        curv_start: f64,
        /// 1/m.
        curv_end: f64,
    },
    /// `<poly3>` (deprecated): v(u) = a + b·u + c·u² + d·u³ in the record's local frame.
    Poly3 {
        /// m.
        a: f64,
        /// 1.
        b: f64,
        /// 1/m.
        c: f64,
        /// 1/m².
        d: f64,
    },
    /// `<paramPoly3>`: u(p), v(p) cubic in p, local frame at the start pose.
    ParamPoly3 {
        /// u(p) coefficients a, b, c, d.
        u: [f64; 4],
        /// v(p) coefficients a, b, c, d.
        v: [f64; 4],
        /// Range of p.
        p_range: PRange,
    },
}

impl GeometryKind {
    /// Curvature at the start and at the end of a line, arc or spiral, 1/m (None for poly3
    /// and paramPoly3, whose curvature is not a parameter).
    pub fn end_curvatures(&self) -> Option<(f64, f64)> {
        match *self {
            GeometryKind::Line => Some((0.0, 0.0)),
            GeometryKind::Arc { curvature } => Some((curvature, curvature)),
            GeometryKind::Spiral { curv_start, curv_end } => Some((curv_start, curv_end)),
            GeometryKind::Poly3 { .. } | GeometryKind::ParamPoly3 { .. } => None,
        }
    }
}

/// `pRange` of a paramPoly3.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PRange {
    /// p in [0, length].
    ArcLength,
    /// p in [0, 1] (the default when the attribute is missing, per the standard).
    Normalized,
}

impl PRange {
    /// The attribute value.
    pub fn as_str(self) -> &'static str {
        match self {
            PRange::ArcLength => "arcLength",
            PRange::Normalized => "normalized",
        }
    }
}
