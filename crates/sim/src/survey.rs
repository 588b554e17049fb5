//! A virtual survey: passes of the scanner through a scene, written as a real mobile-mapping
//! system delivers them (`scan.las` or `scan.laz`, `trajectory.csv`, `survey.json`) together
//! with the exact truth (`truth/road.xodr`, `truth/surface.crg`, `truth/features.json`).
//!
//! `survey.json` records how the survey was made, so that the axis can be fitted to the
//! trajectory without flags (`build --trajectory`): format `"roadscan survey 1"`, all lengths in
//! metres, angles in degrees:
//!
//! ```json
//! {
//!   "format": "roadscan survey 1",
//!   "crs": "EPSG:23700",
//!   "scan": "scan.las",
//!   "trajectory": "trajectory.csv",
//!   "mount": {"height_m": 2.2, "lateral_m": 0, "roll_deg": 0},
//!   "scanner": {"rate_hz": 200, "points_per_rev": 1000, "range_noise_m": 0.002, "max_range_m": 60},
//!   "trajectory_error": {"offset_m": [0, 0, 0], "drift_m_per_s": [0, 0, 0]},
//!   "passes": [{"id": 1, "lane_t_m": -1.625, "track_t_m": -1.625, "forward": true,
//!               "speed_m_per_s": 10, "s_start_m": 0, "s_end_m": 150, "axis_offset_m": 1.625}],
//!   "axis": {"pass": "1", "offset_m": 1.625, "sensor_height_m": 2.2}
//! }
//! ```
//!
//! - `mount`: the scanner centre's height above the road surface under the vehicle, its
//!   lateral offset from the vehicle's track towards +t of the road (whichever way a pass
//!   drives), and the roll of the scanner head (positive towards +t).
//! - `passes`: each drive; `lane_t_m` is the vehicle's t on the reference line, `track_t_m`
//!   the t of the trajectory rows (the scanner centre: `lane_t_m + mount.lateral_m`), and
//!   `axis_offset_m` the reference line's distance to the left of the trajectory in the
//!   direction of travel (`-track_t_m` forward, `+track_t_m` backward).
//! - `axis`: what `roadscan axis --trajectory trajectory.csv` takes to give the reference line:
//!   `--pass`, `--offset` (pass 1's `axis_offset_m`) and `--sensor-height` (`mount.height_m`:
//!   the rows' z is the road surface under the vehicle plus it).
//! - `trajectory_error`: the GNSS/IMU error added to the trajectory rows and to every point
//!   (the points are georeferenced with the erroneous trajectory, as in a real survey): a
//!   constant offset, a drift from the start of each pass and, when the survey has it, a smooth
//!   random error `"noise_rms_m": {"xy": .., "z": .., "model": ..}` (RMS on x and on y, and on
//!   z; see [`trajectory_noise`]).
//! - `clutter` (only in a survey of a scene with [`crate::Scene::add_clutter`]): the fraction
//!   of road returns that are multipath and their extra range; the clutter objects are listed
//!   in `truth/features.json` with the other objects.
//! - The trajectory rows are `time,x,y,z,roll,pitch,heading,pass`: GPS time (s), the scanner
//!   centre in the map CRS (m, with the trajectory error), the vehicle's roll, pitch and
//!   heading (rad), and the pass id.
//!
//! Map coordinates are the scene's file coordinates plus the OpenDRIVE header `<offset>` (the
//! demo road sits at EOV (EPSG:23700) 650000 / 240000, near Budapest; `Scene::from_road` puts any
//! road's start there). Classes: 2 level verge and ground, 11 road surface, 64 lane marking,
//! 65 sidewalk, 68 curb, 6 building, 5 high vegetation, 66 pole, 67 car, 69 person (64 to 69 are user
//! classes). A multipath return has the class of the surface it hit.

use crate::scanner::{scan_kept, Class, Pass, ScanPoint, ScannerConfig};
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
        Class::Person => 69,
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
    /// ... plus a drift (m/s) growing from the start of each pass...
    pub trajectory_drift: [f64; 3],
    /// ... plus a smooth random error of RMS `[sigma_xy, sigma_z]` (m; sigma_xy in each of x and
    /// y), a function of the survey's time (see [`trajectory_noise`]).
    pub trajectory_noise: [f64; 2],
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
            trajectory_noise: [0.0; 2],
        }
    }
}

/// The largest distance between neighbouring passes across a wide road, m: every part of it
/// lies within 5 m of a pass, where a profile scanner 2.2 m up still gives 1 cm detail.
pub const PASS_SPACING: f64 = 10.0;

