//! A network survey: every road of an OpenDRIVE file (junctions' connecting roads included)
//! scanned in one survey, with the truth of each road, so that a network has truth like a
//! single road.
//!
//! # The route
//! Each road gets the passes [`Survey::along`] plans for it alone (two over most roads: lane
//! -1 forward, lane 1 back), the roads in the file's order, the passes numbered 1, 2, ... over
//! the whole survey and driven one after another like the passes of one road (60 s apart). The
//! passes are not chained through the roads' links: a vehicle would drive from one to the next,
//! the survey records only the drives over the roads. Every road is therefore covered over its
//! whole length, however it is linked.
//!
//! # Where roads overlap
//! Each road is a [`Scene::network_road`]: its own designed surface in its own road frame
//! (lines, curbs and sidewalks from its lanes; no potholes, setts, objects or facades, which
//! would stand on the roads that cross it). In a junction the surfaces of several roads cover
//! the same ground. A ray of a pass is cast against its own road's surface; its return is kept
//! only when no other road's surface there would have stopped it first
//! ([`Overlaps::keep`]): a return beyond its road's verges is left out wherever another road's
//! designed surface lies (that surface is there, not the ground the scene extends its verge to);
//! a return on a verge is left out over another road's carriageway (pavement over verge); and
//! a return on a surface of the same kind is left out when the other road's surface there lies
//! more than [`OVERLAP_TOLERANCE`] above it (the ray meets the nearest surface). The test is
//! made at the return, not along the whole beam: a beam that grazes another road's curb on
//! its way is not stopped by it. A left-out ray gives no return; the other road's own passes
//! cover its surface.
//!
//! # Files
//! One `scan.las` (or `scan.laz`) with every pass, one `trajectory.csv`, `survey.json` (as a
//! single road's, each pass with the `"road"` it drives) and the truth: `truth/network.xodr`
//! (the whole file placed in EOV like a single road's scene, links and junctions kept),
//! `truth/roads/DIR/` for each road (`road.xodr`, `surface.crg`, `features.json` as a single
//! road's survey writes them in `truth/`; `DIR` is the road id with characters other than
//! ASCII letters, digits, `-` and `_` as `_`, and `~N` after a repeated name, N the road's
//! place in the file from 1) and `truth/features.json`, the index of the roads:
//!
//! ```json
//! {
//!   "format": "roadscan network truth 1",
//!   "seed": 1,
//!   "crs": "EPSG:23700",
//!   "network": "network.xodr",
//!   "overlap_tolerance_m": 0.01,
//!   "roads": [
//!     {"id": "1", "dir": "roads/1", "junction": "-1", "length_m": 28.2953, "passes": [1, 2]}
//!   ]
//! }
//! ```

use crate::scanner::ScanPoint;
use crate::survey::{self, Summary, Survey, EOV_WKT};
use crate::{Error, Scene, Zone};
use opendrive::model::HeaderOffset;
use opendrive::{OpenDrive, RoadEval};
use std::fmt::Write as _;
use std::path::Path;

/// A return is hidden by another road's surface of the same kind that lies more than this
/// above it, m: two roads' asphalt textures (a few millimetres each) never hide each other,
/// a curb (12 cm) does.
pub const OVERLAP_TOLERANCE: f64 = 0.01;

/// How far beyond a road's end a return still counts as on it, m: where two roads meet, the
/// inverse of one may miss a point on the other's end by rounding.
pub const END_SLACK: f64 = 0.005;

/// The roads of a file as scenes sharing one placement.
#[derive(Debug, Clone)]
pub struct Network {
    /// The whole file placed as the scenes are (header `<offset>` and `<geoReference>`),
    /// upgraded to OpenDRIVE 1.8 like a single road's scene.
    pub odr: OpenDrive,
    /// A scene for each road, in the file's order.
    pub scenes: Vec<Scene>,
}

