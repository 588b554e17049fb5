//! The builder a caller feeds map points to ([`SurfaceBuilder`]): it projects them into candidates
//! in parallel runs, keeps them by slab, notes what each slab's candidates say of the road surface,
//! can be retargeted to another road on the same reference line, and grids what it collected into
//! one grid in memory or into tiles written one after another.

use super::{
    datum::{Found, Profile, SlabStats, PROFILE_T},
    grid::{lane_extent, slab_of_row, SurfaceGrid},
    options::{Seen, SurfaceOptions, SurfaceScope, SurfaceStorage, SurfaceUnit},
    project::Project,
    rows::{RowStream, Window},
    spill::{Keeper, Slabs},
};
use crate::frame::RoadFrame;
use crate::Error;
use opendrive::{HeaderOffset, RoadEval};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Collects the surface candidates of a stream of map points.
pub struct SurfaceBuilder<'a> {
    pub(super) proj: Project<'a>,
    pub(super) opts: SurfaceOptions,
    /// The work unit's share (None: all of it).
    pub(super) unit: Option<SurfaceUnit>,
    pub(super) slabs: Keeper,
    pub(super) offered: u64,
    /// What the candidates said of each slab.
    stats: BTreeMap<i64, SlabStats>,
    /// The band of t whose heights find the road surface.
    hist_t: (f64, f64),
    /// Slabs that get candidates (a unit's).
    slab_range: (i64, i64),
    pub(super) progress: Option<Progress<'a>>,
    /// The road residual heights are measured from, when not the one points were collected on.
    pub(super) target: Option<RoadEval<'a>>,
    /// The collecting road's s range the target covers, when it covers part of it: its s is
    /// the collecting road's minus the first.
    pub(super) cut: Option<(f64, f64)>,
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
pub(super) type Progress<'a> = Box<dyn FnMut(usize, usize) + 'a>;

