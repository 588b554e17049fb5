//! The roadside from survey points along a road: a voxel grid in the local map frame and the
//! two depth ribbons beside the reference line.
//!
//! Points are projected into the road frame (as for the surface, in fixed parallel runs) and
//! kept when within `buffer` of the reference line (|t|, like lasclip's corridor) and within
//! the s range. Voxels are axis-aligned in the local map frame (map minus `origin`), so they
//! overlay GIS data; the default origin is the road's start point rounded down to 100 m
//! (height: to 10 m), so the voxel faces of sizes that divide 100 m lie on a global grid.
//! Ribbons are over (s, h) with h = height above the reference line's elevation at s (file
//! frame z minus the elevation profile; superelevation is not applied), or above the road
//! surface found in the points where the axis' elevation is missing or off
//! ([`Roadside::surface_found`], [`RoadsideBuilder::with_datum`]): while the points stream,
//! each 2 m slab counts the heights of the points within 2 m of the reference line, and the
//! slabs' lowest dense layers, as for the CRG surface (`surface/`), give the road surface.

use crate::frame::RoadFrame;
use crate::section::{SectionGrid, SectionOptions};
use crate::surface::{SlabStats, PROFILE_T, SLAB};
use crate::Error;
use opendrive::{HeaderOffset, Placement, RoadEval};
use std::collections::BTreeMap;
use voxel::part::{Reader, Writer};
use voxel::{Ribbon, Side, VoxelGrid, VoxelKey};

/// Settings of the ribbons.
#[derive(Debug, Clone, PartialEq)]
pub struct RibbonOptions {
    /// Pixel size, m.
    pub cell: f64,
    /// Heights covered, m above the reference line's elevation.
    pub h_range: (f64, f64),
    /// Depths |t| closer than this are not counted (0: the road surface shows at the
    /// bottom), m.
    pub min_depth: f64,
}

impl Default for RibbonOptions {
    fn default() -> Self {
        RibbonOptions { cell: 0.1, h_range: (-2.0, 20.0), min_depth: 0.0 }
    }
}

/// Settings of the roadside products.
#[derive(Debug, Clone, PartialEq)]
pub struct RoadsideOptions {
    /// Points farther than this from the reference line (|t|) are dropped, m.
    pub buffer: f64,
    /// Part of the road, m of s (default: all of it).
    pub s_range: Option<(f64, f64)>,
    /// Voxel size, m (None: no voxels).
    pub voxel_size: Option<f64>,
    /// Map coordinates of the voxels' local origin (default: see the module docs).
    pub origin: Option<[f64; 3]>,
    /// Ribbons (None: none).
    pub ribbons: Option<RibbonOptions>,
    /// Cross sections (None: none).
    pub sections: Option<SectionOptions>,
    /// A work unit's share of the points: only those with s in `part.0 <= s < part.1` are
    /// kept; the ribbons and cross sections hold only the part's columns and rows, numbered
    /// as in the whole `s_range`, so the units' parts add up ([`Roadside::merge_part`]) to
    /// what one builder of all the points makes, in memory that follows the part's length.
    pub part: Option<(f64, f64)>,
    /// The points' map-frame box where known: the road frame covers only the reference line
    /// near it (see `SurfaceScope::points_box`).
    pub points_box: Option<[f64; 4]>,
    /// The ribbons and cross sections hold only the columns and rows of the s the road frame
    /// covers (that the points' box reaches), numbered as in the whole `s_range` as a `part`'s
    /// are: a survey of 500 m of a 20 km map road holds 500 m of grids, not 20 km. Products
    /// cut to the surveyed part ([`Roadside::cut_to`]) are the same either way.
    pub clip_to_points: bool,
}

impl Default for RoadsideOptions {
    fn default() -> Self {
        RoadsideOptions {
            buffer: 50.0,
            s_range: None,
            voxel_size: Some(1.0),
            origin: None,
            ribbons: None,
            sections: None,
            part: None,
            points_box: None,
            clip_to_points: false,
        }
    }
}

/// A chunk of points as columns (map frame, m); all as long as `x`.
#[derive(Debug, Clone, Copy)]
pub struct PointColumns<'p> {
    /// m.
    pub x: &'p [f64],
    /// m.
    pub y: &'p [f64],
    /// m.
    pub z: &'p [f64],
    /// Intensity.
    pub intensity: &'p [u16],
    /// Class.
    pub class: &'p [u8],
    /// Colour, if the points have it.
    pub rgb: Option<&'p [[u16; 3]]>,
}