/// A network's survey plan: the passes and the road (index into [`Network::scenes`]) each drives.
#[derive(Debug, Clone)]
pub struct NetworkSurvey {
    /// Scanner, passes (numbered over the whole survey), seed and trajectory error.
    pub survey: Survey,
    /// `roads[i]`: the scene pass `i` drives.
    pub roads: Vec<usize>,
}

impl Network {
    /// Every road of `odr` as a [`Scene::network_road`], placed by the first road's start (its
    /// start near EOV 650000 / 240000, 100 m up, as [`Scene::from_road`] places a road).
    pub fn new(odr: &OpenDrive, seed: u64) -> Result<Network, Error> {
        let first = odr.roads.first().ok_or(Error::NoRoads)?;
        let start = RoadEval::new(first).pose(0.0);
        let origin = HeaderOffset { x: 650000.0 - start.x.round(), y: 240000.0 - start.y.round(), z: 100.0, hdg: 0.0 };
        let scenes = odr
            .roads
            .iter()
            .map(|r| {
                Scene::network_road(odr, &r.id, origin, seed)
                    .map_err(|e| Error::InRoad { id: r.id.clone(), source: Box::new(e) })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut whole = odr.clone();
        whole.header.geo_reference = Some("EPSG:23700".into());
        whole.header.offset = Some(origin);
        opendrive::convert::upgrade(&mut whole, opendrive::Version::V1_8);
        Ok(Network { odr: whole, scenes })
    }

    /// The passes of every road ([`Survey::along`] for each), one road after another in the
    /// file's order, numbered from 1.
    pub fn survey(&self, seed: u64) -> Result<NetworkSurvey, Error> {
        let mut passes = Vec::new();
        let mut roads = Vec::new();
        for (i, scene) in self.scenes.iter().enumerate() {
            for mut p in Survey::along(scene, seed).passes {
                p.id =
                    u16::try_from(passes.len() + 1).map_err(|_| Error::TooManyPasses { passes: passes.len() + 1 })?;
                passes.push(p);
                roads.push(i);
            }
        }
        Ok(NetworkSurvey { survey: Survey { passes, ..Survey::demo(seed) }, roads })
    }

    /// The directory under `truth/roads/` of each scene's truth (see the module's documentation).
    pub fn truth_dirs(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::with_capacity(self.scenes.len());
        for (i, scene) in self.scenes.iter().enumerate() {
            let id = &scene.odr.roads[0].id;
            let base: String =
                id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
            let base = if base.is_empty() { "_".to_string() } else { base };
            let name = if names.contains(&base) { format!("{base}~{}", i + 1) } else { base };
            names.push(name);
        }
        names
    }
}

/// What decides which returns a network keeps: each road prepared for (x, y) -> (s, t), the
/// box its designed surface lies in and how far from its reference line it reaches.
pub struct Overlaps<'a> {
    scenes: &'a [Scene],
    roads: Vec<RoadEval<'a>>,
    /// min x, min y, max x, max y of each road's designed surface, file frame, m.
    boxes: Vec<[f64; 4]>,
    /// Largest |t| of each road's designed surface, m.
    reach: Vec<f64>,
}

impl std::fmt::Debug for Overlaps<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Overlaps").field("boxes", &self.boxes).field("reach", &self.reach).finish_non_exhaustive()
    }
}

