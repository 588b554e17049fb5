//! Designed road scenes: an OpenDRIVE road, a surface model in the road frame (asphalt and
//! cobblestone texture, potholes, manholes, curbs, sidewalks, markings), roadside objects and
//! materials. Everything is a deterministic function of the seed.
//!
//! # Frames and units
//! Road frame (s, t, h) of the scene's OpenDRIVE road; `h` here is the height above the
//! OpenDRIVE road surface (elevation + superelevation) measured vertically, in metres.

use crate::noise::Texture;
use opendrive::{OpenDrive, RoadEval};

/// The demo road (also `data/opendrive/demo.xodr`): line, clothoid, arc, clothoid, line, 150 m,
/// 2 % grade, crossfall up to 0.03 rad, two lanes and sidewalks.
pub const DEMO_XODR: &str = include_str!("../../../data/opendrive/demo.xodr");

/// Surface materials, with reflectance for a Phong-type intensity model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Material {
    /// Asphalt.
    Asphalt,
    /// Granite setts.
    Cobble,
    /// Retro-reflective paint.
    Marking,
    /// Cast-iron manhole cover.
    Manhole,
    /// Concrete curb and sidewalk.
    Concrete,
    /// Bark and leaves.
    Vegetation,
    /// Galvanised steel.
    Metal,
    /// Car paint.
    Paint,
}

/// Reflectance parameters of a material (Phong: diffuse, specular, exponent).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reflectance {
    /// Lambertian albedo, 0..1.
    pub diffuse: f64,
    /// Specular weight, 0..1.
    pub specular: f64,
    /// Phong exponent.
    pub exponent: f64,
}

impl Material {
    /// The reflectance of the material.
    pub fn reflectance(self) -> Reflectance {
        let (diffuse, specular, exponent) = match self {
            Material::Asphalt => (0.12, 0.02, 4.0),
            Material::Cobble => (0.25, 0.05, 8.0),
            Material::Marking => (0.75, 0.40, 20.0),
            Material::Manhole => (0.08, 0.50, 40.0),
            Material::Concrete => (0.35, 0.03, 4.0),
            Material::Vegetation => (0.45, 0.0, 1.0),
            Material::Metal => (0.30, 0.40, 30.0),
            Material::Paint => (0.20, 0.60, 50.0),
        };
        Reflectance { diffuse, specular, exponent }
    }
}

/// An elliptic pothole with a flat bottom and a sloped rim.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pothole {
    /// Centre, m.
    pub s: f64,
    /// Centre, m.
    pub t: f64,
    /// Half-axis along s, m.
    pub radius_s: f64,
    /// Half-axis along t, m.
    pub radius_t: f64,
    /// Depth of the flat bottom, m.
    pub depth: f64,
}

/// A round manhole cover, flat, offset from the road (raised > 0, sunk < 0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Manhole {
    /// Centre, m.
    pub s: f64,
    /// Centre, m.
    pub t: f64,
    /// m.
    pub radius: f64,
    /// Height of the cover above the surrounding road, m.
    pub offset: f64,
}

/// A section paved with setts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cobbles {
    /// Start s, m.
    pub s0: f64,
    /// End s, m.
    pub s1: f64,
    /// Sett size along s, m.
    pub length: f64,
    /// Sett size along t, m.
    pub width: f64,
    /// Joint width, m.
    pub joint: f64,
    /// Joint depth below the sett edges, m.
    pub joint_depth: f64,
    /// Height of the domed sett centre above its edges, m.
    pub dome: f64,
}

/// A painted line along the road at a lateral position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Marking {
    /// Centre line of the mark, m (lateral position).
    pub t: f64,
    /// m.
    pub width: f64,
    /// Dash and gap lengths, m; `None` = solid.
    pub dash: Option<(f64, f64)>,
}

/// The road surface of a scene.
#[derive(Debug, Clone)]
pub struct SurfaceModel {
    /// Asphalt texture (stated RMS, correlation length).
    pub asphalt: Texture,
    /// Stated asphalt texture RMS, m.
    pub asphalt_rms: f64,
    /// Sidewalk texture.
    pub sidewalk: Texture,
    /// Cobbled section.
    pub cobbles: Option<Cobbles>,
    /// Potholes.
    pub potholes: Vec<Pothole>,
    /// Manholes.
    pub manholes: Vec<Manhole>,
    /// Painted lines.
    pub markings: Vec<Marking>,
    /// Curb height (step from road to sidewalk), m.
    pub curb_height: f64,
    /// Width of the curb stone's top, from the road edge onto the sidewalk, m (its own class).
    pub curb_width: f64,
    /// Thickness of paint, m.
    pub paint: f64,
}

/// An object beside (or on) the road, standing on the ground at its road position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ObjectKind {
    /// A tree: a vertical trunk cylinder and a spherical crown.
    Tree {
        /// m.
        trunk_radius: f64,
        /// m.
        trunk_height: f64,
        /// m.
        crown_radius: f64,
        /// Height of the crown's centre above the ground, m.
        crown_height: f64,
    },
    /// A vertical pole (lamp post, sign post).
    Pole {
        /// m.
        radius: f64,
        /// m.
        height: f64,
    },
    /// A parked car, a box aligned with the road.
    Car {
        /// Along the road, m.
        length: f64,
        /// Across, m.
        width: f64,
        /// m.
        height: f64,
        /// Underbody clearance, m.
        clearance: f64,
    },
}

/// An object at a road position (planar s, t of its centre).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SceneObject {
    /// m.
    pub s: f64,
    /// m.
    pub t: f64,
    /// Shape and size.
    pub kind: ObjectKind,
}

