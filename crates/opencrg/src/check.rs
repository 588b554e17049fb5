//! Checks of a CRG: header consistency (what the C-API would warn about or misread) and the
//! curvature checks (a reference line curving tighter than the grid is wide makes the grid
//! fold over itself on the inner side).

use crate::eval::{modifier_problems, Surface};
use crate::model::*;
use std::fmt;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing.
    Info,
    /// Readers may place or evaluate the grid differently than intended.
    Warning,
    /// The grid is wrong (folds over itself, inconsistent header).
    Error,
}

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// Severity.
    pub severity: Severity,
    /// u where it applies, m.
    pub u: Option<f64>,
    /// What is wrong, with the values.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        match self.u {
            Some(u) => write!(f, "{sev}: u={u:.3}: {}", self.message),
            None => write!(f, "{sev}: {}", self.message),
        }
    }
}

fn d(severity: Severity, u: Option<f64>, message: String) -> Diagnostic {
    Diagnostic { severity, u, message }
}

/// Runs every check.
pub fn check(crg: &Crg) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let r = &crg.road;
    let v = crg.v_positions();
    let (v_min, v_max) = (v[0], v[v.len() - 1]);
    if r.increment.is_none() {
        out.push(d(Severity::Warning, None, "REFERENCE_LINE_INCREMENT missing: readers assume 0.01 m".into()));
    }
    if r.end_u.is_none() {
        out.push(d(
            Severity::Warning,
            None,
            "REFERENCE_LINE_END_U missing: binary readers cannot count the rows".into(),
        ));
    }
    match (r.v_right, r.v_left) {
        (Some(a), Some(b)) => {
            if (a - v_min).abs() > 1e-6 || (b - v_max).abs() > 1e-6 {
                out.push(d(
                    Severity::Warning,
                    None,
                    format!("LONG_SECTION_V_RIGHT/LEFT ({a}, {b}) differ from the long sections' v range ({v_min}, {v_max}); the C-API takes its core area from the header"),
                ));
            }
        }
        _ => out.push(d(
            Severity::Warning,
            None,
            format!(
                "LONG_SECTION_V_RIGHT/LEFT missing: the C-API then takes the core area as [{}, {}] instead of the data's [{v_min}, {v_max}]",
                r.v_right.unwrap_or(0.0),
                r.v_left.unwrap_or(0.0)
            ),
        )),
    }
    for (name, ch) in [("phi", &crg.phi), ("slope", &crg.slope), ("banking", &crg.banking)] {
        if let Some(c) = ch {
            // Row 0 of phi and slope is not used by readers.
            let skip = usize::from(name != "banking");
            if let Some(i) = c.iter().skip(skip).position(|x| x.is_nan()) {
                out.push(d(
                    Severity::Error,
                    Some(crg.u_first() + (i + skip) as f64 * crg.du()),
                    format!(
                        "{name} channel has no value (NaN) in row {}: the reference line or z becomes NaN from there",
                        i + skip
                    ),
                ));
            }
        }
    }
    let nan = crg.z.iter().filter(|z| z.is_nan()).count();
    if nan > 0 {
        out.push(d(
            Severity::Info,
            None,
            format!(
                "{nan} of {} grid nodes have no data ({:.1} %)",
                crg.z.len(),
                100.0 * nan as f64 / crg.z.len() as f64
            ),
        ));
    }
    for l in &r.other {
        out.push(d(Severity::Info, None, format!("$ROAD_CRG line not used by readers: {}", l.trim())));
    }
    if crg.modifiers.is_none() {
        out.push(d(
            Severity::Warning,
            None,
            "no $ROAD_CRG_MODS block: C-API readers that apply modifiers move the grid so that its start sits at x = y = z = 0 with heading 0".into(),
        ));
    }
    if let Some(m) = &crg.modifiers {
        for p in modifier_problems(m) {
            out.push(d(Severity::Warning, None, format!("modifiers: {p}")));
        }
    }
    let Ok(surface) = Surface::new(crg, false) else {
        out.push(d(Severity::Error, None, "the grid cannot be prepared for evaluation".into()));
        return out;
    };
    // END pose given in the header vs the reference line the readers integrate.
    let (x, y) = surface.reference_line();
    let n = x.len();
    if crg.phi.is_some() {
        if let (Some(ex), Some(ey)) = (r.end_x, r.end_y) {
            // The C-API blends its forward integration onto END_X/END_Y; report the mismatch.
            let mut fx = r.start_x.unwrap_or(0.0);
            let mut fy = r.start_y.unwrap_or(0.0);
            for p in crg.phi.iter().flatten().skip(1) {
                fx += crg.du() * p.cos();
                fy += crg.du() * p.sin();
            }
            let gap = (fx - ex).hypot(fy - ey);
            let len = crg.u_last() - crg.u_first();
            if gap > 1e-6 * len.max(1.0) {
                out.push(d(
                    Severity::Warning,
                    None,
                    format!("END_X/END_Y are {gap:.4} m from the end of the integrated heading channel; readers bend the reference line to meet them"),
                ));
            }
        }
    } else if let (Some(ex), Some(ey)) = (r.end_x, r.end_y) {
        let gap = (x[n - 1] - ex).hypot(y[n - 1] - ey);
        if gap > 5e-4 {
            out.push(d(
                Severity::Warning,
                None,
                format!("END_X/END_Y are {gap:.4} m from the end of the straight reference line"),
            ));
        }
    }
    // Curvature: grid folding where the radius is smaller than the grid reaches on that side.
    let du = crg.du();
    let nv = crg.nv();
    let mut worst: Option<(f64, f64, f64)> = None; // (u, radius, v reached)
    for i in 1..n.saturating_sub(1) {
        let (dx0, dy0) = (x[i] - x[i - 1], y[i] - y[i - 1]);
        let (dx1, dy1) = (x[i + 1] - x[i], y[i + 1] - y[i]);
        let k = (dx0 * dy1 - dy0 * dx1) / du.powi(3);
        if k.abs() < 1e-12 {
            continue;
        }
        let radius = 1.0 / k; // positive: centre on the left (v > 0)
                              // The farthest v with data on the side of the centre, in this cross section.
        let reach = (0..nv)
            .filter(|&iv| !crg.z_at(i, iv).is_nan())
            .map(|iv| v[iv])
            .filter(|&vv| vv * radius > 0.0)
            .fold(0.0f64, |a, vv| if vv.abs() > a.abs() { vv } else { a });
        if reach.abs() >= radius.abs() && worst.is_none_or(|w| radius.abs() < w.1.abs()) {
            worst = Some((crg.u_first() + i as f64 * du, radius, reach));
        }
    }
    if let Some((u, radius, reach)) = worst {
        out.push(d(
            Severity::Error,
            Some(u),
            format!(
                "grid folds over itself: the reference line's radius is {:.3} m on the {} side but the grid has data out to v = {reach:.3} m",
                radius.abs(),
                if radius > 0.0 { "left" } else { "right" }
            ),
        ));
    }
    out
}
