//! Reference lines and profiles fitted to survey data: a chain of lines, arcs and clothoids
//! whose heading and curvature are continuous, and cubic profiles (elevation, crossfall), each
//! within a tolerance and with few records.
//!
//! # Method
//! A chain of lines, arcs and clothoids is a curvature κ(s) that is continuous and linear
//! between knots, plus a start pose. Along a polyline of arc length s and chord headings φ(s),
//! a curve of heading θ(s) close to it lies at the lateral offset d(s) ≈ d(0) + ∫(θ - φ) ds
//! (small angles). So D(s) = d(0) + ∫θ ds, a C² cubic spline whose second derivative is κ, is
//! fitted to Φ(s) = ∫φ ds at the vertices, and the residuals are the lateral distances: a
//! linear least-squares problem on banded equations (`spline.rs`). The knots are chosen by
//! removal and relocation within the tolerance; pieces become lines (D'' = 0) and arcs
//! (D''' = 0) where the fit allows. The chain is then built from D (start offset D(0),
//! heading D'(0), knot curvatures D''), the vertices' exact distances to it are measured, and
//! if the small-angle step left any above the tolerance a Gauss-Newton polish on the exact
//! curve follows (`polish.rs`), then a tighter spline if still needed.
//!
//! Profiles are the same spline fitted to (s, value) directly: lines are constant grades,
//! parabolas vertical curves.

mod noise;
mod polish;
mod spline;

use crate::eval::Curve;
use crate::model::{Extras, Geometry, GeometryKind, Poly3};
use crate::num::wrap;
use polish::{Model, Polish};
use spline::{deviation, Piece, Pieces, Samples, Spline};

/// Settings of a fit.
#[derive(Debug, Clone, PartialEq)]
pub struct FitOptions {
    /// Largest distance of an input point from the fitted line (or profile), m.
    pub tolerance: f64,
    /// Shortest record, m.
    pub min_length: f64,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions { tolerance: 0.01, min_length: 1.0 }
    }
}

/// How well one record fits the input points whose nearest point on the line lies in it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RecordFit {
    /// Largest distance, m.
    pub max: f64,
    /// Root mean square distance, m.
    pub rms: f64,
    /// Input points.
    pub points: usize,
}

/// A fitted reference line.
#[derive(Debug, Clone, PartialEq)]
pub struct AxisFit {
    /// The records, from s = 0.
    pub geometries: Vec<Geometry>,
    /// Per record: distances of the input points.
    pub records: Vec<RecordFit>,
    /// Per input point: its station s on the fitted line and its signed offset t (left
    /// positive), m.
    pub stations: Vec<[f64; 2]>,
    /// Largest distance of any input point (outliers aside), m.
    pub max: f64,
    /// Root mean square distance (outliers aside), m.
    pub rms: f64,
    /// Largest distance of the line from the local estimate of the true line: the largest
    /// |mean signed offset| of the points over any run of points `window` long (outliers
    /// aside); `max` where the points are exact (a window of one point), m.
    pub deviation: f64,
    /// Length of that run, m (about the points' spacing where they are exact).
    pub window: f64,
    /// Estimated standard deviation of the points' lateral noise, m.
    pub noise: f64,
    /// Input points left out as outliers (far from a robust local fit of their neighbours).
    pub outliers: usize,
}

impl AxisFit {
    /// Whether the line lies within `tolerance` of the local estimate of the true line (of
    /// every input point, where the points are exact).
    pub fn within(&self, tolerance: f64) -> bool {
        self.deviation <= tolerance
    }
}

/// A fitted profile (elevation, superelevation, lane width): cubic records.
#[derive(Debug, Clone, PartialEq)]
pub struct ProfileFit {
    /// Records from the first sample's s, in ascending s (`s` absolute).
    pub records: Vec<Poly3>,
    /// Largest distance of the records from the samples: the largest |residual| where the
    /// samples are exact; for noisy samples the largest |mean residual| over runs of samples
    /// long enough to estimate the true profile (as [`AxisFit::deviation`]), m.
    pub max: f64,
    /// Root mean square residual.
    pub rms: f64,
    /// Estimated standard deviation of the samples' noise where the fit took it into account
    /// ([`fit_noisy_profile`], noise above a twentieth of the tolerance), else 0, m.
    pub noise: f64,
    /// Samples left out as outliers (max and rms are over the rest).
    pub rejected: usize,
    /// s of the last sample given (where the samples end, outlier or not).
    pub s_last: f64,
    /// The most samples any one knot search (and its linear systems) was given: long profiles
    /// are searched chunk by chunk, so this stays bounded whatever their length.
    pub searched: usize,
}

/// Share of the tolerance beyond which a profile sample is left out.
const REJECT: f64 = 0.7;

impl ProfileFit {
    /// The records with the first moved to start at s = 0 (the same cubic, re-expanded), as
    /// an OpenDRIVE profile needs.
    pub fn from_zero(&self) -> Vec<Poly3> {
        let mut r = self.records.clone();
        if let Some(f) = r.first_mut() {
            let ds = f.s;
            let (a, b, c, d) = (f.a, f.b, f.c, f.d);
            f.a = a - b * ds + c * ds * ds - d * ds * ds * ds;
            f.b = b - 2.0 * c * ds + 3.0 * d * ds * ds;
            f.c = c - 3.0 * d * ds;
            f.s = 0.0;
        }
        r
    }

