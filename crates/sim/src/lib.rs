//! Virtual scenes and sensors: designed road scenes with exact ground truth, the input of the
//! virtual survey. The scanner, the ray caster and the LAS output are still to come (issue 4).

pub mod noise;
pub mod scene;
pub mod truth;

pub use scene::{Material, ObjectKind, Scene, SceneObject, Station, Zone};
pub mod scanner;
pub mod survey;