static SPILL_DIRS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl<'a> SurfaceBuilder<'a> {
    /// Grids the surface of `road` (of a file with header `<offset>` `offset`): all of it,
    /// spilling as [`SurfaceStorage::default`].
    pub fn new(
        road: &'a opendrive::Road,
        offset: Option<HeaderOffset>,
        opts: SurfaceOptions,
    ) -> Result<SurfaceBuilder<'a>, Error> {
        SurfaceBuilder::with(road, offset, opts, &SurfaceStorage::default(), SurfaceScope::default())
    }

    /// Grids the surface of `road` (of a file with header `<offset>` `offset`), keeping the
    /// candidates as `storage` says, doing the share of the work `scope` says.
    pub fn with(
        road: &'a opendrive::Road,
        offset: Option<HeaderOffset>,
        opts: SurfaceOptions,
        storage: &SurfaceStorage,
        scope: SurfaceScope,
    ) -> Result<SurfaceBuilder<'a>, Error> {
        let eval = RoadEval::new(road);
        let v_range = opts.v_range.unwrap_or_else(|| lane_extent(&eval, opts.s_range));
        let place = offset.unwrap_or_default().placement();
        let reach = v_range.0.abs().max(v_range.1.abs()) + opts.radius + opts.cell + 1.0;
        let frame = RoadFrame::for_points(&eval, scope.points_box, &place, reach)?;
        let n = SPILL_DIRS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = storage
            .spill_dir
            .clone()
            .unwrap_or_else(std::env::temp_dir)
            .join(format!(".roadscan-spill-{}-{n}", std::process::id()));
        let slabs = Keeper::new(Slabs::new(dir, storage.spill_after));
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
        let slab_range = match (scope.unit, opts.s_range) {
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
            unit: scope.unit,
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
    /// than the collecting road clips the grid to its s range ([`clip_grid`](super::grid::clip_grid); `shift` should
    /// be a whole number of cells, so that u keeps the grid's lattice). Points are collected
    /// within `max_height` of the first road's surface, so the two surfaces must be close.
    pub fn retarget(
        &mut self,
        road: &'a opendrive::Road,
        v_range: Option<(f64, f64)>,
        shift: f64,
    ) -> Result<(), Error> {
        let eval = RoadEval::new(road);
        let first = &self.proj.road;
        let whole = shift == 0.0 && (eval.length() - first.length()).abs() <= 1e-6;
        if !(shift.is_finite() && shift >= 0.0 && shift + eval.length() <= first.length() + 1e-6) {
            return Err(Error::NotWithin {
                road: road.id.clone(),
                length: eval.length(),
                shift,
                within: first.road().id.clone(),
                within_length: first.length(),
            });
        }
        let n = (eval.length() / 10.0).ceil().max(1.0) as usize;
        for i in 0..=n {
            let s = eval.length() * i as f64 / n as f64;
            let (a, b) = (first.pose((s + shift).min(first.length())), eval.pose(s));
            if (a.x - b.x).hypot(a.y - b.y) > 1e-6 {
                return Err(Error::OtherReferenceLine {
                    road: road.id.clone(),
                    of: first.road().id.clone(),
                    s,
                    its_s: s + shift,
                });
            }
        }
        let want = v_range.unwrap_or_else(|| lane_extent(&eval, self.opts.s_range));
        let have = self.proj.v_range;
        let v = (want.0.max(have.0), want.1.min(have.1));
        if v.0 >= v.1 {
            return Err(Error::WidthOutside { want, have });
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
    pub fn add(&mut self, x: &[f64], y: &[f64], z: &[f64]) -> Result<(), Error> {
        let n = x.len().min(y.len()).min(z.len());
        let (proj, opts, range, hist_t) = (&self.proj, &self.opts, self.slab_range, self.hist_t);
        let unit = self.unit;
        let found = crate::par::runs(n, 8192, |i| {
            let mut found = Found::new(opts, unit, range, hist_t);
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

    pub(super) fn seen_with(&self, profile: &Profile) -> Seen {
        let (mut near, mut ext) = (0, (f64::INFINITY, f64::NEG_INFINITY));
        for (&k, st) in &self.stats {
            let (n, e) = if profile.value(k) == 0.0 { (st.near, st.near_s) } else { (st.all, st.all_s) };
            near += n;
            ext = (ext.0.min(e.0), ext.1.max(e.1));
        }
        Seen { offered: self.offered, near, s_range: ext.0.is_finite().then_some(ext) }
    }

    /// The road surface's height above the OpenDRIVE surface along s.
    pub(super) fn profile(&self) -> Profile {
        if self.opts.search_height <= self.opts.max_height {
            return Profile::default();
        }
        Profile::of(&self.stats, self.opts.max_height / 3.0)
    }

    /// Grids what was offered into one grid in memory.
    pub fn finish(self) -> Result<SurfaceGrid, Error> {
        if self.unit.is_some() {
            return Err(Error::Usage("a work unit's grid is written as tiles (write_tiles)"));
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
    ) -> Result<(SurfaceGrid, Vec<PathBuf>), Error> {
        if let Some(SurfaceUnit::Tiles { tile: t, .. }) = self.unit {
            if t.to_bits() != tile.to_bits() {
                return Err(Error::TileMismatch { tile, unit_tile: t });
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
            let mut fail: Option<Error> = None;
            let result = opencrg::write_file_rows(&grid, &p, opencrg::Format::Krbi, |iu, out| {
                let want = first + iu;
                match &last {
                    Some((r, v)) if *r == want => out.copy_from_slice(v),
                    _ => {
                        if let Err(e) = rows.next(out) {
                            let kind = opencrg::ErrorKind::Write(e.to_string());
                            fail = Some(e);
                            return Err(opencrg::Error::new(kind));
                        }
                        last = Some((want, out.to_vec()));
                    }
                }
                Ok(())
            });
            if let Some(e) = fail {
                return Err(e);
            }
            result?;
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
