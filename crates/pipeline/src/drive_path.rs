//! The drive path from the points alone: where the scanner was, for surveys delivered without
//! a trajectory.
//!
//! A profile scanner sweeps its beam through a vertical plane across the road. A point's scan
//! angle θ (from straight down, towards one side) and its height z put it on the ray from the
//! scanner centre c: its horizontal distance from c along the plane's lateral direction n is
//! (c_z − z)·tan θ, whatever it hit and whatever its range noise (the noise is along the ray).
//! Over a short window of GPS time, with the vehicle moving at velocity v,
//!
//! p_xy = c_xy + τ·v + tan θ·(b − z·a),  a = n, b = c_z·n,  τ = time − window's middle,
//!
//! is linear in (c_xy, v, a, b): x and y share one 4 × 4 normal matrix, so the windows are
//! sums, filled in any order as the points stream and never held. Solved per window, c_xy is
//! the scanner's position at the window's middle, |a| = 1 checks that the angles describe a
//! vertical scan plane (else the window is left out), and c_z = a·b/|a|². The road under the
//! vehicle is the mean height of the points within a few degrees of nadir, so the scanner's
//! height above the road comes too.
//!
//! Windows are joined into passes where GPS time runs on (a gap of more than `pass_gap`
//! seconds, or a jump in position, starts a new pass).
//!
//! # Frames and units
//! Map x, y, z (m) as the points come; GPS time in seconds; scan angles in degrees as LAS
//! stores them (the sign convention does not matter: it turns n around).

use std::collections::HashMap;
use std::fmt;

/// How the drive path is found.
#[derive(Debug, Clone, PartialEq)]
pub struct DrivePathOptions {
    /// Length of a window of GPS time, s (a few scanner profiles).
    pub window: f64,
    /// Points whose |scan angle| exceeds this are left out, degrees (the ray's lateral reach
    /// grows as tan θ, and with it the effect of the angle's rounding).
    pub max_angle_deg: f64,
    /// Points within this angle of nadir give the road's height under the scanner, degrees.
    pub nadir_deg: f64,
    /// A gap in GPS time longer than this starts a new pass, s.
    pub pass_gap: f64,
}

impl Default for DrivePathOptions {
    fn default() -> Self {
        DrivePathOptions { window: 0.05, max_angle_deg: 70.0, nadir_deg: 3.0, pass_gap: 1.0 }
    }
}

/// Why no drive path came out of the points.
#[derive(Debug, Clone, PartialEq)]
pub enum DrivePathError {
    /// A bad option.
    Options(String),
    /// No point has a GPS time (or all have the same).
    NoTime {
        /// Points offered.
        points: u64,
    },
    /// No point has a scan angle other than zero (the file does not record them).
    NoAngles {
        /// Points offered.
        points: u64,
    },
    /// The points span too little time or distance for a path.
    TooShort {
        /// GPS time the points span, s.
        seconds: f64,
        /// Length of the longest pass found, m.
        metres: f64,
    },
    /// GPS time spans more windows than any survey holds.
    TooManyWindows {
        /// The most windows a builder holds.
        windows: usize,
    },
    /// No window's angles describe a vertical scan plane.
    NoPlane {
        /// Windows with enough points for a fit.
        windows: usize,
    },
}

impl fmt::Display for DrivePathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DrivePathError::Options(m) => write!(f, "{m}"),
            DrivePathError::NoTime { points } => write!(
                f,
                "none of the {points} points has a GPS time that changes: the drive path cannot be followed in time (give --trajectory or --polyline)"
            ),
            DrivePathError::NoAngles { points } => write!(
                f,
                "none of the {points} points has a scan angle other than 0: the scanner's position cannot be found from the rays (give --trajectory or --polyline)"
            ),
            DrivePathError::TooShort { seconds, metres } => write!(
                f,
                "the points span {seconds:.3} s of GPS time and the scanner moved {metres:.2} m: too little for an axis (at least 5 m of drive are needed)"
            ),
            DrivePathError::TooManyWindows { windows } => {
                write!(f, "GPS time spans more than {windows} windows: not one survey's time (check the GPS time)")
            }
            DrivePathError::NoPlane { windows } => write!(
                f,
                "in none of {windows} windows of GPS time do the scan angles describe a vertical scan plane (not a profile scanner, or angles relative to something else)"
            ),
        }
    }
}

impl std::error::Error for DrivePathError {}

