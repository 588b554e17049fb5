//! The inverse of the road frame: map (x, y) -> road (s, t).
//!
//! The reference line is sampled into a polyline (segments of at most 1 m and at most 0.25 rad
//! of heading change), grouped into boxes of 32 segments. A query visits the boxes within the
//! search radius, takes every local minimum of the distance to the polyline as a start, and
//! solves `XY(s, t) = (x, y)` by 2-D Newton, where `XY(s, t)` is the horizontal position of
//! the surface point (s, t, 0) of [`super::RoadEval::frame`], superelevation included, with the
//! analytic Jacobian. So `xy_to_st(sth_to_xyz(s, t, 0))` gives back (s, t).
//!
//! # Tolerances
//! Newton ends when the horizontal residual is below 1e-11 m (or after 40 steps). Where the file's records do not join (gaps of up to about 1e-4 m are
//! common in real maps) a point falling into the gap has no exact solution; the closest
//! iterate is then returned with its residual, if that is below 1e-4 m.

use super::{Pose, RoadEval};

/// One solution of the inverse.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StCandidate {
    /// m along the reference line.
    pub s: f64,
    /// m, left positive.
    pub t: f64,
    /// Horizontal distance between the query and the surface point (s, t, 0), m.
    pub residual: f64,
}

pub(crate) struct Terms {
    pub pose: Pose,
    pub grade: f64,
    pub grade_rate: f64,
    pub roll: f64,
    pub roll_rate: f64,
}

#[derive(Debug, Clone, Copy)]
struct Segment {
    s0: f64,
    s1: f64,
    a: [f64; 2],
    b: [f64; 2],
}

#[derive(Debug, Clone, Copy)]
struct Bbox {
    min: [f64; 2],
    max: [f64; 2],
}

impl Bbox {
    fn empty() -> Bbox {
        Bbox { min: [f64::INFINITY; 2], max: [f64::NEG_INFINITY; 2] }
    }
    fn add(&mut self, p: [f64; 2]) {
        for i in 0..2 {
            self.min[i] = self.min[i].min(p[i]);
            self.max[i] = self.max[i].max(p[i]);
        }
    }
    fn merge(&mut self, o: &Bbox) {
        self.add(o.min);
        self.add(o.max);
    }
    fn within(&self, q: [f64; 2], r: f64) -> bool {
        q[0] >= self.min[0] - r && q[0] <= self.max[0] + r && q[1] >= self.min[1] - r && q[1] <= self.max[1] + r
    }
}

const CHUNK: usize = 32;

/// Sampled reference line with two levels of bounding boxes.
#[derive(Debug)]
pub(crate) struct SegmentIndex {
    segments: Vec<Segment>,
    chunks: Vec<Bbox>,
    groups: Vec<Bbox>,
    all: Bbox,
}

impl SegmentIndex {
    fn new(eval: &RoadEval) -> SegmentIndex {
        let mut samples: Vec<(f64, [f64; 2])> = Vec::new();
        let n_curves = eval.curves.len();
        for (i, c) in eval.curves.iter().enumerate() {
            let end = if i + 1 < n_curves { eval.curves[i + 1].s0 } else { eval.road.length.max(c.s0 + c.length) };
            let len = (end - c.s0).max(0.0);
            let k = c.max_abs_curvature();
            let step = if k > 0.0 { (0.25 / k).min(1.0) } else { 1.0 };
            let n = ((len / step).ceil() as usize).clamp(1, 1 << 20);
            for j in 0..=n {
                let ds = len * j as f64 / n as f64;
                let p = c.pose(ds);
                samples.push((c.s0 + ds, [p.x, p.y]));
            }
        }
        let segments: Vec<Segment> = samples
            .windows(2)
            .map(|w| Segment { s0: w[0].0, s1: w[1].0, a: w[0].1, b: w[1].1 })
            .collect();
        let chunks: Vec<Bbox> = segments
            .chunks(CHUNK)
            .map(|c| {
                let mut b = Bbox::empty();
                for s in c {
                    b.add(s.a);
                    b.add(s.b);
                }
                b
            })
            .collect();
        let groups: Vec<Bbox> = chunks
            .chunks(CHUNK)
            .map(|c| {
                let mut b = Bbox::empty();
                for x in c {
                    b.merge(x);
                }
                b
            })
            .collect();
        let mut all = Bbox::empty();
        for g in &groups {
            all.merge(g);
        }
        SegmentIndex { segments, chunks, groups, all }
    }

    /// (segment index, distance, s guess, t guess) of every segment within `r` of `q`.
    fn near(&self, q: [f64; 2], r: f64, out: &mut Vec<(usize, f64, f64, f64)>) {
        out.clear();
        if !self.all.within(q, r) {
            return;
        }
        for (gi, g) in self.groups.iter().enumerate() {
            if !g.within(q, r) {
                continue;
            }
            let c_end = ((gi + 1) * CHUNK).min(self.chunks.len());
            for ci in gi * CHUNK..c_end {
                if !self.chunks[ci].within(q, r) {
                    continue;
                }
                let s_end = ((ci + 1) * CHUNK).min(self.segments.len());
                for si in ci * CHUNK..s_end {
                    let seg = &self.segments[si];
                    let d = [seg.b[0] - seg.a[0], seg.b[1] - seg.a[1]];
                    let w = [q[0] - seg.a[0], q[1] - seg.a[1]];
                    let len2 = d[0] * d[0] + d[1] * d[1];
                    let lambda = if len2 > 0.0 { ((w[0] * d[0] + w[1] * d[1]) / len2).clamp(0.0, 1.0) } else { 0.0 };
                    let foot = [seg.a[0] + lambda * d[0], seg.a[1] + lambda * d[1]];
                    let dist = (q[0] - foot[0]).hypot(q[1] - foot[1]);
                    if dist <= r {
                        let t = if len2 > 0.0 { (d[0] * w[1] - d[1] * w[0]) / len2.sqrt() } else { 0.0 };
                        out.push((si, dist, seg.s0 + lambda * (seg.s1 - seg.s0), t));
                    }
                }
            }
        }
    }
}

