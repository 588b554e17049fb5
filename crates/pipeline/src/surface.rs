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

use crate::frame::RoadFrame;
use opencrg::Crg;
use opendrive::{HeaderOffset, Placement, RoadEval};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use wide::f32x4;

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

/// Settings of the gridding.
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
    /// A grid with fewer of its surveyed nodes covered (see [`SurfaceGrid::coverage`]) is an
    /// error ([`LowCoverage`]) of `finish` and `write_tiles` (not of a work unit's tiles); 0:
    /// none.
    pub min_coverage: f64,
    /// Thickness of the kept low envelope, m: points up to this (plus twice the coarse cell's
    /// median less its 10th percentile, up to another `layer`) above the 10th percentile of
    /// their coarse cell are kept.
    pub layer: f64,
    /// Estimator.
    pub estimator: Estimator,
    /// Where candidates are spilled when more than `spill_after` are held (default: the
    /// system's temporary directory).
    pub spill_dir: Option<std::path::PathBuf>,
    /// Candidates held in memory before spilling, 12 bytes each.
    pub spill_after: usize,
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
    /// ([`SurfaceBuilder::seen`]), keep none. The grid's extent is the union of the units'.
    Count(f64, f64),
    /// Grid and write tiles `first..end` of `tile` metres only ([`SurfaceBuilder::write_tiles`]),
    /// keeping only the candidates that reach them; needs `s_range` (the whole grid's extent,
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
            spill_dir: None,
            spill_after: 1_000_000,
            unit: None,
            points_box: None,
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

/// The nodes with a height and the nodes in all of the surveyed pavement (see
/// [`SURVEYED_COLUMN`]) of a grid of `rows` rows whose columns hold `column_covered` nodes with
/// a height each. Integer sums: work units add their column counts up first.
pub fn surveyed_coverage(column_covered: &[usize], rows: usize) -> (usize, usize) {
    let reached = |c: &usize| *c > 0 && *c as f64 >= SURVEYED_COLUMN * rows as f64;
    match (column_covered.iter().position(reached), column_covered.iter().rposition(reached)) {
        (Some(a), Some(b)) => (column_covered[a..=b].iter().sum(), (b - a + 1) * rows),
        _ => (0, 0),
    }
}

/// Nodes this close to a road's outermost lane border or closer are left out of the lanes'
/// coverage: a border is measured to a few centimetres, and a curb's face stands on it, m.
pub const LANE_INSET: f64 = 0.1;

/// The v range of the lanes of `road` at `s` (between its outermost lane borders and its lane
/// offset, [`LANE_INSET`] inside), if it is wider than nothing.
fn lane_band(road: &RoadEval, s: f64) -> Option<(f64, f64)> {
    let c = road.lane_offset(s);
    let (lo, hi) = road.lane_borders(s).iter().fold((c, c), |(a, b), &(_, t)| (a.min(t), b.max(t)));
    (hi - lo > 2.0 * LANE_INSET).then_some((lo + LANE_INSET, hi - LANE_INSET))
}

/// The coverage of a grid: `lanes` (nodes with a height, nodes) where the grid has lanes,
/// else `surveyed` ([`surveyed_coverage`]).
pub fn coverage_of(lanes: (usize, usize), surveyed: (usize, usize)) -> f64 {
    let (covered, nodes) = if lanes.1 > 0 { lanes } else { surveyed };
    covered as f64 / nodes.max(1) as f64
}

/// A grid with too few nodes with a height: most likely the axis (its place, its elevation, the
/// road id), the CRS or the grid's width is wrong rather than the survey.
#[derive(Debug, Clone, PartialEq)]
pub struct LowCoverage {
    /// Share of the surveyed nodes with a height (see [`SurfaceGrid::coverage`]).
    pub coverage: f64,
    /// Nodes with a height in the whole grid, and its nodes.
    pub grid: (usize, usize),
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
            self.grid.0,
            self.grid.1,
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
    pub column_covered: (Vec<usize>, usize),
    /// Surveyed nodes with a height, and surveyed nodes in all (coverage = covered / nodes).
    pub covered: (usize, usize),
    /// Nodes with a height between the outermost lane borders (less [`LANE_INSET`]) of the
    /// road the grid was retargeted to (the surveyed road, whose lanes follow the pavement
    /// where it narrows or widens), and nodes there in all; (0, 0) without such a road. Work
    /// units add them up.
    pub lane_covered: (usize, usize),
    /// Nodes estimated from points, and filled along track.
    pub estimated: usize,
    /// Nodes filled along track.
    pub filled: usize,
    /// Points offered, near the road, and kept as surface.
    pub points: (u64, u64, u64),
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

    fn new(nv: usize) -> CoverageMap {
        let height = nv.div_ceil(Self::BLOCK);
        CoverageMap { block: Self::BLOCK, height, acc: vec![0; height], ..Default::default() }
    }

    /// Adds a row of heights (NaN: none).
    fn add(&mut self, row: &[f32]) {
        for (acc, part) in self.acc.iter_mut().zip(row.chunks(self.block)) {
            *acc += part.iter().filter(|h| !h.is_nan()).count() as u32;
        }
        self.acc_rows += 1;
        if self.acc_rows == self.block {
            self.flush(row.len());
        }
    }

    /// Ends the block row being summed (a partial one at the grid's end).
    fn flush(&mut self, nv: usize) {
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

/// One surface candidate: s (m), t and height above the OpenDRIVE surface (m).
#[derive(Debug, Clone, Copy)]
struct Candidate {
    s: f64,
    t: f32,
    h: f32,
}

/// A candidate as its slab holds it: s from the slab's start, t and height above the
/// OpenDRIVE surface (m). Single precision holds s within 2^-24 of the slab and its margins
/// (0.2 um at the default radius).
#[derive(Debug, Clone, Copy)]
struct SlabPoint {
    ds: f32,
    t: f32,
    h: f32,
}

/// Slab length along s, m (short, so a slab of dense points stays small): candidates are held (in memory, or spilled to disk) per slab and
/// gridded a slab at a time, so memory does not grow with the road's length or the points.
pub(crate) const SLAB: f64 = 2.0;

/// Candidates by slab; spilled to files in `dir` when more than `limit` are held.
#[derive(Debug)]
struct Slabs {
    /// The runs of candidates each slab holds in memory, in order (kept as they came: no
    /// copying as a slab grows).
    mem: BTreeMap<i64, Vec<Vec<SlabPoint>>>,
    held: usize,
    limit: usize,
    dir: PathBuf,
    on_disk: BTreeSet<i64>,
    created: bool,
}

impl Slabs {
    fn new(dir: PathBuf, limit: usize) -> Slabs {
        Slabs { mem: BTreeMap::new(), held: 0, limit, dir, on_disk: BTreeSet::new(), created: false }
    }

    fn file(&self, k: i64) -> PathBuf {
        self.dir.join(format!("slab_{k}.bin"))
    }

    /// Adds candidates to slab `k`, after those it holds.
    fn append(&mut self, k: i64, c: Vec<SlabPoint>) -> Result<(), String> {
        self.held += c.len();
        self.mem.entry(k).or_default().push(c);
        if self.held > self.limit {
            self.spill()?;
        }
        Ok(())
    }

    /// Appends every slab held in memory to its file.
    fn spill(&mut self) -> Result<(), String> {
        let io = |e: std::io::Error, p: &Path| format!("{}: {e}", p.display());
        if !self.created {
            std::fs::create_dir_all(&self.dir).map_err(|e| io(e, &self.dir))?;
            self.created = true;
        }
        // Through a small buffer: no second copy of the slabs in memory.
        let mut bytes = vec![0u8; SPILL_RUN * CANDIDATE_BYTES];
        for (k, runs) in std::mem::take(&mut self.mem) {
            let path = self.file(k);
            let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(|e| io(e, &path))?;
            for run in &runs {
                for piece in run.chunks(SPILL_RUN) {
                    let out = &mut bytes[..piece.len() * CANDIDATE_BYTES];
                    for (b, c) in out.chunks_exact_mut(CANDIDATE_BYTES).zip(piece) {
                        b[0..4].copy_from_slice(&c.ds.to_le_bytes());
                        b[4..8].copy_from_slice(&c.t.to_le_bytes());
                        b[8..12].copy_from_slice(&c.h.to_le_bytes());
                    }
                    f.write_all(out).map_err(|e| io(e, &path))?;
                }
            }
            self.on_disk.insert(k);
        }
        self.held = 0;
        Ok(())
    }

    /// Removes slab `k`: its candidates held in memory and its spill file, to be read by
    /// [`Taken::load`] (on whichever thread grids it).
    fn take(&mut self, k: i64) -> Taken {
        let held = self.mem.remove(&k).unwrap_or_default();
        self.held -= held.iter().map(Vec::len).sum::<usize>();
        Taken { file: self.on_disk.remove(&k).then(|| self.file(k)), held }
    }
}

/// Bytes of a spilled candidate: ds, t and h, little-endian.
const CANDIDATE_BYTES: usize = 12;

/// Candidates written (or read back) at a time.
const SPILL_RUN: usize = 4096;

/// A slab taken from [`Slabs`]: the candidates held in memory, and the file of those spilled
/// before them.
struct Taken {
    file: Option<PathBuf>,
    held: Vec<Vec<SlabPoint>>,
}

impl Taken {
    /// Removes the slab's spill file without reading it.
    fn discard(self) {
        if let Some(path) = &self.file {
            let _ = std::fs::remove_file(path);
        }
    }

    /// The slab's candidates in the order they came (the spilled ones, appended at each spill,
    /// then those held); removes the file.
    fn load(mut self) -> Result<Vec<SlabPoint>, String> {
        let held = self.held.iter().map(Vec::len).sum::<usize>();
        if self.file.is_none() && self.held.len() <= 1 {
            return Ok(self.held.pop().unwrap_or_default());
        }
        let mut v = Vec::new();
        if let Some(path) = &self.file {
            // In pieces through a small buffer: no second copy of the slab in memory.
            let io = |e: std::io::Error| format!("{}: {e}", path.display());
            let mut f = std::fs::File::open(path).map_err(io)?;
            let len = f.metadata().map_err(io)?.len() as usize;
            v.reserve_exact(len / CANDIDATE_BYTES + held);
            let mut buf = vec![0u8; SPILL_RUN * CANDIDATE_BYTES];
            let mut filled = 0;
            loop {
                let n = match std::io::Read::read(&mut f, &mut buf[filled..]) {
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(io(e)),
                };
                filled += n;
                let whole = filled / CANDIDATE_BYTES * CANDIDATE_BYTES;
                v.extend(buf[..whole].chunks_exact(CANDIDATE_BYTES).map(|r| {
                    let f4 = |b: &[u8]| f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    SlabPoint { ds: f4(&r[0..4]), t: f4(&r[4..8]), h: f4(&r[8..12]) }
                }));
                buf.copy_within(whole..filled, 0);
                filled -= whole;
                if n == 0 {
                    break;
                }
            }
            let _ = std::fs::remove_file(path);
        } else {
            v.reserve_exact(held);
        }
        v.extend(self.held.into_iter().flatten());
        Ok(v)
    }
}

/// Candidates by slab of runs of points, in order.
type SlabRuns = Vec<Vec<(i64, Vec<SlabPoint>)>>;

/// Slabs appended to (and spilled) on a thread of their own, so that the projection of the next
/// points goes on meanwhile; started with the first points.
struct Keeper {
    slabs: Option<Slabs>,
    tx: Option<std::sync::mpsc::SyncSender<SlabRuns>>,
    thread: Option<std::thread::JoinHandle<Result<Slabs, String>>>,
}

impl Keeper {
    fn new(slabs: Slabs) -> Keeper {
        Keeper { slabs: Some(slabs), tx: None, thread: None }
    }

    /// Appends runs of candidates by slab (in order); an error when spilling failed.
    fn append(&mut self, runs: SlabRuns) -> Result<(), String> {
        if let Some(mut slabs) = self.slabs.take() {
            let (tx, rx) = std::sync::mpsc::sync_channel::<SlabRuns>(2);
            let spawned = std::thread::Builder::new().name("roadscan-slabs".into()).spawn(move || {
                for (k, c) in rx.into_iter().flatten().flatten() {
                    slabs.append(k, c)?;
                }
                Ok(slabs)
            });
            self.thread = Some(spawned.map_err(|e| format!("cannot start the slab thread: {e}"))?);
            self.tx = Some(tx);
        }
        match &self.tx {
            Some(tx) if tx.send(runs).is_ok() => Ok(()),
            // The thread stopped: its error.
            _ => self.take_slabs().map(|_| ()).and(Err("the slab thread stopped".into())),
        }
    }

    /// The slabs, once all appended.
    fn take_slabs(&mut self) -> Result<Slabs, String> {
        self.tx = None;
        match (self.slabs.take(), self.thread.take()) {
            (Some(s), _) => Ok(s),
            (None, Some(t)) => t.join().map_err(|_| "the slab thread failed".to_string())?,
            (None, None) => Err("the slabs were taken".into()),
        }
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        // Waits for the thread, so that its slabs (and their spill files) go too.
        let _ = self.take_slabs();
    }
}

impl Drop for Slabs {
    fn drop(&mut self) {
        if self.created {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Collects the surface candidates of a stream of map points.
pub struct SurfaceBuilder<'a> {
    proj: Project<'a>,
    opts: SurfaceOptions,
    slabs: Keeper,
    offered: u64,
    /// What the candidates said of each slab.
    stats: BTreeMap<i64, SlabStats>,
    /// The band of t whose heights find the road surface.
    hist_t: (f64, f64),
    /// Slabs that get candidates (a unit's).
    slab_range: (i64, i64),
    progress: Option<Progress<'a>>,
    /// The road residual heights are measured from, when not the one points were collected on.
    target: Option<RoadEval<'a>>,
    /// The collecting road's s range the target covers, when it covers part of it: its s is
    /// the collecting road's minus the first.
    cut: Option<(f64, f64)>,
}

impl std::fmt::Debug for SurfaceBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SurfaceBuilder")
            .field("road", &self.proj.road.road().id)
            .field("v_range", &self.proj.v_range)
            .field("offered", &self.offered)
            .field("slabs", &self.stats.len())
            .finish_non_exhaustive()
    }
}

/// Called with (rows done, rows in all) as the grid is computed.
type Progress<'a> = Box<dyn FnMut(usize, usize) + 'a>;

static SPILL_DIRS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl<'a> SurfaceBuilder<'a> {
    /// Grids the surface of `road` (of a file with header `<offset>` `offset`).
    pub fn new(
        road: &'a opendrive::Road,
        offset: Option<HeaderOffset>,
        opts: SurfaceOptions,
    ) -> Result<SurfaceBuilder<'a>, String> {
        let eval = RoadEval::new(road);
        let v_range = opts.v_range.unwrap_or_else(|| lane_extent(&eval));
        let place = offset.unwrap_or_default().placement();
        let reach = v_range.0.abs().max(v_range.1.abs()) + opts.radius + opts.cell + 1.0;
        let frame = RoadFrame::for_points(&eval, opts.points_box, &place, reach).map_err(|e| e.to_string())?;
        let n = SPILL_DIRS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = opts
            .spill_dir
            .clone()
            .unwrap_or_else(std::env::temp_dir)
            .join(format!(".roadscan-spill-{}-{n}", std::process::id()));
        let slabs = Keeper::new(Slabs::new(dir, opts.spill_after));
        let proj = Project {
            surface: opendrive::SurfaceTable::new(&eval),
            road: eval,
            frame,
            place,
            v_range,
            s_range: opts.s_range,
            margin: opts.radius + opts.cell,
            max_height: opts.max_height,
            search_height: opts.search_height,
        };
        let slab_range = match (opts.unit, opts.s_range) {
            (Some(SurfaceUnit::Count(..)), _) => (i64::MAX, i64::MIN),
            (Some(SurfaceUnit::Tiles { tile, first, end }), Some(r)) => {
                let w = Window::of(r, &opts, tile, (first, end));
                let slab = |row: usize| slab_of_row(r.0, opts.cell, row) as i64;
                if w.rows.0 < w.rows.1 {
                    (slab(w.rows.0), slab(w.rows.1 - 1))
                } else {
                    (i64::MAX, i64::MIN)
                }
            }
            _ => (i64::MIN, i64::MAX),
        };
        Ok(SurfaceBuilder {
            proj,
            opts,
            slabs,
            offered: 0,
            stats: BTreeMap::new(),
            hist_t: (v_range.0.max(-PROFILE_T), v_range.1.min(PROFILE_T)),
            slab_range,
            progress: None,
            target: None,
            cut: None,
        })
    }

    /// Grids against `road`, which has the same reference line as the road the points were
    /// collected on from s `shift` on (e.g. the road surveyed from these very points, with its
    /// elevation, superelevation and lanes, or the part of it the points cover, cut with
    /// `opendrive::road_part` at `shift`): the collecting road's s is `road`'s s plus `shift`.
    /// Residual heights become heights above its surface, the grid spans its lanes (or
    /// `v_range`) within the width collected, and the tiles' u is `road`'s s. A `road` shorter
    /// than the collecting road clips the grid to its s range ([`clip_grid`]; `shift` should
    /// be a whole number of cells, so that u keeps the grid's lattice). Points are collected
    /// within `max_height` of the first road's surface, so the two surfaces must be close.
    pub fn retarget(
        &mut self,
        road: &'a opendrive::Road,
        v_range: Option<(f64, f64)>,
        shift: f64,
    ) -> Result<(), String> {
        let eval = RoadEval::new(road);
        let first = &self.proj.road;
        let whole = shift == 0.0 && (eval.length() - first.length()).abs() <= 1e-6;
        if !(shift.is_finite() && shift >= 0.0 && shift + eval.length() <= first.length() + 1e-6) {
            return Err(format!(
                "road {} ({} m) from s {shift} does not lie within road {} ({} m)",
                road.id,
                eval.length(),
                first.road().id,
                first.length()
            ));
        }
        let n = (eval.length() / 10.0).ceil().max(1.0) as usize;
        for i in 0..=n {
            let s = eval.length() * i as f64 / n as f64;
            let (a, b) = (first.pose((s + shift).min(first.length())), eval.pose(s));
            if (a.x - b.x).hypot(a.y - b.y) > 1e-6 {
                return Err(format!(
                    "road {} does not share the reference line of road {} (at s {s:.1}, its s {:.1})",
                    road.id,
                    first.road().id,
                    s + shift
                ));
            }
        }
        let want = v_range.unwrap_or_else(|| lane_extent(&eval));
        let have = self.proj.v_range;
        let v = (want.0.max(have.0), want.1.min(have.1));
        if v.0 >= v.1 {
            return Err(format!("the grid's width {want:?} lies outside the width collected {have:?}"));
        }
        self.proj.v_range = v;
        self.cut = (!whole).then_some((shift, shift + eval.length()));
        self.target = Some(eval);
        Ok(())
    }

    /// Reports the gridding's progress to `f` (rows done, rows in all).
    pub fn on_progress(&mut self, f: impl FnMut(usize, usize) + 'a) {
        self.progress = Some(Box::new(f));
    }

    /// Offers a chunk of map points; an error only when spilling to disk fails.
    ///
    /// The points are projected in runs of fixed length, in parallel, each run from its own
    /// start: the same candidates on any number of threads.
    pub fn add(&mut self, x: &[f64], y: &[f64], z: &[f64]) -> Result<(), String> {
        let n = x.len().min(y.len()).min(z.len());
        let (proj, opts, range, hist_t) = (&self.proj, &self.opts, self.slab_range, self.hist_t);
        let found = crate::par::runs(n, 8192, |i| {
            let mut found = Found::new(opts, range, hist_t);
            proj.candidates(&x[i.clone()], &y[i.clone()], &z[i], |c, far| found.add(c, far));
            found
        })?;
        self.offered += n as u64;
        let mut runs = Vec::with_capacity(found.len());
        for f in found {
            for (k, st) in &f.stats {
                self.stats.entry(*k).or_default().merge(st);
            }
            runs.push(f.slabs);
        }
        self.slabs.append(runs)
    }

    /// What was offered so far: points, candidates near the road surface and their s extent
    /// (of a [`SurfaceUnit::Count`] pass: its share only). Near: within `max_height` of the
    /// OpenDRIVE surface where the road surface found in the points is that; where it is not
    /// (see [`SurfaceOptions::search_height`]), every candidate of the slab.
    pub fn seen(&self) -> Seen {
        self.seen_with(&self.profile())
    }

    fn seen_with(&self, profile: &Profile) -> Seen {
        let (mut near, mut ext) = (0, (f64::INFINITY, f64::NEG_INFINITY));
        for (&k, st) in &self.stats {
            let (n, e) = if profile.value(k) == 0.0 { (st.near, st.near_s) } else { (st.all, st.all_s) };
            near += n;
            ext = (ext.0.min(e.0), ext.1.max(e.1));
        }
        Seen { offered: self.offered, near, s_range: ext.0.is_finite().then_some(ext) }
    }

    /// The road surface's height above the OpenDRIVE surface along s.
    fn profile(&self) -> Profile {
        if self.opts.search_height <= self.opts.max_height {
            return Profile::default();
        }
        Profile::of(&self.stats, self.opts.max_height / 3.0)
    }

    /// Grids what was offered into one grid in memory.
    pub fn finish(self) -> Result<SurfaceGrid, String> {
        if self.opts.unit.is_some() {
            return Err("a work unit's grid is written as tiles (write_tiles)".into());
        }
        let mut rows = RowStream::new(self, None)?;
        let (nu, nv) = (rows.g.nu, rows.g.nv);
        let mut z = Vec::with_capacity(nu * nv);
        let mut row = vec![f32::NAN; nv];
        for _ in 0..nu {
            rows.next(&mut row)?;
            z.extend_from_slice(&row);
        }
        let crg = rows.tile_grid(0, nu, z);
        let g = rows.report(crg);
        rows.check(&g)?;
        Ok(g)
    }

    /// Grids what was offered into tiles of `tile` metres along s (the last may be shorter;
    /// neighbours share their boundary row), written to `path(k, n)` for tile k of n, each
    /// atomically; memory holds one slab of points and a few rows at a time. Returns the
    /// report with the first tile's grid header (no heights). A [`SurfaceUnit::Tiles`] unit
    /// writes its tiles only (none when they lie beyond the grid).
    pub fn write_tiles(
        self,
        tile: f64,
        path: impl Fn(usize, usize) -> PathBuf,
    ) -> Result<(SurfaceGrid, Vec<PathBuf>), String> {
        if let Some(SurfaceUnit::Tiles { tile: t, .. }) = self.opts.unit {
            if t.to_bits() != tile.to_bits() {
                return Err(format!("tiles of {tile} m for a unit of tiles of {t} m"));
            }
        }
        let mut rows = RowStream::new(self, Some(tile))?;
        let nu = rows.g.nu;
        let Window { tiles: (t0, t1, n_tiles), per, .. } = rows.window;
        let mut paths = Vec::new();
        let mut last: Option<(usize, Vec<f32>)> = None;
        let mut first_header = None;
        let mut skip = vec![0f32; rows.g.nv];
        for k in t0..t1 {
            let first = k * per;
            let end = ((k + 1) * per + 1).min(nu);
            // A unit's stream starts before its first tile (gaps are filled across).
            while rows.emitted < first {
                rows.next(&mut skip)?;
            }
            let grid = rows.tile_grid(first, end - first, Vec::new());
            let p = path(k, n_tiles);
            let mut fail: Option<String> = None;
            let result = opencrg::write_file_rows(&grid, &p, opencrg::Format::Krbi, |iu, out| {
                let want = first + iu;
                match &last {
                    Some((r, v)) if *r == want => out.copy_from_slice(v),
                    _ => {
                        if let Err(e) = rows.next(out) {
                            fail = Some(e.clone());
                            return Err(opencrg::Error::new(opencrg::ErrorKind::Write(e)));
                        }
                        last = Some((want, out.to_vec()));
                    }
                }
                Ok(())
            });
            if let Some(e) = fail {
                return Err(e);
            }
            result.map_err(|e| e.to_string())?;
            paths.push(p);
            first_header.get_or_insert(grid);
        }
        let crg = match first_header {
            Some(c) => c,
            None => rows.tile_grid(0, 2.min(nu), Vec::new()),
        };
        let g = rows.report(crg);
        rows.check(&g)?;
        Ok((g, paths))
    }
}

/// The candidates of a run of points by slab, in order, and what the run adds to what a
/// builder saw.
struct Found {
    /// Candidates by slab key (see [`far_key`]), in order.
    slabs: Vec<(i64, Vec<SlabPoint>)>,
    /// The slabs that get candidates.
    slab_range: (i64, i64),
    /// How far a slab's nodes reach into its neighbours, m.
    reach: f64,
    /// The s range a counting pass counts.
    counted: Option<(f64, f64)>,
    /// Near and far candidates: an s range whose candidates go to one slab only, the `slabs`
    /// entry at the index (empty: none yet): the interior of the last slab a candidate went to
    /// alone.
    only: [(f64, f64, usize); 2],
    /// What the candidates say of their own slabs (the last one used most likely first).
    stats: Vec<(i64, SlabStats)>,
    /// The band of t whose heights the slabs' histograms count, m.
    hist_t: (f64, f64),
}

impl Found {
    /// Nothing found yet, for the slabs of `slab_range`; histograms of the heights of the
    /// candidates within `hist_t`.
    fn new(opts: &SurfaceOptions, slab_range: (i64, i64), hist_t: (f64, f64)) -> Found {
        let counted = match opts.unit {
            Some(SurfaceUnit::Count(a, b)) => Some((a, b)),
            _ => None,
        };
        Found {
            slabs: Vec::new(),
            slab_range,
            // The pad's rows and the half cell a point lies from its node, and some.
            reach: (pad_rows(opts) as f64 + 1.0) * opts.cell,
            counted,
            only: [(f64::INFINITY, f64::NEG_INFINITY, 0); 2],
            stats: Vec::new(),
            hist_t,
        }
    }

