//! The stages that join the crates: survey points into the frame of an OpenDRIVE road
//! (`frame.rs`), and road-surface CRGs gridded from them (`surface.rs`).
//!
//! # Frames
//! Map (x, y, z) in the point cloud's projected CRS; file = the OpenDRIVE file's frame (map
//! minus the header's `<offset>`, rotated by its heading); road (s, t) planar: s along the
//! reference line, t along its horizontal left normal (the placement of a CRG, u = s, v = t);
//! h = height above the OpenDRIVE surface (elevation + t·tan(superelevation)/√(1+grade²)).

pub mod frame;
pub mod surface;

pub use frame::{RoadFrame, Station};
pub use surface::{grid_surface, Estimator, SurfaceBuilder, SurfaceGrid, SurfaceOptions, ZMode};
