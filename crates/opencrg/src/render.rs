//! A PNG picture of a CRG grid: height relative to a fitted plane (or to the reference line) as
//! a diverging colour map, shaded by a hillshade, with a colour bar in millimetres, a scale bar
//! and a caption. u runs left to right, v (left positive) bottom to top. Long grids are cut into
//! strips stacked top to bottom; grids too large for the pixel budget are averaged over k x k
//! nodes (NaN ignored), and the caption says so.
//!
//! Without the footer ([`RenderOptions::footer`] false) the picture is the surface alone, and
//! [`RenderInfo`] gives what a page needs to draw its own legend and overlays: the colour range
//! and the mapping of (u, v) to pixels ([`RenderInfo::pixel`]).

use crate::error::{Error, ErrorKind, Result};
use crate::model::Crg;
use std::path::Path;

/// What the colours show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Relative {
    /// z minus the least-squares plane through all nodes (shows texture, potholes, manholes).
    #[default]
    FittedPlane,
    /// z as stored (relative to the reference line's elevation).
    ReferenceLine,
}

/// Options for [`render`].
#[derive(Debug, Clone)]
pub struct RenderOptions {
    /// Colour reference.
    pub relative: Relative,
    /// Largest number of grid pixels (after averaging).
    pub max_pixels: usize,
    /// Width of one strip, pixels (at least 200), as a target: the grid is cut into the number
    /// of strips of this width that fits it best (at least one), all of one width but the last,
    /// which is narrower by less than a pixel per strip; so a strip is between about 2/3 and 3/2
    /// of this width, or the whole grid when that is narrower.
    pub strip_width: usize,
    /// Half range of the colour scale, m; `None` = the 99th percentile of |dz|.
    pub range: Option<f64>,
    /// Caption (e.g. the file name).
    pub title: String,
    /// Boxes outlined on the grid, [u0, u1, v0, v1] in m (e.g. potholes and manholes found);
    /// drawn with or without the footer.
    pub marks: Vec<[f64; 4]>,
    /// Whether to draw the footer below the strips: colour bar with its labels, scale bar and
    /// caption. Without it the image is the strips alone (margin, strips, margin) and carries no
    /// text, for a page that draws its own legend from [`RenderInfo`].
    pub footer: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            relative: Relative::FittedPlane,
            max_pixels: 16_000_000,
            strip_width: 4000,
            range: None,
            title: String::new(),
            marks: Vec::new(),
            footer: true,
        }
    }
}

/// What [`render`] did, and where it drew the grid.
///
/// The grid is `columns` x `rows` pixels (after averaging), cut along u into `strips` strips of
/// `strip_width` columns (the last may be narrower), stacked top to bottom. Pixel column `i`
/// covers u in `[u0 + i du, u0 + (i + 1) du)`, pixel row `j` covers v in
/// `[v0 + j dv, v0 + (j + 1) dv)` (a node lies in the middle of its pixel when nothing is
/// averaged); column `i` is drawn in strip `i / strip_width` at image x
/// `margin + i % strip_width`, row `j` at image y
/// `margin + strip (rows + gap) + rows - 1 - j` (v grows upward). [`RenderInfo::pixel`] does
/// this.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderInfo {
    /// Nodes averaged per pixel along each axis (1 = every node is a pixel).
    pub downsample: usize,
    /// Image size, pixels.
    pub width: usize,
    /// Image size, pixels.
    pub height: usize,
    /// Half range of the colour scale, m: the colours run from -range (blue) through 0 (white)
    /// to +range (red), of z relative to [`RenderOptions::relative`].
    pub range: f64,
    /// Number of strips.
    pub strips: usize,
    /// Pixel columns of the whole grid (all strips).
    pub columns: usize,
    /// Pixel rows of the grid: the height of one strip.
    pub rows: usize,
    /// Columns of a strip (the last strip may have fewer).
    pub strip_width: usize,
    /// Blank rows between strips.
    pub gap: usize,
    /// Blank pixels left of the strips and above the first one.
    pub margin: usize,
    /// u at the left edge of pixel column 0 (half a node before the first node), m.
    pub u0: f64,
    /// u per pixel column, m.
    pub du: f64,
    /// v at the lower edge of pixel row 0 (half a node before the rightmost long section), m.
    pub v0: f64,
    /// v per pixel row, m.
    pub dv: f64,
    /// Whether the footer (colour bar, scale bar, caption) is drawn below the strips.
    pub footer: bool,
}

