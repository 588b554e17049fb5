//! `roadscan lidar`: a virtual rotating LiDAR driven along a lane of a built world, its
//! returns written as Velodyne packets in a pcap file.

use crate::progress::{Progress, Stage};
use crate::world_source::{self, WorldStats};
use anyhow::{anyhow, bail, Context, Result};
use sensors::pcap::{Endpoint, PcapWriter};
pub use sensors::udp::Pace;
use sensors::udp::{Outgoing, Sender};
pub use sensors::Epoch;
use sensors::{packet, BeamTable, Lidar};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use world::{LanePath, Pose, Trajectory};

/// What to cast and where to write it.
#[derive(Debug, Clone, PartialEq)]
pub struct LidarConfig {
    /// The output directory of a build (or `roadscan demo`).
    pub world: PathBuf,
    /// How the build's roadside is modelled.
    pub roadside: world_source::Roadside,
    /// Cast at a designed scene instead (`demo`, or an OpenDRIVE file), with this seed.
    pub scene: Option<(String, u64)>,
    /// Drive a lane of this OpenDRIVE file's road instead of the world's (placed by the two
    /// files' header offsets), e.g. a survey's truth road over the world built from it.
    pub path_xodr: Option<PathBuf>,
    /// Beam table: `hdl32e` or `vlp16`.
    pub sensor: String,
    /// Revolutions a second.
    pub rate: f64,
    /// The path: `lane:ID` (the centre of that lane of the road).
    pub path: String,
    /// The road (default: the first in road.xodr).
    pub road: Option<String>,
    /// Speed, m/s.
    pub speed: f64,
    /// Start station, m (default: the lane's start in its driving direction).
    pub start: Option<f64>,
    /// Seconds to cast.
    pub duration: f64,
    /// Height of the sensor above the road surface, m.
    pub mount_height: f64,
    /// Range noise, m (standard deviation).
    pub range_noise: f64,
    /// Probability of losing a return.
    pub dropout: f64,
    /// Seed of the noise.
    pub seed: u64,
    /// UTC of time 0.
    pub epoch: Epoch,
    /// The pcap file to write.
    pub pcap: Option<PathBuf>,
    /// Data packets per position packet.
    pub position_every: usize,
    /// Write each laser's cast and reported distance and the class hit here: three
    /// little-endian f32 per laser per firing, in firing order (NaN: no hit, or not reported;
    /// class 0: nothing hit).
    pub ranges: Option<PathBuf>,
    /// Write the seed's 32-bit word per beam as binary frames ([`sensors::words`]).
    pub words: Option<PathBuf>,
    /// Write every ray cast (6 x f32: origin, unit direction; see [`crate::world_tools`]).
    pub rays_out: Option<PathBuf>,
    /// Send the packets live: data to this address, position packets to its host at
    /// `position_port`.
    pub udp: Option<std::net::SocketAddr>,
    /// Port of the position packets sent live.
    pub position_port: u16,
    /// Pace of the live packets.
    pub pace: Pace,
    /// Threads (0: all cores).
    pub threads: usize,
    /// The returns as LAS 1.4 (LAZ for `.laz`) with extra bytes ([`crate::lidar_out`]).
    pub las: Option<PathBuf>,
    /// The returns as MCAP with Foxglove's schemas ([`crate::lidar_out`]).
    pub mcap: Option<PathBuf>,
}

