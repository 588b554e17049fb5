//! The verbs that write one file: `axis` (a reference line fitted and written), `convert`
//! (OpenDRIVE between revisions, OpenCRG between formats) and `render` (an OpenCRG grid as a
//! PNG); each returns what it did, with the lines the tool prints.

use crate::axis::{fit_noted, kind_name, records_json, AxisConfig, DrivePathNote};
use crate::config::within;
use crate::files::{is_crg, read_xodr};
use crate::staging::{with_extension, Outputs};
use crate::Progress;
use anyhow::{bail, Context, Result};
use pipeline::axis::AxisRoad;
use serde_json::{json, Value};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// An axis fitted and written: the fit, its source and what `--points` found. Its
/// [`Display`](fmt::Display) is the fit's table: a line per record, then the plan view's,
/// the noise's and the elevation's deviations.
#[derive(Debug)]
pub struct AxisWritten {
    /// The fitted road.
    pub road: AxisRoad,
    /// The source's name, for messages.
    pub source: String,
    /// What was estimated from the points (with `--points`).
    pub note: Option<DrivePathNote>,
    /// The file written.
    pub out: PathBuf,
    /// The tolerance asked for, m.
    pub tolerance: f64,
    /// The shortest record allowed, m.
    pub min_length: f64,
}

/// Fits the axis `c` asks for and writes it to `out` (`.xodr` or `.xml`), whole or not at all;
/// the options out of their ranges are an error before anything is read.
pub fn axis(c: &AxisConfig, out: &Path, progress: &dyn Progress) -> Result<AxisWritten> {
    within("tolerance", c.tolerance, 1e-4, 10.0)?;
    within("min-length", c.min_length, 0.01, 10_000.0)?;
    within("lane-width", c.lane_width, 0.5, 20.0)?;
    within("step", c.step, 0.001, 10_000.0)?;
    within("offset", c.offset, -100.0, 100.0)?;
    within("sensor-height", c.sensor_height, -100.0, 100.0)?;
    let outputs = Outputs::new(c.inputs());
    let staged = outputs.file(with_extension("--out", out, &["xodr", "xml"])?)?;
    let (road, text, source, note) = fit_noted(c, progress)?;
    voxel::write_atomic(&staged, |w| w.write_all(text.as_bytes()))?;
    outputs.commit()?;
    let (tolerance, min_length) = (c.tolerance, c.min_length);
    Ok(AxisWritten { road, source, note, out: out.to_path_buf(), tolerance, min_length })
}

/// What [`axis_network`] wrote.
#[derive(Debug, Clone)]
pub struct NetworkWritten {
    /// Roads, junctions and connecting roads made, ways left out.
    pub notes: pipeline::network::NetworkNotes,
    /// What was written, as one line.
    pub wrote: String,
}

/// A road whose line the passes cover less than this share of keeps its OSM geometry (flagged).
pub const DRIVEN: f64 = 0.9;

/// Writes the road network of every car-road way of `c.osm` (no `--way`) to `out`
/// ([`crate::axis::osm_network`]), whole or not at all.
pub fn axis_network(c: &AxisConfig, out: &Path) -> Result<NetworkWritten> {
    within("tolerance", c.tolerance, 1e-4, 10.0)?;
    within("min-length", c.min_length, 0.01, 10_000.0)?;
    within("lane-width", c.lane_width, 0.5, 20.0)?;
    let outputs = Outputs::new(c.inputs());
    let staged = outputs.file(with_extension("--out", out, &["xodr", "xml"])?)?;
    let (_, notes, text) = crate::axis::osm_network(c)?;
    voxel::write_atomic(&staged, |w| w.write_all(text.as_bytes()))?;
    outputs.commit()?;
    let dropped = if notes.dropped.is_empty() {
        String::new()
    } else {
        format!("; ways too short between junctions left out: {}", notes.dropped.join(", "))
    };
    let driven = if c.trajectory.is_some() {
        let kept: Vec<String> = notes
            .driven
            .iter()
            .filter(|(_, share)| share.is_nan() || *share < DRIVEN)
            .map(|(id, share)| format!("{id} ({:.0} %)", 100.0 * share))
            .collect();
        format!(
            "; lines moved onto the passes; the ways' own kept on {} roads the passes drive less than {:.0} % of{}",
            kept.len(),
            100.0 * DRIVEN,
            if kept.is_empty() { String::new() } else { format!(": {}", kept.join(", ")) }
        )
    } else {
        String::new()
    };
    let wrote = format!(
        "wrote {} ({} roads, {} junctions with {} connecting roads generated{dropped}{driven})",
        out.display(),
        notes.roads,
        notes.junctions,
        notes.connecting
    );
    Ok(NetworkWritten { notes, wrote })
}

