//! `roadscan info` for LAS/LAZ files: header, counts, bounds, CRS, and what was found wrong.

use anyhow::Result;
use scan::LasReader;
use std::io::Write;
use std::path::Path;

fn unit_name(u: Option<f64>) -> String {
    match u {
        Some(f) if (f - 1.0).abs() < 1e-12 => "metre".into(),
        Some(f) if (f - 0.3048).abs() < 1e-12 => "foot".into(),
        Some(f) if (f - 1200.0 / 3937.0).abs() < 1e-12 => "US survey foot".into(),
        Some(f) => format!("{f} m"),
        None => "unknown".into(),
    }
}

/// Prints the summary of a LAS/LAZ file.
pub fn info(path: &Path, json: bool) -> Result<u8> {
    let mut r = LasReader::open(path)?;
    let s = scan::summarize(&mut r)?;
    let h = r.header();
    let mut out = std::io::stdout().lock();
    let classes = &s.classes;
    let crs_name = h.crs.name.clone().unwrap_or_default();
    if json {
        let cls: Vec<String> = classes.iter().map(|(c, n)| format!("\"{c}\": {n}")).collect();
        let probs: Vec<String> = s.problems.iter().map(|p| crate::json_str(p)).collect();
        let opt = |v: Option<u32>| v.map_or("null".to_string(), |v| v.to_string());
        // Bounds of no points are no numbers: null.
        let num = |v: f64| if v.is_finite() { v.to_string() } else { "null".into() };
        writeln!(
            out,
            "{{\"file\": {}, \"version\": \"{}.{}\", \"point_format\": {}, \"record_length\": {}, \"compressed\": {}, \"points\": {}, \"header_points\": {}, \"min\": [{}, {}, {}], \"max\": [{}, {}, {}], \"crs\": {{\"source\": \"{}\", \"epsg\": {}, \"vertical_epsg\": {}, \"name\": {}, \"unit_m\": {}}}, \"gps_time\": {{\"standard\": {}, \"min\": {}, \"max\": {}}}, \"classes\": {{{}}}, \"problems\": [{}]}}",
            crate::json_str(&path.display().to_string()),
            h.version.0,
            h.version.1,
            h.point_format,
            h.record_length,
            h.compressed,
            s.points,
            h.header_point_count,
            num(s.min[0]), num(s.min[1]), num(s.min[2]), num(s.max[0]), num(s.max[1]), num(s.max[2]),
            h.crs.source,
            opt(h.crs.epsg),
            opt(h.crs.vertical_epsg),
            crate::json_str(&crs_name),
            h.crs.unit.map_or("null".to_string(), |u| u.to_string()),
            h.gps_standard_time,
            if s.gps.0.is_finite() { s.gps.0.to_string() } else { "null".into() },
            if s.gps.1.is_finite() { s.gps.1.to_string() } else { "null".into() },
            cls.join(", "),
            probs.join(", ")
        )?;
        return Ok(crate::exit::OK);
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
    let code = h.crs.epsg.map_or("no EPSG code".to_string(), |c| format!("EPSG:{c}"));
    let vertical = h.crs.vertical_epsg.map_or(String::new(), |c| format!(" + vertical EPSG:{c}"));
    writeln!(
        out,
        "  CRS: {} ({code}{vertical}) from {}, horizontal unit {}",
        if crs_name.is_empty() { "-" } else { &crs_name },
        h.crs.source,
        unit_name(h.crs.unit)
    )?;
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
    Ok(crate::exit::OK)
}
