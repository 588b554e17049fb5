//! `roadscan sim`: the closed-loop simulation on a world, its logs written.

use crate::exit;
use crate::progress::Bars;
use anyhow::{anyhow, bail, Result};
use roadscan::cosim::BridgeKeys;
use roadscan::simulate::{Override, SimConfig, WorldSource, DEFAULT_SCENE_GRID};
use std::path::PathBuf;

/// `sim --help`'s examples.
pub const EXAMPLES: &str = "Examples:
  roadscan sim --scene demo --route lane:-1 --duration 20 --tick 0.01 --csv ego.csv --mcap sim.mcap
  roadscan sim data/sim/demo.toml --scene demo --csv ego.csv --events events.jsonl --gps-nmea gps.nmea
  roadscan demo --out demo && roadscan sim --world demo --route lane:-1 --duration 15 --gps-csv gps.csv --json
  roadscan sim --xodr curves.xodr --route lane:-1 --duration 60 --stop-at-route-end --csv ego.csv
  roadscan sim --scene demo --route lane:-1 --set driver.cruise_speed=8 --set gps.sigma_xy=0.02 --set scene_objects=false --gps-nmea gps.nmea
  roadscan sim --scene demo --route lane:-1 --save-at 500 --state at500.json --csv a.csv
  roadscan sim --scene demo --route lane:-1 --resume at500.json --csv b.csv
  roadscan sim --scene demo --route lane:-1 --zmq-connect tcp://127.0.0.1:5555     (a REP server replies Ack or END to each frame)
  roadscan sim --scene demo --duration 600 --zmq-bind tcp://127.0.0.1:5556 --state saved.json
  roadscan sim --scene demo --pace 1 --udp-in 127.0.0.1:8000 --udp-out 127.0.0.1:8001 --udp-format f64le
  roadscan sim --scene demo --pace 1 --shm car1     (segments /dev/shm/car1.state and car1.control)
  roadscan sim bridged.toml --scene demo --udp-out 127.0.0.1:9002     (the file's [bridges] keys, its udp_out replaced)
  roadscan sim --scene demo --route lane:-1 --duration 5 --lidar hdl32e --camera --mcap sim.mcap
  roadscan sim --scene demo --route lane:-1 --lidar vlp16 --camera cam.toml --camera-rate 20 --shm car1     (also car1.lidar and car1.image)

Every key of the scenario file is also a flag: --set KEY=VALUE (dotted keys, TOML values); flags win over the file.
The bridges can be chosen in the scenario's [bridges] table too, one key a flag (zmq_connect, zmq_bind, zmq_timeout, zmq_payload, udp_in, udp_out, udp_format, shm, pace); a bridge flag wins over its key.
The bridges' wire formats (ZeroMQ instructions and frames, UDP values, shared-memory header) are in docs/bridges.md;
python/roadscan_bridges.py is a client of each.";

/// The arguments of `sim`.
#[derive(clap::Args, Debug)]
pub struct SimArgs {
    /// The scenario (TOML: tick, duration, vehicle, model, ego, route, driver, script, prefabs,
    /// actors, gps, scene_objects, walls, and the [bridges] table of the bridge flags' keys;
    /// every key optional).
    pub scenario: Option<PathBuf>,
    /// The output directory of `roadscan build` or `roadscan demo` (road.xodr and its CRG tiles).
    #[arg(long, conflicts_with_all = ["scene", "xodr"], required_unless_present_any = ["scene", "xodr"])]
    pub world: Option<PathBuf>,
    /// A designed scene: `demo`, or an OpenDRIVE file (its --road): the designed surface as a
    /// CRG, the scene's poles, trees and parked car as obstacles, its curbs and building fronts
    /// as walls.
    #[arg(long, conflicts_with = "xodr")]
    pub scene: Option<String>,
    /// Seed of the --scene (the same as its `synth` or `demo`).
    #[arg(long, default_value_t = 1)]
    pub scene_seed: u64,
    /// Node spacing of the --scene's surface, m.
    #[arg(long, default_value_t = DEFAULT_SCENE_GRID)]
    pub scene_grid: f64,
    /// An OpenDRIVE file alone (its <surface><CRG> files read beside it).
    #[arg(long)]
    pub xodr: Option<PathBuf>,
    /// The road to drive (default: the first).
    #[arg(long)]
    pub road: Option<String>,
    /// Tick length, s (scenario key `tick`).
    #[arg(long)]
    pub tick: Option<f64>,
    /// Seconds to simulate (`duration`).
    #[arg(long)]
    pub duration: Option<f64>,
    /// The route: lane:ID legs, in order (`route`; repeat the flag for more legs).
    #[arg(long, allow_hyphen_values = true)]
    pub route: Vec<String>,
    /// The ego's initial speed, m/s (`ego.speed`).
    #[arg(long)]
    pub speed: Option<f64>,
    /// The driver's cruise speed, m/s (`driver.cruise_speed`).
    #[arg(long)]
    pub cruise_speed: Option<f64>,
    /// GPS fixes a second (`gps.rate`).
    #[arg(long)]
    pub gps_rate: Option<f64>,
    /// Any scenario key: KEY=VALUE with a dotted key and a TOML value (`gps.sigma_xy=0.02`,
    /// `ego.lane=1`, `scene_objects=false`); repeatable, applied in order.
    #[arg(long = "set", value_name = "KEY=VALUE", allow_hyphen_values = true)]
    pub set: Vec<String>,
    /// The ego's state per tick as CSV: time,x,y,z,roll,pitch,heading,speed,s,t,lane (map frame).
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// MCAP with Foxglove schemas: FrameTransforms on /tf, LocationFix on /gps, Log on /collisions.
    #[arg(long)]
    pub mcap: Option<PathBuf>,
    /// The GPS's NMEA sentences ($GPGGA and $GPRMC a fix).
    #[arg(long)]
    pub gps_nmea: Option<PathBuf>,
    /// The GPS's fixes as CSV: time,utc,x,y,z,latitude,longitude,speed,heading (map frame).
    #[arg(long)]
    pub gps_csv: Option<PathBuf>,
    /// The events (collisions, arrivals, route completion) as JSON lines.
    #[arg(long)]
    pub events: Option<PathBuf>,
    /// Save the state at this tick (to --state).
    #[arg(long, requires = "state")]
    pub save_at: Option<u64>,
    /// The file the state is saved to (by --save-at, or by a ZeroMQ save instruction).
    #[arg(long)]
    pub state: Option<PathBuf>,
    /// Resume from a state saved by --save-at (same scenario and world).
    #[arg(long)]
    pub resume: Option<PathBuf>,
    /// End when the route is complete.
    #[arg(long)]
    pub stop_at_route_end: bool,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// ZeroMQ, the seed's layout: send each tick's frame to this REP server and wait for its
    /// reply (`Ack` runs the next tick, `END` stops, an instruction is applied first).
    #[arg(long, value_name = "tcp://HOST:PORT", conflicts_with = "zmq_bind")]
    pub zmq_connect: Option<String>,
    /// ZeroMQ, as a REP server: REQ clients send instructions (tick, spawn, set, save, stop),
    /// each answered with the current frame or an error.
    #[arg(long, value_name = "tcp://HOST:PORT")]
    pub zmq_bind: Option<String>,
    /// Seconds to wait for a ZeroMQ peer before giving up [default: 60].
    #[arg(long, value_name = "SECONDS")]
    pub zmq_timeout: Option<f64>,
    /// UDP in: velocity (3 values) or pose (6 values) of the ego, or of actor ID with
    /// HOST:PORT=ID; repeatable, one socket each.
    #[arg(long, value_name = "HOST:PORT[=ID]")]
    pub udp_in: Vec<String>,
    /// UDP out: a pose update per object and a report per contact, each tick; repeatable.
    #[arg(long, value_name = "HOST:PORT")]
    pub udp_out: Vec<String>,
    /// The UDP values: text (comma-separated), f32le, f32be, f64le or f64be [default: text].
    #[arg(long, value_name = "FORMAT")]
    pub udp_format: Option<String>,
    /// Shared memory: segments NAME.state (written each tick) and NAME.control (throttle,
    /// brake, steering; written by a client) under /dev/shm.
    #[arg(long, value_name = "NAME")]
    pub shm: Option<String>,
    /// Run the simulated clock at this multiple of the wall clock (1 = real time).
    #[arg(long, value_name = "FACTOR")]
    pub pace: Option<f64>,
    /// A LiDAR on the ego: hdl32e, vlp16, hdl64e or a beam table FILE.toml. Its revolutions go
    /// to --mcap (/lidar) and --shm (NAME.lidar). Needs --world or --scene.
    #[arg(long, value_name = "SENSOR")]
    pub lidar: Option<String>,
    /// The LiDAR's revolutions a second.
    #[arg(long, default_value_t = 10.0, requires = "lidar")]
    pub lidar_rate: f64,
    /// The LiDAR's height above the ego's body origin (on the road between the axles), m.
    #[arg(long, default_value_t = 1.8, requires = "lidar")]
    pub lidar_height: f64,
    /// A camera on the ego: its file (as `roadscan camera --camera`), or without one 640 x 480,
    /// 90 degrees, 1.6 m up. Its frames go to --mcap (/camera) and --shm (NAME.image).
    #[arg(long, value_name = "CAM.toml", num_args = 0..=1, default_missing_value = "")]
    pub camera: Option<String>,
    /// The camera's frames a second.
    #[arg(long, default_value_t = 10.0, requires = "camera")]
    pub camera_rate: f64,
    /// Threads casting and rendering (0: all cores).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// What the ZeroMQ frames carry as payload: `none`, or `camera` (the last camera frame as
    /// R, G, B planes column-major, as the seed sent it) [default: none].
    #[arg(long, value_name = "none|camera")]
    pub zmq_payload: Option<String>,
}

/// The bridge flags given, as keys of a scenario's `[bridges]` table.
pub fn bridge_flags(a: &SimArgs) -> BridgeKeys {
    BridgeKeys {
        zmq_connect: a.zmq_connect.clone(),
        zmq_bind: a.zmq_bind.clone(),
        zmq_timeout: a.zmq_timeout,
        zmq_payload: a.zmq_payload.clone(),
        udp_in: (!a.udp_in.is_empty()).then(|| a.udp_in.clone()),
        udp_out: (!a.udp_out.is_empty()).then(|| a.udp_out.clone()),
        udp_format: a.udp_format.clone(),
        shm: a.shm.clone(),
        pace: a.pace,
    }
}

/// The bridges of these arguments: the flags over the scenario's `[bridges]` keys (`file`),
/// key by key.
pub fn cosim(a: &SimArgs, file: BridgeKeys) -> Result<roadscan::cosim::CosimConfig> {
    let flags = bridge_flags(a);
    flags.check().map_err(|e| anyhow!("--{} {}", e.key.replace('_', "-"), e.message))?;
    let keys = flags.clone().over(file);
    if a.state.is_some() && a.save_at.is_none() && !keys.zmq() {
        bail!("--state is written by --save-at or by a ZeroMQ save instruction: give one of them");
    }
    if keys.zmq_payload.as_deref() == Some("camera") && a.camera.is_none() {
        match (&flags.zmq_payload, &a.scenario) {
            (None, Some(f)) => bail!("{}: bridges.zmq_payload = \"camera\": give --camera too", f.display()),
            _ => bail!("--zmq-payload camera: give --camera too"),
        }
    }
    keys.config(a.state.clone()).map_err(|e| anyhow!("bridges.{e}"))
}

/// The configuration of these arguments, and the scenario's `[bridges]` keys.
pub fn config(a: &SimArgs) -> Result<(SimConfig, BridgeKeys)> {
    let world = match (&a.world, &a.scene, &a.xodr) {
        (Some(w), None, None) => WorldSource::Build(w.clone()),
        (None, Some(s), None) => WorldSource::Scene { name: s.clone(), seed: a.scene_seed, grid: a.scene_grid },
        (None, None, Some(x)) => WorldSource::Xodr(x.clone()),
        _ => bail!("give one of --world DIR, --scene NAME or --xodr FILE"),
    };
    let mut o = Vec::new();
    if let Some(v) = a.tick {
        o.push(Override::new("tick", v));
    }
    if let Some(v) = a.duration {
        o.push(Override::new("duration", v));
    }
    if !a.route.is_empty() {
        o.push(Override::new("route", a.route.clone()));
    }
    if let Some(v) = a.speed {
        o.push(Override::new("ego.speed", v));
    }
    if let Some(v) = a.cruise_speed {
        o.push(Override::new("driver.cruise_speed", v));
    }
    if let Some(v) = a.gps_rate {
        o.push(Override::new("gps.rate", v));
    }
    for s in &a.set {
        o.push(Override::parse(s)?);
    }
    let (scenario, bridges) = roadscan::simulate::scenario_and_bridges(a.scenario.as_deref(), &o)?;
    let cfg = SimConfig {
        world,
        road: a.road.clone(),
        scenario,
        scenario_file: a.scenario.clone(),
        csv: a.csv.clone(),
        mcap: a.mcap.clone(),
        gps_nmea: a.gps_nmea.clone(),
        gps_csv: a.gps_csv.clone(),
        events: a.events.clone(),
        save_at: a.save_at,
        state: a.save_at.and(a.state.clone()),
        resume: a.resume.clone(),
        stop_at_route_end: a.stop_at_route_end,
        sensors: roadscan::simulate::SimSensors {
            lidar: a.lidar.as_ref().map(|l| roadscan::simulate::SimLidar {
                sensor: l.clone(),
                rate: a.lidar_rate,
                height: a.lidar_height,
            }),
            camera: a.camera.as_ref().map(|c| roadscan::simulate::SimCamera {
                file: (!c.is_empty()).then(|| PathBuf::from(c)),
                rate: a.camera_rate,
            }),
            threads: a.threads,
        },
    };
    Ok((cfg, bridges))
}

/// Runs `sim`.
pub fn run(a: &SimArgs, progress: &Bars) -> Result<u8> {
    let (cfg, file_bridges) = config(a)?;
    let bridges = cosim(a, file_bridges)?;
    let r = if bridges.any() {
        let mut link = roadscan::cosim::Cosim::open(&bridges)?;
        let r = roadscan::simulate::run(&cfg, &mut [&mut link], progress)?;
        if !progress.quiet() && !a.json {
            eprintln!("roadscan: bridges: {} UDP inputs taken, {} messages refused", link.udp_received(), link.refused);
        }
        r
    } else {
        roadscan::simulate::run(&cfg, &mut [], progress)?
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else if !progress.quiet() {
        eprintln!(
            "roadscan: simulated {:.2} s in {} ticks (from tick {}) at {}x real time; the ego drove {:.1} m{}; {} collision(s), {} GPS fixes",
            r.sim_seconds,
            r.ticks,
            r.first_tick,
            // Two decimals below 10x (a run with sensors is near real time), none above.
            if r.real_time_factor < 10.0 {
                format!("{:.2}", r.real_time_factor)
            } else {
                format!("{:.0}", r.real_time_factor)
            },
            r.odometer,
            r.route_complete.map(|t| format!(", route complete at {t:.2} s")).unwrap_or_default(),
            r.collisions.len(),
            r.gps_fixes
        );
        for c in &r.collisions {
            eprintln!(
                "roadscan: collision at {:.2} s (tick {}): {} and {} at ({:.2}, {:.2}), {:.2} m/s",
                c.time, c.tick, c.ids[0], c.ids[1], c.position[0], c.position[1], c.relative_speed
            );
        }
        for f in &r.written {
            eprintln!("roadscan: wrote {f}");
        }
    }
    Ok(exit::OK)
}
