//! The settings of a build: the config file's keys, the command line's values merged over
//! them, checked, with the defaults.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// A build's options as a TOML config file gives them (keys are the command line's long
/// option names), or as the command line gives them: every one optional.
#[derive(Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ConfigFile {
    /// LAS/LAZ files (read once, in the order given).
    #[serde(default)]
    pub input: Vec<PathBuf>,
    /// The axis: an OpenDRIVE file whose road is the frame of every product.
    pub axis: Option<PathBuf>,
    /// Road id in `axis` (default: every road of a file of several, as a network; else its road).
    pub road: Option<String>,
    /// The axis: fitted to this vehicle trajectory CSV.
    pub trajectory: Option<PathBuf>,
    /// The axis: the road network of this OpenStreetMap file's ways for cars (needs `crs`).
    pub osm: Option<PathBuf>,
    /// Trajectory: the road centre's distance left of the vehicle's track, m.
    pub offset: Option<f64>,
    /// Trajectory: the sensor's height above the road, m.
    pub sensor_height: Option<f64>,
    /// Trajectory: the pass to use.
    pub pass: Option<String>,
    /// Project CRS (EPSG:NNNN or a PROJ string).
    pub crs: Option<String>,
    /// Output directory.
    pub out: Option<PathBuf>,
    /// Part of the road, m of s.
    #[serde(default, deserialize_with = "range")]
    pub s_range: Option<(f64, f64)>,
    /// CRG cell size, m.
    pub cell: Option<f64>,
    /// CRG tile length along s, m.
    pub tile: Option<f64>,
    /// Voxel size, m.
    pub voxel_size: Option<f64>,
    /// Ribbon pixel size, m.
    pub ribbon_cell: Option<f64>,
    /// Voxels and ribbons: points within this distance of the reference line, m.
    pub buffer: Option<f64>,
    /// Cross sections and CRG points: within this distance of the reference line, m.
    pub half_width: Option<f64>,
    /// Leave the passes' heights as measured.
    #[serde(default)]
    pub no_register: bool,
}

fn range<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<(f64, f64)>, D::Error> {
    let s = String::deserialize(d)?;
    parse_range(&s).map(Some).map_err(serde::de::Error::custom)
}

/// `v` when it is a number of metres from `lo` to `hi`, else an error naming the option
/// `--name` (bounds keep grids, tables and images to what a survey can need).
pub fn within(name: &str, v: f64, lo: f64, hi: f64) -> Result<f64> {
    if !(v.is_finite() && v >= lo && v <= hi) {
        bail!("--{name} must be from {lo} to {hi} m, got {v}");
    }
    Ok(v)
}

/// `A..B` (numbers, A < B) as a range.
pub fn parse_range(s: &str) -> Result<(f64, f64), String> {
    let (a, b) = s.split_once("..").ok_or_else(|| format!("'{s}': expected A..B, e.g. 100..400"))?;
    let (a, b) = (a.trim().parse::<f64>(), b.trim().parse::<f64>());
    match (a, b) {
        (Ok(a), Ok(b)) if a.is_finite() && b.is_finite() && a < b => Ok((a, b)),
        _ => Err(format!("'{s}': expected A..B with numbers A < B")),
    }
}

/// `DX,DY,DZ`: three numbers of at most 1000 m.
pub fn parse_xyz(s: &str) -> Result<[f64; 3], String> {
    let v: Vec<f64> =
        s.split(',').map(|x| x.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|e| format!("'{s}': {e}"))?;
    match v.as_slice() {
        [x, y, z] if v.iter().all(|c| c.is_finite() && c.abs() <= 1e3) => Ok([*x, *y, *z]),
        _ => Err(format!("'{s}': expected three numbers DX,DY,DZ of at most 1000 m")),
    }
}

/// `SIGMA_XY,SIGMA_Z`: two numbers from 0 to 100 m.
pub fn parse_sigmas(s: &str) -> Result<[f64; 2], String> {
    let want = || format!("'{s}': expected two numbers SIGMA_XY,SIGMA_Z from 0 to 100 m, e.g. 0.03,0.05");
    let v: Vec<f64> = s.split(',').map(|x| x.trim().parse::<f64>()).collect::<Result<_, _>>().map_err(|_| want())?;
    match v.as_slice() {
        [xy, z] if v.iter().all(|c| c.is_finite() && (0.0..=100.0).contains(c)) => Ok([*xy, *z]),
        _ => Err(want()),
    }
}

