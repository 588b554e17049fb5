//! The exact polish: Gauss-Newton (Levenberg-Marquardt damping) on a curvature profile's knot
//! curvatures, start pose and length against the points' signed lateral distances, with the
//! curve integrated exactly in heading and by 3-point Gauss-Legendre in position on a grid
//! that contains the knots. The linear spline fit (`spline.rs`) gives the start; this step
//! removes what its small-angle linearisation leaves.

/// A curvature profile: continuous, linear between knots; each knot's curvature is a free
/// variable, shared with other knots (a tie) or fixed at zero.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Model {
    pub(super) x0: f64,
    pub(super) y0: f64,
    pub(super) hdg0: f64,
    pub(super) knots: Vec<f64>,
    /// Per knot: the variable holding its curvature, or None for zero.
    pub(super) var_of: Vec<Option<usize>>,
    pub(super) vars: Vec<f64>,
    pub(super) length: f64,
}

impl Model {
    pub(super) fn kappa_at_knot(&self, k: usize) -> f64 {
        self.var_of[k].map_or(0.0, |v| self.vars[v])
    }

    fn kappa(&self, s: f64) -> f64 {
        let k = self.knots.partition_point(|&u| u <= s).clamp(1, self.knots.len() - 1);
        let (a, b) = (self.knots[k - 1], self.knots[k]);
        let f = ((s - a) / (b - a)).clamp(0.0, 1.0);
        self.kappa_at_knot(k - 1) * (1.0 - f) + self.kappa_at_knot(k) * f
    }
}

/// The curve of a model on a grid: s, heading and position at every node.
#[derive(Debug, Clone)]
pub(super) struct Track {
    s: Vec<f64>,
    hdg: Vec<f64>,
    xy: Vec<[f64; 2]>,
}

const GL3: [(f64, f64); 3] =
    [(-0.774_596_669_241_483_4, 5.0 / 9.0), (0.0, 8.0 / 9.0), (0.774_596_669_241_483_4, 5.0 / 9.0)];

impl Track {
    pub(super) fn new(m: &Model, step: f64) -> Track {
        let mut s: Vec<f64> =
            (0..=((m.length / step).ceil() as usize)).map(|i| (i as f64 * step).min(m.length)).collect();
        s.extend(m.knots.iter().copied());
        s.sort_by(f64::total_cmp);
        s.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
        let mut hdg = vec![m.hdg0];
        let mut xy = vec![[m.x0, m.y0]];
        for w in s.windows(2) {
            let (a, b) = (w[0], w[1]);
            let (ka, kb) = (m.kappa(a), m.kappa(b));
            let h0 = hdg[hdg.len() - 1];
            let p0 = xy[xy.len() - 1];
            let len = b - a;
            // Heading is quadratic within the interval (curvature linear).
            let th = |u: f64| h0 + ka * u + 0.5 * (kb - ka) / len * u * u;
            let (mut dx, mut dy) = (0.0, 0.0);
            for (x, wgt) in GL3 {
                let u = 0.5 * len * (x + 1.0);
                dx += wgt * th(u).cos();
                dy += wgt * th(u).sin();
            }
            hdg.push(th(len));
            xy.push([p0[0] + 0.5 * len * dx, p0[1] + 0.5 * len * dy]);
        }
        Track { s, hdg, xy }
    }

    /// Position and heading at s (within the grid).
    fn at(&self, m: &Model, s: f64) -> ([f64; 2], f64) {
        let s = s.clamp(0.0, m.length);
        let i = self.s.partition_point(|&u| u <= s).clamp(1, self.s.len() - 1) - 1;
        let (a, b) = (self.s[i], self.s[(i + 1).min(self.s.len() - 1)]);
        let (ka, kb) = (m.kappa(a), m.kappa(b));
        let len = (b - a).max(1e-12);
        let h0 = self.hdg[i];
        let th = |u: f64| h0 + ka * u + 0.5 * (kb - ka) / len * u * u;
        let d = s - a;
        let (mut dx, mut dy) = (0.0, 0.0);
        for (x, wgt) in GL3 {
            let u = 0.5 * d * (x + 1.0);
            dx += wgt * th(u).cos();
            dy += wgt * th(u).sin();
        }
        ([self.xy[i][0] + 0.5 * d * dx, self.xy[i][1] + 0.5 * d * dy], th(d))
    }
}

