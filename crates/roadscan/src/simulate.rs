//! `roadscan sim`: the closed-loop simulation of the `simulation` crate on a world (a build's
//! road.xodr and CRG tiles, a designed scene, or an OpenDRIVE file), with its logs.
//!
//! [`run`] loads the world, sets the scenario up, resumes a saved state when asked, and steps
//! the simulation tick by tick until its duration (or a [`Link`] says stop). Around each tick
//! every [`Link`] is called: [`Link::before_tick`] may change the simulation (set variables,
//! spawn actors: a co-simulation bridge), [`Link::after_tick`] sees the new state and the
//! tick's events. The outputs the config asks for are links too: the ego's CSV
//! ([`CsvLog`]), an MCAP file with Foxglove schemas ([`McapLog`]), GPS NMEA sentences and a GPS
//! CSV ([`GpsLog`]), and the events as JSON lines ([`EventLog`]). Each is written to a temporary
//! file and moved to its path at the end (crate `atomic`), and depends only on the inputs: the
//! same inputs give the same bytes.
//!
//! Walls: the road file's curbs are the simulation's own (`simulation::walls`); a designed
//! scene adds its building fronts as facades and its raised verges as lane heights, a build
//! the outlines of its voxel columns that stand up beside the road (roadside) and of those
//! that stand on its lanes (obstacles) ([`crate::sim_walls`]).
//!
//! Frames: the simulation runs in the road file's frame; every output is in the map frame (the
//! header `<offset>` applied), latitude and longitude from the map's geoReference through the
//! `scan` crate's projection.

use crate::cosim::BridgeKeys;
use crate::lidar_out::timestamp;
use crate::progress::{Progress, Stage};
use crate::sim_sensors::SensorRig;
pub use crate::sim_sensors::{SensorData, SimCamera, SimLidar, SimSensors};
use anyhow::{anyhow, bail, Context, Result};
use foxglove::messages::{FrameTransform, LocationFix, Log, PointCloud, Quaternion, RawImage, Vector3};
use foxglove::Encode;
use opendrive::model::HeaderOffset;
use opendrive::OpenDrive;
use serde::{Deserialize, Serialize};
pub use simulation::{ContactReport, EgoRecord, Event, Scenario, Simulation};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use world::CrgLink;

/// Where the road comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum WorldSource {
    /// The output directory of `roadscan build` or `roadscan demo`: road.xodr and every CRG
    /// tile its `<surface><CRG>` records name.
    Build(PathBuf),
    /// A designed scene (`demo`, or an OpenDRIVE file as `synth` makes a scene of it), its seed
    /// and the node spacing of its designed surface as a CRG, m.
    Scene {
        /// `demo` or an OpenDRIVE file.
        name: String,
        /// The scene's seed.
        seed: u64,
        /// Node spacing of the designed surface's CRG, m.
        grid: f64,
    },
    /// An OpenDRIVE file alone (its `<surface><CRG>` records read beside it).
    Xodr(PathBuf),
}

/// What to simulate and what to write.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The world.
    pub world: WorldSource,
    /// The road to drive (default: the first).
    pub road: Option<String>,
    /// The scenario.
    pub scenario: Scenario,
    /// The file the scenario was read from (named in its errors).
    pub scenario_file: Option<PathBuf>,
    /// The ego's state per tick as CSV (`time,x,y,z,roll,pitch,heading,speed,s,t,lane`).
    pub csv: Option<PathBuf>,
    /// MCAP with Foxglove schemas: `/tf`, `/gps`, `/collisions`.
    pub mcap: Option<PathBuf>,
    /// The GPS's NMEA sentences (GGA and RMC per fix).
    pub gps_nmea: Option<PathBuf>,
    /// The GPS's fixes as CSV (`time,utc,x,y,z,latitude,longitude,speed,heading`, map frame).
    pub gps_csv: Option<PathBuf>,
    /// The events as JSON lines (collisions, arrivals, the route's completion).
    pub events: Option<PathBuf>,
    /// Save the state when this tick is reached (to `state`).
    pub save_at: Option<u64>,
    /// Where the state is saved.
    pub state: Option<PathBuf>,
    /// Resume from a state saved for this scenario and world.
    pub resume: Option<PathBuf>,
    /// Stop when the route is complete (before the duration).
    pub stop_at_route_end: bool,
    /// The LiDAR and camera on the ego ([`crate::sim_sensors`]).
    pub sensors: SimSensors,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            world: WorldSource::Scene { name: "demo".into(), seed: 1, grid: DEFAULT_SCENE_GRID },
            road: None,
            scenario: Scenario::default(),
            scenario_file: None,
            csv: None,
            mcap: None,
            gps_nmea: None,
            gps_csv: None,
            events: None,
            save_at: None,
            state: None,
            resume: None,
            stop_at_route_end: false,
            sensors: SimSensors::default(),
        }
    }
}

/// Node spacing of a designed scene's surface as a CRG, m (default).
pub const DEFAULT_SCENE_GRID: f64 = 0.02;

/// What a co-simulation bridge (or a log) does around each tick.
pub trait Link {
    /// Before tick k -> k + 1: may set variables or spawn actors; [`Flow::Stop`] ends the run
    /// (the tick is not run).
    fn before_tick(&mut self, sim: &mut Simulation) -> Result<Flow>;
    /// After the tick: the new state and the tick's events.
    fn after_tick(&mut self, sim: &Simulation, events: &[Event]) -> Result<()>;
    /// Once before the first tick (after a resume): the state the run starts from.
    fn start(&mut self, _sim: &Simulation) -> Result<()> {
        Ok(())
    }
    /// Once after the last tick: write what is kept.
    fn finish(&mut self, _sim: &Simulation) -> Result<()> {
        Ok(())
    }
    /// What a sensor completed in the tick (a LiDAR revolution, a camera frame), after
    /// [`Link::after_tick`] of the outputs and before that of the links; at the start, after
    /// [`Link::start`].
    fn sensor(&mut self, _sim: &Simulation, _data: &SensorData) -> Result<()> {
        Ok(())
    }
}

/// Whether the run goes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    /// Run the tick.
    Continue,
    /// End the run now.
    Stop,
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimSummary {
    /// The tick the run started at (0, or the resumed state's).
    pub first_tick: u64,
    /// The tick it ended at.
    pub last_tick: u64,
    /// Ticks run.
    pub ticks: u64,
    /// Tick length, s.
    pub tick: f64,
    /// Simulated seconds.
    pub sim_seconds: f64,
    /// Wall seconds of the ticks (the world's loading not counted).
    pub wall_seconds: f64,
    /// Wall seconds loading the world.
    pub load_seconds: f64,
    /// Simulated seconds per wall second.
    pub real_time_factor: f64,
    /// Collisions (map frame).
    pub collisions: Vec<ContactReport>,
    /// When the route was complete, s.
    pub route_complete: Option<f64>,
    /// GPS fixes.
    pub gps_fixes: u64,
    /// Whether a link stopped the run.
    pub stopped_by_link: bool,
    /// The ego at the end (map frame): x, y, z.
    pub ego_position: [f64; 3],
    /// Distance the ego drove, m.
    pub odometer: f64,
    /// The tick the state was saved at.
    pub saved_at: Option<u64>,
    /// Files written.
    pub written: Vec<String>,
    /// The map's CRS as the PROJ string latitude and longitude were computed from.
    pub crs_proj: Option<String>,
    /// LiDAR firings cast.
    pub lidar_firings: u64,
    /// Whole LiDAR revolutions handed on.
    pub lidar_revolutions: u64,
    /// Camera frames rendered.
    pub camera_frames: u64,
    /// Wall seconds of the ticks spent casting and rendering (part of `wall_seconds`).
    pub sensor_seconds: f64,
}