impl<'a> Overlaps<'a> {
    /// The overlaps of the network's roads.
    pub fn new(net: &'a Network) -> Overlaps<'a> {
        let scenes = &net.scenes[..];
        let roads: Vec<RoadEval<'a>> = scenes.iter().map(|s| RoadEval::new(&s.odr.roads[0])).collect();
        let mut boxes = Vec::with_capacity(scenes.len());
        let mut reach = Vec::with_capacity(scenes.len());
        for (scene, road) in scenes.iter().zip(&roads) {
            let (s0, s1) = scene.s_range;
            let n = ((s1 - s0) / 0.5).ceil().clamp(1.0, 1e7) as usize;
            let mut b = [f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
            let mut far = 0.0f64;
            for i in 0..=n {
                let s = (s0 + (s1 - s0) * i as f64 / n as f64).min(s1);
                let borders = scene.borders(road, s);
                let pose = road.pose(s);
                for t in [borders.walk_right, borders.walk_left] {
                    far = far.max(t.abs());
                    let (x, y) = (pose.x - t * pose.hdg.sin(), pose.y + t * pose.hdg.cos());
                    b = [b[0].min(x), b[1].min(y), b[2].max(x), b[3].max(y)];
                }
            }
            // Between the samples a curve bulges by far less than a metre.
            boxes.push([b[0] - 1.0, b[1] - 1.0, b[2] + 1.0, b[3] + 1.0]);
            reach.push(far + 0.5);
        }
        Overlaps { scenes, roads, boxes, reach }
    }

    /// Road `b`'s (s, planar t) of the file-frame point (x, y): the solutions of the inverse
    /// within the road's reach, else, up to [`END_SLACK`] beyond an end, the end's station
    /// (a return where two roads meet is then judged against both).
    fn on_road(&self, b: usize, x: f64, y: f64) -> Vec<(f64, f64)> {
        let road = &self.roads[b];
        let found: Vec<(f64, f64)> =
            road.xy_to_st_all(x, y, self.reach[b]).iter().map(|c| (c.s, road.planar_t(c.s, c.t))).collect();
        if !found.is_empty() {
            return found;
        }
        let (s0, s1) = self.scenes[b].s_range;
        [s0, s1]
            .into_iter()
            .filter_map(|s| {
                let p = road.pose(s);
                let (sin, cos) = p.hdg.sin_cos();
                let (dx, dy) = (x - p.x, y - p.y);
                let t = -dx * sin + dy * cos;
                ((dx * cos + dy * sin).abs() <= END_SLACK && t.abs() <= self.reach[b]).then_some((s, t))
            })
            .collect()
    }

    /// Whether a return `p` of a pass over road `a` stays (see the module's documentation).
    pub fn keep(&self, a: usize, p: &ScanPoint) -> bool {
        let own = self.scenes[a].borders(&self.roads[a], p.s).zone(p.t);
        let [x, y, z] = p.truth;
        for (b, scene) in self.scenes.iter().enumerate() {
            let bx = self.boxes[b];
            if b == a || x < bx[0] || y < bx[1] || x > bx[2] || y > bx[3] {
                continue;
            }
            let road = &self.roads[b];
            for (s, t) in self.on_road(b, x, y) {
                let st = scene.station(road, s);
                let zone = st.borders.zone(t);
                let Some(zb) = scene.z_at(&st, t) else { continue };
                let hidden = match (own, zone) {
                    (Zone::Outside, _) | (Zone::Sidewalk, Zone::Road) => true,
                    (Zone::Road, Zone::Sidewalk) => false,
                    _ => zb > z + OVERLAP_TOLERANCE,
                };
                if hidden {
                    return false;
                }
            }
        }
        true
    }
}

/// Which returns of a road's passes stay.
type Keep<'a> = Box<dyn Fn(&ScanPoint) -> bool + Sync + 'a>;

/// Runs the network survey `plan` of `net` and writes everything below `out` (`scan.laz` when
/// `laz`; see the module's documentation). The points are streamed to the file a chunk of
/// profiles at a time and each road's truth CRG a block of rows at a time, so memory does not
/// grow with the survey.
pub fn run(net: &Network, plan: &NetworkSurvey, out: &Path, laz: bool) -> Result<Summary, Error> {
    let (passes, scenes) = (plan.survey.passes.len(), net.scenes.len());
    if plan.roads.len() != passes || plan.roads.iter().any(|&a| a >= scenes) {
        return Err(Error::PlanRoads { passes, roads: plan.roads.clone(), scenes });
    }
    let truth = out.join("truth");
    let dirs = net.truth_dirs();
    for d in &dirs {
        let dir = truth.join("roads").join(d);
        std::fs::create_dir_all(&dir).map_err(|error| Error::Io { path: dir.clone(), error })?;
    }
    let off = net.odr.header.offset.unwrap_or_default();
    let scan_file = if laz { "scan.laz" } else { "scan.las" };
    let options = scan::LasOptions {
        wkt: EOV_WKT.into(),
        offset: [off.x.round(), off.y.round(), 0.0],
        scale: 0.001,
        system: "roadscan virtual survey".into(),
    };
    let mut writer = scan::LasWriter::create(&out.join(scan_file), &options)?;
    let overlaps = Overlaps::new(net);
    let ov = &overlaps;
    let keeps: Vec<Keep<'_>> =
        (0..net.scenes.len()).map(|a| Box::new(move |p: &ScanPoint| ov.keep(a, p)) as Box<_>).collect();
    let mut failed = None;
    let (traj, summary) = survey::measure_each(
        |i| {
            let a = plan.roads[i];
            (&net.scenes[a], &*keeps[a])
        },
        &plan.survey,
        |chunk| {
            if failed.is_none() {
                failed = writer.write(chunk).err();
            }
        },
    );
    if let Some(e) = failed {
        return Err(e.into());
    }
    writer.finish()?;
    survey::write_text(&out.join("trajectory.csv"), &traj)?;
    let ids: Vec<String> = plan.roads.iter().map(|&a| net.scenes[a].odr.roads[0].id.clone()).collect();
    survey::write_text(
        &out.join("survey.json"),
        &survey::survey_json_roads(&plan.survey, None, scan_file, Some(&ids)),
    )?;
    opendrive::write_file(&net.odr, truth.join("network.xodr"), &Default::default())?;
    for (scene, d) in net.scenes.iter().zip(&dirs) {
        survey::write_truth(scene, &truth.join("roads").join(d))?;
    }
    survey::write_text(&truth.join("features.json"), &index_json(net, plan, &dirs))?;
    Ok(summary)
}

/// `truth/features.json` of a network survey: its roads and where their truth lies.
fn index_json(net: &Network, plan: &NetworkSurvey, dirs: &[String]) -> String {
    let roads: Vec<String> = net
        .scenes
        .iter()
        .zip(dirs)
        .enumerate()
        .map(|(i, (scene, d))| {
            let road = &scene.odr.roads[0];
            let passes: Vec<String> = plan
                .roads
                .iter()
                .zip(&plan.survey.passes)
                .filter(|(&a, _)| a == i)
                .map(|(_, p)| p.id.to_string())
                .collect();
            format!(
                "{{\"id\": \"{}\", \"dir\": \"roads/{}\", \"junction\": \"{}\", \"length_m\": {}, \"passes\": [{}]}}",
                survey::json_text(&road.id),
                survey::json_text(d),
                survey::json_text(net.odr.roads.get(i).map_or("-1", |r| r.junction.as_str())),
                scene.s_range.1 - scene.s_range.0,
                passes.join(", ")
            )
        })
        .collect();
    let seed = net.scenes.first().map_or(0, |s| s.seed);
    let mut j = String::from("{\n");
    let _ = writeln!(j, "  \"format\": \"roadscan network truth 1\",");
    let _ = writeln!(j, "  \"seed\": {seed},");
    let _ = writeln!(j, "  \"crs\": \"EPSG:23700\",");
    let _ = writeln!(j, "  \"network\": \"network.xodr\",");
    let _ = writeln!(j, "  \"overlap_tolerance_m\": {OVERLAP_TOLERANCE},");
    let _ = writeln!(j, "  \"roads\": [\n    {}\n  ]", roads.join(",\n    "));
    j.push_str("}\n");
    j
}
