//! Inline SVG for the report: line plots with "nice" 1-2-5 ticks and gridlines on both axes,
//! colour bars and scale bars. Every drawing has a fixed pixel size and no `viewBox`, so its
//! text is drawn at the size asked for (12-13 px), never scaled with the drawing.

use super::esc;
use std::fmt::Write;

/// Font size of tick labels, px.
pub(crate) const TICK_PX: u32 = 12;
/// Font size of axis titles, px.
pub(crate) const TITLE_PX: u32 = 13;

/// The 1-2-5 step (1, 2 or 5 times a power of ten) that cuts `span` into about `target`
/// intervals (never fewer than `target / 2`).
pub(crate) fn nice_step(span: f64, target: usize) -> f64 {
    let span = if span.is_finite() && span > 0.0 { span } else { 1.0 };
    let raw = span / target.max(1) as f64;
    let p = 10f64.powf(raw.log10().floor());
    let f = raw / p;
    let m = if f < 1.5 {
        1.0
    } else if f < 3.5 {
        2.0
    } else if f < 7.5 {
        5.0
    } else {
        10.0
    };
    m * p
}

/// Decimals that show a multiple of `step` exactly (0 for steps of 1 and more).
pub(crate) fn decimals(step: f64) -> usize {
    if step >= 1.0 || !step.is_finite() || step <= 0.0 {
        0
    } else {
        (-(step.log10() + 1e-9).floor()) as usize
    }
}

/// `x` with `digits` decimals, without a "-0".
pub(crate) fn label(x: f64, digits: usize) -> String {
    let s = format!("{x:.digits$}");
    if s.trim_start_matches('-').chars().all(|c| c == '0' || c == '.') {
        s.trim_start_matches('-').to_string()
    } else {
        s.replace('-', "\u{2212}")
    }
}

/// Ticks: the multiples of `step` within `[lo, hi]` (with a little tolerance).
pub(crate) fn ticks(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite() && step > 0.0) || hi < lo {
        return Vec::new();
    }
    let first = (lo / step - 1e-9).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last.min(first + 200)).map(|k| k as f64 * step).collect()
}

/// How a plot's value axis is chosen from the data.
#[derive(Debug, Clone, Copy)]
pub(crate) struct YRange {
    /// The axis spans at least this much (in the plotted unit), around the data's middle, so
    /// millimetres of noise on a flat road are not drawn as a ramp.
    pub min_span: f64,
    /// Whether the axis always includes zero (residuals, superelevation).
    pub zero: bool,
}

/// The value axis for `ys`: at least `r.min_span` wide, widened to whole ticks. Returns
/// (low, high, step).
pub(crate) fn y_axis<'a>(ys: impl IntoIterator<Item = &'a f64>, r: YRange) -> (f64, f64, f64) {
    let (mut lo, mut hi) = ys
        .into_iter()
        .filter(|y| y.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |a, &y| (a.0.min(y), a.1.max(y)));
    if !(lo.is_finite() && hi.is_finite()) {
        (lo, hi) = (0.0, 0.0);
    }
    if r.zero {
        (lo, hi) = (lo.min(0.0), hi.max(0.0));
    }
    if hi - lo < r.min_span {
        let mid = 0.5 * (lo + hi);
        (lo, hi) = (mid - 0.5 * r.min_span, mid + 0.5 * r.min_span);
        if r.zero && lo > 0.0 {
            (lo, hi) = (0.0, r.min_span);
        } else if r.zero && hi < 0.0 {
            (lo, hi) = (-r.min_span, 0.0);
        }
    }
    let step = nice_step(hi - lo, 5);
    ((lo / step - 1e-9).floor() * step, (hi / step + 1e-9).ceil() * step, step)
}

/// One line of a plot.
pub(crate) struct Series<'a> {
    pub ys: &'a [f64],
    pub colour: &'a str,
}

/// Plot size, px.
pub(crate) const PLOT_W: f64 = 960.0;
const PLOT_H: f64 = 250.0;
/// Plot area inset: left, right, top, bottom, px.
const INSET: (f64, f64, f64, f64) = (72.0, 16.0, 12.0, 46.0);

