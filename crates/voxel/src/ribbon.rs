//! Depth ribbons: orthogonal depth images of each side of a road.
//!
//! A ribbon is a grid over (s, h) of one side of the road (left: t > 0, right: t < 0) with
//! square cells. Each pixel holds the nearest |t| of the points on that side that fall in it
//! (within a depth range), and the intensity and colour of that nearest point: an orthogonal
//! view of the roadside from the reference line, at any cell size, taken from the points
//! themselves (not from voxels), so fine cells stay sharp. Ties of depth are broken by
//! intensity, then colour, so the result does not depend on the order of the points.
//!
//! Images have the highest h in row 0 and s growing to the right, on both sides.

use crate::io::write_atomic;
use crate::mesh::ramp;
use crate::part::{PartError, Reader, Writer};
use crate::Error;
use std::io::Write;
use std::path::Path;

/// Which side of the reference line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// t > 0.
    Left,
    /// t < 0.
    Right,
}

impl Side {
    /// "left" or "right".
    pub fn name(self) -> &'static str {
        match self {
            Side::Left => "left",
            Side::Right => "right",
        }
    }
}

/// The nearest point of a pixel: depth |t| (m), intensity, colour.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Hit {
    depth: f32,
    intensity: u16,
    rgb: [u16; 3],
}

impl Hit {
    const EMPTY: Hit = Hit { depth: f32::INFINITY, intensity: 0, rgb: [0; 3] };

    fn nearer(&self, o: &Hit) -> bool {
        (self.depth, self.intensity, self.rgb) < (o.depth, o.intensity, o.rgb)
    }
}

/// A depth ribbon of one side.
#[derive(Debug, Clone)]
pub struct Ribbon {
    /// The side.
    pub side: Side,
    /// s of the left edge of column 0, m.
    pub s0: f64,
    /// h of the bottom edge of the last row, m.
    pub h0: f64,
    /// Cell size, m.
    pub cell: f64,
    /// Columns (along s).
    pub ns: usize,
    /// Rows (along h).
    pub nh: usize,
    /// Depths counted, |t| in min..max, m.
    pub depth_range: (f64, f64),
    hits: Vec<Hit>,
    has_rgb: bool,
    points: u64,
    /// The whole ribbon's s of column 0, its columns, and the first of them held here (a work
    /// unit holds only its columns, numbered as in the whole ribbon).
    origin: f64,
    total: usize,
    col0: usize,
}

impl Ribbon {
    /// An empty ribbon over `s_range` x `h_range` (m) with square cells of `cell` m, counting
    /// points with |t| in `depth_range`.
    pub fn new(
        side: Side,
        s_range: (f64, f64),
        h_range: (f64, f64),
        cell: f64,
        depth_range: (f64, f64),
    ) -> Result<Ribbon, Error> {
        Ribbon::new_part(side, s_range, h_range, cell, depth_range, None)
    }

