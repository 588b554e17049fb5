//! The inverse of the road frame: map (x, y) -> road (s, t).
//!
//! The horizontal position of the surface point (s, t, 0) of [`super::RoadEval::frame`] is
//! `XY(s, t) = P(s) + t·L(s)` with the lateral vector `L = cos φ·N − sin φ·g/√(1+g²)·T`
//! (N, T the horizontal normal and tangent, φ the superelevation, g the grade). So (s, t)
//! solves `XY(s, t) = q` exactly when `c(s) = L(s) × (q − P(s))` is zero, and then
//! `t = (q − P)·L / |L|²`.
//!
//! The reference line is sampled (at most 1 m and 0.25 rad of heading change per segment)
//! with P and L at every sample, and grouped into boxes of 32 segments. A query visits the
//! boxes within the search radius and brackets every root of `c` on the segments: a sign
//! change where `c` is monotone, and otherwise bisection with a Lipschitz bound until the
//! roots separate (points as far out as a radius of curvature have close pairs of roots).
//! Each bracket starts a 2-D Newton on `XY(s, t) = q` with the analytic Jacobian. So
//! `xy_to_st(sth_to_xyz(s, t, 0))` gives back (s, t), superelevation included, and every
//! solution within the radius is found on winding roads.
//!
//! # Tolerances
//! Newton ends below 1e-11 m of horizontal residual. At the road's ends only solutions within
//! 1e-9 m count (a larger residual means the point lies beyond the end). Where a file's records
//! do not join (gaps of up to about 1e-4 m are common in real maps) a point in the gap has no
//! exact solution; the closest iterate is returned with its residual if that is below 1e-4 m.

use super::RoadEval;

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

/// What the inverse needs at one s.
#[derive(Debug, Clone, Copy)]
struct Lateral {
    /// Reference point, m.
    p: [f64; 2],
    /// Horizontal lateral vector L (length cos φ-ish, not unit).
    l: [f64; 2],
    /// Horizontal unit tangent.
    tangent: [f64; 2],
    /// Horizontal unit normal (left).
    normal: [f64; 2],
    alpha: f64,
    beta: f64,
    d_alpha: f64,
    d_beta: f64,
    curvature: f64,
}

impl RoadEval<'_> {
    fn lateral(&self, s: f64) -> Lateral {
        let m = self.inverse_terms(s);
        let (sin_h, cos_h) = m.pose.hdg.sin_cos();
        let tangent = [cos_h, sin_h];
        let normal = [-sin_h, cos_h];
        let root = (1.0 + m.grade * m.grade).sqrt();
        let (sin_p, cos_p) = m.roll.sin_cos();
        let alpha = cos_p;
        let beta = -sin_p * m.grade / root;
        Lateral {
            p: [m.pose.x, m.pose.y],
            l: [alpha * normal[0] + beta * tangent[0], alpha * normal[1] + beta * tangent[1]],
            tangent,
            normal,
            alpha,
            beta,
            d_alpha: -sin_p * m.roll_rate,
            d_beta: -cos_p * m.roll_rate * m.grade / root - sin_p * m.grade_rate / (root * root * root),
            curvature: m.pose.curvature,
        }
    }
}

pub(crate) struct Terms {
    pub pose: super::Pose,
    pub grade: f64,
    pub grade_rate: f64,
    pub roll: f64,
    pub roll_rate: f64,
}

#[derive(Debug, Clone, Copy)]
struct Sample {
    s: f64,
    p: [f64; 2],
    l: [f64; 2],
}

#[derive(Debug, Clone, Copy)]
struct Segment {
    a: Sample,
    b: Sample,
    /// Bound of |dL/ds| on the segment, 1/m.
    l_rate: f64,
    /// Smallest |L|·cos of the segment's samples (the 1 of the planar case).
    alpha_min: f64,
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
        self.min = [self.min[0].min(p[0]), self.min[1].min(p[1])];
        self.max = [self.max[0].max(p[0]), self.max[1].max(p[1])];
    }
    fn merge(&mut self, o: &Bbox) {
        self.add(o.min);
        self.add(o.max);
    }
    fn within(&self, q: [f64; 2], r: f64) -> bool {
        q[0] >= self.min[0] - r && q[0] <= self.max[0] + r && q[1] >= self.min[1] - r && q[1] <= self.max[1] + r
    }
}

