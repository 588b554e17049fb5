//! Axis fitting: an OpenDRIVE reference line fitted to a trajectory, a polyline, an
//! OpenStreetMap way, an existing road, or the drive path found in the points themselves
//! (`pipeline::drive_path`).

use crate::progress::{Note, Progress};
use anyhow::{bail, Context, Result};
use opendrive::GeometryKind;
use pipeline::axis::{build_axis, AxisOptions};
use scan::axis::Polyline;
use scan::{CrsDef, Reprojection};
use std::path::{Path, PathBuf};

/// The most vertices an `xodr` road is sampled into (a 200 km road at 0.1 m).
const MAX_SAMPLES: usize = 2_000_000;

/// What an axis is fitted to, and how: one source (`trajectory`, `polyline`, `osm` with
/// `way`, `xodr` with `road`, or `points`) and the fit's options. [`Default`] gives the
/// command line's defaults.
#[derive(Debug, Clone)]
pub struct AxisConfig {
    /// A vehicle trajectory CSV (x, y or easting, northing; optionally z and pass).
    pub trajectory: Option<PathBuf>,
    /// Trajectory: the road centre's distance to the left of the vehicle's track, m.
    pub offset: f64,
    /// Trajectory: the pass to use (default: the first row's).
    pub pass: Option<String>,
    /// Trajectory: the sensor's height above the road, subtracted from z, m.
    pub sensor_height: f64,
    /// A polyline: CSV rows `x,y[,z]` or a GeoJSON LineString.
    pub polyline: Option<PathBuf>,
    /// An OpenStreetMap XML file (with `way`).
    pub osm: Option<PathBuf>,
    /// The OSM way id.
    pub way: Option<String>,
    /// An OpenDRIVE file whose road `road` is sampled every `step` metres and fitted again.
    pub xodr: Option<PathBuf>,
    /// The road id in `xodr`; also the id of the fitted road (default 1).
    pub road: Option<String>,
    /// LAS/LAZ files with GPS time and scan angles: the axis is the scanner's drive path.
    pub points: Vec<PathBuf>,
    /// Sampling step along an `xodr` road, m.
    pub step: f64,
    /// Largest distance of an input vertex from the fitted line (and of a height from the
    /// elevation), m.
    pub tolerance: f64,
    /// Shortest record, m.
    pub min_length: f64,
    /// The project CRS (projected), written as geoReference; default: the source's own.
    pub crs: Option<String>,
    /// The CRS of a CSV source when it differs from `crs`.
    pub source_crs: Option<String>,
    /// Width of the one driving lane written on each side, m.
    pub lane_width: f64,
}

impl Default for AxisConfig {
    fn default() -> AxisConfig {
        AxisConfig {
            trajectory: None,
            offset: 0.0,
            pass: None,
            sensor_height: 0.0,
            polyline: None,
            osm: None,
            way: None,
            xodr: None,
            road: None,
            points: Vec::new(),
            step: 1.0,
            tolerance: 0.01,
            min_length: 1.0,
            crs: None,
            source_crs: None,
            lane_width: 3.5,
        }
    }
}

impl AxisConfig {
    /// Every file the fit reads.
    pub fn inputs(&self) -> Vec<PathBuf> {
        [&self.trajectory, &self.polyline, &self.osm, &self.xodr]
            .into_iter()
            .flatten()
            .chain(&self.points)
            .cloned()
            .collect()
    }
}

/// The axis road `a` asks for (not written), its OpenDRIVE text, checked to read back as
/// fitted, and the name of its source for messages.
pub fn fit(a: &AxisConfig) -> Result<(pipeline::axis::AxisRoad, String, String)> {
    fit_noted(a, &crate::Silent).map(|(b, t, s, _)| (b, t, s))
}

