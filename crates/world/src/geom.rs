//! Points, rays, boxes and hits.

use crate::material::{MaterialId, Tag};

/// A point or a direction, metres.
pub type V3 = [f64; 3];

pub(crate) fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
pub(crate) fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
pub(crate) fn scale(a: V3, k: f64) -> V3 {
    [a[0] * k, a[1] * k, a[2] * k]
}
pub(crate) fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
pub(crate) fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
/// `a` scaled to length 1 (the zero vector stays zero).
pub(crate) fn unit(a: V3) -> V3 {
    let n = dot(a, a).sqrt();
    if n > 0.0 {
        scale(a, 1.0 / n)
    } else {
        a
    }
}

/// A ray: `origin + t * dir` for `t` in `(t_min, t_max)`, at `time` seconds (for moving parts).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ray {
    /// Where it starts, m.
    pub origin: V3,
    /// Its direction, unit length (so `t` is a distance in metres).
    pub dir: V3,
    /// Nearest distance that counts, m.
    pub t_min: f64,
    /// Farthest distance that counts, m.
    pub t_max: f64,
    /// When it is cast, s.
    pub time: f64,
}

impl Ray {
    /// A ray from `origin` towards `dir` (scaled to unit length), from 0 to infinity, at time 0.
    pub fn new(origin: V3, dir: V3) -> Ray {
        Ray { origin, dir: unit(dir), t_min: 0.0, t_max: f64::INFINITY, time: 0.0 }
    }
    /// The same ray limited to `t_max` metres.
    pub fn up_to(self, t_max: f64) -> Ray {
        Ray { t_max, ..self }
    }
    /// The point at distance `t`.
    pub fn at(&self, t: f64) -> V3 {
        add(self.origin, scale(self.dir, t))
    }
    /// True when the ray can hit anything: finite origin, a unit direction, a non-empty range.
    pub fn is_valid(&self) -> bool {
        self.origin.iter().all(|c| c.is_finite())
            && self.dir.iter().all(|c| c.is_finite())
            && (dot(self.dir, self.dir) - 1.0).abs() < 1e-6
            && self.t_min >= 0.0
            && self.t_min < self.t_max
    }
}

/// What a ray hit first.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Distance along the ray, m.
    pub t: f64,
    /// The point hit.
    pub point: V3,
    /// The surface's unit normal there, turned towards the ray's origin.
    pub normal: V3,
    /// The surface's material.
    pub material: MaterialId,
    /// Its class (ASPRS codes, as the survey writes them).
    pub class: u8,
    /// The object it belongs to (0 = the static scene).
    pub object: u32,
}

impl Hit {
    /// The hit of `ray` at distance `t` on a surface with `normal` (either way) and `tag`.
    pub fn new(ray: &Ray, t: f64, normal: V3, tag: Tag) -> Hit {
        let n = unit(normal);
        let n = if dot(n, ray.dir) > 0.0 { scale(n, -1.0) } else { n };
        Hit { t, point: ray.at(t), normal: n, material: tag.material, class: tag.class, object: tag.object }
    }
    /// Cosine of the angle between the beam and the surface normal (1 = head on).
    pub fn cos_incidence(&self, ray: &Ray) -> f64 {
        -dot(self.normal, ray.dir)
    }
}

/// An axis-aligned box.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    /// Lower corner.
    pub min: V3,
    /// Upper corner.
    pub max: V3,
}

impl Aabb {
    /// The empty box (grows into the first point added).
    pub const EMPTY: Aabb = Aabb { min: [f64::INFINITY; 3], max: [f64::NEG_INFINITY; 3] };

    /// The box around points.
    pub fn of(points: &[V3]) -> Aabb {
        let mut b = Aabb::EMPTY;
        for p in points {
            b.grow(*p);
        }
        b
    }
    /// Grows to hold `p` (NaN coordinates are ignored).
    pub fn grow(&mut self, p: V3) {
        for ((lo, hi), c) in self.min.iter_mut().zip(self.max.iter_mut()).zip(p) {
            *lo = lo.min(c);
            *hi = hi.max(c);
        }
    }
    /// The smallest box holding both.
    pub fn union(&self, o: &Aabb) -> Aabb {
        let mut b = *self;
        for a in 0..3 {
            b.min[a] = b.min[a].min(o.min[a]);
            b.max[a] = b.max[a].max(o.max[a]);
        }
        b
    }
    /// True when it holds no point.
    pub fn is_empty(&self) -> bool {
        (0..3).any(|a| self.min[a].partial_cmp(&self.max[a]).is_none_or(|o| o == std::cmp::Ordering::Greater))
    }
    /// Its centre.
    pub fn centre(&self) -> V3 {
        [0.5 * (self.min[0] + self.max[0]), 0.5 * (self.min[1] + self.max[1]), 0.5 * (self.min[2] + self.max[2])]
    }
    /// Half its surface area (0 when empty).
    pub fn half_area(&self) -> f64 {
        if self.is_empty() {
            return 0.0;
        }
        let d = sub(self.max, self.min);
        d[0] * d[1] + d[1] * d[2] + d[2] * d[0]
    }
}
