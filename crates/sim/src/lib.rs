//! Virtual scenes and sensors: designed road scenes with exact ground truth (the built-in demo
//! or any OpenDRIVE road), a profile scanner casting rays against them, and the virtual survey
//! that writes LAS/LAZ, the trajectory and the truth.
//!
//! [`Scene::demo`] and [`Scene::from_road`] design a scene (surface with texture, potholes,
//! manholes, curbs, markings; roadside objects; [`Scene::add_clutter`] for what real surveys
//! meet), a deterministic function of its seed. [`scanner::scan`] casts one pass of a profile
//! scanner against it; [`survey::Survey`] describes passes, and [`survey::run`] writes a whole
//! survey (points, `trajectory.csv`, `survey.json`) with the truth ([`truth::surface_crg`] and
//! the scene's OpenDRIVE road). [`network::Network`] makes every road of a file a scene and
//! [`network::run`] surveys them all at once, each road's truth beside the others'. Frames: the scene and its surface live in the road frame
//! (s, t, h) of the scene's OpenDRIVE road, `h` above its surface; scanner points are in that
//! road's file frame (x, y, z), and the survey's files add the header `<offset>` to give map
//! coordinates in EOV (EPSG:23700). Units are metres, radians and seconds; `survey.json` gives
//! angles in degrees.

#![warn(missing_docs)]

mod error;
pub mod network;
pub mod noise;
pub mod scene;
pub mod truth;

pub use error::Error;
pub use scene::{Clutter, Drape, Material, ObjectKind, Scene, SceneObject, Station, Zone};
pub mod scanner;
pub mod survey;
