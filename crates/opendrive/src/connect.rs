//! Connecting roads generated for a junction from the lanes of the roads that end at it.
//!
//! A junction's roads end at its area; [`connect`] joins them: from every lane that drives into
//! the junction on one road, a connecting road to a lane that drives out of it on each other
//! road (no U-turn onto the road it came from), as maps built from OSM ways or from a survey's
//! trajectory need them. Each connecting road carries one lane, -1 (`driving`), whose inner
//! border is its reference line: the path starts on the inner border of the incoming lane at
//! its road's end and ends on the inner border of the outgoing lane, with the heading and the
//! curvature of those borders at both ends: a chain of clothoids, curvature continuous, whose
//! knots start from a quintic Hermite curve through the two poses and move as little as the
//! end conditions need. Its width, elevation and
//! superelevation are cubics from the values (and slopes) of the incoming lane to those of the
//! outgoing one, so the pavement is continuous at both contacts.
//!
//! Lanes pair by turn: on a left turn (right-hand traffic) the innermost lanes pair, on a
//! right turn the outermost, straight on from the inside; a road with more lanes in than the
//! other has out sends its extra lanes to the nearest one, so every lane that drives in reaches
//! every road it is joined to along lane links. Left-hand traffic is refused.
//!
//! Frames: map `x, y, z` of the file; the contacts' poses come from [`RoadEval`].

use crate::eval::RoadEval;
use crate::model::*;
use crate::num::{cramer3, det3, wrap};
use std::f64::consts::PI;

/// Settings of [`connect`].
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// Turns sharper than this (rad, between the heading in and the heading out) are U-turns
    /// and get no connecting road.
    pub u_turn: f64,
    /// Turns within this angle of straight on (rad) pair lanes from the inside.
    pub straight: f64,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions { u_turn: 150f64.to_radians(), straight: 20f64.to_radians() }
    }
}

/// Why a junction could not be connected.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ConnectError {
    /// No junction with this id.
    #[error("no junction {0}")]
    NoJunction(String),
    /// A road that ends at the junction drives on the left.
    #[error("road {0}: left-hand traffic is not supported by the junction generator")]
    LeftHand(String),
    /// A road that ends at the junction has no lanes at that end.
    #[error("road {0} at s {1:.3} m: no lane section")]
    NoLanes(String, f64),
    /// No path could be fitted between two lanes.
    #[error("junction {junction}: road {from} lane {from_lane} to road {to} lane {to_lane}: {why}")]
    Path {
        /// Junction id.
        junction: String,
        /// Incoming road.
        from: String,
        /// Its lane.
        from_lane: i32,
        /// Outgoing road.
        to: String,
        /// Its lane.
        to_lane: i32,
        /// What went wrong.
        why: String,
    },
}

/// One end of a road at a junction.
#[derive(Debug, Clone, PartialEq)]
pub struct RoadEnd {
    /// The road's id.
    pub road: String,
    /// Whether the road's start (s = 0) is at the junction, else its end.
    pub start: bool,
}

impl RoadEnd {
    fn contact(&self) -> &'static str {
        if self.start {
            "start"
        } else {
            "end"
        }
    }
}

/// The ends of roads outside junctions whose predecessor (start) or successor (end) is the
/// junction `id`, in file order.
pub fn junction_ends(odr: &OpenDrive, id: &str) -> Vec<RoadEnd> {
    let mut out = Vec::new();
    for road in odr.roads.iter().filter(|r| r.junction == "-1") {
        let Some(link) = &road.link else { continue };
        for (target, start) in [(&link.predecessor, true), (&link.successor, false)] {
            if target.as_ref().is_some_and(|t| t.element_type == "junction" && t.element_id == id) {
                out.push(RoadEnd { road: road.id.clone(), start });
            }
        }
    }
    out
}