/// Builds the roadside products from streamed points.
pub struct RoadsideBuilder<'a> {
    road: RoadEval<'a>,
    frame: RoadFrame,
    place: Placement,
    s_range: (f64, f64),
    part: (f64, f64),
    buffer: f64,
    grid: Option<VoxelGrid>,
    ribbons: Option<[Ribbon; 2]>,
    sections: Option<SectionGrid>,
    /// Keyed points of the last chunk, not yet in the grid.
    pending: Option<Pending>,
    /// Largest |curvature| of the reference line, 1/m.
    kappa_max: f64,
    offered: u64,
    kept: u64,
    /// Heights (above the datum) of the points within [`PROFILE_T`] of the reference line, by
    /// 2 m slab (with ribbons or sections).
    stats: BTreeMap<i64, SlabStats>,
    /// The road surface's height above the elevation profile, subtracted from every h.
    datum: Option<SurfaceDatum>,
    /// The s extent of the points kept.
    s_seen: Option<(f64, f64)>,
}

/// The road surface's height above the reference line's elevation profile along s, found in
/// the points near the reference line ([`Roadside::surface_found`]): a value per 2 m slab,
/// linear between the slabs' middles.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceDatum {
    /// The first slab, and the value of each slab from it.
    k0: i64,
    off: Vec<f64>,
    /// Slabs whose points gave a layer.
    slabs: usize,
}

/// Slabs either side of a slab whose surface heights give its value.
const DATUM_HALF: usize = 2;

impl SurfaceDatum {
    /// The datum of the slabs' heights: each slab's lowest dense layer (as for the CRG
    /// surface), refined to the median of the heights within 0.15 m of it; then, for each slab,
    /// the Theil-Sen line through the values of the five slabs around it (moved inwards at the
    /// ends, so a grade gives no lag there), which a car hiding one slab's road does not move;
    /// a slab without a value takes the nearest one's; zero where within `zero` m.
    fn of(stats: &BTreeMap<i64, SlabStats>, zero: f64) -> Option<SurfaceDatum> {
        let raw: Vec<(i64, f64)> =
            stats.iter().filter_map(|(&k, st)| st.layer().map(|l| (k, st.median_near(l, 0.15).unwrap_or(l)))).collect();
        let (&(k0, _), &(k1, _)) = (raw.first()?, raw.last()?);
        let n = (k1 - k0 + 1) as usize;
        let mut off = vec![0.0; n];
        let mut slopes = Vec::new();
        let mut levels = Vec::new();
        for (i, o) in off.iter_mut().enumerate() {
            let k = k0 + i as i64;
            // The nearest slab with a value, and the window of five around it.
            let c = raw.partition_point(|e| e.0 < k);
            let c = match (c.checked_sub(1), raw.get(c)) {
                (Some(p), Some(q)) if k - raw[p].0 <= q.0 - k => p,
                (_, Some(_)) => c,
                (p, None) => p.unwrap_or(0),
            };
            let a = c.saturating_sub(DATUM_HALF).min(raw.len().saturating_sub(2 * DATUM_HALF + 1));
            let w = &raw[a..(a + 2 * DATUM_HALF + 1).min(raw.len())];
            slopes.clear();
            for (j, p) in w.iter().enumerate() {
                for q in &w[j + 1..] {
                    slopes.push((q.1 - p.1) / (q.0 - p.0) as f64);
                }
            }
            let slope = median(&mut slopes).unwrap_or(0.0);
            levels.clear();
            levels.extend(w.iter().map(|p| p.1 + slope * (k - p.0) as f64));
            let v = median(&mut levels).unwrap_or(0.0);
            *o = if v.abs() > zero { v } else { 0.0 };
        }
        Some(SurfaceDatum { k0, off, slabs: raw.len() })
    }

    /// The value of slab `k` (the first's or the last's beyond them).
    fn value(&self, k: i64) -> f64 {
        let i = (k - self.k0).clamp(0, self.off.len() as i64 - 1) as usize;
        self.off.get(i).copied().unwrap_or(0.0)
    }

