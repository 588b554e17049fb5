//! `roadscan sim --zmq-connect | --zmq-bind | --udp-in | --udp-out | --shm`: the co-simulation
//! bridges of docs/bridges.md on a running simulation. Before each tick they take what other
//! processes sent (instructions, velocities or poses, controls); after it they publish the
//! tick (frames, pose updates and contact reports, state segments).
//!
//! Ids on the wire are u16: instance 0 is the ego, an actor's id is its decimal instance
//! number (actors of a scenario whose ids are not numbers are sent as 65535). Prefabs 1, 2 and
//! 3 are `car`, `pedestrian` and `box`.

use crate::simulate::{Flow, Link};
use anyhow::{anyhow, bail, Context, Result};
use bridges::shm::{Element, Kind, Layout, Meta, Segment};
use bridges::udp::{self, Format, Input};
use bridges::wire::{variable, ContactState, Frame, Instruction, ObjectState, Reply};
use bridges::zmq;
use simulation::{Event, External, Simulation, Spawn, Variable};
use std::path::PathBuf;
use std::time::Duration;

/// Which bridges run, from the flags or the scenario.
#[derive(Debug, Clone, Default)]
pub struct CosimConfig {
    /// `--zmq-connect tcp://HOST:PORT`: send each tick's frame to a REP server, wait for its reply.
    pub zmq_connect: Option<String>,
    /// `--zmq-bind tcp://HOST:PORT`: serve REQ clients' instructions.
    pub zmq_bind: Option<String>,
    /// How long to wait for a ZeroMQ peer before giving up.
    pub zmq_timeout: Option<Duration>,
    /// `--udp-in HOST:PORT[=ID]`: velocity or pose of the ego (or actor ID) in.
    pub udp_in: Vec<String>,
    /// `--udp-out HOST:PORT`: pose updates and contact reports out.
    pub udp_out: Vec<String>,
    /// `--udp-format`.
    pub udp_format: Format,
    /// `--shm NAME`: segments NAME.state and NAME.control.
    pub shm: Option<String>,
    /// Where segments live (/dev/shm unless a test says otherwise).
    pub shm_dir: Option<PathBuf>,
    /// Where the save instruction writes the state (its path argument is a file name beside it).
    pub state_file: Option<PathBuf>,
    /// `--pace X`: simulated time runs X times as fast as the wall clock (1 = real time), so
    /// peers sending at their own rate meet the ticks they mean; None runs unpaced.
    pub pace: Option<f64>,
    /// Put the last camera frame (R, G, B planes, column-major: the `NAME.image` payload) in
    /// each ZeroMQ frame's payload, as the seed sent it (`--zmq-payload camera`).
    pub zmq_payload_camera: bool,
}

impl CosimConfig {
    /// True when any bridge is configured.
    pub fn any(&self) -> bool {
        self.zmq_connect.is_some()
            || self.zmq_bind.is_some()
            || !self.udp_in.is_empty()
            || !self.udp_out.is_empty()
            || self.shm.is_some()
            || self.pace.is_some()
    }
}

/// The bridges as keys: the `[bridges]` table of a scenario file, or the bridge flags of
/// `roadscan sim` (one key a flag: `zmq_connect` is `--zmq-connect`, `udp_in` is `--udp-in`),
/// every key optional. [`BridgeKeys::over`] lays the flags over the file's keys, key by key;
/// [`BridgeKeys::config`] makes the bridges of them.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of bridge keys")]
pub struct BridgeKeys {
    /// `tcp://HOST:PORT`: the simulator as a REQ client of this REP server.
    pub zmq_connect: Option<String>,
    /// `tcp://HOST:PORT`: the simulator as a REP server.
    pub zmq_bind: Option<String>,
    /// Seconds to wait for a ZeroMQ peer (default 60).
    pub zmq_timeout: Option<f64>,
    /// `none` or `camera` (default none).
    pub zmq_payload: Option<String>,
    /// `HOST:PORT[=ID]`, one socket each (a string or a list of them in a file).
    #[serde(default, deserialize_with = "one_or_many")]
    pub udp_in: Option<Vec<String>>,
    /// `HOST:PORT`, one target each (a string or a list of them in a file).
    #[serde(default, deserialize_with = "one_or_many")]
    pub udp_out: Option<Vec<String>>,
    /// `text`, `f32le`, `f32be`, `f64le` or `f64be` (default text).
    pub udp_format: Option<String>,
    /// The shared-memory segments' name.
    pub shm: Option<String>,
    /// Simulated seconds per wall-clock second (1 = real time).
    pub pace: Option<f64>,
}

