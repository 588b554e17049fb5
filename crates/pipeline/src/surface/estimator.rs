//! The moments the least-squares plane fits take: weighted sums over a disc's points four at a time
//! ([`DiscSums`], [`Moments`]), points by coordinate ([`Columns`]), a slab's points by nearest node
//! with the discs and blocks of nodes gathered from them ([`Local`], [`DiscSize`]), and the
//! constants that decide when a block's or a node's plane is smooth.

use super::fits::{
    add_height_sums, add_position_sums, lane_sums, min_slope_var, plane_solve, residual_variance, spatial_weights,
    within, LeastSquares,
};
use wide::f32x4;

/// Weighted sums over a set of points, relative to a centre: the plane sums of
/// `add_plane_sums`, then Σwhh and the count (a weighted least-squares plane's normal
/// equations, its residual sum of squares and the points' effective number), heights relative
/// to `h0`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Moments {
    sums: [f64; 12],
    h0: f64,
}

/// Points by coordinate (heights as they are): a slab's, x from their row of nodes and y from
/// column 0, or a node's disc, relative to the node.
#[derive(Debug, Default)]
pub(super) struct Columns {
    x: Vec<f32>,
    y: Vec<f32>,
    pub(super) h: Vec<f32>,
}

impl Columns {
    /// The points of `w`, then three far outside any disc (see [`DiscSums::add`]).
    pub(super) fn fill(&mut self, w: &[[f32; 3]]) {
        for c in [&mut self.x, &mut self.y, &mut self.h] {
            c.clear();
            c.reserve(w.len() + 3);
        }
        self.x.extend(w.iter().map(|p| p[0]));
        self.y.extend(w.iter().map(|p| p[1]));
        self.h.extend(w.iter().map(|p| p[2]));
        self.pad();
    }

    pub(super) fn clear(&mut self) {
        self.x.clear();
        self.y.clear();
        self.h.clear();
    }

    pub(super) fn len(&self) -> usize {
        self.x.len()
    }

    pub(super) fn push(&mut self, [x, y, h]: [f32; 3]) {
        self.x.push(x);
        self.y.push(y);
        self.h.push(h);
    }

    /// The points as `[x, y, h]`.
    pub(super) fn points(&self) -> impl Iterator<Item = [f32; 3]> + '_ {
        self.x.iter().zip(&self.y).zip(&self.h).map(|((&x, &y), &h)| [x, y, h])
    }

    /// The moments of the points within `radius` of the centre, with the spatial weights of
    /// `robust_plane`.
    pub(super) fn moments(&mut self, radius: f64) -> Moments {
        let n = self.len();
        self.pad();
        let mut sums = DiscSums::new(radius);
        sums.add([&self.x, &self.y, &self.h], 0..n, 0.0, 0.0);
        for c in [&mut self.x, &mut self.y, &mut self.h] {
            c.truncate(n);
        }
        sums.moments()
    }

    /// Three points far outside any disc after the others (see [`DiscSums::add`]).
    fn pad(&mut self) {
        for _ in 0..3 {
            self.x.push(1e3);
            self.y.push(1e3);
            self.h.push(0.0);
        }
    }
}

/// The sums of [`Moments`] as they run, four points at a time, over runs of points given by
/// coordinate.
struct DiscSums {
    acc: [f32x4; 12],
    inv_r2: f32x4,
    /// The height the sums' heights are relative to: the first point's (so that single
    /// precision keeps micrometres).
    h0: Option<f32>,
}

impl DiscSums {
    /// No points yet, for the disc of `radius` (with the spatial weights of `robust_plane`).
    fn new(radius: f64) -> DiscSums {
        DiscSums { acc: [f32x4::ZERO; 12], inv_r2: f32x4::splat((1.0 / (radius * radius)) as f32), h0: None }
    }

    /// Adds points `run` of the columns `x`, `y`, `h`, offset by (`dx`, `dy`) from the disc's
    /// centre; the columns hold three more values after the run (any finite ones: those
    /// lanes are masked out), so that every load takes four.
    #[inline(always)]
    fn add(&mut self, [x, y, h]: [&[f32]; 3], run: std::ops::Range<usize>, dx: f32, dy: f32) {
        if run.is_empty() {
            return;
        }
        let h0 = f32x4::splat(*self.h0.get_or_insert(h[run.start]));
        let (dx, dy, one) = (f32x4::splat(dx), f32x4::splat(dy), f32x4::ONE);
        let lane = f32x4::new([0.0, 1.0, 2.0, 3.0]);
        // Whole fours from the run's start (the padding makes them exist).
        let span = run.start..run.start + run.len().div_ceil(4) * 4;
        let four = |c: &[f32]| f32x4::new([c[0], c[1], c[2], c[3]]);
        let acc = &mut self.acc;
        let mut left = run.len() as f32;
        for ((x, y), h) in
            x[span.clone()].chunks_exact(4).zip(y[span.clone()].chunks_exact(4)).zip(h[span].chunks_exact(4))
        {
            let valid = lane.simd_lt(f32x4::splat(left));
            let (px, py, ph) = (four(x) + dx, four(y) + dy, four(h) - h0);
            let (w, inside) = spatial_weights(px, py, self.inv_r2);
            let w = w & valid;
            add_position_sums(&mut acc[..6], w, px, py);
            add_height_sums(&mut acc[6..10], w, px, py, ph);
            acc[10] += w * ph * ph;
            acc[11] += inside & valid & one;
            left -= 4.0;
        }
    }

