//! `roadscan xodr`: the surveyed OpenDRIVE road, an axis road completed from the points
//! (elevation, superelevation, curbs, markings, lanes) and road-surface CRGs (potholes and
//! manholes, the `<surface><CRG>` link).

use crate::exit;
use crate::progress::Bars;
use anyhow::Result;
use pipeline::road::SurveyReport;
use roadscan::xodr::XodrConfig;
use serde_json::json;
use std::io::Write;
use std::path::PathBuf;

/// The arguments of `xodr`.
#[derive(clap::Args, Debug)]
pub struct XodrArgs {
    #[command(flatten)]
    pub src: crate::args::AxisInputs,
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

/// Runs `xodr`.
pub fn run(a: &XodrArgs, progress: &Bars) -> Result<u8> {
    let t0 = std::time::Instant::now();
    let quiet = progress.quiet();
    let c = XodrConfig {
        road: a.src.road_inputs(a.half_width + 0.5, None),
        crg: a.crg.clone(),
        out: a.out.clone(),
        half_width: a.half_width,
        tolerance: a.tolerance,
    };
    let roadscan::xodr::XodrDone { odr, report, points } = roadscan::xodr::survey(&c, progress)?;
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
            points.kept,
            points.offered,
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

fn report_text(out: &mut impl Write, r: &SurveyReport, odr: &opendrive::OpenDrive) -> Result<()> {
    writeln!(out, "rows with a road surface: {} of {}", r.rows.with_surface, r.rows.all)?;
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

/// The survey report as JSON.
fn report_json(out: &mut impl Write, r: &SurveyReport, odr: &opendrive::OpenDrive) -> Result<()> {
    let fit = |f: &Option<opendrive::fit::ProfileFit>| {
        f.as_ref().map(|f| json!({"records": f.records.len(), "max": f.max, "rms": f.rms}))
    };
    let curb = |c: &Option<pipeline::road::Curb>| c.as_ref().map(|c| json!({"t": c.t, "height": c.height}));
    let v = json!({
        "rows": [r.rows.with_surface, r.rows.all],
        "elevation": fit(&r.elevation),
        "superelevation": fit(&r.superelevation),
        "curbs": {"left": curb(&r.curbs[0]), "right": curb(&r.curbs[1])},
        "markings": r.markings.iter().map(|m| json!({
            "t": m.t, "s": [m.s_range.0, m.s_range.1], "type": m.kind, "width": m.width,
        })).collect::<Vec<_>>(),
        "features": r.features.iter().map(|f| json!({
            "type": f.kind, "s": f.s, "t": f.t, "length": f.length, "width": f.width, "depth": f.depth,
        })).collect::<Vec<_>>(),
        "findings": r.findings.iter().map(|f| json!({"check": f.check, "detail": f.detail})).collect::<Vec<_>>(),
        "lane_sections": odr.roads[0].lanes.lane_sections.len(),
    });
    serde_json::to_writer_pretty(&mut *out, &v)?;
    writeln!(out)?;
    Ok(())
}
