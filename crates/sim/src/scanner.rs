//! A profile scanner on a mapping vehicle (Z+F / Pegasus Two style): a mirror turning at a
//! fixed rate sweeps a beam through the vertical plane normal to the road, while the vehicle
//! drives along a lane. Rays are cast against the scene exactly: the designed surface (road,
//! sidewalks and the ground beyond them at sidewalk height) and vertical facades parallel to
//! the road. Range noise is Gaussian and seeded per ray, so results do not depend on threads.
//!
//! # Frames and units
//! Scanner and points in the file frame of the scene's OpenDRIVE road (x, y, z in metres), the
//! road frame (s, t) planar as in [`Scene::z`]; time in seconds from the start of the pass.

use crate::noise;
use crate::scene::{Material, Scene, Station, Zone};

/// Scanner settings.
#[derive(Debug, Clone, PartialEq)]
pub struct ScannerConfig {
    /// Mirror revolutions per second.
    pub rate: f64,
    /// Points per revolution (evenly spaced in angle).
    pub points_per_rev: usize,
    /// Range noise, 1 sigma, m.
    pub range_noise: f64,
    /// Largest range with a return, m.
    pub max_range: f64,
    /// Mount: height of the scanner centre above the road surface under the vehicle, m.
    pub height: f64,
    /// Mount: lateral offset of the scanner centre from the vehicle's track, m, towards +t of
    /// the road (in the road frame, whichever way the pass drives).
    pub lateral: f64,
    /// Mount: roll of the scanner head about the road's direction, rad: turns every beam, and
    /// the mirror's zero from straight down, towards +t. The scan plane stays normal to the
    /// road; a yaw or pitch tilt of the plane is not modelled.
    pub roll: f64,
}

impl Default for ScannerConfig {
    fn default() -> Self {
        ScannerConfig {
            rate: 200.0,
            points_per_rev: 1000,
            range_noise: 0.002,
            max_range: 60.0,
            height: 2.2,
            lateral: 0.0,
            roll: 0.0,
        }
    }
}

/// One drive through the scene.
#[derive(Debug, Clone, PartialEq)]
pub struct Pass {
    /// Lateral position of the scanner (lane centre), m.
    pub t: f64,
    /// Speed, m/s.
    pub speed: f64,
    /// First and last station of the drive, m; driving towards decreasing s when `s_end < s_start`.
    pub s_start: f64,
    /// m.
    pub s_end: f64,
    /// Number written to the LAS point source id.
    pub id: u16,
}

/// What a point hit (the truth classification).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Road surface (asphalt, setts, manhole covers).
    Road,
    /// Lane marking.
    Marking,
    /// Curb: its vertical face and its top, `curb_width` wide.
    Curb,
    /// Sidewalk (a verge behind a curb) and the ground beyond it.
    Sidewalk,
    /// A level verge (border lanes, unpaved shoulders) and the ground beyond it.
    Ground,
    /// Building facade.
    Building,
    /// Trees.
    Vegetation,
    /// Poles.
    Pole,
    /// Parked cars.
    Car,
    /// People.
    Person,
}

/// One return.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScanPoint {
    /// Measured position (with range noise), m.
    pub xyz: [f64; 3],
    /// Exact hit on the scene, m.
    pub truth: [f64; 3],
    /// Road-frame position of the exact hit.
    pub s: f64,
    /// m.
    pub t: f64,
    /// s.
    pub time: f64,
    /// Beam angle from straight down, positive towards +t, rad (the mirror angle plus the
    /// mount's roll, as LAS wants the scan angle).
    pub angle: f64,
    /// Measured range, m.
    pub range: f64,
    /// Range noise applied, m.
    pub noise: f64,
    /// Extra range of a multipath return (see [`crate::Clutter`]), m; 0 for a direct return.
    /// The measured point is the truth moved along the beam by `noise + multipath`.
    pub multipath: f64,
    /// Truth class.
    pub class: Class,
    /// Surface material.
    pub material: Material,
    /// Return intensity, 0..65535.
    pub intensity: u16,
    /// Pass id.
    pub pass: u16,
}

/// Scans one pass; profiles in time order, points in mirror order.
pub fn scan(scene: &Scene, cfg: &ScannerConfig, pass: &Pass, seed: u64) -> Vec<ScanPoint> {
    let mut out = Vec::new();
    scan_with(scene, cfg, pass, seed, |points| out.extend_from_slice(points));
    out
}

/// Profiles scanned per thread between two calls of the sink.
const CHUNK: usize = 64;

