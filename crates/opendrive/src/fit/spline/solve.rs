//! Least squares on given breaks: the samples measured, the normal equations assembled from
//! the pieces' moments (reused across solves), the constraint rows of each piece added, the
//! banded system solved, and the residuals measured; and a dense fit on pieces of a length.

use super::basis::{ders, Normal};
use super::moments::{moments, power, Design};
use super::{deviation, Piece, Samples, Spline, HARD};
use std::cell::RefCell;

impl<'a> Samples<'a> {
    /// Samples measured one by one, free at both ends.
    pub fn new(s: &'a [f64], y: &'a [f64]) -> Samples<'a> {
        Samples {
            s,
            y,
            window: 1,
            noise: 0.0,
            allow: 0.0,
            many: usize::MAX,
            skip: f64::NEG_INFINITY,
            start: None,
            cache: RefCell::default(),
            ends: RefCell::default(),
        }
    }

    /// The interval the spline spans: from the start (or first sample) to the last sample.
    fn range(&self) -> (f64, f64) {
        let a = self.start.map_or(self.s[0], |(x, _)| x);
        (a, self.s[self.s.len() - 1])
    }

    /// The least-squares spline on `breaks` with `pieces` constrained; None if singular.
    pub fn solve(&self, breaks: &[f64], pieces: &[Piece]) -> Option<Spline> {
        self.solve_as(breaks, pieces, true)
    }

    /// The sum of squared residuals of [`Samples::solve`] (without its measure).
    pub(super) fn sse(&self, breaks: &[f64], pieces: &[Piece]) -> Option<f64> {
        self.solve_as(breaks, pieces, false).map(|s| s.sse)
    }

    /// [`Samples::solve`], with the measure (`max`) only if `measure`, else NaN.
    fn solve_as(&self, breaks: &[f64], pieces: &[Piece], measure: bool) -> Option<Spline> {
        let kn = breaks.len() - 1;
        let n = kn + 3;
        let t = Spline::knot_vector(breaks);
        let mut ne = Normal::new(n);
        let design = self.design(breaks);
        let mut basis = Vec::with_capacity(kn);
        for (p, m) in design.moments.iter().enumerate() {
            let b = power(&t, p, breaks[p], breaks[p + 1] - breaks[p]);
            // Σ v·vᵀ and Σ v·y with v = B·(1, w, w², w³).
            for a in 0..4 {
                let mut r = 0.0;
                for k in 0..4 {
                    r += b[a][k] * m[7 + k];
                }
                ne.rhs[p + a] += r;
                for c in a..4 {
                    let mut g = 0.0;
                    for k in 0..4 {
                        for l in 0..4 {
                            g += b[a][k] * b[c][l] * m[k + l];
                        }
                    }
                    ne.band[p + a][c - a] += g;
                }
            }
            basis.push(b);
        }
        // Scale of a second difference of coefficients against one sample.
        let h0 = (breaks[kn] - breaks[0]) / kn as f64;
        for (k, piece) in pieces.iter().enumerate() {
            let i = k + 3;
            let h = breaks[k + 1] - breaks[k];
            match piece {
                Piece::Cubic => {}
                Piece::Parabola => {
                    let d = ders(&t, i, breaks[k] + 0.5 * h);
                    ne.add(i - 3, &d[3], 0.0, (HARD * h * h * h).powi(2));
                }
                Piece::Line => {
                    for x in [breaks[k], breaks[k + 1]] {
                        let d = ders(&t, i, x);
                        ne.add(i - 3, &d[2], 0.0, (HARD * h * h).powi(2));
                    }
                }
            }
        }
        // A continued spline: value, slope and curvature at its start, held hard.
        if let Some((x, v)) = self.start {
            let d = ders(&t, 3, x);
            let h = breaks[1] - breaks[0];
            for (k, w) in [(0, HARD), (1, HARD * h), (2, HARD * h * h)] {
                ne.add(0, &d[k], v[k], w * w);
            }
        }
        // A faint pull on second differences of the coefficients keeps pieces without
        // samples defined.
        for j in 0..n.saturating_sub(2) {
            let w2 = 1e-12 / (h0 * h0).max(1e-12);
            if j + 3 < n {
                ne.add(j, &[1.0, -2.0, 1.0, 0.0], 0.0, w2);
            } else if j > 0 {
                ne.add(j - 1, &[0.0, 1.0, -2.0, 1.0], 0.0, w2);
            }
        }
        let Some(coef) = ne.solve() else {
            *self.cache.borrow_mut() = Some(design);
            return None;
        };
        let mut sse = 0.0;
        let mut e: Vec<f64> = Vec::with_capacity(if measure { self.s.len() } else { 0 });
        for (p, b) in basis.iter().enumerate() {
            // The piece as a cubic in w.
            let q: [f64; 4] = std::array::from_fn(|k| (0..4).map(|j| coef[p + j] * b[j][k]).sum());
            let (lo, hi) = (design.lo[p], design.lo[p + 1]);
            let h = breaks[p + 1] - breaks[p];
            let (c, inv) = (breaks[p] + 0.5 * h, 2.0 / h);
            for (&x, &y) in self.s[lo..hi].iter().zip(&self.y[lo..hi]) {
                let w = (x - c) * inv;
                let r = q[0] + w * (q[1] + w * (q[2] + w * q[3])) - y;
                sse += r * r;
                if measure {
                    e.push(r);
                }
            }
        }
        *self.cache.borrow_mut() = Some(design);
        let max = if measure {
            let from = self.s.partition_point(|&x| x < self.skip).min(e.len());
            deviation(&e[from..], self.window, self.noise, self.allow)
        } else {
            f64::NAN
        };
        Some(Spline { breaks: breaks.to_vec(), pieces: pieces.to_vec(), coef, max, sse })
    }

    /// The samples' moments per piece of `breaks`, taken from the last solve's where a
    /// piece has the same ends.
    fn design(&self, breaks: &[f64]) -> Design {
        let kn = breaks.len() - 1;
        let ns = self.s.len();
        let base = self.cache.borrow_mut().take();
        let mut lo: Vec<usize> = Vec::with_capacity(kn + 1);
        lo.push(0);
        lo.extend((1..kn).map(|p| self.s.partition_point(|&x| x < breaks[p])));
        lo.push(ns);
        let moments = (0..kn)
            .map(|p| match base.as_ref().and_then(|b| Some(b.moments[b.same(breaks, p)?])) {
                Some(m) => m,
                None => {
                    let (a, b) = (breaks[p], breaks[p + 1]);
                    let ends = self.ends.borrow();
                    ends.as_ref().and_then(|e| e.piece(a, b, lo[p], lo[p + 1])).unwrap_or_else(|| {
                        let r = lo[p]..lo[p + 1];
                        moments(&self.s[r.clone()], &self.y[r], a, b - a)
                    })
                }
            })
            .collect();
        Design { breaks: breaks.to_vec(), lo, moments }
    }

    /// The least-squares spline on pieces about `len` long (a faint smoothing row keeps it
    /// solvable; if it still fails, one straight piece at zero).
    pub fn dense(&self, len: f64) -> Spline {
        let (a, b) = self.range();
        let k = (((b - a) / len).round() as usize).max(1);
        let breaks: Vec<f64> = (0..=k).map(|i| a + (b - a) * i as f64 / k as f64).collect();
        self.solve(&breaks, &vec![Piece::Cubic; k])
            .or_else(|| self.solve(&[a, b], &[Piece::Line]))
            .unwrap_or_else(|| Spline::flat(a, b))
    }
}
