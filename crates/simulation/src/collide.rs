//! Collisions: oriented boxes with vertical sides, tested by separating axes.
//!
//! A body is a rectangle in plan (centre, heading, half length and half width) extruded from
//! its bottom z to its top. Two bodies touch when their height intervals overlap and no edge
//! normal of either rectangle separates them (the separating axis theorem: for rectangles the
//! four edge normals are all the axes there are). Touching counts as contact (closed boxes).
//!
//! Static scene boxes are the road's `<object>`s that stand up: those with a height (or a
//! radius: a square of the diameter), at (s, t, zOffset) on the road, heading the road's plus
//! the object's `hdg`; objects of the road surface (`roadSurface`, `roadMark`, `crosswalk`,
//! `parkingSpace`: potholes, manholes, paint) are not obstacles. An object with a `<repeat>`
//! of distance 0 is continuous: its repeats are walls ([`crate::walls::object_walls`]), not a
//! box. A `<repeat>` of a distance d > 0 stands the object every d m over its length instead
//! (at most [`MAX_REPEATED`]; t, zOffset, height and, where given, length, width or radius
//! linear from their start to their end values), its boxes `object:<id>:<k>` (k from 0 over
//! the object's repeats). An object without repeats that has an `<outline>` standing up is
//! walls along it ([`crate::walls::object_walls`]), not a box.

use crate::surface::RoadSurface;
use serde::{Deserialize, Serialize};

/// A box with vertical sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Body {
    /// Who it is (`ego`, an actor's id, `object:ID`).
    pub id: String,
    /// Centre in plan, m.
    pub centre: [f64; 2],
    /// rad counter-clockwise from x.
    pub heading: f64,
    /// Half length (along the heading) and half width, m.
    pub half: [f64; 2],
    /// Bottom and top, m.
    pub z: [f64; 2],
    /// Velocity in plan, m/s.
    pub velocity: [f64; 2],
}

impl Body {
    /// The four corners in plan.
    pub fn corners(&self) -> [[f64; 2]; 4] {
        corners_of(self, self.heading.sin_cos())
    }

    fn axes(&self) -> [[f64; 2]; 2] {
        let (sn, cs) = self.heading.sin_cos();
        [[cs, sn], [-sn, cs]]
    }

    /// Whether a plan point lies in the rectangle.
    pub fn contains(&self, p: [f64; 2]) -> bool {
        let d = [p[0] - self.centre[0], p[1] - self.centre[1]];
        let [ax, ay] = self.axes();
        (d[0] * ax[0] + d[1] * ax[1]).abs() <= self.half[0] && (d[0] * ay[0] + d[1] * ay[1]).abs() <= self.half[1]
    }
}

/// Whether two bodies overlap (separating axis test in plan, intervals in height).
pub fn overlap(a: &Body, b: &Body) -> bool {
    if a.z[1] < b.z[0] || b.z[1] < a.z[0] {
        return false;
    }
    // Apart by more than the two circumscribed circles' radii: no axis test needed (most
    // pairs of a scene, and the sines and cosines of the test are the step's main cost).
    // Without square roots first: (ra + rb)^2 <= 2 (ra^2 + rb^2), so a pair beyond that is
    // beyond the circles too.
    let (ra2, rb2) = (a.half[0] * a.half[0] + a.half[1] * a.half[1], b.half[0] * b.half[0] + b.half[1] * b.half[1]);
    let (dx, dy) = (a.centre[0] - b.centre[0], a.centre[1] - b.centre[1]);
    let d2 = dx * dx + dy * dy;
    if d2 > 2.0 * (ra2 + rb2) * (1.0 + 1e-12) {
        return false;
    }
    let reach = ra2.sqrt() + rb2.sqrt();
    if d2 > reach * reach * (1.0 + 1e-12) {
        return false;
    }
    // Each body's sine and cosine once for its corners and axes.
    let (sa, sb) = (a.heading.sin_cos(), b.heading.sin_cos());
    let (ca, cb) = (corners_of(a, sa), corners_of(b, sb));
    for axis in [[sa.1, sa.0], [-sa.0, sa.1], [sb.1, sb.0], [-sb.0, sb.1]] {
        let proj = |c: &[[f64; 2]; 4]| {
            c.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                let d = p[0] * axis[0] + p[1] * axis[1];
                (lo.min(d), hi.max(d))
            })
        };
        let ((a0, a1), (b0, b1)) = (proj(&ca), proj(&cb));
        if a1 < b0 || b1 < a0 {
            return false;
        }
    }
    true
}

