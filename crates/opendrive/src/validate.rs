//! Semantic checks of a model: what the XML schema cannot see. Returns diagnostics, never
//! repairs (see [`crate::convert`] for the explicit upgrade of old files).

use crate::eval::{Curve, RoadEval};
use crate::model::*;
use std::collections::{HashMap, HashSet};
use std::fmt;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Worth knowing, harmless.
    Info,
    /// Readers may disagree or produce visible artefacts.
    Warning,
    /// Violates the standard, or describes what no road can be (see [`check`]'s limits).
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// Severity.
    pub severity: Severity,
    /// Road id, if the finding is on a road.
    pub road: Option<String>,
    /// s on that road, m.
    pub s: Option<f64>,
    /// What is wrong, with the values.
    pub message: String,
    /// The finding is a value no ordinary road has (superelevation, grade, lane width,
    /// curvature beyond the limits of this module), not a rule of the standard: a survey's
    /// report should count it as a failed check whatever its severity.
    pub implausible: bool,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.severity)?;
        if let Some(r) = &self.road {
            write!(f, ": road {r}")?;
        }
        if let Some(s) = self.s {
            write!(f, " s={s:.6}")?;
        }
        write!(f, ": {}", self.message)
    }
}

/// Thresholds of [`check`].
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Position gap between records reported as a warning, m (libOpenDRIVE/qc-opendrive
    /// report any gap; 1e-6 m is below any survey's accuracy).
    pub gap_warning: f64,
    /// Gap reported as an error, m.
    pub gap_error: f64,
    /// Heading jump reported as a warning, rad.
    pub heading_warning: f64,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions { gap_warning: 1e-6, gap_error: 1e-2, heading_warning: 1e-6 }
    }
}

/// |superelevation| above which a finding is an (implausible) warning, rad: 0.15 rad (8.6°) is
/// above the steepest public-road banking (design codes stop at 0.12 to 0.14). Only a warning:
/// banked tracks are legitimate maps (the sample esmini/velodrome.xodr banks at 60°).
pub const SUPERELEVATION_WARNING: f64 = 0.15;
/// |superelevation| from which it is an error, rad: 90°, where the road surface stands on edge
/// or is upside down.
pub const SUPERELEVATION_ERROR: f64 = std::f64::consts::FRAC_PI_2;
/// |grade| (dz/ds) above which a finding is an (implausible) warning: 30 %, about the steepest
/// public streets (Baldwin Street, 35 %, warns). No error: any finite grade is a surface (the
/// sample esmini/tilted_crest.xodr climbs at 150 %).
pub const GRADE_WARNING: f64 = 0.30;
/// Lane width above which a finding is an (implausible) warning, m (widths below 0 are errors
/// already; narrow border and shoulder lanes of real maps are fine).
pub const LANE_WIDTH_WARNING: f64 = 6.0;
/// |curvature| of the reference line above which it is an error, 1/m: a radius below 1 m,
/// which no vehicle and no lane of width can follow (the sample maps reach 0.4 1/m). Such a
/// record (a spiral to 1e300 1/m, say) is still evaluated, in bounded time.
pub const CURVATURE_ERROR: f64 = 1.0;

