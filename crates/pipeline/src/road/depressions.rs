//! Road-surface features in a CRG: depressions against its 2 m x 2 m local mean joined into regions
//! and classified as potholes or manholes, and how features and CRGs are put on a road (its
//! `<object>`s and its `<surface><CRG>` links).

use super::SurfaceFeature;
use opendrive::{Extras, Object, Road, RoadCrg};

/// Nodes this far below the local surface are in a depression, m.
const DEPTH: f64 = 0.005;

/// Puts road-surface features (sorted here by s, then t) on `road` as `<object>`s and `links`
/// as its `<surface><CRG>`s: what `survey_road` does with its CRGs, for callers that search
/// CRG tiles one at a time.
pub fn attach_surface(road: &mut Road, features: &mut [SurfaceFeature], links: Vec<RoadCrg>) {
    features.sort_by(|a, b| a.s.total_cmp(&b.s).then(a.t.total_cmp(&b.t)));
    road.objects.objects = features
        .iter()
        .enumerate()
        .map(|(i, f)| Object {
            id: format!("{}-{}", f.kind, i + 1),
            s: f.s,
            t: f.t,
            z_offset: -f.depth,
            kind: Some("roadSurface".into()),
            subtype: Some(f.kind.into()),
            name: Some(f.kind.into()),
            hdg: Some(0.0),
            pitch: Some(0.0),
            roll: Some(0.0),
            // A manhole is round: its radius; a pothole its extent.
            radius: (f.kind == "manhole").then_some(0.25 * (f.length + f.width)),
            length: (f.kind != "manhole").then_some(f.length),
            width: (f.kind != "manhole").then_some(f.width),
            height: Some(f.depth.abs()),
            orientation: Some("none".into()),
            ..Default::default()
        })
        .collect();
    road.surface.crgs = links;
}

/// The `<surface><CRG>` link of the CRG `crg` at `file` (relative to the OpenDRIVE file): its u
/// range as the s range, mode attached for residual heights (roadscan's comment says so),
/// genuine for absolute ones.
pub fn crg_link(file: &str, crg: &opencrg::Crg) -> RoadCrg {
    let residual = crg.comment.iter().any(|l| l.contains("z residual"));
    RoadCrg {
        file: file.to_string(),
        s_start: crg.u_first(),
        s_end: crg.u_last(),
        orientation: "same".into(),
        mode: if residual { "attached" } else { "genuine" }.into(),
        purpose: Some("elevation".into()),
        s_offset: None,
        t_offset: Some(0.0),
        z_offset: Some(0.0),
        z_scale: Some(1.0),
        h_offset: None,
        extras: Extras::default(),
    }
}

/// Rows of the CRG a band of `find_depressions` takes as its own.
const BAND_ROWS: usize = 1000;

/// Depressions in a CRG: nodes at least 5 mm below the mean of the 2 m x 2 m around them
/// (without the nodes more than 5 mm off it), joined 4-connected; compact regions of 0.05 m²
/// to 3 m across, inside the grid. A round, shallow (under 2 cm) and flat one is a manhole,
/// else a pothole.
///
/// The grid is searched in bands of rows along u, so that the memory it takes besides the CRG is
/// a band's residuals (a few MB), not the grid's; the features are the same, in the same order,
/// as a search of the whole grid at once.
pub fn find_depressions(crg: &opencrg::Crg) -> Vec<SurfaceFeature> {
    depressions_in_bands(crg, BAND_ROWS)
}

