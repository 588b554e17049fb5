//! The plan view: road.xodr's reference line and lane borders and the CRG tiles' extents in
//! the file frame (x east, y north, one scale for both), over the density of the roadside's
//! points (voxel counts summed over height per cell), with a scale bar and a north arrow.

use super::encode::{base64, palette_png};
use super::svg::{label, nice_step, TICK_PX};
use super::{Facts, Tile};
use opendrive::RoadEval;
use std::fmt::Write;

/// Drawing size limits, px.
const MAX_W: f64 = 960.0;
const MAX_H: f64 = 640.0;
/// Raster cells along the longer side, at most.
const CELLS: usize = 200;
/// Margin around the road's extent, m (at least; 5 % of its size when larger).
const MARGIN: f64 = 10.0;

/// Colours: reference line, lane borders, tiles.
pub(crate) const REF_COLOUR: &str = "#c92a2a";
pub(crate) const BORDER_COLOUR: &str = "#1f5fa8";
pub(crate) const TILE_COLOUR: &str = "#e67700";

/// Points along the road's s, at most every `step` m (at most 4,000).
fn stations(length: f64, step: f64) -> Vec<f64> {
    let n = ((length / step).ceil() as usize).clamp(1, 4000);
    (0..=n).map(|i| length * i as f64 / n as f64).collect()
}

/// File-frame (x, y) of road coordinates (s, t).
fn xy(road: &RoadEval<'_>, s: f64, t: f64) -> (f64, f64) {
    let p = road.pose(s);
    (p.x - t * p.hdg.sin(), p.y + t * p.hdg.cos())
}

/// A tile's outline: its u range along s, its v range across, mapped to (x, y).
fn tile_outline(road: &RoadEval<'_>, t: &Tile) -> Vec<(f64, f64)> {
    let n = (((t.u.1 - t.u.0) / 1.0).ceil() as usize).clamp(1, 2000);
    let along: Vec<f64> = (0..=n).map(|i| t.u.0 + (t.u.1 - t.u.0) * i as f64 / n as f64).collect();
    let mut pts: Vec<(f64, f64)> = along.iter().map(|&s| xy(road, s, t.v.0)).collect();
    pts.extend(along.iter().rev().map(|&s| xy(road, s, t.v.1)));
    pts
}

