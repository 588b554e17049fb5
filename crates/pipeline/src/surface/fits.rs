//! The fits of a node's height: a least-squares plane's test ([`LeastSquares`]), the four-at-a-time
//! sums of the plane fits, the robust biweight plane of a block's disc ([`Disc`], [`robust_plane`],
//! [`Fit`]), the median of the nearest points where a disc is not smooth ([`near_median`]), the
//! quadratic surface of [`Estimator::Quadratic`](super::Estimator::Quadratic), the plane's solve
//! along the directions the points spread in, and the grid's rounding without library calls.

use super::{envelope::median, estimator::SMOOTH_SIGMA};
use wide::f32x4;

/// A disc's least-squares plane, [`Moments::least_squares`](super::estimator::Moments::least_squares).
#[derive(Debug, Clone, Copy)]
pub(super) struct LeastSquares {
    pub(super) plane: [f64; 3],
    pub(super) var: f64,
    pub(super) level: bool,
}

impl LeastSquares {
    /// Level, with a residual scale under `sigma`.
    pub(super) fn within(&self, sigma: f64) -> bool {
        self.var < sigma * sigma && self.level
    }
}

/// Four points' spatial weights (1 - d²/R²)² for a disc with 1/R² `inv_r2` (zero outside it),
/// and which of them lie inside it (a mask).
#[inline(always)]
pub(super) fn spatial_weights(x: f32x4, y: f32x4, inv_r2: f32x4) -> (f32x4, f32x4) {
    let one = f32x4::ONE;
    let d2 = (x * x + y * y) * inv_r2;
    let u = (one - d2).max(f32x4::ZERO);
    (u * u, d2.simd_lt(one))
}

/// Adds four points' weighted position sums to `acc[..6]`: Σw, Σwx, Σwy, Σwxx, Σwxy, Σwyy.
#[inline(always)]
pub(super) fn add_position_sums(acc: &mut [f32x4], w: f32x4, x: f32x4, y: f32x4) {
    let (wx, wy) = (w * x, w * y);
    acc[0] += w;
    acc[1] += wx;
    acc[2] += wy;
    acc[3] += wx * x;
    acc[4] += wx * y;
    acc[5] += wy * y;
}

/// Adds four points' weighted height sums to `acc[..4]`: Σwh, Σwxh, Σwyh and Σw².
#[inline(always)]
pub(super) fn add_height_sums(acc: &mut [f32x4], w: f32x4, x: f32x4, y: f32x4, h: f32x4) {
    acc[0] += w * h;
    acc[1] += w * x * h;
    acc[2] += w * y * h;
    acc[3] += w * w;
}

/// Adds four points' weighted plane sums to `acc[..10]`: the position sums, then the height
/// sums (a plane fit's normal equations and the points' effective number).
#[inline(always)]
fn add_plane_sums(acc: &mut [f32x4; 12], w: f32x4, x: f32x4, y: f32x4, h: f32x4) {
    add_position_sums(&mut acc[..6], w, x, y);
    add_height_sums(&mut acc[6..10], w, x, y, h);
}

/// Each sum's four lanes added up, four sums at a time (transposed), in single precision.
pub(super) fn lane_sums(acc: &[f32x4; 12]) -> [f64; 12] {
    let mut out = [0.0; 12];
    for (four, out) in acc.chunks_exact(4).zip(out.chunks_exact_mut(4)) {
        let t = f32x4::transpose([four[0], four[1], four[2], four[3]]);
        let sum = (t[0] + t[1]) + (t[2] + t[3]);
        for (o, v) in out.iter_mut().zip(sum.to_array()) {
            *o = v as f64;
        }
    }
    out
}

/// Beyond this, every f64 is an integer.
const INTEGRAL: f64 = 4_503_599_627_370_496.0; // 2^52

/// `x.floor()`, the same value, without the library call it is on x86-64's baseline (SSE2 has
/// no rounding instruction; once per candidate and more, it showed in profiles).
pub(super) fn floor(x: f64) -> f64 {
    if x.abs() < INTEGRAL {
        // Truncation is exact here; no branch (the data decide it at random).
        let t = x as i64 as f64;
        t - (t > x) as u8 as f64
    } else {
        x.floor()
    }
}