    /// The columns of the ribbon [`Ribbon::new`] makes that s in `part.0 <= s < part.1`
    /// reaches (all of them without `part`): a work unit's share, whose
    /// [`Ribbon::write_part`] merges into the whole ribbon. Its `s0` and `ns` are its own.
    pub fn new_part(
        side: Side,
        s_range: (f64, f64),
        h_range: (f64, f64),
        cell: f64,
        depth_range: (f64, f64),
        part: Option<(f64, f64)>,
    ) -> Result<Ribbon, Error> {
        let ok = |v: f64| v.is_finite();
        if !(ok(cell) && cell > 0.0) {
            return Err(Error::Invalid(format!("ribbon cell {cell}: must be a positive number of metres")));
        }
        if !(ok(s_range.0) && ok(s_range.1) && s_range.1 > s_range.0) {
            return Err(Error::Invalid(format!("ribbon s range {}..{}: empty", s_range.0, s_range.1)));
        }
        if !(ok(h_range.0) && ok(h_range.1) && h_range.1 > h_range.0) {
            return Err(Error::Invalid(format!("ribbon h range {}..{}: empty", h_range.0, h_range.1)));
        }
        if !(depth_range.0 >= 0.0 && depth_range.1 > depth_range.0 && ok(depth_range.1)) {
            return Err(Error::Invalid(format!("ribbon depth range {}..{}: empty", depth_range.0, depth_range.1)));
        }
        let total = ((s_range.1 - s_range.0) / cell - 1e-9).ceil().max(1.0) as usize;
        let (col0, end) = crate::part::cells_of(s_range, cell, total, part);
        let ns = end - col0;
        let nh = ((h_range.1 - h_range.0) / cell - 1e-9).ceil().max(1.0) as usize;
        let pixels = ns.checked_mul(nh).filter(|&n| n <= 1 << 31).ok_or_else(|| {
            Error::Invalid(format!(
                "a ribbon of {ns} x {nh} pixels: too large (use a larger cell or a shorter s range)"
            ))
        })?;
        Ok(Ribbon {
            origin: s_range.0,
            total,
            col0,
            side,
            s0: s_range.0 + col0 as f64 * cell,
            h0: h_range.0,
            cell,
            ns,
            nh,
            depth_range,
            hits: vec![Hit::EMPTY; pixels],
            has_rgb: false,
            points: 0,
        })
    }

    /// The columns of the ribbon that s in `s_range` reaches, as a ribbon of its own whose s is
    /// this one's minus `shift` (e.g. the ribbon of the part of a road cut at `shift`): the
    /// same pixels, `s0` moved. Its point count stays this ribbon's (points are not kept).
    pub fn cropped(&self, s_range: (f64, f64), shift: f64) -> Ribbon {
        let col = |s: f64| ((s - self.s0) / self.cell).clamp(0.0, self.ns as f64);
        // At least a column (of a ribbon that has one).
        let first = ((col(s_range.0) + 1e-9).floor() as usize).min(self.ns.saturating_sub(1));
        let end = ((col(s_range.1) - 1e-9).ceil() as usize).clamp((first + 1).min(self.ns), self.ns);
        let ns = end - first;
        let mut hits = Vec::with_capacity(ns * self.nh);
        for r in 0..self.nh {
            hits.extend_from_slice(&self.hits[r * self.ns + first..r * self.ns + end]);
        }
        let s0 = self.s0 + first as f64 * self.cell - shift;
        Ribbon { s0, ns, hits, origin: s0, total: ns, col0: 0, ..*self }
    }

    /// h of the top edge of row 0, m.
    pub fn h_top(&self) -> f64 {
        self.h0 + self.nh as f64 * self.cell
    }

    /// Points that landed in the ribbon.
    pub fn points(&self) -> u64 {
        self.points
    }

    /// Whether the points had colour.
    pub fn has_rgb(&self) -> bool {
        self.has_rgb
    }

    /// The pixel (column, row) of road coordinates, if inside.
    pub fn pixel_of(&self, s: f64, h: f64) -> Option<(usize, usize)> {
        // The whole ribbon's column, then this one's.
        let c = ((s - self.origin) / self.cell).floor() - self.col0 as f64;
        let r = ((self.h_top() - h) / self.cell).floor();
        (c >= 0.0 && r >= 0.0 && (c as usize) < self.ns && (r as usize) < self.nh).then_some((c as usize, r as usize))
    }