/// The lanes into junction `id` that cannot reach a road the junction joins their road to along
/// lane links: (their road, their lane id, the road they miss). Empty for a junction
/// [`connect`] made; a check for any other.
pub fn unreached_lanes(odr: &OpenDrive, id: &str) -> Vec<(String, i32, String)> {
    let Some(j) = odr.junctions.iter().find(|j| j.id == id) else { return Vec::new() };
    let mut reach: Vec<(String, i32, String)> = Vec::new();
    for c in &j.connections {
        let (Some(from), Some(cr)) = (&c.incoming_road, c.connecting_road.as_deref().and_then(|r| odr.road(r))) else {
            continue;
        };
        let Some(link) = &cr.link else { continue };
        // The connecting road runs from its contact point to its other end.
        let other = if c.contact_point.as_deref() == Some("end") { &link.predecessor } else { &link.successor };
        let Some(to) = other.as_ref().map(|t| t.element_id.clone()) else { continue };
        reach.extend(c.lane_links.iter().map(|l| (from.clone(), l.from, to.clone())));
    }
    let mut out = Vec::new();
    for e in junction_ends(odr, id) {
        let Some(road) = odr.road(&e.road) else { continue };
        let sec = if e.start { road.lanes.lane_sections.first() } else { road.lanes.lane_sections.last() };
        let Some(sec) = sec else { continue };
        let mut joined: Vec<&String> = reach.iter().filter(|r| r.0 == road.id).map(|r| &r.2).collect();
        joined.sort();
        joined.dedup();
        for lane in sec.lanes().filter(|l| l.id != 0 && drivable(l.kind.as_deref())) {
            // Right lanes drive along +s (right-hand traffic): into the junction at the end.
            if (lane.id < 0) == e.start {
                continue;
            }
            for to in &joined {
                if !reach.iter().any(|r| r.0 == road.id && r.1 == lane.id && &&r.2 == to) {
                    out.push((road.id.clone(), lane.id, (*to).clone()));
                }
            }
        }
    }
    out
}

/// A lane at a road end, in the direction of driving.
#[derive(Debug, Clone)]
struct LaneEnd {
    id: i32,
    /// Inner border at the contact: x, y, z.
    p: [f64; 3],
    /// Heading and curvature of the inner border in the direction of driving.
    hdg: f64,
    curvature: f64,
    /// dz/d(arc) of the inner border in the direction of driving.
    grade: f64,
    /// Width and its rate per metre driven.
    width: f64,
    width_rate: f64,
    /// Superelevation in the direction of driving, rad.
    roll: f64,
}

/// The lanes into (`incoming`) and out of the junction at one road end, inner first.
struct EndLanes {
    end: RoadEnd,
    /// Heading of the reference line in the direction into the junction.
    hdg_in: f64,
    incoming: Vec<LaneEnd>,
    outgoing: Vec<LaneEnd>,
}

/// Lane types a vehicle drives on.
fn drivable(kind: Option<&str>) -> bool {
    matches!(kind, Some("driving" | "entry" | "exit" | "onRamp" | "offRamp" | "connectingRamp" | "bidirectional"))
}

/// Step of the one-sided differences along a lane border, m.
const DIFF_STEP: f64 = 0.05;