/// Scans one pass and hands the points to `sink` in order (profiles in time order, points in
/// mirror order), a few hundred profiles at a time: memory stays flat in the pass length.
/// Profiles are independent: each chunk is split into contiguous blocks, one per core, joined in
/// order, so the points are the same for any number of threads.
pub fn scan_with(scene: &Scene, cfg: &ScannerConfig, pass: &Pass, seed: u64, sink: impl FnMut(&[ScanPoint])) {
    scan_kept(scene, cfg, pass, seed, &|_: &ScanPoint| true, sink);
}

/// [`scan_with`] keeping only the returns `keep` accepts (judged on the scanning threads, so
/// the result is the same for any number of them): a network survey leaves out the returns of
/// a road's rays that another road's surface would have stopped (see [`crate::network`]).
pub fn scan_kept(
    scene: &Scene,
    cfg: &ScannerConfig,
    pass: &Pass,
    seed: u64,
    keep: &(dyn Fn(&ScanPoint) -> bool + Sync),
    mut sink: impl FnMut(&[ScanPoint]),
) {
    let road = scene.road();
    let dist = (pass.s_end - pass.s_start).abs();
    let dir = (pass.s_end - pass.s_start).signum();
    let duration = dist / pass.speed;
    let n_profiles = (duration * cfg.rate).floor() as usize + 1;
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 64);
    // The beam directions (mirror angle plus the mount's roll), the same for every profile.
    let rays: Vec<Ray> = (0..cfg.points_per_rev)
        .map(|j| {
            let angle = std::f64::consts::TAU * j as f64 / cfg.points_per_rev as f64 - std::f64::consts::PI + cfg.roll;
            let (sa, ca) = angle.sin_cos();
            Ray { angle, sa, ca }
        })
        .collect();
    // Every object stands on the ground at its own (s, t).
    let grounds: Vec<f64> = scene.objects.iter().map(|o| ground_z(scene, &road, o.s, o.t)).collect();
    let fixed = Fixed { rays, grounds, bounds: scene.surface.height_bounds() };
    let (road, fixed) = (&road, &fixed);
    let mut buffers: Vec<Vec<ScanPoint>> = (0..threads).map(|_| Vec::new()).collect();
    let per_chunk = CHUNK * threads;
    for first in (0..n_profiles).step_by(per_chunk) {
        let last = (first + per_chunk).min(n_profiles);
        let block = (last - first).div_ceil(threads);
        std::thread::scope(|sc| {
            let handles: Vec<_> = buffers
                .iter_mut()
                .enumerate()
                .map(|(b, out)| {
                    sc.spawn(move || {
                        out.clear();
                        for k in (first + b * block)..(first + (b + 1) * block).min(last) {
                            let t0 = k as f64 / cfg.rate;
                            let s = pass.s_start + dir * pass.speed * t0;
                            profile(scene, road, cfg, fixed, (pass, seed, k), s, t0, keep, out);
                        }
                    })
                })
                .collect();
            // A panic in a worker is a bug: pass it on rather than lose its profiles.
            for h in handles {
                h.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            }
        });
        for out in &buffers {
            sink(out);
        }
    }
}

/// What every profile of a scan shares: the mirror directions and the objects' ground heights.
struct Fixed {
    rays: Vec<Ray>,
    grounds: Vec<f64>,
    bounds: (f64, f64),
}

/// The ground z at (s, t) an object stands on: the designed surface, or beyond the verges the
/// ground at verge height.
pub fn ground_z(scene: &Scene, road: &opendrive::RoadEval, s: f64, t: f64) -> f64 {
    let st = scene.station(road, s);
    let outer = (st.borders.walk_left - 1e-9, st.borders.walk_right + 1e-9);
    Section { scene, st, outer, bounds: scene.surface.height_bounds() }.z(t).0
}

/// A beam direction: angle from straight down (positive to the left), its sine and cosine.
struct Ray {
    angle: f64,
    sa: f64,
    ca: f64,
}

/// Ground height across the road at station s, in planar t.
struct Section<'a> {
    scene: &'a Scene,
    st: Station,
    outer: (f64, f64),
    /// [`crate::scene::SurfaceModel::height_bounds`].
    bounds: (f64, f64),
}