    /// The records for an OpenDRIVE profile over 0..`end` that holds its value outside the
    /// samples instead of extrapolating the cubics: the first record re-expanded to s = 0 when
    /// it starts within 1 m of it, else a constant record before it; a constant record from
    /// the last sample's s when `end` lies more than 1 m beyond it. A survey of part of a road
    /// gives sensible values over the rest.
    pub fn held(&self, end: f64) -> Vec<Poly3> {
        let last = self.s_last;
        let Some(first) = self.records.first() else { return Vec::new() };
        let constant = |s: f64| {
            let a = crate::eval::profile_value(&self.records, s);
            Poly3 { s, a, b: 0.0, c: 0.0, d: 0.0 }
        };
        // A held constant that qc-opendrive would take for the record beside it (nearly level,
        // near s = 0) is left out when that record, extended, stays within 1 mm of it.
        let same = |hold: &Poly3, rec: &Poly3, from: f64, to: f64| {
            let (p, q) = if hold.s <= rec.s { (hold, rec) } else { (rec, hold) };
            p.equation_difference(q) < MERGE_EQUATION
                && (0..=32).all(|j| {
                    let x = from + (to - from) * j as f64 / 32.0;
                    (rec.value(x - rec.s) - hold.value(x - hold.s)).abs() <= 1e-3
                })
        };
        let mut hold = constant(first.s);
        hold.s = 0.0;
        let mut r = if first.s <= 1.0 || same(&hold, first, 0.0, first.s) {
            self.from_zero()
        } else {
            let mut r = vec![hold];
            r.extend(self.records.iter().cloned());
            r
        };
        let last_start = r.last().map_or(0.0, |p| p.s);
        if end - last > 1.0 && last > last_start {
            let hold = constant(last);
            let rec = r[r.len() - 1];
            if !same(&hold, &rec, last, end) {
                r.push(hold);
            }
        }
        // A held constant beside a level record is that record again.
        merge_redundant(&mut r, end.max(last), 0.0);
        r
    }
}

/// Why a fit cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FitError {
    /// Fewer than two distinct points, or too short.
    #[error("the {0} distinct points from point 0 on span {1:.3} m: too few to fit a road")]
    TooShort(usize, f64),
    /// A coordinate is not finite.
    #[error("point {0}: coordinate not finite")]
    NotFinite(usize),
    /// Stations that go backwards.
    #[error("point {0}: s goes backwards")]
    Unordered(usize),
    /// A bad option.
    #[error("{0}")]
    Options(String),
}

fn check_options(opts: &FitOptions) -> Result<(), FitError> {
    let ok = |v: f64| v > 0.0 && v.is_finite();
    if ok(opts.tolerance) && ok(opts.min_length) {
        Ok(())
    } else {
        Err(FitError::Options(format!(
            "tolerance {} and shortest record {}: both must be positive numbers of metres",
            opts.tolerance, opts.min_length
        )))
    }
}

