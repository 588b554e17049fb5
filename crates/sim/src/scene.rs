//! Designed road scenes: an OpenDRIVE road, a surface model in the road frame (asphalt and
//! cobblestone texture, potholes, manholes, curbs, sidewalks, markings), roadside objects and
//! materials. Everything is a deterministic function of the seed.
//!
//! # Frames and units
//! Road frame (s, t, h) of the scene's OpenDRIVE road; `h` here is the height above the
//! OpenDRIVE road surface (elevation + superelevation) measured vertically, in metres.

use crate::noise::{Texture, TextureLine};
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

/// A measured height grid (an OpenCRG file's, say) draped on the road from `s0` to `s1`:
/// height(s, t) = grid(s - s0, t - t0), bilinear between the nodes, the grid mirrored at its
/// edges to tile the section (mirroring keeps the tiled surface continuous). The grid is the
/// longest run of the source's long sections with no missing node, less its least-squares
/// plane (a measured track's grade and crossfall are not texture).
#[derive(Debug, Clone, PartialEq)]
pub struct Drape {
    /// Start s, m.
    pub s0: f64,
    /// End s, m.
    pub s1: f64,
    /// t of the grid's first long section, m.
    pub t0: f64,
    /// Node spacing along s, m.
    pub du: f64,
    /// Node spacing along t, m.
    pub dv: f64,
    /// Cross sections (rows).
    pub nu: usize,
    /// Long sections (columns).
    pub nv: usize,
    /// Heights, row-major `z[iu * nv + iv]`, m (plane removed).
    pub z: std::sync::Arc<Vec<f32>>,
    /// Largest |height|, m.
    pub max_abs: f64,
}

impl Drape {
    /// The heights of `crg` draped from `s0` to `s1` with its first complete long section at
    /// `t0`. Errors when the grid has fewer than two complete rows and columns, or a spacing
    /// that is not positive.
    pub fn from_crg(crg: &opencrg::Crg, s0: f64, s1: f64, t0: f64) -> Result<Drape, String> {
        let (nu, nv) = (crg.nu, crg.nv());
        if crg.z.len() < nu * nv {
            return Err(format!("the grid holds {} heights for {nu} x {nv} nodes", crg.z.len()));
        }
        let v = crg.v_positions();
        let dv = if v.len() >= 2 { (v[v.len() - 1] - v[0]) / (v.len() - 1) as f64 } else { 0.0 };
        let du = crg.du();
        if !(du > 0.0 && dv > 0.0 && du.is_finite() && dv.is_finite()) {
            return Err(format!("node spacing {du} x {dv} m: must be positive"));
        }
        // The longest run of columns without a missing node.
        let complete: Vec<bool> = (0..nv).map(|iv| (0..nu).all(|iu| crg.z[iu * nv + iv].is_finite())).collect();
        let (mut best, mut run_start) = ((0, 0), 0);
        for (iv, &ok) in complete.iter().chain([&false]).enumerate() {
            if !ok {
                if iv - run_start > best.1 - best.0 {
                    best = (run_start, iv);
                }
                run_start = iv + 1;
            }
        }
        let cols = best.1 - best.0;
        if nu < 2 || cols < 2 {
            return Err(format!("{nu} rows and {cols} complete columns: a drape needs at least two of each"));
        }
        // Least-squares plane z = a + b·u + c·v over the kept nodes (u, v from the centre).
        let (cu, cv) = ((nu - 1) as f64 / 2.0, (cols - 1) as f64 / 2.0);
        let node = |iu: usize, j: usize| f64::from(crg.z[iu * nv + best.0 + j]);
        let (mut m, mut sz, mut su, mut sv, mut suu, mut svv) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        for iu in 0..nu {
            for j in 0..cols {
                let (u, w, z) = (iu as f64 - cu, j as f64 - cv, node(iu, j));
                m += 1.0;
                sz += z;
                su += u * z;
                sv += w * z;
                suu += u * u;
                svv += w * w;
            }
        }
        // Centred indices on a full rectangle: the normal equations are diagonal.
        let (a, b, c) = (sz / m, su / suu, sv / svv);
        let mut z = Vec::with_capacity(nu * cols);
        let mut max_abs = 0.0f64;
        for iu in 0..nu {
            for j in 0..cols {
                let h = node(iu, j) - a - b * (iu as f64 - cu) - c * (j as f64 - cv);
                max_abs = max_abs.max(h.abs());
                z.push(h as f32);
            }
        }
        Ok(Drape { s0, s1, t0, du, dv, nu, nv: cols, z: std::sync::Arc::new(z), max_abs })
    }

