//! An OpenCRG grid laid on its OpenDRIVE road and cast as its own triangles.
//!
//! Node (iu, iv) of the grid lies at `B[iu] + v[iv] * D[iu]` in plan, where `B` is the road's
//! reference point at the row's s (moved by tOffset along the left normal) and `D` the left
//! normal (reversed for `orientation="opposite"`); its height is the road's surface there
//! (elevation plus t times the planar cross slope; nothing for `attached0`) plus
//! `zOffset + zScale * z_crg`. Each cell is two triangles split along the diagonal from
//! (iu, iv) to (iu + 1, iv + 1). A tree of exact bounds over blocks of `LEAF` x `LEAF` cells
//! finds the cells a ray can hit; the 1 cm grid of a 150 m road (10 M nodes) is never turned
//! into a triangle list.

use crate::bvh::{Bvh, Node, SlabRay, MAX_DEPTH};
use crate::geom::{cross, sub, Aabb, Hit, Ray, V3};
use crate::material::Tag;
use crate::mesh::triangle;
use crate::Error;
use opendrive::eval::marks::PaintLine;
use opendrive::RoadEval;

/// Cells per leaf side.
const LEAF: usize = 2;

/// How a CRG grid lies on its road: the numbers of a `<surface><CRG>` record.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CrgLink {
    /// Road s where the grid's first cross section lies (`orientation="same"`), m.
    pub s_start: f64,
    /// End of the road range the grid covers, m.
    pub s_end: f64,
    /// `orientation="same"`: u runs with s and v with t; otherwise against both.
    pub same: bool,
    /// `mode="attached"`: heights are added to the road's surface; `attached0`: they replace it.
    pub on_surface: bool,
    /// tOffset, m.
    pub t_offset: f64,
    /// zOffset, m.
    pub z_offset: f64,
    /// zScale.
    pub z_scale: f64,
}

impl CrgLink {
    /// The link a road's `<CRG>` record gives (`attached` or `attached0` only).
    pub fn of(c: &opendrive::model::RoadCrg) -> Result<CrgLink, Error> {
        let on_surface = match c.mode.as_str() {
            "attached" => true,
            "attached0" => false,
            other => return Err(Error::Mode { mode: other.to_string() }),
        };
        let link = CrgLink {
            s_start: c.s_start,
            s_end: c.s_end,
            same: c.orientation != "opposite",
            on_surface,
            t_offset: c.t_offset.unwrap_or(0.0),
            z_offset: c.z_offset.unwrap_or(0.0),
            z_scale: c.z_scale.unwrap_or(1.0),
        };
        for (what, value) in [
            ("sStart", link.s_start),
            ("sEnd", link.s_end),
            ("tOffset", link.t_offset),
            ("zOffset", link.z_offset),
            ("zScale", link.z_scale),
        ] {
            if !value.is_finite() {
                return Err(Error::Link { what, value });
            }
        }
        if link.s_end <= link.s_start {
            return Err(Error::Link { what: "sEnd (not after sStart)", value: link.s_end });
        }
        Ok(link)
    }
}

/// Painted intervals of v per cross section (from the road's marks), and the tag they get.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PaintBands {
    /// Start of each row's intervals in `bands` (one more entry than rows).
    start: Vec<u32>,
    /// (v low, v high).
    bands: Vec<(f32, f32)>,
    /// What paint is.
    tag: Tag,
}

/// One cross section: the plan position of v = 0, the plan direction of +v, and z = `z0 + v *
/// dz` of the road's surface.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Row {
    b: [f64; 2],
    d: [f64; 2],
    z0: f64,
    dz: f64,
}

/// Sizes of a heightfield.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeightfieldStats {
    /// Cross sections on the road.
    pub rows: usize,
    /// Long sections.
    pub columns: usize,
    /// Nodes without a height.
    pub holes: usize,
    /// Cells with four heights (two triangles each).
    pub cells: usize,
    /// Nodes of the tree.
    pub tree_nodes: usize,
    /// Memory held, bytes.
    pub bytes: usize,
}

