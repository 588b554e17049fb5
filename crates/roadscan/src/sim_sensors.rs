//! The LiDAR and camera of `roadscan sim --lidar --camera`: cast in the world the simulation
//! drives on, from the ego's pose, tick by tick.
//!
//! Each tick from t to t + dt the ego's body pose at both ends is known; [`TickPath`]
//! interpolates between them (position, heading, pitch and roll linearly). The LiDAR casts
//! exactly the firings of its clock (firing i at i x cycle) whose times fall in (t, t + dt]
//! (at the run's start, time 0 included), so a run gives the same firings, indices and noise as
//! one continuous sweep along the same poses ([`sensors::Lidar::cast_firings`]). A revolution
//! (the firings with floor(rate x time) = k) is handed on once the tick passes its end; a
//! revolution not complete at the end of the run is dropped. The camera renders frame k at
//! time k / rate from the pose at that time.
//!
//! What the sensors produce goes to every [`crate::simulate::Link`] through
//! [`crate::simulate::Link::sensor`]: the MCAP log writes `/lidar` and `/camera`, the
//! shared-memory bridge the `NAME.lidar` and `NAME.image` segments.

use crate::simulate::{SimConfig, WorldSource};
use crate::world_source::{self, Loaded, Roadside};
use anyhow::{anyhow, bail, Context, Result};
use sensors::camera::render;
use sensors::{Camera, Firing, Lidar, RayTable};
use simulation::Simulation;
use std::path::PathBuf;
use world::{Pose, Trajectory, V3};

/// The sensors of a run (none by default).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SimSensors {
    /// The LiDAR.
    pub lidar: Option<SimLidar>,
    /// The camera.
    pub camera: Option<SimCamera>,
    /// Threads casting and rendering (0: all cores).
    pub threads: usize,
}

impl SimSensors {
    /// Whether any sensor is on.
    pub fn any(&self) -> bool {
        self.lidar.is_some() || self.camera.is_some()
    }
}

/// A LiDAR on the ego.
#[derive(Debug, Clone, PartialEq)]
pub struct SimLidar {
    /// Beam table: `hdl32e`, `vlp16`, `hdl64e` or a TOML file.
    pub sensor: String,
    /// Revolutions a second.
    pub rate: f64,
    /// Height of the sensor above the ego's body origin (between the axles, on the road), m.
    pub height: f64,
}

impl Default for SimLidar {
    fn default() -> Self {
        SimLidar { sensor: "hdl32e".into(), rate: 10.0, height: 1.8 }
    }
}

/// A camera on the ego.
#[derive(Debug, Clone, PartialEq)]
pub struct SimCamera {
    /// A camera file (as `roadscan camera --camera`); default 640 x 480, 90 degrees, 1.6 m up.
    pub file: Option<PathBuf>,
    /// Frames a second.
    pub rate: f64,
}

impl Default for SimCamera {
    fn default() -> Self {
        SimCamera { file: None, rate: 10.0 }
    }
}

/// A completed LiDAR revolution.
#[derive(Debug, Clone, PartialEq)]
pub struct Revolution {
    /// k: its firings have floor(rate x time) = k.
    pub index: u64,
    /// Time of its first firing, s.
    pub time: f64,
    /// Lasers a firing.
    pub lasers: usize,
    /// The most firings a revolution of this sensor has.
    pub most_firings: usize,
    /// Its firings in time order.
    pub firings: Vec<Firing>,
    /// Its returns as a Foxglove point cloud's data (see `lidar_out`): x, y, z in the
    /// sensor's frame, time since `time`, ring, intensity.
    pub cloud: Vec<u8>,
}

impl Revolution {
    /// The seed's 32-bit word per beam (`sensors::reflect::word`, 0 without a return), laser
    /// fastest: firing f's laser j at index f x lasers + j, little-endian bytes.
    pub fn words(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 * self.lasers * self.firings.len());
        for f in &self.firings {
            for r in &f.returns {
                let w = if r.is_some() { sensors::reflect::word(r.range, r.reflectivity) } else { 0 };
                out.extend_from_slice(&w.to_le_bytes());
            }
        }
        out
    }
}

/// A rendered camera frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    /// k: rendered at time k / rate.
    pub index: u64,
    /// Its time, s.
    pub time: f64,
    /// The frame.
    pub frame: sensors::Frame,
}

/// What a sensor produced in a tick.
#[derive(Debug, Clone, PartialEq)]
pub enum SensorData {
    /// A LiDAR revolution.
    Revolution(Revolution),
    /// A camera frame.
    Image(Image),
}

/// The ego's body between two times: position, heading (the short way round), pitch and roll
/// interpolated linearly (and extrapolated past either end).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TickPath {
    /// Start time, s.
    pub t0: f64,
    /// End time, s.
    pub t1: f64,
    /// Position, heading, pitch, roll at `t0`.
    pub a: (V3, f64, f64, f64),
    /// The same at `t1`.
    pub b: (V3, f64, f64, f64),
}