fn end_lanes(road: &Road, end: &RoadEnd) -> Result<EndLanes, ConnectError> {
    if road.rule.as_deref() == Some("LHT") {
        return Err(ConnectError::LeftHand(road.id.clone()));
    }
    let ev = RoadEval::new(road);
    let s_c = if end.start { 0.0 } else { road.length };
    // Toward the road's inside from the contact, s moves by `inward` per metre.
    let inward = if end.start { 1.0 } else { -1.0 };
    let Some(sec) = ev.lane_section(s_c) else { return Err(ConnectError::NoLanes(road.id.clone(), s_c)) };
    let h = DIFF_STEP.min(road.length / 4.0).max(1e-4);
    // The inner and outer border t of every lane at s.
    let borders = |s: f64| -> Vec<(i32, f64, f64)> {
        let outer = ev.lane_borders(s);
        let offset = ev.lane_offset(s);
        outer
            .iter()
            .map(|&(id, t_out)| {
                let inner = if id.abs() == 1 {
                    offset
                } else {
                    outer.iter().find(|(j, _)| *j == id - id.signum()).map_or(offset, |&(_, t)| t)
                };
                (id, inner, t_out)
            })
            .collect()
    };
    let at = [0.0, h, 2.0 * h, 3.0 * h].map(|d| s_c + inward * d);
    let rows: Vec<Vec<(i32, f64, f64)>> = at.iter().map(|&s| borders(s)).collect();
    let pose = ev.pose(s_c);
    let hdg_in = if end.start { pose.hdg + PI } else { pose.hdg };
    let (mut incoming, mut outgoing) = (Vec::new(), Vec::new());
    for lane in sec.lanes().filter(|l| l.id != 0 && drivable(l.kind.as_deref())) {
        // The lane's borders at the four stations (a section may start within them: its lane of
        // the same id, else the contact's borders held).
        let Some(first) = rows[0].iter().find(|r| r.0 == lane.id).copied() else { continue };
        let lane_rows: Vec<(i32, f64, f64)> =
            rows.iter().map(|r| r.iter().find(|q| q.0 == lane.id).copied().unwrap_or(first)).collect();
        // Lanes right of the reference line drive along +s (right-hand traffic): into the
        // junction at the road's end, out of it at its start.
        let along_s = lane.id < 0;
        let into = along_s != end.start;
        let pts: Vec<[f64; 3]> = at.iter().zip(&lane_rows).map(|(&s, r)| ev.sth_to_xyz(s, r.1, 0.0)).collect();
        let widths: Vec<f64> = lane_rows.iter().map(|r| (r.2 - r.1).abs()).collect();
        // Derivatives along the direction of the points (away from the contact, into the
        // road), second order one-sided; then turned to the direction of driving.
        let d1 = |v: [f64; 4]| (-3.0 * v[0] + 4.0 * v[1] - v[2]) / (2.0 * h);
        let d2 = |v: [f64; 4]| (2.0 * v[0] - 5.0 * v[1] + 4.0 * v[2] - v[3]) / (h * h);
        let comp = |c: usize| [pts[0][c], pts[1][c], pts[2][c], pts[3][c]];
        let (dx, dy, dz) = (d1(comp(0)), d1(comp(1)), d1(comp(2)));
        let (ddx, ddy) = (d2(comp(0)), d2(comp(1)));
        let speed = dx.hypot(dy);
        if speed.is_nan() || speed <= 1e-9 {
            continue;
        }
        // Along the points the curve turns by `k_away`; driving the other way (into the
        // junction) the heading reverses and so does the sign of the curvature.
        let k_away = (dx * ddy - dy * ddx) / speed.powi(3);
        let hdg_away = dy.atan2(dx);
        let w = [widths[0], widths[1], widths[2], widths[3]];
        let roll_s = ev.superelevation(s_c);
        let (hdg, curvature, grade, width_rate) = if into {
            (hdg_away + PI, -k_away, -dz / speed, -d1(w) / speed)
        } else {
            (hdg_away, k_away, dz / speed, d1(w) / speed)
        };
        // Superelevation is a roll about +s; driving along -s it is the opposite roll.
        let roll = if along_s { roll_s } else { -roll_s };
        let le = LaneEnd { id: lane.id, p: pts[0], hdg, curvature, grade, width: widths[0], width_rate, roll };
        if into {
            incoming.push(le);
        } else {
            outgoing.push(le);
        }
    }
    incoming.sort_by_key(|l| l.id.abs());
    outgoing.sort_by_key(|l| l.id.abs());
    Ok(EndLanes { end: end.clone(), hdg_in, incoming, outgoing })
}

/// Pairs of (incoming index, outgoing index), both counted from the inside, for a turn of
/// `turn` rad (left positive).
fn pair_lanes(n_in: usize, n_out: usize, turn: f64, straight: f64) -> Vec<(usize, usize)> {
    if n_in == 0 || n_out == 0 {
        return Vec::new();
    }
    if turn < -straight {
        // Right turn: outermost with outermost; extra lanes in go to the innermost out.
        (0..n_in).map(|k| (k, (n_out as isize - (n_in - k) as isize).max(0) as usize)).collect()
    } else {
        (0..n_in).map(|k| (k, k.min(n_out - 1))).collect()
    }
}

/// A quintic Hermite curve in plan: position, first and second derivative at u = 0 and 1.
struct Quintic {
    p: [[f64; 2]; 6],
}