/// The settings of a build: the arguments merged with the config file and the defaults.
/// Serialized, it is what a program stores to run the same build again.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuildConfig {
    /// LAS/LAZ files, read once in this order.
    pub input: Vec<PathBuf>,
    /// Where the axis comes from.
    pub axis: AxisSource,
    /// Project CRS (EPSG:NNNN or a PROJ string): the trajectory's, and that of inputs whose
    /// files name none.
    pub crs: Option<String>,
    /// The output directory, replaced as a whole when the build succeeds.
    pub out: PathBuf,
    /// Part of the axis road, m of s (None: all of it).
    pub s_range: Option<(f64, f64)>,
    /// CRG cell size, m.
    pub cell: f64,
    /// CRG tile length along s, m.
    pub tile: f64,
    /// Voxel size, m.
    pub voxel_size: f64,
    /// Ribbon pixel size, m.
    pub ribbon_cell: f64,
    /// Voxels and ribbons: points within this distance of the reference line, m.
    pub buffer: f64,
    /// Cross sections and CRG points: within this distance of the reference line, m.
    pub half_width: f64,
    /// Whether --half-width (or the config) gave it; else [`BuildConfig::for_road`] widens it to
    /// the axis's lanes.
    pub half_width_given: bool,
    /// Whether to register the passes' heights (not --no-register).
    pub register: bool,
    /// The config file these settings were read from, if any (an input: never written over).
    pub config_file: Option<PathBuf>,
}

/// Where the axis comes from.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AxisSource {
    /// An OpenDRIVE file and its road (None: every road of a file of several, as a network
    /// ([`crate::network`]), else its one road).
    File {
        /// The file.
        path: PathBuf,
        /// The road's id.
        road: Option<String>,
    },
    /// A vehicle trajectory CSV, fitted.
    Trajectory {
        /// The CSV.
        path: PathBuf,
        /// The road centre's distance left of the vehicle's track, m.
        offset: f64,
        /// None: estimated from the points (the median height of the scanner above the points
        /// near nadir under its track).
        sensor_height: Option<f64>,
        /// The pass to use (its `pass` column; None: the first row's).
        pass: Option<String>,
    },
    /// No axis source given: the scanner's drive path found in the inputs (`axis --points`).
    DrivePath,
    /// The road network of an OpenStreetMap file's ways for cars (`axis --osm` without
    /// `--way`), built as a network.
    Osm {
        /// The OSM XML file.
        path: PathBuf,
        /// A trajectory whose passes (moved as [`AxisSource::Passes`] moves them) give the
        /// roads' lines where the survey drove them (the ways' topology kept).
        trajectory: Option<PathBuf>,
        /// The passes' offset (None: survey.json's per pass, else 0).
        offset: Option<f64>,
    },
    /// The road network the passes of a trajectory drive (several passes meeting at
    /// junctions, `axis --trajectory` without `--pass`), built as a network.
    Passes {
        /// The trajectory CSV.
        path: PathBuf,
        /// The reference line's distance left of every pass's track, m; None: each pass's own
        /// from survey.json beside the trajectory, else 0.
        offset: Option<f64>,
    },
}

impl Default for BuildConfig {
    /// The defaults of the options (no inputs, no axis).
    fn default() -> BuildConfig {
        BuildConfig {
            input: Vec::new(),
            axis: AxisSource::File { path: PathBuf::new(), road: None },
            crs: None,
            out: PathBuf::from("roadscan-out"),
            s_range: None,
            cell: 0.01,
            tile: 250.0,
            voxel_size: 1.0,
            ribbon_cell: 0.1,
            buffer: 50.0,
            half_width: 10.0,
            half_width_given: false,
            register: true,
            config_file: None,
        }
    }
}

impl BuildConfig {
    /// Every file the build reads (never to be written over), its config file too.
    pub fn inputs(&self) -> Vec<PathBuf> {
        let config = self.config_file.as_deref();
        let axis = match &self.axis {
            AxisSource::File { path, .. }
            | AxisSource::Trajectory { path, .. }
            | AxisSource::Osm { path, .. }
            | AxisSource::Passes { path, .. } => Some(path),
            AxisSource::DrivePath => None,
        };
        let passes = match &self.axis {
            AxisSource::Osm { trajectory, .. } => trajectory.as_ref(),
            _ => None,
        };
        self.input.iter().chain(axis).chain(passes).map(PathBuf::clone).chain(config.map(Path::to_path_buf)).collect()
    }

