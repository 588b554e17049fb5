//! The noise of a polyline and its outliers, before the fit.
//!
//! The noise σ is estimated from 4-point stencils: in a local frame (x along the chord of
//! four consecutive vertices), the third divided difference of the lateral coordinate
//! annihilates every quadratic, so on a smooth road it is noise alone (a clothoid leaves
//! ~κ·κ'·h⁴); normalised to unit gain it is N(0, σ²), and the median of its magnitude (MAD)
//! ignores outliers and the few stencils across a curvature jump.
//!
//! Outliers are vertices far from a robust local fit: a quadratic in the frame of a window of
//! vertices either side (about 1.5 m), fitted by iteratively reweighted least squares with
//! Tukey's biweight. The fit also gives each vertex's foot on the local estimate of the true
//! line (its smoothed position), from which the first reference of the fit is built.

/// What the noise analysis found.
#[derive(Debug, Clone)]
pub(super) struct Cleaned {
    /// Estimated standard deviation of the vertices' lateral noise, m.
    pub sigma: f64,
    /// Per vertex: false for an outlier.
    pub keep: Vec<bool>,
    /// Per vertex: its foot on the robust local fit.
    pub smooth: Vec<[f64; 2]>,
    /// Per vertex: the direction of the road there (unit; along its window's chord).
    pub tangent: Vec<[f64; 2]>,
}

/// Tukey's biweight constant (95 % efficiency at the normal).
const TUKEY: f64 = 4.685;

/// Robust σ of the vertices `q` where `keep` (0 if fewer than four).
pub(super) fn sigma(q: &[[f64; 2]], keep: &[bool]) -> f64 {
    let idx: Vec<usize> = (0..q.len()).filter(|&i| keep[i]).collect();
    let mut vals: Vec<f64> = Vec::with_capacity(idx.len());
    for w in idx.windows(4) {
        let p = [q[w[0]], q[w[1]], q[w[2]], q[w[3]]];
        let (dx, dy) = (p[3][0] - p[0][0], p[3][1] - p[0][1]);
        let len = dx.hypot(dy);
        if len < 1e-9 {
            continue;
        }
        let (t, n) = ([dx / len, dy / len], [-dy / len, dx / len]);
        let uv = p.map(|a| {
            let d = [a[0] - p[0][0], a[1] - p[0][1]];
            (d[0] * t[0] + d[1] * t[1], d[0] * n[0] + d[1] * n[1])
        });
        vals.extend(third_difference(uv.map(|x| x.0), uv.map(|x| x.1)).map(f64::abs));
    }
    median(&mut vals) * 1.4826
}

/// Robust σ of the noise of a profile's values `y` at stations `s` (ascending), from the
/// same stencils as [`sigma`] (0 if fewer than four samples): over four samples a smooth
/// profile is a parabola to far below a millimetre, which the stencil annihilates.
pub(super) fn profile_sigma(s: &[f64], y: &[f64]) -> f64 {
    let n = s.len().min(y.len());
    let mut vals: Vec<f64> = Vec::with_capacity(n.saturating_sub(3));
    for i in 0..n.saturating_sub(3) {
        let u = [s[i], s[i + 1], s[i + 2], s[i + 3]].map(|x| x - s[i]);
        vals.extend(third_difference(u, [y[i], y[i + 1], y[i + 2], y[i + 3]]).map(f64::abs));
    }
    median(&mut vals) * 1.4826
}

/// The third divided difference of four samples (v at u), scaled to unit gain on independent
/// noise: N(0, σ²) for noise of σ on v, zero on any quadratic. None where two u coincide.
fn third_difference(u: [f64; 4], v: [f64; 4]) -> Option<f64> {
    // Coefficients of the third divided difference: 1 / Π_{k≠j} (u_j - u_k).
    let mut c = [0.0; 4];
    for j in 0..4 {
        let mut prod = 1.0;
        for k in 0..4 {
            if k != j {
                prod *= u[j] - u[k];
            }
        }
        if prod.abs() < 1e-18 {
            return None;
        }
        c[j] = 1.0 / prod;
    }
    let norm = c.iter().map(|v| v * v).sum::<f64>().sqrt();
    let d: f64 = (0..4).map(|j| c[j] * v[j]).sum::<f64>() / norm;
    d.is_finite().then_some(d)
}

/// The median of `v` (reordered), 0 if empty.
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    let mid = v.len() / 2;
    let (_, m, _) = v.select_nth_unstable_by(mid, f64::total_cmp);
    *m
}

