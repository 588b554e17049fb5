//! What a gridding gives and the grid's lattice: the gridded surface and its report
//! ([`SurfaceGrid`]), its coverage block by block ([`CoverageMap`]), the coverage of the surveyed
//! pavement and of the lanes and the error of a nearly empty grid ([`LowCoverage`]), and the grid's
//! rows, tiles and extent along s (whole cells, clipped to a road's part) and across (the road's
//! lane borders).

use super::{
    options::{SurfaceOptions, SURVEYED_COLUMN},
    spill::SLAB,
};
use opencrg::Crg;
use opendrive::RoadEval;

/// Nodes with a height of some nodes of a grid, and those nodes in all: integer counts, which
/// work units add up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Covered {
    /// Nodes with a height.
    pub with_height: usize,
    /// Nodes in all.
    pub nodes: usize,
}

impl std::ops::Add for Covered {
    type Output = Covered;
    /// The counts of both.
    fn add(self, other: Covered) -> Covered {
        Covered { with_height: self.with_height + other.with_height, nodes: self.nodes + other.nodes }
    }
}

/// Nodes with a height per v column of a grid (right to left), over `rows` rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ColumnCounts {
    /// Nodes with a height in each column.
    pub per_column: Vec<usize>,
    /// Rows counted.
    pub rows: usize,
}

/// The nodes with a height and the nodes in all of the surveyed pavement (see
/// [`SURVEYED_COLUMN`]) of a grid of `rows` rows whose columns hold `column_covered` nodes with
/// a height each. Integer sums: work units add their column counts up first.
pub fn surveyed_coverage(column_covered: &[usize], rows: usize) -> Covered {
    let reached = |c: &usize| *c > 0 && *c as f64 >= SURVEYED_COLUMN * rows as f64;
    match (column_covered.iter().position(reached), column_covered.iter().rposition(reached)) {
        (Some(a), Some(b)) => Covered { with_height: column_covered[a..=b].iter().sum(), nodes: (b - a + 1) * rows },
        _ => Covered::default(),
    }
}

/// Nodes this close to a road's outermost lane border or closer are left out of the lanes'
/// coverage: a border is measured to a few centimetres, and a curb's face stands on it, m.
pub const LANE_INSET: f64 = 0.1;

/// The v range of the lanes of `road` at `s` (between its outermost lane borders and its lane
/// offset, [`LANE_INSET`] inside), if it is wider than nothing.
pub(super) fn lane_band(road: &RoadEval, s: f64) -> Option<(f64, f64)> {
    // In plan, as the grid's v: a banked road's lanes are narrower there than their t.
    let c = road.planar_t(s, road.lane_offset(s));
    let (lo, hi) = road.lane_borders(s).iter().fold((c, c), |(a, b), &(_, t)| {
        let v = road.planar_t(s, t);
        (a.min(v), b.max(v))
    });
    (hi - lo > 2.0 * LANE_INSET).then_some((lo + LANE_INSET, hi - LANE_INSET))
}

/// The coverage of a grid: of `lanes` where the grid has lanes, else of `surveyed`
/// ([`surveyed_coverage`]).
pub fn coverage_of(lanes: Covered, surveyed: Covered) -> f64 {
    let c = if lanes.nodes > 0 { lanes } else { surveyed };
    c.with_height as f64 / c.nodes.max(1) as f64
}

/// A grid with too few nodes with a height: most likely the axis (its place, its elevation, the
/// road id), the CRS or the grid's width is wrong rather than the survey.
#[derive(Debug, Clone, PartialEq)]
pub struct LowCoverage {
    /// Share of the surveyed nodes with a height (see [`SurfaceGrid::coverage`]).
    pub coverage: f64,
    /// Nodes with a height in the whole grid, and its nodes.
    pub grid: Covered,
    /// The least share asked for.
    pub min: f64,
    /// The band around the road surface that counts as road, m.
    pub max_height: f64,
}