    /// The road surface's height above the elevation profile at `s`, m: linear between the
    /// slabs' middles.
    pub fn at(&self, s: f64) -> f64 {
        let x = s / SLAB - 0.5;
        let k = x.floor();
        let (a, b) = (self.value(k as i64), self.value(k as i64 + 1));
        a + (b - a) * (x - k)
    }

    /// Slabs of 2 m whose points gave the road surface.
    pub fn slabs(&self) -> usize {
        self.slabs
    }

    /// Whether the elevation profile is the road surface everywhere (within the tolerance the
    /// datum was found with).
    pub fn is_zero(&self) -> bool {
        self.off.iter().all(|&v| v == 0.0)
    }

    /// The smallest and largest height of the road surface above the elevation profile, m.
    pub fn range(&self) -> (f64, f64) {
        let v = &self.off;
        (v.iter().copied().fold(f64::INFINITY, f64::min), v.iter().copied().fold(f64::NEG_INFINITY, f64::max))
    }
}

/// The median of `v` (reordered), None when empty.
fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable_by(f64::total_cmp);
    let m = v.len();
    Some(if m % 2 == 1 { v[m / 2] } else { 0.5 * (v[m / 2 - 1] + v[m / 2]) })
}

/// Keyed points waiting for the grid.
struct Pending {
    keys: Vec<VoxelKey>,
    intensity: Vec<u16>,
    class: Vec<u8>,
    rgb: Option<Vec<[u16; 3]>>,
}

impl std::fmt::Debug for RoadsideBuilder<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RoadsideBuilder")
            .field("road", &self.road.road().id)
            .field("s_range", &self.s_range)
            .field("offered", &self.offered)
            .field("kept", &self.kept)
            .finish_non_exhaustive()
    }
}

/// The points a roadside builder saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RoadsidePoints {
    /// Points offered to the builder.
    pub offered: u64,
    /// Kept: within the buffer and the s range.
    pub kept: u64,
}

/// What the builder made.
#[derive(Debug)]
pub struct Roadside {
    /// The voxels, if asked for.
    pub grid: Option<VoxelGrid>,
    /// The road frame, for [`Roadside::stations`].
    frame: RoadFrame,
    place: Placement,
    /// Left and right ribbons, if asked for.
    pub ribbons: Option<[Ribbon; 2]>,
    /// Cross sections, if asked for.
    pub sections: Option<SectionGrid>,
    /// Points offered, and kept (within the buffer and the s range).
    pub points: RoadsidePoints,
    /// The s range covered, m.
    pub s_range: (f64, f64),
    stats: BTreeMap<i64, SlabStats>,
    s_seen: Option<(f64, f64)>,
    /// The part of the road the products were cut to ([`Roadside::cut_to`]), in the road's s.
    cut: Option<(f64, f64)>,
}

