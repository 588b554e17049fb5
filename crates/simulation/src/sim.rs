//! The simulation: a fixed tick, events, the state saved and resumed.
//!
//! One [`Simulation::step`] goes from tick k to k + 1:
//! 1. script commands due at the tick's start (time ≤ k dt) set their variables;
//! 2. with a route, the driver looks at the state at tick k (its events carry tick k) and sets
//!    the ego's steering and pedals;
//! 3. the ego and the actors move over the tick with their inputs held (exact steps);
//! 4. bodies overlapping at tick k + 1 that did not at tick k give one contact report each,
//!    and so does a moving body touching a wall line ([`crate::walls`]) it did not touch;
//! 5. the GPS gives a fix when k + 1 is a multiple of its period.
//!
//! Time is `tick × dt` (never a running sum), so a resumed run has the same times.

use crate::actors::{checked, ActorKind, Actors, Spawn, Variable};
use crate::collide::{contact_point, scene_bodies, Body, ContactReport, Sweep};
use crate::driver::{lane_centre_t, DriverEvent, DriverState, Route, RouteLeg};
use crate::gps::{normal, GpsFix, GpsState, ToWgs84};
use crate::scenario::Scenario;
use crate::surface::RoadSurface;
use crate::vehicle::{External, Longitudinal, SinCos, VehicleState};
use crate::walls::{curb_walls, object_walls, WallHit, WallKind, WallLine, Walls};
use crate::Error;
use opendrive::model::HeaderOffset;
use serde::{Deserialize, Serialize};

/// Everything that changes during a run; saved and loaded whole (every f64 to the bit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimState {
    /// Ticks run.
    pub tick: u64,
    /// The ego.
    pub ego: VehicleState,
    /// The driver's progress.
    pub driver: DriverState,
    /// Prefabs and actors.
    pub actors: Actors,
    /// Pairs of ids in contact at this tick (bodies, and a body and a wall line), sorted.
    pub contacts: Vec<[String; 2]>,
    /// The GPS's memory.
    pub gps: GpsState,
    /// The next script command to apply.
    pub script_next: usize,
}

/// Something that happened in a tick.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Two bodies started to touch.
    Collision(ContactReport),
    /// The end of a route leg was passed.
    Arrived {
        /// Tick.
        tick: u64,
        /// s.
        time: f64,
        /// The leg's index.
        leg: usize,
    },
    /// The route is complete (the ego at rest at its end).
    RouteComplete {
        /// Tick.
        tick: u64,
        /// s.
        time: f64,
    },
    /// A GPS fix.
    Gps(GpsFix),
}

/// The ego at a tick, as the CSV log wants it (`time,x,y,z,roll,pitch,heading,speed,s,t,lane`),
/// map frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EgoRecord {
    /// s.
    pub time: f64,
    /// Body centre (between the axles, at the heave height), map frame, m.
    pub position: [f64; 3],
    /// Right side down positive, rad.
    pub roll: f64,
    /// Nose up positive, rad.
    pub pitch: f64,
    /// rad counter-clockwise from the map's x.
    pub heading: f64,
    /// m/s.
    pub speed: f64,
    /// Planar road s and t of the centre, m (`None` off the road).
    pub st: Option<[f64; 2]>,
    /// The lane the centre is in (`None` off the lanes).
    pub lane: Option<i32>,
}

/// A run of a scenario on a road surface.
pub struct Simulation<'a> {
    surface: &'a RoadSurface<'a>,
    scenario: Scenario,
    model: Box<dyn Longitudinal>,
    route: Option<Route>,
    statics: Vec<Body>,
    /// The moving bodies of the last tick, refreshed in place (their ids copied only when the
    /// actors change); not state.
    moving: Vec<Body>,
    /// The moving bodies' headings' (sin, cos), with `moving`; not state.
    moving_sc: Vec<(f64, f64)>,
    /// The contact sweep's order and the standing bodies' intervals; not state.
    sweep: Sweep,
    /// The ego's (first) and each actor's last heading's sine and cosine; not state.
    trig: Vec<SinCos>,
    walls: Walls,
    offset: HeaderOffset,
    wgs84: Option<Box<dyn ToWgs84 + 'a>>,
    script: Vec<crate::scenario::Command>,
    state: SimState,
}

