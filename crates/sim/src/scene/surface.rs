//! The designed surface across the road: each station's zone borders, painted lines and
//! OpenDRIVE surface, and the height (asphalt or setts texture, potholes, manholes, curbs,
//! sidewalks, verge) and material at any (s, t).

use super::{Cobbles, Material, Scene, SurfaceModel, Zone, VERGE_ROUGHNESS};
use crate::noise::TextureLine;
use opendrive::RoadEval;

impl Scene {
    /// The lateral extent of the designed surface over the scene (outer verge edges), m.
    pub fn v_range(&self) -> (f64, f64) {
        self.v_range_within(f64::INFINITY)
    }

    /// [`Scene::v_range`] with the verges cut `verge` metres beyond the road edges.
    pub fn v_range_within(&self, verge: f64) -> (f64, f64) {
        let road = self.road();
        let (s0, s1) = self.s_range;
        let n = ((s1 - s0) / 0.5).ceil().max(1.0) as usize;
        (0..=n)
            .map(|i| self.borders(&road, (s0 + (s1 - s0) * i as f64 / n as f64).min(s1)))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(r, l), b| {
                (r.min(b.walk_right.max(b.road_right - verge)), l.max(b.walk_left.min(b.road_left + verge)))
            })
    }

    /// Lateral centre of lane `id` at s, in plan (see [`Scene::lane_borders`]), m.
    pub fn lane_centre(&self, road: &RoadEval, id: i32, s: f64) -> Option<f64> {
        let b = self.lane_borders(road, s);
        let outer = b.iter().find(|l| l.0 == id)?.1;
        let inner =
            if id.abs() == 1 { self.lane_offset(road, s) } else { b.iter().find(|l| l.0 == id - id.signum())?.1 };
        Some(0.5 * (inner + outer))
    }

    /// The lane borders at s ([`RoadEval::lane_borders`]) in the scene's planar t: OpenDRIVE
    /// measures t along the superelevated surface, so a border of a road banked by φ lies at
    /// about t cos φ in plan ([`RoadEval::planar_t`]); without superelevation they are the same.
    pub fn lane_borders(&self, road: &RoadEval, s: f64) -> Vec<(i32, f64)> {
        let k = road.planar_t(s, 1.0);
        road.lane_borders(s).into_iter().map(|(id, t)| (id, t * k)).collect()
    }

    /// The lane offset at s in the scene's planar t (see [`Scene::lane_borders`]), m.
    pub fn lane_offset(&self, road: &RoadEval, s: f64) -> f64 {
        road.planar_t(s, road.lane_offset(s))
    }

    /// The scene's road, prepared for evaluation.
    pub fn road(&self) -> RoadEval<'_> {
        RoadEval::new(&self.odr.roads[0])
    }

    /// Lateral borders at station s. On each side the road reaches from the centre over the
    /// lanes vehicles use (every type but sidewalk, walking, curb, border and none) up to the
    /// first lane of another type; the lanes beyond it are the verge, out to the outermost lane.
    /// A verge that starts with a sidewalk, walking or curb lane lies `curb_height` up (a curb);
    /// any other verge is level with the road.
    pub fn borders(&self, road: &RoadEval, s: f64) -> Borders {
        self.borders_in(road, &self.lane_borders(road, s), s)
    }

    fn borders_in(&self, road: &RoadEval, lanes: &[(i32, f64)], s: f64) -> Borders {
        let centre = self.lane_offset(road, s);
        let sec = road.lane_section(s);
        let kind = |id: i32| {
            sec.and_then(|sec| sec.lanes().find(|l| l.id == id)).and_then(|l| l.kind.as_deref()).unwrap_or("none")
        };
        // The carriageway reaches the outer border of a side's outermost road lane (border
        // and `none` lanes within it are paved too: a ramp's inner border lane); beyond it, a
        // curb when the next lane is a walkway, else a level verge, to the outermost border.
        let side = |sign: i32| {
            let mut ids: Vec<&(i32, f64)> = lanes.iter().filter(|(id, _)| id.signum() == sign).collect();
            ids.sort_by_key(|(id, _)| id.abs());
            let walkway = |id: i32| matches!(kind(id), "sidewalk" | "walking" | "curb");
            let road_lane = |id: i32| !(walkway(id) || matches!(kind(id), "border" | "none"));
            let last_road = ids.iter().rposition(|(id, _)| road_lane(*id));
            let road_edge = last_road.map_or(centre, |i| ids[i].1);
            let beyond = last_road.map_or(0, |i| i + 1);
            let walk_edge = ids.last().filter(|_| beyond < ids.len()).map_or(road_edge, |l| l.1);
            let curb = ids.get(beyond).is_some_and(|(id, _)| walkway(*id));
            (road_edge, walk_edge, curb)
        };
        let (road_left, walk_left, curb_left) = side(1);
        let (road_right, walk_right, curb_right) = side(-1);
        Borders { road_left, walk_left, road_right, walk_right, curb_left, curb_right }
    }

    /// Which zone (s, t) is in.
    pub fn zone(&self, road: &RoadEval, s: f64, t: f64) -> Zone {
        self.borders(road, s).zone(t)
    }

    /// Height of the designed surface above the OpenDRIVE road surface at (s, t), m, and its
    /// material; `None` outside the verges.
    pub fn height(&self, road: &RoadEval, s: f64, t: f64) -> Option<(f64, Material)> {
        self.height_at(&self.station(road, s), t)
    }

    /// [`Scene::height`] at a station computed once (the scanner's inner loop).
    pub fn height_at(&self, st: &Station, t: f64) -> Option<(f64, Material)> {
        let m = &self.surface;
        let s = st.s;
        let paint = |h: f64, mat: Material| {
            if st.painted(t) {
                (h + m.paint, Material::Marking)
            } else {
                (h, mat)
            }
        };
        match st.borders.zone(t) {
            Zone::Outside => None,
            Zone::Sidewalk if st.borders.curb_at(t) => {
                let tex = st.lines.as_ref().map_or_else(|| m.sidewalk.at(s, t), |l| l.1.at(t));
                Some((m.curb_height + tex, Material::Concrete))
            }
            // A level verge: gravel or grass, lines on its edge painted.
            Zone::Sidewalk => Some(paint(st.verge(m, t), Material::Gravel)),
            Zone::Road => {
                for mh in &m.manholes {
                    let (ds, dt) = (s - mh.s, t - mh.t);
                    if ds * ds + dt * dt <= mh.radius * mh.radius {
                        return Some((mh.offset, Material::Manhole));
                    }
                }
                let drape = m.drape.as_ref().filter(|d| s >= d.s0 && s < d.s1);
                let (mut h, mat) = match (drape, m.cobbles.filter(|c| s >= c.s0 && s < c.s1)) {
                    (Some(d), _) => (d.at(s, t), Material::Cobble),
                    (None, Some(c)) => (sett_height(&c, s - c.s0, t), Material::Cobble),
                    (None, None) => (st.asphalt(m, t), Material::Asphalt),
                };
                for p in &m.potholes {
                    let (a, b) = ((s - p.s) / p.radius_s, (t - p.t) / p.radius_t);
                    let r2 = a * a + b * b;
                    if r2 < 1.0 {
                        let r = r2.sqrt();
                        // Flat bottom inside r = 0.7, a smooth rim from 0.7 to 1.
                        let w = ((1.0 - r) / 0.3).clamp(0.0, 1.0);
                        let w = w * w * (3.0 - 2.0 * w);
                        h -= p.depth * w;
                    }
                }
                Some(if mat == Material::Cobble { (h, mat) } else { paint(h, mat) })
            }
        }
    }

    /// Absolute z of the designed surface at (s, t), m (file frame: header offset not applied).
    ///
    /// The scene is defined in planar road coordinates: (s, t) is the point P(s) + t·N(s) of
    /// the horizontal reference line and its horizontal normal (the placement a CRG uses), and
    /// the base surface is the OpenDRIVE one seen in that frame: the reference-line elevation
    /// plus t·tan(superelevation)/√(1 + grade²), which is where OpenDRIVE's superelevated
    /// lateral axis meets the vertical through that point (to the along-track coupling of grade
    /// and superelevation, below 1e-3·|t| horizontally).
    pub fn z(&self, road: &RoadEval, s: f64, t: f64) -> Option<f64> {
        self.z_at(&self.station(road, s), t)
    }

    /// Whether a point at height `z` over (s, t) lies on the designed surface (within 1e-6 m),
    /// `Some(true)` also on the vertical face of a step in it (curb, sett joint, paint edge,
    /// manhole or pothole rim: heights 1e-5 m either side of t differ by more than 0.2 mm and
    /// z lies between them); `None` off the designed surface.
    pub fn on_surface(&self, road: &RoadEval, s: f64, t: f64, z: f64) -> Option<bool> {
        let zs = self.z(road, s, t)?;
        if (z - zs).abs() < 1e-6 {
            return Some(true);
        }
        let lo = self.z(road, s, t - 1e-5).unwrap_or(zs);
        let hi = self.z(road, s, t + 1e-5).unwrap_or(zs);
        Some((lo - hi).abs() > 2e-4 && z >= lo.min(hi) - 1e-6 && z <= lo.max(hi) + 1e-6)
    }

    /// The OpenDRIVE surface in planar road coordinates (see [`Scene::z`]), m.
    pub fn base_z(&self, road: &RoadEval, s: f64, t: f64) -> f64 {
        self.station(road, s).base_z(t)
    }

    /// What [`Scene::z`] needs at station s, computed once for many t.
    pub fn station(&self, road: &RoadEval, s: f64) -> Station {
        let slope = road.planar_cross_slope(s);
        // Lines and zones in plan: a banked road's lanes lie at t cos φ.
        let k = road.planar_t(s, 1.0);
        let lanes = self.lane_borders(road, s);
        let borders = self.borders_in(road, &lanes, s);
        let marks = self
            .surface
            .markings
            .iter()
            .filter(|m| s >= m.s0 && s < m.s1)
            .filter_map(|m| {
                let base = match m.lane {
                    None => 0.0,
                    Some(0) => self.lane_offset(road, s),
                    Some(id) => lanes.iter().find(|l| l.0 == id)?.1,
                };
                Some(Mark { t: base + m.t * k, half_width: k * m.width / 2.0, s0: m.s0, dash: m.dash })
            })
            .collect();
        Station { s, borders, marks, z0: road.elevation(s), slope, lines: None }
    }

    /// [`Scene::station`] prepared for many t in `range` (default: the station's designed
    /// surface, verge edge to verge edge): the textures along the station's line precomputed
    /// (same heights, a fraction of the cost).
    pub fn station_across(&self, road: &RoadEval, s: f64, range: Option<(f64, f64)>) -> Station {
        let mut st = self.station(road, s);
        let (t0, t1) = range.unwrap_or((st.borders.walk_right, st.borders.walk_left));
        let m = &self.surface;
        st.lines = Some(Box::new((m.asphalt.line(s, t0, t1), m.sidewalk.line(s, t0, t1))));
        st
    }

    /// [`Scene::z`] at the station's s.
    pub fn z_at(&self, station: &Station, t: f64) -> Option<f64> {
        let (h, _) = self.height_at(station, t)?;
        Some(station.base_z(t) + h)
    }
}