/// `find_depressions` in bands of `band` rows (at least one).
///
/// Both local means slide along u once over the whole grid, in the same order of additions and
/// subtractions as a search of the whole grid at once, so every residual has the same bits; the
/// first pass runs `hu` rows ahead of the second, whose flags it keeps in a ring of `2 hu + 2`
/// rows. A band [a, b) grows regions over the residuals of rows a - 1 ..b + margin and keeps
/// those whose first node (in row-major order) lies in it, so each region is found once: a
/// region reaching row a - 1 began in an earlier band, and one that reaches the band's last row
/// (not the grid's) spans more than `margin` rows, over 3 m, which the whole search rejects.
fn depressions_in_bands(crg: &opencrg::Crg, band: usize) -> Vec<SurfaceFeature> {
    let (nu, nv) = (crg.nu, crg.nv());
    if nu < 3 || nv < 3 {
        return Vec::new();
    }
    let band = band.max(1);
    let (du, vs) = (crg.du(), crg.v_positions());
    let dv = (vs[nv - 1] - vs[0]) / (nv - 1) as f64;
    let (hu, hv) = ((1.0 / du).round() as usize, (1.0 / dv).round() as usize);
    // A region reaching `margin` rows past its first row is longer than 3 m.
    let margin = ((3.0 / du).ceil() as usize).saturating_add(1);
    let min_nodes = (0.05 / (du * dv)).ceil() as usize;
    let mut stream = Residuals::new(crg, hu, hv);
    // The second pass's residuals of rows lo..lo + resid.len() / nv (at most a band, its margin
    // and the row before it).
    let mut resid = Vec::<f32>::with_capacity(band.saturating_add(margin).saturating_add(1).min(nu) * nv);
    let mut lo = 0;
    let mut seen = Bits::new(0);
    let (mut sunk, mut raised) = (Vec::new(), Vec::new());
    let mut a = 0;
    while a < nu {
        let b = a.saturating_add(band).min(nu);
        let end = b.saturating_add(margin).min(nu);
        let top = a.saturating_sub(1);
        if top > lo {
            resid.drain(..(top - lo) * nv);
            lo = top;
        }
        while stream.done < end {
            stream.next_row(&mut resid);
        }
        let grid = Window { crg, vs: &vs, step: (du, dv), size: (nu, nv), resid: &resid, lo, end, min_nodes };
        grid.regions((a, b), -1.0, &mut seen, &mut sunk);
        grid.regions((a, b), 1.0, &mut seen, &mut raised);
        a = b;
    }
    // Sunk regions, then raised ones (a manhole lid may stand proud).
    sunk.extend(raised);
    sunk
}

/// The residuals of the second local mean, a row at a time along u: both means slide once over
/// the grid, in the order of additions and subtractions of a search of the whole grid at once.
struct Residuals<'a> {
    crg: &'a opencrg::Crg,
    hu: usize,
    hv: usize,
    /// The first pass's flags (within 5 mm of its mean) in a ring of `ring` rows: rows
    /// i - hu - 1 ..= i + hu about the second pass's row i.
    ring: usize,
    flags: Vec<bool>,
    first: Slide,
    second: Slide,
    row: Vec<f32>,
    /// Rows done by the first pass, by the second.
    done1: usize,
    done: usize,
}

