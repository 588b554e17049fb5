//! An OpenCRG grid laid on its OpenDRIVE road and cast as its own triangles.
//!
//! Node (iu, iv) of the grid lies at `B[iu] + v[iv] * D[iu]` in plan, where `B` is the road's
//! reference point at the row's s (moved by tOffset along the left normal) and `D` the left
//! normal (reversed for `orientation="opposite"`); its height is the road's surface there
//! (elevation plus t times the planar cross slope; nothing for `attached0`) plus
//! `zOffset + zScale * z_crg`. Each cell is two triangles split along the diagonal from
//! (iu, iv) to (iu + 1, iv + 1); the 1 cm grid of a 150 m road (10 M nodes) is never turned
//! into a triangle list.
//!
//! The grid is cut into chunks of `CHUNK` rows. Each chunk has its own tree over blocks of
//! `LEAF` x `LEAF` cells, whose bounds hold (x, y, h) with `h = z - gx x - gy y`: the height
//! above a plane of the chunk's grade and cross slope, so boxes are as thin as the texture
//! (a shear keeps a ray a ray, with the same t). Bounds are 16-bit steps of the chunk's box,
//! rounded outward, so a node is 16 bytes. A top-level tree over the chunks' boxes finds the
//! chunks. In a leaf, a cell is skipped when its four corners lie on one side of the ray's
//! vertical plane, or all above or all below the ray within that plane; the rest are
//! Möller-Trumbore tests (so hits are exactly the triangles').

use crate::bvh::{Bvh, SlabRay, Stack};
use crate::geom::{cross, sub, Aabb, Hit, Ray, V3};
use crate::material::Tag;
use crate::mesh::triangle;
use crate::packet::{best_max, Frustum, Lanes, PacketStack, LANES};
use crate::Error;
use opendrive::eval::marks::PaintLine;
use opendrive::RoadEval;

/// Cells per leaf side.
const LEAF: usize = 4;
/// Cell rows per chunk (a multiple of `LEAF`).
const CHUNK: usize = 256;
/// The most long sections a grid may have (so a block index fits in 31 bits).
const MAX_COLUMNS: usize = 1 << 24;
/// A leaf's child field: this bit, and the block's index in its chunk.
const LEAF_BIT: u32 = 1 << 31;
/// Quantization steps of a chunk's box (of 65,535, leaving room to round outward).
const STEPS: f64 = 65_000.0;

/// A node of a chunk's tree: bounds in steps of the chunk's box, and either the first of two
/// adjacent children or `LEAF_BIT | block`.
#[derive(Debug, Clone, Copy, PartialEq)]
struct QNode {
    b: [u16; 6],
    child: u32,
}

/// One chunk: rows `row0..row0 + CHUNK` (cells), its shear, its box and its tree's root.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Chunk {
    row0: u32,
    /// Blocks across (the grid's columns).
    blocks_v: u32,
    root: u32,
    /// h = z - g[0] x - g[1] y.
    g: [f64; 2],
    /// Lower corner of the quantized box (x, y, h), and the size of one step per axis.
    origin: [f64; 3],
    step: [f64; 3],
}

/// A ray in a chunk's steps: t at step q of axis a is `q * k[a] + c[a]`.
#[derive(Debug, Clone, Copy)]
struct StepRay {
    k: [f64; 3],
    c: [f64; 3],
}

/// 1 / x, kept finite (a huge number of x's sign for a zero), so step arithmetic never makes
/// NaN from infinity times zero.
fn finite_inverse(x: f64) -> f64 {
    if x.abs() > 1e-200 {
        1.0 / x
    } else {
        1e200_f64.copysign(x)
    }
}