/// One residual: the sample's offset from its point on the curve along `dir`.
#[derive(Debug, Clone, Copy)]
struct Row {
    sample: usize,
    dir: [f64; 2],
    value: f64,
}
/// The points and the grid step of the track.
pub(super) struct Polish<'a> {
    /// The points, in order.
    pub q: &'a [[f64; 2]],
    pub grid_step: f64,
}

impl Polish<'_> {
    /// updated by projection steps), and at the first and last samples, which stay at the
    /// curve's ends, the along-track distance too (else the ends could slide along the line).
    /// Also the largest lateral distance and its s.
    fn residuals(&self, m: &Model, track: &Track, params: &mut [f64]) -> (Vec<Row>, (f64, f64)) {
        let mut rows = Vec::with_capacity(params.len() + 2);
        let mut worst = (0.0, 0.0);
        let last = params.len() - 1;
        for (j, u) in params.iter_mut().enumerate() {
            let q = self.q[j];
            if j == 0 || j == last {
                *u = if j == 0 { 0.0 } else { m.length };
            } else {
                for _ in 0..2 {
                    let (c, th) = track.at(m, *u);
                    let along = (q[0] - c[0]) * th.cos() + (q[1] - c[1]) * th.sin();
                    *u = (*u + along).clamp(0.0, m.length);
                }
            }
            let (c, th) = track.at(m, *u);
            let (t, n) = ([th.cos(), th.sin()], [-th.sin(), th.cos()]);
            let d = [q[0] - c[0], q[1] - c[1]];
            let e = d[0] * n[0] + d[1] * n[1];
            let full = if j == 0 || j == last { d[0].hypot(d[1]) } else { e.abs() };
            if full > worst.0 {
                worst = (full, *u);
            }
            if j == 0 || j == last {
                // The ends are pinned harder: one sample each would not hold them.
                const W: f64 = 10.0;
                rows.push(Row { sample: j, dir: [W * n[0], W * n[1]], value: W * e });
                rows.push(Row { sample: j, dir: [W * t[0], W * t[1]], value: W * (d[0] * t[0] + d[1] * t[1]) });
            } else {
                rows.push(Row { sample: j, dir: n, value: e });
            }
        }
        (rows, worst)
    }

    /// Gauss-Newton (Levenberg-Marquardt) on the start pose and the curvature variables;
    /// returns the largest distance and where.
    pub(super) fn refine(&self, m: &mut Model, params: &mut [f64], move_knots: bool) -> (f64, f64) {
        let mut lambda = 1e-3;
        let mut track = Track::new(m, self.grid_step);
        let (mut rows, mut worst) = self.residuals(m, &track, params);
        let mut cost: f64 = rows.iter().map(|r| r.value * r.value).sum();
        for _ in 0..30 {
            let ints = ShapeIntegrals::new(m, &track);
            // Knot positions are parameters only when asked (they make a poor start worse).
            let np = if move_knots { 3 + ints.phi.len() } else { 4 + m.vars.len() };
            let mut jtj = vec![vec![0.0; np]; np];
            let mut jtr = vec![0.0; np];
            let mut row = vec![0.0; np];
            for r in &rows {
                let n = r.dir;
                for (v, d) in row.iter_mut().zip(ints.dc_dp(m, &track, params[r.sample]).into_iter().take(np)) {
                    *v = -(n[0] * d[0] + n[1] * d[1]);
                }
                for a in 0..np {
                    jtr[a] += row[a] * r.value;
                    for b in 0..np {
                        jtj[a][b] += row[a] * row[b];
                    }
                }
            }
            // Damped step; accept if the cost falls.
            let mut improved = false;
            for _ in 0..8 {
                let mut a = jtj.clone();
                for (i, ai) in a.iter_mut().enumerate() {
                    ai[i] += lambda * (jtj[i][i] + 1e-12);
                }
                let Some(delta) = solve(a, jtr.iter().map(|v| -v).collect()) else { break };
                let mut trial = m.clone();
                trial.x0 += delta[0];
                trial.y0 += delta[1];
                trial.hdg0 += delta[2];
                trial.length += delta[3];
                if let Some(end) = trial.knots.last_mut() {
                    *end = trial.length;
                }
                for (v, d) in trial.vars.iter_mut().zip(&delta[4..]) {
                    *v += d;
                }
                for (k, d) in delta.iter().skip(4 + trial.vars.len()).enumerate() {
                    trial.knots[k + 1] += d;
                }
                // Knots keep their order (no gap shrinks below half of what it was).
                if trial.knots.windows(2).zip(m.knots.windows(2)).any(|(t, o)| t[1] - t[0] < 0.5 * (o[1] - o[0])) {
                    lambda *= 10.0;
                    continue;
                }
                let t_track = Track::new(&trial, self.grid_step);
                let mut t_params = params.to_vec();
                let (t_rows, t_w) = self.residuals(&trial, &t_track, &mut t_params);
                let t_cost: f64 = t_rows.iter().map(|r| r.value * r.value).sum();
                if t_cost < cost {
                    let step: f64 = delta.iter().map(|d| d.abs()).fold(0.0, f64::max);
                    *m = trial;
                    track = t_track;
                    params.copy_from_slice(&t_params);
                    (rows, worst) = (t_rows, t_w);
                    let converged = (cost - t_cost) < 1e-10 * cost.max(1e-12) || step < 1e-12;
                    cost = t_cost;
                    lambda = (lambda * 0.3).max(1e-9);
                    improved = !converged;
                    break;
                }
                lambda *= 10.0;
            }
            if !improved {
                break;
            }
        }
        worst
    }
}