impl Quintic {
    fn new(a: &LaneEnd, b: &LaneEnd, scale: f64) -> Quintic {
        let chord = (b.p[0] - a.p[0]).hypot(b.p[1] - a.p[1]);
        let l = chord * scale;
        let t = |h: f64| [h.cos(), h.sin()];
        let n = |h: f64| [-h.sin(), h.cos()];
        let (ta, na, tb, nb) = (t(a.hdg), n(a.hdg), t(b.hdg), n(b.hdg));
        Quintic {
            p: [
                [a.p[0], a.p[1]],
                [l * ta[0], l * ta[1]],
                [l * l * a.curvature * na[0], l * l * a.curvature * na[1]],
                [l * l * b.curvature * nb[0], l * l * b.curvature * nb[1]],
                [l * tb[0], l * tb[1]],
                [b.p[0], b.p[1]],
            ],
        }
    }

    /// The curve (`order` 0), or its first or second derivative, at `u`.
    fn at(&self, u: f64, order: usize) -> [f64; 2] {
        let (u2, u3, u4) = (u * u, u * u * u, u * u * u * u);
        let u5 = u4 * u;
        let h = match order {
            0 => [
                1.0 - 10.0 * u3 + 15.0 * u4 - 6.0 * u5,
                u - 6.0 * u3 + 8.0 * u4 - 3.0 * u5,
                0.5 * (u2 - 3.0 * u3 + 3.0 * u4 - u5),
                0.5 * (u3 - 2.0 * u4 + u5),
                -4.0 * u3 + 7.0 * u4 - 3.0 * u5,
                10.0 * u3 - 15.0 * u4 + 6.0 * u5,
            ],
            1 => [
                -30.0 * u2 + 60.0 * u3 - 30.0 * u4,
                1.0 - 18.0 * u2 + 32.0 * u3 - 15.0 * u4,
                0.5 * (2.0 * u - 9.0 * u2 + 12.0 * u3 - 5.0 * u4),
                0.5 * (3.0 * u2 - 8.0 * u3 + 5.0 * u4),
                -12.0 * u2 + 28.0 * u3 - 15.0 * u4,
                30.0 * u2 - 60.0 * u3 + 30.0 * u4,
            ],
            _ => [
                -60.0 * u + 180.0 * u2 - 120.0 * u3,
                -36.0 * u + 96.0 * u2 - 60.0 * u3,
                0.5 * (2.0 - 18.0 * u + 36.0 * u2 - 20.0 * u3),
                0.5 * (6.0 * u - 24.0 * u2 + 20.0 * u3),
                -24.0 * u + 84.0 * u2 - 60.0 * u3,
                60.0 * u - 180.0 * u2 + 120.0 * u3,
            ],
        };
        let mut out = [0.0; 2];
        for (hk, pk) in h.iter().zip(&self.p) {
            out[0] += hk * pk[0];
            out[1] += hk * pk[1];
        }
        out
    }

    /// Curvature at `u`, 1/m, and the speed |dP/du|.
    fn curvature(&self, u: f64) -> (f64, f64) {
        let (d1, d2) = (self.at(u, 1), self.at(u, 2));
        let v = d1[0].hypot(d1[1]);
        ((d1[0] * d2[1] - d1[1] * d2[0]) / v.powi(3), v)
    }

    /// The curvature at `n` + 1 even steps of arc length, the arc length, and the largest
    /// |curvature| (None where the curve stops: a cusp).
    fn profile(&self, n: usize) -> Option<(Vec<f64>, f64, f64)> {
        const STEPS: usize = 4000;
        let mut arc = Vec::with_capacity(STEPS + 1);
        let mut kappa = Vec::with_capacity(STEPS + 1);
        let (mut s, mut worst, mut last_v) = (0.0, 0.0f64, 0.0);
        for i in 0..=STEPS {
            let (k, v) = self.curvature(i as f64 / STEPS as f64);
            if v.is_nan() || v <= 1e-6 || !k.is_finite() {
                return None;
            }
            if i > 0 {
                s += 0.5 * (v + last_v) / STEPS as f64;
            }
            last_v = v;
            arc.push(s);
            kappa.push(k);
            worst = worst.max(k.abs());
        }
        let at = |target: f64| {
            let j = arc.partition_point(|&a| a < target).clamp(1, STEPS);
            let f = ((target - arc[j - 1]) / (arc[j] - arc[j - 1]).max(1e-300)).clamp(0.0, 1.0);
            kappa[j - 1] + f * (kappa[j] - kappa[j - 1])
        };
        Some(((0..=n).map(|k| at(s * k as f64 / n as f64)).collect(), s, worst))
    }
}

