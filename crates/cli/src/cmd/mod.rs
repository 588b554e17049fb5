//! One module per verb that runs the `roadscan` library: its flags, the call, what it prints.

pub mod axis;
pub mod build;
pub mod crg;
pub mod demo;
pub mod ribbons;
pub mod synth;
pub mod voxel;
pub mod xodr;
