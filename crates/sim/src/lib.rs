//! Virtual scenes and sensors: designed road scenes with exact ground truth (the built-in demo
//! or any OpenDRIVE road), a profile scanner casting rays against them, and the virtual survey
//! that writes LAS/LAZ, the trajectory and the truth.

mod error;
pub mod noise;
pub mod scene;
pub mod truth;

pub use error::Error;
pub use scene::{Clutter, Drape, Material, ObjectKind, Scene, SceneObject, Station, Zone};
pub mod scanner;
pub mod survey;