impl RenderInfo {
    /// The grid pixel (column, row) that holds (u, v), as real numbers (floored, possibly
    /// outside the grid).
    fn cell(&self, u: f64, v: f64) -> (f64, f64) {
        (((u - self.u0) / self.du).floor(), ((v - self.v0) / self.dv).floor())
    }

    /// Image position (x, y) of grid pixel (column i, row j).
    fn at(&self, i: usize, j: usize) -> (usize, usize) {
        let strip = i / self.strip_width.max(1);
        (self.margin + i % self.strip_width.max(1), self.margin + strip * (self.rows + self.gap) + (self.rows - 1 - j))
    }

    /// The image pixel (x, y) where the point (u, v) of the grid is drawn, or `None` outside the
    /// grid (or for a non-finite u or v).
    pub fn pixel(&self, u: f64, v: f64) -> Option<(usize, usize)> {
        let (i, j) = self.cell(u, v);
        let inside = |x: f64, n: usize| x.is_finite() && x >= 0.0 && x < n as f64;
        (inside(i, self.columns) && inside(j, self.rows)).then(|| self.at(i as usize, j as usize))
    }
}

/// Renders `crg` to a PNG file (written atomically).
pub fn render(crg: &Crg, path: &Path, options: &RenderOptions) -> Result<RenderInfo> {
    let (img, info) = render_rgb(crg, options)?;
    write_rgb_png(path, info.width, info.height, &img)?;
    Ok(info)
}

/// Writes an RGB8 image (`width` x `height` pixels, rows top down) as a PNG, atomically.
pub fn write_rgb_png(path: &Path, width: usize, height: usize, rgb: &[u8]) -> Result<()> {
    let size = |n: usize| u32::try_from(n).ok().filter(|&n| n > 0);
    let (Some(w32), Some(h32)) = (size(width), size(height)) else {
        return Err(Error::new(ErrorKind::Inconsistent(format!("an image of {width} x {height} pixels"))));
    };
    if rgb.len() != width * height * 3 {
        return Err(Error::new(ErrorKind::Inconsistent(format!(
            "{} bytes for an RGB image of {width} x {height} pixels",
            rgb.len()
        ))));
    }
    crate::write::write_atomically(path, |w| {
        let png_err = |e: png::EncodingError| Error::new(ErrorKind::Io(e.to_string()));
        let mut enc = png::Encoder::new(w, w32, h32);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        let mut pw = enc.write_header().map_err(png_err)?;
        pw.write_image_data(rgb).map_err(png_err)?;
        pw.finish().map_err(png_err)
    })
}