/// A string, or a list of strings.
fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged, expecting = "a string or a list of strings")]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(Some(match serde::Deserialize::deserialize(d)? {
        OneOrMany::One(s) => vec![s],
        OneOrMany::Many(v) => v,
    }))
}

/// A bridge key whose value is refused: the key (as in the scenario file) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadBridgeKey {
    /// The key (`udp_out`); its flag is the key with '-' for '_' (`--udp-out`).
    pub key: &'static str,
    /// Why, naming the value.
    pub message: String,
}

impl std::fmt::Display for BadBridgeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for BadBridgeKey {}

impl BridgeKeys {
    /// `self`'s keys where given, else `base`'s: the flags (`self`) win over the file (`base`)
    /// key by key. The ZeroMQ role is one choice: a flag giving `zmq_connect` or `zmq_bind`
    /// replaces both of the file's.
    pub fn over(self, base: BridgeKeys) -> BridgeKeys {
        let role = self.zmq_connect.is_some() || self.zmq_bind.is_some();
        BridgeKeys {
            zmq_connect: if role { self.zmq_connect } else { base.zmq_connect },
            zmq_bind: if role { self.zmq_bind } else { base.zmq_bind },
            zmq_timeout: self.zmq_timeout.or(base.zmq_timeout),
            zmq_payload: self.zmq_payload.or(base.zmq_payload),
            udp_in: self.udp_in.or(base.udp_in),
            udp_out: self.udp_out.or(base.udp_out),
            udp_format: self.udp_format.or(base.udp_format),
            shm: self.shm.or(base.shm),
            pace: self.pace.or(base.pace),
        }
    }

    /// True when a ZeroMQ bridge is given (its save instruction writes the state file).
    pub fn zmq(&self) -> bool {
        self.zmq_connect.is_some() || self.zmq_bind.is_some()
    }

    /// Checks every value without opening anything: endpoints and addresses are well formed
    /// (not resolved), the format and payload are known names, the numbers are in range.
    pub fn check(&self) -> Result<(), BadBridgeKey> {
        let bad = |key: &'static str, message: String| Err(BadBridgeKey { key, message });
        if self.zmq_connect.is_some() && self.zmq_bind.is_some() {
            return bad("zmq_bind", "give zmq_connect or zmq_bind, not both".into());
        }
        for (key, e) in [("zmq_connect", &self.zmq_connect), ("zmq_bind", &self.zmq_bind)] {
            if let Some(e) = e {
                zmq::check_endpoint(e).or_else(|e| bad(key, e.to_string()))?;
            }
        }
        if let Some(t) = self.zmq_timeout {
            if !(t.is_finite() && t > 0.0 && t <= 86_400.0) {
                return bad("zmq_timeout", format!("{t}: give seconds in (0, 86400]"));
            }
        }
        if let Some(p) = &self.zmq_payload {
            if !matches!(p.as_str(), "none" | "camera") {
                return bad("zmq_payload", format!("{p:?}: use none or camera"));
            }
        }
        for spec in self.udp_in.iter().flatten() {
            let (addr, id) = spec.split_once('=').map_or((spec.as_str(), None), |(a, i)| (a, Some(i)));
            udp::check_address(addr).or_else(|e| bad("udp_in", format!("{e} in {spec:?} (HOST:PORT[=ID])")))?;
            if id.is_some_and(|i| i.trim().is_empty()) {
                return bad("udp_in", format!("{spec:?}: the actor id after '=' is empty"));
            }
        }
        for addr in self.udp_out.iter().flatten() {
            udp::check_address(addr).or_else(|e| bad("udp_out", e.to_string()))?;
        }
        if let Some(f) = &self.udp_format {
            if Format::parse(f).is_none() {
                return bad("udp_format", format!("{f:?}: use text, f32le, f32be, f64le or f64be"));
            }
        }
        if let Some(n) = &self.shm {
            bridges::shm::check_name(n).or_else(|e| bad("shm", e.to_string()))?;
        }
        if let Some(p) = self.pace {
            if !(p.is_finite() && p > 0.0) {
                return bad("pace", format!("{p}: give a positive factor (1 = real time)"));
            }
        }
        Ok(())
    }

