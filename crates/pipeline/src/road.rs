//! The surveyed road: an axis road completed from the cross sections of its points
//! (`section.rs`) and, optionally, its road-surface CRGs.
//!
//! Per 0.5 m row of cross sections:
//! - the road surface is a line h = a + b·t fitted to the cell heights near the reference
//!   line (Tukey's biweight, so cars and people do not pull it): the elevation gains a, the
//!   superelevation is atan(b);
//! - a curb is the first rise of at least 6 cm within 0.3 m, outward from the carriageway, in
//!   the heights left after that line (median of five rows, so a passing car hides nothing);
//! - markings are runs of cells at road level whose intensity stands out from the median of
//!   the cells within 0.6 m (contrast, so the scanner's range and incidence fall out).
//!
//! Markings seen in successive rows at about the same t are tracked into lines; a line with
//! regular gaps is broken (dash and gap lengths measured), else solid. The centre line is, per
//! row, an inner line (solid before broken); its t is the lane offset. Lane borders are the
//! other lines and the curbs (a line within 0.35 m of a curb marks the curb's border), on the
//! side of the centre line they mostly keep to; lanes lie between them, widths as cubic
//! records, a new lane section where a border starts or ends. Potholes and manholes are depressions in a CRG
//! against its 2 m x 2 m local mean.

use crate::section::SectionGrid;
use opendrive::fit::{fit_profile, FitOptions, ProfileFit};
use opendrive::{
    Extras, Lane, LaneSection, LaneSide, Lanes, Object, OpenDrive, Poly3, Road, RoadCrg, RoadEval, RoadMark,
};

/// Settings of the surveyed road.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyOptions {
    /// Elevation records within this, m.
    pub elevation_tolerance: f64,
    /// Superelevation records within this, rad.
    pub superelevation_tolerance: f64,
    /// Lane width records within this, m.
    pub width_tolerance: f64,
    /// Half width of the carriageway used for the surface line before curbs are known, m.
    pub carriageway: f64,
    /// A marking cell's intensity over the local median.
    pub contrast: f64,
    /// A row's surface line steeper than this across is no road surface (a facade seen by a
    /// tilted scanner, a slope, the side of a car), rad: 0.8 (46°) is beyond any banked road
    /// but a velodrome's.
    pub max_crossfall: f64,
    /// Cells whose heights spread more than this (standard deviation) hold more than the road
    /// surface (a branch above it, an echo below it) and are left out of the surface line, m.
    pub max_spread: f64,
}

impl Default for SurveyOptions {
    fn default() -> Self {
        SurveyOptions {
            elevation_tolerance: 0.002,
            superelevation_tolerance: 0.002,
            width_tolerance: 0.02,
            carriageway: 2.5,
            contrast: 1.5,
            max_crossfall: 0.8,
            max_spread: 0.03,
        }
    }
}

/// A marking line found in the points.
#[derive(Debug, Clone, PartialEq)]
pub struct MarkingLine {
    /// Median t, m.
    pub t: f64,
    /// s where it starts and ends, m.
    pub s_range: (f64, f64),
    /// "solid" or "broken".
    pub kind: &'static str,
    /// Median width, m.
    pub width: f64,
    /// Dash and gap lengths of a broken line, m.
    pub dash_gap: Option<(f64, f64)>,
    /// (s, t) of each row it was seen in.
    pub samples: Vec<(f64, f64)>,
}

/// A curb found in the points.
#[derive(Debug, Clone, PartialEq)]
pub struct Curb {
    /// Median t, m.
    pub t: f64,
    /// Median height of the step, m.
    pub height: f64,
    /// (s, t) per row it was found in.
    pub samples: Vec<(f64, f64)>,
}

/// A depression found in a CRG.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceFeature {
    /// "pothole" or "manhole".
    pub kind: &'static str,
    /// Centre, m.
    pub s: f64,
    /// Centre, m.
    pub t: f64,
    /// Extent along s and across, m.
    pub length: f64,
    /// m.
    pub width: f64,
    /// Deepest point below the local surface, m (negative: a lid standing proud).
    pub depth: f64,
}

/// A road-surface CRG to link and search.
#[derive(Debug, Clone)]
pub struct CrgInput<'c> {
    /// The file name written into `<CRG file>`.
    pub file: String,
    /// The grid.
    pub crg: &'c opencrg::Crg,
}

/// What was measured.
#[derive(Debug, Clone)]
pub struct SurveyReport {
    /// Elevation fit (None when no row had road points).
    pub elevation: Option<ProfileFit>,
    /// Superelevation fit.
    pub superelevation: Option<ProfileFit>,
    /// Curbs, left then right.
    pub curbs: [Option<Curb>; 2],
    /// Marking lines, by t.
    pub markings: Vec<MarkingLine>,
    /// Potholes and manholes.
    pub features: Vec<SurfaceFeature>,
    /// Rows with a road surface, of all rows.
    pub rows: (usize, usize),
    /// s from the first to the last row with a road surface (None: none), m.
    pub s_range: Option<(f64, f64)>,
    /// Rows whose surface line was too steep to be road surface (left out).
    pub steep_rows: usize,
    /// Checks the survey failed, with what was done instead (the road is still built): the
    /// caller reports them and exits with a failed check.
    pub findings: Vec<Finding>,
}

/// A check the survey failed, and what the road holds instead.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// What was checked, e.g. "lanes from marking lines or curbs".
    pub check: &'static str,
    /// What was found and done.
    pub detail: String,
}

/// The road of `axis` (road `road` of it) completed from `grid` and `crgs`.
pub fn survey_road(
    axis: &OpenDrive,
    road: &Road,
    grid: &SectionGrid,
    crgs: &[CrgInput<'_>],
    opts: &SurveyOptions,
) -> Result<(OpenDrive, SurveyReport), String> {
    let eval = RoadEval::new(road);
    let mut findings = Vec::new();
    // 1. The surface line per row (a row too steep to be a road has none).
    let steep = (opts.max_crossfall.tan(), std::cell::Cell::new(0usize));
    let line_of = |r: usize, half: f64| -> Option<[f64; 2]> {
        let l = surface_line(grid, r, half, opts.max_spread)?;
        if l[1].abs() > steep.0 {
            steep.1.set(steep.1.get() + 1);
            return None;
        }
        Some(l)
    };
    let lines: Vec<Option<[f64; 2]>> = (0..grid.rows).map(|r| line_of(r, opts.carriageway)).collect();
    // 2. Curbs, then the surface again between them.
    let curbs = [find_curb(grid, &lines, 1.0), find_curb(grid, &lines, -1.0)];
    steep.1.set(0);
    let lines: Vec<Option<[f64; 2]>> = (0..grid.rows)
        .map(|r| {
            let inner = |c: &Option<Curb>| c.as_ref().map_or(opts.carriageway, |c| (c.t.abs() - 0.3).max(0.5));
            let half = inner(&curbs[0]).min(inner(&curbs[1]));
            line_of(r, half).or(lines[r])
        })
        .collect();
    let rows_with = lines.iter().filter(|l| l.is_some()).count();
    let steep_rows = steep.1.get();
    if rows_with == 0 {
        return Err(format!(
            "no road surface in the points: none of {} cross sections holds a level surface near the reference line ({} too steep): check the axis, the road id and the CRS",
            grid.rows, steep_rows
        ));
    }
    if steep_rows > 0 {
        findings.push(Finding {
            check: "a road surface in every row",
            detail: format!(
                "{steep_rows} of {} rows hold a surface steeper than {:.2} rad across (a facade, a slope): left out",
                grid.rows, opts.max_crossfall
            ),
        });
    }
    let first = lines.iter().position(Option::is_some).unwrap_or(0);
    let last = lines.iter().rposition(Option::is_some).unwrap_or(0);
    let surveyed = (grid.s_of(first) - 0.5 * grid.ds, grid.s_of(last) + 0.5 * grid.ds);
    // 3. Elevation and superelevation.
    let (mut s_e, mut z_e, mut x_e) = (Vec::new(), Vec::new(), Vec::new());
    for (r, l) in lines.iter().enumerate() {
        if let Some([a, b]) = l {
            let s = grid.s_of(r);
            s_e.push(s);
            z_e.push(eval.elevation(s) + a);
            x_e.push(b.atan());
        }
    }
    let elevation = robust_curved_profile(&s_e, &z_e, opts.elevation_tolerance, grid.ds, 1.0);
    let superelevation = robust_curved_profile(&s_e, &x_e, opts.superelevation_tolerance, grid.ds, 1.0);
    // 4. Markings.
    let markings = find_markings(grid, &lines, &curbs, opts);
    // 5. Surface features.
    let mut features = Vec::new();
    for c in crgs {
        features.extend(find_depressions(c.crg));
    }
    // 6. The road.
    let mut out = road.clone();
    if let Some(e) = &elevation {
        out.elevation_profile.elevations = e.held(road.length);
    }
    if let Some(x) = &superelevation {
        out.lateral_profile.superelevations = x.held(road.length);
    }
    let sides = LaneSides::of(road);
    out.lanes = lanes(grid, road.length, &lines, surveyed, &markings, &curbs, &sides, opts, &mut findings);
    let links = crgs.iter().map(|c| crg_link(&c.file, c.crg)).collect();
    attach_surface(&mut out, &mut features, links);
    let odr = OpenDrive { header: axis.header.clone(), roads: vec![out], ..Default::default() };
    let report = SurveyReport {
        elevation,
        superelevation,
        curbs,
        markings,
        features,
        rows: (rows_with, grid.rows),
        s_range: Some(surveyed),
        steep_rows,
        findings,
    };
    Ok((odr, report))
}

/// Median of a slice (sorted in place); None when empty.
fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) })
}

