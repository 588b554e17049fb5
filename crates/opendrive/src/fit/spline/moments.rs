//! The samples' moments per piece, from which the normal equations of any B-splines on a piece
//! follow: computed once per set of breaks and reused for the pieces whose ends stay
//! ([`Design`]), and running from the fixed ends while one knot is placed ([`Ends`]).

use super::basis::ders;

/// While one knot is placed between two fixed ones, the moments of the samples from the
/// left one (about it) and to the right one (about it), running: the two pieces beside the
/// knot take theirs from these at any place, without a pass over their samples.
#[derive(Debug)]
pub(super) struct Ends {
    pub(super) left: f64,
    pub(super) right: f64,
    /// The samples between them.
    pub(super) i0: usize,
    pub(super) i1: usize,
    /// `forward[j]`: Σ u^k, Σ u^k·y over samples i0..i0 + j, u = x - left (unscaled).
    pub(super) forward: Vec<[f64; 11]>,
    /// `backward[j]`: the same over samples i0 + j..i1, u = right - x.
    pub(super) backward: Vec<[f64; 11]>,
}

/// Adds the moments of one sample at u (unscaled) to `m`.
pub(super) fn add_moments(m: &mut [f64; 11], u: f64, y: f64) {
    let u2 = u * u;
    let u3 = u2 * u;
    m[0] += 1.0;
    m[1] += u;
    m[2] += u2;
    m[3] += u3;
    m[4] += u2 * u2;
    m[5] += u2 * u3;
    m[6] += u3 * u3;
    m[7] += y;
    m[8] += u * y;
    m[9] += u2 * y;
    m[10] += u3 * y;
}

impl Ends {
    /// The moments (as in [`Design`]) of the piece [a, b] over samples lo..hi, if one of its
    /// ends is one of these.
    pub(super) fn piece(&self, a: f64, b: f64, lo: usize, hi: usize) -> Option<[f64; 11]> {
        // Raw moments of u (from one end) in units of half the piece, then w = ±(u - 1).
        let r = 0.5 * (b - a);
        let convert = |raw: &[f64; 11], sign: f64| -> [f64; 11] {
            let mut u = *raw;
            let mut f = 1.0;
            for k in 0..7 {
                u[k] /= f;
                if k < 4 {
                    u[7 + k] /= f;
                }
                f *= r;
            }
            let mut m = [0.0; 11];
            for k in 0..7 {
                // (sign·(u - 1))^k = Σ_j C(k, j) sign^k (-1)^(k-j) u^j.
                let s = if k % 2 == 0 { 1.0 } else { sign };
                for j in 0..=k {
                    let c = if (k - j) % 2 == 0 { BINOMIAL[k][j] } else { -BINOMIAL[k][j] } * s;
                    m[k] += c * u[j];
                    if k < 4 {
                        m[7 + k] += c * u[7 + j];
                    }
                }
            }
            m
        };
        if a == self.left && lo == self.i0 && hi >= lo && hi <= self.i1 {
            return Some(convert(&self.forward[hi - self.i0], 1.0));
        }
        if b == self.right && hi == self.i1 && lo >= self.i0 && lo <= hi {
            return Some(convert(&self.backward[lo - self.i0], -1.0));
        }
        None
    }
}

const BINOMIAL: [[f64; 7]; 7] = [
    [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [1.0, 2.0, 1.0, 0.0, 0.0, 0.0, 0.0],
    [1.0, 3.0, 3.0, 1.0, 0.0, 0.0, 0.0],
    [1.0, 4.0, 6.0, 4.0, 1.0, 0.0, 0.0],
    [1.0, 5.0, 10.0, 10.0, 5.0, 1.0, 0.0],
    [1.0, 6.0, 15.0, 20.0, 15.0, 6.0, 1.0],
];

/// The samples' sums on one set of breaks: per piece, moments of its samples in the piece's
/// own coordinate, from which the normal equations of any B-splines on it follow. They
/// depend on the piece's ends alone, so a knot search that moves or removes a knot computes
/// them again for the pieces beside it only.
#[derive(Debug, Default)]
pub(super) struct Design {
    pub(super) breaks: Vec<f64>,
    /// Per piece, its first sample (and the number of samples last).
    pub(super) lo: Vec<usize>,
    /// Per piece: Σ w^k (k = 0..=6), then Σ w^k·y (k = 0..=3), w = (2x - ξ_p - ξ_p+1) / h_p
    /// (from -1 to 1 over the piece: moments about its middle lose the fewest digits).
    pub(super) moments: Vec<[f64; 11]>,
}

impl Design {
    /// The piece of this design with the same ends as piece `p` of `breaks` (and the same
    /// place: first, last or between, which decides where its samples end).
    pub(super) fn same(&self, breaks: &[f64], p: usize) -> Option<usize> {
        let (x, kn, mine) = (breaks[p], breaks.len() - 1, self.breaks.len().saturating_sub(1));
        let q = self.breaks.partition_point(|&b| b < x);
        let ok = q < mine
            && self.breaks[q] == x
            && self.breaks[q + 1] == breaks[p + 1]
            && (q == 0) == (p == 0)
            && (q + 1 == mine) == (p + 1 == kn);
        ok.then_some(q)
    }
}

/// Moments of the samples `s`, `y` on a piece from `a`, `h` long (see [`Design`]).
pub(super) fn moments(s: &[f64], y: &[f64], a: f64, h: f64) -> [f64; 11] {
    let mut m = [0.0; 11];
    let (c, inv) = (a + 0.5 * h, 2.0 / h);
    for (&x, &v) in s.iter().zip(y) {
        let w = (x - c) * inv;
        let w2 = w * w;
        let w3 = w2 * w;
        m[0] += 1.0;
        m[1] += w;
        m[2] += w2;
        m[3] += w3;
        m[4] += w2 * w2;
        m[5] += w2 * w3;
        m[6] += w3 * w3;
        m[7] += v;
        m[8] += w * v;
        m[9] += w2 * v;
        m[10] += w3 * v;
    }
    m
}

/// The four B-splines nonzero on piece `k` (span k + 3 of knot vector `t`) as cubics in
/// w from -1 to 1 over it (see [`Design`]): per B-spline, coefficients of w⁰..w³.
pub(super) fn power(t: &[f64], k: usize, a: f64, h: f64) -> [[f64; 4]; 4] {
    let r = 0.5 * h;
    let d = ders(t, k + 3, a + r);
    let f = [1.0, r, r * r / 2.0, r * r * r / 6.0];
    std::array::from_fn(|j| std::array::from_fn(|r| d[r][j] * f[r]))
}
