//! Actors: prefabs (kinds with sizes) by id, instances by id, their variables, spawning.
//!
//! An actor moves by its speed along its heading: with `acceleration` (m/s², set directly)
//! and, when throttle or brake is set, the scenario's longitudinal model's acceleration added;
//! an actor with neither coasts without drag (a scripted object keeps the speed it is given).
//! Steering turns a car as a kinematic bicycle (wheelbase 0.6 of its length, 0.6 rad at full
//! lock) and anything else at 1 rad/s at full input. Each tick is exact for inputs held (the
//! same step as the ego's).

use crate::surface::RoadSurface;
use crate::vehicle::{arc_sc, constant_step, Longitudinal, SinCos};
use crate::Error;
use serde::{Deserialize, Serialize};

/// What a prefab is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActorKind {
    /// A car.
    Car,
    /// A pedestrian.
    Pedestrian,
    /// A box (a parked obstacle).
    Box,
}

/// A kind of actor and its size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Prefab {
    /// Its id.
    pub id: String,
    /// What it is.
    pub kind: ActorKind,
    /// Length (along its heading), width and height, m.
    pub size: [f64; 3],
}

/// The prefabs every scenario has: `car` (4.5 x 1.8 x 1.5 m), `pedestrian` (0.5 x 0.5 x 1.8 m)
/// and `box` (1 x 1 x 1 m).
pub fn standard_prefabs() -> Vec<Prefab> {
    vec![
        Prefab { id: "car".into(), kind: ActorKind::Car, size: [4.5, 1.8, 1.5] },
        Prefab { id: "pedestrian".into(), kind: ActorKind::Pedestrian, size: [0.5, 0.5, 1.8] },
        Prefab { id: "box".into(), kind: ActorKind::Box, size: [1.0, 1.0, 1.0] },
    ]
}

/// A variable of an actor (or of the ego) that can be set at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Variable {
    /// -1..1, left positive.
    Steering,
    /// Percent.
    Throttle,
    /// Percent.
    Brake,
    /// m/s² (actors only; the ego's longitudinal motion is its model's).
    Acceleration,
    /// m/s, at least 0.
    Speed,
}

/// An actor instance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Actor {
    /// Its id.
    pub id: String,
    /// Its prefab's id.
    pub prefab: String,
    /// Its kind (from the prefab).
    pub kind: ActorKind,
    /// Length, width, height, m.
    pub size: [f64; 3],
    /// Centre in plan, file frame, m.
    pub x: f64,
    /// m.
    pub y: f64,
    /// Bottom (the surface under its centre), m.
    pub z: f64,
    /// rad counter-clockwise from x.
    pub heading: f64,
    /// m/s.
    pub speed: f64,
    /// -1..1.
    pub steering: f64,
    /// Percent.
    pub throttle: f64,
    /// Percent.
    pub brake: f64,
    /// m/s².
    pub acceleration: f64,
    /// Motion imposed by external dynamics; while set, the pedals and steering are not used.
    #[serde(default)]
    pub external: Option<crate::vehicle::External>,
    /// The road's planar (s, t) under it after the last tick, where the next tick's search
    /// for it starts (see `RoadSurface::planar_st_from`; `OFF_ROAD` when it was off the
    /// road); saved with the state so a resumed run asks the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub st_hint: Option<[f64; 2]>,
}

/// Sets a variable; NaN or infinite values are refused.
pub(crate) fn checked(var: Variable, value: f64) -> Result<f64, Error> {
    let (lo, hi, range) = match var {
        Variable::Steering => (-1.0, 1.0, "-1 to 1"),
        Variable::Throttle | Variable::Brake => (0.0, 100.0, "0 to 100 %"),
        Variable::Acceleration => (-100.0, 100.0, "-100 to 100 m/s²"),
        Variable::Speed => (0.0, 200.0, "0 to 200 m/s"),
    };
    if value.is_finite() && value >= lo && value <= hi {
        Ok(value)
    } else {
        Err(Error::Range { what: format!("{var:?}").to_lowercase(), value, range })
    }
}

impl Actor {
    /// Sets `var` to `value` (checked against its range).
    pub fn set(&mut self, var: Variable, value: f64) -> Result<(), Error> {
        let value = checked(var, value)?;
        match var {
            Variable::Steering => self.steering = value,
            Variable::Throttle => self.throttle = value,
            Variable::Brake => self.brake = value,
            Variable::Acceleration => self.acceleration = value,
            Variable::Speed => self.speed = value,
        }
        Ok(())
    }

    /// Velocity in plan, m/s.
    pub fn velocity(&self) -> [f64; 2] {
        let (sn, cs) = self.heading.sin_cos();
        [self.speed * cs, self.speed * sn]
    }

    /// One tick of `dt` s.
    pub fn step(&mut self, model: &dyn Longitudinal, surface: &RoadSurface, dt: f64) {
        self.step_sc(model, surface, dt, &mut SinCos::default());
    }