/// A world to simulate on: the road file (with a scene's standing objects as `<object>`s and
/// its raised verges as lane heights) and its CRGs, owned, so a [`simulation::RoadSurface`] can
/// borrow them, and the walls the road file does not hold (a scene's facades, a build's
/// voxels: its roadside and the obstacles on its lanes).
#[derive(Debug)]
pub struct SimWorld {
    /// The road file.
    pub odr: OpenDrive,
    road: usize,
    crgs: Vec<(CrgLink, opencrg::Surface)>,
    walls: Vec<simulation::WallLine>,
    to_wgs84: Option<scan::Reprojection>,
    proj: Option<String>,
}

impl SimWorld {
    /// Loads `source`, driving road `road` (default: the first).
    pub fn load(source: &WorldSource, road: Option<&str>) -> Result<SimWorld> {
        let (odr, road, crgs, walls) = match source {
            WorldSource::Build(dir) => {
                let xodr = dir.join("road.xodr");
                if !xodr.is_file() {
                    bail!(
                        "{}: no road.xodr here; --world takes the output directory of `roadscan build` or `roadscan demo`",
                        dir.display()
                    );
                }
                let (odr, ri, crgs) = file_world(&xodr, road)?;
                let walls = match crate::world_source::read_build_voxels(dir)? {
                    Some(vox) => crate::sim_walls::built_walls(&vox, &odr, ri),
                    None => Vec::new(),
                };
                (odr, ri, crgs, walls)
            }
            WorldSource::Xodr(path) => with_no_walls(file_world(path, road)?),
            WorldSource::Scene { name, seed, grid } => scene_world(name, road, *seed, *grid)?,
        };
        let crs = || odr.header.geo_reference.as_deref().and_then(|g| scan::CrsDef::parse(g.trim()).ok());
        let proj = crs().and_then(|c| c.proj_string());
        let to_wgs84 = crs().and_then(|from| scan::Reprojection::new(from, scan::CrsDef::from_epsg(4326).ok()?).ok());
        Ok(SimWorld { odr, road, crgs, walls, to_wgs84, proj })
    }

    /// The road driven.
    pub fn road(&self) -> Result<&opendrive::Road> {
        self.odr.roads.get(self.road).ok_or_else(|| anyhow!("no road {}", self.road))
    }

    /// The road's surface with every CRG laid on it.
    pub fn surface(&self) -> Result<simulation::RoadSurface<'_>> {
        let mut s = simulation::RoadSurface::new(self.road()?);
        for (link, crg) in &self.crgs {
            s = s.with_crg(*link, crg).context("laying a CRG on the road")?;
        }
        Ok(s)
    }

    /// The walls beyond the road file's curbs (a scene's facades, a build's roadside and the
    /// obstacles on its lanes).
    pub fn walls(&self) -> &[simulation::WallLine] {
        &self.walls
    }

    /// CRGs laid on the road.
    pub fn crg_count(&self) -> usize {
        self.crgs.len()
    }

    /// The header `<offset>` (map = offset + R(hdg) file).
    pub fn offset(&self) -> HeaderOffset {
        self.odr.header.offset.unwrap_or_default()
    }

    /// The map's CRS as a PROJ string (what latitude and longitude are computed from).
    pub fn proj_string(&self) -> Option<String> {
        self.proj.clone()
    }

    /// WGS84 latitude and longitude (degrees) of a map point, `None` without a geoReference.
    pub fn to_wgs84(&self, map: [f64; 3]) -> Option<[f64; 2]> {
        let r = self.to_wgs84.as_ref()?;
        let (mut x, mut y) = ([map[0]], [map[1]]);
        r.apply(&mut x, &mut y).ok()?;
        (x[0].is_finite() && y[0].is_finite()).then_some([y[0], x[0]])
    }

    /// A simulation of `scenario` on `surface` (this world's), placed in the map by the
    /// header offset, its GPS converting to WGS84.
    pub fn simulation<'a>(
        &'a self,
        surface: &'a simulation::RoadSurface<'a>,
        scenario: Scenario,
    ) -> Result<Simulation<'a>> {
        let sim = Simulation::new(surface, scenario)
            .context("the scenario")?
            .with_offset(self.offset())
            .with_walls(self.walls.clone());
        Ok(if self.to_wgs84.is_some() { sim.with_wgs84(move |m: [f64; 3]| self.to_wgs84(m)) } else { sim })
    }
}

/// The index of road `id` (default the first).
fn road_index(odr: &OpenDrive, id: Option<&str>, what: &str) -> Result<usize> {
    match id {
        Some(id) => odr.roads.iter().position(|r| r.id == id).ok_or_else(|| anyhow!("{what}: no road {id}")),
        None if odr.roads.is_empty() => bail!("{what}: the file has no road"),
        None => Ok(0),
    }
}

type Crgs = Vec<(CrgLink, opencrg::Surface)>;

fn with_no_walls((odr, road, crgs): (OpenDrive, usize, Crgs)) -> (OpenDrive, usize, Crgs, Vec<simulation::WallLine>) {
    (odr, road, crgs, Vec::new())
}

/// A road file and every CRG its road's `<surface><CRG>` records name (as the world loader).
fn file_world(xodr: &Path, road: Option<&str>) -> Result<(OpenDrive, usize, Crgs)> {
    let odr = opendrive::read_file(xodr).with_context(|| format!("reading {}", xodr.display()))?;
    let ri = road_index(&odr, road, &xodr.display().to_string())?;
    let mut crgs = Vec::new();
    let r = &odr.roads[ri];
    for rec in &r.surface.crgs {
        if rec.purpose.as_deref().is_some_and(|p| p != "elevation") {
            continue;
        }
        let p = Path::new(&rec.file);
        let path = if p.is_absolute() { p.to_path_buf() } else { xodr.parent().unwrap_or(Path::new(".")).join(p) };
        let link = CrgLink::of(rec)
            .with_context(|| format!("{}: road {} <CRG file=\"{}\">", xodr.display(), r.id, rec.file))?;
        let crg = opencrg::read_file(&path).with_context(|| format!("reading {}", path.display()))?;
        let surf = opencrg::Surface::from_owned(crg, true).with_context(|| format!("preparing {}", path.display()))?;
        crgs.push((link, surf));
    }
    Ok((odr, ri, crgs))
}