    /// Puts candidate `c` (`far`: beyond `max_height`, within `search_height`) into the slabs
    /// that get it: its own, and a neighbour when that slab's nodes reach it.
    #[inline(always)]
    fn add(&mut self, c: Candidate, far: bool) {
        // Most candidates lie inside the slab of the last one, beyond its neighbours' reach.
        let (a, b, index) = self.only[usize::from(far)];
        if c.s >= a && c.s < b {
            let (k, v) = &mut self.slabs[index];
            v.push(SlabPoint { ds: (c.s - slab_of_key(*k) as f64 * SLAB) as f32, t: c.t, h: c.h });
        } else {
            self.add_by_slab(c, far);
        }
        // A counting pass counts its share only (and keeps none: its slab range is empty);
        // every pass counts the heights of every candidate it sees.
        let counted = !matches!(self.counted, Some((a, b)) if c.s < a || c.s >= b);
        let hist = c.t as f64 >= self.hist_t.0 && c.t as f64 <= self.hist_t.1;
        if counted || hist {
            let k = floor(c.s / SLAB) as i64;
            let st = self.stats_of(k);
            if counted {
                st.count(c.s, far);
            }
            if hist {
                st.add_height(c.h);
            }
        }
    }

    /// The stats of slab `k`.
    #[inline(always)]
    fn stats_of(&mut self, k: i64) -> &mut SlabStats {
        let i = match self.stats.last() {
            Some((j, _)) if *j == k => self.stats.len() - 1,
            _ => match self.stats.iter().position(|(j, _)| *j == k) {
                Some(i) => {
                    // The last used last.
                    let e = self.stats.remove(i);
                    self.stats.push(e);
                    self.stats.len() - 1
                }
                None => {
                    self.stats.push((k, SlabStats::default()));
                    self.stats.len() - 1
                }
            },
        };
        &mut self.stats[i].1
    }

    /// Puts candidate `c` into the slabs that get it, and notes the interior of its own slab
    /// when only that one does (see `only`).
    fn add_by_slab(&mut self, c: Candidate, far: bool) {
        let (reach, (lo, hi)) = (self.reach, self.slab_range);
        let wanted = |k: i64| (lo..=hi).contains(&k);
        let k = floor(c.s / SLAB);
        let ki = k as i64;
        let key = |k: i64| if far { far_key(k) } else { k };
        let own = wanted(ki).then(|| self.put(key(ki), ki, c));
        let mut alone = true;
        if c.s - k * SLAB < reach && wanted(ki - 1) {
            self.put(key(ki - 1), ki - 1, c);
            alone = false;
        }
        if (k + 1.0) * SLAB - c.s < reach && wanted(ki + 1) {
            self.put(key(ki + 1), ki + 1, c);
            alone = false;
        }
        if let (true, Some(index)) = (alone, own) {
            // Both neighbours' reach, and a micrometre more (far above the rounding of these
            // sums), is outside this range: whatever the neighbours' range, the tests above
            // put its candidates into slab `ki` alone.
            let margin = reach + 1e-6;
            self.only[usize::from(far)] = (k * SLAB + margin, (k + 1.0) * SLAB - margin, index);
        }
    }

    /// Appends candidate `c` to the run of slab `k` under `key` (the last one is the
    /// likeliest); returns the run's index in `slabs`.
    #[inline(always)]
    fn put(&mut self, key: i64, k: i64, c: Candidate) -> usize {
        let p = SlabPoint { ds: (c.s - k as f64 * SLAB) as f32, t: c.t, h: c.h };
        match self.slabs.iter().rposition(|(j, _)| *j == key) {
            Some(i) => {
                self.slabs[i].1.push(p);
                i
            }
            None => {
                self.slabs.push((key, vec![p]));
                self.slabs.len() - 1
            }
        }
    }
}

/// Slab keys of far candidates (see [`SurfaceOptions::search_height`]) are the slab's plus
/// this: slabs lie within |k| < 2^40 (s up to 2.2e12 m; `RoadFrame` keeps s on the road).
const FAR: i64 = 1 << 41;

/// The key of slab `k`'s far candidates.
fn far_key(k: i64) -> i64 {
    k + FAR
}

/// The slab of a key.
fn slab_of_key(key: i64) -> i64 {
    if key >= FAR / 2 {
        key - FAR
    } else {
        key
    }
}

/// Height bins of the slabs' histograms, m.
const HIST_BIN: f64 = 0.05;

/// What the candidates say of their slab: counts and s extents of the near ones (within
/// `max_height` of the OpenDRIVE surface) and of all, and a histogram of the heights (above the
/// OpenDRIVE surface) of those near the reference line, in bins of [`HIST_BIN`].
#[derive(Debug, Clone)]
pub(crate) struct SlabStats {
    near: u64,
    all: u64,
    near_s: (f64, f64),
    all_s: (f64, f64),
    /// (bin, count), in no order.
    hist: Vec<(i32, u32)>,
    /// The index in `hist` of the last bin added to.
    last: usize,
}

impl Default for SlabStats {
    fn default() -> Self {
        let none = (f64::INFINITY, f64::NEG_INFINITY);
        SlabStats { near: 0, all: 0, near_s: none, all_s: none, hist: Vec::new(), last: 0 }
    }
}

impl SlabStats {
    /// Counts a candidate at `s` (`far`: not near).
    #[inline(always)]
    fn count(&mut self, s: f64, far: bool) {
        // Comparisons, not min and max: s is never NaN (`RoadFrame` keeps it on the road).
        let ext = |e: &mut (f64, f64)| {
            if s < e.0 {
                e.0 = s;
            }
            if s > e.1 {
                e.1 = s;
            }
        };
        self.all += 1;
        ext(&mut self.all_s);
        if !far {
            self.near += 1;
            ext(&mut self.near_s);
        }
    }

    /// Adds a height to the histogram.
    #[inline(always)]
    pub(crate) fn add_height(&mut self, h: f32) {
        let b = (h as f64 / HIST_BIN).floor().clamp(i32::MIN as f64, i32::MAX as f64) as i32;
        self.add_bin(b, 1);
    }

    fn add_bin(&mut self, b: i32, n: u32) {
        if let Some(e) = self.hist.get_mut(self.last).filter(|e| e.0 == b) {
            e.1 += n;
            return;
        }
        match self.hist.iter().position(|e| e.0 == b) {
            Some(i) => {
                self.hist[i].1 += n;
                self.last = i;
            }
            None => {
                self.hist.push((b, n));
                self.last = self.hist.len() - 1;
            }
        }
    }

    /// The median of the heights within `half` of `centre` (m), interpolated within the bins:
    /// the middle of a layer [`SlabStats::layer`] found (whose lowest bin leans low).
    pub(crate) fn median_near(&self, centre: f64, half: f64) -> Option<f64> {
        let (lo, hi) = (((centre - half) / HIST_BIN).floor() as i64, ((centre + half) / HIST_BIN).floor() as i64);
        let mut bins: Vec<(i32, u32)> =
            self.hist.iter().copied().filter(|e| (lo..=hi).contains(&(e.0 as i64))).collect();
        bins.sort_unstable();
        let total: u64 = bins.iter().map(|b| b.1 as u64).sum();
        if total == 0 {
            return None;
        }
        let half_n = total as f64 / 2.0;
        let mut below = 0.0;
        for &(b, n) in &bins {
            if below + n as f64 >= half_n {
                return Some((b as f64 + (half_n - below) / n as f64) * HIST_BIN);
            }
            below += n as f64;
        }
        None
    }

