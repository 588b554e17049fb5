//! `roadscan info`: a summary of LAS/LAZ and OpenCRG files (header, counts, bounds, CRS,
//! problems found).

use crate::exit;
use anyhow::Result;
use opencrg::Surface;
use scan::LasReader;
use serde_json::{json, Value};
use std::io::{BufWriter, Write};
use std::path::Path;

/// Runs `info` on each file; the exit code is the worst.
pub fn run(files: &[std::path::PathBuf], json: bool) -> Result<u8> {
    files
        .iter()
        .map(|f| if crate::is_crg(f) { crg(f, json) } else { las(f, json) })
        .collect::<Result<Vec<u8>>>()
        .map(|codes| codes.into_iter().max().unwrap_or(exit::OK))
}

/// Prints the summary of an OpenCRG file.
fn crg(path: &Path, json: bool) -> Result<u8> {
    let crg = opencrg::read_file(path)?;
    let s = Surface::new(&crg, false)?;
    let (u0, u1) = s.u_range();
    let (v0, v1) = s.v_range();
    let (x, y) = s.reference_line();
    let n = x.len();
    let nan = crg.z.iter().filter(|z| z.is_nan()).count();
    let (zmin, zmax) = crg
        .z
        .iter()
        .filter(|z| !z.is_nan())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &z| (a.min(z), b.max(z)));
    let mut out = BufWriter::new(std::io::stdout().lock());
    let vpos = crg.v_positions();
    if json {
        let v = json!({
            "file": path.display().to_string(), "format": crg.format.tag(), "nu": crg.nu, "nv": crg.nv(),
            "u_range": [u0, u1], "du": crg.du(), "v_range": [v0, v1], "v_first": vpos[0], "v_last": vpos[vpos.len() - 1],
            "start": [x[0], y[0]], "end": [x[n - 1], y[n - 1]], "z_min": zmin, "z_max": zmax,
            "start_z": crg.road.start_z, "nan_nodes": nan, "closed": s.is_closed(), "modifiers_block": crg.modifiers.is_some(),
        });
        serde_json::to_writer(&mut out, &v)?;
        writeln!(out)?;
    } else {
        writeln!(out, "{}: OpenCRG {} grid, {} x {} nodes", path.display(), crg.format.tag(), crg.nu, crg.nv())?;
        writeln!(
            out,
            "  u {u0} .. {u1} m (du {} m), v {} .. {} m ({} long sections)",
            crg.du(),
            vpos[0],
            vpos[vpos.len() - 1],
            crg.nv()
        )?;
        writeln!(
            out,
            "  reference line: ({:.4}, {:.4}) -> ({:.4}, {:.4}){}",
            x[0],
            y[0],
            x[n - 1],
            y[n - 1],
            if s.is_closed() { ", closed track" } else { "" }
        )?;
        writeln!(
            out,
            "  channels: {}{}{}",
            if crg.phi.is_some() { "heading " } else { "straight " },
            if crg.slope.is_some() { "slope " } else { "" },
            if crg.banking.is_some() { "banking" } else { "" }
        )?;
        writeln!(
            out,
            "  z {zmin:.4} .. {zmax:.4} m{}, {nan} of {} nodes without data",
            crg.road.start_z.map(|z| format!(" above the reference line's start z {z}")).unwrap_or_default(),
            crg.z.len()
        )?;
        writeln!(
            out,
            "  modifiers: {}",
            match &crg.modifiers {
                None => "no $ROAD_CRG_MODS block (C-API readers that apply modifiers move the grid to the origin)",
                Some(m) if m.entries().is_empty() => "empty block (placement kept, NaN kept)",
                Some(_) => "block present",
            }
        )?;
    }
    out.flush()?;
    Ok(exit::OK)
}

fn unit_name(u: Option<f64>) -> String {
    match u {
        Some(f) if (f - 1.0).abs() < 1e-12 => "metre".into(),
        Some(f) if (f - 0.3048).abs() < 1e-12 => "foot".into(),
        Some(f) if (f - scan::US_FOOT).abs() < 1e-12 => "US survey foot".into(),
        Some(f) => format!("{f} m"),
        None => "unknown".into(),
    }
}

/// The non-zero bins of a 1-based histogram: `1: n, 2: m`.
fn histogram(h: &[u64]) -> String {
    let bins: Vec<String> =
        h.iter().enumerate().filter(|(_, &n)| n > 0).map(|(i, n)| format!("{}: {n}", i + 1)).collect();
    bins.join(", ")
}

/// The non-zero bins of a 1-based histogram as a JSON object keyed by bin.
fn histogram_json(h: &[u64]) -> Value {
    Value::Object(h.iter().enumerate().filter(|(_, &n)| n > 0).map(|(i, &n)| ((i + 1).to_string(), json!(n))).collect())
}