/// The most windows a builder holds (100 hours of survey at 0.05 s).
const MAX_WINDOWS: usize = 8_000_000;
/// A window needs this many points for a fit.
const MIN_POINTS: u64 = 30;
/// A window's fit counts when its points' lateral residuals (weighted by cos² θ) are at most
/// this, m: rays of a vertical scan plane.
const MAX_RMS: f64 = 0.25;
/// The shortest drive that makes an axis, m.
const MIN_LENGTH: f64 = 5.0;

/// One window's sums (weighted by cos² θ: the lateral reach of an angle error grows as
/// 1/cos² θ).
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    /// The window's first point: subtracted from its points.
    origin: [f64; 3],
    n: u64,
    /// Σ w·(x² + y²).
    pp: f64,
    /// The lowest point's height.
    z_min: f64,
    /// The normal matrix of rows [1, τ, −g·z, g], upper triangle by rows.
    m: [f64; 10],
    rx: [f64; 4],
    ry: [f64; 4],
    nadir_n: u64,
    nadir_z: f64,
}

impl Sums {
    fn add(&mut self, row: [f64; 4], w: f64, x: f64, y: f64) {
        self.n += 1;
        self.pp += w * (x * x + y * y);
        let mut k = 0;
        for i in 0..4 {
            for j in i..4 {
                self.m[k] += w * row[i] * row[j];
                k += 1;
            }
            self.rx[i] += w * row[i] * x;
            self.ry[i] += w * row[i] * y;
        }
    }

    /// The full normal matrix.
    #[allow(clippy::needless_range_loop)]
    fn matrix(&self) -> [[f64; 4]; 4] {
        let mut a = [[0.0; 4]; 4];
        let mut k = 0;
        for i in 0..4 {
            for j in i..4 {
                a[i][j] = self.m[k];
                a[j][i] = self.m[k];
                k += 1;
            }
        }
        a
    }
}

/// The scanner of one window from its sums: the least-squares fit of
/// p = c + τ·v + tan θ·(h − z)·n with n a unit vector, c, v, h and n free. For given h and n
/// the fit is linear in c and v, which leaves a cost quadratic in e = n_c·(1, h) per
/// coordinate; for given h the best n is then in closed form, so only h is searched (a scan,
/// then golden sections), from `h_min` up by 50 m. Returns (c_x, c_y, h, n, rms) in the
/// window's frame, `None` where times or angles do not spread enough to separate c from v.
fn fit_window(s: &Sums, h_min: f64) -> Option<([f64; 2], f64, [f64; 2], f64)> {
    let a = s.matrix();
    let det = a[0][0] * a[1][1] - a[0][1] * a[0][1];
    let spread = det > 1e-12 * a[0][0] * a[1][1].max(1e-30) && a[0][0] > 0.0;
    if !spread {
        return None;
    }
    // M11⁻¹.
    let inv = [[a[1][1] / det, -a[0][1] / det], [-a[0][1] / det, a[0][0] / det]];
    let m12 = [[a[0][2], a[0][3]], [a[1][2], a[1][3]]];
    // K = M11⁻¹·M12 (2 × 2).
    let mut k = [[0.0; 2]; 2];
    for i in 0..2 {
        for j in 0..2 {
            k[i][j] = inv[i][0] * m12[0][j] + inv[i][1] * m12[1][j];
        }
    }
    // Schur complement S = M22 − M21·K.
    let mut sc = [[a[2][2], a[2][3]], [a[3][2], a[3][3]]];
    for i in 0..2 {
        for j in 0..2 {
            sc[i][j] -= m12[0][i] * k[0][j] + m12[1][i] * k[1][j];
        }
    }
    // q_c = r2 − M21·M11⁻¹·r1, and the constant r1ᵀ·M11⁻¹·r1 per coordinate.
    let q = |r: &[f64; 4]| {
        let g = [inv[0][0] * r[0] + inv[0][1] * r[1], inv[1][0] * r[0] + inv[1][1] * r[1]];
        ([r[2] - (m12[0][0] * g[0] + m12[1][0] * g[1]), r[3] - (m12[0][1] * g[0] + m12[1][1] * g[1])], g)
    };
    let (qx, gx) = q(&s.rx);
    let (qy, gy) = q(&s.ry);
    let cost = |h: f64| {
        let e = [1.0, h];
        let quad = e[0] * (sc[0][0] * e[0] + sc[0][1] * e[1]) + e[1] * (sc[1][0] * e[0] + sc[1][1] * e[1]);
        let (ax, ay) = (e[0] * qx[0] + e[1] * qx[1], e[0] * qy[0] + e[1] * qy[1]);
        quad - 2.0 * ax.hypot(ay)
    };
    // A scan every 5 cm, then golden sections around the best.
    let (mut best, mut best_j) = (h_min, f64::INFINITY);
    for i in 0..=1000 {
        let h = h_min + 0.05 * i as f64;
        let j = cost(h);
        if j < best_j {
            (best, best_j) = (h, j);
        }
    }
    let (mut lo, mut hi) = (best - 0.05, best + 0.05);
    let r = 0.5 * (5f64.sqrt() - 1.0);
    for _ in 0..40 {
        let (m1, m2) = (hi - r * (hi - lo), lo + r * (hi - lo));
        if cost(m1) < cost(m2) {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    let h = 0.5 * (lo + hi);
    let e = [1.0, h];
    let (ax, ay) = (e[0] * qx[0] + e[1] * qx[1], e[0] * qy[0] + e[1] * qy[1]);
    let norm = ax.hypot(ay);
    if norm.is_nan() || norm <= 0.0 {
        return None;
    }
    let n = [ax / norm, ay / norm];
    // c = M11⁻¹·r1 − K·e·n_c (its first row).
    let cx = gx[0] - (k[0][0] * e[0] + k[0][1] * e[1]) * n[0];
    let cy = gy[0] - (k[0][0] * e[0] + k[0][1] * e[1]) * n[1];
    // The residual: Σw·|p|² − r1ᵀM11⁻¹r1 (both coordinates) + the reduced cost.
    let c1 = s.rx[0] * gx[0] + s.rx[1] * gx[1] + s.ry[0] * gy[0] + s.ry[1] * gy[1];
    let rms = ((s.pp - c1 + cost(h)).max(0.0) / a[0][0]).sqrt();
    [cx, cy, h, n[0], n[1], rms].iter().all(|v| v.is_finite()).then_some(([cx, cy], h, n, rms))
}

/// The scanner at one window's middle.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// GPS time, s.
    pub time: f64,
    /// The scanner centre, map frame, m.
    pub xyz: [f64; 3],
    /// The road's height under the scanner (points near nadir), m; `None` without such points.
    pub ground: Option<f64>,
    /// The unit lateral direction of the scan plane (towards positive scan angles).
    pub lateral: [f64; 2],
    /// The window's points.
    pub points: u64,
    /// The points' RMS distance from their rays (weighted by cos² θ), m.
    pub rms: f64,
}

/// One drive: the scanner's samples in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct PassPath {
    /// The scanner at the middle of each of the pass's windows, in time order.
    pub samples: Vec<Sample>,
    /// Length of the path, m.
    pub length: f64,
}