    /// Adds what another run saw of the same slab.
    fn merge(&mut self, o: &SlabStats) {
        self.near += o.near;
        self.all += o.all;
        self.near_s = (self.near_s.0.min(o.near_s.0), self.near_s.1.max(o.near_s.1));
        self.all_s = (self.all_s.0.min(o.all_s.0), self.all_s.1.max(o.all_s.1));
        for &(b, n) in &o.hist {
            self.add_bin(b, n);
        }
    }

    /// The height of the road surface near the reference line above the OpenDRIVE surface:
    /// the lowest dense layer of the histogram (the lowest bin whose three bins around it hold
    /// at least 1/[`LAYER_SHARE`] as many heights as the densest three: multipath below the
    /// surface is sparser, a car roof above it may be denser), as the mean of those bins' centres weighted by
    /// their counts. `None` with fewer than [`HIST_MIN`] heights.
    pub(crate) fn layer(&self) -> Option<f64> {
        let mut bins = self.hist.clone();
        bins.sort_unstable();
        let total: u64 = bins.iter().map(|b| b.1 as u64).sum();
        if total < HIST_MIN {
            return None;
        }
        let count = |b: i64| -> u64 {
            let Ok(b) = i32::try_from(b) else { return 0 };
            bins.binary_search_by_key(&b, |e| e.0).map_or(0, |i| bins[i].1 as u64)
        };
        let window = |b: i32| (b as i64 - 1..=b as i64 + 1).map(count).sum::<u64>();
        let peak = bins.iter().map(|e| window(e.0)).max()?;
        let low = bins.iter().map(|e| e.0).find(|&b| LAYER_SHARE * window(b) >= peak)?;
        let (mut sum, mut n) = (0.0, 0.0);
        for b in low as i64 - 1..=low as i64 + 1 {
            let c = count(b) as f64;
            sum += c * (b as f64 + 0.5) * HIST_BIN;
            n += c;
        }
        Some(sum / n)
    }
}

/// A layer is dense with at least 1/this of the densest one's heights.
const LAYER_SHARE: u64 = 4;

/// Heights a slab's histogram needs for its layer to count.
const HIST_MIN: u64 = 20;

/// Slabs either side whose layers the road surface's profile takes the median of.
const PROFILE_HALF: i64 = 2;

/// Half the width of the band of t (within the grid's width) whose heights find the road
/// surface, m.
pub(crate) const PROFILE_T: f64 = 2.0;

/// The road surface's height above the OpenDRIVE surface along s: a value per slab (at its
/// middle), interpolated linearly between; zero where the OpenDRIVE surface is right (within
/// a third of `max_height`), so that the band of `max_height` is the OpenDRIVE surface's and
/// the grid the same bits as without a search.
#[derive(Debug, Clone, Default, PartialEq)]
struct Profile {
    /// The first slab, and the value of each slab from it.
    k0: i64,
    off: Vec<f64>,
}

impl Profile {
    /// The profile of the slabs' histograms: each slab's layer, the median of those of the
    /// slabs within [`PROFILE_HALF`] (a car hiding the road in one slab, a sparse slab at the
    /// survey's end, leave it), zero when within `zero` of the OpenDRIVE surface; a slab
    /// without a layer near takes the nearest slab's value.
    fn of(stats: &BTreeMap<i64, SlabStats>, zero: f64) -> Profile {
        let (Some((&k0, _)), Some((&k1, _))) = (stats.first_key_value(), stats.last_key_value()) else {
            return Profile::default();
        };
        let n = (k1 - k0 + 1) as usize;
        let raw: Vec<Option<f64>> = (k0..=k1).map(|k| stats.get(&k).and_then(SlabStats::layer)).collect();
        let mut smooth: Vec<Option<f64>> = Vec::with_capacity(n);
        let mut near = Vec::new();
        for i in 0..n {
            near.clear();
            let (a, b) = (i.saturating_sub(PROFILE_HALF as usize), (i + PROFILE_HALF as usize + 1).min(n));
            near.extend(raw[a..b].iter().flatten().copied());
            smooth.push(if near.is_empty() {
                None
            } else {
                near.sort_unstable_by(f64::total_cmp);
                let m = near.len();
                Some(if m % 2 == 1 { near[m / 2] } else { 0.5 * (near[m / 2 - 1] + near[m / 2]) })
            });
        }
        // Slabs without a value: the nearest one's (the lower on a tie), zero without any.
        let mut next: Vec<Option<usize>> = vec![None; n];
        for i in (0..n).rev() {
            next[i] = if smooth[i].is_some() { Some(i) } else { next.get(i + 1).copied().flatten() };
        }
        let mut prev = None;
        let mut off = vec![0.0; n];
        for (i, o) in off.iter_mut().enumerate() {
            if smooth[i].is_some() {
                prev = Some(i);
            }
            let j = match (prev, next[i]) {
                (Some(p), Some(q)) => Some(if i - p <= q - i { p } else { q }),
                (p, q) => p.or(q),
            };
            *o = j.and_then(|j| smooth[j]).filter(|v| v.abs() > zero).unwrap_or(0.0);
        }
        Profile { k0, off }
    }

    /// The value of slab `k` (the first's or the last's beyond them).
    fn value(&self, k: i64) -> f64 {
        if self.off.is_empty() {
            return 0.0;
        }
        let i = (k - self.k0).clamp(0, self.off.len() as i64 - 1) as usize;
        self.off[i]
    }

    /// The road surface's height above the OpenDRIVE surface at `s`.
    fn at(&self, s: f64) -> f64 {
        let x = s / SLAB - 0.5;
        let k = floor(x);
        let f = x - k;
        let (a, b) = (self.value(k as i64), self.value(k as i64 + 1));
        if a == b {
            a
        } else {
            a + (b - a) * f
        }
    }

    /// Whether the profile is zero over slab `k` and its neighbours' margins.
    fn zero_around(&self, k: i64) -> bool {
        (k - 1..=k + 1).all(|j| self.value(j) == 0.0)
    }
}

/// The road, its frame and the grid's extent: what projecting points into candidates needs
/// (shared by the projection threads).
struct Project<'a> {
    road: RoadEval<'a>,
    /// The road's surface as cubic pieces (`None`: records out of order, searched instead).
    surface: Option<opendrive::SurfaceTable>,
    frame: RoadFrame,
    place: Placement,
    v_range: (f64, f64),
    s_range: Option<(f64, f64)>,
    margin: f64,
    max_height: f64,
    /// Candidates farther than `max_height` but within this of the OpenDRIVE surface are kept
    /// aside (`far`), m.
    search_height: f64,
}

impl Project<'_> {
    /// The surface candidates among a run of map points, in order, to `emit`: (s, t) from the
    /// reference line (the first point looked up, the others from their predecessor), kept when
    /// within the grid's margins and `max_height` of the OpenDRIVE surface, or (`far`: true)
    /// within `search_height` of it.
    fn candidates(&self, x: &[f64], y: &[f64], z: &[f64], mut emit: impl FnMut(Candidate, bool)) {
        let margin = self.margin;
        let (vr, vl) = (self.v_range.0 - margin, self.v_range.1 + margin);
        let (s_lo, s_hi) = self.s_range.map_or((f64::NEG_INFINITY, f64::INFINITY), |(a, b)| (a - margin, b + margin));
        let mut last = None;
        let mut profile = self.road.profile_cursor();
        let mut piece = 0;
        for i in 0..x.len() {
            let [fx, fy, fz] = self.place.to_file([x[i], y[i], z[i]]);
            let Some((s, t)) = self.frame.project_within(&mut last, fx, fy, (vr, vl)) else { continue };
            if t < vr || t > vl || s < s_lo || s > s_hi {
                continue;
            }
            let (z, cross) = match &self.surface {
                Some(table) => table.at_from(&mut piece, s),
                None => profile.surface(s),
            };
            let h = fz - (z + t * cross);
            if h.abs() <= self.max_height {
                emit(Candidate { s, t: t as f32, h: h as f32 }, false);
            } else if h.abs() <= self.search_height {
                emit(Candidate { s, t: t as f32, h: h as f32 }, true);
            }
        }
    }
}

/// The slab of row `row` of a grid starting at s `s0` with cells of `cell` metres.
fn slab_of_row(s0: f64, cell: f64, row: usize) -> f64 {
    ((s0 + row as f64 * cell) / SLAB + 1e-9).floor()
}

/// Rows (nodes along u) of a grid over `s_range` with cells of `cell` metres.
fn grid_rows(s_range: (f64, f64), cell: f64) -> usize {
    ((s_range.1 - s_range.0) / cell + 1e-9).floor() as usize + 1
}

/// Rows a tile of `tile` metres advances by.
fn tile_rows(tile: f64, cell: f64) -> usize {
    ((tile / cell).round() as usize).max(1)
}

/// Rows of the longest along-track gap filled.
fn gap_rows(o: &SurfaceOptions) -> usize {
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
pub fn grid_extent(s_seen: Option<(f64, f64)>, cell: f64) -> Result<(f64, f64), String> {
    let (lo, hi) = s_seen.ok_or("no road-surface points within the grid (check the axis, the road id and the CRS; points count within crg's --max-height, 0.3 m by default, of the axis' elevation and superelevation)")?;
    Ok(((lo / cell).floor() * cell, (hi / cell).ceil() * cell))
}

/// The grid over `s_range` (of the collecting road, whole cells from s 0) clipped to `cut`, the
/// part of that road a retargeted builder grids against: inward to whole cells. Units of a
/// build clip the grid's extent they pass as `s_range` so; clipping twice changes nothing.
pub fn clip_grid(s_range: (f64, f64), cut: (f64, f64), cell: f64) -> Result<(f64, f64), String> {
    let lo = if s_range.0 < cut.0 { (cut.0 / cell - 1e-9).ceil() * cell } else { s_range.0 };
    let hi = if s_range.1 > cut.1 { (cut.1 / cell + 1e-9).floor() * cell } else { s_range.1 };
    if hi - lo < cell {
        return Err(format!(
            "the grid over s {}..{} lies outside the road's part s {}..{}",
            s_range.0, s_range.1, cut.0, cut.1
        ));
    }
    Ok((lo, hi))
}

/// The road's extent across: the outermost lane borders over its length.
fn lane_extent(road: &RoadEval) -> (f64, f64) {
    let n = road.length().ceil().max(1.0) as usize;
    let mut ext = (0.0f64, 0.0f64);
    for i in 0..=n {
        let s = (i as f64).min(road.length());
        for (_, t) in road.lane_borders(s) {
            ext = (ext.0.min(t), ext.1.max(t));
        }
    }
    ext
}

/// Convenience: grid `points` (map x, y, z) on `road` in one call.
pub fn grid_surface(
    road: &opendrive::Road,
    offset: Option<HeaderOffset>,
    points: &[[f64; 3]],
    opts: SurfaceOptions,
) -> Result<SurfaceGrid, String> {
    let bbox = points.iter().fold([f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY], |b, p| {
        [b[0].min(p[0]), b[1].min(p[1]), b[2].max(p[0]), b[3].max(p[1])]
    });
    let points_box = opts.points_box.or(Some(bbox).filter(|b| b[0] <= b[2]));
    let mut b = SurfaceBuilder::new(road, offset, SurfaceOptions { points_box, ..opts })?;
    for chunk in points.chunks(1 << 16) {
        let x: Vec<f64> = chunk.iter().map(|p| p[0]).collect();
        let y: Vec<f64> = chunk.iter().map(|p| p[1]).collect();
        let z: Vec<f64> = chunk.iter().map(|p| p[2]).collect();
        b.add(&x, &y, &z)?;
    }
    b.finish()
}

/// The grid's nodes.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    s0: f64,
    s1: f64,
    cell: f64,
    nu: usize,
    vr: f64,
    nv: usize,
}

/// The rows a builder grids, and the tiles it writes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Window {
    /// Rows gridded: the tiles' and, for the gap filling, `max_gap` and a row either side.
    rows: (usize, usize),
    /// Rows counted in the report (the tiles', without the next tile's first row).
    count: (usize, usize),
    /// Tiles written, and tiles in the whole grid.
    tiles: (usize, usize, usize),
    /// Rows per tile.
    per: usize,
}

impl Window {
    /// The window of tiles `tiles` of `tile` metres of the grid over `s_range` (all of them
    /// when `tiles` is (0, usize::MAX)).
    fn of(s_range: (f64, f64), o: &SurfaceOptions, tile: f64, tiles: (usize, usize)) -> Window {
        let cell = o.cell;
        let (nu, per) = (grid_rows(s_range, cell), tile_rows(tile, cell));
        let n_tiles = tile_count(s_range, cell, tile);
        let end = tiles.1.min(n_tiles);
        let first = tiles.0.min(end);
        if first == end {
            return Window { rows: (0, 0), count: (0, 0), tiles: (first, end, n_tiles), per };
        }
        let max_cells = gap_rows(o);
        let count = (first * per, if end == n_tiles { nu } else { end * per });
        let rows = ((first * per).saturating_sub(max_cells + 1), (end * per + max_cells + 2).min(nu));
        Window { rows, count, tiles: (first, end, n_tiles), per }
    }
}

/// Fills NaN runs along u of at most `max_cells` nodes between two heights, linearly, as rows
/// stream through: a row leaves once `max_cells` later rows are in.
#[derive(Debug)]
struct GapFiller {
    max_cells: usize,
    pending: VecDeque<Vec<f32>>,
    /// Index of the first pending row.
    first: usize,
    filled: usize,
    /// Rows whose fills are counted.
    count: (usize, usize),
}

impl GapFiller {
    /// A filler of rows from `w.rows.0` on, counting the fills of rows in `w.count`.
    fn new(max_cells: usize, w: Window) -> GapFiller {
        GapFiller { max_cells, pending: VecDeque::new(), first: w.rows.0, filled: 0, count: w.count }
    }

    /// Takes row `first + pending.len()`.
    fn push(&mut self, row: Vec<f32>) {
        let iu = self.first + self.pending.len();
        // A gap ends in a column where the last row has no height and this one has. Most rows
        // end none: one pass over the two rows, without branches, finds that out.
        let any = |last: &[f32]| last.iter().zip(&row).fold(false, |any, (l, v)| any | (l.is_nan() & !v.is_nan()));
        if self.pending.back().is_some_and(|last| any(last)) {
            for (iv, &v) in row.iter().enumerate() {
                if v.is_nan() || !self.pending.back().is_some_and(|last| last[iv].is_nan()) {
                    continue;
                }
                // The gap's start: the last pending row with a height here (none: the gap
                // began before them, and is too long or at the start).
                let Some(l) = (self.first..iu).rev().find(|&k| !self.pending[k - self.first][iv].is_nan()) else {
                    continue;
                };
                let (a, gap) = (self.pending[l - self.first][iv], iu - l);
                if gap > self.max_cells {
                    continue;
                }
                for k in l + 1..iu {
                    let f = (k - l) as f32 / gap as f32;
                    self.pending[k - self.first][iv] = a + (v - a) * f;
                    self.filled += usize::from(k >= self.count.0 && k < self.count.1);
                }
            }
        }
        self.pending.push_back(row);
    }

    /// The oldest row, once it can no longer change (or `flush`).
    fn pop(&mut self, flush: bool) -> Option<Vec<f32>> {
        if self.pending.len() > self.max_cells || (flush && !self.pending.is_empty()) {
            self.first += 1;
            self.pending.pop_front()
        } else {
            None
        }
    }
}

impl Drop for RowStream<'_> {
    fn drop(&mut self) {
        // Stops the gridding thread (it finishes the slabs in flight) and waits for it, so that
        // its spill files are gone when the rows are, on an error too.
        self.gridded = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Largest difference between a CRG node's chord heading and the road's mean heading over it,
/// rad: on a smooth line the chord runs along the mean of its end tangents (exactly on an arc,
/// to micro-radians on a clothoid); a road that jumps 0.1 mm across a 1 cm chord turns it by
/// 0.01 rad.
const MAX_CHORD_TURN: f64 = 1e-3;

/// An angle in (-pi, pi].
fn wrap_angle(a: f64) -> f64 {
    let t = std::f64::consts::TAU;
    a - t * ((a + std::f64::consts::PI) / t).floor()
}

/// Rows of z in order: slabs gridded as the rows reach them, gaps filled, heights to z.
struct RowStream<'a> {
    progress: Option<Progress<'a>>,
    road: RoadEval<'a>,
    target: Option<RoadEval<'a>>,
    /// The collecting road's s minus the target's (the tiles' u).
    shift: f64,
    opts: SurfaceOptions,
    g: Geometry,
    /// Gridded slabs, in order, from the gridding thread.
    gridded: Option<std::sync::mpsc::Receiver<Result<Gridded, String>>>,
    /// The gridding thread, joined when the rows are dropped (it removes the spill files).
    thread: Option<std::thread::JoinHandle<()>>,
    /// Heights of the rows of the current slab, and its row range.
    block: Vec<f32>,
    block_rows: (usize, usize),
    next_est: usize,
    fill: GapFiller,
    emitted: usize,
    window: Window,
    column: Vec<usize>,
    /// Nodes with a height between the outermost lane borders of the road retargeted to, and
    /// nodes there in all (see [`SurfaceGrid::lane_covered`]).
    lanes: (usize, usize),
    map: CoverageMap,
    /// v of each column, m.
    v_at: Vec<f64>,
    estimated: usize,
    kept: u64,
    offered: u64,
    near: u64,
    /// Absolute heights: the datum they are written above (REFERENCE_LINE_START_Z), the road's
    /// elevation at the grid's start to the metre, so that single precision keeps micrometres
    /// whatever the height above sea level. Residual heights: 0.
    datum: f64,
}

