//! Point clouds: LAS/LAZ input and output, CRS, trajectories. So far: writing LAS 1.4 / LAZ
//! point format 6 with a WKT CRS (the virtual survey's output); the streaming reader comes
//! with the ingest issue.

mod write;

pub use write::{write_las, LasOptions, LasPoint, LasWriter};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// What failed.
        message: String,
    },
    /// A point cannot be stored (e.g. outside the range of the scaled integers).
    #[error("{path}: point {index}: {message}")]
    Point {
        /// The file.
        path: std::path::PathBuf,
        /// Index of the point.
        index: usize,
        /// What failed.
        message: String,
    },
}