impl<'a> RoadsideBuilder<'a> {
    /// A builder for `road` (of a file with header `<offset>` `offset`).
    pub fn new(
        road: &'a opendrive::Road,
        offset: Option<HeaderOffset>,
        opts: &RoadsideOptions,
    ) -> Result<RoadsideBuilder<'a>, Error> {
        let eval = RoadEval::new(road);
        let place = offset.unwrap_or_default().placement();
        if !(opts.buffer.is_finite() && opts.buffer > 0.0) {
            return Err(Error::BadOption {
                name: "buffer",
                value: opts.buffer,
                why: "must be a positive number of metres",
            });
        }
        let reach = opts.buffer + opts.sections.as_ref().map_or(0.0, |s| s.half_width) + 1.0;
        let frame = RoadFrame::for_points(&eval, opts.points_box, &place, reach)?;
        let kappa_max = frame.max_curvature();
        let s_range = opts.s_range.unwrap_or((0.0, eval.length()));
        if !(s_range.0 >= 0.0 && s_range.1 <= eval.length() + 1e-9 && s_range.1 > s_range.0) {
            return Err(Error::OutsideRoad { s_range, road: road.id.clone(), length: eval.length() });
        }
        let grid = match opts.voxel_size {
            Some(size) => {
                let origin = opts.origin.unwrap_or_else(|| {
                    let p = eval.pose(0.0);
                    let [x, y, z] = place.to_map([p.x, p.y, eval.elevation(0.0)]);
                    [(x / 100.0).floor() * 100.0, (y / 100.0).floor() * 100.0, (z / 10.0).floor() * 10.0]
                });
                Some(VoxelGrid::new(size, origin)?)
            }
            None => None,
        };
        // The grids' part: the unit's, within the s the points can reach when clipped.
        let covered = frame.covered();
        let grid_part = match (opts.part, opts.clip_to_points && covered.0 < covered.1) {
            (Some((a, b)), true) => Some((a.max(covered.0), b.min(covered.1))).filter(|(a, b)| a < b).or(opts.part),
            (None, true) => Some(covered),
            (part, false) => part,
        };
        let ribbons = match &opts.ribbons {
            Some(r) => {
                let depth = (r.min_depth, opts.buffer);
                let make = |side| Ribbon::new_part(side, s_range, r.h_range, r.cell, depth, grid_part);
                Some([make(Side::Left)?, make(Side::Right)?])
            }
            None => None,
        };
        // A unit holds only its part's rows and columns.
        let sections = opts.sections.as_ref().map(|o| SectionGrid::new_part(s_range, o, grid_part)).transpose()?;
        Ok(RoadsideBuilder {
            road: eval,
            frame,
            place,
            s_range,
            part: opts.part.unwrap_or((f64::NEG_INFINITY, f64::INFINITY)),
            buffer: opts.buffer,
            grid,
            ribbons,
            sections,
            pending: None,
            kappa_max,
            offered: 0,
            kept: 0,
            stats: BTreeMap::new(),
            datum: None,
            s_seen: None,
        })
    }

    /// Heights h are measured above `datum` (the road surface found in the points by a
    /// builder of the same road, [`Roadside::surface_found`]) instead of the elevation profile.
    pub fn with_datum(mut self, datum: SurfaceDatum) -> RoadsideBuilder<'a> {
        self.datum = (!datum.is_zero()).then_some(datum);
        self
    }

    /// Offers a chunk of points; an error names a point the voxel grid cannot place
    /// ([`Error::Point`], by its index in the chunk, for the caller to name it in its file).
    pub fn add(&mut self, p: PointColumns<'_>) -> Result<(), Error> {
        let n = p.x.len();
        if [p.y.len(), p.z.len(), p.intensity.len(), p.class.len(), p.rgb.map_or(n, |c| c.len())]
            .iter()
            .any(|&l| l != n)
        {
            return Err(Error::Usage("point columns of different lengths"));
        }
        let (frame, road, place, (s0, s1), buffer) = (&self.frame, &self.road, self.place, self.s_range, self.buffer);
        let (p0, p1) = self.part;
        let (lattice, want_st) =
            (self.grid.as_ref().map(VoxelGrid::lattice), self.ribbons.is_some() || self.sections.is_some());
        // Per run, in order: the points kept (index, s, t, h) and their voxel keys.
        type Run = (Vec<(u32, f64, f64, f64)>, Vec<VoxelKey>);
        // Voxels alone need no (s, t), only whether a point is inside the corridor: a point
        // within NEAR of the last point projected exactly (the anchor) is, when the anchor lies
        // at least NEAR inside the buffer and 2·NEAR inside the s range and the reference line
        // cannot stretch s by 2x there (|t| moves by at most the distance, s by at most twice
        // it). Scan-ordered points are centimetres apart, so few are projected.
        const NEAR: f64 = 1.0;
        let kappa = self.kappa_max;
        let inside = |s: f64, t: f64| {
            t.abs() + NEAR <= buffer
                && s - 2.0 * NEAR >= s0.max(p0)
                && s + 2.0 * NEAR <= s1
                && s + 2.0 * NEAR < p1
                && kappa * (t.abs() + NEAR) <= 0.5
        };
        let project = || {
            crate::par::runs(n, 8192, |range| -> Result<Run, Error> {
                let mut last = None;
                let mut profile = road.profile_cursor();
                let mut anchor: Option<(f64, f64)> = None;
                let (mut kept, mut keys) = (Vec::new(), Vec::new());
                for i in range {
                    let [fx, fy, fz] = place.to_file([p.x[i], p.y[i], p.z[i]]);
                    let near =
                        anchor.is_some_and(|(ax, ay)| (fx - ax) * (fx - ax) + (fy - ay) * (fy - ay) <= NEAR * NEAR);
                    let (s, t) = if near && !want_st {
                        (f64::NAN, f64::NAN)
                    } else {
                        // Points beyond the buffer are rejected without a search of the table.
                        let Some((s, t)) = frame.project_within(&mut last, fx, fy, (-buffer, buffer)) else {
                            continue;
                        };
                        if t.abs() > buffer || s < s0 || s > s1 || s < p0 || s >= p1 {
                            continue;
                        }
                        anchor = inside(s, t).then_some((fx, fy));
                        (s, t)
                    };
                    let h = if want_st { fz - profile.elevation(s) } else { 0.0 };
                    kept.push((i as u32, s, t, h));
                    if let Some(g) = &lattice {
                        keys.push(g.key(p.x[i], p.y[i], p.z[i]).map_err(|error| Error::Point { index: i, error })?);
                    }
                }
                Ok((kept, keys))
            })
        };
        // The previous chunk's voxels fill on one thread while this chunk is projected.
        let (grid, pending) = (&mut self.grid, self.pending.take());
        let runs = std::thread::scope(|sc| {
            let fill = sc.spawn(move || match (grid.as_mut(), pending) {
                (Some(g), Some(p)) => g.add_keyed(&p.keys, &p.intensity, &p.class, p.rgb.as_deref(), 1),
                _ => Ok(()),
            });
            let runs = project();
            (fill.join(), runs)
        });
        let (filled, runs) = runs;
        filled.map_err(|_| Error::Thread { which: "the voxel thread" })??;
        let runs = runs?;
        self.offered += n as u64;
        let (mut kept, mut keys) = (Vec::new(), Vec::new());
        for r in runs {
            let (k, g) = r?;
            kept.extend(k);
            keys.extend(g);
        }
        self.kept += kept.len() as u64;
        let intensity: Vec<u16> = kept.iter().map(|k| p.intensity[k.0 as usize]).collect();
        let rgb: Option<Vec<[u16; 3]>> = p.rgb.map(|c| kept.iter().map(|k| c[k.0 as usize]).collect());
        if want_st {
            let datum = self.datum.as_ref();
            let (s, t, h): (Vec<f64>, Vec<f64>, Vec<f64>) = (
                kept.iter().map(|k| k.1).collect(),
                kept.iter().map(|k| k.2).collect(),
                kept.iter().map(|k| datum.map_or(k.3, |d| k.3 - d.at(k.1))).collect(),
            );
            // The heights near the reference line, for the road surface; the s seen.
            for ((&s, &t), &h) in s.iter().zip(&t).zip(&h) {
                let seen = self.s_seen.get_or_insert((s, s));
                *seen = (seen.0.min(s), seen.1.max(s));
                if t.abs() <= PROFILE_T && h.is_finite() {
                    self.stats.entry((s / SLAB).floor() as i64).or_default().add_height(h as f32);
                }
            }
            let (s, t, h, i, c) = (&s, &t, &h, &intensity, rgb.as_deref());
            if let Some([left, right]) = self.ribbons.as_mut() {
                std::thread::scope(|sc| {
                    sc.spawn(move || left.add(s, t, h, i, c));
                    right.add(s, t, h, i, c);
                });
            }
            if let Some(g) = self.sections.as_mut() {
                g.add(s, t, h, i);
            }
        }
        if self.grid.is_some() {
            let class: Vec<u8> = kept.iter().map(|k| p.class[k.0 as usize]).collect();
            self.pending = Some(Pending { keys, intensity, class, rgb });
        }
        Ok(())
    }

    /// The products; an error when the last chunk cannot go into the grid.
    pub fn finish(mut self) -> Result<Roadside, Error> {
        if let (Some(g), Some(p)) = (self.grid.as_mut(), self.pending.take()) {
            g.add_keyed(&p.keys, &p.intensity, &p.class, p.rgb.as_deref(), crate::par::threads())?;
        }
        Ok(Roadside {
            grid: self.grid,
            frame: self.frame,
            place: self.place,
            ribbons: self.ribbons,
            sections: self.sections,
            points: RoadsidePoints { offered: self.offered, kept: self.kept },
            s_range: self.s_range,
            stats: self.stats,
            s_seen: self.s_seen,
            cut: None,
        })
    }
}

