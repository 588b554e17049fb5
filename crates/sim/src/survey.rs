//! A virtual survey: passes of the scanner through a scene, written as a real mobile-mapping
//! system delivers them (`scan.las` or `scan.laz`, `trajectory.csv`) together with the exact
//! truth (`truth/road.xodr`, `truth/surface.crg`, `truth/features.json`).
//!
//! Map coordinates are the scene's file coordinates plus the OpenDRIVE header `<offset>` (the
//! demo road sits at EOV (EPSG:23700) 650000 / 240000, near Budapest; `Scene::from_road` puts any
//! road's start there). Classes: 2 level verge and ground, 11 road surface, 64 lane marking,
//! 65 sidewalk, 68 curb, 6 building, 5 high vegetation, 66 pole, 67 car (64 to 68 are user
//! classes).

use crate::scanner::{scan_with, Class, Pass, ScanPoint, ScannerConfig};
use crate::Scene;
use std::fmt::Write as _;
use std::path::Path;

/// OGC WKT of EPSG:23700, HD72 / EOV.
pub use scan::EOV_WKT;

/// How far the truth CRG reaches beyond the road edges onto the verges, m (sidewalks of the
/// demo road are 2 m; the wide level verges of other roads are cut).
pub const TRUTH_VERGE: f64 = 2.5;

/// ASPRS class code of a truth class.
pub fn class_code(c: Class) -> u8 {
    match c {
        Class::Road => 11,
        Class::Marking => 64,
        Class::Sidewalk => 65,
        Class::Ground => 2,
        Class::Curb => 68,
        Class::Building => 6,
        Class::Vegetation => 5,
        Class::Pole => 66,
        Class::Car => 67,
    }
}

/// A survey plan.
#[derive(Debug, Clone)]
pub struct Survey {
    /// Scanner settings.
    pub scanner: ScannerConfig,
    /// The drives, in time order.
    pub passes: Vec<Pass>,
    /// Seed of the range noise.
    pub seed: u64,
    /// GPS time of the first profile of the first pass, s; passes follow 60 s apart.
    pub start_time: f64,
    /// GNSS/IMU error added to the trajectory and so to every point: a constant offset (m)...
    pub trajectory_offset: [f64; 3],
    /// ... plus a drift (m/s) growing from the start of each pass.
    pub trajectory_drift: [f64; 3],
}

impl Survey {
    /// Two passes over the whole demo road at 10 m/s: lane -1 forward, lane 1 backward.
    pub fn demo(seed: u64) -> Survey {
        Survey {
            scanner: ScannerConfig::default(),
            passes: vec![
                Pass { t: -1.625, speed: 10.0, s_start: 0.0, s_end: 150.0, id: 1 },
                Pass { t: 1.625, speed: 10.0, s_start: 150.0, s_end: 0.0, id: 2 },
            ],
            seed,
            start_time: 3.0e8,
            trajectory_offset: [0.0; 3],
            trajectory_drift: [0.0; 3],
        }
    }
}

impl Survey {
    /// Two passes at 10 m/s over the scene's s range: forward along the centre of lane -1 (at
    /// mid-range), back along lane 1 (lane -1 again, 1 m further out, on a one-way road).
    pub fn along(scene: &Scene, seed: u64) -> Survey {
        let road = scene.road();
        let (s0, s1) = scene.s_range;
        let mid = 0.5 * (s0 + s1);
        let right = scene.lane_centre(&road, -1, mid).unwrap_or(-1.5);
        let left = scene.lane_centre(&road, 1, mid).unwrap_or(right - 1.0);
        Survey {
            passes: vec![
                Pass { t: right, speed: 10.0, s_start: s0, s_end: s1, id: 1 },
                Pass { t: left, speed: 10.0, s_start: s1, s_end: s0, id: 2 },
            ],
            ..Survey::demo(seed)
        }
    }
}

/// What a survey wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Points written.
    pub points: usize,
    /// Rays cast.
    pub rays: usize,
    /// Trajectory rows.
    pub profiles: usize,
}