/// Renders to an RGB8 buffer.
pub fn render_rgb(crg: &Crg, o: &RenderOptions) -> Result<(Vec<u8>, RenderInfo)> {
    let (nu, nv) = (crg.nu, crg.nv());
    if nu < 2 || nv < 2 {
        return Err(Error::new(ErrorKind::Inconsistent("nothing to render".into())));
    }
    let k = {
        let mut k = 1;
        while nu.div_ceil(k) * nv.div_ceil(k) > o.max_pixels.max(1) {
            k += 1;
        }
        k
    };
    let (w, h) = (nu.div_ceil(k), nv.div_ceil(k));
    let du = crg.du() * k as f64;
    let v = crg.v_positions();
    let dv = (v[nv - 1] - v[0]) / (nv - 1) as f64 * k as f64;
    // Block averages, ignoring NaN.
    let mut z = vec![f64::NAN; w * h];
    for j in 0..h {
        for i in 0..w {
            let (mut s, mut n) = (0.0, 0usize);
            for iu in i * k..((i + 1) * k).min(nu) {
                for iv in j * k..((j + 1) * k).min(nv) {
                    let x = crg.z_at(iu, iv);
                    if !x.is_nan() {
                        s += x as f64;
                        n += 1;
                    }
                }
            }
            if n > 0 {
                z[j * w + i] = s / n as f64;
            }
        }
    }
    // Reference surface.
    if o.relative == Relative::FittedPlane {
        let plane = fit_plane(&z, w, h);
        for j in 0..h {
            for i in 0..w {
                z[j * w + i] -= plane[0] + plane[1] * i as f64 + plane[2] * j as f64;
            }
        }
    }
    let mut mags: Vec<f64> = z.iter().filter(|x| !x.is_nan()).map(|x| x.abs()).collect();
    let range = o.range.unwrap_or_else(|| {
        if mags.is_empty() {
            0.01
        } else {
            let idx = ((mags.len() - 1) as f64 * 0.99) as usize;
            mags.select_nth_unstable_by(idx, f64::total_cmp);
            mags[idx].max(1e-4)
        }
    });
    // Balanced strips: as many as the width asked for fits best, all of one width (the last
    // narrower by less than one pixel per strip), so no strip is a sliver of blank paper.
    // (Recounted: with more strips than pixels per strip, the rounded-up width can need fewer.)
    let strip_w = w.div_ceil(((w as f64 / o.strip_width.max(200) as f64).round() as usize).max(1));
    let strips = w.div_ceil(strip_w);
    let (gap, margin) = (6, 10);
    let footer = if o.footer { 70 } else { 0 };
    // The footer's colour bar, labels and scale bar need 520 pixels.
    let img_w = if o.footer { (strip_w + 2 * margin).max(520) } else { strip_w + 2 * margin };
    let img_h = if o.footer { margin + strips * (h + gap) + footer } else { 2 * margin + strips * (h + gap) - gap };
    // Pixel i covers the nodes i k .. i k + k - 1: its left edge is half a node before the first.
    let (dnu, dnv) = (crg.du(), dv / k as f64);
    let info = RenderInfo {
        downsample: k,
        width: img_w,
        height: img_h,
        range,
        strips,
        columns: w,
        rows: h,
        strip_width: strip_w,
        gap,
        margin,
        u0: crg.u_first() - 0.5 * dnu,
        du,
        v0: v[0] - 0.5 * dnv,
        dv,
        footer: o.footer,
    };
    let mut img = vec![255u8; img_w * img_h * 3];
    let put = |img: &mut [u8], x: usize, y: usize, c: [u8; 3]| {
        if x < img_w && y < img_h {
            let p = (y * img_w + x) * 3;
            img[p..p + 3].copy_from_slice(&c);
        }
    };
    // Grid pixels: colour by dz, shaded by the hillshade of the (block) surface.
    for j in 0..h {
        for i in 0..w {
            let zz = z[j * w + i];
            let (x, y) = info.at(i, j);
            if zz.is_nan() {
                put(&mut img, x, y, [200, 200, 200]);
                continue;
            }
            let c = diverging((zz / range).clamp(-1.0, 1.0));
            let shade = hillshade(&z, w, h, i, j, du, dv);
            let f = 0.55 + 0.45 * shade;
            put(&mut img, x, y, [(c[0] as f64 * f) as u8, (c[1] as f64 * f) as u8, (c[2] as f64 * f) as u8]);
        }
    }
    // Marks: outlines two pixels outside each box, so what they mark stays visible.
    for m in &o.marks {
        let ((i0, j0), (i1, j1)) = (info.cell(m[0], m[2]), info.cell(m[1], m[3]));
        let (i0, i1, j0, j1) = (i0 - 2.0, i1 + 2.0, j0 - 2.0, j1 + 2.0);
        if !(i0.is_finite() && i1.is_finite() && j0.is_finite() && j1.is_finite()) || i1 < 0.0 || j1 < 0.0 {
            continue;
        }
        // Only the pixels of the image are walked (one column or row outside stands for an edge
        // beyond it): a box far outside the grid, or a very fine grid, costs no more than the
        // image.
        let (i0, i1) = (i0.max(-1.0), i1.min(w as f64));
        let (j0, j1) = (j0.max(-1.0), j1.min(h as f64));
        let at = |i: f64, j: f64| -> Option<(usize, usize)> {
            let (i, j) = (i as isize, j as isize);
            if i < 0 || j < 0 || i as usize >= w || j as usize >= h {
                return None;
            }
            Some(info.at(i as usize, j as usize))
        };
        let green = [0, 160, 60];
        for i in i0 as isize..=i1 as isize {
            for j in [j0, j1] {
                if let Some((x, y)) = at(i as f64, j) {
                    put(&mut img, x, y, green);
                }
            }
        }
        for j in j0 as isize..=j1 as isize {
            for i in [i0, i1] {
                if let Some((x, y)) = at(i, j as f64) {
                    put(&mut img, x, y, green);
                }
            }
        }
    }
    if !o.footer {
        return Ok((img, info));
    }
    // Footer: colour bar with labels, scale bar, caption.
    let fy = margin + strips * (h + gap) + 4;
    let bar_w = 200;
    for x in 0..bar_w {
        let t = x as f64 / (bar_w - 1) as f64 * 2.0 - 1.0;
        let c = diverging(t);
        for y in fy..fy + 12 {
            put(&mut img, margin + x, y, c);
        }
    }
    let mm = range * 1000.0;
    text(&mut img, img_w, margin, fy + 16, &format!("-{mm:.1}"), [0, 0, 0]);
    text(&mut img, img_w, margin + bar_w / 2 - 4, fy + 16, "0", [0, 0, 0]);
    text(&mut img, img_w, margin + bar_w - 40, fy + 16, &format!("+{mm:.1}"), [0, 0, 0]);
    let what = match o.relative {
        Relative::FittedPlane => "mm vs fitted plane",
        Relative::ReferenceLine => "mm vs reference line",
    };
    text(&mut img, img_w, margin + bar_w + 10, fy + 2, what, [0, 0, 0]);
    // Scale bar: a round length of about 100 px along u.
    let metres_per_px = du;
    let nice = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0];
    let len_m = nice.iter().copied().find(|&l| l / metres_per_px >= 60.0).unwrap_or(1000.0);
    let len_px = (len_m / metres_per_px).round() as usize;
    let sx = margin + bar_w + 10;
    let sy = fy + 20;
    for x in sx..sx + len_px.min(img_w.saturating_sub(sx + 1)) {
        for y in sy..sy + 4 {
            put(&mut img, x, y, [0, 0, 0]);
        }
    }
    let label = if len_m >= 1.0 { format!("{len_m} m") } else { format!("{} cm", len_m * 100.0) };
    text(&mut img, img_w, sx + len_px.min(300) + 6, sy - 2, &label, [0, 0, 0]);
    let mut caption = format!("{} {}x{} nodes, du {} m", o.title, nu, nv, crg.du());
    if k > 1 {
        caption.push_str(&format!(", downsampled 1:{k} (block mean)"));
    }
    if strips > 1 {
        caption.push_str(&format!(", {strips} strips of {:.0} m", strip_w as f64 * du));
    }
    text(&mut img, img_w, margin, fy + 32, &caption, [0, 0, 0]);
    text(&mut img, img_w, margin, fy + 44, "grey: no data. u left to right, v (left) upward", [90, 90, 90]);
    Ok((img, info))
}

