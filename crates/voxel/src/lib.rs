//! The roadside as voxels and as depth ribbons.
//!
//! - [`VoxelGrid`]: a sparse grid of cubes, axis-aligned in a local map frame (map x, y, z
//!   minus a stored origin), filled from streamed points: per voxel the point count, summed
//!   intensity and colour, and the class counts (majority class).
//! - [`Mesh`]: the grid's exposed faces with shared corner vertices, written as OBJ + MTL
//!   ([`write_obj`]) or binary glTF ([`write_glb`]).
//! - [`Ribbon`]: an orthogonal depth image of one side of a road, over (s, h), each pixel the
//!   nearest |t| of anything on that side, with the intensity (and colour) of that nearest
//!   point; written as 16-bit PNG, 32-bit float TIFF and a street view ([`ribbon`]).
//!
//! The crate knows nothing of OpenDRIVE, LAS or CRGs: callers give points in the local frame
//! (voxels) or in road coordinates (ribbons).

#![warn(missing_docs)]

mod grid;
mod io;
pub use io::write_atomic;
mod mesh;
pub mod part;
pub use part::PartError;
pub mod ribbon;

pub use grid::{Lattice, Voxel, VoxelGrid, VoxelKey};
pub use mesh::{write_csv, write_glb, write_obj, Colouring, Mesh, MeshStats, Palette};
pub use ribbon::{Ribbon, Side};

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing a file. The cause is part of the message, not a separate source,
    /// so the one-line error (`{:#}`) does not repeat it.
    #[error("{path}: {cause}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The cause.
        cause: std::io::Error,
    },
    /// A bad parameter or a point outside what the grid can index.
    #[error("{0}")]
    Invalid(String),
}
