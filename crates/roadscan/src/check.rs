//! `roadscan check`: an OpenDRIVE or OpenCRG file summarised and checked against the standard
//! and for plausibility, as lines for a person ([`Display`](fmt::Display)) or as JSON.

use crate::files::{is_crg, read_xodr};
use anyhow::Result;
use opendrive::validate::{self, Severity};
use opendrive::GeometryKind;
use serde_json::{json, Value};
use std::fmt;
use std::path::{Path, PathBuf};

/// A file checked.
#[derive(Debug, Clone)]
pub enum Checked {
    /// An OpenCRG file and its findings.
    Crg(Box<CrgChecked>),
    /// An OpenDRIVE file, its summary and its findings.
    Xodr(Box<XodrChecked>),
}

/// Reads and checks `path` (OpenCRG by its extension `.crg`, else OpenDRIVE).
pub fn check(path: &Path) -> Result<Checked> {
    Ok(if is_crg(path) {
        let crg = opencrg::read_file(path)?;
        let diags = opencrg::check::check(&crg);
        Checked::Crg(Box::new(CrgChecked { path: path.to_path_buf(), crg, diags }))
    } else {
        let odr = read_xodr(path)?;
        let diags = validate::check(&odr, &validate::CheckOptions::default());
        Checked::Xodr(Box::new(XodrChecked { path: path.to_path_buf(), odr, diags }))
    })
}

impl Checked {
    /// Findings of severity error and of severity warning.
    pub fn counts(&self) -> (usize, usize) {
        match self {
            Checked::Crg(c) => {
                let n = |s| c.diags.iter().filter(|d| d.severity == s).count();
                (n(opencrg::check::Severity::Error), n(opencrg::check::Severity::Warning))
            }
            Checked::Xodr(x) => {
                let n = |s| x.diags.iter().filter(|d| d.severity == s).count();
                (n(Severity::Error), n(Severity::Warning))
            }
        }
    }

    /// The summary and the findings as JSON.
    pub fn json(&self) -> Value {
        let (n_err, n_warn) = self.counts();
        match self {
            Checked::Crg(c) => {
                let diagnostics: Vec<_> = c
                    .diags
                    .iter()
                    .map(|d| json!({"severity": format!("{:?}", d.severity).to_ascii_lowercase(), "u": d.u, "message": d.message}))
                    .collect();
                json!({"file": c.path.display().to_string(), "errors": n_err, "warnings": n_warn, "diagnostics": diagnostics})
            }
            Checked::Xodr(x) => {
                let diagnostics: Vec<_> = x
                    .diags
                    .iter()
                    .map(
                        |d| json!({"severity": d.severity.to_string(), "road": d.road, "s": d.s, "message": d.message}),
                    )
                    .collect();
                let (h, k, n) = (&x.odr.header, x.kinds(), x.counts());
                json!({
                    "file": x.path.display().to_string(),
                    "revision": format!("{}.{}", h.rev_major, h.rev_minor),
                    "roads": x.odr.roads.len(), "junctions": x.odr.junctions.len(), "length_m": x.length(),
                    "geometry": {"line": k[0], "arc": k[1], "spiral": k[2], "poly3": k[3], "paramPoly3": k[4]},
                    "lane_sections": n[0], "objects": n[1], "signals": n[2], "road_crgs": n[3],
                    "errors": n_err, "warnings": n_warn, "diagnostics": diagnostics,
                })
            }
        }
    }
}

impl fmt::Display for Checked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Checked::Crg(c) => {
                let crg = &c.crg;
                writeln!(f, "{}: OpenCRG {}, {} x {} nodes", c.path.display(), crg.format.tag(), crg.nu, crg.nv())?;
                for d in &c.diags {
                    writeln!(f, "  {d}")?;
                }
            }
            Checked::Xodr(x) => {
                let (odr, h) = (&x.odr, &x.odr.header);
                writeln!(f, "{}: OpenDRIVE {}.{}", x.path.display(), h.rev_major, h.rev_minor)?;
                if let Some(g) = &h.geo_reference {
                    writeln!(f, "  geoReference: {}", g.trim())?;
                }
                if let Some(o) = &h.offset {
                    writeln!(f, "  offset: x={} y={} z={} hdg={}", o.x, o.y, o.z, o.hdg)?;
                }
                let (roads, km, junctions) = (odr.roads.len(), x.length() / 1000.0, odr.junctions.len());
                writeln!(f, "  {roads} roads, {km:.3} km of reference line, {junctions} junctions")?;
                let [line, arc, spiral, poly3, param] = x.kinds();
                writeln!(
                    f,
                    "  geometry records: {line} line, {arc} arc, {spiral} spiral, {poly3} poly3, {param} paramPoly3"
                )?;
                let [sections, objects, signals, crgs] = x.counts();
                writeln!(f, "  {sections} lane sections, {objects} objects, {signals} signals, {crgs} road CRGs")?;
                for d in &x.diags {
                    writeln!(f, "  {d}")?;
                }
            }
        }
        let (n_err, n_warn) = self.counts();
        writeln!(f, "  {n_err} errors, {n_warn} warnings")
    }
}

/// An OpenCRG file and what its check found.
#[derive(Debug, Clone)]
pub struct CrgChecked {
    /// The file.
    pub path: PathBuf,
    /// Its contents.
    pub crg: opencrg::Crg,
    /// The findings.
    pub diags: Vec<opencrg::check::Diagnostic>,
}

/// An OpenDRIVE file and what its check found.
#[derive(Debug, Clone)]
pub struct XodrChecked {
    /// The file.
    pub path: PathBuf,
    /// Its contents.
    pub odr: opendrive::OpenDrive,
    /// The findings.
    pub diags: Vec<validate::Diagnostic>,
}

impl XodrChecked {
    /// Geometry records by kind: line, arc, spiral, poly3, paramPoly3.
    pub fn kinds(&self) -> [usize; 5] {
        let mut kinds = [0usize; 5];
        for g in self.odr.roads.iter().flat_map(|r| &r.plan_view.geometries) {
            kinds[match g.kind {
                GeometryKind::Line => 0,
                GeometryKind::Arc { .. } => 1,
                GeometryKind::Spiral { .. } => 2,
                GeometryKind::Poly3 { .. } => 3,
                GeometryKind::ParamPoly3 { .. } => 4,
            }] += 1;
        }
        kinds
    }

    /// Lane sections, objects, signals and road CRGs over all roads.
    pub fn counts(&self) -> [usize; 4] {
        let roads = &self.odr.roads;
        [
            roads.iter().map(|r| r.lanes.lane_sections.len()).sum(),
            roads.iter().map(|r| r.objects.objects.len()).sum(),
            roads.iter().map(|r| r.signals.signals.len()).sum(),
            roads.iter().map(|r| r.surface.crgs.len()).sum(),
        ]
    }

    /// The length of all reference lines, m.
    pub fn length(&self) -> f64 {
        self.odr.roads.iter().map(|r| r.length).sum()
    }
}
