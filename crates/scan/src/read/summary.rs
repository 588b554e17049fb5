//! One pass over a file for `roadscan info`: bounds, classes, returns, GPS time, intensity
//! statistics, scan angles and point density (over the header's bounds and over the occupied
//! cells of a grid), with the reader's warnings and the faults the pass finds.

use super::{Header, LasReader, Points};
use crate::Error;

/// What one pass over a file found: for `roadscan info`.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Points read.
    pub points: u64,
    /// Bounds of the points (x, y, z).
    pub min: [f64; 3],
    /// Bounds of the points.
    pub max: [f64; 3],
    /// (class, count) of every class present.
    pub classes: Vec<(u8, u64)>,
    /// GPS time range (infinite when there is none).
    pub gps: (f64, f64),
    /// The reader's warnings and what the pass found (bounds outside the header's, no CRS).
    pub problems: Vec<String>,
    /// Intensity statistics (None without points).
    pub intensity: Option<IntensityStats>,
    /// Points by return number 1-15 (index 0 is return 1; return number 0, which the
    /// specification forbids, is not counted).
    pub return_numbers: [u64; 15],
    /// Points by their pulse's number of returns 1-15 (index 0: single returns).
    pub numbers_of_returns: [u64; 15],
    /// Scan angle range, degrees (None without points).
    pub scan_angle: Option<(f32, f32)>,
    /// Point density (None without points, or for a geographic CRS).
    pub density: Option<Density>,
}

/// Intensity of the points: range, mean and percentiles (exact, from a 65,536-bin histogram).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntensityStats {
    /// Smallest.
    pub min: u16,
    /// Largest.
    pub max: u16,
    /// Mean.
    pub mean: f64,
    /// 5th, 50th (median) and 95th percentiles (nearest rank).
    pub p5_p50_p95: [u16; 3],
}

/// Points per square metre, two ways.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Density {
    /// Points over the area of the header's x-y bounds (lasinfo's and PDAL's figure); None
    /// when the bounds have no area.
    pub over_bounds: Option<f64>,
    /// Points over the area of the occupied cells of a grid on the header's x-y bounds (the
    /// points per m² where there are points): a swath's density, not diluted by empty corners.
    pub over_cells: f64,
    /// The cells' side, m: 1 m, or coarser where 1 m cells over the bounds would exceed
    /// [`DENSITY_CELLS`] (memory stays at most 2 MiB).
    pub cell: f64,
    /// Occupied cells.
    pub cells: u64,
    /// Points counted in cells (those outside the header's bounds are not).
    pub points: u64,
    /// Whether metres per unit were assumed 1 because the file does not say.
    pub unit_assumed: bool,
}

/// The most cells of the occupancy grid behind [`Density::over_cells`] (one bit each).
pub const DENSITY_CELLS: u64 = 1 << 24;

/// Which cells of a grid over the header's x-y bounds hold points: one bit a cell.
struct Occupancy {
    x0: f64,
    y0: f64,
    /// Cell side in the file's unit.
    cell: f64,
    /// Cell side, m.
    metres: f64,
    nx: u64,
    ny: u64,
    bits: Vec<u64>,
    cells: u64,
    points: u64,
}

impl Occupancy {
    /// A grid of cells of `metres` (at least 1 m) on the bounds, with `unit` metres a unit.
    fn new(h: &Header, unit: f64) -> Option<Occupancy> {
        let (w, d) = (h.max[0] - h.min[0], h.max[1] - h.min[1]);
        if !(w.is_finite() && d.is_finite() && w >= 0.0 && d >= 0.0 && unit > 0.0) {
            return None;
        }
        let (wm, dm) = (w * unit, d * unit);
        // 1 m cells, coarser when there would be too many.
        let mut metres: f64 = 1.0;
        while ((wm / metres).floor() + 1.0) * ((dm / metres).floor() + 1.0) > DENSITY_CELLS as f64 {
            metres *= 2.0;
        }
        let cell = metres / unit;
        let nx = (w / cell).floor() as u64 + 1;
        let ny = (d / cell).floor() as u64 + 1;
        let words = (nx * ny).div_ceil(64) as usize;
        Some(Occupancy { x0: h.min[0], y0: h.min[1], cell, metres, nx, ny, bits: vec![0; words], cells: 0, points: 0 })
    }

    /// Counts a point; `tol` (in cells) is how far outside the bounds a point is still taken
    /// into the edge cells (headers round their bounds).
    fn add(&mut self, x: f64, y: f64, tol: f64) {
        let (fx, fy) = ((x - self.x0) / self.cell, (y - self.y0) / self.cell);
        let (nx, ny) = (self.nx as f64, self.ny as f64);
        // Outside the bounds (a bad header) or not a number: not counted.
        if !(fx >= -tol && fy >= -tol && fx < nx + tol && fy < ny + tol) {
            return;
        }
        let (ix, iy) = ((fx.max(0.0) as u64).min(self.nx - 1), (fy.max(0.0) as u64).min(self.ny - 1));
        let k = iy * self.nx + ix;
        let (w, b) = ((k / 64) as usize, k % 64);
        if let Some(word) = self.bits.get_mut(w) {
            self.points += 1;
            if *word & (1 << b) == 0 {
                *word |= 1 << b;
                self.cells += 1;
            }
        }
    }
}

