//! Point clouds: LAS/LAZ input and output, CRS, trajectories.
//!
//! [`LasReader::open`] opens a LAS 1.0-1.4 or LAZ file (point formats 0-10), checks its header
//! against the file and gives the [`Header`] and its [`Crs`]; [`LasReader::read`] then streams
//! the points in column chunks ([`Points`]), and [`summarize`] makes one pass for statistics.
//! [`LasWriter`] (or [`write_las`] for points in memory) writes LAS 1.4 / LAZ point format 6
//! with the CRS as an OGC WKT VLR, atomically. [`CrsDef`] and [`Reprojection`] reproject
//! between CRSs given by EPSG code or PROJ string (pure Rust; the C PROJ library with the
//! feature `proj`). [`axis`] reads the sources of a road axis: polylines (CSV, GeoJSON),
//! vehicle trajectories and OpenStreetMap ways. Reading and writing errors are an [`Error`]
//! naming the file and the byte, line or point index.
//!
//! Frames and units: points are map coordinates in the file's CRS, de-scaled to `f64` in the
//! file's unit (metres, or the feet [`Crs::unit`] gives); a [`LasPoint`] is written in the CRS
//! of [`LasOptions::wkt`], quantised by [`LasOptions::scale`]. Scan angles are in degrees, GPS
//! times in seconds. Axis vertices are in the source's CRS (lon/lat degrees for GeoJSON and
//! OSM).

#![warn(missing_docs)]

pub mod axis;
mod crs;
mod read;
mod write;

pub use crs::{recognise_wkt, CrsDef, Reprojection, WktCrs, US_FOOT};
pub use read::{summarize, Crs, Density, Header, IntensityStats, LasReader, Points, Summary, DENSITY_CELLS};
pub use write::{write_las, ExtraField, ExtraType, LasOptions, LasPoint, LasWriter};

/// OGC WKT of EPSG:23700, HD72 / EOV (Hungary), the virtual survey's CRS.
pub const EOV_WKT: &str = r#"PROJCS["HD72 / EOV",GEOGCS["HD72",DATUM["Hungarian_Datum_1972",SPHEROID["GRS 1967",6378160,298.247167427,AUTHORITY["EPSG","7036"]],TOWGS84[52.17,-71.82,-14.9,0,0,0,0],AUTHORITY["EPSG","6237"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AUTHORITY["EPSG","4237"]],PROJECTION["Hotine_Oblique_Mercator_Azimuth_Center"],PARAMETER["latitude_of_center",47.1443937222222],PARAMETER["longitude_of_center",19.0485717777778],PARAMETER["azimuth",90],PARAMETER["rectified_grid_angle",90],PARAMETER["scale_factor",0.99993],PARAMETER["false_easting",650000],PARAMETER["false_northing",200000],UNIT["metre",1,AUTHORITY["EPSG","9001"]],AXIS["Easting",EAST],AXIS["Northing",NORTH],AUTHORITY["EPSG","23700"]]"#;

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
    /// The file is not a LAS/LAZ file we can read; `byte` is where in the file, when known.
    #[error("{path}{}: {message}", byte.map_or(String::new(), |b| format!(": byte {b}")))]
    Format {
        /// The file.
        path: std::path::PathBuf,
        /// Byte offset of the bad field.
        byte: Option<u64>,
        /// What is wrong.
        message: String,
    },
    /// A text file (CSV, JSON, XML) has a bad line.
    #[error("{path}:{line}: {message}")]
    Text {
        /// The file.
        path: std::path::PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
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
