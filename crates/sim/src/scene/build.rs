//! Building a scene: the demo scene, or one from any OpenDRIVE road and its lanes (checked to
//! be finite, bounded and of non-negative width), with the demo's surface features, objects and
//! facades fitted to the road, and the lines its roadMarks paint.

use super::{Cobbles, Facades, Manhole, Marking, ObjectKind, Pothole, Scene, SceneObject, SurfaceModel, DEMO_XODR};
use crate::noise::Texture;
use crate::Error;
use opendrive::{OpenDrive, RoadEval};

impl Scene {
    /// The demo scene: the demo road with asphalt (1 mm RMS texture), a cobbled section
    /// (setts of 12 x 14 cm, 1.5 cm joints) from s = 100 to 125 m, a 5 cm deep pothole, a
    /// manhole cover raised 8 mm, 12 cm curbs, sidewalks and lane markings.
    pub fn demo(seed: u64) -> Scene {
        // The embedded file is checked by the tests; a failure here is a build defect.
        #[allow(clippy::expect_used)]
        let odr = opendrive::read(DEMO_XODR).expect("embedded demo road reads");
        let surface = SurfaceModel {
            asphalt: Texture::new(seed, 0.001, 0.05, 4),
            asphalt_rms: 0.001,
            sidewalk: Texture::new(seed ^ 0x5eed, 0.0005, 0.03, 3),
            cobbles: Some(Cobbles {
                s0: 100.0,
                s1: 125.0,
                length: 0.12,
                width: 0.14,
                joint: 0.015,
                joint_depth: 0.012,
                dome: 0.006,
            }),
            drape: None,
            potholes: vec![Pothole { s: 75.0, t: 1.6, radius_s: 0.45, radius_t: 0.30, depth: 0.05 }],
            manholes: vec![Manhole { s: 55.0, t: -1.6, radius: 0.3, offset: 0.008 }],
            markings: vec![
                Marking { lane: None, t: 0.0, s0: 0.0, s1: 150.0, width: 0.12, dash: Some((3.0, 6.0)) },
                Marking { lane: None, t: 3.25 - 0.1, s0: 0.0, s1: 150.0, width: 0.12, dash: None },
                Marking { lane: None, t: -3.25 + 0.1, s0: 0.0, s1: 150.0, width: 0.12, dash: None },
            ],
            curb_height: 0.12,
            curb_width: 0.15,
            paint: 0.001,
        };
        let tree = ObjectKind::Tree { trunk_radius: 0.15, trunk_height: 3.5, crown_radius: 1.5, crown_height: 4.5 };
        let pole = ObjectKind::Pole { radius: 0.08, height: 6.0 };
        let mut objects = vec![
            SceneObject { s: 20.0, t: 6.6, kind: tree },
            SceneObject { s: 65.0, t: -7.6, kind: tree },
            SceneObject { s: 142.0, t: 6.6, kind: tree },
            SceneObject {
                s: 128.0,
                t: -3.1,
                kind: ObjectKind::Car { length: 4.5, width: 1.8, height: 1.5, clearance: 0.25 },
            },
        ];
        objects.extend([10.0, 35.0, 60.0, 85.0, 110.0, 135.0].map(|s| SceneObject { s, t: 4.95, kind: pole }));
        objects.extend([47.5, 97.5].map(|s| SceneObject { s, t: -4.95, kind: pole }));
        let facades = Facades { left: 8.5, right: -9.5, height: 12.0 };
        Scene { odr, s_range: (0.0, 150.0), surface, objects, facades, seed, clutter: None }
    }

    /// A scene on any OpenDRIVE road, between `s_range` (default the whole road): the road's
    /// own geometry, elevation, superelevation and lanes, with lines painted where its
    /// roadMarks say (solid, broken 3 m / 6 m, and the double types), curbs where a sidewalk
    /// lane follows the carriageway (see [`Scene::borders`]), and the demo's furniture fitted to
    /// the lanes: a 5 cm pothole, a raised manhole, a 20 m cobbled section, poles, trees, a
    /// parked car and facades 3 m beyond the verges.
    ///
    /// The scene's file is the road alone (links to roads not in it removed) placed in EOV
    /// (EPSG:23700) near Budapest: the header's `<offset>` moves the road's start to about
    /// 650000 / 240000 and 100 m up, its `<geoReference>` says EPSG:23700.
    pub fn from_road(odr: &OpenDrive, road_id: &str, s_range: Option<(f64, f64)>, seed: u64) -> Result<Scene, Error> {
        let mut scene = Scene::plain(odr, road_id, s_range, None, seed)?;
        let (surface, objects, facades) = scene.furniture();
        scene.surface = surface;
        scene.objects = objects;
        scene.facades = facades;
        Ok(scene)
    }