impl Chunk {
    fn ray(&self, o: &V3, d: &V3) -> StepRay {
        self.ray_inv(o, d).0
    }
    /// The ray in steps, and the inverse of its sheared direction.
    #[inline(always)]
    fn ray_inv(&self, o: &V3, d: &V3) -> (StepRay, V3) {
        let o3 = [o[0], o[1], o[2] - self.g[0] * o[0] - self.g[1] * o[1]];
        let d3 = [d[0], d[1], d[2] - self.g[0] * d[0] - self.g[1] * d[1]];
        let mut r = StepRay { k: [0.0; 3], c: [0.0; 3] };
        let inv = d3.map(finite_inverse);
        for a in 0..3 {
            r.k[a] = self.step[a] * inv[a];
            r.c[a] = (self.origin[a] - o3[a]) * inv[a];
        }
        (r, inv)
    }
    /// Steps (lower and upper, per axis) of an (x, y, h) box, rounded outward by one more.
    fn quantize(&self, lo: &[f64; 3], hi: &[f64; 3]) -> [u16; 6] {
        let mut b = [0u16; 6];
        for a in 0..3 {
            let l = ((lo[a] - self.origin[a]) / self.step[a]).floor() - 1.0;
            let h = ((hi[a] - self.origin[a]) / self.step[a]).ceil() + 1.0;
            // NaN casts to 0 for the lower and to 0 for the upper: an empty box, never hit.
            b[a] = l.clamp(0.0, 65_535.0) as u16;
            b[a + 3] = h.clamp(0.0, 65_535.0) as u16;
        }
        b
    }
}