/// Writes the road network the passes of `c.trajectory` drive to `out`
/// ([`crate::axis::passes_network`]; `offset`: every pass's, else survey.json's per pass),
/// whole or not at all; None (nothing written) when the passes meet at no junction.
pub fn axis_passes(c: &AxisConfig, offset: Option<f64>, out: &Path) -> Result<Option<NetworkWritten>> {
    within("lane-width", c.lane_width, 0.5, 20.0)?;
    let Some(path) = &c.trajectory else { anyhow::bail!("internal: no trajectory") };
    let Some((_, notes, text)) = crate::axis::passes_network(path, offset, c.crs.clone())? else { return Ok(None) };
    let outputs = Outputs::new(c.inputs());
    let staged = outputs.file(with_extension("--out", out, &["xodr", "xml"])?)?;
    voxel::write_atomic(&staged, |w| w.write_all(text.as_bytes()))?;
    outputs.commit()?;
    let p = &notes.passes;
    let dropped = if notes.network.dropped.is_empty() {
        String::new()
    } else {
        format!("; roads too short between junctions left out: {}", notes.network.dropped.join(", "))
    };
    let wrote = format!(
        "wrote {} ({} passes merged into {} roads meeting at {} junctions, {} paths through junctions replaced by {} connecting roads generated{dropped})",
        out.display(),
        p.traces,
        notes.network.roads,
        notes.network.junctions,
        p.inside_junctions,
        notes.network.connecting
    );
    Ok(Some(NetworkWritten { notes: notes.network, wrote }))
}

impl AxisWritten {
    /// Whether the fit is within the tolerance.
    pub fn within(&self) -> bool {
        self.road.within(self.tolerance)
    }

    /// What was written, after `secs` seconds, as one line.
    pub fn wrote(&self, secs: f64) -> String {
        let fit = &self.road.plan;
        format!(
            "wrote {} ({} records, {:.1} m, {:.1} mm from the line through the {} vertices, noise {:.1} mm, {} outliers left out) in {secs:.2} s",
            self.out.display(),
            fit.geometries.len(),
            fit.geometries.iter().map(|g| g.length).sum::<f64>(),
            fit.deviation * 1e3,
            fit.stations.len(),
            fit.noise * 1e3,
            fit.outliers,
        )
    }

    /// The warning when the fit misses the tolerance.
    pub fn missed(&self) -> Option<String> {
        let elevation =
            self.road.elevation.as_ref().map_or(String::new(), |e| format!(", elevation max {:.4} m", e.max));
        (!self.within()).then(|| format!(
            "the fit misses --tolerance {} m (plan view {:.4} m from the local mean of the vertices{elevation}); records of at least --min-length {} m cannot follow the input closer",
            self.tolerance, self.road.plan.deviation, self.min_length
        ))
    }

    /// The fit report as JSON.
    pub fn json(&self) -> Value {
        let (b, p) = (&self.road, &self.road.plan);
        let mut v = json!({
            "source": self.source, "out": self.out.display().to_string(), "tolerance_m": self.tolerance, "origin": b.origin,
            "max_m": p.max, "rms_m": p.rms, "noise_m": p.noise, "outliers": p.outliers, "deviation_m": p.deviation,
            "window_m": p.window,
            "elevation": b.elevation.as_ref().map(|e| json!({"records": e.records.len(), "max_m": e.max, "rms_m": e.rms, "noise_m": e.noise, "rejected": e.rejected})),
            "records": records_json(b),
        });
        if let Some(n) = &self.note {
            let passes: Vec<_> = n
                .passes
                .iter()
                .map(|((t0, t1), len, k)| json!({"gps_time": [t0, t1], "length_m": len, "samples": k}))
                .collect();
            v["drive_path"] = json!({"passes": passes, "pass": n.chosen + 1, "follows": "scanner track",
                "sensor_height_m": n.sensor_height, "windows": n.windows, "rejected": n.rejected, "rms_m": n.rms});
        }
        v
    }
}

