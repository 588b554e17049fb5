//! The truth products of a scene: the designed surface as a CRG along the road's reference line
//! (u = s, v = t). (The designed road itself is the scene's OpenDRIVE model.)

use crate::scene::Scene;
use opencrg::Crg;

/// The designed surface as a CRG grid at `du` x `dv` over v in [v_right, v_left]: u = s along
/// the road's reference line (heading channel from the reference line's chords, so the
/// C-API's Euler integration meets the sampled points), z absolute (the road's elevation and
/// superelevation plus the designed height), NaN outside the sidewalks.
///
/// Note: a CRG places (u, v) with horizontal mitred normals, OpenDRIVE places (s, t) with the
/// superelevated normal; on the demo road they differ by up to a few millimetres horizontally
/// at the sidewalk edges. Heights are given at the OpenDRIVE (s, t) = (u, v).
pub fn surface_crg(scene: &Scene, du: f64, dv: f64, v_right: f64, v_left: f64) -> Crg {
    let road = scene.road();
    let len = road.length();
    let nu = (len / du).floor() as usize + 1;
    let nv = ((v_left - v_right) / dv).round() as usize + 1;
    let mut phi = Vec::with_capacity(nu);
    let mut prev = road.pose(0.0);
    phi.push(prev.hdg);
    for i in 1..nu {
        let p = road.pose(i as f64 * du);
        phi.push((p.y - prev.y).atan2(p.x - prev.x));
        prev = p;
    }
    let mut z = vec![f32::NAN; nu * nv];
    for iu in 0..nu {
        let s = iu as f64 * du;
        for iv in 0..nv {
            let t = v_right + iv as f64 * dv;
            if let Some(zz) = scene.z(&road, s, t) {
                z[iu * nv + iv] = zz as f32;
            }
        }
    }
    let start = road.pose(0.0);
    let mut crg = Crg::new_grid(0.0, du, nu, v_right, dv, nv, (start.x, start.y, start.hdg), Some(phi), z);
    crg.comment = vec![format!("roadscan virtual survey: designed surface, seed {}", scene.seed)];
    crg
}