/// A CRG grid on its road, ready to cast.
#[derive(Debug, Clone)]
pub struct Heightfield {
    rows: Vec<Row>,
    v: Vec<f64>,
    /// `z_offset + z_scale * z_crg`, row-major; NaN = no data.
    z: Vec<f32>,
    bvh: Bvh,
    base: Tag,
    paint: Option<PaintBands>,
    cells: usize,
}

impl Heightfield {
    /// Lays `crg` (evaluated as the C-API does: NaN handling and modifiers applied) on `road`
    /// as `link` says, every surface tagged `base`. Rows outside the link's s range and the
    /// road's length are left out.
    pub fn new(road: &RoadEval, link: &CrgLink, crg: &opencrg::Surface, base: Tag) -> Result<Heightfield, Error> {
        let (nu, nv) = (crg.nu(), crg.v_positions().len());
        if nu < 2 || nv < 2 {
            return Err(Error::GridTooSmall { nu, nv });
        }
        let u0 = crg.u_at(0);
        let sign = if link.same { 1.0 } else { -1.0 };
        let (s_lo, s_hi) = (link.s_start.max(0.0), link.s_end.min(road.length()));
        let mut rows = Vec::new();
        let mut first_row = None;
        for iu in 0..nu {
            let du = crg.u_at(iu) - u0;
            let s = if link.same { link.s_start + du } else { link.s_end - du };
            if s < s_lo - 1e-6 || s > s_hi + 1e-6 {
                continue;
            }
            let s = s.clamp(s_lo, s_hi);
            first_row.get_or_insert(iu);
            let p = road.pose(s);
            let (sn, cs) = p.hdg.sin_cos();
            let left = [-sn, cs];
            let b = [p.x + link.t_offset * left[0], p.y + link.t_offset * left[1]];
            let d = [sign * left[0], sign * left[1]];
            let (z0, dz) = if link.on_surface {
                let (e, c) = (road.elevation(s), road.planar_cross_slope(s));
                (e + link.t_offset * c + link.z_offset, sign * c)
            } else {
                (link.z_offset, 0.0)
            };
            rows.push(Row { b, d, z0, dz });
        }
        let first = first_row.unwrap_or(0);
        if rows.len() < 2 {
            return Err(Error::GridTooSmall { nu: rows.len(), nv });
        }
        let mut z = Vec::with_capacity(rows.len() * nv);
        for iu in first..first + rows.len() {
            for iv in 0..nv {
                z.push((link.z_scale * crg.node_z(iu, iv)) as f32);
            }
        }
        let mut hf =
            Heightfield { rows, v: crg.v_positions().to_vec(), z, bvh: Bvh::default(), base, paint: None, cells: 0 };
        hf.build_tree();
        Ok(hf)
    }

    /// Tags the parts of the surface that `lines` paint (at each row's station) with `tag`.
    /// `s_of_row` gives the road's s of the heightfield's rows as [`Heightfield::new`] placed
    /// them; `road` and `link` must be those it was made with.
    pub fn paint(&mut self, road: &RoadEval, link: &CrgLink, crg: &opencrg::Surface, lines: &[PaintLine], tag: Tag) {
        let u0 = crg.u_at(0);
        let sign = if link.same { 1.0 } else { -1.0 };
        let (s_lo, s_hi) = (link.s_start.max(0.0), link.s_end.min(road.length()));
        let mut bands = PaintBands { start: vec![0], bands: Vec::new(), tag };
        for iu in 0..crg.nu() {
            let du = crg.u_at(iu) - u0;
            let s = if link.same { link.s_start + du } else { link.s_end - du };
            if s < s_lo - 1e-6 || s > s_hi + 1e-6 {
                continue;
            }
            for (t0, t1) in road.painted_at(lines, s.clamp(s_lo, s_hi)) {
                let (a, b) = (sign * (t0 - link.t_offset), sign * (t1 - link.t_offset));
                bands.bands.push((a.min(b) as f32, a.max(b) as f32));
            }
            bands.start.push(bands.bands.len() as u32);
        }
        if bands.start.len() == self.rows.len() + 1 {
            self.paint = Some(bands);
        }
    }