/// The line h = a + b·t through the row's cells with |t| ≤ half, by Tukey's biweight; cells
/// whose heights spread more than `max_spread` (a branch over the road, an echo below it) are
/// left out, and the cells the line keeps must span at least 1 m across (a handful of cells at
/// one place, a pole's foot, fixes no crossfall).
fn surface_line(g: &SectionGrid, r: usize, half: f64, max_spread: f64) -> Option<[f64; 2]> {
    let pts: Vec<(f64, f64)> = (0..g.cols)
        .filter(|&c| g.t_of(c).abs() <= half)
        .filter(|&c| g.spread_h(r, c).is_some_and(|v| v <= max_spread))
        .filter_map(|c| g.mean_h(r, c).map(|h| (g.t_of(c), h)))
        .collect();
    if pts.len() < 10 {
        return None;
    }
    // Cells count once each (a car roof holds many more points than the road beside it);
    // the start is the median height, level, so the road's majority wins.
    let mut w: Vec<f64> = vec![1.0; pts.len()];
    let mut line = [median(&mut pts.iter().map(|p| p.1).collect::<Vec<_>>())?, 0.0];
    for it in 0..10 {
        if it == 0 {
            let mut res: Vec<f64> = pts.iter().map(|p| (p.1 - line[0]).abs()).collect();
            let c = 4.685 * (1.4826 * median(&mut res)?).max(0.002);
            for (p, wi) in pts.iter().zip(w.iter_mut()) {
                let u = (p.1 - line[0]) / c;
                *wi = if u.abs() < 1.0 { (1.0 - u * u).powi(2) } else { 0.0 };
            }
        }
        let (mut sw, mut st, mut sh, mut stt, mut sth) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (p, wi) in pts.iter().zip(&w) {
            sw += wi;
            st += wi * p.0;
            sh += wi * p.1;
            stt += wi * p.0 * p.0;
            sth += wi * p.0 * p.1;
        }
        let det = sw * stt - st * st;
        if sw <= 0.0 || det.abs() < 1e-12 {
            return None;
        }
        line = [(sh * stt - st * sth) / det, (sw * sth - st * sh) / det];
        let mut res: Vec<f64> = pts.iter().map(|p| (p.1 - line[0] - line[1] * p.0).abs()).collect();
        let scale = (1.4826 * median(&mut res)?).max(0.002);
        let c = 4.685 * scale;
        for (p, wi) in pts.iter().zip(w.iter_mut()) {
            let u = (p.1 - line[0] - line[1] * p.0) / c;
            *wi = if u.abs() < 1.0 { (1.0 - u * u).powi(2) } else { 0.0 };
        }
    }
    let kept = || pts.iter().zip(&w).filter(|(_, &wi)| wi > 0.0).map(|(p, _)| p.0);
    let (lo, hi) = (kept().fold(f64::INFINITY, f64::min), kept().fold(f64::NEG_INFINITY, f64::max));
    (kept().count() >= 10 && hi - lo >= 1.0).then_some(line)
}

/// A profile (elevation, superelevation, a lane width) through samples (s ascending) that
/// stays within their range: samples far from the running line through nine (clutter a row's
/// line did not shed) are left out, gaps bridged straight every `step`, then cubic records
/// within `tol` by least squares; where a record leaves the range of the samples about it by
/// more than `tol` (an overshoot between samples), the whole profile is instead a monotone
/// cubic Hermite (Fritsch-Carlson) through the medians of 5 m windows, which never leaves the
/// range of the knots beside it. Fewer than four samples give their median, level.
pub fn robust_profile(s: &[f64], v: &[f64], tol: f64, step: f64, min_length: f64) -> Option<ProfileFit> {
    robust(s, v, tol, step, min_length, false)
}

/// [`robust_profile`] for a profile with vertical curves (elevation, superelevation ramps):
/// clutter is what stands off a running parabola, not a running line.
pub fn robust_curved_profile(s: &[f64], v: &[f64], tol: f64, step: f64, min_length: f64) -> Option<ProfileFit> {
    robust(s, v, tol, step, min_length, true)
}

fn robust(s: &[f64], v: &[f64], tol: f64, step: f64, min_length: f64, curved: bool) -> Option<ProfileFit> {
    let n = s.len().min(v.len());
    if n == 0 {
        return None;
    }
    // The running line: through the nine samples about each (the window shifted inward at
    // the ends, so a ramp's first samples are not taken for outliers), Theil-Sen; when
    // `curved`, through what a parabola leaves whose curvature is the median of the second
    // divided differences of the window's triples. A line alone sits off a vertical curve by
    // half its curvature (times 1 m²): 6 mm on a 170 m crest, more than the tolerance.
    let run: Vec<f64> = (0..n)
        .map(|i| {
            let lo = i.saturating_sub(4).min(n.saturating_sub(9));
            let hi = (lo + 9).min(n);
            let mut second = Vec::with_capacity(84);
            for a in (lo..hi).filter(|_| curved) {
                for b in a + 1..hi {
                    for c in b + 1..hi {
                        if s[b] > s[a] && s[c] > s[b] {
                            let (d1, d2) = ((v[b] - v[a]) / (s[b] - s[a]), (v[c] - v[b]) / (s[c] - s[b]));
                            second.push(2.0 * (d2 - d1) / (s[c] - s[a]));
                        }
                    }
                }
            }
            let q = 0.5 * median(&mut second).unwrap_or(0.0);
            let w: Vec<f64> = (lo..hi).map(|j| v[j] - q * (s[j] - s[i]).powi(2)).collect();
            let mut slopes = Vec::with_capacity(36);
            for a in 0..w.len() {
                for b in a + 1..w.len() {
                    let (sa, sb) = (s[lo + a], s[lo + b]);
                    if sb > sa {
                        slopes.push((w[b] - w[a]) / (sb - sa));
                    }
                }
            }
            let k = median(&mut slopes).unwrap_or(0.0);
            let mut at: Vec<f64> = w.iter().enumerate().map(|(j, wj)| wj - k * (s[lo + j] - s[i])).collect();
            median(&mut at).unwrap_or(v[i])
        })
        .collect();
    let mut dev: Vec<f64> = (0..n).map(|i| (v[i] - run[i]).abs()).collect();
    let scale = 1.4826 * median(&mut dev).unwrap_or(0.0);
    let keep: Vec<usize> = (0..n).filter(|&i| (v[i] - run[i]).abs() <= (4.0 * scale).max(tol)).collect();
    let (ks, kv): (Vec<f64>, Vec<f64>) = keep.iter().map(|&i| (s[i], v[i])).unzip();
    let rejected = n - ks.len();
    let stats = |records: &[Poly3]| -> (f64, f64) {
        let r: Vec<f64> = ks.iter().zip(&kv).map(|(&x, &y)| opendrive::eval::profile_value(records, x) - y).collect();
        let max = r.iter().fold(0.0f64, |a, e| a.max(e.abs()));
        (max, (r.iter().map(|e| e * e).sum::<f64>() / r.len().max(1) as f64).sqrt())
    };
    let s_last = s[n - 1];
    let done = |records: Vec<Poly3>| {
        let (max, rms) = stats(&records);
        ProfileFit { records, max, rms, rejected, s_last }
    };
    if ks.len() < 4 {
        let m = median(&mut kv.clone()).unwrap_or(v[0]);
        return Some(done(vec![Poly3 { s: s[0], a: m, b: 0.0, c: 0.0, d: 0.0 }]));
    }
    let (bs, bv) = bridge(&ks, &kv, step);
    if let Ok(f) = fit_profile(&bs, &bv, &FitOptions { tolerance: tol, min_length }) {
        if !overshoots(&f.records, &ks, &kv, s_last, tol) {
            let (max, rms) = stats(&f.records);
            return Some(ProfileFit { max, rms, rejected: rejected + f.rejected, s_last, records: f.records });
        }
    }
    Some(done(monotone_hermite(&ks, &kv, 5.0)))
}

/// Whether `records` leave the range of the samples about them (those within 2 m of a record,
/// and the nearest one on each side) by more than `tol` anywhere from the first record to
/// `end`.
fn overshoots(records: &[Poly3], s: &[f64], v: &[f64], end: f64, tol: f64) -> bool {
    for (k, rec) in records.iter().enumerate() {
        let (a, b) = (rec.s, records.get(k + 1).map_or(end, |n| n.s));
        if b <= a {
            continue;
        }
        let (i0, i1) = (s.partition_point(|&x| x < a - 2.0), s.partition_point(|&x| x <= b + 2.0));
        let (i0, i1) = (i0.saturating_sub(1), (i1 + 1).min(s.len()));
        let (lo, hi) = v[i0..i1].iter().fold((f64::INFINITY, f64::NEG_INFINITY), |r, &x| (r.0.min(x), r.1.max(x)));
        if lo > hi {
            continue;
        }
        let steps = ((b - a) / 0.1).ceil().max(1.0) as usize;
        for j in 0..=steps {
            let x = opendrive::eval::profile_value(records, a + (b - a) * j as f64 / steps as f64);
            if !(x >= lo - tol && x <= hi + tol) {
                return true;
            }
        }
    }
    false
}

/// Cubic Hermite records through the medians (of s and of v) of windows of `window` metres,
/// with Fritsch-Carlson slopes: monotone between knots, level at a knot that is a local
/// extreme, so no record leaves the range of its two knots.
fn monotone_hermite(s: &[f64], v: &[f64], window: f64) -> Vec<Poly3> {
    let mut knots: Vec<(f64, f64)> = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let j = s.partition_point(|&x| x < s[i] + window).max(i + 1);
        if let (Some(ks), Some(kv)) = (median(&mut s[i..j].to_vec()), median(&mut v[i..j].to_vec())) {
            knots.push((ks, kv));
        }
        i = j;
    }
    // Knots at the first and the last sample too, on the line through the window there (a
    // median knot lies mid-window: a ramp to the survey's end would be cut short).
    let line_at = |lo: usize, hi: usize, x: f64| -> Option<f64> {
        let n = (hi - lo) as f64;
        let (ms, mv) = (s[lo..hi].iter().sum::<f64>() / n, v[lo..hi].iter().sum::<f64>() / n);
        let sxx: f64 = s[lo..hi].iter().map(|a| (a - ms) * (a - ms)).sum();
        let sxy: f64 = s[lo..hi].iter().zip(&v[lo..hi]).map(|(a, b)| (a - ms) * (b - mv)).sum();
        (sxx > 0.0).then(|| mv + sxy / sxx * (x - ms))
    };
    if knots.len() >= 2 {
        let (n, first, last) = (s.len(), s[0], s[s.len() - 1]);
        let head = s.partition_point(|&x| x < first + window);
        let tail = s.partition_point(|&x| x <= last - window);
        if let Some(y) = line_at(0, head, first).filter(|_| first < knots[0].0 - 1e-6) {
            knots.insert(0, (first, y));
        }
        if let Some(y) = line_at(tail, n, last).filter(|_| last > knots[knots.len() - 1].0 + 1e-6) {
            knots.push((last, y));
        }
    }
    let m = knots.len();
    if m < 2 {
        return knots.first().map(|k| vec![Poly3 { s: k.0, a: k.1, b: 0.0, c: 0.0, d: 0.0 }]).unwrap_or_default();
    }
    let h: Vec<f64> = knots.windows(2).map(|w| w[1].0 - w[0].0).collect();
    let d: Vec<f64> = knots.windows(2).zip(&h).map(|(w, h)| (w[1].1 - w[0].1) / h).collect();
    let mut slope = vec![0.0; m];
    slope[0] = d[0];
    slope[m - 1] = d[m - 2];
    for k in 1..m - 1 {
        if d[k - 1] * d[k] > 0.0 {
            // Weighted harmonic mean (Fritsch-Butland), within the monotone region.
            let (w1, w2) = (2.0 * h[k] + h[k - 1], h[k] + 2.0 * h[k - 1]);
            slope[k] = (w1 + w2) / (w1 / d[k - 1] + w2 / d[k]);
        }
    }
    // End slopes within 3x the secant, so the end pieces are monotone too.
    for (k, dk) in [(0, d[0]), (m - 1, d[m - 2])] {
        if slope[k] * dk <= 0.0 {
            slope[k] = 0.0;
        } else if slope[k].abs() > 3.0 * dk.abs() {
            slope[k] = 3.0 * dk;
        }
    }
    (0..m - 1)
        .map(|k| {
            let (y0, m0, m1, hk) = (knots[k].1, slope[k], slope[k + 1], h[k]);
            Poly3 {
                s: knots[k].0,
                a: y0,
                b: m0,
                c: (3.0 * d[k] - 2.0 * m0 - m1) / hk,
                d: (m0 + m1 - 2.0 * d[k]) / (hk * hk),
            }
        })
        // Level from the last knot on (no cubic carried past it).
        .chain(std::iter::once(Poly3 { s: knots[m - 1].0, a: knots[m - 1].1, b: 0.0, c: 0.0, d: 0.0 }))
        .collect()
}