/// [`fit`], with what was estimated from the points (`points`), also noted.
pub fn fit_noted(
    a: &AxisConfig,
    progress: &dyn Progress,
) -> Result<(pipeline::axis::AxisRoad, String, String, Option<DrivePathNote>)> {
    let (line, source, note) = read_source(a)?;
    if let Some(n) = &note {
        progress.note(&Note::Info(n.text()));
    }
    let mut xyz = line.xyz;
    let project = to_project(a, line.crs.as_deref(), &source, &mut xyz)?;
    // What a fit can be asked: a line no longer than the longest road OpenDRIVE reads.
    let length = plan_length(&xyz);
    if length.is_nan() || length > opendrive::MAX_STATION {
        bail!(
            "{source}: the line is {length:.3e} m long, more than {:.0e} m: no road is that long",
            opendrive::MAX_STATION
        );
    }
    let opts = AxisOptions {
        fit: opendrive::fit::FitOptions { tolerance: a.tolerance, min_length: a.min_length },
        road_id: a.road.clone().unwrap_or_else(|| "1".into()),
        lane_width: a.lane_width,
        geo_reference: project.as_ref().and_then(CrsDef::proj_string),
        z_offset: match &note {
            Some(n) => n.sensor_height,
            None if a.trajectory.is_some() => a.sensor_height,
            None => 0.0,
        },
    };
    let built = build_axis(&xyz, &opts).with_context(|| format!("{source}: fitting the axis"))?;
    // What is written must read back as fitted.
    let text = opendrive::write(&built.odr, &Default::default())?;
    pipeline::axis::check_written(&text, &built).map_err(|e| anyhow::anyhow!("internal: {e}"))?;
    Ok((built, text, source, note))
}

/// The vertices of the chosen source, and its name for messages.
fn read_source(a: &AxisConfig) -> Result<(Polyline, String, Option<DrivePathNote>)> {
    if !a.points.is_empty() {
        let (line, note) = drive_path(&a.points, a.crs.as_deref())?;
        let source = match a.points.as_slice() {
            [p] => p.display().to_string(),
            ps => format!("{} and {} more", ps[0].display(), ps.len() - 1),
        };
        return Ok((line, source, Some(note)));
    }
    let (line, source) = read_other(a)?;
    Ok((line, source, None))
}

/// What `--points` found: the passes, the one chosen and the sensor height estimated.
#[derive(Debug, Clone)]
pub struct DrivePathNote {
    /// Each pass: GPS time range (s), length (m), samples.
    pub passes: Vec<((f64, f64), f64, usize)>,
    /// The pass the axis follows (index into `passes`).
    pub chosen: usize,
    /// The scanner's height above the road under it (median over the pass), m.
    pub sensor_height: f64,
    /// Windows fitted.
    pub windows: usize,
    /// Windows left out (their angles describe no vertical scan plane).
    pub rejected: usize,
    /// The chosen pass's largest fit residual (RMS distance of a window's points from their
    /// rays), m.
    pub rms: f64,
}

impl DrivePathNote {
    /// The note as one sentence for the user.
    pub fn text(&self) -> String {
        let ((t0, t1), len, _) = self.passes[self.chosen];
        format!(
            "drive path from the points: {} pass(es); the axis follows pass {} of {} (GPS time {t0:.2}..{t1:.2} s, {len:.1} m), the scanner's track, not the road's centre; sensor height estimated {:.3} m from the points under the scanner; {} of {} windows left out; rays fitted within {:.1} mm RMS",
            self.passes.len(),
            self.chosen + 1,
            self.passes.len(),
            self.sensor_height,
            self.rejected,
            self.windows,
            self.rms * 1e3
        )
    }
}

