//! The build report: `report.json` (what was made, how well, how fast) and `report.html`, one
//! self-contained page (plots as inline SVG, images beside it in the output directory) with a
//! small script that marks the page when every image loaded and nothing raised an error (CI
//! opens it in headless Chromium and reads that mark).

use opendrive::{OpenDrive, RoadEval};
use pipeline::road::SurveyReport;
use pipeline::{Roadside, SurfaceGrid};
use serde_json::{json, Value};
use std::fmt::Write;

/// Everything the report draws from.
pub(crate) struct Facts<'a> {
    pub axis_label: &'a str,
    /// The fitted axis and its tolerance, when the build fitted one.
    pub axis_fit: Option<(&'a pipeline::axis::AxisRoad, f64)>,
    pub odr: &'a OpenDrive,
    /// The axis the road was surveyed on (its design, when it is a map's road).
    pub axis: &'a OpenDrive,
    pub survey: &'a SurveyReport,
    pub grid: &'a SurfaceGrid,
    /// The CRG tiles.
    pub tiles: &'a [Tile],
    pub voxels: &'a crate::roadside::VoxelSummary,
    pub side: &'a Roadside,
    /// The inputs, as the manifest shows them.
    pub inputs: &'a [String],
    pub crs: Option<&'a str>,
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
        }
    }
}

/// report.json (without `performance` and `stages`, which the build adds).
pub(crate) fn json(f: &Facts<'_>) -> Value {
    let road = &f.odr.roads[0];
    let axis = f.axis_fit.map(|(b, tol)| {
        let records: Vec<Value> = b
            .plan
            .geometries
            .iter()
            .zip(&b.plan.records)
            .map(|(g, r)| {
                let (k0, k1) = g.kind.end_curvatures().unwrap_or((0.0, 0.0));
                json!({"kind": crate::axis::kind_name(&g.kind), "s": g.s, "length": g.length, "curv_start": k0,
                       "curv_end": k1, "max_m": r.max, "rms_m": r.rms, "vertices": r.points})
            })
            .collect();
        json!({"tolerance_m": tol, "max_m": b.plan.max, "rms_m": b.plan.rms, "records": records,
               "elevation": b.elevation.as_ref().map(|e| json!({"records": e.records.len(), "max_m": e.max, "rms_m": e.rms}))})
    });
    let profile = |p: &Option<opendrive::fit::ProfileFit>| {
        p.as_ref().map(|p| json!({"records": p.records.len(), "max": p.max, "rms": p.rms, "rejected": p.rejected}))
    };
    let curb = |c: &Option<pipeline::road::Curb>| c.as_ref().map(|c| json!({"t": c.t, "height": c.height}));
    let sv = f.survey;
    let tiles: Vec<Value> = f
        .tiles
        .iter()
        .map(|t| {
            json!({"file": t.file, "png": t.png, "u": [t.u.0, t.u.1], "v": [t.v.0, t.v.1],
                   "nodes": [t.nodes.0, t.nodes.1], "coverage": t.coverage})
        })
        .collect();
    let ribbons = f.side.ribbons.as_ref().map(|[l, r]| {
        json!({"cell": l.cell, "columns": l.ns, "rows": l.nh, "filled": {"left": l.filled(), "right": r.filled()},
               "street_view": "ribbons/street_view.png"})
    });
    let mut checks = Vec::new();
    if let Some((b, tol)) = f.axis_fit {
        let e = b.elevation.as_ref().map_or(0.0, |e| e.max);
        checks.push(json!({"name": "axis within its tolerance", "pass": b.within(tol),
            "detail": format!("plan view max {:.1} mm, elevation max {:.1} mm, tolerance {:.1} mm", b.plan.max * 1e3, e * 1e3, tol * 1e3)}));
    }
    let diags = opendrive::validate::check(f.odr, &Default::default());
    let count = |s| diags.iter().filter(|d| d.severity == s).count();
    let (errors, warnings) =
        (count(opendrive::validate::Severity::Error), count(opendrive::validate::Severity::Warning));
    checks.push(json!({"name": "road.xodr: roadscan check (geometry continuity, lanes, links)", "pass": errors == 0,
        "detail": format!("{errors} errors, {warnings} warnings")}));
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
    checks.push(json!({"name": "road.xodr: plausible superelevation, grade, lane widths and curvature",
        "pass": odd.is_empty(), "detail": detail}));
    // What the survey could not find and made up for (lanes from the paved extent where no
    // marking line or curb was found): the products are written, the check fails.
    for finding in &sv.findings {
        checks.push(json!({"name": finding.check, "pass": false, "detail": finding.detail}));
    }
    let crg_errors: Vec<String> = f.tiles.iter().flat_map(|t| t.errors.iter().cloned()).collect();
    checks.push(json!({"name": "CRG tiles: roadscan check (header, folding on curves)", "pass": crg_errors.is_empty(),
        "detail": if crg_errors.is_empty() { format!("{} tiles, no errors", f.tiles.len()) } else { crg_errors.join("; ") }}));
    checks.push(json!({"name": "CRG coverage of the lanes at least 95 %", "pass": f.grid.coverage >= 0.95,
        "detail": format!("{:.1} % of the nodes between the outermost lane borders have a height", 100.0 * f.grid.coverage)}));
    let lanes: Vec<Value> = road
        .lanes
        .lane_sections
        .iter()
        .map(|sec| {
            let ids: Vec<Value> =
                sec.lanes().filter(|l| l.id != 0).map(|l| json!({"id": l.id, "type": l.kind})).collect();
            json!({"s": sec.s, "lanes": ids})
        })
        .collect();
    json!({
        "roadscan": env!("CARGO_PKG_VERSION"),
        "inputs": f.inputs,
        "crs": f.crs,
        "road": {"file": "road.xodr", "id": road.id, "length": road.length, "axis": f.axis_label, "lane_sections": lanes,
                 "objects": road.objects.objects.len()},
        "axis_fit": axis,
        "profile": {"rows": [sv.rows.0, sv.rows.1], "elevation": profile(&sv.elevation), "superelevation": profile(&sv.superelevation)},
        "curbs": {"left": curb(&sv.curbs[0]), "right": curb(&sv.curbs[1])},
        "markings": sv.markings.iter().map(|m| json!({"t": m.t, "s": [m.s_range.0, m.s_range.1], "type": m.kind,
            "width": m.width, "dash_gap": m.dash_gap.map(|(d, g)| [d, g])})).collect::<Vec<_>>(),
        "features": sv.features.iter().map(|x| json!({"type": x.kind, "s": x.s, "t": x.t, "length": x.length,
            "width": x.width, "depth": x.depth})).collect::<Vec<_>>(),
        "crg": {"tiles": tiles, "coverage": f.grid.coverage, "estimated": f.grid.estimated, "filled": f.grid.filled,
                "points": {"offered": f.grid.points.0, "near": f.grid.points.1, "kept": f.grid.points.2},
                "z": "residual: height above the road.xodr surface (elevation and superelevation), mode attached"},
        "voxels": {"count": f.voxels.voxels, "obj": {"file": "scene.obj", "vertices": f.voxels.obj.vertices,
                   "faces": f.voxels.obj.faces, "bytes": f.voxels.obj.bytes},
                   "glb": f.voxels.glb.as_ref().map(|g| json!({"file": "scene.glb", "bytes": g.bytes}))},
        "ribbons": ribbons,
        "points": {"read": f.side.points.0, "near_road": f.side.points.1},
        "checks": checks,
    })
}