/// Heights above the row's surface line, per column (NaN where empty or no line); the median
/// of five rows.
fn residuals(g: &SectionGrid, lines: &[Option<[f64; 2]>], r: usize) -> Vec<f64> {
    let (lo, hi) = (r.saturating_sub(2), (r + 3).min(g.rows));
    (0..g.cols)
        .map(|c| {
            let mut v: Vec<f64> = (lo..hi)
                .filter_map(|rr| Some(g.mean_h(rr, c)? - lines[rr].map(|l| l[0] + l[1] * g.t_of(c))?))
                .collect();
            median(&mut v).unwrap_or(f64::NAN)
        })
        .collect()
}

/// The curb on one side (`side` +1 left, -1 right): per row the first rise of 6 cm within
/// 0.3 m outward from 1 m, where the 0.3 m before it are at road level.
fn find_curb(g: &SectionGrid, lines: &[Option<[f64; 2]>], side: f64) -> Option<Curb> {
    let cols: Vec<usize> = {
        let mut c: Vec<usize> = (0..g.cols).filter(|&c| g.t_of(c) * side >= 1.0).collect();
        if side < 0.0 {
            c.reverse();
        }
        c
    };
    let (before, after) = ((0.3 / g.dt).round() as usize, (0.3 / g.dt).round() as usize);
    let mut samples = Vec::new();
    let mut heights = Vec::new();
    for r in 0..g.rows {
        if lines[r].is_none() {
            continue;
        }
        let res = residuals(g, lines, r);
        let prof: Vec<f64> = cols.iter().map(|&c| res[c]).collect();
        for j in before..prof.len().saturating_sub(after) {
            let mut b: Vec<f64> = prof[j - before..j].iter().copied().filter(|v| v.is_finite()).collect();
            let mut a: Vec<f64> = prof[j..j + after].iter().copied().filter(|v| v.is_finite()).collect();
            if b.len() < before / 2 || a.len() < after / 2 {
                continue;
            }
            let (mb, ma) = (median(&mut b).unwrap_or(f64::NAN), median(&mut a).unwrap_or(f64::NAN));
            if mb.abs() < 0.03 && ma - mb >= 0.06 {
                // The step: the first column past half the rise.
                let mid = 0.5 * (ma + mb);
                let k = (j.saturating_sub(before / 2)..j + after).find(|&k| prof[k] > mid).unwrap_or(j);
                samples.push((g.s_of(r), g.t_of(cols[k]) - 0.5 * g.dt * side));
                heights.push(ma - mb);
                break;
            }
        }
    }
    // A curb is seen along most of the rows that have a surface.
    let rows_with = lines.iter().filter(|l| l.is_some()).count();
    if samples.len() < 10 || samples.len() * 2 < rows_with {
        return None;
    }
    // Drop samples far from the running median (a car's sill, a bin).
    let ts: Vec<f64> = samples.iter().map(|p| p.1).collect();
    let kept: Vec<(f64, f64)> = samples
        .iter()
        .enumerate()
        .filter(|(i, p)| {
            let mut w: Vec<f64> = ts[i.saturating_sub(5)..(i + 6).min(ts.len())].to_vec();
            median(&mut w).is_some_and(|m| (p.1 - m).abs() < 0.1)
        })
        .map(|(_, p)| *p)
        .collect();
    let t = median(&mut kept.iter().map(|p| p.1).collect::<Vec<_>>())?;
    let height = median(&mut heights)?;
    Some(Curb { t, height, samples: kept })
}

/// Marking hits per row, tracked into lines.
fn find_markings(
    g: &SectionGrid,
    lines: &[Option<[f64; 2]>],
    curbs: &[Option<Curb>; 2],
    opts: &SurveyOptions,
) -> Vec<MarkingLine> {
    let reach = |c: &Option<Curb>| c.as_ref().map_or(f64::INFINITY, |c| c.t.abs() + 0.1);
    let (left_max, right_max) = (reach(&curbs[0]), reach(&curbs[1]));
    let win = (0.6 / g.dt).round() as usize;
    struct Track {
        hits: Vec<(usize, f64, f64)>,
    }
    let mut tracks: Vec<Track> = Vec::new();
    for (r, line) in lines.iter().enumerate() {
        let Some(line) = *line else { continue };
        let inten: Vec<f64> = (0..g.cols)
            .map(|c| {
                let t = g.t_of(c);
                let inside = if t >= 0.0 { t <= left_max } else { -t <= right_max };
                let level = g.mean_h(r, c).is_some_and(|h| (h - line[0] - line[1] * t).abs() < 0.05);
                if inside && level {
                    g.mean_intensity(r, c).unwrap_or(f64::NAN)
                } else {
                    f64::NAN
                }
            })
            .collect();
        let bright = |c: usize| -> Option<f64> {
            let i = inten[c];
            if !i.is_finite() {
                return None;
            }
            let mut bg: Vec<f64> = inten[c.saturating_sub(win)..(c + win + 1).min(g.cols)]
                .iter()
                .copied()
                .filter(|v| v.is_finite())
                .collect();
            let b = median(&mut bg)?;
            (b > 0.0 && i > opts.contrast * b).then_some(i - b)
        };
        // Runs of bright cells; empty cells (far from the scanner, cells are sparse) neither
        // end nor widen a run, and its edges lie halfway to the dark cells beside it.
        let state: Vec<Option<bool>> = (0..g.cols).map(|c| inten[c].is_finite().then(|| bright(c).is_some())).collect();
        let mut hits = Vec::new();
        let mut c = 0;
        while c < g.cols {
            if state[c] != Some(true) {
                c += 1;
                continue;
            }
            let (first, mut last) = (c, c);
            let (mut sw, mut swt) = (0.0, 0.0);
            let mut k = c;
            while k < g.cols && state[k] != Some(false) && (k - last) as f64 * g.dt <= 0.1 {
                if state[k] == Some(true) {
                    let e = bright(k).unwrap_or(0.0);
                    sw += e;
                    swt += e * g.t_of(k);
                    last = k;
                }
                k += 1;
            }
            let dark_before = (0..first).rev().find(|&j| state[j] == Some(false));
            let dark_after = (last + 1..g.cols).find(|&j| state[j] == Some(false));
            let lo = dark_before.map_or(g.t_of(first) - 0.5 * g.dt, |j| 0.5 * (g.t_of(j) + g.t_of(first)));
            let hi = dark_after.map_or(g.t_of(last) + 0.5 * g.dt, |j| 0.5 * (g.t_of(j) + g.t_of(last)));
            let width = hi - lo;
            if (0.06..=0.6).contains(&width) && sw > 0.0 {
                hits.push((swt / sw, width));
            }
            c = last + 1;
        }
        for (t, w) in hits {
            // How far a track's line is from t at this row: from where it was last seen, or,
            // across a gap of more than 2 m (between dashes, behind a car), from where it
            // heads (a line that tapers or splays crosses the rows obliquely). Not within 2 m:
            // two lines of a double line would swap hits.
            let off = |tr: &Track| {
                tr.hits.last().map_or(f64::INFINITY, |h| {
                    let seen = (h.1 - t).abs();
                    if (r - h.0) as f64 * g.ds <= 2.0 {
                        seen
                    } else {
                        seen.min((track_ahead(&tr.hits, r, g.ds) - t).abs())
                    }
                })
            };
            let near = tracks
                .iter_mut()
                // Across 20 m of lost sight, or 40 m (an occlusion, cobbles) right on line.
                .filter_map(|tr| {
                    let (gap, dt) = ((r - tr.hits.last()?.0) as f64 * g.ds, off(tr));
                    ((gap <= 20.0 && dt < 0.2) || (gap <= 40.0 && dt < 0.08)).then_some((dt, tr))
                })
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, tr)| tr);
            match near {
                Some(tr) if tr.hits.last().is_some_and(|h| h.0 != r) => tr.hits.push((r, t, w)),
                _ => tracks.push(Track { hits: vec![(r, t, w)] }),
            }
        }
    }
    let mut out: Vec<MarkingLine> = tracks
        .into_iter()
        .filter(|tr| tr.hits.len() >= 10 && (tr.hits[tr.hits.len() - 1].0 - tr.hits[0].0) as f64 * g.ds >= 10.0)
        .map(|tr| {
            let (r0, r1) = (tr.hits[0].0, tr.hits[tr.hits.len() - 1].0);
            // Runs of rows with and without the line.
            let mut present = vec![false; r1 - r0 + 1];
            for h in &tr.hits {
                present[h.0 - r0] = true;
            }
            let (mut on, mut off) = (Vec::new(), Vec::new());
            let mut run = (present[0], 0usize);
            for &p in &present {
                if p == run.0 {
                    run.1 += 1;
                } else {
                    if run.0 {
                        on.push(run.1)
                    } else {
                        off.push(run.1)
                    }
                    run = (p, 1);
                }
            }
            if run.0 {
                on.push(run.1);
            }
            let absent = present.iter().filter(|p| !**p).count() as f64 / present.len() as f64;
            let broken = off.iter().filter(|&&n| n >= 2).count() >= 3 && (0.25..0.85).contains(&absent);
            let to_m = |v: Vec<usize>| median(&mut v.into_iter().map(|n| n as f64 * g.ds).collect::<Vec<_>>());
            let dash_gap = if broken { to_m(on).zip(to_m(off)) } else { None };
            let mut ts: Vec<f64> = tr.hits.iter().map(|h| h.1).collect();
            let mut ws: Vec<f64> = tr.hits.iter().map(|h| h.2).collect();
            MarkingLine {
                t: median(&mut ts).unwrap_or(0.0),
                s_range: (g.s0 + r0 as f64 * g.ds, g.s0 + (r1 + 1) as f64 * g.ds),
                kind: if broken { "broken" } else { "solid" },
                width: (median(&mut ws).unwrap_or(0.12) * 100.0).round() / 100.0,
                dash_gap,
                samples: tr.hits.iter().map(|h| (g.s_of(h.0), h.1)).collect(),
            }
        })
        .collect();
    out.sort_by(|a, b| a.t.total_cmp(&b.t));
    out
}

