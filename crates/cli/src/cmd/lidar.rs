//! `roadscan lidar`: a virtual LiDAR driven along a lane of a built world, written as pcap.

use crate::exit;
use crate::progress::Bars;
use anyhow::{anyhow, Result};
use roadscan::lidar::LidarConfig;
use std::path::PathBuf;

/// The arguments of `lidar`.
#[derive(clap::Args, Debug)]
pub struct LidarArgs {
    /// The output directory of `roadscan build` or `roadscan demo` (road.xodr, crg/, scene.voxels.csv).
    #[arg(long)]
    pub world: PathBuf,
    /// Sensor: hdl32e (Velodyne HDL-32E) or vlp16.
    #[arg(long, default_value = "hdl32e")]
    pub sensor: String,
    /// Revolutions a second (the HDL-32E spins at 5 to 20).
    #[arg(long, default_value_t = 10.0)]
    pub rate: f64,
    /// Where the sensor drives: lane:ID, the centre of that lane (negative ids with s, positive against it).
    #[arg(long, default_value = "lane:-1", allow_hyphen_values = true)]
    pub path: String,
    /// The road of road.xodr to drive (default: the first).
    #[arg(long)]
    pub road: Option<String>,
    /// Speed, m/s.
    #[arg(long, default_value_t = 10.0)]
    pub speed: f64,
    /// Start station, m (default: the lane's start in its driving direction).
    #[arg(long)]
    pub start: Option<f64>,
    /// Seconds of sensor time to cast.
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// Sensor height above the road surface, m.
    #[arg(long, default_value_t = 1.8)]
    pub height: f64,
    /// Range noise (standard deviation), m.
    #[arg(long, default_value_t = 0.0)]
    pub range_noise: f64,
    /// Probability that a return is lost.
    #[arg(long, default_value_t = 0.0)]
    pub dropout: f64,
    /// Seed of the noise and dropouts.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// UTC of time 0 (packet time stamps and $GPRMC), YYYY-MM-DDTHH:MM:SSZ.
    #[arg(long, default_value = "2026-01-01T00:00:00Z")]
    pub epoch: String,
    /// Write the packets (data on port 2368, position on 8308) to this classic pcap file.
    #[arg(long)]
    pub pcap: Option<PathBuf>,
    /// Data packets per position packet.
    #[arg(long, default_value_t = 14)]
    pub position_every: usize,
    /// Write each laser's cast and reported distance (m) to this file: two little-endian f32
    /// per laser per firing, in firing order, NaN where there is none (for checks against a decoder).
    #[arg(long)]
    pub ranges: Option<PathBuf>,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `lidar`.
pub fn run(a: &LidarArgs, progress: &Bars) -> Result<u8> {
    let cfg = LidarConfig {
        world: a.world.clone(),
        sensor: a.sensor.clone(),
        rate: a.rate,
        path: a.path.clone(),
        road: a.road.clone(),
        speed: a.speed,
        start: a.start,
        duration: a.duration,
        mount_height: a.height,
        range_noise: a.range_noise,
        dropout: a.dropout,
        seed: a.seed,
        epoch: roadscan::lidar::Epoch::parse(&a.epoch)
            .ok_or_else(|| anyhow!("--epoch {}: expected YYYY-MM-DDTHH:MM:SSZ", a.epoch))?,
        pcap: a.pcap.clone(),
        position_every: a.position_every,
        ranges: a.ranges.clone(),
        threads: 0,
    };
    let r = roadscan::lidar::run(&cfg, progress)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else if !progress.quiet() {
        eprintln!(
            "roadscan: {} over {:.1} s: {} firings, {} of {} rays returned, {:.1} revolutions; {} data and {} position packets{}; cast at {:.1}x real time",
            r.sensor,
            r.sensor_seconds,
            r.firings,
            r.returns,
            r.rays,
            r.revolutions,
            r.data_packets,
            r.position_packets,
            r.pcap.as_ref().map(|p| format!(" in {p}")).unwrap_or_default(),
            r.real_time_factor
        );
    }
    Ok(exit::OK)
}