/// The drive path of the scanner through the LAS/LAZ files `paths` (in their CRS, else
/// `crs`): the vertices of its longest pass (scanner positions), and what was found.
pub fn drive_path(paths: &[PathBuf], crs: Option<&str>) -> Result<(Polyline, DrivePathNote)> {
    use pipeline::drive_path::{DrivePathBuilder, DrivePathOptions};
    let inputs =
        crate::inputs::Inputs::open(&opendrive::OpenDrive::default(), Path::new(""), crs, paths, &crate::Silent)?;
    let crs_label = inputs.crs.as_ref().map(|c| c.0.clone());
    let mut b = DrivePathBuilder::new(DrivePathOptions::default()).map_err(anyhow::Error::msg)?;
    let mut without_time = false;
    inputs.stream(|p| {
        if p.gps_time.len() < p.x.len() || p.scan_angle_deg.len() < p.x.len() {
            without_time = true;
        }
        b.add(&p.x, &p.y, &p.z, &p.gps_time, &p.scan_angle_deg);
        Ok(())
    })?;
    let name = match paths {
        [p] => p.display().to_string(),
        ps => format!("{} (and {} more)", ps[0].display(), ps.len() - 1),
    };
    if without_time && b.points() == 0 {
        bail!("{name}: the points have no GPS time (point format 0 or 2): the drive path cannot be found; give --trajectory or --polyline");
    }
    let path = b.finish().map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
    let Some((chosen, pass)) = path.longest() else { bail!("{name}: no drive path found") };
    let sensor_height = pass.sensor_height().with_context(|| {
        format!("{name}: no points within 3 degrees of nadir under the scanner: its height above the road is unknown")
    })?;
    let rms = pass.samples.iter().map(|s| s.rms).fold(0.0, f64::max);
    let note = DrivePathNote {
        passes: path.passes.iter().map(|p| (p.time_range(), p.length, p.samples.len())).collect(),
        chosen,
        sensor_height,
        windows: path.windows,
        rejected: path.rejected,
        rms,
    };
    let xyz = pipeline::drive_path::vertices(pass, 0.2);
    Ok((Polyline { xyz, crs: crs_label }, note))
}

/// The vertices of a source other than `--points`, and its name for messages.
fn read_other(a: &AxisConfig) -> Result<(Polyline, String)> {
    if let Some(p) = &a.trajectory {
        return Ok((scan::axis::read_trajectory(p, a.pass.as_deref(), a.offset)?, p.display().to_string()));
    }
    if let Some(p) = &a.polyline {
        let json = p.extension().is_some_and(|e| e.eq_ignore_ascii_case("geojson") || e.eq_ignore_ascii_case("json"));
        let line = if json { scan::axis::read_geojson(p)? } else { scan::axis::read_polyline_csv(p)? };
        return Ok((line, p.display().to_string()));
    }
    if let (Some(p), Some(way)) = (&a.osm, &a.way) {
        return Ok((scan::axis::read_osm_way(p, way)?, p.display().to_string()));
    }
    if let (Some(p), Some(id)) = (&a.xodr, &a.road) {
        let odr = opendrive::read_file(p)?;
        let road = odr.road(id).with_context(|| format!("{}: no road {id}", p.display()))?;
        let samples = road.length / a.step;
        if samples > MAX_SAMPLES as f64 {
            bail!(
                "{}: road {id} is {} m long: --step {} m would sample it {samples:.0} times (at most {MAX_SAMPLES}); give a larger --step",
                p.display(),
                road.length,
                a.step
            );
        }
        let xyz = pipeline::axis::sample_road(&odr, road, a.step);
        // A road whose geometry leaves the Earth (a poly3 of 1e300) is a broken file, not
        // vertices to fit.
        if let Some((k, q)) = xyz.iter().enumerate().find(|(_, q)| !q.iter().all(|c| c.is_finite() && c.abs() <= 1e9)) {
            bail!(
                "{}: road {id} at s {:.3} m: its geometry reaches ({}, {}, {}), beyond 1e9 m: check its plan view",
                p.display(),
                (k as f64 * a.step).min(road.length),
                q[0],
                q[1],
                q[2]
            );
        }
        let crs = odr.header.geo_reference.as_ref().map(|g| g.trim().to_string()).filter(|g| CrsDef::parse(g).is_ok());
        return Ok((Polyline { xyz, crs }, format!("{} road {id}", p.display())));
    }
    bail!("give one of --trajectory, --polyline, --osm with --way, --xodr with --road, or --points")
}

/// The length in plan of a line through `xyz`, m.
fn plan_length(xyz: &[[f64; 3]]) -> f64 {
    xyz.windows(2).map(|w| (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1])).sum()
}

