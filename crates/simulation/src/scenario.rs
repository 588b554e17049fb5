//! A scenario: every key has a default, so an empty file (or `Scenario::default()`) runs.

use crate::actors::{Prefab, Spawn, Variable};
use crate::driver::DriverParams;
use crate::gps::GpsConfig;
use crate::vehicle::{ModelConfig, VehicleParams};
use serde::{Deserialize, Serialize};

/// Where the ego starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EgoStart {
    /// The ego's id (no actor may take it).
    pub id: String,
    /// Rear axle, plan, file frame, m (with `y`; else the route's start, else `lane` at `s`).
    pub x: Option<f64>,
    /// m.
    pub y: Option<f64>,
    /// rad counter-clockwise from x (default: along the route or the lane, else the road).
    pub heading: Option<f64>,
    /// Station of the start on `lane`, m (when no position and no route is given).
    pub s: f64,
    /// Lane of the start (when no position and no route is given).
    pub lane: i32,
    /// Initial speed, m/s.
    pub speed: f64,
}

impl Default for EgoStart {
    fn default() -> Self {
        EgoStart { id: "ego".into(), x: None, y: None, heading: None, s: 0.0, lane: -1, speed: 0.0 }
    }
}

/// A variable set at a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Command {
    /// When, s (applied at the first tick starting at or after it).
    pub time: f64,
    /// Whose (the ego's id or an actor's).
    #[serde(default = "ego_id")]
    pub target: String,
    /// Which variable.
    pub variable: Variable,
    /// Its value.
    pub value: f64,
}

fn ego_id() -> String {
    "ego".into()
}

fn yes() -> bool {
    true
}

/// A scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Scenario {
    /// Tick length, s.
    pub tick: f64,
    /// Length of the run, s.
    pub duration: f64,
    /// The ego's sizes.
    pub vehicle: VehicleParams,
    /// The ego's longitudinal model.
    pub model: ModelConfig,
    /// The ego's start.
    pub ego: EgoStart,
    /// The route (`lane:ID` legs); empty: the ego follows the script only.
    pub route: Vec<String>,
    /// The AI driver's settings.
    pub driver: DriverParams,
    /// Variables set at times.
    pub script: Vec<Command>,
    /// Prefabs beyond the standard `car`, `pedestrian` and `box`.
    pub prefabs: Vec<Prefab>,
    /// Actors spawned at time 0.
    pub actors: Vec<Spawn>,
    /// The GPS.
    pub gps: GpsConfig,
    /// Whether the road's standing objects are collision boxes.
    #[serde(default = "yes")]
    pub scene_objects: bool,
    /// Whether walls (the road's curbs and continuous objects, the world's facades and
    /// roadside) are obstacles.
    #[serde(default = "yes")]
    pub walls: bool,
}

impl Default for Scenario {
    fn default() -> Self {
        Scenario {
            tick: 0.01,
            duration: 20.0,
            vehicle: VehicleParams::default(),
            model: ModelConfig::default(),
            ego: EgoStart::default(),
            route: Vec::new(),
            driver: DriverParams::default(),
            script: Vec::new(),
            prefabs: Vec::new(),
            actors: Vec::new(),
            gps: GpsConfig::default(),
            scene_objects: true,
            walls: true,
        }
    }
}

