//! `roadscan xodr`: the surveyed OpenDRIVE road, an axis road completed from the points
//! (elevation, superelevation, curbs, markings, lanes) and road-surface CRGs (potholes and
//! manholes, the `<surface><CRG>` link).

use crate::{exit, json_str};
use anyhow::{bail, Context, Result};
use pipeline::road::{survey_road, CrgInput, SurveyOptions, SurveyReport};
use pipeline::section::SectionOptions;
use pipeline::RoadsideOptions;
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `xodr`.
#[derive(clap::Args, Debug)]
pub struct XodrArgs {
    #[command(flatten)]
    pub src: crate::inputs::AxisInputs,
    /// Road-surface CRGs along the axis (u = s): linked in `<surface>` (mode attached for
    /// residual heights, genuine for absolute) and searched for potholes and manholes.
    #[arg(long, num_args = 1..)]
    pub crg: Vec<PathBuf>,
    /// Output OpenDRIVE file.
    #[arg(long)]
    pub out: PathBuf,
    /// Cross sections cover |t| up to this, m.
    #[arg(long, default_value_t = 10.0)]
    pub half_width: f64,
    /// Elevation records within this of the surface's samples, m (as `build`).
    #[arg(long, default_value_t = 0.002)]
    pub tolerance: f64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(a: &XodrArgs, quiet: bool) -> Result<u8> {
    let t0 = std::time::Instant::now();
    let half = crate::within("half-width", a.half_width, 0.5, 100.0)?;
    crate::within("tolerance", a.tolerance, 1e-4, 10.0)?;
    let outputs = crate::outdir::Outputs::new(a.src.files().into_iter().chain(a.crg.iter().cloned()));
    let staged = outputs.file(crate::outdir::with_extension("--out", &a.out, &["xodr", "xml"])?)?;
    // CRGs first: a bad one fails before the points are read.
    let mut crgs = Vec::new();
    for p in &a.crg {
        let crg = opencrg::read_file(p)?;
        let file = match (a.out.parent(), p.canonicalize()) {
            (Some(dir), Ok(abs)) => relative(dir, &abs).unwrap_or_else(|| abs.display().to_string()),
            _ => p.display().to_string(),
        };
        crgs.push((file, crg));
    }
    let args = crate::roadside::RoadArgs { src: a.src.clone(), buffer: half + 0.5, s_range: None };
    let opts = RoadsideOptions {
        buffer: half + 0.5,
        voxel_size: None,
        sections: Some(SectionOptions { half_width: half, ..Default::default() }),
        ..Default::default()
    };
    let (side, _) = crate::roadside::build(&args, opts, quiet)?;
    let grid = side.sections.as_ref().context("no cross sections were built")?;
    if side.points.1 == 0 {
        bail!("no points within {half} m of the road (check the axis, the road id and the CRS)");
    }
    let axis = opendrive::read_file(&a.src.axis)?;
    let road = a.src.road(&axis)?;
    let inputs: Vec<CrgInput<'_>> = crgs.iter().map(|(f, c)| CrgInput { file: f.clone(), crg: c }).collect();
    let sopts = SurveyOptions { elevation_tolerance: a.tolerance, ..Default::default() };
    let (mut odr, mut report) = survey_road(&axis, road, grid, &inputs, &sopts).map_err(anyhow::Error::msg)?;
    // The surveyed part of the road, as `build` writes it; with --crg the whole road (the
    // links' CRGs are in the axis road's s).
    let part = if a.crg.is_empty() { crate::build::part_of(road, report.s_range, None, 0.01) } else { None };
    if let Some(p) = part {
        crate::build::cut_survey(&mut odr, &mut report, p)
            .map_err(|e| anyhow::anyhow!("{}: road {}: {e}", a.src.axis.display(), road.id))?;
        if !quiet {
            eprintln!(
                "roadscan: the points cover s {:.1}..{:.1} of road {}: {} holds that part (its s 0 is the axis road's s {:.2})",
                p.0, p.1, road.id, a.out.display(), p.0
            );
        }
    }
    write_checked(&odr, &staged)?;
    outputs.commit()?;
    let mut out = std::io::stdout().lock();
    if a.json {
        report_json(&mut out, &report, &odr)?;
    } else if !quiet {
        report_text(&mut out, &report, &odr)?;
    }
    if !quiet {
        eprintln!(
            "roadscan: wrote {} ({} of {} points near the road, {} lane sections) in {:.1} s",
            a.out.display(),
            side.points.1,
            side.points.0,
            odr.roads[0].lanes.lane_sections.len(),
            t0.elapsed().as_secs_f64()
        );
    }
    // Even with --quiet: they explain exit code 1 (the road is written).
    for f in &report.findings {
        eprintln!("roadscan: warning: {}: {}", f.check, f.detail);
    }
    Ok(if report.findings.is_empty() { exit::OK } else { exit::FINDINGS })
}

/// Writes the surveyed road `odr` to `path` after checking that it reads back as built.
pub(crate) fn write_checked(odr: &opendrive::OpenDrive, path: &std::path::Path) -> Result<()> {
    let text = opendrive::write(odr, &Default::default())?;
    let back = opendrive::read(&text).context("internal: the surveyed road does not read back")?;
    if back.roads[0].lanes != odr.roads[0].lanes
        || back.roads[0].objects.objects.len() != odr.roads[0].objects.objects.len()
    {
        bail!("internal: the surveyed road's lanes or objects do not read back as written");
    }
    // The text checked is the text written.
    voxel::write_atomic(path, |w| w.write_all(text.as_bytes()))?;
    Ok(())
}

/// `path` relative to the directory `dir` (both made absolute), for the `<CRG file>`.
pub(crate) fn relative(dir: &std::path::Path, path: &std::path::Path) -> Option<String> {
    let dir = if dir.as_os_str().is_empty() { std::path::Path::new(".") } else { dir };
    let dir = dir.canonicalize().ok()?;
    let common = dir.components().zip(path.components()).take_while(|(a, b)| a == b).count();
    let mut rel = PathBuf::new();
    for _ in dir.components().skip(common) {
        rel.push("..");
    }
    for c in path.components().skip(common) {
        rel.push(c);
    }
    Some(rel.display().to_string())
}

fn report_text(out: &mut impl Write, r: &SurveyReport, odr: &opendrive::OpenDrive) -> Result<()> {
    writeln!(out, "rows with a road surface: {} of {}", r.rows.0, r.rows.1)?;
    if let Some(e) = &r.elevation {
        writeln!(out, "elevation: {} records, max {:.1} mm, rms {:.1} mm", e.records.len(), e.max * 1e3, e.rms * 1e3)?;
    }
    if let Some(x) = &r.superelevation {
        writeln!(out, "superelevation: {} records, max {:.4} rad", x.records.len(), x.max)?;
    }
    for (name, c) in ["left", "right"].iter().zip(&r.curbs) {
        match c {
            Some(c) => {
                writeln!(out, "curb {name}: t {:+.3} m, height {:.3} m, {} rows", c.t, c.height, c.samples.len())?
            }
            None => writeln!(out, "curb {name}: none found")?,
        }
    }
    for m in &r.markings {
        let dg = m.dash_gap.map_or(String::new(), |(d, g)| format!(", dash {d:.1} m gap {g:.1} m"));
        writeln!(
            out,
            "marking: t {:+.3} m, s {:.1}..{:.1}, {} {:.2} m wide{dg}",
            m.t, m.s_range.0, m.s_range.1, m.kind, m.width
        )?;
    }
    for f in &r.features {
        let depth = if f.depth >= 0.0 {
            format!("{:.0} mm deep", f.depth * 1e3)
        } else {
            format!("{:.0} mm proud", -f.depth * 1e3)
        };
        writeln!(out, "{}: s {:.2} t {:+.2}, {:.2} x {:.2} m, {depth}", f.kind, f.s, f.t, f.length, f.width)?;
    }
    for sec in &odr.roads[0].lanes.lane_sections {
        let ids: Vec<String> = sec.lanes().filter(|l| l.id != 0).map(|l| l.id.to_string()).collect();
        writeln!(out, "lane section at s {:.1}: lanes {}", sec.s, ids.join(" "))?;
    }
    Ok(())
}

pub(crate) fn report_json(out: &mut impl Write, r: &SurveyReport, odr: &opendrive::OpenDrive) -> Result<()> {
    let fit = |f: &Option<opendrive::fit::ProfileFit>| {
        f.as_ref().map_or("null".to_string(), |f| {
            format!("{{\"records\": {}, \"max\": {}, \"rms\": {}}}", f.records.len(), f.max, f.rms)
        })
    };
    writeln!(out, "{{")?;
    writeln!(out, "  \"rows\": [{}, {}],", r.rows.0, r.rows.1)?;
    writeln!(out, "  \"elevation\": {},", fit(&r.elevation))?;
    writeln!(out, "  \"superelevation\": {},", fit(&r.superelevation))?;
    let curb = |c: &Option<pipeline::road::Curb>| {
        c.as_ref().map_or("null".to_string(), |c| format!("{{\"t\": {}, \"height\": {}}}", c.t, c.height))
    };
    writeln!(out, "  \"curbs\": {{\"left\": {}, \"right\": {}}},", curb(&r.curbs[0]), curb(&r.curbs[1]))?;
    let marks: Vec<String> = r
        .markings
        .iter()
        .map(|m| {
            format!(
                "{{\"t\": {}, \"s\": [{}, {}], \"type\": {}, \"width\": {}}}",
                m.t,
                m.s_range.0,
                m.s_range.1,
                json_str(m.kind),
                m.width
            )
        })
        .collect();
    writeln!(out, "  \"markings\": [{}],", marks.join(", "))?;
    let feats: Vec<String> = r
        .features
        .iter()
        .map(|f| {
            format!(
                "{{\"type\": {}, \"s\": {}, \"t\": {}, \"length\": {}, \"width\": {}, \"depth\": {}}}",
                json_str(f.kind),
                f.s,
                f.t,
                f.length,
                f.width,
                f.depth
            )
        })
        .collect();
    writeln!(out, "  \"features\": [{}],", feats.join(", "))?;
    let findings: Vec<String> = r
        .findings
        .iter()
        .map(|f| format!("{{\"check\": {}, \"detail\": {}}}", crate::json_str(f.check), crate::json_str(&f.detail)))
        .collect();
    writeln!(out, "  \"findings\": [{}],", findings.join(", "))?;
    writeln!(out, "  \"lane_sections\": {}", odr.roads[0].lanes.lane_sections.len())?;
    writeln!(out, "}}")?;
    Ok(())
}
