//! Cubic regression splines: clamped cubic B-splines fitted to samples (s, y) by least squares
//! on banded normal equations, with as few pieces as a tolerance on the largest residual needs.
//!
//! A piece may be constrained to a parabola (third derivative zero: an arc when the spline is
//! the integral of a heading, a vertical curve for an elevation) or to a line (second
//! derivative zero: a straight, a constant grade). Constraints are rows of a large weight, so
//! every solve stays banded and costs O(samples + pieces). The normal equations come from
//! moments of each piece's samples, which depend on the piece's ends only: a solve that moves
//! or removes a knot sums the samples of the pieces beside it again, no others, and the trial
//! places of one knot between two fixed ones take theirs from running sums (O(pieces) each,
//! plus one pass over the samples for the squared residuals).
//!
//! Pieces are found by knot removal: start from knots a few samples apart, remove the knots
//! whose removal changes the spline least (smallest jump of the third derivative times the
//! span cubed) while the largest residual stays within the tolerance, move each remaining knot
//! to where the squared residuals are least, and remove again until nothing changes.
//!
//! The parts: this module holds the spline, its pieces and the samples; `basis` evaluates the
//! B-splines and solves the banded normal equations, `moments` keeps the samples' per-piece
//! moments the normal equations come from, `solve` fits a spline on given breaks, and
//! `knots` finds the breaks by knot removal, moves and constraints.

mod basis;
mod knots;
mod moments;
mod solve;

use basis::{ders, span};
use moments::{Design, Ends};
use std::cell::RefCell;

/// How a piece is constrained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece {
    /// A cubic.
    Cubic,
    /// Third derivative zero.
    Parabola,
    /// Second derivative zero.
    Line,
}

/// A fitted spline and how well it fits.
#[derive(Debug, Clone)]
pub(crate) struct Spline {
    /// Breakpoints ξ_0 < ... < ξ_K (K pieces).
    pub breaks: Vec<f64>,
    pub pieces: Vec<Piece>,
    /// B-spline coefficients (K + 3).
    coef: Vec<f64>,
    /// Largest |residual|.
    pub max: f64,
    /// Sum of squared residuals.
    pub sse: f64,
}

/// Share of the tolerance that knot removal may use.
pub(crate) const SLACK: f64 = 0.8;

/// Weight of a constraint row against a sample row of weight 1.
const HARD: f64 = 1e5;

impl Spline {
    /// One straight piece at zero.
    pub fn flat(a: f64, b: f64) -> Spline {
        Spline {
            breaks: vec![a, b],
            pieces: vec![Piece::Line],
            coef: vec![0.0; 4],
            max: f64::INFINITY,
            sse: f64::INFINITY,
        }
    }

    fn knot_vector(breaks: &[f64]) -> Vec<f64> {
        let (a, b) = (breaks[0], breaks[breaks.len() - 1]);
        let mut t = vec![a; 4];
        t.extend_from_slice(&breaks[1..breaks.len() - 1]);
        t.extend([b; 4]);
        t
    }

    /// Value and first three derivatives at `x` (clamped to the breaks).
    #[cfg(test)]
    pub fn eval(&self, x: f64) -> [f64; 4] {
        let t = Self::knot_vector(&self.breaks);
        let x = x.clamp(self.breaks[0], self.breaks[self.breaks.len() - 1]);
        let i = span(&self.breaks, x);
        let d = ders(&t, i, x);
        let mut out = [0.0; 4];
        for (k, o) in out.iter_mut().enumerate() {
            *o = (0..4).map(|r| d[k][r] * self.coef[i - 3 + r]).sum();
        }
        out
    }

    /// The values at each of `xs` (as [`Spline::eval`] gives them, the knot vector built
    /// once: O(K + n log K), not O(K·n)).
    pub fn values(&self, xs: &[f64]) -> Vec<f64> {
        let t = Self::knot_vector(&self.breaks);
        let (a, b) = (self.breaks[0], self.breaks[self.breaks.len() - 1]);
        xs.iter()
            .map(|&x| {
                let x = x.clamp(a, b);
                let i = span(&self.breaks, x);
                let d = ders(&t, i, x);
                (0..4).map(|r| d[0][r] * self.coef[i - 3 + r]).sum()
            })
            .collect()
    }

    /// Piece `k` as a cubic in ds from its start: [a, b, c, d].
    pub fn poly(&self, k: usize) -> [f64; 4] {
        let d = self.eval_in(k, self.breaks[k]);
        [d[0], d[1], 0.5 * d[2], d[3] / 6.0]
    }

    /// Like `eval`, but taken from piece `k` (its right-hand limits at its start).
    pub fn eval_in(&self, k: usize, x: f64) -> [f64; 4] {
        let t = Self::knot_vector(&self.breaks);
        let i = k + 3;
        let d = ders(&t, i, x);
        let mut out = [0.0; 4];
        for (j, o) in out.iter_mut().enumerate() {
            *o = (0..4).map(|r| d[j][r] * self.coef[i - 3 + r]).sum();
        }
        out
    }
}

/// A C² piecewise cubic as polynomials per piece (the splines of chunks joined).
#[derive(Debug, Clone, Default)]
pub(crate) struct Pieces {
    pub breaks: Vec<f64>,
    pub pieces: Vec<Piece>,
    /// Per piece: [a, b, c, d] in ds from its start.
    polys: Vec<[f64; 4]>,
}

