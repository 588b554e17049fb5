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
    #[arg(long, required_unless_present = "scene", conflicts_with = "scene")]
    pub world: Option<PathBuf>,
    /// The roadside: points (surfels fitted to the build's input points in 10 cm cells), voxels
    /// (the build's voxels, coarse) or none.
    #[arg(long, default_value = "points", value_parser = ["points", "voxels", "none"])]
    pub roadside: String,
    /// Cast at a designed scene instead: `demo`, or an OpenDRIVE file (its --road): the designed
    /// surface at 1 cm, building fronts and objects, as `roadscan synth` surveys it.
    #[arg(long)]
    pub scene: Option<String>,
    /// Seed of the --scene (the same seed as its `synth` or `demo`).
    #[arg(long, default_value_t = 1)]
    pub scene_seed: u64,
    /// Drive a lane of this OpenDRIVE file's road (placed in the world by the files' <offset>s),
    /// e.g. a survey's truth/road.xodr over the world built from the survey.
    #[arg(long)]
    pub path_xodr: Option<PathBuf>,
    /// Sensor: hdl32e (Velodyne HDL-32E), vlp16, hdl64e (nominal elevations; no --pcap/--udp:
    /// its packets are not written) or a beam table FILE.toml: name, laser_dt and cycle (s),
    /// firings_per_block (1..12), [blocks_per_firing (1..12)], min_range, max_range,
    /// range_step (m), product_id (0..255) and 1 to 128 [[lasers]] in firing order with
    /// elevation and [azimuth] (offset from the head's angle) in degrees. Example:
    /// data/sensors/hdl32e.toml (equal to hdl32e).
    #[arg(long, default_value = "hdl32e")]
    pub sensor: String,
    /// Revolutions a second (the HDL-32E spins at 5 to 20).
    #[arg(long, default_value_t = 10.0)]
    pub rate: f64,
    #[command(flatten)]
    pub drive: crate::args::DriveArgs,
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
    /// Write each laser's cast and reported distance (m) and the class it hit to this file: three
    /// little-endian f32 per laser per firing, in firing order, NaN where there is none (for
    /// checks against a decoder, and of one world against another).
    #[arg(long)]
    pub ranges: Option<PathBuf>,
    /// Write the seed's 32-bit word per beam (20 bits of 2 mm range, 12 of reflectivity) as
    /// binary frames: `RSWD`, version, lasers, rate, then per firing time, azimuth and the words.
    #[arg(long)]
    pub words: Option<PathBuf>,
    /// Write every ray cast (6 x f32: origin, unit direction) to this file, for `world --cast`.
    #[arg(long)]
    pub rays_out: Option<PathBuf>,
    /// Write the returns as LAS 1.4 point format 6 (LAZ for .laz) in map coordinates and the road's CRS,
    /// with extra bytes ring, laser, azimuth, object_id, range and reflectivity.
    #[arg(long)]
    pub las: Option<PathBuf>,
    /// Write the returns as MCAP for Foxglove: a foxglove.PointCloud per revolution on /lidar,
    /// foxglove.FrameTransform on /tf (map -> base_link -> lidar) at 100 Hz.
    #[arg(long)]
    pub mcap: Option<PathBuf>,
    #[command(flatten)]
    pub live: LiveArgs,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Where and how fast packets go out live (`lidar --udp`, `replay`).
#[derive(clap::Args, Debug)]
pub struct LiveArgs {
    /// Send the data packets to HOST:PORT (e.g. 127.0.0.1:2368), paced to the sensor's clock.
    #[arg(long)]
    pub udp: Option<std::net::SocketAddr>,
    /// Port of the position packets, on the --udp host.
    #[arg(long, default_value_t = 8308)]
    pub position_port: u16,
    /// Send this many times faster than real time (0.5: half speed).
    #[arg(long, default_value_t = 1.0, conflicts_with = "unpaced")]
    pub speed_factor: f64,
    /// Send as fast as the packets come.
    #[arg(long)]
    pub unpaced: bool,
}

impl LiveArgs {
    /// The pace asked for.
    pub fn pace(&self) -> Result<roadscan::lidar::Pace> {
        if self.unpaced {
            return Ok(roadscan::lidar::Pace::Unpaced);
        }
        if !(self.speed_factor.is_finite() && (0.01..=1000.0).contains(&self.speed_factor)) {
            anyhow::bail!("--speed-factor {}: must lie in 0.01..1000", self.speed_factor);
        }
        Ok(roadscan::lidar::Pace::Factor(self.speed_factor))
    }
}

/// Runs `lidar`.
pub fn run(a: &LidarArgs, progress: &Bars) -> Result<u8> {
    let cfg = LidarConfig {
        world: a.world.clone().unwrap_or_default(),
        roadside: match a.roadside.as_str() {
            "voxels" => roadscan::world_source::Roadside::Voxels,
            "none" => roadscan::world_source::Roadside::None,
            _ => roadscan::world_source::Roadside::Points,
        },
        scene: a.scene.clone().map(|n| (n, a.scene_seed)),
        path_xodr: a.path_xodr.clone(),
        sensor: a.sensor.clone(),
        rate: a.rate,
        path: a.drive.path.clone(),
        road: a.drive.road.clone(),
        speed: a.drive.speed,
        start: a.drive.start,
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
        rays_out: a.rays_out.clone(),
        words: a.words.clone(),
        udp: a.live.udp,
        position_port: a.live.position_port,
        pace: a.live.pace()?,
        threads: 0,
        las: a.las.clone(),
        mcap: a.mcap.clone(),
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
        for f in [&r.las, &r.mcap].into_iter().flatten() {
            eprintln!("roadscan: wrote {f}");
        }
        if let Some(u) = &r.udp {
            eprintln!("roadscan: sent {} datagrams in {:.2} s ({:.1} a second)", u.datagrams, u.seconds, u.rate);
        }
    }
    Ok(exit::OK)
}

/// The arguments of `replay`.
#[derive(clap::Args, Debug)]
pub struct ReplayArgs {
    /// A classic pcap file (as `roadscan lidar --pcap` writes, or a capture of a real sensor).
    pub pcap: PathBuf,
    #[command(flatten)]
    pub live: LiveArgs,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `replay`.
pub fn replay(a: &ReplayArgs, progress: &Bars) -> Result<u8> {
    let udp = a.live.udp.ok_or_else(|| anyhow!("replay needs --udp HOST:PORT"))?;
    let cfg = roadscan::replay::ReplayConfig {
        pcap: a.pcap.clone(),
        udp,
        position_port: a.live.position_port,
        pace: a.live.pace()?,
    };
    let r = roadscan::replay::run(&cfg, progress)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else if !progress.quiet() {
        eprintln!(
            "roadscan: replayed {} datagrams of {} in {:.2} s ({:.1} a second)",
            r.datagrams,
            a.pcap.display(),
            r.seconds,
            r.rate
        );
    }
    Ok(exit::OK)
}
