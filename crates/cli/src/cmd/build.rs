//! `roadscan build` and `roadscan plan`: the flags and config file into a
//! [`BuildConfig`], the build or its work units run by the library, and what they made
//! printed.

use crate::exit;
use crate::progress::Bars;
use anyhow::{bail, Result};
use roadscan::units::UnitDone;
use roadscan::{BuildConfig, ConfigFile};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The arguments of `build`; also the keys of its TOML config (the long option names).
#[derive(clap::Args, Debug, Default, Clone)]
pub struct BuildArgs {
    /// A TOML file with any of the options below, keyed by their long names (e.g.
    /// `input = ["a.laz", "b.laz"]`, `sensor-height = 2.2`, `s-range = "0..150"`); options
    /// on the command line win; relative paths in the file are relative to the file.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// LAS/LAZ files (any number; read once, in the order given).
    #[arg(long, num_args = 1..)]
    pub input: Vec<PathBuf>,
    /// The axis: an OpenDRIVE file whose road (--road) is the frame of every product (e.g.
    /// from `roadscan axis`).
    #[arg(long, conflicts_with = "trajectory")]
    pub axis: Option<PathBuf>,
    /// Road id in --axis (default: every road of a network file, built as a network into
    /// OUT/road.xodr and OUT/roads/ID/; a file of one road: that road).
    #[arg(long)]
    pub road: Option<String>,
    /// The axis: fitted to this vehicle trajectory CSV, as `roadscan axis --trajectory` does
    /// (written to OUT/axis.xodr).
    #[arg(long)]
    pub trajectory: Option<PathBuf>,
    /// The axis: the road network of this OpenStreetMap file's ways for cars, as `roadscan axis
    /// --osm` without --way makes it (needs --crs; written to OUT/axis.xodr), built as a network.
    /// With --trajectory, the roads' lines are moved onto its passes where the survey drove them.
    #[arg(long, conflicts_with_all = ["axis", "road"])]
    pub osm: Option<PathBuf>,
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
    #[arg(long, value_parser = roadscan::config::parse_range, allow_hyphen_values = true)]
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
    pub no_register: bool,
    /// Print the report (report.json) on stdout.
    #[arg(long)]
    pub json: bool,
    /// Run work unit N of the plan `roadscan plan` made with the same options (see `plan`).
    #[arg(long)]
    pub unit: Option<usize>,
}

impl BuildArgs {
    /// The options the command line gives (a config file's are merged under them).
    fn given(&self) -> ConfigFile {
        ConfigFile {
            input: self.input.clone(),
            axis: self.axis.clone(),
            road: self.road.clone(),
            trajectory: self.trajectory.clone(),
            osm: self.osm.clone(),
            offset: self.offset,
            sensor_height: self.sensor_height,
            pass: self.pass.clone(),
            crs: self.crs.clone(),
            out: self.out.clone(),
            s_range: self.s_range,
            cell: self.cell,
            tile: self.tile,
            voxel_size: self.voxel_size,
            ribbon_cell: self.ribbon_cell,
            buffer: self.buffer,
            half_width: self.half_width,
            no_register: self.no_register,
        }
    }

    /// The build these arguments and their config file ask for.
    pub fn config(&self) -> Result<BuildConfig> {
        BuildConfig::resolve(&self.given(), self.config.as_deref())
    }
}

/// An error about an option the config file gave, named where the file gives it.
fn blame_config(a: &BuildArgs, e: anyhow::Error) -> anyhow::Error {
    roadscan::messages::blame_config(a.config.as_deref(), &std::env::args().collect::<Vec<_>>(), e)
}

/// Runs `build` (or one of its work units, `--unit`).
pub fn run(a: &BuildArgs, progress: &Bars) -> Result<u8> {
    let t0 = Instant::now();
    let run = || {
        let s = a.config()?;
        if let Some(n) = roadscan::network::network_roads(&s)? {
            if a.unit.is_some() {
                bail!("--unit: work units build one road; give --road (the axis holds a network of {n} roads)");
            }
            let built = roadscan::network::build_network(&s, progress)?;
            if a.json {
                std::io::stdout().lock().write_all(&built.report_json)?;
            }
            if !progress.quiet() {
                let surveyed = built.roads.iter().filter(|r| r.1).count();
                eprintln!(
                    "roadscan: network of {n} roads built in {:.1} s ({surveyed} surveyed); look at:",
                    t0.elapsed().as_secs_f64()
                );
                for line in roadscan::messages::network_products(&s.out) {
                    eprintln!("{line}");
                }
            }
            return crate::warn(built.failed());
        }
        let built = match a.unit {
            Some(unit) => match roadscan::units::run_unit(&s, unit, progress)? {
                UnitDone::Stage(stage) => {
                    if !progress.quiet() {
                        eprintln!("roadscan: unit {unit} ({stage:?}) done in {:.1} s", t0.elapsed().as_secs_f64());
                    }
                    return Ok(exit::OK);
                }
                UnitDone::Finished(built) => *built,
            },
            None => roadscan::build(&s, progress)?,
        };
        if a.json {
            std::io::stdout().lock().write_all(&built.report_json)?;
        }
        if !progress.quiet() {
            print_where(&s.out, false, t0);
        }
        // Even with --quiet: they explain exit code 1.
        crate::warn(built.failed())
    };
    run().map_err(|e| blame_config(a, e))
}

/// Prints where the products are (with `survey`, the demo's survey too).
pub fn print_where(out: &Path, survey: bool, t0: Instant) {
    eprintln!("roadscan: built in {:.1} s; look at:", t0.elapsed().as_secs_f64());
    for line in roadscan::messages::products(out, survey) {
        eprintln!("{line}");
    }
}

/// The arguments of `plan`.
#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    #[command(flatten)]
    pub build: BuildArgs,
    /// CRG tiles (of --tile metres) per unit: each unit covers this much road.
    #[arg(long, default_value_t = 4)]
    pub unit_tiles: usize,
}

/// Runs `plan`: the plan made (the axis fitted when fitted), its units printed as JSON lines.
pub fn plan(a: &PlanArgs, progress: &Bars) -> Result<u8> {
    let run = || {
        if a.build.unit.is_some() {
            bail!("plan lists the units; run one with `roadscan build --unit N`");
        }
        if a.build.json {
            bail!("plan prints its units as JSON lines already; --json is for build");
        }
        if a.unit_tiles == 0 {
            bail!("--unit-tiles must be at least 1");
        }
        let s = a.build.config()?;
        if let Some(n) = roadscan::network::network_roads(&s)? {
            bail!("plan: work units build one road; give --road (the axis holds a network of {n} roads)");
        }
        let planned = roadscan::units::plan(&s, a.unit_tiles, progress)?;
        let mut out = std::io::stdout().lock();
        for line in &planned.lines {
            writeln!(out, "{line}")?;
        }
        if !progress.quiet() {
            eprintln!("roadscan: {}", planned.summary());
        }
        Ok(exit::OK)
    };
    run().map_err(|e| blame_config(&a.build, e))
}
