//! `roadscan build`: LAS/LAZ points and an axis in, every product out, the points read once.
//!
//! Every chunk of points goes to two builders: the roadside builder (voxels, ribbons and the
//! cross sections) and the surface builder (the CRG's candidates near the axis road's
//! surface). After the read, the surveyed road (elevation, superelevation, curbs, markings,
//! lanes) comes from the cross sections, the CRG tiles are gridded as heights above its
//! surface, and the road is completed with the tiles' potholes and manholes and the
//! `<surface><CRG>` links. Everything is written into a staging directory that replaces
//! `--out` at the end, with a report and a manifest.

use crate::outdir::Outputs;
use crate::report::{self, Plots};
use crate::roadside::{write_ribbons, write_voxels, InputInfo, VoxelOut};
use crate::{exit, within};
use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use pipeline::registration::Registration;
use pipeline::road::{survey_road, SurveyOptions};
use pipeline::section::SectionOptions;
use pipeline::surface::SurfaceUnit;
use pipeline::{
    PointColumns, RibbonOptions, Roadside, RoadsideBuilder, RoadsideOptions, SurfaceBuilder, SurfaceOptions, ZMode,
};
use serde::Deserialize;
use serde_json::{json, Value};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The arguments of `build`; also the keys of its TOML config (the long option names).
#[derive(clap::Args, Debug, Default, Clone, Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct BuildArgs {
    /// A TOML file with any of the options below, keyed by their long names (e.g.
    /// `input = ["a.laz", "b.laz"]`, `sensor-height = 2.2`, `s-range = "0..150"`); options
    /// on the command line win; relative paths in the file are relative to the file.
    #[arg(long)]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// LAS/LAZ files (any number; read once, in the order given).
    #[arg(long, num_args = 1..)]
    #[serde(default)]
    pub input: Vec<PathBuf>,
    /// The axis: an OpenDRIVE file whose road (--road) is the frame of every product (e.g.
    /// from `roadscan axis`).
    #[arg(long, conflicts_with = "trajectory")]
    pub axis: Option<PathBuf>,
    /// Road id in --axis (default: its first road).
    #[arg(long)]
    pub road: Option<String>,
    /// The axis: fitted to this vehicle trajectory CSV, as `roadscan axis --trajectory` does
    /// (written to OUT/axis.xodr).
    #[arg(long)]
    pub trajectory: Option<PathBuf>,
    /// Trajectory: the road centre's distance left of the vehicle's track, m (negative: right)
    /// [default: survey.json's beside the trajectory, else 0: the track is the reference line].
    #[arg(long, allow_hyphen_values = true)]
    pub offset: Option<f64>,
    /// Trajectory: the sensor's height above the road, m [default: survey.json's beside the
    /// trajectory, else estimated from the points under the scanner's track].
    #[arg(long)]
    pub sensor_height: Option<f64>,
    /// Trajectory: the pass to use (its `pass` column; default: the first row's).
    #[arg(long)]
    pub pass: Option<String>,
    /// Project CRS (EPSG:NNNN or a PROJ string): the trajectory's, and that of inputs whose
    /// files name none.
    #[arg(long)]
    pub crs: Option<String>,
    /// Output directory, replaced as a whole when the build succeeds [default: roadscan-out].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Part of the road, A..B in metres of s (default: all of it; the CRG covers the surface
    /// points found).
    #[arg(long, value_parser = crate::parse_range, allow_hyphen_values = true)]
    #[serde(default, deserialize_with = "range")]
    pub s_range: Option<(f64, f64)>,
    /// CRG cell size, m [default: 0.01].
    #[arg(long)]
    pub cell: Option<f64>,
    /// CRG tile length along s, m (crg/road_000.crg, road_001.crg, ...) [default: 250].
    #[arg(long)]
    pub tile: Option<f64>,
    /// Voxel size, m [default: 1].
    #[arg(long)]
    pub voxel_size: Option<f64>,
    /// Ribbon pixel size, m [default: 0.1].
    #[arg(long)]
    pub ribbon_cell: Option<f64>,
    /// Voxels and ribbons: points within this distance of the reference line, m [default: 50].
    #[arg(long)]
    pub buffer: Option<f64>,
    /// Cross sections (surface, curbs, markings, lanes) and CRG points: within this distance
    /// of the reference line, m [default: 10].
    #[arg(long)]
    pub half_width: Option<f64>,
    /// Leave the passes as measured: no registration of their heights (by default, where the
    /// points carry GPS time and the survey saw the same ground more than once, the
    /// trajectory's vertical error is estimated from where the passes disagree and taken off
    /// every point; the report's `registration` says by how much).
    #[arg(long)]
    #[serde(default)]
    pub no_register: bool,
    /// Print the report (report.json) on stdout.
    #[arg(long)]
    #[serde(skip)]
    pub json: bool,
    /// Run work unit N of the plan `roadscan plan` made with the same options (see `plan`).
    #[arg(long)]
    #[serde(skip)]
    pub unit: Option<usize>,
}

fn range<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<(f64, f64)>, D::Error> {
    let s = String::deserialize(d)?;
    crate::parse_range(&s).map(Some).map_err(serde::de::Error::custom)
}