/// Where a tracked line (hits: row, t, width) is at row `r`: its last t carried on at its
/// heading over the last [`HEADING_SPAN`] of hits (held straight when they span less than
/// half of it, and at most 0.35 m a metre: a taper), so a line that tapers or splays is
/// followed across a gap between its dashes or a car.
fn track_ahead(hits: &[(usize, f64, f64)], r: usize, ds: f64) -> f64 {
    let Some(&(r1, t1, _)) = hits.last() else { return f64::NAN };
    let span = (HEADING_SPAN / ds).round() as usize;
    let first = hits.iter().rev().take_while(|h| r1 - h.0 <= span).last().copied();
    match first {
        Some((r0, t0, _)) if (r1 - r0) * 2 >= span => {
            let slope = ((t1 - t0) / ((r1 - r0) as f64 * ds)).clamp(-0.35, 0.35);
            t1 + slope * (r.saturating_sub(r1)) as f64 * ds
        }
        _ => t1,
    }
}

/// Hits along s over which a tracked line's heading is taken, m.
const HEADING_SPAN: f64 = 3.0;

/// A lane border: samples of t(s), its extent, and the mark drawn on it.
struct Border {
    samples: Vec<(f64, f64)>,
    s_range: (f64, f64),
    mark: RoadMark,
    /// The type of the lane it bounds on the outside.
    kind: &'static str,
}

impl Border {
    /// Mean distance of its samples from the centre line, m.
    fn mean_t(&self) -> f64 {
        self.samples.iter().map(|p| p.1).sum::<f64>() / self.samples.len().max(1) as f64
    }
}

fn road_mark(kind: &str, width: f64, height: Option<f64>) -> RoadMark {
    RoadMark {
        s_offset: 0.0,
        kind: kind.into(),
        weight: (kind != "curb").then(|| "standard".into()),
        color: if kind == "curb" { "standard" } else { "white" }.into(),
        width: Some(width),
        lane_change: (kind != "curb").then(|| if kind == "broken" { "both" } else { "none" }.into()),
        height,
        ..Default::default()
    }
}

/// The centre line: per row, among the lines seen there, an inner one (not the outermost on
/// either side; a lone line within 0.5 m of the reference line where only two are seen):
/// one within 0.5 m of the centre the axis declares (`declared`, its lane offset: a designed
/// road's reference line is its centre line, whatever the lines' types), else solid before
/// broken, then the nearest to the previous row's choice; the middle of a double line. A row
/// whose candidates all lie more than [`CENTRE_JUMP`] from the previous choice, made within
/// the last 20 m, gives no sample: in a gap of a broken centre line an inner lane line is
/// seen, not the centre. Its samples, and the line chosen most often (for the centre lane's
/// mark).
fn centre_line(markings: &[MarkingLine], declared: impl Fn(f64) -> f64) -> (Vec<(f64, f64)>, Option<&MarkingLine>) {
    let mut rows: std::collections::BTreeMap<i64, Vec<(f64, usize)>> = std::collections::BTreeMap::new();
    for (k, m) in markings.iter().enumerate() {
        for &(s, t) in &m.samples {
            rows.entry((s * 1000.0).round() as i64).or_default().push((t, k));
        }
    }
    let (mut out, mut votes) = (Vec::new(), vec![0usize; markings.len()]);
    // The previous choice: (s, t).
    let mut prev: Option<(f64, f64)> = None;
    for (key, mut hits) in rows {
        let s = key as f64 / 1000.0;
        let c0 = declared(s);
        hits.sort_by(|a, b| a.0.total_cmp(&b.0));
        let cands: Vec<(f64, usize)> = if hits.len() >= 3 {
            hits[1..hits.len() - 1].to_vec()
        } else {
            hits.iter().copied().filter(|h| (h.0 - c0).abs() < 0.5).collect()
        };
        let recent = prev.filter(|p| s - p.0 <= 20.0);
        let cands: Vec<(f64, usize)> =
            cands.into_iter().filter(|h| recent.is_none_or(|p| (h.0 - p.1).abs() <= CENTRE_JUMP)).collect();
        let last_t = prev.map_or(c0, |p| p.1);
        let pick = cands.iter().min_by(|a, b| {
            let rank =
                |h: &(f64, usize)| ((h.0 - c0).abs() >= 0.5, markings[h.1].kind != "solid", (h.0 - last_t).abs());
            let (ra, rb) = (rank(a), rank(b));
            ra.0.cmp(&rb.0).then(ra.1.cmp(&rb.1)).then(ra.2.total_cmp(&rb.2))
        });
        if let Some(&(t, k)) = pick {
            // A double line: the centre is between its two lines.
            let pair = hits
                .iter()
                .find(|h| h.1 != k && (h.0 - t).abs() <= DOUBLE_LINE && markings[h.1].kind == markings[k].kind);
            let t = pair.map_or(t, |h| 0.5 * (t + h.0));
            out.push((s, t));
            votes[k] += 1;
            prev = Some((s, t));
        }
    }
    let best = votes.iter().enumerate().filter(|v| *v.1 > 0).max_by_key(|v| *v.1).map(|v| &markings[v.0]);
    (out, best)
}

/// Two lines of a kind this close or closer are a double line (0.1-0.15 m lines with a gap
/// of 0.1-0.2 m between them), m.
const DOUBLE_LINE: f64 = 0.4;

/// How far the centre line moves from one row to the next at most (a lane offset changes
/// over tens of metres), m.
const CENTRE_JUMP: f64 = 1.0;

/// The sides of the reference line the axis road declares lanes on: both (a road of two
/// directions, or an axis that says nothing, like one fitted to a trajectory), or one (a
/// one-way road or ramp whose reference line is its edge).
/// Only road lanes count: a border, a sidewalk beside a one-way road's reference line is no
/// side of its own; the centre is then the axis's lane offset.
#[derive(Debug, Clone, PartialEq)]
enum LaneSides {
    /// Both, and the axis's lane offset records (where it says the centre is).
    Both(Vec<Poly3>),
    /// Only left (+1) or only right (-1), and the axis's lane offset records.
    One(f64, Vec<Poly3>),
}

impl LaneSides {
    fn of(road: &Road) -> LaneSides {
        let secs = &road.lanes.lane_sections;
        let has = |left: bool| {
            secs.iter().any(|sec| {
                let side = if left { &sec.left } else { &sec.right };
                side.as_ref().is_some_and(|l| {
                    l.lanes.iter().any(|lane| {
                        let kind = lane.kind.as_deref().unwrap_or("none");
                        !matches!(kind, "border" | "none" | "sidewalk" | "walking" | "curb" | "median")
                    })
                })
            })
        };
        let one = |side: f64| LaneSides::One(side, road.lanes.lane_offsets.clone());
        match (has(true), has(false)) {
            (true, false) => one(1.0),
            (false, true) => one(-1.0),
            _ => LaneSides::Both(road.lanes.lane_offsets.clone()),
        }
    }
}

/// Whether the lines are those of a divided road about its reference line: none within 1 m of
/// it, and every line mirrored (within 0.3 m) on the other side. The centre is then the
/// reference line in the median, which no line marks.
fn divided(markings: &[MarkingLine]) -> bool {
    let long: Vec<f64> = markings.iter().filter(|m| m.samples.len() >= 10).map(|m| m.t).collect();
    long.len() >= 2
        && long.iter().all(|t| t.abs() >= 1.0)
        && long.iter().all(|t| long.iter().any(|u| (t + u).abs() < 0.3))
}

