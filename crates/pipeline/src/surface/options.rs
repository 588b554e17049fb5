//! Settings of the gridding: what the CRG's z holds ([`ZMode`]), the estimator ([`Estimator`]), the
//! algorithm's options ([`SurfaceOptions`]) and their defaults, where candidates are kept
//! ([`SurfaceStorage`]), which share of the work a builder does ([`SurfaceScope`], a work unit's
//! share of a distributed build: [`SurfaceUnit`]), what a unit's first pass saw ([`Seen`]), and the
//! least coverage a grid must have.

/// What the CRG's z holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ZMode {
    /// Absolute heights in the OpenDRIVE file frame (map z minus the header `<offset>` z), like
    /// x and y of the grid's reference line: the grid holds them above a datum kept in
    /// REFERENCE_LINE_START_Z (the road's elevation at the grid's start, to the metre).
    Absolute,
    /// Height above the OpenDRIVE surface (elevation and superelevation), for
    /// `<surface><CRG mode="attached">`.
    Residual,
}

/// How a node's height is estimated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Estimator {
    /// Locally weighted plane fits, least squares or robust, and the median of the nearest
    /// points where a node's disc is not smooth (the default).
    Robust,
    /// Median of the points in the cell (the baseline).
    Median,
    /// Per node, a locally weighted least-squares quadratic surface of the points within
    /// `radius` + one cell, its height at the node (the median of the six nearest points where
    /// it is singular or leaves the points' heights). No curvature bias: on the measured setts
    /// of `tests/surface_real.rs` (belgian_block.crg, 2 mm noise) 0.92 mm RMS against 1.23 mm
    /// for `Robust` and 1.28 mm for `Median`. Slower than `Robust` (a fit per node, no shared
    /// block planes) and not robust to outliers and steps; not yet the default (see roadscan
    /// issue 23).
    Quadratic,
}

/// Settings of the gridding algorithm: they decide the grid's heights (where the candidates are
/// kept, [`SurfaceStorage`], and which share of the work a builder does, [`SurfaceScope`], do
/// not).
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceOptions {
    /// Cell size (du = dv), m.
    pub cell: f64,
    /// Grid extent across, (right, left), m; `None`: the road's outermost lane borders.
    pub v_range: Option<(f64, f64)>,
    /// Grid extent along, m; `None`: the s extent of the surface points found.
    pub s_range: Option<(f64, f64)>,
    /// Absolute or residual heights.
    pub z: ZMode,
    /// Longest along-track gap filled by interpolation, m.
    pub max_gap: f64,
    /// Radius of the points pooled for a node, m.
    pub radius: f64,
    /// Tukey biweight constant, m.
    pub robust_scale: f64,
    /// Points farther from the road surface (the OpenDRIVE surface, or the surface found in
    /// the points where that is off: see [`SurfaceOptions::search_height`]) are not surface, m.
    pub max_height: f64,
    /// How far from the OpenDRIVE surface the road surface is searched for, m: points within
    /// it are kept aside (besides those within `max_height`), and where the lowest dense layer
    /// of the points near the reference line lies more than a third of `max_height` off the
    /// OpenDRIVE surface (an axis without elevation, or with a wrong one), the band of
    /// `max_height` follows that layer instead. 0: no search (only `max_height` counts).
    pub search_height: f64,
    /// A grid with fewer of its surveyed nodes covered (see [`SurfaceGrid::coverage`](super::grid::SurfaceGrid::coverage)) is an
    /// error ([`LowCoverage`](super::grid::LowCoverage)) of `finish` and `write_tiles` (not of a work unit's tiles); 0:
    /// none.
    pub min_coverage: f64,
    /// Thickness of the kept low envelope, m: points up to this (plus twice the coarse cell's
    /// median less its 10th percentile, up to another `layer`) above the 10th percentile of
    /// their coarse cell are kept.
    pub layer: f64,
    /// Estimator.
    pub estimator: Estimator,
}

/// Where a builder keeps its candidates: in memory up to `spill_after`, then appended to files
/// by slab in a directory of its own below `spill_dir`, removed when the builder is done.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceStorage {
    /// Where candidates are spilled when more than `spill_after` are held (default: the
    /// system's temporary directory).
    pub spill_dir: Option<std::path::PathBuf>,
    /// Candidates held in memory before spilling, 12 bytes each.
    pub spill_after: usize,
}

impl Default for SurfaceStorage {
    fn default() -> Self {
        SurfaceStorage { spill_dir: None, spill_after: 1_000_000 }
    }
}

/// Which share of the work a builder does (default: all of it, on a road frame of the whole
/// reference line).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SurfaceScope {
    /// A work unit of a distributed build (None: the whole grid).
    pub unit: Option<SurfaceUnit>,
    /// The points' map-frame box [min x, min y, max x, max y] where known (e.g. from LAS
    /// headers): the road frame then tabulates only the part of the reference line near it,
    /// so a long road costs what the survey covers. Points outside it may be missed.
    pub points_box: Option<[f64; 4]>,
}

/// A work unit's share of the gridding. Units of a build split the work so that, added up,
/// they give exactly what one builder of all the points gives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SurfaceUnit {
    /// The first pass: count the candidates with s in `a <= s < b` and their s extent
    /// ([`SurfaceBuilder::seen`](super::builder::SurfaceBuilder::seen)), keep none. The grid's extent is the union of the units'.
    Count(f64, f64),
    /// Grid and write tiles `first..end` of `tile` metres only ([`SurfaceBuilder::write_tiles`](super::builder::SurfaceBuilder::write_tiles)),
    /// keeping only the candidates that reach them; needs [`SurfaceOptions::s_range`] (the whole grid's extent,
    /// from the first pass). Its report counts only its own rows.
    Tiles {
        /// Tile length, m.
        tile: f64,
        /// First tile.
        first: usize,
        /// One past the last tile.
        end: usize,
    },
}

/// What a builder saw of the points: a unit's first pass.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Seen {
    /// Points offered.
    pub offered: u64,
    /// Candidates (near the surface) counted.
    pub near: u64,
    /// Their s extent, m (None: none).
    pub s_range: Option<(f64, f64)>,
}

impl Default for SurfaceOptions {
    fn default() -> Self {
        SurfaceOptions {
            cell: 0.01,
            v_range: None,
            s_range: None,
            z: ZMode::Absolute,
            max_gap: 0.1,
            radius: 0.025,
            robust_scale: 0.008,
            max_height: 0.3,
            search_height: f64::INFINITY,
            min_coverage: MIN_COVERAGE,
            layer: 0.04,
            estimator: Estimator::Robust,
        }
    }
}

/// Below this share of its surveyed nodes with a height, a grid is an error (by default, see
/// [`SurfaceOptions::min_coverage`]).
pub const MIN_COVERAGE: f64 = 0.1;

/// A column of a grid (nodes along u at one v) is reached by the survey when at least this
/// share of its nodes has a height; the surveyed pavement is the columns from the first to the
/// last one reached (holes between count): columns beyond it (beyond the scanner's range, the
/// other side of a one-sided road, a grid wider than the road) do not count, and columns
/// reached at a few spots only (poles, cars) do not widen it. A wall standing in the band of
/// the surface does: a grid whose only full columns are facades either side is nearly empty.
pub const SURVEYED_COLUMN: f64 = 0.1;