/// Per shape parameter (curvature variables, then interior knot positions): cumulative
/// integrals over the grid of its curvature change w_p and of w_p·c.
struct ShapeIntegrals {
    phi: Vec<Vec<f64>>,
    phic: Vec<Vec<[f64; 2]>>,
}

impl ShapeIntegrals {
    fn new(m: &Model, track: &Track) -> ShapeIntegrals {
        // Parameters: start pose, curvature variables, interior knot positions. Each
        // shape parameter p changes the curvature by w_p(v) per unit; a change of κ on
        // [v, v + dv] turns the rest of the curve about c(v), so
        // dc(s)/dp = R90 ∫ w_p(v) (c(s) - c(v)) dv: cumulative integrals of w_p and w_p·c
        // over the grid (trapezoids; w_p is linear between grid nodes).
        let (nk, nv, g, kn) = (m.knots.len(), m.vars.len(), track.s.len(), &m.knots);
        // Each w_p as pieces: (knot interval, value at its start, value at its end).
        let mut pieces: Vec<Vec<(usize, f64, f64)>> = vec![Vec::new(); nv + nk.saturating_sub(2)];
        for k in 0..nk {
            if let Some(v) = m.var_of[k] {
                if k > 0 {
                    pieces[v].push((k - 1, 0.0, 1.0));
                }
                if k + 1 < nk {
                    pieces[v].push((k, 1.0, 0.0));
                }
            }
        }
        for k in 1..nk.saturating_sub(1) {
            let left = (m.kappa_at_knot(k) - m.kappa_at_knot(k - 1)) / (kn[k] - kn[k - 1]);
            let right = (m.kappa_at_knot(k + 1) - m.kappa_at_knot(k)) / (kn[k + 1] - kn[k]);
            pieces[nv + k - 1].push((k - 1, 0.0, -left));
            pieces[nv + k - 1].push((k, -right, 0.0));
        }
        // The last knot moves with the length: its left piece, kept last.
        let k = nk - 1;
        let left = (m.kappa_at_knot(k) - m.kappa_at_knot(k - 1)) / (kn[k] - kn[k - 1]);
        pieces.push(vec![(k - 1, 0.0, -left)]);
        let mut phi_int = vec![vec![0.0; g]; pieces.len()];
        let mut phic_int = vec![vec![[0.0; 2]; g]; pieces.len()];
        for (p, list) in pieces.iter().enumerate() {
            // Increments per grid interval within the pieces (the grid holds every knot),
            // then running sums.
            let (phi, phic) = (&mut phi_int[p], &mut phic_int[p]);
            for &(k, wa, wb) in list {
                let (ka, kb) = (kn[k], kn[k + 1]);
                let w = |s: f64| wa + (wb - wa) * (s - ka) / (kb - ka);
                let mut i = track.s.partition_point(|&u| u < ka - 1e-9).max(1);
                while i < g && track.s[i] <= kb + 1e-9 {
                    let (a, b) = (track.s[i - 1], track.s[i]);
                    if a >= ka - 1e-9 {
                        let (fa, fb, d) = (w(a), w(b), b - a);
                        phi[i] += 0.5 * d * (fa + fb);
                        let (pa, pb) = (track.xy[i - 1], track.xy[i]);
                        for (c, v) in phic[i].iter_mut().enumerate() {
                            *v += 0.5 * d * (fa * pa[c] + fb * pb[c]);
                        }
                    }
                    i += 1;
                }
            }
            for i in 1..g {
                phi[i] += phi[i - 1];
                let prev = phic[i - 1];
                for (v, p) in phic[i].iter_mut().zip(prev) {
                    *v += p;
                }
            }
        }
        ShapeIntegrals { phi: phi_int, phic: phic_int }
    }

