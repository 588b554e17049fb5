//! `roadscan axis`: an OpenDRIVE reference line fitted to a trajectory, a polyline, an
//! OpenStreetMap way, an existing road, or the drive path found in the points themselves.

use crate::exit;
use anyhow::Result;
use roadscan::axis::{kind_name, AxisConfig, DrivePathNote};
use roadscan::config::within;
use roadscan::staging::{with_extension, Outputs};
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `axis`.
#[derive(clap::Args, Debug)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["trajectory", "polyline", "osm", "xodr", "points"])))]
pub struct AxisArgs {
    /// A vehicle trajectory CSV with a header naming x, y (or easting, northing) and
    /// optionally z and pass.
    #[arg(long)]
    pub trajectory: Option<PathBuf>,
    /// Trajectory: the road centre's distance to the left of the vehicle's track, m (negative:
    /// to the right).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true, requires = "trajectory")]
    pub offset: f64,
    /// Trajectory: the pass to use (its `pass` column; default: the first row's).
    #[arg(long, requires = "trajectory")]
    pub pass: Option<String>,
    /// Trajectory: the sensor's height above the road, subtracted from z for the elevation, m.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true, requires = "trajectory")]
    pub sensor_height: f64,
    /// A polyline: CSV rows x,y[,z] or a GeoJSON LineString (.geojson/.json, lon/lat).
    #[arg(long)]
    pub polyline: Option<PathBuf>,
    /// An OpenStreetMap XML file (with --way).
    #[arg(long, requires = "way")]
    pub osm: Option<PathBuf>,
    /// The OSM way id.
    #[arg(long, requires = "osm")]
    pub way: Option<String>,
    /// An OpenDRIVE file whose road (--road) is sampled every --step metres and fitted again.
    #[arg(long, requires = "road")]
    pub xodr: Option<PathBuf>,
    /// The road id in --xodr; also the id of the written road (default 1).
    #[arg(long)]
    pub road: Option<String>,
    /// LAS/LAZ files with GPS time and scan angles: the axis is the scanner's drive path found
    /// in them (the longest pass; its height less the sensor height estimated from the points
    /// under the scanner).
    #[arg(long, num_args = 1..)]
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
            offset: self.offset,
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
    let quiet = progress.quiet();
    within("tolerance", a.tolerance, 1e-4, 10.0)?;
    within("min-length", a.min_length, 0.01, 10_000.0)?;
    within("lane-width", a.lane_width, 0.5, 20.0)?;
    within("step", a.step, 0.001, 10_000.0)?;
    within("offset", a.offset, -100.0, 100.0)?;
    within("sensor-height", a.sensor_height, -100.0, 100.0)?;
    let outputs = Outputs::new(a.config().inputs());
    let staged = outputs.file(with_extension("--out", &a.out, &["xodr", "xml"])?)?;
    let t0 = std::time::Instant::now();
    let (built, text, source, note) = roadscan::axis::fit_noted(&a.config(), progress)?;
    voxel::write_atomic(&staged, |w| w.write_all(text.as_bytes()))?;
    outputs.commit()?;
    let fit = &built.plan;
    let within = built.within(a.tolerance);
    let mut out = std::io::stdout().lock();
    if a.json {
        report_json(&mut out, a, &built, &source, note.as_ref())?;
    } else if !quiet {
        report_text(&mut out, &built)?;
    }
    if !quiet {
        eprintln!(
            "roadscan: wrote {} ({} records, {:.1} m, {:.1} mm from the line through the {} vertices, noise {:.1} mm, {} outliers left out) in {:.2} s",
            a.out.display(),
            fit.geometries.len(),
            fit.geometries.iter().map(|g| g.length).sum::<f64>(),
            fit.deviation * 1e3,
            fit.stations.len(),
            fit.noise * 1e3,
            fit.outliers,
            t0.elapsed().as_secs_f64()
        );
    }
    if !within {
        eprintln!(
            "roadscan: warning: the fit misses --tolerance {} m (plan view {:.4} m from the local mean of the vertices{}); records of at least --min-length {} m cannot follow the input closer",
            a.tolerance,
            fit.deviation,
            built.elevation.as_ref().map_or(String::new(), |e| format!(", elevation max {:.4} m", e.max)),
            a.min_length
        );
        return Ok(exit::FINDINGS);
    }
    Ok(exit::OK)
}

fn report_text(out: &mut impl Write, b: &pipeline::axis::AxisRoad) -> Result<()> {
    writeln!(out, "record  kind     s (m)       length (m)  curvature (1/m)        max (mm)  rms (mm)  vertices")?;
    for (i, (g, r)) in b.plan.geometries.iter().zip(&b.plan.records).enumerate() {
        let (k0, k1) = g.kind.end_curvatures().unwrap_or((0.0, 0.0));
        writeln!(
            out,
            "{:>6}  {:<7} {:>10.3}  {:>10.3}  {:>+9.6} {:>+9.6}  {:>8.2}  {:>8.2}  {:>8}",
            i,
            kind_name(&g.kind),
            g.s,
            g.length,
            k0,
            k1,
            r.max * 1e3,
            r.rms * 1e3,
            r.points
        )?;
    }
    let p = &b.plan;
    writeln!(out, "plan view: max {:.2} mm, rms {:.2} mm", p.max * 1e3, p.rms * 1e3)?;
    writeln!(
        out,
        "noise: {:.2} mm estimated, {} outliers left out; line within {:.2} mm of the local mean of the vertices (runs up to {:.1} m)",
        p.noise * 1e3,
        p.outliers,
        p.deviation * 1e3,
        p.window
    )?;
    if let Some(e) = &b.elevation {
        writeln!(
            out,
            "elevation: {} records, max {:.2} mm, rms {:.2} mm, {} heights left out as outliers",
            e.records.len(),
            e.max * 1e3,
            e.rms * 1e3,
            e.rejected
        )?;
    }
    Ok(())
}

/// The fit report as JSON.
fn report_json(
    out: &mut impl Write,
    a: &AxisArgs,
    b: &pipeline::axis::AxisRoad,
    source: &str,
    note: Option<&DrivePathNote>,
) -> Result<()> {
    let drive_path = note.map(|n| {
        let passes: Vec<_> = n
            .passes
            .iter()
            .map(|((t0, t1), len, k)| json!({"gps_time": [t0, t1], "length_m": len, "samples": k}))
            .collect();
        json!({"passes": passes, "pass": n.chosen + 1, "follows": "scanner track", "sensor_height_m": n.sensor_height,
               "windows": n.windows, "rejected": n.rejected, "rms_m": n.rms})
    });
    let records = roadscan::axis::records_json(b);
    let p = &b.plan;
    let mut v = json!({
        "source": source, "out": a.out.display().to_string(), "tolerance_m": a.tolerance, "origin": b.origin,
        "max_m": p.max, "rms_m": p.rms, "noise_m": p.noise, "outliers": p.outliers, "deviation_m": p.deviation,
        "window_m": p.window,
        "elevation": b.elevation.as_ref().map(|e| json!({"records": e.records.len(), "max_m": e.max, "rms_m": e.rms, "rejected": e.rejected})),
        "records": records,
    });
    if let Some(d) = drive_path {
        v["drive_path"] = d;
    }
    serde_json::to_writer_pretty(&mut *out, &v)?;
    writeln!(out)?;
    Ok(())
}