/// Runs every check. Besides the standard's rules, values no ordinary road has are findings,
/// marked [`Diagnostic::implausible`]: superelevation, grade, lane width and reference-line
/// curvature beyond the limits above (warnings where a real map may still have them, errors
/// where no road can). Lengths and
/// stations beyond [`crate::MAX_STATION`] do not get here: reading refuses them.
pub fn check(odr: &OpenDrive, options: &CheckOptions) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut road_ids = HashSet::new();
    let mut object_ids: HashMap<&str, &str> = HashMap::new();
    let mut signal_ids: HashMap<&str, &str> = HashMap::new();
    let junction_ids: HashSet<&str> = odr.junctions.iter().map(|j| j.id.as_str()).collect();
    for road in &odr.roads {
        if !road_ids.insert(road.id.as_str()) {
            out.push(diag(Severity::Error, road, None, "road id is not unique".into()));
        }
        check_plan_view(road, options, &mut out);
        check_profiles(road, &mut out);
        check_plausible(road, &mut out);
        check_lanes(road, &mut out);
        for o in &road.objects.objects {
            if let Some(other) = object_ids.insert(o.id.as_str(), road.id.as_str()) {
                out.push(diag(
                    Severity::Warning,
                    road,
                    Some(o.s),
                    format!("object id {} is also used on road {other} (1.8 wants file-wide unique ids)", o.id),
                ));
            }
        }
        for sg in &road.signals.signals {
            if let Some(other) = signal_ids.insert(sg.id.as_str(), road.id.as_str()) {
                out.push(diag(
                    Severity::Warning,
                    road,
                    Some(sg.s),
                    format!("signal id {} is also used on road {other} (1.8 wants file-wide unique ids)", sg.id),
                ));
            }
        }
        if road.junction != "-1" && !junction_ids.contains(road.junction.as_str()) {
            out.push(diag(Severity::Error, road, None, format!("junction {} does not exist", road.junction)));
        }
    }
    for road in &odr.roads {
        let Some(link) = &road.link else { continue };
        for (what, t) in [("predecessor", &link.predecessor), ("successor", &link.successor)] {
            let Some(t) = t else { continue };
            let exists = match t.element_type.as_str() {
                "road" => road_ids.contains(t.element_id.as_str()),
                "junction" => junction_ids.contains(t.element_id.as_str()),
                _ => true,
            };
            if !exists {
                out.push(diag(
                    Severity::Error,
                    road,
                    None,
                    format!("{what} {} {} does not exist", t.element_type, t.element_id),
                ));
            }
        }
    }
    for j in &odr.junctions {
        for c in &j.connections {
            for r in [&c.incoming_road, &c.connecting_road, &c.linked_road].into_iter().flatten() {
                if !road_ids.contains(r.as_str()) {
                    out.push(Diagnostic {
                        severity: Severity::Error,
                        road: None,
                        s: None,
                        message: format!("junction {} connection {} names road {r}, which does not exist", j.id, c.id),
                        implausible: false,
                    });
                }
            }
        }
    }
    out
}

fn diag(severity: Severity, road: &Road, s: Option<f64>, message: String) -> Diagnostic {
    Diagnostic { severity, road: Some(road.id.clone()), s, message, implausible: false }
}

fn implausible(severity: Severity, road: &Road, s: Option<f64>, message: String) -> Diagnostic {
    Diagnostic { implausible: true, ..diag(severity, road, s, message) }
}

fn check_plan_view(road: &Road, options: &CheckOptions, out: &mut Vec<Diagnostic>) {
    let geoms = &road.plan_view.geometries;
    if geoms.is_empty() {
        out.push(diag(Severity::Error, road, None, "planView has no geometry".into()));
        return;
    }
    if geoms[0].s.abs() > 1e-9 {
        out.push(diag(Severity::Error, road, Some(geoms[0].s), "the first geometry does not start at s=0".into()));
    }
    let curves: Vec<Curve> = geoms.iter().map(Curve::new).collect();
    for (i, g) in geoms.iter().enumerate() {
        if g.length <= 0.0 {
            out.push(diag(
                Severity::Error,
                road,
                Some(g.s),
                format!("geometry {i} has length {} (must be > 0)", g.length),
            ));
        }
        if let (GeometryKind::ParamPoly3 { .. }, Some(natural)) = (g.kind, curves[i].parametric_length()) {
            // The curve's own length over its parameter range should be @length (qc rule
            // road.geometry.parampoly3.length_match); readers clamp or stretch otherwise.
            if (natural - g.length).abs() > 1e-3 {
                out.push(diag(
                    Severity::Warning,
                    road,
                    Some(g.s),
                    format!(
                        "geometry {i}: the curve is {natural:.4} m long over its parameter range, @length says {}",
                        g.length
                    ),
                ));
            }
        }
        if i + 1 < geoms.len() {
            let next = &geoms[i + 1];
            let book = g.s + g.length;
            if (next.s - book).abs() > 1e-6 {
                out.push(diag(
                    Severity::Warning,
                    road,
                    Some(next.s),
                    format!(
                        "geometry {} starts at s={} but the previous ends at s={book} (Δ {:.3e} m)",
                        i + 1,
                        next.s,
                        next.s - book
                    ),
                ));
            }
            let end = curves[i].pose(g.length);
            let gap = (end.x - next.x).hypot(end.y - next.y);
            let dh = angle_diff(end.hdg, next.hdg);
            if gap > options.gap_warning {
                let sev = if gap > options.gap_error { Severity::Error } else { Severity::Warning };
                out.push(diag(
                    sev,
                    road,
                    Some(next.s),
                    format!("gap of {gap:.3e} m between geometry {i} and {}", i + 1),
                ));
            }
            // qc-opendrive (performance.avoid_redundant_info) compares the headings as written.
            if matches!((g.kind, next.kind), (GeometryKind::Line, GeometryKind::Line))
                && (g.hdg - next.hdg).abs() < crate::REDUNDANT_EPSILON
            {
                out.push(diag(
                    Severity::Warning,
                    road,
                    Some(next.s),
                    format!("redundant line: geometry {} continues line {i} at the same heading", i + 1),
                ));
            }
            if dh > options.heading_warning {
                out.push(diag(
                    Severity::Warning,
                    road,
                    Some(next.s),
                    format!("heading jumps by {dh:.3e} rad between geometry {i} and {}", i + 1),
                ));
            }
        }
    }
    let last = &geoms[geoms.len() - 1];
    let end = last.s + last.length;
    if (end - road.length).abs() > 1e-6 {
        out.push(diag(
            Severity::Warning,
            road,
            Some(end),
            format!(
                "road length {} differs from the geometry's end s={end} (Δ {:.3e} m)",
                road.length,
                road.length - end
            ),
        ));
    }
}

