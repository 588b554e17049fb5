//! `roadscan sim`: route following on the demo scene and on esmini's curves (lateral deviation
//! from the CSV), a wheel in the surveyed pothole of the world built from the demo survey, the
//! same bytes on every run and thread count, save and resume, the parked car's collision (in
//! the designed scene, and as a built obstacle in the built world), the curb, facade and
//! roadside walls' contacts, and the MCAP read back.

use foxglove::messages::{FrameTransform, LocationFix, Log};
use foxglove::Decode;
use roadscan::simulate::{Scenario, SimWorld, WorldSource};
use roadscan_tests::Scratch;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn roadscan(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_roadscan"));
    c.args(args).stdin(Stdio::null());
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("run roadscan")
}

fn ok(args: &[&str]) -> Output {
    let o = roadscan(args, &[]);
    assert!(o.status.success(), "roadscan {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    o
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// A CSV row of the ego log.
#[derive(Debug, Clone, PartialEq)]
struct Row {
    time: f64,
    x: f64,
    y: f64,
    heading: f64,
    s: Option<f64>,
    t: Option<f64>,
    lane: Option<i32>,
}

fn rows(path: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(path).expect("CSV");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("time,x,y,z,roll,pitch,heading,speed,s,t,lane"));
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 11, "{l}");
            let num = |i: usize| f[i].parse::<f64>().expect("number");
            let opt = |i: usize| (!f[i].is_empty()).then(|| num(i));
            Row {
                time: num(0),
                x: num(1),
                y: num(2),
                heading: num(6),
                s: opt(8),
                t: opt(9),
                lane: (!f[10].is_empty()).then(|| f[10].parse().expect("lane")),
            }
        })
        .collect()
}

/// RMS and largest deviation of the CSV's planar t from the centre of `lane` of `road`, and
/// whether every row is in that lane.
fn deviation(csv: &Path, road: &opendrive::Road, lane: i32) -> (f64, f64, usize) {
    let eval = opendrive::RoadEval::new(road);
    let rows = rows(csv);
    let (mut sum, mut worst) = (0.0, 0.0f64);
    for r in &rows {
        let (st, tt) = (r.s.expect("on the road"), r.t.expect("on the road"));
        assert_eq!(r.lane, Some(lane), "t = {}: left the lane at s = {st}", r.time);
        let centre = simulation::driver::lane_centre_t(&eval, lane, st).expect("lane") * eval.superelevation(st).cos();
        sum += (tt - centre).powi(2);
        worst = worst.max((tt - centre).abs());
    }
    ((sum / rows.len() as f64).sqrt(), worst, rows.len())
}

fn events(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .expect("events")
        .lines()
        .map(|l| serde_json::from_str(l).expect("JSON line"))
        .collect()
}