impl<'a> RowStream<'a> {
    /// The rows of what `b` collected; `tile`: the tile length of `write_tiles` (None: one
    /// grid).
    fn new(mut b: SurfaceBuilder<'a>, tile: Option<f64>) -> Result<RowStream<'a>, String> {
        let o = b.opts.clone();
        let cell = o.cell;
        if !(cell > 0.0 && cell.is_finite()) {
            return Err(format!("cell size {cell}: must be a positive number of metres"));
        }
        let profile = b.profile();
        let seen = b.seen_with(&profile);
        let (s0, s1) = match b.proj.s_range {
            Some(r) => r,
            None if matches!(o.unit, Some(SurfaceUnit::Tiles { .. })) => {
                return Err("a unit of tiles needs the whole grid's s range".into());
            }
            None => grid_extent(seen.s_range, cell)?,
        };
        let (s0, s1) = match b.cut {
            Some(cut) => clip_grid((s0, s1), cut, cell)?,
            None => (s0, s1),
        };
        let shift = b.cut.map_or(0.0, |c| c.0);
        let (vr, vl) = ((b.proj.v_range.0 / cell).floor() * cell, (b.proj.v_range.1 / cell).ceil() * cell);
        let nu = grid_rows((s0, s1), cell);
        let nv = ((vl - vr) / cell).round() as usize + 1;
        if nu < 2 || nv < 2 {
            return Err(format!("a grid of {nu} x {nv} nodes: the s range {s0}..{s1} or the width is too small"));
        }
        if nv > 100_000 {
            return Err(format!("a grid {nv} nodes wide: check --width-left/--width-right and --cell"));
        }
        let max_cells = gap_rows(&o);
        let g = Geometry { s0, s1, cell, nu, vr, nv };
        let window = match (o.unit, tile) {
            (Some(SurfaceUnit::Count(..)), _) => return Err("a counting pass grids nothing".into()),
            (Some(SurfaceUnit::Tiles { tile, first, end }), _) => Window::of((s0, s1), &o, tile, (first, end)),
            (None, Some(tile)) => Window::of((s0, s1), &o, tile, (0, usize::MAX)),
            (None, None) => Window { rows: (0, nu), count: (0, nu), tiles: (0, 1, 1), per: nu },
        };
        // Gridding runs ahead of the rows' consumer by a couple of slabs.
        let (tx, gridded) = std::sync::mpsc::sync_channel(2);
        let (slabs, go, gp) = (b.slabs.take_slabs()?, o.clone(), profile.clone());
        let thread = std::thread::Builder::new()
            .name("roadscan-grid".into())
            .spawn(move || grid_slabs(slabs, g, &go, &gp, window, &tx))
            .map_err(|e| format!("cannot start the gridding thread: {e}"))?;
        // Where the road surface is not the OpenDRIVE surface, the datum is the road surface's.
        let datum = match o.z {
            ZMode::Absolute => (b.proj.road.elevation(g.s0) + profile.at(g.s0)).round(),
            ZMode::Residual => 0.0,
        };
        Ok(RowStream {
            progress: b.progress,
            road: b.proj.road,
            target: b.target,
            shift,
            g,
            gridded: Some(gridded),
            thread: Some(thread),
            block: Vec::new(),
            block_rows: (0, 0),
            next_est: window.rows.0,
            fill: GapFiller::new(max_cells, window),
            emitted: window.rows.0,
            window,
            column: vec![0; nv],
            lanes: (0, 0),
            map: CoverageMap::new(nv),
            v_at: (0..nv).map(|iv| g.vr + iv as f64 * g.cell).collect(),
            estimated: 0,
            kept: 0,
            offered: b.offered,
            near: seen.near,
            datum,
            opts: o,
        })
    }

    /// The next row of z (NaN where there is no height).
    fn next(&mut self, out: &mut [f32]) -> Result<(), String> {
        let g = self.g;
        let stop = self.window.rows.1;
        let h = loop {
            if let Some(r) = self.fill.pop(self.next_est == stop) {
                break r;
            }
            if self.next_est == stop {
                return Err("read past the last row".into());
            }
            let iu = self.next_est;
            if iu >= self.block_rows.1 {
                let d = self.gridded.as_ref().and_then(|r| r.recv().ok());
                let d = d.ok_or_else(|| "the gridding thread failed".to_string())??;
                if d.rows.0 != iu {
                    return Err(format!("gridded rows {:?}, expected from {iu}", d.rows));
                }
                self.kept += d.kept;
                self.block = d.z;
                self.block_rows = d.rows;
            }
            let at = (iu - self.block_rows.0) * g.nv;
            let row = self.block[at..at + g.nv].to_vec();
            if self.counted(iu) {
                self.estimated += row.iter().filter(|v| !v.is_nan()).count();
            }
            self.fill.push(row);
            self.next_est += 1;
        };
        let iu = self.emitted;
        self.emitted += 1;
        let (r0, r1) = self.window.rows;
        if let Some(p) = self.progress.as_mut() {
            if self.emitted.is_multiple_of(256) || self.emitted == r1 {
                p(self.emitted - r0, r1 - r0);
            }
        }
        let counted = self.counted(iu);
        let s = g.s0 + iu as f64 * g.cell;
        // Candidates hold heights above the collecting road's surface.
        let (e, slope) = match (self.opts.z, &self.target) {
            (ZMode::Absolute, _) => (self.road.elevation(s) - self.datum, self.road.planar_cross_slope(s)),
            (ZMode::Residual, None) => (0.0, 0.0),
            (ZMode::Residual, Some(t)) => {
                let ts = s - self.shift;
                (self.road.elevation(s) - t.elevation(ts), self.road.planar_cross_slope(s) - t.planar_cross_slope(ts))
            }
        };
        for ((o, hv), v) in out.iter_mut().zip(&h).zip(&self.v_at) {
            // A select, not a branch: the loop runs four columns at a time.
            let z = (e + v * slope + *hv as f64) as f32;
            *o = if hv.is_nan() { f32::NAN } else { z };
        }
        if counted {
            self.column.iter_mut().zip(&h).for_each(|(c, hv)| *c += usize::from(!hv.is_nan()));
            self.map.add(&h);
            if let Some((lo, hi)) = self.target.as_ref().and_then(|t| lane_band(t, s - self.shift)) {
                for (hv, v) in h.iter().zip(&self.v_at) {
                    if *v >= lo && *v <= hi {
                        self.lanes = (self.lanes.0 + usize::from(!hv.is_nan()), self.lanes.1 + 1);
                    }
                }
            }
        }
        Ok(())
    }

    /// An error when the grid `g` of these rows came out nearly empty (not for a unit: its
    /// build checks the whole grid).
    fn check(&self, g: &SurfaceGrid) -> Result<(), String> {
        let o = &self.opts;
        let all = self.column.iter().sum::<usize>();
        let nodes = self.g.nu * self.g.nv;
        // The surveyed share alone is fooled by a grid of a few columns where something (a car's
        // roof) was found: the whole grid must be covered a little too.
        let whole = all as f64 / nodes.max(1) as f64;
        if o.unit.is_none() && (g.coverage < o.min_coverage || whole < 0.5 * o.min_coverage) {
            let e =
                LowCoverage { coverage: g.coverage, grid: (all, nodes), min: o.min_coverage, max_height: o.max_height };
            return Err(e.to_string());
        }
        Ok(())
    }

    /// Whether row `iu` counts in the report (is the unit's own).
    fn counted(&self, iu: usize) -> bool {
        iu >= self.window.count.0 && iu < self.window.count.1
    }

    /// The grid of rows first..first + n on the reference line, with heights `z`.
    fn tile_grid(&self, first: usize, n: usize, z: Vec<f32>) -> Crg {
        let g = &self.g;
        let s_at = |i: usize| g.s0 + (first + i) as f64 * g.cell;
        let mut phi = Vec::with_capacity(n);
        let mut prev = self.road.pose(s_at(0));
        phi.push(prev.hdg);
        for i in 1..n {
            let p = self.road.pose(s_at(i));
            // The chord through the road's points, unless the road jumps between them (a gap
            // between geometry records, tenths of a millimetre in many maps): there the mean
            // heading, so the CRG's line bends no sharper than the road does.
            let chord = (p.y - prev.y).atan2(p.x - prev.x);
            let mean = prev.hdg + 0.5 * wrap_angle(p.hdg - prev.hdg);
            phi.push(if wrap_angle(chord - mean).abs() < MAX_CHORD_TURN { chord } else { mean });
            prev = p;
        }
        let start = self.road.pose(s_at(0));
        // u: the target road's s (the same poses, `shift` earlier).
        let u_at = |i: usize| s_at(i) - self.shift;
        let mut crg =
            Crg::new_grid(u_at(0), g.cell, n, g.vr, g.cell, g.nv, (start.x, start.y, start.hdg), Some(phi), z);
        let o = &self.opts;
        if o.z == ZMode::Absolute {
            crg.road.start_z = Some(self.datum);
        }
        crg.comment = vec![
            format!("roadscan crg: road {} s {}..{}, cell {} m", self.road.road().id, u_at(0), u_at(n - 1), g.cell),
            format!(
                "z {}; estimator {:?}, radius {} m; along-track gaps up to {} m filled",
                match o.z {
                    ZMode::Absolute => "absolute (OpenDRIVE file frame: map minus the header offset; the grid's heights are above REFERENCE_LINE_START_Z)",
                    ZMode::Residual => "residual (above the OpenDRIVE surface)",
                },
                o.estimator,
                o.radius,
                o.max_gap
            ),
        ];
        crg
    }

    fn report(&self, crg: Crg) -> SurfaceGrid {
        let g = &self.g;
        let covered = surveyed_coverage(&self.column, self.window.count.1 - self.window.count.0);
        SurfaceGrid {
            crg,
            covered,
            lane_covered: self.lanes,
            coverage: coverage_of(self.lanes, covered),
            column_coverage: self.column.iter().map(|&c| c as f64 / g.nu as f64).collect(),
            column_covered: (self.column.clone(), self.window.count.1 - self.window.count.0),
            estimated: self.estimated,
            filled: self.fill.filled,
            points: (self.offered, self.near, self.kept),
            s_range: (g.s0 - self.shift, g.s1 - self.shift),
            coverage_map: {
                let mut m = self.map.clone();
                m.flush(g.nv);
                m
            },
        }
    }
}

/// One gridded slab: its rows, their heights, and how many candidates it kept.
#[derive(Debug)]
struct Gridded {
    rows: (usize, usize),
    z: Vec<f32>,
    kept: u64,
}

/// The gridding thread: grids the slabs in row order, a few at once on the shared thread pool
/// (each slab's preparation on one thread, its rows on any; a new slab starts as soon as one
/// is done), and sends them to `tx` in order; stops when the receiver is gone or a slab failed.
/// Slabs the rows skip (before the grid's start) are dropped.
fn grid_slabs(
    mut slabs: Slabs,
    g: Geometry,
    o: &SurfaceOptions,
    profile: &Profile,
    w: Window,
    tx: &std::sync::mpsc::SyncSender<Result<Gridded, String>>,
) {
    // Enough slabs in flight that one's serial preparation overlaps another's rows.
    let at_once = crate::par::threads() + 1;
    let (done_tx, done_rx) = std::sync::mpsc::channel::<(usize, Result<Gridded, String>)>();
    let g = &g;
    // This thread hands out the slabs and puts the results in order; the pool grids them.
    rayon::in_place_scope(|scope| {
        let mut iu = w.rows.0;
        let (mut started, mut sent) = (0usize, 0usize);
        let mut done = BTreeMap::new();
        let mut stop = false;
        loop {
            // At most `at_once` slabs gridded at a time, and as many more waiting for their turn
            // to be sent.
            while !stop && started - sent - done.len() < at_once && started - sent < 2 * at_once && iu < w.rows.1 {
                let k = slab_of_row(g.s0, g.cell, iu);
                let end = slab_first_row(g, k + 1.0).clamp(iu + 1, w.rows.1);
                let (slab, rows, done_tx) = (slabs.take(k as i64), (iu, end), done_tx.clone());
                let far = slabs.take(far_key(k as i64));
                let index = started;
                scope.spawn(move |_| {
                    let d = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        // Where the road surface is the OpenDRIVE surface, its near candidates
                        // (as without a search); else those within `max_height` of the road
                        // surface found.
                        let cands = if profile.zero_around(k as i64) {
                            far.discard();
                            slab.load()?
                        } else {
                            let (near, far) = (slab.load()?, far.load()?);
                            let at = |p: &SlabPoint| profile.at(k * SLAB + p.ds as f64);
                            near.into_iter().chain(far).filter(|p| (p.h as f64 - at(p)).abs() <= o.max_height).collect()
                        };
                        let (z, kept) = estimate_rows(cands, g, rows, o, w.count);
                        Ok(Gridded { rows, z, kept })
                    }));
                    let _ = done_tx.send((index, d.unwrap_or_else(|_| Err("a gridding thread failed".to_string()))));
                });
                started += 1;
                iu = end;
            }
            if sent + done.len() == started {
                break;
            }
            let Ok((index, d)) = done_rx.recv() else { break };
            done.insert(index, d);
            while let Some(d) = done.remove(&sent) {
                sent += 1;
                let failed = d.is_err();
                if !stop && (tx.send(d).is_err() || failed) {
                    // Let the slabs in flight finish (the scope waits for them), start no more.
                    stop = true;
                }
            }
        }
    });
}

/// Rows of nodes beyond a slab's own whose points its nodes' discs reach (with a row to
/// spare): a node's fit pools the points of the nodes within `reach` rows (twice that where
/// sparse; [`disc_half`] needs fewer); a block's, those
/// within R + one cell of its centre (2R + one cell where sparse), and a block row's centre
/// lies up to a row outside the rows it covers.
fn pad_rows(o: &SurfaceOptions) -> usize {
    let reach = (o.radius / o.cell).ceil() as usize;
    let block_half = ((o.radius + o.cell) / o.cell + 0.5).ceil() as usize;
    let sparse_r = 2.0 * o.radius + o.cell;
    (2 * reach + 1).max(disc_half(sparse_r, o.cell) as usize + 1).max(block_half + BLOCK / 2)
}

