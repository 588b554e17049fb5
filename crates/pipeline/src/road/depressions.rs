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

/// Depressions in a CRG: nodes at least 5 mm below the mean of the 2 m x 2 m around them
/// (without the nodes more than 5 mm off it), joined 4-connected; compact regions of 0.05 m²
/// to 3 m across, inside the grid. A round, shallow (under 2 cm) and flat one is a manhole,
/// else a pothole.
pub fn find_depressions(crg: &opencrg::Crg) -> Vec<SurfaceFeature> {
    let (nu, nv) = (crg.nu, crg.nv());
    if nu < 3 || nv < 3 {
        return Vec::new();
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
    out
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