/// One station of the road: its zone borders, the lines painted across it and the OpenDRIVE
/// surface across it, z = z0 + t·slope (slope = tan(superelevation)/√(1 + grade²), see
/// [`Scene::z`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Station {
    /// m.
    pub s: f64,
    /// Zone borders at s.
    pub borders: Borders,
    /// The markings at s, at their lateral positions.
    pub marks: Vec<Mark>,
    /// Elevation of the reference line, m.
    pub z0: f64,
    /// Height change per metre of t.
    pub slope: f64,
    /// Asphalt and sidewalk texture along the station ([`Scene::station_across`]).
    pub lines: Option<Box<(TextureLine, TextureLine)>>,
}

impl Station {
    fn asphalt(&self, m: &SurfaceModel, t: f64) -> f64 {
        self.lines.as_ref().map_or_else(|| m.asphalt.at(self.s, t), |l| l.0.at(t))
    }

    /// Height of a verge's gravel or grass at t (also beyond the designed surface), m: the
    /// asphalt's texture field turned 45 degrees and moved 1 km, so that its lattice draws no
    /// line along the road (a rough texture's lattice rows, parallel to s, showed in the
    /// intensities as marking lines).
    pub fn verge(&self, m: &SurfaceModel, t: f64) -> f64 {
        let r = std::f64::consts::FRAC_1_SQRT_2;
        VERGE_ROUGHNESS * m.asphalt.at((self.s + t) * r + 1000.0, (t - self.s) * r)
    }

