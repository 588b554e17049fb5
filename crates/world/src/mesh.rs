//! Triangle meshes behind a BVH.

use crate::bvh::{Bvh, SlabRay};
use crate::geom::{cross, dot, sub, Aabb, Hit, Ray, V3};
use crate::material::Tag;
use crate::packet::{Lanes, LANES};
use crate::Error;

/// Barycentric slack: a ray through a shared edge hits one of its triangles (no cracks).
const EDGE: f64 = 1e-9;

/// A triangle mesh: each triangle with a [`Tag`] (material, class, object).
#[derive(Debug, Clone)]
pub struct TriMesh {
    /// Per triangle in tree order: first vertex and the two edges from it.
    tris: Vec<[V3; 3]>,
    /// Per triangle in tree order: index into `tags`.
    tag_of: Vec<u32>,
    tags: Vec<Tag>,
    bvh: Bvh,
}

/// Möller-Trumbore: the distance to the triangle (v0, e1 = v1 - v0, e2 = v2 - v0) within
/// `(t_min, t_max)`.
#[inline]
pub(crate) fn triangle(o: &V3, d: &V3, v0: &V3, e1: &V3, e2: &V3, t_min: f64, t_max: f64) -> Option<f64> {
    let p = cross(*d, *e2);
    let det = dot(*e1, p);
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let inv = 1.0 / det;
    let s = sub(*o, *v0);
    let u = dot(s, p) * inv;
    if !(-EDGE..=1.0 + EDGE).contains(&u) {
        return None;
    }
    let q = cross(s, *e1);
    let v = dot(*d, q) * inv;
    if v < -EDGE || u + v > 1.0 + EDGE {
        return None;
    }
    let t = dot(*e2, q) * inv;
    (t > t_min && t < t_max).then_some(t)
}

impl TriMesh {
    /// A mesh of `vertices` and `triangles` (vertex indices), triangle `i` tagged
    /// `tags[tag_of[i]]` (`tag_of` empty: every triangle gets `tags[0]`). Triangles with a
    /// non-finite vertex or no area are dropped.
    pub fn new(vertices: &[V3], triangles: &[[u32; 3]], tags: Vec<Tag>, tag_of: &[u32]) -> Result<TriMesh, Error> {
        let tags = if tags.is_empty() { vec![Tag::default()] } else { tags };
        let mut tris = Vec::with_capacity(triangles.len());
        let mut tagv = Vec::with_capacity(triangles.len());
        let mut boxes = Vec::with_capacity(triangles.len());
        for (i, t) in triangles.iter().enumerate() {
            let mut v = [[0.0; 3]; 3];
            for (k, &ix) in t.iter().enumerate() {
                v[k] = *vertices.get(ix as usize).ok_or(Error::Vertex {
                    triangle: i,
                    vertex: ix,
                    vertices: vertices.len(),
                })?;
            }
            let tag = tag_of.get(i).copied().unwrap_or(0);
            if tag as usize >= tags.len() {
                return Err(Error::Tag { triangle: i, tag, tags: tags.len() });
            }
            let (e1, e2) = (sub(v[1], v[0]), sub(v[2], v[0]));
            let n = cross(e1, e2);
            if !v.iter().flatten().all(|c| c.is_finite()) || dot(n, n) == 0.0 {
                continue;
            }
            tris.push([v[0], e1, e2]);
            tagv.push(tag);
            boxes.push(Aabb::of(&v));
        }
        let bvh = Bvh::build(&boxes, 4);
        // Store the triangles in leaf order, so a leaf reads one contiguous run.
        let tris_sorted = bvh.order.iter().map(|&i| tris[i as usize]).collect();
        let tag_sorted = bvh.order.iter().map(|&i| tagv[i as usize]).collect();
        Ok(TriMesh { tris: tris_sorted, tag_of: tag_sorted, tags, bvh })
    }

    /// Number of triangles kept.
    pub fn len(&self) -> usize {
        self.tris.len()
    }
    /// True for a mesh with no triangle.
    pub fn is_empty(&self) -> bool {
        self.tris.is_empty()
    }
    /// Its bounds.
    pub fn bounds(&self) -> Aabb {
        self.bvh.bounds()
    }

    /// The nearest hit within `(ray.t_min, best)`; lowers `best` when found.
    pub fn cast(&self, ray: &Ray, best: &mut f64) -> Option<Hit> {
        let sr = SlabRay::new(&ray.origin, &ray.dir);
        let mut found: Option<(f64, usize)> = None;
        self.bvh.traverse(&sr, ray.t_min, best, |first, count, best| {
            for k in first as usize..(first + count) as usize {
                let [v0, e1, e2] = &self.tris[k];
                if let Some(t) = triangle(&ray.origin, &ray.dir, v0, e1, e2, ray.t_min, *best) {
                    *best = t;
                    found = Some((t, k));
                }
            }
        });
        let (t, k) = found?;
        let [_, e1, e2] = &self.tris[k];
        let tag = self.tags[self.tag_of[k] as usize];
        Some(Hit::new(ray, t, cross(*e1, *e2), tag))
    }

    /// Casts lanes `mask` of a packet (`rays`, `lanes` made of them by [`Bvh::lanes`]): each
    /// lane's nearest hit within `(t_min, best[i])` goes to `hits[i]` and lowers `best[i]`.
    pub(crate) fn cast_packet(
        &self,
        rays: &[Ray],
        lanes: &Lanes,
        best: &mut [f64; LANES],
        mask: u64,
        hits: &mut [Option<Hit>],
    ) {
        let mut found: [Option<(f64, usize)>; LANES] = [None; LANES];
        self.bvh.traverse_packet(lanes, best, mask, |first, count, m, best| {
            let mut hit = false;
            let mut m = m;
            while m != 0 {
                let i = m.trailing_zeros() as usize;
                m &= m - 1;
                let ray = &rays[i];
                for k in first as usize..(first + count) as usize {
                    let [v0, e1, e2] = &self.tris[k];
                    if let Some(t) = triangle(&ray.origin, &ray.dir, v0, e1, e2, ray.t_min, best[i]) {
                        best[i] = t;
                        found[i] = Some((t, k));
                        hit = true;
                    }
                }
            }
            hit
        });
        for (i, f) in found.iter().enumerate() {
            if let (Some((t, k)), Some(ray), Some(out)) = (f, rays.get(i), hits.get_mut(i)) {
                let [_, e1, e2] = &self.tris[*k];
                let tag = self.tags[self.tag_of[*k] as usize];
                *out = Some(Hit::new(ray, *t, cross(*e1, *e2), tag));
            }
        }
    }

    /// Every triangle as three vertices, in the mesh's order (for export and checks).
    pub fn triangles(&self) -> impl Iterator<Item = [V3; 3]> + '_ {
        self.tris.iter().map(|[v0, e1, e2]| [*v0, crate::geom::add(*v0, *e1), crate::geom::add(*v0, *e2)])
    }
}
