//! The road surface a wheel stands on: z(x, y) from the OpenDRIVE road and its CRGs.
//!
//! A plan point (x, y) (file frame) is mapped to the road's planar (s, t): the foot point on
//! the reference line along its horizontal left normal, `(x, y) = P(s) + t N(s)`. This is the
//! frame a CRG is laid in (`world::Heightfield::new`): the road's inverse
//! (`RoadEval::xy_to_st`, whose t runs along the superelevated lateral axis) gives the start,
//! and a few Newton steps on `P(s) + t N(s) = (x, y)` give the planar (s, t) (the same where
//! the road has no superelevation). The steps take a spiral's or an arc's pose from knots
//! every 0.25 m (`crate::spiral`: `RoadEval::pose`'s heading to the bit, its position within
//! 1e-12 m).
//!
//! The height there is the road's surface `elevation(s) + t planar_cross_slope(s)` and, where
//! a CRG covers (s, t), the grid's height: u = u_first + (s - sStart) (`orientation="same"`;
//! u_first + (sEnd - s) otherwise), v = ±(t - tOffset), and z = surface + zOffset + zScale
//! crg(u, v) (`attached`) or zOffset + zScale crg(u, v) (`attached0`), crg(u, v) by
//! `opencrg::Surface::uv_to_z` (the C-API's bilinear evaluation). Outside every CRG, and in
//! the grid's holes (NaN), the OpenDRIVE surface alone.

use crate::offroad::OffRoadGrid;
use crate::spiral::SpiralKnots;
use crate::Error;
use opendrive::RoadEval;
use std::sync::OnceLock;
use world::CrgLink;

/// How far from the reference line a point may lie and still be on the road, m: at most
/// this, and by default the road's outermost lane border or CRG edge plus [`REACH_MARGIN`].
pub const DEFAULT_REACH: f64 = 50.0;

/// How far beyond its outermost lane border or CRG edge the road's surface is still taken
/// (a shoulder, a kerb, a pavement the road file leaves out), m.
pub const REACH_MARGIN: f64 = 10.0;

/// The inverse is asked within this distance of the reference line first, m: a wheel is
/// almost always this close, and the search's cost grows with the distance asked. The nearest
/// solution within it is the nearest of all (any nearer one lies within it too); only a point
/// with none asks again with the full reach.
const NEAR: f64 = 8.0;

/// A hint that says "off the road a tick ago" (see [`RoadSurface::planar_st_from`]).
pub const OFF_ROAD: [f64; 2] = [-1.0, 0.0];

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
    /// The cells beyond the reach (built on first use, for the reach then set).
    off_road: OnceLock<Option<OffRoadGrid>>,
    /// The cells beyond [`NEAR`] (built on first use).
    off_near: OnceLock<Option<OffRoadGrid>>,
    /// The spiral records' knots for the Newton steps' poses (built on first use).
    spirals: OnceLock<SpiralKnots>,
}