/// A chain of `knots.len() - 1` clothoids of equal length over `length` from the pose
/// (x, y, hdg), the curvature at its knots `knots`.
fn clothoids(start: (f64, f64, f64), knots: &[f64], length: f64) -> Vec<Geometry> {
    let n = knots.len() - 1;
    let seg = length / n as f64;
    let (mut x, mut y, mut hdg) = start;
    let mut out = Vec::with_capacity(n);
    for k in 0..n {
        let (ka, kb) = (knots[k], knots[k + 1]);
        let kind = if ka == 0.0 && kb == 0.0 {
            GeometryKind::Line
        } else if ka == kb {
            GeometryKind::Arc { curvature: ka }
        } else {
            GeometryKind::Spiral { curv_start: ka, curv_end: kb }
        };
        let g = Geometry { s: k as f64 * seg, x, y, hdg, length: seg, kind, extras: Extras::default() };
        let end = crate::eval::Curve::new(&g).pose(seg);
        (x, y, hdg) = (end.x, end.y, end.hdg);
        out.push(g);
    }
    out
}

/// End pose of a chain of [`clothoids`].
fn chain_end(start: (f64, f64, f64), knots: &[f64], length: f64) -> [f64; 3] {
    let chain = clothoids(start, knots, length);
    let Some(last) = chain.last() else { return [start.0, start.1, start.2] };
    let p = crate::eval::Curve::new(last).pose(last.length);
    [p.x, p.y, p.hdg]
}

/// A curvature-continuous chain of clothoids from lane end `a` to lane end `b`: exactly their
/// poses and curvatures at both ends, the inner knots' curvatures and the length moved as
/// little as Newton's steps need from the quintic `q`'s (a minimum-norm Gauss-Newton solve of
/// the three end conditions).
fn g2_chain(a: &LaneEnd, b: &LaneEnd, q: &Quintic) -> Result<Vec<Geometry>, String> {
    let chord = (b.p[0] - a.p[0]).hypot(b.p[1] - a.p[1]);
    let n = ((chord / 2.0).ceil() as usize).clamp(3, 40);
    let Some((mut knots, mut length, _)) = q.profile(n) else { return Err("the path has a cusp".into()) };
    knots[0] = a.curvature;
    knots[n] = b.curvature;
    let start = (a.p[0], a.p[1], a.hdg);
    let residual = |knots: &[f64], length: f64| {
        let e = chain_end(start, knots, length);
        [e[0] - b.p[0], e[1] - b.p[1], wrap(e[2] - b.hdg) * chord]
    };
    // Unknowns: the inner knots' curvatures times the chord (metres of offset, about), and the
    // length.
    for _ in 0..50 {
        let r = residual(&knots, length);
        let norm = r.iter().map(|v| v * v).sum::<f64>().sqrt();
        if norm < 1e-10 {
            return Ok(clothoids(start, &knots, length));
        }
        let m = n; // n - 1 inner knots + the length
        let mut jac = vec![[0.0f64; 3]; m];
        for (j, col) in jac.iter_mut().enumerate() {
            let (mut kp, mut lp) = (knots.clone(), length);
            let (mut km, mut lm) = (knots.clone(), length);
            let h = 1e-6;
            if j < n - 1 {
                kp[j + 1] += h / chord;
                km[j + 1] -= h / chord;
            } else {
                lp += h;
                lm -= h;
            }
            let (rp, rm) = (residual(&kp, lp), residual(&km, lm));
            for i in 0..3 {
                col[i] = (rp[i] - rm[i]) / (2.0 * h);
            }
        }
        // Minimum-norm step: J^T (J J^T)^-1 (-r).
        let mut jjt = [[0.0f64; 3]; 3];
        for col in &jac {
            for i in 0..3 {
                for k in 0..3 {
                    jjt[i][k] += col[i] * col[k];
                }
            }
        }
        let Some(y) = solve3(jjt, [-r[0], -r[1], -r[2]]) else { return Err("the end conditions are singular".into()) };
        for (j, col) in jac.iter().enumerate() {
            let step = col[0] * y[0] + col[1] * y[1] + col[2] * y[2];
            if j < n - 1 {
                knots[j + 1] += step / chord;
            } else {
                length += step;
            }
        }
        if length.is_nan() || length <= 0.1 * chord || knots.iter().any(|k| !k.is_finite()) {
            return Err("the path does not converge".into());
        }
    }
    Err(format!("the path misses the outgoing lane by {:.3e} m", {
        let r = residual(&knots, length);
        r[0].hypot(r[1])
    }))
}