fn angle_diff(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(std::f64::consts::TAU);
    d.min(std::f64::consts::TAU - d)
}

fn check_profiles(road: &Road, out: &mut Vec<Diagnostic>) {
    for (name, recs) in [
        ("elevation", &road.elevation_profile.elevations),
        ("superelevation", &road.lateral_profile.superelevations),
        ("laneOffset", &road.lanes.lane_offsets),
    ] {
        for w in recs.windows(2) {
            let end = w[0].value(w[1].s - w[0].s);
            let jump = w[1].a - end;
            if jump.abs() > 1e-3 {
                out.push(diag(
                    Severity::Warning,
                    road,
                    Some(w[1].s),
                    format!("{name} jumps by {jump:.4} at a record joint"),
                ));
            }
        }
        if let Some(r) = recs.iter().find(|r| r.s > road.length + 1e-6) {
            out.push(diag(Severity::Warning, road, Some(r.s), format!("{name} record starts beyond the road's end")));
        }
        redundant(road, name, 0.0, recs, out);
    }
    for sec in &road.lanes.lane_sections {
        for lane in sec.lanes() {
            redundant(road, &format!("lane {} width", lane.id), sec.s, &lane.widths, out);
            redundant(road, &format!("lane {} border", lane.id), sec.s, &lane.borders, out);
        }
    }
}

/// Adjacent records of one equation (qc-opendrive's rule performance.avoid_redundant_info, a
/// warning there too, which its strict run fails on): a warning at the second record's s
/// (`base` + its sOffset). Not an error: sample maps have hundreds (Town07: 1,431), and a build
/// on them carries some into its road.
fn redundant(road: &Road, name: &str, base: f64, recs: &[Poly3], out: &mut Vec<Diagnostic>) {
    for w in recs.windows(2) {
        if w[0].same_equation(&w[1]) {
            out.push(diag(
                Severity::Warning,
                road,
                Some(base + w[1].s),
                format!(
                    "redundant {name} record: the same cubic as the one at {:.6} (coefficients within {:.0e} \
                     when expanded in s; qc-opendrive performance.avoid_redundant_info)",
                    base + w[0].s,
                    crate::REDUNDANT_EPSILON
                ),
            ));
        }
    }
}

#[derive(Clone, Copy)]
enum Extreme {
    /// The cubic's value.
    Value,
    /// Its first derivative.
    Slope,
}

