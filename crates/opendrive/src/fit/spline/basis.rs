//! Cubic B-splines and their normal equations: the span of a point, the values and
//! derivatives of the four B-splines nonzero there (de Boor's recurrence), and the symmetric
//! banded (half bandwidth 3) normal equations with their Cholesky solve.

/// The span index i (3 ≤ i ≤ K + 2) of x: piece i - 3.
pub(super) fn span(breaks: &[f64], x: f64) -> usize {
    let k = breaks.partition_point(|&b| b <= x).clamp(1, breaks.len() - 1) - 1;
    k + 3
}

/// Values and derivatives (0..=3) of the four cubic B-splines nonzero on span `i` at `x`
/// (de Boor's recurrence with the derivative triangle).
pub(super) fn ders(t: &[f64], i: usize, x: f64) -> [[f64; 4]; 4] {
    const P: usize = 3;
    let mut ndu = [[0.0; 4]; 4];
    let (mut left, mut right) = ([0.0; 4], [0.0; 4]);
    ndu[0][0] = 1.0;
    for j in 1..=P {
        left[j] = x - t[i + 1 - j];
        right[j] = t[i + j] - x;
        let mut saved = 0.0;
        for r in 0..j {
            ndu[j][r] = right[r + 1] + left[j - r];
            let temp = ndu[r][j - 1] / ndu[j][r];
            ndu[r][j] = saved + right[r + 1] * temp;
            saved = left[j - r] * temp;
        }
        ndu[j][j] = saved;
    }
    let mut out = [[0.0; 4]; 4];
    for j in 0..=P {
        out[0][j] = ndu[j][P];
    }
    for r in 0..=P as isize {
        let mut a = [[0.0; 4]; 2];
        let (mut s1, mut s2) = (0, 1);
        a[0][0] = 1.0;
        for k in 1..=P as isize {
            let mut d = 0.0;
            let (rk, pk) = (r - k, P as isize - k);
            if r >= k {
                a[s2][0] = a[s1][0] / ndu[(pk + 1) as usize][rk as usize];
                d = a[s2][0] * ndu[rk as usize][pk as usize];
            }
            let j1 = if rk >= -1 { 1 } else { -rk };
            let j2 = if r - 1 <= pk { k - 1 } else { P as isize - r };
            for j in j1..=j2 {
                let j = j as usize;
                let rj = (rk + j as isize) as usize;
                a[s2][j] = (a[s1][j] - a[s1][j - 1]) / ndu[(pk + 1) as usize][rj];
                d += a[s2][j] * ndu[rj][pk as usize];
            }
            if r <= pk {
                let k = k as usize;
                a[s2][k] = -a[s1][k - 1] / ndu[(pk + 1) as usize][r as usize];
                d += a[s2][k] * ndu[r as usize][pk as usize];
            }
            out[k as usize][r as usize] = d;
            std::mem::swap(&mut s1, &mut s2);
        }
    }
    let mut f = P as f64;
    for (k, row) in out.iter_mut().enumerate().skip(1) {
        for v in row.iter_mut() {
            *v *= f;
        }
        f *= (P - k) as f64;
    }
    out
}

/// Symmetric banded normal equations (half bandwidth 3).
pub(super) struct Normal {
    pub(super) band: Vec<[f64; 4]>,
    pub(super) rhs: Vec<f64>,
}

impl Normal {
    pub(super) fn new(n: usize) -> Normal {
        Normal { band: vec![[0.0; 4]; n], rhs: vec![0.0; n] }
    }

    /// Adds the row Σ `v[r]·c[first + r]` = y with weight w (squared).
    pub(super) fn add(&mut self, first: usize, v: &[f64; 4], y: f64, w2: f64) {
        for p in 0..4 {
            for q in p..4 {
                self.band[first + p][q - p] += w2 * v[p] * v[q];
            }
            self.rhs[first + p] += w2 * v[p] * y;
        }
    }