/// Heights of rows `rows.0..rows.1` of the grid from the candidates of their slab (with the
/// neighbours' margins; s from the slab's start); and how many candidates the low envelope
/// kept in those of the rows within `count`.
fn estimate_rows(
    cands: Vec<SlabPoint>,
    g: &Geometry,
    rows: (usize, usize),
    o: &SurfaceOptions,
    count: (usize, usize),
) -> (Vec<f32>, u64) {
    let (cell, nv) = (g.cell, g.nv);
    // A block's fit pools the points within R + one cell of its centre (2R + one cell where
    // sparse). The nodes its sums visit follow from that radius in f64: single precision
    // rounds 3.5 cells up, which would add a ring of nodes (a third more work).
    let block_radius = o.radius + cell;
    let block_r = block_radius as f32;
    let block_half = ((o.radius + cell) / cell + 0.5).ceil() as isize;
    let sparse_r = 2.0 * o.radius + cell;
    let (block_disc, sparse_disc) = (DiscSize::new(block_radius, cell), DiscSize::new(sparse_r, cell));
    let (node_disc, wide_disc) = (DiscSize::new(o.radius, cell), DiscSize::new(2.0 * o.radius, cell));
    let pad = pad_rows(o);
    // Local rows lu = iu - lo cover the whole slab's rows (whatever part of it `rows` is: a work
    // unit may start or end inside a slab) and the padding the windows reach: what is kept
    // and fitted depends on the slab alone.
    let k = slab_of_row(g.s0, cell, rows.0);
    let slab = (slab_first_row(g, k).min(rows.0), slab_first_row(g, k + 1.0).max(rows.1));
    let lo = slab.0.saturating_sub(pad);
    let hi = (slab.1 + pad).min(g.nu);
    let n_local = hi - lo;
    // Points sorted by the node they are nearest (CSR over the local rows): x from the point's
    // row of nodes, y from column 0, height. Points off the grid's columns reach no node's
    // disc.
    let mut nodes: Vec<u32> = Vec::with_capacity(cands.len());
    let mut items: Vec<[f32; 3]> = Vec::with_capacity(cands.len());
    for p in &cands {
        let s = k * SLAB + p.ds as f64;
        let iu = round_index((s - g.s0) / cell);
        let iv = round_index((p.t as f64 - g.vr) / cell);
        if iu < lo as i64 || iu >= hi as i64 || iv < 0 || iv >= nv as i64 {
            continue;
        }
        let (iu, iv) = (iu as usize, iv as usize);
        let du = (s - (g.s0 + iu as f64 * cell)) as f32;
        let dv = (p.t as f64 - (g.vr + iv as f64 * cell)) as f32;
        nodes.push(((iu - lo) * nv + iv) as u32);
        items.push([du, dv + (iv as f64 * cell) as f32, p.h]);
    }
    drop(cands);
    let (mut start, mut pts) = bucket_sort(&items, &nodes, n_local * nv);
    drop((items, nodes));
    low_envelope(&mut start, &mut pts, &envelope_bands(g, lo, hi), Envelope { nv, cell, layer: o.layer });
    // Kept: the candidates of the rows gridded here that are counted.
    let k0 = rows.0.max(count.0).min(rows.1);
    let k1 = rows.1.min(count.1).max(k0);
    let kept = (start[(k1 - lo) * nv] - start[(k0 - lo) * nv]) as u64;

    // Node estimates, rows in parallel (each node on its own: same bits on any threads).
    let n_rows = rows.1 - rows.0;
    let mut h = vec![f32::NAN; n_rows * nv];
    // Runs of rows for whichever thread is free, split where block rows start (a block row's
    // planes are fitted once).
    let mut runs: Vec<(usize, &mut [f32])> = Vec::new();
    let mut rest = h.as_mut_slice();
    let mut first = rows.0;
    while first < rows.1 {
        let end = ((first / ROW_RUN + 1) * ROW_RUN).min(rows.1);
        let (run, tail) = rest.split_at_mut((end - first) * nv);
        runs.push((first, run));
        rest = tail;
        first = end;
    }
    let mut cols = Columns::default();
    cols.fill(&pts);
    drop(pts);
    let local = Local { cols: &cols, start: &start, nv, n_local, cell };
    {
        use rayon::prelude::*;
        runs.into_par_iter().for_each(|(first, chunk)| {
            let (start, local) = (&start, &local);
            let (mut node_cols, mut wide_cols) = (Columns::default(), Columns::default());
            let mut wide: Vec<[f32; 3]> = Vec::new();
            let mut scratch = Disc::default();
            let mut sums: Vec<Moments> = Vec::new();
            let r = o.radius as f32;
            let scale = o.robust_scale as f32;
            // Block planes of the current block row (none yet).
            let mut block_row = usize::MAX;
            // Whether the last node's own fit needed the disc of 2R.
            let mut wide_last = false;
            let mut blocks: Vec<Option<[f64; 3]>> = vec![None; nv.div_ceil(BLOCK)];
            for (k, row) in chunk.chunks_mut(nv).enumerate() {
                let lu = first + k - lo;
                if o.estimator == Estimator::Median {
                    for (iv, out) in row.iter_mut().enumerate() {
                        let node = lu * nv + iv;
                        let mut zs: Vec<f32> = local.cols.h[start[node] as usize..start[node + 1] as usize].to_vec();
                        *out = median(&mut zs).unwrap_or(f32::NAN);
                    }
                    continue;
                }
                // Smooth surface: the plane of the node's block. Otherwise the node's own fits
                // on the points of its disc of R; where that holds too few points for a fit
                // (sparse surveys, far from the scanner), of 2R.
                let iu = lu + lo;
                if iu / BLOCK != block_row {
                    block_row = iu / BLOCK;
                    let cu = (block_row * BLOCK + BLOCK / 2) as isize - lo as isize;
                    local.block_moments(cu, block_disc, &mut sums);
                    for (bv, plane) in blocks.iter_mut().enumerate() {
                        // The least-squares plane of the block's disc when its residuals are
                        // the noise's; with too few points for it (sparse surveys), that of
                        // the disc of 2R + one cell, where the block's nodes would fit their
                        // own of 2R; otherwise its robust plane when that is smooth, tried
                        // where the block is sparse or its least-squares plane is level with
                        // residuals near the noise's (a step or joint in the disc leaves larger
                        // ones or tilts the plane, and its robust fit rejects too many points
                        // to be smooth; a steep smooth block with an outlier goes node by node).
                        let cv = (bv * BLOCK + BLOCK / 2) as isize;
                        let sparse = sums[bv].count() < LS_MIN_POINTS;
                        let ls = sums[bv].least_squares(block_r as f64, o.robust_scale);
                        *plane = ls
                            .filter(|ls| ls.within(SMOOTH_SIGMA * o.robust_scale))
                            .map(|ls| ls.plane)
                            .or_else(|| {
                                sparse.then(|| {
                                    local.disc_moments(cu, cv, sparse_disc).smooth_plane(sparse_r, o.robust_scale)
                                })?
                            })
                            .or_else(|| {
                                let near = ls.is_some_and(|ls| ls.within(NEAR_SMOOTH_SIGMA * o.robust_scale));
                                if !(sparse || near) {
                                    return None;
                                }
                                // Only the disc's points count, in the fit and in where it
                                // starts (`nearest`).
                                local.gather(cu, cv, block_half, block_r, &mut wide);
                                let (w, radius, start) = nearest(&mut wide, block_r, 96)?;
                                scratch.pack(w, start as f32);
                                let f = scratch.fit(radius, scale, start)?;
                                f.smooth(scale).then_some([f.h, f.bx, f.by])
                            });
                    }
                }
                if o.estimator == Estimator::Quadratic {
                    // The disc of R + one cell (a block's): a quadratic needs more points than a
                    // plane, and its centre height has no curvature bias to grow with R.
                    for (iv, out) in row.iter_mut().enumerate() {
                        local.gather_columns(lu as isize, iv as isize, block_disc, &mut node_cols);
                        *out = quadratic_height(node_cols.points(), block_radius)
                            .map(|h| h as f32)
                            .or_else(|| near_median(node_cols.points()))
                            .unwrap_or(f32::NAN);
                    }
                    continue;
                }
                let du = (iu % BLOCK) as f64 - (BLOCK / 2) as f64;
                for (bv, outs) in row.chunks_mut(BLOCK).enumerate() {
                    if let Some(p) = blocks[bv] {
                        for (out, dv) in outs.iter_mut().zip(BLOCK_OFFSETS) {
                            *out = (p[0] + (p[1] * du + p[2] * dv) * cell) as f32;
                        }
                        continue;
                    }
                    for (j, out) in outs.iter_mut().enumerate() {
                        let iv = bv * BLOCK + j;
                        // The disc of R, and that of 2R only where it holds too few points; or
                        // 2R at once where the last node needed it (sparse points), the disc of
                        // R from it the same (in the same order: row by row, node by node).
                        let (lu, iv) = (lu as isize, iv as isize);
                        let mut radius = r;
                        if wide_last {
                            local.gather_columns(lu, iv, wide_disc, &mut wide_cols);
                            node_cols.clear();
                            for p in wide_cols.points().filter(|p| within(p, r)) {
                                node_cols.push(p);
                            }
                        } else {
                            local.gather_columns(lu, iv, node_disc, &mut node_cols);
                        }
                        if node_cols.len() < 6 {
                            radius = 2.0 * r;
                            if !wide_last {
                                local.gather_columns(lu, iv, wide_disc, &mut wide_cols);
                            }
                            std::mem::swap(&mut node_cols, &mut wide_cols);
                        }
                        wide_last = radius > r;
                        // The plane where the disc is smooth, else the median of the six nearest.
                        let est = match node_cols.moments(radius as f64).smooth_plane(radius as f64, o.robust_scale) {
                            Some(p) => Some(p[0] as f32),
                            None => near_median(node_cols.points()),
                        };
                        *out = est.unwrap_or(f32::NAN);
                    }
                }
            }
        });
    }
    (h, kept)
}

/// Weighted sums over a set of points, relative to a centre: the plane sums of
/// [`add_plane_sums`], then Σwhh and the count (a weighted least-squares plane's normal
/// equations, its residual sum of squares and the points' effective number), heights relative
/// to `h0`.
#[derive(Debug, Clone, Copy, Default)]
struct Moments {
    sums: [f64; 12],
    h0: f64,
}

/// Points by coordinate (heights as they are): a slab's, x from their row of nodes and y from
/// column 0, or a node's disc, relative to the node.
#[derive(Debug, Default)]
struct Columns {
    x: Vec<f32>,
    y: Vec<f32>,
    h: Vec<f32>,
}

impl Columns {
    /// The points of `w`, then three far outside any disc (see [`DiscSums::add`]).
    fn fill(&mut self, w: &[[f32; 3]]) {
        for c in [&mut self.x, &mut self.y, &mut self.h] {
            c.clear();
            c.reserve(w.len() + 3);
        }
        self.x.extend(w.iter().map(|p| p[0]));
        self.y.extend(w.iter().map(|p| p[1]));
        self.h.extend(w.iter().map(|p| p[2]));
        self.pad();
    }

    fn clear(&mut self) {
        self.x.clear();
        self.y.clear();
        self.h.clear();
    }

    fn len(&self) -> usize {
        self.x.len()
    }

    fn push(&mut self, [x, y, h]: [f32; 3]) {
        self.x.push(x);
        self.y.push(y);
        self.h.push(h);
    }

    /// The points as `[x, y, h]`.
    fn points(&self) -> impl Iterator<Item = [f32; 3]> + '_ {
        self.x.iter().zip(&self.y).zip(&self.h).map(|((&x, &y), &h)| [x, y, h])
    }

    /// The moments of the points within `radius` of the centre, with the spatial weights of
    /// [`robust_plane`].
    fn moments(&mut self, radius: f64) -> Moments {
        let n = self.len();
        self.pad();
        let mut sums = DiscSums::new(radius);
        sums.add([&self.x, &self.y, &self.h], 0..n, 0.0, 0.0);
        for c in [&mut self.x, &mut self.y, &mut self.h] {
            c.truncate(n);
        }
        sums.moments()
    }

    /// Three points far outside any disc after the others (see [`DiscSums::add`]).
    fn pad(&mut self) {
        for _ in 0..3 {
            self.x.push(1e3);
            self.y.push(1e3);
            self.h.push(0.0);
        }
    }
}

/// The sums of [`Moments`] as they run, four points at a time, over runs of points given by
/// coordinate.
struct DiscSums {
    acc: [f32x4; 12],
    inv_r2: f32x4,
    /// The height the sums' heights are relative to: the first point's (so that single
    /// precision keeps micrometres).
    h0: Option<f32>,
}

impl DiscSums {
    /// No points yet, for the disc of `radius` (with the spatial weights of [`robust_plane`]).
    fn new(radius: f64) -> DiscSums {
        DiscSums { acc: [f32x4::ZERO; 12], inv_r2: f32x4::splat((1.0 / (radius * radius)) as f32), h0: None }
    }

    /// Adds points `run` of the columns `x`, `y`, `h`, offset by (`dx`, `dy`) from the disc's
    /// centre; the columns hold three more values after the run (any finite ones: those
    /// lanes are masked out), so that every load takes four.
    #[inline(always)]
    fn add(&mut self, [x, y, h]: [&[f32]; 3], run: std::ops::Range<usize>, dx: f32, dy: f32) {
        if run.is_empty() {
            return;
        }
        let h0 = f32x4::splat(*self.h0.get_or_insert(h[run.start]));
        let (dx, dy, one) = (f32x4::splat(dx), f32x4::splat(dy), f32x4::ONE);
        let lane = f32x4::new([0.0, 1.0, 2.0, 3.0]);
        // Whole fours from the run's start (the padding makes them exist).
        let span = run.start..run.start + run.len().div_ceil(4) * 4;
        let four = |c: &[f32]| f32x4::new([c[0], c[1], c[2], c[3]]);
        let acc = &mut self.acc;
        let mut left = run.len() as f32;
        for ((x, y), h) in
            x[span.clone()].chunks_exact(4).zip(y[span.clone()].chunks_exact(4)).zip(h[span].chunks_exact(4))
        {
            let valid = lane.simd_lt(f32x4::splat(left));
            let (px, py, ph) = (four(x) + dx, four(y) + dy, four(h) - h0);
            let (w, inside) = spatial_weights(px, py, self.inv_r2);
            let w = w & valid;
            add_position_sums(&mut acc[..6], w, px, py);
            add_height_sums(&mut acc[6..10], w, px, py, ph);
            acc[10] += w * ph * ph;
            acc[11] += inside & valid & one;
            left -= 4.0;
        }
    }

    fn moments(&self) -> Moments {
        Moments { sums: lane_sums(&self.acc), h0: self.h0.unwrap_or(0.0) as f64 }
    }
}

impl Moments {
    /// Points in the disc.
    fn count(&self) -> f64 {
        self.sums[11]
    }

    /// The moments of the points of `w` (relative to the centre) within `radius`, with the
    /// spatial weights of [`robust_plane`].
    #[cfg(test)]
    fn of_disc(w: &[[f32; 3]], radius: f64, cols: &mut Columns) -> Moments {
        cols.clear();
        w.iter().for_each(|&p| cols.push(p));
        cols.moments(radius)
    }

    /// The weighted least-squares plane `[h, slope u, slope v]` (at the centre, per metre) of
    /// a disc of `radius` when it is smooth by the robust fits' measures for biweight constant
    /// `scale`: at least [`LS_MIN_POINTS`], a residual scale under [`SMOOTH_SIGMA`] of it
    /// (weighted as in [`robust_plane`]), and a plane rising by less than it across the
    /// radius (a plane leaning across a step can have residuals as small as the noise); slopes
    /// fitted along the directions the points spread in by 0.15 of the radius (as the robust
    /// fits', [`min_slope_var`]). `None` otherwise (a step, an outlier, too few points): left to
    /// a block's robust fit, or a node's median of the nearest points.
    fn smooth_plane(&self, radius: f64, scale: f64) -> Option<[f64; 3]> {
        self.least_squares(radius, scale).filter(|ls| ls.within(SMOOTH_SIGMA * scale)).map(|ls| ls.plane)
    }

    /// The weighted least-squares plane of a disc of `radius` with at least [`LS_MIN_POINTS`]
    /// (see [`Moments::smooth_plane`]), its residual variance and whether it rises by less than
    /// the biweight constant `scale` across the radius.
    fn least_squares(&self, radius: f64, scale: f64) -> Option<LeastSquares> {
        let [sw, sx, sy, sxx, sxy, syy, sh, sxh, syh, sw2, shh, n] = self.sums;
        if n < LS_MIN_POINTS || sw <= 0.0 {
            return None;
        }
        let m = [[sw, sx, sy], [sx, sxx, sxy], [sy, sxy, syy]];
        let p = plane_solve(&m, &[sh, sxh, syh], min_slope_var(radius))?;
        // Weighted residual sum of squares of the least-squares solution (also of one with a
        // slope along one direction only, or none: its residuals are orthogonal to what it
        // fitted).
        let swr2 = (shh - p[0] * sh - p[1] * sxh - p[2] * syh).max(0.0);
        let var = residual_variance(sw, sw2, swr2);
        // Level: rising by less than `scale` across the radius (squared: no hypot call).
        let level = (p[1] * p[1] + p[2] * p[2]) * (radius * radius) < scale * scale;
        Some(LeastSquares { plane: [p[0] + self.h0, p[1], p[2]], var, level })
    }
}

/// A disc's least-squares plane, [`Moments::least_squares`].
#[derive(Debug, Clone, Copy)]
struct LeastSquares {
    plane: [f64; 3],
    var: f64,
    level: bool,
}

impl LeastSquares {
    /// Level, with a residual scale under `sigma`.
    fn within(&self, sigma: f64) -> bool {
        self.var < sigma * sigma && self.level
    }
}

/// Four points' spatial weights (1 - d²/R²)² for a disc with 1/R² `inv_r2` (zero outside it),
/// and which of them lie inside it (a mask).
#[inline(always)]
fn spatial_weights(x: f32x4, y: f32x4, inv_r2: f32x4) -> (f32x4, f32x4) {
    let one = f32x4::ONE;
    let d2 = (x * x + y * y) * inv_r2;
    let u = (one - d2).max(f32x4::ZERO);
    (u * u, d2.simd_lt(one))
}

/// Adds four points' weighted position sums to `acc[..6]`: Σw, Σwx, Σwy, Σwxx, Σwxy, Σwyy.
#[inline(always)]
fn add_position_sums(acc: &mut [f32x4], w: f32x4, x: f32x4, y: f32x4) {
    let (wx, wy) = (w * x, w * y);
    acc[0] += w;
    acc[1] += wx;
    acc[2] += wy;
    acc[3] += wx * x;
    acc[4] += wx * y;
    acc[5] += wy * y;
}

