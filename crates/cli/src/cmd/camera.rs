//! `roadscan camera`: a virtual camera driven along a lane of a built world, its frames written
//! as PNG images with COCO boxes.

use crate::exit;
use crate::progress::Bars;
use anyhow::Result;
use roadscan::camera::CameraConfig;
use std::path::PathBuf;

/// The arguments of `camera`.
#[derive(clap::Args, Debug)]
pub struct CameraArgs {
    /// The output directory of `roadscan build` or `roadscan demo` (road.xodr, crg/, scene.voxels.csv).
    #[arg(long)]
    pub world: PathBuf,
    #[command(flatten)]
    pub drive: crate::args::DriveArgs,
    /// Seconds to drive (frames at 0, 1/fps, ... before the end).
    #[arg(long, default_value_t = 2.0)]
    pub duration: f64,
    /// Frames a second.
    #[arg(long, default_value_t = 10.0)]
    pub fps: f64,
    /// A camera file (TOML): width, height, fx [fy cx cy] or hfov (degrees), [distortion] model =
    /// "none" | "brown-conrady" (k1 k2 p1 p2 k3) | "equidistant" (k1 k2 k3 k4), [mount] x y z (m)
    /// roll pitch yaw (degrees) in the vehicle's body frame (x forward, y left, z up).
    #[arg(long, conflicts_with_all = ["hfov", "width", "height", "mount_height"])]
    pub camera: Option<PathBuf>,
    /// Horizontal field of view of a pinhole camera, degrees [default: 90].
    #[arg(long)]
    pub hfov: Option<f64>,
    /// Image width, pixels [default: 640].
    #[arg(long)]
    pub width: Option<u32>,
    /// Image height, pixels [default: 480].
    #[arg(long)]
    pub height: Option<u32>,
    /// Camera height above the road surface, m (level, facing forward).
    #[arg(long, default_value_t = 1.6)]
    pub mount_height: f64,
    /// The output directory (frames/, coco.json, camera.json); replaced as a whole.
    #[arg(long)]
    pub out: PathBuf,
    /// Also write each frame in the seed's MATLAB layout: NNNNNN_rgb.planes (R, G, B planes of
    /// bytes, each column-major) and NNNNNN_depth.f32 (little-endian f32, column-major).
    #[arg(long)]
    pub planes: bool,
    /// Threads (0: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `camera`.
pub fn run(a: &CameraArgs, progress: &Bars) -> Result<u8> {
    let cfg = CameraConfig {
        world: a.world.clone(),
        path: a.drive.path.clone(),
        road: a.drive.road.clone(),
        speed: a.drive.speed,
        start: a.drive.start,
        duration: a.duration,
        fps: a.fps,
        camera: a.camera.clone(),
        hfov: a.hfov,
        width: a.width,
        height: a.height,
        mount_height: a.mount_height,
        out: a.out.clone(),
        planes: a.planes,
        threads: a.threads,
    };
    let r = roadscan::camera::run(&cfg, progress)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else if !progress.quiet() {
        eprintln!(
            "roadscan: {} frames of {} x {} in {} ({} objects boxed); rendered at {:.1} frames/s",
            r.frames, r.width, r.height, r.out, r.annotations, r.frames_per_second
        );
    }
    Ok(exit::OK)
}