/// The project CRS `a` names (or the source's, `source_crs`), and `xyz` (the source's
/// vertices, named `source` in messages) reprojected into it.
fn to_project(a: &AxisConfig, source_crs: Option<&str>, source: &str, xyz: &mut [[f64; 3]]) -> Result<Option<CrsDef>> {
    let project = match (&a.crs, source_crs) {
        (Some(c), _) => Some(CrsDef::parse(c).map_err(anyhow::Error::msg)?),
        (None, Some(c)) => Some(CrsDef::parse(c).map_err(anyhow::Error::msg)?),
        (None, None) => None,
    };
    if project.as_ref().is_some_and(CrsDef::is_geographic) {
        bail!("{source} is in longitude/latitude: give a projected --crs (e.g. EPSG:25833) for the axis");
    }
    // OpenDRIVE is in metres: a project CRS in feet becomes the same CRS in metres, and the
    // source (in the CRS as given) is reprojected into it.
    let given = project.as_ref().map(|p| p.label.clone());
    let project = project.map(|p| p.in_metres()).transpose().map_err(anyhow::Error::msg)?;
    let from = a.source_crs.as_deref().or(source_crs).or(given.as_deref());
    if let (Some(from), Some(to)) = (from, project.as_ref()) {
        let from = CrsDef::parse(from).map_err(anyhow::Error::msg)?;
        let to_again = CrsDef::parse(&to.label).map_err(anyhow::Error::msg)?;
        let r = Reprojection::new(from, to_again).map_err(anyhow::Error::msg)?;
        if !r.is_identity() {
            let (mut x, mut y): (Vec<f64>, Vec<f64>) = xyz.iter().map(|p| (p[0], p[1])).unzip();
            r.apply(&mut x, &mut y).map_err(|e| anyhow::anyhow!("{source}: {e}"))?;
            for (p, (x, y)) in xyz.iter_mut().zip(x.into_iter().zip(y)) {
                p[0] = x;
                p[1] = y;
            }
        }
    } else if from.is_some() && project.is_none() {
        bail!("{source}: the source CRS is known but not the project's: give --crs");
    }
    Ok(project)
}

/// The least fit tolerance of an OSM network's reference lines, m.
const OSM_TOLERANCE: f64 = 0.05;
/// The shortest record of an OSM network's reference lines, at least, m.
const OSM_MIN_LENGTH: f64 = 2.0;

/// OSM `highway` values no car drives on: their ways are left out of a network.
const NOT_FOR_CARS: [&str; 12] = [
    "footway",
    "cycleway",
    "path",
    "steps",
    "pedestrian",
    "bridleway",
    "corridor",
    "proposed",
    "construction",
    "platform",
    "elevator",
    "bus_stop",
];