/// A designed scene: its road with its standing objects as `<object>`s and its raised verges
/// as lane heights, its designed surface as a CRG of `grid` m (laid `attached0`, as the scene's
/// world is), its building fronts as facade walls.
fn scene_world(
    name: &str,
    road: Option<&str>,
    seed: u64,
    grid: f64,
) -> Result<(OpenDrive, usize, Crgs, Vec<simulation::WallLine>)> {
    if !(grid.is_finite() && (0.005..=1.0).contains(&grid)) {
        bail!("--scene-grid {grid}: expected 0.005 to 1 m");
    }
    let scene = if name == "demo" {
        sim::Scene::demo(seed)
    } else {
        let odr = opendrive::read_file(name).with_context(|| format!("--scene {name}"))?;
        let ri = road_index(&odr, road, &format!("--scene {name}"))?;
        let id = odr.roads[ri].id.clone();
        sim::Scene::from_road(&odr, &id, None, seed).with_context(|| format!("--scene {name}: road {id}"))?
    };
    let (s0, s1) = scene.s_range;
    let (v_right, v_left) = scene.v_range_within(sim::survey::TRUTH_VERGE);
    let (v_right, v_left) = ((v_right / grid).floor() * grid, (v_left / grid).ceil() * grid);
    let crg = sim::truth::surface_crg(&scene, grid, grid, v_right, v_left);
    let surf = opencrg::Surface::from_owned(crg, false).context("the scene's designed surface")?;
    let link =
        CrgLink { s_start: s0, s_end: s1, same: true, on_surface: false, t_offset: 0.0, z_offset: 0.0, z_scale: 1.0 };
    let mut odr = scene.odr.clone();
    let Some(r) = odr.roads.first_mut() else { bail!("--scene {name}: no road") };
    let mut n = BTreeMap::<&str, usize>::new();
    for o in &scene.objects {
        use sim::ObjectKind;
        let (kind, length, width, radius, height) = match o.kind {
            ObjectKind::Tree { trunk_radius, trunk_height, .. } => {
                ("tree", None, None, Some(trunk_radius), trunk_height)
            }
            ObjectKind::Pole { radius, height } => ("pole", None, None, Some(radius), height),
            ObjectKind::Person { radius, height } => ("pedestrian", None, None, Some(radius), height),
            ObjectKind::Car { length, width, height, .. } => ("car", Some(length), Some(width), None, height),
        };
        let k = n.entry(kind).or_default();
        *k += 1;
        r.objects.objects.push(opendrive::model::Object {
            id: format!("{kind}-{k}"),
            s: o.s,
            t: o.t,
            kind: Some(if kind == "car" { "vehicle".into() } else { kind.into() }),
            name: Some(kind.into()),
            length,
            width,
            radius,
            height: Some(height),
            hdg: Some(0.0),
            ..Default::default()
        });
    }
    crate::sim_walls::raise_verges(&scene, r);
    let walls = crate::sim_walls::facades(&scene);
    Ok((odr, 0, vec![(link, surf)], walls))
}

/// One override of a scenario key: a dotted path (`gps.rate`, `ego.speed`, `route`) and a
/// TOML value.
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// Dotted key.
    pub key: String,
    /// Its value.
    pub value: toml::Value,
}

impl Override {
    /// `key` set to `value`.
    pub fn new(key: &str, value: impl Into<toml::Value>) -> Override {
        Override { key: key.to_string(), value: value.into() }
    }

    /// `key=value`, the value as TOML (`2.5`, `true`, `["lane:-1"]`, `"text"`), else as a
    /// string.
    pub fn parse(text: &str) -> Result<Override> {
        let (key, raw) =
            text.split_once('=').ok_or_else(|| anyhow!("--set {text}: expected KEY=VALUE, e.g. gps.rate=20"))?;
        let key = key.trim();
        if key.is_empty() || key.split('.').any(str::is_empty) {
            bail!("--set {text}: the key is empty");
        }
        let value = toml::from_str::<toml::Table>(&format!("v = {}", raw.trim()))
            .ok()
            .and_then(|mut t| t.remove("v"))
            .unwrap_or_else(|| toml::Value::String(raw.trim().to_string()));
        Ok(Override { key: key.to_string(), value })
    }
}

/// The scenario of a TOML file (every key of [`Scenario`], all optional) with `overrides`
/// applied over it (overrides win). A `[bridges]` table is checked and left out (see
/// [`scenario_and_bridges`]).
pub fn scenario(file: Option<&Path>, overrides: &[Override]) -> Result<Scenario> {
    Ok(scenario_and_bridges(file, overrides)?.0)
}

/// The scenario of a TOML file and its `[bridges]` table (the bridges' keys, [`BridgeKeys`]),
/// with `overrides` applied over both (`bridges.udp_out=...` is one). An unknown key or a bad
/// value in `[bridges]` is an error naming the file, its line and the key.
pub fn scenario_and_bridges(file: Option<&Path>, overrides: &[Override]) -> Result<(Scenario, BridgeKeys)> {
    let mut table = match file {
        Some(p) => {
            let text = read_text(p, &p.display().to_string())?;
            // `file:line:column: ` of a byte span of the text.
            let place = |span: Option<std::ops::Range<usize>>| {
                span.map_or_else(
                    // Without a span (toml's recursion limit), the line nested deepest.
                    || format!("{}:{}", p.display(), deepest_line(&text)),
                    |r| {
                        let before = &text.as_bytes()[..r.start.min(text.len())];
                        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
                        let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
                        format!("{}:{line}:{column}", p.display())
                    },
                )
            };
            let message = |e: &toml::de::Error| e.message().trim_end().replace('\n', " ");
            let at = |e: toml::de::Error| anyhow!("{}: {}", place(e.span()), message(&e));
            // Read typed first, so a bad key or value is reported at its line and column; the
            // [bridges] table is taken out of the document (its spans kept) and read on its own.
            let doc = toml::de::DeTable::parse(&text).map_err(at)?;
            let span = doc.span();
            let mut root = doc.into_inner();
            let bridges = root.remove("bridges");
            Scenario::deserialize(toml::de::Deserializer::from(toml::Spanned::new(span, root))).map_err(at)?;
            if let Some(b) = bridges {
                let entries = b.get_ref().as_table();
                let key_span = |key: &str| entries.and_then(|t| t.get(key)).map(|v| v.span());
                // The key whose value holds a span (a value of the wrong type).
                let key_at = |r: &std::ops::Range<usize>| {
                    entries
                        .into_iter()
                        .flatten()
                        .find(|(k, v)| v.span().contains(&r.start) && !k.span().contains(&r.start))
                        .map(|(k, _)| k.get_ref())
                };
                let keys = BridgeKeys::deserialize(toml::de::ValueDeserializer::from(b.clone())).map_err(|e| {
                    let key = e.span().as_ref().and_then(key_at).map(|k| format!(".{k}")).unwrap_or_default();
                    anyhow!("{}: bridges{key}: {}", place(e.span().or(Some(b.span()))), message(&e))
                })?;
                keys.check().map_err(|e| anyhow!("{}: bridges.{e}", place(key_span(e.key).or(Some(b.span())))))?;
            }
            toml::from_str::<toml::Table>(&text).map_err(at)?
        }
        None => toml::Table::new(),
    };
    for o in overrides {
        let mut at = &mut table;
        let parts: Vec<&str> = o.key.split('.').collect();
        let Some((last, path)) = parts.split_last() else { continue };
        for p in path {
            let e = at.entry(p.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
            at = match e {
                toml::Value::Table(t) => t,
                _ => bail!("--set {}: {p} is not a table of keys", o.key),
            };
        }
        at.insert(last.to_string(), o.value.clone());
    }
    let keys: Vec<&str> = overrides.iter().map(|o| o.key.as_str()).collect();
    let name = format!(
        "{}{}",
        file.map_or_else(|| "the scenario".to_string(), |p| p.display().to_string()),
        if keys.is_empty() { String::new() } else { format!(" with {keys:?}") }
    );
    let bridges = match table.remove("bridges") {
        Some(b) => b.try_into::<BridgeKeys>().map_err(|e| anyhow!("{name}: bridges: {}", e.message()))?,
        None => BridgeKeys::default(),
    };
    bridges.check().map_err(|e| anyhow!("{name}: bridges.{e}"))?;
    let sc = toml::Value::Table(table).try_into::<Scenario>().map_err(|e| anyhow!("{name}: {}", e.message()))?;
    sc.check_numbers().map_err(|e| anyhow!("{name}: {e}"))?;
    if !(sc.tick.is_finite() && sc.tick > 0.0) {
        bail!("{name}: tick = {} s: the tick must be a positive number of seconds", sc.tick);
    }
    if !(sc.duration.is_finite() && sc.duration >= 0.0) {
        bail!("{name}: duration = {} s: the duration must be 0 or more seconds", sc.duration);
    }
    let ticks = (sc.duration / sc.tick).round();
    if ticks > MAX_TICKS as f64 {
        bail!(
            "{name}: duration = {} s at tick = {} s is {ticks:e} ticks, more than the {MAX_TICKS} a run may have",
            sc.duration,
            sc.tick
        );
    }
    Ok((sc, bridges))
}

/// The text of `path` (`what` names it in errors), a byte that is not UTF-8 named by its
/// offset and line.
fn read_text(path: &Path, what: &str) -> Result<String> {
    let bytes = std::fs::read(path).with_context(|| what.to_string())?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        anyhow!("{what}: line {line}, byte {at}: not UTF-8 text")
    })
}