/// Least-squares plane a + b·i + c·j through the non-NaN pixels.
fn fit_plane(z: &[f64], w: usize, h: usize) -> [f64; 3] {
    let mut m = [[0.0f64; 3]; 3];
    let mut r = [0.0f64; 3];
    for j in 0..h {
        for i in 0..w {
            let v = z[j * w + i];
            if v.is_nan() {
                continue;
            }
            let p = [1.0, i as f64, j as f64];
            for a in 0..3 {
                for b in 0..3 {
                    m[a][b] += p[a] * p[b];
                }
                r[a] += p[a] * v;
            }
        }
    }
    solve3(m, r).unwrap_or([0.0; 3])
}

fn solve3(m: [[f64; 3]; 3], r: [f64; 3]) -> Option<[f64; 3]> {
    let det = |m: &[[f64; 3]; 3]| {
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    };
    let d = det(&m);
    if d.abs() < 1e-12 {
        return None;
    }
    let mut out = [0.0; 3];
    for (c, o) in out.iter_mut().enumerate() {
        let mut mc = m;
        for row in 0..3 {
            mc[row][c] = r[row];
        }
        *o = det(&mc) / d;
    }
    Some(out)
}

/// Blue (-1) - white (0) - red (+1).
fn diverging(t: f64) -> [u8; 3] {
    let (lo, mid, hi) = ([33.0, 102.0, 172.0], [247.0, 247.0, 247.0], [178.0, 24.0, 43.0]);
    let (a, b, f) = if t < 0.0 { (mid, lo, -t) } else { (mid, hi, t) };
    [(a[0] + (b[0] - a[0]) * f) as u8, (a[1] + (b[1] - a[1]) * f) as u8, (a[2] + (b[2] - a[2]) * f) as u8]
}

