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

    /// Appends pieces `0..upto` of `sp` (which starts where these end). A line after a line,
    /// or a parabola after a parabola of the same curvature, extends it.
    pub fn extend(&mut self, sp: &Spline, upto: usize) {
        self.extend_plus(sp, upto, (0.0, 0.0, 0.0));
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

/// The span index i (3 ≤ i ≤ K + 2) of x: piece i - 3.
fn span(breaks: &[f64], x: f64) -> usize {
    let k = breaks.partition_point(|&b| b <= x).clamp(1, breaks.len() - 1) - 1;
    k + 3
}

/// Values and derivatives (0..=3) of the four cubic B-splines nonzero on span `i` at `x`
/// (de Boor's recurrence with the derivative triangle).
fn ders(t: &[f64], i: usize, x: f64) -> [[f64; 4]; 4] {
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
struct Normal {
    band: Vec<[f64; 4]>,
    rhs: Vec<f64>,
}

impl Normal {
    fn new(n: usize) -> Normal {
        Normal { band: vec![[0.0; 4]; n], rhs: vec![0.0; n] }
    }

    /// Adds the row Σ v[r]·c[first + r] = y with weight w (squared).
    fn add(&mut self, first: usize, v: &[f64; 4], y: f64, w2: f64) {
        for p in 0..4 {
            for q in p..4 {
                self.band[first + p][q - p] += w2 * v[p] * v[q];
            }
            self.rhs[first + p] += w2 * v[p] * y;
        }
    }

    /// Cholesky of the band, the two triangular solves, then two rounds of iterative
    /// refinement (constraint rows make the system stiff; refinement wins back the digits).
    fn solve(self) -> Option<Vec<f64>> {
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

/// While one knot is placed between two fixed ones, the moments of the samples from the
/// left one (about it) and to the right one (about it), running: the two pieces beside the
/// knot take theirs from these at any place, without a pass over their samples.
#[derive(Debug)]
struct Ends {
    left: f64,
    right: f64,
    /// The samples between them.
    i0: usize,
    i1: usize,
    /// forward[j]: Σ u^k, Σ u^k·y over samples i0..i0 + j, u = x - left (unscaled).
    forward: Vec<[f64; 11]>,
    /// backward[j]: the same over samples i0 + j..i1, u = right - x.
    backward: Vec<[f64; 11]>,
}

/// Adds the moments of one sample at u (unscaled) to `m`.
fn add_moments(m: &mut [f64; 11], u: f64, y: f64) {
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
    fn piece(&self, a: f64, b: f64, lo: usize, hi: usize) -> Option<[f64; 11]> {
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
struct Design {
    breaks: Vec<f64>,
    /// Per piece, its first sample (and the number of samples last).
    lo: Vec<usize>,
    /// Per piece: Σ w^k (k = 0..=6), then Σ w^k·y (k = 0..=3), w = (2x - ξ_p - ξ_p+1) / h_p
    /// (from -1 to 1 over the piece: moments about its middle lose the fewest digits).
    moments: Vec<[f64; 11]>,
}

impl Design {
    /// The piece of this design with the same ends as piece `p` of `breaks` (and the same
    /// place: first, last or between, which decides where its samples end).
    fn same(&self, breaks: &[f64], p: usize) -> Option<usize> {
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
fn moments(s: &[f64], y: &[f64], a: f64, h: f64) -> [f64; 11] {
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
fn power(t: &[f64], k: usize, a: f64, h: f64) -> [[f64; 4]; 4] {
    let r = 0.5 * h;
    let d = ders(t, k + 3, a + r);
    let f = [1.0, r, r * r / 2.0, r * r * r / 6.0];
    std::array::from_fn(|j| std::array::from_fn(|r| d[r][j] * f[r]))
}

/// How many σ a mean of noise alone may reach (once in 10⁷ runs).
const CHANCE: f64 = 5.5;

/// The distance of a line from the local estimate of the true line, from the residuals `e`
/// (in order): the largest |mean| of a run of w consecutive residuals, for w = `window`,
/// window/2, ... 1, of the runs long enough that noise of σ alone keeps their mean within
/// `allow` (5.5σ/√w ≤ allow; at least the longest). Single points are for outlier
/// rejection, not for this. Without noise: the largest |e|.
pub(crate) fn deviation(e: &[f64], window: usize, sigma: f64, allow: f64) -> f64 {
    let n = e.len();
    if n == 0 {
        return 0.0;
    }
    let mut w = window.clamp(1, n);
    let mut out = 0.0f64;
    let mut first = true;
    loop {
        if first || CHANCE * sigma / (w as f64).sqrt() <= allow {
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
    fn sse(&self, breaks: &[f64], pieces: &[Piece]) -> Option<f64> {
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

    /// Fewest pieces (greedily) within `tol`, each at least `min_len` long, starting from
    /// pieces about `start` long. `None` if even the start does not fit within `tol`.
    pub fn fit(&self, tol: f64, start: f64, min_len: f64) -> Option<Spline> {
        let mut sp = self.dense(start);
        if sp.max.is_nan() || sp.max > tol {
            return None;
        }
        // Knots go while the fit stays within a tighter bound, leaving slack for the
        // constraints (lines and arcs fit as well when the knots sit at the true joints).
        let tight = SLACK * tol;
        // Rounds until nothing changes; knots moving alone get one more round to let a
        // removal or a merge use the new places, then stop (they settle by ever smaller steps).
        let mut moved_only = false;
        for _ in 0..12 {
            let removed = self.remove_knots(&mut sp, tight);
            if sp.breaks.len() > self.many {
                break;
            }
            // Merged pieces of one kind keep it.
            let constrained = self.constrain(&mut sp, tol);
            let moved = self.move_knots(&mut sp, tol, min_len);
            let merged = self.merge_knots(&mut sp, tight, min_len);
            if removed || merged || constrained {
                moved_only = false;
            } else if moved && !moved_only {
                moved_only = true;
            } else {
                break;
            }
        }
        self.drop_redundant(&mut sp, tol);
        Some(sp)
    }

    /// Removes knots where nothing changes (the third derivative continuous: two pieces of
    /// one line, or of one parabola), keeping the stricter constraint of the two.
    fn drop_redundant(&self, sp: &mut Spline, tol: f64) {
        loop {
            let scale = sp.breaks[sp.breaks.len() - 1] - sp.breaks[0];
            let Some(k) = (1..sp.breaks.len() - 1).find(|&k| {
                let jump = sp.eval_in(k, sp.breaks[k])[3] - sp.eval_in(k - 1, sp.breaks[k])[3];
                let w = sp.breaks[k + 1] - sp.breaks[k - 1];
                jump.abs() * w * w * w < 1e-6 * tol.min(1e-3 * scale)
            }) else {
                return;
            };
            let strict = |p: Piece| match p {
                Piece::Line => 2,
                Piece::Parabola => 1,
                Piece::Cubic => 0,
            };
            let mut breaks = sp.breaks.clone();
            let mut pieces = sp.pieces.clone();
            breaks.remove(k);
            let keep = if strict(pieces[k]) > strict(pieces[k - 1]) { pieces[k] } else { pieces[k - 1] };
            pieces.remove(k);
            pieces[k - 1] = keep;
            match self.solve(&breaks, &pieces) {
                Some(t) if t.max <= tol => *sp = t,
                _ => return,
            }
        }
    }

    /// The place in [lo, hi] for a knot (given by `place`, which builds the breaks and
    /// pieces for a position) with the least squared residuals, if the fit there stays
    /// within `tol`: a coarse grid, then finer grids around the best.
    fn best_place(
        &self,
        (lo, hi): (f64, f64),
        ends: (f64, f64),
        tol: f64,
        place: impl Fn(f64) -> (Vec<f64>, Vec<Piece>),
    ) -> Option<Spline> {
        self.set_ends(ends);
        let mut best: Option<(f64, f64)> = None;
        let (mut a, mut b) = (lo, hi);
        for level in 0..5 {
            let n = if level == 0 { 24 } else { 6 };
            for i in 0..=n {
                let x = a + (b - a) * i as f64 / n as f64;
                let (breaks, pieces) = place(x);
                if let Some(sse) = self.sse(&breaks, &pieces) {
                    if best.is_none_or(|(s, _)| sse < s) {
                        best = Some((sse, x));
                    }
                }
            }
            let w = (b - a) / n as f64;
            let Some((_, c)) = best else {
                *self.ends.borrow_mut() = None;
                return None;
            };
            (a, b) = ((c - w).max(lo), (c + w).min(hi));
        }
        let out = best.and_then(|(_, x)| {
            let (breaks, pieces) = place(x);
            self.solve(&breaks, &pieces)
        });
        *self.ends.borrow_mut() = None;
        out.filter(|s| s.max <= tol)
    }

    /// Running moments from `left` and `right` (two breaks) for [`Ends`].
    fn set_ends(&self, (left, right): (f64, f64)) {
        let ns = self.s.len();
        let last = self.s[ns - 1];
        let i0 = if left <= self.s[0] { 0 } else { self.s.partition_point(|&x| x < left) };
        let i1 = if right >= last { ns } else { self.s.partition_point(|&x| x < right) }.max(i0);
        let mut forward = Vec::with_capacity(i1 - i0 + 1);
        let mut m = [0.0; 11];
        forward.push(m);
        for i in i0..i1 {
            add_moments(&mut m, self.s[i] - left, self.y[i]);
            forward.push(m);
        }
        let mut backward = vec![[0.0; 11]; i1 - i0 + 1];
        let mut m = [0.0; 11];
        for i in (i0..i1).rev() {
            add_moments(&mut m, right - self.s[i], self.y[i]);
            backward[i - i0] = m;
        }
        *self.ends.borrow_mut() = Some(Ends { left, right, i0, i1, forward, backward });
    }

    /// Replaces two neighbouring knots by one at the best place between their neighbours,
    /// shortest pieces first, while the fit stays within `tol`. True if any merged.
    fn merge_knots(&self, sp: &mut Spline, tol: f64, min_len: f64) -> bool {
        let mut any = false;
        loop {
            let mut order: Vec<(f64, usize)> =
                (1..sp.breaks.len().saturating_sub(2)).map(|k| (sp.breaks[k + 1] - sp.breaks[k], k)).collect();
            order.sort_by(|x, y| x.0.total_cmp(&y.0));
            let mut merged = false;
            for (_, k) in order {
                let (lo, hi) = (sp.breaks[k - 1] + min_len, sp.breaks[k + 2] - min_len);
                if hi <= lo {
                    continue;
                }
                let place = |x: f64| {
                    let mut breaks = sp.breaks.clone();
                    breaks[k] = x;
                    breaks.remove(k + 1);
                    let mut pieces = sp.pieces.clone();
                    pieces.remove(k);
                    (breaks, pieces)
                };
                if let Some(t) = self.best_place((lo, hi), (sp.breaks[k - 1], sp.breaks[k + 2]), tol, place) {
                    *sp = t;
                    merged = true;
                    any = true;
                    break;
                }
            }
            if !merged {
                return any;
            }
        }
    }

    /// Knots in the order their removal should cost least.
    fn removal_order(sp: &Spline) -> Vec<usize> {
        let mut score: Vec<(f64, usize)> = (1..sp.breaks.len() - 1)
            .map(|k| {
                let jump = sp.eval_in(k, sp.breaks[k])[3] - sp.eval_in(k - 1, sp.breaks[k])[3];
                let w = 0.5 * (sp.breaks[k + 1] - sp.breaks[k - 1]);
                (jump.abs() * w * w * w, k)
            })
            .collect();
        score.sort_by(|x, y| x.0.total_cmp(&y.0));
        score.into_iter().map(|(_, k)| k).collect()
    }

    /// Breaks and pieces without the knots in `drop` (sorted); merged pieces keep a common
    /// constraint, else become cubics.
    fn without(sp: &Spline, drop: &[usize]) -> (Vec<f64>, Vec<Piece>) {
        let mut breaks = vec![sp.breaks[0]];
        let mut pieces = vec![sp.pieces[0]];
        for k in 1..sp.breaks.len() - 1 {
            if drop.binary_search(&k).is_ok() {
                let last = pieces.len() - 1;
                if pieces[last] != sp.pieces[k] {
                    pieces[last] = Piece::Cubic;
                }
            } else {
                breaks.push(sp.breaks[k]);
                pieces.push(sp.pieces[k]);
            }
        }
        breaks.push(sp.breaks[sp.breaks.len() - 1]);
        (breaks, pieces)
    }

    /// Removes knots while the fit stays within `tol`: batches of non-adjacent cheap knots,
    /// halved on failure, down to single knots tried in order. True if any went.
    fn remove_knots(&self, sp: &mut Spline, tol: f64) -> bool {
        let mut any = false;
        let mut batch = (sp.breaks.len() / 4).max(1);
        loop {
            let order = Self::removal_order(sp);
            if order.is_empty() {
                return any;
            }
            let mut done = false;
            while !done {
                // The cheapest `batch` knots, no two adjacent.
                let mut pick: Vec<usize> = Vec::new();
                for &k in &order {
                    if pick.len() >= batch {
                        break;
                    }
                    if !pick.iter().any(|&p| p.abs_diff(k) <= 1) {
                        pick.push(k);
                    }
                }
                let tries: Vec<Vec<usize>> =
                    if batch == 1 { order.iter().take(12).map(|&k| vec![k]).collect() } else { vec![pick] };
                for mut drop in tries {
                    drop.sort_unstable();
                    let (breaks, pieces) = Self::without(sp, &drop);
                    if let Some(t) = self.solve(&breaks, &pieces) {
                        if t.max <= tol {
                            *sp = t;
                            any = true;
                            done = true;
                            break;
                        }
                    }
                }
                if !done {
                    if batch == 1 {
                        return any;
                    }
                    batch /= 2;
                }
            }
        }
    }

    /// Moves every interior knot, one at a time, to the place between its neighbours with the
    /// least squared residuals within `tol`. True if any moved by more than 1 mm.
    fn move_knots(&self, sp: &mut Spline, tol: f64, min_len: f64) -> bool {
        let mut any = false;
        for k in 1..sp.breaks.len() - 1 {
            let (lo, hi) = (sp.breaks[k - 1] + min_len, sp.breaks[k + 1] - min_len);
            if hi <= lo {
                continue;
            }
            let place = |x: f64| {
                let mut breaks = sp.breaks.clone();
                breaks[k] = x;
                (breaks, sp.pieces.clone())
            };
            if let Some(t) = self.best_place((lo, hi), (sp.breaks[k - 1], sp.breaks[k + 1]), tol, place) {
                if t.sse < sp.sse * (1.0 - 1e-6) && (t.breaks[k] - sp.breaks[k]).abs() > 1e-3 {
                    *sp = t;
                    any = true;
                }
            }
        }
        any
    }

    /// Lines, then parabolas, where the fit stays within `tol`: pieces tried in the order of
    /// how little the constraint changes them. True if any was constrained.
    fn constrain(&self, sp: &mut Spline, tol: f64) -> bool {
        let mut any = false;
        for target in [Piece::Line, Piece::Parabola] {
            // A continued spline starting on a curve cannot start with a line.
            let curved = self.start.is_some_and(|(_, d)| d[2] != 0.0);
            let mut order: Vec<(f64, usize)> = (0..sp.pieces.len())
                .filter(|&k| sp.pieces[k] != Piece::Line && sp.pieces[k] != target)
                .filter(|&k| !(k == 0 && curved && target == Piece::Line))
                .map(|k| {
                    let h = sp.breaks[k + 1] - sp.breaks[k];
                    let (a, b) = (sp.eval_in(k, sp.breaks[k]), sp.eval_in(k, sp.breaks[k + 1]));
                    let cost = match target {
                        Piece::Line => a[2].abs().max(b[2].abs()) * h * h,
                        _ => a[3].abs() * h * h * h,
                    };
                    (cost, k)
                })
                .collect();
            order.sort_by(|x, y| x.0.total_cmp(&y.0));
            for (_, k) in order {
                let mut pieces = sp.pieces.clone();
                pieces[k] = target;
                if let Some(t) = self.solve(&sp.breaks, &pieces) {
                    if t.max <= tol {
                        *sp = t;
                        any = true;
                    }
                }
            }
        }
        any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn a_piecewise_cubic_is_found_with_its_pieces() {
        // A line, a cubic and a parabola joined with C2 continuity, sampled every 0.5 m.
        let a3 = 1e-4;
        let f = |x: f64| -> f64 {
            if x < 40.0 {
                0.1 * x
            } else if x < 60.0 {
                0.1 * x + a3 * (x - 40.0).powi(3)
            } else {
                0.1 * x + a3 * 8000.0 + 3.0 * a3 * 400.0 * (x - 60.0) + 0.006 * (x - 60.0).powi(2)
            }
        };
        let s: Vec<f64> = (0..=200).map(|i| i as f64 * 0.5).collect();
        let y: Vec<f64> = s.iter().map(|&x| f(x)).collect();
        let sp = Samples::new(&s, &y).fit(1e-4, 2.0, 0.5).expect("fits");
        assert!(sp.max <= 1e-4);
        assert_eq!(sp.pieces, [Piece::Line, Piece::Cubic, Piece::Parabola], "{:?}", sp.breaks);
        assert!((sp.breaks[1] - 40.0).abs() < 0.5 && (sp.breaks[2] - 60.0).abs() < 0.5, "{:?}", sp.breaks);
        let p = sp.poly(0);
        assert!((p[2]).abs() < 1e-9 && (p[1] - 0.1).abs() < 1e-6, "{p:?}");
    }

    #[test]
    fn solves_that_reuse_pieces_match_fresh_ones() {
        // A wavy profile with a little deterministic noise, every 0.25 m over 300 m.
        let s: Vec<f64> = (0..=1200).map(|i| i as f64 * 0.25).collect();
        let y: Vec<f64> = s
            .iter()
            .enumerate()
            .map(|(i, &x)| 40.0 + 0.3 * x + 5.0 * (x / 37.0).sin() + 0.003 * ((i * 7919) % 13) as f64)
            .collect();
        let shared = Samples::new(&s, &y);
        let mut breaks: Vec<f64> = (0..=15).map(|i| i as f64 * 20.0).collect();
        let mut pieces = vec![Piece::Cubic; 15];
        pieces[3] = Piece::Parabola;
        pieces[9] = Piece::Line;
        // A knot moved by best_place (running moments from its neighbours), then other
        // changes: each solve must equal one on samples that never saw another.
        let first = shared.solve(&breaks, &pieces).expect("solves");
        let placed = shared.best_place((101.0, 119.0), (100.0, 120.0), f64::INFINITY, |x| {
            let mut b = breaks.clone();
            b[5] = x;
            (b, pieces.clone())
        });
        let placed = placed.expect("a place");
        breaks = placed.breaks.clone();
        let moved = Samples::new(&s, &y).solve(&breaks, &pieces).expect("solves");
        breaks.remove(11);
        pieces.remove(11);
        let removed = shared.solve(&breaks, &pieces).expect("solves");
        let fresh = Samples::new(&s, &y).solve(&breaks, &pieces).expect("solves");
        for (a, b) in [(&placed, &moved), (&removed, &fresh)] {
            assert!((a.sse - b.sse).abs() <= 1e-9 * b.sse, "sse {} vs {}", a.sse, b.sse);
            assert!((a.max - b.max).abs() <= 1e-9, "max {} vs {}", a.max, b.max);
            for x in [0.0, 33.3, 101.7, 150.0, 299.0] {
                assert!((a.eval(x)[0] - b.eval(x)[0]).abs() < 1e-9, "at {x}");
            }
        }
        // The residuals as the B-splines give them (de Boor) agree with the solve's.
        let sse: f64 = s.iter().zip(&y).map(|(&x, &v)| (fresh.eval(x)[0] - v).powi(2)).sum();
        assert!((sse - fresh.sse).abs() <= 1e-6 * fresh.sse, "sse {sse} vs {}", fresh.sse);
        assert!(first.sse > 0.0);
    }
}
