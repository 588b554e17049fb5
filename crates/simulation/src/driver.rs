//! The AI driver: a route of lane centre lines as waypoints, pure-pursuit steering, a target
//! speed from the curvature ahead and the distance to the route's end, and route events.
//!
//! # Route
//! A leg is a lane of the road (`lane:ID`): right lanes (negative ids) are driven with s, left
//! lanes against it. Its centre (midway between the lane's borders, road-frame t) is sampled
//! every metre or less (`n = ceil(length)` equal steps) into plan points; legs follow each
//! other (networks, through junctions, are for later). The curvature at a waypoint is the
//! Menger curvature of it and its neighbours.
//!
//! # Control
//! Pure pursuit about the rear axle: the lookahead `L = clamp(gain v, min, max)`; the target is
//! the first waypoint ahead of the progress point at least L away (the route's end when none
//! is), at angle α in the body frame and distance d; the wheel angle is atan(2 wheelbase sin α
//! / d). On an arc the chord's curvature is the arc's, so a vehicle on the path stays on it.
//! Target speed: the least of the cruise speed, sqrt(lateral limit / |κ|) over the stretch
//! needed to brake from the current speed (plus the lookahead), the speed from which the
//! vehicle can brake to rest at the comfortable deceleration within the distance left
//! (sqrt(2 b d), d from the front bumper). The acceleration asked is gain (target - v), limited, and the model's
//! pedals for it.
//!
//! # Events
//! `Arrived` when the progress point passes the end of a leg; `RouteComplete` once, when
//! the front bumper is within `arrive_distance` of the route's end at rest (or the rear axle
//! is past its last waypoint); from then
//! on the driver holds the brake.

use crate::vehicle::{Longitudinal, VehicleParams, VehicleState};
use crate::Error;
use opendrive::RoadEval;
use serde::{Deserialize, Serialize};

/// One leg of a route: a lane of the road.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RouteLeg {
    /// The lane's id (negative: right lanes, driven with s).
    pub lane: i32,
}

impl std::str::FromStr for RouteLeg {
    type Err = Error;
    /// `lane:ID` (`ID` a non-zero integer).
    fn from_str(text: &str) -> Result<RouteLeg, Error> {
        let bad = |why: &str| Error::Route { leg: text.to_string(), why: why.to_string() };
        let id = text.trim().strip_prefix("lane:").ok_or_else(|| bad("expected lane:ID"))?;
        let lane: i32 = id.trim().parse().map_err(|_| bad("the lane id is not an integer"))?;
        if lane == 0 {
            return Err(bad("lane 0 is the centre line, not a lane to drive"));
        }
        Ok(RouteLeg { lane })
    }
}

/// A waypoint of a route.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Waypoint {
    /// Plan position, file frame, m.
    pub xy: [f64; 2],
    /// Road s, m.
    pub s: f64,
    /// Road-frame t of the lane centre, m.
    pub t: f64,
    /// Curvature of the route here, 1/m (left positive).
    pub curvature: f64,
    /// The leg it belongs to.
    pub leg: usize,
    /// Distance along the route from its start, m.
    pub distance: f64,
}

/// Waypoints along the legs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Route {
    /// The waypoints in driving order.
    pub waypoints: Vec<Waypoint>,
    /// Index of each leg's last waypoint.
    pub leg_ends: Vec<usize>,
}

/// The t of the centre of `lane` at `s` (midway between its borders), or `None` where the
/// road has no such lane.
pub fn lane_centre_t(road: &RoadEval, lane: i32, s: f64) -> Option<f64> {
    let borders = road.lane_borders(s);
    let outer = borders.iter().find(|b| b.0 == lane).map(|b| b.1)?;
    let inner_id = lane - lane.signum();
    let inner =
        if inner_id == 0 { road.lane_offset(s) } else { borders.iter().find(|b| b.0 == inner_id).map(|b| b.1)? };
    Some(0.5 * (inner + outer))
}

