//! Cross sections of a road from its points: a grid over (s, t) of 0.5 m x 2 cm cells near
//! the reference line holding, per cell, the point count, the intensity sum and the sums of
//! heights above the reference line's elevation and of their squares (h, in 0.1 mm). Sums are
//! integers, so any point order and thread count give the same grid. The squares give each
//! cell's spread: a cell where a branch overhangs the road or a multipath echo lies below it
//! holds points metres apart, and the surveyed road leaves it out. The surveyed road (elevation,
//! crossfall, curbs, markings) is read from it (`road/`).

use voxel::part::{PartError, Reader, Writer};

/// Cell sizes and extent of the cross sections.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionOptions {
    /// Along s, m.
    pub ds: f64,
    /// Across, m.
    pub dt: f64,
    /// Cells cover |t| up to this, m.
    pub half_width: f64,
}

impl Default for SectionOptions {
    fn default() -> Self {
        SectionOptions { ds: 0.5, dt: 0.02, half_width: 10.0 }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Cell {
    n: u32,
    intensity: u64,
    /// Σ h in 0.1 mm.
    h: i64,
    /// Σ h² in (0.1 mm)², each term at most [`MAX_SQ`] (saturating).
    hh: u64,
}

/// Largest term of Σ h² ((0.1 mm)²: a point 100 m off the reference line's elevation); a point
/// farther off counts as this far, which keeps the sum of any cell within u64.
const MAX_SQ: u64 = 1_000_000 * 1_000_000;

/// The grid.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionGrid {
    /// s of the first row's start, m.
    pub s0: f64,
    /// Row length, m.
    pub ds: f64,
    /// Column width, m.
    pub dt: f64,
    /// Rows (along s) and columns (across, from t = -half_width).
    pub rows: usize,
    /// Columns.
    pub cols: usize,
    cells: Vec<Cell>,
    /// The whole grid's s of row 0, its rows, and the first of them held here (a work unit
    /// holds only its rows, numbered as in the whole grid).
    origin: f64,
    total: usize,
    first: usize,
}

impl SectionGrid {
    /// Cells over s in `s_range`.
    pub fn new(s_range: (f64, f64), opts: &SectionOptions) -> Result<SectionGrid, crate::Error> {
        SectionGrid::new_part(s_range, opts, None)
    }

    /// The rows of the grid over `s_range` that s in `part.0 <= s < part.1` reaches (all of
    /// them without `part`): a work unit's share, whose [`SectionGrid::write_part`] merges
    /// into the whole grid.
    pub fn new_part(
        s_range: (f64, f64),
        opts: &SectionOptions,
        part: Option<(f64, f64)>,
    ) -> Result<SectionGrid, crate::Error> {
        let ok = |v: f64| v.is_finite() && v > 0.0;
        if !(ok(opts.ds) && ok(opts.dt) && ok(opts.half_width)) {
            return Err(crate::Error::BadSections { ds: opts.ds, dt: opts.dt, half_width: opts.half_width });
        }
        let rows = (((s_range.1 - s_range.0) / opts.ds).ceil() as usize).max(1);
        let cols = ((2.0 * opts.half_width / opts.dt).round() as usize).max(1);
        if rows.saturating_mul(cols) > 400_000_000 {
            return Err(crate::Error::SectionsTooLarge { rows, cols });
        }
        let total = rows;
        let (first, end) = voxel::part::cells_of(s_range, opts.ds, total, part);
        let rows = end - first;
        Ok(SectionGrid {
            s0: s_range.0 + first as f64 * opts.ds,
            ds: opts.ds,
            dt: opts.dt,
            rows,
            cols,
            cells: vec![Cell::default(); rows * cols],
            origin: s_range.0,
            total,
            first,
        })
    }

    /// The whole grid's rows (a part, or a grid held only where the points reach, holds fewer:
    /// [`SectionGrid::rows`]).
    pub fn total_rows(&self) -> usize {
        self.total
    }

    /// t of column `c`'s centre, m.
    pub fn t_of(&self, c: usize) -> f64 {
        (c as f64 + 0.5) * self.dt - 0.5 * self.cols as f64 * self.dt
    }

    /// s of row `r`'s centre, m.
    pub fn s_of(&self, r: usize) -> f64 {
        self.s0 + (r as f64 + 0.5) * self.ds
    }