    /// Node (iu, iv) (rows counted from the first on the road), or None for a hole.
    pub fn node(&self, iu: usize, iv: usize) -> Option<V3> {
        let nv = self.v.len();
        let r = self.rows.get(iu)?;
        let v = *self.v.get(iv)?;
        let z = *self.z.get(iu * nv + iv)?;
        (!z.is_nan()).then(|| [r.b[0] + v * r.d[0], r.b[1] + v * r.d[1], r.z0 + v * r.dz + z as f64])
    }

    /// The four corners of cell (iu, iv): (iu, iv), (iu+1, iv), (iu+1, iv+1), (iu, iv+1).
    #[inline]
    fn corners(&self, iu: usize, iv: usize) -> Option<[V3; 4]> {
        Some([self.node(iu, iv)?, self.node(iu + 1, iv)?, self.node(iu + 1, iv + 1)?, self.node(iu, iv + 1)?])
    }

    /// Builds the tree over blocks of cells (splits on block boundaries, children adjacent).
    fn build_tree(&mut self) {
        let (cu, cv) = (self.rows.len() - 1, self.v.len() - 1);
        let mut nodes = Vec::new();
        let mut cells = 0;
        let root = self.subtree(&mut nodes, &mut cells, (0, cu), (0, cv), 0);
        self.cells = cells;
        self.bvh = match root {
            Some(r) => {
                nodes.push(r);
                let at = nodes.len() as u32 - 1;
                Bvh::from_nodes(nodes, at)
            }
            None => Bvh::default(),
        };
    }

    fn subtree(
        &self,
        nodes: &mut Vec<Node>,
        cells: &mut usize,
        u: (usize, usize),
        v: (usize, usize),
        depth: usize,
    ) -> Option<Node> {
        let (bu, bv) = ((u.1 - u.0).div_ceil(LEAF), (v.1 - v.0).div_ceil(LEAF));
        if (bu <= 1 && bv <= 1) || depth + 1 >= MAX_DEPTH {
            let mut b = Aabb::EMPTY;
            for iu in u.0..u.1 {
                for iv in v.0..v.1 {
                    if let Some(c) = self.corners(iu, iv) {
                        c.iter().for_each(|p| b.grow(*p));
                        *cells += 1;
                    }
                }
            }
            // A leaf names its first cell: `first` = row, `count` = column + 1, and spans
            // LEAF x LEAF cells from there (clipped to the grid).
            return (!b.is_empty()).then(|| Node::new(&b, u.0 as u32, v.0 as u32 + 1));
        }
        let (a, b) = if bu >= bv {
            let m = u.0 + (bu / 2) * LEAF;
            (self.subtree(nodes, cells, (u.0, m), v, depth + 1), self.subtree(nodes, cells, (m, u.1), v, depth + 1))
        } else {
            let m = v.0 + (bv / 2) * LEAF;
            (self.subtree(nodes, cells, u, (v.0, m), depth + 1), self.subtree(nodes, cells, u, (m, v.1), depth + 1))
        };
        match (a, b) {
            (Some(a), Some(b)) => {
                let at = nodes.len() as u32;
                let bounds = a.bounds().union(&b.bounds());
                nodes.push(a);
                nodes.push(b);
                Some(Node::new(&bounds, at, 0))
            }
            (one, None) | (None, one) => one,
        }
    }