    /// The options `a` (the command line's) merged over the config file `config` (its
    /// relative paths relative to it) and the defaults, checked.
    pub fn resolve(a: &ConfigFile, config: Option<&Path>) -> Result<BuildConfig> {
        // An error about a value the config file gave is named where the file gives it by the
        // callers.
        let file = match config {
            Some(p) => ConfigFile::read(p)?,
            None => ConfigFile::default(),
        };
        let input = if a.input.is_empty() { file.input } else { a.input.clone() };
        if input.is_empty() {
            bail!("no --input: give the LAS/LAZ files (or `input = [...]` in the config)");
        }
        let (axis_file, trajectory, osm) = if a.axis.is_some() || a.trajectory.is_some() || a.osm.is_some() {
            (a.axis.clone(), a.trajectory.clone(), a.osm.clone())
        } else {
            (file.axis, file.trajectory, file.osm)
        };
        let axis = match (axis_file, trajectory) {
            (None, trajectory) if osm.is_some() => {
                AxisSource::Osm { path: osm.clone().unwrap_or_default(), trajectory, offset: a.offset.or(file.offset) }
            }
            _ if osm.is_some() => bail!("give --osm without --axis"),
            (Some(path), None) => AxisSource::File { path, road: a.road.clone().or(file.road) },
            (None, Some(path))
                if a.pass.is_none()
                    && file.pass.is_none()
                    && crate::axis::passes_network(
                        &path,
                        a.offset.or(file.offset),
                        a.crs.clone().or(file.crs.clone()),
                    )?
                    .is_some() =>
            {
                // Passes that meet at junctions: the network they drive.
                AxisSource::Passes { path, offset: a.offset.or(file.offset) }
            }
            (None, Some(path)) => {
                // A survey of several roads whose passes meet at no junction has no one axis.
                if a.pass.is_none() && file.pass.is_none() {
                    if let Some(n) = surveyed_roads(&path).filter(|&n| n > 1) {
                        bail!(
                            "{}: its passes drive {n} roads but meet at no junction: give --pass to build one pass's road, or --axis with the network's .xodr",
                            path.display()
                        );
                    }
                }
                // The mount a survey records beside its trajectory (survey.json), where the
                // options do not give it; without either, the scanner's height is estimated
                // from the points and the track is the reference line (a silent height of 0
                // once gave 0 % coverage).
                let recorded = recorded_mount(&path)?;
                let offset = a.offset.or(file.offset).or(recorded.as_ref().map(|r| r.0)).unwrap_or(0.0);
                let sensor_height = a.sensor_height.or(file.sensor_height).or(recorded.as_ref().map(|r| r.1));
                let pass = a.pass.clone().or(file.pass).or(recorded.and_then(|r| r.2));
                AxisSource::Trajectory { path, offset, sensor_height, pass }
            }
            (Some(_), Some(_)) => bail!("give --axis or --trajectory, not both"),
            // No axis source: the drive path in the points (an error there names what is missing).
            (None, None) => AxisSource::DrivePath,
        };
        let num = |name: &str, v: Option<f64>, f: Option<f64>, (default, lo, hi): (f64, f64, f64)| {
            within(name, v.or(f).unwrap_or(default), lo, hi)
        };
        let d = BuildConfig::default();
        let s = BuildConfig {
            input,
            axis,
            crs: a.crs.clone().or(file.crs),
            out: a.out.clone().or(file.out).unwrap_or(d.out),
            s_range: a.s_range.or(file.s_range),
            cell: num("cell", a.cell, file.cell, (d.cell, 0.001, 1.0))?,
            tile: num("tile", a.tile, file.tile, (d.tile, 1.0, 100_000.0))?,
            voxel_size: num("voxel-size", a.voxel_size, file.voxel_size, (d.voxel_size, 0.01, 100.0))?,
            ribbon_cell: num("ribbon-cell", a.ribbon_cell, file.ribbon_cell, (d.ribbon_cell, 0.005, 10.0))?,
            buffer: num("buffer", a.buffer, file.buffer, (d.buffer, 0.1, 1000.0))?,
            half_width: num("half-width", a.half_width, file.half_width, (d.half_width, 0.5, 100.0))?,
            half_width_given: a.half_width.or(file.half_width).is_some(),
            register: !(a.no_register || file.no_register),
            config_file: config.map(Path::to_path_buf),
        };
        if let AxisSource::Trajectory { offset, sensor_height, .. } = &s.axis {
            within("offset", *offset, -100.0, 100.0)?;
            if let Some(h) = sensor_height {
                within("sensor-height", *h, -100.0, 100.0)?;
            }
        }
        if let Some(crs) = &s.crs {
            scan::CrsDef::parse(crs).map_err(|e| anyhow::anyhow!("--crs {crs}: {e}"))?;
        }
        if s.half_width > s.buffer {
            bail!("--half-width {} must not exceed --buffer {}", s.half_width, s.buffer);
        }
        Ok(s)
    }

