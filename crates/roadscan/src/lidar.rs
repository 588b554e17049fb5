//! `roadscan lidar`: a virtual rotating LiDAR driven along a lane of a built world, its
//! returns written as Velodyne packets in a pcap file.

use crate::progress::{Progress, Stage};
use crate::sensor_path::{path_spec, CsvTrajectory, PathSpec, SensorPath, Shifted};
use crate::world_source::{self, WorldStats};
use anyhow::{anyhow, bail, Context, Result};
use sensors::pcap::{Endpoint, PcapWriter};
pub use sensors::udp::Pace;
use sensors::udp::{Outgoing, Sender};
pub use sensors::Epoch;
use sensors::{packet, BeamTable, Lidar};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
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
    /// Beam table: `hdl32e`, `vlp16`, `hdl64e`, or a TOML file (see [`read_beam_file`]).
    pub sensor: String,
    /// Revolutions a second.
    pub rate: f64,
    /// The path: `lane:ID` (the centre of that lane of the road) or a trajectory CSV (see
    /// [`crate::sensor_path`]).
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

/// The designed scene `name` (`demo`, or an OpenDRIVE file's road `road`) with `seed`.
pub(crate) fn scene_named(name: &str, road: Option<&str>, seed: u64) -> Result<sim::Scene> {
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

/// The beam table `sensor` names: `hdl32e`, `vlp16`, `hdl64e` or a TOML file.
pub fn beam_table(sensor: &str) -> Result<BeamTable> {
    if sensor.to_ascii_lowercase().ends_with(".toml") {
        return read_beam_file(Path::new(sensor));
    }
    BeamTable::named(sensor).ok_or_else(|| {
        anyhow!("--sensor {sensor}: known sensors are hdl32e, vlp16 and hdl64e, or a beam table FILE.toml")
    })
}

/// `duration` clipped to the trajectory's span, with a warning when it is.
pub(crate) fn clip_duration(duration: f64, csv: &CsvTrajectory, file: &Path, progress: &dyn Progress) -> f64 {
    let span = csv.length();
    if duration > span {
        progress.note(&crate::progress::Note::Warning(format!(
            "--duration {duration}: {} covers {span:.3} s; the run stops there",
            file.display()
        )));
        return span;
    }
    duration
}

/// Casts the sensor along the path and writes what the config asks for.
pub fn run(cfg: &LidarConfig, progress: &dyn Progress) -> Result<LidarRun> {
    let beams = beam_table(&cfg.sensor)?;
    if !beams.has_32_channel_blocks() && (cfg.pcap.is_some() || cfg.udp.is_some()) {
        bail!(
            "--sensor {}: {} lasers in {} block(s) a firing do not fit the HDL-32E/VLP-16 data packet (32 channels a block) that --pcap and --udp write; HDL-64E packets (upper and lower blocks, status bytes) are not written: use --las, --mcap, --ranges or --words",
            cfg.sensor,
            beams.lasers.len(),
            beams.blocks_per_firing
        );
    }
    if cfg.position_every == 0 {
        bail!("--position-every must be at least 1");
    }
    let spec = path_spec(&cfg.path)?;
    if matches!(spec, PathSpec::Csv(..)) && (cfg.start.is_some() || cfg.path_xodr.is_some()) {
        bail!("--path {}: --start and --path-xodr apply to a lane:ID path, not a trajectory file", cfg.path);
    }
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
    let (path, duration) = match spec {
        PathSpec::Csv(file, csv) => {
            let csv = csv.placed(loaded.odr.header.offset.unwrap_or_default());
            let duration = clip_duration(cfg.duration, &csv, &file, progress);
            (SensorPath::Csv(csv), duration)
        }
        PathSpec::Lane(lane) => {
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
            let lane_path = LanePath::new(eval, lane, start, cfg.speed, cfg.duration)
                .with_context(|| format!("--path {}", cfg.path))?;
            (SensorPath::Lane(Shifted { inner: lane_path, by: shift }), cfg.duration)
        }
    };
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
    let total_packets = (duration / packet_time + 1e-9).floor() as u64;
    let stage = Stage { index: 2, of: 2, what: "casting", len: Some(total_packets) };
    progress.stage(&stage);
    let cast_started = std::time::Instant::now();
    let (mut data_packets, mut position_packets) = (0u64, 0u64);
    let summary = lidar.run(&loaded.world, &path, (0.0, duration), threads, &mut |firings| {
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
                let nmea = packet::gprmc(&cfg.epoch, sent, lat_lon(pose.position), path.speed(sent, cfg.speed), course);
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

/// The most lasers a beam table may have.
pub const MOST_LASERS: usize = 128;

/// The keys of a beam table file.
pub const BEAM_KEYS: [&str; 10] = [
    "name",
    "lasers",
    "laser_dt",
    "cycle",
    "firings_per_block",
    "blocks_per_firing",
    "min_range",
    "max_range",
    "range_step",
    "product_id",
];

/// Reads a beam table from TOML: `name` (text), `laser_dt` and `cycle` (seconds: between two
/// lasers of a firing, and between two firings), `firings_per_block` (1 to 12) and optionally
/// `blocks_per_firing` (1 to 12, default 1; 12 x firings_per_block must be a multiple of it),
/// `min_range`, `max_range` and `range_step` (m), `product_id` (0 to 255), and `lasers`: an
/// array of tables (`[[lasers]]` or `lasers = [{...}, ...]`) in firing order, each with
/// `elevation` (degrees, -90 to 90) and optionally `azimuth` (the offset from the head's angle,
/// degrees, -360 to 360, default 0). 1 to 128 lasers; the lasers of a firing must fit in its
/// cycle. See data/sensors/hdl32e.toml.
pub fn read_beam_file(path: &Path) -> Result<BeamTable> {
    let file = path.display().to_string();
    let len = std::fs::metadata(path).with_context(|| format!("{file}: cannot read"))?.len();
    if len > 1 << 20 {
        bail!("{file}: {len} bytes is more than a beam table may have (1 MiB)");
    }
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|e| anyhow!("{}: byte {}: not UTF-8 text", path.display(), e.utf8_error().valid_up_to()))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| {
        let at = e.span().map_or(String::new(), |r| {
            let before = &text.as_bytes()[..r.start.min(text.len())];
            let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
            let column = before.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
            format!(":{line}:{column}")
        });
        anyhow!("{file}{at}: {}", e.message().trim_end().replace('\n', " "))
    })?;
    let bad = |key: &str, what: String| anyhow!("{file}: {key}: {what}");
    for k in table.keys() {
        if !BEAM_KEYS.contains(&k.as_str()) {
            return Err(bad(k, format!("unknown key (known: {})", BEAM_KEYS.join(", "))));
        }
    }
    let number = |t: &toml::Table, key: &str, name: &str, lo: f64, hi: f64, default: Option<f64>| -> Result<f64> {
        let x = match t.get(key) {
            None => return default.ok_or_else(|| bad(name, format!("missing (a number from {lo} to {hi})"))),
            Some(toml::Value::Float(f)) => *f,
            Some(toml::Value::Integer(i)) => *i as f64,
            Some(v) => return Err(bad(name, format!("expected a number, got {v}"))),
        };
        if !(x.is_finite() && x >= lo && x <= hi) {
            return Err(bad(name, format!("{x} is out of range ({lo} to {hi})")));
        }
        Ok(x)
    };
    let whole = |key: &str, lo: i64, hi: i64, default: Option<i64>| -> Result<i64> {
        match table.get(key) {
            None => default.ok_or_else(|| bad(key, format!("missing (a whole number from {lo} to {hi})"))),
            Some(toml::Value::Integer(i)) if (lo..=hi).contains(i) => Ok(*i),
            Some(v) => Err(bad(key, format!("expected a whole number from {lo} to {hi}, got {v}"))),
        }
    };
    let name = match table.get("name") {
        Some(toml::Value::String(s))
            if !s.is_empty() && s.len() <= 64 && s.chars().all(|c| c.is_ascii_graphic() || c == ' ') =>
        {
            s.clone()
        }
        Some(v) => return Err(bad("name", format!("expected 1 to 64 printable ASCII characters, got {v}"))),
        None => return Err(bad("name", "missing (the sensor's name)".into())),
    };
    let lasers = match table.get("lasers") {
        Some(toml::Value::Array(a)) => a,
        Some(v) => return Err(bad("lasers", format!("expected an array of tables [[lasers]], got {v}"))),
        None => return Err(bad("lasers", "missing: give 1 to 128 [[lasers]] with elevation (degrees)".into())),
    };
    if lasers.is_empty() || lasers.len() > MOST_LASERS {
        return Err(bad("lasers", format!("{} lasers: a table has 1 to {MOST_LASERS}", lasers.len())));
    }
    let mut out = Vec::with_capacity(lasers.len());
    for (i, l) in lasers.iter().enumerate() {
        let key = format!("lasers[{i}]");
        let toml::Value::Table(t) = l else {
            return Err(bad(&key, format!("expected a table {{ elevation = .., azimuth = .. }}, got {l}")));
        };
        for k in t.keys() {
            if !["elevation", "azimuth"].contains(&k.as_str()) {
                return Err(bad(&format!("{key}.{k}"), "unknown key (known: elevation, azimuth)".into()));
            }
        }
        let elevation = number(t, "elevation", &format!("{key}.elevation"), -90.0, 90.0, None)?;
        let azimuth = number(t, "azimuth", &format!("{key}.azimuth"), -360.0, 360.0, Some(0.0))?;
        out.push(sensors::Laser { elevation: elevation.to_radians(), azimuth_offset: azimuth.to_radians() });
    }
    let laser_dt = number(&table, "laser_dt", "laser_dt", 1e-9, 1e-3, None)?;
    let cycle = number(&table, "cycle", "cycle", 1e-9, 1.0, None)?;
    if laser_dt * out.len() as f64 > cycle {
        return Err(bad(
            "cycle",
            format!(
                "{cycle} s is shorter than its {} lasers at laser_dt {laser_dt} s ({} s)",
                out.len(),
                laser_dt * out.len() as f64
            ),
        ));
    }
    let firings_per_block = whole("firings_per_block", 1, 12, None)? as usize;
    let blocks_per_firing = whole("blocks_per_firing", 1, 12, Some(1))? as usize;
    if firings_per_block > 1 && blocks_per_firing > 1 || !(12 * firings_per_block).is_multiple_of(blocks_per_firing) {
        return Err(bad(
            "blocks_per_firing",
            format!("{blocks_per_firing} blocks a firing with {firings_per_block} firings a block do not tile a packet of 12 blocks"),
        ));
    }
    let min_range = number(&table, "min_range", "min_range", 0.0, 1e4, None)?;
    let max_range = number(&table, "max_range", "max_range", 0.0, 1e4, None)?;
    if max_range <= min_range {
        return Err(bad("max_range", format!("{max_range} m is not above min_range {min_range} m")));
    }
    let range_step = number(&table, "range_step", "range_step", 1e-4, 1.0, None)?;
    if max_range / range_step > u16::MAX as f64 {
        return Err(bad(
            "range_step",
            format!("{range_step} m steps do not reach max_range {max_range} m in 16 bits (65,535 steps)"),
        ));
    }
    let product_id = whole("product_id", 0, 255, None)? as u8;
    Ok(BeamTable {
        name,
        lasers: out,
        laser_dt,
        cycle,
        firings_per_block,
        blocks_per_firing,
        product_id,
        range_step,
        min_range,
        max_range,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn read(name: &str, text: &str) -> Result<BeamTable, String> {
        let dir = std::env::temp_dir().join(format!("roadscan-beams-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("beams.toml");
        std::fs::write(&path, text).unwrap();
        let r = read_beam_file(&path).map_err(|e| format!("{e:#}"));
        std::fs::remove_dir_all(&dir).unwrap();
        r
    }

    const HEAD: &str = "name = \"x\"\nlaser_dt = 1e-6\ncycle = 50e-6\nfirings_per_block = 1\nmin_range = 1\nmax_range = 100\nrange_step = 0.002\nproduct_id = 0x21\n";

    #[test]
    fn the_example_file_is_the_hdl32e() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/sensors/hdl32e.toml");
        assert_eq!(read_beam_file(&path).unwrap(), BeamTable::hdl32e());
        assert_eq!(beam_table(&path.display().to_string()).unwrap(), BeamTable::hdl32e());
        assert_eq!(beam_table("HDL-64E").unwrap().lasers.len(), 64);
        assert!(format!("{:#}", beam_table("hdl128").unwrap_err()).contains("hdl32e, vlp16 and hdl64e"));
    }

    #[test]
    fn a_table_with_azimuth_offsets() {
        let b =
            read("az", &format!("{HEAD}lasers = [{{elevation = -2, azimuth = 1.5}}, {{elevation = 3}}]\n")).unwrap();
        assert_eq!(b.lasers.len(), 2);
        assert!((b.lasers[0].azimuth_offset - 1.5f64.to_radians()).abs() < 1e-15);
        assert_eq!(b.lasers[1].azimuth_offset, 0.0);
        assert_eq!((b.product_id, b.blocks_per_firing), (0x21, 1));
    }

    #[test]
    fn bad_tables_name_the_file_and_the_key() {
        let one = "[[lasers]]\nelevation = 0\n";
        let cases = [
            (HEAD.to_string(), "lasers: missing"),
            (format!("{HEAD}lasers = []\n"), "lasers: 0 lasers"),
            (format!("{HEAD}lasers = 3\n"), "lasers: expected an array"),
            (format!("{HEAD}lasers = [1]\n"), "lasers[0]: expected a table"),
            (format!("{HEAD}[[lasers]]\nelevation = nan\n"), "lasers[0].elevation: NaN is out of range"),
            (format!("{HEAD}[[lasers]]\nelevation = 91\n"), "lasers[0].elevation: 91 is out of range"),
            (format!("{HEAD}{one}[[lasers]]\nelev = 1\n"), "lasers[1].elev: unknown key"),
            (format!("{HEAD}{one}[[lasers]]\nazimuth = 1\n"), "lasers[1].elevation: missing"),
            (format!("{HEAD}lasers = [{}]\n", vec!["{elevation = 0}"; 129].join(",")), "lasers: 129 lasers"),
            (format!("{}{one}{one}", HEAD.replace("cycle = 50e-6", "cycle = 1e-6")), "cycle: 0.000001 s is shorter"),
            (format!("{}{one}", HEAD.replace("laser_dt = 1e-6", "laser_dt = inf")), "laser_dt: inf is out of range"),
            (
                format!("{}{one}", HEAD.replace("firings_per_block = 1", "firings_per_block = 0")),
                "firings_per_block: expected",
            ),
            (format!("{HEAD}blocks_per_firing = 5\n{one}"), "blocks_per_firing: 5 blocks"),
            (format!("{}{one}", HEAD.replace("max_range = 100", "max_range = 1")), "max_range: 1 m is not above"),
            (
                format!("{}{one}", HEAD.replace("range_step = 0.002", "range_step = 0.0001")),
                "range_step: 0.0001 m steps",
            ),
            (format!("{}{one}", HEAD.replace("product_id = 0x21", "product_id = 256")), "product_id: expected"),
            (format!("{}{one}", HEAD.replace("name = \"x\"", "name = \"\"")), "name: expected"),
            (format!("{}{one}", HEAD.replace("name = \"x\"\n", "")), "name: missing"),
            (format!("rings = 3\n{HEAD}{one}"), "rings: unknown key"),
            (format!("{HEAD}[[lasers]\n"), "beams.toml:9:"),
        ];
        for (k, (text, want)) in cases.iter().enumerate() {
            let e = read(&format!("bad{k}"), text).expect_err(text);
            assert!(e.contains("beams.toml") && e.contains(want), "{text:?}: {e}");
            assert!(!e.contains('\n'), "one line: {e}");
        }
    }
}