    /// The nearest hit within `(ray.t_min, best)`; lowers `best` when found.
    pub fn cast(&self, ray: &Ray, best: &mut f64) -> Option<Hit> {
        let sr = SlabRay::new(&ray.origin, &ray.dir);
        let (cu, cv) = (self.rows.len() - 1, self.v.len() - 1);
        // (t, row, column, second triangle, barycentric u, v)
        let mut found: Option<(f64, usize, usize, bool, f64, f64)> = None;
        let (o, d) = (&ray.origin, &ray.dir);
        self.bvh.traverse(&sr, ray.t_min, best, |iu0, iv1, best| {
            let (iu0, iv0) = (iu0 as usize, iv1 as usize - 1);
            for iu in iu0..(iu0 + LEAF).min(cu) {
                for iv in iv0..(iv0 + LEAF).min(cv) {
                    let Some([a, b, c, dd]) = self.corners(iu, iv) else { continue };
                    let (ac, ab, ad) = (sub(c, a), sub(b, a), sub(dd, a));
                    if let Some((t, bu, bv)) = triangle_uv(o, d, &a, &ab, &ac, ray.t_min, *best) {
                        *best = t;
                        found = Some((t, iu, iv, false, bu, bv));
                    }
                    if let Some((t, bu, bv)) = triangle_uv(o, d, &a, &ac, &ad, ray.t_min, *best) {
                        *best = t;
                        found = Some((t, iu, iv, true, bu, bv));
                    }
                }
            }
        });
        let (t, iu, iv, second, bu, bv) = found?;
        let [a, b, c, dd] = self.corners(iu, iv)?;
        let normal = if second { cross(sub(c, a), sub(dd, a)) } else { cross(sub(b, a), sub(c, a)) };
        // Fractions of the cell along u and v at the hit.
        let (fu, fv) = if second { (bu, bu + bv) } else { (bu + bv, bv) };
        let tag = self.tag_at(iu, iv, fu, fv);
        Some(Hit::new(ray, t, normal, tag))
    }

    fn tag_at(&self, iu: usize, iv: usize, fu: f64, fv: f64) -> Tag {
        let Some(p) = &self.paint else { return self.base };
        let row = if fu < 0.5 { iu } else { iu + 1 };
        let (Some(&s0), Some(&s1)) = (p.start.get(row), p.start.get(row + 1)) else { return self.base };
        let (v0, v1) = (self.v[iv], self.v.get(iv + 1).copied().unwrap_or(self.v[iv]));
        let v = (v0 + fv * (v1 - v0)) as f32;
        let painted =
            p.bands.get(s0 as usize..s1 as usize).is_some_and(|b| b.iter().any(|(lo, hi)| v >= *lo && v <= *hi));
        if painted {
            p.tag
        } else {
            self.base
        }
    }

    /// Its bounds.
    pub fn bounds(&self) -> Aabb {
        self.bvh.bounds()
    }

    /// Sizes and memory.
    pub fn stats(&self) -> HeightfieldStats {
        HeightfieldStats {
            rows: self.rows.len(),
            columns: self.v.len(),
            holes: self.z.iter().filter(|z| z.is_nan()).count(),
            cells: self.cells,
            tree_nodes: self.bvh.len(),
            bytes: self.rows.len() * std::mem::size_of::<Row>()
                + self.z.len() * 4
                + self.bvh.len() * std::mem::size_of::<Node>()
                + self.paint.as_ref().map_or(0, |p| p.start.len() * 4 + p.bands.len() * 8),
        }
    }

    /// Every triangle the heightfield casts against, row by row (for export and checks).
    pub fn triangles(&self) -> impl Iterator<Item = [V3; 3]> + '_ {
        let (cu, cv) = (self.rows.len() - 1, self.v.len() - 1);
        (0..cu)
            .flat_map(move |iu| (0..cv).filter_map(move |iv| self.corners(iu, iv)))
            .flat_map(|[a, b, c, d]| [[a, b, c], [a, c, d]])
    }
}

/// [`triangle`] with the barycentric coordinates of the hit (along e1, along e2).
#[inline]
fn triangle_uv(o: &V3, d: &V3, v0: &V3, e1: &V3, e2: &V3, t_min: f64, t_max: f64) -> Option<(f64, f64, f64)> {
    let t = triangle(o, d, v0, e1, e2, t_min, t_max)?;
    // Recover (u, v) from the hit point: solve p - v0 = u e1 + v e2 in the plane.
    let p = [o[0] + t * d[0] - v0[0], o[1] + t * d[1] - v0[1], o[2] + t * d[2] - v0[2]];
    let (a, b, c) = (crate::geom::dot(*e1, *e1), crate::geom::dot(*e1, *e2), crate::geom::dot(*e2, *e2));
    let (pe1, pe2) = (crate::geom::dot(p, *e1), crate::geom::dot(p, *e2));
    let det = a * c - b * b;
    if det == 0.0 {
        return Some((t, 0.0, 0.0));
    }
    Some((t, (c * pe1 - b * pe2) / det, (a * pe2 - b * pe1) / det))
}
