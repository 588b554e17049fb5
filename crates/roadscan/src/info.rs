//! `roadscan info`: what a LAS/LAZ or OpenCRG file holds (header, counts, bounds, CRS, the
//! problems found), as lines for a person ([`Display`](fmt::Display)) or as JSON.

use crate::files::is_crg;
use anyhow::Result;
use opencrg::Surface;
use scan::LasReader;
use serde_json::{json, Value};
use std::fmt;
use std::path::{Path, PathBuf};

/// The summary of one file.
#[derive(Debug, Clone)]
pub enum FileInfo {
    /// An OpenCRG file.
    Crg(Box<CrgInfo>),
    /// A LAS/LAZ file.
    Las(Box<LasInfo>),
}

/// The summary of the file `path`: OpenCRG by its extension `.crg`, else LAS/LAZ.
pub fn info(path: &Path) -> Result<FileInfo> {
    Ok(if is_crg(path) {
        FileInfo::Crg(Box::new(CrgInfo::read(path)?))
    } else {
        FileInfo::Las(Box::new(LasInfo::read(path)?))
    })
}

impl FileInfo {
    /// The summary as JSON (one object).
    pub fn json(&self) -> Value {
        match self {
            FileInfo::Crg(c) => c.json(),
            FileInfo::Las(l) => l.json(),
        }
    }
}

impl fmt::Display for FileInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileInfo::Crg(c) => c.fmt(f),
            FileInfo::Las(l) => l.fmt(f),
        }
    }
}

/// What an OpenCRG file holds: its grid, ranges, reference line and heights.
#[derive(Debug, Clone)]
pub struct CrgInfo {
    /// The file.
    pub path: PathBuf,
    /// Its contents.
    pub crg: opencrg::Crg,
    /// u range, m.
    pub u_range: (f64, f64),
    /// v range, m.
    pub v_range: (f64, f64),
    /// The reference line's first and last point (x, y).
    pub ends: [(f64, f64); 2],
    /// Whether the track is closed.
    pub closed: bool,
    /// The smallest and the largest height with data (infinite without any).
    pub z: (f32, f32),
    /// Nodes without data.
    pub nan: usize,
}

impl CrgInfo {
    /// Reads and summarises the OpenCRG file `path`.
    pub fn read(path: &Path) -> Result<CrgInfo> {
        let crg = opencrg::read_file(path)?;
        let s = Surface::new(&crg, false)?;
        let (x, y) = s.reference_line();
        let at = |i: Option<usize>| i.and_then(|i| Some((*x.get(i)?, *y.get(i)?))).unwrap_or((f64::NAN, f64::NAN));
        let ends = [at(Some(0)), at(x.len().checked_sub(1))];
        let (u_range, v_range, closed) = (s.u_range(), s.v_range(), s.is_closed());
        let nan = crg.z.iter().filter(|z| z.is_nan()).count();
        let z = crg
            .z
            .iter()
            .filter(|z| !z.is_nan())
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &z| (a.min(z), b.max(z)));
        Ok(CrgInfo { path: path.to_path_buf(), crg, u_range, v_range, ends, closed, z, nan })
    }

    /// The first and the last long section's v, m.
    fn v_ends(&self) -> (f64, f64) {
        let v = self.crg.v_positions();
        (v.first().copied().unwrap_or(f64::NAN), v.last().copied().unwrap_or(f64::NAN))
    }

    /// The summary as JSON.
    pub fn json(&self) -> Value {
        let (crg, (u0, u1), (v0, v1), [(x0, y0), (x1, y1)]) = (&self.crg, self.u_range, self.v_range, self.ends);
        let (v_first, v_last) = self.v_ends();
        json!({
            "file": self.path.display().to_string(), "format": crg.format.tag(), "nu": crg.nu, "nv": crg.nv(),
            "u_range": [u0, u1], "du": crg.du(), "v_range": [v0, v1], "v_first": v_first, "v_last": v_last,
            "start": [x0, y0], "end": [x1, y1], "z_min": self.z.0, "z_max": self.z.1,
            "start_z": crg.road.start_z, "nan_nodes": self.nan, "closed": self.closed, "modifiers_block": crg.modifiers.is_some(),
        })
    }
}

