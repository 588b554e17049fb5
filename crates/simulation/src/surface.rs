//! The road surface a wheel stands on: z(x, y) from the OpenDRIVE road and its CRGs.
//!
//! A plan point (x, y) (file frame) is mapped to the road's planar (s, t): the foot point on
//! the reference line along its horizontal left normal, `(x, y) = P(s) + t N(s)`. This is the
//! frame a CRG is laid in (`world::Heightfield::new`): the road's inverse
//! (`RoadEval::xy_to_st`, whose t runs along the superelevated lateral axis) gives the start,
//! and a few Newton steps on `P(s) + t N(s) = (x, y)` give the planar (s, t) (the same where
//! the road has no superelevation).
//!
//! The height there is the road's surface `elevation(s) + t planar_cross_slope(s)` and, where
//! a CRG covers (s, t), the grid's height: u = u_first + (s - sStart) (`orientation="same"`;
//! u_first + (sEnd - s) otherwise), v = ±(t - tOffset), and z = surface + zOffset + zScale
//! crg(u, v) (`attached`) or zOffset + zScale crg(u, v) (`attached0`), crg(u, v) by
//! `opencrg::Surface::uv_to_z` (the C-API's bilinear evaluation). Outside every CRG, and in
//! the grid's holes (NaN), the OpenDRIVE surface alone.

use crate::Error;
use opendrive::RoadEval;
use world::CrgLink;

/// How far from the reference line a point may lie and still be on the road, m (default).
pub const DEFAULT_REACH: f64 = 50.0;

/// A CRG on its road.
#[derive(Debug, Clone, Copy)]
pub struct CrgOnRoad<'a> {
    /// How it lies on the road.
    pub link: CrgLink,
    /// The prepared grid.
    pub crg: &'a opencrg::Surface,
}

/// Where a plan point lies on the road and how high the surface is there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Contact {
    /// Planar s, m.
    pub s: f64,
    /// Planar t (left positive), m.
    pub t: f64,
    /// Surface height, m (file frame).
    pub z: f64,
    /// Whether a CRG gave the height.
    pub on_crg: bool,
}

/// The road surface of one OpenDRIVE road and the CRGs laid on it.
#[derive(Debug)]
pub struct RoadSurface<'a> {
    road: RoadEval<'a>,
    crgs: Vec<CrgOnRoad<'a>>,
    reach: f64,
}

impl<'a> RoadSurface<'a> {
    /// The surface of `road` (its OpenDRIVE surface alone until CRGs are added).
    pub fn new(road: &'a opendrive::Road) -> RoadSurface<'a> {
        RoadSurface { road: RoadEval::new(road), crgs: Vec::new(), reach: DEFAULT_REACH }
    }

    /// Adds a CRG laid on the road by `link`. Earlier CRGs win where grids overlap.
    pub fn with_crg(mut self, link: CrgLink, crg: &'a opencrg::Surface) -> Result<RoadSurface<'a>, Error> {
        if crg.nu() < 2 || crg.v_positions().len() < 2 {
            return Err(Error::Link(format!(
                "a CRG needs 2 x 2 nodes, this one has {} x {}",
                crg.nu(),
                crg.v_positions().len()
            )));
        }
        self.crgs.push(CrgOnRoad { link, crg });
        Ok(self)
    }

    /// Adds the CRG of a road's `<surface><CRG>` record (`attached` or `attached0`).
    pub fn with_road_crg(
        self,
        record: &opendrive::model::RoadCrg,
        crg: &'a opencrg::Surface,
    ) -> Result<RoadSurface<'a>, Error> {
        let link = CrgLink::of(record).map_err(|e| Error::Link(e.to_string()))?;
        self.with_crg(link, crg)
    }

    /// Sets how far from the reference line a point still counts as on the road, m.
    pub fn with_reach(mut self, reach: f64) -> RoadSurface<'a> {
        if reach.is_finite() && reach > 0.0 {
            self.reach = reach;
        }
        self
    }

    /// The road, prepared.
    pub fn road(&self) -> &RoadEval<'a> {
        &self.road
    }

    /// The surface's reach from the reference line, m.
    pub fn reach(&self) -> f64 {
        self.reach
    }

    /// Planar (s, t) of the plan point (x, y), or `None` off the road.
    pub fn planar_st(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        let c = self.road.xy_to_st(x, y, self.reach)?;
        let len = self.road.length();
        let (mut s, mut t) = (c.s, c.t);
        // Newton on P(s) + t N(s) = q: dF/ds = T (1 - κ t), dF/dt = N.
        for _ in 0..8 {
            let p = self.road.pose(s);
            let (sn, cs) = p.hdg.sin_cos();
            let r = [x - p.x - t * -sn, y - p.y - t * cs];
            let along = r[0] * cs + r[1] * sn;
            let across = -r[0] * sn + r[1] * cs;
            let k = 1.0 - p.curvature * t;
            if k.abs() < 1e-9 {
                break;
            }
            let s_new = (s + along / k).clamp(0.0, len);
            let done = along.abs() < 1e-12 && across.abs() < 1e-12;
            s = s_new;
            t += across;
            if done {
                break;
            }
        }
        (s.is_finite() && t.is_finite() && t.abs() <= self.reach).then_some((s, t))
    }

    /// The OpenDRIVE surface at planar (s, t): elevation plus t times the planar cross slope.
    pub fn road_height(&self, s: f64, t: f64) -> f64 {
        self.road.elevation(s) + t * self.road.planar_cross_slope(s)
    }

    /// The surface height at planar (s, t): a CRG's where one covers it, else the road's.
    pub fn height_st(&self, s: f64, t: f64) -> (f64, bool) {
        let road = self.road_height(s, t);
        for c in &self.crgs {
            let l = &c.link;
            if s < l.s_start || s > l.s_end {
                continue;
            }
            let (u_first, u_last) = c.crg.u_range();
            let (u, v) = if l.same {
                (u_first + (s - l.s_start), t - l.t_offset)
            } else {
                (u_first + (l.s_end - s), l.t_offset - t)
            };
            let (v_lo, v_hi) = c.crg.v_range();
            if u < u_first || u > u_last || v < v_lo.min(v_hi) || v > v_lo.max(v_hi) {
                continue;
            }
            let Some(z) = c.crg.uv_to_z(u, v).filter(|z| z.is_finite()) else { continue };
            let base = if l.on_surface { road } else { 0.0 };
            return (base + l.z_offset + l.z_scale * z, true);
        }
        (road, false)
    }

    /// The surface under the plan point (x, y), or `None` off the road.
    pub fn contact(&self, x: f64, y: f64) -> Option<Contact> {
        let (s, t) = self.planar_st(x, y)?;
        let (z, on_crg) = self.height_st(s, t);
        Some(Contact { s, t, z, on_crg })
    }

    /// The surface height under (x, y), or `None` off the road.
    pub fn height(&self, x: f64, y: f64) -> Option<f64> {
        self.contact(x, y).map(|c| c.z)
    }

    /// Plan (x, y) of planar (s, t).
    pub fn st_to_xy(&self, s: f64, t: f64) -> [f64; 2] {
        let p = self.road.pose(s);
        let (sn, cs) = p.hdg.sin_cos();
        [p.x - t * sn, p.y + t * cs]
    }
}
