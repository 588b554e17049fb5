//! What can go wrong in the pipeline's stages ([`Error`]): each variant carries the bad value
//! and where it was, so a caller can match it; the message is the one line a user reads.

use crate::frame::FrameError;
use crate::surface::LowCoverage;
use std::path::PathBuf;
use voxel::PartError;

/// An error of a pipeline stage. The messages name the value and the place; errors of other
/// crates that are part of a message are not also its source (a one-line `{:#}` would repeat
/// them).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An option out of its range: `name` (as the message names it) is `value`, which `why`.
    #[error("{name} {value}: {why}")]
    BadOption {
        /// The option.
        name: &'static str,
        /// Its value.
        value: f64,
        /// What it must be.
        why: &'static str,
    },
    /// Cross-section cells that are not all positive, m.
    #[error("cross sections: cells {ds} x {dt} m over ±{half_width} m: all must be positive")]
    BadSections {
        /// Cell length along s.
        ds: f64,
        /// Cell width across.
        dt: f64,
        /// Half the width covered.
        half_width: f64,
    },
    /// Cross sections of more cells than memory should hold.
    #[error("cross sections: {rows} x {cols} cells is too many; use larger cells or an s range")]
    SectionsTooLarge {
        /// Rows along s.
        rows: usize,
        /// Cells across.
        cols: usize,
    },
    /// An s range that does not lie within the road.
    #[error("s range {}..{}: road {road} is {length} m long", .s_range.0, .s_range.1)]
    OutsideRoad {
        /// The s range asked for, m.
        s_range: (f64, f64),
        /// The road's id.
        road: String,
        /// The road's length, m.
        length: f64,
    },
    /// A road to retarget a surface to that does not lie within the road the points were
    /// collected on, from s `shift`.
    #[error("road {road} ({length} m) from s {shift} does not lie within road {within} ({within_length} m)")]
    NotWithin {
        /// The road retargeted to.
        road: String,
        /// Its length, m.
        length: f64,
        /// Where it starts on the collecting road, m.
        shift: f64,
        /// The collecting road.
        within: String,
        /// Its length, m.
        within_length: f64,
    },
    /// A road to retarget a surface to whose reference line leaves the collecting road's.
    #[error("road {road} does not share the reference line of road {of} (at s {s:.1}, its s {its_s:.1})")]
    OtherReferenceLine {
        /// The road retargeted to.
        road: String,
        /// The collecting road.
        of: String,
        /// Where, in `road`'s s, m.
        s: f64,
        /// Where, in the collecting road's s, m.
        its_s: f64,
    },
    /// A grid width (right, left) that lies outside the width collected, m.
    #[error("the grid's width {want:?} lies outside the width collected {have:?}")]
    WidthOutside {
        /// The width asked for.
        want: (f64, f64),
        /// The width collected.
        have: (f64, f64),
    },
    /// No candidate near the road surface, so no extent for the grid.
    #[error(
        "no road-surface points within the grid (check the axis, the road id and the CRS; points count within crg's --max-height, 0.3 m by default, of the axis' elevation and superelevation)"
    )]
    NoSurfacePoints,
    /// A grid that lies outside the part of the road it is clipped to, m of s.
    #[error("the grid over s {}..{} lies outside the road's part s {}..{}", .s_range.0, .s_range.1, .part.0, .part.1)]
    GridOutsidePart {
        /// The grid's s range.
        s_range: (f64, f64),
        /// The part's.
        part: (f64, f64),
    },
    /// A grid of fewer than two nodes along or across.
    #[error("a grid of {nu} x {nv} nodes: the s range {}..{} or the width is too small", .s_range.0, .s_range.1)]
    GridTooSmall {
        /// Nodes along u.
        nu: usize,
        /// Nodes across.
        nv: usize,
        /// The grid's s range, m.
        s_range: (f64, f64),
    },
    /// A grid too many nodes wide (a wrong width or cell).
    #[error("a grid {nv} nodes wide: check --width-left/--width-right and --cell")]
    GridTooWide {
        /// Nodes across.
        nv: usize,
    },
    /// Tiles asked of another length than the work unit's.
    #[error("tiles of {tile} m for a unit of tiles of {unit_tile} m")]
    TileMismatch {
        /// The tile length asked for, m.
        tile: f64,
        /// The unit's, m.
        unit_tile: f64,
    },
    /// Gridded rows that do not follow the rows written (a defect).
    #[error("gridded rows {rows:?}, expected from {expected}")]
    RowsOutOfOrder {
        /// The rows gridded.
        rows: (usize, usize),
        /// The first row expected.
        expected: usize,
    },
    /// A grid that came out nearly empty.
    #[error(transparent)]
    LowCoverage(#[from] LowCoverage),
    /// No cross section holds a level surface near the reference line.
    #[error(
        "no road surface in the points: none of {rows} cross sections holds a level surface near the reference line ({steep} too steep): check the axis, the road id and the CRS"
    )]
    NoRoadSurface {
        /// Cross sections.
        rows: usize,
        /// Those too steep to be a road.
        steep: usize,
    },
    /// A roadside that cannot be cut to an s range (already cut, or no overlap).
    #[error("cannot cut the roadside of s {s_range:?} to s {}..{}", .to.0, .to.1)]
    CannotCut {
        /// The roadside's s range, m.
        s_range: (f64, f64),
        /// The range asked for, m.
        to: (f64, f64),
    },
    /// A written road that does not read back.
    #[error("the written road does not read back: {error}")]
    ReadBack {
        /// Why.
        error: opendrive::Error,
    },
    /// A written OpenDRIVE file without a road.
    #[error("the written file has no road")]
    ReadBackNoRoad,
    /// A written road whose record reads back elsewhere than it was fitted.
    #[error("the record at s = {s} reads back {distance} m away")]
    ReadBackAway {
        /// The record's start, m.
        s: f64,
        /// How far from where it was fitted, m.
        distance: f64,
    },
    /// A point a voxel grid cannot place: `index` in the chunk offered (the caller names it
    /// in its file).
    #[error("point {index} of the chunk: {error}")]
    Point {
        /// The point's index in the chunk.
        index: usize,
        /// Why.
        error: voxel::Error,
    },
    /// Bytes that are not a roadside part of this version.
    #[error("not a roadside part (or of another roadscan version)")]
    NotAPart,
    /// A roadside part whose `what` (voxels, a ribbon, cross sections) does not read; the
    /// error's offset is within the part's body, `at` the offset in the part's bytes where
    /// reading stopped.
    #[error("byte {at}: {error}")]
    Part {
        /// The grid.
        what: &'static str,
        /// Where reading stopped, from the part's first byte.
        at: usize,
        /// Why.
        error: PartError,
    },
    /// A roadside part's own fields (counts, products, trailing bytes) that do not read;
    /// offsets within the part's body.
    #[error(transparent)]
    PartBody(#[from] PartError),
    /// A thread that panicked, e.g. "the voxel thread".
    #[error("{which} failed")]
    Thread {
        /// The thread.
        which: &'static str,
    },
    /// A thread that stopped taking work (its error comes first when it has one).
    #[error("{which} stopped")]
    ThreadStopped {
        /// The thread.
        which: &'static str,
    },
    /// A thread that could not be started.
    #[error("cannot start {which}: {error}")]
    ThreadStart {
        /// The thread.
        which: &'static str,
        /// Why.
        error: std::io::Error,
    },
    /// Spilling candidates to disk (or reading them back) failed.
    #[error("{}: {error}", .path.display())]
    Spill {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A call the API does not allow in this state (e.g. `finish` of a work unit).
    #[error("{0}")]
    Usage(&'static str),
    /// The road frame cannot be built.
    #[error(transparent)]
    Frame(#[from] FrameError),
    /// A voxel grid or ribbon refused its settings or points.
    #[error(transparent)]
    Voxel(#[from] voxel::Error),
    /// Writing a CRG failed.
    #[error(transparent)]
    Crg(#[from] opencrg::Error),
}