/// The 1-based line of `text` at which brackets, braces and dotted keys nest deepest.
fn deepest_line(text: &str) -> usize {
    let (mut depth, mut best, mut at) = (0i64, i64::MIN, 1);
    for (i, line) in text.lines().enumerate() {
        let code = line.split('#').next().unwrap_or("");
        let mut here = depth;
        for c in code.chars() {
            match c {
                '[' | '{' => depth += 1,
                ']' | '}' => depth -= 1,
                _ => {}
            }
            here = here.max(depth);
        }
        let dots = code.split('=').next().map_or(0, |k| k.matches('.').count()) as i64;
        if here + dots > best {
            (best, at) = (here + dots, i + 1);
        }
    }
    at
}

/// The most ticks a run may have (duration / tick): 10^7, a day at 10 ms. The logs keep a row
/// a tick in memory until the end, so the bound is one on memory as well as on time.
pub const MAX_TICKS: u64 = 10_000_000;

/// The error of setting up `cfg`'s scenario, naming the scenario's file and the key it is about.
fn scenario_error(cfg: &SimConfig, e: anyhow::Error) -> anyhow::Error {
    let Some(se) = e.chain().find_map(|c| c.downcast_ref::<simulation::Error>()) else { return e };
    let name = cfg.scenario_file.as_ref().map_or_else(|| "the scenario".to_string(), |p| p.display().to_string());
    match cfg.scenario.key_of(se) {
        Some(key) => anyhow!("{name}: {key}: {se}"),
        None => anyhow!("{name}: {se}"),
    }
}

