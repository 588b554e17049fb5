//! The CRG tiles in the page: each render as a figure with its colour bar (mm, from the
//! render's range), a scale bar, a caption, and the potholes and manholes found drawn over it
//! as boxes (through the render's pixel mapping) with their labels in HTML; and the coverage
//! maps.

use super::svg::{colour_bar, label, nice_step};
use super::{esc, Tile, BLOCK};
use std::fmt::Write;

/// Colour of the boxes and labels of features found.
const MARK: &str = "#00a651";

/// The render's diverging colours (as opencrg draws them): blue, white, red for f in 0..1.
fn diverging(f: f64) -> [u8; 3] {
    let t = 2.0 * f - 1.0;
    let (lo, mid, hi) = ([33.0, 102.0, 172.0], [247.0, 247.0, 247.0], [178.0, 24.0, 43.0]);
    let (a, b, f) = if t < 0.0 { (mid, lo, -t) } else { (mid, hi, t) };
    [0, 1, 2].map(|k| (a[k] + (b[k] - a[k]) * f) as u8)
}

/// The image rectangle (x0, y0, x1, y1) of the box [u0, u1, v0, v1], two pixels outside it,
/// in the strip of its centre.
fn mark_rect(info: &opencrg::render::RenderInfo, m: &[f64; 4]) -> Option<(f64, f64, f64, f64)> {
    if !m.iter().all(|x| x.is_finite()) || info.du <= 0.0 || info.dv <= 0.0 {
        return None;
    }
    let col = |u: f64| (u - info.u0) / info.du;
    let row = |v: f64| (v - info.v0) / info.dv;
    let (i0, i1, j0, j1) = (col(m[0]), col(m[1]), row(m[2]), row(m[3]));
    let sw = info.strip_width.max(1) as f64;
    let strip = (0.5 * (i0 + i1) / sw).floor().clamp(0.0, info.strips.saturating_sub(1) as f64);
    let (margin, rows) = (info.margin as f64, info.rows as f64);
    let top = margin + strip * (rows + info.gap as f64);
    let x = |i: f64| margin + (i - strip * sw).clamp(0.0, sw);
    let y = |j: f64| top + rows - j.clamp(0.0, rows);
    Some((x(i0) - 2.0, y(j1) - 2.0, x(i1) + 2.0, y(j0) + 2.0))
}

/// A tile's figure: render, boxes over it, colour bar, scale bar and caption.
pub(crate) fn tile_figure(t: &Tile, k: usize) -> String {
    let file = esc(&t.file);
    let caption = format!(
        "<b>{file}</b>: u {:.2}..{:.2} m (along s), v {:.2}..{:.2} m (across, left up), {} x {} nodes, coverage {:.1} %",
        t.u.0,
        t.u.1,
        t.v.0,
        t.v.1,
        t.nodes.0,
        t.nodes.1,
        100.0 * t.coverage
    );
    let Some(info) = &t.render else {
        return format!(
            "<figure><img src=\"{}\" alt=\"{file}\"><figcaption>{caption}.</figcaption></figure>",
            esc(&t.png)
        );
    };
    let (w, h) = (info.width as f64, info.height as f64);
    let mut over =
        format!("<svg class=\"over\" viewBox=\"0 0 {w} {h}\" preserveAspectRatio=\"none\" aria-hidden=\"true\">");
    let mut tags = String::new();
    for (kind, m) in &t.marks {
        let Some((x0, y0, x1, y1)) = mark_rect(info, m) else { continue };
        let _ = write!(
            over,
            "<rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"{MARK}\" stroke-width=\"2\" vector-effect=\"non-scaling-stroke\"/>",
            x1 - x0,
            y1 - y0
        );
        // The label above the box, kept inside the image at its right edge.
        let at = if x0 / w > 0.85 {
            format!("right:{:.2}%", 100.0 * (1.0 - x1 / w))
        } else {
            format!("left:{:.2}%", 100.0 * x0 / w)
        };
        let _ = write!(
            tags,
            "<span class=\"tag\" style=\"{at};top:calc({:.2}% - 20px)\">{kind} at s {:.1} m</span>",
            100.0 * y0 / h,
            0.5 * (m[0] + m[1])
        );
    }
    over.push_str("</svg>");
    let mm = info.range * 1e3;
    let bar = colour_bar(&format!("t{k}"), -mm, mm, 240.0, "mm above the fitted plane", diverging);
    // A scale bar as wide, in the page, as its length is in the image (it scales with it).
    let len = nice_step(0.08 * w * info.du, 1);
    let scale = format!(
        "<div class=\"sbar\" style=\"width:{:.3}%\"></div><div>{}</div>",
        100.0 * len / info.du / w,
        if len >= 1.0 { format!("{} m", label(len, 0)) } else { format!("{} cm", label(100.0 * len, 0)) }
    );
    let found = if t.marks.is_empty() {
        "no potholes or manholes found".to_string()
    } else {
        format!("{} found: green boxes", t.marks.len())
    };
    format!(
        "<figure id=\"tile{k}\"><div class=\"wrap\"><div class=\"pic\"><img src=\"{}\" alt=\"{file}: height of the road surface\" width=\"{}\" height=\"{}\">{over}{tags}</div>{scale}</div>\
{bar}<figcaption>{caption}; {} strips of {} m, one pixel {:.1} x {:.1} cm ({}); {found}. Grey: no height.</figcaption></figure>",
        esc(&t.png),
        info.width,
        info.height,
        info.strips,
        format_args!("{:.1}", info.strip_width as f64 * info.du),
        100.0 * info.du,
        100.0 * info.dv,
        if info.downsample == 1 {
            "a node each".to_string()
        } else {
            format!("the mean of {0} x {0} nodes each", info.downsample)
        }
    )
}