impl Route {
    /// The route along `legs` of `road`, a waypoint at most every `spacing` m.
    pub fn new(road: &RoadEval, legs: &[RouteLeg], spacing: f64) -> Result<Route, Error> {
        crate::positive("waypoint spacing", spacing)?;
        let len = road.length();
        crate::positive("road length", len)?;
        let mut waypoints: Vec<Waypoint> = Vec::new();
        let mut leg_ends = Vec::new();
        let n = (len / spacing).ceil().clamp(1.0, 10_000_000.0) as usize;
        for (k, leg) in legs.iter().enumerate() {
            for i in 0..=n {
                let f = i as f64 / n as f64;
                let s = if leg.lane < 0 { f * len } else { (1.0 - f) * len };
                let t = lane_centre_t(road, leg.lane, s).ok_or_else(|| Error::NoLane {
                    road: road.road().id.clone(),
                    lane: leg.lane,
                    s,
                })?;
                let p = road.sth_to_xyz(s, t, 0.0);
                let xy = [p[0], p[1]];
                let distance = match waypoints.last() {
                    Some(w) if i == 0 && (w.xy[0] - xy[0]).hypot(w.xy[1] - xy[1]) < 1e-9 => continue,
                    Some(w) => w.distance + (w.xy[0] - xy[0]).hypot(w.xy[1] - xy[1]),
                    None => 0.0,
                };
                waypoints.push(Waypoint { xy, s, t, curvature: 0.0, leg: k, distance });
            }
            leg_ends.push(waypoints.len().saturating_sub(1));
        }
        if waypoints.len() < 2 {
            return Err(Error::Route { leg: format!("{legs:?}"), why: "a route needs at least one leg".into() });
        }
        for i in 1..waypoints.len() - 1 {
            let (a, b, c) = (waypoints[i - 1].xy, waypoints[i].xy, waypoints[i + 1].xy);
            let cross = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
            let (ab, bc, ca) =
                ((b[0] - a[0]).hypot(b[1] - a[1]), (c[0] - b[0]).hypot(c[1] - b[1]), (a[0] - c[0]).hypot(a[1] - c[1]));
            let den = ab * bc * ca;
            waypoints[i].curvature = if den > 0.0 { 2.0 * cross / den } else { 0.0 };
        }
        let n = waypoints.len();
        waypoints[0].curvature = waypoints[1].curvature;
        waypoints[n - 1].curvature = waypoints[n - 2].curvature;
        Ok(Route { waypoints, leg_ends })
    }

    /// Length, m.
    pub fn length(&self) -> f64 {
        self.waypoints.last().map_or(0.0, |w| w.distance)
    }

    /// The point of the route nearest to (x, y) (on its polyline) and its distance along it.
    pub fn project(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let mut best: Option<(f64, f64)> = None;
        for w in self.waypoints.windows(2) {
            let (a, b) = (w[0].xy, w[1].xy);
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let l2 = dx * dx + dy * dy;
            let f = if l2 > 0.0 { (((x - a[0]) * dx + (y - a[1]) * dy) / l2).clamp(0.0, 1.0) } else { 0.0 };
            let (px, py) = (a[0] + f * dx, a[1] + f * dy);
            let d = (x - px).hypot(y - py);
            if best.is_none_or(|b| d < b.0) {
                best = Some((d, w[0].distance + f * (w[1].distance - w[0].distance)));
            }
        }
        best
    }
}

/// The driver's settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DriverParams {
    /// Cruise speed, m/s.
    pub cruise_speed: f64,
    /// Largest lateral acceleration, m/s².
    pub lateral_accel: f64,
    /// Comfortable deceleration, m/s².
    pub decel: f64,
    /// Largest acceleration asked, m/s².
    pub accel: f64,
    /// Speed gain, 1/s.
    pub speed_gain: f64,
    /// Lookahead per m/s of speed, s.
    pub lookahead_gain: f64,
    /// Shortest lookahead, m.
    pub lookahead_min: f64,
    /// Longest lookahead, m.
    pub lookahead_max: f64,
    /// Waypoint spacing, m.
    pub spacing: f64,
    /// Distance from the route's end that counts as arrived, m.
    pub arrive_distance: f64,
}

impl Default for DriverParams {
    fn default() -> Self {
        DriverParams {
            cruise_speed: 10.0,
            lateral_accel: 2.0,
            decel: 2.0,
            accel: 2.0,
            speed_gain: 1.0,
            lookahead_gain: 0.6,
            lookahead_min: 4.0,
            lookahead_max: 20.0,
            spacing: 1.0,
            arrive_distance: 1.5,
        }
    }
}

/// What the driver keeps between ticks.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct DriverState {
    /// Index of the waypoint at or behind the progress point.
    pub progress: usize,
    /// Legs whose end has been passed.
    pub legs_done: usize,
    /// Whether the route is complete.
    pub complete: bool,
}

/// Route events of a tick.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum DriverEvent {
    /// The end of leg `leg` was passed.
    Arrived {
        /// The leg's index.
        leg: usize,
    },
    /// The route is complete.
    RouteComplete,
}

fn dist(a: [f64; 2], b: [f64; 2]) -> f64 {
    (a[0] - b[0]).hypot(a[1] - b[1])
}