/// Fits a chain of lines, arcs and clothoids to `points` (x, y in metres, in order along the
/// road). The noise of the points is estimated and outliers are left out first; the
/// tolerance then bounds the line's distance from a local mean of the points (over
/// [`AxisFit::window`]), not from single noisy points. The result may exceed the tolerance
/// where the points cannot be followed by records of at least `min_length` (check
/// [`AxisFit::within`]).
pub fn fit_polyline(points: &[[f64; 2]], opts: &FitOptions) -> Result<AxisFit, FitError> {
    check_options(opts)?;
    if let Some(i) = points.iter().position(|p| !(p[0].is_finite() && p[1].is_finite())) {
        return Err(FitError::NotFinite(i));
    }
    // Distinct vertices.
    let mut q: Vec<[f64; 2]> = Vec::with_capacity(points.len());
    // Per input point, its vertex.
    let mut vertex_of = Vec::with_capacity(points.len());
    for p in points {
        if q.last().is_none_or(|v| dist(*v, *p) > 1e-6) {
            q.push(*p);
        }
        vertex_of.push(q.len() - 1);
    }
    let cleaned = noise::clean(&q, opts.tolerance);
    let kept: Vec<usize> = (0..q.len()).filter(|&i| cleaned.keep[i]).collect();
    let kq: Vec<[f64; 2]> = kept.iter().map(|&i| q[i]).collect();
    // The first reference's vertices: the smoothed ones, each ahead of the last along the
    // road (a point moved along the road, out of order, would fold the polyline back); per
    // kept vertex, the last of them.
    let mut ks: Vec<[f64; 2]> = Vec::with_capacity(kept.len());
    let mut ref_of = Vec::with_capacity(kept.len());
    for &i in &kept {
        let (p, t) = (cleaned.smooth[i], cleaned.tangent[i]);
        if ks.last().is_none_or(|l| (p[0] - l[0]) * t[0] + (p[1] - l[1]) * t[1] > 1e-6) {
            ks.push(p);
        }
        ref_of.push(ks.len() - 1);
    }
    // Along them: arc length, chord headings (unwrapped) and Φ = ∫φ ds.
    let mut s = vec![0.0];
    let mut phi_int = vec![0.0];
    let mut phi0 = 0.0;
    let mut prev: Option<f64> = None;
    for w in ks.windows(2) {
        let len = dist(w[0], w[1]);
        let mut h = (w[1][1] - w[0][1]).atan2(w[1][0] - w[0][0]);
        match prev {
            Some(p) => h = p + wrap(h - p),
            None => phi0 = h,
        }
        prev = Some(h);
        s.push(s[s.len() - 1] + len);
        phi_int.push(phi_int[phi_int.len() - 1] + (h - phi0) * len);
    }
    let length = s[s.len() - 1];
    if ks.len() < 2 || length < 2.0 * opts.min_length {
        return Err(FitError::TooShort(ks.len(), length));
    }
    let spacing = length / (kq.len() - 1) as f64;
    let sigma_noise = cleaned.sigma;
    let window = run_window(sigma_noise, opts.tolerance, spacing);
    let data = Samples::new(&s, &phi_int);
    // A first reference: a dense spline (no knot selection), chained. Along the noisy
    // polyline, arc length runs ahead of the curve's (chords zigzag), which the small-angle
    // step would read as lateral error; against this smooth reference it does not.
    let mut dense = Pieces::default();
    let sp = data.dense((4.0 * spacing).max(2.0 * opts.min_length));
    dense.extend(&sp, sp.pieces.len());
    let first: Vec<f64> = ref_of.iter().map(|&r| s[r]).collect();
    let mut reference = chain(&model_of(&dense, ks[0], phi0, phi0), &kq, &first, None, (1, 0.0, 0.0));
    // Over kilometres the small-angle step drifts the reference from the points (metres
    // after 10 km), and offsets that large bend the next step; a dense spline fitted
    // against the reference itself, chained, stays with the points.
    let mut pass = 0;
    let (sigma, sorted_s, sorted_y) = loop {
        let (sigma, y) = against(&reference, phi0);
        // In the order of their stations (a point moved along the road takes its place).
        let mut order: Vec<usize> = (0..sigma.len()).collect();
        order.sort_by(|&a, &b| sigma[a].total_cmp(&sigma[b]));
        let (ss, sy): (Vec<f64>, Vec<f64>) = order.iter().map(|&i| (sigma[i], y[i])).unzip();
        pass += 1;
        if pass >= 4 || reference.rms <= 1.5 * cleaned.sigma + 0.05 * opts.tolerance {
            break (sigma, ss, sy);
        }
        let g0 = &reference.geometries[0];
        let sp = Samples::new(&ss, &sy).dense((4.0 * spacing).max(2.0 * opts.min_length));
        let mut dense = Pieces::default();
        dense.extend(&sp, sp.pieces.len());
        let next = chain(&model_of(&dense, [g0.x, g0.y], g0.hdg, phi0), &kq, &sigma, None, (1, 0.0, 0.0));
        if next.rms >= reference.rms {
            break (sigma, ss, sy);
        }
        reference = next;
    };
    let (start, hdg) = (reference.geometries[0].clone(), reference.geometries[0].hdg);
    // Knots are chosen on samples at least THIN apart (a 200 Hz trajectory at 10 m/s has one
    // every 5 cm), means of runs of samples where the points are noisy; the chain is then
    // measured against every point. (Every fifth sample was faster still but on an exact
    // trajectory split a clothoid and used 7.7 of the 10 mm.)
    let noisy = sigma_noise > 0.05 * opts.tolerance;
    let (ts, ty, k) = thin(&sorted_s, &sorted_y, spacing, THIN, noisy);
    let t_spacing = spacing * k as f64;
    let t_window = (window as f64 / k as f64).round().max(1.0) as usize;
    // The noise of a knot-search sample (a mean of k points where noisy).
    let t_noise = if noisy { sigma_noise / (k as f64).sqrt() } else { sigma_noise };
    // Per input point: the first guess of its station, and whether it counts (not an
    // outlier).
    let mut slot = vec![0usize; q.len()];
    let mut j = 0;
    for (i, sl) in slot.iter_mut().enumerate() {
        while j + 1 < kept.len() && kept[j + 1] <= i {
            j += 1;
        }
        *sl = j;
    }
    let guess: Vec<f64> = vertex_of.iter().map(|&v| sigma[slot[v]]).collect();
    let counted: Vec<bool> = vertex_of.iter().map(|&v| cleaned.keep[v]).collect();
    let polish = Polish { q: &kq, grid_step: 0.25 };
    let mut best: Option<AxisFit> = None;
    // The spline's own tolerance leaves room for the small-angle step; tighter on retries.
    for margin in [0.8, 0.6, 0.4] {
        let tol = margin * opts.tolerance;
        let measure = (t_window, t_noise, spline::SLACK * tol);
        let frame = Frame::new(&reference, phi0, [start.x, start.y], hdg);
        let sp = fit_chunked(&ts, &ty, measure, tol, t_spacing, opts.min_length, &frame);
        let mut m = model_of(&sp, [start.x, start.y], hdg, phi0);
        let mut fit = chain(&m, points, &guess, Some(&counted), (window, sigma_noise, opts.tolerance));
        // The exact polish solves for every curvature: only for a few records.
        let np = 4 + m.vars.len();
        if fit.deviation > opts.tolerance && np <= 40 && kq.len() * np * np <= 50_000_000 {
            let mut params = sigma.clone();
            polish.refine(&mut m, &mut params, false);
            let polished = chain(&m, points, &guess, Some(&counted), (window, sigma_noise, opts.tolerance));
            if polished.deviation < fit.deviation {
                fit = polished;
            }
        }
        let done = fit.deviation <= opts.tolerance;
        if best.as_ref().is_none_or(|b| fit.deviation < b.deviation) {
            best = Some(fit);
        }
        if done {
            break;
        }
    }
    let mut fit = best.ok_or(FitError::TooShort(q.len(), length))?;
    fit.noise = sigma_noise;
    fit.outliers = counted.iter().filter(|&&c| !c).count();
    fit.window = window as f64 * spacing;
    Ok(fit)
}

/// Samples per run of the local mean that measures a noisy fit: enough that its noise, σ/√n,
/// is a twentieth of `tol`, over at most [`WINDOW`] m at `spacing`; one where they are exact.
fn run_window(sigma: f64, tol: f64, spacing: f64) -> usize {
    (((20.0 * sigma / tol).powi(2).ceil() as usize).max(1)).min(((WINDOW / spacing).floor() as usize).max(1))
}

