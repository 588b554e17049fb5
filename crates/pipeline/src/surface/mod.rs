//! Road-surface CRGs from survey points: select the surface points, estimate every cell of a
//! regular (u = s, v = t) grid robustly, fill short along-track gaps, and write the grid on the
//! road's reference line.
//!
//! # Selection
//! Points farther than `max_height` (0.3 m) from the OpenDRIVE surface are dropped (cars,
//! people, poles, foliage, facades). Of the rest, in coarse cells of 0.2 m along by 0.05 m
//! across (whole grid cells, along from each 2 m slab's first row and across from the grid's
//! first column, so a slab's own rows lie in whole cells; points off the grid's columns reach
//! no node and are dropped first), only points at most `layer` (0.04 m) above the cell's
//! 10th-percentile height stay: a low envelope that keeps curbs and sidewalks (their coarse
//! cells are all up) and drops what stands on the surface. On a rough surface the layer grows
//! by twice the cell's median less its 10th percentile, up to another `layer`: measured setts
//! (tests/surface_real.rs, belgian_block.crg) rise up to 6.5 cm above a coarse cell's 10th
//! percentile, and a fixed 4 cm cut the crowns of 3 % of their points (the quadratic
//! estimator's RMS 1.24 mm with the cut, 0.91 mm without); on asphalt (2 mm noise) it adds
//! about 5 mm. It runs on the points already sorted by node, so one counting sort serves both.
//!
//! # The road surface where the axis' elevation is missing or off
//! The band of `max_height` is around the road surface, which is the OpenDRIVE surface unless
//! the points say otherwise: while the points stream, each 2 m slab counts the heights (above
//! the OpenDRIVE surface) of its candidates within 2 m of the reference line in 5 cm bins, and
//! keeps the candidates beyond `max_height` but within `search_height` (default: any) aside.
//! Before gridding, each slab's lowest dense layer (a bin whose three hold at least a quarter
//! of the densest three's heights: multipath below is sparser, a car roof may be denser), the
//! median of those of the five slabs around it, gives the road surface's height, linear
//! between the slabs' middles. Where it lies within a third of `max_height` of the OpenDRIVE
//! surface it is taken as zero, and a slab (with its neighbours) at zero grids its near
//! candidates only, as without a search: the same bits. Elsewhere the slab grids the near
//! and far candidates within `max_height` of the road surface found, and an absolute grid's
//! datum is that surface's. The grid's s extent is that of the candidates it grids by slab.
//!
//! # Estimator
//! Where the surface is smooth, a node's height is a locally weighted plane fit to the points
//! within `radius` (default 2.5 cm) of the node: spatial weights (1 - d²/R²)², least squares
//! when the residuals are the noise's, else Tukey's biweight at `robust_scale` (8 mm), started
//! from the median of the five nearest points and reweighted four times. Why: a 1 cm cell
//! holds a few noisy points at best (profiles 2-5 cm apart), so a per-cell median is noisy
//! (σ·1.25/√n) and leaves most cells empty; the plane fit pools the 20-80 points of a 5 cm
//! disc (noise down by √n) without the slope bias of a plain mean on crossfall.
//!
//! Where the disc is not smooth (a curb face, sett joint, manhole rim or pothole edge, or an
//! outlier, within R), every plane over it straddles the edge, so the node takes the median of
//! its six nearest points instead: they lie within about 1.5 cells, on the node's side of the
//! edge, and their median (the mean of the middle two) withstands two of them being outliers
//! or from the other side. It replaced robust fits over three radii kept by intersecting their
//! confidence intervals, which still leaned over the edge: on the setts of tests/surface.rs
//! 3.30 mm RMS against 3.83 mm (a per-cell median: 3.01 mm; the six nearest beat three, five
//! and eight; four do better, 3.21 mm, but withstand only one stray point), asphalt, pothole
//! and manhole figures the same or better, and 12 % fewer instructions on setts. The baseline
//! `Estimator::Median` (per-cell median) is kept for comparison.
//!
//! Most of a road is smooth at this scale, so blocks of 3 x 3 nodes share one fit first: a
//! plane of the points within R + one cell of the block's centre, used for the block's nine
//! nodes when it is smooth. The block's plane is first the plain weighted least-squares one
//! (same disc and spatial weights), from sums over the block's nodes' points in place. It is
//! taken when it holds at least 8 points, its residual scale is under 0.4 of the biweight
//! constant (residuals that small leave nothing for the biweight to reject: one 8 mm outlier
//! among 8 points lifts the scale above it), and it rises by less than the biweight constant
//! across the disc (a plane leaning across a 1 cm step can have residuals like the noise).
//! Where the block's disc holds fewer than 8 points (sparse surveys, far from the scanner), the
//! least-squares plane of the disc of 2R + one cell is tried next, by the same tests: where
//! the block's nodes would each fit their own disc of 2R (on the 4.6 M point demo survey 1.5x
//! faster, coverage up by 3-4 % in the sparse bands at the same RMS). Otherwise, where the
//! block is sparse or its least-squares plane is level with a residual scale under 0.6 of the
//! biweight constant, the block's robust plane is taken when smooth (under 3 % of the points
//! rejected, residual scale under 0.4 of the biweight constant); larger residuals are a step
//! or joint, which the robust fit does not call smooth either (on a dense survey 0.2 % of such
//! blocks, at 1.5 µs a try). Blocks that are none of these (steps, joints, rims, too few
//! points) fall back to node by node: the least-squares plane of the node's disc when smooth
//! by the same test, else the median of the six nearest points. Blocks are 4x faster than
//! node fits on the demo survey and no less accurate (tests/surface.rs: 0.55 mm RMS on asphalt
//! before and after); the least-squares planes take a dense survey's gridding CPU down by about
//! 40 %, with RMS against the truth equal or lower in every band across the road.
//!
//! A fit's reweighting passes and the least-squares sums take four points at a time
//! (`wide::f32x4`: SSE2 on x86-64, NEON on aarch64) in single precision, heights relative to
//! where the fit starts (or to the first point), so micrometres are kept; each sum's lanes are
//! added four sums at a time (transposed), and solved in double precision.
//!
//! # Threads
//! Points are projected in parallel runs of fixed length; slabs are gridded a few at a time
//! (rows in runs of whole block rows) on the shared thread pool, from a thread of their own
//! ahead of the writer. Every node depends only on the candidates in the order they were
//! offered, so the output has the same bits on any number of threads.
//!
//! # Gaps
//! Nodes left without an estimate are filled along u (along track) by linear interpolation
//! between the nearest estimated nodes when they are at most `max_gap` (0.1 m) apart; larger
//! holes stay NaN. Coverage is the share of nodes with a height between the outermost lane
//! borders of the road the grid is retargeted to (the surveyed road, [`SurfaceGrid::lane_covered`]),
//! or without one over the surveyed pavement (the columns from the first to the last of which
//! a tenth has heights, [`surveyed_coverage`]); under `min_coverage` (10 %) the grid is an
//! error ([`LowCoverage`]) with a hint.