    /// Adds points in road coordinates (s, t, h, m) with intensity and optionally colour;
    /// those of the other side, outside the depth range or the grid are skipped.
    pub fn add(&mut self, s: &[f64], t: &[f64], h: &[f64], intensity: &[u16], rgb: Option<&[[u16; 3]]>) {
        let n = s.len().min(t.len()).min(h.len()).min(intensity.len()).min(rgb.map_or(usize::MAX, |c| c.len()));
        for i in 0..n {
            let d = match self.side {
                Side::Left => t[i],
                Side::Right => -t[i],
            };
            if !(d > 0.0 && d >= self.depth_range.0 && d <= self.depth_range.1) {
                continue;
            }
            let Some((c, r)) = self.pixel_of(s[i], h[i]) else { continue };
            let hit = Hit { depth: d as f32, intensity: intensity[i], rgb: rgb.map_or([0; 3], |c| c[i]) };
            let px = &mut self.hits[r * self.ns + c];
            if hit.nearer(px) {
                *px = hit;
            }
            self.points += 1;
        }
        self.has_rgb |= rgb.is_some() && n > 0;
    }

    /// Appends the ribbon (geometry, then the pixels of the columns between the first and the
    /// last that hold any) to `w`, for [`Ribbon::merge_part`].
    pub fn write_part(&self, w: &mut Writer) {
        w.u8(self.side as u8);
        [self.origin, self.h0, self.cell, self.depth_range.0, self.depth_range.1].iter().for_each(|&v| w.f64(v));
        w.u64(self.total as u64);
        w.u64(self.nh as u64);
        w.u8(u8::from(self.has_rgb));
        w.u64(self.points);
        let used = |c: &usize| (0..self.nh).any(|r| self.hits[r * self.ns + c].depth.is_finite());
        let first = (0..self.ns).find(used).unwrap_or(self.ns);
        let end = (first..self.ns).rev().find(used).map_or(first, |c| c + 1);
        w.u64((self.col0 + first) as u64);
        w.u64((self.col0 + end) as u64);
        for r in 0..self.nh {
            for h in &self.hits[r * self.ns + first..r * self.ns + end] {
                w.f32(h.depth);
                w.u16(h.intensity);
                h.rgb.iter().for_each(|&c| w.u16(c));
            }
        }
    }

    /// Takes the nearer of each pixel and the part's (written by [`Ribbon::write_part`] of a
    /// ribbon of the same geometry): "nearer" is a total order, so the parts of any split of
    /// the points give the ribbon of all of them.
    pub fn merge_part(&mut self, r: &mut Reader) -> Result<(), PartError> {
        let side = r.u8()?;
        let geo = [r.f64()?, r.f64()?, r.f64()?, r.f64()?, r.f64()?];
        let (ns, nh) = (r.usize()?, r.usize()?);
        let mine = [self.origin, self.h0, self.cell, self.depth_range.0, self.depth_range.1];
        if side != self.side as u8
            || geo.map(f64::to_bits) != mine.map(f64::to_bits)
            || (ns, nh) != (self.total, self.nh)
        {
            return Err(PartError::OtherGeometry { what: format!("a {} ribbon part", self.side.name()) });
        }
        self.has_rgb |= r.u8()? != 0;
        self.points += r.u64()?;
        let (first, end) = (r.usize()?, r.usize()?);
        let held = self.col0 <= first && first <= end && end <= self.col0 + self.ns;
        r.expect(held, "columns outside the ribbon")?;
        let (first, end) = (first - self.col0, end - self.col0);
        for row in 0..self.nh {
            for c in first..end {
                let depth = r.f32()?;
                let intensity = r.u16()?;
                let rgb = [r.u16()?, r.u16()?, r.u16()?];
                let hit = Hit { depth, intensity, rgb };
                let px = &mut self.hits[row * self.ns + c];
                if hit.nearer(px) {
                    *px = hit;
                }
            }
        }
        Ok(())
    }

    /// Depth of a pixel, m (None: empty).
    pub fn depth(&self, col: usize, row: usize) -> Option<f32> {
        self.hits.get(row * self.ns + col).map(|h| h.depth).filter(|d| d.is_finite())
    }

    /// Intensity of a pixel's nearest point (None: empty).
    pub fn intensity(&self, col: usize, row: usize) -> Option<u16> {
        self.hits.get(row * self.ns + col).filter(|h| h.depth.is_finite()).map(|h| h.intensity)
    }