/// Prints the summary of a LAS/LAZ file.
fn las(path: &Path, json: bool) -> Result<u8> {
    let mut r = LasReader::open(path)?;
    let s = scan::summarize(&mut r)?;
    let h = r.header();
    let mut out = std::io::stdout().lock();
    let classes = &s.classes;
    let crs_name = h.crs.name.clone().unwrap_or_default();
    // Heights: their own unit where the file gives one, else that of x and y.
    let z_unit = h.crs.vertical_unit.or(h.crs.unit);
    if json {
        let c = &h.crs;
        let v = json!({
            "file": path.display().to_string(),
            "version": format!("{}.{}", h.version.0, h.version.1),
            "point_format": h.point_format, "record_length": h.record_length, "compressed": h.compressed,
            "points": s.points, "header_points": h.header_point_count,
            // Bounds of no points are no numbers: null.
            "min": s.min, "max": s.max,
            "crs": {"source": c.source.to_string(), "epsg": c.epsg, "epsg_by": c.epsg_by, "vertical_epsg": c.vertical_epsg,
                    "name": crs_name, "compound": c.compound, "proj": c.proj, "unit_m": c.unit, "unit": unit_name(c.unit),
                    "vertical_unit_m": z_unit, "vertical_unit": unit_name(z_unit)},
            "gps_time": {"standard": h.gps_standard_time, "min": s.gps.0, "max": s.gps.1},
            "classes": Value::Object(classes.iter().map(|(k, n)| (k.to_string(), json!(n))).collect()),
            "density": s.density.map(|d| json!({"over_bounds_per_m2": d.over_bounds, "over_cells_per_m2": d.over_cells,
                "cell_m": d.cell, "cells": d.cells, "points_in_cells": d.points, "unit_assumed": d.unit_assumed})),
            "intensity": s.intensity.map(|i| json!({"min": i.min, "mean": i.mean, "max": i.max,
                "p5": i.p5_p50_p95[0], "median": i.p5_p50_p95[1], "p95": i.p5_p50_p95[2]})),
            "returns": {"return_numbers": histogram_json(&s.return_numbers), "numbers_of_returns": histogram_json(&s.numbers_of_returns)},
            "scan_angle_deg": s.scan_angle.map(|(a, b)| json!({"min": a, "max": b})),
            "problems": s.problems,
        });
        serde_json::to_writer(&mut out, &v)?;
        writeln!(out)?;
        return Ok(exit::OK);
    }
    writeln!(
        out,
        "{}: LAS {}.{}{}, point format {} ({} bytes a record)",
        path.display(),
        h.version.0,
        h.version.1,
        if h.compressed { " (LAZ)" } else { "" },
        h.point_format,
        h.record_length
    )?;
    writeln!(out, "  points: {} (header: {})", s.points, h.header_point_count)?;
    if s.points > 0 {
        writeln!(
            out,
            "  bounds: x {:.3}..{:.3}, y {:.3}..{:.3}, z {:.3}..{:.3}",
            s.min[0], s.max[0], s.min[1], s.max[1], s.min[2], s.max[2]
        )?;
    }
    let code = match (h.crs.epsg, h.crs.epsg_by) {
        (Some(c), Some("parameters")) => format!("EPSG:{c}, matched by the WKT's projection and parameters"),
        (Some(c), _) => format!("EPSG:{c}"),
        (None, _) => "no EPSG code".to_string(),
    };
    let vertical = h.crs.vertical_epsg.map_or(String::new(), |c| format!(" + vertical EPSG:{c}"));
    writeln!(
        out,
        "  CRS: {} ({code}{vertical}{}) from {}, horizontal unit {}, vertical unit {}",
        if crs_name.is_empty() { "-" } else { &crs_name },
        if h.crs.compound { ", compound" } else { "" },
        h.crs.source,
        unit_name(h.crs.unit),
        unit_name(z_unit)
    )?;
    if let (None, Some(p)) = (h.crs.epsg, &h.crs.proj) {
        writeln!(out, "  PROJ: {p}")?;
    }
    if let Some(d) = &s.density {
        let assumed = if d.unit_assumed { " (no CRS: units taken as metres)" } else { "" };
        let bounds = d.over_bounds.map_or("-".to_string(), |v| format!("{v:.2}"));
        writeln!(
            out,
            "  density: {bounds} points/m² over the header's x-y bounds, {:.2} over the {} occupied {} m cells{assumed}",
            d.over_cells, d.cells, d.cell
        )?;
    }
    if let Some(i) = &s.intensity {
        writeln!(
            out,
            "  intensity: min {}, mean {:.1}, max {} (5 % {}, median {}, 95 % {})",
            i.min, i.mean, i.max, i.p5_p50_p95[0], i.p5_p50_p95[1], i.p5_p50_p95[2]
        )?;
    }
    if s.points > 0 {
        writeln!(out, "  return numbers: {}", histogram(&s.return_numbers))?;
        writeln!(out, "  numbers of returns: {}", histogram(&s.numbers_of_returns))?;
    }
    if let Some((a, b)) = s.scan_angle {
        writeln!(out, "  scan angle: {a}..{b} degrees")?;
    }
    if s.gps.0.is_finite() {
        let kind = if h.gps_standard_time { "adjusted standard GPS time" } else { "GPS week seconds" };
        writeln!(out, "  GPS time: {:.6}..{:.6} s ({kind})", s.gps.0, s.gps.1)?;
    }
    let cls: Vec<String> = classes.iter().map(|(c, n)| format!("{c}: {n}")).collect();
    writeln!(out, "  classes: {}", cls.join(", "))?;
    writeln!(out, "  scale {:?}, offset {:?}; system '{}', software '{}'", h.scale, h.offset, h.system, h.software)?;
    for p in &s.problems {
        writeln!(out, "  warning: {p}")?;
    }
    Ok(exit::OK)
}