/// The two usual passes (lanes -1 and 1) serve a road whose edges both lie within this of one
/// of them, m (a 2+1 road's edge lies 5.25 m from the nearer pass).
pub const CLASSIC_REACH: f64 = 6.0;

impl Survey {
    /// Passes at 10 m/s over the scene's s range, as a mapping vehicle drives a road. Two, where
    /// they reach every part of the carriageway within [`CLASSIC_REACH`] (at mid-range): forward
    /// along the centre of lane -1, back along lane 1 when both are lanes of the carriageway
    /// (lane -1 again, 1 m further out, on a one-way road of one lane). Else along the centres of lanes of the carriageway, the outermost on the
    /// right first, then each the farthest lane within [`PASS_SPACING`] of the last, until the
    /// outermost on the left; passes right of the centre drive forward, left of it back (on a
    /// one-way road they alternate).
    pub fn along(scene: &Scene, seed: u64) -> Survey {
        let road = scene.road();
        let (s0, s1) = scene.s_range;
        let mid = 0.5 * (s0 + s1);
        let b = scene.borders(&road, mid);
        let centre = scene.lane_offset(&road, mid);
        let mut lanes: Vec<f64> = [-1, 1]
            .into_iter()
            .flat_map(|sign| (1..=64).map_while(|k| scene.lane_centre(&road, sign * k, mid)).collect::<Vec<_>>())
            .filter(|&t| t <= b.road_left + 1e-9 && t >= b.road_right - 1e-9)
            .collect();
        lanes.sort_by(f64::total_cmp);
        lanes.dedup_by(|a, b| (*a - *b).abs() < 1e-9);
        let mut ts = Vec::new();
        // Lanes -1 and 1 when both are lanes of the carriageway (a border lane beside a one-way
        // road is not driven).
        let on_road = |t: &f64| lanes.iter().any(|l| (l - t).abs() < 1e-9);
        let right = scene.lane_centre(&road, -1, mid).filter(on_road);
        let left = scene.lane_centre(&road, 1, mid).filter(on_road);
        let classic = match (right, left) {
            (Some(r), Some(l)) => Some([r, l]),
            (Some(r), None) if lanes.len() < 2 => Some([r, r - 1.0]),
            _ => None,
        };
        let reach = |p: &[f64; 2]| {
            [b.road_right, b.road_left].iter().all(|&e| p.iter().any(|&t| (t - e).abs() <= CLASSIC_REACH))
        };
        if let Some(p) = classic.filter(reach) {
            ts = p.to_vec();
        } else if let (Some(&first), Some(&last)) = (lanes.first(), lanes.last()) {
            ts.push(first);
            while let Some(&at) = ts.last() {
                if at >= last {
                    break;
                }
                let next = lanes.iter().copied().rfind(|&t| t > at && t <= at + PASS_SPACING);
                ts.push(next.unwrap_or_else(|| lanes.iter().copied().find(|&t| t > at).unwrap_or(last)));
            }
        }
        match ts.len() {
            0 => ts = vec![-1.5, -2.5],
            1 => ts.push(ts[0] + if ts[0] > centre { 1.0 } else { -1.0 }),
            _ => {}
        }
        let one_way = ts.iter().all(|&t| t < centre) || ts.iter().all(|&t| t > centre);
        let passes = ts
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let forward = if one_way { i % 2 == 0 } else { t < centre };
                let (s_start, s_end) = if forward { (s0, s1) } else { (s1, s0) };
                Pass { t, speed: 10.0, s_start, s_end, id: u16::try_from(i + 1).unwrap_or(u16::MAX) }
            })
            .collect();
        Survey { passes, ..Survey::demo(seed) }
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
pub fn run(scene: &Scene, survey: &Survey, out: &Path, laz: bool) -> Result<Summary, crate::Error> {
    let truth = out.join("truth");
    std::fs::create_dir_all(&truth).map_err(|error| crate::Error::Io { path: truth.clone(), error })?;
    let off = scene.odr.header.offset.unwrap_or_default();
    let las_path = out.join(if laz { "scan.laz" } else { "scan.las" });
    let options = scan::LasOptions {
        wkt: EOV_WKT.into(),
        offset: [off.x.round(), off.y.round(), 0.0],
        scale: 0.001,
        system: "roadscan virtual survey".into(),
    };
    let mut writer = scan::LasWriter::create(&las_path, &options)?;
    let mut failed = None;
    let (traj, summary) = measure_with(scene, survey, |chunk| {
        if failed.is_none() {
            failed = writer.write(chunk).err();
        }
    });
    if let Some(e) = failed {
        return Err(e.into());
    }
    writer.finish()?;
    write_text(&out.join("trajectory.csv"), &traj)?;
    let scan_file = if laz { "scan.laz" } else { "scan.las" };
    write_text(&out.join("survey.json"), &survey_json(survey, scene.clutter.as_ref(), scan_file))?;
    write_truth(scene, &truth)?;
    Ok(summary)
}