/// Runs the survey and writes everything below `out` (`scan.laz` when `laz`). The points are
/// streamed to the file a chunk of profiles at a time, so memory does not grow with the survey.
pub fn run(scene: &Scene, survey: &Survey, out: &Path, laz: bool) -> Result<Summary, String> {
    let truth = out.join("truth");
    std::fs::create_dir_all(&truth).map_err(|e| format!("{}: {e}", truth.display()))?;
    let off = scene.odr.header.offset.unwrap_or_default();
    let las_path = out.join(if laz { "scan.laz" } else { "scan.las" });
    let options = scan::LasOptions {
        wkt: EOV_WKT.into(),
        offset: [off.x.round(), off.y.round(), 0.0],
        scale: 0.001,
        system: "roadscan virtual survey".into(),
    };
    let mut writer = scan::LasWriter::create(&las_path, &options).map_err(|e| e.to_string())?;
    let mut failed = None;
    let (traj, summary) = measure_with(scene, survey, |chunk| {
        if failed.is_none() {
            failed = writer.write(chunk).err();
        }
    });
    if let Some(e) = failed {
        return Err(e.to_string());
    }
    writer.finish().map_err(|e| e.to_string())?;
    write_text(&out.join("trajectory.csv"), &traj)?;
    opendrive::write_file(&scene.odr, truth.join("road.xodr"), &Default::default()).map_err(|e| e.to_string())?;
    let (v_right, v_left) = scene.v_range_within(TRUTH_VERGE);
    let grid = (0.01, 0.01, (v_right / 0.01).floor() * 0.01, (v_left / 0.01).ceil() * 0.01);
    crate::truth::write_surface_crg(scene, grid, &truth.join("surface.crg")).map_err(|e| e.to_string())?;
    write_text(&truth.join("features.json"), &features_json(scene))?;
    Ok(summary)
}

/// Casts the survey's rays: the points in the map frame (with the trajectory error applied),
/// the trajectory as CSV text, and the counts.
pub fn measure(scene: &Scene, survey: &Survey) -> (Vec<scan::LasPoint>, String, Summary) {
    let mut points = Vec::new();
    let (traj, summary) = measure_with(scene, survey, |chunk| points.extend_from_slice(chunk));
    (points, traj, summary)
}

/// [`measure`] handing the points to `sink` in order, a chunk at a time.
pub fn measure_with(scene: &Scene, survey: &Survey, mut sink: impl FnMut(&[scan::LasPoint])) -> (String, Summary) {
    let place = scene.odr.header.offset.unwrap_or_default().placement();
    let mut traj = String::from("time,x,y,z,roll,pitch,heading,pass\n");
    let road = scene.road();
    let (mut rays, mut profiles, mut points) = (0, 0, 0);
    let mut las: Vec<scan::LasPoint> = Vec::new();
    for (i, pass) in survey.passes.iter().enumerate() {
        let t0 = survey.start_time + 60.0 * i as f64 + (0..i).map(|k| pass_duration(&survey.passes[k])).sum::<f64>();
        let n_profiles = (pass_duration(pass) * survey.scanner.rate).floor() as usize + 1;
        rays += n_profiles * survey.scanner.points_per_rev;
        profiles += n_profiles;
        let dir = (pass.s_end - pass.s_start).signum();
        for k in 0..n_profiles {
            let tk = k as f64 / survey.scanner.rate;
            let s = pass.s_start + dir * pass.speed * tk;
            let pose = road.pose(s);
            // The scanner's position (the IMU is taken to sit at the scanner's centre).
            let tc = pass.t + survey.scanner.lateral;
            let xy = [pose.x - tc * pose.hdg.sin(), pose.y + tc * pose.hdg.cos()];
            let station = scene.station(&road, s);
            let z = scene.z_at(&station, pass.t).unwrap_or_else(|| station.base_z(pass.t)) + survey.scanner.height;
            let grade = road.grade(s);
            let heading = if dir > 0.0 { pose.hdg } else { pose.hdg + std::f64::consts::PI };
            let m = place.to_map([xy[0], xy[1], z]);
            let e = traj_error(survey, tk);
            let m = [m[0] + e[0], m[1] + e[1], m[2] + e[2]];
            let _ = writeln!(
                traj,
                "{:.6},{:.4},{:.4},{:.4},{:.6},{:.6},{:.6},{}",
                t0 + tk,
                m[0],
                m[1],
                m[2],
                dir * road.superelevation(s),
                dir * grade.atan(),
                heading.rem_euclid(std::f64::consts::TAU),
                pass.id
            );
        }
        scan_with(scene, &survey.scanner, pass, survey.seed, |pts: &[ScanPoint]| {
            las.clear();
            las.extend(pts.iter().map(|p| {
                let m = place.to_map(p.xyz);
                let e = traj_error(survey, p.time);
                scan::LasPoint {
                    x: m[0] + e[0],
                    y: m[1] + e[1],
                    z: m[2] + e[2],
                    gps_time: t0 + p.time,
                    intensity: p.intensity,
                    scan_angle_deg: p.angle.to_degrees() as f32,
                    source: p.pass,
                    class: class_code(p.class),
                }
            }));
            points += las.len();
            sink(&las);
        });
    }
    (traj, Summary { points, rays, profiles })
}

/// The trajectory error at `t` seconds into a pass (the scanner's position error moves the
/// point by the same amount; attitude errors are not modelled).
fn traj_error(survey: &Survey, t: f64) -> [f64; 3] {
    let (o, d) = (survey.trajectory_offset, survey.trajectory_drift);
    [o[0] + d[0] * t, o[1] + d[1] * t, o[2] + d[2] * t]
}