/// A road network fitted to every car-road way (`highway=*`) of the OSM file `a.osm` (no
/// `--way`): roads split where three or more ways meet, junctions with generated connecting
/// roads there ([`pipeline::network`]). Returns the map, what was made, and its text.
pub fn osm_network(a: &AxisConfig) -> Result<(opendrive::OpenDrive, pipeline::network::NetworkNotes, String)> {
    let Some(path) = &a.osm else { bail!("internal: an OSM network without --osm") };
    let source = path.display().to_string();
    let map = scan::axis::read_osm(path)?;
    // Every car way's nodes, reprojected together into the project CRS.
    let mut picked = Vec::new();
    for w in &map.ways {
        let Some(kind) = w.tag("highway") else { continue };
        if NOT_FOR_CARS.contains(&kind) || w.refs.len() < 2 {
            continue;
        }
        picked.push((w, map.way_nodes(path, w)?));
    }
    let mut xyz: Vec<[f64; 3]> =
        picked.iter().flat_map(|(_, nodes)| nodes.iter().map(|(_, p)| [p[0], p[1], f64::NAN])).collect();
    let project = to_project(a, Some("EPSG:4326"), &source, &mut xyz)?;
    let mut ways = Vec::with_capacity(picked.len());
    let mut rest = xyz.as_slice();
    for (w, nodes) in &picked {
        let (these, after) = rest.split_at(nodes.len());
        rest = after;
        // A way no longer than the longest road OpenDRIVE reads.
        let length = plan_length(these);
        if length.is_nan() || length > opendrive::MAX_STATION {
            bail!("{source}:{}: way {} is {length:.3e} m long: no road is that long", w.line, w.id);
        }
        let mut way = pipeline::network::Way {
            id: w.id.clone(),
            nodes: nodes.iter().map(|(id, _)| id.to_string()).collect(),
            xy: these.iter().map(|p| [p[0], p[1]]).collect(),
            forward: 1,
            backward: 1,
            lane_width: a.lane_width,
        };
        osm_lanes(w, &mut way, a.lane_width).with_context(|| format!("{source}:{}: way {}", w.line, w.id))?;
        ways.push(way);
    }
    if ways.is_empty() {
        bail!("{source}: no way with a highway tag for cars");
    }
    // With a trajectory: the ways' lines moved onto the passes' where the survey drove.
    let driven = match &a.trajectory {
        Some(t) => {
            let offsets = if a.offset != 0.0 { Default::default() } else { recorded_pass_offsets(t)? };
            let Some((traces, _)) = pass_traces(a, &offsets, 1)? else { bail!("{}: no pass", t.display()) };
            let d = pipeline::traces::Driven::new(&traces, &Default::default())
                .with_context(|| format!("{}: the passes", t.display()))?;
            Some(std::sync::Arc::new(d))
        }
        None => None,
    };
    let opts = pipeline::network::NetworkOptions {
        // OSM's vertices lie decimetres off the road: a tighter fit follows a way's bend at a
        // junction's node into a radius no vehicle drives (and no connecting road can meet).
        // Moved onto the passes, the lines are the survey's: a centimetre fit.
        fit: opendrive::fit::FitOptions {
            tolerance: a.tolerance.max(if driven.is_some() { PASSES_TOLERANCE } else { OSM_TOLERANCE }),
            min_length: a.min_length.max(OSM_MIN_LENGTH),
        },
        geo_reference: project.as_ref().and_then(CrsDef::proj_string),
        driven,
        ..Default::default()
    };
    let (odr, notes) =
        pipeline::network::network_from_ways(&ways, &opts).with_context(|| format!("{source}: the road network"))?;
    let text = opendrive::write(&odr, &Default::default())?;
    Ok((odr, notes, text))
}

/// The least fit tolerance of a network's reference lines found from passes, m: the
/// resampled passes' vertices lie a few millimetres apart across.
const PASSES_TOLERANCE: f64 = 0.02;

/// The road network the passes of the trajectory `a.trajectory` drive ([`pipeline::traces`]:
/// passes merged where they run together, junctions where they branch and cross, connecting
/// roads generated there), each pass first moved to the road's reference line by its offset
/// in `offsets` (by pass id; else `a.offset`). None when the trajectory has one pass or its
/// passes meet at no junction (one road: [`fit`] fits it). Returns the map, what was made, and its text.
pub fn trajectory_network(
    a: &AxisConfig,
    offsets: &std::collections::BTreeMap<String, f64>,
) -> Result<Option<(opendrive::OpenDrive, PassesNotes, String)>> {
    let Some(path) = &a.trajectory else { bail!("internal: a network of passes without --trajectory") };
    let source = path.display().to_string();
    let Some((traces, project)) = pass_traces(a, offsets, 2)? else { return Ok(None) };
    let topts = pipeline::traces::TraceOptions { lane_width: a.lane_width, ..Default::default() };
    let (ways, found) =
        pipeline::traces::ways_from_traces(&traces, &topts).with_context(|| format!("{source}: the passes"))?;
    if found.junctions == 0 {
        return Ok(None);
    }
    let opts = pipeline::network::NetworkOptions {
        fit: opendrive::fit::FitOptions {
            tolerance: a.tolerance.max(PASSES_TOLERANCE),
            min_length: a.min_length.max(OSM_MIN_LENGTH),
        },
        geo_reference: project.as_ref().and_then(CrsDef::proj_string),
        ..Default::default()
    };
    let (odr, network) = pipeline::network::network_from_ways(&ways, &opts)
        .with_context(|| format!("{source}: the road network of its passes"))?;
    let text = opendrive::write(&odr, &Default::default())?;
    Ok(Some((odr, PassesNotes { passes: found, network }, text)))
}