    /// [`Actor::step`], sines and cosines of the heading kept in `trig`.
    pub(crate) fn step_sc(&mut self, model: &dyn Longitudinal, surface: &RoadSurface, dt: f64, trig: &mut SinCos) {
        if let Some(ext) = self.external {
            let ([x, y], h, v) = ext.advance([self.x, self.y], self.heading, 0.0, dt);
            (self.x, self.y, self.heading, self.speed) = (x, y, h, v);
            let c = surface.contact_from(x, y, self.st_hint);
            self.st_hint = RoadSurface::hint_of(c.as_ref());
            match (c.map(|c| c.z), ext) {
                (Some(z), _) => self.z = z,
                (None, crate::vehicle::External::Pose(p)) => self.z = p[2],
                (None, crate::vehicle::External::Velocity(v)) => self.z += v[2] * dt,
            }
            return;
        }
        let pedals = if self.throttle > 0.0 || self.brake > 0.0 {
            model.acceleration(self.speed, self.throttle, self.brake)
        } else {
            0.0
        };
        let (v1, d) = constant_step(self.speed, self.acceleration + pedals, dt);
        let steer = self.steering.clamp(-1.0, 1.0);
        if self.kind == ActorKind::Car {
            // The bicycle about the centre's projection on the rear axle: the centre moves on
            // the same arc, to the accuracy a scripted actor needs.
            let kappa = (steer * 0.6).tan() / (0.6 * self.size[0]);
            let (dx, dy, h) = arc_sc(self.heading, kappa, d, trig);
            (self.x, self.y, self.heading) = (self.x + dx, self.y + dy, h);
        } else {
            let kappa = if d > 0.0 { steer * dt / d } else { 0.0 };
            let (dx, dy, h) = arc_sc(self.heading, kappa, d, trig);
            (self.x, self.y, self.heading) = (self.x + dx, self.y + dy, h + if d > 0.0 { 0.0 } else { steer * dt });
        }
        self.speed = v1;
        let c = surface.contact_from(self.x, self.y, self.st_hint);
        self.st_hint = RoadSurface::hint_of(c.as_ref());
        if let Some(c) = c {
            self.z = c.z;
        }
    }
}

/// The most actors a simulation holds: contacts are checked pair by pair each tick, and actors
/// on one spot would make a million pairs at a thousand.
pub const MAX_ACTORS: usize = 1000;

/// Where and what to spawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spawn {
    /// The new actor's id.
    pub id: String,
    /// The prefab's id.
    pub prefab: String,
    /// Centre, plan, file frame, m.
    pub x: f64,
    /// m.
    pub y: f64,
    /// rad counter-clockwise from x.
    #[serde(default)]
    pub heading: f64,
    /// m/s.
    #[serde(default)]
    pub speed: f64,
}

/// Prefabs and actors by id, in the order they were added (iteration is deterministic).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Actors {
    /// The prefabs.
    pub prefabs: Vec<Prefab>,
    /// The actors.
    pub actors: Vec<Actor>,
}

impl Actors {
    /// The standard prefabs and `extra` ones (an id used twice is refused).
    pub fn with_prefabs(extra: &[Prefab]) -> Result<Actors, Error> {
        let mut a = Actors { prefabs: standard_prefabs(), actors: Vec::new() };
        for p in extra {
            a.add_prefab(p.clone())?;
        }
        Ok(a)
    }

    /// Adds a prefab; its id must be new and its sizes positive.
    pub fn add_prefab(&mut self, p: Prefab) -> Result<(), Error> {
        if self.prefabs.iter().any(|q| q.id == p.id) {
            return Err(Error::DuplicateId { what: "prefab", id: p.id });
        }
        for v in p.size {
            crate::positive("prefab size", v)?;
        }
        self.prefabs.push(p);
        Ok(())
    }

    /// The actor with id `id`.
    pub fn get(&self, id: &str) -> Option<&Actor> {
        self.actors.iter().find(|a| a.id == id)
    }

    /// The actor with id `id`, to change.
    pub fn get_mut(&mut self, id: &str) -> Result<&mut Actor, Error> {
        self.actors
            .iter_mut()
            .find(|a| a.id == id)
            .ok_or_else(|| Error::UnknownId { what: "actor", id: id.to_string() })
    }

    /// Spawns an actor on the surface (its bottom at the surface under its centre). Refuses a
    /// duplicate id (`reserved` ids, the ego's, too), an unknown prefab and a point off the road.
    pub fn spawn(&mut self, s: &Spawn, surface: &RoadSurface, reserved: &[&str]) -> Result<&Actor, Error> {
        if self.actors.len() >= MAX_ACTORS {
            return Err(Error::Range {
                what: "number of actors".into(),
                value: (self.actors.len() + 1) as f64,
                range: "at most 1,000",
            });
        }
        if reserved.contains(&s.id.as_str()) || self.get(&s.id).is_some() {
            return Err(Error::DuplicateId { what: "actor", id: s.id.clone() });
        }
        let p = self
            .prefabs
            .iter()
            .find(|p| p.id == s.prefab)
            .ok_or_else(|| Error::UnknownId { what: "prefab", id: s.prefab.clone() })?;
        for (what, v) in [("spawn x", s.x), ("spawn y", s.y), ("spawn heading", s.heading)] {
            if !v.is_finite() {
                return Err(Error::Range { what: what.into(), value: v, range: "finite" });
            }
        }
        let speed = checked(Variable::Speed, s.speed)?;
        let c = surface.contact(s.x, s.y).ok_or(Error::OffRoad { x: s.x, y: s.y, reach: surface.reach() })?;
        let actor = Actor {
            id: s.id.clone(),
            prefab: p.id.clone(),
            kind: p.kind,
            size: p.size,
            x: s.x,
            y: s.y,
            z: c.z,
            heading: s.heading,
            speed,
            steering: 0.0,
            throttle: 0.0,
            brake: 0.0,
            acceleration: 0.0,
            external: None,
            st_hint: Some([c.s, c.t]),
        };
        self.actors.push(actor);
        self.actors.last().ok_or_else(|| Error::UnknownId { what: "actor", id: s.id.clone() })
    }
}