impl QNode {
    /// Its bounds in steps, as numbers.
    #[inline(always)]
    fn bounds(&self) -> [f64; 6] {
        self.b.map(f64::from)
    }
    #[inline(always)]
    fn enter(&self, r: &StepRay, t0: f64, t1: f64) -> Option<f64> {
        let (mut near, mut far) = (t0, t1);
        for a in 0..3 {
            let ta = self.b[a] as f64 * r.k[a] + r.c[a];
            let tb = self.b[a + 3] as f64 * r.k[a] + r.c[a];
            crate::bvh::clip(ta, tb, &mut near, &mut far);
        }
        (near <= far).then_some(near)
    }
}

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
    chunks: Vec<Chunk>,
    nodes: Vec<QNode>,
    /// Over the chunks' world boxes.
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
        if nv > MAX_COLUMNS {
            return Err(Error::GridTooWide { nv, max: MAX_COLUMNS });
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
        let mut hf = Heightfield {
            rows,
            v: crg.v_positions().to_vec(),
            z,
            chunks: Vec::new(),
            nodes: Vec::new(),
            bvh: Bvh::default(),
            base,
            paint: None,
            cells: 0,
        };
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

    /// Node (iu, iv) without checks (both in range), NaN z for a hole.
    #[inline(always)]
    fn node_raw(&self, r: &Row, zrow: &[f32], v: f64, iv: usize) -> V3 {
        [r.b[0] + v * r.d[0], r.b[1] + v * r.d[1], r.z0 + v * r.dz + zrow[iv] as f64]
    }

    /// Builds the chunks, their trees and the tree over them.
    fn build_tree(&mut self) {
        let cu = self.rows.len() - 1;
        let mut chunks = Vec::new();
        let mut boxes = Vec::new();
        let mut nodes = Vec::new();
        let mut cells = 0;
        for row0 in (0..cu).step_by(CHUNK) {
            let row1 = (row0 + CHUNK).min(cu);
            if let Some((c, world)) = self.chunk(row0, row1, &mut nodes, &mut cells) {
                chunks.push(c);
                boxes.push(world);
            }
        }
        self.cells = cells;
        self.bvh = Bvh::build(&boxes, 1);
        // Chunks in the top tree's leaf order.
        self.chunks = self.bvh.order.iter().map(|&i| chunks[i as usize]).collect();
        self.nodes = nodes;
    }

    /// The chunk of cell rows `row0..row1`: its tree appended to `nodes`, and its world box
    /// (None when it holds no cell).
    fn chunk(&self, row0: usize, row1: usize, nodes: &mut Vec<QNode>, cells: &mut usize) -> Option<(Chunk, Aabb)> {
        let nv = self.v.len();
        let cv = nv - 1;
        let (ra, rb) = (&self.rows[row0], &self.rows[row1]);
        // The plane: the road's grade along the chunk and its cross slope at the middle.
        let mid = &self.rows[(row0 + row1) / 2];
        let along = [rb.b[0] - ra.b[0], rb.b[1] - ra.b[1]];
        let len = (along[0] * along[0] + along[1] * along[1]).sqrt();
        let grade = if len > 0.0 { (rb.z0 - ra.z0) / len } else { 0.0 };
        let tang = if len > 0.0 { [along[0] / len, along[1] / len] } else { [0.0, 0.0] };
        let g = [grade * tang[0] + mid.dz * mid.d[0], grade * tang[1] + mid.dz * mid.d[1]];
        let g = if g.iter().all(|x| x.is_finite()) { g } else { [0.0, 0.0] };
        // Leaf boxes in (x, y, h), and the world box.
        let bu = (row1 - row0).div_ceil(LEAF);
        let bv = cv.div_ceil(LEAF);
        let mut leaves: Vec<Option<Box3>> = vec![None; bu * bv];
        let mut world = Aabb::EMPTY;
        let mut sheared = Aabb::EMPTY;
        for (i, leaf) in leaves.iter_mut().enumerate() {
            let (iu0, iv0) = (row0 + (i / bv) * LEAF, (i % bv) * LEAF);
            let mut b = Aabb::EMPTY;
            for iu in iu0..(iu0 + LEAF).min(row1) {
                for iv in iv0..(iv0 + LEAF).min(cv) {
                    let Some(c) = self.corners(iu, iv) else { continue };
                    *cells += 1;
                    for p in c {
                        world.grow(p);
                        b.grow([p[0], p[1], p[2] - g[0] * p[0] - g[1] * p[1]]);
                    }
                }
            }
            if !b.is_empty() {
                sheared = sheared.union(&b);
                *leaf = Some((b.min, b.max));
            }
        }
        if sheared.is_empty() {
            return None;
        }
        let mut c = Chunk { row0: row0 as u32, blocks_v: bv as u32, root: 0, g, origin: [0.0; 3], step: [0.0; 3] };
        for a in 0..3 {
            let ext = sheared.max[a] - sheared.min[a];
            c.step[a] = (ext / STEPS).max(1e-9).max(sheared.min[a].abs().max(sheared.max[a].abs()) * 1e-12);
            c.origin[a] = sheared.min[a] - 100.0 * c.step[a];
        }
        let root = subtree(&c, &leaves, nodes, (0, bu), (0, bv), bv)?;
        nodes.push(root.1);
        c.root = nodes.len() as u32 - 1;
        Some((c, world))
    }

    /// The nearest hit within `(ray.t_min, best)`; lowers `best` when found.
    pub fn cast(&self, ray: &Ray, best: &mut f64) -> Option<Hit> {
        let sr = SlabRay::new(&ray.origin, &ray.dir);
        // (t, row, column, second triangle, barycentric u, v)
        let mut found: Option<Found> = None;
        // One stack and one leaf for every chunk the ray enters, made when it enters the first.
        let mut scratch: Option<(Stack, LeafNodes)> = None;
        self.bvh.traverse(&sr, ray.t_min, best, |first, count, best| {
            let (stack, leaf) = scratch.get_or_insert_with(|| (Stack::new(0, 0.0), LeafNodes::new()));
            for k in first..first + count {
                if let Some(c) = self.chunks.get(k as usize) {
                    self.cast_chunk(c, ray, best, &mut found, (stack, leaf));
                }
            }
        });
        self.hit_of(ray, found?)
    }

    /// The hit `found` by a leaf test of `ray`: its normal and tag.
    fn hit_of(&self, ray: &Ray, (t, iu, iv, second, bu, bv): Found) -> Option<Hit> {
        let [a, b, c, dd] = self.corners(iu, iv)?;
        let normal = if second { cross(sub(c, a), sub(dd, a)) } else { cross(sub(b, a), sub(c, a)) };
        // Fractions of the cell along u and v at the hit.
        let (fu, fv) = if second { (bu, bu + bv) } else { (bu + bv, bv) };
        let tag = self.tag_at(iu, iv, fu, fv);
        Some(Hit::new(ray, t, normal, tag))
    }

    /// Casts lanes `mask` of a packet (`rays`, `lanes` made of them by [`Bvh::lanes`]): each
    /// lane's nearest hit within `(t_min, best[i])` goes to `hits[i]` and lowers `best[i]`.
    /// Leaves are tested lane by lane as [`Heightfield::cast`] tests them.
    pub(crate) fn cast_packet(
        &self,
        rays: &[Ray],
        lanes: &Lanes,
        best: &mut [f64; LANES],
        mask: u64,
        hits: &mut [Option<Hit>],
    ) {
        // Made when the packet first reaches a chunk (most packets that miss the road never do).
        let mut scratch: Option<PacketScratch> = None;
        // A packet from one point: its world frustum (origin and range of t) for the chunks'.
        let packet = lanes.frustum;
        self.bvh.traverse_packet(lanes, best, mask, |first, count, m, best| {
            let mut hit = false;
            let PacketScratch { lanes: chunk_lanes, found } =
                scratch.get_or_insert_with(|| PacketScratch { lanes: Lanes::new(), found: [None; LANES] });
            for k in first..first + count {
                if let Some(c) = self.chunks.get(k as usize) {
                    hit |= self.cast_chunk_packet(c, (rays, packet.as_ref()), m, chunk_lanes, best, found);
                }
            }
            hit
        });
        let Some(scratch) = scratch else { return };
        for (i, f) in scratch.found.iter().enumerate() {
            if let (Some(f), Some(ray), Some(out)) = (f, rays.get(i), hits.get_mut(i)) {
                if let Some(h) = self.hit_of(ray, *f) {
                    *out = Some(h);
                }
            }
        }
    }

    /// [`Heightfield::cast_chunk`] for lanes `mask` of a packet.
    fn cast_chunk_packet(
        &self,
        c: &Chunk,
        (rays, packet): (&[Ray], Option<&Frustum>),
        mask: u64,
        l: &mut Lanes,
        best: &mut [f64; LANES],
        found: &mut [Option<Found>; LANES],
    ) -> bool {
        let Some(root) = self.nodes.get(c.root as usize) else { return false };
        // Each lane's inverse sheared direction, once for its step ray and the frustum.
        let mut invs = [[0.0; 3]; LANES];
        let mut n = 0;
        let mut m = mask;
        while m != 0 {
            let i = m.trailing_zeros() as usize;
            m &= m - 1;
            let Some(ray) = rays.get(i) else { continue };
            let (r, inv) = c.ray_inv(&ray.origin, &ray.dir);
            for a in 0..3 {
                l.p[a][i] = 0.0;
                l.k[a][i] = r.k[a];
                l.c[a][i] = r.c[a];
            }
            l.t_min[i] = ray.t_min;
            invs[n] = inv;
            n += 1;
        }
        // The packet's bound in the chunk's steps: t = (q * step - (o3 - origin)) / d3.
        // The world frustum's scale is 1 and its origin the rays' shared origin.
        l.frustum = packet.map(|p| {
            let o = p.origin;
            let o3 = [o[0], o[1], o[2] - c.g[0] * o[0] - c.g[1] * o[1]];
            let lanes = invs[..n].iter().copied();
            Frustum::of(c.step, [0, 1, 2].map(|a| o3[a] - c.origin[a]), lanes, (p.t0, p.t_min_max, p.t1))
        });
        let row_end = (c.row0 as usize + CHUNK).min(self.rows.len() - 1);
        let bv = c.blocks_v as usize;
        let mut stack = PacketStack::new();
        let mut leaf = LeafNodes::new();
        stack.push(c.root, l.enter_node(&root.bounds(), best, mask, root.child & LEAF_BIT == 0, f64::INFINITY).0);
        while let Some((at, m, fresh)) = stack.pop() {
            let Some(n) = self.nodes.get(at as usize) else { continue };
            let bm = best_max(best, m);
            // Tested again when taken if a lane has hit something since: it may be nearer now.
            let mut m = if fresh { m } else { l.enter_node(&n.bounds(), best, m, n.child & LEAF_BIT == 0, bm).0 };
            let mut at = at;
            while m != 0 {
                let Some(n) = self.nodes.get(at as usize) else { break };
                if n.child & LEAF_BIT != 0 {
                    let block = (n.child & !LEAF_BIT) as usize;
                    let iu0 = c.row0 as usize + (block / bv) * LEAF;
                    let iv0 = (block % bv) * LEAF;
                    // The leaf's nodes once for all its lanes.
                    if !self.leaf_nodes(iu0, iv0, row_end, &mut leaf) {
                        break;
                    }
                    while m != 0 {
                        let i = m.trailing_zeros() as usize;
                        m &= m - 1;
                        if let Some(ray) = rays.get(i) {
                            if leaf.cast(ray, &mut best[i], &mut found[i]) {
                                stack.hit();
                            }
                        }
                    }
                    break;
                }
                let (a, b) = (n.child, n.child + 1);
                let (Some(na), Some(nb)) = (self.nodes.get(a as usize), self.nodes.get(b as usize)) else { break };
                let (ma, ta) = l.enter_node(&na.bounds(), best, m, na.child & LEAF_BIT == 0, bm);
                let (mb, tb) = l.enter_node(&nb.bounds(), best, m, nb.child & LEAF_BIT == 0, bm);
                match stack.descend((a, ma, ta), (b, mb, tb)) {
                    Some((next, nm)) => (at, m) = (next, nm),
                    None => break,
                }
            }
        }
        stack.hits() != 0
    }

    fn cast_chunk(&self, c: &Chunk, ray: &Ray, best: &mut f64, found: &mut Option<Found>, (stack, leaf): Scratch) {
        let r = c.ray(&ray.origin, &ray.dir);
        let Some(root) = self.nodes.get(c.root as usize) else { return };
        let Some(t) = root.enter(&r, ray.t_min, *best) else { return };
        stack.reset(c.root, t);
        while let Some(mut at) = stack.pop(*best) {
            while let Some(n) = self.nodes.get(at as usize) {
                if n.child & LEAF_BIT != 0 {
                    let block = (n.child & !LEAF_BIT) as usize;
                    let bv = c.blocks_v as usize;
                    let iu0 = c.row0 as usize + (block / bv) * LEAF;
                    let iv0 = (block % bv) * LEAF;
                    if self.leaf_nodes(iu0, iv0, (c.row0 as usize + CHUNK).min(self.rows.len() - 1), leaf) {
                        leaf.cast(ray, best, found);
                    }
                    break;
                }
                let (a, b) = (n.child, n.child + 1);
                let (Some(na), Some(nb)) = (self.nodes.get(a as usize), self.nodes.get(b as usize)) else { break };
                let ta = na.enter(&r, ray.t_min, *best);
                let tb = nb.enter(&r, ray.t_min, *best);
                match stack.descend((a, ta), (b, tb)) {
                    Some(next) => at = next,
                    None => break,
                }
            }
        }
    }

    /// Puts the nodes of the leaf from cell (iu0, iv0), rows below `row_end`, in `leaf`;
    /// false where the grid has no such rows.
    #[inline]
    fn leaf_nodes(&self, iu0: usize, iv0: usize, row_end: usize, leaf: &mut LeafNodes) -> bool {
        let nv = self.v.len();
        let nu_l = (row_end.min(iu0 + LEAF) + 1).saturating_sub(iu0).min(LEAF_NODES);
        let nv_l = ((iv0 + LEAF).min(nv - 1) + 1).saturating_sub(iv0).min(LEAF_NODES);
        let (Some(vs), Some(_)) = (self.v.get(iv0..iv0 + nv_l), self.rows.get(iu0..iu0 + nu_l)) else { return false };
        (leaf.nu, leaf.nv, leaf.iu0, leaf.iv0) = (nu_l, nv_l, iu0, iv0);
        let rows = self.rows.get(iu0..iu0 + LEAF_NODES).filter(|_| nu_l == LEAF_NODES);
        if let (Ok(vs), Some(rows)) = (<&[f64; LEAF_NODES]>::try_from(vs), rows) {
            // A whole leaf (nearly all of them): fixed sizes, no test a node.
            for (i, r) in rows.iter().enumerate() {
                let at = (iu0 + i) * nv + iv0;
                let Some(Ok(zs)) = self.z.get(at..at + LEAF_NODES).map(<&[f32; LEAF_NODES]>::try_from) else {
                    return false;
                };
                for j in 0..LEAF_NODES {
                    let k = i * LEAF_NODES + j;
                    leaf.x[k] = r.b[0] + vs[j] * r.d[0];
                    leaf.y[k] = r.b[1] + vs[j] * r.d[1];
                    leaf.z[k] = r.z0 + vs[j] * r.dz + zs[j] as f64;
                }
            }
            leaf.unused = [0; LEAF_NODES * LEAF_NODES];
            return true;
        }
        // Nodes outside the leaf's rows and columns: every side bit set, so they never keep a
        // cell or the leaf (their positions are not read).
        leaf.unused = [0x0f; LEAF_NODES * LEAF_NODES];
        for i in 0..nu_l {
            let r = &self.rows[iu0 + i];
            let Some(zrow) = self.z.get((iu0 + i) * nv..(iu0 + i + 1) * nv) else { return false };
            for (j, &v) in vs.iter().enumerate() {
                let [x, y, z] = self.node_raw(r, zrow, v, iv0 + j);
                let k = i * LEAF_NODES + j;
                (leaf.x[k], leaf.y[k], leaf.z[k], leaf.unused[k]) = (x, y, z, 0);
            }
        }
        true
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
            tree_nodes: self.bvh.len() + self.nodes.len(),
            bytes: self.rows.len() * std::mem::size_of::<Row>()
                + self.v.len() * 8
                + self.z.len() * 4
                + self.nodes.len() * std::mem::size_of::<QNode>()
                + self.chunks.len() * std::mem::size_of::<Chunk>()
                + self.bvh.len() * 32
                + self.bvh.order.len() * 4
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

/// Nodes a leaf side has.
const LEAF_NODES: usize = LEAF + 1;

/// The nodes of one leaf (NaN z for holes): `nu` x `nv` of them from cell (iu0, iv0), node
/// (i, j) at index `i * LEAF_NODES + j` of the coordinate arrays (so the side tests of all
/// nodes run as one vector loop).
struct LeafNodes {
    x: [f64; LEAF_NODES * LEAF_NODES],
    y: [f64; LEAF_NODES * LEAF_NODES],
    z: [f64; LEAF_NODES * LEAF_NODES],
    /// 0 for the leaf's nodes, 0x0f for the rest.
    unused: [u64; LEAF_NODES * LEAF_NODES],
    nu: usize,
    nv: usize,
    iu0: usize,
    iv0: usize,
}

impl LeafNodes {
    fn new() -> LeafNodes {
        const N: usize = LEAF_NODES * LEAF_NODES;
        LeafNodes { x: [0.0; N], y: [0.0; N], z: [0.0; N], unused: [0x0f; N], nu: 0, nv: 0, iu0: 0, iv0: 0 }
    }

    /// Node (i, j).
    #[inline(always)]
    fn at(&self, i: usize, j: usize) -> V3 {
        let k = i * LEAF_NODES + j;
        [self.x[k], self.y[k], self.z[k]]
    }

    /// Tests the leaf's cells against `ray` within `(t_min, best)`: a cell is skipped when its
    /// four corners lie on one side of the ray's vertical plane, or all above or all below the
    /// ray within that plane (the whole leaf when all its nodes do); the rest are
    /// Möller-Trumbore tests of its two triangles. True when it lowered `best`.
    // One index into four arrays of one length: the loop the compiler turns into vector code.
    #[allow(clippy::needless_range_loop)]
    #[inline]
    fn cast(&self, ray: &Ray, best: &mut f64, found: &mut Option<Found>) -> bool {
        const N: usize = LEAF_NODES * LEAF_NODES;
        let (o, d) = (&ray.origin, &ray.dir);
        let before = *best;
        // Per node: 1, 2 = right, left of the ray's vertical plane; 4, 8 = above, below the ray.
        let mut side = [0u64; N];
        let dxy2 = d[0] * d[0] + d[1] * d[1];
        let tol_f = 1e-9 * dxy2.sqrt();
        let tol_s = 1e-9 * dxy2;
        for k in 0..N {
            let (rx, ry, rz) = (self.x[k] - o[0], self.y[k] - o[1], self.z[k] - o[2]);
            let f = d[0] * ry - d[1] * rx;
            let g = d[0] * rx + d[1] * ry;
            let s = rz * dxy2 - d[2] * g;
            // Each bit from a compare's all-ones or all-zero word (64-bit codes: vector code).
            side[k] = (0u64.wrapping_sub((f > tol_f) as u64) & 1)
                | (0u64.wrapping_sub((f < -tol_f) as u64) & 2)
                | (0u64.wrapping_sub((s > tol_s) as u64) & 4)
                | (0u64.wrapping_sub((s < -tol_s) as u64) & 8)
                | self.unused[k];
        }
        // Every node on one side: no cell of the leaf can be hit.
        if side.iter().fold(0x0f, |a, &b| a & b) != 0 {
            return false;
        }
        for i in 0..self.nu.saturating_sub(1) {
            for j in 0..self.nv.saturating_sub(1) {
                let k = i * LEAF_NODES + j;
                if side[k] & side[k + LEAF_NODES] & side[k + LEAF_NODES + 1] & side[k + 1] != 0 {
                    continue;
                }
                let (a, b, c, dd) = (self.at(i, j), self.at(i + 1, j), self.at(i + 1, j + 1), self.at(i, j + 1));
                if [a, b, c, dd].iter().any(|q| q[2].is_nan()) {
                    continue;
                }
                let (ac, ab, ad) = (sub(c, a), sub(b, a), sub(dd, a));
                if let Some((t, bu, bv)) = triangle_uv(o, d, &a, &ab, &ac, ray.t_min, *best) {
                    *best = t;
                    *found = Some((t, self.iu0 + i, self.iv0 + j, false, bu, bv));
                }
                if let Some((t, bu, bv)) = triangle_uv(o, d, &a, &ac, &ad, ray.t_min, *best) {
                    *best = t;
                    *found = Some((t, self.iu0 + i, self.iv0 + j, true, bu, bv));
                }
            }
        }
        *best < before
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

/// A packet's lanes in a chunk's coordinates and its lanes' hits so far, kept from chunk to
/// chunk (9 kB, cleared only for a packet that reaches a chunk).
struct PacketScratch {
    lanes: Lanes,
    found: [Option<Found>; LANES],
}

/// A single ray's traversal stack and leaf nodes, kept from chunk to chunk.
type Scratch<'a> = (&'a mut Stack, &'a mut LeafNodes);

/// A leaf's hit: (t, row, column, second triangle, barycentric u, v).
type Found = (f64, usize, usize, bool, f64, f64);

/// An (x, y, h) box: lower and upper corners.
type Box3 = ([f64; 3], [f64; 3]);

/// The tree over blocks `u.0..u.1` x `v.0..v.1` of a chunk (halving the longer side; children
/// pushed next to each other): its (x, y, h) box and its node, not yet pushed.
fn subtree(
    c: &Chunk,
    leaves: &[Option<Box3>],
    nodes: &mut Vec<QNode>,
    u: (usize, usize),
    v: (usize, usize),
    bv: usize,
) -> Option<(Box3, QNode)> {
    if u.1 - u.0 == 1 && v.1 - v.0 == 1 {
        let block = u.0 * bv + v.0;
        let (lo, hi) = (*leaves.get(block)?)?;
        return Some(((lo, hi), QNode { b: c.quantize(&lo, &hi), child: LEAF_BIT | block as u32 }));
    }
    let (a, b) = if u.1 - u.0 >= v.1 - v.0 {
        let m = (u.0 + u.1) / 2;
        (subtree(c, leaves, nodes, (u.0, m), v, bv), subtree(c, leaves, nodes, (m, u.1), v, bv))
    } else {
        let m = (v.0 + v.1) / 2;
        (subtree(c, leaves, nodes, u, (v.0, m), bv), subtree(c, leaves, nodes, u, (m, v.1), bv))
    };
    match (a, b) {
        (Some(a), Some(b)) => {
            let at = nodes.len() as u32;
            nodes.push(a.1);
            nodes.push(b.1);
            let lo = [0, 1, 2].map(|k| a.0 .0[k].min(b.0 .0[k]));
            let hi = [0, 1, 2].map(|k| a.0 .1[k].max(b.0 .1[k]));
            Some(((lo, hi), QNode { b: c.quantize(&lo, &hi), child: at }))
        }
        (one, None) | (None, one) => one,
    }
}
