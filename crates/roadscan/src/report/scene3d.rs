//! A small interactive 3D view of the scene in the page: the roadside voxels' centres as
//! points coloured by class (at most [`MAX_POINTS`]), and road.xodr's surface as a mesh
//! (its lane borders at their elevation and superelevation every metre), drawn by a plain
//! WebGL 1 script (`scene3d.js`, no libraries, no network) from base64 arrays in the page.
//! Without WebGL the page says so in a paragraph.

use super::encode::{base64, f32_bytes};
use super::Facts;
use opendrive::RoadEval;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Voxel centres drawn, at most.
pub(crate) const MAX_POINTS: usize = 200_000;

/// The script drawing the view.
const SCRIPT: &str = include_str!("scene3d.js");

/// Colour and name of an ASPRS class (as scene.obj colours it by class).
fn class_colour(c: u8) -> ([f64; 3], &'static str) {
    match c {
        2 => ([0.55, 0.45, 0.33], "ground"),
        3 => ([0.60, 0.80, 0.40], "low vegetation"),
        4 => ([0.35, 0.65, 0.25], "medium vegetation"),
        5 => ([0.15, 0.45, 0.15], "high vegetation"),
        6 => ([0.80, 0.35, 0.25], "building"),
        7 => ([0.90, 0.10, 0.60], "low point (noise)"),
        9 => ([0.20, 0.40, 0.90], "water"),
        10 => ([0.45, 0.30, 0.20], "rail"),
        11 => ([0.35, 0.35, 0.38], "road surface"),
        13..=16 => ([0.95, 0.75, 0.10], "wire, tower"),
        17 => ([0.60, 0.60, 0.65], "bridge deck"),
        _ => {
            let g = 0.3 + 0.6 * ((c as f64 * 0.618_034) % 1.0);
            ([g, g, g], "survey class")
        }
    }
}

/// The road surface as triangles (x, y, z per corner) between its lane borders, every metre.
fn road_mesh(road: &RoadEval<'_>, at: impl Fn(f64, f64, f64) -> [f64; 3]) -> Vec<f64> {
    let n = (road.length().ceil() as usize).clamp(1, 20_000);
    let across = |s: f64| {
        let mut ts: Vec<f64> = road.lane_borders(s).into_iter().map(|b| b.1).collect();
        ts.push(road.lane_offset(s));
        ts.sort_by(f64::total_cmp);
        let p = road.pose(s);
        let (z, k) = (road.elevation(s), road.planar_cross_slope(s));
        ts.into_iter().map(|t| at(p.x - t * p.hdg.sin(), p.y + t * p.hdg.cos(), z + t * k)).collect::<Vec<_>>()
    };
    let mut tri = Vec::new();
    let mut prev = across(0.0);
    for i in 1..=n {
        let next = across(road.length() * i as f64 / n as f64);
        if next.len() == prev.len() {
            for j in 1..next.len() {
                for c in [prev[j - 1], prev[j], next[j], prev[j - 1], next[j], next[j - 1]] {
                    tri.extend_from_slice(&c);
                }
            }
        }
        prev = next;
    }
    tri
}

/// The 3D view: a canvas, its legend and the data and script that draw it.
pub(crate) fn scene3d(f: &Facts<'_>) -> String {
    let Some(r) = f.odr.roads.first() else { return "<p class=\"none\">No road to show.</p>".into() };
    let road = RoadEval::new(r);
    // The middle of the road is the origin of the view (single-precision floats).
    let mid = road.pose(0.5 * road.length());
    let z0 = road.elevation(0.5 * road.length());
    let at = |x: f64, y: f64, z: f64| [x - mid.x, y - mid.y, z - z0];
    let mesh = road_mesh(&road, at);
    let place = f.odr.header.offset.unwrap_or_default().placement();
    let (mut pos, mut rgb, mut classes) = (Vec::new(), Vec::new(), BTreeMap::<u8, usize>::new());
    let mut size = 0.0;
    if let Some(grid) = f.side.grid.as_ref() {
        let lat = grid.lattice();
        size = lat.size();
        let all = grid.sorted();
        let stride = all.len().div_ceil(MAX_POINTS).max(1);
        for (index, v) in all.iter().step_by(stride) {
            let [x, y, z] = place.to_file(lat.centre(*index));
            pos.extend_from_slice(&at(x, y, z));
            let (c, _) = class_colour(v.class());
            rgb.extend(c.map(|x| (x * 255.0).round() as u8));
            *classes.entry(v.class()).or_default() += 1;
        }
    }
    let shown = pos.len() / 3;
    let mut legend = String::from("<p class=\"legend\">");
    for (c, n) in &classes {
        let (rgb, name) = class_colour(*c);
        let _ = write!(
            legend,
            "<span><i class=\"box\" style=\"background:rgb({},{},{});border-color:#666\"></i>class {c} {name}: {n}</span>",
            (rgb[0] * 255.0) as u8,
            (rgb[1] * 255.0) as u8,
            (rgb[2] * 255.0) as u8
        );
    }
    legend.push_str("<span><i class=\"box\" style=\"background:#d8d8dc;border-color:#888\"></i>road.xodr surface (lanes)</span></p>");
    let total = f.side.grid.as_ref().map_or(0, |g| g.len());
    format!(
        "<div id=\"scene3d\" data-size=\"{size}\"><canvas id=\"scene3d-canvas\" width=\"1000\" height=\"560\" style=\"border:1px solid #ccc;max-width:100%;cursor:grab\"></canvas></div>{legend}\
<p>{shown} of {total} voxel centres ({size} m voxels){}; drag to orbit, wheel to zoom, double-click to reset.</p>\
<script type=\"application/octet-stream\" id=\"scene3d-points\">{}</script>\
<script type=\"application/octet-stream\" id=\"scene3d-colours\">{}</script>\
<script type=\"application/octet-stream\" id=\"scene3d-road\">{}</script>\
<script>\n{SCRIPT}</script>",
        if shown < total { ", every one in a few" } else { "" },
        base64(&f32_bytes(pos)),
        base64(&rgb),
        base64(&f32_bytes(mesh)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_uses_no_network_and_logs_no_errors() {
        for bad in ["console.error", "fetch(", "XMLHttpRequest", "http://", "https://", "src=\""] {
            assert!(!SCRIPT.contains(bad), "{bad}");
        }
        assert!(SCRIPT.contains("getContext"));
    }
}