fn pass_duration(p: &Pass) -> f64 {
    (p.s_end - p.s_start).abs() / p.speed
}

fn write_text(path: &Path, text: &str) -> Result<(), String> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, path)).map_err(|e| format!("{}: {e}", path.display()))
}

/// The designed features, in road coordinates (s, t, m) of `road.xodr`'s road: potholes,
/// manholes, cobbles, markings (t relative to a lane's outer border when `lane` is given),
/// facades and objects (centre, size; trees, poles and cars stand on the ground at (s, t)).
pub fn features_json(scene: &Scene) -> String {
    use crate::ObjectKind;
    let m = &scene.surface;
    let list = |items: Vec<String>| items.join(",\n    ");
    let mut j = String::from("{\n");
    let _ = writeln!(j, "  \"seed\": {},", scene.seed);
    let _ = writeln!(j, "  \"crs\": \"EPSG:23700\",");
    let _ = writeln!(j, "  \"road\": \"{}\",", scene.odr.roads[0].id.replace(['"', '\\'], "_"));
    let _ = writeln!(j, "  \"s_range\": [{}, {}],", scene.s_range.0, scene.s_range.1);
    let _ = writeln!(j, "  \"classes\": {{\"2\": \"ground\", \"11\": \"road surface\", \"64\": \"lane marking\", \"65\": \"sidewalk\", \"68\": \"curb\", \"6\": \"building\", \"5\": \"high vegetation\", \"66\": \"pole\", \"67\": \"car\"}},");
    let _ = writeln!(j, "  \"asphalt_texture_rms_m\": {},", m.asphalt_rms);
    let _ = writeln!(j, "  \"curb_height_m\": {},", m.curb_height);
    let _ = writeln!(j, "  \"curb_width_m\": {},", m.curb_width);
    let potholes = m
        .potholes
        .iter()
        .map(|p| {
            format!(
                "{{\"s\": {}, \"t\": {}, \"radius_s\": {}, \"radius_t\": {}, \"depth\": {}}}",
                p.s, p.t, p.radius_s, p.radius_t, p.depth
            )
        })
        .collect();
    let _ = writeln!(j, "  \"potholes\": [\n    {}\n  ],", list(potholes));
    let manholes = m
        .manholes
        .iter()
        .map(|p| format!("{{\"s\": {}, \"t\": {}, \"radius\": {}, \"offset\": {}}}", p.s, p.t, p.radius, p.offset))
        .collect();
    let _ = writeln!(j, "  \"manholes\": [\n    {}\n  ],", list(manholes));
    if let Some(c) = m.cobbles {
        let _ = writeln!(j, "  \"cobbles\": {{\"s0\": {}, \"s1\": {}, \"sett_length\": {}, \"sett_width\": {}, \"joint\": {}, \"joint_depth\": {}}},", c.s0, c.s1, c.length, c.width, c.joint, c.joint_depth);
    }
    let markings = m
        .markings
        .iter()
        .map(|k| {
            format!(
                "{{{}\"t\": {}, \"s0\": {}, \"s1\": {}, \"width\": {}, \"type\": \"{}\"{}}}",
                k.lane.map_or(String::new(), |l| format!("\"lane\": {l}, ")),
                k.t,
                k.s0,
                k.s1,
                k.width,
                if k.dash.is_some() { "broken" } else { "solid" },
                k.dash.map_or(String::new(), |(d, g)| format!(", \"dash\": {d}, \"gap\": {g}"))
            )
        })
        .collect();
    let _ = writeln!(j, "  \"markings\": [\n    {}\n  ],", list(markings));
    let f = scene.facades;
    let _ = writeln!(
        j,
        "  \"facades\": [{{\"t\": {}, \"height\": {}}}, {{\"t\": {}, \"height\": {}}}],",
        f.left, f.height, f.right, f.height
    );
    let objects = scene
        .objects
        .iter()
        .map(|o| {
            let shape = match o.kind {
                ObjectKind::Tree { trunk_radius, trunk_height, crown_radius, crown_height } => format!(
                    "\"type\": \"tree\", \"trunk_radius\": {trunk_radius}, \"trunk_height\": {trunk_height}, \"crown_radius\": {crown_radius}, \"crown_height\": {crown_height}"
                ),
                ObjectKind::Pole { radius, height } => {
                    format!("\"type\": \"pole\", \"radius\": {radius}, \"height\": {height}")
                }
                ObjectKind::Car { length, width, height, clearance } => format!(
                    "\"type\": \"car\", \"length\": {length}, \"width\": {width}, \"height\": {height}, \"clearance\": {clearance}"
                ),
            };
            format!("{{\"s\": {}, \"t\": {}, {shape}}}", o.s, o.t)
        })
        .collect();
    let _ = writeln!(j, "  \"objects\": [\n    {}\n  ]", list(objects));
    j.push_str("}\n");
    j
}
