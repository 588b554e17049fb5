//! The truth products of a scene: the designed surface as a CRG along the road's reference line
//! (u = s, v = t). (The designed road itself is the scene's OpenDRIVE model.)

use crate::scene::Scene;
use opencrg::Crg;
use std::path::Path;

/// The designed surface as a CRG grid at `du` x `dv` over v in [v_right, v_left]: u = s along
/// the road's reference line over the scene's s range (heading channel from the reference
/// line's chords, so the C-API's Euler integration meets the sampled points), z absolute (the
/// road's elevation and superelevation plus the designed height), NaN outside the verges.
///
/// Note: a CRG places (u, v) with horizontal mitred normals, OpenDRIVE places (s, t) with the
/// superelevated normal; on the demo road they differ by up to a few millimetres horizontally
/// at the sidewalk edges. Heights are given at the OpenDRIVE (s, t) = (u, v).
pub fn surface_crg(scene: &Scene, du: f64, dv: f64, v_right: f64, v_left: f64) -> Crg {
    let mut crg = grid(scene, du, dv, v_right, v_left);
    let nv = crg.nv();
    let mut z = vec![f32::NAN; crg.nu * nv];
    fill_rows(scene, &crg, 0, &mut z);
    crg.z = z;
    crg
}

/// [`surface_crg`] written to `path` (KRBI) a block of rows at a time: memory does not grow
/// with the road's length. Same bytes as writing [`surface_crg`].
pub fn write_surface_crg(
    scene: &Scene,
    (du, dv, v_right, v_left): (f64, f64, f64, f64),
    path: &Path,
) -> Result<(), opencrg::Error> {
    const BLOCK: usize = 512;
    let crg = grid(scene, du, dv, v_right, v_left);
    let nv = crg.nv();
    let mut block = Vec::new();
    let mut first = 0;
    opencrg::write_file_rows(&crg, path, opencrg::Format::Krbi, |iu, row| {
        if iu == 0 || iu >= first + BLOCK {
            first = iu;
            block.clear();
            block.resize(BLOCK.min(crg.nu - iu) * nv, f32::NAN);
            fill_rows(scene, &crg, first, &mut block);
        }
        row.copy_from_slice(&block[(iu - first) * nv..(iu - first + 1) * nv]);
        Ok(())
    })
}

/// The grid without heights: placement, heading channel, comment.
fn grid(scene: &Scene, du: f64, dv: f64, v_right: f64, v_left: f64) -> Crg {
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
    let start = road.pose(s0);
    let mut crg = Crg::new_grid(s0, du, nu, v_right, dv, nv, (start.x, start.y, start.hdg), Some(phi), Vec::new());
    crg.comment = vec![format!("roadscan virtual survey: designed surface, seed {}", scene.seed)];
    crg
}

/// Heights of rows `first..` of `crg`'s grid into `z` (whole rows), in parallel: each cell on
/// its own, so the same bits at any thread count.
fn fill_rows(scene: &Scene, crg: &Crg, first: usize, z: &mut [f32]) {
    let road = scene.road();
    let nv = crg.nv();
    let (u0, du) = (crg.u_first(), crg.du());
    let v_right = crg.road.v_right.unwrap_or(0.0);
    let v_left = crg.road.v_left.unwrap_or(0.0);
    let dv = crg.road.v_increment.unwrap_or(0.0);
    let rows = z.len() / nv.max(1);
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 64);
    let rows_per_chunk = rows.div_ceil(threads).max(1);
    std::thread::scope(|sc| {
        for (c, chunk) in z.chunks_mut(rows_per_chunk * nv).enumerate() {
            let road = &road;
            sc.spawn(move || {
                for (k, row) in chunk.chunks_mut(nv).enumerate() {
                    let s = u0 + (first + c * rows_per_chunk + k) as f64 * du;
                    let station = scene.station_across(road, s, Some((v_right, v_left)));
                    for (iv, cell) in row.iter_mut().enumerate() {
                        *cell = scene.z_at(&station, v_right + iv as f64 * dv).map_or(f32::NAN, |z| z as f32);
                    }
                }
            });
        }
    });
}
