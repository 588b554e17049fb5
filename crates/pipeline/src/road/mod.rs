//! The surveyed road: an axis road completed from the cross sections of its points
//! (`section.rs`) and, optionally, its road-surface CRGs.
//!
//! Per 0.5 m row of cross sections:
//! - the road surface is a line h = a + b·t fitted to the cell heights near the reference
//!   line and within the axis's lanes (Tukey's biweight, so cars and people do not pull it;
//!   a road with lanes on one side takes nothing from the pavement on the other): the
//!   elevation gains a, the superelevation is atan(b);
//! - a curb is the first rise of at least 6 cm within 0.3 m, outward from the carriageway, in
//!   the heights left after that line (median of five rows, so a passing car hides nothing);
//! - markings are runs of cells at road level whose intensity stands out from the median of
//!   the cells within 0.6 m (contrast, so the scanner's range and incidence fall out).
//!
//! Markings seen in successive rows at about the same t are tracked into lines; a line with
//! regular gaps is broken (dash and gap lengths measured), else solid. The centre line is, per
//! row, an inner line (solid before broken); its t is the lane offset. Lane borders are the
//! other lines and the curbs (a line within 0.35 m of a curb marks the curb's border), on the
//! side of the centre line they mostly keep to; lanes lie between them, widths as cubic
//! records, a new lane section where a border starts or ends. Potholes and manholes are depressions in a CRG
//! against its 2 m x 2 m local mean.

mod cross;
mod depressions;
mod edge;
mod lanes;
mod markings;
mod profile;

pub use depressions::{attach_surface, crg_link, find_depressions};
pub use profile::{robust_curved_profile, robust_profile};

use crate::section::SectionGrid;
use cross::{find_curb, surface_line};
use lanes::{lanes, LaneSides};
use markings::find_markings;
use opendrive::fit::ProfileFit;
use opendrive::{OpenDrive, Road, RoadEval};

/// Settings of the surveyed road.
#[derive(Debug, Clone, PartialEq)]
pub struct SurveyOptions {
    /// Elevation records within this, m.
    pub elevation_tolerance: f64,
    /// Superelevation records within this, rad.
    pub superelevation_tolerance: f64,
    /// Lane width records within this, m.
    pub width_tolerance: f64,
    /// Half width of the carriageway used for the surface line before curbs are known, m.
    pub carriageway: f64,
    /// A marking cell's intensity over the local median.
    pub contrast: f64,
    /// A row's surface line whose angle across differs from the axis's own crossfall (its
    /// superelevation, 0 where it declares none) by more than this is no road surface (a
    /// facade seen by a tilted scanner, a slope, the side of a car), rad: 0.8 (46°) is beyond
    /// any banked road but a velodrome's, which only an axis declaring the bank keeps.
    pub max_crossfall: f64,
    /// Cells whose heights spread more than this (standard deviation) hold more than the road
    /// surface (a branch above it, an echo below it) and are left out of the surface line, m.
    pub max_spread: f64,
}

impl Default for SurveyOptions {
    fn default() -> Self {
        SurveyOptions {
            elevation_tolerance: 0.002,
            superelevation_tolerance: 0.002,
            width_tolerance: 0.02,
            carriageway: 2.5,
            contrast: 1.5,
            max_crossfall: 0.8,
            max_spread: 0.03,
        }
    }
}

/// A marking line found in the points; its t and width are OpenDRIVE's (along the
/// superelevated surface: on a bank, the plan distances over the bank's cosine).
#[derive(Debug, Clone, PartialEq)]
pub struct MarkingLine {
    /// Median t, m.
    pub t: f64,
    /// s where it starts and ends, m.
    pub s_range: (f64, f64),
    /// "solid" or "broken".
    pub kind: &'static str,
    /// Median width, m.
    pub width: f64,
    /// Dash and gap lengths of a broken line, m.
    pub dash_gap: Option<(f64, f64)>,
    /// (s, t) of each row it was seen in.
    pub samples: Vec<(f64, f64)>,
}

/// A curb found in the points.
#[derive(Debug, Clone, PartialEq)]
pub struct Curb {
    /// Median t, m.
    pub t: f64,
    /// Median height of the step, m.
    pub height: f64,
    /// (s, t) per row it was found in.
    pub samples: Vec<(f64, f64)>,
}