impl fmt::Display for CrgInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (crg, (u0, u1), [(x0, y0), (x1, y1)], (zmin, zmax)) = (&self.crg, self.u_range, self.ends, self.z);
        let (v_first, v_last) = self.v_ends();
        writeln!(f, "{}: OpenCRG {} grid, {} x {} nodes", self.path.display(), crg.format.tag(), crg.nu, crg.nv())?;
        writeln!(f, "  u {u0} .. {u1} m (du {} m), v {v_first} .. {v_last} m ({} long sections)", crg.du(), crg.nv())?;
        let closed = if self.closed { ", closed track" } else { "" };
        writeln!(f, "  reference line: ({x0:.4}, {y0:.4}) -> ({x1:.4}, {y1:.4}){closed}")?;
        writeln!(
            f,
            "  channels: {}{}{}",
            if crg.phi.is_some() { "heading " } else { "straight " },
            if crg.slope.is_some() { "slope " } else { "" },
            if crg.banking.is_some() { "banking" } else { "" }
        )?;
        let above = crg.road.start_z.map(|z| format!(" above the reference line's start z {z}")).unwrap_or_default();
        writeln!(f, "  z {zmin:.4} .. {zmax:.4} m{above}, {} of {} nodes without data", self.nan, crg.z.len())?;
        let modifiers = match &crg.modifiers {
            None => "no $ROAD_CRG_MODS block (C-API readers that apply modifiers move the grid to the origin)",
            Some(m) if m.entries().is_empty() => "empty block (placement kept, NaN kept)",
            Some(_) => "block present",
        };
        writeln!(f, "  modifiers: {modifiers}")
    }
}

/// What a LAS/LAZ file holds: its header and what reading every point found.
#[derive(Debug, Clone)]
pub struct LasInfo {
    /// The file.
    pub path: PathBuf,
    /// Its header.
    pub header: scan::Header,
    /// Its points summarised.
    pub summary: scan::Summary,
}

/// A unit's name from its length in metres.
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

impl LasInfo {
    /// Reads the LAS/LAZ file `path` and summarises its points.
    pub fn read(path: &Path) -> Result<LasInfo> {
        let mut r = LasReader::open(path)?;
        let summary = scan::summarize(&mut r)?;
        Ok(LasInfo { path: path.to_path_buf(), header: r.header().clone(), summary })
    }

    /// The unit of heights: their own where the file gives one, else that of x and y.
    fn z_unit(&self) -> Option<f64> {
        self.header.crs.vertical_unit.or(self.header.crs.unit)
    }

    /// The summary as JSON.
    pub fn json(&self) -> Value {
        let (h, s, c, z_unit) = (&self.header, &self.summary, &self.header.crs, self.z_unit());
        json!({
            "file": self.path.display().to_string(),
            "version": format!("{}.{}", h.version.0, h.version.1),
            "point_format": h.point_format, "record_length": h.record_length, "compressed": h.compressed,
            "points": s.points, "header_points": h.header_point_count,
            // Bounds of no points are no numbers: null.
            "min": s.min, "max": s.max,
            "crs": {"source": c.source.to_string(), "epsg": c.epsg, "epsg_by": c.epsg_by, "vertical_epsg": c.vertical_epsg,
                    "name": c.name.clone().unwrap_or_default(), "compound": c.compound, "proj": c.proj, "unit_m": c.unit,
                    "unit": unit_name(c.unit), "vertical_unit_m": z_unit, "vertical_unit": unit_name(z_unit)},
            "gps_time": {"standard": h.gps_standard_time, "min": s.gps.0, "max": s.gps.1},
            "classes": Value::Object(s.classes.iter().map(|(k, n)| (k.to_string(), json!(n))).collect()),
            "density": s.density.map(|d| json!({"over_bounds_per_m2": d.over_bounds, "over_cells_per_m2": d.over_cells,
                "cell_m": d.cell, "cells": d.cells, "points_in_cells": d.points, "unit_assumed": d.unit_assumed})),
            "intensity": s.intensity.map(|i| json!({"min": i.min, "mean": i.mean, "max": i.max,
                "p5": i.p5_p50_p95[0], "median": i.p5_p50_p95[1], "p95": i.p5_p50_p95[2]})),
            "returns": {"return_numbers": histogram_json(&s.return_numbers), "numbers_of_returns": histogram_json(&s.numbers_of_returns)},
            "scan_angle_deg": s.scan_angle.map(|(a, b)| json!({"min": a, "max": b})),
            "problems": s.problems,
        })
    }
}

