//! Pass registration (strip adjustment in height): the trajectory's vertical error as a smooth
//! function of GPS time, estimated where the survey saw the same ground twice, and taken off
//! every point.
//!
//! A mobile survey's points carry the error of the GNSS/IMU trajectory at the time they were
//! measured: centimetres on a real road, wandering over tens of seconds. Two passes over the
//! same road then disagree by the difference of their errors, and a 1 cm grid that mixes them
//! gets steps and ridges where one pass gives way to the other. The difference is observable;
//! the error both passes share is not (it is the trajectory's absolute error).
//!
//! # Observations
//! Map (x, y) is cut into cells of `cell` (0.25 m); one cell in `stride` along x and along y
//! (one in 16) is sampled; past [`MAX_CELLS`] sampled cells the stride doubles and every
//! second row and column of them goes, so memory is bounded whatever the survey's size. In a
//! sampled cell the points fall into visits (times more than `visit_gap`, 1 s, apart start a new one), each
//! keeping a deterministic reservoir of `per_visit` (16) points. A cell seen in two or more
//! visits gets one robust fit: a plane shared by the visits with a height of its own for each
//! (Tukey's biweight, reweighted from the visits' medians). Cells that are not smooth ground
//! (residual scale over 1 cm: foliage, walls, people, cars) or where a visit keeps fewer than
//! six inliers give nothing; the others give, for each pair of visits, the difference of their
//! heights at the two visits' mean times.
//!
//! # The error function
//! dz(t) is linear between knots every `knot` seconds (2 s; coarser when the survey is so long
//! that there would be more than [`MAX_KNOTS`]). It minimises the weighted squared misfit of
//! the observations, dz(t1) - dz(t2) = d, plus `smoothness` times the squared second
//! differences of the knots (a prior of 0.1 mm per knot against the observations' 1 mm: the
//! trajectory's error does not turn within seconds), plus a tiny pull of every knot to zero that
//! fixes the level nobody can observe: what two passes disagree by is split between them.
//! Three rounds reweight the observations by Tukey's biweight (moving cars, changed ground).
//! Outside the observed times dz is the nearest knot's.

use std::collections::HashMap;

/// Knots of the error function at most (the normal equations are dense).
pub const MAX_KNOTS: usize = 800;

/// How the registration samples and solves.
#[derive(Debug, Clone, Copy)]
pub struct RegistrationOptions {
    /// Cell size in map x and y, m.
    pub cell: f64,
    /// One cell in this many along x and along y is sampled.
    pub stride: i64,
    /// Points kept per visit of a cell.
    pub per_visit: usize,
    /// A pause of the points in a cell longer than this starts a new visit, s.
    pub visit_gap: f64,
    /// Knot spacing of the error function, s.
    pub knot: f64,
    /// Weight of the knots' squared second differences against an observation's squared misfit.
    pub smoothness: f64,
    /// Observations needed to register at all.
    pub min_observations: usize,
    /// Sampled cells at most (see [`MAX_CELLS`]).
    pub max_cells: usize,
}

impl Default for RegistrationOptions {
    fn default() -> Self {
        RegistrationOptions {
            cell: 0.25,
            stride: 4,
            per_visit: 16,
            visit_gap: 1.0,
            knot: 2.0,
            smoothness: 100.0,
            min_observations: 50,
            max_cells: MAX_CELLS,
        }
    }
}

/// One visit of a sampled cell: its time span and a reservoir of its points.
#[derive(Debug, Clone)]
struct Visit {
    t_min: f64,
    t_max: f64,
    t_sum: f64,
    seen: u64,
    /// x and y relative to the cell's corner, z relative to the cell's first point.
    points: Vec<[f32; 3]>,
}

/// A sampled cell: the height its points are stored from, and its visits.
#[derive(Debug, Clone, Default)]
struct Cell {
    z0: f64,
    visits: Vec<Visit>,
}

/// Sampled cells at most: past it, every second row and column of them goes (the sampling
/// stride doubles), so memory stays bounded however large the survey (about 30 MB).
pub const MAX_CELLS: usize = 65_536;

/// Visits of one cell at most (more are a vehicle standing or circling; they are not needed).
const MAX_VISITS: usize = 6;

/// The sampled cells' visits, gathered from the points.
#[derive(Debug, Clone)]
pub struct Overlaps {
    opts: RegistrationOptions,
    cells: HashMap<(i64, i64), Cell>,
    /// The sampling stride now (the options' doubled each time the cells overflowed).
    stride: i64,
    points: u64,
}