/// Lanes between the borders of each side of the centre line (the lane offset); sections
/// where a border starts or ends, within the surveyed s range `surveyed` (the first section
/// from s = 0 and the last to the road's end hold the lanes of the surveyed part). On an axis
/// with lanes on one side only, the centre is the reference line and the other side has no
/// lanes. A side with no marking line or curb gets one lane to the edge of the paved surface;
/// a finding when the points ran out before the pavement was seen to end.
#[allow(clippy::too_many_arguments)]
fn lanes(
    g: &SectionGrid,
    length: f64,
    lines: &[Option<[f64; 2]>],
    surveyed: (f64, f64),
    markings: &[MarkingLine],
    curbs: &[Option<Curb>; 2],
    sides_declared: &LaneSides,
    opts: &SurveyOptions,
    findings: &mut Vec<Finding>,
) -> Lanes {
    let (s_lo, s_hi) = surveyed;
    let (centre_samples, centre) = match sides_declared {
        LaneSides::Both(declared) if !divided(markings) => {
            centre_line(markings, |s| opendrive::eval::profile_value(declared, s))
        }
        LaneSides::Both(_) => (Vec::new(), None),
        // The centre lane's mark: a line along the reference line, if any.
        LaneSides::One(..) => {
            let on_line = |m: &&MarkingLine| m.samples.iter().filter(|p| p.1.abs() < 0.3).count() * 2 > m.samples.len();
            (Vec::new(), markings.iter().filter(on_line).max_by_key(|m| m.samples.len()))
        }
    };
    let width_fit = FitOptions { tolerance: opts.width_tolerance, min_length: 5.0 };
    let lane_offsets: Vec<Poly3> = if let LaneSides::One(_, declared) = &sides_declared {
        declared.clone()
    } else if centre_samples.len() >= 10 {
        let (s, t): (Vec<f64>, Vec<f64>) = centre_samples.iter().copied().unzip();
        let fit = fit_profile(&s, &t, &width_fit).map(|f| f.held(length)).unwrap_or_default();
        // A centre on the reference line needs no lane offset.
        if fit.iter().all(|p| p.a.abs() < 0.02 && p.b.abs() < 1e-4 && p.c.abs() < 1e-6 && p.d.abs() < 1e-8) {
            Vec::new()
        } else {
            fit
        }
    } else {
        Vec::new()
    };
    // (No records: 0.)
    let tc = |s: f64| opendrive::eval::profile_value(&lane_offsets, s);
    let centre_rows: std::collections::HashSet<i64> =
        centre_samples.iter().map(|p| (p.0 * 1000.0).round() as i64).collect();
    let mut sides: [Vec<Border>; 2] = [Vec::new(), Vec::new()];
    // Samples as distances from the centre line, on one side.
    let relative = |samples: &[(f64, f64)], sign: f64| -> Vec<(f64, f64)> {
        samples.iter().map(|&(s, t)| (s, t - tc(s))).filter(|p| p.1 * sign >= 0.5).map(|(s, d)| (s, d.abs())).collect()
    };
    for (k, sign) in [(0usize, 1.0f64), (1, -1.0)] {
        if matches!(sides_declared, LaneSides::One(side, _) if *side != sign) {
            continue;
        }
        let curb = curbs[k].as_ref();
        for m in markings {
            // The centre line itself, or a line mostly on the other side.
            let on_centre = m.samples.iter().filter(|p| {
                let key = (p.0 * 1000.0).round() as i64;
                centre_rows.contains(&key) && (p.1 - tc(p.0)).abs() < 0.3
            });
            if on_centre.count() * 2 > m.samples.len() || curb.is_some_and(|c| (c.t - m.t).abs() < 0.35) {
                continue;
            }
            let rel = relative(&m.samples, sign);
            if rel.len() * 2 <= m.samples.len() || rel.len() < 10 {
                continue;
            }
            let s_range = (rel[0].0 - 0.5 * g.ds, rel[rel.len() - 1].0 + 0.5 * g.ds);
            sides[k].push(Border { samples: rel, s_range, mark: road_mark(m.kind, m.width, None), kind: "driving" });
        }
        join_gaps(&mut sides[k]);
        if let Some(c) = curb {
            // The curb's border carries the mark of a line along it, if any.
            let line = markings.iter().find(|m| (c.t - m.t).abs() < 0.35);
            let mark =
                line.map_or_else(|| road_mark("curb", 0.15, Some(c.height)), |m| road_mark(m.kind, m.width, None));
            let rel = relative(&c.samples, sign);
            if !rel.is_empty() {
                sides[k].push(Border { samples: rel, s_range: (s_lo, s_hi), mark, kind: "driving" });
            }
        }
        if curb.is_none() && !sides[k].is_empty() {
            // Pavement seen to run on beyond the outermost line by a lane's width or more (an
            // unmarked outer lane, a hard shoulder) gets a lane to its edge: a shoulder beyond a
            // solid line, a driving lane beyond a broken one.
            let outer = sides[k].iter().max_by(|a, b| a.mean_t().total_cmp(&b.mean_t()));
            let edge = paved_edge(g, lines, sign, opts.max_spread);
            let rel: Vec<(f64, f64)> = edge.samples.iter().map(|&(s, t)| (s, (t - tc(s)) * sign)).collect();
            let t = median(&mut rel.iter().map(|p| p.1).collect::<Vec<_>>());
            if let (Some(outer), Some(t), true) = (outer, t, edge.seen) {
                if t >= outer.mean_t() + UNMARKED_LANE {
                    let kind = if outer.mark.kind == "solid" { "shoulder" } else { "driving" };
                    sides[k].push(Border {
                        samples: rel,
                        s_range: (s_lo, s_hi),
                        mark: road_mark("none", 0.12, None),
                        kind,
                    });
                }
            }
        }
        if sides[k].is_empty() {
            let edge = paved_edge(g, lines, sign, opts.max_spread);
            let rel: Vec<(f64, f64)> =
                edge.samples.iter().map(|&(s, t)| (s, (t - tc(s)) * sign)).filter(|p| p.1 >= MIN_LANE_WIDTH).collect();
            let side = if sign > 0.0 { "left" } else { "right" };
            let t = median(&mut rel.iter().map(|p| p.1).collect::<Vec<_>>());
            // A pavement seen to end (at gravel, grass or a step) bounds the road as a line
            // would; only an edge where the points ran out, or none at all, is a finding.
            let detail = match t {
                Some(_) if edge.seen => None,
                None if edge.seen && edge.samples.is_empty() => None,
                Some(t) => Some(format!(
                    "no marking line or curb on the {side}: one lane to where the points end, {t:.2} m from the centre ({} rows)",
                    rel.len()
                )),
                None => Some(format!("no marking line, curb or paved surface on the {side}: no lane")),
            };
            if let Some(detail) = detail {
                findings.push(Finding { check: "lanes from marking lines or curbs", detail });
            }
            if !rel.is_empty() {
                sides[k].push(Border {
                    samples: rel,
                    s_range: (s_lo, s_hi),
                    mark: road_mark("none", 0.12, None),
                    kind: "driving",
                });
            }
        }
        sides[k].sort_by(|a, b| a.mean_t().total_cmp(&b.mean_t()));
    }
    // Section starts: the road's start and where a border starts or ends (5 m inside).
    let mut cuts = vec![0.0];
    for b in sides.iter().flatten() {
        for s in [b.s_range.0, b.s_range.1] {
            if s > s_lo + 5.0 && s < s_hi - 5.0 && s < length - 5.0 {
                cuts.push(s);
            }
        }
    }
    cuts.sort_by(f64::total_cmp);
    cuts.dedup_by(|a, b| (*a - *b).abs() < 5.0);
    let mut sections = Vec::new();
    // Sections, then more where a lane narrows to nothing or grows from nothing within one
    // ([`narrowing_cuts`]), a few rounds (each cut refits the widths either side).
    for _ in 0..4 {
        sections.clear();
        for (i, &a) in cuts.iter().enumerate() {
            let b = cuts.get(i + 1).copied().unwrap_or(length);
            // The borders active in the middle of the section's surveyed part (a survey of part of
            // the road has its lanes from that part).
            let mid = if a < s_hi && b > s_lo { 0.5 * (a.max(s_lo) + b.min(s_hi)) } else { 0.5 * (a + b) };
            let side_lanes = |k: usize, sign: f64| -> Vec<Lane> {
                let active: Vec<&Border> =
                    sides[k].iter().filter(|br| br.s_range.0 <= mid && br.s_range.1 >= mid).collect();
                let mut out = Vec::new();
                for br in active.iter().copied() {
                    // Width: |t| of this border less the outer border of the lanes made so far
                    // (their fitted widths, which bridge the gaps between a broken line's
                    // dashes and where it was hidden or ended), in the section's rows.
                    let inner = |x: f64| -> f64 {
                        out.iter().map(|l: &Lane| opendrive::eval::profile_value(&l.widths, x)).sum()
                    };
                    let (ss, ws): (Vec<f64>, Vec<f64>) =
                        within(&br.samples, a, b, g.ds).into_iter().map(|(s, t)| (s - a, t - inner(s - a))).unzip();
                    // A border closer than a lane can be to the previous one (a double line, a
                    // stray detection in a sparse survey) makes no lane of its own: its width
                    // would be noise about zero.
                    if median(&mut ws.clone()).is_none_or(|w| w < MIN_LANE_WIDTH) {
                        continue;
                    }
                    // Gaps (a dash pattern, a parked car) bridged straight, stray samples left out
                    // and no record beyond the samples' range (`robust_profile`).
                    let widths = robust_profile(&ss, &ws, opts.width_tolerance, g.ds, 5.0)
                        .map(|f| f.held(b - a))
                        .unwrap_or_else(|| {
                            let w = median(&mut ws.clone()).unwrap_or(3.0);
                            vec![Poly3 { s: 0.0, a: w, b: 0.0, c: 0.0, d: 0.0 }]
                        });
                    out.push(Lane {
                        id: (out.len() as i32 + 1) * sign as i32,
                        kind: Some(br.kind.into()),
                        level: Some(false),
                        widths,
                        road_marks: vec![br.mark.clone()],
                        ..Default::default()
                    });
                }
                out
            };
            let (left, right) = (side_lanes(0, 1.0), side_lanes(1, -1.0));
            let centre_mark =
                centre.map_or_else(|| road_mark("none", 0.12, None), |m| road_mark(m.kind, m.width, None));
            let centre_lane =
                Lane { id: 0, kind: Some("none".into()), road_marks: vec![centre_mark], ..Default::default() };
            let wrap = |lanes: Vec<Lane>| (!lanes.is_empty()).then(|| LaneSide { lanes, extras: Extras::default() });
            let mut left = left;
            left.reverse();
            sections.push(LaneSection {
                s: a,
                left: wrap(left),
                center: Some(LaneSide { lanes: vec![centre_lane], extras: Extras::default() }),
                right: wrap(right),
                ..Default::default()
            });
        }
        let before = cuts.len();
        cuts.extend(narrowing_cuts(&sections, length, surveyed));
        cuts.sort_by(f64::total_cmp);
        cuts.dedup_by(|a, b| (*a - *b).abs() < 5.0);
        if cuts.len() == before {
            break;
        }
    }
    Lanes { lane_offsets, lane_sections: sections, ..Default::default() }
}

/// Line borders of one side that are one border with a gap: one starts at most
/// [`BORDER_GAP`] after another ends, within 1 m of where that one was last seen (a line that
/// crosses the rows obliquely where a 2+1 road changes sides, worn away, under a car): joined,
/// so the lanes either side run on across the gap (their widths bridged straight) instead of
/// a section of its own in which they are one lane.
fn join_gaps(borders: &mut Vec<Border>) {
    borders.sort_by(|a, b| a.s_range.0.total_cmp(&b.s_range.0));
    let mut i = 0;
    while i < borders.len() {
        let (end, last) = (borders[i].s_range.1, borders[i].samples.last().map_or(f64::NAN, |p| p.1));
        let next = (i + 1..borders.len()).find(|&j| {
            let b = &borders[j];
            let gap = b.s_range.0 - end;
            (0.0..=BORDER_GAP).contains(&gap) && b.samples.first().is_some_and(|p| (p.1 - last).abs() <= 1.0)
        });
        match next {
            Some(j) => {
                let b = borders.remove(j);
                let a = &mut borders[i];
                a.samples.extend(b.samples);
                a.s_range.1 = b.s_range.1;
            }
            None => i += 1,
        }
    }
}

/// The samples of a border (s ascending) from `a` to `b`; where it has none there (it runs
/// through the section unseen: a worn line, cars), points every `step` on the straight line
/// between its last sample before and its first after, when they are at most twice
/// [`BORDER_GAP`] apart.
fn within(samples: &[(f64, f64)], a: f64, b: f64, step: f64) -> Vec<(f64, f64)> {
    let (i, j) = (samples.partition_point(|p| p.0 < a), samples.partition_point(|p| p.0 <= b));
    if i < j {
        return samples[i..j].to_vec();
    }
    match (i.checked_sub(1).and_then(|k| samples.get(k)), samples.get(j)) {
        (Some(&(s0, t0)), Some(&(s1, t1))) if s1 - s0 <= 2.0 * BORDER_GAP && s1 > s0 => {
            let n = ((b - a) / step).floor() as usize;
            (0..=n).map(|k| a + k as f64 * step).map(|s| (s, t0 + (t1 - t0) * (s - s0) / (s1 - s0))).collect()
        }
        _ => Vec::new(),
    }
}