/// Accept a best effort (a point in a gap between records) below this residual, m.
const GAP: f64 = 1e-4;

impl RoadEval<'_> {
    fn index(&self) -> &SegmentIndex {
        self.index.get_or_init(|| SegmentIndex::new(self))
    }

    /// Road (s, t) of the map point (x, y): the solution with the smallest |t| among all
    /// within `max_distance` m of the reference line, or `None` when there is none (the point
    /// is farther away, or beyond the road's ends).
    pub fn xy_to_st(&self, x: f64, y: f64, max_distance: f64) -> Option<StCandidate> {
        let mut c = self.xy_to_st_all(x, y, max_distance);
        if c.is_empty() {
            None
        } else {
            Some(c.swap_remove(0))
        }
    }

    /// All road (s, t) solutions for (x, y) within `max_distance` m of the reference line,
    /// ordered by |t|. A winding road gives several.
    pub fn xy_to_st_all(&self, x: f64, y: f64, max_distance: f64) -> Vec<StCandidate> {
        let q = [x, y];
        let index = self.index();
        let mut near = Vec::new();
        // Sample chords deviate from the curve by less than 0.25²/8 of a radius: widen a bit.
        index.near(q, max_distance * 1.05 + 0.05, &mut near);
        let mut out: Vec<StCandidate> = Vec::new();
        for (i, &(si, d, s_guess, t_guess)) in near.iter().enumerate() {
            // Start only from local minima of the distance along the polyline.
            let prev = if i > 0 && near[i - 1].0 + 1 == si { near[i - 1].1 } else { f64::INFINITY };
            let next = if i + 1 < near.len() && near[i + 1].0 == si + 1 { near[i + 1].1 } else { f64::INFINITY };
            if d > prev || d > next {
                continue;
            }
            if let Some(c) = self.newton(q, s_guess, t_guess) {
                if c.t.abs() > max_distance + 1e-9 {
                    continue;
                }
                if !out.iter().any(|o| (o.s - c.s).abs() < 1e-6 && (o.t - c.t).abs() < 1e-6) {
                    out.push(c);
                }
            }
        }
        out.sort_by(|a, b| a.t.abs().total_cmp(&b.t.abs()).then(a.s.total_cmp(&b.s)));
        out
    }

    /// Newton on XY(s, t) = q from (s, t).
    fn newton(&self, q: [f64; 2], mut s: f64, mut t: f64) -> Option<StCandidate> {
        let len = self.road.length;
        let mut best: Option<StCandidate> = None;
        for _ in 0..40 {
            let m = self.inverse_terms(s);
            let (sin_h, cos_h) = m.pose.hdg.sin_cos();
            let tangent = [cos_h, sin_h];
            let normal = [-sin_h, cos_h];
            let root = (1.0 + m.grade * m.grade).sqrt();
            let (sin_p, cos_p) = m.roll.sin_cos();
            let alpha = cos_p;
            let beta = -sin_p * m.grade / root;
            let d_alpha = -sin_p * m.roll_rate;
            let d_beta = -cos_p * m.roll_rate * m.grade / root - sin_p * m.grade_rate / (root * root * root);
            let k = m.pose.curvature;
            let lat = [alpha * normal[0] + beta * tangent[0], alpha * normal[1] + beta * tangent[1]];
            let xy = [m.pose.x + t * lat[0], m.pose.y + t * lat[1]];
            let r = [q[0] - xy[0], q[1] - xy[1]];
            let res = r[0].hypot(r[1]);
            if best.is_none_or(|b| res < b.residual) {
                best = Some(StCandidate { s, t, residual: res });
            }
            if res < 1e-11 {
                break;
            }
            let fs = 1.0 - t * alpha * k + t * d_beta;
            let fn_ = t * (d_alpha + beta * k);
            let a = [tangent[0] * fs + normal[0] * fn_, tangent[1] * fs + normal[1] * fn_];
            let det = a[0] * lat[1] - a[1] * lat[0];
            if det.abs() < 1e-12 {
                break;
            }
            let ds = (r[0] * lat[1] - r[1] * lat[0]) / det;
            let dt = (a[0] * r[1] - a[1] * r[0]) / det;
            let ds = ds.clamp(-10.0, 10.0);
            let s_new = (s + ds).clamp(0.0, len);
            if s_new == s && (s == 0.0 || s == len) && ds.abs() > GAP {
                // Pushing past an end: the foot point lies beyond the road.
                return None;
            }
            s = s_new;
            t += dt;
        }
        best.filter(|b| b.residual < GAP)
    }
}