    /// The bridges of these keys (checked by [`BridgeKeys::check`]), the ZeroMQ save
    /// instruction writing `state_file`.
    pub fn config(&self, state_file: Option<PathBuf>) -> Result<CosimConfig, BadBridgeKey> {
        self.check()?;
        let udp_format = self.udp_format.as_deref().and_then(Format::parse).unwrap_or_default();
        Ok(CosimConfig {
            zmq_connect: self.zmq_connect.clone(),
            zmq_bind: self.zmq_bind.clone(),
            zmq_timeout: Some(Duration::from_secs_f64(self.zmq_timeout.unwrap_or(60.0))),
            udp_in: self.udp_in.clone().unwrap_or_default(),
            udp_out: self.udp_out.clone().unwrap_or_default(),
            udp_format,
            shm: self.shm.clone(),
            shm_dir: None,
            state_file,
            pace: self.pace,
            zmq_payload_camera: self.zmq_payload.as_deref() == Some("camera"),
        })
    }
}

/// Values of the state segment, in this order (f64 each).
pub const STATE_FIELDS: [&str; 16] = [
    "tick", "time", "x", "y", "z", "roll", "pitch", "heading", "speed", "s", "t", "lane", "steering", "throttle",
    "brake", "odometer",
];

/// The bridges of one run.
#[derive(Debug)]
pub struct Cosim {
    client: Option<zmq::Client>,
    server: Option<zmq::Server>,
    timeout: Duration,
    /// Ticks still to run before the server's tick reply.
    pending: u32,
    /// The client's peer said END.
    ended: bool,
    udp_in: Vec<(udp::Receiver, String)>,
    udp_out: Vec<udp::Sender>,
    state: Option<Segment>,
    control: Option<(Segment, u64)>,
    state_file: Option<PathBuf>,
    contacts: Vec<ContactState>,
    /// Instructions the client's peer sent in a reply, applied before the next tick.
    queued: Vec<Instruction>,
    pace: Option<(f64, std::time::Instant, f64)>,
    shm: Option<(PathBuf, String)>,
    lidar: Option<Segment>,
    image: Option<Segment>,
    payload_camera: bool,
    last_image: Vec<u8>,
    /// Messages refused (bad instructions, datagrams), for the summary.
    pub refused: u64,
}

fn instance_id(id: &str, ego: &str) -> u16 {
    if id == ego {
        0
    } else {
        id.parse().unwrap_or(u16::MAX)
    }
}

fn prefab_number(prefab: &str) -> u16 {
    match prefab {
        "car" => 1,
        "pedestrian" => 2,
        "box" => 3,
        _ => 0,
    }
}