/// Lane -1 of the demo scene (its designed surface, the parked car and poles as obstacles):
/// the route completes, the body stays in its lane, RMS deviation <= 0.2 m.
#[test]
fn the_ego_completes_lane_minus_one_of_the_demo_scene() {
    let d = Scratch::new("cli-sim-demo");
    let (csv, ev) = (d.join("ego.csv"), d.join("events.jsonl"));
    let args =
        ["sim", "-q", "--scene", "demo", "--route", "lane:-1", "--duration", "40", "--stop-at-route-end", "--csv"];
    ok(&[&args[..], &[s(&csv), "--events", s(&ev)]].concat());
    let odr = opendrive::read_file(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/opendrive/demo.xodr"))
        .expect("demo.xodr");
    let (rms, worst, n) = deviation(&csv, &odr.roads[0], -1);
    eprintln!("demo lane -1: RMS {rms:.4} m, largest {worst:.4} m over {n} rows");
    assert!(rms <= 0.2, "RMS {rms} m");
    let e = events(&ev);
    assert_eq!(e.iter().filter(|e| e["event"] == "route_complete").count(), 1, "{e:?}");
    // The driver keeps the body off the curbs (0.12 m, at the lane's outer border).
    let walls: Vec<_> = e.iter().filter(|e| e["ids"][1].as_str().is_some_and(|i| i.starts_with("wall:"))).collect();
    assert!(walls.is_empty(), "{walls:?}");
}

/// esmini's curves.xodr through --xodr: lane -1 of its first road completed, RMS <= 0.2 m.
#[test]
#[roadscan_tests::needs_shared_data]
fn the_ego_completes_lane_minus_one_of_esmini_curves() {
    let d = Scratch::new("cli-sim-curves");
    let xodr = roadscan_tests::shared_data().join("opendrive/esmini/curves.xodr");
    let (csv, ev) = (d.join("ego.csv"), d.join("events.jsonl"));
    ok(&[
        "sim",
        "-q",
        "--xodr",
        s(&xodr),
        "--route",
        "lane:-1",
        "--duration",
        "120",
        "--stop-at-route-end",
        "--csv",
        s(&csv),
        "--events",
        s(&ev),
    ]);
    let odr = opendrive::read_file(&xodr).expect("curves.xodr");
    let (rms, worst, n) = deviation(&csv, &odr.roads[0], -1);
    eprintln!("curves lane -1: RMS {rms:.4} m, largest {worst:.4} m over {n} rows");
    assert!(rms <= 0.2, "RMS {rms} m");
    assert_eq!(events(&ev).iter().filter(|e| e["event"] == "route_complete").count(), 1);
}

/// The oriented rectangle of a body: centre, heading, half length and width.
fn overlap(a: ([f64; 2], f64, [f64; 2]), b: ([f64; 2], f64, [f64; 2])) -> bool {
    let corners = |(c, h, half): ([f64; 2], f64, [f64; 2])| {
        let (sn, cs) = f64::sin_cos(h);
        [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]
            .map(|(u, v)| [c[0] + u * half[0] * cs - v * half[1] * sn, c[1] + u * half[0] * sn + v * half[1] * cs])
    };
    let (ca, cb) = (corners(a), corners(b));
    for h in [a.1, b.1] {
        for axis in [[h.cos(), h.sin()], [-h.sin(), h.cos()]] {
            let proj = |c: &[[f64; 2]; 4]| {
                let d: Vec<f64> = c.iter().map(|p| p[0] * axis[0] + p[1] * axis[1]).collect();
                (d.iter().copied().fold(f64::INFINITY, f64::min), d.iter().copied().fold(f64::NEG_INFINITY, f64::max))
            };
            let ((a0, a1), (b0, b1)) = (proj(&ca), proj(&cb));
            if a1 < b0 || b1 < a0 {
                return false;
            }
        }
    }
    true
}

/// The drive along lane -1 of the demo scene passes the car parked at s = 128 m, t = -3.1 m
/// half a metre into its lane: one collision with it, at the first tick whose CSV pose puts
/// the ego's box (4.6 x 1.8 m about its centre) over the car's (4.5 x 1.8 m), at a place in
/// both boxes.
#[test]
fn the_drive_into_the_parked_car_reports_one_collision_at_its_tick_and_place() {
    let d = Scratch::new("cli-sim-car");
    let (csv, ev, json) = (d.join("ego.csv"), d.join("events.jsonl"), d.join("summary.json"));
    let o = ok(&[
        "sim",
        "--scene",
        "demo",
        "--route",
        "lane:-1",
        "--duration",
        "40",
        "--csv",
        s(&csv),
        "--events",
        s(&ev),
        "--json",
        "-q",
    ]);
    std::fs::write(&json, &o.stdout).expect("summary");
    let hits: Vec<_> = events(&ev).into_iter().filter(|e| e["event"] == "collision").collect();
    let car: Vec<_> =
        hits.iter().filter(|e| e["ids"][1].as_str().is_some_and(|i| i.starts_with("object:car"))).collect();
    assert_eq!(car.len(), 1, "{hits:?}");
    assert_eq!(hits.len(), 1, "only the car (no curb, no facade): {hits:?}");
    let c = car[0];
    assert_eq!(c["ids"][0], "ego");
    // The car's box in the map frame, from the scene's road.
    let scene = sim::Scene::demo(1);
    let road = scene.road();
    let off = scene.odr.header.offset.expect("offset");
    let p = road.pose(128.0);
    let (sn, cs) = p.hdg.sin_cos();
    let centre = off.placement().to_map([p.x + 3.1 * sn, p.y - 3.1 * cs, 0.0]);
    let car_box = ([centre[0], centre[1]], p.hdg + off.hdg, [2.25, 0.9]);
    let v = simulation::VehicleParams::default();
    let rows = rows(&csv);
    // The CSV's position is midway between the axles; the box's centre lies ahead of it.
    let ahead = v.centre_ahead() - 0.5 * v.wheelbase;
    let ego_box = |r: &Row| {
        ([r.x + ahead * r.heading.cos(), r.y + ahead * r.heading.sin()], r.heading, [0.5 * v.length, 0.5 * v.width])
    };
    let first = rows.iter().position(|r| overlap(ego_box(r), car_box)).expect("the ego reaches the car");
    assert_eq!(c["tick"].as_u64(), Some(first as u64), "collision tick (row {first} at {} s)", rows[first].time);
    let at = [c["position"][0].as_f64().expect("x"), c["position"][1].as_f64().expect("y")];
    let r = &rows[first];
    let grow = |b: ([f64; 2], f64, [f64; 2])| (b.0, b.1, [b.2[0] + 0.01, b.2[1] + 0.01]);
    let point = (at, 0.0, [0.0, 0.0]);
    assert!(overlap(grow(car_box), point), "contact {at:?} off the car");
    assert!(overlap(grow(ego_box(r)), point), "contact {at:?} off the ego");
    eprintln!("collision at tick {first} ({} s) at {at:?}", r.time);
}

/// The same scenario (GPS noise, a walking actor) gives the same CSV and MCAP bytes on two runs
/// and with RAYON_NUM_THREADS 1 and 2; saving at tick 700 and resuming gives the rows of the
/// uninterrupted run from that tick on. The MCAP has its three channels and Foxglove schemas.
#[test]
fn runs_are_byte_identical_and_resume_continues_the_same_rows() {
    let d = Scratch::new("cli-sim-determinism");
    let scenario = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/sim/demo.toml");
    let run = |tag: &str, threads: &str, extra: &[&str]| -> (Vec<u8>, Vec<u8>) {
        let (csv, mcap) = (d.join(format!("{tag}.csv")), d.join(format!("{tag}.mcap")));
        let mut args = vec!["sim", "-q", scenario, "--scene", "demo", "--csv", s(&csv), "--mcap", s(&mcap)];
        args.extend_from_slice(extra);
        let o = roadscan(&args, &[("RAYON_NUM_THREADS", threads)]);
        assert!(o.status.success(), "{tag}: {}", String::from_utf8_lossy(&o.stderr));
        (std::fs::read(&csv).expect("csv"), std::fs::read(&mcap).expect("mcap"))
    };
    let a = run("a", "2", &[]);
    let b = run("b", "2", &[]);
    let one = run("one", "1", &[]);
    assert!(a == b, "two runs differ");
    assert!(a == one, "1 and 2 threads differ");

    let state = d.join("state.json");
    let saved = run("saved", "2", &["--save-at", "700", "--state", s(&state)]);
    assert_eq!(saved, a, "saving changes nothing");
    let (tail, _) = run("resumed", "2", &["--resume", s(&state)]);
    let full = String::from_utf8(a.0.clone()).expect("utf-8");
    let tail = String::from_utf8(tail).expect("utf-8");
    let full: Vec<&str> = full.lines().collect();
    let tail: Vec<&str> = tail.lines().collect();
    assert_eq!(full.len(), 2001 + 1, "header and ticks 0..=2000");
    assert_eq!(tail[0], full[0]);
    assert_eq!(&tail[1..], &full[701..], "resumed rows");

    // The MCAP read back (the reader checks the CRCs).
    let mut per: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut children = BTreeMap::<String, usize>::new();
    let mut fixes = 0;
    let mut last = 0;
    for m in mcap::MessageStream::new(&a.1).expect("MCAP stream") {
        let m = m.expect("message");
        let schema = m.channel.schema.as_ref().expect("schema");
        assert_eq!((schema.encoding.as_str(), m.channel.message_encoding.as_str()), ("protobuf", "protobuf"));
        assert!(m.log_time >= last, "messages in time order");
        last = m.log_time;
        *per.entry((m.channel.topic.clone(), schema.name.clone())).or_default() += 1;
        match m.channel.topic.as_str() {
            "/tf" => {
                let f = FrameTransform::decode(&m.data[..]).expect("FrameTransform");
                assert_eq!(f.parent_frame_id, "map");
                *children.entry(f.child_frame_id).or_default() += 1;
            }
            "/gps" => {
                let f = LocationFix::decode(&m.data[..]).expect("LocationFix");
                assert!((f.latitude - 47.0).abs() < 1.0 && (f.longitude - 19.0).abs() < 1.5, "{f:?}");
                fixes += 1;
            }
            "/collisions" => {
                Log::decode(&m.data[..]).expect("Log");
            }
            other => panic!("unexpected topic {other}"),
        }
    }
    assert_eq!(per.get(&("/tf".into(), "foxglove.FrameTransform".into())), Some(&(2 * 2001)), "{per:?}");
    assert_eq!(children.get("ego"), Some(&2001));
    assert_eq!(children.get("walker"), Some(&2001));
    assert_eq!(fixes, 200, "10 Hz over 20 s");
    let summary = mcap::read::Summary::read(&a.1).expect("summary").expect("a summary section");
    let topics: BTreeMap<String, String> = summary
        .channels
        .values()
        .map(|c| (c.topic.clone(), c.schema.as_ref().map(|s| s.name.clone()).unwrap_or_default()))
        .collect();
    let want: BTreeMap<String, String> =
        roadscan::simulate::MCAP_CHANNELS.iter().map(|(t, s)| (t.to_string(), s.to_string())).collect();
    assert_eq!(topics, want);
}

/// The world built from the demo survey: the ego stands with its front left wheel over the
/// truth pothole (s = 75 m, t = 1.6 m of the truth road, 5 cm deep, flat-bottomed within 0.7
/// of its radii): the wheel stands the truth depth (within 2 mm) below the surface around the
/// pothole (the mean of sixteen points around it at 1.2 of its radii: four points put the
/// asphalt's texture, a millimetre RMS, into the rim's height, 3 mm off on one realisation).
#[test]
fn a_wheel_in_the_surveyed_pothole_drops_by_its_truth_depth() {
    let d = Scratch::new("cli-sim-pothole");
    let out = d.join("demo");
    ok(&["demo", "--out", s(&out), "-q"]);
    let world = SimWorld::load(&WorldSource::Build(out.clone()), None).expect("the built world");
    assert!(world.crg_count() >= 1, "CRG tiles");
    let surface = world.surface().expect("surface");
    let truth = opendrive::read_file(out.join("survey/truth/road.xodr")).expect("truth road");
    let truth_road = opendrive::RoadEval::new(&truth.roads[0]);
    let (to, bo) = (truth.header.offset.unwrap_or_default(), world.offset());
    // Truth planar (s, t) -> the built road's file frame.
    let at = |s: f64, t: f64| {
        let p = truth_road.pose(s);
        let (sn, cs) = p.hdg.sin_cos();
        let m = to.placement().to_map([p.x - t * sn, p.y + t * cs, 0.0]);
        bo.placement().to_file(m)
    };
    let scene = sim::Scene::demo(1);
    let pothole = scene.surface.potholes[0];
    let centre = at(pothole.s, pothole.t);
    let heading = truth_road.pose(pothole.s).hdg + to.hdg - bo.hdg;
    let v = simulation::VehicleParams::default();
    let (sn, cs) = heading.sin_cos();
    // The front left wheel is wheelbase ahead and half a track left of the rear axle.
    let (x, y) = (centre[0] - v.wheelbase * cs + 0.5 * v.track * sn, centre[1] - v.wheelbase * sn - 0.5 * v.track * cs);
    let mut sc = Scenario { duration: 0.1, ..Scenario::default() };
    (sc.ego.x, sc.ego.y, sc.ego.heading) = (Some(x), Some(y), Some(heading));
    let mut sim = world.simulation(&surface, sc).expect("scenario");
    sim.step();
    let wheel = sim.ego().wheels[0];
    let rim: Vec<f64> = (0..16)
        .map(|k| {
            let (b, a) = (f64::from(k) * std::f64::consts::TAU / 16.0).sin_cos();
            let p = at(pothole.s + a * pothole.radius_s * 1.2, pothole.t + b * pothole.radius_t * 1.2);
            surface.height(p[0], p[1]).expect("on the road")
        })
        .collect();
    let drop = rim.iter().sum::<f64>() / rim.len() as f64 - wheel;
    // The same measure on the designed surface.
    let troad = scene.road();
    let tz = |s: f64, t: f64| scene.z(&troad, s, t).expect("designed");
    let truth_drop = [(0.8, 0.0), (-0.8, 0.0), (0.0, 0.8), (0.0, -0.8)]
        .iter()
        .map(|(a, b)| tz(pothole.s + a * pothole.radius_s * 1.2, pothole.t + b * pothole.radius_t * 1.2))
        .sum::<f64>()
        / 4.0
        - tz(pothole.s, pothole.t);
    eprintln!(
        "pothole: wheel drop {drop:.4} m in the built world, {truth_drop:.4} m on the designed surface, depth {}",
        pothole.depth
    );
    assert!((drop - pothole.depth).abs() <= 0.002, "drop {drop} m vs depth {} m", pothole.depth);
}

/// Bad input: one error line naming the problem, exit code 2, nothing written.
#[test]
fn bad_input_is_one_error_line_and_nothing_written() {
    let d = Scratch::new("cli-sim-bad");
    let csv = d.join("ego.csv");
    let bad = d.join("bad.toml");
    std::fs::write(&bad, "duration = 2\n[gps]\nrat = 5\n").expect("write");
    let cases: [(&[&str], &str); 6] = [
        (&["--scene", "demo", "--set", "durration=3"], "durration"),
        (&["--scene", "demo", "--route", "lane:-7"], "no lane -7"),
        (&["--world", "/nonexistent-roadscan"], "no road.xodr"),
        (&["--scene", "demo", "--tick", "-1"], "tick"),
        (&["--scene", "demo", "--duration", "1", "--save-at", "101", "--state", "s.json"], "--save-at 101"),
        (&[s(&bad), "--scene", "demo"], "rat"),
    ];
    for (args, want) in cases {
        let o = roadscan(&[&["sim", "-q", "--csv", s(&csv)], args].concat(), &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("roadscan: error: ") && err.contains(want), "{args:?}: {err}");
        assert!(!csv.exists(), "{args:?} wrote the CSV");
    }
    let help = ok(&["sim", "--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("roadscan sim --scene demo --route lane:-1"));
}

/// A link (as a co-simulation bridge is) sees every tick, sets the ego's throttle before tick
/// 10 and stops the run before tick 50; the CSV log, a link too, has the rows of ticks 0..=50.
#[test]
fn a_link_drives_the_ego_and_stops_the_run() {
    use roadscan::simulate::{Flow, Link, SimConfig};
    struct Pedal {
        seen: Vec<u64>,
        events: usize,
    }
    impl Link for Pedal {
        fn before_tick(&mut self, sim: &mut roadscan::simulate::Simulation) -> anyhow::Result<Flow> {
            if sim.tick() == 10 {
                sim.set("ego", simulation::Variable::Throttle, 40.0)?;
            }
            Ok(if sim.tick() == 50 { Flow::Stop } else { Flow::Continue })
        }
        fn after_tick(
            &mut self,
            sim: &roadscan::simulate::Simulation,
            events: &[roadscan::simulate::Event],
        ) -> anyhow::Result<()> {
            self.seen.push(sim.tick());
            self.events += events.len();
            Ok(())
        }
    }
    let d = Scratch::new("cli-sim-link");
    let csv = d.join("ego.csv");
    let mut sc = Scenario { duration: 5.0, ..Scenario::default() };
    sc.ego.s = 10.0;
    let cfg = SimConfig { scenario: sc, csv: Some(csv.clone()), ..SimConfig::default() };
    let mut pedal = Pedal { seen: Vec::new(), events: 0 };
    let r = roadscan::simulate::run(&cfg, &mut [&mut pedal], &roadscan::Silent).expect("run");
    assert!(r.stopped_by_link);
    assert_eq!((r.ticks, r.last_tick), (50, 50));
    assert_eq!(pedal.seen, (1..=50).collect::<Vec<u64>>());
    assert_eq!(pedal.events as u64, r.gps_fixes, "the GPS's 5 fixes are the only events");
    let rows = rows(&csv);
    assert_eq!(rows.len(), 51);
    assert_eq!((rows[10].x, rows[10].y), (rows[0].x, rows[0].y), "at rest before the throttle");
    assert!(rows[50].x != rows[10].x, "the throttle moved the ego");
}

/// Hostile scenarios and saved states (found by `hostile --only scenario/,simstate/`): a tick
/// that would make 5e11 ticks, a NaN GPS noise, bytes that are not UTF-8, a nesting deeper
/// than toml's limit, an actor with an unknown prefab, a resumed tick past the run's end, a
/// script position past the script and duplicate actor ids are each one error line naming the
/// file and the key or place; nothing is written.
#[test]
fn hostile_scenarios_and_states_are_refused_by_file_and_place() {
    let d = Scratch::new("cli-sim-hostile");
    let csv = d.join("ego.csv");
    let base = "tick = 0.01\nduration = 0.5\n";
    let walker = "[[actors]]\nid = \"walker\"\nprefab = \"pedestrian\"\nx = 57.5\ny = 17.9\n";
    let cases: [(&str, Vec<u8>, &str); 6] = [
        ("tiny-tick.toml", b"tick = 1e-12\n".to_vec(), "more than the 10000000"),
        ("gps-nan.toml", format!("{base}[gps]\nsigma_xy = nan\n").into_bytes(), "gps.sigma_xy"),
        ("utf8.toml", b"tick = 0.01\n# \xff\n".to_vec(), "line 2, byte 14"),
        ("deep.toml", format!("{} = 1\n", vec!["a"; 50_000].join(".")).into_bytes(), "deep.toml:1"),
        ("prefab.toml", format!("{base}{}", walker.replace("pedestrian", "tank")).into_bytes(), "actors[0].prefab"),
        (
            "target.toml",
            format!("{base}{walker}[[script]]\ntime = 0\ntarget = \"ghost\"\nvariable = \"speed\"\nvalue = 1\n")
                .into_bytes(),
            "script[0].target",
        ),
    ];
    for (name, bytes, want) in cases {
        let f = d.join(name);
        std::fs::write(&f, bytes).expect("write");
        let o = roadscan(&["sim", "-q", "--scene", "demo", s(&f), "--csv", s(&csv)], &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(name) && err.contains(want), "{name}: {err}");
        assert!(!csv.exists(), "{name} wrote the CSV");
    }
    // A state saved at tick 10 of a 50-tick run, then changed.
    let sc = d.join("sc.toml");
    std::fs::write(&sc, format!("{base}{walker}")).expect("write");
    let state = d.join("state.json");
    ok(&["sim", "-q", "--scene", "demo", s(&sc), "--save-at", "10", "--state", s(&state)]);
    let text = std::fs::read_to_string(&state).expect("state");
    let list = {
        let a = text.find("\"actors\":[{").expect("actors") + "\"actors\":[".len();
        let b = text.find("]},\"contacts\"").expect("contacts");
        (a, b)
    };
    let twice = format!("{}{},{}{}", &text[..list.0], &text[list.0..list.1], &text[list.0..list.1], &text[list.1..]);
    let states = [
        ("past.json", text.replacen("\"tick\":10", "\"tick\":51", 1), "tick 51 is past"),
        ("script.json", text.replacen("\"script_next\":0", "\"script_next\":5", 1), "script_next 5"),
        ("twice.json", twice, "actors[1].id"),
    ];
    for (name, body, want) in states {
        let f = d.join(name);
        std::fs::write(&f, body).expect("write");
        let o = roadscan(&["sim", "-q", "--scene", "demo", s(&sc), "--resume", s(&f), "--csv", s(&csv)], &[]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(name) && err.contains(want), "{name}: {err}");
        assert!(!csv.exists(), "{name} wrote the CSV");
    }
}

/// The corners of an oriented rectangle (centre, heading, half length and width).
fn corners((c, h, half): ([f64; 2], f64, [f64; 2])) -> [[f64; 2]; 4] {
    let (sn, cs) = h.sin_cos();
    [(1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)]
        .map(|(u, v)| [c[0] + u * half[0] * cs - v * half[1] * sn, c[1] + u * half[0] * sn + v * half[1] * cs])
}

/// The ego starts in lane -1 of the demo scene at s = 5 m, 8 m/s, its steering held at -0.05
/// (a 95 m radius to the right): it crosses the right curb (0.12 m high at the outer border of
/// lane -1) onto the sidewalk. One collision, with `wall:curb:1:-2:0`, at the tick (within one)
/// whose CSV pose first puts a corner of the ego's box beyond the border (the road's own
/// inverse and lane borders), within 0.1 m of that corner, at the ego's speed; with
/// `walls=false` none.
#[test]
fn a_drive_off_lane_minus_one_into_the_curb_reports_one_wall_contact() {
    let d = Scratch::new("cli-sim-curb");
    let sc = d.join("curb.toml");
    std::fs::write(
        &sc,
        "duration = 4.0\n[ego]\ns = 5.0\nlane = -1\nspeed = 8.0\n[[script]]\ntime = 0.0\nvariable = \"steering\"\nvalue = -0.05\n",
    )
    .expect("scenario");
    let (csv, ev) = (d.join("ego.csv"), d.join("events.jsonl"));
    ok(&["sim", "-q", s(&sc), "--scene", "demo", "--csv", s(&csv), "--events", s(&ev)]);
    let hits: Vec<_> = events(&ev).into_iter().filter(|e| e["event"] == "collision").collect();
    assert_eq!(hits.len(), 1, "{hits:?}");
    let c = &hits[0];
    assert_eq!((c["ids"][0].as_str(), c["ids"][1].as_str()), (Some("ego"), Some("wall:curb:1:-2:0")));

    let scene = sim::Scene::demo(1);
    let road = scene.road();
    let off = scene.odr.header.offset.expect("offset");
    let v = simulation::VehicleParams::default();
    let ahead = v.centre_ahead() - 0.5 * v.wheelbase;
    let rows = rows(&csv);
    // Each row's box corners in the file frame, and how far each lies beyond the border.
    let beyond = |r: &Row| -> Vec<([f64; 2], f64)> {
        let b = (
            [r.x + ahead * r.heading.cos(), r.y + ahead * r.heading.sin()],
            r.heading,
            [0.5 * v.length, 0.5 * v.width],
        );
        corners(b)
            .iter()
            .map(|p| {
                let f = off.placement().to_file([p[0], p[1], 0.0]);
                let st = road.xy_to_st(f[0], f[1], 50.0).expect("on the road");
                let border = road.lane_borders(st.s).iter().find(|l| l.0 == -1).expect("lane -1").1;
                (*p, border - st.t)
            })
            .collect()
    };
    let first = rows.iter().position(|r| beyond(r).iter().any(|c| c.1 >= 0.0)).expect("the ego crosses the curb");
    let tick = c["tick"].as_u64().expect("tick") as i64;
    assert!((tick - first as i64).abs() <= 1, "collision tick {tick}, first crossing at row {first}");
    let corner = beyond(&rows[first]).into_iter().max_by(|a, b| a.1.total_cmp(&b.1)).expect("corners").0;
    let at = [c["position"][0].as_f64().expect("x"), c["position"][1].as_f64().expect("y")];
    let miss = (at[0] - corner[0]).hypot(at[1] - corner[1]);
    eprintln!("curb contact at tick {tick} (first crossing row {first}), {miss:.4} m from the crossing corner");
    assert!(miss <= 0.1, "contact {at:?}, corner {corner:?}: {miss} m apart");
    let speed = c["relative_speed"].as_f64().expect("speed");
    assert!((speed - 8.0).abs() < 0.1, "relative speed {speed} (the ego's)");

    let ev_off = d.join("off.jsonl");
    ok(&["sim", "-q", s(&sc), "--scene", "demo", "--set", "walls=false", "--events", s(&ev_off)]);
    assert!(events(&ev_off).iter().all(|e| e["event"] != "collision"), "walls=false");
}

/// A pedestrian crossing the demo road from its left sidewalk (data/sim/demo.toml's walker,
/// 1.2 m/s, 0.5 x 0.5 m) steps over both curbs and walks into the right building front (at
/// planar t = -9.5 m): one collision, `walker` with `wall:facade:1`, at the tick (within one)
/// when its box first reaches the facade's line (its straight path, planar t of its corners),
/// on that line (within 1 cm) and in its box (within 1 cm), at its speed.
#[test]
fn a_pedestrian_walking_into_a_facade_reports_one_contact() {
    let d = Scratch::new("cli-sim-facade");
    let sc = d.join("walk.toml");
    let (x0, y0, h, v) = (57.5, 17.9, -1.17f64, 1.2);
    std::fs::write(
        &sc,
        format!("duration = 14.0\n[[actors]]\nid = \"walker\"\nprefab = \"pedestrian\"\nx = {x0}\ny = {y0}\nheading = {h}\nspeed = {v}\n"),
    )
    .expect("scenario");
    let ev = d.join("events.jsonl");
    ok(&["sim", "-q", s(&sc), "--scene", "demo", "--events", s(&ev)]);
    let hits: Vec<_> = events(&ev).into_iter().filter(|e| e["event"] == "collision").collect();
    assert_eq!(hits.len(), 1, "{hits:?}");
    let c = &hits[0];
    assert_eq!((c["ids"][0].as_str(), c["ids"][1].as_str()), (Some("walker"), Some("wall:facade:1")));

    let scene = sim::Scene::demo(1);
    let surface = simulation::RoadSurface::new(&scene.odr.roads[0]);
    let off = scene.odr.header.offset.expect("offset");
    let walker = |k: u64| {
        let d = v * k as f64 * 0.01;
        ([x0 + d * h.cos(), y0 + d * h.sin()], h, [0.25, 0.25])
    };
    let reach = |k: u64| {
        corners(walker(k))
            .iter()
            .map(|p| surface.planar_st(p[0], p[1]).expect("on the road").1)
            .fold(f64::INFINITY, f64::min)
    };
    let first = (0..1400).find(|&k| reach(k) <= scene.facades.right).expect("the walker reaches the facade");
    let tick = c["tick"].as_u64().expect("tick");
    assert!(tick.abs_diff(first) <= 1, "collision tick {tick}, first reach at tick {first}");
    let at = off.placement().to_file([
        c["position"][0].as_f64().expect("x"),
        c["position"][1].as_f64().expect("y"),
        c["position"][2].as_f64().expect("z"),
    ]);
    let t = surface.planar_st(at[0], at[1]).expect("on the road").1;
    assert!((t - scene.facades.right).abs() <= 0.01, "contact at planar t {t}");
    let grow = |b: ([f64; 2], f64, [f64; 2])| (b.0, b.1, [b.2[0] + 0.01, b.2[1] + 0.01]);
    assert!(overlap(grow(walker(tick)), ([at[0], at[1]], 0.0, [0.0, 0.0])), "contact {at:?} off the walker");
    assert!((c["relative_speed"].as_f64().expect("speed") - v).abs() < 1e-9);
}

/// The world built from the demo survey with its roadside voxels as walls (1 m, as `demo`
/// writes them, and again at 0.25 m from `roadscan voxel` on the same survey): a pedestrian
/// walking from a sidewalk straight away from the road, at 14 stations clear of the poles and
/// trees, first touches a `wall:roadside:` line where the designed building front stands (the
/// truth road's planar t = 8.5 m left, -9.5 m right): in front of it by no more than a voxel's
/// reach across a plane (the voxel size times |cos| + |sin| of the road's heading against the
/// grid: up to 1.41 m at 1 m, 0.35 m at 0.25 m) and behind it by no more than 5 cm (the
/// scanner's noise). The ego following lane -1 to its end touches no roadside wall (its
/// surface, marks, curbs and the parked car on its widened lane stand over no roadside); the
/// car is a built obstacle instead ([`the_parked_car_is_a_built_obstacle`]).
#[test]
fn the_built_worlds_roadside_stops_walkers_at_the_facades_and_not_the_ego() {
    let d = Scratch::new("cli-sim-roadside");
    let out = d.join("demo");
    ok(&["demo", "--out", s(&out), "-q"]);
    let truth = opendrive::read_file(out.join("survey/truth/road.xodr")).expect("truth road");
    let truth_road = opendrive::RoadEval::new(&truth.roads[0]);
    let scene = sim::Scene::demo(1);
    let (left, right) = (scene.facades.left, scene.facades.right);
    let designed = SimWorld::load(
        &WorldSource::Scene { name: "demo".into(), seed: 1, grid: roadscan::simulate::DEFAULT_SCENE_GRID },
        None,
    )
    .expect("the designed scene");
    // The designed car's box in the map.
    let car_ring: Vec<[f64; 2]> = {
        let road = scene.road();
        let off = scene.odr.header.offset.expect("offset");
        let p = road.pose(128.0);
        let (sn, cs) = p.hdg.sin_cos();
        let (x, y) = (p.x + 3.1 * sn, p.y - 3.1 * cs);
        [(2.25, 0.9), (-2.25, 0.9), (-2.25, -0.9), (2.25, -0.9), (2.25, 0.9)]
            .map(|(u, v)| {
                let m = off.placement().to_map([x + u * cs - v * sn, y + u * sn + v * cs, 0.0]);
                [m[0], m[1]]
            })
            .to_vec()
    };
    // The designed scene's drive along lane -1 into the car: its tick and place (map).
    let lane_car = {
        let sc = Scenario { duration: 40.0, route: vec!["lane:-1".into()], ..Scenario::default() };
        let surface = designed.surface().expect("surface");
        let events = designed.simulation(&surface, sc).expect("scenario").run();
        first_contact(designed.offset(), &events, "object:car").expect("the designed drive meets the car")
    };
    for size in [1.0, 0.25] {
        if size != 1.0 {
            let obj = out.join("scene.obj");
            let (xodr, las) = (out.join("road.xodr"), out.join("survey/scan.las"));
            let sz = size.to_string();
            ok(&[
                "voxel",
                "-q",
                "--axis",
                s(&xodr),
                "--input",
                s(&las),
                "--out",
                s(&obj),
                "--size",
                &sz,
                "--buffer",
                "15",
            ]);
        }
        let world = SimWorld::load(&WorldSource::Build(out.clone()), None).expect("the built world");
        let lines = world.walls().iter().filter(|w| w.id.starts_with("wall:roadside:")).count();
        assert!(lines > 0, "{size} m voxels: no roadside walls");
        let surface = world.surface().expect("surface");
        let (to, bo) = (truth.header.offset.unwrap_or_default(), world.offset());
        // Truth planar (s, t) <-> the built road's file frame.
        let at = |s: f64, t: f64| {
            let p = truth_road.pose(s);
            let (sn, cs) = p.hdg.sin_cos();
            bo.placement().to_file(to.placement().to_map([p.x - t * sn, p.y + t * cs, 0.0]))
        };
        let truth_st = |p: [f64; 3]| {
            let f = to.placement().to_file(bo.placement().to_map(p));
            let c = truth_road.xy_to_st(f[0], f[1], 50.0).expect("near the truth road");
            (c.s, c.t)
        };
        let stations: Vec<(f64, f64)> = [15.0, 27.0, 47.0, 72.0, 97.0, 122.0]
            .map(|s| (s, left))
            .into_iter()
            .chain([15.0, 30.0, 40.0, 55.0, 80.0, 110.0, 120.0, 140.0].map(|s| (s, right)))
            .collect();
        let mut sc = Scenario { duration: 5.0, ..Scenario::default() };
        for (n, &(s0, facade)) in stations.iter().enumerate() {
            let start = at(s0, 5.5 * facade.signum());
            let heading = truth_road.pose(s0).hdg + to.hdg - bo.hdg + facade.signum() * std::f64::consts::FRAC_PI_2;
            sc.actors.push(simulation::actors::Spawn {
                id: format!("walker{n}"),
                prefab: "pedestrian".into(),
                x: start[0],
                y: start[1],
                heading,
                speed: 1.2,
            });
        }
        let mut sim = world.simulation(&surface, sc).expect("scenario");
        let hits: Vec<simulation::ContactReport> = sim
            .run()
            .into_iter()
            .filter_map(|e| match e {
                simulation::Event::Collision(c) => Some(c),
                _ => None,
            })
            .collect();
        let mut worst = (f64::INFINITY, f64::NEG_INFINITY);
        for (n, &(s0, facade)) in stations.iter().enumerate() {
            let id = format!("walker{n}");
            let c = hits
                .iter()
                .find(|c| c.ids.contains(&id))
                .unwrap_or_else(|| panic!("{size} m: {id} at s {s0} touches nothing"));
            assert!(
                c.ids.iter().any(|i| i.starts_with("wall:roadside:")),
                "{size} m: {id} at s {s0}: first contact {c:?}"
            );
            let (s, t) = truth_st(c.position);
            // In front of the facade (toward the road) positive.
            let ahead = (facade - t) * facade.signum();
            let h = truth_road.pose(s).hdg + to.hdg;
            let reach = size * (h.cos().abs() + h.sin().abs());
            eprintln!("{size} m voxels: {id} at s {s0:5.1}: contact at s {s:6.2}, t {t:6.3}: {ahead:+.3} m before the facade (reach {reach:.3})");
            assert!(
                ahead >= -0.05 && ahead <= reach + 0.05,
                "{size} m: {id}: {ahead} m before the facade, reach {reach}"
            );
            worst = (worst.0.min(ahead), worst.1.max(ahead));
        }
        eprintln!(
            "{size} m voxels: {lines} roadside lines; contacts from {:+.3} to {:+.3} m before the facades",
            worst.0, worst.1
        );
        // The ego along lane -1.
        let sc = Scenario { duration: 40.0, route: vec!["lane:-1".into()], ..Scenario::default() };
        let mut sim = world.simulation(&surface, sc).expect("scenario");
        let events = sim.run();
        let roadside: Vec<_> = events
            .iter()
            .filter(|e| matches!(e, simulation::Event::Collision(c) if c.ids[1].starts_with("wall:roadside:")))
            .collect();
        let done = events.iter().any(|e| matches!(e, simulation::Event::RouteComplete { .. }));
        eprintln!(
            "{size} m voxels: the ego along lane -1: {} roadside contacts, route complete {done}",
            roadside.len()
        );
        assert!(done, "{size} m: the ego's route");
        assert!(roadside.is_empty(), "{size} m: {roadside:?}");
        // The same drive meets the parked car as a built obstacle when the designed scene's
        // meets the car: earlier by up to a voxel's diagonal (plus 5 cm) at its speed, not
        // later (one tick); on the car's box within that reach. (The place is the middle of
        // the outline's stretch in the ego's box, in the designed scene the mean of the
        // corners inside the other box: where the ego's side grazes the car's corner, the
        // staircase of the outline can lie along the side, so the two are not compared.)
        let (tb, pb, _) = first_contact(world.offset(), &events, "obstacle:built:").expect("the ego meets the car");
        let apart = (pb[0] - lane_car.1[0]).hypot(pb[1] - lane_car.1[1]);
        let off_car = if inside(&car_ring, [pb[0], pb[1]]) {
            0.0
        } else {
            car_ring.windows(2).map(|w| to_segment([pb[0], pb[1]], w[0], w[1])).fold(f64::INFINITY, f64::min)
        };
        let reach = size * std::f64::consts::SQRT_2 + 0.05;
        let early = (reach / (0.01 * lane_car.2)).ceil() as u64 + 1;
        eprintln!(
            "{size} m voxels: the ego along lane -1 touches the built car at tick {tb}, the designed one at tick {} at {:.2} m/s; {off_car:.3} m off the car's box, {apart:.3} m from the designed place",
            lane_car.0, lane_car.2
        );
        assert!(
            tb <= lane_car.0 + 1 && lane_car.0 <= tb + early,
            "{size} m: tick {tb} vs {} ({early} early)",
            lane_car.0
        );
        assert!(off_car <= reach, "{size} m: {off_car} m off the car's box");
        the_parked_car_is_a_built_obstacle(&world, &designed, size);
    }
}

/// The first collision with a body or wall whose id starts with `prefix`: its tick, place
/// (map frame, from the file frame of `offset`) and relative speed.
fn first_contact(
    offset: opendrive::model::HeaderOffset,
    events: &[simulation::Event],
    prefix: &str,
) -> Option<(u64, [f64; 3], f64)> {
    events.iter().find_map(|e| match e {
        simulation::Event::Collision(c) if c.ids[1].starts_with(prefix) => {
            Some((c.tick, offset.placement().to_map(c.position), c.relative_speed))
        }
        _ => None,
    })
}

/// Whether plan point `p` lies inside the closed polyline `poly` (even-odd rule).
fn inside(poly: &[[f64; 2]], p: [f64; 2]) -> bool {
    let mut c = false;
    for w in poly.windows(2) {
        let (a, b) = (w[0], w[1]);
        if (a[1] > p[1]) != (b[1] > p[1]) && p[0] < a[0] + (p[1] - a[1]) / (b[1] - a[1]) * (b[0] - a[0]) {
            c = !c;
        }
    }
    c
}

/// Distance from `p` to segment a-b.
fn to_segment(p: [f64; 2], a: [f64; 2], b: [f64; 2]) -> f64 {
    let d = [b[0] - a[0], b[1] - a[1]];
    let l2 = d[0] * d[0] + d[1] * d[1];
    let u = if l2 > 0.0 { (((p[0] - a[0]) * d[0] + (p[1] - a[1]) * d[1]) / l2).clamp(0.0, 1.0) } else { 0.0 };
    (p[0] - a[0] - u * d[0]).hypot(p[1] - a[1] - u * d[1])
}

/// The parked car of the demo survey in the world built from it (`obstacle:built:<k>`, voxels
/// of `size` m): one obstacle line covers the designed car's box (4.5 x 1.8 m at s = 128 m,
/// t = -3.1 m) within a voxel: every point of the box's sides (every 5 cm) inside its outline
/// or within a voxel plus 5 cm (the scanner's noise) of it, and within 5 cm of it or of a
/// roadside line (the built road's lane -1 ends under the car's right side: the columns beyond
/// it are roadside); every corner of the outline within a voxel's diagonal (plus 5 cm) of the
/// box; its band from at most the car's bottom (0.25 m) to at least its
/// roof (1.5 m) over the surface, 5 cm either way. A scripted drive into the car's back (the
/// ego 12 m behind it, parallel, 1 m to its left, 6 m/s, steering 0: the same path in the map
/// in both worlds) touches the built obstacle first, not later than the designed car (one
/// tick) and earlier by no more than a voxel's reach along the drive (`size` (|cos| + |sin|)
/// of the heading against the grid, plus 5 cm) at 6 cm a tick; the place (the middle of the
/// outline's stretch in the ego's box; in the designed scene the mean of the corners inside
/// the other box) within that reach and half a voxel across of the designed scene's. The ego along lane 1 (no car there) touches no built obstacle.
fn the_parked_car_is_a_built_obstacle(world: &SimWorld, designed: &SimWorld, size: f64) {
    let scene = sim::Scene::demo(1);
    let road = scene.road();
    let off = scene.odr.header.offset.expect("offset");
    let bo = world.offset();
    let p = road.pose(128.0);
    let (sn, cs) = p.hdg.sin_cos();
    // The car's box and its corners in the built world's file frame.
    let map = |x: f64, y: f64| off.placement().to_map([x, y, 0.0]);
    let built = |m: [f64; 3]| bo.placement().to_file(m);
    let car = |u: f64, v: f64| {
        let (x, y) = (p.x + 3.1 * sn, p.y - 3.1 * cs);
        built(map(x + u * cs - v * sn, y + u * sn + v * cs))
    };
    let lines: Vec<&simulation::WallLine> =
        world.walls().iter().filter(|w| w.id.starts_with("obstacle:built:")).collect();
    let centre = car(0.0, 0.0);
    let found = lines.iter().find(|w| inside(&w.points, [centre[0], centre[1]]));
    assert!(found.is_some(), "{size} m: no obstacle round the car at {centre:?}: {lines:?}");
    let obstacle = found.expect("the obstacle round the car");
    let near = |q: [f64; 3]| {
        obstacle.points.windows(2).map(|w| to_segment([q[0], q[1]], w[0], w[1])).fold(f64::INFINITY, f64::min)
    };
    // The box's sides every 5 cm (90 along, 36 across).
    // The box's sides every 5 cm (90 along, 36 across), with their (u, v) on the car.
    let mut sides: Vec<([f64; 3], [f64; 2])> = Vec::new();
    for k in 0..=90 {
        let u = -2.25 + 0.05 * k as f64;
        sides.extend([(car(u, 0.9), [u, 0.9]), (car(u, -0.9), [u, -0.9])]);
    }
    for k in 0..=36 {
        let v = -0.9 + 0.05 * k as f64;
        sides.extend([(car(2.25, v), [2.25, v]), (car(-2.25, v), [-2.25, v])]);
    }
    let outside =
        sides.iter().filter(|q| !inside(&obstacle.points, [q.0[0], q.0[1]])).map(|q| near(q.0)).fold(0.0f64, f64::max);
    // With the roadside lines (closed too): where the built lane ends under the car.
    let built_lines: Vec<&simulation::WallLine> = world
        .walls()
        .iter()
        .filter(|w| w.id.starts_with("obstacle:built:") || w.id.starts_with("wall:roadside:"))
        .collect();
    let (uncovered, worst_at) = sides
        .iter()
        .filter(|q| !built_lines.iter().any(|w| inside(&w.points, [q.0[0], q.0[1]])))
        .map(|q| {
            let d = built_lines
                .iter()
                .flat_map(|w| w.points.windows(2).map(|e| to_segment([q.0[0], q.0[1]], e[0], e[1])))
                .fold(f64::INFINITY, f64::min);
            (d, q.1)
        })
        .fold((0.0f64, [0.0; 2]), |a, b| if b.0 > a.0 { b } else { a });
    let box_corners = [car(2.25, 0.9), car(-2.25, 0.9), car(-2.25, -0.9), car(2.25, -0.9), car(2.25, 0.9)];
    let ring: Vec<[f64; 2]> = box_corners.iter().map(|c| [c[0], c[1]]).collect();
    let beyond = obstacle
        .points
        .iter()
        .map(|q| {
            if inside(&ring, *q) {
                0.0
            } else {
                ring.windows(2).map(|w| to_segment(*q, w[0], w[1])).fold(f64::INFINITY, f64::min)
            }
        })
        .fold(0.0f64, f64::max);
    let surface = world.surface().expect("surface");
    let ground = surface.height(centre[0], centre[1]).expect("the road under the car");
    let bottom = obstacle.z.iter().map(|z| z[0]).fold(f64::INFINITY, f64::min) - ground;
    let top = obstacle.z.iter().map(|z| z[1]).fold(f64::NEG_INFINITY, f64::max) - ground;
    eprintln!(
        "{size} m voxels: {} obstacle lines; {}: the car's box at most {outside:.3} m outside it ({uncovered:.3} m outside it and the roadside, at u {:+.2}, v {:+.2} m on the car), its corners at most {beyond:.3} m beyond the box, band {bottom:+.3} to {top:+.3} m over the road",
        lines.len(),
        obstacle.id,
        worst_at[0],
        worst_at[1]
    );
    assert!(outside <= size + 0.05, "{size} m: the car's box {outside} m outside {}", obstacle.id);
    assert!(uncovered <= size + 0.05, "{size} m: the car's box {uncovered} m outside the built walls");
    assert!(
        beyond <= size * std::f64::consts::SQRT_2 + 0.05,
        "{size} m: {} reaches {beyond} m beyond the car",
        obstacle.id
    );
    assert!(bottom <= 0.25 + 0.05 && top >= 1.5 - 0.05, "{size} m: band {bottom} to {top}");

    // The scripted drive, the same in the map in both worlds.
    let v = simulation::VehicleParams::default();
    let back = 12.0;
    let (x0, y0) = (p.x + 3.1 * sn - 1.0 * sn - back * cs, p.y - 3.1 * cs + 1.0 * cs - back * sn);
    let start = map(x0 - v.centre_ahead() * cs, y0 - v.centre_ahead() * sn);
    let drive = |w: &SimWorld| -> (u64, [f64; 3], String) {
        let o = w.offset();
        let f = o.placement().to_file(start);
        let mut sc = Scenario { duration: 4.0, ..Scenario::default() };
        (sc.ego.x, sc.ego.y, sc.ego.heading, sc.ego.speed) =
            (Some(f[0]), Some(f[1]), Some(p.hdg + off.hdg - o.hdg), 6.0);
        let surface = w.surface().expect("surface");
        let mut sim = w.simulation(&surface, sc).expect("scenario");
        let c = sim
            .run()
            .into_iter()
            .find_map(|e| match e {
                simulation::Event::Collision(c) => Some(c),
                _ => None,
            })
            .expect("the drive touches something");
        (c.tick, o.placement().to_map(c.position), c.ids[1].clone())
    };
    let (td, pd, id) = drive(designed);
    assert_eq!(id, "object:car-1", "the designed drive's first contact");
    let (tb, pb, id) = drive(world);
    assert!(id.starts_with("obstacle:built:"), "{size} m: the built drive's first contact {id}");
    let h = p.hdg + off.hdg;
    let reach = size * (h.cos().abs() + h.sin().abs()) + 0.05;
    let early = ((reach / 0.06).ceil() as u64) + 1;
    let apart = (pb[0] - pd[0]).hypot(pb[1] - pd[1]);
    let across = reach + 0.5 * size;
    eprintln!(
        "{size} m voxels: the drive into the car touches {id} at tick {tb}, the designed car at tick {td} (map ({:.3}, {:.3})); places {apart:.3} m apart (tolerance {across:.3} m)",
        pd[0], pd[1]
    );
    assert!(tb <= td + 1 && td <= tb + early, "{size} m: tick {tb} vs {td} (at most {early} early)");
    assert!(apart <= across, "{size} m: {apart} m from the designed place");

    // Lane 1 has no car.
    let sc = Scenario { duration: 40.0, route: vec!["lane:1".into()], ..Scenario::default() };
    let mut sim = world.simulation(&surface, sc).expect("scenario");
    let events = sim.run();
    let hit: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, simulation::Event::Collision(c) if c.ids[1].starts_with("obstacle:built:")))
        .collect();
    let done = events.iter().any(|e| matches!(e, simulation::Event::RouteComplete { .. }));
    eprintln!("{size} m voxels: the ego along lane 1: {} built obstacles touched, route complete {done}", hit.len());
    assert!(done, "{size} m: lane 1's route");
    assert!(hit.is_empty(), "{size} m: {hit:?}");
}