/// The trajectory's vertical error as a function of GPS time, and what it was found from.
#[derive(Debug, Clone, PartialEq)]
pub struct Registration {
    /// Time of the first knot, s (GPS time as in the files).
    pub t0: f64,
    /// Knot spacing, s.
    pub dt: f64,
    /// The error at each knot, m (subtracted from the points' z).
    pub dz: Vec<f64>,
    /// Pairs of visits compared (cells seen twice or more, on smooth ground).
    pub observations: usize,
    /// Of those, kept by the robust fit.
    pub kept: usize,
    /// RMS disagreement of the kept pairs before the correction, m.
    pub rms_before: f64,
    /// And after it, m.
    pub rms_after: f64,
}

impl Overlaps {
    /// No visits yet, sampling as `opts` say.
    pub fn new(opts: RegistrationOptions) -> Overlaps {
        Overlaps { opts, cells: HashMap::new(), stride: opts.stride.max(1), points: 0 }
    }

    /// Offers points (map x, y, z in metres and GPS time in seconds; points without a finite
    /// time or position are passed over). The order of the points decides the reservoirs, so
    /// the same points in the same order give the same registration.
    pub fn add(&mut self, x: &[f64], y: &[f64], z: &[f64], t: &[f64]) {
        let o = self.opts;
        let n = x.len().min(y.len()).min(z.len()).min(t.len());
        for i in 0..n {
            let (px, py, pz, pt) = (x[i], y[i], z[i], t[i]);
            if !(px.is_finite() && py.is_finite() && pz.is_finite() && pt.is_finite()) {
                continue;
            }
            let (fx, fy) = ((px / o.cell).floor(), (py / o.cell).floor());
            if fx.abs() > 1e15 || fy.abs() > 1e15 {
                continue;
            }
            let (ix, iy) = (fx as i64, fy as i64);
            if ix.rem_euclid(self.stride) != 0 || iy.rem_euclid(self.stride) != 0 {
                continue;
            }
            if self.cells.len() >= o.max_cells && !self.cells.contains_key(&(ix, iy)) {
                self.stride *= 2;
                let stride = self.stride;
                self.cells.retain(|&(x, y), _| x.rem_euclid(stride) == 0 && y.rem_euclid(stride) == 0);
                if ix.rem_euclid(stride) != 0 || iy.rem_euclid(stride) != 0 {
                    continue;
                }
            }
            self.points += 1;
            let cell = self.cells.entry((ix, iy)).or_insert_with(|| Cell { z0: pz, visits: Vec::new() });
            let z0 = cell.z0;
            let visits = &mut cell.visits;
            let at = visits.iter().position(|v| pt >= v.t_min - o.visit_gap && pt <= v.t_max + o.visit_gap);
            let v = match at {
                Some(k) => &mut visits[k],
                None if visits.len() < MAX_VISITS => {
                    visits.push(Visit { t_min: pt, t_max: pt, t_sum: 0.0, seen: 0, points: Vec::new() });
                    let k = visits.len() - 1;
                    &mut visits[k]
                }
                None => continue,
            };
            v.t_min = v.t_min.min(pt);
            v.t_max = v.t_max.max(pt);
            v.t_sum += pt;
            v.seen += 1;
            let p = [(px - fx * o.cell) as f32, (py - fy * o.cell) as f32, (pz - z0) as f32];
            if v.points.len() < o.per_visit {
                v.points.push(p);
            } else {
                // Reservoir sampling with a hash of the cell and the count: deterministic.
                let j =
                    mix(ix as u64 ^ (iy as u64).rotate_left(32) ^ v.seen.wrapping_mul(0x9e37_79b9_7f4a_7c15)) % v.seen;
                if (j as usize) < o.per_visit {
                    v.points[j as usize] = p;
                }
            }
        }
    }

    /// Points that fell in sampled cells.
    pub fn sampled(&self) -> u64 {
        self.points
    }

    /// Cells sampled now.
    pub fn cells(&self) -> usize {
        self.cells.len()
    }

