//! The build report: `report.json` (what was made, how well, how fast) and `report.html`, one
//! self-contained page (plots as inline SVG, images beside it in the output directory) with a
//! small script that marks the page when every image loaded and nothing raised an error (CI
//! opens it in headless Chromium and reads that mark).

use opendrive::OpenDrive;
use pipeline::road::SurveyReport;
use pipeline::{Roadside, SurfaceGrid};
use serde::Serialize;

mod crg_view;
mod encode;
mod html;
mod model;
mod plan_view;
mod scene3d;
mod svg;

pub(crate) use html::html;
pub use model::*;

/// What the report says of the CRG grid: one build's grid, or the work units' added up.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GridSummary {
    /// Share of the nodes between the outermost lane borders with a height.
    pub coverage: f64,
    /// Nodes estimated from points.
    pub estimated: usize,
    /// Nodes filled along track.
    pub filled: usize,
    /// The points the grid saw.
    pub points: pipeline::surface::PointCounts,
}

impl GridSummary {
    /// The summary of one build's grid.
    pub fn of(g: &SurfaceGrid) -> GridSummary {
        GridSummary { coverage: g.coverage, estimated: g.estimated, filled: g.filled, points: g.points }
    }
}

/// Everything the report draws from.
pub(crate) struct Facts<'a> {
    pub axis_label: &'a str,
    /// The fitted axis and its tolerance, when the build fitted one.
    pub axis_fit: Option<(&'a pipeline::axis::AxisRoad, f64)>,
    pub odr: &'a OpenDrive,
    /// The axis the road was surveyed on (its design, when it is a map's road).
    pub axis: &'a OpenDrive,
    pub survey: &'a SurveyReport,
    pub grid: &'a GridSummary,
    /// The CRG tiles.
    pub tiles: &'a [Tile],
    pub voxels: &'a crate::roadside::VoxelSummary,
    pub side: &'a Roadside,
    /// The depth ribbons ([`Ribbons::of`] the roadside before their pixels were let go).
    pub ribbons: Option<Ribbons>,
    /// The inputs, as the manifest shows them.
    pub inputs: &'a [String],
    pub crs: Option<&'a str>,
    /// The CRS's OGC WKT, where known.
    pub crs_wkt: Option<&'a str>,
    /// The CRS the build was told (`--crs`): its EPSG code names a CRS given as a PROJ string
    /// when their PROJ strings agree.
    pub crs_hint: Option<&'a str>,
    /// The part of the axis road that road.xodr is (None: all of it).
    pub part: Option<&'a AxisPart>,
    /// The passes' registration (None: not registered).
    pub registration: Option<&'a RegistrationSummary>,
    /// Throughput and memory.
    pub performance: &'a Performance,
    /// The stages so far and their times.
    pub stages: &'a [StageTime],
}

/// A CRS as the report names it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CrsName {
    /// The name (the first quoted string of its WKT), where known.
    pub name: Option<String>,
    pub epsg: Option<u32>,
    /// Its PROJ string, where known.
    pub proj: Option<String>,
}

impl CrsName {
    /// The name of the CRS `label` (EPSG:NNNN or a PROJ string), from its WKT or its EPSG
    /// code's; a PROJ string takes the code of `hint` when their PROJ strings agree.
    pub fn of(label: &str, wkt: Option<&str>, hint: Option<&str>) -> CrsName {
        use scan::CrsDef;
        let def = CrsDef::parse(label).ok();
        let proj = def.as_ref().and_then(CrsDef::proj_string);
        fn tokens(p: &str) -> Vec<&str> {
            let mut t: Vec<&str> = p.split_whitespace().collect();
            t.sort_unstable();
            t
        }
        let epsg = def.as_ref().and_then(|d| d.epsg).or_else(|| {
            let hint = CrsDef::parse(hint?).ok()?;
            let (code, theirs) = (hint.epsg?, hint.proj_string()?);
            (tokens(&theirs) == tokens(proj.as_deref()?)).then_some(code)
        });
        let wkt = epsg.and_then(CrsDef::wkt_of).or(wkt);
        let name = wkt.and_then(|w| w.split('"').nth(1)).filter(|n| !n.trim().is_empty()).map(str::to_string);
        CrsName { name, epsg, proj }
    }