impl<'a> Residuals<'a> {
    fn new(crg: &'a opencrg::Crg, hu: usize, hv: usize) -> Residuals<'a> {
        let (nu, nv) = (crg.nu, crg.nv());
        let ring = hu.saturating_mul(2).saturating_add(2).min(nu);
        Residuals {
            crg,
            hu,
            hv,
            ring,
            flags: vec![false; ring * nv],
            first: Slide::new(nv),
            second: Slide::new(nv),
            row: vec![0.0; nv],
            done1: 0,
            done: 0,
        }
    }

    /// The first pass through row `r` (its sums start as the whole search's do).
    fn first_to(&mut self, r: usize) {
        let (crg, hu, nu, nv) = (self.crg, self.hu, self.crg.nu, self.crg.nv());
        let finite = |i: usize, j: usize| crg.z_at(i, j).is_finite();
        if self.done1 == 0 {
            for i in 0..hu.min(nu) {
                self.first.add(crg, i, 1.0, |j| finite(i, j));
            }
        }
        while self.done1 <= r.min(nu - 1) {
            let i = self.done1;
            if i + hu < nu {
                self.first.add(crg, i + hu, 1.0, |j| finite(i + hu, j));
            }
            if i > hu {
                self.first.add(crg, i - hu - 1, -1.0, |j| finite(i - hu - 1, j));
            }
            self.first.residuals(crg, i, self.hv, &mut self.row);
            let slot = (i % self.ring) * nv;
            for (f, r) in self.flags[slot..slot + nv].iter_mut().zip(&self.row) {
                *f = r.abs() <= 0.005;
            }
            self.done1 += 1;
        }
    }

    /// The second pass's residuals of the next row onto `out` (there is one: `done < nu`).
    fn next_row(&mut self, out: &mut Vec<f32>) {
        let (crg, hu, nu, nv) = (self.crg, self.hu, self.crg.nu, self.crg.nv());
        let i = self.done;
        if i == 0 && hu > 0 {
            self.first_to(hu.min(nu) - 1);
            for r in 0..hu.min(nu) {
                let slot = (r % self.ring) * nv;
                self.second.add(crg, r, 1.0, |j| self.flags[slot + j]);
            }
        }
        if i + hu < nu {
            self.first_to(i + hu);
            let slot = ((i + hu) % self.ring) * nv;
            self.second.add(crg, i + hu, 1.0, |j| self.flags[slot + j]);
        }
        if i > hu {
            let slot = ((i - hu - 1) % self.ring) * nv;
            self.second.add(crg, i - hu - 1, -1.0, |j| self.flags[slot + j]);
        }
        self.second.residuals(crg, i, self.hv, &mut self.row);
        out.extend_from_slice(&self.row);
        self.done += 1;
    }
}

/// A local mean slid along u: column sums over the rows of the window, added and subtracted a
/// row at a time in f64; then prefix sums across for the window's columns.
struct Slide {
    col_sum: Vec<f64>,
    col_cnt: Vec<i64>,
    row_sum: Vec<f64>,
    row_cnt: Vec<i64>,
}

impl Slide {
    fn new(nv: usize) -> Slide {
        Slide { col_sum: vec![0.0; nv], col_cnt: vec![0; nv], row_sum: vec![0.0; nv + 1], row_cnt: vec![0; nv + 1] }
    }

    /// Row `i`'s used nodes added (`sign` 1) or taken out (-1).
    fn add(&mut self, crg: &opencrg::Crg, i: usize, sign: f64, used: impl Fn(usize) -> bool) {
        for j in 0..self.col_sum.len() {
            if used(j) {
                self.col_sum[j] += sign * f64::from(crg.z_at(i, j));
                self.col_cnt[j] += sign as i64;
            }
        }
    }

    /// Row `i`'s offsets from the mean of the window (NaN where z is or no node is used).
    fn residuals(&mut self, crg: &opencrg::Crg, i: usize, hv: usize, out: &mut [f32]) {
        let nv = self.col_sum.len();
        for j in 0..nv {
            self.row_sum[j + 1] = self.row_sum[j] + self.col_sum[j];
            self.row_cnt[j + 1] = self.row_cnt[j] + self.col_cnt[j];
        }
        let (row_sum, row_cnt) = (&self.row_sum, &self.row_cnt);
        for (j, out) in out.iter_mut().enumerate() {
            let z = crg.z_at(i, j);
            let (j0, j1) = (j.saturating_sub(hv), (j + hv + 1).min(nv));
            let (s, c) = (row_sum[j1] - row_sum[j0], row_cnt[j1] - row_cnt[j0]);
            *out = if z.is_finite() && c > 0 { (f64::from(z) - s / c as f64) as f32 } else { f32::NAN };
        }
    }
}

/// The residuals of a band's rows `lo..end` and what the regions in them need.
struct Window<'a> {
    crg: &'a opencrg::Crg,
    vs: &'a [f64],
    step: (f64, f64),
    size: (usize, usize),
    resid: &'a [f32],
    lo: usize,
    end: usize,
    min_nodes: usize,
}