/// The pairs of bodies that overlap, a body of `moving` with a later one of `moving` or with
/// one of `statics`, named (earlier, later) and sorted. The moving pairs are found by a sweep
/// along x over the bodies' circumscribed circles, so that only bodies whose x intervals meet
/// are tested; each moving body is tested against the standing ones whose x intervals meet its
/// own.
pub(crate) fn touching_pairs(moving: &[Body], statics: &[Body]) -> Vec<(String, String)> {
    Sweep::new(statics).touching_pairs(moving, statics)
}

/// The circumscribed circle's x interval of a body of circle radius `r`.
fn x_interval(b: &Body, r: f64) -> (f64, f64) {
    (b.centre[0] - r, b.centre[0] + r)
}

/// Orders `a` and `b` by their intervals' starts, then by their bodies' indices.
fn by_start(a: &(f64, f64, usize), b: &(f64, f64, usize)) -> std::cmp::Ordering {
    a.0.total_cmp(&b.0).then(a.2.cmp(&b.2))
}

/// The sweep's memory between ticks: the standing bodies' x intervals in order (they do not
/// move), and the moving bodies' in last tick's order (a tick changes it little, so an
/// insertion sort puts it right in a pass) with their circles' radii. Not state: any order it
/// holds gives the same pairs.
#[derive(Debug, Clone, Default)]
pub(crate) struct Sweep {
    /// (start, end, index) of the standing bodies, by start.
    statics: Vec<(f64, f64, usize)>,
    /// (start, end, index) of the moving bodies, by start.
    order: Vec<(f64, f64, usize)>,
    /// Each moving body's half sizes and its circle's radius.
    radii: Vec<([f64; 2], f64)>,
}

impl Sweep {
    /// The sweep of the standing bodies `statics`.
    pub(crate) fn new(statics: &[Body]) -> Sweep {
        let mut s: Vec<(f64, f64, usize)> = statics
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let (lo, hi) = x_interval(b, b.half[0].hypot(b.half[1]));
                (lo, hi, i)
            })
            .collect();
        s.sort_by(by_start);
        Sweep { statics: s, order: Vec::new(), radii: Vec::new() }
    }

    /// [`touching_pairs`] of `moving` and `statics` (the bodies this sweep was made for).
    pub(crate) fn touching_pairs(&mut self, moving: &[Body], statics: &[Body]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        self.radii.truncate(moving.len());
        for (i, b) in moving.iter().enumerate() {
            match self.radii.get_mut(i) {
                Some((half, r)) => {
                    if half.map(f64::to_bits) != b.half.map(f64::to_bits) {
                        (*half, *r) = (b.half, b.half[0].hypot(b.half[1]));
                    }
                }
                None => self.radii.push((b.half, b.half[0].hypot(b.half[1]))),
            }
        }
        if self.order.len() != moving.len() {
            self.order = (0..moving.len()).map(|i| (0.0, 0.0, i)).collect();
        }
        for e in &mut self.order {
            (e.0, e.1) = x_interval(&moving[e.2], self.radii[e.2].1);
        }
        // Insertion sort: nearly in order already.
        for k in 1..self.order.len() {
            let mut j = k;
            while j > 0 && by_start(&self.order[j - 1], &self.order[j]).is_gt() {
                self.order.swap(j - 1, j);
                j -= 1;
            }
        }
        for (k, &(_, hi, i)) in self.order.iter().enumerate() {
            for &(lo, _, j) in &self.order[k + 1..] {
                if lo > hi {
                    break;
                }
                let (a, b) = (&moving[i.min(j)], &moving[i.max(j)]);
                if overlap(a, b) {
                    out.push((a.id.clone(), b.id.clone()));
                }
            }
        }
        for &(lo, hi, i) in &self.order {
            let a = &moving[i];
            for &(s_lo, s_hi, j) in &self.statics {
                if s_lo > hi {
                    break;
                }
                if s_hi < lo {
                    continue;
                }
                if let Some(b) = statics.get(j) {
                    if overlap(a, b) {
                        out.push((a.id.clone(), b.id.clone()));
                    }
                }
            }
        }
        out.sort();
        out
    }
}

/// The corners of `b` (as [`Body::corners`]) from its heading's (sin, cos).
fn corners_of(b: &Body, (sn, cs): (f64, f64)) -> [[f64; 2]; 4] {
    let [h0, h1] = b.half;
    let at = |u: f64, v: f64| [b.centre[0] + u * cs - v * sn, b.centre[1] + u * sn + v * cs];
    [at(h0, h1), at(-h0, h1), at(-h0, -h1), at(h0, -h1)]
}