/// Longest run of points whose mean estimates the true line, m (a deviation of the line
/// shorter than this is diluted in it).
const WINDOW: f64 = 15.0;

/// Length of the samples fitted at once, m: longer inputs are fitted chunk by chunk, each
/// spline continuing the last (value, slope and curvature at the knot where the previous
/// chunk's pieces were kept), so the work grows linearly with the length.
const CHUNK: f64 = 300.0;

/// The first metres of a continued chunk, measured with the chunk before.
const SKIP: f64 = 10.0;

/// The fewest pieces within `tol` (see [`fit_spline`]), chunk by chunk along long inputs.
/// Each chunk continues from the exact chain of the pieces kept so far (`frame`), not from
/// the last spline: the small-angle step's error would otherwise add up along the road (half a
/// metre after 10 km).
fn fit_chunked(
    s: &[f64],
    y: &[f64],
    measure: (usize, f64, f64),
    tol: f64,
    spacing: f64,
    min_len: f64,
    frame: &Frame,
) -> Pieces {
    let (window, noise, allow) = measure;
    let n = s.len();
    let mut out = Pieces::default();
    let mut start: Option<(f64, [f64; 3])> = None;
    let mut i0 = 0;
    let mut chunk = CHUNK;
    loop {
        let a = start.map_or(s[0], |(x, _)| x);
        let mut end = a + chunk;
        if s[n - 1] - end < 0.5 * chunk {
            end = s[n - 1];
        }
        let i1 = s.partition_point(|&x| x <= end).max(i0 + 2).min(n);
        let last = i1 >= n;
        // A continued chunk is fitted less the line of its start's value and slope (values of
        // the integral grow with the road; with the start's constraint rows they would cost
        // the solve its digits).
        let line = start.map_or((0.0, 0.0, 0.0), |(x, d)| (x, d[0], d[1]));
        let local: Vec<f64> = (i0..i1).map(|i| y[i] - line.1 - line.2 * (s[i] - line.0)).collect();
        let from = start.map(|(x, d)| (x, [0.0, 0.0, d[2]]));
        let skip = start.map_or(f64::NEG_INFINITY, |(x, _)| x + SKIP);
        let mut data = Samples::new(&s[i0..i1], &local);
        (data.window, data.noise, data.allow, data.many, data.skip, data.start) =
            (window, noise, allow, 80, skip, from);
        let sp = fit_spline(&data, tol, spacing, min_len);
        if last {
            out.extend_plus(&sp, sp.pieces.len(), line);
            return out;
        }
        // Keep the pieces up to the last knot in the first two thirds (the rest is fitted
        // again with what follows), else up to the first knot; a chunk without a knot grows.
        let cut = a + chunk * 2.0 / 3.0;
        let nb = sp.breaks.len();
        let k = (1..nb - 1).rev().find(|&k| sp.breaks[k] <= cut).or((nb > 2).then_some(1));
        let Some(k) = k else {
            chunk *= 2.0;
            continue;
        };
        out.extend_plus(&sp, k, line);
        let x = sp.breaks[k];
        start = Some((x, frame.state(&out)));
        i0 = s.partition_point(|&v| v < x).min(n - 2);
        chunk = CHUNK;
    }
}

/// The frame of the knot search: a reference line (the integral of its heading less φ0 is
/// what the samples' y measure from), and the start pose of the chain being fitted.
struct Frame<'a> {
    reference: &'a [Geometry],
    /// ∫(θ - φ0) up to each reference record's start.
    at_start: Vec<f64>,
    phi0: f64,
    origin: [f64; 2],
    hdg: f64,
}