    /// A scene of road `road_id` of a network ([`crate::network::Network`]): the whole road,
    /// however short, placed by the network's header `origin` (`<offset>`), its lines painted
    /// where its roadMarks say and its curbs and sidewalks as in [`Scene::from_road`], but no
    /// furniture: potholes, manholes, setts, objects and facades fitted to one road would stand
    /// on the roads that cross it.
    pub fn network_road(
        odr: &OpenDrive,
        road_id: &str,
        origin: opendrive::model::HeaderOffset,
        seed: u64,
    ) -> Result<Scene, Error> {
        Scene::plain(odr, road_id, None, Some(origin), seed)
    }

    /// A scene of road `road_id` over `s_range` (default the whole road, which must then be
    /// at least [`MIN_NETWORK_ROAD`] long; a range at least 10 m), placed by `origin` (default:
    /// the road's start near EOV 650000 / 240000), with its painted lines and no furniture.
    fn plain(
        odr: &OpenDrive,
        road_id: &str,
        s_range: Option<(f64, f64)>,
        origin: Option<opendrive::model::HeaderOffset>,
        seed: u64,
    ) -> Result<Scene, Error> {
        let Some(src) = odr.road(road_id) else {
            let roads = odr.roads.iter().map(|r| r.id.clone()).take(20).collect();
            return Err(Error::NoRoad { id: road_id.to_string(), roads });
        };
        let mut road = src.clone();
        road.link = None;
        road.junction = "-1".into();
        let eval = RoadEval::new(&road);
        let len = eval.length();
        let (s0, s1) = s_range.unwrap_or((0.0, len));
        let shortest = if origin.is_some() { MIN_NETWORK_ROAD } else { 10.0 };
        if !(s0 >= 0.0 && s1 <= len + 1e-9 && s1 - s0 >= shortest) {
            return Err(match origin {
                Some(_) => Error::ShortRoad { length: len },
                None => Error::BadRange { s_range: (s0, s1), length: len },
            });
        }
        check_lanes(&eval, (s0, s1))?;
        let start = eval.pose(0.0);
        let mut header = odr.header.clone();
        header.geo_reference = Some("EPSG:23700".into());
        header.offset = Some(origin.unwrap_or(opendrive::model::HeaderOffset {
            x: 650000.0 - start.x.round(),
            y: 240000.0 - start.y.round(),
            z: 100.0,
            hdg: 0.0,
        }));
        let mut out = OpenDrive { header, roads: vec![road], ..Default::default() };
        opendrive::convert::upgrade(&mut out, opendrive::Version::V1_8);
        let markings = road_markings(&out.roads[0], (s0, s1));
        Ok(Scene {
            odr: out,
            s_range: (s0, s1),
            surface: SurfaceModel {
                asphalt: Texture::new(seed, 0.001, 0.05, 4),
                asphalt_rms: 0.001,
                sidewalk: Texture::new(seed ^ 0x5eed, 0.0005, 0.03, 3),
                cobbles: None,
                drape: None,
                potholes: Vec::new(),
                manholes: Vec::new(),
                markings,
                curb_height: 0.12,
                curb_width: 0.15,
                paint: 0.001,
            },
            objects: Vec::new(),
            facades: Facades::NONE,
            seed,
            clutter: None,
        })
    }