    /// Share of pixels with a depth.
    pub fn filled(&self) -> f64 {
        self.hits.iter().filter(|h| h.depth.is_finite()).count() as f64 / self.hits.len().max(1) as f64
    }

    /// Share of the pixels with a depth among those of the columns that s in `s_range`
    /// reaches (the points' extent along the road, where a ribbon should have something to
    /// show); 0 when no column is reached.
    pub fn filled_within(&self, s_range: (f64, f64)) -> f64 {
        let col = |s: f64| ((s - self.origin) / self.cell).floor() - self.col0 as f64;
        let (a, b) = (col(s_range.0).max(0.0), (col(s_range.1) + 1.0).min(self.ns as f64));
        if a >= b {
            return 0.0;
        }
        let (a, b) = (a as usize, b as usize);
        let filled = (0..self.nh)
            .map(|r| self.hits[r * self.ns + a..r * self.ns + b].iter().filter(|h| h.depth.is_finite()).count())
            .sum::<usize>();
        filled as f64 / ((b - a) * self.nh) as f64
    }

    /// Writes the depths as a 16-bit greyscale PNG: millimetres, 0 = empty (depths beyond
    /// 65.534 m are clamped there).
    pub fn write_depth_png(&self, path: &Path) -> Result<(), Error> {
        let mut data = Vec::with_capacity(self.hits.len() * 2);
        for h in &self.hits {
            let mm = if h.depth.is_finite() {
                ((h.depth as f64 * 1000.0).round() as u64).clamp(1, 65_534) as u16
            } else {
                0
            };
            data.extend_from_slice(&mm.to_be_bytes());
        }
        write_png(path, self.ns, self.nh, png::ColorType::Grayscale, png::BitDepth::Sixteen, &data)
    }

    /// Writes the depths as a 32-bit float TIFF: metres, NaN = empty.
    pub fn write_depth_tiff(&self, path: &Path) -> Result<(), Error> {
        let data: Vec<f32> = self.hits.iter().map(|h| if h.depth.is_finite() { h.depth } else { f32::NAN }).collect();
        write_tiff_f32(path, self.ns, self.nh, &data)
    }

    /// Writes the nearest points' intensities as an 8-bit greyscale PNG, stretched between
    /// the 2nd and 98th percentile of the filled pixels (1..255); 0 = empty.
    pub fn write_intensity_png(&self, path: &Path) -> Result<(), Error> {
        let mut v: Vec<u16> = self.hits.iter().filter(|h| h.depth.is_finite()).map(|h| h.intensity).collect();
        let (lo, hi) = if v.is_empty() {
            (0.0, 1.0)
        } else {
            let k = |p: f64| ((v.len() - 1) as f64 * p).round() as usize;
            let (a, b) = (k(0.02), k(0.98));
            let lo = *v.select_nth_unstable(a).1 as f64;
            let hi = *v.select_nth_unstable(b).1 as f64;
            (lo, if hi > lo { hi } else { lo + 1.0 })
        };
        let data: Vec<u8> = self
            .hits
            .iter()
            .map(|h| {
                if h.depth.is_finite() {
                    (1.0 + 254.0 * ((h.intensity as f64 - lo) / (hi - lo)).clamp(0.0, 1.0)).round() as u8
                } else {
                    0
                }
            })
            .collect();
        write_png(path, self.ns, self.nh, png::ColorType::Grayscale, png::BitDepth::Eight, &data)
    }

    /// Writes the nearest points' colours as an 8-bit RGB PNG (empty: black); an error when
    /// the points had no colour.
    pub fn write_rgb_png(&self, path: &Path) -> Result<(), Error> {
        if !self.has_rgb {
            return Err(Error::Invalid("the points carry no colour".into()));
        }
        let data: Vec<u8> = self.hits.iter().flat_map(|h| h.rgb.map(|c| (c >> 8) as u8)).collect();
        write_png(path, self.ns, self.nh, png::ColorType::Rgb, png::BitDepth::Eight, &data)
    }
}