/// Solves the 3 x 3 system `a x = b` (None when singular).
fn solve3(a: [[f64; 3]; 3], b: [f64; 3]) -> Option<[f64; 3]> {
    let d = det3(&a);
    if d.is_nan() || d.abs() <= 1e-300 {
        return None;
    }
    Some(cramer3(&a, &b, d))
}

/// A cubic from value `a0` with slope `g0` at 0 to `a1` with slope `g1` at `len`.
fn hermite(a0: f64, g0: f64, a1: f64, g1: f64, len: f64) -> Poly3 {
    let m = (a1 - a0) / len;
    Poly3 { s: 0.0, a: a0, b: g0, c: (3.0 * m - 2.0 * g0 - g1) / len, d: (g0 + g1 - 2.0 * m) / (len * len) }
}

/// How a generated connecting road meets its lanes (for checks and reports).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Fit {
    /// Distance of the reference line's start and end from the lanes' inner borders, m.
    pub gap: f64,
    /// Heading difference at the worse contact, rad.
    pub heading: f64,
    /// Largest |curvature| of the designed path, 1/m.
    pub curvature: f64,
}

/// What [`connect`] generated for one junction.
#[derive(Debug, Clone)]
pub struct Connected {
    /// The connecting roads (junction id set, linked to the roads they join).
    pub roads: Vec<Road>,
    /// The junction's connections, one per connecting road.
    pub connections: Vec<Connection>,
    /// Per connecting road, how it meets its lanes.
    pub fits: Vec<Fit>,
}

/// Generates the connecting roads of junction `id` from the roads that end at it
/// ([`junction_ends`]); their ids are `first_id`, `first_id + 1`, ... Existing connecting roads
/// and connections of the junction are ignored (see [`regenerate`] to replace them).
pub fn connect(odr: &OpenDrive, id: &str, first_id: u64, opts: &ConnectOptions) -> Result<Connected, ConnectError> {
    if !odr.junctions.iter().any(|j| j.id == id) {
        return Err(ConnectError::NoJunction(id.to_string()));
    }
    let mut ends = Vec::new();
    for e in junction_ends(odr, id) {
        let Some(road) = odr.road(&e.road) else { continue };
        ends.push(end_lanes(road, &e)?);
    }
    let mut out = Connected { roads: Vec::new(), connections: Vec::new(), fits: Vec::new() };
    for (ia, a) in ends.iter().enumerate() {
        for (ib, b) in ends.iter().enumerate() {
            if ia == ib {
                continue;
            }
            // Heading out of the junction along b's reference line.
            let turn = wrap(b.hdg_in + PI - a.hdg_in);
            if turn.abs() > opts.u_turn {
                continue;
            }
            for (ka, kb) in pair_lanes(a.incoming.len(), b.outgoing.len(), turn, opts.straight) {
                let (la, lb) = (&a.incoming[ka], &b.outgoing[kb]);
                let road_id = (first_id + out.roads.len() as u64).to_string();
                let fail = |why: String| ConnectError::Path {
                    junction: id.to_string(),
                    from: a.end.road.clone(),
                    from_lane: la.id,
                    to: b.end.road.clone(),
                    to_lane: lb.id,
                    why,
                };
                let (road, fit) = connecting_road(&road_id, id, (&a.end, la), (&b.end, lb)).map_err(fail)?;
                out.connections.push(Connection {
                    id: out.connections.len().to_string(),
                    incoming_road: Some(a.end.road.clone()),
                    connecting_road: Some(road_id),
                    contact_point: Some("start".into()),
                    lane_links: vec![LaneLinkPair { from: la.id, to: -1, ..Default::default() }],
                    ..Default::default()
                });
                out.roads.push(road);
                out.fits.push(fit);
            }
        }
    }
    Ok(out)
}

