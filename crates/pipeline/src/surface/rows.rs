//! The grid's rows as they stream out ([`RowStream`]): slabs gridded on a thread of their own as
//! the rows reach them, short along-track gaps filled ([`GapFiller`]), heights turned into z above
//! the datum, the rows and tiles a builder or work unit grids ([`Window`]), the coverage counted,
//! and each tile's grid header on the reference line.

use super::{
    builder::{Progress, SurfaceBuilder},
    grid::{
        clip_grid, coverage_of, gap_rows, grid_extent, grid_rows, lane_band, surveyed_coverage, tile_count, tile_rows,
        ColumnCounts, CoverageMap, Covered, LowCoverage, SurfaceGrid,
    },
    options::{SurfaceOptions, SurfaceUnit, ZMode},
    slabs::{grid_slabs, Gridded},
};
use crate::Error;
use opencrg::Crg;
use opendrive::RoadEval;
use std::collections::VecDeque;

/// The grid's nodes.
#[derive(Debug, Clone, Copy)]
pub(super) struct Geometry {
    pub(super) s0: f64,
    pub(super) s1: f64,
    pub(super) cell: f64,
    pub(super) nu: usize,
    pub(super) vr: f64,
    pub(super) nv: usize,
}

/// The rows a builder grids, and the tiles it writes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Window {
    /// Rows gridded: the tiles' and, for the gap filling, `max_gap` and a row either side.
    pub(super) rows: (usize, usize),
    /// Rows counted in the report (the tiles', without the next tile's first row).
    pub(super) count: (usize, usize),
    /// Tiles written, and tiles in the whole grid.
    pub(super) tiles: (usize, usize, usize),
    /// Rows per tile.
    pub(super) per: usize,
}

