//! `roadscan axis`: an OpenDRIVE reference line fitted to a trajectory, a polyline, an
//! OpenStreetMap way, an existing road, or the drive path found in the points themselves
//! (`--points`, `pipeline::drive_path`).

use crate::{exit, json_str, within};
use anyhow::{bail, Context, Result};
use opendrive::GeometryKind;
use pipeline::axis::{build_axis, AxisOptions};
use scan::axis::Polyline;
use scan::{CrsDef, Reprojection};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The most vertices an `--xodr` road is sampled into (a 200 km road at 0.1 m).
const MAX_SAMPLES: usize = 2_000_000;

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
    /// `axis --trajectory PATH` with these options and every other at its command-line
    /// default (parsed by clap, so the defaults live in one place).
    pub(crate) fn for_trajectory(
        path: &std::path::Path,
        (offset, sensor_height, pass): (f64, f64, Option<&str>),
        crs: Option<&str>,
        out: &std::path::Path,
    ) -> Result<AxisArgs> {
        use std::ffi::OsString;
        let mut argv: Vec<OsString> =
            vec!["axis".into(), "--trajectory".into(), path.into(), "--out".into(), out.into()];
        argv.extend(["--offset".into(), offset.to_string().into()]);
        argv.extend(["--sensor-height".into(), sensor_height.to_string().into()]);
        if let Some(p) = pass {
            argv.extend(["--pass".into(), p.into()]);
        }
        if let Some(c) = crs {
            argv.extend(["--crs".into(), c.into()]);
        }
        AxisArgs::from_argv(argv)
    }
}

impl AxisArgs {
    /// Parses `argv` as clap does the command line, so the defaults live in one place.
    fn from_argv(argv: Vec<std::ffi::OsString>) -> Result<AxisArgs> {
        use clap::{Args, FromArgMatches};
        let m = AxisArgs::augment_args(clap::Command::new("axis"))
            .try_get_matches_from(argv)
            .map_err(|e| anyhow::anyhow!("internal: axis arguments: {e}"))?;
        Ok(AxisArgs::from_arg_matches(&m)?)
    }

    /// `axis --points FILES...` with every other option at its command-line default.
    pub(crate) fn for_points(paths: &[PathBuf], crs: Option<&str>, out: &Path) -> Result<AxisArgs> {
        use std::ffi::OsString;
        let mut argv: Vec<OsString> = vec!["axis".into(), "--out".into(), out.into(), "--points".into()];
        argv.extend(paths.iter().map(|p| p.into()));
        if let Some(c) = crs {
            argv.extend(["--crs".into(), c.into()]);
        }
        AxisArgs::from_argv(argv)
    }
}