    fn moments(&self) -> Moments {
        Moments { sums: lane_sums(&self.acc), h0: self.h0.unwrap_or(0.0) as f64 }
    }
}

impl Moments {
    /// Points in the disc.
    pub(super) fn count(&self) -> f64 {
        self.sums[11]
    }

    /// The moments of the points of `w` (relative to the centre) within `radius`, with the
    /// spatial weights of [`robust_plane`].
    #[cfg(test)]
    fn of_disc(w: &[[f32; 3]], radius: f64, cols: &mut Columns) -> Moments {
        cols.clear();
        w.iter().for_each(|&p| cols.push(p));
        cols.moments(radius)
    }

    /// The weighted least-squares plane `[h, slope u, slope v]` (at the centre, per metre) of
    /// a disc of `radius` when it is smooth by the robust fits' measures for biweight constant
    /// `scale`: at least [`LS_MIN_POINTS`], a residual scale under [`SMOOTH_SIGMA`] of it
    /// (weighted as in `robust_plane`), and a plane rising by less than it across the
    /// radius (a plane leaning across a step can have residuals as small as the noise); slopes
    /// fitted along the directions the points spread in by 0.15 of the radius (as the robust
    /// fits', [`min_slope_var`]). `None` otherwise (a step, an outlier, too few points): left to
    /// a block's robust fit, or a node's median of the nearest points.
    pub(super) fn smooth_plane(&self, radius: f64, scale: f64) -> Option<[f64; 3]> {
        self.least_squares(radius, scale).filter(|ls| ls.within(SMOOTH_SIGMA * scale)).map(|ls| ls.plane)
    }

    /// The weighted least-squares plane of a disc of `radius` with at least [`LS_MIN_POINTS`]
    /// (see [`Moments::smooth_plane`]), its residual variance and whether it rises by less than
    /// the biweight constant `scale` across the radius.
    pub(super) fn least_squares(&self, radius: f64, scale: f64) -> Option<LeastSquares> {
        let [sw, sx, sy, sxx, sxy, syy, sh, sxh, syh, sw2, shh, n] = self.sums;
        if n < LS_MIN_POINTS || sw <= 0.0 {
            return None;
        }
        let m = [[sw, sx, sy], [sx, sxx, sxy], [sy, sxy, syy]];
        let p = plane_solve(&m, &[sh, sxh, syh], min_slope_var(radius))?;
        // Weighted residual sum of squares of the least-squares solution (also of one with a
        // slope along one direction only, or none: its residuals are orthogonal to what it
        // fitted).
        let swr2 = (shh - p[0] * sh - p[1] * sxh - p[2] * syh).max(0.0);
        let var = residual_variance(sw, sw2, swr2);
        // Level: rising by less than `scale` across the radius (squared: no hypot call).
        let level = (p[1] * p[1] + p[2] * p[2]) * (radius * radius) < scale * scale;
        Some(LeastSquares { plane: [p[0] + self.h0, p[1], p[2]], var, level })
    }
}

/// Nodes per side of the square blocks that share one plane fit where the surface is smooth.
pub(super) const BLOCK: usize = 3;

/// The nodes of a block from its centre, in nodes.
pub(super) const BLOCK_OFFSETS: [f64; BLOCK] = {
    let mut d = [0.0; BLOCK];
    let mut j = 0;
    while j < BLOCK {
        d[j] = j as f64 - (BLOCK / 2) as f64;
        j += 1;
    }
    d
};

/// Rows of nodes a gridding thread takes at a time (whole block rows, from a multiple of it).
pub(super) const ROW_RUN: usize = 8 * BLOCK;

/// Fewest points of a disc for its least-squares plane.
pub(super) const LS_MIN_POINTS: f64 = 8.0;

/// Residual scale of a smooth fit, in biweight constants.
pub(super) const SMOOTH_SIGMA: f64 = 0.4;

