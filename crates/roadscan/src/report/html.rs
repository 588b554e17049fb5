//! report.html: one self-contained page (plots and drawings as inline SVG, the CRG renders and
//! the street view beside it in the output directory) with a small script that marks the page
//! when every image loaded and nothing raised an error (CI opens it in headless Chromium and
//! reads that mark).

use super::svg::{line_plot, Series, YRange};
use super::{esc, Facts, Report};
use opendrive::{OpenDrive, RoadEval};
use std::fmt::Write;

/// Line colour of a plot of one series.
const BLUE: &str = "#1f5fa8";

/// Line colours of the lanes, by |id| (right lanes dashed in the legend's order).
const LANE_COLOURS: [&str; 8] =
    ["#1f5fa8", "#d9480f", "#2b8a3e", "#862e9c", "#e8590c", "#0b7285", "#c2255c", "#5c940d"];

/// Series for the plots: elevation, superelevation and the width of every lane along the road.
struct Plots {
    s: Vec<f64>,
    elevation: Vec<f64>,
    superelevation: Vec<f64>,
    /// Lane id and its width along s (NaN where the road has no such lane).
    widths: Vec<(i32, Vec<f64>)>,
}

impl Plots {
    fn of(odr: &OpenDrive) -> Plots {
        let road = RoadEval::new(&odr.roads[0]);
        let n = ((road.length() / 0.5).ceil() as usize).clamp(2, 2000);
        let s: Vec<f64> = (0..=n).map(|i| road.length() * i as f64 / n as f64).collect();
        let elevation = s.iter().map(|&x| road.elevation(x)).collect();
        let superelevation = s.iter().map(|&x| 100.0 * road.superelevation(x).tan()).collect();
        let mut widths: std::collections::BTreeMap<i32, Vec<f64>> = std::collections::BTreeMap::new();
        for (k, &x) in s.iter().enumerate() {
            for (id, w) in lane_widths(&road, x) {
                widths.entry(id).or_insert_with(|| vec![f64::NAN; s.len()])[k] = w;
            }
        }
        Plots { s, elevation, superelevation, widths: widths.into_iter().collect() }
    }
}

/// The width of every lane at `s`: the distance between its outer border and the border of
/// its neighbour toward the centre (the lane offset for lanes 1 and -1).
fn lane_widths(road: &RoadEval<'_>, s: f64) -> Vec<(i32, f64)> {
    let borders = road.lane_borders(s);
    let offset = road.lane_offset(s);
    let border = |id: i32| if id == 0 { Some(offset) } else { borders.iter().find(|b| b.0 == id).map(|b| b.1) };
    borders.iter().filter_map(|&(id, t)| border(id - id.signum()).map(|inner| (id, (t - inner).abs()))).collect()
}

/// The colour of lane `id`'s line.
fn lane_colour(id: i32) -> &'static str {
    let k = if id > 0 { 2 * (id - 1) } else { 2 * (-id - 1) + 1 } as usize;
    LANE_COLOURS[k % LANE_COLOURS.len()]
}

/// The lane widths plot with its legend (in HTML).
fn lane_width_plot(p: &Plots) -> String {
    if p.widths.is_empty() {
        return "<p>None found: road.xodr has no lanes beside its centre lane.</p>".into();
    }
    let series: Vec<Series<'_>> = p.widths.iter().map(|(id, w)| Series { ys: w, colour: lane_colour(*id) }).collect();
    let mut legend = String::from("<p class=\"legend\">");
    for (id, w) in p.widths.iter().rev() {
        let (lo, hi) = w
            .iter()
            .filter(|x| x.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |a, &x| (a.0.min(x), a.1.max(x)));
        let _ = write!(
            legend,
            "<span><i style=\"background:{}\"></i>lane {id} ({}, {:.2}..{:.2} m)</span> ",
            lane_colour(*id),
            if *id > 0 { "left" } else { "right" },
            lo,
            hi
        );
    }
    legend.push_str("</p>");
    format!("{}{legend}", line_plot(&p.s, &series, "s (m)", "lane width (m)", YRange { min_span: 1.0, zero: false }))
}