impl DriverState {
    /// Moves the progress point to the waypoint nearest the vehicle's rear axle (searched ahead
    /// from the last one), reports legs passed and completion, and sets steering and pedals.
    pub fn drive(
        &mut self,
        route: &Route,
        p: &DriverParams,
        vp: &VehicleParams,
        model: &dyn Longitudinal,
        v: &mut VehicleState,
    ) -> Vec<DriverEvent> {
        let mut events = Vec::new();
        let w = &route.waypoints;
        if w.is_empty() {
            return events;
        }
        let last = w.len() - 1;
        let here = [v.x, v.y];
        // Progress: advance while the next waypoint is not farther than the current one
        // (searched at most 50 waypoints ahead, so a route passing near itself is not skipped).
        let mut i = self.progress.min(last);
        let mut best = (dist(here, w[i].xy), i);
        for (j, wj) in w.iter().enumerate().take((i + 50).min(last + 1)).skip(i + 1) {
            let d = dist(here, wj.xy);
            if d < best.0 {
                best = (d, j);
            }
        }
        i = best.1;
        // The progress point lies between i and i + 1 when the vehicle is past waypoint i.
        if i < last {
            let (a, b) = (w[i].xy, w[i + 1].xy);
            let ahead = (here[0] - a[0]) * (b[0] - a[0]) + (here[1] - a[1]) * (b[1] - a[1]);
            if ahead < 0.0 && i > 0 {
                i -= 1;
            }
        }
        self.progress = i;
        // Distance from the front bumper to the route's end: where the driver stops.
        let left = route.length() - w[i].distance - along(w, i, here) - (vp.length - vp.rear_overhang);
        while self.legs_done < route.leg_ends.len() {
            let end = route.leg_ends[self.legs_done];
            let at_end = left <= p.arrive_distance && v.speed <= 0.05;
            if (end < last && i >= end) || (end == last && (at_end || i >= last)) {
                events.push(DriverEvent::Arrived { leg: self.legs_done });
                self.legs_done += 1;
            } else {
                break;
            }
        }
        if !self.complete && self.legs_done >= route.leg_ends.len() && v.speed <= 0.05 {
            self.complete = true;
            events.push(DriverEvent::RouteComplete);
        }
        if self.legs_done >= route.leg_ends.len() {
            v.throttle = 0.0;
            v.brake = 100.0;
            v.steering = 0.0;
            return events;
        }
        // Steering by pure pursuit.
        let look = (p.lookahead_gain * v.speed).clamp(p.lookahead_min, p.lookahead_max.max(p.lookahead_min));
        let mut target = last;
        for (j, wj) in w.iter().enumerate().skip(i) {
            if dist(here, wj.xy) >= look {
                target = j;
                break;
            }
        }
        let (sn, cs) = v.heading.sin_cos();
        let (dx, dy) = (w[target].xy[0] - here[0], w[target].xy[1] - here[1]);
        let (bx, by) = (dx * cs + dy * sn, -dx * sn + dy * cs);
        let d = bx.hypot(by);
        let delta = if d > 1e-6 { (2.0 * vp.wheelbase * (by / d) / d).atan() } else { 0.0 };
        v.steering = (delta / vp.max_steering).clamp(-1.0, 1.0);
        // Speed.
        let left = left.max(0.0);
        let brake_dist = v.speed * v.speed / (2.0 * p.decel.max(0.1)) + look;
        let mut target_speed = p.cruise_speed;
        for wj in w.iter().skip(i) {
            if wj.distance - w[i].distance > brake_dist {
                break;
            }
            if wj.curvature.abs() > 1e-9 {
                target_speed = target_speed.min((p.lateral_accel / wj.curvature.abs()).sqrt());
            }
        }
        let stop_margin = 0.5 * p.arrive_distance;
        target_speed = target_speed.min((2.0 * p.decel * (left - stop_margin).max(0.0)).sqrt());
        let a = (p.speed_gain * (target_speed - v.speed)).clamp(-p.decel.abs() * 2.0, p.accel);
        let (th, b) = model.pedals_for(v.speed, a);
        v.throttle = th;
        v.brake = if target_speed <= 0.0 { 100.0 } else { b };
        events
    }
}

/// How far past waypoint `i` (towards `i + 1`) the point `q` projects, m.
fn along(w: &[Waypoint], i: usize, q: [f64; 2]) -> f64 {
    let (Some(a), Some(b)) = (w.get(i), w.get(i + 1)) else { return 0.0 };
    let (dx, dy) = (b.xy[0] - a.xy[0], b.xy[1] - a.xy[1]);
    let l = dx.hypot(dy);
    if l > 0.0 {
        (((q[0] - a.xy[0]) * dx + (q[1] - a.xy[1]) * dy) / l).clamp(0.0, l)
    } else {
        0.0
    }
}