impl PassPath {
    /// The scanner's height above the road: the median over the samples with a ground, m.
    pub fn sensor_height(&self) -> Option<f64> {
        let mut h: Vec<f64> = self.samples.iter().filter_map(|s| s.ground.map(|g| s.xyz[2] - g)).collect();
        if h.is_empty() {
            return None;
        }
        h.sort_by(f64::total_cmp);
        Some(h[h.len() / 2])
    }

    /// The first and last GPS time, s.
    pub fn time_range(&self) -> (f64, f64) {
        match (self.samples.first(), self.samples.last()) {
            (Some(a), Some(b)) => (a.time, b.time),
            _ => (f64::NAN, f64::NAN),
        }
    }
}

/// The drive path found: every pass, in time order.
#[derive(Debug, Clone, PartialEq)]
pub struct DrivePath {
    /// The passes, in time order.
    pub passes: Vec<PassPath>,
    /// Windows with enough points for a fit.
    pub windows: usize,
    /// Of those, the windows whose fit was left out (no vertical plane).
    pub rejected: usize,
}

impl DrivePath {
    /// The longest pass (the first of equal ones).
    pub fn longest(&self) -> Option<(usize, &PassPath)> {
        self.passes.iter().enumerate().fold(None, |best, (i, p)| match best {
            Some((_, b)) if b.length >= p.length => best,
            _ => Some((i, p)),
        })
    }
}

/// Collects the windows' sums as the points stream.
#[derive(Debug, Clone)]
pub struct DrivePathBuilder {
    opts: DrivePathOptions,
    windows: HashMap<i64, Sums>,
    points: u64,
    with_angle: u64,
    time_range: (f64, f64),
    too_many: bool,
}

