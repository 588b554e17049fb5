//! `roadscan info` for LAS/LAZ files: header, counts, bounds, CRS, and what was found wrong.

use anyhow::Result;
use scan::{LasReader, Points};
use std::io::Write;
use std::path::Path;

/// What one pass over a file found.
struct Summary {
    points: u64,
    min: [f64; 3],
    max: [f64; 3],
    classes: [u64; 256],
    gps: (f64, f64),
    problems: Vec<String>,
}

fn scan_file(r: &mut LasReader) -> Result<Summary> {
    let mut p = Points::default();
    let mut s = Summary {
        points: 0,
        min: [f64::INFINITY; 3],
        max: [f64::NEG_INFINITY; 3],
        classes: [0; 256],
        gps: (f64::INFINITY, f64::NEG_INFINITY),
        problems: r.warnings().to_vec(),
    };
    while r.read(&mut p, 1 << 16)? > 0 {
        s.points += p.len() as u64;
        for i in 0..p.len() {
            for (k, v) in [p.x[i], p.y[i], p.z[i]].into_iter().enumerate() {
                s.min[k] = s.min[k].min(v);
                s.max[k] = s.max[k].max(v);
            }
            s.classes[p.class[i] as usize] += 1;
            let t = p.gps_time[i];
            if t.is_finite() {
                s.gps = (s.gps.0.min(t), s.gps.1.max(t));
            }
        }
    }
    let h = r.header();
    if s.points > 0 {
        for k in 0..3 {
            let tol = h.scale[k];
            if s.min[k] < h.min[k] - tol || s.max[k] > h.max[k] + tol {
                s.problems.push(format!(
                    "{} of the points spans {}..{}, the header says {}..{}",
                    ["x", "y", "z"][k],
                    s.min[k],
                    s.max[k],
                    h.min[k],
                    h.max[k]
                ));
            }
        }
    }
    if h.crs.source == "none" {
        s.problems.push("no CRS in the file: give one with --crs".into());
    }
    Ok(s)
}

fn unit_name(u: Option<f64>) -> String {
    match u {
        Some(f) if (f - 1.0).abs() < 1e-12 => "metre".into(),
        Some(f) if (f - 0.3048).abs() < 1e-12 => "foot".into(),
        Some(f) if (f - 1200.0 / 3937.0).abs() < 1e-12 => "US survey foot".into(),
        Some(f) => format!("{f} m"),
        None => "unknown".into(),
    }
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

/// Prints the summary of a LAS/LAZ file.
pub fn info(path: &Path, json: bool) -> Result<u8> {
    let mut r = LasReader::open(path)?;
    let s = scan_file(&mut r)?;
    let h = r.header();
    let mut out = std::io::stdout().lock();
    let classes: Vec<(usize, u64)> =
        s.classes.iter().enumerate().filter(|(_, &n)| n > 0).map(|(c, &n)| (c, n)).collect();
    let crs_name = h.crs.name.clone().unwrap_or_default();
    if json {
        let cls: Vec<String> = classes.iter().map(|(c, n)| format!("\"{c}\": {n}")).collect();
        let probs: Vec<String> = s.problems.iter().map(|p| json_str(p)).collect();
        let opt = |v: Option<u32>| v.map_or("null".to_string(), |v| v.to_string());
        writeln!(
            out,
            "{{\"file\": {}, \"version\": \"{}.{}\", \"point_format\": {}, \"record_length\": {}, \"compressed\": {}, \"points\": {}, \"header_points\": {}, \"min\": [{}, {}, {}], \"max\": [{}, {}, {}], \"crs\": {{\"source\": \"{}\", \"epsg\": {}, \"vertical_epsg\": {}, \"name\": {}, \"unit_m\": {}}}, \"gps_time\": {{\"standard\": {}, \"min\": {}, \"max\": {}}}, \"classes\": {{{}}}, \"problems\": [{}]}}",
            json_str(&path.display().to_string()),
            h.version.0,
            h.version.1,
            h.point_format,
            h.record_length,
            h.compressed,
            s.points,
            h.header_point_count,
            s.min[0], s.min[1], s.min[2], s.max[0], s.max[1], s.max[2],
            h.crs.source,
            opt(h.crs.epsg),
            opt(h.crs.vertical_epsg),
            json_str(&crs_name),
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