impl Cosim {
    /// Opens every configured bridge.
    pub fn open(cfg: &CosimConfig) -> Result<Cosim> {
        let timeout = cfg.zmq_timeout.unwrap_or(Duration::from_secs(60));
        let client = match &cfg.zmq_connect {
            Some(e) => Some(zmq::Client::connect(e, timeout)?),
            None => None,
        };
        let server = match &cfg.zmq_bind {
            Some(e) => Some(zmq::Server::bind(e)?),
            None => None,
        };
        let mut udp_in = Vec::new();
        for spec in &cfg.udp_in {
            let (addr, id) = spec.split_once('=').map_or((spec.as_str(), None), |(a, i)| (a, Some(i)));
            udp_in.push((udp::Receiver::bind(addr, cfg.udp_format)?, id.unwrap_or("").to_string()));
        }
        let udp_out = cfg.udp_out.iter().map(|t| udp::Sender::to(t, cfg.udp_format)).collect::<Result<Vec<_>, _>>()?;
        let (state, control) = match &cfg.shm {
            Some(name) => {
                let dir = cfg.shm_dir.clone().unwrap_or_else(bridges::shm::default_dir);
                let s = Segment::create(&dir, &format!("{name}.state"), Kind::State, 8 * STATE_FIELDS.len())?;
                let c = Segment::create(&dir, &format!("{name}.control"), Kind::Control, 8 * 3)?;
                (Some(s), Some((c, 0)))
            }
            None => (None, None),
        };
        Ok(Cosim {
            client,
            server,
            timeout,
            pending: 0,
            ended: false,
            udp_in,
            udp_out,
            state,
            control,
            state_file: cfg.state_file.clone(),
            contacts: Vec::new(),
            queued: Vec::new(),
            pace: cfg.pace.filter(|p| p.is_finite() && *p > 0.0).map(|p| (p, std::time::Instant::now(), f64::NAN)),
            shm: cfg.shm.as_ref().map(|n| (cfg.shm_dir.clone().unwrap_or_else(bridges::shm::default_dir), n.clone())),
            lidar: None,
            image: None,
            payload_camera: cfg.zmq_payload_camera,
            last_image: Vec::new(),
            refused: 0,
        })
    }

    /// Valid UDP inputs received, over every socket.
    pub fn udp_received(&self) -> u64 {
        self.udp_in.iter().map(|(rx, _)| rx.received).sum()
    }

    /// The server's bound endpoint (with the port it chose), when serving.
    pub fn endpoint(&self) -> Option<&str> {
        self.server.as_ref().map(|s| s.endpoint())
    }

    /// Takes what peers sent before a tick; with a ZeroMQ server, waits for a tick instruction
    /// and answers every other one.
    pub fn before_tick(&mut self, sim: &mut Simulation) -> Result<Flow> {
        if self.ended {
            return Ok(Flow::Stop);
        }
        if let Some((factor, start, t0)) = &mut self.pace {
            // Wall time of the tick's start: the first tick sets the origin.
            if t0.is_nan() {
                (*start, *t0) = (std::time::Instant::now(), sim.time());
            }
            let due = (sim.time() - *t0) / *factor;
            let now = start.elapsed().as_secs_f64();
            if due > now {
                std::thread::sleep(Duration::from_secs_f64(due - now));
            }
        }
        for i in std::mem::take(&mut self.queued) {
            if self.apply(sim, i).is_err() {
                self.refused += 1;
            }
        }
        let ego = sim.scenario().ego.id.clone();
        for (rx, id) in &mut self.udp_in {
            let target = if id.is_empty() { ego.as_str() } else { id.as_str() };
            let before = rx.rejected.0;
            if let Some(last) = rx.drain().pop() {
                let motion = match last {
                    Input::Velocity(v) => External::Velocity(v),
                    Input::Pose(p) => External::Pose(p),
                };
                if sim.impose(target, Some(motion)).is_err() {
                    self.refused += 1;
                }
            }
            self.refused += rx.rejected.0 - before;
        }
        if let Some((seg, seen)) = &mut self.control {
            if let Some(snap) = seg.read(1000)? {
                if snap.sequence != *seen {
                    *seen = snap.sequence;
                    let v = bridges::shm::f64_values(&snap.payload);
                    if let [throttle, brake, steering, ..] = v[..] {
                        let ok = sim.set(&ego, Variable::Throttle, throttle).is_ok()
                            & sim.set(&ego, Variable::Brake, brake).is_ok()
                            & sim.set(&ego, Variable::Steering, steering).is_ok();
                        if !ok {
                            self.refused += 1;
                        }
                    }
                }
            }
        }
        if self.server.is_some() && self.pending == 0 {
            return self.serve(sim);
        }
        Ok(Flow::Continue)
    }