/// Whether two numbers are the same (NaN the same as NaN).
fn same(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

impl Scenario {
    /// The key (a dotted path with array indices, `actors[2].prefab`) that `e`, an error of
    /// [`crate::Simulation::new`] for this scenario, is about; `None` when it cannot be told.
    pub fn key_of(&self, e: &crate::Error) -> Option<String> {
        use crate::Error;
        let actor = |f: &dyn Fn(&crate::actors::Spawn) -> bool, key: &str| {
            self.actors.iter().position(f).map(|i| format!("actors[{i}]{key}"))
        };
        match e {
            Error::DuplicateId { what: "actor", id } => {
                let mut at = self.actors.iter().enumerate().filter(|(_, a)| &a.id == id).map(|(i, _)| i);
                let first = at.next();
                let i = if *id == self.ego.id { first } else { at.next().or(first) };
                i.map(|i| format!("actors[{i}].id"))
            }
            Error::DuplicateId { what: "prefab", id } => {
                let mut at = self.prefabs.iter().enumerate().filter(|(_, p)| &p.id == id).map(|(i, _)| i);
                let first = at.next();
                at.next().or(first).map(|i| format!("prefabs[{i}].id"))
            }
            Error::UnknownId { what: "prefab", id } => actor(&|a| &a.prefab == id, ".prefab"),
            Error::UnknownId { what: "actor", id } => {
                self.script.iter().position(|c| &c.target == id).map(|i| format!("script[{i}].target"))
            }
            Error::OffRoad { x, y, .. } => {
                actor(&|a| same(a.x, *x) && same(a.y, *y), "").or_else(|| Some("ego".into()))
            }
            Error::Route { .. } => Some("route".into()),
            Error::NoLane { .. } => Some(if self.route.is_empty() { "ego.lane" } else { "route" }.into()),
            Error::Range { what, value, .. } => {
                let w = what.as_str();
                match w {
                    "tick" | "duration" => Some(w.into()),
                    "wheelbase" | "track" | "length" | "width" | "height" | "max_steering" | "rear_overhang" => {
                        Some(format!("vehicle.{w}"))
                    }
                    "ego s" => Some("ego.s".into()),
                    "waypoint spacing" => Some("driver.spacing".into()),
                    "prefab size" => self
                        .prefabs
                        .iter()
                        .position(|p| p.size.iter().any(|s| same(*s, *value)))
                        .map(|i| format!("prefabs[{i}].size")),
                    "script time" => {
                        self.script.iter().position(|c| same(c.time, *value)).map(|i| format!("script[{i}].time"))
                    }
                    "spawn x" => actor(&|a| same(a.x, *value), ".x"),
                    "spawn y" => actor(&|a| same(a.y, *value), ".y"),
                    "spawn heading" => actor(&|a| same(a.heading, *value), ".heading"),
                    "ego x" | "ego y" | "ego heading" => Some(w.replacen(' ', ".", 1)),
                    // A variable's range: the ego's speed is checked first, then the actors', then the script's.
                    _ => (w == "speed" && same(self.ego.speed, *value))
                        .then(|| "ego.speed".to_string())
                        .or_else(|| actor(&|a| w == "speed" && same(a.speed, *value), ".speed"))
                        .or_else(|| {
                            self.script.iter().position(|c| same(c.value, *value)).map(|i| format!("script[{i}].value"))
                        }),
                }
            }
            _ => None,
        }
    }
}

impl Scenario {
    /// The numbers [`crate::Simulation::new`] does not check itself: every driver, model and
    /// GPS number finite, and those that are sizes, speeds, rates or noise 0 or more. The
    /// error names the key (`gps.sigma_xy`).
    pub fn check_numbers(&self) -> Result<(), crate::Error> {
        let d = &self.driver;
        let m = &self.model;
        let g = &self.gps;
        let non_negative: [(&str, f64); 16] = [
            ("driver.cruise_speed", d.cruise_speed),
            ("driver.lateral_accel", d.lateral_accel),
            ("driver.decel", d.decel),
            ("driver.accel", d.accel),
            ("driver.speed_gain", d.speed_gain),
            ("driver.lookahead_gain", d.lookahead_gain),
            ("driver.lookahead_min", d.lookahead_min),
            ("driver.lookahead_max", d.lookahead_max),
            ("driver.arrive_distance", d.arrive_distance),
            ("model.throttle", m.throttle),
            ("model.brake", m.brake),
            ("model.k", m.k),
            ("gps.rate", g.rate),
            ("gps.sigma_xy", g.sigma_xy),
            ("gps.sigma_z", g.sigma_z),
            ("gps.sigma_speed", g.sigma_speed),
        ];
        for (what, value) in non_negative {
            if !(value.is_finite() && value >= 0.0) {
                return Err(crate::Error::Range { what: what.into(), value, range: "finite, 0 or more" });
            }
        }
        // A route has a waypoint every `spacing` m: below a centimetre the waypoints of a long
        // road run into millions and the route takes longer to build than to drive.
        if d.spacing.is_finite() && d.spacing > 0.0 && d.spacing < 0.01 {
            return Err(crate::Error::Range {
                what: "driver.spacing".into(),
                value: d.spacing,
                range: "0.01 m or more",
            });
        }
        let finite = [
            ("model.drag", m.drag),
            ("gps.utc_start", g.utc_start),
            ("gps.antenna[0]", g.antenna[0]),
            ("gps.antenna[1]", g.antenna[1]),
            ("gps.antenna[2]", g.antenna[2]),
        ];
        for (what, value) in finite {
            if !value.is_finite() {
                return Err(crate::Error::Range { what: what.into(), value, range: "finite" });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A NaN or negative driver, model or GPS number is refused by its key; the defaults pass.
    #[test]
    fn numbers_the_simulation_does_not_check_are_checked_by_key() {
        assert_eq!(Scenario::default().check_numbers(), Ok(()));
        let mut s = Scenario::default();
        s.gps.sigma_xy = -1.0;
        assert!(s.check_numbers().is_err_and(|e| e.to_string().contains("gps.sigma_xy")));
        let mut s = Scenario::default();
        s.driver.cruise_speed = f64::NAN;
        assert!(s.check_numbers().is_err_and(|e| e.to_string().contains("driver.cruise_speed")));
        let mut s = Scenario::default();
        s.model.drag = f64::INFINITY;
        assert!(s.check_numbers().is_err_and(|e| e.to_string().contains("model.drag")));
        let mut s = Scenario::default();
        s.driver.spacing = 1e-12;
        assert!(s.check_numbers().is_err_and(|e| e.to_string().contains("driver.spacing")));
    }
}