/// Refuses a saved state (`text`) this run cannot continue: one that does not read (its line
/// and column), a tick past the run's end, a script position past the script, or actor or
/// prefab ids used twice (or an actor with the ego's id).
fn check_resumed(sim: &Simulation, text: &str, end: u64, what: &str) -> Result<()> {
    let st: simulation::SimState = serde_json::from_str(text).map_err(|e| anyhow!("{what}: saved state: {e}"))?;
    let what = || what.to_string();
    if st.script_next > sim.scenario().script.len() {
        bail!(
            "{}: script_next {} is past the scenario's {} script commands",
            what(),
            st.script_next,
            sim.scenario().script.len()
        );
    }
    if st.tick > end {
        bail!("{}: tick {} is past the run's end at tick {end} (duration / tick)", what(), st.tick);
    }
    let ego = sim.scenario().ego.id.as_str();
    let mut seen = std::collections::BTreeSet::new();
    for (i, a) in st.actors.actors.iter().enumerate() {
        if a.id == ego || !seen.insert(a.id.as_str()) {
            bail!("{}: actors[{i}].id {:?} is already in use", what(), a.id);
        }
        let finite = [a.x, a.y, a.z, a.heading, a.speed].iter().all(|v| v.is_finite());
        if !finite {
            bail!("{}: actors[{i}] ({:?}) has a number that is not finite", what(), a.id);
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    for (i, p) in st.actors.prefabs.iter().enumerate() {
        if !seen.insert(p.id.as_str()) {
            bail!("{}: prefabs[{i}].id {:?} is already in use", what(), p.id);
        }
    }
    Ok(())
}

/// Runs the simulation `cfg` describes with `links` around each tick (before the outputs'),
/// and writes the outputs.
pub fn run(cfg: &SimConfig, links: &mut [&mut dyn Link], progress: &dyn Progress) -> Result<SimSummary> {
    if cfg.save_at.is_some() != cfg.state.is_some() {
        bail!("--save-at and --state go together: the tick to save at and the file to save to");
    }
    let started = std::time::Instant::now();
    let stage = Stage { index: 1, of: 2, what: "loading the world", len: None };
    progress.stage(&stage);
    let world = SimWorld::load(&cfg.world, cfg.road.as_deref())?;
    let mut rig = SensorRig::open(cfg)?;
    let surface = world.surface()?;
    let mut sim = world.simulation(&surface, cfg.scenario.clone()).map_err(|e| scenario_error(cfg, e))?;
    let end = (cfg.scenario.duration / cfg.scenario.tick).round();
    if !(end.is_finite() && end >= 0.0 && end <= MAX_TICKS as f64) {
        bail!(
            "the scenario: duration = {} s at tick = {} s is {end:e} ticks, more than the {MAX_TICKS} a run may have",
            cfg.scenario.duration,
            cfg.scenario.tick
        );
    }
    let end = end as u64;
    if let Some(p) = &cfg.resume {
        let what = format!("--resume {}", p.display());
        let text = read_text(p, &what)?;
        check_resumed(&sim, &text, end, &what)?;
        sim.resume(&text).with_context(|| what.clone())?;
    }
    progress.stage_end(&stage, Some(started.elapsed().as_secs_f64()));
    let load_seconds = started.elapsed().as_secs_f64();

    let offset = world.offset();
    let mut outputs: Vec<Box<dyn Link>> = Vec::new();
    let mut written = Vec::new();
    if let Some(p) = &cfg.csv {
        outputs.push(Box::new(CsvLog::new(p)));
        written.push(p.display().to_string());
    }
    if let Some(p) = &cfg.mcap {
        outputs.push(Box::new(McapLog::create_with(
            p,
            offset,
            rig.as_ref().map(|r| (r.lidar().cloned(), cfg.sensors.camera.is_some())),
        )?));
        written.push(p.display().to_string());
    }
    if cfg.gps_nmea.is_some() || cfg.gps_csv.is_some() {
        outputs.push(Box::new(GpsLog::new(cfg.gps_nmea.clone(), cfg.gps_csv.clone())));
        written.extend(cfg.gps_nmea.iter().chain(&cfg.gps_csv).map(|p| p.display().to_string()));
    }
    if let Some(p) = &cfg.events {
        outputs.push(Box::new(EventLog::new(p, offset)));
        written.push(p.display().to_string());
    }

    let first_tick = sim.tick();
    let total = end.saturating_sub(first_tick);
    if let Some(at) = cfg.save_at {
        if at < first_tick || at > end {
            bail!("--save-at {at}: the run goes from tick {first_tick} to {end}");
        }
    }
    let stage = Stage { index: 2, of: 2, what: "simulating", len: Some(total) };
    progress.stage(&stage);
    let t0 = std::time::Instant::now();
    let mut summary = SimSummary {
        first_tick,
        last_tick: first_tick,
        ticks: 0,
        tick: cfg.scenario.tick,
        sim_seconds: 0.0,
        wall_seconds: 0.0,
        load_seconds,
        real_time_factor: 0.0,
        collisions: Vec::new(),
        route_complete: None,
        gps_fixes: 0,
        stopped_by_link: false,
        ego_position: [0.0; 3],
        odometer: 0.0,
        saved_at: None,
        written,
        crs_proj: world.proj_string(),
        lidar_firings: 0,
        lidar_revolutions: 0,
        camera_frames: 0,
        sensor_seconds: 0.0,
    };
    for l in links.iter_mut() {
        l.start(&sim)?;
    }
    for o in &mut outputs {
        o.start(&sim)?;
    }
    let hand_on = |data: Vec<SensorData>,
                   sim: &Simulation,
                   outputs: &mut Vec<Box<dyn Link>>,
                   links: &mut [&mut dyn Link]|
     -> Result<()> {
        for d in &data {
            for o in outputs.iter_mut() {
                o.sensor(sim, d)?;
            }
            for l in links.iter_mut() {
                l.sensor(sim, d)?;
            }
        }
        Ok(())
    };
    if let Some(r) = rig.as_mut() {
        hand_on(r.start(&sim)?, &sim, &mut outputs, links)?;
    }
    let save = |sim: &Simulation, summary: &mut SimSummary| -> Result<()> {
        if let (Some(at), Some(path)) = (cfg.save_at, &cfg.state) {
            if sim.tick() == at && summary.saved_at.is_none() {
                let text = sim.save().context("saving the state")?;
                atomic::write_bytes_atomic(path, text.as_bytes())
                    .with_context(|| format!("--state {}", path.display()))?;
                summary.saved_at = Some(at);
                summary.written.push(path.display().to_string());
            }
        }
        Ok(())
    };
    save(&sim, &mut summary)?;
    'run: while !sim.finished() {
        for l in links.iter_mut() {
            if l.before_tick(&mut sim)? == Flow::Stop {
                summary.stopped_by_link = true;
                break 'run;
            }
        }
        for o in &mut outputs {
            if o.before_tick(&mut sim)? == Flow::Stop {
                summary.stopped_by_link = true;
                break 'run;
            }
        }
        let events = sim.step();
        summary.ticks += 1;
        let mut done = false;
        for e in &events {
            match e {
                Event::Collision(c) => summary.collisions.push(in_map(c, &offset)),
                Event::RouteComplete { time, .. } => {
                    summary.route_complete.get_or_insert(*time);
                    done = true;
                }
                Event::Gps(_) => summary.gps_fixes += 1,
                Event::Arrived { .. } => {}
            }
        }
        for o in &mut outputs {
            o.after_tick(&sim, &events)?;
        }
        if let Some(r) = rig.as_mut() {
            hand_on(r.after_tick(&sim)?, &sim, &mut outputs, links)?;
        }
        for l in links.iter_mut() {
            l.after_tick(&sim, &events)?;
        }
        save(&sim, &mut summary)?;
        if summary.ticks.is_multiple_of(100) {
            progress.advance(summary.ticks);
        }
        if done && cfg.stop_at_route_end {
            break;
        }
    }
    summary.wall_seconds = t0.elapsed().as_secs_f64();
    progress.stage_end(&stage, Some(summary.wall_seconds));
    if let Some(at) = cfg.save_at {
        if summary.saved_at.is_none() {
            bail!("--save-at {at}: the run went from tick {first_tick} to {} and never reached it", sim.tick());
        }
    }
    for o in &mut outputs {
        o.finish(&sim)?;
    }
    for l in links.iter_mut() {
        l.finish(&sim)?;
    }
    summary.last_tick = sim.tick();
    summary.sim_seconds = summary.ticks as f64 * cfg.scenario.tick;
    summary.real_time_factor =
        if summary.wall_seconds > 0.0 { summary.sim_seconds / summary.wall_seconds } else { f64::INFINITY };
    summary.ego_position = sim.ego_record().position;
    if let Some(r) = &rig {
        (summary.lidar_firings, summary.lidar_revolutions, summary.camera_frames, summary.sensor_seconds) =
            (r.firings, r.revolutions, r.frames, r.seconds);
    }
    summary.odometer = sim.ego().odometer;
    Ok(summary)
}

/// A contact report with its position in the map frame.
fn in_map(c: &ContactReport, offset: &HeaderOffset) -> ContactReport {
    ContactReport { position: offset.placement().to_map(c.position), ..c.clone() }
}

/// Writes `bytes` to `path` atomically, naming the flag in errors.
fn write(flag: &str, path: &Path, bytes: &[u8]) -> Result<()> {
    atomic::write_bytes_atomic(path, bytes).with_context(|| format!("{flag} {}", path.display()))
}

/// The CSV header of [`CsvLog`].
pub const CSV_HEADER: &str = "time,x,y,z,roll,pitch,heading,speed,s,t,lane";

/// One CSV row of an ego record (numbers in their shortest exact form; s, t and lane empty off
/// the road).
pub fn csv_row(r: &EgoRecord) -> String {
    let [x, y, z] = r.position;
    let (s, t) = r.st.map_or((String::new(), String::new()), |[s, t]| (s.to_string(), t.to_string()));
    let lane = r.lane.map(|l| l.to_string()).unwrap_or_default();
    format!("{},{x},{y},{z},{},{},{},{},{s},{t},{lane}", r.time, r.roll, r.pitch, r.heading, r.speed)
}

/// The ego's state at the start and after every tick, as CSV (map frame).
#[derive(Debug)]
pub struct CsvLog {
    path: PathBuf,
    text: String,
}

impl CsvLog {
    /// A log to be written to `path` at the end.
    pub fn new(path: &Path) -> CsvLog {
        CsvLog { path: path.to_path_buf(), text: format!("{CSV_HEADER}\n") }
    }
}

impl Link for CsvLog {
    fn before_tick(&mut self, _sim: &mut Simulation) -> Result<Flow> {
        Ok(Flow::Continue)
    }
    fn start(&mut self, sim: &Simulation) -> Result<()> {
        self.text.push_str(&csv_row(&sim.ego_record()));
        self.text.push('\n');
        Ok(())
    }
    fn after_tick(&mut self, sim: &Simulation, _events: &[Event]) -> Result<()> {
        self.start(sim)
    }
    fn finish(&mut self, _sim: &Simulation) -> Result<()> {
        write("--csv", &self.path, self.text.as_bytes())
    }
}

/// The GPS's fixes: NMEA GGA and RMC sentences (fixes with latitude and longitude), and a CSV.
#[derive(Debug)]
pub struct GpsLog {
    nmea: Option<(PathBuf, String)>,
    csv: Option<(PathBuf, String)>,
}

impl GpsLog {
    /// Logs to be written at the end.
    pub fn new(nmea: Option<PathBuf>, csv: Option<PathBuf>) -> GpsLog {
        GpsLog {
            nmea: nmea.map(|p| (p, String::new())),
            csv: csv.map(|p| (p, "time,utc,x,y,z,latitude,longitude,speed,heading\n".to_string())),
        }
    }
}

impl Link for GpsLog {
    fn before_tick(&mut self, _sim: &mut Simulation) -> Result<Flow> {
        Ok(Flow::Continue)
    }
    fn after_tick(&mut self, _sim: &Simulation, events: &[Event]) -> Result<()> {
        for e in events {
            let Event::Gps(f) = e else { continue };
            if let Some((_, text)) = &mut self.nmea {
                for line in [f.gga(), f.rmc()].into_iter().flatten() {
                    text.push_str(&line);
                    text.push_str("\r\n");
                }
            }
            if let Some((_, text)) = &mut self.csv {
                let [x, y, z] = f.map;
                let (lat, lon) =
                    f.wgs84.map_or((String::new(), String::new()), |[a, b]| (a.to_string(), b.to_string()));
                text.push_str(&format!("{},{},{x},{y},{z},{lat},{lon},{},{}\n", f.time, f.utc, f.speed, f.heading));
            }
        }
        Ok(())
    }
    fn finish(&mut self, _sim: &Simulation) -> Result<()> {
        if let Some((p, text)) = &self.nmea {
            write("--gps-nmea", p, text.as_bytes())?;
        }
        if let Some((p, text)) = &self.csv {
            write("--gps-csv", p, text.as_bytes())?;
        }
        Ok(())
    }
}

/// The events (but GPS fixes) as JSON lines, positions in the map frame.
#[derive(Debug)]
pub struct EventLog {
    path: PathBuf,
    offset: HeaderOffset,
    text: String,
}

impl EventLog {
    /// A log to be written to `path` at the end.
    pub fn new(path: &Path, offset: HeaderOffset) -> EventLog {
        EventLog { path: path.to_path_buf(), offset, text: String::new() }
    }
}

impl Link for EventLog {
    fn before_tick(&mut self, _sim: &mut Simulation) -> Result<Flow> {
        Ok(Flow::Continue)
    }
    fn after_tick(&mut self, _sim: &Simulation, events: &[Event]) -> Result<()> {
        for e in events {
            let v = match e {
                Event::Collision(c) => {
                    let c = in_map(c, &self.offset);
                    serde_json::json!({"event": "collision", "tick": c.tick, "time": c.time, "ids": c.ids,
                        "position": c.position, "relative_speed": c.relative_speed})
                }
                Event::Arrived { tick, time, leg } => {
                    serde_json::json!({"event": "arrived", "tick": tick, "time": time, "leg": leg})
                }
                Event::RouteComplete { tick, time } => {
                    serde_json::json!({"event": "route_complete", "tick": tick, "time": time})
                }
                Event::Gps(_) => continue,
            };
            self.text.push_str(&v.to_string());
            self.text.push('\n');
        }
        Ok(())
    }
    fn finish(&mut self, _sim: &Simulation) -> Result<()> {
        write("--events", &self.path, self.text.as_bytes())
    }
}

/// MCAP with Foxglove's protobuf schemas: `foxglove.FrameTransform` on `/tf` (`map` -> the ego
/// and `map` -> each actor, by id, every tick), `foxglove.LocationFix` on `/gps` (each fix
/// with latitude and longitude) and `foxglove.Log` on `/collisions` (one a collision, its
/// report as JSON). Stamped UTC = the GPS's `utc_start` + time. Uncompressed chunks.
pub struct McapLog {
    writer: Option<mcap::Writer<atomic::TempFile>>,
    target: PathBuf,
    offset: HeaderOffset,
    tf: u16,
    gps: u16,
    collisions: u16,
    sequence: u32,
    /// `/lidar` and the LiDAR (its mount on `/tf`), `/camera`.
    lidar: Option<(u16, sensors::Lidar)>,
    camera: Option<u16>,
}

impl std::fmt::Debug for McapLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McapLog").field("target", &self.target).finish_non_exhaustive()
    }
}