impl Section<'_> {
    /// Ground z at t (designed surface; beyond the verges, the ground at verge height).
    fn z(&self, t: f64) -> (f64, Material, Zone) {
        let base = self.st.base_z(t);
        // Where the surface has no width (the verges meet: a lane section without lanes, or
        // lanes of zero width), the outer edges cross by their 1e-9 margins: the surface is
        // the line between them (f64::clamp would panic on the crossed bounds).
        let (lo, hi) = (self.outer.1, self.outer.0);
        let tt = if lo <= hi { t.clamp(lo, hi) } else { 0.5 * (lo + hi) };
        match self.scene.height_at(&self.st, tt) {
            // Beyond the verges: paint only where a line still covers t (a road without border
            // lanes ends on the middle of its edge line), else            // gravel or grass at the edge's height.
            Some((h, m)) if tt != t => match m {
                Material::Marking if self.st.painted(t) => (base + h, m, Zone::Sidewalk),
                // Continuous with the designed surface at its edge.
                _ => {
                    let m = &self.scene.surface;
                    (base + h + self.st.verge(m, t) - self.st.verge(m, tt), Material::Gravel, Zone::Sidewalk)
                }
            },
            Some((h, m)) => (base + h, m, self.st.borders.zone(tt)),
            None if self.st.borders.curb_at(t) => {
                (base + self.scene.surface.curb_height, Material::Concrete, Zone::Sidewalk)
            }
            None => (base, Material::Vegetation, Zone::Sidewalk),
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn profile(
    scene: &Scene,
    road: &opendrive::RoadEval,
    cfg: &ScannerConfig,
    fixed: &Fixed,
    (pass, seed, k): (&Pass, u64, usize),
    s: f64,
    t0: f64,
    keep: &(dyn Fn(&ScanPoint) -> bool + Sync),
    out: &mut Vec<ScanPoint>,
) {
    let pose = road.pose(s);
    let (sin_h, cos_h) = pose.hdg.sin_cos();
    let normal = [-sin_h, cos_h];
    let st = scene.station_across(road, s, None);
    let outer = (st.borders.walk_left - 1e-9, st.borders.walk_right + 1e-9);
    let sec = Section { scene, st, outer, bounds: fixed.bounds };
    let slices = slices(scene, &fixed.grounds, s, pose.curvature);
    let (zc_ground, _, _) = sec.z(pass.t);
    let zc = zc_ground + cfg.height;
    let tc = pass.t + cfg.lateral;
    let (fl, fr, fh) = (scene.facades.left, scene.facades.right, scene.facades.height);
    // The vehicle rolls with the road under it (as the trajectory's roll says): on a banked
    // road every beam turns by the bank, so the scanner sees the surface rising beside it as
    // it sees a level road (a head that stayed upright sees nothing of a 60° bank above its
    // horizon). The centre stays above the track; the recorded scan angle is the head's own.
    let slope = sec.st.slope;
    let (sin_r, cos_r) = slope.atan().sin_cos();
    // The surface's unit normal in (t, z).
    let normal_tz = [-slope / slope.hypot(1.0), 1.0 / slope.hypot(1.0)];
    let mut pair = (0.0, 0.0);
    for (j, &Ray { angle, sa, ca }) in fixed.rays.iter().enumerate() {
        let (sa, ca) = if slope == 0.0 { (sa, ca) } else { (sa * cos_r + ca * sin_r, ca * cos_r - sa * sin_r) };
        // Range noise in pairs of rays (Box-Muller gives two variates), drawn for every ray
        // whether it returns or not.
        if j % 2 == 0 {
            pair = gaussian_pair(seed, pass.id, k, j / 2);
        }
        let noise = cfg.range_noise * if j % 2 == 0 { pair.0 } else { pair.1 };
        // Direction in the profile plane: lateral sin, vertical -cos (angle 0 = straight down).
        let hit = cast(&sec, tc, zc, sa, ca, cfg.max_range, (fl, fr, fh));
        let hit = nearest_object(&slices, tc, zc, sa, ca, hit.map_or(cfg.max_range, |h| h.0)).or(hit);
        let Some((r, t_hit, z_hit, material, class)) = hit else { continue };
        let multipath = match scene.clutter {
            Some(c) if matches!(class, Class::Road | Class::Marking) => multipath(&c, seed, pass.id, k, j),
            _ => 0.0,
        };
        let rm = r + noise + multipath;
        let xy = |t: f64| [pose.x + t * normal[0], pose.y + t * normal[1]];
        let truth_xy = xy(t_hit);
        let meas_t = tc + rm * sa;
        let meas_xy = xy(meas_t);
        let meas_z = zc - rm * ca;
        // Intensity: Phong with the incidence on a horizontal or vertical surface, 1/r falloff.
        let cos_inc = match class {
            Class::Building | Class::Pole | Class::Vegetation | Class::Car | Class::Person => sa.abs().max(0.2),
            // On the road surface: against its normal (|ca| on a level road).
            _ if slope == 0.0 => ca.abs(),
            _ => (sa * normal_tz[0] - ca * normal_tz[1]).abs(),
        };
        let refl = material.reflectance();
        let i = (refl.diffuse * cos_inc + refl.specular * cos_inc.powi(refl.exponent)) / (1.0 + 0.02 * r);
        let point = ScanPoint {
            xyz: [meas_xy[0], meas_xy[1], meas_z],
            truth: [truth_xy[0], truth_xy[1], z_hit],
            s,
            t: t_hit,
            time: t0 + j as f64 / (cfg.points_per_rev as f64 * cfg.rate),
            angle,
            range: rm,
            noise,
            multipath,
            class,
            material,
            intensity: (i.clamp(0.0, 1.0) * 65535.0) as u16,
            pass: pass.id,
        };
        if keep(&point) {
            out.push(point);
        }
    }
}

/// Ray from (t0, zc) with lateral direction `sa` and downward component `ca`: the first hit on
/// a facade or on the ground, (range, t, z, material, class).
fn cast(
    sec: &Section,
    t0: f64,
    zc: f64,
    sa: f64,
    ca: f64,
    max_range: f64,
    facades: (f64, f64, f64),
) -> Option<(f64, f64, f64, Material, Class)> {
    let (fl, fr, fh) = facades;
    // Facade hit, if the ray goes sideways.
    let facade = if sa > 1e-9 {
        Some((fl - t0) / sa)
    } else if sa < -1e-9 {
        Some((fr - t0) / sa)
    } else {
        None
    };
    let r_facade = facade.filter(|&r| r > 0.0 && r <= max_range).filter(|&r| {
        let t = t0 + r * sa;
        let z = zc - r * ca;
        let (zg, _, _) = sec.z(t);
        z >= zg && z <= zg + fh
    });
    // Ground: step along the ray in lateral steps of 1 cm (vertical steps of 1 cm for steep
    // rays) until it is below the ground, then bisect.
    let mut ground = None;
    // A ray going down, or up towards a bank that rises faster than it (a rolled scanner's
    // beams on a banked road).
    if ca > 1e-6 || ca + sa * sec.st.slope > 1e-6 {
        let r_end = r_facade.unwrap_or(max_range).min(max_range);
        let f = |r: f64| zc - r * ca - sec.z(t0 + r * sa).0;
        // Start where the ray enters the band the ground can be in (below the highest designed
        // height over the base plane, which the ray crosses linearly).
        let dr = 0.01 / sa.abs().max(ca);
        let descent = ca + sa * sec.st.slope;
        let (road_max, walk_max) = sec.bounds;
        let above = zc - sec.st.z0 - t0 * sec.st.slope - walk_max.max(road_max) - 1e-3;
        let mut r = if descent > 1e-12 { (above / descent).max(0.0) } else { r_end };
        r = (r - dr).max(0.0);
        // March: while the ray is above what the surface can reach in the current zone (road
        // and level verges: `road_max` above the base plane, sidewalks: `walk_max`), jump; then
        // 1 cm steps and bisection.
        let b = &sec.st.borders;
        let edges = [b.walk_right, b.road_right, b.road_left, b.walk_left];
        let bound =
            |t: f64| 1e-3 + if (t <= b.road_left && t >= b.road_right) || !b.curb_at(t) { road_max } else { walk_max };
        // f at `prev`, evaluated only when a crossing needs it.
        let mut prev = r;
        let mut fp: Option<f64> = None;
        while r < r_end {
            let t = t0 + r * sa;
            let gap = zc - r * ca - sec.st.base_z(t) - bound(t);
            if gap > 1e-3 && descent > 1e-12 {
                // Stay within the zone: stop at the next zone edge along the ray.
                let to_edge = edges
                    .iter()
                    .map(|&e| (e - t) / sa)
                    .filter(|&d| d.is_finite() && d > 1e-9)
                    .fold(f64::INFINITY, f64::min);
                let jump = (gap / descent).min(to_edge + 1e-9).min(r_end - r);
                if jump > dr {
                    let landing = r + jump;
                    let fl = f(landing);
                    if fl > 0.0 {
                        r = landing;
                        prev = r;
                        fp = Some(fl);
                        continue;
                    }
                    // Below the surface after the jump (a curb face at the zone edge): the
                    // crossing is in the jumped interval; bisect it below.
                    r = landing - dr;
                }
            }
            r = (r + dr).min(r_end);
            let fr = f(r);
            if fr <= 0.0 {
                let fp = fp.unwrap_or_else(|| f(prev));
                if fp > 0.0 {
                    ground = Some(crossing(&f, prev, fp, r, fr));
                    break;
                }
            }
            prev = r;
            fp = Some(fr);
            if r >= r_end {
                break;
            }
        }
    }
    match (ground, r_facade) {
        (Some(rg), rf) if rf.is_none_or(|rf| rg < rf) => {
            let t = t0 + rg * sa;
            let (_, material, zone) = sec.z(t);
            // The ray point: on the surface, or on a vertical face (curb, joint, rim) where the
            // surface steps.
            let zg = zc - rg * ca;
            let b = &sec.st.borders;
            let to_edge = (t - b.road_left).abs().min((t - b.road_right).abs());
            let on_face = to_edge < 1e-6 && zg > sec.z(t).0 + 1e-6;
            let curb = zone != Zone::Road && b.curb_at(t);
            let class = match (zone, material) {
                (_, Material::Marking) => Class::Marking,
                _ if on_face || (curb && to_edge <= sec.scene.surface.curb_width) => Class::Curb,
                (Zone::Road, _) => Class::Road,
                _ if curb => Class::Sidewalk,
                _ => Class::Ground,
            };
            Some((rg, t, zg, material, class))
        }
        (_, Some(rf)) => Some((rf, t0 + rf * sa, zc - rf * ca, Material::Concrete, Class::Building)),
        _ => None,
    }
}

/// The range where `f` (height of the ray above the ground) crosses zero in `[lo, hi]`, given
/// `f(lo) > 0 >= f(hi)`: the Illinois variant of regula falsi, which keeps the bracket (so a
/// step in the ground, a curb or joint face, is found like bisection would) and converges
/// superlinearly on the smooth surface. Ends within 1e-9 m of the root, or where the ray is
/// within 1e-10 m of the surface.
fn crossing(f: &impl Fn(f64) -> f64, mut lo: f64, mut f_lo: f64, mut hi: f64, mut f_hi: f64) -> f64 {
    let mut side = 0i8;
    for _ in 0..100 {
        if hi - lo < 1e-9 {
            break;
        }
        let mut r = (lo * f_hi - hi * f_lo) / (f_hi - f_lo);
        if !(r > lo && r < hi) {
            r = 0.5 * (lo + hi);
        }
        let fr = f(r);
        if fr.abs() < 1e-10 {
            return r;
        }
        if fr > 0.0 {
            lo = r;
            f_lo = fr;
            if side == 1 {
                f_hi *= 0.5;
            }
            side = 1;
        } else {
            hi = r;
            f_hi = fr;
            if side == -1 {
                f_lo *= 0.5;
            }
            side = -1;
        }
    }
    hi
}

/// The cut of an object by the profile plane: a rectangle or a circle in (t, z).
enum Slice {
    Rect { t0: f64, t1: f64, z0: f64, z1: f64, class: Class, material: Material },
    Circle { t: f64, z: f64, radius: f64, class: Class, material: Material },
}

impl Slice {
    /// The cut of a vertical cylinder standing at lateral `t`, `d` along track from the
    /// profile plane, from z0 to z1: a rectangle, or nothing when the plane misses it.
    fn cylinder(t: f64, d: f64, radius: f64, (z0, z1): (f64, f64), class: Class, material: Material) -> Option<Slice> {
        (d.abs() < radius).then(|| {
            let w = (radius * radius - d * d).sqrt();
            Slice::Rect { t0: t - w, t1: t + w, z0, z1, class, material }
        })
    }
}

/// The objects cut by the profile plane at s (curvature `k`: along-track distances at lateral
/// t scale by 1 - k·t), each standing at its ground height `grounds[i]`.
fn slices(scene: &Scene, grounds: &[f64], s: f64, k: f64) -> Vec<Slice> {
    use crate::scene::ObjectKind;
    let mut out = Vec::new();
    for (o, &ground) in scene.objects.iter().zip(grounds) {
        let d = (o.s - s) * (1.0 - k * o.t);
        match o.kind {
            ObjectKind::Tree { trunk_radius, trunk_height, crown_radius, crown_height } => {
                out.extend(Slice::cylinder(
                    o.t,
                    d,
                    trunk_radius,
                    (ground, ground + trunk_height),
                    Class::Vegetation,
                    Material::Vegetation,
                ));
                if d.abs() < crown_radius {
                    let radius = (crown_radius * crown_radius - d * d).sqrt();
                    out.push(Slice::Circle {
                        t: o.t,
                        z: ground + crown_height,
                        radius,
                        class: Class::Vegetation,
                        material: Material::Vegetation,
                    });
                }
            }
            ObjectKind::Pole { radius, height } => {
                out.extend(Slice::cylinder(o.t, d, radius, (ground, ground + height), Class::Pole, Material::Metal));
            }
            ObjectKind::Person { radius, height } => {
                out.extend(Slice::cylinder(o.t, d, radius, (ground, ground + height), Class::Person, Material::Cloth));
            }
            ObjectKind::Car { length, width, height, clearance } => {
                if d.abs() < length / 2.0 {
                    out.push(Slice::Rect {
                        t0: o.t - width / 2.0,
                        t1: o.t + width / 2.0,
                        z0: ground + clearance,
                        z1: ground + height,
                        class: Class::Car,
                        material: Material::Paint,
                    });
                }
            }
        }
    }
    out
}

/// The nearest object hit before `r_max` of the ray (t0 + r·sa, zc - r·ca).
fn nearest_object(
    slices: &[Slice],
    t0: f64,
    zc: f64,
    sa: f64,
    ca: f64,
    r_max: f64,
) -> Option<(f64, f64, f64, Material, Class)> {
    let mut best: Option<(f64, f64, f64, Material, Class)> = None;
    for sl in slices {
        let hit = match *sl {
            Slice::Rect { t0: a, t1: b, z0, z1, class, material } => {
                // Slab intersection in (t, z).
                let (mut lo, mut hi) = (0.0f64, r_max);
                let mut ok = true;
                for (p, d, l, h) in [(t0, sa, a, b), (zc, -ca, z0, z1)] {
                    if d.abs() < 1e-12 {
                        if p < l || p > h {
                            ok = false;
                        }
                    } else {
                        let (r1, r2) = ((l - p) / d, (h - p) / d);
                        lo = lo.max(r1.min(r2));
                        hi = hi.min(r1.max(r2));
                    }
                }
                (ok && lo <= hi && lo > 1e-6).then_some((lo, material, class))
            }
            Slice::Circle { t, z, radius, class, material } => {
                // |(t0 - t, zc - z) + r (sa, -ca)|^2 = radius^2, |dir| = 1.
                let (px, pz) = (t0 - t, zc - z);
                let b = px * sa - pz * ca;
                let c = px * px + pz * pz - radius * radius;
                let disc = b * b - c;
                if disc < 0.0 {
                    None
                } else {
                    let r = -b - disc.sqrt();
                    (r > 1e-6 && r < r_max).then_some((r, material, class))
                }
            }
        };
        if let Some((r, material, class)) = hit {
            if best.is_none_or(|b| r < b.0) {
                best = Some((r, t0 + r * sa, zc - r * ca, material, class));
            }
        }
    }
    best
}

/// The extra range of ray `j` of profile `k` when it is a multipath return (a hashed uniform
/// below the clutter's fraction), else 0: independent of evaluation order.
fn multipath(c: &crate::Clutter, seed: u64, pass: u16, k: usize, j: usize) -> f64 {
    const SEED: u64 = 0x6d75_6c74_6970_6174;
    if noise::uniform(seed ^ SEED, pass as u64, k as u64, j as u64) >= c.multipath {
        return 0.0;
    }
    let (lo, hi) = c.multipath_extra;
    lo + (hi - lo) * noise::uniform(seed ^ SEED.rotate_left(17), pass as u64, k as u64, j as u64)
}

/// Two independent standard normal variates for (seed, pass, profile, pair of points), by
/// Box-Muller on two hashed uniforms: independent of evaluation order.
fn gaussian_pair(seed: u64, pass: u16, k: usize, pair: usize) -> (f64, f64) {
    let u1 = noise::uniform(seed, pass as u64, k as u64, pair as u64);
    let u2 = noise::uniform(seed ^ 0xabcd_ef01_2345_6789, pass as u64, k as u64, pair as u64);
    let r = (-2.0 * u1.ln()).sqrt();
    let (sin, cos) = (std::f64::consts::TAU * u2).sin_cos();
    (r * cos, r * sin)
}