/// Residual scale of a block's least-squares plane, in biweight constants, under which its
/// robust plane is tried when the least-squares one is not smooth (and is level). Of the
/// blocks under it, 0.9 % had a smooth robust plane on the 20 M point virtual survey and 50 %
/// on the sparser 4.6 M point one; of the others, 0.2 % and 7 %.
pub(super) const NEAR_SMOOTH_SIGMA: f64 = 0.6;

/// A slab's points by nearest node (CSR over the local rows), by coordinate: x from the point's
/// row of nodes, y from column 0, height.
pub(super) struct Local<'a> {
    /// The points by coordinate, and three more (see [`DiscSums::add`]).
    pub(super) cols: &'a Columns,
    pub(super) start: &'a [u32],
    pub(super) nv: usize,
    pub(super) n_local: usize,
    pub(super) cell: f64,
}

impl Local<'_> {
    /// Into `out`: for every block of the block row centred on local row `cu`, the moments of
    /// the points within `radius` of its centre, relative to it, with the spatial weights of
    /// `robust_plane`.
    pub(super) fn block_moments(&self, cu: isize, disc: DiscSize, out: &mut Vec<Moments>) {
        out.clear();
        for b in 0..self.nv.div_ceil(BLOCK) {
            out.push(self.disc_moments(cu, (b * BLOCK + BLOCK / 2) as isize, disc));
        }
    }

    /// The moments of the points within `radius` of local node (`cu`, `cv`), relative to it,
    /// with the spatial weights of `robust_plane`: the sums run over the nodes' points in
    /// place, row by row.
    pub(super) fn disc_moments(&self, cu: isize, cv: isize, disc: DiscSize) -> Moments {
        // The nodes holding the disc's points, together in each row.
        let DiscSize { radius, half } = disc;
        let rows = (cu - half).max(0) as usize..(cu + half + 1).clamp(0, self.n_local as isize) as usize;
        let (c0, c1) = ((cv - half).max(0) as usize, ((cv + half + 1).max(0) as usize).min(self.nv));
        let y0 = (cv as f64 * self.cell) as f32;
        let mut sums = DiscSums::new(radius);
        let cols = [&self.cols.x[..], &self.cols.y[..], &self.cols.h[..]];
        for ju in rows.filter(|_| c0 < c1) {
            let x0 = ((ju as f64 - cu as f64) * self.cell) as f32;
            let row = ju * self.nv;
            sums.add(cols, self.start[row + c0] as usize..self.start[row + c1] as usize, x0, -y0);
        }
        sums.moments()
    }

    /// [`Local::gather`] into columns, of the nodes that can hold points of the disc (see
    /// [`disc_half`]).
    pub(super) fn gather_columns(&self, lu: isize, iv: isize, disc: DiscSize, out: &mut Columns) {
        out.clear();
        self.for_each_within(lu, iv, disc.half, disc.radius as f32, |p| out.push(p));
    }

    /// Into `out`: the points within `radius` of local node (`lu`, `iv`), which may lie outside
    /// the grid, relative to that node, of the nodes within `half` nodes of it (rows and
    /// columns), by row and node.
    pub(super) fn gather(&self, lu: isize, iv: isize, half: isize, radius: f32, out: &mut Vec<[f32; 3]>) {
        out.clear();
        self.for_each_within(lu, iv, half, radius, |p| out.push(p));
    }

    /// Calls `f` with the points of [`Local::gather`], in its order.
    #[inline(always)]
    fn for_each_within(&self, lu: isize, iv: isize, half: isize, radius: f32, mut f: impl FnMut([f32; 3])) {
        let (c0, c1) = ((iv - half).max(0), (iv + half).min(self.nv as isize - 1));
        if c1 < c0 {
            return;
        }
        let (c0, c1) = (c0 as usize, c1 as usize);
        let y0 = (iv as f64 * self.cell) as f32;
        for du in -half..=half {
            let ju = lu + du;
            if ju < 0 || ju >= self.n_local as isize {
                continue;
            }
            let ju = ju as usize;
            let x0 = (du as f64 * self.cell) as f32;
            let run = self.start[ju * self.nv + c0] as usize..self.start[ju * self.nv + c1 + 1] as usize;
            let (x, y, h) = (&self.cols.x[run.clone()], &self.cols.y[run.clone()], &self.cols.h[run]);
            for ((x, y), h) in x.iter().zip(y).zip(h) {
                let p = [x + x0, y - y0, *h];
                if within(&p, radius) {
                    f(p);
                }
            }
        }
    }
}

/// A disc's radius and the nodes that can hold its points ([`disc_half`]), worked out once.
#[derive(Debug, Clone, Copy)]
pub(super) struct DiscSize {
    radius: f64,
    half: isize,
}

