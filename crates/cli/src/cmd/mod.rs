//! One module per verb, named after its command: its flags, the call into the `roadscan`
//! library or a format crate, what it prints.

pub mod axis;
pub mod build;
pub mod camera;
pub mod check;
pub mod convert;
pub mod crg;
pub mod crg_eval;
pub mod demo;
pub mod eval;
pub mod info;
pub mod lidar;
pub mod render;
pub mod ribbons;
pub mod sim;
pub mod synth;
pub mod voxel;
pub mod world;
pub mod xodr;
