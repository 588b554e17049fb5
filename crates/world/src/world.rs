//! A world: parts behind one top-level tree.

use crate::bvh::{Bvh, SlabRay};
use crate::geom::{Aabb, Hit, Ray, V3};
use crate::heightfield::Heightfield;
use crate::material::MaterialTable;
use crate::mesh::TriMesh;

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
        let mut hit = None;
        self.tlas.traverse(&sr, ray.t_min, &mut best, |first, count, best| {
            for k in first..first + count {
                let Some(&part) = self.tlas.order.get(k as usize) else { continue };
                if let Some(h) = self.parts[part as usize].cast(ray, best) {
                    hit = Some(h);
                }
            }
        });
        hit
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
