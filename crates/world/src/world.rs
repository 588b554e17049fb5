//! A world: parts behind one top-level tree.

use crate::bvh::{Bvh, SlabRay};
use crate::geom::{Aabb, Hit, Ray, V3};
use crate::heightfield::Heightfield;
use crate::material::MaterialTable;
use crate::mesh::TriMesh;
use crate::packet::LANES;

/// One part of a world.
#[derive(Debug, Clone)]
pub enum Part {
    /// A road surface from a CRG grid.
    Heightfield(Heightfield),
    /// Triangles.
    Mesh(TriMesh),
}

impl Part {
    /// Its bounds.
    pub fn bounds(&self) -> Aabb {
        match self {
            Part::Heightfield(h) => h.bounds(),
            Part::Mesh(m) => m.bounds(),
        }
    }
    /// The nearest hit within `(ray.t_min, best)`; lowers `best` when found.
    pub fn cast(&self, ray: &Ray, best: &mut f64) -> Option<Hit> {
        match self {
            Part::Heightfield(h) => h.cast(ray, best),
            Part::Mesh(m) => m.cast(ray, best),
        }
    }
    /// Its triangles (a heightfield's are made on the fly).
    pub fn triangles(&self) -> Box<dyn Iterator<Item = [V3; 3]> + '_> {
        match self {
            Part::Heightfield(h) => Box::new(h.triangles()),
            Part::Mesh(m) => Box::new(m.triangles()),
        }
    }
}

/// Anything a sensor can cast rays at: a [`World`], or an exact model of a designed scene.
pub trait Cast: Sync {
    /// The nearest hit of `ray` (None for an invalid ray or a miss).
    fn cast(&self, ray: &Ray) -> Option<Hit>;
    /// The materials its hits name.
    fn materials(&self) -> &MaterialTable;
    /// The nearest hits of rays cast together (`hits[i]` for `rays[i]`); by default one by one.
    fn cast_many(&self, rays: &[Ray], hits: &mut [Option<Hit>]) {
        for (r, h) in rays.iter().zip(hits.iter_mut()) {
            *h = self.cast(r);
        }
    }
}

impl Cast for World {
    fn cast(&self, ray: &Ray) -> Option<Hit> {
        World::cast(self, ray)
    }
    fn materials(&self) -> &MaterialTable {
        &self.materials
    }
    fn cast_many(&self, rays: &[Ray], hits: &mut [Option<Hit>]) {
        for (r, h) in rays.chunks(LANES).zip(hits.chunks_mut(LANES)) {
            self.cast_packet(r, h);
        }
    }
}

/// Everything a sensor can see, in one frame (see the crate's docs).
#[derive(Debug, Clone, Default)]
pub struct World {
    parts: Vec<Part>,
    tlas: Bvh,
    /// The materials its tags name.
    pub materials: MaterialTable,
}

impl World {
    /// A world of `parts` with `materials`.
    pub fn new(parts: Vec<Part>, materials: MaterialTable) -> World {
        let boxes: Vec<Aabb> = parts.iter().map(Part::bounds).collect();
        let tlas = Bvh::build(&boxes, 1);
        World { parts, tlas, materials }
    }

    /// The nearest hit of `ray` (None for an invalid ray or a miss).
    pub fn cast(&self, ray: &Ray) -> Option<Hit> {
        if !ray.is_valid() {
            return None;
        }
        let sr = SlabRay::new(&ray.origin, &ray.dir);
        let mut best = ray.t_max;
        // The parts whose boxes the ray enters, nearest first; heightfields are cast before
        // meshes, because a road surface is what most rays hit first and its distance then
        // bounds the search through the meshes (the roadside voxels' box holds the sensor).
        let mut meshes = [0u32; 16];
        let mut deferred = Vec::new();
        let mut n_meshes = 0;
        let mut hit = None;
        self.tlas.traverse(&sr, ray.t_min, &mut best, |first, count, best| {
            for k in first..first + count {
                let Some(&part) = self.tlas.order.get(k as usize) else { continue };
                match &self.parts[part as usize] {
                    Part::Heightfield(h) => {
                        if let Some(x) = h.cast(ray, best) {
                            hit = Some(x);
                        }
                    }
                    Part::Mesh(_) if n_meshes < meshes.len() => {
                        meshes[n_meshes] = part;
                        n_meshes += 1;
                    }
                    Part::Mesh(_) => deferred.push(part),
                }
            }
        });
        for &part in meshes[..n_meshes].iter().chain(&deferred) {
            if let Some(x) = self.parts[part as usize].cast(ray, &mut best) {
                hit = Some(x);
            }
        }
        hit
    }

    /// The nearest hits of up to [`LANES`] rays cast as one packet: `hits[i]` for `rays[i]`
    /// (None for an invalid ray or a miss), the same hits [`World::cast`] gives each ray
    /// (where two triangles are hit at exactly the same distance, either may be named). Rays
    /// from one point in nearly one direction (a camera's tile of pixels) share the walk
    /// through the trees; any rays give the right hits.
    pub fn cast_packet(&self, rays: &[Ray], hits: &mut [Option<Hit>]) {
        let n = rays.len().min(hits.len()).min(LANES);
        for h in hits.iter_mut() {
            *h = None;
        }
        let mut best = [f64::NEG_INFINITY; LANES];
        let mut mask = 0u64;
        for (i, r) in rays.iter().take(n).enumerate() {
            if r.is_valid() {
                best[i] = r.t_max;
                mask |= 1 << i;
            }
        }
        if mask == 0 {
            return;
        }
        let lanes = Bvh::lanes(&rays[..n]);
        // Road surfaces first, as a single ray casts them: what most rays hit first.
        for p in &self.parts {
            if let Part::Heightfield(h) = p {
                h.cast_packet(&rays[..n], &lanes, &mut best, mask, &mut hits[..n]);
            }
        }
        for p in &self.parts {
            if let Part::Mesh(m) = p {
                m.cast_packet(&rays[..n], &lanes, &mut best, mask, &mut hits[..n]);
            }
        }
    }

    /// The parts.
    pub fn parts(&self) -> &[Part] {
        &self.parts
    }
    /// The bounds of everything.
    pub fn bounds(&self) -> Aabb {
        self.tlas.bounds()
    }
}