/// A line plot of series over `xs` as inline SVG of a fixed pixel size: 1-2-5 ticks and light
/// gridlines on both axes, axis titles with their units. A non-finite value breaks its line.
pub(crate) fn line_plot(xs: &[f64], series: &[Series<'_>], x_title: &str, y_title: &str, r: YRange) -> String {
    let (w, h) = (PLOT_W, PLOT_H);
    let (l, rt, t, b) = INSET;
    let (x0, x1) =
        xs.iter().filter(|x| x.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |a, &x| (a.0.min(x), a.1.max(x)));
    let (x0, x1) = if x0.is_finite() && x1 > x0 { (x0, x1) } else { (0.0, 1.0) };
    let (y0, y1, ystep) = y_axis(series.iter().flat_map(|s| s.ys.iter()), r);
    let px = |x: f64| l + (x - x0) / (x1 - x0) * (w - l - rt);
    let py = |y: f64| h - b - (y - y0) / (y1 - y0).max(1e-12) * (h - t - b);
    let mut g = String::new();
    let _ = write!(
        g,
        "<svg class=\"plot\" width=\"{w}\" height=\"{h}\" role=\"img\" font-family=\"sans-serif\">\
<rect x=\"{l}\" y=\"{t}\" width=\"{}\" height=\"{}\" fill=\"#fcfcfc\" stroke=\"#888\"/>",
        w - l - rt,
        h - t - b
    );
    let xstep = nice_step(x1 - x0, 10);
    let xd = decimals(xstep);
    for x in ticks(x0, x1, xstep) {
        let xp = px(x);
        let _ = write!(
            g,
            "<line x1=\"{xp:.1}\" y1=\"{t}\" x2=\"{xp:.1}\" y2=\"{}\" stroke=\"#e3e3e3\"/>\
<line x1=\"{xp:.1}\" y1=\"{}\" x2=\"{xp:.1}\" y2=\"{}\" stroke=\"#888\"/>\
<text x=\"{xp:.1}\" y=\"{}\" font-size=\"{TICK_PX}\" text-anchor=\"middle\">{}</text>",
            h - b,
            h - b,
            h - b + 4.0,
            h - b + 17.0,
            label(x, xd)
        );
    }
    let yd = decimals(ystep);
    for y in ticks(y0, y1, ystep) {
        let yp = py(y);
        let _ = write!(
            g,
            "<line x1=\"{l}\" y1=\"{yp:.1}\" x2=\"{}\" y2=\"{yp:.1}\" stroke=\"{}\"/>\
<line x1=\"{}\" y1=\"{yp:.1}\" x2=\"{l}\" y2=\"{yp:.1}\" stroke=\"#888\"/>\
<text x=\"{}\" y=\"{:.1}\" font-size=\"{TICK_PX}\" text-anchor=\"end\">{}</text>",
            w - rt,
            if y.abs() < 1e-12 && y0 < 0.0 { "#bbb" } else { "#e3e3e3" },
            l - 4.0,
            l - 7.0,
            yp + 4.0,
            label(y, yd)
        );
    }
    for s in series {
        let mut pts = String::new();
        for (x, y) in xs.iter().zip(s.ys) {
            if y.is_finite() && x.is_finite() {
                let _ = write!(pts, "{:.1},{:.1} ", px(*x), py(*y));
            } else if !pts.is_empty() {
                polyline(&mut g, &pts, s.colour);
                pts.clear();
            }
        }
        if !pts.is_empty() {
            polyline(&mut g, &pts, s.colour);
        }
    }
    let _ = write!(
        g,
        "<text x=\"{:.1}\" y=\"{}\" font-size=\"{TITLE_PX}\" text-anchor=\"middle\">{}</text>\
<text transform=\"translate(16,{:.1}) rotate(-90)\" font-size=\"{TITLE_PX}\" text-anchor=\"middle\">{}</text></svg>",
        l + 0.5 * (w - l - rt),
        h - 8.0,
        esc(x_title),
        t + 0.5 * (h - t - b),
        esc(y_title)
    );
    g
}

fn polyline(g: &mut String, pts: &str, colour: &str) {
    let _ =
        write!(g, "<polyline fill=\"none\" stroke=\"{colour}\" stroke-width=\"1.6\" points=\"{}\"/>", pts.trim_end());
}

/// A horizontal colour bar `width` px wide with ticks in `unit`, for values `lo..hi` coloured
/// by `colour(f)` with f from 0 (lo) to 1 (hi); `id` names its gradient (unique in the page).
pub(crate) fn colour_bar(
    id: &str,
    lo: f64,
    hi: f64,
    width: f64,
    unit: &str,
    colour: impl Fn(f64) -> [u8; 3],
) -> String {
    let (h, bar) = (44.0, 14.0);
    let mut g = format!(
        "<svg class=\"bar\" width=\"{:.0}\" height=\"{h}\" role=\"img\" font-family=\"sans-serif\"><defs><linearGradient id=\"cb{id}\">",
        width + 30.0 + 7.5 * unit.chars().count() as f64,
    );
    for k in 0..=10 {
        let f = k as f64 / 10.0;
        let c = colour(f);
        let _ = write!(g, "<stop offset=\"{f}\" stop-color=\"rgb({},{},{})\"/>", c[0], c[1], c[2]);
    }
    let x0 = 10.0;
    let _ = write!(
        g,
        "</linearGradient></defs><rect x=\"{x0}\" y=\"2\" width=\"{width}\" height=\"{bar}\" fill=\"url(#cb{id})\" stroke=\"#888\"/>"
    );
    let step = nice_step(hi - lo, 4);
    let d = decimals(step);
    for v in ticks(lo, hi, step) {
        let x = x0 + (v - lo) / (hi - lo).max(1e-12) * width;
        let _ = write!(
            g,
            "<line x1=\"{x:.1}\" y1=\"{}\" x2=\"{x:.1}\" y2=\"{}\" stroke=\"#444\"/>\
<text x=\"{x:.1}\" y=\"{}\" font-size=\"{TICK_PX}\" text-anchor=\"middle\">{}</text>",
            2.0 + bar,
            6.0 + bar,
            19.0 + bar,
            label(v, d)
        );
    }
    let _ = write!(
        g,
        "<text x=\"{:.1}\" y=\"{}\" font-size=\"{TICK_PX}\">{}</text></svg>",
        x0 + width + 8.0,
        bar,
        esc(unit)
    );
    g
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_one_two_five() {
        assert_eq!(nice_step(100.0, 10), 10.0);
        assert_eq!(nice_step(150.0, 10), 20.0);
        assert_eq!(nice_step(0.03, 5), 0.005);
        assert_eq!(nice_step(7.0, 5), 1.0);
        assert_eq!(ticks(-0.3, 1.0, 0.5), vec![0.0, 0.5, 1.0]);
        assert_eq!(decimals(0.005), 3);
        assert_eq!(decimals(0.5), 1);
        assert_eq!(decimals(20.0), 0);
        assert_eq!(label(-0.0001, 2), "0.00");
        assert_eq!(label(-1.5, 1), "\u{2212}1.5");
    }

    #[test]
    fn a_flat_profile_is_drawn_flat() {
        // 3 mm of noise on a flat road: the axis spans at least 1 m, so the line stays flat.
        let ys: Vec<f64> = (0..100).map(|i| 100.0 + 0.003 * ((i % 7) as f64 / 7.0)).collect();
        let (lo, hi, step) = y_axis(&ys, YRange { min_span: 1.0, zero: false });
        assert!(hi - lo >= 1.0 && lo <= 100.0 && hi >= 100.003, "{lo}..{hi}");
        assert!(step >= 0.2, "{step}");
        // Superelevation: 2 % at least, with zero.
        let (lo, hi, _) = y_axis(&[2.5, 2.6], YRange { min_span: 2.0, zero: true });
        assert!(lo <= 0.0 && hi >= 2.6, "{lo}..{hi}");
    }

    #[test]
    fn plots_have_ticks_grid_and_titles_at_a_fixed_size() {
        let xs: Vec<f64> = (0..=150).map(f64::from).collect();
        let ys: Vec<f64> = xs.iter().map(|x| 0.01 * x).collect();
        let svg = line_plot(
            &xs,
            &[Series { ys: &ys, colour: "#1f5fa8" }],
            "s (m)",
            "z (m)",
            YRange { min_span: 1.0, zero: false },
        );
        assert!(!svg.contains("viewBox"));
        // s ticks every 20 m: 0, 20, ..., 140; value ticks across 0..1.5.
        for want in [">0</text>", ">20</text>", ">140</text>", ">s (m)</text>", ">z (m)</text>", "<polyline"] {
            assert!(svg.contains(want), "{want}");
        }
        assert!(svg.matches("stroke=\"#e3e3e3\"").count() >= 10);
        assert!(!svg.contains("font-size=\"1\"") && !svg.contains("font-size=\"8\""));
    }
}