/// Where a cubic record's value is stationary: the real roots of 3d·x² + 2c·x + b = 0.
fn stationary(p: &Poly3) -> Vec<f64> {
    let (a, b, c) = (3.0 * p.d, 2.0 * p.c, p.b);
    if a != 0.0 {
        let disc = b * b - 4.0 * a * c;
        if disc >= 0.0 {
            return vec![(-b + disc.sqrt()) / (2.0 * a), (-b - disc.sqrt()) / (2.0 * a)];
        }
    } else if b != 0.0 {
        return vec![-c / b];
    }
    Vec::new()
}

/// The largest value (or slope) of a cubic record over [0, len] and where: at an end or where
/// the next derivative vanishes inside. A non-finite or negative len is taken as 0.
fn extreme(p: &Poly3, len: f64, what: Extreme) -> (f64, f64) {
    let len = if len.is_finite() { len.max(0.0) } else { 0.0 };
    let mut xs = vec![0.0, len];
    match what {
        Extreme::Value => xs.extend(stationary(p)),
        Extreme::Slope => {
            if p.d != 0.0 {
                xs.push(-p.c / (3.0 * p.d));
            }
        }
    }
    let f = |x: f64| match what {
        Extreme::Value => p.value(x),
        Extreme::Slope => p.slope(x),
    };
    xs.into_iter().filter(|x| (0.0..=len).contains(x)).map(|x| (f(x), x)).fold((0.0, 0.0), |best, (v, x)| {
        if v.abs() > best.0.abs() || v.is_nan() {
            (v, x)
        } else {
            best
        }
    })
}

/// The road's largest |superelevation| (rad) and |grade|, exactly (at each record's extremes,
/// as [`check`] finds them).
pub fn profile_extremes(road: &Road) -> (f64, f64) {
    let records = |recs: &[Poly3], i: usize| recs.get(i + 1).map_or(road.length, |n| n.s) - recs[i].s;
    let most = |recs: &[Poly3], what: Extreme| {
        (0..recs.len()).map(|i| extreme(&recs[i], records(recs, i), what).0.abs()).fold(0.0, f64::max)
    };
    (
        most(&road.lateral_profile.superelevations, Extreme::Value),
        most(&road.elevation_profile.elevations, Extreme::Slope),
    )
}

/// Values no road can have, or only an unusual one: superelevation, grade, curvature.
fn check_plausible(road: &Road, out: &mut Vec<Diagnostic>) {
    let records = |recs: &[Poly3], i: usize| recs.get(i + 1).map_or(road.length, |n| n.s) - recs[i].s;
    let supers = &road.lateral_profile.superelevations;
    for (i, p) in supers.iter().enumerate() {
        let (v, at) = extreme(p, records(supers, i), Extreme::Value);
        let sev = if v.is_nan() || v.abs() >= SUPERELEVATION_ERROR {
            Severity::Error
        } else if v.abs() > SUPERELEVATION_WARNING {
            Severity::Warning
        } else {
            continue;
        };
        out.push(implausible(
            sev,
            road,
            Some(p.s + at),
            format!(
                "superelevation {v:.4} rad ({:.1}°): {}",
                v.to_degrees(),
                if sev == Severity::Error {
                    "the surface stands on edge or upside down".to_string()
                } else {
                    format!("beyond {SUPERELEVATION_WARNING} rad")
                }
            ),
        ));
    }
    let elevs = &road.elevation_profile.elevations;
    for (i, p) in elevs.iter().enumerate() {
        let (g, at) = extreme(p, records(elevs, i), Extreme::Slope);
        if g.abs() <= GRADE_WARNING {
            continue;
        }
        out.push(implausible(
            Severity::Warning,
            road,
            Some(p.s + at),
            format!("grade {:.1} % (elevation slope {g:.4}): beyond {} %", 100.0 * g, 100.0 * GRADE_WARNING),
        ));
    }
    for (i, g) in road.plan_view.geometries.iter().enumerate() {
        let k = Curve::new(g).max_abs_curvature();
        if k.is_nan() || k > CURVATURE_ERROR {
            out.push(implausible(
                Severity::Error,
                road,
                Some(g.s),
                format!(
                    "geometry {i} has curvature up to {k:.4e} 1/m (radius {:.3e} m): beyond {CURVATURE_ERROR} 1/m, \
                     no vehicle follows a radius below 1 m",
                    1.0 / k
                ),
            ));
        }
    }
}