/// [`trajectory_network`] of the passes in `path` (in `crs`, else their own), each moved by
/// `offset` when given, else by the offset survey.json beside it records for the pass, else
/// not at all.
pub fn passes_network(
    path: &Path,
    offset: Option<f64>,
    crs: Option<String>,
) -> Result<Option<(opendrive::OpenDrive, PassesNotes, String)>> {
    let offsets = if offset.is_some() { Default::default() } else { recorded_pass_offsets(path)? };
    let a =
        AxisConfig { trajectory: Some(path.to_path_buf()), offset: offset.unwrap_or(0.0), crs, ..Default::default() };
    trajectory_network(&a, &offsets)
}

/// The passes of `a.trajectory` as traces of the road's reference line (each moved by its
/// offset in `offsets`, else `a.offset`; heights less `a.sensor_height`) in the project CRS,
/// and that CRS; None with fewer than `least` passes.
fn pass_traces(
    a: &AxisConfig,
    offsets: &std::collections::BTreeMap<String, f64>,
    least: usize,
) -> Result<Option<(Vec<pipeline::traces::Trace>, Option<CrsDef>)>> {
    let Some(path) = &a.trajectory else { bail!("internal: passes without --trajectory") };
    let source = path.display().to_string();
    let passes = scan::axis::read_trajectory_passes(path)?;
    if passes.len() < least {
        return Ok(None);
    }
    let mut xyz: Vec<[f64; 3]> = passes.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    let project = to_project(a, None, &source, &mut xyz)?;
    let mut traces = Vec::with_capacity(passes.len());
    let mut rest = xyz.as_slice();
    for (id, p) in &passes {
        let (these, after) = rest.split_at(p.len());
        rest = after;
        let length = plan_length(these);
        if length.is_nan() || length > opendrive::MAX_STATION {
            bail!("{source}: pass {id} is {length:.3e} m long: no road is that long");
        }
        let mut line = these.to_vec();
        let offset = offsets.get(id).copied().unwrap_or(a.offset);
        if offset != 0.0 {
            scan::axis::shift_left(&mut line, offset, 1.0);
        }
        line.iter_mut().for_each(|p| p[2] -= a.sensor_height);
        traces.push(pipeline::traces::Trace { id: id.clone(), xyz: line });
    }
    Ok(Some((traces, project)))
}

/// What [`trajectory_network`] found and made.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PassesNotes {
    /// The merged passes: junction areas, ways, crossings.
    pub passes: pipeline::traces::TraceNotes,
    /// The network made of the ways.
    pub network: pipeline::network::NetworkNotes,
}

/// The offset of each pass a survey.json beside `trajectory` records (`"passes": [{"id",
/// "axis_offset_m"}]`: the reference line's distance left of the pass's track, m); empty
/// without one.
pub fn recorded_pass_offsets(trajectory: &Path) -> Result<std::collections::BTreeMap<String, f64>> {
    let path = trajectory.with_file_name("survey.json");
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(Default::default()) };
    let v: serde_json::Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let mut out = std::collections::BTreeMap::new();
    for p in v["passes"].as_array().into_iter().flatten() {
        let id = match &p["id"] {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Number(n) => n.to_string(),
            _ => continue,
        };
        if let Some(o) = p["axis_offset_m"].as_f64().filter(|o| o.is_finite() && o.abs() <= 100.0) {
            out.insert(id, o);
        }
    }
    Ok(out)
}