/// The topics and schemas [`McapLog`] adds for the sensors: one point cloud a LiDAR revolution
/// (frame `lidar`, its mount on the ego on `/tf` at the cloud's time), one `rgb8` image a camera
/// frame (frame `camera`).
pub const SENSOR_CHANNELS: [(&str, &str); 2] = [("/lidar", "foxglove.PointCloud"), ("/camera", "foxglove.RawImage")];

/// The topics and schemas of [`McapLog`] without sensors.
pub const MCAP_CHANNELS: [(&str, &str); 3] =
    [("/tf", "foxglove.FrameTransform"), ("/gps", "foxglove.LocationFix"), ("/collisions", "foxglove.Log")];

impl McapLog {
    /// Starts writing `path`, the map frame placed by `offset`.
    pub fn create(path: &Path, offset: HeaderOffset) -> Result<McapLog> {
        McapLog::create_with(path, offset, None)
    }

    /// Starts writing `path` with the sensors' channels too: `/lidar` for this LiDAR (when
    /// `Some`), `/camera` when `true`.
    pub fn create_with(
        path: &Path,
        offset: HeaderOffset,
        sensors: Option<(Option<sensors::Lidar>, bool)>,
    ) -> Result<McapLog> {
        let what = || format!("--mcap {}", path.display());
        let mut writer = crate::lidar_out::mcap_create(path)?;
        let mut channel = |schema, topic: &str| crate::lidar_out::mcap_channel(&mut writer, schema, topic);
        let tf = channel(FrameTransform::get_schema(), "/tf").with_context(what)?;
        let gps = channel(LocationFix::get_schema(), "/gps").with_context(what)?;
        let collisions = channel(Log::get_schema(), "/collisions").with_context(what)?;
        let (lidar, camera) = sensors.unwrap_or((None, false));
        let lidar = match lidar {
            Some(l) => Some((channel(PointCloud::get_schema(), "/lidar").with_context(what)?, l)),
            None => None,
        };
        let camera = if camera { Some(channel(RawImage::get_schema(), "/camera").with_context(what)?) } else { None };
        Ok(McapLog {
            writer: Some(writer),
            target: path.to_path_buf(),
            offset,
            tf,
            gps,
            collisions,
            sequence: 0,
            lidar,
            camera,
        })
    }

