//! `roadscan world`: what a world holds; its triangles for other ray casters; a ray file cast.

use crate::exit;
use crate::progress::Bars;
use anyhow::{anyhow, Result};
use roadscan::world_source::{self, Roadside};
use std::path::PathBuf;

/// The arguments of `world`.
#[derive(clap::Args, Debug)]
pub struct WorldArgs {
    /// The output directory of `roadscan build` or `roadscan demo`.
    #[arg(long, required_unless_present = "scene", conflicts_with = "scene")]
    pub world: Option<PathBuf>,
    /// A designed scene instead: `demo` (with --scene-seed).
    #[arg(long)]
    pub scene: Option<String>,
    /// Seed of the --scene.
    #[arg(long, default_value_t = 1)]
    pub scene_seed: u64,
    /// The roadside: points (surfels of the build's input points), voxels or none.
    #[arg(long, default_value = "points", value_parser = ["points", "voxels", "none"])]
    pub roadside: String,
    /// Write every triangle (vertices shared) to this file: `RSTRI 1 V T`, then f32 vertices and u32 triangles.
    #[arg(long)]
    pub export_triangles: Option<PathBuf>,
    /// Cast the rays of this file (6 x f32 each, as `lidar --rays-out` writes) and report rays/s.
    #[arg(long)]
    pub cast: Option<PathBuf>,
    /// With --cast: each ray's hit distance (f32, infinity for none) to this file.
    #[arg(long, requires = "cast")]
    pub hits: Option<PathBuf>,
    /// With --cast: the rays' length, m.
    #[arg(long, default_value_t = 100.0)]
    pub max_range: f64,
}

/// Runs `world`.
pub fn run(a: &WorldArgs, _progress: &Bars) -> Result<u8> {
    let t0 = std::time::Instant::now();
    let roadside = match a.roadside.as_str() {
        "voxels" => Roadside::Voxels,
        "none" => Roadside::None,
        _ => Roadside::Points,
    };
    let loaded = match (&a.scene, &a.world) {
        (Some(name), _) if name == "demo" => world_source::from_scene(&world_source::Scene::demo(a.scene_seed))?,
        (Some(name), _) => return Err(anyhow!("--scene {name}: world takes --scene demo")),
        (None, Some(dir)) => world_source::from_build_with(dir, roadside)?,
        (None, None) => return Err(anyhow!("give --world DIR or --scene demo")),
    };
    let load = t0.elapsed().as_secs_f64();
    let mut out = serde_json::json!({ "load_seconds": load, "world": loaded.stats });
    if let Some(p) = &a.export_triangles {
        out["exported"] = serde_json::to_value(roadscan::world_tools::export_triangles(&loaded, p)?)?;
    }
    if let Some(rays) = &a.cast {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let c = roadscan::world_tools::cast_file(&loaded.world, rays, a.max_range, threads, a.hits.as_deref())?;
        out["cast"] = serde_json::to_value(c)?;
    }
    println!("{}", serde_json::to_string_pretty(&out)?);
    Ok(exit::OK)
}