impl DiscSize {
    pub(super) fn new(radius: f64, cell: f64) -> DiscSize {
        DiscSize { radius, half: disc_half(radius, cell) }
    }
}

/// The nodes within this many rows and columns of a node hold every point within `radius` of
/// it: a point lies at its nearest node, and these are the nodes whose cells reach into the disc
/// (where `radius` is a whole number of cells and a half, a point exactly on the rim, a tie,
/// rounds to the next node: its spatial weight is zero, and single precision leaves it either
/// side of the rim anyway).
pub(super) fn disc_half(radius: f64, cell: f64) -> isize {
    (radius / cell + 0.5 - 1e-9).ceil() as isize - 1
}

#[cfg(test)]
mod tests {
    use super::super::fits::Disc;
    use super::*;

    #[test]
    fn least_squares_planes_only_where_the_noise_explains_the_residuals() {
        // A tilted plane (3 % across, 1 % along) with ±1.5 mm of noise, 10 x 10 points 7 mm apart.
        let noise = |i: usize| ((i * 7919) % 13) as f32 / 12.0 * 0.003 - 0.0015;
        let pts: Vec<[f32; 3]> = (0..100)
            .map(|i| {
                let (x, y) = ((i % 10) as f32 * 0.007 - 0.0315, (i / 10) as f32 * 0.007 - 0.0315);
                [x, y, 0.1 + 0.01 * x + 0.03 * y + noise(i)]
            })
            .collect();
        let r = 0.035;
        let ls = Moments::of_disc(&pts, r, &mut Columns::default()).smooth_plane(r, 0.008).expect("smooth");
        let mut disc = Disc::default();
        disc.pack(&pts, 0.1);
        assert_eq!(disc.weigh(r as f32), pts.iter().filter(|p| within(p, r as f32)).count());
        let robust = disc.fit(r as f32, 0.008, 0.1).expect("fit");
        assert!((ls[0] - robust.h).abs() < 2e-4, "least squares {} vs robust {}", ls[0], robust.h);
        assert!((ls[0] - 0.1).abs() < 1e-3 && (ls[2] - 0.03).abs() < 0.01, "{ls:?}");
        // One point 2 cm off, a 1 cm step across the disc, or too few points: not smooth.
        let mut outlier = pts.clone();
        outlier[44][2] += 0.02;
        assert!(Moments::of_disc(&outlier, r, &mut Columns::default()).smooth_plane(r, 0.008).is_none());
        let step: Vec<[f32; 3]> =
            pts.iter().map(|p| [p[0], p[1], p[2] + if p[1] > 0.0 { 0.01 } else { 0.0 }]).collect();
        assert!(Moments::of_disc(&step, r, &mut Columns::default()).smooth_plane(r, 0.008).is_none());
        assert!(Moments::of_disc(&pts[..6], r, &mut Columns::default()).smooth_plane(r, 0.008).is_none());
        // Four at a time in single precision, heights from the first point's: the sums of the
        // points within the disc in double precision, and the same plane 100 m up.
        let mut cols = Columns::default();
        for n in [0, 1, 5, 37] {
            let m = Moments::of_disc(&pts[..n], r, &mut cols);
            let h0 = pts.first().map_or(0.0, |p| p[2] as f64);
            let mut want = [0.0f64; 12];
            for p in &pts[..n] {
                let (x, y, h) = (p[0] as f64, p[1] as f64, p[2] as f64 - h0);
                let d2 = (x * x + y * y) / (r * r);
                if d2 < 1.0 {
                    let w = (1.0 - d2) * (1.0 - d2);
                    let terms = [
                        w,
                        w * x,
                        w * y,
                        w * x * x,
                        w * x * y,
                        w * y * y,
                        w * h,
                        w * x * h,
                        w * y * h,
                        w * w,
                        w * h * h,
                        1.0,
                    ];
                    want.iter_mut().zip(terms).for_each(|(s, t)| *s += t);
                }
            }
            for (k, (got, want)) in m.sums.iter().zip(want).enumerate() {
                assert!((got - want).abs() <= 1e-5 * want.abs().max(1e-3), "{n} points, sum {k}: {got} vs {want}");
            }
        }
        let high: Vec<[f32; 3]> = pts.iter().map(|p| [p[0], p[1], p[2] + 100.0]).collect();
        let up = Moments::of_disc(&high, r, &mut cols).smooth_plane(r, 0.008).expect("smooth");
        assert!((up[0] - 100.0 - ls[0]).abs() < 2e-5 && (up[2] - ls[2]).abs() < 1e-4, "{up:?} vs {ls:?}");
    }
}