impl Default for LidarConfig {
    fn default() -> Self {
        LidarConfig {
            world: PathBuf::new(),
            roadside: world_source::Roadside::default(),
            scene: None,
            path_xodr: None,
            sensor: "hdl32e".into(),
            rate: 10.0,
            path: "lane:-1".into(),
            road: None,
            speed: 10.0,
            start: None,
            duration: 10.0,
            mount_height: 1.8,
            range_noise: 0.0,
            dropout: 0.0,
            seed: 1,
            epoch: Epoch::default(),
            pcap: None,
            position_every: 14,
            ranges: None,
            rays_out: None,
            words: None,
            udp: None,
            position_port: 8308,
            pace: Pace::Factor(1.0),
            threads: 0,
            las: None,
            mcap: None,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LidarRun {
    /// The beam table.
    pub sensor: String,
    /// Firings cast.
    pub firings: u64,
    /// Rays cast.
    pub rays: u64,
    /// Returns reported.
    pub returns: u64,
    /// Data packets.
    pub data_packets: u64,
    /// Position packets.
    pub position_packets: u64,
    /// Revolutions of the head.
    pub revolutions: f64,
    /// Seconds of sensor time.
    pub sensor_seconds: f64,
    /// Wall seconds loading the world.
    pub load_seconds: f64,
    /// Wall seconds casting (and writing).
    pub cast_seconds: f64,
    /// Sensor seconds per wall second while casting.
    pub real_time_factor: f64,
    /// The world.
    pub world: WorldStats,
    /// The pcap written, if any.
    pub pcap: Option<String>,
    /// What was sent live, if anything.
    pub udp: Option<LiveRun>,
    /// The LAS file written, if any.
    pub las: Option<String>,
    /// Points in it.
    pub las_points: Option<u64>,
    /// The MCAP file written, if any.
    pub mcap: Option<String>,
    /// What went into it.
    pub mcap_messages: Option<crate::lidar_out::McapStats>,
}

/// What went out live.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LiveRun {
    /// Datagrams sent.
    pub datagrams: u64,
    /// Wall seconds from the first to the last.
    pub seconds: f64,
    /// Datagrams a wall second.
    pub rate: f64,
    /// The most a datagram went out after its time, s.
    pub worst_lateness: f64,
}

impl LiveRun {
    pub(crate) fn of(s: &sensors::udp::Sent) -> LiveRun {
        LiveRun {
            datagrams: s.datagrams,
            seconds: s.seconds,
            rate: if s.seconds > 0.0 { s.datagrams.saturating_sub(1) as f64 / s.seconds } else { 0.0 },
            worst_lateness: s.worst_lateness,
        }
    }
}

/// The live sender of `udp`, bound on the matching unspecified address.
fn live_sender(udp: Option<std::net::SocketAddr>, pace: Pace) -> Result<Option<Sender>> {
    let Some(to) = udp else { return Ok(None) };
    let bind: std::net::SocketAddr =
        if to.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { (std::net::Ipv6Addr::UNSPECIFIED, 0).into() };
    Ok(Some(Sender::new(bind, pace).with_context(|| format!("--udp {to}"))?))
}

/// A path moved by a constant offset (from one file frame to another).
struct Shifted<T> {
    inner: T,
    by: [f64; 3],
}

impl<T: Trajectory> Trajectory for Shifted<T> {
    fn pose(&self, t: f64) -> Pose {
        let p = self.inner.pose(t);
        Pose { position: [p.position[0] + self.by[0], p.position[1] + self.by[1], p.position[2] + self.by[2]], ..p }
    }
    fn span(&self) -> (f64, f64) {
        self.inner.span()
    }
}

/// The designed scene `name` (`demo`, or an OpenDRIVE file's road `road`) with `seed`.
fn scene_named(name: &str, road: Option<&str>, seed: u64) -> Result<sim::Scene> {
    if name == "demo" {
        return Ok(sim::Scene::demo(seed));
    }
    let odr = opendrive::read_file(name).with_context(|| format!("--scene {name}"))?;
    let id = road
        .map(str::to_string)
        .or_else(|| odr.roads.first().map(|r| r.id.clone()))
        .ok_or_else(|| anyhow!("--scene {name}: no road"))?;
    sim::Scene::from_road(&odr, &id, None, seed).with_context(|| format!("--scene {name}: road {id}"))
}

/// The lane a `lane:ID` path names.
pub(crate) fn lane_of(path: &str) -> Result<i32> {
    let id = path.strip_prefix("lane:").ok_or_else(|| {
        anyhow!("--path {path}: expected lane:ID, e.g. lane:-1 (the first lane right of the reference line)")
    })?;
    id.parse().map_err(|_| anyhow!("--path {path}: lane id {id} is not an integer"))
}

/// Casts the sensor along the path and writes what the config asks for.
pub fn run(cfg: &LidarConfig, progress: &dyn Progress) -> Result<LidarRun> {
    let beams = BeamTable::named(&cfg.sensor)
        .ok_or_else(|| anyhow!("--sensor {}: known sensors are hdl32e and vlp16", cfg.sensor))?;
    if beams.lasers.len() * beams.firings_per_block != 32 {
        bail!("--sensor {}: its packets do not have 32 channels a block", cfg.sensor);
    }
    if cfg.position_every == 0 {
        bail!("--position-every must be at least 1");
    }
    let lane = lane_of(&cfg.path)?;
    let started = std::time::Instant::now();
    let stage = Stage { index: 1, of: 2, what: "loading the world", len: None };
    progress.stage(&stage);
    let loaded = match &cfg.scene {
        Some((name, seed)) => world_source::from_scene(&scene_named(name, cfg.road.as_deref(), *seed)?)?,
        None => world_source::from_build_with(&cfg.world, cfg.roadside)?,
    };
    progress.stage_end(&stage, Some(started.elapsed().as_secs_f64()));
    let load_seconds = started.elapsed().as_secs_f64();
    let path_odr = match &cfg.path_xodr {
        Some(p) => Some(opendrive::read_file(p).with_context(|| format!("reading {}", p.display()))?),
        None => None,
    };
    let (odr, what) = match (&path_odr, &cfg.path_xodr) {
        (Some(o), Some(p)) => (o, p.display().to_string()),
        _ => (&loaded.odr, "the world's road.xodr".to_string()),
    };
    let road = match &cfg.road {
        Some(id) if cfg.scene.is_none() || path_odr.is_some() => {
            odr.roads.iter().find(|r| &r.id == id).ok_or_else(|| anyhow!("{what}: no road {id}"))?
        }
        _ => odr.roads.first().ok_or_else(|| anyhow!("{what}: no road"))?,
    };
    // From the path road's file frame to the world's: both offsets are translations.
    let shift = {
        let (a, b) = (odr.header.offset.unwrap_or_default(), loaded.odr.header.offset.unwrap_or_default());
        if a.hdg != b.hdg {
            bail!("{what}: its <offset> is rotated against the world's ({} vs {} rad)", a.hdg, b.hdg);
        }
        let (sn, cs) = a.hdg.sin_cos();
        let d = [a.x - b.x, a.y - b.y];
        [cs * d[0] + sn * d[1], -sn * d[0] + cs * d[1], a.z - b.z]
    };
    let eval = opendrive::RoadEval::new(road);
    let start = cfg.start.unwrap_or(if lane < 0 { 0.0 } else { eval.length() });
    let lane_path = LanePath::new(opendrive::RoadEval::new(road), lane, start, cfg.speed, cfg.duration)
        .with_context(|| format!("--path {}", cfg.path))?;
    let path = Shifted { inner: lane_path, by: shift };
    let lidar = Lidar {
        beams,
        rate_hz: cfg.rate,
        mount: Pose { position: [0.0, 0.0, cfg.mount_height], ..Pose::IDENTITY },
        range_noise: cfg.range_noise,
        dropout: cfg.dropout,
        seed: cfg.seed,
        ..Lidar::hdl32e()
    };
    lidar.check().context("the sensor's settings")?;
    // Latitude and longitude for the position packets, from the road file's geoReference.
    let placement = loaded.odr.header.offset.unwrap_or_default().placement();
    let to_wgs84 = loaded
        .odr
        .header
        .geo_reference
        .as_deref()
        .and_then(|g| scan::CrsDef::parse(g.trim()).ok())
        .and_then(|from| scan::Reprojection::new(from, scan::CrsDef::from_epsg(4326).ok()?).ok());
    let lat_lon = |p: [f64; 3]| {
        let m = placement.to_map(p);
        let (mut x, mut y) = ([m[0]], [m[1]]);
        to_wgs84.as_ref()?.apply(&mut x, &mut y).ok()?;
        Some((y[0], x[0]))
    };
    let threads =
        if cfg.threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { cfg.threads };
    let src = Endpoint { mac: [0x60, 0x76, 0x88, 0x00, 0x00, 0x01], ip: Ipv4Addr::new(192, 168, 1, 201), port: 2368 };
    let dst = Endpoint { mac: [0xFF; 6], ip: Ipv4Addr::BROADCAST, port: 2368 };
    let mut tmp = match &cfg.pcap {
        Some(p) => Some(atomic::TempFile::beside(p).with_context(|| format!("creating {}", p.display()))?),
        None => None,
    };
    let mut writer = match tmp.as_mut() {
        Some(t) => Some(PcapWriter::new(t.writer())?),
        None => None,
    };
    let mut ranges_tmp = match &cfg.ranges {
        Some(p) => Some(atomic::TempFile::beside(p).with_context(|| format!("creating {}", p.display()))?),
        None => None,
    };
    let (mut las, mut mcap) = crate::lidar_out::open(cfg, &lidar, &loaded.odr.header, progress)?;
    let sender = live_sender(cfg.udp, cfg.pace)?;
    let position_to = cfg.udp.map(|a| std::net::SocketAddr::new(a.ip(), cfg.position_port));
    let mut words_tmp = match &cfg.words {
        Some(p) => {
            let mut t = atomic::TempFile::beside(p).with_context(|| format!("creating {}", p.display()))?;
            use std::io::Write;
            t.writer()
                .write_all(&sensors::words::header(lidar.beams.lasers.len() as u32, lidar.rate_hz))
                .with_context(|| format!("writing {}", p.display()))?;
            Some(t)
        }
        None => None,
    };
    let mut rays_tmp = match &cfg.rays_out {
        Some(p) => Some(atomic::TempFile::beside(p).with_context(|| format!("creating {}", p.display()))?),
        None => None,
    };
    let fpp = lidar.beams.firings_per_packet();
    let packet_time = fpp as f64 * lidar.beams.cycle;
    let total_packets = (cfg.duration / packet_time + 1e-9).floor() as u64;
    let stage = Stage { index: 2, of: 2, what: "casting", len: Some(total_packets) };
    progress.stage(&stage);
    let cast_started = std::time::Instant::now();
    let (mut data_packets, mut position_packets) = (0u64, 0u64);
    let summary = lidar.run(&loaded.world, &path, (0.0, cfg.duration), threads, &mut |firings| {
        for group in firings.chunks(fpp) {
            if writer.is_none() && sender.is_none() {
                break;
            }
            let Some(bytes) = packet::data_packet(&lidar.beams, group, &cfg.epoch) else { continue };
            let sent = group[0].time + packet_time;
            data_packets += 1;
            let position = (data_packets % cfg.position_every as u64 == 1 || cfg.position_every == 1).then(|| {
                let pose = path.pose(sent);
                let course = 90.0 - pose.yaw().to_degrees();
                let nmea = packet::gprmc(&cfg.epoch, sent, lat_lon(pose.position), cfg.speed, course);
                packet::position_packet(&cfg.epoch, sent, &nmea)
            });
            if let Some(w) = writer.as_mut() {
                w.udp(cfg.epoch.utc(sent), &src, &dst, &bytes)?;
                if let Some(p) = &position {
                    w.udp(cfg.epoch.utc(sent), &src, &Endpoint { port: 8308, ..dst }, p)?;
                }
            }
            if let (Some(s), Some(to), Some(pto)) = (sender.as_ref(), cfg.udp, position_to) {
                s.send(Outgoing { time: sent, to, payload: bytes.to_vec() })?;
                if let Some(p) = &position {
                    s.send(Outgoing { time: sent, to: pto, payload: p.to_vec() })?;
                }
            }
            position_packets += u64::from(position.is_some());
        }
        if let Some(t) = ranges_tmp.as_mut() {
            use std::io::Write;
            let mut buf = Vec::with_capacity(firings.len() * 32 * 12);
            for r in firings.iter().flat_map(|f| f.returns.iter()) {
                buf.extend_from_slice(&(r.cast as f32).to_le_bytes());
                buf.extend_from_slice(&(if r.is_some() { r.range as f32 } else { f32::NAN }).to_le_bytes());
                buf.extend_from_slice(&(r.class as f32).to_le_bytes());
            }
            t.writer().write_all(&buf).map_err(|e| sensors::Error::Io { what: "the ranges file".into(), source: e })?;
        }
        if let Some(t) = rays_tmp.as_mut() {
            use std::io::Write;
            let mut buf = Vec::with_capacity(firings.len() * 32 * 24);
            for f in firings {
                for j in 0..lidar.beams.lasers.len() {
                    let (o, d) = lidar.ray(f, j);
                    for c in o.iter().chain(&d) {
                        buf.extend_from_slice(&(*c as f32).to_le_bytes());
                    }
                }
            }
            t.writer().write_all(&buf).map_err(|e| sensors::Error::Io { what: "the rays file".into(), source: e })?;
        }
        if let Some(t) = words_tmp.as_mut() {
            use std::io::Write;
            let mut buf = Vec::with_capacity(firings.len() * (12 + 4 * lidar.beams.lasers.len()));
            firings.iter().for_each(|f| sensors::words::record(f, &mut buf));
            t.writer().write_all(&buf).map_err(|e| sensors::Error::Io { what: "the words file".into(), source: e })?;
        }
        crate::lidar_out::add(&mut las, &mut mcap, firings, &path)?;
        progress.advance((firings.len() / fpp) as u64);
        Ok(())
    })?;
    if let Some(t) = words_tmp {
        let target = t.target().display().to_string();
        t.commit().with_context(|| format!("writing {target}"))?;
    }
    if let Some(t) = rays_tmp {
        let target = t.target().display().to_string();
        t.commit().with_context(|| format!("writing {target}"))?;
    }
    if let Some(t) = ranges_tmp {
        let target = t.target().display().to_string();
        t.commit().with_context(|| format!("writing {target}"))?;
    }
    if let Some(w) = writer {
        w.finish()?;
    }
    let ((las, las_points), (mcap, mcap_messages)) =
        crate::lidar_out::finish(las, mcap, summary.packets as f64 * packet_time, &path)?;
    let live = match sender {
        Some(s) => Some(LiveRun::of(&s.finish()?)),
        None => None,
    };
    if let Some(l) = live.as_ref().filter(|l| l.worst_lateness > 0.05) {
        progress.note(&crate::progress::Note::Warning(format!(
            "casting fell behind the sensor's clock: packets went out up to {:.2} s late; a lighter world (--roadside voxels) or a lower --speed-factor keeps up",
            l.worst_lateness
        )));
    }
    let pcap = match tmp {
        Some(t) => {
            let target = t.target().display().to_string();
            t.commit().with_context(|| format!("writing {target}"))?;
            Some(target)
        }
        None => None,
    };
    let cast_seconds = cast_started.elapsed().as_secs_f64();
    progress.stage_end(&stage, Some(cast_seconds));
    let sensor_seconds = summary.packets as f64 * packet_time;
    Ok(LidarRun {
        sensor: lidar.beams.name.clone(),
        firings: summary.firings,
        rays: summary.rays,
        returns: summary.returns,
        data_packets: if pcap.is_some() || live.is_some() { data_packets } else { summary.packets },
        position_packets,
        revolutions: summary.revolutions,
        sensor_seconds,
        load_seconds,
        cast_seconds,
        real_time_factor: if cast_seconds > 0.0 { sensor_seconds / cast_seconds } else { 0.0 },
        world: loaded.stats,
        pcap,
        udp: live,
        las,
        las_points,
        mcap,
        mcap_messages,
    })
}