/// Noise, outliers and smoothed vertices of `q` (distinct, in order) for a fit within `tol`.
/// A vertex is an outlier when it lies more than max(6σ, 2.5·tol) from the robust local fit
/// of its neighbours.
pub(super) fn clean(q: &[[f64; 2]], tol: f64) -> Cleaned {
    let n = q.len();
    let all = vec![true; n];
    let sigma0 = sigma(q, &all);
    let mut keep = all;
    let mut smooth = q.to_vec();
    // Until the local fits say better: along the chords.
    let mut tangent: Vec<[f64; 2]> = (0..n)
        .map(|i| {
            let (a, b) = (q[i.saturating_sub(1)], q[(i + 1).min(n - 1)]);
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let l = dx.hypot(dy).max(1e-12);
            [dx / l, dy / l]
        })
        .collect();
    if n < 7 {
        return Cleaned { sigma: sigma0, keep, smooth, tangent };
    }
    // Half window: about 1.5 m of vertices, 4 to 15.
    let mut chords: Vec<f64> = q.windows(2).map(|w| (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1])).collect();
    let spacing = median(&mut chords).max(1e-6);
    let m = ((1.5 / spacing).ceil() as usize).clamp(5, 15);
    // A vertex is an outlier beyond six times the noise or the spread of its window's
    // residuals (a quadratic misses a curvature jump at every vertex near it, an outlier at
    // one), and beyond half the tolerance. Sparse polylines (design vertices, not a survey)
    // keep every vertex.
    if spacing > 5.0 {
        return Cleaned { sigma: sigma0, keep, smooth, tangent };
    }
    let limit = |scale: f64| 6.0 * scale.max(sigma0) + 0.5 * tol;
    let floor = sigma0.max(0.05 * tol);
    // First from all neighbours; then the suspects again, each from a start without the
    // other suspects (an outlier at the edge of a window can pull a small fit its way).
    let mut suspect = vec![false; n];
    for (i, sus) in suspect.iter_mut().enumerate() {
        if let Some((e, nrm, spread)) = local_fit(q, i, m, floor, |_| 1.0) {
            smooth[i] = [q[i][0] - e * nrm[0], q[i][1] - e * nrm[1]];
            tangent[i] = [nrm[1], -nrm[0]];
            *sus = e.abs() > limit(spread);
        }
    }
    for i in 0..n {
        if !suspect[i] {
            continue;
        }
        let fit = local_fit(q, i, m, floor, |j| if suspect[j] { 0.0 } else { 1.0 });
        if let Some((e, nrm, spread)) = fit {
            smooth[i] = [q[i][0] - e * nrm[0], q[i][1] - e * nrm[1]];
            keep[i] = e.abs() <= limit(spread);
        }
    }
    // Vertices beside an outlier: their feet from fits without the outliers.
    let near: Vec<usize> = (0..n).filter(|&i| !keep[i]).collect();
    for i in 0..n {
        let (a, b) = (i.saturating_sub(m), i + m);
        let from = near.partition_point(|&j| j < a);
        if keep[i] && near.get(from).is_some_and(|&j| j <= b) {
            if let Some((e, nrm, _)) = local_fit(q, i, m, floor, |j| if keep[j] { 1.0 } else { 0.0 }) {
                smooth[i] = [q[i][0] - e * nrm[0], q[i][1] - e * nrm[1]];
            }
        }
    }
    // The noise again without the outliers.
    let sigma = if keep.iter().all(|&k| k) { sigma0 } else { sigma(q, &keep) };
    Cleaned { sigma, keep, smooth, tangent }
}