/// The truth of `scene` into the directory `truth`: `road.xodr`, `surface.crg` (1 cm, reaching
/// [`TRUTH_VERGE`] beyond the road edges) and `features.json`.
pub(crate) fn write_truth(scene: &Scene, truth: &Path) -> Result<(), crate::Error> {
    opendrive::write_file(&scene.odr, truth.join("road.xodr"), &Default::default())?;
    let (v_right, v_left) = scene.v_range_within(TRUTH_VERGE);
    let grid = (0.01, 0.01, (v_right / 0.01).floor() * 0.01, (v_left / 0.01).ceil() * 0.01);
    crate::truth::write_surface_crg(scene, grid, &truth.join("surface.crg"))?;
    write_text(&truth.join("features.json"), &features_json(scene))
}

/// Casts the survey's rays: the points in the map frame (with the trajectory error applied),
/// the trajectory as CSV text, and the counts.
pub fn measure(scene: &Scene, survey: &Survey) -> (Vec<scan::LasPoint>, String, Summary) {
    let mut points = Vec::new();
    let (traj, summary) = measure_with(scene, survey, |chunk| points.extend_from_slice(chunk));
    (points, traj, summary)
}

/// [`measure`] handing the points to `sink` in order, a chunk at a time.
pub fn measure_with(scene: &Scene, survey: &Survey, sink: impl FnMut(&[scan::LasPoint])) -> (String, Summary) {
    measure_each(|_| (scene, &|_: &ScanPoint| true), survey, sink)
}

/// A pass's scene and the returns it keeps ([`crate::scanner::scan_kept`]).
pub(crate) type PassScene<'a> = (&'a Scene, &'a (dyn Fn(&ScanPoint) -> bool + Sync));