/// A place for the contact: the mean of the corners of each box inside the other, else the
/// midpoint of the centres.
pub fn contact_point(a: &Body, b: &Body) -> [f64; 2] {
    let inside: Vec<[f64; 2]> = a
        .corners()
        .into_iter()
        .filter(|p| b.contains(*p))
        .chain(b.corners().into_iter().filter(|p| a.contains(*p)))
        .collect();
    if inside.is_empty() {
        [0.5 * (a.centre[0] + b.centre[0]), 0.5 * (a.centre[1] + b.centre[1])]
    } else {
        let n = inside.len() as f64;
        [inside.iter().map(|p| p[0]).sum::<f64>() / n, inside.iter().map(|p| p[1]).sum::<f64>() / n]
    }
}

/// A contact's start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ContactReport {
    /// The tick at whose end the bodies first overlap.
    pub tick: u64,
    /// Its time, s.
    pub time: f64,
    /// The two bodies' ids (the ego first, else in order of the bodies).
    pub ids: [String; 2],
    /// Where, plan, file frame, m (see [`contact_point`]); z the higher bottom.
    pub position: [f64; 3],
    /// Speed of one body relative to the other, m/s.
    pub relative_speed: f64,
}

/// Most boxes one `<repeat>` of a distance gives.
pub const MAX_REPEATED: usize = 10_000;

/// One placement of an object: (s, t, zOffset, half length and width, height, id).
type Placement = (f64, f64, f64, [f64; 2], f64, String);