impl fmt::Display for LasInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (h, s, crs) = (&self.header, &self.summary, &self.header.crs);
        let laz = if h.compressed { " (LAZ)" } else { "" };
        let (path, (major, minor)) = (self.path.display(), h.version);
        writeln!(
            f,
            "{path}: LAS {major}.{minor}{laz}, point format {} ({} bytes a record)",
            h.point_format, h.record_length
        )?;
        writeln!(f, "  points: {} (header: {})", s.points, h.header_point_count)?;
        if s.points > 0 {
            let (lo, hi) = (s.min, s.max);
            writeln!(
                f,
                "  bounds: x {:.3}..{:.3}, y {:.3}..{:.3}, z {:.3}..{:.3}",
                lo[0], hi[0], lo[1], hi[1], lo[2], hi[2]
            )?;
        }
        let code = match (crs.epsg, crs.epsg_by) {
            (Some(c), Some("parameters")) => format!("EPSG:{c}, matched by the WKT's projection and parameters"),
            (Some(c), _) => format!("EPSG:{c}"),
            (None, _) => "no EPSG code".to_string(),
        };
        let vertical = crs.vertical_epsg.map_or(String::new(), |c| format!(" + vertical EPSG:{c}"));
        writeln!(
            f,
            "  CRS: {} ({code}{vertical}{}) from {}, horizontal unit {}, vertical unit {}",
            crs.name.as_deref().filter(|n| !n.is_empty()).unwrap_or("-"),
            if crs.compound { ", compound" } else { "" },
            crs.source,
            unit_name(crs.unit),
            unit_name(self.z_unit())
        )?;
        if let (None, Some(p)) = (crs.epsg, &crs.proj) {
            writeln!(f, "  PROJ: {p}")?;
        }
        if let Some(d) = &s.density {
            let assumed = if d.unit_assumed { " (no CRS: units taken as metres)" } else { "" };
            let bounds = d.over_bounds.map_or("-".to_string(), |v| format!("{v:.2}"));
            writeln!(
                f,
                "  density: {bounds} points/m² over the header's x-y bounds, {:.2} over the {} occupied {} m cells{assumed}",
                d.over_cells, d.cells, d.cell
            )?;
        }
        if let Some(i) = &s.intensity {
            let [p5, p50, p95] = i.p5_p50_p95;
            writeln!(
                f,
                "  intensity: min {}, mean {:.1}, max {} (5 % {p5}, median {p50}, 95 % {p95})",
                i.min, i.mean, i.max
            )?;
        }
        if s.points > 0 {
            writeln!(f, "  return numbers: {}", histogram(&s.return_numbers))?;
            writeln!(f, "  numbers of returns: {}", histogram(&s.numbers_of_returns))?;
        }
        if let Some((a, b)) = s.scan_angle {
            writeln!(f, "  scan angle: {a}..{b} degrees")?;
        }
        if s.gps.0.is_finite() {
            let kind = if h.gps_standard_time { "adjusted standard GPS time" } else { "GPS week seconds" };
            writeln!(f, "  GPS time: {:.6}..{:.6} s ({kind})", s.gps.0, s.gps.1)?;
        }
        let classes: Vec<String> = s.classes.iter().map(|(c, n)| format!("{c}: {n}")).collect();
        writeln!(f, "  classes: {}", classes.join(", "))?;
        writeln!(f, "  scale {:?}, offset {:?}; system '{}', software '{}'", h.scale, h.offset, h.system, h.software)?;
        for p in &s.problems {
            writeln!(f, "  warning: {p}")?;
        }
        Ok(())
    }
}