/// [`measure_with`] with each pass `i` scanning the scene `scene_of(i)` gives, keeping the
/// returns it accepts. The scenes share one header `<offset>` (each pass's places its points).
pub(crate) fn measure_each<'a>(
    scene_of: impl Fn(usize) -> PassScene<'a>,
    survey: &Survey,
    mut sink: impl FnMut(&[scan::LasPoint]),
) -> (String, Summary) {
    let mut traj = String::from("time,x,y,z,roll,pitch,heading,pass\n");
    let (mut rays, mut profiles, mut points) = (0, 0, 0);
    let mut las: Vec<scan::LasPoint> = Vec::new();
    for (i, pass) in survey.passes.iter().enumerate() {
        let (scene, keep) = scene_of(i);
        let place = scene.odr.header.offset.unwrap_or_default().placement();
        let road = scene.road();
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
            let e = traj_error(survey, tk, t0 - survey.start_time + tk);
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
        scan_kept(scene, &survey.scanner, pass, survey.seed, keep, |pts: &[ScanPoint]| {
            las.clear();
            las.extend(pts.iter().map(|p| {
                let m = place.to_map(p.xyz);
                let e = traj_error(survey, p.time, t0 - survey.start_time + p.time);
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

/// The reference line's distance to the left of pass `p`'s trajectory rows in its direction
/// of travel, m: the `--offset` of `roadscan axis --trajectory` for that pass.
pub fn axis_offset(survey: &Survey, p: &Pass) -> f64 {
    let track = p.t + survey.scanner.lateral;
    let forward = p.s_end >= p.s_start;
    if forward {
        -track
    } else {
        track
    }
}

/// `survey.json`: the mount, the scanner, the passes and the axis options of the survey (see
/// the module's documentation for the format); the scene's clutter when it has any.
pub fn survey_json(survey: &Survey, clutter: Option<&crate::Clutter>, scan_file: &str) -> String {
    survey_json_roads(survey, clutter, scan_file, None)
}

/// [`survey_json`] with, in a network survey, the id of the road each pass drives (`"road"`).
pub(crate) fn survey_json_roads(
    survey: &Survey,
    clutter: Option<&crate::Clutter>,
    scan_file: &str,
    roads: Option<&[String]>,
) -> String {
    let sc = &survey.scanner;
    let v3 = |v: [f64; 3]| format!("[{}, {}, {}]", v[0], v[1], v[2]);
    let passes: Vec<String> = survey
        .passes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let road = roads.and_then(|r| r.get(i)).map_or(String::new(), |id| format!("\"road\": \"{}\", ", json_text(id)));
            format!(
                "{{{road}\"id\": {}, \"lane_t_m\": {}, \"track_t_m\": {}, \"forward\": {}, \"speed_m_per_s\": {}, \"s_start_m\": {}, \"s_end_m\": {}, \"axis_offset_m\": {}}}",
                p.id,
                p.t,
                p.t + sc.lateral,
                p.s_end >= p.s_start,
                p.speed,
                p.s_start,
                p.s_end,
                axis_offset(survey, p)
            )
        })
        .collect();
    let mut j = String::from("{\n");
    let _ = writeln!(j, "  \"format\": \"roadscan survey 1\",");
    let _ = writeln!(j, "  \"crs\": \"EPSG:23700\",");
    let _ = writeln!(j, "  \"scan\": \"{scan_file}\",");
    let _ = writeln!(j, "  \"trajectory\": \"trajectory.csv\",");
    let _ = writeln!(
        j,
        "  \"mount\": {{\"height_m\": {}, \"lateral_m\": {}, \"roll_deg\": {}}},",
        sc.height,
        sc.lateral,
        sc.roll.to_degrees()
    );
    let _ = writeln!(
        j,
        "  \"scanner\": {{\"rate_hz\": {}, \"points_per_rev\": {}, \"range_noise_m\": {}, \"max_range_m\": {}}},",
        sc.rate, sc.points_per_rev, sc.range_noise, sc.max_range
    );
    // Trajectory noise and clutter only when there are any: a clean survey's file stays as it was.
    let noise = match survey.trajectory_noise {
        n if n == [0.0; 2] => String::new(),
        [xy, z] => {
            format!(", \"noise_rms_m\": {{\"xy\": {xy}, \"z\": {z}, \"model\": \"sinusoids, periods 40-150 s\"}}")
        }
    };
    let _ = writeln!(
        j,
        "  \"trajectory_error\": {{\"offset_m\": {}, \"drift_m_per_s\": {}{noise}}},",
        v3(survey.trajectory_offset),
        v3(survey.trajectory_drift)
    );
    if let Some(c) = clutter {
        let _ = writeln!(j, "  \"clutter\": {},", clutter_json(c));
    }
    let _ = writeln!(j, "  \"passes\": [\n    {}\n  ],", passes.join(",\n    "));
    match survey.passes.first() {
        Some(p) => {
            let _ = writeln!(
                j,
                "  \"axis\": {{\"pass\": \"{}\", \"offset_m\": {}, \"sensor_height_m\": {}}}",
                p.id,
                axis_offset(survey, p),
                sc.height
            );
        }
        None => j.push_str("  \"axis\": null\n"),
    }
    j.push_str("}\n");
    j
}

/// The trajectory error at `t` seconds into a pass, `t_survey` seconds after the survey's
/// start (the scanner's position error moves the point by the same amount; attitude errors are
/// not modelled).
fn traj_error(survey: &Survey, t: f64, t_survey: f64) -> [f64; 3] {
    let (o, d) = (survey.trajectory_offset, survey.trajectory_drift);
    let e = [o[0] + d[0] * t, o[1] + d[1] * t, o[2] + d[2] * t];
    if survey.trajectory_noise == [0.0; 2] {
        return e;
    }
    let n = trajectory_noise(survey.seed, survey.trajectory_noise, t_survey);
    [e[0] + n[0], e[1] + n[1], e[2] + n[2]]
}

/// Sinusoids in the trajectory noise of each axis.
const NOISE_TERMS: u64 = 6;

/// The smooth random trajectory error at `t` seconds after the survey's start, m: on each axis
/// a sum of six sinusoids of seeded phases, weights and periods (40 to 150 s, one in each of
/// six log-spaced bands, so no two beat slowly), scaled so that the RMS over time is
/// `sigma[0]` on x and on y and `sigma[1]` on z. Its autocorrelation falls to 1/e within
/// about 10 to 30 s; GNSS/IMU errors of a real survey wander like that. The same seed gives
/// the same error.
pub fn trajectory_noise(seed: u64, sigma: [f64; 2], t: f64) -> [f64; 3] {
    let mut out = [0.0; 3];
    for (axis, e) in out.iter_mut().enumerate() {
        let sd = if axis < 2 { sigma[0] } else { sigma[1] };
        if sd == 0.0 {
            continue;
        }
        let u = |i: u64, k: u64| crate::noise::uniform(seed ^ 0x7a6a_0e55_0b5e_ed00, axis as u64, i, k);
        let (p_lo, p_hi) = (40.0f64, 150.0f64);
        let band = (p_hi / p_lo).ln() / NOISE_TERMS as f64;
        let weights: Vec<f64> = (0..NOISE_TERMS).map(|i| 0.5 + 0.5 * u(i, 0)).collect();
        let norm = (2.0 / weights.iter().map(|w| w * w).sum::<f64>()).sqrt();
        for (i, w) in (0..NOISE_TERMS).zip(&weights) {
            let period = p_lo * (band * (i as f64 + 0.2 + 0.6 * u(i, 1))).exp();
            let phase = std::f64::consts::TAU * u(i, 2);
            *e += sd * w * norm * (std::f64::consts::TAU * t / period + phase).sin();
        }
    }
    out
}

/// The clutter's multipath settings as a JSON object (its objects are listed with the others).
fn clutter_json(c: &crate::Clutter) -> String {
    format!(
        "{{\"multipath_fraction\": {}, \"multipath_extra_m\": [{}, {}], \"multipath_class\": \"the class of the surface hit\"}}",
        c.multipath, c.multipath_extra.0, c.multipath_extra.1
    )
}

/// `text` for a JSON string: quotes, backslashes and control characters as `_`.
pub(crate) fn json_text(text: &str) -> String {
    text.chars().map(|c| if c == '"' || c == '\\' || c.is_control() { '_' } else { c }).collect()
}

pub(crate) fn pass_duration(p: &Pass) -> f64 {
    (p.s_end - p.s_start).abs() / p.speed
}

/// Writes a text file whole or not at all ([`atomic::write_bytes_atomic`]): no temporary file
/// is left beside it on an error, and it is synced before the rename.
pub(crate) fn write_text(path: &Path, text: &str) -> Result<(), crate::Error> {
    atomic::write_bytes_atomic(path, text.as_bytes())
        .map_err(|error| crate::Error::Io { path: path.to_path_buf(), error })
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
    let _ = writeln!(j, "  \"road\": \"{}\",", json_text(&scene.odr.roads[0].id));
    let _ = writeln!(j, "  \"s_range\": [{}, {}],", scene.s_range.0, scene.s_range.1);
    // The person class only where there are people: a clean scene's file stays as it was.
    let person = if scene.objects.iter().any(|o| matches!(o.kind, ObjectKind::Person { .. })) {
        ", \"69\": \"person\""
    } else {
        ""
    };
    let _ = writeln!(j, "  \"classes\": {{\"2\": \"ground\", \"11\": \"road surface\", \"64\": \"lane marking\", \"65\": \"sidewalk\", \"68\": \"curb\", \"6\": \"building\", \"5\": \"high vegetation\", \"66\": \"pole\", \"67\": \"car\"{person}}},");
    if let Some(c) = &scene.clutter {
        let _ = writeln!(j, "  \"clutter\": {},", clutter_json(c));
    }
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
    if f.exist() {
        let _ = writeln!(
            j,
            "  \"facades\": [{{\"t\": {}, \"height\": {}}}, {{\"t\": {}, \"height\": {}}}],",
            f.left, f.height, f.right, f.height
        );
    } else {
        let _ = writeln!(j, "  \"facades\": [],");
    }
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
                ObjectKind::Person { radius, height } => {
                    format!("\"type\": \"person\", \"radius\": {radius}, \"height\": {height}")
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn write_text_names_the_file_and_leaves_nothing_behind_on_an_error() {
        let d = std::env::temp_dir().join(format!("sim-write-text-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let names = || {
            let mut n: Vec<String> =
                std::fs::read_dir(&d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
            n.sort();
            n
        };
        let ok = d.join("survey.json");
        write_text(&ok, "{}").unwrap();
        assert_eq!(std::fs::read_to_string(&ok).unwrap(), "{}");
        // The rename onto a directory that holds something fails: the temporary file goes too.
        let busy = d.join("trajectory.csv");
        std::fs::create_dir(&busy).unwrap();
        std::fs::write(busy.join("x"), "x").unwrap();
        let e = write_text(&busy, "t,x,y\n").unwrap_err();
        assert!(matches!(&e, crate::Error::Io { path, .. } if path == &busy), "{e:?}");
        assert!(e.to_string().starts_with(&format!("{}: ", busy.display())), "{e}");
        assert_eq!(names(), ["survey.json", "trajectory.csv"]);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