/// Replaces the connecting roads and connections of junction `id` with generated ones
/// ([`connect`]); new road ids follow the largest numeric road id of the file. Returns how the
/// new roads meet their lanes.
pub fn regenerate(odr: &mut OpenDrive, id: &str, opts: &ConnectOptions) -> Result<Vec<Fit>, ConnectError> {
    let first = odr.roads.iter().filter_map(|r| r.id.parse::<u64>().ok()).max().map_or(1, |m| m + 1);
    let made = connect(odr, id, first, opts)?;
    odr.roads.retain(|r| r.junction != id);
    // The lanes at the junction's ends link to the connecting roads' lane -1, both ways (as
    // the connecting roads' lanes link to them).
    for c in &made.roads {
        let Some(link) = &c.link else { continue };
        let lane = c.lanes.lane_sections.first().and_then(|s| s.right.as_ref()).and_then(|r| r.lanes.first());
        let Some(ll) = lane.and_then(|l| l.link.as_ref()) else { continue };
        for (target, ids) in [(&link.predecessor, &ll.predecessors), (&link.successor, &ll.successors)] {
            let (Some(t), Some(&lane_id)) = (target, ids.first()) else { continue };
            let Some(road) = odr.roads.iter_mut().find(|r| r.id == t.element_id) else { continue };
            let start = t.contact_point.as_deref() == Some("start");
            let section =
                if start { road.lanes.lane_sections.first_mut() } else { road.lanes.lane_sections.last_mut() };
            let Some(section) = section else { continue };
            for side in [&mut section.left, &mut section.right].into_iter().flatten() {
                for l in side.lanes.iter_mut().filter(|l| l.id == lane_id) {
                    let link = l.link.get_or_insert_with(Default::default);
                    let list = if start { &mut link.predecessors } else { &mut link.successors };
                    if !list.contains(&-1) {
                        list.push(-1);
                    }
                }
            }
        }
    }
    odr.roads.extend(made.roads);
    if let Some(j) = odr.junctions.iter_mut().find(|j| j.id == id) {
        j.connections = made.connections;
    }
    Ok(made.fits)
}