    /// Whether a marking covers t (a dash of a broken line, or a solid line).
    pub fn painted(&self, t: f64) -> bool {
        let s = self.s;
        self.marks.iter().any(|mk| {
            (t - mk.t).abs() <= mk.half_width && mk.dash.is_none_or(|(d, g)| (s - mk.s0).rem_euclid(d + g) < d)
        })
    }

    /// The OpenDRIVE surface at t, m.
    pub fn base_z(&self, t: f64) -> f64 {
        self.z0 + t * self.slope
    }
}

/// A marking at one station.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mark {
    /// Lateral centre, m.
    pub t: f64,
    /// m.
    pub half_width: f64,
    /// Where the dash pattern starts, m.
    pub s0: f64,
    /// Dash and gap lengths, m; `None` = solid.
    pub dash: Option<(f64, f64)>,
}

/// Lateral borders of the zones at one station, m (see [`Scene::borders`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Borders {
    /// Left road edge (on the demo road the outer border of lane 1, a curb).
    pub road_left: f64,
    /// Left verge's outer edge (demo: the sidewalk, lane 2).
    pub walk_left: f64,
    /// Right road edge.
    pub road_right: f64,
    /// Right verge's outer edge.
    pub walk_right: f64,
    /// The left verge is a sidewalk behind a curb (else level with the road).
    pub curb_left: bool,
    /// The right verge is a sidewalk behind a curb.
    pub curb_right: bool,
}