    /// The registration, or None where the points never saw the same ground twice (one pass,
    /// no GPS time) in enough smooth cells.
    pub fn solve(self) -> Option<Registration> {
        let o = self.opts;
        let mut keys: Vec<&(i64, i64)> = self.cells.keys().collect();
        keys.sort_unstable();
        // (t1, t2, d): dz(t1) - dz(t2) = d.
        let mut obs: Vec<(f64, f64, f64)> = Vec::new();
        for k in keys {
            let visits = &self.cells[k].visits;
            if visits.len() < 2 {
                continue;
            }
            if let Some(heights) = cell_heights(visits, o.cell) {
                for a in 0..heights.len() {
                    for b in a + 1..heights.len() {
                        let ((ta, za), (tb, zb)) = (heights[a], heights[b]);
                        if let (Some(za), Some(zb)) = (za, zb) {
                            if (ta - tb).abs() > o.visit_gap && (za - zb).is_finite() {
                                obs.push((ta, tb, za - zb));
                            }
                        }
                    }
                }
            }
        }
        if obs.len() < o.min_observations {
            return None;
        }
        let (lo, hi) = obs
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &(a, b, _)| (l.min(a).min(b), h.max(a).max(b)));
        let span = hi - lo;
        if !span.is_finite() {
            return None;
        }
        let dt = o.knot.max(span / (MAX_KNOTS - 1) as f64);
        let n = ((span / dt).ceil() as usize + 1).max(2);
        let mut weights = vec![1.0; obs.len()];
        let mut c = vec![0.0; n];
        let residuals = |c: &[f64]| -> Vec<f64> {
            obs.iter().map(|&(a, b, d)| eval(c, lo, dt, a) - eval(c, lo, dt, b) - d).collect::<Vec<f64>>()
        };
        for round in 0..4 {
            c = solve_knots(&obs, &weights, lo, dt, n, o.smoothness)?;
            if round == 3 {
                break;
            }
            let r = residuals(&c);
            let scale = (1.4826 * median(r.iter().map(|v| v.abs()).collect())).max(2e-4);
            for (w, v) in weights.iter_mut().zip(&r) {
                let u = v / (4.685 * scale);
                *w = if u.abs() < 1.0 { (1.0 - u * u).powi(2) } else { 0.0 };
            }
        }
        let r = residuals(&c);
        let kept: Vec<usize> = (0..obs.len()).filter(|&i| weights[i] > 0.0).collect();
        if kept.len() < o.min_observations {
            return None;
        }
        let rms = |v: &mut dyn Iterator<Item = f64>| {
            let (s, k) = v.fold((0.0, 0usize), |(s, k), x| (s + x * x, k + 1));
            (s / k.max(1) as f64).sqrt()
        };
        let rms_before = rms(&mut kept.iter().map(|&i| obs[i].2));
        let rms_after = rms(&mut kept.iter().map(|&i| r[i]));
        Some(Registration { t0: lo, dt, dz: c, observations: obs.len(), kept: kept.len(), rms_before, rms_after })
    }
}

impl Registration {
    /// The error at time `t` (the nearest knot's outside them; 0 for a time that is not finite).
    pub fn dz_at(&self, t: f64) -> f64 {
        if !t.is_finite() {
            return 0.0;
        }
        eval(&self.dz, self.t0, self.dt, t)
    }

    /// Takes the error off heights `z` of points at times `t`.
    pub fn apply(&self, z: &mut [f64], t: &[f64]) {
        for (z, &t) in z.iter_mut().zip(t) {
            *z -= self.dz_at(t);
        }
    }

    /// The largest correction, m.
    pub fn max_abs(&self) -> f64 {
        self.dz.iter().fold(0.0, |m, v| m.max(v.abs()))
    }
}

/// A 64-bit mix (SplitMix64's finaliser).
fn mix(mut v: u64) -> u64 {
    v ^= v >> 30;
    v = v.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    v ^= v >> 27;
    v = v.wrapping_mul(0x94d0_49bb_1331_11eb);
    v ^ (v >> 31)
}

fn median(mut v: Vec<f64>) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    }
}

/// The piecewise linear function of knots `c` (from `t0`, every `dt`) at `t`.
fn eval(c: &[f64], t0: f64, dt: f64, t: f64) -> f64 {
    let (k, f) = locate(c.len(), t0, dt, t);
    c[k] * (1.0 - f) + c[(k + 1).min(c.len() - 1)] * f
}

/// The knot at or before `t` and the fraction to the next (clamped to the knots).
fn locate(n: usize, t0: f64, dt: f64, t: f64) -> (usize, f64) {
    let u = ((t - t0) / dt).clamp(0.0, (n - 1) as f64);
    let k = (u.floor() as usize).min(n.saturating_sub(2));
    (k, (u - k as f64).clamp(0.0, 1.0))
}