    /// "HD72 / EOV (EPSG:23700)", or what is known of it.
    pub fn text(&self) -> String {
        match (&self.name, self.epsg, &self.proj) {
            (Some(n), Some(c), _) => format!("{n} (EPSG:{c})"),
            (Some(n), None, _) => n.clone(),
            (None, Some(c), _) => format!("EPSG:{c}"),
            (None, None, Some(p)) => format!("a PROJ string without an EPSG code: {p}"),
            (None, None, None) => "unknown".into(),
        }
    }
}

/// A design within this share of a plausibility limit is at the limit (its survey may measure
/// it just beyond).
const AT_LIMIT: f64 = 0.98;

/// The quantity an implausibility finding is about (as `roadscan check` words it).
fn odd_kind(message: &str) -> Option<&'static str> {
    ["superelevation", "grade", "wide", "curvature"].into_iter().find(|k| message.contains(k))
}

/// What the report keeps of a CRG tile (the tile itself is dropped after its search, so
/// memory holds one tile at a time).
#[derive(Debug)]
pub(crate) struct Tile {
    /// Paths relative to the output directory: the tile and its render.
    pub file: String,
    pub png: String,
    pub u: (f64, f64),
    pub v: (f64, f64),
    pub nodes: (usize, usize),
    /// Share of nodes with a height.
    pub coverage: f64,
    /// Blocks along and across, and the share of nodes with a height per block (row-major
    /// along u, v from right to left).
    pub blocks: (usize, usize, Vec<f64>),
    /// Errors of `roadscan check`.
    pub errors: Vec<String>,
    /// Where its render drew the grid (None: not rendered).
    pub render: Option<opencrg::render::RenderInfo>,
    /// The potholes and manholes found in it: kind and [u0, u1, v0, v1], m.
    pub marks: Vec<(&'static str, [f64; 4])>,
}

/// Coverage blocks along and across, m.
const BLOCK: (f64, f64) = (1.0, 0.25);

impl Tile {
    pub fn of(file: String, png: String, crg: &opencrg::Crg) -> Tile {
        let (nu, nv) = (crg.nu, crg.nv());
        let v = crg.v_positions();
        let (du, dv) = (crg.du(), (v[nv - 1] - v[0]) / (nv - 1).max(1) as f64);
        let (bu, bv) = (((BLOCK.0 / du).round() as usize).max(1), ((BLOCK.1 / dv).round() as usize).max(1));
        let (mu, mv) = (nu.div_ceil(bu), nv.div_ceil(bv));
        let (mut have, mut all) = (vec![0usize; mu * mv], vec![0usize; mu * mv]);
        for iu in 0..nu {
            for iv in 0..nv {
                let k = (iu / bu) * mv + iv / bv;
                all[k] += 1;
                have[k] += usize::from(!crg.z_at(iu, iv).is_nan());
            }
        }
        let share = have.iter().zip(&all).map(|(h, a)| *h as f64 / (*a).max(1) as f64).collect();
        let errors = opencrg::check::check(crg)
            .into_iter()
            .filter(|d| d.severity == opencrg::check::Severity::Error)
            .map(|d| format!("{file}: {}", d.message))
            .collect();
        Tile {
            coverage: have.iter().sum::<usize>() as f64 / (nu * nv).max(1) as f64,
            u: (crg.u_first(), crg.u_last()),
            v: (v[0], v[nv - 1]),
            nodes: (nu, nv),
            blocks: (mu, mv, share),
            errors,
            file,
            png,
            render: None,
            marks: Vec::new(),
        }
    }
}

/// A check of the products: what was checked, whether it passed, and what was found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// What was checked.
    pub name: String,
    /// Whether it passed.
    pub pass: bool,
    /// What was found (numbers, the problems).
    pub detail: String,
}

impl Check {
    fn new(name: impl Into<String>, pass: bool, detail: impl Into<String>) -> Check {
        Check { name: name.into(), pass, detail: detail.into() }
    }
}

impl std::fmt::Display for Check {
    /// "check failed: NAME: DETAIL" (or "check passed: ...").
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let verdict = if self.pass { "passed" } else { "failed" };
        write!(f, "check {verdict}: {}: {}", self.name, self.detail)
    }
}