impl Window<'_> {
    /// The features of the regions off the surface (`sign` -1 sunk, +1 raised) whose first node
    /// lies in rows a..b, in the order of their first nodes, onto `out`.
    fn regions(&self, (a, b): (usize, usize), sign: f64, seen: &mut Bits, out: &mut Vec<SurfaceFeature>) {
        let (lo, end, (nu, nv), (du, dv)) = (self.lo, self.end, self.size, self.step);
        let resid = |i: usize, j: usize| f64::from(self.resid[(i - lo) * nv + j]);
        let off = |i: usize, j: usize| sign * resid(i, j) > DEPTH;
        let at = |i: usize, j: usize| (i - lo) * nv + j;
        seen.0.resize(((end - lo) * nv).div_ceil(64), 0);
        seen.clear();
        for i0 in lo..b {
            for j0 in 0..nv {
                if seen.get(at(i0, j0)) || !off(i0, j0) {
                    continue;
                }
                let mut stack = vec![(i0, j0)];
                seen.set(at(i0, j0), true);
                let mut nodes = Vec::new();
                // Reaching the band's last row (not the grid's): maybe cut, and over 3 m long.
                let mut cut = false;
                // Over 3 m along or across (as `classify` measures): rejected, its nodes not kept.
                let (mut ext, mut long) = ((i0, i0, j0, j0), false);
                while let Some((i, j)) = stack.pop() {
                    if !long {
                        ext = (ext.0.min(i), ext.1.max(i), ext.2.min(j), ext.3.max(j));
                        long = (ext.1 - ext.0 + 1) as f64 * du > 3.0 || (ext.3 - ext.2 + 1) as f64 * dv > 3.0;
                        if long {
                            nodes = Vec::new();
                        } else {
                            nodes.push((i, j, resid(i, j)));
                        }
                    }
                    cut |= i + 1 == end && end < nu;
                    let nb = [(i.wrapping_sub(1), j), (i + 1, j), (i, j.wrapping_sub(1)), (i, j + 1)];
                    for (p, q) in nb {
                        if p >= lo && p < end && q < nv && !seen.get(at(p, q)) && off(p, q) {
                            seen.set(at(p, q), true);
                            stack.push((p, q));
                        }
                    }
                }
                if i0 >= a && !cut && !long && nodes.len() >= self.min_nodes {
                    out.extend(classify(self.crg, self.vs, self.step, self.size, &nodes, sign));
                }
            }
        }
    }
}

/// One bit a node (a tile's flags in an eighth of the bytes of `Vec<bool>`).
struct Bits(Vec<u64>);

impl Bits {
    fn new(n: usize) -> Bits {
        Bits(vec![0; n.div_ceil(64)])
    }
    #[inline]
    fn get(&self, k: usize) -> bool {
        self.0.get(k / 64).is_some_and(|w| w >> (k % 64) & 1 != 0)
    }
    #[inline]
    fn set(&mut self, k: usize, on: bool) {
        if let Some(w) = self.0.get_mut(k / 64) {
            let bit = 1u64 << (k % 64);
            if on {
                *w |= bit;
            } else {
                *w &= !bit;
            }
        }
    }
    fn clear(&mut self) {
        self.0.iter_mut().for_each(|w| *w = 0);
    }
}