impl<'a> Frame<'a> {
    fn new(reference: &'a AxisFit, phi0: f64, origin: [f64; 2], hdg: f64) -> Frame<'a> {
        let mut f = Frame { reference: &reference.geometries, at_start: vec![0.0], phi0, origin, hdg };
        for r in 0..f.reference.len() {
            let v = f.at_start[r] + f.within(r, f.reference[r].length);
            f.at_start.push(v);
        }
        f
    }

    /// ∫(θ - φ0) over the first `u` m of reference record `r`.
    fn within(&self, r: usize, u: f64) -> f64 {
        let g = &self.reference[r];
        let (ka, kb) = g.kind.end_curvatures().unwrap_or((0.0, 0.0));
        (g.hdg - self.phi0) * u + 0.5 * ka * u * u + (kb - ka) * u * u * u / (6.0 * g.length)
    }

    /// The spline state (D, D', D'') that continues the exact chain of `pieces` at its end,
    /// in the reference's terms: D the integral up to the end's station plus the end's offset
    /// from the reference, D' its heading less φ0, D'' its curvature.
    fn state(&self, pieces: &Pieces) -> [f64; 3] {
        let m = model_of(pieces, self.origin, self.hdg, self.phi0);
        let geometries = records(&m);
        let Some(last) = geometries.last() else { return [0.0; 3] };
        let end = Curve::new(last).pose(last.length);
        let x = pieces.breaks[pieces.breaks.len() - 1];
        let g = self.reference;
        let r = g.partition_point(|v| v.s <= x).clamp(1, g.len()) - 1;
        let u = x - g[r].s;
        let c = Curve::new(&g[r]).pose(u);
        let (ka, kb) = g[r].kind.end_curvatures().unwrap_or((0.0, 0.0));
        let th = g[r].hdg + ka * u + 0.5 * (kb - ka) * u * u / g[r].length;
        let t = -(end.x - c.x) * th.sin() + (end.y - c.y) * th.cos();
        [self.at_start[r] + self.within(r, u) + t, th - self.phi0 + wrap(end.hdg - th), end.curvature]
    }
}

/// The vertices against a reference line fitted to them: their stations σ (the first at
/// 0) and y = ∫₀^σ (θ - φ0) ds + t, where θ is the reference's heading and t the
/// vertex's offset from it. A spline D fitted to (σ, y) is then ∫(θ' - φ0) of a line θ' that
/// passes the vertices, as for Φ along the polyline, without the polyline's zigzag.
fn against(reference: &AxisFit, phi0: f64) -> (Vec<f64>, Vec<f64>) {
    let g = &reference.geometries;
    // ∫(θ - φ0) up to each record's start.
    let mut at_start = vec![0.0];
    let within = |r: usize, u: f64| {
        let (ka, kb) = g[r].kind.end_curvatures().unwrap_or((0.0, 0.0));
        (g[r].hdg - phi0) * u + 0.5 * ka * u * u + (kb - ka) * u * u * u / (6.0 * g[r].length)
    };
    for r in 0..g.len() {
        at_start.push(at_start[r] + within(r, g[r].length));
    }
    let mut sigma = Vec::with_capacity(reference.stations.len());
    let mut y = Vec::with_capacity(reference.stations.len());
    // The line starts at the first vertex's foot.
    for st in &reference.stations {
        let u = if sigma.is_empty() { 0.0 } else { st[0].max(0.0) };
        let r = g.partition_point(|x| x.s <= u).clamp(1, g.len()) - 1;
        sigma.push(u);
        y.push(at_start[r] + within(r, u - g[r].s) + st[1]);
    }
    (sigma, y)
}

/// The spline with fewest pieces within `tol`, starting from pieces of a few sample spacings;
/// where even dense pieces cannot reach `tol`, the densest fit.
fn fit_spline(data: &Samples, tol: f64, spacing: f64, min_len: f64) -> Spline {
    let mut start = (4.0 * spacing).max(2.0 * min_len);
    loop {
        if let Some(sp) = data.fit(tol, start, min_len) {
            return sp;
        }
        if start <= min_len {
            break;
        }
        start = (start / 2.0).max(min_len);
    }
    data.dense(min_len)
}

/// The curvature profile of a spline D fitted to ∫(θ - φ0): knots at its breaks, curvatures
/// D'' tied across arcs and zero at lines; start at the offset D(0) from `origin` across the
/// heading `hdg` there, heading φ0 + D'(0).
fn model_of(sp: &Pieces, origin: [f64; 2], hdg: f64, phi0: f64) -> Model {
    let kn = sp.breaks.len();
    let kappa: Vec<f64> = (0..kn).map(|k| sp.eval_in(k.min(kn - 2), sp.breaks[k])[2]).collect();
    // Classes of knots sharing a curvature: runs joined by arcs; a class touching a line is
    // zero.
    let mut class = vec![0usize; kn];
    let mut zero_class = vec![false; kn + 1];
    for (k, p) in sp.pieces.iter().enumerate() {
        class[k + 1] = if *p == Piece::Parabola { class[k] } else { class[k] + 1 };
        if *p == Piece::Line {
            zero_class[class[k]] = true;
            zero_class[class[k + 1]] = true;
        }
    }
    let zero: Vec<bool> = (0..kn).map(|k| zero_class[class[k]]).collect();
    let (mut var_of, mut vars, mut counts) = (vec![None; kn], Vec::new(), Vec::new());
    let mut var_of_class: Vec<Option<usize>> = vec![None; kn + 1];
    for k in 0..kn {
        if zero[k] {
            continue;
        }
        let v = *var_of_class[class[k]].get_or_insert_with(|| {
            vars.push(0.0);
            counts.push(0.0);
            vars.len() - 1
        });
        vars[v] += kappa[k];
        counts[v] += 1.0;
        var_of[k] = Some(v);
    }
    for (v, c) in vars.iter_mut().zip(&counts) {
        *v /= c;
    }
    let d = sp.eval_in(0, sp.breaks[0]);
    Model {
        x0: origin[0] - d[0] * hdg.sin(),
        y0: origin[1] + d[0] * hdg.cos(),
        hdg0: phi0 + d[1],
        knots: sp.breaks.clone(),
        var_of,
        vars,
        length: sp.breaks[kn - 1] - sp.breaks[0],
    }
}

/// Fits cubic records to a profile sampled at `s` (ascending): the fewest pieces (greedily)
/// within `tolerance` of every sample, each at least `min_length` long, value, slope and
/// curvature continuous. Samples that a fit with pieces of a few sample spacings (at least
/// twice `min_length`) misses by more than 0.7 of the tolerance are left out and counted.
/// For samples that measure a profile with noise, see [`fit_noisy_profile`].
pub fn fit_profile(s: &[f64], value: &[f64], opts: &FitOptions) -> Result<ProfileFit, FitError> {
    profile(s, value, opts, false)
}

/// [`fit_profile`] for samples with independent noise (a GNSS trajectory's heights): their
/// noise is estimated and, where it is more than a twentieth of the tolerance, the records
/// are held to the tolerance as the plan view's line is, against means of runs of samples,
/// not single ones (see [`ProfileFit::max`]); only samples beyond what noise reaches are
/// left out, and the knots are searched on means of samples about 2 m apart.
pub fn fit_noisy_profile(s: &[f64], value: &[f64], opts: &FitOptions) -> Result<ProfileFit, FitError> {
    profile(s, value, opts, true)
}

fn profile(s: &[f64], value: &[f64], opts: &FitOptions, may_be_noisy: bool) -> Result<ProfileFit, FitError> {
    check_options(opts)?;
    if s.len() != value.len() || s.len() < 2 {
        return Err(FitError::TooShort(s.len().min(value.len()), 0.0));
    }
    if let Some(i) = (0..s.len()).find(|&i| !(s[i].is_finite() && value[i].is_finite())) {
        return Err(FitError::NotFinite(i));
    }
    if let Some(i) = (1..s.len()).find(|&i| s[i] < s[i - 1]) {
        return Err(FitError::Unordered(i));
    }
    let s_last = s[s.len() - 1];
    let length = s_last - s[0];
    if length < 2.0 * opts.min_length {
        return Err(FitError::TooShort(s.len(), length));
    }
    let spacing = length / (s.len() - 1) as f64;
    let sigma_noise = if may_be_noisy { noise::profile_sigma(s, value) } else { 0.0 };
    let noisy = sigma_noise > 0.05 * opts.tolerance;
    // Samples that pieces of the starting length miss by more than most of the tolerance (a
    // pothole under a trajectory, a stray point) go first, the worst half of them round by
    // round, so that the rest can be fitted with room to spare; where the samples are noisy,
    // only what lies beyond the noise's reach.
    let start = (4.0 * spacing).max(2.0 * opts.min_length);
    let keep_within =
        if noisy { (REJECT * opts.tolerance).max(spline::CHANCE * sigma_noise) } else { REJECT * opts.tolerance };
    let (mut s, mut value) = (s.to_vec(), value.to_vec());
    let mut rejected = 0;
    for _ in 0..12 {
        let dense = Samples::new(&s, &value).dense(start);
        let r: Vec<f64> = dense.values(&s).iter().zip(&value).map(|(&d, &v)| (d - v).abs()).collect();
        let worst = r.iter().copied().fold(0.0, f64::max);
        if worst <= keep_within {
            break;
        }
        let cut = (0.5 * worst).max(keep_within);
        let before = s.len();
        (s, value) = s.iter().zip(&value).zip(&r).filter(|(_, &e)| e <= cut).map(|((&x, &v), _)| (x, v)).unzip();
        rejected += before - s.len();
        if s.len() < 2 {
            return Err(FitError::TooShort(s.len(), length));
        }
    }
    // Where noisy, the measure of the plan view's fit: means of runs of samples enough that
    // their noise is a twentieth of the tolerance, over at most WINDOW m; the knots are
    // searched on means of runs of samples about THIN apart.
    let window = if noisy { run_window(sigma_noise, opts.tolerance, spacing) } else { 1 };
    // Noisy samples are searched on means of runs NOISY_THIN long at least (a profile bends
    // over tens of metres, and a chunk's samples then reach hundreds).
    let to = if noisy { NOISY_THIN.max(0.25 * window as f64 * spacing) } else { THIN };
    let (ts, tv, k) = thin(&s, &value, spacing, to, noisy);
    let t_spacing = spacing * k as f64;
    let measure = if noisy {
        let t_window = (window as f64 / k as f64).round().max(1.0) as usize;
        (t_window, sigma_noise / (k as f64).sqrt(), spline::SLACK * opts.tolerance)
    } else {
        (1, 0.0, 0.0)
    };
    let noise = if noisy { sigma_noise } else { 0.0 };
    let fitted = Fitted { s: &s, value: &value, window, noise, rejected, s_last };
    // Few samples: one knot search over all of them.
    if ts.len() as f64 <= 1.5 * PROFILE_CHUNK as f64 {
        let mut data = Samples::new(&ts, &tv);
        (data.window, data.noise, data.allow) = measure;
        let sp = fit_spline(&data, opts.tolerance, t_spacing, opts.min_length);
        let mut records: Vec<Poly3> = (0..sp.pieces.len())
            .map(|k| {
                let [a, b, c, d] = sp.poly(k);
                Poly3 { s: sp.breaks[k], a, b, c, d }
            })
            .collect();
        if merge_redundant(&mut records, s_last, opts.tolerance) == 0 && !noisy && k == 1 {
            let rms = (sp.sse / ts.len() as f64).sqrt();
            return Ok(ProfileFit { records, max: sp.max, rms, noise: 0.0, rejected, s_last, searched: ts.len() });
        }
        return Ok(fitted.of(records, ts.len(), opts.tolerance));
    }
    let (pieces, searched) = profile_chunked(&ts, &tv, measure, opts.tolerance, t_spacing, opts.min_length);
    let mut records: Vec<Poly3> = (0..pieces.pieces.len())
        .map(|k| {
            let [a, b, c, d] = pieces.poly(k);
            Poly3 { s: pieces.breaks[k], a, b, c, d }
        })
        .collect();
    // A chunk's first piece may continue the kept one's cubic exactly (a line after a line):
    // two records of one equation, which qc-opendrive reports as redundant.
    merge_redundant(&mut records, s_last, opts.tolerance);
    Ok(fitted.of(records, searched, opts.tolerance))
}

/// The samples a profile was fitted to (outliers left out), and what is known of them.
struct Fitted<'a> {
    s: &'a [f64],
    value: &'a [f64],
    /// Samples per run of the measure (1 where exact).
    window: usize,
    noise: f64,
    rejected: usize,
    s_last: f64,
}