/// Street view: the left ribbon above the right one (both with s to the right and up at the
/// top), depth coloured near = red to far = blue (up to the 99th percentile of the depths,
/// rounded up; farther is blue), empty light grey, with labels and a colour bar in metres. Ribbons wider than 8,000 pixels are reduced by the nearest depth of blocks
/// of columns. The ribbons must share s0, cell and size.
pub fn write_street_view(left: &Ribbon, right: &Ribbon, path: &Path, caption: &str) -> Result<(), Error> {
    if (left.s0, left.cell, left.ns, left.nh) != (right.s0, right.cell, right.ns, right.nh) {
        return Err(Error::Invalid("street view: the two ribbons differ in extent or cell".into()));
    }
    let step = left.ns.div_ceil(8000).max(1);
    let w = left.ns.div_ceil(step).max(240);
    let nh = left.nh.div_ceil(step);
    // Colour scale: 0 to the 99th percentile of the depths of both sides, rounded up to a
    // multiple of 5 m (of 1 m below 5 m).
    let mut depths: Vec<f32> =
        [left, right].iter().flat_map(|r| r.hits.iter().map(|h| h.depth)).filter(|d| d.is_finite()).collect();
    let dmax = if depths.is_empty() {
        left.depth_range.1
    } else {
        let k = ((depths.len() - 1) as f64 * 0.99).round() as usize;
        let p99 = *depths.select_nth_unstable_by(k, f32::total_cmp).1 as f64;
        let unit = if p99 < 5.0 { 1.0 } else { 5.0 };
        ((p99 / unit).ceil() * unit).max(unit)
    };
    let (top, gap, bar) = (14usize, 14usize, 30usize);
    let h = top + nh + gap + nh + 8 + bar;
    let mut img = vec![255u8; w * h * 3];
    let put = |img: &mut [u8], x: usize, y: usize, c: [u8; 3]| {
        if x < w && y < h {
            img[(y * w + x) * 3..(y * w + x) * 3 + 3].copy_from_slice(&c);
        }
    };
    let colour = |d: f64| ramp(1.0 - d / dmax).map(|v| (v * 255.0).round() as u8);
    for (k, rib) in [left, right].into_iter().enumerate() {
        let y0 = if k == 0 { top } else { top + nh + gap };
        for r in 0..nh {
            for c in 0..rib.ns.div_ceil(step) {
                let mut best = f32::INFINITY;
                for rr in r * step..((r + 1) * step).min(rib.nh) {
                    for cc in c * step..((c + 1) * step).min(rib.ns) {
                        best = best.min(rib.hits[rr * rib.ns + cc].depth);
                    }
                }
                let col = if best.is_finite() { colour(best as f64) } else { [225, 225, 225] };
                put(&mut img, c, y0 + r, col);
            }
        }
    }
    let label = |img: &mut Vec<u8>, x: usize, y: usize, s: &str| text(img, w, h, x, y, s, [20, 20, 20]);
    label(&mut img, 2, 3, &format!("{caption}  left (t > 0)"));
    label(&mut img, 2, top + nh + 3, "right (t < 0)");
    // Colour bar: 0 .. dmax.
    let y_bar = top + nh + gap + nh + 6;
    let bw = (w - 4).min(400);
    for x in 0..bw {
        let c = colour(dmax * x as f64 / (bw - 1).max(1) as f64);
        for y in y_bar..y_bar + 10 {
            put(&mut img, 2 + x, y, c);
        }
    }
    label(&mut img, 2, y_bar + 13, "0 m");
    let end = format!("{dmax:.0} m depth");
    label(&mut img, (2 + bw).saturating_sub(end.len() * 8), y_bar + 13, &end);
    write_png(path, w, h, png::ColorType::Rgb, png::BitDepth::Eight, &img)
}

