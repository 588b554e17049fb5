//! What can go wrong building a scene or running a survey ([`Error`]): each variant carries the
//! bad value and where it was; the message is the one line a user reads.

use crate::scene::MAX_LATERAL;
use std::path::PathBuf;

/// An error of [`Scene::from_road`](crate::Scene::from_road),
/// [`Drape::from_crg`](crate::Drape::from_crg) or [`survey::run`](crate::survey::run).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No road of that id in the file; `roads` holds the first 20 ids there are.
    #[error("no road with id '{id}' (roads: {})", .roads.join(", "))]
    NoRoad {
        /// The id asked for.
        id: String,
        /// Ids of the file's roads (at most 20).
        roads: Vec<String>,
    },
    /// An s range not within the road or shorter than 10 m.
    #[error("s range {}..{} m: must lie within the road's 0..{length} m and span at least 10 m", .s_range.0, .s_range.1)]
    BadRange {
        /// The range asked for, m.
        s_range: (f64, f64),
        /// The road's length, m.
        length: f64,
    },
    /// A road of a network survey shorter than [`MIN_NETWORK_ROAD`](crate::scene::MIN_NETWORK_ROAD).
    #[error(
        "the road is {length} m long: a network survey needs roads of at least {} m",
        crate::scene::MIN_NETWORK_ROAD
    )]
    ShortRoad {
        /// The road's length, m.
        length: f64,
    },
    /// A file without roads to survey.
    #[error("the file holds no roads")]
    NoRoads,
    /// More passes than LAS point source ids (65535).
    #[error("{passes} passes: a survey numbers at most 65535 (the LAS point source id)")]
    TooManyPasses {
        /// Passes planned.
        passes: usize,
    },
    /// A network survey plan whose passes and roads do not match the network.
    #[error("a network survey plan of {passes} passes names the roads {roads:?} of a network of {scenes} roads")]
    PlanRoads {
        /// Passes planned.
        passes: usize,
        /// The road (scene index) of each pass.
        roads: Vec<usize>,
        /// Roads in the network.
        scenes: usize,
    },
    /// An error of one road of a network.
    #[error("road {id}: {source}")]
    InRoad {
        /// The road's id.
        id: String,
        /// What went wrong there.
        source: Box<Error>,
    },
    /// A lane offset more than [`MAX_LATERAL`] from the reference line (or not finite).
    #[error("at s = {s:.3} m the lane offset is {} m: more than {MAX_LATERAL} m from the reference line", metres(*.offset))]
    LaneOffsetFar {
        /// Station, m.
        s: f64,
        /// The lane offset there, m.
        offset: f64,
    },
    /// A lane border more than [`MAX_LATERAL`] from the reference line (or not finite).
    #[error(
        "lane {lane} at s = {s:.3} m: its outer border at t = {} m is more than {MAX_LATERAL} m from the reference line",
        metres(*.t)
    )]
    LaneTooFar {
        /// Lane id.
        lane: i32,
        /// Station, m.
        s: f64,
        /// Its outer border's t, m.
        t: f64,
    },
    /// A lane of negative width.
    #[error(
        "lane {lane} at s = {s:.3} m is {width:.4} m wide: a lane's width must not be negative (its outer border would lie inside its inner one)"
    )]
    NegativeWidth {
        /// Lane id.
        lane: i32,
        /// Station, m.
        s: f64,
        /// Its width, m.
        width: f64,
    },
    /// A CRG to drape with fewer heights than nodes.
    #[error("the grid holds {heights} heights for {nu} x {nv} nodes")]
    DrapeHeights {
        /// Heights in the grid.
        heights: usize,
        /// Rows.
        nu: usize,
        /// Columns.
        nv: usize,
    },
    /// A CRG to drape whose node spacing is not positive, m.
    #[error("node spacing {du} x {dv} m: must be positive")]
    DrapeSpacing {
        /// Along u.
        du: f64,
        /// Across.
        dv: f64,
    },
    /// A CRG to drape with fewer than two rows or complete columns.
    #[error("{rows} rows and {cols} complete columns: a drape needs at least two of each")]
    DrapeTooSmall {
        /// Rows.
        rows: usize,
        /// Columns without a missing node.
        cols: usize,
    },
    /// Creating a directory or writing a text file of the survey failed.
    #[error("{}: {error}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// Writing the scan failed.
    #[error(transparent)]
    Scan(#[from] scan::Error),
    /// Writing the road's OpenDRIVE file failed.
    #[error(transparent)]
    OpenDrive(#[from] opendrive::Error),
    /// Writing the true surface's CRG failed.
    #[error(transparent)]
    Crg(#[from] opencrg::Error),
}

/// A length for a message: millimetres, or the exponent form when it is huge.
pub(crate) fn metres(x: f64) -> String {
    if x.abs() < 1e9 {
        format!("{x:.3}")
    } else {
        format!("{x:e}")
    }
}