impl TickPath {
    /// Standing at one pose.
    pub fn still(t: f64, p: (V3, f64, f64, f64)) -> TickPath {
        TickPath { t0: t, t1: t, a: p, b: p }
    }
}

impl Trajectory for TickPath {
    fn pose(&self, t: f64) -> Pose {
        let w = if self.t1 > self.t0 { (t - self.t0) / (self.t1 - self.t0) } else { 0.0 };
        let (pa, ya, pia, ra) = self.a;
        let (pb, yb, pib, rb) = self.b;
        let dy = (yb - ya + std::f64::consts::PI).rem_euclid(std::f64::consts::TAU) - std::f64::consts::PI;
        let mix = |x: f64, y: f64| x + w * (y - x);
        Pose::from_ypr([0, 1, 2].map(|k| mix(pa[k], pb[k])), ya + w * dy, mix(pia, pib), mix(ra, rb))
    }
    fn span(&self) -> (f64, f64) {
        (self.t0, self.t1)
    }
}

/// The ego's body pose (file frame): position between the axles at the heave height, heading,
/// pitch, roll.
pub fn ego_pose(sim: &Simulation) -> (V3, f64, f64, f64) {
    let e = sim.ego();
    let p = e.pose(&sim.scenario().vehicle);
    (p.position, e.heading, e.pitch, e.roll)
}

struct LidarState {
    lidar: Lidar,
    rings: Vec<u16>,
    next: u64,
    current: Option<Revolution>,
}

struct CameraState {
    cam: Camera,
    rays: RayTable,
    rate: f64,
    next: u64,
}

/// The sensors on a run: the world loaded to cast in, and what each has cast so far.
pub struct SensorRig {
    loaded: Loaded,
    lidar: Option<LidarState>,
    camera: Option<CameraState>,
    threads: usize,
    last: Option<(f64, (V3, f64, f64, f64))>,
    /// Firings cast.
    pub firings: u64,
    /// Revolutions handed on.
    pub revolutions: u64,
    /// Frames rendered.
    pub frames: u64,
    /// Wall seconds casting and rendering.
    pub seconds: f64,
}

impl std::fmt::Debug for SensorRig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SensorRig")
            .field("firings", &self.firings)
            .field("frames", &self.frames)
            .finish_non_exhaustive()
    }
}

/// The world `cfg`'s sensors cast in: the same road and scene the simulation drives on.
fn world_of(cfg: &SimConfig) -> Result<Loaded> {
    match &cfg.world {
        WorldSource::Build(dir) => world_source::from_build_with(dir, Roadside::default())
            .with_context(|| format!("--world {}: the sensors' world", dir.display())),
        WorldSource::Scene { name, seed, .. } => {
            let scene = crate::lidar::scene_named(name, cfg.road.as_deref(), *seed)?;
            world_source::from_scene(&scene).with_context(|| format!("--scene {name}: the sensors' world"))
        }
        WorldSource::Xodr(p) => bail!(
            "--xodr {}: --lidar and --camera need a world to cast in (a road surface with its roadside): use --world DIR (a build) or --scene NAME",
            p.display()
        ),
    }
}

impl SensorRig {
    /// The sensors `cfg` asks for, with their world loaded; `None` without sensors.
    pub fn open(cfg: &SimConfig) -> Result<Option<SensorRig>> {
        let s = &cfg.sensors;
        if !s.any() {
            return Ok(None);
        }
        let lidar = match &s.lidar {
            Some(l) => {
                let beams = crate::lidar::beam_table(&l.sensor).map_err(|e| anyhow!("--lidar: {e:#}"))?;
                if !(l.height.is_finite() && (-100.0..=100.0).contains(&l.height)) {
                    bail!("--lidar-height {}: must lie in -100..100 m", l.height);
                }
                let lidar = Lidar {
                    beams,
                    rate_hz: l.rate,
                    mount: Pose { position: [0.0, 0.0, l.height], ..Pose::IDENTITY },
                    ..Lidar::hdl32e()
                };
                lidar.check().map_err(|e| anyhow!("--lidar {} at --lidar-rate {}: {e}", l.sensor, l.rate))?;
                let rings = lidar.beams.rings();
                Some(LidarState { lidar, rings, next: 0, current: None })
            }
            None => None,
        };
        let camera = match &s.camera {
            Some(c) => {
                if !(c.rate.is_finite() && (0.01..=1000.0).contains(&c.rate)) {
                    bail!("--camera-rate {}: must lie in 0.01..1000 frames a second", c.rate);
                }
                let ccfg = crate::camera::CameraConfig { camera: c.file.clone(), ..Default::default() };
                let spec = crate::camera::camera_spec(&ccfg)?;
                let cam = Camera { distortion: spec.distortion, ..Camera::new(spec.intrinsics, spec.mount()) };
                cam.check().context("the camera's settings")?;
                let rays = cam.rays();
                Some(CameraState { cam, rays, rate: c.rate, next: 0 })
            }
            None => None,
        };
        let loaded = world_of(cfg)?;
        let threads =
            if s.threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { s.threads };
        Ok(Some(SensorRig {
            loaded,
            lidar,
            camera,
            threads,
            last: None,
            firings: 0,
            revolutions: 0,
            frames: 0,
            seconds: 0.0,
        }))
    }