/// `x.round()` (halves away from zero) as an integer, without the library call and the
/// conversions back and forth; `i64::MIN` (outside any grid) from 2^52 on and for NaN.
pub(super) fn round_index(x: f64) -> i64 {
    if x.abs() < INTEGRAL {
        let t = x as i64;
        // Exact: x and its truncation share their leading bits.
        let d = x - t as f64;
        t + (d >= 0.5) as i64 - (d <= -0.5) as i64
    } else {
        i64::MIN
    }
}

/// Whether point `p` (relative to a node) lies within `r` of it across the plane.
pub(super) fn within(p: &[f32; 3], r: f32) -> bool {
    p[0] * p[0] + p[1] * p[1] <= r * r
}

/// The height at the centre of the weighted least-squares quadratic surface
/// h = a + b·x + c·y + d·x² + e·xy + f·y² of the points within `radius` of it (spatial weights
/// (1 - d²/R²)²); `None` with fewer than 10 points or a singular system.
#[allow(clippy::needless_range_loop)] // matrix code reads best by index
pub(super) fn quadratic_height(w: impl IntoIterator<Item = [f32; 3]>, radius: f64) -> Option<f64> {
    let mut m = [[0.0f64; 7]; 6];
    let (mut n, mut h0) = (0usize, None);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let inv = 1.0 / radius;
    for [x, y, h] in w {
        let (x, y) = (f64::from(x) * inv, f64::from(y) * inv);
        let d2 = x * x + y * y;
        if d2 >= 1.0 {
            continue;
        }
        let h0 = *h0.get_or_insert(f64::from(h));
        let h = f64::from(h) - h0;
        lo = lo.min(h);
        hi = hi.max(h);
        let wt = (1.0 - d2) * (1.0 - d2);
        let b = [1.0, x, y, x * x, x * y, y * y];
        for i in 0..6 {
            for j in i..6 {
                m[i][j] += wt * b[i] * b[j];
            }
            m[i][6] += wt * b[i] * h;
        }
        n += 1;
    }
    let h0 = h0?;
    if n < 10 {
        return None;
    }
    for i in 0..6 {
        for j in 0..i {
            m[i][j] = m[j][i];
        }
    }
    // Gaussian elimination with partial pivoting.
    let scale = m[0][0];
    for c in 0..6 {
        let p = (c..6).max_by(|&a, &b| m[a][c].abs().total_cmp(&m[b][c].abs()))?;
        if m[p][c].abs() <= 1e-9 * scale {
            return None;
        }
        m.swap(c, p);
        for r in c + 1..6 {
            let f = m[r][c] / m[c][c];
            for k in c..7 {
                m[r][k] -= f * m[c][k];
            }
        }
    }
    let mut x = [0.0f64; 6];
    for c in (0..6).rev() {
        let s: f64 = (c + 1..6).map(|k| m[c][k] * x[k]).sum();
        x[c] = (m[c][6] - s) / m[c][c];
    }
    // A fit beyond the points' heights is extrapolating (points on too few lines).
    (x[0] >= lo && x[0] <= hi).then_some(h0 + x[0])
}

/// The points of a node's disc in columns of four (heights relative to where the fits start),
/// padded with points 1.4 km away (outside any disc of a fit), and the spatial weights of the
/// disc being fitted (set by [`Disc::weigh`] after each [`Disc::pack`]), for a block's robust
/// fit: the reweighting runs on four points at a time.
#[derive(Debug, Default)]
pub(super) struct Disc {
    x: Vec<[f32; 4]>,
    y: Vec<[f32; 4]>,
    h: Vec<[f32; 4]>,
    ws: Vec<[f32; 4]>,
}

impl Disc {
    /// Packs the points of `w` (`[x, y, h]` relative to the node), heights from `start` (so
    /// that single precision keeps micrometres).
    pub(super) fn pack(&mut self, w: &[[f32; 3]], start: f32) {
        for v in [&mut self.x, &mut self.y, &mut self.h, &mut self.ws] {
            v.clear();
        }
        for four in w.chunks(4) {
            let (mut x, mut y, mut h) = ([1e3f32; 4], [1e3f32; 4], [0f32; 4]);
            for (l, p) in four.iter().enumerate() {
                x[l] = p[0];
                y[l] = p[1];
                h[l] = p[2] - start;
            }
            self.x.push(x);
            self.y.push(y);
            self.h.push(h);
        }
    }