impl Fitted<'_> {
    /// The fit of `records` to the samples: their residuals walked along `s` (ascending),
    /// measured as [`ProfileFit::max`] says.
    fn of(&self, records: Vec<Poly3>, searched: usize, tol: f64) -> ProfileFit {
        let (mut sse, mut p) = (0.0, 0);
        let last = records.len() - 1;
        let mut e = Vec::with_capacity(self.s.len());
        for (&x, &v) in self.s.iter().zip(self.value) {
            while p < last && records[p + 1].s <= x {
                p += 1;
            }
            let r = records[p].value(x - records[p].s) - v;
            sse += r * r;
            e.push(r);
        }
        let rms = (sse / self.s.len() as f64).sqrt();
        let max = if self.window > 1 {
            deviation(&e, self.window, self.noise, tol)
        } else {
            e.iter().fold(0.0f64, |m, r| m.max(r.abs()))
        };
        let (noise, rejected, s_last) = (self.noise, self.rejected, self.s_last);
        ProfileFit { records, max, rms, noise, rejected, s_last, searched }
    }
}

/// Change of a profile, m, below which a record that continues the one before is taken for
/// it (the two are one cubic to a micrometre over the second's length).
pub const SAME_CUBIC: f64 = 1e-6;

/// Coefficient difference (see [`Poly3::equation_difference`]) below which two adjacent
/// records are merged when the first, continued, stays within the tolerance of the second:
/// ten times qc-opendrive's [`crate::REDUNDANT_EPSILON`], so that re-expanding a record
/// from another s (`ProfileFit::from_zero`) cannot bring a pair back under it.
pub const MERGE_EQUATION: f64 = 10.0 * crate::REDUNDANT_EPSILON;

