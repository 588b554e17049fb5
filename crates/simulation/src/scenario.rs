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
        }
    }
}
