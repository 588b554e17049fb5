//! `roadscan voxel`: the roadside of a road from LAS/LAZ points as voxels (OBJ, glTF, CSV).

use crate::exit;
use crate::progress::Bars;
use anyhow::Result;
use roadscan::roadside::VoxelConfig;
use std::path::PathBuf;

/// The arguments of `voxel`.
#[derive(clap::Args, Debug)]
pub struct VoxelArgs {
    #[command(flatten)]
    pub road: crate::args::RoadArgs,
    /// Output OBJ; its MTL (same stem), a JSON sidecar (`.json`: origin, CRS, size, counts) and
    /// a CSV of the voxels (`.voxels.csv`) are written beside it.
    #[arg(long)]
    pub out: PathBuf,
    /// Also write binary glTF (y up, flat vertex colours).
    #[arg(long)]
    pub glb: Option<PathBuf>,
    /// Voxel size, m.
    #[arg(long, default_value_t = 1.0)]
    pub size: f64,
    /// Face colours: class, intensity, height or rgb (needs points with colour).
    #[arg(long, default_value = "class")]
    pub colour: String,
    /// Local origin of the voxels, X,Y,Z in the map frame (default: the road's start rounded
    /// down to 100 m, its height to 10 m).
    #[arg(long, value_parser = roadscan::config::parse_xyz, allow_hyphen_values = true)]
    pub origin: Option<[f64; 3]>,
}

/// Runs `voxel`.
pub fn run(a: &VoxelArgs, progress: &Bars) -> Result<u8> {
    let t0 = std::time::Instant::now();
    let c = VoxelConfig {
        road: a.road.inputs(),
        out: a.out.clone(),
        glb: a.glb.clone(),
        size: a.size,
        colour: a.colour.clone(),
        origin: a.origin,
    };
    let done = roadscan::roadside::voxel(&c, progress)?;
    if !progress.quiet() {
        eprintln!("roadscan: {}", done.wrote(&c, t0.elapsed().as_secs_f64()));
    }
    Ok(exit::OK)
}
