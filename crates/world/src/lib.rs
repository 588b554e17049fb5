//! A world to ray-cast: the surveyed road surface at full CRG detail, the roadside and objects
//! as triangle meshes, each hit with a material, a class and an object id.
//!
//! A [`World`] holds parts ([`Part`]): [`Heightfield`]s (an OpenCRG grid laid on an OpenDRIVE
//! road, cast as the grid's own triangles through a tree of exact bounds, never expanded into
//! a triangle list) and [`TriMesh`]es (a binned-SAH [`Bvh`] over triangles). A top-level BVH
//! over the parts' bounds finds the nearest [`Hit`] of a [`Ray`]; [`World::cast_packet`] casts
//! up to [`LANES`] rays together (a camera's tile), each with the hit it would get alone.
//!
//! Frame: one right-handed Cartesian frame in metres for everything in a world, x east, y
//! north, z up; a world made from a build uses the road file's frame (map minus the header's
//! `<offset>`). Rays carry a time for moving actors; static parts ignore it.
//!
//! Invariants: a cast never panics (NaN rays and empty worlds give no hit); the nearest hit is
//! the same for any order of parts; building is deterministic (same input, same tree).

#![warn(missing_docs)]

mod bvh;
mod error;
mod geom;
mod heightfield;
mod material;
mod mesh;
mod packet;
mod path;
mod world;

pub use bvh::Bvh;
pub use error::Error;
pub use geom::{Aabb, Hit, Ray, V3};
pub use heightfield::{CrgLink, Heightfield, HeightfieldStats, PaintBands};
pub use material::{Material, MaterialId, MaterialTable, Tag};
pub use mesh::TriMesh;
pub use packet::LANES;
pub use path::{LanePath, PathError, Pose, Trajectory};
pub use world::{Cast, Part, World};