/// The report of a build, from everything it draws from.
pub(crate) fn report(f: &Facts<'_>) -> Report {
    let road = &f.odr.roads[0];
    let axis_fit = f.axis_fit.map(|(b, tol)| AxisFitSummary {
        tolerance_m: tol,
        max_m: b.plan.max,
        rms_m: b.plan.rms,
        records: crate::axis::records(b),
        elevation: b.elevation.as_ref().map(|e| AxisElevation { records: e.records.len(), max_m: e.max, rms_m: e.rms }),
    });
    let profile = |p: &Option<opendrive::fit::ProfileFit>| {
        p.as_ref().map(|p| ProfileSummary { records: p.records.len(), max: p.max, rms: p.rms, rejected: p.rejected })
    };
    let curb = |c: &Option<pipeline::road::Curb>| c.as_ref().map(|c| CurbSummary { t: c.t, height: c.height });
    let sv = f.survey;
    let tiles: Vec<TileSummary> = f
        .tiles
        .iter()
        .map(|t| TileSummary {
            file: t.file.clone(),
            png: t.png.clone(),
            u: [t.u.0, t.u.1],
            v: [t.v.0, t.v.1],
            nodes: [t.nodes.0, t.nodes.1],
            coverage: t.coverage,
        })
        .collect();
    let ribbons = f.ribbons.clone();
    let mut checks = Vec::new();
    if let Some((b, tol)) = f.axis_fit {
        let e = b.elevation.as_ref().map_or(0.0, |e| e.max);
        checks.push(Check::new(
            "axis within its tolerance",
            b.within(tol),
            format!(
                "plan view max {:.1} mm, elevation max {:.1} mm, tolerance {:.1} mm",
                b.plan.max * 1e3,
                e * 1e3,
                tol * 1e3
            ),
        ));
    }
    let diags = opendrive::validate::check(f.odr, &Default::default());
    let count = |s| diags.iter().filter(|d| d.severity == s).count();
    let (errors, warnings) =
        (count(opendrive::validate::Severity::Error), count(opendrive::validate::Severity::Warning));
    checks.push(Check::new(
        "road.xodr: roadscan check (geometry continuity, lanes, links)",
        errors == 0,
        format!("{errors} errors, {warnings} warnings"),
    ));
    // Values no ordinary road has (a 50-degree superelevation, a 9 m lane): a failed check of
    // the survey, whatever check's severity.
    // A value the axis itself declares (a banked track's superelevation, a ramp's grade in a
    // map's design) is the design, measured: named, not failed.
    let mut designed: std::collections::HashSet<&str> = opendrive::validate::check(f.axis, &Default::default())
        .iter()
        .filter(|d| d.implausible)
        .filter_map(|d| odd_kind(&d.message))
        .collect();
    // A design at the limit itself (a 30.0 % ramp) is measured a hair beyond it.
    if let Some(road) = f.axis.roads.first() {
        let (superelevation, grade) = opendrive::validate::profile_extremes(road);
        use opendrive::validate::{GRADE_WARNING, SUPERELEVATION_WARNING};
        if grade >= AT_LIMIT * GRADE_WARNING {
            designed.insert("grade");
        }
        if superelevation >= AT_LIMIT * SUPERELEVATION_WARNING {
            designed.insert("superelevation");
        }
    }
    let (as_designed, odd): (Vec<&opendrive::validate::Diagnostic>, Vec<&opendrive::validate::Diagnostic>) = diags
        .iter()
        .filter(|d| d.implausible)
        .partition(|d| odd_kind(&d.message).is_some_and(|k| designed.contains(k)));
    let listed = |v: &[&opendrive::validate::Diagnostic]| {
        let more = if v.len() > 5 { format!("; and {} more", v.len() - 5) } else { String::new() };
        format!("{}{more}", v[..v.len().min(5)].iter().map(|d| d.to_string()).collect::<Vec<_>>().join("; "))
    };
    let detail = match (odd.is_empty(), as_designed.is_empty()) {
        (true, true) => "all within the limits of roadscan check".to_string(),
        (true, false) => format!("beyond the limits as the axis road's design is: {}", listed(&as_designed)),
        (false, _) => listed(&odd),
    };
    checks.push(Check::new(
        "road.xodr: plausible superelevation, grade, lane widths and curvature",
        odd.is_empty(),
        detail,
    ));
    // What the survey could not find and made up for (lanes from the paved extent where no
    // marking line or curb was found): the products are written, the check fails.
    for finding in &sv.findings {
        checks.push(Check::new(finding.check, false, finding.detail.clone()));
    }
    let crg_errors: Vec<String> = f.tiles.iter().flat_map(|t| t.errors.iter().cloned()).collect();
    checks.push(Check::new(
        "CRG tiles: roadscan check (header, folding on curves)",
        crg_errors.is_empty(),
        if crg_errors.is_empty() { format!("{} tiles, no errors", f.tiles.len()) } else { crg_errors.join("; ") },
    ));
    checks.push(Check::new(
        "CRG coverage of the lanes at least 95 %",
        f.grid.coverage >= 0.95,
        format!("{:.1} % of the nodes between the outermost lane borders have a height", 100.0 * f.grid.coverage),
    ));
    let lane_sections = road
        .lanes
        .lane_sections
        .iter()
        .map(|sec| LaneSection {
            s: sec.s,
            lanes: sec.lanes().filter(|l| l.id != 0).map(|l| LaneKind { id: l.id, kind: l.kind.clone() }).collect(),
        })
        .collect();
    Report {
        roadscan: env!("CARGO_PKG_VERSION").into(),
        inputs: f.inputs.to_vec(),
        crs: f.crs.map(str::to_string),
        crs_name: f.crs.map(|c| CrsName::of(c, f.crs_wkt, f.crs_hint).text()),
        road: RoadSummary {
            file: "road.xodr".into(),
            id: road.id.clone(),
            length: road.length,
            axis: f.axis_label.to_string(),
            lane_sections,
            objects: road.objects.objects.len(),
            part_of_axis: f.part.cloned(),
        },
        axis_fit,
        profile: Profiles {
            rows: [sv.rows.with_surface, sv.rows.all],
            elevation: profile(&sv.elevation),
            superelevation: profile(&sv.superelevation),
        },
        curbs: Curbs { left: curb(&sv.curbs[0]), right: curb(&sv.curbs[1]) },
        markings: sv
            .markings
            .iter()
            .map(|m| Marking {
                t: m.t,
                s: [m.s_range.0, m.s_range.1],
                kind: m.kind.to_string(),
                width: m.width,
                dash_gap: m.dash_gap.map(|(d, g)| [d, g]),
            })
            .collect(),
        features: sv
            .features
            .iter()
            .map(|x| Feature {
                kind: x.kind.to_string(),
                s: x.s,
                t: x.t,
                length: x.length,
                width: x.width,
                depth: x.depth,
            })
            .collect(),
        crg: CrgSummary {
            tiles,
            coverage: f.grid.coverage,
            estimated: f.grid.estimated,
            filled: f.grid.filled,
            points: CrgPoints { offered: f.grid.points.offered, near: f.grid.points.near, kept: f.grid.points.kept },
            z: "residual: height above the road.xodr surface (elevation and superelevation), mode attached".into(),
        },
        voxels: Voxels {
            count: f.voxels.voxels,
            obj: ObjFile {
                file: "scene.obj".into(),
                vertices: f.voxels.obj.vertices,
                faces: f.voxels.obj.faces,
                bytes: f.voxels.obj.bytes,
            },
            glb: f.voxels.glb.as_ref().map(|g| GlbFile { file: "scene.glb".into(), bytes: g.bytes }),
        },
        ribbons,
        points: Points { read: f.side.points.offered, near_road: f.side.points.kept },
        checks,
        registration: f.registration.cloned(),
        performance: f.performance.clone(),
        stages: f.stages.to_vec(),
    }
}