    fn message<M: Encode>(&mut self, channel: u16, utc: f64, m: &M) -> Result<()> {
        let w = self.writer.as_mut().ok_or_else(|| anyhow!("--mcap {}: already finished", self.target.display()))?;
        crate::lidar_out::mcap_message(w, &mut self.sequence, channel, utc, m)
            .with_context(|| format!("--mcap {}", self.target.display()))
    }

    fn frames(&mut self, sim: &Simulation) -> Result<()> {
        let utc = sim.scenario().gps.utc_start + sim.time();
        let ts = timestamp(utc)?;
        let r = sim.ego_record();
        let ego = sim.scenario().ego.id.clone();
        let mut frames = vec![(ego, r.position, r.heading, r.pitch, r.roll)];
        let place = self.offset.placement();
        for a in &sim.state().actors.actors {
            frames.push((a.id.clone(), place.to_map([a.x, a.y, a.z]), a.heading + self.offset.hdg, 0.0, 0.0));
        }
        for (id, [x, y, z], yaw, pitch, roll) in frames {
            let tf = FrameTransform {
                timestamp: Some(ts),
                parent_frame_id: "map".into(),
                child_frame_id: id,
                translation: Some(Vector3 { x, y, z }),
                rotation: Some(ypr_quaternion(yaw, pitch, roll)),
            };
            self.message(self.tf, utc, &tf)?;
        }
        Ok(())
    }
}

impl Link for McapLog {
    fn before_tick(&mut self, _sim: &mut Simulation) -> Result<Flow> {
        Ok(Flow::Continue)
    }
    fn start(&mut self, sim: &Simulation) -> Result<()> {
        self.frames(sim)
    }
    fn after_tick(&mut self, sim: &Simulation, events: &[Event]) -> Result<()> {
        self.frames(sim)?;
        let utc0 = sim.scenario().gps.utc_start;
        for e in events {
            match e {
                Event::Gps(f) => {
                    let Some([lat, lon]) = f.wgs84 else { continue };
                    let utc = f.utc;
                    let fix = LocationFix {
                        timestamp: Some(timestamp(utc)?),
                        frame_id: sim.scenario().ego.id.clone(),
                        latitude: lat,
                        longitude: lon,
                        altitude: f.map[2],
                        heading: Some(f.course_deg().to_radians()),
                        ..Default::default()
                    };
                    self.message(self.gps, utc, &fix)?;
                }
                Event::Collision(c) => {
                    let c = in_map(c, &self.offset);
                    let utc = utc0 + c.time;
                    let log = Log {
                        timestamp: Some(timestamp(utc)?),
                        level: foxglove::messages::log::Level::Warning as i32,
                        message: serde_json::to_string(&c)?,
                        name: "collision".into(),
                        ..Default::default()
                    };
                    self.message(self.collisions, utc, &log)?;
                }
                _ => {}
            }
        }
        Ok(())
    }
    fn sensor(&mut self, sim: &Simulation, data: &SensorData) -> Result<()> {
        let utc0 = sim.scenario().gps.utc_start;
        match data {
            SensorData::Revolution(r) => {
                let Some((channel, lidar)) = &self.lidar else { return Ok(()) };
                let (channel, mount) = (*channel, lidar.mount);
                let utc = utc0 + r.time;
                let tf = FrameTransform {
                    timestamp: Some(timestamp(utc)?),
                    parent_frame_id: sim.scenario().ego.id.clone(),
                    child_frame_id: "lidar".into(),
                    translation: Some(Vector3 { x: mount.position[0], y: mount.position[1], z: mount.position[2] }),
                    rotation: Some(Quaternion { x: 0.0, y: 0.0, z: 0.0, w: 1.0 }),
                };
                self.message(self.tf, utc, &tf)?;
                let cloud = crate::lidar_out::point_cloud(timestamp(utc)?, "lidar", r.cloud.clone());
                self.message(channel, utc, &cloud)
            }
            SensorData::Image(i) => {
                let Some(channel) = self.camera else { return Ok(()) };
                let utc = utc0 + i.time;
                let img = RawImage {
                    timestamp: Some(timestamp(utc)?),
                    frame_id: "camera".into(),
                    width: i.frame.width,
                    height: i.frame.height,
                    encoding: "rgb8".into(),
                    step: 3 * i.frame.width,
                    data: i.frame.rgb.clone().into(),
                };
                self.message(channel, utc, &img)
            }
        }
    }
    fn finish(&mut self, _sim: &Simulation) -> Result<()> {
        let what = format!("--mcap {}", self.target.display());
        let Some(mut w) = self.writer.take() else { return Ok(()) };
        w.finish().with_context(|| what.clone())?;
        w.into_inner().commit().with_context(|| what)
    }
}

