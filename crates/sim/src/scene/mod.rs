//! Designed road scenes: an OpenDRIVE road, a surface model in the road frame (asphalt and
//! cobblestone texture, potholes, manholes, curbs, sidewalks, markings), roadside objects and
//! materials. Everything is a deterministic function of the seed.
//!
//! # Frames and units
//! Road frame (s, t, h) of the scene's OpenDRIVE road; `h` here is the height above the
//! OpenDRIVE road surface (elevation + superelevation) measured vertically, in metres.
//!
//! The parts: this module holds the scene's types; `build` makes a scene from an OpenDRIVE
//! road (the demo's, or any road's lanes) with its surface features, objects and markings,
//! `clutter` adds what a real survey meets (trees, cars, people, multipath), `surface` gives
//! the designed surface's height, zones and borders across each station, and `drape` lays a
//! measured height grid on the road.

mod build;
mod clutter;
mod drape;
mod surface;

pub use build::{MAX_LATERAL, MIN_NETWORK_ROAD};
pub use drape::Drape;
pub use surface::{Borders, Mark, Station};

use crate::noise::Texture;
use opendrive::OpenDrive;

/// The demo road (also `data/opendrive/demo.xodr`): line, clothoid, arc, clothoid, line, 150 m,
/// 2 % grade, crossfall up to 0.03 rad, two lanes and sidewalks.
pub const DEMO_XODR: &str = include_str!("../../../../data/opendrive/demo.xodr");

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
    /// Gravel or grass of a verge: rough (see [`VERGE_ROUGHNESS`]), about as dark as asphalt.
    Gravel,
    /// Clothes (people).
    Cloth,
}

/// A level verge and the ground beyond the designed surface are the asphalt's texture field
/// this many times as rough (1 cm RMS at 5 cm correlation for the 1 mm asphalt): gravel or
/// grass, so the pavement's edge shows where no line or curb marks it, as on a real road.
pub const VERGE_ROUGHNESS: f64 = 10.0;

/// Reflectance parameters of a material (Phong: diffuse, specular, exponent).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reflectance {
    /// Lambertian albedo, 0..1.
    pub diffuse: f64,
    /// Specular weight, 0..1.
    pub specular: f64,
    /// Phong exponent (an integer).
    pub exponent: i32,
}

impl Material {
    /// The reflectance of the material.
    pub fn reflectance(self) -> Reflectance {
        let (diffuse, specular, exponent) = match self {
            Material::Asphalt => (0.12, 0.02, 4),
            Material::Cobble => (0.25, 0.05, 8),
            Material::Marking => (0.75, 0.40, 20),
            Material::Manhole => (0.08, 0.50, 40),
            Material::Concrete => (0.35, 0.03, 4),
            Material::Vegetation => (0.45, 0.0, 1),
            Material::Metal => (0.30, 0.40, 30),
            Material::Paint => (0.20, 0.60, 50),
            Material::Gravel => (0.14, 0.0, 1),
            Material::Cloth => (0.30, 0.02, 2),
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

/// A painted line along the road, from `s0` to `s1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Marking {
    /// The lane whose outer border the line follows (0 = the centre lane, the lane offset);
    /// `None`: the reference line.
    pub lane: Option<i32>,
    /// Centre line of the mark relative to that border, m (lateral).
    pub t: f64,
    /// Start, m; dashes start here.
    pub s0: f64,
    /// End, m.
    pub s1: f64,
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
    /// A measured surface draped on a section of the road (replaces the asphalt and setts
    /// there; potholes, manholes and paint still apply).
    pub drape: Option<Drape>,
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

impl SurfaceModel {
    /// Bounds on the designed height above the OpenDRIVE surface, m: on the road and level
    /// verges (texture and paint, manhole covers, sett domes, the verges' gravel) and on a
    /// sidewalk behind a curb (and the ground beyond it).
    pub fn height_bounds(&self) -> (f64, f64) {
        let verge = VERGE_ROUGHNESS * self.asphalt.max_abs();
        let road = [
            verge + self.paint,
            self.manholes.iter().map(|m| m.offset).fold(0.0, f64::max),
            self.cobbles.map_or(0.0, |c| c.dome),
            self.drape.as_ref().map_or(0.0, |d| d.max_abs),
        ]
        .into_iter()
        .fold(0.0, f64::max);
        (road, self.curb_height + self.sidewalk.max_abs().max(verge))
    }
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
    /// A person standing on the ground: a vertical cylinder.
    Person {
        /// m.
        radius: f64,
        /// m.
        height: f64,
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

/// Building fronts: vertical walls parallel to the reference line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Facades {
    /// Lateral position of the left wall, m.
    pub left: f64,
    /// Lateral position of the right wall, m (negative).
    pub right: f64,
    /// Height above the ground, m.
    pub height: f64,
}

impl Facades {
    /// No building fronts: walls at infinity, which no ray reaches (a network's scenes).
    pub const NONE: Facades = Facades { left: f64::INFINITY, right: f64::NEG_INFINITY, height: 0.0 };

    /// Whether there are walls (finite positions).
    pub fn exist(&self) -> bool {
        self.left.is_finite() && self.right.is_finite()
    }
}

/// A designed scene.
#[derive(Debug, Clone)]
pub struct Scene {
    /// The road network; the scene's road is `odr.roads[0]`.
    pub odr: OpenDrive,
    /// The part of the road the scene covers, s from..to, m.
    pub s_range: (f64, f64),
    /// The surface.
    pub surface: SurfaceModel,
    /// Trees, poles, cars.
    pub objects: Vec<SceneObject>,
    /// Building fronts on both sides.
    pub facades: Facades,
    /// Seed of every random field.
    pub seed: u64,
    /// The clutter of a real survey ([`Scene::add_clutter`]); `None`: a clean scene.
    pub clutter: Option<Clutter>,
}

/// What [`Scene::add_clutter`] adds beyond the objects it places: returns of the road surface
/// that come back by a longer path (multipath), so that they lie beyond the surface along the
/// beam, below it. The scanner gives them the class of what they hit, as real data do.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clutter {
    /// Fraction of the returns from the road (the carriageway and its markings) that are
    /// multipath, 0..1.
    pub multipath: f64,
    /// Extra range of a multipath return along the beam, from..to, m (uniform).
    pub multipath_extra: (f64, f64),
}

impl Default for Clutter {
    /// 0.3 % of the road returns, 0.2 to 1 m long.
    fn default() -> Self {
        Clutter { multipath: 0.003, multipath_extra: (0.2, 1.0) }
    }
}

/// Where a point of the surface is, across the road.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Zone {
    /// Between the curbs.
    Road,
    /// On a verge: a sidewalk behind a curb, or a level verge (see [`Scene::borders`]).
    Sidewalk,
    /// Beyond the verges: no designed surface.
    Outside,
}