impl DrivePathBuilder {
    /// A builder with `opts`; an error when an option lies outside its range.
    pub fn new(opts: DrivePathOptions) -> Result<DrivePathBuilder, DrivePathError> {
        let ok = |v: f64, lo: f64, hi: f64| v.is_finite() && v >= lo && v <= hi;
        if !ok(opts.window, 1e-4, 10.0) || !ok(opts.max_angle_deg, 1.0, 89.0) || !ok(opts.nadir_deg, 0.0, 30.0) {
            return Err(DrivePathError::Options(format!(
                "window {} s (1e-4..10), max angle {} degrees (1..89), nadir {} degrees (0..30)",
                opts.window, opts.max_angle_deg, opts.nadir_deg
            )));
        }
        Ok(DrivePathBuilder {
            opts,
            windows: HashMap::new(),
            points: 0,
            with_angle: 0,
            time_range: (f64::INFINITY, f64::NEG_INFINITY),
            too_many: false,
        })
    }

    /// Adds a chunk of points (columns of equal length; the shortest decides).
    pub fn add(&mut self, x: &[f64], y: &[f64], z: &[f64], time: &[f64], angle_deg: &[f32]) {
        let n = x.len().min(y.len()).min(z.len()).min(time.len()).min(angle_deg.len());
        let w = self.opts.window;
        let (max_rad, nadir) = (self.opts.max_angle_deg.to_radians(), self.opts.nadir_deg);
        for i in 0..n {
            let (px, py, pz, t, th) = (x[i], y[i], z[i], time[i], angle_deg[i] as f64);
            if !(px.is_finite() && py.is_finite() && pz.is_finite() && t.is_finite() && th.is_finite()) {
                continue;
            }
            self.points += 1;
            self.time_range = (self.time_range.0.min(t), self.time_range.1.max(t));
            if th != 0.0 {
                self.with_angle += 1;
            }
            let th = th.to_radians();
            if th.abs() > max_rad {
                continue;
            }
            let k = (t / w).floor();
            if k.abs() > 1e15 {
                continue;
            }
            let key = k as i64;
            if !self.windows.contains_key(&key) && self.windows.len() >= MAX_WINDOWS {
                self.too_many = true;
                continue;
            }
            let s = self.windows.entry(key).or_insert_with(|| Sums {
                origin: [px, py, pz],
                z_min: pz,
                ..Default::default()
            });
            let o = s.origin;
            s.z_min = s.z_min.min(pz);
            let tau = t - (k + 0.5) * w;
            let (g, zr) = (th.tan(), pz - o[2]);
            let c = th.cos();
            s.add([1.0, tau, -g * zr, g], c * c, px - o[0], py - o[1]);
            if th.abs() <= nadir.to_radians() {
                s.nadir_n += 1;
                s.nadir_z += zr;
            }
        }
    }

    /// Points added (with finite coordinates and time).
    pub fn points(&self) -> u64 {
        self.points
    }

    /// The drive path: each window solved, the windows joined into passes.
    pub fn finish(self) -> Result<DrivePath, DrivePathError> {
        let points = self.points;
        if self.too_many {
            return Err(DrivePathError::TooManyWindows { windows: MAX_WINDOWS });
        }
        if points == 0 || self.time_range.1 <= self.time_range.0 {
            return Err(DrivePathError::NoTime { points });
        }
        if self.with_angle == 0 {
            return Err(DrivePathError::NoAngles { points });
        }
        let w = self.opts.window;
        let mut keys: Vec<i64> = self.windows.iter().filter(|(_, s)| s.n >= MIN_POINTS).map(|(k, _)| *k).collect();
        keys.sort_unstable();
        let mut samples = Vec::with_capacity(keys.len());
        let mut rejected = 0;
        for k in &keys {
            let s = &self.windows[k];
            let o = s.origin;
            let ground = (s.nadir_n > 0).then(|| s.nadir_z / s.nadir_n as f64);
            // The scanner is above the road under it (else above the lowest point).
            let h_min = ground.unwrap_or(s.z_min - o[2]) + 0.1;
            let Some((c, h, n, rms)) = fit_window(s, h_min).filter(|f| f.3 <= MAX_RMS) else {
                rejected += 1;
                continue;
            };
            samples.push(Sample {
                time: (*k as f64 + 0.5) * w,
                xyz: [c[0] + o[0], c[1] + o[1], h + o[2]],
                ground: ground.map(|g| g + o[2]),
                lateral: n,
                points: s.n,
                rms,
            });
        }
        if samples.is_empty() {
            return Err(DrivePathError::NoPlane { windows: keys.len() });
        }
        // Passes: split where time stops or the scanner jumps (faster than 100 m/s).
        let mut passes: Vec<Vec<Sample>> = Vec::new();
        for s in samples {
            let joins = passes.last().and_then(|p| p.last()).is_some_and(|q: &Sample| {
                let dt = s.time - q.time;
                let d = (s.xyz[0] - q.xyz[0]).hypot(s.xyz[1] - q.xyz[1]);
                dt <= self.opts.pass_gap && d <= 100.0 * dt + 0.5
            });
            match passes.last_mut() {
                Some(p) if joins => p.push(s),
                _ => passes.push(vec![s]),
            }
        }
        let passes: Vec<PassPath> = passes
            .into_iter()
            .map(|samples| {
                let length =
                    samples.windows(2).map(|q| (q[1].xyz[0] - q[0].xyz[0]).hypot(q[1].xyz[1] - q[0].xyz[1])).sum();
                PassPath { samples, length }
            })
            .collect();
        let longest = passes.iter().map(|p| p.length).fold(0.0, f64::max);
        if longest < MIN_LENGTH {
            return Err(DrivePathError::TooShort { seconds: self.time_range.1 - self.time_range.0, metres: longest });
        }
        Ok(DrivePath { passes, windows: keys.len(), rejected })
    }
}