mod builder;
mod datum;
mod envelope;
mod estimator;
mod fits;
mod grid;
pub(crate) use grid::lanes_across;
mod options;
mod project;
mod rows;
mod slabs;
mod spill;

pub use builder::SurfaceBuilder;
pub(crate) use datum::{SlabStats, PROFILE_T};
pub use grid::{
    clip_grid, coverage_of, grid_extent, surveyed_coverage, tile_count, ColumnCounts, CoverageMap, Covered,
    LowCoverage, PointCounts, SurfaceGrid, LANE_INSET,
};
pub use options::{
    Estimator, Seen, SurfaceOptions, SurfaceScope, SurfaceStorage, SurfaceUnit, ZMode, MIN_COVERAGE, SURVEYED_COLUMN,
};
pub(crate) use spill::SLAB;

use opendrive::HeaderOffset;

/// Convenience: grid `points` (map x, y, z) on `road` in one call (a road frame over their box,
/// spilling as [`SurfaceStorage::default`]).
pub fn grid_surface(
    road: &opendrive::Road,
    offset: Option<HeaderOffset>,
    points: &[[f64; 3]],
    opts: SurfaceOptions,
) -> Result<SurfaceGrid, crate::Error> {
    let bbox = points.iter().fold([f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY], |b, p| {
        [b[0].min(p[0]), b[1].min(p[1]), b[2].max(p[0]), b[3].max(p[1])]
    });
    let scope = SurfaceScope { points_box: Some(bbox).filter(|b| b[0] <= b[2]), unit: None };
    let mut b = SurfaceBuilder::with(road, offset, opts, &SurfaceStorage::default(), scope)?;
    for chunk in points.chunks(1 << 16) {
        let x: Vec<f64> = chunk.iter().map(|p| p[0]).collect();
        let y: Vec<f64> = chunk.iter().map(|p| p[1]).collect();
        let z: Vec<f64> = chunk.iter().map(|p| p[2]).collect();
        b.add(&x, &y, &z)?;
    }
    b.finish()
}