/// What a roadside part file starts with.
const PART_MAGIC: &[u8; 24] = b"roadscan roadside part 1";

impl Roadside {
    /// Which grids there are: voxels, ribbons, sections as bits 0, 1, 2.
    fn products(&self) -> u8 {
        u8::from(self.grid.is_some()) | u8::from(self.ribbons.is_some()) << 1 | u8::from(self.sections.is_some()) << 2
    }

    /// The grids as bytes (voxels, ribbons, cross sections, points kept), for
    /// [`Roadside::merge_part`]: a work unit's share of a build.
    pub fn to_part(&self) -> Vec<u8> {
        let mut w = Writer::default();
        w.bytes.extend_from_slice(PART_MAGIC);
        w.u64(self.points.kept);
        w.u8(self.products());
        if let Some(g) = &self.grid {
            g.write_part(&mut w);
        }
        for r in self.ribbons.iter().flatten() {
            r.write_part(&mut w);
        }
        if let Some(s) = &self.sections {
            s.write_part(&mut w);
        }
        w.bytes
    }

    /// Adds a part made by [`Roadside::to_part`] of a builder with the same options (apart from
    /// `part`): a build's units, merged, give the same grids as one builder of all the points.
    /// The points offered are not in a part (a unit may read points of its neighbours' ranges).
    pub fn merge_part(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let Some(body) = bytes.strip_prefix(PART_MAGIC.as_slice()) else {
            return Err(Error::NotAPart);
        };
        let at = |what, r: &Reader, error| Error::Part { what, at: r.offset() + PART_MAGIC.len(), error };
        let mut r = Reader::new(body);
        self.points.kept += r.u64()?;
        let has = r.u8()?;
        r.expect(has == self.products(), "a part with other products (voxels, ribbons, sections)")?;
        if let Some(g) = self.grid.as_mut() {
            g.merge_part(&mut r).map_err(|e| at("voxels", &r, e))?;
        }
        for rb in self.ribbons.iter_mut().flatten() {
            rb.merge_part(&mut r).map_err(|e| at("a ribbon", &r, e))?;
        }
        if let Some(s) = self.sections.as_mut() {
            s.merge_part(&mut r).map_err(|e| at("cross sections", &r, e))?;
        }
        Ok(r.end()?)
    }