    /// The settings for `road`: without a --half-width, the default widened to 2 m beyond the
    /// outermost border of a road lane the axis road declares (a wide road's outer lanes and
    /// its curbs lie beyond 10 m; its verges, sidewalks and `none` lanes do not count), at most
    /// --buffer.
    pub fn for_road(&self, road: &opendrive::Road) -> BuildConfig {
        let mut s = self.clone();
        if !self.half_width_given {
            let eval = opendrive::RoadEval::new(road);
            let n = (road.length / 5.0).ceil().clamp(1.0, 10_000.0) as usize;
            let mut outer = 0.0f64;
            for i in 0..=n {
                let sv = road.length * i as f64 / n as f64;
                let Some(sec) = eval.lane_section(sv) else { continue };
                let road_lane = |id: i32| {
                    sec.lanes()
                        .find(|l| l.id == id)
                        .and_then(|l| l.kind.as_deref())
                        .is_some_and(|k| !matches!(k, "border" | "none" | "sidewalk" | "walking" | "curb" | "median"))
                };
                for (id, t) in eval.lane_borders(sv) {
                    if road_lane(id) && t.is_finite() {
                        outer = outer.max(t.abs());
                    }
                }
            }
            s.half_width = s.half_width.max((outer + 2.0).ceil()).min(s.buffer);
        }
        s
    }

    /// The parameters as the manifest records them (paths as given).
    pub fn to_json(&self) -> Value {
        let axis = match &self.axis {
            AxisSource::File { path, road } => json!({"file": path.display().to_string(), "road": road}),
            AxisSource::Trajectory { path, offset, sensor_height, pass } => json!({
                "trajectory": path.display().to_string(), "offset": offset,
                "sensor_height": sensor_height, "pass": pass,
            }),
            AxisSource::DrivePath => json!({"points": "drive path of the inputs"}),
            AxisSource::Osm { path, trajectory, offset } => json!({
                "osm": path.display().to_string(),
                "trajectory": trajectory.as_ref().map(|t| t.display().to_string()), "offset": offset,
            }),
            AxisSource::Passes { path, offset } => {
                json!({"trajectory": path.display().to_string(), "offset": offset, "network": true})
            }
        };
        json!({
            "axis": axis,
            "crs": self.crs,
            "s_range": self.s_range.map(|(a, b)| [a, b]),
            "cell": self.cell,
            "tile": self.tile,
            "voxel_size": self.voxel_size,
            "ribbon_cell": self.ribbon_cell,
            "buffer": self.buffer,
            "half_width": self.half_width,
            "register": self.register,
        })
    }
}

impl ConfigFile {
    /// The config file `path`, its relative paths made relative to its directory.
    pub fn read(path: &Path) -> Result<ConfigFile> {
        let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
        let mut c: ConfigFile = toml::from_str(&text).map_err(|e| {
            let at = e.span().map_or(String::new(), |r| {
                let before = &text.as_bytes()[..r.start.min(text.len())];
                let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
                let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
                format!(":{line}:{column}")
            });
            anyhow::anyhow!("{}{at}: {}", path.display(), e.message().trim_end().replace('\n', " "))
        })?;
        let dir = path.parent().unwrap_or(Path::new(""));
        let resolve = |p: &mut PathBuf| {
            if p.is_relative() {
                *p = dir.join(&*p);
            }
        };
        c.input.iter_mut().for_each(resolve);
        c.axis.iter_mut().for_each(resolve);
        c.trajectory.iter_mut().for_each(resolve);
        c.osm.iter_mut().for_each(resolve);
        c.out.iter_mut().for_each(resolve);
        Ok(c)
    }
}

/// How many roads the passes of the survey.json beside `trajectory` drive (a network survey
/// names each pass's `"road"`); None without such a file or roads.
fn surveyed_roads(trajectory: &Path) -> Option<usize> {
    let text = std::fs::read_to_string(trajectory.with_file_name("survey.json")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let roads: std::collections::BTreeSet<&str> =
        v["passes"].as_array()?.iter().filter_map(|p| p["road"].as_str()).collect();
    (!roads.is_empty()).then_some(roads.len())
}

/// The axis offset, sensor height and pass a virtual (or any) survey records in survey.json
/// beside its trajectory ("axis": {"offset_m", "sensor_height_m", "pass"}); none without one.
fn recorded_mount(trajectory: &Path) -> Result<Option<(f64, f64, Option<String>)>> {
    let path = trajectory.with_file_name("survey.json");
    let Ok(text) = std::fs::read_to_string(&path) else { return Ok(None) };
    let v: Value = serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    let axis = &v["axis"];
    match (axis["offset_m"].as_f64(), axis["sensor_height_m"].as_f64()) {
        (Some(o), Some(h)) => Ok(Some((o, h, axis["pass"].as_str().map(String::from)))),
        _ => bail!("{}: no \"axis\": {{\"offset_m\", \"sensor_height_m\"}} numbers", path.display()),
    }
}
