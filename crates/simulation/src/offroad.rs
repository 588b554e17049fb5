//! A plan grid that proves points off the road without the road's inverse.
//!
//! Every answer [`crate::RoadSurface`] gives on the road is a foot point (s, t) with s on the
//! road and |t| within its reach, the point within 1e-4 m of `P(s) + t L(s)` (the inverse's gap
//! tolerance; `|L| <= 1`), so an on-road point lies within `reach + 1e-4` m of the reference
//! line. The line is sampled at most [`SPACING`] m apart along s (each record on its own, its
//! end included, so record joints that do not meet are covered), and a line point is then
//! within half a spacing of a sample (the records are parameterised by arc length). A grid cell
//! farther than `reach + 1e-4 + spacing / 2` (plus a rounding margin) from every sample holds
//! no on-road point: a point in it is off the road, and the inverse's search (the step's
//! dearest question for an actor that left the road) is not asked. The grid is bounded in
//! cells and in build work; a road it cannot bound (non-finite records) gets none.

use opendrive::RoadEval;

/// Largest spacing of the reference line's samples, m.
pub const SPACING: f64 = 0.5;
/// Smallest grid cell, m.
const CELL: f64 = 1.0;
/// Most grid cells.
const MAX_CELLS: usize = 1 << 20;
/// Most samples of the reference line.
const MAX_SAMPLES: usize = 1 << 20;
/// Most cell tests while building.
const MAX_WORK: f64 = (1u64 << 27) as f64;
/// The inverse's largest accepted residual (`opendrive` eval, `GAP`), m.
const GAP: f64 = 1e-4;

/// Cells that may hold an on-road point.
#[derive(Clone)]
pub(crate) struct OffRoadGrid {
    origin: [f64; 2],
    cell: f64,
    dims: [usize; 2],
    maybe: Vec<bool>,
}

impl std::fmt::Debug for OffRoadGrid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OffRoadGrid")
            .field("origin", &self.origin)
            .field("cell", &self.cell)
            .field("dims", &self.dims)
            .finish()
    }
}

impl OffRoadGrid {
    /// The grid of `road` for points within `reach` of its reference line (the cells farther
    /// off hold no answer of a search within `reach`); `None` where the road cannot be bounded
    /// (non-finite or absurd records).
    pub(crate) fn new(road: &RoadEval, reach: f64) -> Option<OffRoadGrid> {
        let len = road.length();
        if !(len.is_finite() && len >= 0.0 && reach.is_finite() && reach > 0.0) {
            return None;
        }
        let mut bounds = vec![0.0, len];
        for g in &road.road().plan_view.geometries {
            if !g.s.is_finite() {
                return None;
            }
            if g.s > 0.0 && g.s < len {
                bounds.push(g.s);
            }
        }
        bounds.sort_by(f64::total_cmp);
        bounds.dedup();
        let spacing = SPACING.max(len / MAX_SAMPLES as f64);
        let mut samples: Vec<[f64; 2]> = Vec::new();
        for w in bounds.windows(2) {
            let (a, b) = (w[0], w[1]);
            let n = ((b - a) / spacing).ceil().max(1.0) as usize;
            let curve = road.curve_at(a);
            let at = |s: f64| match curve {
                Some(c) => {
                    let p = c.pose(s - c.s0);
                    [p.x, p.y]
                }
                None => [0.0, 0.0],
            };
            let first = samples.len();
            for k in 0..=n {
                samples.push(at(a + (b - a) * k as f64 / n as f64));
            }
            // The spacing bound needs a curve of unit speed: check the chords.
            let h = (b - a) / n as f64;
            let chords_ok =
                samples[first..].windows(2).all(|p| (p[1][0] - p[0][0]).hypot(p[1][1] - p[0][1]) <= 1.01 * h + 1e-9);
            if !chords_ok {
                return None;
            }
        }
        let p = road.pose(len);
        samples.push([p.x, p.y]);
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for s in &samples {
            if !(s[0].is_finite() && s[1].is_finite()) {
                return None;
            }
            for k in 0..2 {
                lo[k] = lo[k].min(s[k]);
                hi[k] = hi[k].max(s[k]);
            }
        }
        let size = lo.iter().chain(&hi).fold(0.0f64, |m, v| m.max(v.abs()));
        // Within this of some sample: maybe on the road.
        let radius = reach * (1.0 + 1e-9) + GAP + 0.5 * 1.01 * spacing + 1e-6 + 1e-12 * size;
        let mut cell = CELL;
        let dims = loop {
            let d = [
                ((hi[0] - lo[0] + 2.0 * (radius + cell)) / cell).ceil() as usize,
                ((hi[1] - lo[1] + 2.0 * (radius + cell)) / cell).ceil() as usize,
            ];
            let per_sample = (2.0 * radius / cell + 2.0).powi(2);
            if d[0].saturating_mul(d[1]) <= MAX_CELLS && per_sample * samples.len() as f64 <= MAX_WORK {
                break d;
            }
            cell *= 2.0;
            if cell > 1e6 {
                return None;
            }
        };
        let origin = [lo[0] - radius - cell, lo[1] - radius - cell];
        let mut maybe = vec![false; dims[0] * dims[1]];
        let index = |v: f64, k: usize| (((v - origin[k]) / cell).floor().max(0.0) as usize).min(dims[k] - 1);
        for s in &samples {
            let (i0, i1) = (index(s[0] - radius, 0), index(s[0] + radius, 0));
            let (j0, j1) = (index(s[1] - radius, 1), index(s[1] + radius, 1));
            for j in j0..=j1 {
                let (y0, y1) = (origin[1] + j as f64 * cell, origin[1] + (j + 1) as f64 * cell);
                let dy = (y0 - s[1]).max(s[1] - y1).max(0.0);
                for i in i0..=i1 {
                    let (x0, x1) = (origin[0] + i as f64 * cell, origin[0] + (i + 1) as f64 * cell);
                    let dx = (x0 - s[0]).max(s[0] - x1).max(0.0);
                    if dx * dx + dy * dy <= radius * radius {
                        maybe[j * dims[0] + i] = true;
                    }
                }
            }
        }
        Some(OffRoadGrid { origin, cell, dims, maybe })
    }

    /// Whether (x, y) is off the road beyond doubt (false: it may be on the road, or is not
    /// finite).
    pub(crate) fn off(&self, x: f64, y: f64) -> bool {
        let (u, v) = ((x - self.origin[0]) / self.cell, (y - self.origin[1]) / self.cell);
        if !(u.is_finite() && v.is_finite()) {
            return false;
        }
        if u < 0.0 || v < 0.0 || u >= self.dims[0] as f64 || v >= self.dims[1] as f64 {
            return true;
        }
        // Non-negative: the conversion truncates as floor does.
        let (i, j) = ((u as usize).min(self.dims[0] - 1), (v as usize).min(self.dims[1] - 1));
        !self.maybe[j * self.dims[0] + i]
    }
}