/// Series for the plots: elevation and superelevation along the road.
pub(crate) struct Plots {
    s: Vec<f64>,
    elevation: Vec<f64>,
    superelevation: Vec<f64>,
}

impl Plots {
    pub fn of(odr: &OpenDrive) -> Plots {
        let road = RoadEval::new(&odr.roads[0]);
        let n = ((road.length() / 0.5).ceil() as usize).clamp(2, 2000);
        let s: Vec<f64> = (0..=n).map(|i| road.length() * i as f64 / n as f64).collect();
        let elevation = s.iter().map(|&x| road.elevation(x)).collect();
        let superelevation = s.iter().map(|&x| road.superelevation(x)).collect();
        Plots { s, elevation, superelevation }
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A line plot of `ys` over `xs` as inline SVG, with axis labels.
fn line_plot(xs: &[f64], ys: &[f64], x_label: &str, y_label: &str, scale: f64) -> String {
    let (w, h, m) = (900.0, 220.0, 50.0);
    let (x0, x1) = xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, &x| (a.0.min(x), a.1.max(x)));
    let (mut y0, mut y1) =
        ys.iter().filter(|y| y.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |a, &y| (a.0.min(y), a.1.max(y)));
    if !(y0.is_finite() && y1.is_finite()) {
        (y0, y1) = (0.0, 1.0);
    }
    if y1 - y0 < 1e-6 {
        (y0, y1) = (y0 - 0.5e-3, y1 + 0.5e-3);
    }
    let px = |x: f64| m + (x - x0) / (x1 - x0).max(1e-9) * (w - 2.0 * m);
    let py = |y: f64| h - m + (y0 - y) / (y1 - y0) * (h - 2.0 * m);
    let mut pts = String::new();
    for (x, y) in xs.iter().zip(ys) {
        if y.is_finite() {
            let _ = write!(pts, "{:.1},{:.1} ", px(*x), py(*y));
        }
    }
    format!(
        "<svg class=\"plot\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\">\
<rect x=\"{m}\" y=\"{m}\" width=\"{}\" height=\"{}\" fill=\"#fafafa\" stroke=\"#999\"/>\
<polyline fill=\"none\" stroke=\"#1f5fa8\" stroke-width=\"1.5\" points=\"{pts}\"/>\
<text x=\"{m}\" y=\"{}\" font-size=\"12\">{:.1}</text><text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{:.1}</text>\
<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{:.3}</text><text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{:.3}</text>\
<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">{}</text><text x=\"12\" y=\"{}\" font-size=\"12\">{}</text></svg>",
        w - 2.0 * m,
        h - 2.0 * m,
        h - m + 16.0,
        x0,
        w - m,
        h - m + 16.0,
        x1,
        m - 4.0,
        h - m,
        y0 * scale,
        m - 4.0,
        m + 10.0,
        y1 * scale,
        w / 2.0,
        h - 8.0,
        esc(x_label),
        m - 14.0,
        esc(y_label)
    )
}

/// A tile's coverage as an SVG heat map (blocks with data green, without grey-red).
fn coverage_map(u0: f64, nu: usize, nv: usize, share: &[f64]) -> String {
    let cw = (1000.0 / nu as f64).clamp(1.0, 8.0);
    let ch = 6.0;
    let (w, h) = (cw * nu as f64, ch * nv as f64);
    let mut r = String::new();
    for (k, x) in share.iter().enumerate() {
        let (i, j) = (k / nv, k % nv);
        let c = if *x >= 0.95 {
            "#2e8b57".to_string()
        } else {
            let f = x.clamp(0.0, 1.0);
            format!("rgb({},{},{})", (200.0 - 40.0 * f) as u8, (60.0 + 120.0 * f) as u8, 60)
        };
        let _ = write!(
            r,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{cw:.1}\" height=\"{ch}\" fill=\"{c}\"/>",
            i as f64 * cw,
            h - (j + 1) as f64 * ch
        );
    }
    format!(
        "<svg class=\"cov\" viewBox=\"0 0 {w:.0} {h:.0}\" width=\"{w:.0}\" height=\"{h:.0}\" role=\"img\"><title>coverage from u = {u0:.1} m, blocks of {} x {} m</title>{r}</svg>",
        BLOCK.0, BLOCK.1
    )
}

/// A table of the rows of `rows` (each cell already escaped).
fn table(head: &[&str], rows: &[Vec<String>]) -> String {
    let mut t = String::from("<table><tr>");
    for h in head {
        let _ = write!(t, "<th>{}</th>", esc(h));
    }
    t.push_str("</tr>");
    for r in rows {
        t.push_str("<tr>");
        for c in r {
            let _ = write!(t, "<td>{c}</td>");
        }
        t.push_str("</tr>");
    }
    t.push_str("</table>");
    t
}

fn num(v: &Value, scale: f64, digits: usize) -> String {
    v.as_f64().map_or("–".into(), |x| format!("{:.*}", digits, x * scale))
}

/// report.html from the report and the plots.
pub(crate) fn html(r: &Value, p: &Plots, tiles: &[Tile]) -> String {
    let mut b = String::new();
    let road = &r["road"];
    let _ = write!(
        b,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>roadscan report: road {}</title>\
<style>body{{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}}table{{border-collapse:collapse;margin:.5em 0}}\
td,th{{border:1px solid #ccc;padding:2px 8px;text-align:right}}th{{background:#eee}}td:first-child{{text-align:left}}\
img{{max-width:100%;border:1px solid #ccc}}.pass{{color:#1a7f37;font-weight:bold}}.fail{{color:#c62828;font-weight:bold}}\
h2{{border-bottom:1px solid #ccc;margin-top:1.6em}}</style></head><body>",
        esc(road["id"].as_str().unwrap_or(""))
    );
    let _ = write!(
        b,
        "<h1>roadscan report</h1><p>Road <b>{}</b>, {:.1} m, axis {}, CRS {}; {} points read from {}.</p>",
        esc(road["id"].as_str().unwrap_or("")),
        road["length"].as_f64().unwrap_or(0.0),
        esc(road["axis"].as_str().unwrap_or("")),
        esc(r["crs"].as_str().unwrap_or("unknown")),
        r["points"]["read"],
        esc(&r["inputs"].as_array().map_or(String::new(), |a| {
            a.iter().map(|x| x.as_str().unwrap_or("").to_string()).collect::<Vec<_>>().join(", ")
        }))
    );
    // Checks.
    b.push_str("<h2>Checks</h2>");
    let rows: Vec<Vec<String>> = r["checks"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let pass = c["pass"] == true;
            vec![
                esc(c["name"].as_str().unwrap_or("")),
                format!(
                    "<span class=\"{}\">{}</span>",
                    if pass { "pass" } else { "fail" },
                    if pass { "pass" } else { "FAIL" }
                ),
                esc(c["detail"].as_str().unwrap_or("")),
            ]
        })
        .collect();
    b.push_str(&table(&["check", "verdict", "detail"], &rows));
    b.push_str("<p>External validators (ASAM qc-opendrive, the OpenCRG C-API, gltf-validator, trimesh) run in CI on the demo's products.</p>");
    // Street view.
    if r["ribbons"].is_object() {
        let _ = write!(
            b,
            "<h2>Street view (depth ribbons)</h2><img src=\"ribbons/street_view.png\" alt=\"street view\"><p>Left and right ribbons, {} m pixels, filled left {:.1} %, right {:.1} %.</p>",
            r["ribbons"]["cell"],
            100.0 * r["ribbons"]["filled"]["left"].as_f64().unwrap_or(0.0),
            100.0 * r["ribbons"]["filled"]["right"].as_f64().unwrap_or(0.0)
        );
    }
    // CRG tiles.
    b.push_str("<h2>Road surface (OpenCRG tiles)</h2><p>Height against a fitted plane; green boxes: potholes and manholes found.</p>");
    for t in r["crg"]["tiles"].as_array().into_iter().flatten() {
        let _ = write!(
            b,
            "<h3>{}</h3><img src=\"{}\" alt=\"{}\"><p>u {:.2}..{:.2} m, v {:.2}..{:.2} m, {} x {} nodes, coverage {:.1} %.</p>",
            esc(t["file"].as_str().unwrap_or("")),
            esc(t["png"].as_str().unwrap_or("")),
            esc(t["file"].as_str().unwrap_or("")),
            t["u"][0].as_f64().unwrap_or(0.0),
            t["u"][1].as_f64().unwrap_or(0.0),
            t["v"][0].as_f64().unwrap_or(0.0),
            t["v"][1].as_f64().unwrap_or(0.0),
            t["nodes"][0],
            t["nodes"][1],
            100.0 * t["coverage"].as_f64().unwrap_or(0.0)
        );
    }
    b.push_str("<h2>Coverage map</h2><p>Share of CRG nodes with a height per block of 1 m along by 0.25 m across (green: at least 95 %); u to the right, v (left) up.</p>");
    for t in tiles {
        let _ = write!(b, "<h3>{}</h3>{}", esc(&t.file), coverage_map(t.u.0, t.blocks.0, t.blocks.1, &t.blocks.2));
    }
    // Features.
    b.push_str("<h2>Detected features</h2>");
    let rows: Vec<Vec<String>> = r["features"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|f| {
            vec![
                esc(f["type"].as_str().unwrap_or("")),
                num(&f["s"], 1.0, 2),
                num(&f["t"], 1.0, 2),
                num(&f["length"], 1.0, 2),
                num(&f["width"], 1.0, 2),
                num(&f["depth"], 1e3, 0),
            ]
        })
        .collect();
    b.push_str(&table(&["feature", "s (m)", "t (m)", "length (m)", "width (m)", "depth (mm)"], &rows));
    let rows: Vec<Vec<String>> = r["markings"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            vec![
                esc(m["type"].as_str().unwrap_or("")),
                num(&m["t"], 1.0, 3),
                format!("{}..{}", num(&m["s"][0], 1.0, 1), num(&m["s"][1], 1.0, 1)),
                num(&m["width"], 1.0, 2),
                m["dash_gap"]
                    .as_array()
                    .map_or("–".into(), |d| format!("{} / {}", num(&d[0], 1.0, 1), num(&d[1], 1.0, 1))),
            ]
        })
        .collect();
    b.push_str(&table(&["marking", "t (m)", "s (m)", "width (m)", "dash / gap (m)"], &rows));
    let curbs: Vec<Vec<String>> = ["left", "right"]
        .iter()
        .map(|side| {
            let c = &r["curbs"][side];
            vec![format!("curb {side}"), num(&c["t"], 1.0, 3), num(&c["height"], 1.0, 3)]
        })
        .collect();
    b.push_str(&table(&["curb", "t (m)", "height (m)"], &curbs));
    // Axis.
    if let Some(a) = r["axis_fit"].as_object() {
        let _ = write!(
            b,
            "<h2>Axis fit</h2><p>Plan view max {} mm, RMS {} mm (tolerance {} mm).</p>",
            num(&a["max_m"], 1e3, 2),
            num(&a["rms_m"], 1e3, 2),
            num(&a["tolerance_m"], 1e3, 1)
        );
        let rows: Vec<Vec<String>> = a["records"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|g| {
                vec![
                    esc(g["kind"].as_str().unwrap_or("")),
                    num(&g["s"], 1.0, 3),
                    num(&g["length"], 1.0, 3),
                    format!("{} → {}", num(&g["curv_start"], 1.0, 6), num(&g["curv_end"], 1.0, 6)),
                    num(&g["max_m"], 1e3, 2),
                    num(&g["rms_m"], 1e3, 2),
                    g["vertices"].to_string(),
                ]
            })
            .collect();
        b.push_str(&table(
            &["record", "s (m)", "length (m)", "curvature (1/m)", "max (mm)", "rms (mm)", "vertices"],
            &rows,
        ));
    }
    // Profiles.
    let pr = &r["profile"];
    let _ = write!(
        b,
        "<h2>Elevation and crossfall</h2><p>Elevation: {} records within {} mm (RMS {} mm) of the surface line per 0.5 m row; superelevation: {} records within {} rad.</p>{}{}",
        pr["elevation"]["records"],
        num(&pr["elevation"]["max"], 1e3, 1),
        num(&pr["elevation"]["rms"], 1e3, 1),
        pr["superelevation"]["records"],
        num(&pr["superelevation"]["max"], 1.0, 4),
        line_plot(&p.s, &p.elevation, "s (m)", "elevation (m)", 1.0),
        line_plot(&p.s, &p.superelevation, "s (m)", "superelevation (%)", 100.0)
    );
    // Lanes.
    let rows: Vec<Vec<String>> = road["lane_sections"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|sec| {
            let lanes = sec["lanes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|l| format!("{} {}", l["id"], l["type"].as_str().unwrap_or("")));
            vec![num(&sec["s"], 1.0, 1), esc(&lanes.collect::<Vec<_>>().join(", "))]
        })
        .collect();
    b.push_str("<h2>Lanes</h2>");
    b.push_str(&table(&["section from s (m)", "lanes"], &rows));
    // Performance.
    let perf = &r["performance"];
    let _ = write!(
        b,
        "<h2>Throughput and memory</h2><p>{} points in {} s ({} M points/s over the whole build; reading {} s), peak memory {} MB, {} threads.</p>",
        perf["points_read"],
        num(&perf["seconds"], 1.0, 1),
        num(&perf["points_per_second"], 1e-6, 2),
        num(&perf["reading_seconds"], 1.0, 1),
        num(&perf["peak_rss_mb"], 1.0, 0),
        perf["threads"]
    );
    let rows: Vec<Vec<String>> = r["stages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|st| vec![esc(st["stage"].as_str().unwrap_or("")), num(&st["seconds"], 1.0, 2)])
        .collect();
    b.push_str(&table(&["stage", "seconds"], &rows));
    // The mark CI reads: every image loaded, no errors.
    b.push_str(
        "<script>\n(function () {\n  var errors = 0;\n  window.addEventListener('error', function () { errors++; }, true);\n  var ce = console.error;\n  console.error = function () { errors++; return ce.apply(console, arguments); };\n  window.addEventListener('load', function () {\n    var imgs = Array.prototype.slice.call(document.images);\n    var broken = imgs.filter(function (i) { return !i.complete || i.naturalWidth === 0; }).length;\n    document.body.setAttribute('data-images', String(imgs.length));\n    document.body.setAttribute('data-broken', String(broken));\n    document.body.setAttribute('data-errors', String(errors));\n  });\n})();\n</script></body></html>\n",
    );
    b
}