    /// The road surface near the reference line, above the heights h were measured from (the
    /// elevation profile, or the builder's datum), from the points this builder saw (not those
    /// of parts merged): each 2 m slab's lowest dense layer of heights within 2 m of the
    /// reference line, a line through five slabs' (see `SurfaceDatum::of`), zero where within
    /// `zero` m. None when no slab had enough points near the reference line.
    pub fn surface_found(&self, zero: f64) -> Option<SurfaceDatum> {
        SurfaceDatum::of(&self.stats, zero)
    }

    /// The s extent of the points kept by the builder (not by parts merged), if any.
    pub fn s_seen(&self) -> Option<(f64, f64)> {
        self.s_seen
    }

    /// Station s and offset t of map points (e.g. voxel centres, best in a spatial order: each
    /// search starts from the previous point's station), None where the foot lies beyond the
    /// road's ends (of the part, after [`Roadside::cut_to`], whose s it is then).
    pub fn stations(&self, points: impl IntoIterator<Item = [f64; 3]>) -> Vec<Option<(f64, f64)>> {
        let mut last = None;
        points
            .into_iter()
            .map(|p| {
                let [fx, fy, _] = self.place.to_file(p);
                let st = self.frame.project_from(&mut last, fx, fy);
                match (st, self.cut) {
                    (Some((s, t)), Some((a, b))) => (s >= a && s <= b).then_some((s - a, t)),
                    _ => st,
                }
            })
            .collect()
    }

    /// Puts the products in the s of the road's part `a..b` (as `opendrive::road_part` cuts
    /// it: s - a): the ribbons keep the columns over it, `s_range` is what of it was covered,
    /// and [`Roadside::stations`] give s on the part. The voxels (in the map frame) and the
    /// cross sections stay as they are; no part can be merged afterwards.
    pub fn cut_to(&mut self, (a, b): (f64, f64)) -> Result<(), Error> {
        let (lo, hi) = (self.s_range.0.max(a), self.s_range.1.min(b));
        if self.cut.is_some() || !(a.is_finite() && b.is_finite() && lo < hi) {
            return Err(Error::CannotCut { s_range: self.s_range, to: (a, b) });
        }
        if let Some(ribbons) = self.ribbons.as_mut() {
            for r in ribbons.iter_mut() {
                *r = r.cropped((a, b), a);
            }
        }
        self.s_range = (lo - a, hi - a);
        self.cut = Some((a, b));
        Ok(())
    }
}