impl std::fmt::Debug for Simulation<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulation")
            .field("scenario", &self.scenario)
            .field("model", &self.model)
            .field("offset", &self.offset)
            .field("wgs84", &self.wgs84.is_some())
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl<'a> Simulation<'a> {
    /// Sets up `scenario` on `surface`: its values checked, the route built, the ego placed and
    /// the actors spawned (duplicate ids, unknown prefabs and points off the road refused).
    pub fn new(surface: &'a RoadSurface<'a>, scenario: Scenario) -> Result<Simulation<'a>, Error> {
        crate::positive("tick", scenario.tick)?;
        if !(scenario.duration.is_finite() && scenario.duration >= 0.0) {
            return Err(Error::Range { what: "duration".into(), value: scenario.duration, range: "0 or more" });
        }
        scenario.vehicle.check()?;
        let legs = scenario.route.iter().map(|l| l.parse::<RouteLeg>()).collect::<Result<Vec<_>, _>>()?;
        let route =
            if legs.is_empty() { None } else { Some(Route::new(surface.road(), &legs, scenario.driver.spacing)?) };
        let ego = place_ego(surface, &scenario, route.as_ref())?;
        let mut actors = Actors::with_prefabs(&scenario.prefabs)?;
        for s in &scenario.actors {
            actors.spawn(s, surface, &[scenario.ego.id.as_str()])?;
        }
        for c in &scenario.script {
            checked(c.variable, c.value)?;
            if !c.time.is_finite() {
                return Err(Error::Range { what: "script time".into(), value: c.time, range: "finite" });
            }
            if c.target != scenario.ego.id && actors.get(&c.target).is_none() {
                return Err(Error::UnknownId { what: "actor", id: c.target.clone() });
            }
        }
        let mut script = scenario.script.clone();
        script.sort_by(|a, b| a.time.total_cmp(&b.time));
        let statics = if scenario.scene_objects { scene_bodies(surface) } else { Vec::new() };
        let walls = if scenario.walls {
            let mut lines = curb_walls(surface);
            lines.extend(object_walls(surface));
            Walls::new(lines)
        } else {
            Walls::default()
        };
        let model = scenario.model.build();
        let sweep = Sweep::new(&statics);
        let mut sim = Simulation {
            surface,
            scenario,
            model,
            route,
            statics,
            moving: Vec::new(),
            moving_sc: Vec::new(),
            sweep,
            trig: Vec::new(),
            walls,
            offset: HeaderOffset::default(),
            wgs84: None,
            script,
            state: SimState {
                tick: 0,
                ego,
                driver: DriverState::default(),
                actors,
                contacts: Vec::new(),
                gps: GpsState::default(),
                script_next: 0,
            },
        };
        sim.state.contacts = sim.contacts_now();
        sim.state.gps.last = Some(sim.antenna());
        Ok(sim)
    }

    /// Adds walls the world knows beyond the road's curbs and continuous objects (a designed
    /// scene's facades, a build's roadside); none
    /// when the scenario's `walls` is off. Call it before the first tick: the contacts at the
    /// start are taken again.
    pub fn with_walls(mut self, lines: Vec<WallLine>) -> Simulation<'a> {
        if self.scenario.walls && !lines.is_empty() {
            let mut all = self.walls.lines().to_vec();
            all.extend(lines);
            self.walls = Walls::new(all);
            self.state.contacts = self.contacts_now();
        }
        self
    }

    /// Replaces the ego's longitudinal model (the scenario's otherwise).
    pub fn with_model(mut self, model: Box<dyn Longitudinal>) -> Simulation<'a> {
        self.model = model;
        self
    }

    /// The road file's header `<offset>`: map = offset + R(hdg) file.
    pub fn with_offset(mut self, offset: HeaderOffset) -> Simulation<'a> {
        self.offset = offset;
        self
    }

    /// The map -> WGS84 conversion of the map's geoReference, for the GPS.
    pub fn with_wgs84(mut self, convert: impl ToWgs84 + 'a) -> Simulation<'a> {
        self.wgs84 = Some(Box::new(convert));
        self
    }

    /// Tick length, s.
    pub fn dt(&self) -> f64 {
        self.scenario.tick
    }

    /// Ticks run.
    pub fn tick(&self) -> u64 {
        self.state.tick
    }

    /// Time, s.
    pub fn time(&self) -> f64 {
        self.state.tick as f64 * self.scenario.tick
    }

    /// Whether the scenario's duration has been run.
    pub fn finished(&self) -> bool {
        self.time() >= self.scenario.duration - 1e-9 * self.scenario.tick
    }

    /// The state.
    pub fn state(&self) -> &SimState {
        &self.state
    }

    /// The scenario.
    pub fn scenario(&self) -> &Scenario {
        &self.scenario
    }

    /// The route, when the scenario has one.
    pub fn route(&self) -> Option<&Route> {
        self.route.as_ref()
    }

    /// The ego.
    pub fn ego(&self) -> &VehicleState {
        &self.state.ego
    }

    /// The road's standing objects as collision boxes.
    pub fn scene_bodies(&self) -> &[Body] {
        &self.statics
    }

    /// The walls (curbs and facades).
    pub fn walls(&self) -> &Walls {
        &self.walls
    }

    /// The state as JSON (numbers in the shortest form that reads back to the same bits).
    pub fn save(&self) -> Result<String, Error> {
        serde_json::to_string(&self.state).map_err(|e| Error::State(e.to_string()))
    }

    /// Continues from a state [`Simulation::save`] wrote (for this scenario and world).
    pub fn resume(&mut self, saved: &str) -> Result<(), Error> {
        let state: SimState = serde_json::from_str(saved).map_err(|e| Error::State(e.to_string()))?;
        if state.actors.actors.len() > crate::actors::MAX_ACTORS {
            return Err(Error::State(format!(
                "{} actors (at most {})",
                state.actors.actors.len(),
                crate::actors::MAX_ACTORS
            )));
        }
        if state.script_next > self.script.len() {
            return Err(Error::State(format!(
                "script position {} past the script's {} commands",
                state.script_next,
                self.script.len()
            )));
        }
        self.state = state;
        Ok(())
    }

    /// Sets a variable of the ego or of an actor.
    pub fn set(&mut self, id: &str, var: Variable, value: f64) -> Result<(), Error> {
        if id == self.scenario.ego.id {
            let value = checked(var, value)?;
            let e = &mut self.state.ego;
            match var {
                Variable::Steering => e.steering = value,
                Variable::Throttle => e.throttle = value,
                Variable::Brake => e.brake = value,
                Variable::Speed => e.speed = value,
                Variable::Acceleration => {
                    let (th, b) = self.model.pedals_for(e.speed, value);
                    (e.throttle, e.brake) = (th, b);
                }
            }
            Ok(())
        } else {
            self.state.actors.get_mut(id)?.set(var, value)
        }
    }

    /// Imposes motion from external dynamics on the ego or an actor (None hands it back to its
    /// model, the ego's to its driver too).
    pub fn impose(&mut self, id: &str, motion: Option<External>) -> Result<(), Error> {
        let motion = motion.map(External::checked).transpose()?;
        if id == self.scenario.ego.id {
            self.state.ego.external = motion;
        } else {
            self.state.actors.get_mut(id)?.external = motion;
        }
        Ok(())
    }

    /// Spawns an actor now.
    pub fn spawn(&mut self, s: &Spawn) -> Result<(), Error> {
        let ego = self.scenario.ego.id.clone();
        self.state.actors.spawn(s, self.surface, &[ego.as_str()]).map(|_| ())
    }

    /// Runs ticks until the duration is reached, returning every event.
    pub fn run(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        while !self.finished() {
            out.extend(self.step());
        }
        out
    }

    /// One tick (see the module).
    pub fn step(&mut self) -> Vec<Event> {
        let dt = self.scenario.tick;
        let k = self.state.tick;
        let start = k as f64 * dt;
        let mut events = Vec::new();
        // 1. The script.
        while let Some(c) = self.script.get(self.state.script_next) {
            if c.time > start + 1e-9 * dt {
                break;
            }
            let (target, var, value) = (c.target.clone(), c.variable, c.value);
            self.state.script_next += 1;
            // Checked at setup; an actor the script names exists from the start.
            let _ = self.set(&target, var, value);
        }
        // 2. The driver (not while external dynamics move the ego).
        if let Some(route) = self.route.as_ref().filter(|_| self.state.ego.external.is_none()) {
            let ev = self.state.driver.drive(
                route,
                &self.scenario.driver,
                &self.scenario.vehicle,
                self.model.as_ref(),
                &mut self.state.ego,
            );
            for e in ev {
                events.push(match e {
                    DriverEvent::Arrived { leg } => Event::Arrived { tick: k, time: start, leg },
                    DriverEvent::RouteComplete => Event::RouteComplete { tick: k, time: start },
                });
            }
        }
        // 3. Motion.
        self.state.ego.step(&self.scenario.vehicle, self.model.as_ref(), self.surface, dt);
        let mut trig = std::mem::take(&mut self.trig);
        trig.resize(1 + self.state.actors.actors.len(), SinCos::default());
        for (a, sc) in self.state.actors.actors.iter_mut().zip(&mut trig[1..]) {
            a.step_sc(self.model.as_ref(), self.surface, dt, sc);
        }
        self.state.tick = k + 1;
        let time = self.time();
        // 4. Contacts that start now.
        let (mut bodies, mut sc) = (std::mem::take(&mut self.moving), std::mem::take(&mut self.moving_sc));
        self.moving_bodies_into(&mut bodies, &mut trig, &mut sc);
        let mut sweep = std::mem::take(&mut self.sweep);
        let now = sweep.touching_pairs(&bodies, &self.statics);
        self.sweep = sweep;
        let walls = self.wall_contacts(&bodies, &sc);
        for (a, b) in &now {
            let key = [a.clone(), b.clone()];
            if self.state.contacts.contains(&key) {
                continue;
            }
            let find = |id: &String| bodies.iter().chain(&self.statics).find(|x| &x.id == id);
            let (Some(ba), Some(bb)) = (find(a), find(b)) else {
                continue;
            };
            let p = contact_point(ba, bb);
            let dv = [ba.velocity[0] - bb.velocity[0], ba.velocity[1] - bb.velocity[1]];
            events.push(Event::Collision(ContactReport {
                tick: k + 1,
                time,
                ids: key,
                position: [p[0], p[1], ba.z[0].max(bb.z[0])],
                relative_speed: dv[0].hypot(dv[1]),
            }));
        }
        for (key, hit, speed) in &walls {
            if self.state.contacts.contains(key) {
                continue;
            }
            events.push(Event::Collision(ContactReport {
                tick: k + 1,
                time,
                ids: key.clone(),
                position: hit.position,
                relative_speed: *speed,
            }));
        }
        let mut contacts: Vec<[String; 2]> = now.into_iter().map(|(a, b)| [a, b]).collect();
        contacts.extend(walls.into_iter().map(|(key, ..)| key));
        contacts.sort();
        self.state.contacts = contacts;
        (self.moving, self.moving_sc) = (bodies, sc);
        // 5. The GPS.
        let antenna = self.antenna_sc(trig[0].of(self.state.ego.heading));
        self.trig = trig;
        let last = self.state.gps.last.unwrap_or(antenna);
        self.state.gps.last = Some(antenna);
        let g = &self.scenario.gps;
        if g.enabled && (k + 1).is_multiple_of(g.period_ticks(dt)) {
            let d = ((antenna[0] - last[0]).powi(2) + (antenna[1] - last[1]).powi(2) + (antenna[2] - last[2]).powi(2))
                .sqrt();
            let n = |c: u32| normal(g.seed, k + 1, c);
            let file = [antenna[0] + g.sigma_xy * n(0), antenna[1] + g.sigma_xy * n(1), antenna[2] + g.sigma_z * n(2)];
            let map = self.offset.placement().to_map(file);
            events.push(Event::Gps(GpsFix {
                time,
                utc: g.utc_start + time,
                file,
                map,
                wgs84: self.wgs84.as_ref().and_then(|w| w.to_wgs84(map)),
                speed: (d / dt + g.sigma_speed * n(3)).max(0.0),
                heading: self.state.ego.heading + self.offset.hdg,
            }));
        }
        events
    }

    /// The GPS antenna's true position, file frame.
    fn antenna(&self) -> [f64; 3] {
        self.antenna_sc(self.state.ego.heading.sin_cos())
    }

    /// [`Simulation::antenna`] with the ego heading's (sin, cos) given.
    fn antenna_sc(&self, (sn, cs): (f64, f64)) -> [f64; 3] {
        let e = &self.state.ego;
        let a = self.scenario.gps.antenna;
        [e.x + a[0] * cs - a[1] * sn, e.y + a[0] * sn + a[1] * cs, e.z + a[2]]
    }

    /// The ego's, the actors' and the scene's bodies.
    pub fn bodies(&self) -> Vec<Body> {
        let mut out = self.moving_bodies();
        out.extend(self.statics.iter().cloned());
        out
    }

    /// The ego's and the actors' bodies (the scene's stand still and are not copied a tick).
    fn moving_bodies(&self) -> Vec<Body> {
        let mut out = Vec::new();
        self.moving_bodies_into(&mut out, &mut Vec::new(), &mut Vec::new());
        out
    }

    /// [`Simulation::moving_bodies`] written over `out`, whose ids are kept where they match,
    /// and their headings' (sin, cos) over `sc`; the sines and cosines kept in `trig` (the
    /// ego's first, then the actors').
    fn moving_bodies_into(&self, out: &mut Vec<Body>, trig: &mut Vec<SinCos>, sc: &mut Vec<(f64, f64)>) {
        let e = &self.state.ego;
        let p = &self.scenario.vehicle;
        let n = 1 + self.state.actors.actors.len();
        trig.resize(n, SinCos::default());
        sc.clear();
        let (sn, cs) = trig[0].of(e.heading);
        sc.push((sn, cs));
        let ego = (
            &self.scenario.ego.id,
            e.centre(p),
            e.heading,
            [0.5 * p.length, 0.5 * p.width],
            [e.z, e.z + p.height],
            [e.speed * cs, e.speed * sn],
        );
        let actors = self.state.actors.actors.iter().zip(&mut trig[1..]).map(|(a, t)| {
            // As `Actor::velocity`.
            let (sn, cs) = t.of(a.heading);
            sc.push((sn, cs));
            let velocity = [a.speed * cs, a.speed * sn];
            (&a.id, [a.x, a.y], a.heading, [0.5 * a.size[0], 0.5 * a.size[1]], [a.z, a.z + a.size[2]], velocity)
        });
        out.truncate(n);
        for (k, (id, centre, heading, half, z, velocity)) in std::iter::once(ego).chain(actors).enumerate() {
            match out.get_mut(k) {
                Some(b) => {
                    if &b.id != id {
                        b.id.clone_from(id);
                    }
                    (b.centre, b.heading, b.half, b.z, b.velocity) = (centre, heading, half, z, velocity);
                }
                None => out.push(Body { id: id.clone(), centre, heading, half, z, velocity }),
            }
        }
    }

    /// Every pair in contact now, sorted (as the state keeps them).
    fn contacts_now(&self) -> Vec<[String; 2]> {
        let bodies = self.moving_bodies();
        let mut out: Vec<[String; 2]> = self.touching_of(&bodies).into_iter().map(|(a, b)| [a, b]).collect();
        let sc: Vec<(f64, f64)> = bodies.iter().map(|b| b.heading.sin_cos()).collect();
        out.extend(self.wall_contacts(&bodies, &sc).into_iter().map(|(key, ..)| key));
        out.sort();
        out
    }

    /// The wall lines each moving body touches: ([body, wall], where, the body's speed), in
    /// order of the bodies and the lines. Curbs do not stop pedestrians. `sc`: the bodies'
    /// headings' (sin, cos).
    fn wall_contacts(&self, bodies: &[Body], sc: &[(f64, f64)]) -> Vec<([String; 2], WallHit, f64)> {
        let mut out = Vec::new();
        if self.walls.is_empty() {
            return out;
        }
        let actors = &self.state.actors.actors;
        let mut hits = Vec::new();
        for (i, (b, &sc)) in bodies.iter().zip(sc).take(1 + actors.len()).enumerate() {
            let walker = i > 0 && actors.get(i - 1).is_some_and(|a| a.kind == ActorKind::Pedestrian);
            self.walls.touching_sc(b, sc, |k| !(walker && k == WallKind::Curb), &mut hits);
            for h in &hits {
                let id = self.walls.lines()[h.line].id.clone();
                out.push(([b.id.clone(), id], *h, b.velocity[0].hypot(b.velocity[1])));
            }
        }
        out
    }

    /// Pairs of bodies that overlap, a moving body (of `moving`) with a later moving one or a
    /// standing one, sorted.
    fn touching_of(&self, moving: &[Body]) -> Vec<(String, String)> {
        crate::collide::touching_pairs(moving, &self.statics)
    }

    /// The ego now, for the CSV log.
    pub fn ego_record(&self) -> EgoRecord {
        let e = &self.state.ego;
        let pose = e.pose(&self.scenario.vehicle);
        let c = pose.position;
        let contact = self.surface.contact(c[0], c[1]);
        let st = contact.map(|c| [c.s, c.t]);
        let lane = contact.and_then(|c| lane_at(self.surface, c.s, c.t));
        EgoRecord {
            time: self.time(),
            position: self.offset.placement().to_map(c),
            roll: e.roll,
            pitch: e.pitch,
            heading: e.heading + self.offset.hdg,
            speed: e.speed,
            st,
            lane,
        }
    }
}