impl<'a> RoadSurface<'a> {
    /// The surface of `road` (its OpenDRIVE surface alone until CRGs are added). Its reach
    /// is the outermost lane border (sampled every 5 m and at each lane section) plus
    /// [`REACH_MARGIN`], at most [`DEFAULT_REACH`]: asking off the road is then as cheap as
    /// on it (the inverse's cost grows with the distance searched).
    pub fn new(road: &'a opendrive::Road) -> RoadSurface<'a> {
        let eval = RoadEval::new(road);
        let len = eval.length();
        let mut widest = 0.0f64;
        let sections = road.lanes.lane_sections.iter().map(|l| l.s);
        let steps = (0..=((len / 5.0).ceil().min(1e6) as usize)).map(|k| (k as f64 * 5.0).min(len));
        for s in sections.chain(steps).filter(|s| s.is_finite() && (0.0..=len).contains(s)) {
            for (_, t) in eval.lane_borders(s) {
                if t.is_finite() {
                    widest = widest.max(t.abs());
                }
            }
        }
        let reach = (widest + REACH_MARGIN).min(DEFAULT_REACH);
        RoadSurface {
            road: eval,
            crgs: Vec::new(),
            reach,
            off_road: OnceLock::new(),
            off_near: OnceLock::new(),
            spirals: OnceLock::new(),
        }
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
        // The grid's edges are on the road too.
        let (v_lo, v_hi) = crg.v_range();
        let edge = (link.t_offset.abs() + v_lo.abs().max(v_hi.abs()) + REACH_MARGIN).min(DEFAULT_REACH);
        if edge.is_finite() {
            self.reach = self.reach.max(edge);
            self.off_road = OnceLock::new();
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
            self.off_road = OnceLock::new();
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

    /// Whether (x, y) lies off the road beyond doubt, by a grid of the cells farther than the
    /// reach from the reference line (see `crate::offroad`): then every question below answers
    /// `None` without the search. The grid is built on the first call.
    pub fn surely_off(&self, x: f64, y: f64) -> bool {
        self.off_road.get_or_init(|| OffRoadGrid::new(&self.road, self.reach)).as_ref().is_some_and(|g| g.off(x, y))
    }

    /// Planar (s, t) of the plan point (x, y), or `None` off the road.
    pub fn planar_st(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        if self.surely_off(x, y) {
            return None;
        }
        self.planar_st_searched(x, y)
    }

    /// Whether (x, y) lies farther than [`NEAR`] from the reference line beyond doubt (the
    /// grid of `crate::offroad` for that distance): then the near search finds nothing.
    fn surely_beyond_near(&self, x: f64, y: f64) -> bool {
        self.off_near.get_or_init(|| OffRoadGrid::new(&self.road, NEAR)).as_ref().is_some_and(|g| g.off(x, y))
    }

    /// [`RoadSurface::planar_st`] by the inverse's search.
    fn planar_st_searched(&self, x: f64, y: f64) -> Option<(f64, f64)> {
        if self.reach > NEAR && !self.surely_beyond_near(x, y) {
            if let Some(st) = self.planar_st_within(x, y, NEAR) {
                return Some(st);
            }
        }
        self.planar_st_within(x, y, self.reach)
    }

    /// Planar (s, t) of (x, y) from the road's inverse within `reach` of the reference line.
    fn planar_st_within(&self, x: f64, y: f64, reach: f64) -> Option<(f64, f64)> {
        let c = self.road.xy_to_st(x, y, reach)?;
        let (s, t, _, _) = self.planar_newton(x, y, c.s, c.t);
        (s.is_finite() && t.is_finite() && t.abs() <= self.reach).then_some((s, t))
    }

    /// As [`RoadSurface::planar_st`], starting from `hint`, the (s, t) of a point near (x, y)
    /// (the same wheel a tick ago): a few Newton steps from there instead of the road's inverse.
    /// The warm answer is taken only where it is the nearest foot point beyond doubt: the
    /// steps converge, s lies inside the road, |t| <= the first search's distance and the
    /// point lies well inside the reference line's circle of curvature (|κ t| < 0.5); else,
    /// and without a hint, the full search. A hint outside the road ([`OFF_ROAD`]) says the
    /// point was off the road a tick ago: the full reach is searched at once, not the near
    /// band first. A hint kept in the saved state makes a resumed run ask the same questions.
    pub fn planar_st_from(&self, x: f64, y: f64, hint: Option<[f64; 2]>) -> Option<(f64, f64)> {
        if self.surely_off(x, y) {
            return None;
        }
        let len = self.road.length();
        match hint {
            Some([s0, t0]) if s0.is_finite() && s0 > 0.0 && s0 < len && t0.is_finite() => {
                let (s, t, curvature, converged) = self.planar_newton(x, y, s0, t0);
                let reach = NEAR.min(self.reach);
                if converged && s > 0.0 && s < len && t.abs() <= reach && (curvature * t).abs() < 0.5 {
                    return Some((s, t));
                }
                self.planar_st_searched(x, y)
            }
            Some(_) => self.planar_st_within(x, y, self.reach),
            None => self.planar_st_searched(x, y),
        }
    }

    /// The hint of a point that was off the road (see [`RoadSurface::planar_st_from`]).
    pub fn hint_of(contact: Option<&Contact>) -> Option<[f64; 2]> {
        Some(contact.map_or(OFF_ROAD, |c| [c.s, c.t]))
    }

    /// Newton on P(s) + t N(s) = (x, y) from (s, t): the last (s, t), the reference line's
    /// curvature there, and whether it converged: a step below 1e-7 m, after which the error
    /// is of the order of the step squared times the curvature (below 1e-13 m on a road).
    fn planar_newton(&self, x: f64, y: f64, mut s: f64, mut t: f64) -> (f64, f64, f64, bool) {
        let len = self.road.length();
        let mut curvature = 0.0;
        // dF/ds = T (1 - κ t), dF/dt = N.
        let spirals = self.spirals.get_or_init(|| SpiralKnots::new(&self.road));
        for _ in 0..8 {
            let (p, (sn, cs)) = spirals.pose_sc(&self.road, s);
            curvature = p.curvature;
            let r = [x - p.x - t * -sn, y - p.y - t * cs];
            let along = r[0] * cs + r[1] * sn;
            let across = -r[0] * sn + r[1] * cs;
            let k = 1.0 - p.curvature * t;
            if k.abs() < 1e-9 {
                break;
            }
            let ds = along / k;
            s = (s + ds).clamp(0.0, len);
            t += across;
            if ds.abs() < 1e-7 && across.abs() < 1e-7 {
                return (s, t, curvature, true);
            }
        }
        (s, t, curvature, false)
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
        self.contact_from(x, y, None)
    }

    /// As [`RoadSurface::contact`], warm started from `hint` (see
    /// [`RoadSurface::planar_st_from`]).
    pub fn contact_from(&self, x: f64, y: f64, hint: Option<[f64; 2]>) -> Option<Contact> {
        let (s, t) = self.planar_st_from(x, y, hint)?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use opendrive::eval::Pose;

    /// The grid never calls a point off the road that the search finds on it (nor beyond the
    /// near band one the near search finds): points on a
    /// 0.5 m lattice around the demo road (straights, spirals and an arc; both ends) and
    /// beyond its reach. And it spares the search far out: most points more than 2 m beyond the
    /// reach are proven off.
    #[test]
    fn the_off_road_grid_never_hides_a_road_point() {
        let odr = opendrive::read(include_str!("../../../data/opendrive/demo.xodr")).expect("demo road");
        let surface = RoadSurface::new(&odr.roads[0]);
        let reach = surface.reach();
        let line: Vec<Pose> = (0..=1500).map(|k| surface.road().pose(0.1 * k as f64)).collect();
        let (mut on, mut off, mut far, mut far_off) = (0usize, 0usize, 0usize, 0usize);
        for i in 0..320 {
            for j in 0..300 {
                let (x, y) = (-30.0 + 0.5 * i as f64 + 0.01, -40.0 + 0.5 * j as f64 + 0.01);
                let proven = surface.surely_off(x, y);
                let found = surface.planar_st_searched(x, y);
                assert!(!(proven && found.is_some()), "({x}, {y}) proven off, found at {found:?}");
                let near = surface.planar_st_within(x, y, NEAR);
                assert!(!(surface.surely_beyond_near(x, y) && near.is_some()), "({x}, {y}) proven beyond {NEAR} m");
                on += usize::from(found.is_some());
                off += usize::from(proven);
                // Beyond the reach by 2 m from every point of the reference line (sampled).
                let near = line.iter().any(|p| (p.x - x).hypot(p.y - y) < reach + 2.0);
                if !near {
                    far += 1;
                    far_off += usize::from(proven);
                }
            }
        }
        assert!(on > 5_000 && off > 5_000 && far > 5_000, "{on} on, {off} proven off, {far} far");
        assert!(far_off as f64 > 0.95 * far as f64, "{far_off} of {far} far points proven off");
    }
}