/// Lambertian shade in [0, 1] for light from the upper left (azimuth 315°, altitude 45°).
fn hillshade(z: &[f64], w: usize, h: usize, i: usize, j: usize, du: f64, dv: f64) -> f64 {
    let at = |ii: usize, jj: usize| {
        let v = z[jj * w + ii];
        if v.is_nan() {
            z[j * w + i]
        } else {
            v
        }
    };
    let (i0, i1) = (i.saturating_sub(1), (i + 1).min(w - 1));
    let (j0, j1) = (j.saturating_sub(1), (j + 1).min(h - 1));
    let exaggerate = 20.0;
    let dzdu = (at(i1, j) - at(i0, j)) / ((i1 - i0).max(1) as f64 * du) * exaggerate;
    let dzdv = (at(i, j1) - at(i, j0)) / ((j1 - j0).max(1) as f64 * dv) * exaggerate;
    let n = [-dzdu, -dzdv, 1.0];
    let len = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    let l = [-0.5, 0.5, std::f64::consts::FRAC_1_SQRT_2];
    ((n[0] * l[0] + n[1] * l[1] + n[2] * l[2]) / len).clamp(0.0, 1.0)
}

/// 8x8 bitmap text.
fn text(img: &mut [u8], img_w: usize, x: usize, y: usize, s: &str, c: [u8; 3]) {
    let img_h = img.len() / 3 / img_w;
    for (n, ch) in s.chars().enumerate() {
        let glyph = font8x8::legacy::BASIC_LEGACY.get(ch as usize).copied().unwrap_or([0; 8]);
        for (row, bits) in glyph.iter().enumerate() {
            for col in 0..8 {
                if bits & (1 << col) != 0 {
                    let (px, py) = (x + n * 8 + col, y + row);
                    if px < img_w && py < img_h {
                        let p = (py * img_w + px) * 3;
                        img[p..p + 3].copy_from_slice(&c);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(nu: usize, nv: usize) -> Crg {
        let z: Vec<f32> =
            (0..nu * nv).map(|i| if i % 97 == 0 { f32::NAN } else { ((i % 13) as f32) * 0.001 }).collect();
        Crg::new_grid(0.0, 0.01, nu, -1.0, 0.01, nv, (0.0, 0.0, 0.0), None, z)
    }

    #[test]
    fn small_grid_is_one_pixel_per_node() {
        let (img, info) = render_rgb(&grid(300, 101), &RenderOptions::default()).expect("render");
        assert_eq!((info.downsample, info.strips), (1, 1));
        assert_eq!(img.len(), info.width * info.height * 3);
        assert!(info.width >= 300 && info.height > 101);
        // NaN nodes are grey, data nodes are not.
        let px = |x: usize, y: usize| &img[(y * info.width + x) * 3..(y * info.width + x) * 3 + 3];
        assert_eq!(px(10, 10 + 100), [200, 200, 200], "node (0, 0) is NaN");
        assert_ne!(px(11, 10 + 100), [200, 200, 200]);
    }

    #[test]
    fn large_grid_is_downsampled_and_cut_into_strips() {
        let opts = RenderOptions { max_pixels: 20_000, strip_width: 250, ..Default::default() };
        let (_, info) = render_rgb(&grid(4000, 101), &opts).expect("render");
        assert!(info.downsample >= 4, "{info:?}");
        assert!(info.strips >= 2, "{info:?}");
    }

    /// Pixel columns of the image that hold any grid pixel (not background white), per strip.
    fn strip_columns(img: &[u8], info: &RenderInfo, rows: usize) -> Vec<usize> {
        let gap = 6;
        (0..info.strips)
            .map(|s| {
                let y0 = 10 + s * (rows + gap);
                (0..info.width)
                    .filter(|&x| (y0..y0 + rows).any(|y| img[(y * info.width + x) * 3..][..3] != [255, 255, 255]))
                    .count()
            })
            .collect()
    }

    #[test]
    fn strips_are_balanced_and_none_is_blank() {
        // 5,001 columns at strips of 2,500 were 2,500 + 2,500 + 1: a third of the picture blank.
        let crg = grid(5001, 21);
        let opts = RenderOptions { strip_width: 2500, ..Default::default() };
        let (img, info) = render_rgb(&crg, &opts).expect("render");
        assert_eq!(info.downsample, 1);
        let cols = strip_columns(&img, &info, 21);
        assert_eq!(cols.iter().sum::<usize>(), 5001, "{cols:?}");
        let widest = cols.iter().copied().max().unwrap_or(0);
        assert!(cols.iter().all(|&c| c + 1 >= widest), "{cols:?}");
        // Over a sweep of widths: no strip is blank or less than half the others, and none is
        // wider than one and a half times the width asked for.
        for nu in [201, 399, 401, 599, 601, 1000, 1249, 1251, 3333] {
            let opts = RenderOptions { strip_width: 200, ..Default::default() };
            let (img, info) = render_rgb(&grid(nu, 11), &opts).expect("render");
            let cols = strip_columns(&img, &info, 11);
            let widest = cols.iter().copied().max().unwrap_or(0);
            assert_eq!(cols.iter().sum::<usize>(), nu, "{nu}: {cols:?}");
            assert!(widest <= 301, "{nu}: {cols:?}");
            assert!(cols.iter().all(|&c| c + info.strips > widest && 2 * c >= widest), "{nu}: {cols:?}");
        }
    }

    /// A flat grid (z = 0) of `nu` x `nv` nodes at 1 cm from u = 2, v = -0.3, with the nodes
    /// `spike` at 1 cm.
    fn spiked(nu: usize, nv: usize, spike: &[(usize, usize)]) -> Crg {
        let mut z = vec![0.0f32; nu * nv];
        for &(iu, iv) in spike {
            z[iu * nv + iv] = 0.01;
        }
        Crg::new_grid(2.0, 0.01, nu, -0.3, 0.01, nv, (0.0, 0.0, 0.0), None, z)
    }

    /// The pixels that are clearly red (the spike's colour; the flat surface is grey-white).
    fn red(img: &[u8], width: usize) -> Vec<(usize, usize)> {
        img.chunks(3)
            .enumerate()
            .filter(|(_, c)| c[0] as i32 > c[1] as i32 + 60)
            .map(|(n, _)| (n % width, n / width))
            .collect()
    }

    #[test]
    fn without_footer_the_image_is_the_strips_and_the_mapping_finds_a_node() {
        // 1,000 x 41 nodes in strips of 500; the spike at node (iu 700, iv 30), in the second.
        let (iu, iv) = (700, 30);
        let crg = spiked(1000, 41, &[(iu, iv)]);
        let base = RenderOptions {
            relative: Relative::ReferenceLine,
            range: Some(0.01),
            strip_width: 500,
            title: "some caption".into(),
            ..Default::default()
        };
        let (with, wi) = render_rgb(&crg, &base).expect("render");
        let opts = RenderOptions { footer: false, ..base };
        let (img, info) = render_rgb(&crg, &opts).expect("render");
        assert!(wi.footer && !info.footer);
        assert_eq!((info.strips, info.strip_width, info.columns, info.rows), (2, 500, 1000, 41));
        assert_eq!((info.margin, info.gap, info.range), (10, 6, 0.01));
        // Margin, the strips with gaps between them, margin: no footer rows.
        assert_eq!(info.height, 2 * info.margin + info.strips * info.rows + (info.strips - 1) * info.gap);
        assert_eq!(info.width, info.strip_width + 2 * info.margin);
        assert!(wi.height >= info.height + 60, "the footer has rows: {wi:?}");
        assert_eq!(img.len(), info.width * info.height * 3);
        // No burnt-in text or colour bar: every pixel below the last strip is white (and there
        // are none), and the only red pixel is the spike's, where the mapping puts it.
        let (u, v) = (2.0 + iu as f64 * 0.01, -0.3 + iv as f64 * 0.01);
        let at = info.pixel(u, v).expect("inside");
        assert_eq!(at, (10 + 200, 10 + (41 + 6) + (40 - 30)));
        assert_eq!(red(&img, info.width), [at]);
        // The footer's colour bar is red at its right end: with the footer there is more red.
        assert!(red(&with, wi.width).len() > 1);
        // Above the footer, the picture with the footer is the same (both 520 pixels wide).
        assert_eq!(wi.width, info.width);
        let n = (info.height - info.margin) * info.width * 3;
        assert!(img[..n] == with[..n]);
        // Outside the grid: none.
        assert_eq!(info.pixel(1.99, v), None);
        assert_eq!(info.pixel(u, 0.2), None);
        assert_eq!(info.pixel(f64::NAN, v), None);
        // Averaged 2 x 2: the block of the spike's four nodes is one red pixel, and each of them
        // maps to it.
        let block = [(700, 30), (701, 30), (700, 31), (701, 31)];
        let crg = spiked(1000, 41, &block);
        let opts = RenderOptions { max_pixels: 20_000, ..opts };
        let (img, info) = render_rgb(&crg, &opts).expect("render");
        assert_eq!((info.downsample, info.columns, info.rows), (2, 500, 21));
        let red = red(&img, info.width);
        assert_eq!(red.len(), 1, "{red:?}");
        for (iu, iv) in block {
            assert_eq!(info.pixel(2.0 + iu as f64 * 0.01, -0.3 + iv as f64 * 0.01), Some(red[0]), "{iu} {iv}");
        }
    }

    #[test]
    fn marks_outline_their_box_two_pixels_out() {
        // Nodes u 0..2.99, v -1..0 at 1 cm; a box u 1.00..1.20, v -0.50..-0.30.
        let opts = RenderOptions { marks: vec![[1.0, 1.2, -0.5, -0.3]], ..Default::default() };
        let (img, info) = render_rgb(&grid(300, 101), &opts).expect("render");
        let px = |i: usize, j: usize| {
            let (x, y) = (10 + i, 10 + (100 - j));
            img[(y * info.width + x) * 3..(y * info.width + x) * 3 + 3].to_vec()
        };
        let green = vec![0, 160, 60];
        // Left edge at node u 0.98 (i 98), bottom edge at v -0.52 (j 48), inside not marked.
        assert_eq!(px(98, 60), green);
        assert_eq!(px(122, 60), green);
        assert_eq!(px(110, 48), green);
        assert_eq!(px(110, 72), green);
        assert_ne!(px(110, 60), green);
        assert_ne!(px(97, 60), green);
    }
}
