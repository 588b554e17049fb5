//! The road's surface, elevation and planar cross slope, as cubic pieces in s: for evaluating
//! it at millions of survey points, where the superelevation's tangent and the records' search
//! of [`ProfileCursor::surface`](super::ProfileCursor::surface) were most of a point's cost.
//!
//! Pieces are at most [`PIECE`] long and end at every record start, so each lies within one
//! elevation and one superelevation record. The elevation is the record's own cubic, moved to
//! the piece's start (exact but for rounding). The cross slope, tan(superelevation)/√(1 +
//! grade²), is the Hermite cubic of its values and derivatives at the piece's ends (the records
//! of the piece at both ends), and pieces are halved until it is within 1e-12 of the cross
//! slope at their quarter points (its error is h⁴/384 times the fourth derivative: a quarter
//! metre is enough on real roads; esmini's tilted crest, 45° of roll on grades up to 1.5,
//! takes centimetres). The tests hold it to 1e-11 on every sample road, a tenth of a
//! nanometre at 10 m across.

use super::{cross_slope_of_tan, in_order, record_at, RoadEval};
use crate::model::Poly3;

/// The longest piece, m.
pub const PIECE: f64 = 0.25;

/// The most [`PIECE`]-long cells a table covers (1,048 km).
const MAX_CELLS: usize = 1 << 22;

/// How far the cross slope's cubic may stray from it at a piece's quarter points.
const CROSS_TOL: f64 = 1e-12;

/// Elevation and planar cross slope of a road as cubic pieces in s (see the module).
#[derive(Debug, Clone)]
pub struct SurfaceTable {
    /// Where each piece starts, ascending.
    starts: Vec<f64>,
    /// Each piece's elevation and cross-slope cubics in (s - start), constant term first.
    pieces: Vec<[[f64; 4]; 2]>,
    /// The piece holding the start of each [`PIECE`]-long cell of s.
    cells: Vec<u32>,
}

impl SurfaceTable {
    /// The table of `road` over [0, length]; `None` when its elevation or superelevation
    /// records are not in order of s, or the road is longer than 1,000 km (the profiles are
    /// searched at every s then).
    pub fn new(road: &RoadEval) -> Option<SurfaceTable> {
        let r = road.road();
        let (elevations, superelevations) = (&r.elevation_profile.elevations, &r.lateral_profile.superelevations);
        let sorted = |v: &[Poly3]| in_order(v) && v.iter().all(|p| p.s.is_finite());
        let length = road.length();
        if !(sorted(elevations) && sorted(superelevations) && length.is_finite() && length >= 0.0) {
            return None;
        }
        // Beyond 1,000 km (a length no road has; a broken file's), the profiles are searched
        // instead of tabulated.
        let cells = (length / PIECE).floor() as usize + 1;
        if cells > MAX_CELLS {
            return None;
        }
        // Piece boundaries: every PIECE and every record start, inside (0, length).
        let mut bounds: Vec<f64> = (1..cells).map(|k| k as f64 * PIECE).filter(|&s| s < length).collect();
        bounds.extend(elevations.iter().chain(superelevations).map(|p| p.s).filter(|&s| s > 0.0 && s < length));
        bounds.push(0.0);
        bounds.sort_by(f64::total_cmp);
        bounds.dedup();
        let mut starts = Vec::with_capacity(bounds.len());
        let mut pieces = Vec::with_capacity(bounds.len());
        for (i, &a) in bounds.iter().enumerate() {
            let b = bounds.get(i + 1).copied().unwrap_or(length.max(a + PIECE));
            let el = record_at(elevations, a, |p| p.s);
            let se = record_at(superelevations, a, |p| p.s);
            // Halved where the cross slope's cubic strays from it (steep grades, rolls of tens
            // of degrees), down to a millimetre (not where the slope is not a number).
            let mut todo = vec![(a, b)];
            while let Some((a, b)) = todo.pop() {
                let c = cross_cubic(el, se, a, b);
                let off = |f: f64| {
                    let u = f * (b - a);
                    (c[0] + u * (c[1] + u * (c[2] + u * c[3])) - cross_and_rate(el, se, a + u).0).abs()
                };
                if b - a > 1e-3 && [0.25, 0.5, 0.75].into_iter().any(|f| off(f) > CROSS_TOL) {
                    let m = 0.5 * (a + b);
                    todo.extend([(m, b), (a, m)]);
                    continue;
                }
                starts.push(a);
                pieces.push([elevation_cubic(el, a), c]);
            }
        }
        let mut table = SurfaceTable { starts, pieces, cells: Vec::with_capacity(cells) };
        let mut i = 0;
        for k in 0..cells {
            let s = k as f64 * PIECE;
            while i + 1 < table.starts.len() && table.starts[i + 1] <= s {
                i += 1;
            }
            table.cells.push(i as u32);
        }
        Some(table)
    }