impl std::fmt::Display for LowCoverage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the grid came out nearly empty: {:.1} % of its surveyed nodes have a height ({} of its {} nodes; at least {:.0} % needed, and half that of all); check the axis (its place, elevation and road id), the CRS and the grid's width (the road surface counts within {} m of the one found near the reference line)",
            100.0 * self.coverage,
            self.grid.with_height,
            self.grid.nodes,
            100.0 * self.min,
            self.max_height
        )
    }
}

impl std::error::Error for LowCoverage {}

/// A gridded surface and what went into it.
#[derive(Debug, Clone)]
pub struct SurfaceGrid {
    /// The grid, on the road's reference line (u = s, v = t).
    pub crg: Crg,
    /// Share of the nodes with a height, 0..1 ([`coverage_of`]): of the lanes' nodes when the
    /// grid was retargeted to a road with lanes, else of the columns the survey reached
    /// ([`surveyed_coverage`]), not of columns beyond the surveyed pavement.
    pub coverage: f64,
    /// Share of nodes with a height per v column (right to left).
    pub column_coverage: Vec<f64>,
    /// Nodes with a height per v column in the rows counted (a unit's own), and those rows:
    /// work units add them up for the coverage of the whole grid ([`surveyed_coverage`]).
    pub column_covered: ColumnCounts,
    /// Surveyed nodes with a height, and surveyed nodes in all (coverage = with_height / nodes).
    pub covered: Covered,
    /// Nodes with a height between the outermost lane borders (less [`LANE_INSET`]) of the
    /// road the grid was retargeted to (the surveyed road, whose lanes follow the pavement
    /// where it narrows or widens), and nodes there in all; none without such a road. Work
    /// units add them up.
    pub lane_covered: Covered,
    /// Nodes estimated from points, and filled along track.
    pub estimated: usize,
    /// Nodes filled along track.
    pub filled: usize,
    /// Points offered, near the road, and kept as surface.
    pub points: PointCounts,
    /// s range of the grid, m.
    pub s_range: (f64, f64),
    /// Where the grid has heights, block by block.
    pub coverage_map: CoverageMap,
}

/// The share of a grid's nodes with a height in blocks of `block` x `block` nodes: `width`
/// blocks along u (s), `height` across (v, right to left); a byte each (0: none, 255: all),
/// block rows along u one after another. A hundredth of the grid's size at blocks of 10 nodes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CoverageMap {
    /// Nodes per block side.
    pub block: usize,
    /// Blocks along u.
    pub width: usize,
    /// Blocks across (v).
    pub height: usize,
    /// `width` x `height` shares, index `iu_block * height + iv_block`.
    pub share: Vec<u8>,
    /// Counts of the block row being summed, and its rows so far.
    acc: Vec<u32>,
    acc_rows: usize,
}

impl CoverageMap {
    /// Nodes per block side in a coverage map.
    pub const BLOCK: usize = 10;

    pub(super) fn new(nv: usize) -> CoverageMap {
        let height = nv.div_ceil(Self::BLOCK);
        CoverageMap { block: Self::BLOCK, height, acc: vec![0; height], ..Default::default() }
    }

    /// Adds a row of heights (NaN: none).
    pub(super) fn add(&mut self, row: &[f32]) {
        for (acc, part) in self.acc.iter_mut().zip(row.chunks(self.block)) {
            *acc += part.iter().filter(|h| !h.is_nan()).count() as u32;
        }
        self.acc_rows += 1;
        if self.acc_rows == self.block {
            self.flush(row.len());
        }
    }

    /// Ends the block row being summed (a partial one at the grid's end).
    pub(super) fn flush(&mut self, nv: usize) {
        if self.acc_rows == 0 {
            return;
        }
        for (j, acc) in self.acc.iter_mut().enumerate() {
            let cols = (nv - j * self.block).min(self.block);
            self.share.push(((*acc as f64 / (cols * self.acc_rows) as f64) * 255.0).round() as u8);
            *acc = 0;
        }
        self.acc_rows = 0;
        self.width += 1;
    }
}

/// The slab of row `row` of a grid starting at s `s0` with cells of `cell` metres.
pub(super) fn slab_of_row(s0: f64, cell: f64, row: usize) -> f64 {
    ((s0 + row as f64 * cell) / SLAB + 1e-9).floor()
}