const CHUNK: usize = 8;

/// Sampled reference line with two levels of bounding boxes.
#[derive(Debug)]
pub(crate) struct SegmentIndex {
    segments: Vec<Segment>,
    chunks: Vec<Bbox>,
    groups: Vec<Bbox>,
    all: Bbox,
}

fn cross(a: [f64; 2], b: [f64; 2]) -> f64 {
    a[0] * b[1] - a[1] * b[0]
}

fn sample(eval: &RoadEval, s: f64) -> (Sample, Lateral) {
    let lat = eval.lateral(s);
    (Sample { s, p: lat.p, l: lat.l }, lat)
}

impl SegmentIndex {
    fn new(eval: &RoadEval) -> SegmentIndex {
        // (sample, |curvature| bound of its record, alpha, |L'| terms without curvature)
        let mut samples: Vec<(Sample, f64, f64, f64, f64)> = Vec::new();
        let n_curves = eval.curves.len();
        for (i, c) in eval.curves.iter().enumerate() {
            let end = if i + 1 < n_curves { eval.curves[i + 1].s0 } else { eval.road.length.max(c.s0 + c.length) };
            let len = (end - c.s0).max(0.0);
            let k = c.max_abs_curvature();
            let step = if k > 0.0 { (0.25 / k).min(1.0) } else { 1.0 };
            let n = ((len / step).ceil() as usize).clamp(1, 1 << 20);
            for j in 0..=n {
                // Evaluate this record even at its end (the next one may not join exactly).
                let s = c.s0 + len * j as f64 / n as f64;
                let (mut smp, lat) = sample(eval, s.min(end));
                let pose = c.pose(s - c.s0);
                smp.p = [pose.x, pose.y];
                samples.push((
                    smp,
                    k,
                    lat.alpha,
                    lat.alpha.abs() + lat.beta.abs(),
                    lat.d_alpha.abs() + lat.d_beta.abs(),
                ));
            }
        }
        let segments: Vec<Segment> = samples
            .windows(2)
            .map(|w| {
                let (a, ka, alpha_a, ab_a, rate_a) = w[0];
                let (b, kb, alpha_b, ab_b, rate_b) = w[1];
                // L' = α'N − ακT + β'T + βκN, so |L'| <= κ(|α| + |β|) + |α'| + |β'|. The roll
                // and grade terms are cubic in s; on segments of at most 1 m twice their
                // larger end value bounds them.
                let l_rate = ka.max(kb) * ab_a.max(ab_b) + 2.0 * rate_a.max(rate_b);
                Segment { a, b, l_rate, alpha_min: alpha_a.min(alpha_b) }
            })
            .collect();
        let chunks: Vec<Bbox> = segments
            .chunks(CHUNK)
            .map(|c| {
                let mut b = Bbox::empty();
                for s in c {
                    b.add(s.a.p);
                    b.add(s.b.p);
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

    /// Start points (s, t) for Newton, one per bracketed root of c(s) within `r` of `q`.
    fn starts(&self, eval: &RoadEval, q: [f64; 2], r: f64, out: &mut Vec<(f64, f64)>) {
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
                for seg in &self.segments[ci * CHUNK..s_end] {
                    self.bracket(eval, q, r, seg, out);
                }
            }
        }
    }

    fn bracket(&self, eval: &RoadEval, q: [f64; 2], r: f64, seg: &Segment, out: &mut Vec<(f64, f64)>) {
        let c_of = |x: &Sample| cross(x.l, [q[0] - x.p[0], q[1] - x.p[1]]);
        let h = seg.b.s - seg.a.s;
        let d2 = (q[0] - seg.a.p[0]).powi(2) + (q[1] - seg.a.p[1]).powi(2);
        let reach = r + h + 1.0;
        if d2 > reach * reach {
            return;
        }
        let dist = d2.sqrt();
        // c' = cross(L', q - P) - cross(L, T): |c'| <= |L'|·d + 1, and c' keeps the sign of
        // cross(T, L) ≈ alpha while |L'|·d < alpha: then c is monotone, one root at most.
        let lip = 1.0 + seg.l_rate * (dist + h);
        let monotone = seg.l_rate * (dist + h) < 0.9 * seg.alpha_min;
        let (ca, cb) = (c_of(&seg.a), c_of(&seg.b));
        if monotone && ((ca < -1e-9 && cb < -1e-9) || (ca > 1e-9 && cb > 1e-9)) {
            return; // the common case: no root on this segment
        }
        let mut stack = vec![(seg.a, seg.b, ca, cb, 0u32)];
        while let Some((a, b, ca, cb, depth)) = stack.pop() {
            let sign_change = !((ca < -1e-9 && cb < -1e-9) || (ca > 1e-9 && cb > 1e-9));
            let possible = sign_change || ca.abs() + cb.abs() <= lip * (b.s - a.s);
            if !possible {
                continue;
            }
            if (sign_change && monotone) || depth >= 12 {
                // At the depth limit the interval is below 0.25 mm: a double root.
                let lambda = if sign_change && ca != cb { (ca / (ca - cb)).clamp(0.0, 1.0) } else { 0.5 };
                let p = [a.p[0] + lambda * (b.p[0] - a.p[0]), a.p[1] + lambda * (b.p[1] - a.p[1])];
                let l = [a.l[0] + lambda * (b.l[0] - a.l[0]), a.l[1] + lambda * (b.l[1] - a.l[1])];
                let w = [q[0] - p[0], q[1] - p[1]];
                let l2 = l[0] * l[0] + l[1] * l[1];
                if (w[0] * w[0] + w[1] * w[1]).sqrt() <= r + 1.0 && l2 > 0.0 {
                    out.push((a.s + lambda * (b.s - a.s), (w[0] * l[0] + w[1] * l[1]) / l2));
                }
                continue;
            }
            let (m, _) = sample(eval, 0.5 * (a.s + b.s));
            let cm = c_of(&m);
            stack.push((m, b, cm, cb, depth + 1));
            stack.push((a, m, ca, cm, depth + 1));
        }
    }
}

/// A solution at a road end must be this exact, m.
const EXACT: f64 = 1e-9;
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

    /// All road (s, t) solutions for (x, y) with |t| <= `max_distance`, ordered by |t|. A
    /// winding road gives several.
    pub fn xy_to_st_all(&self, x: f64, y: f64, max_distance: f64) -> Vec<StCandidate> {
        let q = [x, y];
        let mut starts = Vec::new();
        self.index().starts(self, q, max_distance, &mut starts);
        let mut out: Vec<StCandidate> = Vec::new();
        for &(s_guess, t_guess) in &starts {
            if let Some(c) = self.newton(q, s_guess, t_guess) {
                if c.t.abs() > max_distance {
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
            let m = self.lateral(s);
            let xy = [m.p[0] + t * m.l[0], m.p[1] + t * m.l[1]];
            let r = [q[0] - xy[0], q[1] - xy[1]];
            let res = (r[0] * r[0] + r[1] * r[1]).sqrt();
            if best.is_none_or(|b| res < b.residual) {
                best = Some(StCandidate { s, t, residual: res });
            }
            if res < 1e-11 {
                break;
            }
            // d(XY)/ds = T + t·(α'N + αN' + β'T + βT'), with N' = −κT and T' = κN.
            let fs = 1.0 - t * m.alpha * m.curvature + t * m.d_beta;
            let fn_ = t * (m.d_alpha + m.beta * m.curvature);
            let a = [m.tangent[0] * fs + m.normal[0] * fn_, m.tangent[1] * fs + m.normal[1] * fn_];
            let det = cross(a, m.l);
            if det.abs() < 1e-12 {
                break;
            }
            let ds = (cross(r, m.l) / det).clamp(-2.0, 2.0);
            let dt = cross(a, r) / det;
            let s_new = (s + ds).clamp(0.0, len);
            if s_new == s && (s == 0.0 || s == len) && ds.abs() > GAP {
                // Pushing past an end: the foot point lies beyond the road.
                return None;
            }
            s = s_new;
            t += dt;
        }
        // At the road's ends only exact solutions count: a residual there means the point lies
        // beyond the end, not in a gap between records.
        best.filter(|b| if b.s <= 0.0 || b.s >= len { b.residual < EXACT } else { b.residual < GAP })
    }
}