impl fmt::Display for AxisWritten {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "record  kind     s (m)       length (m)  curvature (1/m)        max (mm)  rms (mm)  vertices")?;
        let p = &self.road.plan;
        for (i, (g, r)) in p.geometries.iter().zip(&p.records).enumerate() {
            let (k0, k1) = g.kind.end_curvatures().unwrap_or((0.0, 0.0));
            let (kind, max, rms) = (kind_name(&g.kind), r.max * 1e3, r.rms * 1e3);
            writeln!(
                f,
                "{i:>6}  {kind:<7} {:>10.3}  {:>10.3}  {k0:>+9.6} {k1:>+9.6}  {max:>8.2}  {rms:>8.2}  {:>8}",
                g.s, g.length, r.points
            )?;
        }
        writeln!(f, "plan view: max {:.2} mm, rms {:.2} mm", p.max * 1e3, p.rms * 1e3)?;
        writeln!(
            f,
            "noise: {:.2} mm estimated, {} outliers left out; line within {:.2} mm of the local mean of the vertices (runs up to {:.1} m)",
            p.noise * 1e3,
            p.outliers,
            p.deviation * 1e3,
            p.window
        )?;
        if let Some(e) = &self.road.elevation {
            let (n, max, rms, rejected) = (e.records.len(), e.max * 1e3, e.rms * 1e3, e.rejected);
            // Noisy heights are measured as the plan view's vertices are (means of runs).
            let of = if e.noise > 0.0 {
                format!("of the local mean of the heights (noise {:.2} mm estimated)", e.noise * 1e3)
            } else {
                "of the heights".to_string()
            };
            writeln!(
                f,
                "elevation: {n} records within {max:.2} mm {of}, rms {rms:.2} mm, {rejected} heights left out as outliers"
            )?;
        }
        Ok(())
    }
}

/// What `convert` did: the changes the target revision asked for, and what was written.
#[derive(Debug, Clone)]
pub struct Converted {
    /// Every change made for the target revision (OpenDRIVE).
    pub notes: Vec<String>,
    /// What was written, as one line.
    pub wrote: String,
}

/// Converts `input` into `output`: OpenCRG (by `input`'s extension) into the format `format`,
/// else OpenDRIVE into the revision `version`; `output` appears whole or not at all.
pub fn convert(input: &Path, output: &Path, version: &str, format: &str) -> Result<Converted> {
    if is_crg(input) {
        let Some(format) = opencrg::Format::from_tag(format) else {
            bail!("--format must be KRBI, KDBI, LRFI, LDFI, LRBI or LDBI, got {format}");
        };
        let outputs = Outputs::new([input]);
        let staged = outputs.file(with_extension("the output", output, &["crg"])?)?;
        let crg = opencrg::read_file(input)?;
        opencrg::write_file(&crg, &staged, format)?;
        outputs.commit()?;
        let wrote = format!("wrote {} ({}, {} x {} nodes)", output.display(), format.tag(), crg.nu, crg.nv());
        return Ok(Converted { notes: Vec::new(), wrote });
    }
    let Some(version) = opendrive::Version::parse(version) else {
        bail!("--version must be 1.6, 1.7 or 1.8, got {version}");
    };
    let outputs = Outputs::new([input]);
    let staged = outputs.file(with_extension("the output", output, &["xodr", "xml"])?)?;
    let mut odr = read_xodr(input)?;
    let notes: Vec<String> = opendrive::convert::upgrade(&mut odr, version).iter().map(|n| n.to_string()).collect();
    opendrive::write_file(&odr, &staged, &opendrive::WriteOptions { version })
        .with_context(|| format!("writing {}", output.display()))?;
    outputs.commit()?;
    let wrote = format!(
        "wrote {} (OpenDRIVE 1.{}, {} roads, {} changes for the target revision)",
        output.display(),
        version.minor(),
        odr.roads.len(),
        notes.len()
    );
    Ok(Converted { notes, wrote })
}