/// How far record `q` (from `q.s` to `end`) is at most from `p` continued over it, m: the
/// difference of the two cubics in ds from `q.s`, bounded term by term.
fn continuation_gap(p: &Poly3, q: &Poly3, end: f64) -> f64 {
    let u = q.s - p.s;
    let (a, b, c) = (p.value(u), p.slope(u), p.c + 3.0 * p.d * u);
    let len = (end - q.s).max(0.0);
    (q.a - a).abs() + len * ((q.b - b).abs() + len * ((q.c - c).abs() + len * (q.d - p.d).abs()))
}

/// Merges adjacent records that describe one cubic: a record is dropped (the one before it
/// continued over its length) when that changes the profile by at most [`SAME_CUBIC`], or
/// when qc-opendrive would call the two the same equation (within [`MERGE_EQUATION`]) and
/// the change stays within `tol`. `end` is where the last record ends. Returns how many
/// records were dropped. No two records left are the same equation by qc-opendrive's test
/// unless merging them would move the profile by more than `tol`.
pub fn merge_redundant(records: &mut Vec<Poly3>, end: f64, tol: f64) -> usize {
    let before = records.len();
    let mut out: Vec<Poly3> = Vec::with_capacity(before);
    for k in 0..records.len() {
        let q = records[k];
        if let Some(p) = out.last() {
            let q_end = records.get(k + 1).map_or(end, |n| n.s).max(q.s);
            let gap = continuation_gap(p, &q, q_end);
            if gap <= SAME_CUBIC || (p.equation_difference(&q) < MERGE_EQUATION && gap <= tol) {
                continue;
            }
        }
        out.push(q);
    }
    *records = out;
    before - records.len()
}

/// Samples of a profile whose knots are searched at once: longer profiles are fitted chunk by
/// chunk (each spline continuing the pieces kept so far in value, slope and curvature), so the
/// work and the largest system grow with the chunk, not with the profile.
const PROFILE_CHUNK: usize = 600;

/// Knots of a profile chunk beyond which they are no longer moved, merged or constrained (see
/// `Samples::many`): noisy heights held to a tolerance on single samples keep many knots, and
/// moving each of them costs a solve per trial place.
const PROFILE_MANY: usize = 40;

/// The fewest pieces within `tol` (see [`fit_spline`]) on chunks of about [`PROFILE_CHUNK`]
/// samples: each chunk's pieces are kept up to its last knot in the first two thirds (the
/// rest is fitted again with what follows), and the next chunk starts there with the kept
/// pieces' value, slope and curvature held (a chunk of one piece is kept whole). Also the
/// most samples of one chunk.
fn profile_chunked(
    s: &[f64],
    y: &[f64],
    measure: (usize, f64, f64),
    tol: f64,
    spacing: f64,
    min_len: f64,
) -> (Pieces, usize) {
    let n = s.len();
    let mut out = Pieces::default();
    let mut searched = 0;
    let mut start: Option<(f64, [f64; 3])> = None;
    let mut i0 = 0;
    loop {
        let a = start.map_or(s[0], |(x, _)| x);
        let mut i1 = (i0 + PROFILE_CHUNK).min(n);
        if (n - i1) as f64 <= 0.5 * PROFILE_CHUNK as f64 {
            i1 = n;
        }
        let i1 = i1.max(i0 + 2).min(n);
        let last = i1 >= n;
        // Less the line of the start's value and slope (see `fit_chunked`).
        let line = start.map_or((0.0, 0.0, 0.0), |(x, d)| (x, d[0], d[1]));
        let local: Vec<f64> = (i0..i1).map(|i| y[i] - line.1 - line.2 * (s[i] - line.0)).collect();
        searched = searched.max(i1 - i0);
        let mut data = Samples::new(&s[i0..i1], &local);
        data.start = start.map(|(x, d)| (x, [0.0, 0.0, d[2]]));
        data.many = PROFILE_MANY;
        (data.window, data.noise, data.allow) = measure;
        let sp = fit_spline(&data, tol, spacing, min_len);
        if last {
            out.append_plus(&sp, sp.pieces.len(), line);
            return (out, searched);
        }
        let cut = a + (s[i1 - 1] - a) * 2.0 / 3.0;
        let nb = sp.breaks.len();
        // A chunk of one piece is kept whole (growing it instead would make the search's
        // samples unbounded along a long even grade).
        let k = (1..nb - 1).rev().find(|&k| sp.breaks[k] <= cut).unwrap_or(1);
        out.append_plus(&sp, k, line);
        let x = sp.breaks[k];
        let d = out.eval_in(out.pieces.len() - 1, x);
        start = Some((x, [d[0], d[1], d[2]]));
        i0 = s.partition_point(|&v| v < x).min(n - 2);
    }
}