/// Longest gap between two line borders [`join_gaps`] joins, m.
const BORDER_GAP: f64 = 20.0;

/// Where sections should be cut because a lane of one is narrower than [`MIN_LANE_WIDTH`]
/// over 5 m or more at its end (two borders that converge: a lane that ends) or at its start
/// (one that begins), within the surveyed s range `surveyed` and 5 m inside the section: the
/// lane then has a section of its own without it, instead of a width that runs on about zero,
/// or below it, to the section's end.
fn narrowing_cuts(sections: &[LaneSection], length: f64, surveyed: (f64, f64)) -> Vec<f64> {
    let mut out = Vec::new();
    for (i, sec) in sections.iter().enumerate() {
        let end = sections.get(i + 1).map_or(length, |n| n.s);
        let (a, b) = (sec.s.max(surveyed.0), end.min(surveyed.1));
        if b - a < 10.0 {
            continue;
        }
        let n = ((b - a) / 0.5).floor() as usize;
        let xs: Vec<f64> = (0..=n).map(|k| a + (b - a) * k as f64 / n as f64).collect();
        for lane in sec.left.iter().chain(&sec.right).flat_map(|side| &side.lanes) {
            let narrow: Vec<bool> =
                xs.iter().map(|&x| opendrive::eval::profile_value(&lane.widths, x - sec.s) < MIN_LANE_WIDTH).collect();
            // Narrow from the first sample of the last run to the end, or from the start to the
            // last sample of the first run.
            let tail = narrow.iter().rev().take_while(|&&q| q).count();
            let head = narrow.iter().take_while(|&&q| q).count();
            if tail > 0 && tail < narrow.len() {
                let x = xs[narrow.len() - tail];
                if b - x >= 5.0 && x - sec.s >= 5.0 {
                    out.push(x);
                }
            }
            if head > 0 && head < narrow.len() {
                let x = xs[head - 1];
                if x - a >= 5.0 && end - x >= 5.0 {
                    out.push(x);
                }
            }
        }
    }
    out
}

/// Heights in a section cell spread more than this on gravel or grass, not on asphalt (range
/// noise and texture: 2-3 mm; setts: up to 5 mm), m.
const ROUGH: f64 = 0.006;

/// The paved surface's edge on one side, found where no marking line or curb bounds it.
#[derive(Debug, Default)]
struct PavedEdge {
    /// Samples (s, t) of the edge, one extent held along the survey.
    samples: Vec<(f64, f64)>,
    /// Whether the surface was seen to end there (a step, or gravel or grass beyond it) in most
    /// rows, rather than the points running out.
    seen: bool,
}

/// The paved surface's edge on one side (`side` +1 left, -1 right). Per row with a surface
/// line, the last cell at road level outward from the reference line before three cells off
/// it (a curb, a verge's gravel or grass, a wall) or 2 m without cells (far from the scanner
/// cells are sparse). At road level: heights neither rough (spread up to [`ROUGH`]) nor
/// spread, and within 3 cm (plus 5 % of the distance) of the last level cell carried on at the
/// row's crossfall, so a crown or a crossfall that changes bends the surface but a 6 cm step
/// ends it; cells whose heights spread more than `max_spread` (under a branch, a facade, a
/// curb's face) tell nothing. The side gets one extent, held along the survey: the one a
/// quarter of the rows reach (a car, people, a gap in the points or a profile that crosses the
/// rows obliquely cut rows short; a fallback cannot tell a narrowing from them). No samples
/// when most rows end before any paved cell: the pavement ends at the reference line (a
/// one-sided road).
fn paved_edge(g: &SectionGrid, lines: &[Option<[f64; 2]>], side: f64, max_spread: f64) -> PavedEdge {
    let mut cols: Vec<usize> = (0..g.cols).filter(|&c| g.t_of(c) * side >= 0.0).collect();
    if side < 0.0 {
        cols.reverse();
    }
    /// How a row ends.
    enum End {
        /// No paved cell before the surface ended (gravel or a step from the start).
        AtStart,
        /// The edge's t, and whether the surface was seen to end there.
        Edge(f64, bool),
    }
    let gap = (2.0 / g.dt).round() as usize;
    // Per column (in the order of `cols`): cells found level, and cells found off, in the rows
    // before each row (row r's counts start at r * cols.len()).
    let nc = cols.len();
    let (mut level_at, mut off_at) = (vec![0u32; (g.rows + 1) * nc], vec![0u32; (g.rows + 1) * nc]);
    let mut per_row: Vec<Option<End>> = Vec::with_capacity(g.rows);
    for r in 0..g.rows {
        level_at.copy_within(r * nc..(r + 1) * nc, (r + 1) * nc);
        off_at.copy_within(r * nc..(r + 1) * nc, (r + 1) * nc);
        let Some(l) = lines[r] else {
            per_row.push(None);
            continue;
        };
        let (mut edge, mut empty, mut off) = (None, 0usize, 0usize);
        // The last level cell (t, h); the row's line at the reference line to start.
        let mut level = (0.0, l[0]);
        let mut end = None;
        for (i, &c) in cols.iter().enumerate() {
            let t = g.t_of(c);
            let near = |h: f64| (h - level.1 - l[1] * (t - level.0)).abs() < 0.03 + 0.05 * (t - level.0).abs();
            match (g.mean_h(r, c), g.spread_h(r, c)) {
                (Some(h), Some(sp)) if sp <= ROUGH && near(h) => {
                    edge = Some(t + 0.5 * g.dt * side);
                    level = (t, h);
                    (empty, off) = (0, 0);
                    level_at[(r + 1) * nc + i] += 1;
                }
                (Some(_), Some(sp)) if sp <= max_spread => {
                    off_at[(r + 1) * nc + i] += 1;
                    // Three cells off in a row end the surface (one is a stone, a leaf).
                    off += 1;
                    if off >= 3 {
                        end = Some(edge.map_or(End::AtStart, |e| End::Edge(e, true)));
                        break;
                    }
                }
                _ => {
                    empty += 1;
                    if empty > gap {
                        break;
                    }
                }
            }
        }
        per_row.push(end.or(edge.map(|e| End::Edge(e, false))));
    }
    let at_start = per_row.iter().flatten().filter(|e| matches!(e, End::AtStart)).count();
    let edges: Vec<(f64, bool)> = per_row
        .iter()
        .flatten()
        .filter_map(|e| match e {
            End::Edge(t, seen) => Some((t * side, *seen)),
            End::AtStart => None,
        })
        .collect();
    if at_start > edges.len() {
        return PavedEdge { samples: Vec::new(), seen: true };
    }
    let seen = 2 * edges.iter().filter(|e| e.1).count() > edges.len();
    let mut far: Vec<f64> = edges.iter().map(|e| e.0).collect();
    far.sort_by(f64::total_cmp);
    let Some(&w) = far.get((far.len() * 3 / 4).min(far.len().saturating_sub(1))) else { return PavedEdge::default() };
    // Where the pavement was seen to end, the edge is where the columns turn from level to
    // off in most of the rows that reach them (a row's own last level cell can be a gravel cell
    // that happened to lie flat, and the quarter of rows reaching farthest are those), between
    // the two columns' centres in proportion to their shares: within a cell. Over the rows of
    // [`EDGE_WINDOW`] around each row, so the edge follows a lane that narrows; a car on the
    // lane covers less than half a window's rows.
    let half = ((0.5 * EDGE_WINDOW / g.ds).round() as usize).max(1);
    let t_of = |i: usize| g.t_of(cols[i]) * side;
    let windowed = |r: usize| -> Option<f64> {
        let (a, b) = (r.saturating_sub(half), (r + half + 1).min(g.rows));
        let diff = |cum: &[u32]| -> Vec<u32> { (0..nc).map(|i| cum[b * nc + i] - cum[a * nc + i]).collect() };
        column_edge(&diff(&level_at), &diff(&off_at), t_of)
    };
    let samples = (0..g.rows)
        .filter(|&r| matches!(per_row[r], Some(End::Edge(..))))
        .map(|r| (g.s_of(r), if seen { windowed(r).unwrap_or(w) } else { w } * side))
        .collect();
    PavedEdge { samples, seen }
}

/// Rows along s over which [`paved_edge`] finds the edge of each row, m.
const EDGE_WINDOW: f64 = 16.0;

/// The distance from the reference line where the share of level cells (`level` of the rows
/// reaching a column, against `off`) first falls below a half going outward, interpolated
/// between the centres (`t_of`, as distances) of the last column above and the first below;
/// None when no column falls below it, or it falls within 1.5 m of the first column, or the
/// columns before it are level in fewer than 80 % of their rows on average. Columns that
/// fewer than 8 rows reach are passed over.
fn column_edge(level: &[u32], off: &[u32], t_of: impl Fn(usize) -> f64) -> Option<f64> {
    let share = |i: usize| {
        let n = level[i] + off[i];
        (n >= 8).then(|| f64::from(level[i]) / f64::from(n))
    };
    let mut last: Option<(f64, f64)> = None;
    let (mut sum, mut n) = (0.0, 0usize);
    for i in 0..level.len() {
        let Some(q) = share(i) else { continue };
        let t = t_of(i);
        if q < 0.5 {
            // Pavement level in most rows up to here (asphalt, concrete); setts, a rough patch
            // or rows cut short all over say nothing of where it ends.
            // Over 1.5 m at least: a marking line over setts is level too.
            let (tl, ql) = last?;
            let wide = (tl - t_of(0)).abs() >= 1.5;
            return (wide && sum / n as f64 >= 0.8).then(|| tl + (t - tl) * (ql - 0.5) / (ql - q));
        }
        last = Some((t, q));
        (sum, n) = (sum + q, n + 1);
    }
    None
}

/// Paved surface beyond the outermost marking line by this much or more is a lane of its own
/// (unmarked, or a shoulder), m: a lane is at least 2.5 m wide, a strip beyond an edge line
/// (0.3-1 m) is not.
const UNMARKED_LANE: f64 = 2.5;

/// Narrower lanes are not lanes (the borders are one line seen twice, or noise), m.
const MIN_LANE_WIDTH: f64 = 0.3;