/// The plan view as inline SVG plus its legend, or a note when the road has no geometry.
pub(crate) fn plan_view(f: &Facts<'_>) -> String {
    let Some(r) = f.odr.roads.first() else { return "<p class=\"none\">No road to draw.</p>".into() };
    let road = RoadEval::new(r);
    let ss = stations(road.length(), 1.0);
    // The reference line, and the outer border of every lane id as polylines.
    let reference: Vec<(f64, f64)> = ss.iter().map(|&s| xy(&road, s, 0.0)).collect();
    let mut borders: std::collections::BTreeMap<i32, Vec<Option<(f64, f64)>>> = Default::default();
    for (k, &s) in ss.iter().enumerate() {
        for (id, t) in road.lane_borders(s) {
            borders.entry(id).or_insert_with(|| vec![None; ss.len()])[k] = Some(xy(&road, s, t));
        }
    }
    let tiles: Vec<Vec<(f64, f64)>> = f.tiles.iter().map(|t| tile_outline(&road, t)).collect();
    let all = reference.iter().chain(borders.values().flatten().flatten()).chain(tiles.iter().flatten());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY);
    for &(x, y) in all {
        if x.is_finite() && y.is_finite() {
            (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
        }
    }
    if !(x0.is_finite() && y0.is_finite()) {
        return "<p class=\"none\">No road to draw.</p>".into();
    }
    let m = MARGIN.max(0.05 * (x1 - x0).max(y1 - y0));
    (x0, x1, y0, y1) = (x0 - m, x1 + m, y0 - m, y1 + m);
    let scale = (MAX_W / (x1 - x0)).min(MAX_H / (y1 - y0)); // px per m
    let (w, h) = ((x1 - x0) * scale, (y1 - y0) * scale);
    let px = |x: f64, y: f64| ((x - x0) * scale, (y1 - y) * scale);
    let path = |pts: &mut dyn Iterator<Item = Option<(f64, f64)>>| {
        let mut d = String::new();
        let mut pen = false;
        for p in pts {
            match p {
                Some((x, y)) => {
                    let (a, b) = px(x, y);
                    let _ = write!(d, "{}{a:.1},{b:.1}", if pen { " L" } else { " M" });
                    pen = true;
                }
                None => pen = false,
            }
        }
        d
    };
    let mut g = format!(
        "<svg class=\"plan\" width=\"{w:.0}\" height=\"{h:.0}\" role=\"img\" font-family=\"sans-serif\">\
<rect width=\"{w:.0}\" height=\"{h:.0}\" fill=\"#fff\" stroke=\"#888\"/>"
    );
    let (raster, peak) = density(f, (x0, x1, y0, y1), &mut g, px);
    for (i, t) in tiles.iter().enumerate() {
        let d = path(&mut t.iter().map(|&p| Some(p)));
        let _ = write!(
            g,
            "<path d=\"{d} Z\" fill=\"{TILE_COLOUR}\" fill-opacity=\"0.12\" stroke=\"{TILE_COLOUR}\" stroke-width=\"1.5\" stroke-dasharray=\"6 3\"><title>{}</title></path>",
            super::esc(&f.tiles[i].file)
        );
    }
    for b in borders.values() {
        let _ = write!(
            g,
            "<path d=\"{}\" fill=\"none\" stroke=\"{BORDER_COLOUR}\" stroke-width=\"1.2\"/>",
            path(&mut b.iter().copied())
        );
    }
    let _ = write!(
        g,
        "<path d=\"{}\" fill=\"none\" stroke=\"{REF_COLOUR}\" stroke-width=\"2\"/>",
        path(&mut reference.iter().map(|&p| Some(p)))
    );
    // Where s starts and ends.
    for (s, name) in [(0.0, "s = 0"), (road.length(), &*format!("s = {:.0} m", road.length()))] {
        let (a, b) = {
            let (x, y) = xy(&road, s, 0.0);
            px(x, y)
        };
        let _ = write!(
            g,
            "<circle cx=\"{a:.1}\" cy=\"{b:.1}\" r=\"4\" fill=\"{REF_COLOUR}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"{TICK_PX}\" paint-order=\"stroke\" stroke=\"#fff\" stroke-width=\"3\">{name}</text>",
            a + 6.0,
            b - 6.0
        );
    }
    // Scale bar, lower left; north arrow, upper right (north in the file frame: the header
    // offset's heading turns the map into it).
    let len = nice_step(120.0 / scale, 1);
    let bl = len * scale;
    let _ = write!(
        g,
        "<rect x=\"8\" y=\"{:.1}\" width=\"{:.1}\" height=\"30\" fill=\"#fff\" fill-opacity=\"0.85\"/>\
<path d=\"M14,{:.1} V{:.1} H{:.1} V{:.1}\" fill=\"none\" stroke=\"#222\" stroke-width=\"2\"/>\
<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"{TICK_PX}\">{} m</text>",
        h - 38.0,
        bl + 70.0,
        h - 22.0,
        h - 14.0,
        14.0 + bl,
        h - 22.0,
        20.0 + bl,
        h - 14.0,
        label(len, if len < 1.0 { 1 } else { 0 })
    );
    let hdg = f.odr.header.offset.as_ref().map_or(0.0, |o| o.hdg);
    let (nx, ny) = (hdg.sin(), hdg.cos());
    let (cx, cy) = (w - 30.0, 40.0);
    let _ = write!(
        g,
        "<g stroke=\"#222\" stroke-width=\"2\"><line x1=\"{:.1}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{:.1}\"/></g>\
<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"4\" fill=\"#222\"/>\
<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"13\" font-weight=\"bold\" text-anchor=\"middle\">N</text>",
        cx - 18.0 * nx,
        cy + 18.0 * ny,
        cx + 18.0 * nx,
        cy - 18.0 * ny,
        cx + 18.0 * nx,
        cy - 18.0 * ny,
        cx + 30.0 * nx,
        cy - 30.0 * ny + 4.0
    );
    g.push_str("</svg>");
    let origin = f.odr.header.offset.as_ref().map_or(String::new(), |o| {
        format!(" The file frame's origin is at map ({:.2}, {:.2}) m (road.xodr's header offset).", o.x, o.y)
    });
    let density_note = match raster {
        Some(cell) => format!(
            "<span><i class=\"box\" style=\"background:#89a589;border-color:#789678\"></i>roadside points per {cell:.1} m cell (darker: more, up to {peak})</span>"
        ),
        None => "<span>no roadside voxels to show the points' density</span>".into(),
    };
    format!(
        "{g}<p class=\"legend\"><span><i style=\"background:{REF_COLOUR}\"></i>reference line</span>\
<span><i style=\"background:{BORDER_COLOUR}\"></i>lane borders</span>\
<span><i class=\"box\" style=\"background:#fde7cc;border-color:{TILE_COLOUR}\"></i>CRG tiles (u, v extent)</span>{density_note}</p>\
<p>x east, y north, 1 px = {:.2} m.{origin}</p>",
        1.0 / scale
    )
}