/// Spacing below which samples are thinned for the knot search, m.
const THIN: f64 = 0.1;

/// Spacing of the means of noisy profile samples the knots are searched on, m.
const NOISY_THIN: f64 = 2.0;

/// Samples about `to` apart: every k-th sample (and the last), or where `average`, the
/// first and last samples and means of runs of k between them (their noise is 1/√k of the
/// samples'); and k.
fn thin(s: &[f64], y: &[f64], spacing: f64, to: f64, average: bool) -> (Vec<f64>, Vec<f64>, usize) {
    let k = ((to / spacing.max(1e-9)).floor() as usize).max(1);
    let n = s.len();
    if k == 1 {
        return (s.to_vec(), y.to_vec(), 1);
    }
    if average && n > 2 {
        let (mut ts, mut ty) = (vec![s[0]], vec![y[0]]);
        let mut i = 1;
        while i < n - 1 {
            let j = (i + k).min(n - 1);
            let w = (j - i) as f64;
            ts.push(s[i..j].iter().sum::<f64>() / w);
            ty.push(y[i..j].iter().sum::<f64>() / w);
            i = j;
        }
        ts.push(s[n - 1]);
        ty.push(y[n - 1]);
        return (ts, ty, k);
    }
    let mut idx: Vec<usize> = (0..n).step_by(k).collect();
    if idx.last() != Some(&(n - 1)) {
        idx.push(n - 1);
    }
    (idx.iter().map(|&i| s[i]).collect(), idx.iter().map(|&i| y[i]).collect(), k)
}

fn dist(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

/// The model as records chained exactly, and the input points' distances to them (`guess`:
/// each point's first guess of its station, on about the line's scale; `counted`: the
/// points that count, all if None; `measure`: the longest run of points, their noise and
/// the tolerance, for the deviation).
fn chain(
    m: &Model,
    points: &[[f64; 2]],
    guess: &[f64],
    counted: Option<&[bool]>,
    measure: (usize, f64, f64),
) -> AxisFit {
    let geometries = records(m);
    let curves: Vec<Curve> = geometries.iter().map(Curve::new).collect();
    let total: f64 = geometries.iter().map(|g| g.length).sum();
    let scale = total / guess.iter().copied().fold(0.0, f64::max).max(1e-12);
    let pose = |u: f64| {
        let r = geometries.partition_point(|g| g.s <= u).clamp(1, geometries.len()) - 1;
        (r, curves[r].pose(u - geometries[r].s))
    };
    let mut per: Vec<(f64, f64, usize)> = vec![(0.0, 0.0, 0); curves.len()];
    let mut stations = Vec::with_capacity(points.len());
    let (mut max, mut sq, mut n) = (0.0f64, 0.0, 0usize);
    let mut offsets = Vec::with_capacity(points.len());
    for (i, (p, &g)) in points.iter().zip(guess).enumerate() {
        // Newton steps along the line to the foot of the perpendicular.
        let mut u = g * scale;
        for _ in 0..12 {
            let (_, c) = pose(u);
            let along = (p[0] - c.x) * c.hdg.cos() + (p[1] - c.y) * c.hdg.sin();
            let next = (u + along).clamp(0.0, total);
            let step = (next - u).abs();
            u = next;
            if step < 1e-9 {
                break;
            }
        }
        let (r, c) = pose(u);
        let (dx, dy) = (p[0] - c.x, p[1] - c.y);
        let d = dx.hypot(dy);
        let t = -dx * c.hdg.sin() + dy * c.hdg.cos();
        stations.push([u, t]);
        if counted.is_some_and(|c| !c[i]) {
            continue;
        }
        offsets.push(t);
        n += 1;
        let e = &mut per[r];
        e.0 = e.0.max(d);
        e.1 += d * d;
        e.2 += 1;
        max = max.max(d);
        sq += d * d;
    }
    let records = per
        .iter()
        .map(|&(mx, s2, n)| RecordFit { max: mx, rms: if n > 0 { (s2 / n as f64).sqrt() } else { 0.0 }, points: n })
        .collect();
    let (window, noise, allow) = measure;
    let deviation = if window > 1 { deviation(&offsets, window, noise, allow) } else { max };
    AxisFit {
        geometries,
        records,
        stations,
        max,
        rms: (sq / n.max(1) as f64).sqrt(),
        deviation,
        window: 0.0,
        noise: 0.0,
        outliers: 0,
    }
}

/// The model's records, each from the previous record's exact end.
fn records(m: &Model) -> Vec<Geometry> {
    let mut geometries: Vec<Geometry> = Vec::new();
    let (mut x, mut y, mut hdg) = (m.x0, m.y0, m.hdg0);
    for k in 1..m.knots.len() {
        let (a, b) = (m.knots[k - 1], m.knots[k]);
        let (ka, kb) = (m.kappa_at_knot(k - 1), m.kappa_at_knot(k));
        let kind = if m.var_of[k - 1].is_none() && m.var_of[k].is_none() {
            GeometryKind::Line
        } else if m.var_of[k - 1] == m.var_of[k] {
            GeometryKind::Arc { curvature: ka }
        } else {
            GeometryKind::Spiral { curv_start: ka, curv_end: kb }
        };
        let g = Geometry { s: a - m.knots[0], x, y, hdg, length: b - a, kind, extras: Extras::default() };
        let end = Curve::new(&g).pose(b - a);
        (x, y, hdg) = (end.x, end.y, end.hdg);
        geometries.push(g);
    }
    geometries
}