/// The lane whose borders hold planar t at s.
fn lane_at(surface: &RoadSurface, s: f64, t: f64) -> Option<i32> {
    let road = surface.road();
    let borders = road.lane_borders(s);
    let offset = road.lane_offset(s);
    borders.iter().find_map(|&(id, outer)| {
        let inner_id = id - id.signum();
        let inner = if inner_id == 0 { offset } else { borders.iter().find(|b| b.0 == inner_id)?.1 };
        (t >= inner.min(outer) && t <= inner.max(outer)).then_some(id)
    })
}

/// The ego's start: the scenario's position, else the route's start, else its lane at s.
fn place_ego(surface: &RoadSurface, sc: &Scenario, route: Option<&Route>) -> Result<VehicleState, Error> {
    let e = &sc.ego;
    let road = surface.road();
    let (x, y, heading) = match (e.x, e.y, route) {
        (Some(x), Some(y), _) => {
            let h = match e.heading {
                Some(h) => h,
                None => {
                    let (s, _) = surface.planar_st(x, y).ok_or(Error::OffRoad { x, y, reach: surface.reach() })?;
                    road.pose(s).hdg
                }
            };
            (x, y, h)
        }
        (_, _, Some(r)) => match (r.waypoints.first(), r.waypoints.get(1)) {
            (Some(a), Some(b)) => (a.xy[0], a.xy[1], e.heading.unwrap_or((b.xy[1] - a.xy[1]).atan2(b.xy[0] - a.xy[0]))),
            _ => return Err(Error::Route { leg: format!("{:?}", sc.route), why: "no waypoints".into() }),
        },
        _ => {
            let s = e.s;
            if !(s.is_finite() && s >= 0.0 && s <= road.length()) {
                return Err(Error::Range { what: "ego s".into(), value: s, range: "on the road" });
            }
            let t = lane_centre_t(road, e.lane, s).ok_or_else(|| Error::NoLane {
                road: road.road().id.clone(),
                lane: e.lane,
                s,
            })?;
            let p = road.sth_to_xyz(s, t, 0.0);
            let h = road.pose(s).hdg + if e.lane > 0 { std::f64::consts::PI } else { 0.0 };
            (p[0], p[1], e.heading.unwrap_or(h))
        }
    };
    for (what, v) in [("ego x", x), ("ego y", y), ("ego heading", heading)] {
        if !v.is_finite() {
            return Err(Error::Range { what: what.into(), value: v, range: "finite" });
        }
    }
    let speed = checked(Variable::Speed, e.speed)?;
    surface.height(x, y).ok_or(Error::OffRoad { x, y, reach: surface.reach() })?;
    Ok(VehicleState::at(&sc.vehicle, surface, x, y, heading, speed))
}