/// The density raster of the roadside's voxels over the box, as an `<image>` into `g`:
/// returns the cell size (None without voxels) and the highest count of a cell.
fn density(
    f: &Facts<'_>,
    (x0, x1, y0, y1): (f64, f64, f64, f64),
    g: &mut String,
    px: impl Fn(f64, f64) -> (f64, f64),
) -> (Option<f64>, u64) {
    let Some(grid) = f.side.grid.as_ref() else { return (None, 0) };
    if grid.is_empty() {
        return (None, 0);
    }
    let lat = grid.lattice();
    let cell = ((x1 - x0).max(y1 - y0) / CELLS as f64).max(lat.size());
    let (nx, ny) = (((x1 - x0) / cell).ceil() as usize, ((y1 - y0) / cell).ceil() as usize);
    let (nx, ny) = (nx.clamp(1, CELLS), ny.clamp(1, CELLS));
    let place = f.odr.header.offset.unwrap_or_default().placement();
    let mut counts = vec![0u64; nx * ny];
    for (index, v) in grid.sorted() {
        let [x, y, _] = place.to_file(lat.centre(index));
        let (i, j) = ((x - x0) / cell, (y1 - y) / cell);
        if i >= 0.0 && j >= 0.0 && (i as usize) < nx && (j as usize) < ny {
            counts[j as usize * nx + i as usize] += u64::from(v.count);
        }
    }
    let peak = counts.iter().copied().max().unwrap_or(0);
    if peak == 0 {
        return (None, 0);
    }
    // 16 levels of green-grey on a log scale; empty cells transparent.
    let mut palette = vec![[0u8, 0, 0, 0]];
    for k in 1..16u8 {
        let f = f64::from(k) / 15.0;
        let c = |a: f64, b: f64| (a + (b - a) * f) as u8;
        palette.push([c(238.0, 120.0), c(242.0, 150.0), c(236.0, 120.0), 255]);
    }
    let lp = (peak as f64).ln_1p();
    let index: Vec<u8> = counts
        .iter()
        .map(|&c| if c == 0 { 0 } else { (1.0 + 14.0 * (c as f64).ln_1p() / lp).round().clamp(1.0, 15.0) as u8 })
        .collect();
    let Some(png) = palette_png(nx, ny, &index, &palette) else { return (None, 0) };
    let (a, b) = px(x0, y1);
    let (c, d) = px(x0 + nx as f64 * cell, y1 - ny as f64 * cell);
    let _ = write!(
        g,
        "<image x=\"{a:.1}\" y=\"{b:.1}\" width=\"{:.1}\" height=\"{:.1}\" preserveAspectRatio=\"none\" style=\"image-rendering:pixelated\" href=\"data:image/png;base64,{}\"/>",
        c - a,
        d - b,
        base64(&png)
    );
    (Some(cell), peak)
}