/// Samples (x ascending) with every gap wider than `step` filled by points every `step` on
/// the straight line across it.
fn bridge(x: &[f64], y: &[f64], step: f64) -> (Vec<f64>, Vec<f64>) {
    let (mut ox, mut oy) = (Vec::with_capacity(x.len()), Vec::with_capacity(y.len()));
    for i in 0..x.len() {
        if i > 0 {
            let gap = x[i] - x[i - 1];
            let n = (gap / step).round() as usize;
            for k in 1..n {
                let f = k as f64 / n as f64;
                ox.push(x[i - 1] + f * gap);
                oy.push(y[i - 1] + f * (y[i] - y[i - 1]));
            }
        }
        ox.push(x[i]);
        oy.push(y[i]);
    }
    (ox, oy)
}

/// Nodes this far below the local surface are in a depression, m.
const DEPTH: f64 = 0.005;

/// Puts road-surface features (sorted here by s, then t) on `road` as `<object>`s and `links`
/// as its `<surface><CRG>`s: what `survey_road` does with its CRGs, for callers that search
/// CRG tiles one at a time.
pub fn attach_surface(road: &mut Road, features: &mut [SurfaceFeature], links: Vec<RoadCrg>) {
    features.sort_by(|a, b| a.s.total_cmp(&b.s).then(a.t.total_cmp(&b.t)));
    road.objects.objects = features
        .iter()
        .enumerate()
        .map(|(i, f)| Object {
            id: format!("{}-{}", f.kind, i + 1),
            s: f.s,
            t: f.t,
            z_offset: -f.depth,
            kind: Some("roadSurface".into()),
            subtype: Some(f.kind.into()),
            name: Some(f.kind.into()),
            hdg: Some(0.0),
            pitch: Some(0.0),
            roll: Some(0.0),
            // A manhole is round: its radius; a pothole its extent.
            radius: (f.kind == "manhole").then_some(0.25 * (f.length + f.width)),
            length: (f.kind != "manhole").then_some(f.length),
            width: (f.kind != "manhole").then_some(f.width),
            height: Some(f.depth.abs()),
            orientation: Some("none".into()),
            ..Default::default()
        })
        .collect();
    road.surface.crgs = links;
}

/// The `<surface><CRG>` link of the CRG `crg` at `file` (relative to the OpenDRIVE file): its u
/// range as the s range, mode attached for residual heights (roadscan's comment says so),
/// genuine for absolute ones.
pub fn crg_link(file: &str, crg: &opencrg::Crg) -> RoadCrg {
    let residual = crg.comment.iter().any(|l| l.contains("z residual"));
    RoadCrg {
        file: file.to_string(),
        s_start: crg.u_first(),
        s_end: crg.u_last(),
        orientation: "same".into(),
        mode: if residual { "attached" } else { "genuine" }.into(),
        purpose: Some("elevation".into()),
        s_offset: None,
        t_offset: Some(0.0),
        z_offset: Some(0.0),
        z_scale: Some(1.0),
        h_offset: None,
        extras: Extras::default(),
    }
}

/// Depressions in a CRG: nodes at least 5 mm below the mean of the 2 m x 2 m around them
/// (without the nodes more than 5 mm off it), joined 4-connected; compact regions of 0.05 m²
/// to 3 m across, inside the grid. A round, shallow (under 2 cm) and flat one is a manhole,
/// else a pothole.
pub fn find_depressions(crg: &opencrg::Crg) -> Vec<SurfaceFeature> {
    let (nu, nv) = (crg.nu, crg.nv());
    if nu < 3 || nv < 3 {
        return Vec::new();
    }
    let (du, vs) = (crg.du(), crg.v_positions());
    let dv = (vs[nv - 1] - vs[0]) / (nv - 1) as f64;
    let (hu, hv) = ((1.0 / du).round() as usize, (1.0 / dv).round() as usize);
    // The local mean twice: the second leaves out the nodes the first found more than 5 mm
    // off (the depressions themselves, curbs at the edges), so neither pulls the surface.
    let mut use_node: Vec<bool> = (0..nu * nv).map(|k| crg.z_at(k / nv, k % nv).is_finite()).collect();
    // Residuals in f32 (sub-micrometre at these heights): with the window sums below, 6 bytes
    // a node besides the grid.
    let mut resid = vec![f32::NAN; nu * nv];
    let (mut col_sum, mut col_cnt) = (vec![0.0f64; nv], vec![0i64; nv]);
    let (mut row_sum, mut row_cnt) = (vec![0.0f64; nv + 1], vec![0i64; nv + 1]);
    for _ in 0..2 {
        // Column sums over the rows of the window (i - hu ..= i + hu), slid along u; then
        // prefix sums across for the window's columns.
        col_sum.iter_mut().for_each(|x| *x = 0.0);
        col_cnt.iter_mut().for_each(|x| *x = 0);
        let add = |i: usize, sign: f64, col_sum: &mut [f64], col_cnt: &mut [i64]| {
            for j in 0..nv {
                if use_node[i * nv + j] {
                    col_sum[j] += sign * f64::from(crg.z_at(i, j));
                    col_cnt[j] += sign as i64;
                }
            }
        };
        for i in 0..hu.min(nu) {
            add(i, 1.0, &mut col_sum, &mut col_cnt);
        }
        for i in 0..nu {
            if i + hu < nu {
                add(i + hu, 1.0, &mut col_sum, &mut col_cnt);
            }
            if i > hu {
                add(i - hu - 1, -1.0, &mut col_sum, &mut col_cnt);
            }
            for j in 0..nv {
                row_sum[j + 1] = row_sum[j] + col_sum[j];
                row_cnt[j + 1] = row_cnt[j] + col_cnt[j];
            }
            for j in 0..nv {
                let z = crg.z_at(i, j);
                let (j0, j1) = (j.saturating_sub(hv), (j + hv + 1).min(nv));
                let (s, c) = (row_sum[j1] - row_sum[j0], row_cnt[j1] - row_cnt[j0]);
                resid[i * nv + j] =
                    if z.is_finite() && c > 0 { (f64::from(z) - s / c as f64) as f32 } else { f32::NAN };
            }
        }
        for (u, r) in use_node.iter_mut().zip(&resid) {
            *u = r.abs() <= 0.005;
        }
    }
    let resid = |i: usize, j: usize| f64::from(resid[i * nv + j]);
    let mut seen = vec![false; nu * nv];
    let mut out = Vec::new();
    let min_nodes = (0.05 / (du * dv)).ceil() as usize;
    // Sunk regions, then raised ones (a manhole lid may stand proud).
    for sign in [-1.0, 1.0] {
        seen.iter_mut().for_each(|s| *s = false);
        let off = |i: usize, j: usize| sign * resid(i, j) > DEPTH;
        for i0 in 0..nu {
            for j0 in 0..nv {
                if seen[i0 * nv + j0] || !off(i0, j0) {
                    continue;
                }
                let mut stack = vec![(i0, j0)];
                seen[i0 * nv + j0] = true;
                let mut nodes = Vec::new();
                while let Some((i, j)) = stack.pop() {
                    nodes.push((i, j, resid(i, j)));
                    let nb = [(i.wrapping_sub(1), j), (i + 1, j), (i, j.wrapping_sub(1)), (i, j + 1)];
                    for (a, b) in nb {
                        if a < nu && b < nv && !seen[a * nv + b] && off(a, b) {
                            seen[a * nv + b] = true;
                            stack.push((a, b));
                        }
                    }
                }
                if nodes.len() >= min_nodes {
                    out.extend(classify(crg, &vs, (du, dv), (nu, nv), &nodes, sign));
                }
            }
        }
    }
    out
}