impl Window {
    /// The window of tiles `tiles` of `tile` metres of the grid over `s_range` (all of them
    /// when `tiles` is (0, usize::MAX)).
    pub(super) fn of(s_range: (f64, f64), o: &SurfaceOptions, tile: f64, tiles: (usize, usize)) -> Window {
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
pub(super) struct RowStream<'a> {
    progress: Option<Progress<'a>>,
    road: RoadEval<'a>,
    target: Option<RoadEval<'a>>,
    /// The collecting road's s minus the target's (the tiles' u).
    shift: f64,
    opts: SurfaceOptions,
    /// The work unit's share (None: all of it).
    unit: Option<SurfaceUnit>,
    pub(super) g: Geometry,
    /// Gridded slabs, in order, from the gridding thread.
    gridded: Option<std::sync::mpsc::Receiver<Result<Gridded, Error>>>,
    /// The gridding thread, joined when the rows are dropped (it removes the spill files).
    thread: Option<std::thread::JoinHandle<()>>,
    /// Heights of the rows of the current slab, and its row range.
    block: Vec<f32>,
    block_rows: (usize, usize),
    next_est: usize,
    fill: GapFiller,
    pub(super) emitted: usize,
    pub(super) window: Window,
    column: Vec<usize>,
    /// Nodes with a height between the outermost lane borders of the road retargeted to, and
    /// nodes there in all (see [`SurfaceGrid::lane_covered`]).
    lanes: Covered,
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
    pub(super) fn new(mut b: SurfaceBuilder<'a>, tile: Option<f64>) -> Result<RowStream<'a>, Error> {
        let o = b.opts.clone();
        let cell = o.cell;
        if !(cell > 0.0 && cell.is_finite()) {
            return Err(Error::BadOption {
                name: "cell size",
                value: cell,
                why: "must be a positive number of metres",
            });
        }
        let profile = b.profile();
        let seen = b.seen_with(&profile);
        let (s0, s1) = match b.proj.s_range {
            Some(r) => r,
            None if matches!(b.unit, Some(SurfaceUnit::Tiles { .. })) => {
                return Err(Error::Usage("a unit of tiles needs the whole grid's s range"));
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
            return Err(Error::GridTooSmall { nu, nv, s_range: (s0, s1) });
        }
        if nv > 100_000 {
            return Err(Error::GridTooWide { nv });
        }
        let max_cells = gap_rows(&o);
        let g = Geometry { s0, s1, cell, nu, vr, nv };
        let window = match (b.unit, tile) {
            (Some(SurfaceUnit::Count(..)), _) => return Err(Error::Usage("a counting pass grids nothing")),
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
            .map_err(|error| Error::ThreadStart { which: "the gridding thread", error })?;
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
            lanes: Covered::default(),
            map: CoverageMap::new(nv),
            v_at: (0..nv).map(|iv| g.vr + iv as f64 * g.cell).collect(),
            estimated: 0,
            kept: 0,
            offered: b.offered,
            near: seen.near,
            datum,
            opts: o,
            unit: b.unit,
        })
    }

    /// The next row of z (NaN where there is no height).
    pub(super) fn next(&mut self, out: &mut [f32]) -> Result<(), Error> {
        let g = self.g;
        let stop = self.window.rows.1;
        let h = loop {
            if let Some(r) = self.fill.pop(self.next_est == stop) {
                break r;
            }
            if self.next_est == stop {
                return Err(Error::Usage("read past the last row"));
            }
            let iu = self.next_est;
            if iu >= self.block_rows.1 {
                let d = self.gridded.as_ref().and_then(|r| r.recv().ok());
                let d = d.ok_or(Error::Thread { which: "the gridding thread" })??;
                if d.rows.0 != iu {
                    return Err(Error::RowsOutOfOrder { rows: d.rows, expected: iu });
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
                        self.lanes = self.lanes + Covered { with_height: usize::from(!hv.is_nan()), nodes: 1 };
                    }
                }
            }
        }
        Ok(())
    }

    /// An error when the grid `g` of these rows came out nearly empty (not for a unit: its
    /// build checks the whole grid).
    pub(super) fn check(&self, g: &SurfaceGrid) -> Result<(), Error> {
        let o = &self.opts;
        let all = self.column.iter().sum::<usize>();
        let nodes = self.g.nu * self.g.nv;
        // The surveyed share alone is fooled by a grid of a few columns where something (a car's
        // roof) was found: the whole grid must be covered a little too.
        let whole = all as f64 / nodes.max(1) as f64;
        if self.unit.is_none() && (g.coverage < o.min_coverage || whole < 0.5 * o.min_coverage) {
            let e = LowCoverage {
                coverage: g.coverage,
                grid: Covered { with_height: all, nodes },
                min: o.min_coverage,
                max_height: o.max_height,
            };
            return Err(e.into());
        }
        Ok(())
    }

    /// Whether row `iu` counts in the report (is the unit's own).
    fn counted(&self, iu: usize) -> bool {
        iu >= self.window.count.0 && iu < self.window.count.1
    }

    /// The grid of rows first..first + n on the reference line, with heights `z`.
    pub(super) fn tile_grid(&self, first: usize, n: usize, z: Vec<f32>) -> Crg {
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

    pub(super) fn report(&self, crg: Crg) -> SurfaceGrid {
        let g = &self.g;
        let covered = surveyed_coverage(&self.column, self.window.count.1 - self.window.count.0);
        SurfaceGrid {
            crg,
            covered,
            lane_covered: self.lanes,
            coverage: coverage_of(self.lanes, covered),
            column_coverage: self.column.iter().map(|&c| c as f64 / g.nu as f64).collect(),
            column_covered: ColumnCounts {
                per_column: self.column.clone(),
                rows: self.window.count.1 - self.window.count.0,
            },
            estimated: self.estimated,
            filled: self.fill.filled,
            points: super::grid::PointCounts { offered: self.offered, near: self.near, kept: self.kept },
            s_range: (g.s0 - self.shift, g.s1 - self.shift),
            coverage_map: {
                let mut m = self.map.clone();
                m.flush(g.nv);
                m
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