    /// Adds points in road coordinates (h above the reference line's elevation); points
    /// outside the grid are skipped.
    pub fn add(&mut self, s: &[f64], t: &[f64], h: &[f64], intensity: &[u16]) {
        let half = 0.5 * self.cols as f64 * self.dt;
        for i in 0..s.len() {
            // The whole grid's row, then this one's.
            let (r, c) = ((s[i] - self.origin) / self.ds, (t[i] + half) / self.dt);
            if !(r >= 0.0 && c >= 0.0 && h[i].is_finite()) {
                continue;
            }
            let (r, c) = (r as usize, c as usize);
            if r < self.first || r - self.first >= self.rows || c >= self.cols {
                continue;
            }
            let r = r - self.first;
            let cell = &mut self.cells[r * self.cols + c];
            cell.n += 1;
            cell.intensity += u64::from(intensity[i]);
            let hq = (h[i] * 1e4).round() as i64;
            cell.h += hq;
            cell.hh = cell.hh.saturating_add(hq.unsigned_abs().saturating_mul(hq.unsigned_abs()).min(MAX_SQ));
        }
    }

    /// Appends the grid (geometry, then the cells of the rows between the first and the last
    /// that hold any point) to `w`, for [`SectionGrid::merge_part`].
    pub fn write_part(&self, w: &mut Writer) {
        [self.origin, self.ds, self.dt].iter().for_each(|&v| w.f64(v));
        w.u64(self.total as u64);
        w.u64(self.cols as u64);
        let used = |r: &usize| self.cells[r * self.cols..(r + 1) * self.cols].iter().any(|c| c.n > 0);
        let first = (0..self.rows).find(used).unwrap_or(self.rows);
        let end = (first..self.rows).rev().find(used).map_or(first, |r| r + 1);
        w.u64((self.first + first) as u64);
        w.u64((self.first + end) as u64);
        for c in &self.cells[first * self.cols..end * self.cols] {
            w.u32(c.n);
            w.u64(c.intensity);
            w.i64(c.h);
            w.u64(c.hh);
        }
    }

    /// Adds the cells of a part written by [`SectionGrid::write_part`] of a grid of the same
    /// geometry (integer sums: any split of the points adds up to the grid of all of them).
    pub fn merge_part(&mut self, r: &mut Reader) -> Result<(), PartError> {
        let geo = [r.f64()?, r.f64()?, r.f64()?];
        let (rows, cols) = (r.usize()?, r.usize()?);
        if geo.map(f64::to_bits) != [self.origin, self.ds, self.dt].map(f64::to_bits)
            || (rows, cols) != (self.total, self.cols)
        {
            return Err(PartError::OtherGeometry { what: "cross sections".into() });
        }
        let (first, end) = (r.usize()?, r.usize()?);
        let held = self.first <= first && first <= end && end <= self.first + self.rows;
        r.expect(held, "rows outside the cross sections")?;
        let (first, end) = (first - self.first, end - self.first);
        for cell in &mut self.cells[first * self.cols..end * self.cols] {
            cell.n += r.u32()?;
            cell.intensity += r.u64()?;
            cell.h += r.i64()?;
            cell.hh = cell.hh.saturating_add(r.u64()?);
        }
        Ok(())
    }

    /// Points in a cell.
    pub fn count(&self, r: usize, c: usize) -> u32 {
        self.cells[r * self.cols + c].n
    }

    /// Mean height above the reference line's elevation, m (None when empty).
    pub fn mean_h(&self, r: usize, c: usize) -> Option<f64> {
        let cell = &self.cells[r * self.cols + c];
        (cell.n > 0).then(|| cell.h as f64 * 1e-4 / f64::from(cell.n))
    }

    /// Standard deviation of the heights in a cell, m (None when empty): millimetres on a
    /// road surface, metres where a branch overhangs it or an echo lies below it.
    pub fn spread_h(&self, r: usize, c: usize) -> Option<f64> {
        let cell = &self.cells[r * self.cols + c];
        (cell.n > 0).then(|| {
            let n = f64::from(cell.n);
            let mean = cell.h as f64 / n;
            // (0.1 mm)² -> m².
            ((cell.hh as f64 / n - mean * mean).max(0.0)).sqrt() * 1e-4
        })
    }

    /// Mean intensity (None when empty).
    pub fn mean_intensity(&self, r: usize, c: usize) -> Option<f64> {
        let cell = &self.cells[r * self.cols + c];
        (cell.n > 0).then(|| cell.intensity as f64 / f64::from(cell.n))
    }
}