fn connecting_road(
    road_id: &str,
    junction: &str,
    (ea, la): (&RoadEnd, &LaneEnd),
    (eb, lb): (&RoadEnd, &LaneEnd),
) -> Result<(Road, Fit), String> {
    let chord = (lb.p[0] - la.p[0]).hypot(lb.p[1] - la.p[1]);
    if chord.is_nan() || chord <= 0.1 {
        return Err(format!("the lanes' borders are {chord:.3} m apart: no room for a path"));
    }
    // The scale of the end tangents that keeps the path's curvature lowest.
    let mut best: Option<(Quintic, f64)> = None;
    for scale in [0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.7] {
        let q = Quintic::new(la, lb, scale);
        let Some((_, _, k)) = q.profile(8) else { continue };
        if best.as_ref().is_none_or(|b| k < b.1) {
            best = Some((q, k));
        }
    }
    let Some((q, k_max)) = best else { return Err("every path has a cusp".into()) };
    if k_max.is_nan() || k_max >= crate::validate::CURVATURE_ERROR {
        return Err(format!("the path would turn at {k_max:.2} 1/m (radius below 1 m)"));
    }
    let geometries = g2_chain(la, lb, &q)?;
    let length = geometries.last().map_or(0.0, |g| g.s + g.length);
    let mut road = Road {
        id: road_id.to_string(),
        length,
        junction: junction.to_string(),
        link: Some(RoadLink {
            predecessor: Some(LinkTarget {
                element_type: "road".into(),
                element_id: ea.road.clone(),
                contact_point: Some(ea.contact().into()),
                ..Default::default()
            }),
            successor: Some(LinkTarget {
                element_type: "road".into(),
                element_id: eb.road.clone(),
                contact_point: Some(eb.contact().into()),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    road.plan_view.geometries = geometries;
    road.elevation_profile.elevations = vec![hermite(la.p[2], la.grade, lb.p[2], lb.grade, length)];
    road.lateral_profile.superelevations = vec![hermite(la.roll, 0.0, lb.roll, 0.0, length)];
    let width = hermite(la.width, la.width_rate, lb.width, lb.width_rate, length);
    let centre = Lane {
        id: 0,
        road_marks: vec![RoadMark { kind: "none".into(), color: "standard".into(), ..Default::default() }],
        ..Default::default()
    };
    let lane = Lane {
        id: -1,
        kind: Some("driving".into()),
        level: Some(false),
        link: Some(LaneLink { predecessors: vec![la.id], successors: vec![lb.id], ..Default::default() }),
        widths: vec![width],
        ..Default::default()
    };
    road.lanes.lane_sections = vec![LaneSection {
        s: 0.0,
        center: Some(LaneSide { lanes: vec![centre], ..Default::default() }),
        right: Some(LaneSide { lanes: vec![lane], ..Default::default() }),
        ..Default::default()
    }];
    // How the chain meets the lanes.
    let ev = RoadEval::new(&road);
    let (p0, p1) = (ev.pose(0.0), ev.pose(length));
    let gap = (p0.x - la.p[0]).hypot(p0.y - la.p[1]).max((p1.x - lb.p[0]).hypot(p1.y - lb.p[1]));
    let heading = wrap(p0.hdg - la.hdg).abs().max(wrap(p1.hdg - lb.hdg).abs());
    Ok((road, Fit { gap, heading, curvature: k_max }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_pair_inside_on_left_turns_and_outside_on_right_turns() {
        // Two lanes in, one out: both reach the road.
        assert_eq!(pair_lanes(2, 1, 1.5, 0.3), vec![(0, 0), (1, 0)]);
        assert_eq!(pair_lanes(2, 1, -1.5, 0.3), vec![(0, 0), (1, 0)]);
        // One lane in, three out: the innermost on a left turn, the outermost on a right one.
        assert_eq!(pair_lanes(1, 3, 1.5, 0.3), vec![(0, 0)]);
        assert_eq!(pair_lanes(1, 3, -1.5, 0.3), vec![(0, 2)]);
        assert_eq!(pair_lanes(2, 2, 0.0, 0.3), vec![(0, 0), (1, 1)]);
        assert!(pair_lanes(0, 2, 0.0, 0.3).is_empty());
    }

    #[test]
    fn a_clothoid_chain_meets_both_lanes_exactly() {
        let lane = |p: [f64; 3], hdg: f64, curvature: f64| LaneEnd {
            id: -1,
            p,
            hdg,
            curvature,
            grade: 0.0,
            width: 3.0,
            width_rate: 0.0,
            roll: 0.0,
        };
        // A quarter turn to the left of about 10 m radius, the outgoing lane's border on a
        // curve of 50 m radius.
        let (a, b) = (lane([0.0, 0.0, 0.0], 0.0, 0.0), lane([10.0, 10.0, 0.0], PI / 2.0, 0.02));
        let q = Quintic::new(&a, &b, 1.0);
        let (knots, length, worst) = q.profile(4).unwrap();
        assert!((knots[0] - 0.0).abs() < 1e-9 && (knots[4] - 0.02).abs() < 1e-9, "{knots:?}");
        assert!(length > 14.1 && length < 20.0 && worst > 0.05 && worst < 0.34, "{length} {worst}");
        let chain = g2_chain(&a, &b, &q).unwrap();
        let last = chain.last().unwrap();
        let end = crate::eval::Curve::new(last).pose(last.length);
        assert!((end.x - 10.0).abs() < 1e-9 && (end.y - 10.0).abs() < 1e-9, "{end:?}");
        assert!((end.hdg - PI / 2.0).abs() < 1e-9 && (end.curvature - 0.02).abs() < 1e-12);
        // Curvature continuous from record to record.
        for w in chain.windows(2) {
            let (_, k_end) = w[0].kind.end_curvatures().unwrap();
            let (k_start, _) = w[1].kind.end_curvatures().unwrap();
            assert_eq!(k_end, k_start);
        }
    }
}