/// The offset of vertex `i` from a robust quadratic fit of the `m` vertices either side of
/// it (and itself) in the frame of the window's chord, with the chord's normal and the
/// robust spread (1.4826 MAD) of the other vertices' offsets; starting weights from `w0`
/// (by vertex index), Tukey's biweight with a scale of at least `floor`.
fn local_fit(
    q: &[[f64; 2]],
    i: usize,
    m: usize,
    floor: f64,
    w0: impl Fn(usize) -> f64,
) -> Option<(f64, [f64; 2], f64)> {
    let n = q.len();
    let width = (2 * m + 1).min(n);
    let lo = i.saturating_sub(m).min(n - width);
    let hi = lo + width - 1;
    let (dx, dy) = (q[hi][0] - q[lo][0], q[hi][1] - q[lo][1]);
    let len = dx.hypot(dy);
    if len < 1e-9 {
        return None;
    }
    let (t, nrm) = ([dx / len, dy / len], [-dy / len, dx / len]);
    let mut u = Vec::with_capacity(width);
    let mut v = Vec::with_capacity(width);
    for p in &q[lo..=hi] {
        let d = [p[0] - q[i][0], p[1] - q[i][1]];
        u.push(d[0] * t[0] + d[1] * t[1]);
        v.push(d[0] * nrm[0] + d[1] * nrm[1]);
    }
    let mut w: Vec<f64> = (lo..=hi).map(w0).collect();
    // A robust start (least median of squares over quadratics through three of seven
    // vertices spread over the window): two outliers in a small window would mask each
    // other in a least-squares start.
    let mut r = Vec::with_capacity(width);
    let pos: Vec<usize> = (0..7).map(|j| j * (width - 1) / 6).collect();
    let mut start: Option<([f64; 3], f64)> = None;
    for a in 0..7 {
        for b in a + 1..7 {
            for c in b + 1..7 {
                let idx = [pos[a], pos[b], pos[c]];
                if pos[c] - pos[a] < (width - 1) / 2 || idx.iter().any(|&j| w[j] == 0.0) {
                    continue;
                }
                let (uu, vv) = (idx.map(|j| u[j]), idx.map(|j| v[j]));
                let Some(cf) = quadratic(&uu, &vv, &[1.0; 3]) else { continue };
                r.clear();
                r.extend(
                    (0..width)
                        .filter(|&j| w[j] > 0.0)
                        .map(|j| (v[j] - (cf[0] + cf[1] * u[j] + cf[2] * u[j] * u[j])).abs()),
                );
                let med = median(&mut r);
                if start.is_none_or(|(_, m)| med < m) {
                    start = Some((cf, med));
                }
            }
        }
    }
    if let Some((c, med)) = start {
        let scale = (1.4826 * med).max(floor);
        for j in 0..width {
            let z = (v[j] - (c[0] + c[1] * u[j] + c[2] * u[j] * u[j])).abs() / (TUKEY * scale);
            w[j] = if w[j] > 0.0 && z < 1.0 { (1.0 - z * z).powi(2) } else { 0.0 };
        }
    }
    let mut coef = None;
    for _ in 0..5 {
        let Some(c) = quadratic(&u, &v, &w) else { break };
        coef = Some(c);
        r.clear();
        r.extend(u.iter().zip(&v).map(|(&a, &b)| (b - (c[0] + c[1] * a + c[2] * a * a)).abs()));
        let mut used: Vec<f64> = r.iter().zip(&w).filter(|(_, &wj)| wj > 0.0).map(|(&rj, _)| rj).collect();
        let scale = (1.4826 * median(&mut used)).max(floor);
        for (wj, rj) in w.iter_mut().zip(&r) {
            let z = rj / (TUKEY * scale);
            *wj = if z < 1.0 { (1.0 - z * z).powi(2) } else { 0.0 };
        }
    }
    // u = 0 is the vertex itself.
    let c = coef?;
    let k = i - lo;
    let e = v[k] - (c[0] + c[1] * u[k] + c[2] * u[k] * u[k]);
    let mut others: Vec<f64> = (0..width).filter(|&j| j != k).map(|j| r[j]).collect();
    let spread = 1.4826 * median(&mut others);
    (e.is_finite() && spread.is_finite()).then_some((e, nrm, spread))
}

/// Weighted least-squares v = c0 + c1·u + c2·u² (None if singular).
fn quadratic(u: &[f64], v: &[f64], w: &[f64]) -> Option<[f64; 3]> {
    let mut a = [[0.0; 3]; 3];
    let mut b = [0.0; 3];
    for ((&x, &y), &wt) in u.iter().zip(v).zip(w) {
        if wt == 0.0 {
            continue;
        }
        let f = [1.0, x, x * x];
        for p in 0..3 {
            for q in 0..3 {
                a[p][q] += wt * f[p] * f[q];
            }
            b[p] += wt * f[p] * y;
        }
    }
    // Cramer's rule on the 3 x 3 system.
    let d = crate::num::det3(&a);
    let scale = a[0][0] * a[1][1] * a[2][2];
    if d.is_nan() || d.abs() <= 1e-12 * scale.abs() || d == 0.0 {
        return None;
    }
    let out = crate::num::cramer3(&a, &b, d);
    out.iter().all(|x| x.is_finite()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gauss(state: &mut u64) -> f64 {
        let mut uni = || {
            *state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            ((*state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let (a, b) = (uni(), uni());
        (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
    }

    #[test]
    fn noise_is_estimated_and_outliers_found_on_an_arc() {
        // Radius 80 m, every 0.5 m, 3 mm noise in x and y, every 50th vertex 0.5 m off.
        let mut st = 9u64;
        let mut q: Vec<[f64; 2]> = (0..400)
            .map(|i| {
                let a = i as f64 * 0.5 / 80.0;
                [80.0 * a.sin() + 0.003 * gauss(&mut st), 80.0 - 80.0 * a.cos() + 0.003 * gauss(&mut st)]
            })
            .collect();
        for i in (25..400).step_by(50) {
            q[i][1] += 0.5;
        }
        let c = clean(&q, 0.01);
        assert!((c.sigma - 0.003).abs() < 0.0006, "sigma {}", c.sigma);
        let out: Vec<usize> = (0..q.len()).filter(|&i| !c.keep[i]).collect();
        assert_eq!(out, (25..400).step_by(50).collect::<Vec<_>>());
        // Noise-free: σ about zero, nothing rejected.
        let q: Vec<[f64; 2]> = (0..400)
            .map(|i| {
                let a = i as f64 * 0.5 / 80.0;
                [80.0 * a.sin(), 80.0 - 80.0 * a.cos()]
            })
            .collect();
        let c = clean(&q, 0.01);
        assert!(c.sigma < 1e-6 && c.keep.iter().all(|&k| k), "sigma {}", c.sigma);
    }
}
