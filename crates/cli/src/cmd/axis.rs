//! `roadscan axis`: an OpenDRIVE reference line fitted to a trajectory, a polyline, an
//! OpenStreetMap way, an existing road, or the drive path found in the points themselves.

use crate::exit;
use anyhow::Result;
use roadscan::axis::AxisConfig;
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `axis`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).multiple(true).args(["trajectory", "polyline", "osm", "xodr", "points"])))]
pub struct AxisArgs {
    /// A vehicle trajectory CSV with a header naming x, y (or easting, northing) and
    /// optionally z and pass. With --osm (no --way): the passes the roads' lines are moved onto
    /// where the survey drove them.
    #[arg(long, conflicts_with_all = ["polyline", "xodr", "points"])]
    pub trajectory: Option<PathBuf>,
    /// Trajectory: the road centre's distance to the left of the vehicle's track, m (negative:
    /// to the right) [default: 0; a network: each pass's from survey.json beside the
    /// trajectory, else 0].
    #[arg(long, allow_hyphen_values = true, requires = "trajectory")]
    pub offset: Option<f64>,
    /// Trajectory: the pass to use (its `pass` column). Without it, passes that meet at
    /// junctions become the road network they drive (passes merged where they run together,
    /// roads split at the junction areas where they branch or cross, junctions with generated
    /// connecting roads); otherwise the first row's pass.
    #[arg(long, requires = "trajectory")]
    pub pass: Option<String>,
    /// Trajectory: the sensor's height above the road, subtracted from z for the elevation, m.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true, requires = "trajectory")]
    pub sensor_height: f64,
    /// A polyline: CSV rows x,y[,z] or a GeoJSON LineString (.geojson/.json, lon/lat).
    #[arg(long, conflicts_with_all = ["osm", "xodr", "points"])]
    pub polyline: Option<PathBuf>,
    /// An OpenStreetMap XML file: with --way, that way's road; without, the road network of
    /// every way for cars (roads split where three or more ways meet, junctions with generated
    /// connecting roads there, lanes from the ways' lane tags).
    #[arg(long)]
    pub osm: Option<PathBuf>,
    /// The OSM way id.
    #[arg(long, requires = "osm", conflicts_with = "trajectory")]
    pub way: Option<String>,
    /// An OpenDRIVE file whose road (--road) is sampled every --step metres and fitted again.
    #[arg(long, requires = "road", conflicts_with_all = ["osm", "points"])]
    pub xodr: Option<PathBuf>,
    /// The road id in --xodr; also the id of the written road (default 1).
    #[arg(long)]
    pub road: Option<String>,
    /// LAS/LAZ files with GPS time and scan angles: the axis is the scanner's drive path found
    /// in them (the longest pass; its height less the sensor height estimated from the points
    /// under the scanner).
    #[arg(long, num_args = 1.., conflicts_with = "osm")]
    pub points: Vec<PathBuf>,
    /// Sampling step along an --xodr road, m.
    #[arg(long, default_value_t = 1.0)]
    pub step: f64,
    /// Output OpenDRIVE file.
    #[arg(long)]
    pub out: PathBuf,
    /// Largest distance of an input vertex from the fitted line (and of a height from the
    /// elevation), m.
    #[arg(long, default_value_t = 0.01)]
    pub tolerance: f64,
    /// Shortest record, m.
    #[arg(long, default_value_t = 1.0)]
    pub min_length: f64,
    /// The project CRS (projected; EPSG:NNNN or a PROJ string), written as geoReference.
    /// Default: the source's own CRS.
    #[arg(long)]
    pub crs: Option<String>,
    /// The CRS of a CSV source when it differs from --crs.
    #[arg(long)]
    pub source_crs: Option<String>,
    /// Width of the one driving lane written on each side, m.
    #[arg(long, default_value_t = 3.5)]
    pub lane_width: f64,
    /// Print the fit report as JSON.
    #[arg(long)]
    pub json: bool,
}

impl AxisArgs {
    /// The fit these arguments ask for.
    pub fn config(&self) -> AxisConfig {
        AxisConfig {
            trajectory: self.trajectory.clone(),
            offset: self.offset.unwrap_or(0.0),
            pass: self.pass.clone(),
            sensor_height: self.sensor_height,
            polyline: self.polyline.clone(),
            osm: self.osm.clone(),
            way: self.way.clone(),
            xodr: self.xodr.clone(),
            road: self.road.clone(),
            points: self.points.clone(),
            step: self.step,
            tolerance: self.tolerance,
            min_length: self.min_length,
            crs: self.crs.clone(),
            source_crs: self.source_crs.clone(),
            lane_width: self.lane_width,
        }
    }
}

/// Runs `axis`.
pub fn run(a: &AxisArgs, progress: &crate::progress::Bars) -> Result<u8> {
    let t0 = std::time::Instant::now();
    if a.osm.is_some() && a.way.is_none() {
        let written = roadscan::verbs::axis_network(&a.config(), &a.out)?;
        if !progress.quiet() {
            eprintln!("roadscan: {} in {:.2} s", written.wrote, t0.elapsed().as_secs_f64());
        }
        return Ok(exit::OK);
    }
    if a.trajectory.is_some() && a.pass.is_none() && a.osm.is_none() {
        if let Some(written) = roadscan::verbs::axis_passes(&a.config(), a.offset, &a.out)? {
            if !progress.quiet() {
                eprintln!("roadscan: {} in {:.2} s", written.wrote, t0.elapsed().as_secs_f64());
            }
            return Ok(exit::OK);
        }
    }
    let written = roadscan::verbs::axis(&a.config(), &a.out, progress)?;
    let mut out = std::io::stdout().lock();
    if a.json {
        serde_json::to_writer_pretty(&mut out, &written.json())?;
        writeln!(out)?;
    } else if !progress.quiet() {
        write!(out, "{written}")?;
    }
    if !progress.quiet() {
        eprintln!("roadscan: {}", written.wrote(t0.elapsed().as_secs_f64()));
    }
    let Some(missed) = written.missed() else { return Ok(exit::OK) };
    eprintln!("roadscan: warning: {missed}");
    Ok(exit::FINDINGS)
}