    /// Answers requests until one asks for ticks (or to stop).
    fn serve(&mut self, sim: &mut Simulation) -> Result<Flow> {
        loop {
            let Some(server) = self.server.as_mut() else { return Ok(Flow::Continue) };
            let msg = server
                .receive(self.timeout)?
                .ok_or_else(|| anyhow!("no ZeroMQ request within {:?} on {}", self.timeout, server.endpoint()))?;
            let reply = match msg.map_err(anyhow::Error::from).and_then(|m| Ok(Instruction::decode(&m)?)) {
                Ok(Instruction::Tick(n)) => {
                    self.pending = n;
                    return Ok(Flow::Continue);
                }
                Ok(Instruction::Stop) => {
                    let r = Reply::Ok(self.frame(sim)).encode();
                    if let Some(server) = self.server.as_mut() {
                        server.reply(r)?;
                    }
                    return Ok(Flow::Stop);
                }
                Ok(i) => match self.apply(sim, i) {
                    Ok(()) => Reply::Ok(self.frame(sim)),
                    Err(e) => {
                        self.refused += 1;
                        Reply::Error(format!("{e:#}"))
                    }
                },
                Err(e) => {
                    self.refused += 1;
                    Reply::Error(format!("{e:#}"))
                }
            };
            if let Some(server) = self.server.as_mut() {
                server.reply(reply.encode())?;
            }
        }
    }

    /// Applies a spawn, set or save instruction.
    fn apply(&mut self, sim: &mut Simulation, i: Instruction) -> Result<()> {
        let ego = sim.scenario().ego.id.clone();
        match i {
            Instruction::Spawn { prefab, instance, x, y } => {
                let prefab = match prefab {
                    1 => "car",
                    2 => "pedestrian",
                    3 => "box",
                    other => bail!("unknown prefab {other} (1 car, 2 pedestrian, 3 box)"),
                };
                if instance == 0 {
                    bail!("instance 0 is the ego");
                }
                let s = Spawn { id: instance.to_string(), prefab: prefab.into(), x, y, heading: 0.0, speed: 0.0 };
                sim.spawn(&s)?;
            }
            Instruction::Set { instance, values } => {
                let id = if instance == 0 { ego } else { instance.to_string() };
                for (var, value) in values {
                    let v = match var {
                        variable::STEERING => Variable::Steering,
                        variable::ACCELERATION => Variable::Acceleration,
                        variable::THROTTLE => Variable::Throttle,
                        variable::BRAKE => Variable::Brake,
                        variable::SPEED => Variable::Speed,
                        other => bail!("unknown variable {other} (1 steering .. 5 speed)"),
                    };
                    sim.set(&id, v, value)?;
                }
            }
            Instruction::Save(name) => {
                let base = self.state_file.clone().ok_or_else(|| anyhow!("no --state file to save to"))?;
                let path = match name {
                    None => base,
                    Some(n) if !n.is_empty() && !n.contains(['/', '\\']) && n != "." && n != ".." => {
                        base.parent().unwrap_or(std::path::Path::new(".")).join(n)
                    }
                    Some(n) => bail!("save name {n:?}: a file name beside the --state file, without directories"),
                };
                let json = sim.save()?;
                atomic::write_bytes_atomic(&path, json.as_bytes())
                    .with_context(|| format!("saving the state to {}", path.display()))?;
            }
            Instruction::Tick(_) | Instruction::Stop => {}
        }
        Ok(())
    }

    /// The frame of the simulation's current tick.
    pub fn frame(&self, sim: &Simulation) -> Frame {
        let ego_id = sim.scenario().ego.id.as_str();
        let e = sim.ego();
        let c = e.centre(&sim.scenario().vehicle);
        let mut objects = vec![ObjectState {
            id: 0,
            prefab: 1,
            position: [c[0], c[1], e.z],
            attitude: [e.roll, e.pitch, e.heading],
            speed: e.speed,
        }];
        for a in &sim.state().actors.actors {
            objects.push(ObjectState {
                id: instance_id(&a.id, ego_id),
                prefab: prefab_number(&a.prefab),
                position: [a.x, a.y, a.z],
                attitude: [0.0, 0.0, a.heading],
                speed: a.speed,
            });
        }
        let payload = if self.payload_camera { self.last_image.clone() } else { Vec::new() };
        Frame { tick: sim.tick(), time: sim.time(), objects, contacts: self.contacts.clone(), payload }
    }