/// The settings of a build: the arguments merged with the config file and the defaults.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub input: Vec<PathBuf>,
    pub axis: Axis,
    pub crs: Option<String>,
    pub out: PathBuf,
    pub s_range: Option<(f64, f64)>,
    pub cell: f64,
    pub tile: f64,
    pub voxel_size: f64,
    pub ribbon_cell: f64,
    pub buffer: f64,
    pub half_width: f64,
    /// Whether --half-width (or the config) gave it; else [`Settings::for_road`] widens it to
    /// the axis's lanes.
    pub half_width_given: bool,
    /// Whether to register the passes' heights (not --no-register).
    pub register: bool,
}

/// Where the axis comes from.
#[derive(Debug, Clone)]
pub(crate) enum Axis {
    File {
        path: PathBuf,
        road: Option<String>,
    },
    Trajectory {
        path: PathBuf,
        offset: f64,
        /// None: estimated from the points (the median height of the scanner above the points
        /// near nadir under its track).
        sensor_height: Option<f64>,
        pass: Option<String>,
    },
    /// No axis source given: the scanner's drive path found in the inputs (`axis --points`).
    Points,
}

impl Default for Settings {
    /// The defaults of the options (no inputs, no axis).
    fn default() -> Settings {
        Settings {
            input: Vec::new(),
            axis: Axis::File { path: PathBuf::new(), road: None },
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
        }
    }
}

impl Settings {
    /// Every file the build reads (never to be written over); `config`: its config file.
    pub fn inputs(&self, config: Option<&Path>) -> Vec<PathBuf> {
        let axis = match &self.axis {
            Axis::File { path, .. } | Axis::Trajectory { path, .. } => Some(path),
            Axis::Points => None,
        };
        self.input.iter().chain(axis).map(PathBuf::clone).chain(config.map(Path::to_path_buf)).collect()
    }