/// A table of the rows of `rows` (each cell already escaped); without rows, one that says
/// "None found" and what was searched (`searched`).
fn table(head: &[&str], rows: &[Vec<String>], searched: &str) -> String {
    let mut t = String::from("<table><tr>");
    for h in head {
        let _ = write!(t, "<th>{}</th>", esc(h));
    }
    t.push_str("</tr>");
    if rows.is_empty() {
        let _ = write!(t, "<tr><td colspan=\"{}\" class=\"none\">None found: {}.</td></tr>", head.len(), esc(searched));
    }
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

/// `x` (when finite: report.json has no NaN) as report.json has it, else None.
fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// `x` times `scale` with `digits` decimals, "–" when it is not known (None or not finite).
fn num(x: impl Into<Option<f64>>, scale: f64, digits: usize) -> String {
    x.into().and_then(finite).map_or("–".into(), |x| format!("{:.*}", digits, x * scale))
}

/// `x` as report.json writes it ("null" for None or NaN, 0.05 and 1.0 for those floats).
fn as_json<T: serde::Serialize>(x: &T) -> String {
    serde_json::to_string(x).unwrap_or_default()
}

/// report.html from the report and the figures.
pub(crate) fn html(r: &Report, f: &Facts<'_>) -> String {
    let p = Plots::of(f.odr);
    let tiles = f.tiles;
    let mut b = String::new();
    let road = &r.road;
    let _ = write!(
        b,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>roadscan report: road {}</title>\
<style>body{{font:15px/1.45 sans-serif;margin:2em;max-width:1100px;color:#222}}table{{border-collapse:collapse;margin:.5em 0}}\
td,th{{border:1px solid #ccc;padding:2px 8px;text-align:right}}th{{background:#eee}}td:first-child{{text-align:left}}\
img{{max-width:100%;border:1px solid #ccc}}.pass{{color:#1a7f37;font-weight:bold}}.fail{{color:#c62828;font-weight:bold}}\
h2{{border-bottom:1px solid #ccc;margin-top:1.6em}}svg{{display:block;margin:.3em 0}}\
.legend span{{margin-right:1.2em;white-space:nowrap}}.legend i{{display:inline-block;width:22px;height:4px;vertical-align:middle;margin-right:5px}}\
.legend i.box{{height:12px;width:12px;border:2px solid}}.none{{color:#555;font-style:italic}}\
figure{{margin:1em 0;padding:0}}figcaption{{font-size:14px;color:#333}}.wrap{{position:relative;display:inline-block;max-width:100%}}\
.pic{{position:relative}}.wrap img{{display:block;width:100%;height:auto}}.pic svg.over{{position:absolute;left:0;top:0;width:100%;height:100%;margin:0}}\
.sbar{{height:7px;border:2px solid #222;border-top:none;margin-top:4px}}\
.tag{{position:absolute;font-size:12px;background:#fffd;border:1px solid #0a6;padding:0 3px;white-space:nowrap}}\
details{{margin:.4em 0}}table.checks td{{text-align:left}}code{{font-size:13px}}</style>\
<script>\nwindow.roadscanErrors = 0;\nwindow.addEventListener('error', function () {{ window.roadscanErrors++; }}, true);\n\
(function () {{ var ce = console.error; console.error = function () {{ window.roadscanErrors++; return ce.apply(console, arguments); }}; }})();\n</script></head><body>",
        esc(&road.id)
    );
    let _ = write!(
        b,
        "<h1>roadscan report</h1><p>Road <b>{}</b>, {:.1} m, axis {}; {} points read from {}.</p><p>CRS: <b>{}</b></p>",
        esc(&road.id),
        finite(road.length).unwrap_or(0.0),
        esc(&road.axis),
        r.points.read,
        esc(&r.inputs.join(", ")),
        esc(r.crs_name.as_deref().unwrap_or("unknown (no CRS in the inputs, the axis or --crs)"))
    );
    if let Some(c) = r.crs.as_deref() {
        let proj = super::CrsName::of(c, f.crs_wkt, f.crs_hint).proj.unwrap_or_else(|| c.to_string());
        let _ = write!(b, "<details><summary>PROJ string</summary><code>{}</code></details>", esc(&proj));
    }
    // Checks.
    b.push_str("<h2 id=\"checks\">Checks</h2>");
    let rows: Vec<Vec<String>> = r
        .checks
        .iter()
        .map(|c| {
            let pass = c.pass;
            vec![
                esc(&c.name),
                format!(
                    "<span class=\"{}\">{}</span>",
                    if pass { "pass" } else { "fail" },
                    if pass { "pass" } else { "FAIL" }
                ),
                esc(&c.detail),
            ]
        })
        .collect();
    b.push_str(&table(&["check", "verdict", "detail"], &rows, "no checks ran").replacen(
        "<table>",
        "<table class=\"checks\">",
        1,
    ));
    b.push_str("<p>External validators (ASAM qc-opendrive, the OpenCRG C-API, gltf-validator, trimesh) run in CI on the demo's products.</p>");
    b.push_str("<h2 id=\"plan\">Plan view</h2>");
    b.push_str(&super::plan_view::plan_view(f));
    b.push_str("<h2 id=\"view3d\">3D view</h2>");
    b.push_str(&super::scene3d::scene3d(f));
    // Street view.
    if let Some(ribbons) = &r.ribbons {
        let _ = write!(
            b,
            "<h2>Street view (depth ribbons)</h2><img src=\"ribbons/street_view.png\" alt=\"street view\"><p>Left and right ribbons, {} m pixels, filled left {:.1} %, right {:.1} %.</p>",
            as_json(&ribbons.cell),
            100.0 * finite(ribbons.filled.left).unwrap_or(0.0),
            100.0 * finite(ribbons.filled.right).unwrap_or(0.0)
        );
    }
    // CRG tiles.
    b.push_str("<h2 id=\"crg\">Road surface (OpenCRG tiles)</h2><p>Height of the road surface against a plane fitted to each tile (hill-shaded), u along the road to the right, v (left) up; long tiles are cut into strips stacked top to bottom.</p>");
    for (k, t) in tiles.iter().enumerate() {
        b.push_str(&super::crg_view::tile_figure(t, k));
    }
    if tiles.is_empty() {
        b.push_str("<p class=\"none\">None made: no CRG tiles.</p>");
    }
    b.push_str("<h2>Coverage map</h2><p>Share of CRG nodes with a height per block of 1 m along by 0.25 m across (green: at least 95 %); u to the right, v (left) up.</p>");
    for t in tiles {
        let _ = write!(
            b,
            "<h3>{}</h3>{}",
            esc(&t.file),
            super::crg_view::coverage_map(t.u.0, t.blocks.0, t.blocks.1, &t.blocks.2)
        );
    }
    // Features.
    b.push_str("<h2>Detected features</h2>");
    let rows: Vec<Vec<String>> = r
        .features
        .iter()
        .map(|f| {
            vec![
                esc(&f.kind),
                num(f.s, 1.0, 2),
                num(f.t, 1.0, 2),
                num(f.length, 1.0, 2),
                num(f.width, 1.0, 2),
                num(f.depth, 1e3, 0),
            ]
        })
        .collect();
    let searched = format!(
        "{} CRG tile{} searched for depressions and raised lids (potholes, manholes)",
        tiles.len(),
        if tiles.len() == 1 { "" } else { "s" }
    );
    b.push_str(&table(&["feature", "s (m)", "t (m)", "length (m)", "width (m)", "depth (mm)"], &rows, &searched));
    let rows: Vec<Vec<String>> = r
        .markings
        .iter()
        .map(|m| {
            vec![
                esc(&m.kind),
                num(m.t, 1.0, 3),
                format!("{}..{}", num(m.s[0], 1.0, 1), num(m.s[1], 1.0, 1)),
                num(m.width, 1.0, 2),
                m.dash_gap.map_or("–".into(), |d| format!("{} / {}", num(d[0], 1.0, 1), num(d[1], 1.0, 1))),
            ]
        })
        .collect();
    let searched = format!("{} cross sections of 0.5 m searched for marking lines (bright stripes)", r.profile.rows[0]);
    b.push_str(&table(&["marking", "t (m)", "s (m)", "width (m)", "dash / gap (m)"], &rows, &searched));
    let curbs: Vec<Vec<String>> = [("left", &r.curbs.left), ("right", &r.curbs.right)]
        .into_iter()
        .map(|(side, c)| match c {
            None => vec![format!("curb {side}"), "<span class=\"none\">none found</span>".into(), "–".into()],
            Some(c) => vec![format!("curb {side}"), num(c.t, 1.0, 3), num(c.height, 1.0, 3)],
        })
        .collect();
    b.push_str(&table(&["curb", "t (m)", "height (m)"], &curbs, "no curb searched for"));
    // Axis.
    if let Some(a) = &r.axis_fit {
        let _ = write!(
            b,
            "<h2>Axis fit</h2><p>Plan view max {} mm, RMS {} mm (tolerance {} mm).</p>",
            num(a.max_m, 1e3, 2),
            num(a.rms_m, 1e3, 2),
            num(a.tolerance_m, 1e3, 1)
        );
        let rows: Vec<Vec<String>> = a
            .records
            .iter()
            .map(|g| {
                vec![
                    esc(g.kind),
                    num(g.s, 1.0, 3),
                    num(g.length, 1.0, 3),
                    format!("{} → {}", num(g.curv_start, 1.0, 6), num(g.curv_end, 1.0, 6)),
                    num(g.max_m, 1e3, 2),
                    num(g.rms_m, 1e3, 2),
                    g.vertices.to_string(),
                ]
            })
            .collect();
        b.push_str(&table(
            &["record", "s (m)", "length (m)", "curvature (1/m)", "max (mm)", "rms (mm)", "vertices"],
            &rows,
            "no geometry records",
        ));
    }
    // Profiles.
    let pr = &r.profile;
    let _ = write!(
        b,
        "<h2 id=\"profile\">Elevation and crossfall</h2><p>Elevation: {} records within {} mm (RMS {} mm) of the surface line per 0.5 m row; superelevation: {} records within {} rad.</p>{}{}",
        as_json(&pr.elevation.as_ref().map(|e| e.records)),
        num(pr.elevation.as_ref().map(|e| e.max), 1e3, 1),
        num(pr.elevation.as_ref().map(|e| e.rms), 1e3, 1),
        as_json(&pr.superelevation.as_ref().map(|e| e.records)),
        num(pr.superelevation.as_ref().map(|e| e.max), 1.0, 4),
        line_plot(&p.s, &[Series { ys: &p.elevation, colour: BLUE }], "s (m)", "elevation (m)", YRange { min_span: 1.0, zero: false }),
        line_plot(&p.s, &[Series { ys: &p.superelevation, colour: BLUE }], "s (m)", "superelevation (%)", YRange { min_span: 2.0, zero: true })
);
    b.push_str(&residual_plot(&f.survey.elevation_residuals));
    // Lanes.
    let rows: Vec<Vec<String>> = road
        .lane_sections
        .iter()
        .map(|sec| {
            let lanes = sec.lanes.iter().map(|l| format!("{} {}", l.id, l.kind.as_deref().unwrap_or("")));
            vec![num(sec.s, 1.0, 1), esc(&lanes.collect::<Vec<_>>().join(", "))]
        })
        .collect();
    b.push_str("<h2>Lanes</h2><p>Width of each lane of road.xodr along s (between its borders).</p>");
    b.push_str(&lane_width_plot(&p));
    b.push_str(&table(&["section from s (m)", "lanes"], &rows, "road.xodr has no lane sections"));
    // Performance.
    let perf = &r.performance;
    let units = if perf.work_units > 0 {
        format!(" (the {} work units' times added up; peak memory of the finish unit)", perf.work_units)
    } else {
        String::new()
    };
    let _ = write!(
        b,
        "<h2>Throughput and memory</h2><p>{} points in {} s ({} M points/s over the whole build; reading {} s), peak memory {} MB, {} threads{units}.</p>",
        perf.points_read,
        num(perf.seconds, 1.0, 1),
        num(perf.points_per_second, 1e-6, 2),
        num(perf.reading_seconds, 1.0, 1),
        num(perf.peak_rss_mb, 1.0, 0),
        perf.threads
    );
    let rows: Vec<Vec<String>> = r.stages.iter().map(|st| vec![esc(&st.stage), num(st.seconds, 1.0, 2)]).collect();
    b.push_str(&table(&["stage", "seconds"], &rows, "no stage timings"));
    // The mark CI reads (set at load): every image loaded, no errors, no text under 11 px.
    b.push_str(
        "<script>\n(function () {\n  window.addEventListener('load', function () {\n    var imgs = Array.prototype.slice.call(document.images);\n    var broken = imgs.filter(function (i) { return !i.complete || i.naturalWidth === 0; }).length;\n    var small = 0;\n    var all = document.body.getElementsByTagName('*');\n    for (var i = 0; i < all.length; i++) {\n      var e = all[i];\n      if (/^(script|style|title)$/i.test(e.tagName)) { continue; }\n      var text = false;\n      for (var n = e.firstChild; n; n = n.nextSibling) {\n        if (n.nodeType === 3 && /\\S/.test(n.nodeValue)) { text = true; break; }\n      }\n      var cs = text ? window.getComputedStyle(e) : null;\n      if (cs && cs.display !== 'none' && parseFloat(cs.fontSize) < 11) { small++; }\n    }\n    document.body.setAttribute('data-images', String(imgs.length));\n    document.body.setAttribute('data-broken', String(broken));\n    document.body.setAttribute('data-errors', String(window.roadscanErrors || 0));\n    document.body.setAttribute('data-small-text', String(small));\n  });\n})();\n</script></body></html>\n",
    );
    b
}

/// Residuals beyond this are not drawn (cars, people, kerbs the robust fit left out), m.
const RESIDUAL_SHOWN: f64 = 0.05;

/// The elevation fit's residual per cross-section row along s, in mm (at least ±10 mm shown),
/// with how many rows lie beyond the drawn range.
fn residual_plot(residuals: &[pipeline::road::Residual]) -> String {
    if residuals.is_empty() {
        return "<p class=\"none\">No elevation residuals: no elevation was fitted.</p>".to_string();
    }
    let shown: Vec<&pipeline::road::Residual> =
        residuals.iter().filter(|r| r.residual.abs() <= RESIDUAL_SHOWN).collect();
    let xs: Vec<f64> = shown.iter().map(|r| r.s).collect();
    let ys: Vec<f64> = shown.iter().map(|r| r.residual * 1e3).collect();
    let beyond = residuals.len() - shown.len();
    format!(
        "<p>Surface height of each cross-section row less the fitted elevation ({} rows; {beyond} beyond \u{b1}{:.0} mm not drawn: cars, people and kerbs the robust fit left out).</p>{}",
        residuals.len(),
        RESIDUAL_SHOWN * 1e3,
        line_plot(&xs, &[Series { ys: &ys, colour: BLUE }], "s (m)", "elevation residual (mm)", YRange { min_span: 20.0, zero: true })
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn lane_widths_of_the_demo_road() {
        let odr = opendrive::read(sim::scene::DEMO_XODR).unwrap();
        let road = RoadEval::new(&odr.roads[0]);
        let w = lane_widths(&road, 10.0);
        let get = |w: &[(i32, f64)], id: i32| w.iter().find(|x| x.0 == id).unwrap().1;
        for (id, want) in [(2, 2.0), (1, 3.25), (-1, 3.25), (-2, 2.0)] {
            assert!((get(&w, id) - want).abs() < 1e-9, "lane {id}: {w:?}");
        }
        // Lane -1 widens by a cubic from s 100: 3.25 + 0.0025 ds² - 0.00005 ds³.
        let w = lane_widths(&road, 130.0);
        assert!((get(&w, -1) - 4.15).abs() < 1e-9, "{w:?}");
        assert!((get(&w, -2) - 2.0).abs() < 1e-9, "{w:?}");
        let plot = lane_width_plot(&Plots::of(&odr));
        assert!(plot.contains("lane -1 (right, 3.25..4.1") && plot.contains(">lane width (m)</text>"), "{plot}");
    }

    #[test]
    fn empty_tables_say_what_was_searched() {
        let t = table(&["feature", "s (m)"], &[], "3 CRG tiles searched for depressions");
        assert!(
            t.contains("<td colspan=\"2\" class=\"none\">None found: 3 CRG tiles searched for depressions.</td>"),
            "{t}"
        );
        let t = table(&["feature", "s (m)"], &[vec!["pothole".into(), "1.0".into()]], "x");
        assert!(!t.contains("None found"));
    }
}