    /// Publishes a tick: the server's reply when its ticks are done, the client's frame, UDP
    /// updates and the state segment.
    pub fn after_tick(&mut self, sim: &Simulation, events: &[Event]) -> Result<()> {
        let ego_id = sim.scenario().ego.id.clone();
        self.contacts = events
            .iter()
            .filter_map(|e| match e {
                Event::Collision(c) => Some(ContactState {
                    ids: [instance_id(&c.ids[0], &ego_id), instance_id(&c.ids[1], &ego_id)],
                    position: [c.position[0], c.position[1]],
                    relative_speed: c.relative_speed,
                }),
                _ => None,
            })
            .collect();
        let reply_due = self.server.is_some() && self.pending == 1;
        if self.server.is_some() && self.pending > 0 {
            self.pending -= 1;
        }
        // The tick's frame, made once for every bridge that sends it (it may carry an image).
        let frame = (reply_due || self.client.is_some() || !self.udp_out.is_empty()).then(|| self.frame(sim));
        if let (Some(f), Some(client)) = (&frame, self.client.as_mut()) {
            let reply = client.request(f.encode())?;
            match Instruction::decode(&reply) {
                Ok(Instruction::Stop) => self.ended = true,
                Ok(Instruction::Tick(_)) => {}
                Ok(i) => self.queued.push(i),
                Err(_) => self.refused += 1,
            }
        }
        if let (Some(f), false) = (&frame, self.udp_out.is_empty()) {
            let mut msgs: Vec<Vec<f64>> = f
                .objects
                .iter()
                .map(|o| {
                    let [x, y, z] = o.position;
                    let [r, p, h] = o.attitude;
                    udp::pose_values(o.id, f.tick, f.time, [x, y, z, r, p, h], o.speed)
                })
                .collect();
            msgs.extend(
                f.contacts.iter().map(|c| udp::contact_values(c.ids, f.tick, f.time, c.position, c.relative_speed)),
            );
            for tx in &self.udp_out {
                for m in &msgs {
                    tx.send(m)?;
                }
            }
        }
        if let Some(seg) = self.state.as_mut() {
            let r = sim.ego_record();
            let e = sim.ego();
            let c = e.centre(&sim.scenario().vehicle);
            let [s, t] = r.st.unwrap_or([f64::NAN; 2]);
            let v = [
                sim.tick() as f64,
                sim.time(),
                c[0],
                c[1],
                e.z,
                e.roll,
                e.pitch,
                e.heading,
                e.speed,
                s,
                t,
                r.lane.map_or(f64::NAN, f64::from),
                e.steering,
                e.throttle,
                e.brake,
                e.odometer,
            ];
            let meta = Meta {
                tick: sim.tick(),
                time: sim.time(),
                element: Element::F64,
                layout: Layout::RowMajor,
                shape: [STATE_FIELDS.len() as u32, 1, 1, 1],
            };
            seg.write(&meta, &bridges::shm::f64_bytes(&v))?;
        }
        // Last, so a peer the reply releases finds the state segment already at this tick.
        if let (true, Some(f), Some(server)) = (reply_due, frame, self.server.as_mut()) {
            server.reply(Reply::Ok(f).encode())?;
        }
        Ok(())
    }

    /// Ends the run: a tick request still open gets the last frame (so no peer waits on a
    /// simulation that has stopped), and the segments are removed.
    pub fn finish(&mut self, sim: &Simulation) -> Result<()> {
        if self.pending > 0 {
            let r = Reply::Ok(self.frame(sim)).encode();
            if let Some(s) = self.server.as_mut() {
                s.reply(r)?;
            }
            self.pending = 0;
        }
        if let Some(s) = self.state.take() {
            s.remove()?;
        }
        if let Some((c, _)) = self.control.take() {
            c.remove()?;
        }
        for s in [self.lidar.take(), self.image.take()].into_iter().flatten() {
            s.remove()?;
        }
        Ok(())
    }