/// `s` escaped for HTML text and attribute values.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn crs_by_name_and_code() {
        let by_code = CrsName::of("EPSG:23700", None, None);
        assert_eq!(by_code.text(), "HD72 / EOV (EPSG:23700)");
        assert!(by_code.proj.as_deref().unwrap().contains("+proj=somerc"));
        // A PROJ string takes the code it was told when their PROJ strings agree (in any order).
        let proj = by_code.proj.unwrap();
        let mut shuffled: Vec<&str> = proj.split_whitespace().collect();
        shuffled.reverse();
        let named = CrsName::of(&shuffled.join(" "), None, Some("EPSG:23700"));
        assert_eq!(named.text(), "HD72 / EOV (EPSG:23700)");
        // Another CRS told: no name.
        let other = CrsName::of(&proj, None, Some("EPSG:32633"));
        assert_eq!((other.name, other.epsg), (None, None));
        assert!(CrsName::of(&proj, None, None).text().starts_with("a PROJ string without an EPSG code: +proj=somerc"));
        // A WKT of its own names it.
        let wkt = CrsName::of(&proj, Some("PROJCS[\"My grid\",GEOGCS[\"x\"]]"), None);
        assert_eq!(wkt.text(), "My grid");
    }

    /// What a value in report.json is.
    #[derive(Debug, Clone, Copy, PartialEq)]
    enum Is {
        Str,
        Num,
        Int,
        Bool,
        Arr,
        /// null or an object.
        OptObj,
        /// null or a number.
        OptNum,
        /// null or an array.
        OptArr,
    }

    fn is(v: &serde_json::Value, want: Is) -> bool {
        match want {
            Is::Str => v.is_string(),
            Is::Num => v.is_number(),
            Is::Int => v.is_u64() || v.is_i64(),
            Is::Bool => v.is_boolean(),
            Is::Arr => v.is_array(),
            Is::OptObj => v.is_null() || v.is_object(),
            Is::OptNum => v.is_null() || v.is_number(),
            Is::OptArr => v.is_null() || v.is_array(),
        }
    }

    /// The keys and types readers of report.json (CI, the cli tests, people's scripts) rely on,
    /// from a real build: a field dropped or renamed in [`Report`] fails here.
    #[test]
    fn report_json_has_the_keys_and_types_its_readers_rely_on() {
        use crate::config::{AxisSource, BuildConfig};
        use Is::*;
        let dir = std::env::temp_dir().join(format!("roadscan-report-keys-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut survey = crate::synth::SynthConfig::demo(dir.join("survey"), 1);
        survey.scanner.points_per_rev = 100;
        crate::synth::survey(&survey).unwrap();
        let config = BuildConfig {
            input: vec![dir.join("survey/scan.las")],
            axis: AxisSource::Trajectory {
                path: dir.join("survey/trajectory.csv"),
                offset: 0.0,
                sensor_height: None,
                pass: None,
            },
            crs: Some("EPSG:23700".into()),
            out: dir.join("out"),
            ..BuildConfig::default()
        };
        let built = crate::build(&config, &crate::Silent).unwrap();
        let text = std::fs::read(dir.join("out/report.json")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        // The file is the struct's JSON, its keys sorted in every object (as report.json always
        // had them).
        assert!(text == built.report_json && built.report.json().unwrap() == text);
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
        let text = String::from_utf8(text).unwrap();
        let mut last: Vec<Option<&str>> = Vec::new();
        for line in text.lines() {
            let indent = line.len() - line.trim_start().len();
            last.truncate(indent + 1);
            last.resize(indent + 1, None);
            if let Some(key) = line.trim_start().strip_prefix('"').and_then(|l| l.split_once("\": ")).map(|k| k.0) {
                assert!(last[indent] < Some(key), "report.json: {key} after {:?}", last[indent]);
                last[indent] = Some(key);
            }
        }

        let want: &[(&str, Is)] = &[
            ("/roadscan", Str),
            ("/inputs/0", Str),
            ("/crs", Str),
            ("/crs_name", Str),
            ("/road/file", Str),
            ("/road/id", Str),
            ("/road/length", Num),
            ("/road/axis", Str),
            ("/road/objects", Int),
            ("/road/lane_sections", Arr),
            ("/axis_fit/tolerance_m", Num),
            ("/axis_fit/max_m", Num),
            ("/axis_fit/rms_m", Num),
            ("/axis_fit/records/0/kind", Str),
            ("/axis_fit/records/0/s", Num),
            ("/axis_fit/records/0/length", Num),
            ("/axis_fit/records/0/curv_start", Num),
            ("/axis_fit/records/0/curv_end", Num),
            ("/axis_fit/records/0/max_m", OptNum),
            ("/axis_fit/records/0/rms_m", OptNum),
            ("/axis_fit/records/0/vertices", Int),
            ("/axis_fit/elevation", OptObj),
            ("/profile/rows/0", Int),
            ("/profile/rows/1", Int),
            ("/profile/elevation/records", Int),
            ("/profile/elevation/max", Num),
            ("/profile/elevation/rms", Num),
            ("/profile/elevation/rejected", Int),
            ("/profile/superelevation", OptObj),
            ("/curbs/left", OptObj),
            ("/curbs/right", OptObj),
            ("/markings", Arr),
            ("/features", Arr),
            ("/crg/tiles/0/file", Str),
            ("/crg/tiles/0/png", Str),
            ("/crg/tiles/0/u/1", Num),
            ("/crg/tiles/0/v/1", Num),
            ("/crg/tiles/0/nodes/1", Int),
            ("/crg/tiles/0/coverage", Num),
            ("/crg/coverage", Num),
            ("/crg/estimated", Int),
            ("/crg/filled", Int),
            ("/crg/points/offered", Int),
            ("/crg/points/near", Int),
            ("/crg/points/kept", Int),
            ("/crg/z", Str),
            ("/voxels/count", Int),
            ("/voxels/obj/file", Str),
            ("/voxels/obj/vertices", Int),
            ("/voxels/obj/faces", Int),
            ("/voxels/obj/bytes", Int),
            ("/voxels/glb/file", Str),
            ("/voxels/glb/bytes", Int),
            ("/ribbons/cell", Num),
            ("/ribbons/columns", Int),
            ("/ribbons/rows", Int),
            ("/ribbons/filled/left", Num),
            ("/ribbons/filled/right", Num),
            ("/ribbons/street_view", Str),
            ("/points/read", Int),
            ("/points/near_road", Int),
            ("/checks", Arr),
            ("/registration", OptObj),
            ("/performance/points_read", Int),
            ("/performance/seconds", Num),
            ("/performance/work_units", Int),
            ("/performance/reading_seconds", Num),
            ("/performance/points_per_second", Num),
            ("/performance/peak_rss_mb", OptNum),
            ("/performance/threads", Int),
            ("/stages/0/stage", Str),
            ("/stages/0/seconds", Num),
        ];
        for (path, kind) in want {
            let got = v.pointer(path).unwrap_or_else(|| panic!("report.json lacks {path}"));
            assert!(is(got, *kind), "{path}: {got} is not {kind:?}");
        }
        // Each element of the arrays, whether this sparse survey found any or not.
        let each = |path: &str, keys: &[(&str, Is)]| {
            let items = v.pointer(path).and_then(serde_json::Value::as_array).unwrap();
            for (item, (key, kind)) in items.iter().flat_map(|i| keys.iter().map(move |k| (i, k))) {
                assert!(item.get(key).is_some_and(|x| is(x, *kind)), "{path}: {key} not {kind:?} in {item}");
            }
            items.len()
        };
        each("/road/lane_sections", &[("s", Num), ("lanes", Arr)]);
        let lanes: usize = (0..v["road"]["lane_sections"].as_array().unwrap().len())
            .map(|k| each(&format!("/road/lane_sections/{k}/lanes"), &[("id", Int), ("type", Str)]))
            .sum();
        assert!(lanes > 0, "{}", v["road"]);
        each("/markings", &[("t", Num), ("s", Arr), ("type", Str), ("width", Num), ("dash_gap", OptArr)]);
        each("/features", &[("type", Str), ("s", Num), ("t", Num), ("length", Num), ("width", Num), ("depth", Num)]);
        // The whole build's points, in the CRG's and the roadside's counts.
        assert_eq!(v["points"]["read"], v["performance"]["points_read"]);
        assert!(v["road"].get("part_of_axis").is_none(), "{}", v["road"]);
        // Shares are in 0..=1.
        let share = |p: &str| v.pointer(p).and_then(serde_json::Value::as_f64).unwrap();
        for p in ["/crg/coverage", "/crg/tiles/0/coverage", "/ribbons/filled/left", "/ribbons/filled/right"] {
            assert!((0.0..=1.0).contains(&share(p)), "{p}: {}", share(p));
        }
        assert!(share("/crg/coverage") > 0.0, "{}", v["crg"]);
        // Every check has its name, verdict and detail, and nothing else; as the build says.
        let checks = v["checks"].as_array().unwrap();
        assert!(!checks.is_empty());
        assert_eq!(checks.len(), built.report.checks.len());
        each("/checks", &[("name", Str), ("pass", Bool), ("detail", Str)]);
        for (c, typed) in checks.iter().zip(&built.report.checks) {
            let keys: Vec<&str> = c.as_object().unwrap().keys().map(String::as_str).collect();
            assert_eq!(keys, ["detail", "name", "pass"], "{c}");
            assert_eq!((c["name"].as_str().unwrap(), c["pass"].as_bool().unwrap()), (typed.name.as_str(), typed.pass));
        }
        assert_eq!(v["stages"].as_array().unwrap().len(), built.report.stages.len());
    }
}