    /// The LiDAR, when on.
    pub fn lidar(&self) -> Option<&Lidar> {
        self.lidar.as_ref().map(|l| &l.lidar)
    }

    /// The world cast in.
    pub fn world(&self) -> &Loaded {
        &self.loaded
    }

    /// The state the run starts from: at time 0 the firing and frame at 0 are cast from the
    /// start pose, else the sensors start after it.
    pub fn start(&mut self, sim: &Simulation) -> Result<Vec<SensorData>> {
        let t = sim.time();
        let pose = ego_pose(sim);
        self.last = Some((t, pose));
        if let Some(l) = &mut self.lidar {
            l.next = if t <= 0.0 { 0 } else { (t / l.lidar.beams.cycle + 1e-9).floor() as u64 + 1 };
        }
        if let Some(c) = &mut self.camera {
            c.next = if t <= 0.0 { 0 } else { (t * c.rate + 1e-9).floor() as u64 + 1 };
        }
        if t <= 0.0 {
            return self.cast(&TickPath::still(t, pose), t);
        }
        Ok(Vec::new())
    }

    /// After a tick: what the sensors produced between the last state and this one.
    pub fn after_tick(&mut self, sim: &Simulation) -> Result<Vec<SensorData>> {
        let (t1, b) = (sim.time(), ego_pose(sim));
        let Some((t0, a)) = self.last.replace((t1, b)) else { return self.start(sim) };
        self.cast(&TickPath { t0, t1, a, b }, t1)
    }

    /// Casts what falls up to `until` (inclusive) along `path`.
    fn cast(&mut self, path: &TickPath, until: f64) -> Result<Vec<SensorData>> {
        let started = std::time::Instant::now();
        let mut out = Vec::new();
        if let Some(l) = &mut self.lidar {
            let cycle = l.lidar.beams.cycle;
            let last = (until / cycle + 1e-9).floor() as u64;
            if last + 1 > l.next {
                let count = usize::try_from(last + 1 - l.next).map_err(|_| anyhow!("too many firings in a tick"))?;
                let firings =
                    l.lidar.cast_firings(&self.loaded.world, path, l.next, count, self.threads).context("the LiDAR")?;
                self.firings += firings.len() as u64;
                l.next = last + 1;
                for f in firings {
                    let k = (l.lidar.rate_hz * f.time + 1e-9).floor() as u64;
                    if l.current.as_ref().is_some_and(|r| r.index != k) {
                        out.extend(l.current.take().map(SensorData::Revolution));
                    }
                    let r = l.current.get_or_insert_with(|| Revolution {
                        index: k,
                        time: f.time,
                        lasers: l.lidar.beams.lasers.len(),
                        most_firings: (1.0 / (l.lidar.rate_hz * cycle)).ceil() as usize + 1,
                        firings: Vec::new(),
                        cloud: Vec::new(),
                    });
                    crate::lidar_out::cloud_points(&l.lidar, &l.rings, &f, r.time, &mut r.cloud);
                    r.firings.push(f);
                }
            }
            // Complete once the next firing belongs to the next revolution.
            let next_k = (l.lidar.rate_hz * (l.next as f64 * cycle) + 1e-9).floor() as u64;
            if l.current.as_ref().is_some_and(|r| r.index != next_k) {
                out.extend(l.current.take().map(SensorData::Revolution));
            }
        }
        if let Some(c) = &mut self.camera {
            while (c.next as f64) / c.rate <= until + 1e-9 {
                let time = c.next as f64 / c.rate;
                let frame = render(&self.loaded.world, &c.cam, &c.rays, &path.pose(time), time, self.threads)
                    .context("the camera")?;
                out.push(SensorData::Image(Image { index: c.next, time, frame }));
                c.next += 1;
            }
        }
        self.revolutions += out.iter().filter(|d| matches!(d, SensorData::Revolution(_))).count() as u64;
        self.frames += out.iter().filter(|d| matches!(d, SensorData::Image(_))).count() as u64;
        self.seconds += started.elapsed().as_secs_f64();
        Ok(out)
    }
}