    /// Elevation and planar cross slope at `s` (see [`RoadEval::elevation`] and
    /// [`RoadEval::planar_cross_slope`]), for s in [0, length]; beyond, the end pieces go on.
    #[inline]
    pub fn at(&self, s: f64) -> (f64, f64) {
        self.eval(self.piece(s), s)
    }

    /// [`SurfaceTable::at`] for stations in order: `piece` is the piece of the last (any
    /// number at first), tried before the table is searched; the same values as `at`.
    #[inline]
    pub fn at_from(&self, piece: &mut usize, s: f64) -> (f64, f64) {
        let i = *piece;
        let holds = i < self.starts.len() && self.starts[i] <= s && self.starts.get(i + 1).is_none_or(|&next| s < next);
        if !holds {
            *piece = self.piece(s);
        }
        self.eval(*piece, s)
    }

    /// The piece holding `s`: the last starting at or before it (the first for s below 0 or
    /// NaN).
    #[inline]
    fn piece(&self, s: f64) -> usize {
        // `as` saturates: below 0 and NaN give cell 0.
        let k = ((s * (1.0 / PIECE)) as usize).min(self.cells.len() - 1);
        let mut i = self.cells[k] as usize;
        while i + 1 < self.starts.len() && self.starts[i + 1] <= s {
            i += 1;
        }
        i
    }

    #[inline]
    fn eval(&self, i: usize, s: f64) -> (f64, f64) {
        let u = s - self.starts[i];
        let [z, c] = &self.pieces[i];
        (z[0] + u * (z[1] + u * (z[2] + u * z[3])), c[0] + u * (c[1] + u * (c[2] + u * c[3])))
    }
}

/// The elevation record `el` (none: level at 0) as a cubic in (s - a).
fn elevation_cubic(el: Option<&Poly3>, a: f64) -> [f64; 4] {
    let Some(p) = el else { return [0.0; 4] };
    let d = a - p.s;
    [p.value(d), p.slope(d), p.c + 3.0 * p.d * d, p.d]
}

/// The cross slope and its derivative along s at `s`, of elevation record `el` and
/// superelevation record `se` (either may be absent: level, no roll).
fn cross_and_rate(el: Option<&Poly3>, se: Option<&Poly3>, s: f64) -> (f64, f64) {
    let (g, dg) = el.map_or((0.0, 0.0), |p| (p.slope(s - p.s), p.curvature_term(s - p.s)));
    let (roll, droll) = se.map_or((0.0, 0.0), |p| (p.value(s - p.s), p.slope(s - p.s)));
    let tan = roll.tan();
    let q = 1.0 + g * g;
    // d/ds tan(r)/√q = (1 + tan²)·r'/√q - tan·g·g'/q^1.5
    let rate = ((1.0 + tan * tan) * droll - tan * g * dg / q) / q.sqrt();
    (cross_slope_of_tan(tan, g), rate)
}

/// The Hermite cubic in (s - a) of the cross slope over [a, b] with the records of the piece.
fn cross_cubic(el: Option<&Poly3>, se: Option<&Poly3>, a: f64, b: f64) -> [f64; 4] {
    let (p0, m0) = cross_and_rate(el, se, a);
    let (p1, m1) = cross_and_rate(el, se, b);
    let h = b - a;
    if h.is_nan() || h <= 0.0 {
        return [p0, m0, 0.0, 0.0];
    }
    let dp = p1 - p0;
    [p0, m0, (3.0 * dp / h - 2.0 * m0 - m1) / h, (m0 + m1 - 2.0 * dp / h) / (h * h)]
}