impl Pieces {
    /// Value and three derivatives of piece `k` at `x`.
    pub fn eval_in(&self, k: usize, x: f64) -> [f64; 4] {
        let [a, b, c, d] = self.polys[k];
        let u = x - self.breaks[k];
        [a + u * (b + u * (c + u * d)), b + u * (2.0 * c + 3.0 * d * u), 2.0 * c + 6.0 * d * u, 6.0 * d]
    }

    /// Piece `k` as a cubic in ds from its start: [a, b, c, d].
    pub fn poly(&self, k: usize) -> [f64; 4] {
        self.polys[k]
    }

    /// Appends pieces `0..upto` of `sp` (which starts where these end). A line after a line,
    /// or a parabola after a parabola of the same curvature, extends it.
    pub fn extend(&mut self, sp: &Spline, upto: usize) {
        self.extend_plus(sp, upto, (0.0, 0.0, 0.0));
    }

    /// Like `extend_plus`, but every piece kept as fitted, none merged with the one before (a
    /// piece constrained by weighted rows only nearly meets its constraint: a "line" beside
    /// a held curvature may bend, and extending it over the next line would move that line).
    pub fn append_plus(&mut self, sp: &Spline, upto: usize, line: (f64, f64, f64)) {
        let (x0, a, b) = line;
        for k in 0..upto.min(sp.pieces.len()) {
            let mut poly = sp.poly(k);
            poly[0] += a + b * (sp.breaks[k] - x0);
            poly[1] += b;
            if self.breaks.is_empty() {
                self.breaks.push(sp.breaks[k]);
            }
            self.breaks.push(sp.breaks[k + 1]);
            self.pieces.push(sp.pieces[k]);
            self.polys.push(poly);
        }
    }

    /// Like `extend`, for a spline fitted to samples less a line a + b·(s - x0) (`line`:
    /// x0, a, b), which is added back.
    pub fn extend_plus(&mut self, sp: &Spline, upto: usize, line: (f64, f64, f64)) {
        let (x0, a, b) = line;
        for k in 0..upto.min(sp.pieces.len()) {
            let mut poly = sp.poly(k);
            poly[0] += a + b * (sp.breaks[k] - x0);
            poly[1] += b;
            let kind = sp.pieces[k];
            if let (Some(&last), Some(prev)) = (self.pieces.last(), self.polys.last()) {
                let same = match (last, kind) {
                    (Piece::Line, Piece::Line) => true,
                    (Piece::Parabola, Piece::Parabola) => (prev[2] - poly[2]).abs() <= 1e-9 * (1.0 + poly[2].abs()),
                    _ => false,
                };
                if same {
                    if let Some(b) = self.breaks.last_mut() {
                        *b = sp.breaks[k + 1];
                    }
                    continue;
                }
            }
            if self.breaks.is_empty() {
                self.breaks.push(sp.breaks[k]);
            }
            self.breaks.push(sp.breaks[k + 1]);
            self.pieces.push(kind);
            self.polys.push(poly);
        }
    }
}

/// Samples (s ascending) to fit.
pub(crate) struct Samples<'a> {
    pub s: &'a [f64],
    pub y: &'a [f64],
    /// The fit's measure (see [`deviation`]): the longest run of samples, the samples' noise
    /// (σ) and the deviation the noise of a run's mean is scaled to.
    pub window: usize,
    pub noise: f64,
    pub allow: f64,
    /// Knots beyond which they are no longer moved, merged or constrained (moves try every
    /// knot in many places: with many knots left, data the tolerance cannot follow with few
    /// pieces, that costs more than it gains).
    pub many: usize,
    /// Samples before this s do not count in the measure (a continued chunk's first metres,
    /// measured with the chunk before; they inherit its error at the start).
    pub skip: f64,
    /// Where the spline starts and its value, first and second derivatives there (a spline
    /// that continues another), if not free at the first sample.
    pub start: Option<(f64, [f64; 3])>,
    /// The per-piece moments of the last solve, which the next solve takes over for every
    /// piece with the same ends (the knot search changes one or a few knots at a time).
    cache: RefCell<Option<Design>>,
    /// Running moments from the fixed ends of a knot being placed (see [`Ends`]).
    ends: RefCell<Option<Ends>>,
}

/// How many σ a mean of noise alone may reach (once in 10⁷ runs).
pub(crate) const CHANCE: f64 = 5.5;

/// Share of a tolerance that noise may take in a run's mean (the rest is for the line).
const NOISE_SHARE: f64 = 0.5;

/// The distance of a line from the local estimate of the true line, from the residuals `e`
/// (in order): the largest |mean| of a run of w consecutive residuals, for w = `window`,
/// window/2, ... 1, of the runs long enough that noise of σ alone keeps their mean within
/// half of `allow` (5.5σ/√w ≤ allow / 2; at least the longest), so that a line can pass
/// however many runs there are. Single points are for outlier rejection, not for this.
/// Without noise: the largest |e|.
pub(crate) fn deviation(e: &[f64], window: usize, sigma: f64, allow: f64) -> f64 {
    let n = e.len();
    if n == 0 {
        return 0.0;
    }
    let mut w = window.clamp(1, n);
    let mut out = 0.0f64;
    let mut first = true;
    loop {
        if first || CHANCE * sigma / (w as f64).sqrt() <= NOISE_SHARE * allow {
            let mut sum: f64 = e[..w].iter().sum();
            let mut max = sum.abs();
            for i in w..n {
                sum += e[i] - e[i - w];
                max = max.max(sum.abs());
            }
            out = out.max(max / w as f64);
        }
        first = false;
        if w == 1 {
            return out;
        }
        w /= 2;
    }
}