fn check_lanes(road: &Road, out: &mut Vec<Diagnostic>) {
    let secs = &road.lanes.lane_sections;
    if secs.is_empty() {
        out.push(diag(Severity::Error, road, None, "road has no laneSection".into()));
        return;
    }
    let uses_border = secs.iter().flat_map(|s| s.lanes()).any(|l| !l.borders.is_empty());
    if uses_border && !road.lanes.lane_offsets.is_empty() {
        out.push(diag(
            Severity::Warning,
            road,
            None,
            "laneOffset together with lane borders (rule road.lanes.lane_offset.no_offset_if_border_defined)".into(),
        ));
    }
    for (i, sec) in secs.iter().enumerate() {
        let end = secs.get(i + 1).map_or(road.length, |n| n.s);
        if sec.s >= road.length && road.length > 0.0 {
            out.push(diag(
                Severity::Warning,
                road,
                Some(sec.s),
                "lane section starts at or beyond the road's end".into(),
            ));
        }
        for (side, sign) in [(&sec.left, 1), (&sec.right, -1), (&sec.center, 0)] {
            let Some(side) = side else { continue };
            let mut ids: Vec<i32> = side.lanes.iter().map(|l| l.id).collect();
            ids.sort_by_key(|id| id.abs());
            for (k, id) in ids.iter().enumerate() {
                let want = sign * (k as i32 + 1);
                if *id != want {
                    out.push(diag(
                        Severity::Error,
                        road,
                        Some(sec.s),
                        format!(
                            "lane ids of the {} side are {ids:?}, expected consecutive from {}",
                            side_name(sign),
                            sign.max(-1)
                        ),
                    ));
                    break;
                }
            }
        }
        for lane in sec.lanes().filter(|l| l.id != 0) {
            if !lane.widths.is_empty() && !lane.borders.is_empty() {
                out.push(diag(
                    Severity::Warning,
                    road,
                    Some(sec.s),
                    format!("lane {} has both width and border records", lane.id),
                ));
            }
            for (k, w) in lane.widths.iter().enumerate() {
                let w_end = lane.widths.get(k + 1).map_or(end - sec.s, |n| n.s);
                let len = (w_end - w.s).max(0.0);
                let (widest, at) = extreme(w, len, Extreme::Value);
                if widest > LANE_WIDTH_WARNING {
                    out.push(implausible(
                        Severity::Warning,
                        road,
                        Some(sec.s + w.s + at),
                        format!("lane {} is {widest:.3} m wide, more than {LANE_WIDTH_WARNING} m", lane.id),
                    ));
                }
                // Sample the cubic, its ends and its interior extremes.
                let mut xs: Vec<f64> = (0..=8).map(|j| len * j as f64 / 8.0).collect();
                xs.extend(stationary(w));
                let min =
                    xs.iter().filter(|x| (0.0..=len).contains(*x)).map(|&x| w.value(x)).fold(f64::INFINITY, f64::min);
                if min < -1e-9 {
                    out.push(diag(
                        Severity::Error,
                        road,
                        Some(sec.s + w.s),
                        format!(
                            "lane {} width becomes negative ({min:.4} m): widths must be >= 0, the side gives the sign",
                            lane.id
                        ),
                    ));
                }
            }
        }
    }
    // Lane borders must not cross (outer inside inner) along the road.
    let ev = RoadEval::new(road);
    let n = (road.length.ceil() as usize).clamp(1, 100_000);
    for i in 0..=n {
        let s = road.length * i as f64 / n as f64;
        let b = ev.lane_borders(s);
        for w in b.windows(2) {
            if w[1].1 < w[0].1 - 1e-6 {
                out.push(diag(
                    Severity::Warning,
                    road,
                    Some(s),
                    format!("lane {} border lies outside lane {} border", w[0].0, w[1].0),
                ));
                return;
            }
        }
    }
}

fn side_name(sign: i32) -> &'static str {
    match sign {
        1 => "left",
        -1 => "right",
        _ => "center",
    }
}