pub fn run(a: &AxisArgs, quiet: bool) -> Result<u8> {
    within("tolerance", a.tolerance, 1e-4, 10.0)?;
    within("min-length", a.min_length, 0.01, 10_000.0)?;
    within("lane-width", a.lane_width, 0.5, 20.0)?;
    within("step", a.step, 0.001, 10_000.0)?;
    within("offset", a.offset, -100.0, 100.0)?;
    within("sensor-height", a.sensor_height, -100.0, 100.0)?;
    let outputs = crate::outdir::Outputs::new(
        [&a.trajectory, &a.polyline, &a.osm, &a.xodr].into_iter().flatten().chain(&a.points).collect::<Vec<_>>(),
    );
    let staged = outputs.file(crate::outdir::with_extension("--out", &a.out, &["xodr", "xml"])?)?;
    let t0 = std::time::Instant::now();
    let (built, text, source, note) = fit_noted(a, quiet)?;
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

/// The axis road `a` asks for (not written), its OpenDRIVE text, checked to read back as
/// fitted, and the name of its source for messages.
pub(crate) fn fit(a: &AxisArgs) -> Result<(pipeline::axis::AxisRoad, String, String)> {
    fit_noted(a, true).map(|(b, t, s, _)| (b, t, s))
}

/// [`fit`], with what was estimated from the points (`--points`), also printed on stderr
/// unless `quiet`.
pub(crate) fn fit_noted(
    a: &AxisArgs,
    quiet: bool,
) -> Result<(pipeline::axis::AxisRoad, String, String, Option<DrivePathNote>)> {
    let (line, source, note) = read_source(a)?;
    if let (Some(n), false) = (&note, quiet) {
        eprintln!("roadscan: {}", n.text());
    }
    // The project CRS and the source's.
    let project = match (&a.crs, &line.crs) {
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
    let from = a.source_crs.as_deref().or(line.crs.as_deref()).or(given.as_deref());
    let mut xyz = line.xyz;
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
    // What a fit can be asked: a line no longer than the longest road OpenDRIVE reads.
    let length: f64 = xyz.windows(2).map(|w| (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1])).sum();
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
fn read_source(a: &AxisArgs) -> Result<(Polyline, String, Option<DrivePathNote>)> {
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
pub(crate) struct DrivePathNote {
    /// Each pass: GPS time range (s), length (m), samples.
    pub passes: Vec<((f64, f64), f64, usize)>,
    /// The pass the axis follows (index into `passes`).
    pub chosen: usize,
    /// The scanner's height above the road under it (median over the pass), m.
    pub sensor_height: f64,
    /// Windows fitted, and left out (their angles describe no vertical scan plane).
    pub windows: usize,
    pub rejected: usize,
    /// The chosen pass's largest fit residual (RMS distance of a window's points from their
    /// rays), m.
    pub rms: f64,
}

impl DrivePathNote {
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
pub(crate) fn drive_path(paths: &[PathBuf], crs: Option<&str>) -> Result<(Polyline, DrivePathNote)> {
    use pipeline::drive_path::{DrivePathBuilder, DrivePathOptions};
    let inputs = crate::inputs::Inputs::open(&opendrive::OpenDrive::default(), Path::new(""), crs, paths, true)?;
    let crs_label = inputs.crs.as_ref().map(|c| c.0.clone());
    let mut b = DrivePathBuilder::new(DrivePathOptions::default()).map_err(anyhow::Error::msg)?;
    let mut without_time = false;
    inputs.stream(false, |p| {
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
fn read_other(a: &AxisArgs) -> Result<(Polyline, String)> {
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

/// A geometry record's element name.
pub(crate) fn kind_name(k: &GeometryKind) -> &'static str {
    match k {
        GeometryKind::Line => "line",
        GeometryKind::Arc { .. } => "arc",
        GeometryKind::Spiral { .. } => "spiral",
        GeometryKind::Poly3 { .. } => "poly3",
        GeometryKind::ParamPoly3 { .. } => "paramPoly3",
    }
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

fn report_json(
    out: &mut impl Write,
    a: &AxisArgs,
    b: &pipeline::axis::AxisRoad,
    source: &str,
    note: Option<&DrivePathNote>,
) -> Result<()> {
    writeln!(out, "{{")?;
    writeln!(out, "  \"source\": {},", json_str(source))?;
    if let Some(n) = note {
        let passes: Vec<String> = n
            .passes
            .iter()
            .map(|((t0, t1), len, k)| format!("{{\"gps_time\": [{t0}, {t1}], \"length_m\": {len}, \"samples\": {k}}}"))
            .collect();
        writeln!(
            out,
            "  \"drive_path\": {{\"passes\": [{}], \"pass\": {}, \"follows\": \"scanner track\", \"sensor_height_m\": {}, \"windows\": {}, \"rejected\": {}, \"rms_m\": {}}},",
            passes.join(", "),
            n.chosen + 1,
            n.sensor_height,
            n.windows,
            n.rejected,
            n.rms
        )?;
    }
    writeln!(out, "  \"out\": {},", json_str(&a.out.display().to_string()))?;
    writeln!(out, "  \"tolerance_m\": {},", a.tolerance)?;
    writeln!(out, "  \"origin\": [{}, {}, {}],", b.origin[0], b.origin[1], b.origin[2])?;
    writeln!(out, "  \"max_m\": {}, \"rms_m\": {},", b.plan.max, b.plan.rms)?;
    writeln!(
        out,
        "  \"noise_m\": {}, \"outliers\": {}, \"deviation_m\": {}, \"window_m\": {},",
        b.plan.noise, b.plan.outliers, b.plan.deviation, b.plan.window
    )?;
    match &b.elevation {
        Some(e) => writeln!(
            out,
            "  \"elevation\": {{\"records\": {}, \"max_m\": {}, \"rms_m\": {}, \"rejected\": {}}},",
            e.records.len(),
            e.max,
            e.rms,
            e.rejected
        )?,
        None => writeln!(out, "  \"elevation\": null,")?,
    }
    writeln!(out, "  \"records\": [")?;
    let n = b.plan.geometries.len();
    for (i, (g, r)) in b.plan.geometries.iter().zip(&b.plan.records).enumerate() {
        let (k0, k1) = g.kind.end_curvatures().unwrap_or((0.0, 0.0));
        writeln!(
            out,
            "    {{\"kind\": \"{}\", \"s\": {}, \"length\": {}, \"curv_start\": {k0}, \"curv_end\": {k1}, \"max_m\": {}, \"rms_m\": {}, \"vertices\": {}}}{}",
            kind_name(&g.kind),
            g.s,
            g.length,
            r.max,
            r.rms,
            r.points,
            if i + 1 < n { "," } else { "" }
        )?;
    }
    writeln!(out, "  ]")?;
    writeln!(out, "}}")?;
    Ok(())
}