    /// Sets the spatial weights of the disc of `radius` ([`spatial_weights`]): the number of
    /// points within.
    pub(super) fn weigh(&mut self, radius: f32) -> usize {
        let inv_r2 = f32x4::splat(1.0 / (radius * radius));
        let mut n = f32x4::ZERO;
        self.ws.clear();
        for (&x, &y) in self.x.iter().zip(&self.y) {
            let (w, inside) = spatial_weights(f32x4::new(x), f32x4::new(y), inv_r2);
            self.ws.push(w.to_array());
            n += inside & f32x4::ONE;
        }
        n.to_array().iter().sum::<f32>() as usize
    }

    /// The robust plane fit ([`robust_plane`]) of the packed points within `radius`, started at
    /// height `start`.
    pub(super) fn fit(&mut self, radius: f32, scale: f32, start: f64) -> Option<Fit> {
        let n_in = self.weigh(radius);
        robust_plane(self, n_in, radius, scale, start)
    }
}

/// Robust weighted plane fit at the origin of the points packed in `d` with the weights of the
/// disc of `radius`, `n_in` of them within it, started at height `start` (see [`Disc::pack`]):
/// the plane and how well it fits, or `None` with fewer than three points.
fn robust_plane(d: &Disc, n_in: usize, radius: f32, scale: f32, start: f64) -> Option<Fit> {
    if n_in < 3 {
        return None;
    }
    let Disc { x: xs, y: ys, h: hs, ws: wss } = d;
    let (mut a, mut bx, mut by) = (0.0f64, 0.0f64, 0.0f64);
    let inv_scale = 1.0 / scale;
    // Σ w, Σ w², Σ w res² and the points rejected of the last pass.
    let mut last = [0.0f64; 4];
    for it in 0..4 {
        // Normal equations of Σ w (h - a - bx x - by y)² (the six distinct entries), the
        // right-hand side, Σ w², Σ w res² and the points rejected, lane by lane. The biweight
        // is zero from one scale on, so a rejected point adds nothing.
        let mut acc = [f32x4::ZERO; 12];
        let (a4, bx4, by4) = (f32x4::splat(a as f32), f32x4::splat(bx as f32), f32x4::splat(by as f32));
        let (inv4, one, zero) = (f32x4::splat(inv_scale), f32x4::ONE, f32x4::ZERO);
        for (((&x, &y), &h), &ws) in xs.iter().zip(ys.iter()).zip(hs.iter()).zip(wss.iter()) {
            let (x, y, h, ws) = (f32x4::new(x), f32x4::new(y), f32x4::new(h), f32x4::new(ws));
            let res = h - a4 - bx4 * x - by4 * y;
            let r = res * inv4;
            let u = (one - r * r).max(zero);
            let wt = ws * u * u;
            add_plane_sums(&mut acc, wt, x, y, h);
            acc[10] += wt * res * res;
            acc[11] += u.simd_eq(zero) & ws.simd_gt(zero) & one;
        }
        let [s1, sx, sy, sxx, sxy, syy, sh, sxh, syh, sw2, swr2, n_out] = lane_sums(&acc);
        let m = [[s1, sx, sy], [sx, sxx, sxy], [sy, sxy, syy]];
        let rhs = [sh, sxh, syh];
        if s1 <= 0.0 || s1 * s1 < 3.0 * sw2 {
            return None; // no weight, or fewer than 3 points' worth (n_eff = (Σ w)² / Σ w²)
        }
        last = [s1, sw2, swr2, n_out];
        let sol = plane_solve(&m, &rhs, min_slope_var(radius as f64))?;
        // Converged: the plane moved by less than 10 µm anywhere in the disc.
        let moved = (sol[0] - a).abs() + ((sol[1] - bx).abs() + (sol[2] - by).abs()) * radius as f64;
        a = sol[0];
        bx = sol[1];
        by = sol[2];
        if it > 0 && moved < 1e-5 {
            break;
        }
    }
    let [sw, sw2, swr2, n_out] = last;
    let sigma = residual_variance(sw, sw2, swr2).sqrt();
    let fit = Fit { h: start + a, bx, by, sigma, rejected: n_out / n_in as f64 };
    fit.h.is_finite().then_some(fit)
}

