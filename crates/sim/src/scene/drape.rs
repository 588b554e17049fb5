//! A measured height grid (an OpenCRG file's) draped on the road: the longest run of long
//! sections with no missing node, less its least-squares plane, mirrored at its edges to tile
//! a section, bilinear between the nodes.

/// A measured height grid (an OpenCRG file's, say) draped on the road from `s0` to `s1`:
/// height(s, t) = grid(s - s0, t - t0), bilinear between the nodes, the grid mirrored at its
/// edges to tile the section (mirroring keeps the tiled surface continuous). The grid is the
/// longest run of the source's long sections with no missing node, less its least-squares
/// plane (a measured track's grade and crossfall are not texture).
#[derive(Debug, Clone, PartialEq)]
pub struct Drape {
    /// Start s, m.
    pub s0: f64,
    /// End s, m.
    pub s1: f64,
    /// t of the grid's first long section, m.
    pub t0: f64,
    /// Node spacing along s, m.
    pub du: f64,
    /// Node spacing along t, m.
    pub dv: f64,
    /// Cross sections (rows).
    pub nu: usize,
    /// Long sections (columns).
    pub nv: usize,
    /// Heights, row-major `z[iu * nv + iv]`, m (plane removed).
    pub z: std::sync::Arc<Vec<f32>>,
    /// Largest |height|, m.
    pub max_abs: f64,
}

impl Drape {
    /// The heights of `crg` draped from `s0` to `s1` with its first complete long section at
    /// `t0`. Errors when the grid has fewer than two complete rows and columns, or a spacing
    /// that is not positive.
    pub fn from_crg(crg: &opencrg::Crg, s0: f64, s1: f64, t0: f64) -> Result<Drape, crate::Error> {
        let (nu, nv) = (crg.nu, crg.nv());
        if crg.z.len() < nu * nv {
            return Err(crate::Error::DrapeHeights { heights: crg.z.len(), nu, nv });
        }
        let v = crg.v_positions();
        let dv = if v.len() >= 2 { (v[v.len() - 1] - v[0]) / (v.len() - 1) as f64 } else { 0.0 };
        let du = crg.du();
        if !(du > 0.0 && dv > 0.0 && du.is_finite() && dv.is_finite()) {
            return Err(crate::Error::DrapeSpacing { du, dv });
        }
        // The longest run of columns without a missing node.
        let complete: Vec<bool> = (0..nv).map(|iv| (0..nu).all(|iu| crg.z[iu * nv + iv].is_finite())).collect();
        let (mut best, mut run_start) = ((0, 0), 0);
        for (iv, &ok) in complete.iter().chain([&false]).enumerate() {
            if !ok {
                if iv - run_start > best.1 - best.0 {
                    best = (run_start, iv);
                }
                run_start = iv + 1;
            }
        }
        let cols = best.1 - best.0;
        if nu < 2 || cols < 2 {
            return Err(crate::Error::DrapeTooSmall { rows: nu, cols });
        }
        // Least-squares plane z = a + b·u + c·v over the kept nodes (u, v from the centre).
        let (cu, cv) = ((nu - 1) as f64 / 2.0, (cols - 1) as f64 / 2.0);
        let node = |iu: usize, j: usize| f64::from(crg.z[iu * nv + best.0 + j]);
        let (mut m, mut sz, mut su, mut sv, mut suu, mut svv) = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        for iu in 0..nu {
            for j in 0..cols {
                let (u, w, z) = (iu as f64 - cu, j as f64 - cv, node(iu, j));
                m += 1.0;
                sz += z;
                su += u * z;
                sv += w * z;
                suu += u * u;
                svv += w * w;
            }
        }
        // Centred indices on a full rectangle: the normal equations are diagonal.
        let (a, b, c) = (sz / m, su / suu, sv / svv);
        let mut z = Vec::with_capacity(nu * cols);
        let mut max_abs = 0.0f64;
        for iu in 0..nu {
            for j in 0..cols {
                let h = node(iu, j) - a - b * (iu as f64 - cu) - c * (j as f64 - cv);
                max_abs = max_abs.max(h.abs());
                z.push(h as f32);
            }
        }
        Ok(Drape { s0, s1, t0, du, dv, nu, nv: cols, z: std::sync::Arc::new(z), max_abs })
    }

    /// Height at (s, t), m.
    pub fn at(&self, s: f64, t: f64) -> f64 {
        let (iu, fu) = mirrored((s - self.s0) / self.du, self.nu);
        let (iv, fv) = mirrored((t - self.t0) / self.dv, self.nv);
        let z = |a: usize, b: usize| f64::from(self.z.get(a * self.nv + b).copied().unwrap_or(0.0));
        let (iu1, iv1) = ((iu + 1).min(self.nu - 1), (iv + 1).min(self.nv - 1));
        let lo = z(iu, iv) + fv * (z(iu, iv1) - z(iu, iv));
        let hi = z(iu1, iv) + fv * (z(iu1, iv1) - z(iu1, iv));
        lo + fu * (hi - lo)
    }
}

/// A position in nodes on a grid of `n` nodes mirrored at both ends (period 2(n - 1)): the
/// node below it and the fraction to the next one.
fn mirrored(x: f64, n: usize) -> (usize, f64) {
    let period = 2.0 * (n.max(2) - 1) as f64;
    let mut x = if x.is_finite() { x.rem_euclid(period) } else { 0.0 };
    if x > period / 2.0 {
        x = period - x;
    }
    let i = (x.floor() as usize).min(n.max(2) - 2);
    (i, x - i as f64)
}