/// 8x8 text into an RGB image.
fn text(img: &mut [u8], w: usize, h: usize, x: usize, y: usize, s: &str, c: [u8; 3]) {
    for (k, ch) in s.chars().enumerate() {
        let glyph = font8x8::legacy::BASIC_LEGACY.get(ch as usize).copied().unwrap_or([0; 8]);
        for (gy, bits) in glyph.iter().enumerate() {
            for gx in 0..8 {
                let (px, py) = (x + k * 8 + gx, y + gy);
                if bits >> gx & 1 == 1 && px < w && py < h {
                    img[(py * w + px) * 3..(py * w + px) * 3 + 3].copy_from_slice(&c);
                }
            }
        }
    }
}

fn write_png(
    path: &Path,
    w: usize,
    h: usize,
    colour: png::ColorType,
    depth: png::BitDepth,
    data: &[u8],
) -> Result<(), Error> {
    let (w32, h32) = (u32::try_from(w), u32::try_from(h));
    let (Ok(w32), Ok(h32)) = (w32, h32) else {
        return Err(Error::Invalid(format!("{}: {w} x {h} pixels is too large for a PNG", path.display())));
    };
    write_atomic(path, |out| {
        let mut e = png::Encoder::new(out, w32, h32);
        e.set_color(colour);
        e.set_depth(depth);
        let mut wr = e.write_header().map_err(std::io::Error::other)?;
        wr.write_image_data(data).map_err(std::io::Error::other)?;
        wr.finish().map_err(std::io::Error::other)
    })
}