/// The vertices of a pass for an axis fit: the scanner's positions (x, y, z of the scanner),
/// thinned so that consecutive vertices are at least `min_step` apart (a vehicle standing
/// still gives one vertex, not a knot of noise).
pub fn vertices(pass: &PassPath, min_step: f64) -> Vec<[f64; 3]> {
    let mut out: Vec<[f64; 3]> = Vec::with_capacity(pass.samples.len());
    for s in &pass.samples {
        match out.last() {
            Some(q) if (s.xyz[0] - q[0]).hypot(s.xyz[1] - q[1]) < min_step => {}
            _ => out.push(s.xyz),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// A straight drive along +x at 10 m/s, the scanner 2 m up at y = 3, profiles of 400 rays
    /// at 100 Hz onto the plane z = 0.
    fn straight(angle_scale: f64) -> DrivePathBuilder {
        let mut b = DrivePathBuilder::new(DrivePathOptions::default()).unwrap();
        let (mut x, mut y, mut z, mut t, mut a) = (vec![], vec![], vec![], vec![], vec![]);
        for k in 0..200 {
            for j in 0..400 {
                let time = 1000.0 + k as f64 / 100.0 + j as f64 / 40_000.0;
                let th: f64 = -1.3 + 2.6 * j as f64 / 400.0;
                let (cx, cy, cz) = (10.0 * (time - 1000.0), 3.0, 2.0);
                x.push(cx);
                y.push(cy + cz * th.tan());
                z.push(0.0);
                t.push(time);
                a.push((th.to_degrees() * angle_scale) as f32);
            }
        }
        b.add(&x, &y, &z, &t, &a);
        b
    }

    #[test]
    fn a_straight_drive_is_found_with_its_height() {
        let p = straight(1.0).finish().unwrap();
        assert_eq!(p.passes.len(), 1);
        let pass = &p.passes[0];
        for s in &pass.samples {
            assert!((s.xyz[1] - 3.0).abs() < 1e-4, "{s:?}");
            assert!((s.xyz[0] - 10.0 * (s.time - 1000.0)).abs() < 1e-3, "{s:?}");
        }
        assert!((pass.sensor_height().unwrap() - 2.0).abs() < 1e-4);
        assert!(pass.length > 19.0, "{}", pass.length);
    }

    #[test]
    fn angles_of_another_scale_are_no_vertical_plane() {
        // Angles in other units than degrees make |a| far from 1: every window is left out.
        assert!(matches!(straight(0.5).finish(), Err(DrivePathError::NoPlane { .. })));
    }

    #[test]
    fn no_angles_or_no_time_is_an_error() {
        let mut b = DrivePathBuilder::new(DrivePathOptions::default()).unwrap();
        b.add(&[0.0, 1.0], &[0.0, 1.0], &[0.0, 0.0], &[5.0, 6.0], &[0.0, 0.0]);
        assert_eq!(b.finish(), Err(DrivePathError::NoAngles { points: 2 }));
        let mut b = DrivePathBuilder::new(DrivePathOptions::default()).unwrap();
        b.add(&[0.0, 1.0], &[0.0, 1.0], &[0.0, 0.0], &[5.0, 5.0], &[3.0, 4.0]);
        assert_eq!(b.finish(), Err(DrivePathError::NoTime { points: 2 }));
    }
}
