//! Poses and paths: where a sensor is, and which way it looks, at a time.

use crate::geom::{add, cross, dot, scale, unit, V3};
use opendrive::RoadEval;

/// A rigid pose: a position and the unit axes of a body frame (x forward, y left, z up) in the
/// world's frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    /// Position, m.
    pub position: V3,
    /// The body's x (forward), y (left) and z (up) axes in the world.
    pub axes: [V3; 3],
}

impl Pose {
    /// The world's own frame at the origin.
    pub const IDENTITY: Pose = Pose { position: [0.0; 3], axes: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]] };

    /// A pose from a position and yaw (about z, from x towards y), pitch (nose up positive) and
    /// roll (right side down positive), radians, applied yaw first.
    pub fn from_ypr(position: V3, yaw: f64, pitch: f64, roll: f64) -> Pose {
        let (sy, cy) = yaw.sin_cos();
        let (sp, cp) = pitch.sin_cos();
        let (sr, cr) = roll.sin_cos();
        let x = [cy * cp, sy * cp, sp];
        // y: the left axis yawed, then turned about x by the roll.
        let y0 = [-sy, cy, 0.0];
        let z0 = cross(x, y0);
        let y = add(scale(y0, cr), scale(z0, sr));
        let z = cross(x, y);
        Pose { position, axes: [x, unit(y), unit(z)] }
    }
    /// A point given in the body frame, in the world.
    pub fn point(&self, p: V3) -> V3 {
        add(self.position, self.direction(p))
    }
    /// A direction given in the body frame, in the world.
    pub fn direction(&self, d: V3) -> V3 {
        let [x, y, z] = self.axes;
        [
            x[0] * d[0] + y[0] * d[1] + z[0] * d[2],
            x[1] * d[0] + y[1] * d[1] + z[1] * d[2],
            x[2] * d[0] + y[2] * d[1] + z[2] * d[2],
        ]
    }
    /// A world direction in the body frame.
    pub fn to_body(&self, d: V3) -> V3 {
        [dot(self.axes[0], d), dot(self.axes[1], d), dot(self.axes[2], d)]
    }
    /// `local` (a pose in this body's frame, such as a sensor's mount) in the world.
    pub fn then(&self, local: &Pose) -> Pose {
        Pose { position: self.point(local.position), axes: local.axes.map(|a| self.direction(a)) }
    }
    /// Heading of the forward axis, rad counter-clockwise from x.
    pub fn yaw(&self) -> f64 {
        self.axes[0][1].atan2(self.axes[0][0])
    }
}

/// Where something is over time.
pub trait Trajectory: Sync {
    /// The pose at time `t`, s.
    fn pose(&self, t: f64) -> Pose;
    /// The times it covers, s.
    fn span(&self) -> (f64, f64);
}

/// Driving along the centre of a lane of an OpenDRIVE road at a constant speed: right lanes
/// (negative ids) with s, left lanes against it; the body stands on the road's surface, its axes
/// the road frame's (forward along the 3-D tangent, left rolled by the superelevation).
#[derive(Debug)]
pub struct LanePath<'a> {
    road: RoadEval<'a>,
    lane: i32,
    start: f64,
    speed: f64,
    duration: f64,
}

/// Why a lane path cannot be driven.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PathError {
    /// A lane the road does not have at the start.
    #[error("road {road} has no lane {lane} at s = {s} m (lanes there: {have:?})")]
    NoLane {
        /// The road's id.
        road: String,
        /// The lane asked for.
        lane: i32,
        /// The start station.
        s: f64,
        /// The lanes it has.
        have: Vec<i32>,
    },
    /// A speed, start or duration that is not a positive finite number or leaves the road.
    #[error("{what} {value} is out of range ({range})")]
    Range {
        /// What.
        what: &'static str,
        /// The value.
        value: f64,
        /// The range it must lie in.
        range: String,
    },
}

impl<'a> LanePath<'a> {
    /// Lane `lane` of `road` from station `start` (m) at `speed` (m/s) for `duration` (s);
    /// the drive must stay on the road.
    pub fn new(
        road: RoadEval<'a>,
        lane: i32,
        start: f64,
        speed: f64,
        duration: f64,
    ) -> Result<LanePath<'a>, PathError> {
        let len = road.length();
        let range = |what, value: f64, lo: f64, hi: f64| {
            if value.is_finite() && value >= lo && value <= hi {
                Ok(())
            } else {
                Err(PathError::Range { what, value, range: format!("{lo} to {hi}") })
            }
        };
        range("speed (m/s)", speed, 0.0, 100.0)?;
        range("start (m)", start, 0.0, len)?;
        range("duration (s)", duration, 0.0, 1e6)?;
        let have: Vec<i32> = road.lane_borders(start).iter().map(|b| b.0).collect();
        if lane == 0 || !have.contains(&lane) {
            return Err(PathError::NoLane { road: road.road().id.clone(), lane, s: start, have });
        }
        let end = start + if lane < 0 { speed * duration } else { -speed * duration };
        range("end of the drive (m)", end, 0.0, len)?;
        Ok(LanePath { road, lane, start, speed, duration })
    }

    /// The station at time `t`.
    pub fn s_at(&self, t: f64) -> f64 {
        let s = self.start + self.dir() * self.speed * t.clamp(0.0, self.duration);
        s.clamp(0.0, self.road.length())
    }
    fn dir(&self) -> f64 {
        if self.lane < 0 {
            1.0
        } else {
            -1.0
        }
    }
    /// The lane centre's t at station `s` (midway between its borders).
    pub fn centre_t(&self, s: f64) -> f64 {
        let borders = self.road.lane_borders(s);
        let outer = borders.iter().find(|b| b.0 == self.lane).map(|b| b.1);
        let inner_id = self.lane - self.lane.signum();
        let inner = if inner_id == 0 {
            Some(self.road.lane_offset(s))
        } else {
            borders.iter().find(|b| b.0 == inner_id).map(|b| b.1)
        };
        match (inner, outer) {
            (Some(a), Some(b)) => 0.5 * (a + b),
            _ => self.road.lane_offset(s),
        }
    }
    /// The road it drives on.
    pub fn road(&self) -> &RoadEval<'a> {
        &self.road
    }
}

impl Trajectory for LanePath<'_> {
    fn pose(&self, t: f64) -> Pose {
        let s = self.s_at(t);
        let f = self.road.frame(s, self.centre_t(s), 0.0);
        let d = self.dir();
        Pose { position: f.position, axes: [scale(f.e_s, d), scale(f.e_t, d), f.e_h] }
    }
    fn span(&self) -> (f64, f64) {
        (0.0, self.duration)
    }
}