/// A robust plane fit: height at the node, slopes, the weighted residual scale and the share of
/// points the biweight rejected (m, per metre, m, share 0..1).
#[derive(Debug, Clone, Copy)]
pub(super) struct Fit {
    pub(super) h: f64,
    pub(super) bx: f64,
    pub(super) by: f64,
    sigma: f64,
    rejected: f64,
}

impl Fit {
    /// Residuals like the noise and (almost) nothing rejected: no step in the disc.
    pub(super) fn smooth(&self, scale: f32) -> bool {
        self.rejected < 0.03 && self.sigma < SMOOTH_SIGMA * scale as f64
    }
}

/// The points a node's height is the median of where its disc is not smooth ([`near_median`]).
const NEAR_POINTS: usize = 6;

/// The estimate at a node whose disc is not smooth (a step, joint, rim or outlier within
/// it): the median of the [`NEAR_POINTS`] points of `w` nearest the node (a point's height
/// breaks ties; the mean of the middle two). Every plane over the disc straddles the edge;
/// these points lie within about 1.5 cells, on the node's side of it, and their median
/// withstands two of them being outliers or from the other side. `None` with fewer than three
/// points in `w`, as where robust plane fits took these nodes (half the nodes of a sparse
/// survey: the gaps are filled along track).
pub(super) fn near_median(w: impl IntoIterator<Item = [f32; 3]>) -> Option<f32> {
    let mut near = [0f32; NEAR_POINTS];
    let k = nearest_heights(w, &mut near);
    if k < 3 {
        return None;
    }
    median(&mut near[..k])
}

/// The heights of the points of `w` nearest the origin (ties: the lower first), by
/// insertion, as many as `out` holds (up to [`NEAR_POINTS`]): how many there are.
fn nearest_heights(w: impl IntoIterator<Item = [f32; 3]>, out: &mut [f32]) -> usize {
    let n = out.len().min(NEAR_POINTS);
    if n == 0 {
        return 0;
    }
    let mut near = [(f32::INFINITY, 0f32); NEAR_POINTS];
    let near = &mut near[..n];
    let mut k = 0;
    for p in w {
        let e = (p[0] * p[0] + p[1] * p[1], p[2]);
        if k == n && e >= near[n - 1] {
            continue;
        }
        let mut j = k.min(n - 1);
        while j > 0 && e < near[j - 1] {
            near[j] = near[j - 1];
            j -= 1;
        }
        near[j] = e;
        k = (k + 1).min(n);
    }
    for (o, e) in out.iter_mut().zip(&near[..k]) {
        *o = e.1;
    }
    k
}

/// The points of `w` nearest the origin, at most `cap` of them (dense surveys: the noise is
/// averaged down enough by then, and the cost stays bounded), the radius shrunk to them, and
/// the median height of the five nearest: where robust fits start.
pub(super) fn nearest(w: &mut [[f32; 3]], radius: f32, cap: usize) -> Option<(&mut [[f32; 3]], f32, f64)> {
    let d2 = |p: &[f32; 3]| p[0] * p[0] + p[1] * p[1];
    let mut w = w;
    let mut radius = radius;
    if w.len() > cap {
        w.select_nth_unstable_by(cap, |a, b| d2(a).total_cmp(&d2(b)).then(a[2].total_cmp(&b[2])));
        radius = radius.min(d2(&w[cap]).sqrt());
        w = &mut w[..cap];
    }
    let mut near = [0f32; 5];
    let k = nearest_heights(w.iter().copied(), &mut near);
    let start = median(&mut near[..k])? as f64;
    Some((w, radius, start))
}

