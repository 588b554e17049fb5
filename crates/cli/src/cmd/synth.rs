//! `roadscan synth`: a virtual survey of a designed road scene.

use crate::exit;
use crate::progress::Bars;
use anyhow::Result;
use roadscan::config::{parse_range, parse_sigmas, parse_xyz};
use roadscan::synth::{ScannerConfig, SynthConfig};
use std::path::PathBuf;

/// The arguments of `synth`.
#[derive(clap::Args, Debug)]
pub struct SynthArgs {
    /// Scene: the built-in `demo`, or an OpenDRIVE file whose road (`--road`) gets the demo's
    /// surface features and furniture fitted to its lanes, placed in EOV (EPSG:23700).
    #[arg(long, default_value = "demo")]
    pub scene: String,
    /// Road id in the `--scene` file (default: every road of a file of several, surveyed as a
    /// network; the road of a file of one).
    #[arg(long)]
    pub road: Option<String>,
    /// Part of the road to survey, A..B in metres of s (default: all of it).
    #[arg(long, value_parser = parse_range, allow_hyphen_values = true)]
    pub s_range: Option<(f64, f64)>,
    /// Output directory (created).
    #[arg(long)]
    pub out: PathBuf,
    /// Seed of the scene's textures and of the range noise.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Write scan.laz instead of scan.las.
    #[arg(long)]
    pub laz: bool,
    #[command(flatten)]
    pub scanner: ScanArgs,
}

/// The scanner, its mount and the trajectory error of `synth`.
#[derive(clap::Args, Debug)]
pub struct ScanArgs {
    /// Points per mirror revolution.
    #[arg(long, default_value_t = 1000)]
    points_per_rev: usize,
    /// Mirror revolutions per second.
    #[arg(long, default_value_t = 200.0)]
    rate: f64,
    /// Range noise, 1 sigma, m.
    #[arg(long, default_value_t = 0.002)]
    noise: f64,
    /// Mount: scanner centre above the road under the vehicle, m.
    #[arg(long, default_value_t = 2.2)]
    mount_height: f64,
    /// Mount: scanner centre's offset from the vehicle's track towards +t of the road, m.
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    mount_lateral: f64,
    /// Mount: roll of the scanner head about the road direction, degrees (towards +t).
    #[arg(long, default_value_t = 0.0, allow_hyphen_values = true)]
    mount_roll_deg: f64,
    /// GNSS/IMU position error added to the trajectory and the points: DX,DY,DZ in m.
    #[arg(long, value_parser = parse_xyz, default_value = "0,0,0", allow_hyphen_values = true)]
    traj_offset: [f64; 3],
    /// Drift of that error, m/s from the start of each pass: DX,DY,DZ.
    #[arg(long, value_parser = parse_xyz, default_value = "0,0,0", allow_hyphen_values = true)]
    traj_drift: [f64; 3],
    /// Smooth random GNSS/IMU error added to the trajectory and the points: SIGMA_XY,SIGMA_Z,
    /// its RMS in m (on x and on y, and on z), wandering over 10-30 s, e.g. 0.03,0.05.
    #[arg(long, value_parser = parse_sigmas, default_value = "0,0")]
    traj_noise: [f64; 2],
    /// Add clutter: overhanging trees, cars parked half on the road, people on it, multipath
    /// returns below the surface (see below).
    #[arg(long)]
    clutter: bool,
}

impl SynthArgs {
    /// The survey these arguments ask for.
    fn config(&self) -> SynthConfig {
        let a = &self.scanner;
        SynthConfig {
            scene: self.scene.clone(),
            road: self.road.clone(),
            s_range: self.s_range,
            out: self.out.clone(),
            seed: self.seed,
            laz: self.laz,
            scanner: ScannerConfig {
                points_per_rev: a.points_per_rev,
                rate: a.rate,
                noise: a.noise,
                mount_height: a.mount_height,
                mount_lateral: a.mount_lateral,
                mount_roll_deg: a.mount_roll_deg,
                traj_offset: a.traj_offset,
                traj_drift: a.traj_drift,
                traj_noise: a.traj_noise,
                clutter: a.clutter,
            },
        }
    }
}

/// Runs `synth`.
pub fn run(a: &SynthArgs, progress: &Bars) -> Result<u8> {
    let t = std::time::Instant::now();
    let summary = roadscan::synth::survey(&a.config())?;
    if !progress.quiet() {
        eprintln!("roadscan: {}", roadscan::messages::synth_wrote(&summary, &a.out, t.elapsed().as_secs_f64()));
    }
    Ok(exit::OK)
}