/// The lanes of OSM way `w` from its tags (`oneway`, `lanes`, `lanes:forward`,
/// `lanes:backward`, `width`); a `oneway=-1` way is turned round.
fn osm_lanes(w: &scan::axis::OsmWay, way: &mut pipeline::network::Way, lane_width: f64) -> Result<()> {
    let count = |k: &str| -> Result<Option<usize>> {
        let Some(v) = w.tag(k) else { return Ok(None) };
        match v.trim().parse::<usize>() {
            Ok(n) if n <= 16 => Ok(Some(n)),
            _ => bail!("tag {k}={v}: not a lane count of 0 to 16"),
        }
    };
    let oneway = w.tag("oneway").unwrap_or("no");
    let (lanes, fwd, bwd) = (count("lanes")?, count("lanes:forward")?, count("lanes:backward")?);
    let (forward, backward) = match oneway {
        "yes" | "true" | "1" | "-1" => (fwd.or(lanes).unwrap_or(1).max(1), 0),
        _ => {
            let total = lanes.unwrap_or(2).max(1);
            match (fwd, bwd) {
                (Some(f), Some(b)) => (f, b),
                (Some(f), None) => (f, total.saturating_sub(f)),
                (None, Some(b)) => (total.saturating_sub(b), b),
                (None, None) => (total.div_ceil(2), total / 2),
            }
        }
    };
    if forward + backward == 0 {
        bail!("no lanes");
    }
    if oneway == "-1" {
        way.nodes.reverse();
        way.xy.reverse();
    }
    way.forward = forward;
    way.backward = backward;
    way.lane_width = match w.tag("width") {
        Some(v) => {
            let n: f64 = v
                .trim()
                .trim_end_matches('m')
                .trim()
                .parse()
                .map_err(|_| anyhow::anyhow!("tag width={v}: not metres"))?;
            if !(1.0..=100.0).contains(&n) {
                bail!("tag width={v}: not a carriageway width of 1 to 100 m");
            }
            n / (forward + backward) as f64
        }
        None => lane_width,
    };
    Ok(())
}

/// How well one geometry record of a fitted axis fits, as `axis --json` and the report give it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RecordSummary {
    /// The record's element name (line, arc, spiral, ...).
    pub kind: &'static str,
    /// Where it starts, m.
    pub s: f64,
    /// Its length, m.
    pub length: f64,
    /// Curvature at its start, 1/m.
    pub curv_start: f64,
    /// Curvature at its end, 1/m.
    pub curv_end: f64,
    /// Largest distance of the vertices it fits, m.
    pub max_m: f64,
    /// Root mean square distance of the vertices it fits, m.
    pub rms_m: f64,
    /// The vertices it fits.
    pub vertices: usize,
}

/// The fitted axis's geometry records (kind, s, length, curvature at both ends, and the fit's
/// max and RMS distance of the vertices, m), as `axis --json` and the report give them.
pub fn records(b: &pipeline::axis::AxisRoad) -> Vec<RecordSummary> {
    b.plan
        .geometries
        .iter()
        .zip(&b.plan.records)
        .map(|(g, r)| {
            let (k0, k1) = g.kind.end_curvatures().unwrap_or((0.0, 0.0));
            RecordSummary {
                kind: kind_name(&g.kind),
                s: g.s,
                length: g.length,
                curv_start: k0,
                curv_end: k1,
                max_m: r.max,
                rms_m: r.rms,
                vertices: r.points,
            }
        })
        .collect()
}

/// [`records`] as JSON.
pub fn records_json(b: &pipeline::axis::AxisRoad) -> Vec<serde_json::Value> {
    records(b).iter().map(|r| serde_json::to_value(r).unwrap_or(serde_json::Value::Null)).collect()
}

/// A geometry record's element name.
pub fn kind_name(k: &GeometryKind) -> &'static str {
    match k {
        GeometryKind::Line => "line",
        GeometryKind::Arc { .. } => "arc",
        GeometryKind::Spiral { .. } => "spiral",
        GeometryKind::Poly3 { .. } => "poly3",
        GeometryKind::ParamPoly3 { .. } => "paramPoly3",
    }
}