/// Reads every point of `r` and summarises them.
pub fn summarize(r: &mut LasReader) -> Result<Summary, Error> {
    // Every column is summarised.
    r.set_xyz_only(false);
    let mut p = Points::default();
    let mut counts = [0u64; 256];
    // Points by return number 1-15, as read.
    let mut returns = [0u64; 15];
    let mut numbers = [0u64; 15];
    // Intensity histogram (512 KiB) for exact percentiles.
    let mut intensity = vec![0u64; 1 << 16];
    let mut intensity_sum = 0u128;
    let mut angle = (f32::INFINITY, f32::NEG_INFINITY);
    let h = r.header();
    // Metres per unit: the file's; a geographic CRS has none (no density); a file without a CRS
    // is taken to be in metres.
    let geographic = h.crs.epsg.is_some_and(|c| crate::CrsDef::from_epsg(c).is_ok_and(|d| d.is_geographic()))
        || h.crs.proj.as_deref().is_some_and(|p| crate::crs::unit_of_proj(p).is_none());
    let unit = match (h.crs.unit, geographic) {
        (Some(u), _) => Some((u, false)),
        (None, false) => Some((1.0, true)),
        (None, true) => None,
    };
    let mut occupancy = unit.and_then(|(u, _)| Occupancy::new(h, u));
    let tol = occupancy.as_ref().map_or(0.0, |o| h.scale[0].abs().max(h.scale[1].abs()) / o.cell);
    let mut s = Summary {
        points: 0,
        min: [f64::INFINITY; 3],
        max: [f64::NEG_INFINITY; 3],
        classes: Vec::new(),
        gps: (f64::INFINITY, f64::NEG_INFINITY),
        problems: r.warnings().iter().chain(&r.notes).cloned().collect(),
        intensity: None,
        return_numbers: [0; 15],
        numbers_of_returns: [0; 15],
        scan_angle: None,
        density: None,
    };
    while r.read(&mut p, 1 << 16)? > 0 {
        s.points += p.len() as u64;
        for i in 0..p.len() {
            for (k, v) in [p.x[i], p.y[i], p.z[i]].into_iter().enumerate() {
                s.min[k] = s.min[k].min(v);
                s.max[k] = s.max[k].max(v);
            }
            counts[p.class[i] as usize] += 1;
            if let Some(c) = p.return_number.get(i).and_then(|&r| returns.get_mut((r as usize).wrapping_sub(1))) {
                *c += 1;
            }
            if let Some(c) = p.number_of_returns.get(i).and_then(|&r| numbers.get_mut((r as usize).wrapping_sub(1))) {
                *c += 1;
            }
            let t = p.gps_time[i];
            if t.is_finite() {
                s.gps = (s.gps.0.min(t), s.gps.1.max(t));
            }
            let v = p.intensity[i];
            intensity[v as usize] += 1;
            intensity_sum += v as u128;
            let a = p.scan_angle_deg[i];
            angle = (angle.0.min(a), angle.1.max(a));
            if let Some(o) = occupancy.as_mut() {
                o.add(p.x[i], p.y[i], tol);
            }
        }
    }
    if s.points > 0 {
        let rank = |q: f64| {
            // Nearest rank: the smallest value with at least q of the points at or below it.
            let want = ((q * s.points as f64).ceil() as u64).max(1);
            let mut seen = 0;
            for (v, &n) in intensity.iter().enumerate() {
                seen += n;
                if seen >= want {
                    return v as u16;
                }
            }
            u16::MAX
        };
        let min = intensity.iter().position(|&n| n > 0).unwrap_or(0) as u16;
        let max = intensity.iter().rposition(|&n| n > 0).unwrap_or(0) as u16;
        s.intensity = Some(IntensityStats {
            min,
            max,
            mean: intensity_sum as f64 / s.points as f64,
            p5_p50_p95: [rank(0.05), rank(0.5), rank(0.95)],
        });
        s.scan_angle = Some(angle);
        if let (Some((u, assumed)), Some(o)) = (unit, occupancy) {
            let h = r.header();
            let area = (h.max[0] - h.min[0]) * (h.max[1] - h.min[1]) * u * u;
            let cell = o.metres;
            s.density = Some(Density {
                over_bounds: (area > 0.0).then(|| s.points as f64 / area),
                over_cells: if o.cells > 0 { o.points as f64 / (o.cells as f64 * cell * cell) } else { 0.0 },
                cell,
                cells: o.cells,
                points: o.points,
                unit_assumed: assumed,
            });
        }
    }
    s.return_numbers = returns;
    s.numbers_of_returns = numbers;
    s.classes = counts.iter().enumerate().filter(|(_, &n)| n > 0).map(|(c, &n)| (c as u8, n)).collect();
    let h = r.header();
    if s.points > 0 {
        for k in 0..3 {
            let tol = h.scale[k];
            if s.min[k] < h.min[k] - tol || s.max[k] > h.max[k] + tol {
                s.problems.push(format!(
                    "{} of the points spans {}..{}, the header says {}..{}",
                    ["x", "y", "z"][k],
                    s.min[k],
                    s.max[k],
                    h.min[k],
                    h.max[k]
                ));
            }
        }
    }
    // The header's points by return against those read, when it gives them and every point
    // was read.
    let stated = &h.points_by_return;
    if stated.iter().any(|&n| n > 0) && s.points == h.header_point_count {
        let read = &returns[..stated.len()];
        if read != stated.as_slice() {
            let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
            s.problems.push(format!(
                "the header's points by return ({}) differ from the points' return numbers ({})",
                list(stated),
                list(read)
            ));
        }
    }
    if let Some(w) = r.waves.filter(|w| w.bad > 0) {
        s.problems.push(format!(
            "{} points (the first is point {}) have a waveform data packet outside the {} bytes of packet data in the file",
            w.bad, w.first, w.len
        ));
    }
    if h.crs.source == "none" {
        s.problems.push(
            "no CRS in the file: its coordinates are taken to be in the CRS of the axis they are used with".into(),
        );
    }
    Ok(s)
}
