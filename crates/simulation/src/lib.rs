//! Closed-loop simulation on the surveyed road: an ego vehicle (pluggable longitudinal model,
//! kinematic bicycle, four wheels on the CRG and OpenDRIVE surface), a GPS, an AI driver on a
//! route of lanes, actors by id, collisions as contact reports (with each other, the road's
//! standing objects, and walls: curbs and facades), and a state saved at any tick and resumed
//! with an identical continuation.
//!
//! A [`Simulation`] borrows the world (a [`RoadSurface`]: one OpenDRIVE road and its CRGs) and
//! owns its [`SimState`]; [`Simulation::step`] advances one fixed tick and returns its
//! [`Event`]s. Everything runs on the caller's thread and depends only on the scenario, the
//! world and the state, so the same inputs give the same bits.
//!
//! Frame: the road file's frame (x, y, z, metres; header `<offset>` not applied) for all
//! state; the GPS reports the map frame as well.

#![warn(missing_docs)]

pub mod actors;
pub mod collide;
pub mod driver;
mod error;
pub mod gps;
mod offroad;
pub mod scenario;
mod sim;
mod spiral;
pub mod surface;
pub mod vehicle;
pub mod walls;

pub use actors::{ActorKind, Prefab, Spawn, Variable};
pub use collide::ContactReport;
pub use driver::{Route, RouteLeg};
pub use error::Error;
pub use gps::{GpsFix, ToWgs84};
pub use scenario::Scenario;
pub use sim::{EgoRecord, Event, SimState, Simulation};
pub use surface::RoadSurface;
pub use vehicle::{External, Longitudinal, VehicleParams, VehicleState};
pub use walls::{WallKind, WallLine, Walls};

/// `value` if it is positive and finite.
pub(crate) fn positive(what: &str, value: f64) -> Result<f64, Error> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(Error::Range { what: what.to_string(), value, range: "positive" })
    }
}