/// The smallest weighted variance of the points' positions along a direction for a plane fit
/// in a disc of `radius` to fit a slope along it (see [`plane_solve`]): 0.15 of the radius
/// squared.
pub(super) fn min_slope_var(radius: f64) -> f64 {
    (0.15 * radius).powi(2)
}

/// The weighted residual variance of a plane fit from Σ w, Σ w² and Σ w res²: corrected for the
/// plane's parameters with the effective number of points (Σ w)² / Σ w².
pub(super) fn residual_variance(sw: f64, sw2: f64, swr2: f64) -> f64 {
    // swr2 / sw · n_eff / max(n_eff - 2, 1), with n_eff = sw² / sw2, in one division.
    swr2 * sw / (sw * sw - 2.0 * sw2).max(sw2)
}

/// Solves the weighted normal equations `m · [a, bx, by] = rhs` of a plane fit, fitting a slope
/// only along directions in which the points spread by at least √`min_var` (weighted standard
/// deviation): points of a single scan line (spread ~0 across it, or only the coordinates'
/// millimetre rounding) would otherwise give an arbitrary slope across the line, and the
/// height at a node a centimetre away from it with it.
pub(super) fn plane_solve(m: &[[f64; 3]; 3], rhs: &[f64; 3], min_var: f64) -> Option<[f64; 3]> {
    let w = m[0][0];
    if w.is_nan() || w <= 0.0 || w.is_infinite() {
        return None;
    }
    // Weighted means and covariance of the positions.
    let inv_w = 1.0 / w;
    let (mx, my) = (m[0][1] * inv_w, m[0][2] * inv_w);
    let (cxx, cyy, cxy) = (m[1][1] * inv_w - mx * mx, m[2][2] * inv_w - my * my, m[1][2] * inv_w - mx * my);
    let mh = rhs[0] * inv_w;
    let (chx, chy) = (rhs[1] * inv_w - mx * mh, rhs[2] * inv_w - my * mh);
    // Eigen-decomposition of the 2x2 covariance.
    let tr = cxx + cyy;
    let disc = ((cxx - cyy) * (cxx - cyy) / 4.0 + cxy * cxy).sqrt();
    let (l1, l2) = (tr / 2.0 + disc, tr / 2.0 - disc);
    let (bx, by) = if l2 >= min_var {
        // Full plane: slopes from the covariance (centred normal equations).
        let det = cxx * cyy - cxy * cxy;
        ((chx * cyy - chy * cxy) / det, (cxx * chy - cxy * chx) / det)
    } else if l1 >= min_var {
        // Along the principal direction u only: the slope along it is (c·u) / (l1 |u|²) per
        // unit of u, so u needs no normalising (a square root and two divisions less, in the
        // robust fits' loop; u's squares stay normal numbers).
        let (ux, uy) = if cxy.abs() > 1e-150 {
            (l1 - cyy, cxy)
        } else if cxx >= cyy {
            (1.0, 0.0)
        } else {
            (0.0, 1.0)
        };
        let b = (chx * ux + chy * uy) / (l1 * (ux * ux + uy * uy));
        (b * ux, b * uy)
    } else {
        (0.0, 0.0)
    };
    let a = mh - bx * mx - by * my;
    (a.is_finite() && bx.is_finite() && by.is_finite()).then_some([a, bx, by])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn residual_variance_corrects_for_the_effective_number_of_points() {
        // n points of weight w: n_eff = n, and the variance is Σ w res² / Σ w · n / (n - 2).
        for n in [1.0f64, 2.0, 2.5, 3.0, 8.0, 40.0] {
            let (w, res2) = (0.37, 1.3e-6);
            let want = res2 * n / (n - 2.0).max(1.0);
            let got = residual_variance(n * w, n * w * w, n * w * res2);
            assert!((got - want).abs() <= 1e-12 * want, "n {n}: {got} vs {want}");
        }
    }

    #[test]
    fn a_single_scan_line_gives_no_slope_across_it() {
        // Points of one profile 1 cm from the node, x rounded to the millimetre (so it varies by
        // ±0.5 mm), heights rising along the line with a 3 % crossfall.
        let mut w: Vec<[f32; 3]> = (0..40)
            .map(|i| {
                let y = -0.02 + i as f32 * 0.001;
                let x = -0.01 + if i % 3 == 0 { 0.0005 } else { -0.0004 };
                [x, y, 0.03 * y + if i % 2 == 0 { 0.0002 } else { -0.0002 }]
            })
            .collect();
        // From the median of the five nearest points, as a block's robust fit starts.
        let fit = |w: &mut [[f32; 3]]| {
            let mut disc = Disc::default();
            let (w, radius, start) = nearest(w, 0.025, 48).unwrap_or_default();
            disc.pack(w, start as f32);
            disc.fit(radius, 0.008, start).map_or(f64::NAN, |f| f.h)
        };
        let h = fit(&mut w);
        assert!(h.abs() < 1e-3, "height at the node {h}");
        // A plane through points spread in both directions is fitted exactly.
        let mut w: Vec<[f32; 3]> = (0..100)
            .map(|i| {
                let (x, y) = ((i % 10) as f32 * 0.004 - 0.018, (i / 10) as f32 * 0.004 - 0.018);
                [x, y, 0.01 + 0.05 * x - 0.03 * y]
            })
            .collect();
        let h = fit(&mut w);
        assert!((h - 0.01).abs() < 1e-5, "{h}");
    }

    #[test]
    fn where_the_disc_is_not_smooth_the_nearest_points_side_of_an_edge_counts() {
        // The node on a ridge 12 mm wide (|y| < 6 mm), 12 mm above what lies either side of it
        // (most of the disc), points every 4 mm (whole millimetres: the grid is symmetric, and
        // the six nearest, at most 5.7 mm away, all lie on the ridge), ±0.5 mm of noise.
        let noise = |i: usize| ((i * 7919) % 11) as f32 / 10.0 * 0.001 - 0.0005;
        let mut w: Vec<[f32; 3]> = (0..169)
            .map(|i| {
                let mm = |k: usize| (k as i32 * 4 - 24) as f32 / 1000.0;
                let (x, y) = (mm(i % 13), mm(i / 13));
                [x, y, if y.abs() < 0.006 { 0.0 } else { -0.012 } + noise(i)]
            })
            .filter(|p| within(p, 0.025))
            .collect();
        let mut all: Vec<f32> = w.iter().map(|p| p[2]).collect();
        assert!(median(&mut all).is_some_and(|m| m < -0.006), "the disc lies mostly off the ridge");
        let h = near_median(w.iter().copied()).unwrap_or(f32::NAN);
        assert!(h.abs() < 1e-3, "{h}");
        // Two of the six nearest 3 cm off (a leaf below the envelope's layer, a multipath
        // point): ignored.
        for p in w.iter_mut() {
            if p[0] == 0.0 && p[1] == 0.0 {
                p[2] += 0.03;
            } else if p[0] == 0.004 && p[1] == 0.0 {
                p[2] -= 0.03;
            }
        }
        let h = near_median(w.iter().copied()).unwrap_or(f32::NAN);
        assert!(h.abs() < 1e-3, "{h}");
        assert_eq!(near_median(w[..2].iter().copied()), None);
        assert!(near_median(w[..3].iter().copied()).is_some());
    }

    #[test]
    fn floor_and_round_index_are_the_library_s() {
        let mut v = vec![0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994];
        v.extend([1e15 + 0.5, -1e15 - 0.5, 4503599627370495.5, -4503599627370495.5, 1e300, -1e300]);
        // Scaled coordinates as the gridding makes them, on and around half-integers.
        for k in -20_000..20_000 {
            let x = k as f64 * 0.01 / 0.01 + 0.5;
            v.extend([x, f64::from_bits(x.to_bits() + 1), f64::from_bits(x.to_bits() - 1), k as f64 * 0.0137 / 0.05]);
        }
        for x in v {
            assert_eq!(floor(x), x.floor(), "floor {x}");
            let want = if x.abs() < INTEGRAL { x.round() as i64 } else { i64::MIN };
            assert_eq!(round_index(x), want, "round {x}");
        }
        assert!(floor(f64::NAN).is_nan() && round_index(f64::NAN) == i64::MIN);
        assert_eq!(floor(f64::INFINITY), f64::INFINITY);
    }
}