    /// The demo's surface features, objects and facades fitted to this scene's road.
    fn furniture(&self) -> (SurfaceModel, Vec<SceneObject>, Facades) {
        let scene = self;
        let (s0, s1) = scene.s_range;
        let road = scene.road();
        let at = |f: f64| s0 + f * (s1 - s0);
        let b = |s: f64| scene.borders(&road, s);
        let centre = |s: f64| scene.lane_offset(&road, s);
        // Pothole in the right half, manhole in the left half (the right one if the road has
        // no left half), cobbles over 20 m (at most a sixth of the scene).
        let sp = at(0.45);
        let pothole_t = 0.5 * (centre(sp) + b(sp).road_right);
        let sm = at(0.3);
        let (bm, cm) = (b(sm), centre(sm));
        let manhole_t = if bm.road_left - cm > 1.5 { 0.5 * (cm + bm.road_left) } else { 0.5 * (cm + bm.road_right) };
        let cobble_len = 20.0f64.min((s1 - s0) / 6.0);
        let sc = at(0.7);
        let mut surface = scene.surface.clone();
        surface.potholes.push(Pothole { s: sp, t: pothole_t, radius_s: 0.45, radius_t: 0.30, depth: 0.05 });
        surface.manholes.push(Manhole { s: sm, t: manhole_t, radius: 0.3, offset: 0.008 });
        surface.cobbles = Some(Cobbles {
            s0: sc,
            s1: sc + cobble_len,
            length: 0.12,
            width: 0.14,
            joint: 0.015,
            joint_depth: 0.012,
            dome: 0.006,
        });
        // Poles 0.6 m beyond the left road edge every 25 m, trees 2.5 m beyond the right one
        // every 40 m, a car parked at the right edge; facades 3 m beyond the widest verge.
        let pole = ObjectKind::Pole { radius: 0.08, height: 6.0 };
        let tree = ObjectKind::Tree { trunk_radius: 0.15, trunk_height: 3.5, crown_radius: 1.5, crown_height: 4.5 };
        let mut objects = Vec::new();
        let mut s = s0 + 10.0;
        while s < s1 - 2.0 {
            objects.push(SceneObject { s, t: b(s).road_left + 0.6, kind: pole });
            s += 25.0;
        }
        let mut s = s0 + 20.0;
        while s < s1 - 2.0 {
            objects.push(SceneObject { s, t: b(s).road_right - 2.5, kind: tree });
            s += 40.0;
        }
        let scar = at(0.62);
        if centre(scar) - b(scar).road_right > 2.5 {
            let car = ObjectKind::Car { length: 4.5, width: 1.8, height: 1.5, clearance: 0.25 };
            objects.push(SceneObject { s: scar, t: b(scar).road_right + 1.0, kind: car });
        }
        let (v_right, v_left) = scene.v_range();
        let facades = Facades { left: v_left + 3.0, right: v_right - 3.0, height: 12.0 };
        (surface, objects, facades)
    }
}

/// The shortest road of a network survey, m: a pass over it still takes a few profiles.
pub const MIN_NETWORK_ROAD: f64 = 0.05;

/// Farthest a lane border of a scene may lie from the reference line, m. The widest roads
/// are about 100 m across; the scanner tabulates the surface from verge to verge at every
/// profile (texture rows of a few centimetres), so its work grows with the width.
pub const MAX_LATERAL: f64 = 1000.0;

/// Checks the lanes a scene is built of, every 0.5 m over `range` and at the range's end:
/// every border finite and within [`MAX_LATERAL`] of the reference line, and no lane of
/// negative width (OpenDRIVE widths are >= 0; a negative one puts a lane's outer border
/// inside its inner one, and the scene's zones would overlap).
fn check_lanes(road: &RoadEval, (s0, s1): (f64, f64)) -> Result<(), Error> {
    let n = ((s1 - s0) / 0.5).ceil().clamp(1.0, 1e8) as usize;
    for i in 0..=n {
        let s = (s0 + (s1 - s0) * i as f64 / n as f64).min(s1);
        let centre = road.lane_offset(s);
        if !(centre.is_finite() && centre.abs() <= MAX_LATERAL) {
            return Err(Error::LaneOffsetFar { s, offset: centre });
        }
        let mut borders = road.lane_borders(s);
        // Each side from the centre outwards: a lane's inner border is the previous one's outer.
        borders.sort_by_key(|&(id, _)| (id.signum(), id.abs()));
        let mut inner = (0, centre);
        for &(id, t) in &borders {
            if !(t.is_finite() && t.abs() <= MAX_LATERAL) {
                return Err(Error::LaneTooFar { lane: id, s, t });
            }
            if inner.0 != id.signum() {
                inner = (id.signum(), centre);
            }
            let width = (t - inner.1) * f64::from(id.signum());
            if width < -1e-9 {
                return Err(Error::NegativeWidth { lane: id, s, width });
            }
            inner.1 = t;
        }
    }
    Ok(())
}

/// The lines a road's roadMarks paint within `range` ([`opendrive::eval::marks::paint_lines`]).
fn road_markings(road: &opendrive::model::Road, range: (f64, f64)) -> Vec<Marking> {
    opendrive::eval::marks::paint_lines(road, range)
        .into_iter()
        .map(|l| Marking { lane: Some(l.lane), t: l.t, s0: l.s0, s1: l.s1, width: l.width, dash: l.dash })
        .collect()
}