    /// The arguments `a` merged with its `--config` (the command line wins) and the defaults.
    pub fn from_args(a: &BuildArgs) -> Result<Settings> {
        // An error about a value the config file gave is named where the file gives it by the
        // callers (`blame_config`).
        let file = match &a.config {
            Some(p) => read_config(p)?,
            None => BuildArgs::default(),
        };
        let input = if a.input.is_empty() { file.input } else { a.input.clone() };
        if input.is_empty() {
            bail!("no --input: give the LAS/LAZ files (or `input = [...]` in the config)");
        }
        let (axis_file, trajectory) = if a.axis.is_some() || a.trajectory.is_some() {
            (a.axis.clone(), a.trajectory.clone())
        } else {
            (file.axis, file.trajectory)
        };
        let axis = match (axis_file, trajectory) {
            (Some(path), None) => Axis::File { path, road: a.road.clone().or(file.road) },
            (None, Some(path)) => {
                // The mount a survey records beside its trajectory (survey.json), where the
                // options do not give it; without either, the scanner's height is estimated
                // from the points and the track is the reference line (a silent height of 0
                // once gave 0 % coverage).
                let recorded = recorded_mount(&path)?;
                let offset = a.offset.or(file.offset).or(recorded.as_ref().map(|r| r.0)).unwrap_or(0.0);
                let sensor_height = a.sensor_height.or(file.sensor_height).or(recorded.as_ref().map(|r| r.1));
                let pass = a.pass.clone().or(file.pass).or(recorded.and_then(|r| r.2));
                Axis::Trajectory { path, offset, sensor_height, pass }
            }
            (Some(_), Some(_)) => bail!("give --axis or --trajectory, not both"),
            // No axis source: the drive path in the points (an error there names what is missing).
            (None, None) => Axis::Points,
        };
        let num = |name: &str, v: Option<f64>, f: Option<f64>, (default, lo, hi): (f64, f64, f64)| {
            within(name, v.or(f).unwrap_or(default), lo, hi)
        };
        let d = Settings::default();
        let s = Settings {
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
        };
        if let Axis::Trajectory { offset, sensor_height, .. } = &s.axis {
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
    pub(crate) fn for_road(&self, road: &opendrive::Road) -> Settings {
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
    pub(crate) fn to_json(&self) -> Value {
        let axis = match &self.axis {
            Axis::File { path, road } => json!({"file": path.display().to_string(), "road": road}),
            Axis::Trajectory { path, offset, sensor_height, pass } => json!({
                "trajectory": path.display().to_string(), "offset": offset,
                "sensor_height": sensor_height, "pass": pass,
            }),
            Axis::Points => json!({"points": "drive path of the inputs"}),
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

/// The config file `path`, its relative paths made relative to its directory.
fn read_config(path: &Path) -> Result<BuildArgs> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let mut c: BuildArgs = toml::from_str(&text).map_err(|e| {
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
    c.out.iter_mut().for_each(resolve);
    Ok(c)
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

/// The line (from 1) of the config text where `key` is given, if any.
fn config_line(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| l.trim_start().strip_prefix(key).is_some_and(|r| r.trim_start().starts_with('=')))
        .map(|i| i + 1)
}

/// An error about an option (`--NAME ...`) that the config file gave, not the command line,
/// named where the file gives it.
pub(crate) fn blame_config(a: &BuildArgs, e: anyhow::Error) -> anyhow::Error {
    let Some(path) = &a.config else { return e };
    let Ok(text) = std::fs::read_to_string(path) else { return e };
    let msg = e.to_string();
    let Some(name) = msg.strip_prefix("--").and_then(|m| m.split(|c: char| !(c.is_alphanumeric() || c == '-')).next())
    else {
        return e;
    };
    let on_command_line =
        std::env::args().any(|arg| arg == format!("--{name}") || arg.starts_with(&format!("--{name}=")));
    match config_line(&text, name) {
        Some(line) if !on_command_line => anyhow::anyhow!("{}:{line}: {name}: {e:#}", path.display()),
        _ => e,
    }
}

/// Runs `build`.
pub fn run(a: &BuildArgs, quiet: bool) -> Result<u8> {
    run_build(a, quiet).map_err(|e| blame_config(a, e))
}

fn run_build(a: &BuildArgs, quiet: bool) -> Result<u8> {
    let t0 = Instant::now();
    let s = Settings::from_args(a)?;
    if let Some(unit) = a.unit {
        return crate::units::run_unit(&s, unit, a.json, quiet);
    }
    let outputs = Outputs::new(s.inputs(a.config.as_deref()));
    let dir = outputs.dir(&s.out, "manifest.json")?;
    let built = build_into(&s, &dir, quiet)?;
    outputs.commit()?;
    report_built(&s, &built, a.json, quiet, t0)
}

/// After a build: report.json on stdout (`json`), where the products are, failed checks;
/// the exit code.
pub(crate) fn report_built(s: &Settings, built: &Built, json: bool, quiet: bool, t0: Instant) -> Result<u8> {
    if json {
        let mut out = std::io::stdout().lock();
        out.write_all(&built.report_json)?;
    }
    if !quiet {
        print_where(&s.out, t0);
    }
    // Even with --quiet: they explain exit code 1.
    for w in &built.failed {
        eprintln!("roadscan: warning: {w}");
    }
    Ok(if built.failed.is_empty() { exit::OK } else { exit::FINDINGS })
}

/// Prints where the products are.
pub(crate) fn print_where(out: &Path, t0: Instant) {
    let o = out.display();
    eprintln!("roadscan: built in {:.1} s; look at:", t0.elapsed().as_secs_f64());
    for (path, what) in [
        ("report.html", "the report: renders, plots, features, checks, speed"),
        ("road.xodr", "the surveyed road (OpenDRIVE 1.8; esmini, CarMaker, CARLA)"),
        ("crg/road_*.crg", "its 1 cm road surface (OpenCRG, attached to road.xodr)"),
        ("scene.obj, scene.glb", "the roadside voxels for a game engine"),
        ("ribbons/street_view.png", "the depth ribbons and the street view"),
        ("manifest.json", "inputs and outputs with sizes and SHA-256, parameters, timings"),
    ] {
        eprintln!("  {o}/{path:<26} {what}");
    }
}

/// What a build made.
pub(crate) struct Built {
    /// report.json as written.
    pub report_json: Vec<u8>,
    /// Checks that failed (the products are written).
    pub failed: Vec<String>,
}

/// Stages of a build: a progress bar (on a terminal) or a line per stage, and their times.
pub(crate) struct Stages {
    quiet: bool,
    tty: bool,
    n: usize,
    k: usize,
    times: Vec<(String, f64)>,
}

impl Stages {
    pub fn new(n: usize, quiet: bool) -> Stages {
        Stages { quiet, tty: !quiet && std::io::stderr().is_terminal(), n, k: 0, times: Vec::new() }
    }

    /// Runs stage `what` with a bar of `len` steps (a spinner without).
    pub fn run<T>(&mut self, what: &str, len: Option<u64>, f: impl FnOnce(&ProgressBar) -> Result<T>) -> Result<T> {
        self.k += 1;
        let prefix = format!("[{}/{}] {what}", self.k, self.n);
        let bar = if !self.tty {
            ProgressBar::hidden()
        } else if let Some(len) = len {
            let style = ProgressStyle::with_template("{prefix} [{bar:32}] {percent:>3} % {msg} (eta {eta})")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            ProgressBar::new(len).with_style(style)
        } else {
            let style = ProgressStyle::with_template("{prefix} {spinner} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
            let b = ProgressBar::new_spinner().with_style(style);
            b.enable_steady_tick(std::time::Duration::from_millis(120));
            b
        };
        bar.set_prefix(prefix.clone());
        let t = Instant::now();
        let result = f(&bar);
        bar.finish_and_clear();
        let secs = t.elapsed().as_secs_f64();
        if result.is_ok() && !self.quiet {
            eprintln!("roadscan: {prefix}: {secs:.1} s");
        }
        self.times.push((what.to_string(), secs));
        result
    }
}

/// The axis of a build.
pub(crate) struct AxisOf {
    /// Its OpenDRIVE (when fitted: as read back from its text, like units read it).
    pub odr: opendrive::OpenDrive,
    /// The file read, or the trajectory fitted (for messages).
    pub path: PathBuf,
    /// As the report names it.
    pub label: String,
    /// The fitted axis and its tolerance, and its OpenDRIVE text (for OUT/axis.xodr).
    pub fit: Option<(pipeline::axis::AxisRoad, f64, String)>,
}

impl AxisOf {
    /// The axis `s` names: read, or fitted to the trajectory (not written).
    pub fn of(s: &Settings) -> Result<AxisOf> {
        AxisOf::of_noted(s, true)
    }

    /// [`AxisOf::of`], printing what a drive path found in the points estimated unless `quiet`.
    pub fn of_noted(s: &Settings, quiet: bool) -> Result<AxisOf> {
        match &s.axis {
            Axis::File { path, .. } => Ok(AxisOf {
                odr: opendrive::read_file(path)?,
                path: path.clone(),
                label: path.display().to_string(),
                fit: None,
            }),
            Axis::Trajectory { path, offset, sensor_height, pass } => {
                let sensor_height = match sensor_height {
                    Some(h) => *h,
                    None => {
                        let (_, note) = crate::axis::drive_path(&s.input, s.crs.as_deref()).with_context(|| {
                            format!("--trajectory {}: no --sensor-height, and the points do not give it either; give --sensor-height (the scanner's height above the road, m)", path.display())
                        })?;
                        if !quiet {
                            eprintln!(
                                "roadscan: no --sensor-height: the scanner is {:.3} m above the road (the median under its track in the points){}",
                                note.sensor_height,
                                if *offset == 0.0 { "; no --offset: the reference line is the vehicle's track (the lanes found place the road's centre)" } else { "" }
                            );
                        }
                        note.sensor_height
                    }
                };
                let args = crate::axis::AxisArgs::for_trajectory(
                    path,
                    (*offset, sensor_height, pass.as_deref()),
                    s.crs.as_deref(),
                    Path::new("axis.xodr"),
                )?;
                let (built, text, _) = crate::axis::fit(&args)?;
                let odr = opendrive::read(&text).with_context(|| format!("{}: the fitted axis", path.display()))?;
                Ok(AxisOf {
                    odr,
                    path: path.clone(),
                    label: "axis.xodr".into(),
                    fit: Some((built, args.tolerance, text)),
                })
            }
            Axis::Points => {
                let path = s.input.first().cloned().unwrap_or_default();
                let args = crate::axis::AxisArgs::for_points(&s.input, s.crs.as_deref(), Path::new("axis.xodr"))?;
                let (built, text, _, _) = crate::axis::fit_noted(&args, quiet)?;
                let odr =
                    opendrive::read(&text).with_context(|| format!("{}: the drive path's axis", path.display()))?;
                Ok(AxisOf { odr, path, label: "axis.xodr".into(), fit: Some((built, args.tolerance, text)) })
            }
        }
    }

    /// The road of the axis that `s` names, checked against `--s-range`.
    pub fn road(&self, s: &Settings) -> Result<&opendrive::Road> {
        let road = match &s.axis {
            Axis::File { road: Some(id), .. } => {
                self.odr.road(id).with_context(|| format!("{}: no road with id '{id}'", self.path.display()))?
            }
            _ => self.odr.roads.first().with_context(|| format!("{}: no roads", self.path.display()))?,
        };
        if let Some((a, b)) = s.s_range {
            if a < 0.0 || b > road.length + 1e-9 {
                bail!("--s-range {a}..{b}: road {} is {} m long", road.id, road.length);
            }
        }
        Ok(road)
    }

    /// The inputs of `s`, opened against this axis (a bad file fails before any work).
    pub fn inputs(&self, s: &Settings, quiet: bool) -> Result<crate::inputs::Inputs> {
        crate::inputs::Inputs::open(&self.odr, &self.path, s.crs.as_deref(), &s.input, quiet)
    }

    /// Writes the fitted axis (if any) as `dir/axis.xodr`.
    pub fn write_into(&self, dir: &Path) -> Result<()> {
        if let Some((_, _, text)) = &self.fit {
            voxel::write_atomic(&dir.join("axis.xodr"), |w| w.write_all(text.as_bytes()))?;
        }
        Ok(())
    }
}

/// An error about road `road` of the axis source the user gave (not a staged copy).
pub(crate) fn on_road(s: &Settings, road: &opendrive::Road) -> impl Fn(String) -> anyhow::Error {
    let source = match &s.axis {
        Axis::File { path, .. } | Axis::Trajectory { path, .. } => path.display().to_string(),
        Axis::Points => "axis.xodr (the drive path of the inputs)".to_string(),
    };
    let id = road.id.clone();
    move |e: String| anyhow::anyhow!("{source}: road {id}: {e}")
}

/// The roadside builder's options of a build (`part`: a unit's share of the points).
pub(crate) fn roadside_options(s: &Settings, part: Option<(f64, f64)>) -> RoadsideOptions {
    RoadsideOptions {
        buffer: s.buffer,
        s_range: s.s_range,
        voxel_size: Some(s.voxel_size),
        origin: None,
        ribbons: Some(RibbonOptions { cell: s.ribbon_cell, ..Default::default() }),
        sections: Some(SectionOptions { half_width: s.half_width, ..Default::default() }),
        part,
        points_box: None,
    }
}

/// The surface builder's options of a build, spilling into `dir` (a killed build leaves its
/// spill where the next run clears it); `unit`: a unit's share, `s_range`: the grid's.
pub(crate) fn surface_options(
    s: &Settings,
    dir: &Path,
    unit: Option<SurfaceUnit>,
    s_range: Option<(f64, f64)>,
) -> SurfaceOptions {
    SurfaceOptions {
        cell: s.cell,
        v_range: Some((-s.half_width, s.half_width)),
        s_range,
        z: ZMode::Residual,
        spill_dir: Some(dir.to_path_buf()),
        unit,
        ..Default::default()
    }
}

/// Stage: the points, once, into the builders; returns the seconds it took and the points
/// read from each input.
pub(crate) fn read_points(
    st: &mut Stages,
    inputs: crate::inputs::Inputs,
    mut side: Option<&mut RoadsideBuilder>,
    surface: &mut SurfaceBuilder,
    what: &str,
) -> Result<(f64, Vec<(usize, u64)>)> {
    let t = Instant::now();
    let total = inputs.total();
    let counts = st.run(what, Some(total), |bar| {
        inputs.stream_reporting(
            |done, _| bar.set_position(done),
            |p| {
                if let Some(side) = side.as_deref_mut() {
                    let rgb = (!p.rgb.is_empty()).then_some(p.rgb.as_slice());
                    let cols =
                        PointColumns { x: &p.x, y: &p.y, z: &p.z, intensity: &p.intensity, class: &p.class, rgb };
                    side.add(cols).map_err(anyhow::Error::from)?;
                }
                surface.add(&p.x, &p.y, &p.z).map_err(anyhow::Error::msg)
            },
        )
    })?;
    Ok((t.elapsed().as_secs_f64(), counts))
}

/// The surveyed road (read back), its OpenDRIVE text, what was measured, and the part of the
/// axis road it is (None: all of it).
pub(crate) type Surveyed = (opendrive::OpenDrive, String, pipeline::road::SurveyReport, Option<(f64, f64)>);

/// The products cover the surveyed s range and this much more at either end (within the road), m.
pub(crate) const PART_MARGIN: f64 = 2.0;

/// The part of the axis road the products cover: the surveyed s range `surveyed` (within
/// `seen`, the s extent of the road-surface points, when there are any: the cross sections'
/// rows are coarser than the points; rounded inward to whole cells of `cell`), widened by
/// [`PART_MARGIN`] and clamped to the road, its start rounded down to whole cells of `cell`
/// (so that the CRG's u keeps the grid's lattice); None when that is the whole road.
pub(crate) fn part_of(
    road: &opendrive::Road,
    surveyed: Option<(f64, f64)>,
    seen: Option<(f64, f64)>,
    cell: f64,
) -> Option<(f64, f64)> {
    let (lo, hi) = surveyed?;
    let (lo, hi) = match seen {
        Some((a, b)) if a.max(lo) < b.min(hi) => (a.max(lo), b.min(hi)),
        _ => (lo, hi),
    };
    // Inward to whole cells: points a few millimetres beyond a whole cell do not widen the part.
    let (lo, hi) = match ((lo / cell - 1e-6).ceil() * cell, (hi / cell + 1e-6).floor() * cell) {
        (l, h) if l < h => (l, h),
        _ => (lo, hi),
    };
    let a = (lo - PART_MARGIN).max(0.0);
    let a = (a / cell + 1e-9).floor() * cell;
    let b = (hi + PART_MARGIN).min(road.length);
    (a > 0.0 || b < road.length).then_some((a, b)).filter(|&(a, b)| a < b)
}

/// Cuts the surveyed road (the first of `plain`) to `a..b` of its s (`road_part`) and puts
/// what was measured in the part's s.
pub(crate) fn cut_survey(
    plain: &mut opendrive::OpenDrive,
    survey: &mut pipeline::road::SurveyReport,
    (a, b): (f64, f64),
) -> std::result::Result<(), String> {
    plain.roads[0] = opendrive::road_part(&plain.roads[0], a, b).map_err(|e| e.to_string())?;
    let shift = |r: &mut (f64, f64)| *r = (r.0 - a, r.1 - a);
    survey.s_range.iter_mut().for_each(shift);
    for m in &mut survey.markings {
        shift(&mut m.s_range);
        m.samples.iter_mut().for_each(|p| p.0 -= a);
    }
    for c in survey.curbs.iter_mut().flatten() {
        c.samples.iter_mut().for_each(|p| p.0 -= a);
    }
    Ok(())
}

/// The surveyed road from the cross sections of `side`, as read back from its OpenDRIVE text
/// (so a build and its units grid against the same road), what was measured, and the part of
/// the axis road it is ([`part_of`], `seen`: the s extent of the CRG's candidates; None: all
/// of it): a road cut to the part starts at s 0, and what was measured is in its s. An error
/// when no point came near the road.
pub(crate) fn survey_of(
    s: &Settings,
    axis: &AxisOf,
    road: &opendrive::Road,
    side: &Roadside,
    seen: Option<(f64, f64)>,
) -> Result<Surveyed> {
    if side.points.1 == 0 {
        bail!("no points within {} m of road {} (check the axis, the road id and the CRS)", s.buffer, road.id);
    }
    let context = on_road(s, road);
    let sections = side.sections.as_ref().context("no cross sections were built")?;
    let (mut plain, mut survey) =
        survey_road(&axis.odr, road, sections, &[], &SurveyOptions::default()).map_err(&context)?;
    let part = part_of(road, survey.s_range, seen, s.cell);
    if let Some(p) = part {
        cut_survey(&mut plain, &mut survey, p).map_err(&context)?;
    }
    if plain.roads[0].lanes.lane_sections.iter().all(|sec| sec.left.is_none() && sec.right.is_none()) {
        return Err(context(format!(
            "no lanes found in the points (no marking lines or curbs within --half-width {} m of the reference line): check the axis and --offset",
            s.half_width
        )));
    }
    let text = opendrive::write(&plain, &opendrive::WriteOptions::default())?;
    let plain = opendrive::read(&text).context("the surveyed road does not read back")?;
    Ok((plain, text, survey, part))
}

/// Stage: the CRG tiles `crg/road_NNN.crg` in `dir` (a unit's only, for a unit).
pub(crate) fn grid_tiles(
    st: &mut Stages,
    mut surface: SurfaceBuilder,
    s: &Settings,
    dir: &Path,
    context: &dyn Fn(String) -> anyhow::Error,
) -> Result<(pipeline::SurfaceGrid, Vec<PathBuf>)> {
    let crg_dir = dir.join("crg");
    std::fs::create_dir_all(&crg_dir).with_context(|| format!("{}: cannot create", crg_dir.display()))?;
    st.run("gridding the 1 cm road surface (CRG tiles)", Some(100), |bar| {
        let bar = bar.clone();
        surface.on_progress(move |done, all| bar.set_position((100 * done / all.max(1)) as u64));
        surface.write_tiles(s.tile, |k, _| crg_dir.join(format!("road_{k:03}.crg"))).map_err(context)
    })
}

/// What the last stages take: the road, the tiles, the roadside.
pub(crate) struct Gathered<'a> {
    pub axis: &'a AxisOf,
    pub plain: &'a opendrive::OpenDrive,
    pub survey: pipeline::road::SurveyReport,
    /// The part of the axis road that `plain` is (None: all of it).
    pub part: Option<(f64, f64)>,
    pub grid: pipeline::SurfaceGrid,
    /// The tiles, relative to the output directory.
    pub tile_paths: Vec<PathBuf>,
    pub side: &'a Roadside,
    pub info: InputInfo,
    /// The passes' registration, as the report gives it (null: none).
    pub registration: Value,
    pub read_secs: f64,
    pub hashing: std::thread::JoinHandle<Result<Vec<(u64, String)>>>,
}

/// Builds every product of `s` into the directory `dir`.
pub(crate) fn build_into(s: &Settings, dir: &Path, quiet: bool) -> Result<Built> {
    let t0 = Instant::now();
    let fitted = matches!(s.axis, Axis::Trajectory { .. } | Axis::Points);
    let mut st = Stages::new(if fitted { 6 } else { 5 }, quiet);
    let hashing = hash_inputs(s);

    // 1. The axis.
    let what = match s.axis {
        Axis::Points => "axis fitted to the drive path found in the points",
        _ => "axis fitted to the trajectory",
    };
    let axis = if fitted { st.run(what, None, |_| AxisOf::of_noted(s, quiet))? } else { AxisOf::of(s)? };
    axis.write_into(dir)?;
    let road = axis.road(s)?;
    let s = &s.for_road(road);

    // 2. The passes registered (a read of their times and heights), then the points, once,
    // into both builders.
    let mut inputs = axis.inputs(s, quiet)?;
    let registration = register_passes(&mut st, &mut inputs, s, || axis.inputs(s, true), quiet)?;
    let info = InputInfo { crs: inputs.crs.clone(), road: road.id.clone() };
    let context = on_road(s, road);
    let offset = axis.odr.header.offset;
    let points_box = inputs.points_box();
    let mut side = RoadsideBuilder::new(road, offset, &RoadsideOptions { points_box, ..roadside_options(s, None) })
        .map_err(&context)?;
    // Declared before the surface builder, which borrows it later: dropped after it.
    #[allow(clippy::needless_late_init)] // the drop order needs it
    let plain: opendrive::OpenDrive;
    let mut surface =
        SurfaceBuilder::new(road, offset, SurfaceOptions { points_box, ..surface_options(s, dir, None, s.s_range) })
            .map_err(&context)?;
    let what = "reading the points (voxels, ribbons, cross sections, CRG points)";
    let (read_secs, _) = read_points(&mut st, inputs, Some(&mut side), &mut surface, what)?;
    let mut side = side.finish().map_err(&context)?;

    // 3. The surveyed road (the part of the axis road surveyed), then the CRG tiles as heights
    // above its surface; the roadside in its s.
    let (road_plain, _, survey, part) = survey_of(s, &axis, road, &side, surface.seen().s_range)?;
    plain = road_plain;
    let shift = part.map_or(0.0, |p| p.0);
    surface.retarget(&plain.roads[0], None, shift).map_err(&context)?;
    if let Some(p) = part {
        side.cut_to(p).map_err(&context)?;
    }
    let (grid, tile_paths) = grid_tiles(&mut st, surface, s, dir, &context)?;
    let tile_paths = tile_paths.iter().map(|p| p.strip_prefix(dir).unwrap_or(p).to_path_buf()).collect();
    let registration = registration.as_ref().map_or(Value::Null, registration_summary);
    let g = Gathered {
        axis: &axis,
        plain: &plain,
        survey,
        part,
        grid,
        tile_paths,
        side: &side,
        info,
        registration,
        read_secs,
        hashing,
    };
    finish_into(s, dir, st, t0, g)
}

/// Stage: the passes' heights registered ([`crate::inputs::Inputs::register`]; `again` opens
/// the inputs once more for it), unless `--no-register` or the points carry no GPS time.
pub(crate) fn register_passes(
    st: &mut Stages,
    inputs: &mut crate::inputs::Inputs,
    s: &Settings,
    again: impl FnOnce() -> Result<crate::inputs::Inputs>,
    quiet: bool,
) -> Result<Option<Registration>> {
    if !s.register || !inputs.have_time() {
        return Ok(None);
    }
    st.n += 1;
    let again = again()?;
    let total = again.total();
    let what = "registering the passes (their heights where the survey saw the ground twice)";
    let r = st.run(what, Some(total), |bar| inputs.register(again, |done, _| bar.set_position(done)))?;
    if let (Some(r), false) = (&r, quiet) {
        eprintln!(
            "roadscan: passes registered: they disagreed by {:.1} mm RMS in {} places, {:.1} mm after (corrections up to {:.1} mm)",
            r.rms_before * 1e3,
            r.kept,
            r.rms_after * 1e3,
            r.max_abs() * 1e3
        );
    }
    Ok(r)
}

/// The registration as the report gives it.
pub(crate) fn registration_summary(r: &Registration) -> Value {
    json!({
        "what": "the trajectory's vertical error as a function of GPS time, from where the passes saw the same ground, taken off every point (half of each disagreement to each pass)",
        "observations": r.observations,
        "kept": r.kept,
        "rms_disagreement_before_m": r.rms_before,
        "rms_disagreement_after_m": r.rms_after,
        "max_correction_m": r.max_abs(),
        "knot_spacing_s": r.dt,
    })
}

/// The registration whole (its knots), as a plan keeps it for the work units.
pub(crate) fn registration_record(r: &Registration) -> Value {
    json!({
        "t0": r.t0, "dt": r.dt, "dz": r.dz, "observations": r.observations, "kept": r.kept,
        "rms_before": r.rms_before, "rms_after": r.rms_after,
    })
}

/// A registration back from [`registration_record`]'s JSON (null: none).
pub(crate) fn registration_of(v: &Value) -> Option<Registration> {
    let f = |k: &str| v[k].as_f64();
    let dz: Vec<f64> = v["dz"].as_array()?.iter().map(Value::as_f64).collect::<Option<Vec<f64>>>()?;
    (dz.len() >= 2 && f("dt")? > 0.0).then_some(())?;
    Some(Registration {
        t0: f("t0")?,
        dt: f("dt")?,
        dz,
        observations: v["observations"].as_u64()? as usize,
        kept: v["kept"].as_u64()? as usize,
        rms_before: f("rms_before")?,
        rms_after: f("rms_after")?,
    })
}

/// The inputs' hashes, on a thread of their own while the points are read.
pub(crate) fn hash_inputs(s: &Settings) -> std::thread::JoinHandle<Result<Vec<(u64, String)>>> {
    let paths = s.input.clone();
    std::thread::spawn(move || paths.iter().map(|p| hash_file(p)).collect::<Result<Vec<_>>>())
}

/// The last stages: each tile's features, render and checks, the road with its objects and
/// CRG links, the roadside, the report and the manifest.
pub(crate) fn finish_into(s: &Settings, dir: &Path, mut st: Stages, t0: Instant, g: Gathered) -> Result<Built> {
    // 4. Each tile in turn (one in memory): its potholes and manholes, its render with them
    // marked, its coverage and checks; then the road with the objects and the links.
    let tiles = st.run("potholes, manholes, renders and the CRG links", Some(g.tile_paths.len() as u64), |bar| {
        let (mut features, mut links, mut tiles) = (Vec::new(), Vec::new(), Vec::new());
        for rel in &g.tile_paths {
            let file = rel.display().to_string();
            let crg = opencrg::read_file(dir.join(rel))?;
            let found = pipeline::road::find_depressions(&crg);
            let marks = found
                .iter()
                .map(|f| [f.s - 0.5 * f.length, f.s + 0.5 * f.length, f.t - 0.5 * f.width, f.t + 0.5 * f.width])
                .collect();
            // About 2.5 M pixels: 2 cm per pixel on a 150 m tile, strips of 2,500 pixels.
            let png = file.replace(".crg", ".png");
            let opts = opencrg::render::RenderOptions {
                title: file.clone(),
                marks,
                max_pixels: 2_500_000,
                strip_width: 2500,
                ..Default::default()
            };
            opencrg::render::render(&crg, &dir.join(&png), &opts)?;
            features.extend(found);
            links.push(pipeline::road::crg_link(&file, &crg));
            tiles.push(report::Tile::of(file, png, &crg));
            bar.inc(1);
        }
        Ok((features, links, tiles))
    })?;
    let (mut features, links, tiles) = tiles;
    let mut odr = g.plain.clone();
    pipeline::road::attach_surface(&mut odr.roads[0], &mut features, links);
    let mut survey = g.survey;
    survey.features = features;
    crate::surveyed::write_checked(&odr, &dir.join("road.xodr"))?;
    let side = g.side;

    // 5. The roadside.
    let voxels = st.run("roadside voxels and depth ribbons", None, |_| {
        let (obj, glb) = (dir.join("scene.obj"), dir.join("scene.glb"));
        let label = PathBuf::from(&g.axis.label);
        let out = VoxelOut { obj: &obj, glb: Some(&glb), colouring: voxel::Colouring::Class, axis: &label };
        let v = write_voxels(side, &g.info, &out, s.buffer)?;
        write_ribbons(side, &g.info, &dir.join("ribbons"), s.ribbon_cell, &label)?;
        Ok(v)
    })?;

    // 6. Report and manifest.
    // The part of the axis road that road.xodr is, as the report and the manifest record it.
    let part = g.part.map(|(a, b)| {
        json!({"road": g.info.road, "s": [a, b], "margin": PART_MARGIN,
               "note": format!("road.xodr covers s {a}..{b} of the axis road {} (its s 0 is the axis road's s {a}); every product is in its s", g.info.road)})
    });
    let hashes = g.hashing.join().map_err(|_| anyhow::anyhow!("internal: the hashing thread failed"))??;
    let mut failed = Vec::new();
    let times_so_far = st.times.clone();
    let report_json = st.run("report and manifest", None, |_| {
        let total_secs = t0.elapsed().as_secs_f64();
        let perf = json!({
            "points_read": side.points.0,
            "seconds": total_secs,
            "reading_seconds": g.read_secs,
            "points_per_second": side.points.0 as f64 / total_secs.max(1e-9),
            "peak_rss_mb": peak_rss_mb(),
            "threads": std::thread::available_parallelism().map_or(1, |n| n.get()),
        });
        let facts = report::Facts {
            axis_label: &g.axis.label,
            axis_fit: g.axis.fit.as_ref().map(|(b, tol, _)| (b, *tol)),
            odr: &odr,
            axis: &g.axis.odr,
            survey: &survey,
            grid: &g.grid,
            tiles: &tiles,
            voxels: &voxels,
            side,
            inputs: &s.input.iter().map(|p| shown(p, dir)).collect::<Vec<_>>(),
            crs: g.info.crs.as_ref().map(|c| c.0.as_str()),
        };
        let mut rep = report::json(&facts);
        if let Some(part) = &part {
            rep["road"]["part_of_axis"] = part.clone();
        }
        rep["registration"] = g.registration.clone();
        rep["performance"] = perf;
        rep["stages"] = st_times(&times_so_far);
        for c in rep["checks"].as_array().into_iter().flatten() {
            if c["pass"] == false {
                failed.push(format!(
                    "check failed: {}: {}",
                    c["name"].as_str().unwrap_or(""),
                    c["detail"].as_str().unwrap_or("")
                ));
            }
        }
        let text = write_json(&dir.join("report.json"), &rep)?;
        let html = report::html(&rep, &Plots::of(&odr), &tiles);
        voxel::write_atomic(&dir.join("report.html"), |w| w.write_all(html.as_bytes()))?;
        Ok(text)
    })?;
    write_manifest(s, dir, &hashes, &st.times, t0.elapsed().as_secs_f64(), part.as_ref())?;
    Ok(Built { report_json, failed })
}

fn st_times(times: &[(String, f64)]) -> Value {
    Value::Array(times.iter().map(|(w, t)| json!({"stage": w, "seconds": t})).collect())
}

/// Size and SHA-256 (hex) of the file at `path`.
fn hash_file(path: &Path) -> Result<(u64, String)> {
    use sha2::Digest;
    let mut f = std::fs::File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    let mut h = sha2::Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf).with_context(|| format!("{}: cannot read", path.display()))?;
        if k == 0 {
            break;
        }
        h.update(&buf[..k]);
        n += k as u64;
    }
    Ok((n, h.finalize().iter().map(|b| format!("{b:02x}")).collect()))
}

/// Files under `dir`, relative to it, in sorted order.
fn files_under(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(dir.join(&rel))
            .with_context(|| format!("{}: cannot list", dir.join(&rel).display()))?
            .collect::<std::io::Result<_>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let p = rel.join(e.file_name());
            if e.file_type()?.is_dir() {
                todo.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// manifest.json: inputs (size, SHA-256), parameters, versions, outputs (size, SHA-256),
/// timings.
fn write_manifest(
    s: &Settings,
    dir: &Path,
    hashes: &[(u64, String)],
    times: &[(String, f64)],
    secs: f64,
    part: Option<&Value>,
) -> Result<()> {
    let inputs: Vec<Value> =
        s.input.iter().zip(hashes).map(|(p, (n, h))| json!({"path": shown(p, dir), "bytes": n, "sha256": h})).collect();
    let mut outputs = Vec::new();
    for rel in files_under(dir)? {
        if rel == Path::new("manifest.json") || is_input(&rel, s, dir) {
            continue;
        }
        let (n, h) = hash_file(&dir.join(&rel))?;
        outputs.push(json!({"path": rel.display().to_string(), "bytes": n, "sha256": h}));
    }
    let mut m = json!({
        "roadscan": {"version": env!("CARGO_PKG_VERSION")},
        "formats": {"opendrive": "1.8", "opencrg": "KRBI (OpenCRG 1.2)", "las": "1.0-1.4 in", "gltf": "2.0 binary"},
        "inputs": inputs,
        "parameters": s.to_json(),
        "outputs": outputs,
        "timings": {"seconds": secs, "stages": st_times(times)},
    });
    if let Some(part) = part {
        m["road_part"] = part.clone();
    }
    write_json(&dir.join("manifest.json"), &m)?;
    Ok(())
}

/// Writes `v` as pretty JSON with a final newline, atomically; returns the bytes.
pub(crate) fn write_json(path: &Path, v: &Value) -> Result<Vec<u8>> {
    let mut text = serde_json::to_vec_pretty(v)?;
    text.push(b'\n');
    voxel::write_atomic(path, |w| w.write_all(&text))?;
    Ok(text)
}

/// Whether `rel` (under `dir`) is one of the inputs (the demo keeps its survey there).
fn is_input(rel: &Path, s: &Settings, dir: &Path) -> bool {
    s.input.iter().any(|p| p == &dir.join(rel))
}

/// A path as the manifest shows it: relative to the output when inside it, else as given.
fn shown(p: &Path, dir: &Path) -> String {
    p.strip_prefix(dir).unwrap_or(p).display().to_string()
}

/// Peak resident memory of this process, MB (Linux; None elsewhere).
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}