/// A depression found in a CRG.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceFeature {
    /// "pothole" or "manhole".
    pub kind: &'static str,
    /// Centre, m.
    pub s: f64,
    /// Centre, m.
    pub t: f64,
    /// Extent along s and across, m.
    pub length: f64,
    /// m.
    pub width: f64,
    /// Deepest point below the local surface, m (negative: a lid standing proud).
    pub depth: f64,
}

/// A road-surface CRG to link and search.
#[derive(Debug, Clone)]
pub struct CrgInput<'c> {
    /// The file name written into `<CRG file>`.
    pub file: String,
    /// The grid.
    pub crg: &'c opencrg::Crg,
}

/// A measured value less its fit at a station.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Residual {
    /// Station, m.
    pub s: f64,
    /// Measured less fitted, m.
    pub residual: f64,
}

/// Cross-section rows of a survey.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RowCounts {
    /// Rows with a road surface.
    pub with_surface: usize,
    /// All rows of the whole grid over the road's s range (held or not).
    pub all: usize,
}

/// What was measured.
#[derive(Debug, Clone)]
pub struct SurveyReport {
    /// Elevation fit (None when no row had road points).
    pub elevation: Option<ProfileFit>,
    /// Superelevation fit.
    pub superelevation: Option<ProfileFit>,
    /// Curbs, left then right.
    pub curbs: [Option<Curb>; 2],
    /// Marking lines, by t.
    pub markings: Vec<MarkingLine>,
    /// Potholes and manholes.
    pub features: Vec<SurfaceFeature>,
    /// Rows with a road surface, of all rows.
    pub rows: RowCounts,
    /// Each row's surface height less the fitted elevation, in s order (none without an
    /// elevation fit): what the records leave unexplained, and the cars and people the robust
    /// fit left out.
    pub elevation_residuals: Vec<Residual>,
    /// s from the first to the last row with a road surface (None: none), m.
    pub s_range: Option<(f64, f64)>,
    /// Rows whose surface line was too steep to be road surface (left out).
    pub steep_rows: usize,
    /// Checks the survey failed, with what was done instead (the road is still built): the
    /// caller reports them and exits with a failed check.
    pub findings: Vec<Finding>,
}

/// A check the survey failed, and what the road holds instead.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// What was checked, e.g. "lanes from marking lines or curbs".
    pub check: &'static str,
    /// What was found and done.
    pub detail: String,
}