/// The standing objects of the road as static bodies (see the module).
pub fn scene_bodies(surface: &RoadSurface) -> Vec<Body> {
    let road = surface.road();
    let len = road.length();
    let mut out = Vec::new();
    for o in &road.road().objects.objects {
        if crate::walls::lies_flat(o)
            || o.repeats.iter().any(|r| r.distance == 0.0)
            || crate::walls::stands_by_outline(o)
        {
            continue;
        }
        let size = match (o.length, o.width, o.radius) {
            (Some(l), Some(w), _) if l > 0.0 && w > 0.0 => Some([0.5 * l, 0.5 * w]),
            (_, _, Some(r)) if r > 0.0 => Some([r, r]),
            _ => None,
        };
        let z_offset = if o.z_offset.is_finite() { o.z_offset } else { 0.0 };
        let mut places: Vec<Placement> = Vec::new();
        if o.repeats.is_empty() {
            if let (Some(size), Some(h)) = (size, o.height) {
                places.push((o.s, o.t, z_offset, size, h, format!("object:{}", o.id)));
            }
        }
        for r in &o.repeats {
            let extra = |name: &str| {
                r.extras.attributes.iter().find(|(k, _)| k == name).and_then(|(_, v)| v.trim().parse::<f64>().ok())
            };
            let pair = |a: &str, b: &str| Some((extra(a)?, extra(b)?)).filter(|(x, y)| x.is_finite() && y.is_finite());
            let (lengths, widths, radii) =
                (pair("lengthStart", "lengthEnd"), pair("widthStart", "widthEnd"), pair("radiusStart", "radiusEnd"));
            if !(r.distance > 0.0 && r.length >= 0.0 && r.s.is_finite() && r.length.is_finite()) {
                continue;
            }
            let n = ((r.length / r.distance + 1e-9).floor() as usize).min(MAX_REPEATED - 1);
            for k in 0..=n {
                let ds = k as f64 * r.distance;
                let s = r.s + ds;
                if !(0.0..=len).contains(&s) {
                    continue;
                }
                let u = if r.length > 0.0 { (ds / r.length).clamp(0.0, 1.0) } else { 0.0 };
                let lerp = |(a, b): (f64, f64)| a + (b - a) * u;
                let size = match (
                    lengths.map(lerp).or(o.length),
                    widths.map(lerp).or(o.width),
                    radii.map(lerp).or(o.radius),
                ) {
                    (Some(l), Some(w), _) if l > 0.0 && w > 0.0 => [0.5 * l, 0.5 * w],
                    (_, _, Some(r)) if r > 0.0 => [r, r],
                    _ => continue,
                };
                let id = format!("object:{}:{}", o.id, places.len());
                places.push((
                    s,
                    lerp((r.t_start, r.t_end)),
                    lerp((r.z_offset_start, r.z_offset_end)),
                    size,
                    lerp((r.height_start, r.height_end)),
                    id,
                ));
            }
        }
        for (s, t, dz, size, h, id) in places {
            let finite = h.is_finite() && s.is_finite() && t.is_finite() && dz.is_finite();
            if !(finite && h > 0.0 && size.iter().all(|v| v.is_finite())) {
                continue;
            }
            let s = s.clamp(0.0, len);
            let p = road.sth_to_xyz(s, t, 0.0);
            let z = surface.height(p[0], p[1]).unwrap_or(p[2]) + dz;
            out.push(Body {
                id,
                centre: [p[0], p[1]],
                heading: road.pose(s).hdg + o.hdg.filter(|h| h.is_finite()).unwrap_or(0.0),
                half: size,
                z: [z, z + h],
                velocity: [0.0, 0.0],
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The axis test alone (what `overlap` gives without its circle test).
    fn axes_only(a: &Body, b: &Body) -> bool {
        let (ca, cb) = (a.corners(), b.corners());
        a.axes().into_iter().chain(b.axes()).all(|axis| {
            let proj = |c: &[[f64; 2]; 4]| {
                c.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
                    let d = p[0] * axis[0] + p[1] * axis[1];
                    (lo.min(d), hi.max(d))
                })
            };
            let ((a0, a1), (b0, b1)) = (proj(&ca), proj(&cb));
            !(a1 < b0 || b1 < a0)
        })
    }

    /// The sweep finds the pairs a test of every pair finds: 60 bodies of many sizes and
    /// headings crowded on 40 m x 10 m (many touching, some only corner to corner), with and
    /// without standing ones, and in reverse order.
    #[test]
    fn the_sweep_finds_every_touching_pair() {
        let mut state = 7u64;
        let mut next = || {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut bodies: Vec<Body> = (0..60)
            .map(|i| Body {
                id: format!("b{i:02}"),
                centre: [40.0 * next(), 10.0 * next()],
                heading: 6.3 * next(),
                half: [0.2 + 2.3 * next(), 0.2 + 0.8 * next()],
                z: [0.0, 0.5 + next()],
                velocity: [0.0; 2],
            })
            .collect();
        let statics = bodies.split_off(50);
        for moving in [bodies.clone(), bodies.iter().rev().cloned().collect()] {
            for st in [&statics[..], &[]] {
                let mut all = Vec::new();
                for (i, a) in moving.iter().enumerate() {
                    for b in moving[i + 1..].iter().chain(st) {
                        if overlap(a, b) {
                            all.push((a.id.clone(), b.id.clone()));
                        }
                    }
                }
                all.sort();
                assert!(all.len() > 20, "{} pairs: too few to test", all.len());
                assert_eq!(touching_pairs(&moving, st), all);
            }
        }
    }

    /// The circle test never rejects a pair the axis test finds touching: pairs around a box
    /// at every distance, heading and size, corner to corner included.
    #[test]
    fn the_circle_test_keeps_every_overlap() {
        let body = |c: [f64; 2], h: f64, half: [f64; 2]| Body {
            id: String::new(),
            centre: c,
            heading: h,
            half,
            z: [0.0, 1.0],
            velocity: [0.0; 2],
        };
        let a = body([1.0, -2.0], 0.3, [2.3, 0.9]);
        let (mut touching, mut n) = (0, 0);
        for i in 0..40 {
            for j in 0..36 {
                for (k, half) in [[0.5, 0.5], [2.25, 0.9], [0.1, 3.0]].into_iter().enumerate() {
                    let r = 0.15 * i as f64;
                    let ang = j as f64 * 0.1745;
                    let b = body([1.0 + r * ang.cos(), -2.0 + r * ang.sin()], ang * (k as f64 + 0.5), half);
                    let want = axes_only(&a, &b);
                    assert_eq!(overlap(&a, &b), want, "r {r}, angle {ang}, size {half:?}");
                    touching += usize::from(want);
                    n += 1;
                }
            }
        }
        assert!(touching > n / 10 && touching < n, "{touching} of {n} touching");
        // Corner to corner on the diagonal: exactly the circumscribed circles' distance.
        let unit = body([0.0, 0.0], 0.0, [1.0, 1.0]);
        let diag = body([2.0, 2.0], 0.0, [1.0, 1.0]);
        assert!(axes_only(&unit, &diag) && overlap(&unit, &diag));
    }
}