/// A region off the local surface (`sign` -1 sunk, +1 raised) as a pothole or a manhole, or
/// nothing: only compact regions inside the grid, 0.2 to 3 m across, count (else a joint
/// between setts, a seam at the edge, an occlusion). A round, flat one within 2 cm of the
/// surface is a manhole; a sunk one at least 1.5 cm deep a pothole.
fn classify(
    crg: &opencrg::Crg,
    vs: &[f64],
    (du, dv): (f64, f64),
    (nu, nv): (usize, usize),
    nodes: &[(usize, usize, f64)],
    sign: f64,
) -> Option<SurfaceFeature> {
    let n = nodes.len() as f64;
    let (iu0, iu1) = nodes.iter().fold((usize::MAX, 0), |a, p| (a.0.min(p.0), a.1.max(p.0)));
    let (jv0, jv1) = nodes.iter().fold((usize::MAX, 0), |a, p| (a.0.min(p.1), a.1.max(p.1)));
    let (length, width) = ((iu1 - iu0 + 1) as f64 * du, (jv1 - jv0 + 1) as f64 * dv);
    let s = crg.u_first() + nodes.iter().map(|p| p.0 as f64).sum::<f64>() / n * du;
    let t = vs[0] + nodes.iter().map(|p| p.1 as f64).sum::<f64>() / n * dv;
    // The extreme offset (signed) and the spread about the mean.
    let extreme = nodes.iter().map(|p| p.2).fold(0.0f64, |a, r| if r.abs() > a.abs() { r } else { a });
    let mean = nodes.iter().map(|p| p.2).sum::<f64>() / n;
    let spread = (nodes.iter().map(|p| (p.2 - mean).powi(2)).sum::<f64>() / n).sqrt();
    let fill = n * du * dv / (std::f64::consts::PI * 0.25 * length * width);
    let edge = iu0 == 0 || jv0 == 0 || iu1 + 1 == nu || jv1 + 1 == nv;
    let aspect = length.max(width) / length.min(width);
    if edge || length.min(width) < 0.2 || length.max(width) > 3.0 || aspect > 3.0 || fill < 0.5 || extreme.abs() > 0.3 {
        return None;
    }
    let round = (0.8..1.25).contains(&(length / width)) && fill > 0.8;
    let kind = if round && extreme.abs() < 0.02 && spread < 0.004 {
        "manhole"
    } else if sign < 0.0 && -extreme >= 0.015 {
        "pothole"
    } else {
        return None;
    };
    Some(SurfaceFeature { kind, s, t, length, width, depth: -extreme })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_through_a_step_stays_within_the_samples() {
        // A level run, a 0.1 rad step (a change the least-squares cubics ring across), level.
        let s: Vec<f64> = (0..200).map(|i| i as f64 * 0.5).collect();
        let v: Vec<f64> = s.iter().map(|&x| if x < 50.0 { 0.0 } else { 0.1 }).collect();
        let f = robust_profile(&s, &v, 0.002, 0.5, 1.0).unwrap();
        for k in 0..=1000 {
            let x = opendrive::eval::profile_value(&f.records, k as f64 * 0.1);
            assert!((-0.002..=0.102).contains(&x), "{x} at s {}", k as f64 * 0.1);
        }
    }

    #[test]
    fn a_ramp_keeps_its_first_samples() {
        // A 2 % grade from s 0.25 (the demo road's start): a running median took the first
        // rows for outliers (2.5 cm off) and held the elevation level over the first 1.75 m.
        let s: Vec<f64> = (0..100).map(|i| 0.25 + i as f64 * 0.5).collect();
        let v: Vec<f64> = s.iter().map(|&x| 0.02 * x).collect();
        let f = robust_profile(&s, &v, 0.01, 0.5, 1.0).unwrap();
        assert_eq!(f.rejected, 0);
        assert!((opendrive::eval::profile_value(&f.held(60.0), 0.0)).abs() < 1e-3);
    }

    #[test]
    fn profile_leaves_out_a_spike_and_holds_few_samples_level() {
        let s: Vec<f64> = (0..100).map(|i| i as f64 * 0.5).collect();
        let mut v: Vec<f64> = s.iter().map(|&x| 0.02 + 0.0001 * x).collect();
        v[40] = 0.9; // a facade row
        let f = robust_profile(&s, &v, 0.002, 0.5, 1.0).unwrap();
        assert!(f.rejected >= 1);
        let x = opendrive::eval::profile_value(&f.records, 20.0);
        assert!((x - 0.022).abs() < 0.002, "{x}");
        let two = robust_profile(&[20.25, 20.75], &[0.04, 0.05], 0.002, 0.5, 1.0).unwrap();
        assert_eq!(two.records.len(), 1);
        assert!((two.records[0].a - 0.045).abs() < 1e-12 && two.records[0].b == 0.0);
    }

    #[test]
    fn a_crest_keeps_its_samples_and_a_spike_on_it_goes() {
        // Town07 road 20's crest: grades of +8.2 % and -7.8 % joined by a 30 m parabola
        // (curvature -0.0053 /m), surveyed every 0.5 m. A running line sits 2.7 mm off the
        // crest's samples: with a 2 mm tolerance it took them all for clutter.
        let z = |x: f64| {
            let u = (x - 20.0).clamp(0.0, 30.0);
            0.082 * x - 0.002_673_5 * u * u - if x > 50.0 { 0.002_673_5 * 2.0 * 30.0 * (x - 50.0) } else { 0.0 }
        };
        let s: Vec<f64> = (0..140).map(|i| 0.25 + i as f64 * 0.5).collect();
        let mut v: Vec<f64> = s.iter().map(|&x| z(x)).collect();
        v[70] += 0.05; // a car's roof in one row
        let f = robust_curved_profile(&s, &v, 0.002, 0.5, 1.0).unwrap();
        assert_eq!(f.rejected, 1, "{f:?}");
        for k in 0..=690 {
            let x = 0.5 + k as f64 * 0.1;
            let e = opendrive::eval::profile_value(&f.records, x) - z(x);
            assert!(e.abs() < 0.002, "{e} at s {x}");
        }
        let line = robust_profile(&s, &v, 0.002, 0.5, 1.0).unwrap();
        assert!(line.rejected > 20, "{line:?}");
    }
    /// A line every 0.5 m over `s` (dashes of 3 m every 9 m when `broken`) at t(s).
    fn line(kind: &'static str, s: (f64, f64), t: impl Fn(f64) -> f64) -> MarkingLine {
        let samples: Vec<(f64, f64)> = (0..)
            .map(|i| s.0 + 0.5 * f64::from(i))
            .take_while(|&x| x <= s.1)
            .filter(|&x| kind == "solid" || (x - s.0).rem_euclid(9.0) < 3.0)
            .map(|x| (x, t(x)))
            .collect();
        MarkingLine { t: t(s.0), s_range: s, kind, width: 0.12, dash_gap: None, samples }
    }

    #[test]
    fn centre_is_the_line_on_the_designed_reference_line() {
        // esmini's tunnels road: a broken centre line on the reference line and a solid line
        // between the two lanes of the right side; the solid one was taken for the centre.
        let m = vec![
            line("solid", (0.0, 100.0), |_| -6.5),
            line("solid", (0.0, 100.0), |_| -3.0),
            line("broken", (0.0, 100.0), |_| 0.0),
            line("solid", (0.0, 100.0), |_| 3.0),
        ];
        let (samples, best) = centre_line(&m, |_| 0.0);
        assert!(samples.len() > 50);
        assert!(samples.iter().all(|p| p.1.abs() < 0.01), "{:?}", samples.iter().find(|p| p.1.abs() >= 0.01));
        assert_eq!(best.map(|b| b.kind), Some("broken"));
    }

    #[test]
    fn centre_keeps_off_a_lane_line_in_the_gaps_of_its_dashes() {
        // Three lanes: in the gaps of the broken centre line only the lane lines are seen, the
        // inner one of which was taken for the centre (the lane offset jumped by 3.6 m). The
        // lane line's dashes lie in the centre line's gaps (from s 4.5).
        let m = vec![
            line("solid", (0.0, 100.0), |_| -7.1),
            line("broken", (4.5, 100.0), |_| -3.6),
            line("broken", (0.0, 100.0), |_| 0.0),
            line("solid", (0.0, 100.0), |_| 3.6),
        ];
        let (samples, _) = centre_line(&m, |_| 0.0);
        assert!(samples.iter().all(|p| p.1.abs() < 0.01), "{:?}", samples.iter().find(|p| p.1.abs() >= 0.01));
    }

    #[test]
    fn centre_of_a_double_line_is_between_its_lines() {
        // CARLA's Town07: a double solid line 0.26 m apart; the centre swapped between them.
        let m = vec![
            line("broken", (0.0, 100.0), |_| -3.2),
            line("solid", (0.0, 100.0), |_| -0.13),
            line("solid", (0.0, 100.0), |_| 0.13),
            line("broken", (0.0, 100.0), |_| 3.2),
        ];
        let (samples, _) = centre_line(&m, |_| 0.0);
        assert!(samples.len() > 150);
        assert!(samples.iter().all(|p| p.1.abs() < 0.01), "{:?}", samples.iter().find(|p| p.1.abs() >= 0.01));
    }

    #[test]
    fn a_tapering_line_is_followed_across_a_gap() {
        // A line splaying outward at 0.24 m a metre, last seen 4 m (8 rows) back: where it
        // heads is within 2 cm, where it was last seen a metre off.
        let hits: Vec<(usize, f64, f64)> = (0..10).map(|r| (r, -3.57 - 0.12 * r as f64, 0.12)).collect();
        let ahead = track_ahead(&hits, 17, 0.5);
        assert!((ahead - (-3.57 - 0.12 * 17.0)).abs() < 0.02, "{ahead}");
        // A straight line is held straight, also with a few millimetres of noise.
        let level: Vec<(usize, f64, f64)> = (0..10).map(|r| (r, 3.0 + 0.004 * (r % 2) as f64, 0.12)).collect();
        assert!((track_ahead(&level, 40, 0.5) - 3.0).abs() < 0.05);
    }

    #[test]
    fn a_lane_that_narrows_to_nothing_gets_a_section_without_it() {
        // Lane -2 tapers from 3.5 m at s 30 to nothing at s 60 and runs on about zero (two
        // borders that met) to the section's end at 100: a cut where it is narrower than a lane
        // can be, not before it tapers nor where it is still wide.
        let lane = |id: i32, widths: Vec<Poly3>| Lane { id, widths, ..Default::default() };
        let w2 = vec![
            Poly3 { s: 0.0, a: 3.5, b: 0.0, c: 0.0, d: 0.0 },
            Poly3 { s: 30.0, a: 3.5, b: -3.5 / 30.0, c: 0.0, d: 0.0 },
            Poly3 { s: 60.0, a: 0.0, b: 0.0, c: 0.0, d: 0.0 },
        ];
        let side = |lanes: Vec<Lane>| Some(LaneSide { lanes, extras: Extras::default() });
        let sec = LaneSection {
            s: 0.0,
            right: side(vec![lane(-1, vec![Poly3 { s: 0.0, a: 3.5, b: 0.0, c: 0.0, d: 0.0 }]), lane(-2, w2)]),
            ..Default::default()
        };
        let cuts = narrowing_cuts(std::slice::from_ref(&sec), 100.0, (0.0, 100.0));
        assert_eq!(cuts.len(), 1, "{cuts:?}");
        // Narrower than 0.3 m from s 57.4 on (3.5 - 3.5 (s - 30) / 30 < 0.3).
        assert!((cuts[0] - 57.5).abs() <= 0.5, "{cuts:?}");
        // Outside the surveyed range, or too near the section's ends, no cut.
        assert!(narrowing_cuts(std::slice::from_ref(&sec), 100.0, (0.0, 55.0)).is_empty());
        assert!(narrowing_cuts(std::slice::from_ref(&sec), 61.0, (0.0, 61.0)).is_empty());
    }

    /// A line border along `s` every 0.5 m at `t`.
    fn border(s: (f64, f64), t: f64) -> Border {
        let samples = line("solid", s, |_| t).samples;
        Border { samples, s_range: s, mark: road_mark("solid", 0.12, None), kind: "driving" }
    }

    #[test]
    fn a_line_border_with_a_gap_is_one_border() {
        // two_plus_one: the line between the right lanes unseen over 16 m made a section in
        // which the two lanes were one, 6.76 m wide.
        let mut b = vec![border((50.0, 100.0), 3.4), border((0.0, 40.0), 3.5), border((45.0, 90.0), 6.0)];
        join_gaps(&mut b);
        assert_eq!(b.len(), 2, "{:?}", b.iter().map(|x| x.s_range).collect::<Vec<_>>());
        assert_eq!(b[0].s_range, (0.0, 100.0));
        assert_eq!(b[1].s_range, (45.0, 90.0));
        // Too far apart along s (30 m), or across (1.5 m): left apart.
        let mut b = vec![border((0.0, 40.0), 3.5), border((70.0, 100.0), 3.5), border((50.0, 60.0), 5.0)];
        join_gaps(&mut b);
        assert_eq!(b.len(), 3);
    }

    #[test]
    fn a_border_unseen_through_a_section_is_bridged_straight() {
        let samples = vec![(10.0, 3.0), (12.0, 3.0), (40.0, 4.0), (41.0, 4.0)];
        // Samples in the range: those.
        assert_eq!(within(&samples, 11.0, 13.0, 0.5), vec![(12.0, 3.0)]);
        // None in it: points on the line from s 12 to s 40.
        let p = within(&samples, 20.0, 30.0, 0.5);
        assert_eq!(p.len(), 21);
        assert!(p.iter().all(|&(s, t)| (t - (3.0 + (s - 12.0) / 28.0)).abs() < 1e-9), "{p:?}");
        // Nothing after it, or the samples either side more than 40 m apart: nothing.
        assert!(within(&samples, 50.0, 60.0, 0.5).is_empty());
        assert!(within(&[(0.0, 3.0), (45.0, 3.0)], 20.0, 30.0, 0.5).is_empty());
    }
}
