//! The stages that join the crates: survey points into the frame of an OpenDRIVE road
//! (`frame.rs`), road-surface CRGs gridded from them (`surface/`), and the roadside as voxels
//! and depth ribbons (`roadside.rs`).
//!
//! # Frames
//! Map (x, y, z) in the point cloud's projected CRS; file = the OpenDRIVE file's frame (map
//! minus the header's `<offset>`, rotated by its heading); road (s, t) planar: s along the
//! reference line, t along its horizontal left normal (the placement of a CRG, u = s, v = t);
//! h = height above the OpenDRIVE surface (elevation + t·tan(superelevation)/√(1+grade²)).

#![warn(missing_docs)]

pub mod axis;
pub mod drive_path;
mod error;
pub mod frame;
pub mod network;
mod par;
pub mod registration;
pub mod road;
pub mod roadside;
pub mod section;
pub mod surface;
pub mod traces;

pub use error::Error;
pub use frame::{RoadFrame, Station};
pub use roadside::{
    PointColumns, RibbonOptions, Roadside, RoadsideBuilder, RoadsideOptions, RoadsidePoints, SurfaceDatum,
};
pub use surface::{
    grid_surface, CoverageMap, Estimator, SurfaceBuilder, SurfaceGrid, SurfaceOptions, SurfaceScope, SurfaceStorage,
    ZMode,
};