    /// Cholesky of the band, the two triangular solves, then two rounds of iterative
    /// refinement (constraint rows make the system stiff; refinement wins back the digits).
    pub(super) fn solve(self) -> Option<Vec<f64>> {
        let n = self.rhs.len();
        // low[i][d] = L[i][i - d].
        let mut low = vec![[0.0; 4]; n];
        for i in 0..n {
            for d in (0..4).rev() {
                if d > i {
                    continue;
                }
                let j = i - d;
                // A[i][j] = band[j][d], less Σ over k = j - m ≥ i - 3 of L[i][k]·L[j][k].
                let mut sum = self.band[j][d];
                for m in 1..4 {
                    if m > j || d + m > 3 {
                        continue;
                    }
                    sum -= low[i][d + m] * low[j][m];
                }
                if d == 0 {
                    if sum <= 0.0 || !sum.is_finite() {
                        return None;
                    }
                    low[i][0] = sum.sqrt();
                } else {
                    low[i][d] = sum / low[j][0];
                }
            }
        }
        let substitute = |b: &mut [f64]| {
            for i in 0..n {
                let mut s = b[i];
                for d in 1..4.min(i + 1) {
                    s -= low[i][d] * b[i - d];
                }
                b[i] = s / low[i][0];
            }
            for i in (0..n).rev() {
                let mut s = b[i];
                for d in 1..4 {
                    if i + d < n {
                        s -= low[i + d][d] * b[i + d];
                    }
                }
                b[i] = s / low[i][0];
            }
        };
        let mut x = self.rhs.clone();
        substitute(&mut x);
        for _ in 0..2 {
            let mut r = self.rhs.clone();
            for (i, ri) in r.iter_mut().enumerate() {
                for d in 0..4 {
                    if i + d < n {
                        *ri -= self.band[i][d] * x[i + d];
                    }
                    if d > 0 && d <= i {
                        *ri -= self.band[i - d][d] * x[i - d];
                    }
                }
            }
            substitute(&mut r);
            for (xi, ri) in x.iter_mut().zip(&r) {
                *xi += ri;
            }
        }
        x.iter().all(|v| v.is_finite()).then_some(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::spline::moments::power;
    use crate::fit::spline::{Piece, Spline};

    #[test]
    fn basis_functions_sum_to_one_and_derivatives_match_differences() {
        let breaks = [0.0, 1.0, 2.5, 4.0, 7.0];
        let t = Spline::knot_vector(&breaks);
        let coef = vec![0.3, -1.0, 2.0, 0.5, 1.5, -0.7, 0.2];
        let sp = Spline { breaks: breaks.to_vec(), pieces: vec![Piece::Cubic; 4], coef, max: 0.0, sse: 0.0 };
        for x in [0.0, 0.4, 1.0, 2.2, 3.9, 5.5, 7.0] {
            let i = span(&breaks, x);
            let d = ders(&t, i, x);
            assert!((d[0].iter().sum::<f64>() - 1.0).abs() < 1e-12, "partition of unity at {x}");
            // The piece's B-splines as cubics in its own coordinate give the same values.
            let k = i - 3;
            let (a, h) = (breaks[k], breaks[k + 1] - breaks[k]);
            let w = (x - a - 0.5 * h) * 2.0 / h;
            let v = power(&t, k, a, h).map(|c| c[0] + w * (c[1] + w * (c[2] + w * c[3])));
            assert!(v.iter().zip(&d[0]).all(|(a, b)| (a - b).abs() < 1e-14), "values at {x}: {v:?} vs {:?}", d[0]);
            let h = 1e-5;
            let (lo, hi) = (sp.eval((x - h).max(0.0)), sp.eval((x + h).min(7.0)));
            let w = (x + h).min(7.0) - (x - h).max(0.0);
            let e = sp.eval(x);
            for k in 0..3 {
                let fd = (hi[k] - lo[k]) / w;
                // Knots break the third derivative; compare away from them.
                if !breaks.iter().any(|b| (b - x).abs() < 2.0 * h) || k < 2 {
                    assert!(
                        (fd - e[k + 1]).abs() < 1e-3 * (1.0 + fd.abs()),
                        "derivative {} at {x}: {} vs {fd}",
                        k + 1,
                        e[k + 1]
                    );
                }
            }
        }
    }
}