/// The rotation of yaw (about z), then pitch (nose up positive) and roll (right side down
/// positive) as a unit quaternion: R = Rz(yaw) Ry(-pitch) Rx(roll).
pub fn ypr_quaternion(yaw: f64, pitch: f64, roll: f64) -> Quaternion {
    let (sy, cy) = (0.5 * yaw).sin_cos();
    let (sp, cp) = (-0.5 * pitch).sin_cos();
    let (sr, cr) = (0.5 * roll).sin_cos();
    Quaternion {
        w: cy * cp * cr + sy * sp * sr,
        x: cy * cp * sr - sy * sp * cr,
        y: cy * sp * cr + sy * cp * sr,
        z: sy * cp * cr - cy * sp * sr,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn overrides_win_over_the_file_and_bad_keys_are_named() {
        let d = std::env::temp_dir().join(format!("roadscan-simulate-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let f = d.join("s.toml");
        std::fs::write(&f, "duration = 5\nroute = [\"lane:1\"]\n[gps]\nrate = 5\nseed = 7\n").unwrap();
        let sc = scenario(
            Some(&f),
            &[
                Override::new("duration", 3.0),
                Override::parse("gps.rate=20").unwrap(),
                Override::parse("ego.speed=4").unwrap(),
            ],
        )
        .unwrap();
        assert_eq!(sc.duration, 3.0);
        assert_eq!(sc.route, vec!["lane:1".to_string()]);
        assert_eq!((sc.gps.rate, sc.gps.seed), (20.0, 7));
        assert_eq!(sc.ego.speed, 4.0);
        let e = scenario(Some(&f), &[Override::parse("gps.rat=2").unwrap()]).unwrap_err();
        assert!(format!("{e:#}").contains("rat"), "{e:#}");
        std::fs::write(&f, "durration = 5\n").unwrap();
        let e = scenario(Some(&f), &[]).unwrap_err();
        assert!(format!("{e:#}").contains("durration"), "{e:#}");
        assert!(Override::parse("noequals").is_err());
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// The `[bridges]` table is read beside the scenario's keys (a string or a list for the
    /// UDP keys), `--set bridges.KEY=...` overrides it, and a scenario key after it is still
    /// reported at its own line.
    #[test]
    fn the_bridges_table_is_read_beside_the_scenario() {
        let d = roadscan_tests::Scratch::new("simulate-bridges");
        let f = d.join("b.toml");
        std::fs::write(
            &f,
            "duration = 5\n[bridges]\nudp_out = \"127.0.0.1:9001\"\nudp_in = [\"127.0.0.1:9000=car1\", \"[::1]:9002\"]\n\
             udp_format = \"f64le\"\nzmq_bind = \"tcp://127.0.0.1:5556\"\nzmq_timeout = 5\npace = 1\nshm = \"car1\"\n\
             zmq_payload = \"none\"\n[gps]\nrate = 5\n",
        )
        .unwrap();
        let (sc, b) = scenario_and_bridges(Some(&f), &[]).unwrap();
        assert_eq!((sc.duration, sc.gps.rate), (5.0, 5.0));
        let want = BridgeKeys {
            zmq_connect: None,
            zmq_bind: Some("tcp://127.0.0.1:5556".into()),
            zmq_timeout: Some(5.0),
            zmq_payload: Some("none".into()),
            udp_in: Some(vec!["127.0.0.1:9000=car1".into(), "[::1]:9002".into()]),
            udp_out: Some(vec!["127.0.0.1:9001".into()]),
            udp_format: Some("f64le".into()),
            shm: Some("car1".into()),
            pace: Some(1.0),
        };
        assert_eq!(b, want);
        // The plain reader takes the same file (the table left out of the scenario).
        assert_eq!(scenario(Some(&f), &[]).unwrap(), sc);
        let (_, b) = scenario_and_bridges(
            Some(&f),
            &[Override::parse("bridges.udp_out=127.0.0.1:9005").unwrap(), Override::parse("bridges.pace=2").unwrap()],
        )
        .unwrap();
        assert_eq!((b.udp_out, b.pace, b.shm), (Some(vec!["127.0.0.1:9005".into()]), Some(2.0), want.shm));
        // Without a file, --set alone makes the table.
        let (_, b) = scenario_and_bridges(None, &[Override::parse("bridges.shm=x").unwrap()]).unwrap();
        assert_eq!(b.shm.as_deref(), Some("x"));
        // The example of docs/bridges.md reads.
        let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/bridges.md")).unwrap();
        let example = doc.split("```toml\n").nth(1).and_then(|t| t.split("```").next()).unwrap();
        std::fs::write(&f, example).unwrap();
        let (_, b) = scenario_and_bridges(Some(&f), &[]).unwrap();
        assert_eq!((b.udp_in.map(|v| v.len()), b.udp_format.as_deref()), (Some(2), Some("f64le")));
        // A scenario key after the table keeps its line.
        std::fs::write(&f, "[bridges]\npace = 1\n[gps]\nrat = 5\n").unwrap();
        let e = format!("{:#}", scenario_and_bridges(Some(&f), &[]).unwrap_err());
        assert!(e.contains("b.toml:4:1") && e.contains("rat"), "{e}");
    }

    /// An unknown key, a wrong type and a bad value in `[bridges]` are each one error line
    /// naming the file, the line and the key.
    #[test]
    fn bad_bridge_keys_are_named_with_file_and_line() {
        let d = roadscan_tests::Scratch::new("simulate-bad-bridges");
        let f = d.join("bad.toml");
        let cases = [
            ("duration = 1\n[bridges]\nudp_ot = \"127.0.0.1:9\"\n", "bad.toml:3:1", "udp_ot"),
            ("[bridges]\npace = 1\nudp_out = \"localhost\"\n", "bad.toml:3:11", "bridges.udp_out"),
            ("[bridges]\nudp_out = [\"127.0.0.1:9\", 7]\n", "bad.toml:2:11", "udp_out"),
            ("[bridges]\nudp_in = [\"127.0.0.1:9=\"]\n", "bad.toml:2:10", "bridges.udp_in"),
            ("[bridges]\n\nudp_format = \"xml\"\n", "bad.toml:3:14", "bridges.udp_format"),
            ("[bridges]\nzmq_connect = \"127.0.0.1:5555\"\n", "bad.toml:2:15", "bridges.zmq_connect"),
            ("[bridges]\nzmq_connect = \"tcp://a:1\"\nzmq_bind = \"tcp://b:2\"\n", "bad.toml", "zmq_bind"),
            ("[bridges]\nzmq_timeout = 0\n", "bad.toml:2:15", "bridges.zmq_timeout"),
            ("[bridges]\nzmq_payload = \"lidar\"\n", "bad.toml:2:15", "bridges.zmq_payload"),
            ("[bridges]\nshm = \"a/b\"\n", "bad.toml:2:7", "bridges.shm"),
            ("[bridges]\npace = -1\n", "bad.toml:2:8", "bridges.pace"),
            ("bridges = 3\n", "bad.toml:1:11", "bridges"),
            ("[bridges.udp]\nout = 1\n", "bad.toml", "udp"),
        ];
        for (text, place, key) in cases {
            std::fs::write(&f, text).unwrap();
            let e = format!("{:#}", scenario_and_bridges(Some(&f), &[]).unwrap_err());
            assert!(e.contains(place) && e.contains(key), "{text:?}: {e}");
            assert_eq!(e.lines().count(), 1, "{text:?}: {e}");
        }
        // A bad value given by --set names the file and the key too.
        std::fs::write(&f, "[bridges]\npace = 1\n").unwrap();
        let e = scenario_and_bridges(Some(&f), &[Override::parse("bridges.udp_out=nowhere").unwrap()]).unwrap_err();
        let e = format!("{e:#}");
        assert!(e.contains("bad.toml") && e.contains("bridges.udp_out"), "{e}");
    }

    /// The quaternion turns the body's x axis onto (cos yaw cos pitch, sin yaw cos pitch,
    /// sin pitch) and its y axis up on the left for a right-side-down roll.
    #[test]
    fn the_quaternion_has_the_simulation_s_signs() {
        let rot = |q: &Quaternion, v: [f64; 3]| {
            let (w, x, y, z) = (q.w, q.x, q.y, q.z);
            let m = [
                [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - w * z), 2.0 * (x * z + w * y)],
                [2.0 * (x * y + w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - w * x)],
                [2.0 * (x * z - w * y), 2.0 * (y * z + w * x), 1.0 - 2.0 * (x * x + y * y)],
            ];
            [0, 1, 2].map(|r| m[r][0] * v[0] + m[r][1] * v[1] + m[r][2] * v[2])
        };
        let (yaw, pitch, roll) = (0.7, 0.1, 0.05);
        let q = ypr_quaternion(yaw, pitch, roll);
        let fwd = rot(&q, [1.0, 0.0, 0.0]);
        let want = [yaw.cos() * pitch.cos(), yaw.sin() * pitch.cos(), pitch.sin()];
        for k in 0..3 {
            assert!((fwd[k] - want[k]).abs() < 1e-12, "{fwd:?} vs {want:?}");
        }
        let left = rot(&ypr_quaternion(0.0, 0.0, roll), [0.0, 1.0, 0.0]);
        assert!((left[2] - roll.sin()).abs() < 1e-12, "{left:?}");
    }
}