/// A region off the local surface (`sign` -1 sunk, +1 raised) as a pothole or a manhole, or
/// nothing: only compact regions inside the grid, 0.2 to 3 m across, count (else a joint
/// between setts, a seam at the edge, an occlusion). A round, flat one within 2 cm of the
/// surface is a manhole; a sunk one at least 1.5 cm deep a pothole.
fn classify(
    crg: &opencrg::Crg,
    vs: &[f64],
    (du, dv): (f64, f64),
    (nu, nv): (usize, usize),
    nodes: &[(usize, usize, f64)],
    sign: f64,
) -> Option<SurfaceFeature> {
    let n = nodes.len() as f64;
    let (iu0, iu1) = nodes.iter().fold((usize::MAX, 0), |a, p| (a.0.min(p.0), a.1.max(p.0)));
    let (jv0, jv1) = nodes.iter().fold((usize::MAX, 0), |a, p| (a.0.min(p.1), a.1.max(p.1)));
    let (length, width) = ((iu1 - iu0 + 1) as f64 * du, (jv1 - jv0 + 1) as f64 * dv);
    let s = crg.u_first() + nodes.iter().map(|p| p.0 as f64).sum::<f64>() / n * du;
    let t = vs[0] + nodes.iter().map(|p| p.1 as f64).sum::<f64>() / n * dv;
    // The extreme offset (signed) and the spread about the mean.
    let extreme = nodes.iter().map(|p| p.2).fold(0.0f64, |a, r| if r.abs() > a.abs() { r } else { a });
    let mean = nodes.iter().map(|p| p.2).sum::<f64>() / n;
    let spread = (nodes.iter().map(|p| (p.2 - mean).powi(2)).sum::<f64>() / n).sqrt();
    let fill = n * du * dv / (std::f64::consts::PI * 0.25 * length * width);
    let edge = iu0 == 0 || jv0 == 0 || iu1 + 1 == nu || jv1 + 1 == nv;
    let aspect = length.max(width) / length.min(width);
    if edge || length.min(width) < 0.2 || length.max(width) > 3.0 || aspect > 3.0 || fill < 0.5 || extreme.abs() > 0.3 {
        return None;
    }
    let round = (0.8..1.25).contains(&(length / width)) && fill > 0.8;
    let kind = if round && extreme.abs() < 0.02 && spread < 0.004 {
        "manhole"
    } else if sign < 0.0 && -extreme >= 0.015 {
        "pothole"
    } else {
        return None;
    };
    Some(SurfaceFeature { kind, s, t, length, width, depth: -extreme })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The search of the whole grid at once, as it was before bands: the reference.
    ///
    /// Depressions in a CRG as `find_depressions` finds them, with residuals of the whole grid.
    fn whole_grid(crg: &opencrg::Crg) -> (Vec<SurfaceFeature>, Vec<f32>) {
        let (nu, nv) = (crg.nu, crg.nv());
        if nu < 3 || nv < 3 {
            return (Vec::new(), Vec::new());
        }
        let (du, vs) = (crg.du(), crg.v_positions());
        let dv = (vs[nv - 1] - vs[0]) / (nv - 1) as f64;
        let (hu, hv) = ((1.0 / du).round() as usize, (1.0 / dv).round() as usize);
        // The local mean twice: the second leaves out the nodes the first found more than 5 mm
        // off (the depressions themselves, curbs at the edges), so neither pulls the surface.
        let mut use_node = Bits::new(nu * nv);
        for k in 0..nu * nv {
            use_node.set(k, crg.z_at(k / nv, k % nv).is_finite());
        }
        // Residuals in f32 (sub-micrometre at these heights): with the two flags a node (bits), 4.25
        // bytes a node besides the grid.
        let mut resid = vec![f32::NAN; nu * nv];
        let (mut col_sum, mut col_cnt) = (vec![0.0f64; nv], vec![0i64; nv]);
        let (mut row_sum, mut row_cnt) = (vec![0.0f64; nv + 1], vec![0i64; nv + 1]);
        for _ in 0..2 {
            // Column sums over the rows of the window (i - hu ..= i + hu), slid along u; then
            // prefix sums across for the window's columns.
            col_sum.iter_mut().for_each(|x| *x = 0.0);
            col_cnt.iter_mut().for_each(|x| *x = 0);
            let add = |i: usize, sign: f64, col_sum: &mut [f64], col_cnt: &mut [i64]| {
                for j in 0..nv {
                    if use_node.get(i * nv + j) {
                        col_sum[j] += sign * f64::from(crg.z_at(i, j));
                        col_cnt[j] += sign as i64;
                    }
                }
            };
            for i in 0..hu.min(nu) {
                add(i, 1.0, &mut col_sum, &mut col_cnt);
            }
            for i in 0..nu {
                if i + hu < nu {
                    add(i + hu, 1.0, &mut col_sum, &mut col_cnt);
                }
                if i > hu {
                    add(i - hu - 1, -1.0, &mut col_sum, &mut col_cnt);
                }
                for j in 0..nv {
                    row_sum[j + 1] = row_sum[j] + col_sum[j];
                    row_cnt[j + 1] = row_cnt[j] + col_cnt[j];
                }
                for j in 0..nv {
                    let z = crg.z_at(i, j);
                    let (j0, j1) = (j.saturating_sub(hv), (j + hv + 1).min(nv));
                    let (s, c) = (row_sum[j1] - row_sum[j0], row_cnt[j1] - row_cnt[j0]);
                    resid[i * nv + j] =
                        if z.is_finite() && c > 0 { (f64::from(z) - s / c as f64) as f32 } else { f32::NAN };
                }
            }
            for (k, r) in resid.iter().enumerate() {
                use_node.set(k, r.abs() <= 0.005);
            }
        }
        let kept = resid.clone();
        let resid = |i: usize, j: usize| f64::from(resid[i * nv + j]);
        let mut seen = Bits::new(nu * nv);
        let mut out = Vec::new();
        let min_nodes = (0.05 / (du * dv)).ceil() as usize;
        // Sunk regions, then raised ones (a manhole lid may stand proud).
        for sign in [-1.0, 1.0] {
            seen.clear();
            let off = |i: usize, j: usize| sign * resid(i, j) > DEPTH;
            for i0 in 0..nu {
                for j0 in 0..nv {
                    if seen.get(i0 * nv + j0) || !off(i0, j0) {
                        continue;
                    }
                    let mut stack = vec![(i0, j0)];
                    seen.set(i0 * nv + j0, true);
                    let mut nodes = Vec::new();
                    while let Some((i, j)) = stack.pop() {
                        nodes.push((i, j, resid(i, j)));
                        let nb = [(i.wrapping_sub(1), j), (i + 1, j), (i, j.wrapping_sub(1)), (i, j + 1)];
                        for (a, b) in nb {
                            if a < nu && b < nv && !seen.get(a * nv + b) && off(a, b) {
                                seen.set(a * nv + b, true);
                                stack.push((a, b));
                            }
                        }
                    }
                    if nodes.len() >= min_nodes {
                        out.extend(classify(crg, &vs, (du, dv), (nu, nv), &nodes, sign));
                    }
                }
            }
        }
        (out, kept)
    }

    /// A seeded SplitMix64 in [0, 1).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> f64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
        }
        fn range(&mut self, a: f64, b: f64) -> f64 {
            a + (b - a) * self.next()
        }
    }

    /// A road surface of `nu` x `nv` nodes `d` apart: a crown, a slope along u and noise of
    /// `noise` m (seeded), about 41 m for odd seeds (sums of such f32 in f64 are exact), about 0
    /// for even ones, as in residual CRGs (their sums are rounded, so the order of additions
    /// shows in the residuals' bits).
    fn surface(nu: usize, nv: usize, d: f64, noise: f64, seed: u64) -> Vec<f32> {
        let base = if seed % 2 == 1 { 41.3 } else { 0.05 };
        let mut rng = Rng(seed);
        let mut z = Vec::with_capacity(nu * nv);
        for i in 0..nu {
            for j in 0..nv {
                let (u, v) = (i as f64 * d, j as f64 * d - 0.5 * (nv - 1) as f64 * d);
                let zz = base + 0.012 * u - 0.02 * v.abs() + noise * rng.range(-1.0, 1.0);
                z.push(zz as f32);
            }
        }
        z
    }

    /// `dz` added to the nodes within `r` of (u, v) (m from the grid's first node).
    fn disc(z: &mut [f32], nv: usize, d: f64, (u, v): (f64, f64), r: f64, dz: f64) {
        rect(z, nv, d, (u - r, v - r), (u + r, v + r), |uu, vv| ((uu - u).hypot(vv - v) <= r).then_some(dz));
    }

    /// `f(u, v)` added to the nodes in the box from `p0` to `p1` where it is some.
    fn rect(z: &mut [f32], nv: usize, d: f64, p0: (f64, f64), p1: (f64, f64), f: impl Fn(f64, f64) -> Option<f64>) {
        let nu = z.len() / nv;
        for i in 0..nu {
            for j in 0..nv {
                let (u, v) = (i as f64 * d, j as f64 * d);
                if u >= p0.0 && u <= p1.0 && v >= p0.1 && v <= p1.1 {
                    if let Some(dz) = f(u, v) {
                        z[i * nv + j] = (f64::from(z[i * nv + j]) + dz) as f32;
                    }
                }
            }
        }
    }

    fn crg(nu: usize, nv: usize, d: f64, z: Vec<f32>) -> opencrg::Crg {
        opencrg::Crg::new_grid(1234.5, d, nu, -0.5 * (nv - 1) as f64 * d, d, nv, (0.0, 0.0, 0.0), None, z)
    }

    type Key = (&'static str, u64, u64, u64, u64, u64);

    fn keys(f: &[SurfaceFeature]) -> Vec<Key> {
        f.iter()
            .map(|f| (f.kind, f.s.to_bits(), f.t.to_bits(), f.length.to_bits(), f.width.to_bits(), f.depth.to_bits()))
            .collect()
    }

    /// The banded search at several band heights finds what the whole search finds, bit for
    /// bit and in order, from residuals of the same bits; returns the whole search's features.
    fn same(crg: &opencrg::Crg) -> Vec<SurfaceFeature> {
        let (whole, resid) = whole_grid(crg);
        let (nu, nv) = (crg.nu, crg.nv());
        if nu >= 3 && nv >= 3 {
            let vs = crg.v_positions();
            let dv = (vs[nv - 1] - vs[0]) / (nv - 1) as f64;
            let mut stream = Residuals::new(crg, (1.0 / crg.du()).round() as usize, (1.0 / dv).round() as usize);
            let mut rows = Vec::new();
            while stream.done < nu {
                stream.next_row(&mut rows);
            }
            let bits = |r: &[f32]| r.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert!(bits(&rows) == bits(&resid), "residuals differ, grid {nu} x {nv}");
        }
        let want = keys(&whole);
        for band in [1, 2, 7, 50, 61, 62, 333, 1000, nu, nu + 5] {
            assert_eq!(keys(&depressions_in_bands(crg, band)), want, "band of {band} rows, grid {nu} x {nv}");
        }
        assert_eq!(keys(&find_depressions(crg)), want);
        whole
    }

    fn count(f: &[SurfaceFeature], kind: &str) -> usize {
        f.iter().filter(|f| f.kind == kind).count()
    }

    #[test]
    fn bands_find_what_the_whole_grid_finds() {
        // 60 m x 9 m at 5 cm: hu = 20 rows, a region 61 rows long is over 3 m.
        let (nu, nv, d) = (1201, 181, 0.05);
        let mut z = surface(nu, nv, d, 0.0008, 8);
        // Potholes and manholes across band boundaries (rows 7k, 50k, 333k, 1000).
        for (k, &row) in [50usize, 333, 666, 1000, 350, 700].iter().enumerate() {
            let u = row as f64 * d;
            let v = 1.0 + 1.2 * k as f64;
            disc(&mut z, nv, d, (u, v), 0.3 + 0.04 * k as f64, -0.03 - 0.005 * k as f64);
        }
        disc(&mut z, nv, d, (340.0 * d, 8.0), 0.3, -0.01);
        disc(&mut z, nv, d, (998.0 * d, 6.5), 0.3, 0.01);
        disc(&mut z, nv, d, (500.0 * d, 2.0), 0.3, -0.01);
        // Near the grid's edges: one touching the first row, one just inside the last rows.
        disc(&mut z, nv, d, (0.1, 4.0), 0.3, -0.04);
        disc(&mut z, nv, d, ((nu - 9) as f64 * d, 4.0), 0.3, -0.04);
        disc(&mut z, nv, d, (30.0, 0.05), 0.3, -0.04);
        // Longer than 3 m, across several boundaries: a rut.
        rect(&mut z, nv, d, (15.0, 3.0), (19.5, 3.4), |_, _| Some(-0.03));
        // U shapes open either way across boundaries: one region each.
        rect(&mut z, nv, d, (40.0, 2.0), (41.0, 3.0), |u, v| (u < 40.3 || !(2.3..=2.7).contains(&v)).then_some(-0.03));
        rect(&mut z, nv, d, (45.0, 2.0), (46.0, 3.0), |u, v| (u > 45.7 || !(2.3..=2.7).contains(&v)).then_some(-0.03));
        // NaN holes: a patch and scattered nodes.
        rect(&mut z, nv, d, (25.0, 5.0), (25.8, 5.6), |_, _| Some(f64::NAN));
        let mut rng = Rng(3);
        for _ in 0..400 {
            let k = (rng.next() * (nu * nv) as f64) as usize;
            z[k] = f32::NAN;
        }
        let f = same(&crg(nu, nv, d, z));
        assert!(count(&f, "pothole") >= 8 && count(&f, "manhole") >= 2, "{:?}", keys(&f));
        // The rut (s 15..19.5 m from the first node, t -1.5..-1.1 m) is no feature.
        let rut = |f: &SurfaceFeature| f.s > 1234.5 + 15.0 && f.s < 1234.5 + 19.5 && f.t > -1.6 && f.t < -1.0;
        assert!(!f.iter().any(rut), "{:?}", keys(&f));
    }

    #[test]
    fn tiny_grids_are_searched_alike() {
        for (nu, nv) in [(1, 5), (2, 40), (3, 3), (5, 40), (20, 40), (45, 40), (90, 30)] {
            let d = 0.05;
            let mut z = surface(nu, nv, d, 0.001, nu as u64);
            disc(&mut z, nv, d, (0.5 * (nu - 1) as f64 * d, 0.5 * (nv - 1) as f64 * d), 0.35, -0.03);
            same(&crg(nu, nv, d, z));
        }
        // A pothole in a grid shorter than a band is found.
        let (nu, nv, d) = (90, 60, 0.05);
        let mut z = surface(nu, nv, d, 0.0005, 1);
        disc(&mut z, nv, d, (2.2, 1.5), 0.35, -0.03);
        assert_eq!(count(&same(&crg(nu, nv, d, z)), "pothole"), 1);
    }

    #[test]
    fn residuals_keep_their_bits_where_sums_round() {
        // Heights of 1 mm down to 1e-12 m, either sign: their f32 bits reach below the f64
        // sums' last bit, so the sums round (heights of one binade, as about 41 m, sum exactly),
        // and the residuals are still those of the whole search, bit for bit.
        let (nu, nv, d) = (700, 80, 0.05);
        let mut rng = Rng(11);
        let mut z: Vec<f32> =
            (0..nu * nv).map(|_| (rng.range(-1e-3, 1e-3) * 2f64.powf(-30.0 * rng.next())) as f32).collect();
        disc(&mut z, nv, d, (17.0, 0.9), 0.4, -0.03);
        disc(&mut z, nv, d, (25.0, 3.0), 0.3, -0.01);
        let f = same(&crg(nu, nv, d, z));
        assert_eq!((count(&f, "pothole"), count(&f, "manhole")), (1, 1));
    }

    #[test]
    fn noisy_grids_with_many_features_are_searched_alike() {
        for seed in 0..4u64 {
            let mut rng = Rng(100 + seed);
            let d = [0.05, 0.04, 0.1, 0.05][seed as usize];
            let (nu, nv) = ((40.0 / d) as usize + 1, (6.0 / d) as usize + 1);
            let mut z = surface(nu, nv, d, rng.range(0.0005, 0.003), seed);
            for _ in 0..60 {
                let (u, v) = (rng.range(-0.5, 40.5), rng.range(-0.5, 6.5));
                let r = rng.range(0.08, 1.0);
                let dz = rng.range(0.004, 0.05) * if rng.next() < 0.7 { -1.0 } else { 1.0 };
                if rng.next() < 0.8 {
                    disc(&mut z, nv, d, (u, v), r, dz);
                } else {
                    let (lu, lv) = (rng.range(0.2, 4.0), rng.range(0.2, 1.5));
                    rect(&mut z, nv, d, (u, v), (u + lu, v + lv), |_, _| Some(dz));
                }
            }
            for _ in 0..(nu * nv / 200) {
                let k = (rng.next() * (nu * nv) as f64) as usize;
                z[k] = f32::NAN;
            }
            let f = same(&crg(nu, nv, d, z));
            assert!(!f.is_empty(), "seed {seed}");
        }
    }
}