/// Heights of each visit of a cell at the cell's centre (with its mean time), from one robust
/// plane shared by the visits; None for the whole cell where it is not smooth ground, None for
/// a visit with too few inliers.
#[allow(clippy::type_complexity)]
fn cell_heights(visits: &[Visit], cell: f64) -> Option<Vec<(f64, Option<f64>)>> {
    const MIN_POINTS: usize = 8;
    let used: Vec<&Visit> = visits.iter().filter(|v| v.points.len() >= MIN_POINTS).collect();
    let pts: Vec<Vec<[f64; 3]>> = used.iter().map(|v| v.points.iter().map(|q| q.map(f64::from)).collect()).collect();
    if used.len() < 2 {
        return None;
    }
    let m = used.len();
    // Unknowns: one height per visit, then the slopes along x and y (about the centre).
    let mut p: Vec<f64> = pts.iter().map(|v| median(v.iter().map(|q| q[2]).collect())).collect();
    p.extend([0.0, 0.0]);
    let h = 0.5 * cell;
    let mut scale = 0.0;
    let mut weights: Vec<Vec<f64>> = pts.iter().map(|v| vec![1.0; v.len()]).collect();
    for round in 0..5 {
        // Residuals of the current fit, their scale, the biweights.
        let mut all = Vec::new();
        for (j, v) in pts.iter().enumerate() {
            for q in v {
                all.push((q[2] - p[j] - p[m] * (q[0] - h) - p[m + 1] * (q[1] - h)).abs());
            }
        }
        scale = (1.4826 * median(all)).max(5e-4);
        if round > 0 || scale < 0.05 {
            for (j, v) in pts.iter().enumerate() {
                for (w, q) in weights[j].iter_mut().zip(v) {
                    let r = q[2] - p[j] - p[m] * (q[0] - h) - p[m + 1] * (q[1] - h);
                    let u = r / (4.685 * scale);
                    *w = if u.abs() < 1.0 { (1.0 - u * u).powi(2) } else { 0.0 };
                }
            }
        }
        // Weighted least squares for the m + 2 unknowns.
        let k = m + 2;
        let mut a = vec![0.0; k * k];
        let mut b = vec![0.0; k];
        for (j, v) in pts.iter().enumerate() {
            for (w, q) in weights[j].iter().zip(v) {
                if *w == 0.0 {
                    continue;
                }
                let (dx, dy) = (q[0] - h, q[1] - h);
                let row = [(j, 1.0), (m, dx), (m + 1, dy)];
                for &(r1, v1) in &row {
                    b[r1] += w * v1 * q[2];
                    for &(r2, v2) in &row {
                        a[r1 * k + r2] += w * v1 * v2;
                    }
                }
            }
        }
        for d in 0..k {
            a[d * k + d] += 1e-9;
        }
        p = cholesky_solve(&mut a, &mut b, k)?;
    }
    if scale.is_nan() || scale > 0.01 || p.iter().any(|v| !v.is_finite()) {
        return None;
    }
    Some(
        used.iter()
            .enumerate()
            .map(|(j, v)| {
                let inliers = weights[j].iter().filter(|w| **w > 0.0).count();
                (v.t_sum / v.seen as f64, (inliers >= 6).then_some(p[j]))
            })
            .collect(),
    )
}

/// The knots minimising the weighted misfit, the smoothness penalty and a tiny pull to zero.
fn solve_knots(obs: &[(f64, f64, f64)], w: &[f64], t0: f64, dt: f64, n: usize, smooth: f64) -> Option<Vec<f64>> {
    let mut a = vec![0.0; n * n];
    let mut b = vec![0.0; n];
    for (&(t1, t2, d), &w) in obs.iter().zip(w) {
        if w == 0.0 {
            continue;
        }
        let (k1, f1) = locate(n, t0, dt, t1);
        let (k2, f2) = locate(n, t0, dt, t2);
        let terms = [(k1, 1.0 - f1), ((k1 + 1).min(n - 1), f1), (k2, -(1.0 - f2)), ((k2 + 1).min(n - 1), -f2)];
        for &(i, vi) in &terms {
            b[i] += w * vi * d;
            for &(j, vj) in &terms {
                a[i * n + j] += w * vi * vj;
            }
        }
    }
    for k in 1..n.saturating_sub(1) {
        let terms = [(k - 1, 1.0), (k, -2.0), (k + 1, 1.0)];
        for &(i, vi) in &terms {
            for &(j, vj) in &terms {
                a[i * n + j] += smooth * vi * vj;
            }
        }
    }
    for k in 0..n {
        a[k * n + k] += 1e-3;
    }
    cholesky_solve(&mut a, &mut b, n)
}