/// Adds four points' weighted height sums to `acc[..4]`: Σwh, Σwxh, Σwyh and Σw².
#[inline(always)]
fn add_height_sums(acc: &mut [f32x4], w: f32x4, x: f32x4, y: f32x4, h: f32x4) {
    acc[0] += w * h;
    acc[1] += w * x * h;
    acc[2] += w * y * h;
    acc[3] += w * w;
}

/// Adds four points' weighted plane sums to `acc[..10]`: the position sums, then the height
/// sums (a plane fit's normal equations and the points' effective number).
#[inline(always)]
fn add_plane_sums(acc: &mut [f32x4; 12], w: f32x4, x: f32x4, y: f32x4, h: f32x4) {
    add_position_sums(&mut acc[..6], w, x, y);
    add_height_sums(&mut acc[6..10], w, x, y, h);
}

/// Each sum's four lanes added up, four sums at a time (transposed), in single precision.
fn lane_sums(acc: &[f32x4; 12]) -> [f64; 12] {
    let mut out = [0.0; 12];
    for (four, out) in acc.chunks_exact(4).zip(out.chunks_exact_mut(4)) {
        let t = f32x4::transpose([four[0], four[1], four[2], four[3]]);
        let sum = (t[0] + t[1]) + (t[2] + t[3]);
        for (o, v) in out.iter_mut().zip(sum.to_array()) {
            *o = v as f64;
        }
    }
    out
}

/// Beyond this, every f64 is an integer.
const INTEGRAL: f64 = 4_503_599_627_370_496.0; // 2^52

/// `x.floor()`, the same value, without the library call it is on x86-64's baseline (SSE2 has
/// no rounding instruction; once per candidate and more, it showed in profiles).
fn floor(x: f64) -> f64 {
    if x.abs() < INTEGRAL {
        // Truncation is exact here; no branch (the data decide it at random).
        let t = x as i64 as f64;
        t - (t > x) as u8 as f64
    } else {
        x.floor()
    }
}

/// `x.round()` (halves away from zero) as an integer, without the library call and the
/// conversions back and forth; `i64::MIN` (outside any grid) from 2^52 on and for NaN.
fn round_index(x: f64) -> i64 {
    if x.abs() < INTEGRAL {
        let t = x as i64;
        // Exact: x and its truncation share their leading bits.
        let d = x - t as f64;
        t + (d >= 0.5) as i64 - (d <= -0.5) as i64
    } else {
        i64::MIN
    }
}

/// Whether point `p` (relative to a node) lies within `r` of it across the plane.
fn within(p: &[f32; 3], r: f32) -> bool {
    p[0] * p[0] + p[1] * p[1] <= r * r
}

/// The height at the centre of the weighted least-squares quadratic surface
/// h = a + b·x + c·y + d·x² + e·xy + f·y² of the points within `radius` of it (spatial weights
/// (1 - d²/R²)²); `None` with fewer than 10 points or a singular system.
#[allow(clippy::needless_range_loop)] // matrix code reads best by index
fn quadratic_height(w: impl IntoIterator<Item = [f32; 3]>, radius: f64) -> Option<f64> {
    let mut m = [[0.0f64; 7]; 6];
    let (mut n, mut h0) = (0usize, None);
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    let inv = 1.0 / radius;
    for [x, y, h] in w {
        let (x, y) = (f64::from(x) * inv, f64::from(y) * inv);
        let d2 = x * x + y * y;
        if d2 >= 1.0 {
            continue;
        }
        let h0 = *h0.get_or_insert(f64::from(h));
        let h = f64::from(h) - h0;
        lo = lo.min(h);
        hi = hi.max(h);
        let wt = (1.0 - d2) * (1.0 - d2);
        let b = [1.0, x, y, x * x, x * y, y * y];
        for i in 0..6 {
            for j in i..6 {
                m[i][j] += wt * b[i] * b[j];
            }
            m[i][6] += wt * b[i] * h;
        }
        n += 1;
    }
    let h0 = h0?;
    if n < 10 {
        return None;
    }
    for i in 0..6 {
        for j in 0..i {
            m[i][j] = m[j][i];
        }
    }
    // Gaussian elimination with partial pivoting.
    let scale = m[0][0];
    for c in 0..6 {
        let p = (c..6).max_by(|&a, &b| m[a][c].abs().total_cmp(&m[b][c].abs()))?;
        if m[p][c].abs() <= 1e-9 * scale {
            return None;
        }
        m.swap(c, p);
        for r in c + 1..6 {
            let f = m[r][c] / m[c][c];
            for k in c..7 {
                m[r][k] -= f * m[c][k];
            }
        }
    }
    let mut x = [0.0f64; 6];
    for c in (0..6).rev() {
        let s: f64 = (c + 1..6).map(|k| m[c][k] * x[k]).sum();
        x[c] = (m[c][6] - s) / m[c][c];
    }
    // A fit beyond the points' heights is extrapolating (points on too few lines).
    (x[0] >= lo && x[0] <= hi).then_some(h0 + x[0])
}

/// Nodes per side of the square blocks that share one plane fit where the surface is smooth.
const BLOCK: usize = 3;

/// The nodes of a block from its centre, in nodes.
const BLOCK_OFFSETS: [f64; BLOCK] = {
    let mut d = [0.0; BLOCK];
    let mut j = 0;
    while j < BLOCK {
        d[j] = j as f64 - (BLOCK / 2) as f64;
        j += 1;
    }
    d
};

/// Rows of nodes a gridding thread takes at a time (whole block rows, from a multiple of it).
const ROW_RUN: usize = 8 * BLOCK;

/// Fewest points of a disc for its least-squares plane.
const LS_MIN_POINTS: f64 = 8.0;

/// Residual scale of a smooth fit, in biweight constants.
const SMOOTH_SIGMA: f64 = 0.4;

/// Residual scale of a block's least-squares plane, in biweight constants, under which its
/// robust plane is tried when the least-squares one is not smooth (and is level). Of the
/// blocks under it, 0.9 % had a smooth robust plane on the 20 M point virtual survey and 50 %
/// on the sparser 4.6 M point one; of the others, 0.2 % and 7 %.
const NEAR_SMOOTH_SIGMA: f64 = 0.6;

/// A slab's points by nearest node (CSR over the local rows), by coordinate: x from the point's
/// row of nodes, y from column 0, height.
struct Local<'a> {
    /// The points by coordinate, and three more (see [`DiscSums::add`]).
    cols: &'a Columns,
    start: &'a [u32],
    nv: usize,
    n_local: usize,
    cell: f64,
}

impl Local<'_> {
    /// Into `out`: for every block of the block row centred on local row `cu`, the moments of
    /// the points within `radius` of its centre, relative to it, with the spatial weights of
    /// [`robust_plane`].
    fn block_moments(&self, cu: isize, disc: DiscSize, out: &mut Vec<Moments>) {
        out.clear();
        for b in 0..self.nv.div_ceil(BLOCK) {
            out.push(self.disc_moments(cu, (b * BLOCK + BLOCK / 2) as isize, disc));
        }
    }

    /// The moments of the points within `radius` of local node (`cu`, `cv`), relative to it,
    /// with the spatial weights of [`robust_plane`]: the sums run over the nodes' points in
    /// place, row by row.
    fn disc_moments(&self, cu: isize, cv: isize, disc: DiscSize) -> Moments {
        // The nodes holding the disc's points, together in each row.
        let DiscSize { radius, half } = disc;
        let rows = (cu - half).max(0) as usize..(cu + half + 1).clamp(0, self.n_local as isize) as usize;
        let (c0, c1) = ((cv - half).max(0) as usize, ((cv + half + 1).max(0) as usize).min(self.nv));
        let y0 = (cv as f64 * self.cell) as f32;
        let mut sums = DiscSums::new(radius);
        let cols = [&self.cols.x[..], &self.cols.y[..], &self.cols.h[..]];
        for ju in rows.filter(|_| c0 < c1) {
            let x0 = ((ju as f64 - cu as f64) * self.cell) as f32;
            let row = ju * self.nv;
            sums.add(cols, self.start[row + c0] as usize..self.start[row + c1] as usize, x0, -y0);
        }
        sums.moments()
    }

    /// [`Local::gather`] into columns, of the nodes that can hold points of the disc (see
    /// [`disc_half`]).
    fn gather_columns(&self, lu: isize, iv: isize, disc: DiscSize, out: &mut Columns) {
        out.clear();
        self.for_each_within(lu, iv, disc.half, disc.radius as f32, |p| out.push(p));
    }

    /// Into `out`: the points within `radius` of local node (`lu`, `iv`), which may lie outside
    /// the grid, relative to that node, of the nodes within `half` nodes of it (rows and
    /// columns), by row and node.
    fn gather(&self, lu: isize, iv: isize, half: isize, radius: f32, out: &mut Vec<[f32; 3]>) {
        out.clear();
        self.for_each_within(lu, iv, half, radius, |p| out.push(p));
    }

    /// Calls `f` with the points of [`Local::gather`], in its order.
    #[inline(always)]
    fn for_each_within(&self, lu: isize, iv: isize, half: isize, radius: f32, mut f: impl FnMut([f32; 3])) {
        let (c0, c1) = ((iv - half).max(0), (iv + half).min(self.nv as isize - 1));
        if c1 < c0 {
            return;
        }
        let (c0, c1) = (c0 as usize, c1 as usize);
        let y0 = (iv as f64 * self.cell) as f32;
        for du in -half..=half {
            let ju = lu + du;
            if ju < 0 || ju >= self.n_local as isize {
                continue;
            }
            let ju = ju as usize;
            let x0 = (du as f64 * self.cell) as f32;
            let run = self.start[ju * self.nv + c0] as usize..self.start[ju * self.nv + c1 + 1] as usize;
            let (x, y, h) = (&self.cols.x[run.clone()], &self.cols.y[run.clone()], &self.cols.h[run]);
            for ((x, y), h) in x.iter().zip(y).zip(h) {
                let p = [x + x0, y - y0, *h];
                if within(&p, radius) {
                    f(p);
                }
            }
        }
    }
}

/// A disc's radius and the nodes that can hold its points ([`disc_half`]), worked out once.
#[derive(Debug, Clone, Copy)]
struct DiscSize {
    radius: f64,
    half: isize,
}

impl DiscSize {
    fn new(radius: f64, cell: f64) -> DiscSize {
        DiscSize { radius, half: disc_half(radius, cell) }
    }
}

/// The nodes within this many rows and columns of a node hold every point within `radius` of
/// it: a point lies at its nearest node, and these are the nodes whose cells reach into the disc
/// (where `radius` is a whole number of cells and a half, a point exactly on the rim, a tie,
/// rounds to the next node: its spatial weight is zero, and single precision leaves it either
/// side of the rim anyway).
fn disc_half(radius: f64, cell: f64) -> isize {
    (radius / cell + 0.5 - 1e-9).ceil() as isize - 1
}

/// Along and across, m: the low envelope's coarse cells, in whole nodes.
const ENVELOPE_CELL: [f64; 2] = [0.2, 0.05];

/// A dense layer of a coarse cell: this many heights (m) within this many points, for
/// [`low_envelope`] (road points lie within millimetres of each other; multipath echoes scatter
/// over 0.2-1 m below the surface).
const DENSE_LAYER: (f64, usize) = (0.015, 3);

/// The grid's nodes across, its cell and the envelope's layer, for [`low_envelope`].
struct Envelope {
    nv: usize,
    cell: f64,
    layer: f64,
}

/// The first row of slab `k` (by the rows' s; can lie before the grid's start).
fn slab_first_row(g: &Geometry, k: f64) -> usize {
    ((k * SLAB - g.s0) / g.cell - 1e-9).ceil().max(0.0) as usize
}

/// The low envelope's coarse rows over grid rows `lo..hi`, as local rows from `lo`: the starts
/// of runs of about [`ENVELOPE_CELL`] along, counted from each slab's first row (so a slab's
/// own rows lie in whole coarse rows, however its neighbours are gridded), and `hi - lo` last.
fn envelope_bands(g: &Geometry, lo: usize, hi: usize) -> Vec<usize> {
    let cu = ((ENVELOPE_CELL[0] / g.cell).round() as usize).max(1);
    let mut bands = Vec::new();
    let mut r = lo;
    while r < hi {
        let k = slab_of_row(g.s0, g.cell, r);
        let (first, next) = (slab_first_row(g, k).min(r), slab_first_row(g, k + 1.0).max(r + 1));
        bands.push(r - lo);
        r = (first + ((r - first) / cu + 1) * cu).min(next).min(hi);
    }
    bands.push(hi - lo);
    bands
}

/// Keeps the points at most `layer` (and twice the cell's median less its 10th percentile, up
/// to another `layer`: see [`SurfaceOptions::layer`]) above the 10th percentile of the heights
/// of their coarse cell (the rows of a band of `bands`, see [`envelope_bands`], by whole nodes of about
/// [`ENVELOPE_CELL`] across from the grid's first column; the first and last bands hold the
/// points the slab has of them), compacting the points sorted by node (`start`, `pts`: CSR
/// over rows of `nv` nodes) in place, in their order.
fn low_envelope(start: &mut [u32], pts: &mut Vec<[f32; 3]>, bands: &[usize], e: Envelope) {
    let cv = ((ENVELOPE_CELL[1] / e.cell).round() as usize).max(1);
    let n_rows = (start.len() - 1) / e.nv;
    let mut top = vec![0f64; e.nv.div_ceil(cv)];
    let mut hs: Vec<f32> = Vec::new();
    // Compaction: points are written at `write` (never past where they are read).
    let mut write = 0usize;
    let mut read = start[0] as usize;
    for band in bands.windows(2) {
        // A band of rows within one coarse row; its cells' thresholds, then its points.
        let (r0, r1) = (band[0], band[1].min(n_rows));
        for (c, top) in top.iter_mut().enumerate() {
            let (c0, c1) = (c * cv, ((c + 1) * cv).min(e.nv));
            hs.clear();
            for r in r0..r1 {
                let run = start[r * e.nv + c0] as usize..start[r * e.nv + c1] as usize;
                hs.extend(pts[run].iter().map(|p| p[2]));
            }
            *top = if hs.is_empty() {
                f64::INFINITY
            } else {
                // The 10th percentile, then the median among the heights above it.
                let (n, k) = (hs.len(), hs.len() / 10);
                let (_, &mut p10, above) = hs.select_nth_unstable_by(k, f32::total_cmp);
                let p50 = match (n / 2).checked_sub(k + 1) {
                    Some(k50) if k50 < above.len() => *above.select_nth_unstable_by(k50, f32::total_cmp).1,
                    _ => p10,
                };
                let (mut p10, mut p50) = (p10 as f64, p50 as f64);
                // A 10th percentile on no dense layer is a few low strays (multipath echoes
                // below the surface, which come alone): the percentiles are taken from the
                // lowest dense layer up instead, or the strays would be all the cell keeps.
                let dense = hs.iter().filter(|&&h| h as f64 >= p10 && h as f64 <= p10 + DENSE_LAYER.0).count();
                if n >= DENSE_LAYER.1 && dense < DENSE_LAYER.1 {
                    hs.sort_unstable_by(f32::total_cmp);
                    let m = DENSE_LAYER.1 - 1;
                    if let Some(i) = (0..n - m).find(|&i| (hs[i + m] - hs[i]) as f64 <= DENSE_LAYER.0) {
                        let up = &hs[i..];
                        (p10, p50) = (up[up.len() / 10] as f64, up[up.len() / 2] as f64);
                    }
                }
                p10 + e.layer + (2.0 * (p50 - p10)).min(e.layer)
            };
        }
        for r in r0..r1 {
            for (c, &top) in top.iter().enumerate() {
                for node in r * e.nv + c * cv..r * e.nv + ((c + 1) * cv).min(e.nv) {
                    let end = start[node + 1] as usize;
                    start[node] = write as u32;
                    for i in read..end {
                        let p = pts[i];
                        if p[2] as f64 <= top {
                            pts[write] = p;
                            write += 1;
                        }
                    }
                    read = end;
                }
            }
        }
    }
    start[n_rows * e.nv] = write as u32;
    pts.truncate(write);
}

/// Counting sort of `items` by `keys` (each below `buckets`), stable: the start of every
/// bucket (and the end of the last) and the items bucket by bucket.
fn bucket_sort<T: Copy>(items: &[T], keys: &[u32], buckets: usize) -> (Vec<u32>, Vec<T>) {
    let mut start = vec![0u32; buckets + 1];
    for &k in keys {
        start[k as usize + 1] += 1;
    }
    for i in 0..buckets {
        start[i + 1] += start[i];
    }
    let mut sorted = Vec::with_capacity(items.len());
    // Every slot is written once below; fill with the first item to start.
    if let Some(&first) = items.first() {
        sorted.resize(items.len(), first);
    }
    // Each bucket's start serves as its next free slot, and so ends as the next one's start.
    for (item, &k) in items.iter().zip(keys) {
        sorted[start[k as usize] as usize] = *item;
        start[k as usize] += 1;
    }
    if buckets > 0 {
        start.copy_within(0..buckets - 1, 1);
        start[0] = 0;
    }
    (start, sorted)
}