    /// Derivatives of c(u) by every parameter: x0, y0, hdg0, length (which moves only the
    /// end, where the last sample stays), then the shape parameters.
    /// A parameter p changes the curvature by w_p(v) per unit; a change of κ on [v, v + dv]
    /// turns the rest of the curve about c(v): dc(u)/dp = R90 ∫ w_p(v) (c(u) - c(v)) dv.
    fn dc_dp(&self, m: &Model, track: &Track, u: f64) -> Vec<[f64; 2]> {
        let (c, th) = track.at(m, u);
        let i = track.s.partition_point(|&v| v <= u).clamp(1, track.s.len()) - 1;
        let r90 = |d: [f64; 2]| [-d[1], d[0]];
        let turn =
            |p: usize| r90([c[0] * self.phi[p][i] - self.phic[p][i][0], c[1] * self.phi[p][i] - self.phic[p][i][1]]);
        let last = self.phi.len() - 1;
        // The length moves the last knot (and the end, where the last sample stays).
        let mut end = turn(last);
        if u >= m.length - 1e-12 {
            end = [end[0] + th.cos(), end[1] + th.sin()];
        }
        let mut out = vec![[1.0, 0.0], [0.0, 1.0], r90([c[0] - m.x0, c[1] - m.y0]), end];
        out.extend((0..last).map(turn));
        out
    }
}

/// Solves a small dense system by Gaussian elimination with partial pivoting.
fn solve(mut a: Vec<Vec<f64>>, mut b: Vec<f64>) -> Option<Vec<f64>> {
    let n = b.len();
    for c in 0..n {
        let p = (c..n).max_by(|&i, &j| a[i][c].abs().total_cmp(&a[j][c].abs()))?;
        if a[p][c].abs() < 1e-300 {
            return None;
        }
        a.swap(c, p);
        b.swap(c, p);
        for r in c + 1..n {
            let f = a[r][c] / a[c][c];
            if f != 0.0 {
                let (top, bottom) = a.split_at_mut(r);
                for (x, y) in bottom[0][c..].iter_mut().zip(&top[c][c..]) {
                    *x -= f * y;
                }
                b[r] -= f * b[c];
            }
        }
    }
    let mut x = vec![0.0; n];
    for c in (0..n).rev() {
        let s: f64 = (c + 1..n).map(|k| a[c][k] * x[k]).sum();
        x[c] = (b[c] - s) / a[c][c];
    }
    x.iter().all(|v| v.is_finite()).then_some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn curve_derivatives_match_finite_differences() {
        let m = Model {
            x0: 1.0,
            y0: 2.0,
            hdg0: 0.3,
            knots: vec![0.0, 30.0, 60.0, 100.0],
            var_of: vec![None, Some(0), Some(1), None],
            vars: vec![0.01, 0.02],
            length: 100.0,
        };
        let step = 0.05;
        let track = Track::new(&m, step);
        let ints = ShapeIntegrals::new(&m, &track);
        let u = 80.0;
        let got = ints.dc_dp(&m, &track, u);
        let apply = |p: usize, h: f64| -> [f64; 2] {
            let mut t = m.clone();
            match p {
                0 => t.x0 += h,
                1 => t.y0 += h,
                2 => t.hdg0 += h,
                3 => {
                    t.length += h;
                    t.knots[3] = t.length;
                }
                4 | 5 => t.vars[p - 4] += h,
                _ => t.knots[p - 5] += h,
            }
            Track::new(&t, step).at(&t, u).0
        };
        for (p, g) in got.iter().enumerate() {
            let h = if (4..6).contains(&p) { 1e-6 } else { 1e-4 };
            let (a, b) = (apply(p, h), apply(p, -h));
            let fd = [(a[0] - b[0]) / (2.0 * h), (a[1] - b[1]) / (2.0 * h)];
            let err = (fd[0] - g[0]).hypot(fd[1] - g[1]) / fd[0].hypot(fd[1]).max(1e-9);
            assert!(err < 1e-2, "parameter {p}: analytic {g:?} vs finite differences {fd:?}");
        }
    }
}