/// Solves the symmetric positive definite `a` (n x n, row-major, overwritten) x = `b`.
fn cholesky_solve(a: &mut [f64], b: &mut [f64], n: usize) -> Option<Vec<f64>> {
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= a[j * n + k] * a[j * n + k];
        }
        if d.is_nan() || d <= 0.0 || !d.is_finite() {
            return None;
        }
        let d = d.sqrt();
        a[j * n + j] = d;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = s / d;
        }
    }
    for i in 0..n {
        let mut s = b[i];
        for k in 0..i {
            s -= a[i * n + k] * b[k];
        }
        b[i] = s / a[i * n + i];
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for k in i + 1..n {
            s -= a[k * n + i] * b[k];
        }
        b[i] = s / a[i * n + i];
    }
    Some(b.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two passes over a sloped plane with a textured surface, the second with a smooth error
    /// of up to 3 mm: the registration takes the difference off to within 0.3 mm, splitting it
    /// between the passes; one pass alone gives nothing to register.
    #[test]
    fn two_passes_over_the_same_ground_are_brought_together() {
        let err = |t: f64| if t > 100.0 { 0.003 * ((t - 100.0) / 12.0).sin() } else { 0.0 };
        let ground = |x: f64, y: f64| 0.02 * x + 0.01 * y + 0.0008 * ((x * 37.0).sin() + (y * 53.0).cos());
        let mut pts = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut push = |x: f64, y: f64, t: f64, noise: f64| {
            pts.0.push(x);
            pts.1.push(y);
            pts.2.push(ground(x, y) + err(t) + noise);
            pts.3.push(t);
        };
        // Pass 1 along x at 10 m/s, profiles every 5 cm, points every 2 cm across 8 m; pass 2
        // back the other way 100 s later.
        let mut k = 0u64;
        for pass in 0..2 {
            for i in 0..2000 {
                let x = if pass == 0 { i as f64 * 0.05 } else { 100.0 - i as f64 * 0.05 };
                let t = pass as f64 * 100.0 + i as f64 * 0.005;
                for j in 0..400 {
                    k += 1;
                    let noise = 0.002 * ((mix(k) % 2001) as f64 / 1000.0 - 1.0);
                    push(x, j as f64 * 0.02, t, noise);
                }
            }
        }
        let mut o = Overlaps::new(RegistrationOptions::default());
        o.add(&pts.0, &pts.1, &pts.2, &pts.3);
        let r = o.solve().unwrap();
        // The difference of the two passes' corrections matches the difference of their errors.
        let mut worst: f64 = 0.0;
        for i in 0..200 {
            let x = i as f64 * 0.5;
            let (t1, t2) = (x / 10.0, 100.0 + (100.0 - x) / 10.0);
            let want = err(t2) - err(t1);
            let got = r.dz_at(t2) - r.dz_at(t1);
            worst = worst.max((want - got).abs());
        }
        assert!(worst < 3e-4, "worst {worst}");
        assert!(r.rms_after < 0.5 * r.rms_before, "{r:?}");
        // Split: neither pass carries the whole difference.
        assert!(r.dz_at(5.0).abs() > 2e-4 && r.dz_at(105.0).abs() > 2e-4);
        // One pass: nothing to register.
        let half = pts.0.len() / 2;
        let mut one = Overlaps::new(RegistrationOptions::default());
        one.add(&pts.0[..half], &pts.1[..half], &pts.2[..half], &pts.3[..half]);
        assert!(one.solve().is_none());
        // Same points, same registration.
        let mut again = Overlaps::new(RegistrationOptions::default());
        again.add(&pts.0, &pts.1, &pts.2, &pts.3);
        assert_eq!(again.solve().unwrap(), r);
        // Memory bounded: at most 100 cells kept (one in 4 of the 800 sampled), the difference
        // still found within 0.6 mm.
        let mut few = Overlaps::new(RegistrationOptions { max_cells: 100, min_observations: 20, ..Default::default() });
        few.add(&pts.0, &pts.1, &pts.2, &pts.3);
        assert!(few.cells() <= 100, "{}", few.cells());
        let rf = few.solve().unwrap();
        for i in 0..200 {
            let x = i as f64 * 0.5;
            let (t1, t2) = (x / 10.0, 100.0 + (100.0 - x) / 10.0);
            let (want, got) = (err(t2) - err(t1), rf.dz_at(t2) - rf.dz_at(t1));
            assert!((want - got).abs() < 6e-4, "x {x}: {want} vs {got}");
        }
    }
}