fn median(v: &mut [f32]) -> Option<f32> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable_by(f32::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) })
}

/// The points of a node's disc in columns of four (heights relative to where the fits start),
/// padded with points 1.4 km away (outside any disc of a fit), and the spatial weights of the
/// disc being fitted (set by [`Disc::weigh`] after each [`Disc::pack`]), for a block's robust
/// fit: the reweighting runs on four points at a time.
#[derive(Debug, Default)]
struct Disc {
    x: Vec<[f32; 4]>,
    y: Vec<[f32; 4]>,
    h: Vec<[f32; 4]>,
    ws: Vec<[f32; 4]>,
}

impl Disc {
    /// Packs the points of `w` (`[x, y, h]` relative to the node), heights from `start` (so
    /// that single precision keeps micrometres).
    fn pack(&mut self, w: &[[f32; 3]], start: f32) {
        for v in [&mut self.x, &mut self.y, &mut self.h, &mut self.ws] {
            v.clear();
        }
        for four in w.chunks(4) {
            let (mut x, mut y, mut h) = ([1e3f32; 4], [1e3f32; 4], [0f32; 4]);
            for (l, p) in four.iter().enumerate() {
                x[l] = p[0];
                y[l] = p[1];
                h[l] = p[2] - start;
            }
            self.x.push(x);
            self.y.push(y);
            self.h.push(h);
        }
    }

    /// Sets the spatial weights of the disc of `radius` ([`spatial_weights`]): the number of
    /// points within.
    fn weigh(&mut self, radius: f32) -> usize {
        let inv_r2 = f32x4::splat(1.0 / (radius * radius));
        let mut n = f32x4::ZERO;
        self.ws.clear();
        for (&x, &y) in self.x.iter().zip(&self.y) {
            let (w, inside) = spatial_weights(f32x4::new(x), f32x4::new(y), inv_r2);
            self.ws.push(w.to_array());
            n += inside & f32x4::ONE;
        }
        n.to_array().iter().sum::<f32>() as usize
    }

    /// The robust plane fit ([`robust_plane`]) of the packed points within `radius`, started at
    /// height `start`.
    fn fit(&mut self, radius: f32, scale: f32, start: f64) -> Option<Fit> {
        let n_in = self.weigh(radius);
        robust_plane(self, n_in, radius, scale, start)
    }
}

/// Robust weighted plane fit at the origin of the points packed in `d` with the weights of the
/// disc of `radius`, `n_in` of them within it, started at height `start` (see [`Disc::pack`]):
/// the plane and how well it fits, or `None` with fewer than three points.
fn robust_plane(d: &Disc, n_in: usize, radius: f32, scale: f32, start: f64) -> Option<Fit> {
    if n_in < 3 {
        return None;
    }
    let Disc { x: xs, y: ys, h: hs, ws: wss } = d;
    let (mut a, mut bx, mut by) = (0.0f64, 0.0f64, 0.0f64);
    let inv_scale = 1.0 / scale;
    // Σ w, Σ w², Σ w res² and the points rejected of the last pass.
    let mut last = [0.0f64; 4];
    for it in 0..4 {
        // Normal equations of Σ w (h - a - bx x - by y)² (the six distinct entries), the
        // right-hand side, Σ w², Σ w res² and the points rejected, lane by lane. The biweight
        // is zero from one scale on, so a rejected point adds nothing.
        let mut acc = [f32x4::ZERO; 12];
        let (a4, bx4, by4) = (f32x4::splat(a as f32), f32x4::splat(bx as f32), f32x4::splat(by as f32));
        let (inv4, one, zero) = (f32x4::splat(inv_scale), f32x4::ONE, f32x4::ZERO);
        for (((&x, &y), &h), &ws) in xs.iter().zip(ys.iter()).zip(hs.iter()).zip(wss.iter()) {
            let (x, y, h, ws) = (f32x4::new(x), f32x4::new(y), f32x4::new(h), f32x4::new(ws));
            let res = h - a4 - bx4 * x - by4 * y;
            let r = res * inv4;
            let u = (one - r * r).max(zero);
            let wt = ws * u * u;
            add_plane_sums(&mut acc, wt, x, y, h);
            acc[10] += wt * res * res;
            acc[11] += u.simd_eq(zero) & ws.simd_gt(zero) & one;
        }
        let [s1, sx, sy, sxx, sxy, syy, sh, sxh, syh, sw2, swr2, n_out] = lane_sums(&acc);
        let m = [[s1, sx, sy], [sx, sxx, sxy], [sy, sxy, syy]];
        let rhs = [sh, sxh, syh];
        if s1 <= 0.0 || s1 * s1 < 3.0 * sw2 {
            return None; // no weight, or fewer than 3 points' worth (n_eff = (Σ w)² / Σ w²)
        }
        last = [s1, sw2, swr2, n_out];
        let sol = plane_solve(&m, &rhs, min_slope_var(radius as f64))?;
        // Converged: the plane moved by less than 10 µm anywhere in the disc.
        let moved = (sol[0] - a).abs() + ((sol[1] - bx).abs() + (sol[2] - by).abs()) * radius as f64;
        a = sol[0];
        bx = sol[1];
        by = sol[2];
        if it > 0 && moved < 1e-5 {
            break;
        }
    }
    let [sw, sw2, swr2, n_out] = last;
    let sigma = residual_variance(sw, sw2, swr2).sqrt();
    let fit = Fit { h: start + a, bx, by, sigma, rejected: n_out / n_in as f64 };
    fit.h.is_finite().then_some(fit)
}

/// A robust plane fit: height at the node, slopes, the weighted residual scale and the share of
/// points the biweight rejected (m, per metre, m, share 0..1).
#[derive(Debug, Clone, Copy)]
struct Fit {
    h: f64,
    bx: f64,
    by: f64,
    sigma: f64,
    rejected: f64,
}

impl Fit {
    /// Residuals like the noise and (almost) nothing rejected: no step in the disc.
    fn smooth(&self, scale: f32) -> bool {
        self.rejected < 0.03 && self.sigma < SMOOTH_SIGMA * scale as f64
    }
}

/// The points a node's height is the median of where its disc is not smooth ([`near_median`]).
const NEAR_POINTS: usize = 6;

/// The estimate at a node whose disc is not smooth (a step, joint, rim or outlier within
/// it): the median of the [`NEAR_POINTS`] points of `w` nearest the node (a point's height
/// breaks ties; the mean of the middle two). Every plane over the disc straddles the edge;
/// these points lie within about 1.5 cells, on the node's side of it, and their median
/// withstands two of them being outliers or from the other side. `None` with fewer than three
/// points in `w`, as where robust plane fits took these nodes (half the nodes of a sparse
/// survey: the gaps are filled along track).
fn near_median(w: impl IntoIterator<Item = [f32; 3]>) -> Option<f32> {
    let mut near = [0f32; NEAR_POINTS];
    let k = nearest_heights(w, &mut near);
    if k < 3 {
        return None;
    }
    median(&mut near[..k])
}

/// The heights of the points of `w` nearest the origin (ties: the lower first), by
/// insertion, as many as `out` holds (up to [`NEAR_POINTS`]): how many there are.
fn nearest_heights(w: impl IntoIterator<Item = [f32; 3]>, out: &mut [f32]) -> usize {
    let n = out.len().min(NEAR_POINTS);
    if n == 0 {
        return 0;
    }
    let mut near = [(f32::INFINITY, 0f32); NEAR_POINTS];
    let near = &mut near[..n];
    let mut k = 0;
    for p in w {
        let e = (p[0] * p[0] + p[1] * p[1], p[2]);
        if k == n && e >= near[n - 1] {
            continue;
        }
        let mut j = k.min(n - 1);
        while j > 0 && e < near[j - 1] {
            near[j] = near[j - 1];
            j -= 1;
        }
        near[j] = e;
        k = (k + 1).min(n);
    }
    for (o, e) in out.iter_mut().zip(&near[..k]) {
        *o = e.1;
    }
    k
}

/// The points of `w` nearest the origin, at most `cap` of them (dense surveys: the noise is
/// averaged down enough by then, and the cost stays bounded), the radius shrunk to them, and
/// the median height of the five nearest: where robust fits start.
fn nearest(w: &mut [[f32; 3]], radius: f32, cap: usize) -> Option<(&mut [[f32; 3]], f32, f64)> {
    let d2 = |p: &[f32; 3]| p[0] * p[0] + p[1] * p[1];
    let mut w = w;
    let mut radius = radius;
    if w.len() > cap {
        w.select_nth_unstable_by(cap, |a, b| d2(a).total_cmp(&d2(b)).then(a[2].total_cmp(&b[2])));
        radius = radius.min(d2(&w[cap]).sqrt());
        w = &mut w[..cap];
    }
    let mut near = [0f32; 5];
    let k = nearest_heights(w.iter().copied(), &mut near);
    let start = median(&mut near[..k])? as f64;
    Some((w, radius, start))
}

/// The smallest weighted variance of the points' positions along a direction for a plane fit
/// in a disc of `radius` to fit a slope along it (see [`plane_solve`]): 0.15 of the radius
/// squared.
fn min_slope_var(radius: f64) -> f64 {
    (0.15 * radius).powi(2)
}

/// The weighted residual variance of a plane fit from Σ w, Σ w² and Σ w res²: corrected for the
/// plane's parameters with the effective number of points (Σ w)² / Σ w².
fn residual_variance(sw: f64, sw2: f64, swr2: f64) -> f64 {
    // swr2 / sw · n_eff / max(n_eff - 2, 1), with n_eff = sw² / sw2, in one division.
    swr2 * sw / (sw * sw - 2.0 * sw2).max(sw2)
}