    /// Height at (s, t), m.
    pub fn at(&self, s: f64, t: f64) -> f64 {
        let (iu, fu) = mirrored((s - self.s0) / self.du, self.nu);
        let (iv, fv) = mirrored((t - self.t0) / self.dv, self.nv);
        let z = |a: usize, b: usize| f64::from(self.z.get(a * self.nv + b).copied().unwrap_or(0.0));
        let (iu1, iv1) = ((iu + 1).min(self.nu - 1), (iv + 1).min(self.nv - 1));
        let lo = z(iu, iv) + fv * (z(iu, iv1) - z(iu, iv));
        let hi = z(iu1, iv) + fv * (z(iu1, iv1) - z(iu1, iv));
        lo + fu * (hi - lo)
    }
}

/// A position in nodes on a grid of `n` nodes mirrored at both ends (period 2(n - 1)): the
/// node below it and the fraction to the next one.
fn mirrored(x: f64, n: usize) -> (usize, f64) {
    let period = 2.0 * (n.max(2) - 1) as f64;
    let mut x = if x.is_finite() { x.rem_euclid(period) } else { 0.0 };
    if x > period / 2.0 {
        x = period - x;
    }
    let i = (x.floor() as usize).min(n.max(2) - 2);
    (i, x - i as f64)
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
    pub fn from_road(odr: &OpenDrive, road_id: &str, s_range: Option<(f64, f64)>, seed: u64) -> Result<Scene, String> {
        let Some(src) = odr.road(road_id) else {
            let ids: Vec<&str> = odr.roads.iter().map(|r| r.id.as_str()).take(20).collect();
            return Err(format!("no road with id '{road_id}' (roads: {})", ids.join(", ")));
        };
        let mut road = src.clone();
        road.link = None;
        road.junction = "-1".into();
        let eval = RoadEval::new(&road);
        let len = eval.length();
        let (s0, s1) = s_range.unwrap_or((0.0, len));
        if !(s0 >= 0.0 && s1 <= len + 1e-9 && s1 - s0 >= 10.0) {
            return Err(format!("s range {s0}..{s1} m: must lie within the road's 0..{len} m and span at least 10 m"));
        }
        check_lanes(&eval, (s0, s1))?;
        let start = eval.pose(0.0);
        let mut header = odr.header.clone();
        header.geo_reference = Some("EPSG:23700".into());
        header.offset = Some(opendrive::model::HeaderOffset {
            x: 650000.0 - start.x.round(),
            y: 240000.0 - start.y.round(),
            z: 100.0,
            hdg: 0.0,
        });
        let mut out = OpenDrive { header, roads: vec![road], ..Default::default() };
        opendrive::convert::upgrade(&mut out, opendrive::Version::V1_8);
        let markings = road_markings(&out.roads[0], (s0, s1));
        let mut scene = Scene {
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
            facades: Facades { left: 0.0, right: 0.0, height: 12.0 },
            seed,
            clutter: None,
        };
        let (surface, objects, facades) = scene.furniture();
        scene.surface = surface;
        scene.objects = objects;
        scene.facades = facades;
        Ok(scene)
    }

    /// The demo's surface features, objects and facades fitted to this scene's road.
    fn furniture(&self) -> (SurfaceModel, Vec<SceneObject>, Facades) {
        let scene = self;
        let (s0, s1) = scene.s_range;
        let road = scene.road();
        let at = |f: f64| s0 + f * (s1 - s0);
        let b = |s: f64| scene.borders(&road, s);
        let centre = |s: f64| road.lane_offset(s);
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

    /// Adds the clutter of a real mobile-mapping survey to the scene, placed from its own lanes
    /// within its s range (seeded by the scene's seed: the same scene, the same clutter), and
    /// turns on multipath returns ([`Clutter::default`]):
    ///
    /// - trees beside the road, about 3 per 100 m (at least one), on alternate sides: the trunk
    ///   0.5 to 2.5 m beyond the road edge, the crown (radius 2.5 to 3.5 m) reaching 1 to 2 m
    ///   over the carriageway, its bottom 3 to 5 m above the road surface there;
    /// - parked cars (4.5 x 1.8 x 1.5 m), about 1.5 per 100 m (at least one), centred on the
    ///   outer edge of a side's outermost lane: half their width over the carriageway;
    /// - people (cylinders 0.5 m across, 1.8 m tall), one per 100 m (at least two), standing on
    ///   the carriageway up to 0.8 m inside its edge.
    ///
    /// Every object's footprint stays inside the s range (a crown too, where the range is long
    /// enough) and clear of the objects already there; where the road is too narrow at every
    /// station tried (a carriageway under 2.5 m, or a side without lanes for a car) an object
    /// is left out. The objects are not pavement: the surface (and so the truth CRG) does not
    /// change.
    pub fn add_clutter(&mut self) {
        let objects = self.clutter_objects();
        self.objects.extend(objects);
        self.clutter = Some(Clutter::default());
    }

    fn clutter_objects(&self) -> Vec<SceneObject> {
        let road = self.road();
        let (s0, s1) = self.s_range;
        let len = s1 - s0;
        let seed = self.seed ^ 0xc107_7e2d_0b1e_0c75;
        let u = |what: u64, i: u64, k: u64| crate::noise::uniform(seed, what, i, k);
        let first = usize::from(u(0, 0, 0) < 0.5);
        let mut placed: Vec<SceneObject> = Vec::new();
        // The footprint of an object on the ground: half its extent along and across, m.
        let half = |k: ObjectKind| match k {
            ObjectKind::Tree { trunk_radius: r, .. } | ObjectKind::Pole { radius: r, .. } => (r, r),
            ObjectKind::Person { radius: r, .. } => (r, r),
            ObjectKind::Car { length, width, .. } => (length / 2.0, width / 2.0),
        };
        let clear = |placed: &[SceneObject], s: f64, t: f64, (hs, ht): (f64, f64)| {
            self.objects.iter().chain(placed).all(|o| {
                let (os, ot) = half(o.kind);
                (o.s - s).abs() > os + hs + 0.1 || (o.t - t).abs() > ot + ht + 0.1
            })
        };
        // The i-th of n stations (attempt a): spread over the range, jittered, `margin` inside it.
        let station = |what: u64, i: usize, n: usize, a: u64, margin: f64| {
            let m = margin.min(len / 2.0);
            let s = s0 + (i as f64 + 0.5 + 0.8 * (u(what, i as u64, a) - 0.5)) * len / n as f64;
            s.clamp(s0 + m, s1 - m)
        };
        // Each side at s: its sign, its road edge and the width of its carriageway.
        let sides = |s: f64| {
            let b = self.borders(&road, s);
            let c = road.lane_offset(s);
            [(-1.0, b.road_right, c - b.road_right), (1.0, b.road_left, b.road_left - c)]
        };
        let count = |per_100m: f64, min: usize| ((len * per_100m / 100.0).round() as usize).max(min);
        const ATTEMPTS: u64 = 6;

        let n = count(3.0, 1);
        for i in 0..n {
            let side = (i + first) % 2;
            let radius = 2.5 + u(1, i as u64, 0);
            let over = 1.0 + u(1, i as u64, 1);
            let bottom = 3.0 + 2.0 * u(1, i as u64, 2);
            let trunk_radius = 0.2;
            for a in 0..ATTEMPTS {
                let s = station(2, i, n, a, radius);
                let (sign, edge, _) = sides(s)[side];
                let b = self.borders(&road, s);
                if b.road_left - b.road_right < 2.5 {
                    continue;
                }
                let t = edge + sign * (radius - over);
                if !clear(&placed, s, t, (trunk_radius, trunk_radius)) {
                    continue;
                }
                // The road surface under the crown's inner edge, the ground under the trunk.
                let inner = edge - sign * over;
                let z_road = self.z(&road, s, inner).unwrap_or_else(|| self.base_z(&road, s, inner));
                let ground = crate::scanner::ground_z(self, &road, s, t);
                let crown_height = z_road - ground + bottom + radius;
                let kind =
                    ObjectKind::Tree { trunk_radius, trunk_height: crown_height, crown_radius: radius, crown_height };
                placed.push(SceneObject { s, t, kind });
                break;
            }
        }

        let car = ObjectKind::Car { length: 4.5, width: 1.8, height: 1.5, clearance: 0.25 };
        let n = count(1.5, 1);
        for i in 0..n {
            for a in 0..ATTEMPTS {
                let s = station(3, i, n, a, 2.3);
                let wide: Vec<(f64, f64, f64)> = sides(s).into_iter().filter(|x| x.2 >= 2.5).collect();
                let Some(&(_, edge, _)) = wide.get((i + first) % wide.len().max(1)) else { continue };
                if clear(&placed, s, edge, half(car)) {
                    placed.push(SceneObject { s, t: edge, kind: car });
                    break;
                }
            }
        }

        let person = ObjectKind::Person { radius: 0.25, height: 1.8 };
        let n = count(1.0, 2);
        for i in 0..n {
            for a in 0..ATTEMPTS {
                let s = station(4, i, n, a, 0.3);
                let wide: Vec<(f64, f64, f64)> = sides(s).into_iter().filter(|x| x.2 >= 1.2).collect();
                let Some(&(sign, edge, width)) = wide.get((i + first + 1) % wide.len().max(1)) else { continue };
                let t = edge - sign * (0.8f64).min(0.4 * width);
                if clear(&placed, s, t, half(person)) {
                    placed.push(SceneObject { s, t, kind: person });
                    break;
                }
            }
        }
        placed
    }

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

    /// Lateral centre of lane `id` at s, m.
    pub fn lane_centre(&self, road: &RoadEval, id: i32, s: f64) -> Option<f64> {
        let b = road.lane_borders(s);
        let outer = b.iter().find(|l| l.0 == id)?.1;
        let inner = if id.abs() == 1 { road.lane_offset(s) } else { b.iter().find(|l| l.0 == id - id.signum())?.1 };
        Some(0.5 * (inner + outer))
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
        self.borders_in(road, &road.lane_borders(s), s)
    }

    fn borders_in(&self, road: &RoadEval, lanes: &[(i32, f64)], s: f64) -> Borders {
        let centre = road.lane_offset(s);
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
        let lanes = road.lane_borders(s);
        let borders = self.borders_in(road, &lanes, s);
        let marks = self
            .surface
            .markings
            .iter()
            .filter(|m| s >= m.s0 && s < m.s1)
            .filter_map(|m| {
                let base = match m.lane {
                    None => 0.0,
                    Some(0) => road.lane_offset(s),
                    Some(id) => lanes.iter().find(|l| l.0 == id)?.1,
                };
                Some(Mark { t: base + m.t, half_width: m.width / 2.0, s0: m.s0, dash: m.dash })
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

/// The lines a road's roadMarks paint within `range`: each mark on its lane's outer border
/// (the lane offset for the centre lane), from its sOffset to the next mark or the section end.
/// Farthest a lane border of a scene may lie from the reference line, m. The widest roads
/// are about 100 m across; the scanner tabulates the surface from verge to verge at every
/// profile (texture rows of a few centimetres), so its work grows with the width.
pub const MAX_LATERAL: f64 = 1000.0;

/// Checks the lanes a scene is built of, every 0.5 m over `range` and at the range's end:
/// every border finite and within [`MAX_LATERAL`] of the reference line, and no lane of
/// negative width (OpenDRIVE widths are >= 0; a negative one puts a lane's outer border
/// inside its inner one, and the scene's zones would overlap).
fn check_lanes(road: &RoadEval, (s0, s1): (f64, f64)) -> Result<(), String> {
    let n = ((s1 - s0) / 0.5).ceil().clamp(1.0, 1e8) as usize;
    for i in 0..=n {
        let s = (s0 + (s1 - s0) * i as f64 / n as f64).min(s1);
        let centre = road.lane_offset(s);
        if !(centre.is_finite() && centre.abs() <= MAX_LATERAL) {
            return Err(format!(
                "at s = {s:.3} m the lane offset is {} m: more than {MAX_LATERAL} m from the reference line",
                metres(centre)
            ));
        }
        let mut borders = road.lane_borders(s);
        // Each side from the centre outwards: a lane's inner border is the previous one's outer.
        borders.sort_by_key(|&(id, _)| (id.signum(), id.abs()));
        let mut inner = (0, centre);
        for &(id, t) in &borders {
            if !(t.is_finite() && t.abs() <= MAX_LATERAL) {
                return Err(format!(
                    "lane {id} at s = {s:.3} m: its outer border at t = {} m is more than {MAX_LATERAL} m from the \
                     reference line",
                    metres(t)
                ));
            }
            if inner.0 != id.signum() {
                inner = (id.signum(), centre);
            }
            let width = (t - inner.1) * f64::from(id.signum());
            if width < -1e-9 {
                return Err(format!(
                    "lane {id} at s = {s:.3} m is {width:.4} m wide: a lane's width must not be negative (its outer \
                     border would lie inside its inner one)"
                ));
            }
            inner.1 = t;
        }
    }
    Ok(())
}

/// A length for a message: millimetres, or the exponent form when it is huge.
fn metres(x: f64) -> String {
    if x.abs() < 1e9 {
        format!("{x:.3}")
    } else {
        format!("{x:e}")
    }
}

fn road_markings(road: &opendrive::model::Road, range: (f64, f64)) -> Vec<Marking> {
    let mut out = Vec::new();
    let secs = &road.lanes.lane_sections;
    for (i, sec) in secs.iter().enumerate() {
        let sec_end = secs.get(i + 1).map_or(road.length, |n| n.s);
        for lane in sec.lanes() {
            for (k, rm) in lane.road_marks.iter().enumerate() {
                let a = sec.s + rm.s_offset;
                let b = lane.road_marks.get(k + 1).map_or(sec_end, |n| sec.s + n.s_offset);
                let (a, b) = (a.max(range.0), b.min(range.1));
                if b <= a {
                    continue;
                }
                let w = rm.width.filter(|w| *w > 0.0).unwrap_or(0.12);
                let broken = Some((3.0, 6.0));
                let lines: &[(f64, Option<(f64, f64)>)] = match rm.kind.as_str() {
                    "solid" => &[(0.0, None)],
                    "broken" => &[(0.0, broken)],
                    "solid solid" => &[(-1.0, None), (1.0, None)],
                    "solid broken" => &[(-1.0, None), (1.0, broken)],
                    "broken solid" => &[(-1.0, broken), (1.0, None)],
                    "broken broken" => &[(-1.0, broken), (1.0, broken)],
                    _ => &[],
                };
                // Double lines: two lines of the mark's width, one width apart, the first
                // towards the centre of the road.
                let outward = if lane.id < 0 { -1.0 } else { 1.0 };
                for &(side, dash) in lines {
                    out.push(Marking {
                        lane: Some(lane.id),
                        t: side * outward * w + 0.0,
                        s0: a,
                        s1: b,
                        width: w,
                        dash,
                    });
                }
            }
        }
    }
    out
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
