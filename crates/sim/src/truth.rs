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
    let (s0, s1) = scene.s_range;
    let nu = ((s1 - s0) / du + 1e-9).floor() as usize + 1;
    let nv = ((v_left - v_right) / dv).round() as usize + 1;
    let mut phi = Vec::with_capacity(nu);
    let mut prev = road.pose(s0);
    phi.push(prev.hdg);
    for i in 1..nu {
        let p = road.pose(s0 + i as f64 * du);
        phi.push((p.y - prev.y).atan2(p.x - prev.x));
        prev = p;
    }
    let mut z = vec![f32::NAN; nu * nv];
    // Rows in parallel, each cell on its own: the same bytes at any thread count.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 64);
    let rows_per_chunk = nu.div_ceil(threads).max(1);
    std::thread::scope(|sc| {
        for (c, chunk) in z.chunks_mut(rows_per_chunk * nv).enumerate() {
            let road = &road;
            sc.spawn(move || {
                for (k, row) in chunk.chunks_mut(nv).enumerate() {
                    let s = s0 + (c * rows_per_chunk + k) as f64 * du;
                    let station = scene.station_across(road, s, v_right, v_left);
                    for (iv, cell) in row.iter_mut().enumerate() {
                        if let Some(z) = scene.z_at(&station, v_right + iv as f64 * dv) {
                            *cell = z as f32;
                        }
                    }
                }
            });
        }
    });
    let start = road.pose(s0);
    let mut crg = Crg::new_grid(s0, du, nu, v_right, dv, nv, (start.x, start.y, start.hdg), Some(phi), z);
    crg.comment = vec![format!("roadscan virtual survey: designed surface, seed {}", scene.seed)];
    crg
}