/// Rows (nodes along u) of a grid over `s_range` with cells of `cell` metres.
pub(super) fn grid_rows(s_range: (f64, f64), cell: f64) -> usize {
    ((s_range.1 - s_range.0) / cell + 1e-9).floor() as usize + 1
}

/// Rows a tile of `tile` metres advances by.
pub(super) fn tile_rows(tile: f64, cell: f64) -> usize {
    ((tile / cell).round() as usize).max(1)
}

/// Rows of the longest along-track gap filled.
pub(super) fn gap_rows(o: &SurfaceOptions) -> usize {
    (o.max_gap / o.cell + 1e-9).floor() as usize
}

/// Tiles of `tile` metres that `write_tiles` writes of a grid over `s_range` with cells of
/// `cell` metres.
pub fn tile_count(s_range: (f64, f64), cell: f64, tile: f64) -> usize {
    grid_rows(s_range, cell).saturating_sub(1).div_ceil(tile_rows(tile, cell)).max(1)
}

/// The s extent of the grid of candidates seen over `s_seen` (their s extent, None when there
/// were none; without an `s_range`): whole cells around them. Units of a build pass it as
/// `s_range` to grid their tiles.
pub fn grid_extent(s_seen: Option<(f64, f64)>, cell: f64) -> Result<(f64, f64), crate::Error> {
    let (lo, hi) = s_seen.ok_or(crate::Error::NoSurfacePoints)?;
    Ok(((lo / cell).floor() * cell, (hi / cell).ceil() * cell))
}

/// The grid over `s_range` (of the collecting road, whole cells from s 0) clipped to `cut`, the
/// part of that road a retargeted builder grids against: inward to whole cells. Units of a
/// build clip the grid's extent they pass as `s_range` so; clipping twice changes nothing.
pub fn clip_grid(s_range: (f64, f64), cut: (f64, f64), cell: f64) -> Result<(f64, f64), crate::Error> {
    let lo = if s_range.0 < cut.0 { (cut.0 / cell - 1e-9).ceil() * cell } else { s_range.0 };
    let hi = if s_range.1 > cut.1 { (cut.1 / cell + 1e-9).floor() * cell } else { s_range.1 };
    if hi - lo < cell {
        return Err(crate::Error::GridOutsidePart { s_range, part: cut });
    }
    Ok((lo, hi))
}

/// The road's extent across, in plan (the grid's v): the outermost lane borders over its
/// length, or over `s_range` (a grid of part of the road is as wide as that part's lanes).
pub(super) fn lane_extent(road: &RoadEval, s_range: Option<(f64, f64)>) -> (f64, f64) {
    let (a, b) = s_range.map_or((0.0, road.length()), |(a, b)| (a.max(0.0), b.min(road.length())));
    let (a, b) = if a.is_finite() && b.is_finite() && a < b { (a, b) } else { (0.0, road.length()) };
    let n = (b - a).ceil().clamp(1.0, 1e7) as usize;
    let mut ext = (0.0f64, 0.0f64);
    for i in 0..=n {
        if let Some((lo, hi)) = lanes_across(road, (a + i as f64).min(b)) {
            ext = (ext.0.min(lo), ext.1.max(hi));
        }
    }
    ext
}

/// The plan t range the road's lanes cover at s, the reference line included; None where it
/// has no lanes.
pub(crate) fn lanes_across(road: &RoadEval, s: f64) -> Option<(f64, f64)> {
    let borders = road.lane_borders(s);
    (!borders.is_empty()).then(|| {
        borders.iter().fold((0.0f64, 0.0f64), |(lo, hi), &(_, t)| {
            let v = road.planar_t(s, t);
            (lo.min(v), hi.max(v))
        })
    })
}

/// The points a surface grid saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PointCounts {
    /// Points offered to the builder.
    pub offered: u64,
    /// Near the road's surface (the candidates).
    pub near: u64,
    /// Kept as surface.
    pub kept: u64,
}