/// A tile's coverage as an SVG heat map (blocks with data green, without grey-red).
pub(crate) fn coverage_map(u0: f64, nu: usize, nv: usize, share: &[f64]) -> String {
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
        "<svg class=\"cov\" width=\"{w:.0}\" height=\"{h:.0}\" role=\"img\"><title>coverage from u = {u0:.1} m, blocks of {} x {} m</title>{r}</svg>",
        BLOCK.0, BLOCK.1
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_match_the_render() {
        assert_eq!(diverging(0.5), [247, 247, 247]);
        assert_eq!(diverging(0.0), [33, 102, 172]);
        assert_eq!(diverging(1.0), [178, 24, 43]);
    }
}

#[cfg(test)]
mod mark_tests {
    use super::*;

    /// A render of 1 cm pixels from u 0, v -2, 1000 columns in strips of 400, 400 rows.
    fn info() -> opencrg::render::RenderInfo {
        opencrg::render::RenderInfo {
            downsample: 1,
            width: 420,
            height: 10 + 3 * 406 + 4,
            range: 0.01,
            strips: 3,
            columns: 1000,
            rows: 400,
            strip_width: 400,
            gap: 6,
            margin: 10,
            u0: 0.0,
            du: 0.01,
            v0: -2.0,
            dv: 0.01,
            footer: false,
        }
    }

    #[test]
    fn boxes_go_where_the_render_draws_their_corners() {
        let i = info();
        // A box in the second strip: u 5.0..5.6, v 0..0.5.
        let (x0, y0, x1, y1) = mark_rect(&i, &[5.0, 5.6, 0.0, 0.5]).unwrap();
        let (px0, py1) = i.pixel(5.0, 0.0).unwrap();
        let (px1, py0) = i.pixel(5.599, 0.499).unwrap();
        assert!((x0 + 2.0 - px0 as f64).abs() <= 1.0 && (x1 - 2.0 - px1 as f64).abs() <= 1.0, "{x0} {x1} {px0} {px1}");
        assert!((y0 + 2.0 - py0 as f64).abs() <= 1.0 && (y1 - 2.0 - py1 as f64).abs() <= 1.0, "{y0} {y1} {py0} {py1}");
        assert!(mark_rect(&i, &[f64::NAN, 1.0, 0.0, 1.0]).is_none());
    }

    #[test]
    fn a_figure_labels_its_boxes_and_has_no_tiny_text() {
        let tile = Tile {
            file: "crg/road_000.crg".into(),
            png: "crg/road_000.png".into(),
            u: (0.0, 10.0),
            v: (-2.0, 2.0),
            nodes: (1001, 401),
            coverage: 0.99,
            blocks: (1, 1, vec![1.0]),
            errors: Vec::new(),
            render: Some(info()),
            marks: vec![("pothole", [5.0, 5.6, 0.0, 0.5])],
        };
        let html = tile_figure(&tile, 0);
        assert_eq!(html.matches("src=\"").count(), 1);
        for want in ["pothole at s 5.3 m", "<rect", "mm above the fitted plane", "1 found", "<figcaption>"] {
            assert!(html.contains(want), "{want}");
        }
    }
}