    /// A sensor's product: a LiDAR revolution to `NAME.lidar` (u32 words, laser fastest, shape
    /// [lasers, firings]), a camera frame to `NAME.image` (u8 R, G, B planes column-major,
    /// shape [height, width, 3]); each segment is made at its first write, with room for the
    /// largest revolution or the frame.
    pub fn sensor(&mut self, sim: &Simulation, data: &crate::sim_sensors::SensorData) -> Result<()> {
        use crate::sim_sensors::SensorData;
        let wants_image = self.payload_camera && matches!(data, SensorData::Image(_));
        if self.shm.is_none() && !wants_image {
            return Ok(());
        }
        let (kind, suffix, element, shape, payload, room) = match data {
            SensorData::Revolution(r) => {
                let words = r.words();
                let room = 4 * r.lasers * r.most_firings.max(r.firings.len());
                (Kind::Lidar, "lidar", Element::U32, [r.lasers as u32, r.firings.len() as u32, 1, 1], words, room)
            }
            SensorData::Image(i) => {
                let planes = i.frame.rgb_planes();
                let room = planes.len();
                (Kind::Image, "image", Element::U8, [i.frame.height, i.frame.width, 3, 1], planes, room)
            }
        };
        let Some((dir, name)) = &self.shm else {
            self.last_image = payload;
            return Ok(());
        };
        let slot = if kind == Kind::Lidar { &mut self.lidar } else { &mut self.image };
        if slot.is_none() {
            *slot = Some(Segment::create(dir, &format!("{name}.{suffix}"), kind, room)?);
        }
        let meta = Meta { tick: sim.tick(), time: sim.time(), element, layout: Layout::ColumnMajor, shape };
        if let Some(seg) = slot.as_mut() {
            seg.write(&meta, &payload).with_context(|| format!("shared memory {name}.{suffix}"))?;
        }
        if wants_image {
            self.last_image = payload;
        }
        Ok(())
    }
}

impl Link for Cosim {
    fn before_tick(&mut self, sim: &mut Simulation) -> Result<Flow> {
        Cosim::before_tick(self, sim)
    }
    fn after_tick(&mut self, sim: &Simulation, events: &[Event]) -> Result<()> {
        Cosim::after_tick(self, sim, events)
    }
    fn finish(&mut self, sim: &Simulation) -> Result<()> {
        Cosim::finish(self, sim)
    }
    fn sensor(&mut self, sim: &Simulation, data: &crate::sim_sensors::SensorData) -> Result<()> {
        Cosim::sensor(self, sim, data)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// The flags win key by key; a flag's ZeroMQ role replaces the file's; the config takes
    /// the defaults of the keys not given.
    #[test]
    fn flags_win_over_the_file_key_by_key() {
        let file = BridgeKeys {
            zmq_connect: Some("tcp://127.0.0.1:5555".into()),
            udp_in: Some(vec!["127.0.0.1:9000".into()]),
            udp_out: Some(vec!["127.0.0.1:9001".into()]),
            udp_format: Some("f32be".into()),
            pace: Some(1.0),
            ..BridgeKeys::default()
        };
        let flags = BridgeKeys {
            udp_out: Some(vec!["127.0.0.1:9002".into(), "127.0.0.1:9003".into()]),
            pace: Some(2.0),
            ..BridgeKeys::default()
        };
        let k = flags.clone().over(file.clone());
        assert_eq!(k.udp_out, flags.udp_out);
        assert_eq!(k.pace, Some(2.0));
        assert_eq!((&k.udp_in, &k.udp_format, &k.zmq_connect), (&file.udp_in, &file.udp_format, &file.zmq_connect));
        let bind = BridgeKeys { zmq_bind: Some("tcp://127.0.0.1:0".into()), ..BridgeKeys::default() };
        let k = bind.over(file.clone());
        assert_eq!((k.zmq_connect, k.zmq_bind.as_deref()), (None, Some("tcp://127.0.0.1:0")));
        let c = file.config(None).unwrap();
        assert_eq!(c.udp_format, Format::F32Be);
        assert_eq!(c.zmq_timeout, Some(Duration::from_secs(60)));
        assert_eq!(c.udp_out, vec!["127.0.0.1:9001".to_string()]);
        assert!(c.any() && !c.zmq_payload_camera);
        assert!(!BridgeKeys::default().config(None).unwrap().any());
        let bad = BridgeKeys { udp_format: Some("xml".into()), ..file };
        assert_eq!(bad.config(None).unwrap_err().key, "udp_format");
    }
}