/// Solves the weighted normal equations `m · [a, bx, by] = rhs` of a plane fit, fitting a slope
/// only along directions in which the points spread by at least √`min_var` (weighted standard
/// deviation): points of a single scan line (spread ~0 across it, or only the coordinates'
/// millimetre rounding) would otherwise give an arbitrary slope across the line, and the
/// height at a node a centimetre away from it with it.
fn plane_solve(m: &[[f64; 3]; 3], rhs: &[f64; 3], min_var: f64) -> Option<[f64; 3]> {
    let w = m[0][0];
    if w.is_nan() || w <= 0.0 || w.is_infinite() {
        return None;
    }
    // Weighted means and covariance of the positions.
    let inv_w = 1.0 / w;
    let (mx, my) = (m[0][1] * inv_w, m[0][2] * inv_w);
    let (cxx, cyy, cxy) = (m[1][1] * inv_w - mx * mx, m[2][2] * inv_w - my * my, m[1][2] * inv_w - mx * my);
    let mh = rhs[0] * inv_w;
    let (chx, chy) = (rhs[1] * inv_w - mx * mh, rhs[2] * inv_w - my * mh);
    // Eigen-decomposition of the 2x2 covariance.
    let tr = cxx + cyy;
    let disc = ((cxx - cyy) * (cxx - cyy) / 4.0 + cxy * cxy).sqrt();
    let (l1, l2) = (tr / 2.0 + disc, tr / 2.0 - disc);
    let (bx, by) = if l2 >= min_var {
        // Full plane: slopes from the covariance (centred normal equations).
        let det = cxx * cyy - cxy * cxy;
        ((chx * cyy - chy * cxy) / det, (cxx * chy - cxy * chx) / det)
    } else if l1 >= min_var {
        // Along the principal direction u only: the slope along it is (c·u) / (l1 |u|²) per
        // unit of u, so u needs no normalising (a square root and two divisions less, in the
        // robust fits' loop; u's squares stay normal numbers).
        let (ux, uy) = if cxy.abs() > 1e-150 {
            (l1 - cyy, cxy)
        } else if cxx >= cyy {
            (1.0, 0.0)
        } else {
            (0.0, 1.0)
        };
        let b = (chx * ux + chy * uy) / (l1 * (ux * ux + uy * uy));
        (b * ux, b * uy)
    } else {
        (0.0, 0.0)
    };
    let a = mh - bx * mx - by * my;
    (a.is_finite() && bx.is_finite() && by.is_finite()).then_some([a, bx, by])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The points of one coarse cell (one band of 20 rows, 5 nodes across) that the low
    /// envelope keeps, of heights `hs` (spread over its nodes in turn).
    fn kept_by_envelope(hs: &[f32]) -> Vec<f32> {
        let (nv, rows) = (5, 20);
        let nodes: Vec<u32> = (0..hs.len()).map(|i| (i % (nv * rows)) as u32).collect();
        let items: Vec<[f32; 3]> = hs.iter().map(|&h| [0.0, 0.0, h]).collect();
        let (mut start, mut pts) = bucket_sort(&items, &nodes, nv * rows);
        low_envelope(&mut start, &mut pts, &[0, rows], Envelope { nv, cell: 0.01, layer: 0.04 });
        pts.iter().map(|p| p[2]).collect()
    }

    #[test]
    fn the_low_envelope_keeps_a_rough_surface_and_drops_what_stands_on_a_flat_one() {
        // Setts: heights evenly from 0 to 6 cm within the cell (measured setts rise up to
        // 6.5 cm above a coarse cell's 10th percentile). A fixed 4 cm layer kept those up to
        // 4.6 cm only.
        let setts: Vec<f32> = (0..200).map(|i| i as f32 * 0.0003).collect();
        assert_eq!(kept_by_envelope(&setts).len(), setts.len());
        // Asphalt (±3 mm) with a third of the points on a kerbstone-high object (10 cm) or a
        // car's sill (30 cm) standing on it: those go, the surface stays.
        for top in [0.1f32, 0.3] {
            let hs: Vec<f32> =
                (0..300).map(|i| if i % 3 == 2 { top } else { (i % 7) as f32 * 0.001 - 0.003 }).collect();
            let kept = kept_by_envelope(&hs);
            assert_eq!(kept.len(), 200, "object at {top} m");
            assert!(kept.iter().all(|&h| h.abs() <= 0.003));
        }
    }

    #[test]
    fn multipath_below_the_surface_does_not_become_the_low_envelope() {
        // Asphalt (±3 mm), 16 points, with 2 echoes 24 and 26 cm below (as at nadir in
        // a corpus survey): before, the 10th percentile was an echo and the envelope kept only
        // the echoes.
        let mut hs: Vec<f32> = (0..16).map(|i| (i % 7) as f32 * 0.001 - 0.003).collect();
        hs.extend([-0.264f32, -0.240]);
        let kept = kept_by_envelope(&hs);
        assert!(kept.iter().filter(|h| h.abs() <= 0.003).count() == 16, "{kept:?}");
        // The echoes stay candidates (below the layer): the estimator rejects them.
        assert_eq!(kept.len(), 18);
    }

    #[test]
    fn candidates_go_to_the_slabs_whose_nodes_reach_them() {
        // Two passes over slabs -2..=5 (of which 0..=3 get candidates), steps of 3 mm with a
        // few landing exactly on slab ends and reach limits, and some jumps back.
        let opts = SurfaceOptions::default();
        let mut found = Found::new(&opts, (0, 3), (0.0, 0.0));
        let reach = found.reach;
        let mut s_all = Vec::new();
        for pass in 0..2 {
            let mut s = -3.0 + 0.0011 * pass as f64;
            while s < 11.0 {
                s_all.push(s);
                s += 0.003;
                if s_all.len() % 997 == 0 {
                    s -= 0.05;
                }
            }
        }
        for k in -2..=5 {
            let k = k as f64 * SLAB;
            s_all.extend([k, k + reach, k - reach, k + reach + 1e-6, k - reach - 1e-6]);
        }
        let mut want: BTreeMap<i64, Vec<(f32, f32)>> = BTreeMap::new();
        for (i, &s) in s_all.iter().enumerate() {
            let c = Candidate { s, t: i as f32, h: 0.0 };
            found.add(c, false);
            // The rule: its own slab, and a neighbour whose nodes reach it; slabs 0..=3 only.
            let k = (s / SLAB).floor();
            for (j, gets) in [(k, true), (k - 1.0, s - k * SLAB < reach), (k + 1.0, (k + 1.0) * SLAB - s < reach)] {
                if gets && (0.0..=3.0).contains(&j) {
                    want.entry(j as i64).or_default().push(((s - j * SLAB) as f32, c.t));
                }
            }
        }
        let mut got: BTreeMap<i64, Vec<(f32, f32)>> = BTreeMap::new();
        for (k, v) in &found.slabs {
            assert!(!got.contains_key(k), "slab {k} twice");
            got.insert(*k, v.iter().map(|p| (p.ds, p.t)).collect());
        }
        assert_eq!(got.keys().collect::<Vec<_>>(), [&0, &1, &2, &3]);
        for (k, w) in &want {
            let g = &got[k];
            assert_eq!(g.len(), w.len(), "slab {k}");
            assert!(g.iter().zip(w).all(|(a, b)| a.0.to_bits() == b.0.to_bits() && a.1 == b.1), "slab {k}");
        }
        assert_eq!(found.stats.iter().map(|(_, st)| st.near).sum::<u64>(), s_all.len() as u64);
    }

    #[test]
    fn the_road_surface_is_the_lowest_dense_layer_and_the_profile_its_median() {
        // A road 2.4 m above the axis' surface (crossfall spreads it over 8 cm), sparse
        // multipath 1 m below it, a car roof 1.5 m above it with more points than the road.
        let mut st = SlabStats::default();
        for i in 0..400 {
            st.add_height(2.4 + (i % 9) as f32 * 0.01);
        }
        for i in 0..30 {
            st.add_height(1.4 + (i % 3) as f32 * 0.05);
        }
        for i in 0..900 {
            st.add_height(3.9 + (i % 4) as f32 * 0.01);
        }
        let layer = st.layer().unwrap();
        assert!((layer - 2.44).abs() < 0.05, "{layer}");
        // Too few heights: none.
        let mut few = SlabStats::default();
        (0..19).for_each(|_| few.add_height(0.0));
        assert_eq!(few.layer(), None);
        // Slabs 0..=9: the road at 2.4 m, but slab 4 sees only a car roof and slab 7 nothing
        // near the reference line; slabs 0..=9 of a right axis are zero.
        let mut stats = BTreeMap::new();
        for k in 0..10 {
            let mut st = SlabStats::default();
            let h = match k {
                4 => 3.9,
                7 => continue,
                _ => 2.4 + 0.01 * k as f32,
            };
            (0..100).for_each(|_| st.add_height(h));
            stats.insert(k, st);
        }
        let p = Profile::of(&stats, 0.1);
        for k in 0..10 {
            assert!((p.value(k) - 2.42).abs() < 0.1, "slab {k}: {}", p.value(k));
        }
        // Interpolated between the slabs' middles, held beyond the ends.
        let (a, b) = (p.value(2), p.value(3));
        assert!((p.at(6.0) - 0.5 * (a + b)).abs() < 1e-12);
        assert_eq!((p.at(-50.0), p.at(500.0)), (p.value(0), p.value(9)));
        assert!(!p.zero_around(5));
        let right: BTreeMap<i64, SlabStats> = stats
            .keys()
            .map(|&k| {
                let mut st = SlabStats::default();
                (0..100).for_each(|i| st.add_height(-0.02 + 0.0004 * i as f32));
                (k, st)
            })
            .collect();
        let p = Profile::of(&right, 0.1);
        assert!((-3..13).all(|k| p.zero_around(k)) && p.at(7.3) == 0.0);
    }

    #[test]
    fn residual_variance_corrects_for_the_effective_number_of_points() {
        // n points of weight w: n_eff = n, and the variance is Σ w res² / Σ w · n / (n - 2).
        for n in [1.0f64, 2.0, 2.5, 3.0, 8.0, 40.0] {
            let (w, res2) = (0.37, 1.3e-6);
            let want = res2 * n / (n - 2.0).max(1.0);
            let got = residual_variance(n * w, n * w * w, n * w * res2);
            assert!((got - want).abs() <= 1e-12 * want, "n {n}: {got} vs {want}");
        }
    }

    #[test]
    fn a_single_scan_line_gives_no_slope_across_it() {
        // Points of one profile 1 cm from the node, x rounded to the millimetre (so it varies by
        // ±0.5 mm), heights rising along the line with a 3 % crossfall.
        let mut w: Vec<[f32; 3]> = (0..40)
            .map(|i| {
                let y = -0.02 + i as f32 * 0.001;
                let x = -0.01 + if i % 3 == 0 { 0.0005 } else { -0.0004 };
                [x, y, 0.03 * y + if i % 2 == 0 { 0.0002 } else { -0.0002 }]
            })
            .collect();
        // From the median of the five nearest points, as a block's robust fit starts.
        let fit = |w: &mut [[f32; 3]]| {
            let mut disc = Disc::default();
            let (w, radius, start) = nearest(w, 0.025, 48).unwrap_or_default();
            disc.pack(w, start as f32);
            disc.fit(radius, 0.008, start).map_or(f64::NAN, |f| f.h)
        };
        let h = fit(&mut w);
        assert!(h.abs() < 1e-3, "height at the node {h}");
        // A plane through points spread in both directions is fitted exactly.
        let mut w: Vec<[f32; 3]> = (0..100)
            .map(|i| {
                let (x, y) = ((i % 10) as f32 * 0.004 - 0.018, (i / 10) as f32 * 0.004 - 0.018);
                [x, y, 0.01 + 0.05 * x - 0.03 * y]
            })
            .collect();
        let h = fit(&mut w);
        assert!((h - 0.01).abs() < 1e-5, "{h}");
    }

    #[test]
    fn where_the_disc_is_not_smooth_the_nearest_points_side_of_an_edge_counts() {
        // The node on a ridge 12 mm wide (|y| < 6 mm), 12 mm above what lies either side of it
        // (most of the disc), points every 4 mm (whole millimetres: the grid is symmetric, and
        // the six nearest, at most 5.7 mm away, all lie on the ridge), ±0.5 mm of noise.
        let noise = |i: usize| ((i * 7919) % 11) as f32 / 10.0 * 0.001 - 0.0005;
        let mut w: Vec<[f32; 3]> = (0..169)
            .map(|i| {
                let mm = |k: usize| (k as i32 * 4 - 24) as f32 / 1000.0;
                let (x, y) = (mm(i % 13), mm(i / 13));
                [x, y, if y.abs() < 0.006 { 0.0 } else { -0.012 } + noise(i)]
            })
            .filter(|p| within(p, 0.025))
            .collect();
        let mut all: Vec<f32> = w.iter().map(|p| p[2]).collect();
        assert!(median(&mut all).is_some_and(|m| m < -0.006), "the disc lies mostly off the ridge");
        let h = near_median(w.iter().copied()).unwrap_or(f32::NAN);
        assert!(h.abs() < 1e-3, "{h}");
        // Two of the six nearest 3 cm off (a leaf below the envelope's layer, a multipath
        // point): ignored.
        for p in w.iter_mut() {
            if p[0] == 0.0 && p[1] == 0.0 {
                p[2] += 0.03;
            } else if p[0] == 0.004 && p[1] == 0.0 {
                p[2] -= 0.03;
            }
        }
        let h = near_median(w.iter().copied()).unwrap_or(f32::NAN);
        assert!(h.abs() < 1e-3, "{h}");
        assert_eq!(near_median(w[..2].iter().copied()), None);
        assert!(near_median(w[..3].iter().copied()).is_some());
    }

    #[test]
    fn least_squares_planes_only_where_the_noise_explains_the_residuals() {
        // A tilted plane (3 % across, 1 % along) with ±1.5 mm of noise, 10 x 10 points 7 mm apart.
        let noise = |i: usize| ((i * 7919) % 13) as f32 / 12.0 * 0.003 - 0.0015;
        let pts: Vec<[f32; 3]> = (0..100)
            .map(|i| {
                let (x, y) = ((i % 10) as f32 * 0.007 - 0.0315, (i / 10) as f32 * 0.007 - 0.0315);
                [x, y, 0.1 + 0.01 * x + 0.03 * y + noise(i)]
            })
            .collect();
        let r = 0.035;
        let ls = Moments::of_disc(&pts, r, &mut Columns::default()).smooth_plane(r, 0.008).expect("smooth");
        let mut disc = Disc::default();
        disc.pack(&pts, 0.1);
        assert_eq!(disc.weigh(r as f32), pts.iter().filter(|p| within(p, r as f32)).count());
        let robust = disc.fit(r as f32, 0.008, 0.1).expect("fit");
        assert!((ls[0] - robust.h).abs() < 2e-4, "least squares {} vs robust {}", ls[0], robust.h);
        assert!((ls[0] - 0.1).abs() < 1e-3 && (ls[2] - 0.03).abs() < 0.01, "{ls:?}");
        // One point 2 cm off, a 1 cm step across the disc, or too few points: not smooth.
        let mut outlier = pts.clone();
        outlier[44][2] += 0.02;
        assert!(Moments::of_disc(&outlier, r, &mut Columns::default()).smooth_plane(r, 0.008).is_none());
        let step: Vec<[f32; 3]> =
            pts.iter().map(|p| [p[0], p[1], p[2] + if p[1] > 0.0 { 0.01 } else { 0.0 }]).collect();
        assert!(Moments::of_disc(&step, r, &mut Columns::default()).smooth_plane(r, 0.008).is_none());
        assert!(Moments::of_disc(&pts[..6], r, &mut Columns::default()).smooth_plane(r, 0.008).is_none());
        // Four at a time in single precision, heights from the first point's: the sums of the
        // points within the disc in double precision, and the same plane 100 m up.
        let mut cols = Columns::default();
        for n in [0, 1, 5, 37] {
            let m = Moments::of_disc(&pts[..n], r, &mut cols);
            let h0 = pts.first().map_or(0.0, |p| p[2] as f64);
            let mut want = [0.0f64; 12];
            for p in &pts[..n] {
                let (x, y, h) = (p[0] as f64, p[1] as f64, p[2] as f64 - h0);
                let d2 = (x * x + y * y) / (r * r);
                if d2 < 1.0 {
                    let w = (1.0 - d2) * (1.0 - d2);
                    let terms = [
                        w,
                        w * x,
                        w * y,
                        w * x * x,
                        w * x * y,
                        w * y * y,
                        w * h,
                        w * x * h,
                        w * y * h,
                        w * w,
                        w * h * h,
                        1.0,
                    ];
                    want.iter_mut().zip(terms).for_each(|(s, t)| *s += t);
                }
            }
            for (k, (got, want)) in m.sums.iter().zip(want).enumerate() {
                assert!((got - want).abs() <= 1e-5 * want.abs().max(1e-3), "{n} points, sum {k}: {got} vs {want}");
            }
        }
        let high: Vec<[f32; 3]> = pts.iter().map(|p| [p[0], p[1], p[2] + 100.0]).collect();
        let up = Moments::of_disc(&high, r, &mut cols).smooth_plane(r, 0.008).expect("smooth");
        assert!((up[0] - 100.0 - ls[0]).abs() < 2e-5 && (up[2] - ls[2]).abs() < 1e-4, "{up:?} vs {ls:?}");
    }

    /// Candidates of the slab of s 2..4 over s `a..b` on 20 columns: a noisy plane every `ds` m
    /// along (`per` points across), 6 cm lower where `low(s)`.
    fn surface(a: f64, b: f64, ds: f64, per: usize, low: impl Fn(f64) -> bool) -> Vec<SlabPoint> {
        let mut k = 12345u32;
        let mut c = Vec::new();
        let mut s = a;
        while s < b {
            for i in 0..per {
                k = k.wrapping_mul(1664525).wrapping_add(1013904223);
                let noise = (k >> 8) as f32 / (1u32 << 24) as f32 * 0.002 - 0.001;
                let t = (i as f64 + 0.37) * 0.2 / per as f64;
                let h = 0.01 * s as f32 + 0.03 * t as f32 + noise - if low(s) { 0.06 } else { 0.0 };
                c.push(SlabPoint { ds: (s - SLAB) as f32, t: t as f32, h });
            }
            s += ds;
        }
        c
    }

    #[test]
    fn a_slab_grids_the_same_whatever_part_of_it_a_unit_takes() {
        // The grid starts at s 0.37, so the slab of s 2..4 is rows 163..363, and its low
        // envelope's coarse rows do not start where the grid's do. A work unit may grid any
        // part of it; the rows they share must have the same bits (envelope, discs of 2R +
        // one cell at R 2 cm, margins).
        let g = Geometry { s0: 0.37, s1: 6.37, cell: 0.01, nu: 601, vr: 0.0, nv: 20 };
        for (radius, ds, per) in [(0.025, 0.0025, 20), (0.02, 0.03, 12)] {
            let o = SurfaceOptions { radius, ..Default::default() };
            let c = surface(1.85, 4.15, ds, per, |s| (2.03..2.06).contains(&s) || (3.8..3.83).contains(&s));
            let (whole, _) = estimate_rows(c.clone(), &g, (163, 363), &o, (0, 601));
            let n = whole.iter().filter(|z| z.is_finite()).count();
            assert!(n > 2500, "R {radius}: {n} nodes estimated");
            for part in [(163, 170), (170, 363), (250, 300), (361, 363)] {
                let (z, _) = estimate_rows(c.clone(), &g, part, &o, (0, 601));
                let want = &whole[(part.0 - 163) * g.nv..(part.1 - 163) * g.nv];
                assert!(z.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits()), "R {radius}, rows {part:?}");
            }
        }
        // Rows counted (a unit counts from its gap filling's reach on) beyond the part gridded:
        // none of them.
        let c = surface(1.85, 4.15, 0.0025, 20, |_| false);
        let o = SurfaceOptions::default();
        assert_eq!(estimate_rows(c.clone(), &g, (163, 166), &o, (200, 400)).1, 0);
        assert!(estimate_rows(c, &g, (163, 363), &o, (200, 400)).1 > 0);
    }

    #[test]
    fn bucket_sort_is_a_stable_sort_with_bucket_starts() {
        for (n, buckets) in [(0, 0), (0, 3), (1, 1), (500, 7), (2000, 1)] {
            let keys: Vec<u32> = (0..n).map(|i| ((i * 7919 + 13) % 101 % buckets.max(1)) as u32).collect();
            let items: Vec<usize> = (0..n).collect();
            let (start, sorted) = bucket_sort(&items, &keys, buckets);
            let mut want = items.clone();
            want.sort_by_key(|&i| keys[i]);
            assert_eq!(sorted, want, "{n} items in {buckets} buckets");
            assert_eq!(start.len(), buckets + 1);
            for b in 0..buckets {
                let run = &sorted[start[b] as usize..start[b + 1] as usize];
                assert!(run.iter().all(|&i| keys[i] as usize == b), "bucket {b}");
            }
        }
    }

    #[test]
    fn floor_and_round_index_are_the_library_s() {
        let mut v = vec![0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994, -0.49999999999999994];
        v.extend([1e15 + 0.5, -1e15 - 0.5, 4503599627370495.5, -4503599627370495.5, 1e300, -1e300]);
        // Scaled coordinates as the gridding makes them, on and around half-integers.
        for k in -20_000..20_000 {
            let x = k as f64 * 0.01 / 0.01 + 0.5;
            v.extend([x, f64::from_bits(x.to_bits() + 1), f64::from_bits(x.to_bits() - 1), k as f64 * 0.0137 / 0.05]);
        }
        for x in v {
            assert_eq!(floor(x), x.floor(), "floor {x}");
            let want = if x.abs() < INTEGRAL { x.round() as i64 } else { i64::MIN };
            assert_eq!(round_index(x), want, "round {x}");
        }
        assert!(floor(f64::NAN).is_nan() && round_index(f64::NAN) == i64::MIN);
        assert_eq!(floor(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn gaps_up_to_the_limit_are_filled_linearly() {
        let nan = f32::NAN;
        // Heights up to 3 rows apart are joined (up to 2 missing rows between them). Column 0:
        // 1, 2 missing, 4, 4 missing, 9; column 1: a leading gap, then 1 and 2 missing, inside
        // column 0's gaps; column 2: 3 missing (just too many), then 2 missing.
        let all = Window { rows: (0, 9), count: (0, 9), tiles: (0, 1, 1), per: 9 };
        let mut f = GapFiller::new(3, all);
        let mut out = Vec::new();
        let col0 = [1.0, nan, nan, 4.0, nan, nan, nan, nan, 9.0];
        let col1 = [nan, 2.0, nan, 4.0, 5.0, nan, nan, 8.0, 9.0];
        let col2 = [1.0, nan, nan, nan, 5.0, nan, nan, 8.0, nan];
        for ((a, b), c) in col0.into_iter().zip(col1).zip(col2) {
            f.push(vec![a, b, c]);
            while let Some(r) = f.pop(false) {
                out.push(r);
            }
        }
        while let Some(r) = f.pop(true) {
            out.push(r);
        }
        assert_eq!(f.filled, 2 + 3 + 2);
        let column = |c: usize| out.iter().map(|r| r[c]).collect::<Vec<f32>>();
        assert_eq!(&column(0)[..4], &[1.0, 2.0, 3.0, 4.0]);
        assert!(column(0)[4..8].iter().all(|v| v.is_nan()));
        assert!(column(1)[0].is_nan());
        assert_eq!(&column(1)[1..], &[2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
        assert!(column(2)[1..4].iter().all(|v| v.is_nan()) && column(2)[8].is_nan());
        assert_eq!(&column(2)[4..8], &[5.0, 6.0, 7.0, 8.0]);
        assert_eq!(out.len(), 9);
    }
}