/// What [`connect`] did, per junction: its id, the connecting roads before and after, and the
/// largest |curvature| of the new ones (1/m).
#[derive(Debug, Clone)]
pub struct Connected {
    /// Per junction regenerated.
    pub junctions: Vec<(String, usize, usize, f64)>,
    /// What was written, as one line.
    pub wrote: String,
}

/// Writes `input` to `output` with the connecting roads of its junctions (`junctions`, or every
/// junction of default kind when empty) generated from the lanes of the roads that end at them
/// ([`opendrive::connect`]), replacing the ones the file had; `output` appears whole or not at all.
pub fn connect(input: &Path, output: &Path, junctions: &[String]) -> Result<Connected> {
    let outputs = Outputs::new([input]);
    let staged = outputs.file(with_extension("the output", output, &["xodr", "xml"])?)?;
    let mut odr = read_xodr(input)?;
    let ids: Vec<String> = if junctions.is_empty() {
        odr.junctions
            .iter()
            .filter(|j| j.kind.as_deref().is_none_or(|k| k == "default"))
            .map(|j| j.id.clone())
            .collect()
    } else {
        for id in junctions {
            if !odr.junctions.iter().any(|j| &j.id == id) {
                bail!("{}: no junction {id}", input.display());
            }
        }
        junctions.to_vec()
    };
    let opts = opendrive::connect::ConnectOptions::default();
    let mut done = Vec::new();
    for id in &ids {
        let before = odr.roads.iter().filter(|r| &r.junction == id).count();
        let fits = opendrive::connect::regenerate(&mut odr, id, &opts).with_context(|| input.display().to_string())?;
        let k = fits.iter().map(|f| f.curvature).fold(0.0, f64::max);
        done.push((id.clone(), before, fits.len(), k));
    }
    let version = opendrive::Version::parse("1.8").context("internal: OpenDRIVE 1.8")?;
    let changes = opendrive::convert::upgrade(&mut odr, version).len();
    opendrive::write_file(&odr, &staged, &opendrive::WriteOptions { version })
        .with_context(|| format!("writing {}", output.display()))?;
    outputs.commit()?;
    let made: usize = done.iter().map(|d| d.2).sum();
    let wrote = format!(
        "wrote {} ({} junctions, {made} connecting roads generated, OpenDRIVE 1.8, {changes} changes for it)",
        output.display(),
        done.len()
    );
    Ok(Connected { junctions: done, wrote })
}

/// Renders the OpenCRG file `path` as the PNG `out`, colours relative to `relative` (`plane`
/// or `refline`), their half range `range_mm` (default: the 99th percentile); the line saying
/// what was written.
pub fn render(path: &Path, out: &Path, relative: &str, range_mm: Option<f64>) -> Result<String> {
    use opencrg::render::{Relative, RenderOptions};
    let relative = match relative {
        "plane" => Relative::FittedPlane,
        "refline" => Relative::ReferenceLine,
        other => bail!("--relative must be plane or refline, got {other}"),
    };
    if let Some(r) = range_mm.filter(|r| !(r.is_finite() && *r > 0.0)) {
        bail!("--range-mm must be a positive number, got {r}");
    }
    let outputs = Outputs::new([path]);
    let staged = outputs.file(with_extension("--out", out, &["png"])?)?;
    let crg = opencrg::read_file(path)?;
    let title = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let opts = RenderOptions { relative, range: range_mm.map(|r| r / 1000.0), title, ..Default::default() };
    let info = opencrg::render::render(&crg, &staged, &opts)?;
    outputs.commit()?;
    Ok(format!(
        "wrote {} ({} x {} px, colour range +-{:.1} mm{})",
        out.display(),
        info.width,
        info.height,
        info.range * 1000.0,
        if info.downsample > 1 { format!(", downsampled 1:{}", info.downsample) } else { String::new() }
    ))
}