/// The road of `axis` (road `road` of it) completed from `grid` and `crgs`.
pub fn survey_road(
    axis: &OpenDrive,
    road: &Road,
    grid: &SectionGrid,
    crgs: &[CrgInput<'_>],
    opts: &SurveyOptions,
) -> Result<(OpenDrive, SurveyReport), crate::Error> {
    let eval = RoadEval::new(road);
    let mut findings = Vec::new();
    // 1. The surface line per row (a row too steep against the axis's crossfall has none).
    let steep = std::cell::Cell::new(0usize);
    let prior: Vec<f64> = (0..grid.rows).map(|r| eval.planar_cross_slope(grid.s_of(r))).collect();
    // The band of the line: |t| up to `half`, but not beyond the axis's lanes on a side (a
    // one-way or connecting road with lanes on one side only: beyond its reference line lies
    // another road's pavement, in a junction at a height of its own).
    let lanes_at: Vec<Option<(f64, f64)>> = (0..grid.rows).map(|r| lane_band(&eval, grid.s_of(r))).collect();
    let line_of = |r: usize, half: f64| -> Option<[f64; 2]> {
        let p = prior.get(r).copied().filter(|p| p.is_finite()).unwrap_or(0.0);
        let band = match lanes_at.get(r).copied().flatten() {
            Some((lo, hi)) => (lo.max(-half), hi.min(half)),
            None => (-half, half),
        };
        let l = surface_line(grid, r, band, opts.max_spread, p)?;
        if (l[1].atan() - p.atan()).abs() > opts.max_crossfall {
            steep.set(steep.get() + 1);
            return None;
        }
        Some(l)
    };
    let lines: Vec<Option<[f64; 2]>> = (0..grid.rows).map(|r| line_of(r, opts.carriageway)).collect();
    // 2. Curbs, then the surface again between them.
    let curbs = [find_curb(grid, &lines, 1.0), find_curb(grid, &lines, -1.0)];
    steep.set(0);
    let lines: Vec<Option<[f64; 2]>> = (0..grid.rows)
        .map(|r| {
            let inner = |c: &Option<Curb>| c.as_ref().map_or(opts.carriageway, |c| (c.t.abs() - 0.3).max(0.5));
            let half = inner(&curbs[0]).min(inner(&curbs[1]));
            line_of(r, half).or(lines[r])
        })
        .collect();
    let rows_with = lines.iter().filter(|l| l.is_some()).count();
    let steep_rows = steep.get();
    if rows_with == 0 {
        return Err(crate::Error::NoRoadSurface { rows: grid.rows, steep: steep_rows });
    }
    if steep_rows > 0 {
        findings.push(Finding {
            check: "a road surface in every row",
            detail: format!(
                "{steep_rows} of {} rows hold a surface more than {:.2} rad steeper across than the axis's crossfall (a facade, a slope): left out",
                grid.rows, opts.max_crossfall
            ),
        });
    }
    let first = lines.iter().position(Option::is_some).unwrap_or(0);
    let last = lines.iter().rposition(Option::is_some).unwrap_or(0);
    let surveyed = (grid.s_of(first) - 0.5 * grid.ds, grid.s_of(last) + 0.5 * grid.ds);
    // 3. Elevation and superelevation.
    let (mut s_e, mut z_e, mut x_e) = (Vec::new(), Vec::new(), Vec::new());
    for (r, l) in lines.iter().enumerate() {
        if let Some([a, b]) = l {
            let s = grid.s_of(r);
            s_e.push(s);
            z_e.push(eval.elevation(s) + a);
            x_e.push(b.atan());
        }
    }
    let elevation = robust_curved_profile(&s_e, &z_e, opts.elevation_tolerance, grid.ds, 1.0);
    let elevation_residuals = match &elevation {
        Some(e) => {
            let held = e.held(road.length);
            let fitted = |s: f64| opendrive::eval::profile_value(&held, s);
            s_e.iter().zip(&z_e).map(|(&s, &z)| Residual { s, residual: z - fitted(s) }).collect()
        }
        None => Vec::new(),
    };
    let superelevation = robust_curved_profile(&s_e, &x_e, opts.superelevation_tolerance, grid.ds, 1.0);
    // 4. Markings, in OpenDRIVE's t (along the superelevated surface).
    let plan = |s: f64| eval.planar_t(s, 1.0);
    let markings = find_markings(grid, &lines, &curbs, &plan, opts);
    // 5. Surface features.
    let mut features = Vec::new();
    for c in crgs {
        features.extend(find_depressions(c.crg));
    }
    // 6. The road.
    let mut out = road.clone();
    if let Some(e) = &elevation {
        out.elevation_profile.elevations = e.held(road.length);
    }
    if let Some(x) = &superelevation {
        out.lateral_profile.superelevations = x.held(road.length);
    }
    let sides = LaneSides::of(road);
    out.lanes = lanes(grid, road.length, &lines, surveyed, &markings, &curbs, &sides, &plan, opts, &mut findings);
    let links = crgs.iter().map(|c| crg_link(&c.file, c.crg)).collect();
    attach_surface(&mut out, &mut features, links);
    let odr = OpenDrive { header: axis.header.clone(), roads: vec![out], ..Default::default() };
    let report = SurveyReport {
        elevation,
        superelevation,
        curbs,
        markings,
        features,
        rows: RowCounts { with_surface: rows_with, all: grid.total_rows() },
        elevation_residuals,
        s_range: Some(surveyed),
        steep_rows,
        findings,
    };
    Ok((odr, report))
}

/// The plan t range the axis's lanes cover at s, the reference line included (None where it
/// has no lanes there, or they are not finite).
fn lane_band(eval: &RoadEval, s: f64) -> Option<(f64, f64)> {
    let (lo, hi) = crate::surface::lanes_across(eval, s)?;
    (lo.is_finite() && hi.is_finite()).then_some((lo, hi))
}

/// t along the superelevated surface (OpenDRIVE's t) of the point `t_plan` from the reference
/// line in plan (the cross sections' t) at s, where one metre of t lies `plan(s)` metres in
/// plan (`RoadEval::planar_t(s, 1)`, cos of the bank); as it is where the bank is 85° or
/// steeper (no road surface), or the factor is not finite.
fn in_surface(plan: &dyn Fn(f64) -> f64, s: f64, t_plan: f64) -> f64 {
    let k = plan(s);
    if k.is_finite() && k > MIN_PLAN_SCALE {
        t_plan / k
    } else {
        t_plan
    }
}

/// cos 85°: a steeper bank is no road surface, and no t is scaled for it.
const MIN_PLAN_SCALE: f64 = 0.087;

/// Median of a slice (sorted in place); None when empty.
fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) })
}