/// A designed scene.
#[derive(Debug, Clone)]
pub struct Scene {
    /// The road network; the scene's road is `odr.roads[0]`.
    pub odr: OpenDrive,
    /// The surface.
    pub surface: SurfaceModel,
    /// Trees, poles, cars.
    pub objects: Vec<SceneObject>,
    /// Seed of every random field.
    pub seed: u64,
}

/// Where a point of the surface is, across the road.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Zone {
    /// Between the curbs.
    Road,
    /// On a sidewalk.
    Sidewalk,
    /// Beyond the sidewalks: no designed surface.
    Outside,
}

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
            potholes: vec![Pothole { s: 75.0, t: 1.6, radius_s: 0.45, radius_t: 0.30, depth: 0.05 }],
            manholes: vec![Manhole { s: 55.0, t: -1.6, radius: 0.3, offset: 0.008 }],
            markings: vec![
                Marking { t: 0.0, width: 0.12, dash: Some((3.0, 6.0)) },
                Marking { t: 3.25 - 0.1, width: 0.12, dash: None },
                Marking { t: -3.25 + 0.1, width: 0.12, dash: None },
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
        Scene { odr, surface, objects, seed }
    }

    /// The scene's road, prepared for evaluation.
    pub fn road(&self) -> RoadEval<'_> {
        RoadEval::new(&self.odr.roads[0])
    }

    /// Lateral borders at station s: the road between the outer borders of lanes 1 and -1,
    /// sidewalks out to the outer borders of lanes 2 and -2.
    pub fn borders(&self, road: &RoadEval, s: f64) -> Borders {
        let b = road.lane_borders(s);
        let at = |id: i32| b.iter().find(|(i, _)| *i == id).map_or(0.0, |(_, t)| *t);
        Borders { road_left: at(1), walk_left: at(2), road_right: at(-1), walk_right: at(-2) }
    }

    /// Which zone (s, t) is in.
    pub fn zone(&self, road: &RoadEval, s: f64, t: f64) -> Zone {
        self.borders(road, s).zone(t)
    }

    /// Height of the designed surface above the OpenDRIVE road surface at (s, t), m, and its
    /// material; `None` outside the sidewalks.
    pub fn height(&self, road: &RoadEval, s: f64, t: f64) -> Option<(f64, Material)> {
        self.height_in(&self.borders(road, s), s, t)
    }

    /// [`Scene::height`] with the borders at s already computed (the scanner's inner loop).
    pub fn height_in(&self, borders: &Borders, s: f64, t: f64) -> Option<(f64, Material)> {
        let m = &self.surface;
        match borders.zone(t) {
            Zone::Outside => None,
            Zone::Sidewalk => Some((m.curb_height + m.sidewalk.at(s, t), Material::Concrete)),
            Zone::Road => {
                for mh in &m.manholes {
                    let (ds, dt) = (s - mh.s, t - mh.t);
                    if ds * ds + dt * dt <= mh.radius * mh.radius {
                        return Some((mh.offset, Material::Manhole));
                    }
                }
                let (mut h, mut mat) = match m.cobbles.filter(|c| s >= c.s0 && s < c.s1) {
                    Some(c) => (sett_height(&c, s - c.s0, t), Material::Cobble),
                    None => (m.asphalt.at(s, t), Material::Asphalt),
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
                if mat != Material::Cobble {
                    for mk in &m.markings {
                        if (t - mk.t).abs() <= mk.width / 2.0 && mk.dash.is_none_or(|(d, g)| s.rem_euclid(d + g) < d) {
                            h += m.paint;
                            mat = Material::Marking;
                        }
                    }
                }
                Some((h, mat))
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

    /// The OpenDRIVE surface in planar road coordinates (see [`Scene::z`]), m.
    pub fn base_z(&self, road: &RoadEval, s: f64, t: f64) -> f64 {
        self.station(road, s).base_z(t)
    }

    /// What [`Scene::z`] needs at station s, computed once for many t.
    pub fn station(&self, road: &RoadEval, s: f64) -> Station {
        let e = &road.road().elevation_profile.elevations;
        let grade = opendrive::eval::profile_slope(e, s);
        let slope = road.superelevation(s).tan() / (1.0 + grade * grade).sqrt();
        Station { s, borders: self.borders(road, s), z0: road.elevation(s), slope }
    }

    /// [`Scene::z`] at the station's s.
    pub fn z_at(&self, station: &Station, t: f64) -> Option<f64> {
        let (h, _) = self.height_in(&station.borders, station.s, t)?;
        Some(station.base_z(t) + h)
    }
}

/// One station of the road: its zone borders and the OpenDRIVE surface across it,
/// z = z0 + t·slope (slope = tan(superelevation)/√(1 + grade²), see [`Scene::z`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Station {
    /// m.
    pub s: f64,
    /// Zone borders at s.
    pub borders: Borders,
    /// Elevation of the reference line, m.
    pub z0: f64,
    /// Height change per metre of t.
    pub slope: f64,
}

impl Station {
    /// The OpenDRIVE surface at t, m.
    pub fn base_z(&self, t: f64) -> f64 {
        self.z0 + t * self.slope
    }
}

/// Lateral borders of the zones at one station, m.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Borders {
    /// Left curb (outer border of lane 1).
    pub road_left: f64,
    /// Left sidewalk's outer edge (lane 2).
    pub walk_left: f64,
    /// Right curb (lane -1).
    pub road_right: f64,
    /// Right sidewalk's outer edge (lane -2).
    pub walk_right: f64,
}

impl Borders {
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
