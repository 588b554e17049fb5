//! `roadscan check`: an OpenDRIVE or OpenCRG file checked against the standard and for
//! plausibility; exit code 1 when it has errors.

use super::read_xodr;
use crate::exit;
use anyhow::Result;
use opendrive::validate::{self, Severity};
use opendrive::GeometryKind;
use serde_json::json;
use std::io::{BufWriter, Write};
use std::path::Path;

/// Runs `check` on `path` (by its extension: OpenCRG or OpenDRIVE).
pub fn run(path: &Path, json: bool) -> Result<u8> {
    if crate::is_crg(path) {
        crg(path, json)
    } else {
        xodr(path, json)
    }
}

fn crg(path: &Path, json: bool) -> Result<u8> {
    let crg = opencrg::read_file(path)?;
    let diags = opencrg::check::check(&crg);
    let n_err = diags.iter().filter(|d| d.severity == opencrg::check::Severity::Error).count();
    let n_warn = diags.iter().filter(|d| d.severity == opencrg::check::Severity::Warning).count();
    let mut out = BufWriter::new(std::io::stdout().lock());
    if json {
        let diagnostics: Vec<_> = diags
            .iter()
            .map(|d| json!({"severity": format!("{:?}", d.severity).to_ascii_lowercase(), "u": d.u, "message": d.message}))
            .collect();
        let v = json!({"file": path.display().to_string(), "errors": n_err, "warnings": n_warn, "diagnostics": diagnostics});
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        writeln!(out, "{}: OpenCRG {}, {} x {} nodes", path.display(), crg.format.tag(), crg.nu, crg.nv())?;
        for d in &diags {
            writeln!(out, "  {d}")?;
        }
        writeln!(out, "  {n_err} errors, {n_warn} warnings")?;
    }
    out.flush()?;
    Ok(if n_err > 0 { exit::FINDINGS } else { exit::OK })
}

fn xodr(path: &Path, json: bool) -> Result<u8> {
    let odr = read_xodr(path)?;
    let diags = validate::check(&odr, &validate::CheckOptions::default());
    let mut kinds = [0usize; 5];
    for g in odr.roads.iter().flat_map(|r| &r.plan_view.geometries) {
        kinds[match g.kind {
            GeometryKind::Line => 0,
            GeometryKind::Arc { .. } => 1,
            GeometryKind::Spiral { .. } => 2,
            GeometryKind::Poly3 { .. } => 3,
            GeometryKind::ParamPoly3 { .. } => 4,
        }] += 1;
    }
    let length: f64 = odr.roads.iter().map(|r| r.length).sum();
    let sections: usize = odr.roads.iter().map(|r| r.lanes.lane_sections.len()).sum();
    let objects: usize = odr.roads.iter().map(|r| r.objects.objects.len()).sum();
    let signals: usize = odr.roads.iter().map(|r| r.signals.signals.len()).sum();
    let crgs: usize = odr.roads.iter().map(|r| r.surface.crgs.len()).sum();
    let n_err = diags.iter().filter(|d| d.severity == Severity::Error).count();
    let n_warn = diags.iter().filter(|d| d.severity == Severity::Warning).count();
    let mut out = BufWriter::new(std::io::stdout().lock());
    let h = &odr.header;
    if json {
        let diagnostics: Vec<_> = diags
            .iter()
            .map(|d| json!({"severity": d.severity.to_string(), "road": d.road, "s": d.s, "message": d.message}))
            .collect();
        let v = json!({
            "file": path.display().to_string(),
            "revision": format!("{}.{}", h.rev_major, h.rev_minor),
            "roads": odr.roads.len(), "junctions": odr.junctions.len(), "length_m": length,
            "geometry": {"line": kinds[0], "arc": kinds[1], "spiral": kinds[2], "poly3": kinds[3], "paramPoly3": kinds[4]},
            "lane_sections": sections, "objects": objects, "signals": signals, "road_crgs": crgs,
            "errors": n_err, "warnings": n_warn, "diagnostics": diagnostics,
        });
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
    } else {
        writeln!(out, "{}: OpenDRIVE {}.{}", path.display(), h.rev_major, h.rev_minor)?;
        if let Some(g) = &h.geo_reference {
            writeln!(out, "  geoReference: {}", g.trim())?;
        }
        if let Some(o) = &h.offset {
            writeln!(out, "  offset: x={} y={} z={} hdg={}", o.x, o.y, o.z, o.hdg)?;
        }
        writeln!(
            out,
            "  {} roads, {:.3} km of reference line, {} junctions",
            odr.roads.len(),
            length / 1000.0,
            odr.junctions.len()
        )?;
        writeln!(
            out,
            "  geometry records: {} line, {} arc, {} spiral, {} poly3, {} paramPoly3",
            kinds[0], kinds[1], kinds[2], kinds[3], kinds[4]
        )?;
        writeln!(out, "  {sections} lane sections, {objects} objects, {signals} signals, {crgs} road CRGs")?;
        for d in &diags {
            writeln!(out, "  {d}")?;
        }
        writeln!(out, "  {n_err} errors, {n_warn} warnings")?;
    }
    out.flush()?;
    Ok(if n_err > 0 { exit::FINDINGS } else { exit::OK })
}
