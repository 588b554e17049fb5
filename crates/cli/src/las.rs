//! `roadscan info` for LAS/LAZ files: header, counts, bounds, CRS, and what was found wrong.

use anyhow::Result;
use scan::LasReader;
use std::io::Write;
use std::path::Path;

fn unit_name(u: Option<f64>) -> String {
    match u {
        Some(f) if (f - 1.0).abs() < 1e-12 => "metre".into(),
        Some(f) if (f - 0.3048).abs() < 1e-12 => "foot".into(),
        Some(f) if (f - scan::US_FOOT).abs() < 1e-12 => "US survey foot".into(),
        Some(f) => format!("{f} m"),
        None => "unknown".into(),
    }
}

/// The non-zero bins of a 1-based histogram: `1: n, 2: m` (`q` quotes the bin, `sep` follows).
fn histogram(h: &[u64], q: &str, sep: &str) -> String {
    let bins: Vec<String> =
        h.iter().enumerate().filter(|(_, &n)| n > 0).map(|(i, n)| format!("{q}{}{sep}{n}", i + 1)).collect();
    bins.join(", ")
}

fn density_json(d: Option<&scan::Density>) -> String {
    d.map_or("null".to_string(), |d| {
        format!(
            "{{\"over_bounds_per_m2\": {}, \"over_cells_per_m2\": {}, \"cell_m\": {}, \"cells\": {}, \"points_in_cells\": {}, \"unit_assumed\": {}}}",
            d.over_bounds.map_or("null".to_string(), |v| v.to_string()),
            d.over_cells,
            d.cell,
            d.cells,
            d.points,
            d.unit_assumed
        )
    })
}

/// Prints the summary of a LAS/LAZ file.
pub fn info(path: &Path, json: bool) -> Result<u8> {
    let mut r = LasReader::open(path)?;
    let s = scan::summarize(&mut r)?;
    let h = r.header();
    let mut out = std::io::stdout().lock();
    let classes = &s.classes;
    let crs_name = h.crs.name.clone().unwrap_or_default();
    // Heights: their own unit where the file gives one, else that of x and y.
    let z_unit = h.crs.vertical_unit.or(h.crs.unit);
    if json {
        let cls: Vec<String> = classes.iter().map(|(c, n)| format!("\"{c}\": {n}")).collect();
        let probs: Vec<String> = s.problems.iter().map(|p| roadscan::json_str(p)).collect();
        let opt = |v: Option<u32>| v.map_or("null".to_string(), |v| v.to_string());
        // Bounds of no points are no numbers: null.
        let num = |v: f64| if v.is_finite() { v.to_string() } else { "null".into() };
        writeln!(
            out,
            "{{\"file\": {}, \"version\": \"{}.{}\", \"point_format\": {}, \"record_length\": {}, \"compressed\": {}, \"points\": {}, \"header_points\": {}, \"min\": [{}, {}, {}], \"max\": [{}, {}, {}], \"crs\": {{\"source\": \"{}\", \"epsg\": {}, \"epsg_by\": {}, \"vertical_epsg\": {}, \"name\": {}, \"compound\": {}, \"proj\": {}, \"unit_m\": {}, \"unit\": {}, \"vertical_unit_m\": {}, \"vertical_unit\": {}}}, \"gps_time\": {{\"standard\": {}, \"min\": {}, \"max\": {}}}, \"classes\": {{{}}}, \"density\": {}, \"intensity\": {}, \"returns\": {{\"return_numbers\": {{{}}}, \"numbers_of_returns\": {{{}}}}}, \"scan_angle_deg\": {}, \"problems\": [{}]}}",
            roadscan::json_str(&path.display().to_string()),
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
            h.crs.epsg_by.map_or("null".to_string(), roadscan::json_str),
            opt(h.crs.vertical_epsg),
            roadscan::json_str(&crs_name),
            h.crs.compound,
            h.crs.proj.as_deref().map_or("null".to_string(), roadscan::json_str),
            h.crs.unit.map_or("null".to_string(), |u| u.to_string()),
            roadscan::json_str(&unit_name(h.crs.unit)),
            z_unit.map_or("null".to_string(), |u| u.to_string()),
            roadscan::json_str(&unit_name(z_unit)),
            h.gps_standard_time,
            if s.gps.0.is_finite() { s.gps.0.to_string() } else { "null".into() },
            if s.gps.1.is_finite() { s.gps.1.to_string() } else { "null".into() },
            cls.join(", "),
            density_json(s.density.as_ref()),
            s.intensity.map_or("null".to_string(), |i| format!(
                "{{\"min\": {}, \"mean\": {}, \"max\": {}, \"p5\": {}, \"median\": {}, \"p95\": {}}}",
                i.min, i.mean, i.max, i.p5_p50_p95[0], i.p5_p50_p95[1], i.p5_p50_p95[2]
            )),
            histogram(&s.return_numbers, "\"", "\": "),
            histogram(&s.numbers_of_returns, "\"", "\": "),
            s.scan_angle.map_or("null".to_string(), |(a, b)| format!("{{\"min\": {}, \"max\": {}}}", num(a as f64), num(b as f64))),
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
        writeln!(out, "  return numbers: {}", histogram(&s.return_numbers, "", ": "))?;
        writeln!(out, "  numbers of returns: {}", histogram(&s.numbers_of_returns, "", ": "))?;
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
    Ok(crate::exit::OK)
}
