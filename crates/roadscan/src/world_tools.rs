//! `roadscan world`: what a world holds, its triangles exported for other ray casters, and a
//! file of rays cast against it (the benchmark against Open3D/Embree uses both).
//!
//! Triangle file (`--export-triangles`), little-endian: the ASCII line `RSTRI 1 V T\n`, then V
//! vertices as 3 x f32 (x, y, z in the world's frame) and T triangles as 3 x u32 (vertex
//! indices). Ray file (`lidar --rays-out`, `world --cast`): 6 x f32 per ray (origin x, y, z;
//! unit direction x, y, z), every ray up to the sensor's maximum range. Hits file (`--hits`):
//! one f32 per ray, the distance to the nearest hit or infinity.

use crate::world_source::Loaded;
use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use world::{Cast, Ray};

/// Counts of an exported triangle file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Exported {
    /// Distinct vertices.
    pub vertices: usize,
    /// Triangles.
    pub triangles: usize,
}

/// Writes every triangle of the world (heightfields' cells included), vertices shared.
pub fn export_triangles(loaded: &Loaded, path: &Path) -> Result<Exported> {
    let mut index: HashMap<[u32; 3], u32> = HashMap::new();
    let mut verts: Vec<[f32; 3]> = Vec::new();
    let mut tris: Vec<[u32; 3]> = Vec::new();
    for part in loaded.world.parts() {
        for t in part.triangles() {
            let mut tri = [0u32; 3];
            for (k, v) in t.iter().enumerate() {
                let f = [v[0] as f32, v[1] as f32, v[2] as f32];
                let key = f.map(f32::to_bits);
                tri[k] = *index.entry(key).or_insert_with(|| {
                    verts.push(f);
                    verts.len() as u32 - 1
                });
            }
            tris.push(tri);
        }
    }
    atomic::write_atomic(path, |w| {
        writeln!(w, "RSTRI 1 {} {}", verts.len(), tris.len())?;
        for v in &verts {
            for c in v {
                w.write_all(&c.to_le_bytes())?;
            }
        }
        for t in &tris {
            for c in t {
                w.write_all(&c.to_le_bytes())?;
            }
        }
        Ok(())
    })
    .with_context(|| format!("writing {}", path.display()))?;
    Ok(Exported { vertices: verts.len(), triangles: tris.len() })
}

/// What casting a ray file did.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Casted {
    /// Rays cast.
    pub rays: usize,
    /// Rays that hit.
    pub hits: usize,
    /// Seconds casting (the world loaded before).
    pub seconds: f64,
    /// Rays a second.
    pub rays_per_second: f64,
    /// Threads.
    pub threads: usize,
}

/// Casts the rays of `rays` (6 x f32 each, up to `max_range`) on `threads` threads; writes the
/// hit distances to `hits` when given.
pub fn cast_file(world: &dyn Cast, rays: &Path, max_range: f64, threads: usize, hits: Option<&Path>) -> Result<Casted> {
    let bytes = std::fs::read(rays).with_context(|| format!("reading {}", rays.display()))?;
    if bytes.len() % 24 != 0 {
        bail!("{}: {} bytes is not a whole number of 24-byte rays", rays.display(), bytes.len());
    }
    let f = |i: usize| f32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]) as f64;
    let list: Vec<Ray> = (0..bytes.len() / 24)
        .map(|k| {
            let b = k * 24;
            Ray::new([f(b), f(b + 4), f(b + 8)], [f(b + 12), f(b + 16), f(b + 20)]).up_to(max_range)
        })
        .collect();
    let threads = threads.max(1);
    let mut out = vec![f32::INFINITY; list.len()];
    let chunk = list.len().div_ceil(threads).max(1);
    let t0 = std::time::Instant::now();
    std::thread::scope(|s| {
        for (rs, os) in list.chunks(chunk).zip(out.chunks_mut(chunk)) {
            s.spawn(move || {
                for (r, o) in rs.iter().zip(os.iter_mut()) {
                    if let Some(h) = world.cast(r) {
                        *o = h.t as f32;
                    }
                }
            });
        }
    });
    let seconds = t0.elapsed().as_secs_f64();
    if let Some(p) = hits {
        let mut buf = Vec::with_capacity(out.len() * 4);
        out.iter().for_each(|t| buf.extend_from_slice(&t.to_le_bytes()));
        atomic::write_bytes_atomic(p, &buf).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(Casted {
        rays: list.len(),
        hits: out.iter().filter(|t| t.is_finite()).count(),
        seconds,
        rays_per_second: list.len() as f64 / seconds.max(1e-9),
        threads,
    })
}