impl Borders {
    /// Whether t (beyond the road) is on the side of a curb.
    pub fn curb_at(&self, t: f64) -> bool {
        if t > self.road_left {
            self.curb_left
        } else {
            self.curb_right
        }
    }

    /// The zone at t.
    pub fn zone(&self, t: f64) -> Zone {
        if t <= self.road_left && t >= self.road_right {
            Zone::Road
        } else if (t > self.road_left && t <= self.walk_left) || (t < self.road_right && t >= self.walk_right) {
            Zone::Sidewalk
        } else {
            Zone::Outside
        }
    }
}

/// Height of a sett surface at (ds, t) in a cobbled section: domed setts in rows across the
/// road, every other row shifted by half a sett, joints sunk by `joint_depth`.
fn sett_height(c: &Cobbles, ds: f64, t: f64) -> f64 {
    let pitch_s = c.length + c.joint;
    let pitch_t = c.width + c.joint;
    let row = (ds / pitch_s).floor();
    let shift = if (row as i64).rem_euclid(2) == 1 { pitch_t / 2.0 } else { 0.0 };
    let a = ds - row * pitch_s; // along s within the pitch
    let b = (t + 50.0 * pitch_t + shift).rem_euclid(pitch_t); // across within the pitch
    if a > c.length || b > c.width {
        return -c.joint_depth;
    }
    // Dome: highest in the sett centre, 0 at its edges.
    let x = 2.0 * a / c.length - 1.0;
    let y = 2.0 * b / c.width - 1.0;
    c.dome * (1.0 - x * x) * (1.0 - y * y)
}