/// A baseline TIFF, little-endian, one strip of uncompressed 32-bit IEEE floats.
fn write_tiff_f32(path: &Path, w: usize, h: usize, data: &[f32]) -> Result<(), Error> {
    let bytes = (w * h * 4) as u64;
    if w > u32::MAX as usize || h > u32::MAX as usize || bytes > u32::MAX as u64 - 1024 {
        return Err(Error::Invalid(format!("{}: {w} x {h} floats is too large for a TIFF", path.display())));
    }
    write_atomic(path, |o| {
        // Header, then the IFD at 8, then the pixels.
        const ENTRIES: u16 = 10;
        let data_at = 8 + 2 + ENTRIES as u32 * 12 + 4;
        o.write_all(b"II")?;
        o.write_all(&42u16.to_le_bytes())?;
        o.write_all(&8u32.to_le_bytes())?;
        o.write_all(&ENTRIES.to_le_bytes())?;
        let mut entry = |tag: u16, kind: u16, value: u32| -> std::io::Result<()> {
            o.write_all(&tag.to_le_bytes())?;
            o.write_all(&kind.to_le_bytes())?;
            o.write_all(&1u32.to_le_bytes())?;
            if kind == 3 {
                o.write_all(&(value as u16).to_le_bytes())?;
                o.write_all(&[0, 0])
            } else {
                o.write_all(&value.to_le_bytes())
            }
        };
        const SHORT: u16 = 3;
        const LONG: u16 = 4;
        entry(256, LONG, w as u32)?; // ImageWidth
        entry(257, LONG, h as u32)?; // ImageLength
        entry(258, SHORT, 32)?; // BitsPerSample
        entry(259, SHORT, 1)?; // Compression: none
        entry(262, SHORT, 1)?; // Photometric: black is zero
        entry(273, LONG, data_at)?; // StripOffsets
        entry(277, SHORT, 1)?; // SamplesPerPixel
        entry(278, LONG, h as u32)?; // RowsPerStrip
        entry(279, LONG, bytes as u32)?; // StripByteCounts
        entry(339, SHORT, 3)?; // SampleFormat: IEEE float
        o.write_all(&0u32.to_le_bytes())?;
        for v in data {
            o.write_all(&v.to_le_bytes())?;
        }
        Ok(())
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_point_wins_in_any_order() {
        let mut a = Ribbon::new(Side::Left, (0.0, 1.0), (0.0, 1.0), 0.5, (0.0, 50.0)).unwrap();
        let mut b = a.clone();
        let (s, t, h, i) = ([0.1, 0.2, 0.3, 0.7], [5.0, 4.0, 4.0, -3.0], [0.9, 0.8, 0.7, 0.9], [10, 30, 20, 5]);
        a.add(&s, &t, &h, &i, None);
        let r = |v: [f64; 4]| [v[3], v[2], v[1], v[0]];
        b.add(&r(s), &r(t), &r(h), &[5, 20, 30, 10], None);
        // Column 0, row 0 (h 0.5..1.0): depth 4 with the lower intensity of the tie.
        assert_eq!(a.depth(0, 0), Some(4.0));
        assert_eq!(a.intensity(0, 0), Some(20));
        assert_eq!((b.depth(0, 0), b.intensity(0, 0)), (Some(4.0), Some(20)));
        // The right side's point is not on the left ribbon.
        assert_eq!(a.depth(1, 0), None);
        assert_eq!(a.points(), 3);
    }

    #[test]
    fn filled_within_counts_the_columns_of_the_points() {
        let mut r = Ribbon::new(Side::Left, (0.0, 10.0), (0.0, 1.0), 1.0, (0.0, 50.0)).unwrap();
        r.add(&[2.5, 3.5], &[1.0, 1.0], &[0.5, 0.5], &[1, 1], None);
        assert_eq!(r.filled(), 0.2);
        assert_eq!(r.filled_within((2.0, 3.9)), 1.0);
        assert_eq!(r.filled_within((2.0, 5.5)), 0.5);
        assert_eq!(r.filled_within((20.0, 30.0)), 0.0, "no column reached");
        // A part's columns are numbered as in the whole ribbon.
        let mut p = Ribbon::new_part(Side::Left, (0.0, 10.0), (0.0, 1.0), 1.0, (0.0, 50.0), Some((3.0, 6.0))).unwrap();
        p.add(&[3.5], &[1.0], &[0.5], &[1], None);
        assert_eq!(p.filled_within((3.0, 4.5)), 0.5);
    }

    #[test]
    fn tiff_layout() {
        let dir = std::env::temp_dir().join(format!("voxel-tiff-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("d.tif");
        write_tiff_f32(&p, 3, 2, &[1.0, 2.0, f32::NAN, 4.0, 5.0, 6.0]).unwrap();
        let b = std::fs::read(&p).unwrap();
        assert_eq!(&b[..4], b"II*\0");
        assert_eq!(b.len(), 8 + 2 + 120 + 4 + 24);
        let px = |k: usize| f32::from_le_bytes(b[134 + 4 * k..138 + 4 * k].try_into().unwrap());
        assert_eq!(px(0), 1.0);
        assert!(px(2).is_nan());
        assert_eq!(px(5), 6.0);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod rgb_tests {
    use super::*;

    #[test]
    fn the_colour_ribbon_holds_the_nearest_points_colour() {
        let mut r = Ribbon::new(Side::Right, (0.0, 1.0), (0.0, 1.0), 1.0, (0.0, 50.0)).unwrap();
        r.add(&[0.5, 0.5], &[-3.0, -2.0], &[0.5, 0.5], &[1, 2], Some(&[[65_535, 0, 0], [0, 65_535, 0]]));
        assert_eq!(r.depth(0, 0), Some(2.0));
        let dir = std::env::temp_dir().join(format!("voxel-rgb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("rgb.png");
        r.write_rgb_png(&p).unwrap();
        let mut dec = png::Decoder::new(std::fs::File::open(&p).unwrap()).read_info().unwrap();
        let mut buf = vec![0; dec.output_buffer_size()];
        dec.next_frame(&mut buf).unwrap();
        assert_eq!(&buf[..3], &[0, 255, 0], "the nearer point is green");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
