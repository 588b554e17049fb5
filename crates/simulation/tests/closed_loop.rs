//! The closed loop: route following, collisions, ids, GPS, saving and resuming.

mod common;

use common::*;
use simulation::actors::Variable;
use simulation::driver::lane_centre_t;
use simulation::gps::{civil_from_days, nmea_checksum, GpsConfig};
use simulation::scenario::Command;
use simulation::{Error, Event, RoadSurface, Scenario, Simulation, Spawn};

/// Drives `route` with the AI driver until the route is complete; returns the RMS and the
/// largest lateral deviation of the body centre from the lane centre, and the events.
/// The collisions of 4 s of a pedestrian starting at (p[0], p[1]) and walking at 1.2 m/s on
/// `heading`, the ego parked at s `ego_s`.
fn walker_hits(surface: &RoadSurface, ego_s: f64, p: [f64; 2], heading: f64) -> Vec<simulation::ContactReport> {
    let mut sc = Scenario { duration: 4.0, ..Scenario::default() };
    sc.ego.s = ego_s;
    sc.actors = vec![Spawn { id: "walker".into(), prefab: "pedestrian".into(), x: p[0], y: p[1], heading, speed: 1.2 }];
    let mut sim = Simulation::new(surface, sc).expect("scenario");
    sim.run()
        .into_iter()
        .filter_map(|e| match e {
            Event::Collision(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn follow(odr: &opendrive::OpenDrive, lane: i32, seconds: f64) -> (f64, f64, Vec<Event>) {
    let surface = RoadSurface::new(&odr.roads[0]);
    let sc = Scenario { duration: seconds, route: vec![format!("lane:{lane}")], ..Scenario::default() };
    let mut sim = Simulation::new(&surface, sc).expect("scenario");
    let mut events = Vec::new();
    let (mut sum, mut n, mut worst) = (0.0, 0usize, 0.0f64);
    while !sim.finished() {
        let ev = sim.step();
        let done = ev.iter().any(|e| matches!(e, Event::RouteComplete { .. }));
        events.extend(ev);
        let r = sim.ego_record();
        let st = r.st.expect("on the road");
        // The planar t of the lane centre (the road frame's t times the roll's cosine).
        let road = surface.road();
        let centre = lane_centre_t(road, lane, st[0]).expect("lane") * road.superelevation(st[0]).cos();
        let dev = st[1] - centre;
        sum += dev * dev;
        n += 1;
        worst = worst.max(dev.abs());
        assert_eq!(r.lane, Some(lane), "t = {}: left the lane at s = {}", r.time, st[0]);
        if done {
            break;
        }
    }
    eprintln!("lane {lane}: RMS {:.4} m, largest {worst:.4} m over {n} ticks", (sum / n as f64).sqrt());
    ((sum / n as f64).sqrt(), worst, events)
}

fn completed(events: &[Event]) -> usize {
    events.iter().filter(|e| matches!(e, Event::RouteComplete { .. })).count()
}

/// Lane -1 of a road with a 60 m arc (a curvature step at both ends): RMS deviation <= 0.2 m,
/// the body never more than 0.8 m off the centre (it stays in its lane), one arrival and one
/// route completion.
#[test]
fn the_driver_follows_lane_minus_one_of_an_arc() {
    let (rms, worst, events) = follow(&arc_road(), -1, 60.0);
    assert!(rms <= 0.2, "RMS {rms} m");
    assert!(worst < 0.8, "largest deviation {worst} m");
    assert_eq!(completed(&events), 1, "{events:?}");
    assert_eq!(events.iter().filter(|e| matches!(e, Event::Arrived { leg: 0, .. })).count(), 1);
}

/// Both lanes of the demo road (clothoids, arc, grade, crossfall).
#[test]
fn the_driver_follows_both_lanes_of_the_demo_road() {
    for lane in [-1, 1] {
        let (rms, worst, events) = follow(&demo_road(), lane, 60.0);
        assert!(rms <= 0.2, "lane {lane}: RMS {rms} m");
        assert!(worst < 0.8, "lane {lane}: largest deviation {worst} m");
        assert_eq!(completed(&events), 1, "lane {lane}");
    }
}

/// curves.xodr of the shared esmini samples, lane -1 of its first road.
#[test]
#[roadscan_tests::needs_shared_data]
fn the_driver_follows_lane_minus_one_of_esmini_curves() {
    let path = roadscan_tests::shared_data().join("opendrive/esmini/curves.xodr");
    let odr = opendrive::read_file(&path).expect("curves.xodr");
    let (rms, worst, events) = follow(&odr, -1, 120.0);
    assert!(rms <= 0.2, "RMS {rms} m");
    assert!(worst < 0.8, "largest deviation {worst} m");
    assert_eq!(completed(&events), 1);
}

/// The ego rolls at 10 m/s (no pedals: the regression's drag slows it) into a parked 1 m box
/// on its lane: one collision, at the first tick whose closed-form position puts the front
/// bumper at the box's face, with the ids, place and relative speed of that tick.
#[test]
fn a_scripted_drive_into_a_parked_box_reports_one_collision() {
    let odr = straight(200.0, 0.0, 0.0, "");
    let surface = RoadSurface::new(&odr.roads[0]);
    let dt = 0.01;
    let mut sc = Scenario { tick: dt, duration: 8.0, ..Scenario::default() };
    sc.ego.s = 10.0;
    sc.ego.speed = 10.0;
    let box_x = 60.123;
    sc.actors = vec![Spawn { id: "parked".into(), prefab: "box".into(), x: box_x, y: -1.75, heading: 0.0, speed: 0.0 }];
    let mut sim = Simulation::new(&surface, sc.clone()).expect("scenario");
    let p = sc.vehicle;
    let front = 10.0 + p.length - p.rear_overhang;
    let gap = box_x - 0.5 - front;
    let a = -0.190 / 3.6;
    let d = |n: u64| {
        let t = n as f64 * dt;
        10.0 * t + 0.5 * a * t * t
    };
    let want = (1..).find(|&n| d(n) >= gap).expect("reaches the box");
    let events = sim.run();
    let hits: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Collision(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(hits.len(), 1, "{hits:?}");
    let c = hits[0];
    assert_eq!(c.tick, want, "collision tick");
    assert_eq!(c.ids, ["ego".to_string(), "parked".to_string()]);
    assert!((c.time - want as f64 * dt).abs() < 1e-12);
    let v = 10.0 + a * want as f64 * dt;
    assert!((c.relative_speed - v).abs() < 1e-9, "relative speed {} vs {v}", c.relative_speed);
    // The contact lies on the box's face, across the overlap of the two widths.
    assert!(c.position[0] >= box_x - 0.5 - 1e-9 && c.position[0] <= box_x - 0.5 + v * dt, "x {}", c.position[0]);
    assert!((c.position[1] + 1.75).abs() <= 0.5, "y {}", c.position[1]);
}

/// A pole among the road's objects is an obstacle; a pothole (roadSurface) is not.
#[test]
fn standing_objects_of_the_road_are_obstacles() {
    let objects = r#"<object id="7" s="50" t="-1.75" zOffset="0" type="pole" height="3" radius="0.2"/>
<object id="8" s="30" t="-1.75" zOffset="0" type="roadSurface" subtype="pothole" length="1" width="1" height="0.05"/>"#;
    let odr = straight(200.0, 0.0, 0.0, objects);
    let surface = RoadSurface::new(&odr.roads[0]);
    let mut sc = Scenario { duration: 6.0, ..Scenario::default() };
    sc.ego.s = 10.0;
    sc.ego.speed = 10.0;
    let mut sim = Simulation::new(&surface, sc).expect("scenario");
    assert_eq!(sim.scene_bodies().len(), 1, "only the pole");
    let hits: Vec<_> = sim
        .run()
        .into_iter()
        .filter_map(|e| match e {
            Event::Collision(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].ids[1], "object:7");
}

/// Ids: a second actor with an id in use, an actor with the ego's id and an unknown prefab
/// are refused; variables out of range are refused.
#[test]
fn duplicate_ids_and_bad_values_are_refused() {
    let odr = straight(200.0, 0.0, 0.0, "");
    let surface = RoadSurface::new(&odr.roads[0]);
    let spawn = |id: &str, prefab: &str| Spawn {
        id: id.into(),
        prefab: prefab.into(),
        x: 50.0,
        y: 1.75,
        heading: 0.0,
        speed: 0.0,
    };
    let mut sc = Scenario { actors: vec![spawn("a", "car"), spawn("a", "pedestrian")], ..Scenario::default() };
    assert!(matches!(Simulation::new(&surface, sc.clone()), Err(Error::DuplicateId { what: "actor", .. })));
    sc.actors = vec![spawn("ego", "car")];
    assert!(matches!(Simulation::new(&surface, sc.clone()), Err(Error::DuplicateId { .. })));
    sc.actors = vec![spawn("b", "truck")];
    assert!(matches!(Simulation::new(&surface, sc.clone()), Err(Error::UnknownId { what: "prefab", .. })));
    sc.actors = vec![spawn("b", "car")];
    let mut sim = Simulation::new(&surface, sc).expect("scenario");
    assert!(matches!(sim.spawn(&spawn("b", "box")), Err(Error::DuplicateId { .. })));
    assert!(matches!(sim.spawn(&Spawn { y: 500.0, ..spawn("c", "box") }), Err(Error::OffRoad { .. })));
    assert!(sim.set("b", Variable::Steering, 1.5).is_err());
    assert!(sim.set("b", Variable::Speed, f64::NAN).is_err());
    assert!(sim.set("nobody", Variable::Speed, 1.0).is_err());
    sim.set("b", Variable::Speed, 3.0).expect("set");
    sim.step();
    let b = sim.state().actors.get("b").expect("b");
    assert!((b.x - 50.03).abs() < 1e-12, "the actor moved 3 m/s for 10 ms: {}", b.x);
}

/// A run with the driver, moving actors and GPS noise: N ticks in one go equal k ticks, a
/// save, a fresh simulation resumed from it and N - k ticks (the states' JSON, every f64 to
/// the bit, and the events after the save).
#[test]
fn save_and_resume_continue_identically() {
    let odr = arc_road();
    let surface = RoadSurface::new(&odr.roads[0]);
    let mut sc = Scenario { duration: 30.0, route: vec!["lane:-1".into()], ..Scenario::default() };
    sc.gps = GpsConfig { sigma_xy: 0.02, sigma_z: 0.03, sigma_speed: 0.05, seed: 99, ..GpsConfig::default() };
    sc.actors = vec![
        Spawn { id: "walker".into(), prefab: "pedestrian".into(), x: 20.0, y: 3.0, heading: 1.0, speed: 1.2 },
        Spawn { id: "car2".into(), prefab: "car".into(), x: 5.0, y: 1.75, heading: 0.0, speed: 6.0 },
    ];
    sc.script = vec![
        Command { time: 1.0, target: "car2".into(), variable: Variable::Steering, value: 0.1 },
        Command { time: 2.5, target: "car2".into(), variable: Variable::Throttle, value: 30.0 },
        Command { time: 4.0, target: "walker".into(), variable: Variable::Steering, value: -0.5 },
    ];
    let (n, k) = (700, 333);
    let mut whole = Simulation::new(&surface, sc.clone()).expect("scenario");
    let mut tail = Vec::new();
    for i in 0..n {
        let ev = whole.step();
        if i >= k {
            tail.extend(ev);
        }
    }
    let mut first = Simulation::new(&surface, sc.clone()).expect("scenario");
    for _ in 0..k {
        first.step();
    }
    let saved = first.save().expect("save");
    let mut second = Simulation::new(&surface, sc).expect("scenario");
    second.resume(&saved).expect("resume");
    assert_eq!(second.save().expect("save"), saved, "the state reads back to the same JSON");
    let mut resumed_tail = Vec::new();
    for _ in k..n {
        resumed_tail.extend(second.step());
    }
    assert_eq!(second.save().expect("save"), whole.save().expect("save"), "states after N ticks");
    assert_eq!(second.state(), whole.state());
    assert_eq!(resumed_tail, tail, "events after the save");
    assert!(tail.iter().any(|e| matches!(e, Event::Gps(_))), "the GPS ran");
    assert!(whole.ego().odometer > 20.0, "the ego drove {}", whole.ego().odometer);
    assert!(matches!(second.resume("{\"tick\": 1"), Err(Error::State(_))));
}

/// GPS: fixes at its rate, map = file + header offset, speed from the change of position,
/// latitude/longitude through the caller's conversion; NMEA checksums and formats.
#[test]
fn gps_fixes_and_nmea() {
    let odr = straight(300.0, 0.0, 0.0, "");
    let surface = RoadSurface::new(&odr.roads[0]);
    let offset = odr.header.offset.expect("offset");
    let mut sc = Scenario { duration: 2.0, ..Scenario::default() };
    sc.ego.speed = 10.0;
    sc.ego.s = 5.0;
    let to_deg = |m: [f64; 3]| Some([47.0 + (m[1] - 240_000.0) / 111_000.0, 19.0 + (m[0] - 650_000.0) / 76_000.0]);
    let mut sim = Simulation::new(&surface, sc).expect("scenario").with_offset(offset).with_wgs84(to_deg);
    let fixes: Vec<_> = sim
        .run()
        .into_iter()
        .filter_map(|e| match e {
            Event::Gps(f) => Some(f),
            _ => None,
        })
        .collect();
    assert_eq!(fixes.len(), 20, "10 Hz for 2 s");
    let f = fixes[9];
    assert!((f.time - 1.0).abs() < 1e-12);
    assert_eq!(f.map, [f.file[0] + 650_000.0, f.file[1] + 240_000.0, f.file[2] + 100.0]);
    assert_eq!(f.wgs84, to_deg(f.map));
    let v = 10.0 - 0.190 / 3.6 * 1.0;
    assert!((f.speed - v).abs() < 1e-3, "speed {} vs {v}", f.speed);
    assert!((f.course_deg() - 90.0).abs() < 1e-9, "east is 90 degrees");
    // The textbook sentences' checksums.
    assert_eq!(nmea_checksum("GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"), 0x47);
    assert_eq!(nmea_checksum("GPRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W"), 0x6A);
    let gga = f.gga().expect("gga");
    let rmc = f.rmc().expect("rmc");
    for s in [&gga, &rmc] {
        let (body, sum) = s[1..].split_once('*').expect("checksum");
        assert_eq!(format!("{:02X}", nmea_checksum(body)), sum, "{s}");
    }
    // utc_start 1_700_000_000 = 2023-11-14 22:13:20 UTC; the fix is 1 s later.
    assert!(gga.starts_with("$GPGGA,221321.00,4659.999"), "{gga}");
    assert!(rmc.contains(",141123,"), "{rmc}");
    assert_eq!(civil_from_days(0), (1970, 1, 1));
    assert_eq!(civil_from_days(11_017), (2000, 3, 1));
}

/// A scenario file with no keys is the default one; an unknown key is refused.
#[test]
fn scenario_keys_have_defaults() {
    let sc: Scenario = serde_json::from_str("{}").expect("empty scenario");
    assert_eq!(sc, Scenario::default());
    let sc: Scenario =
        serde_json::from_str(r#"{"tick": 0.02, "route": ["lane:1"], "model": {"kind": "drag", "k": 0.001}}"#)
            .expect("scenario");
    assert_eq!((sc.tick, sc.route.len(), sc.model.k), (0.02, 1, 0.001));
    assert!(serde_json::from_str::<Scenario>(r#"{"tock": 1}"#).is_err());
    assert!("lane:0".parse::<simulation::RouteLeg>().is_err());
    assert!("road:1".parse::<simulation::RouteLeg>().is_err());
}

/// External dynamics (a co-simulation bridge) move the ego: the seed's "1,0,0" at 100 Hz moves
/// it 1 m/s along x for 2 s (2 m within 1e-9 m), heading along x, wheels on the surface; a pose
/// places its centre; handing it back to its driver resumes the route.
#[test]
fn external_velocity_and_pose_move_the_ego() {
    let odr = demo_road();
    let surface = RoadSurface::new(&odr.roads[0]);
    let sc = Scenario { duration: 10.0, route: vec!["lane:-1".into()], ..Scenario::default() };
    let mut sim = Simulation::new(&surface, sc).expect("scenario");
    let ego = sim.scenario().ego.id.clone();
    sim.impose(&ego, Some(simulation::External::Velocity([1.0, 0.0, 0.0]))).expect("velocity");
    let (x0, y0) = (sim.ego().x, sim.ego().y);
    for _ in 0..200 {
        sim.step();
    }
    let e = *sim.ego();
    assert!((e.x - x0 - 2.0).abs() < 1e-9 && (e.y - y0).abs() < 1e-9, "moved to ({}, {})", e.x - x0, e.y - y0);
    assert!(e.heading.abs() < 1e-12 && (e.speed - 1.0).abs() < 1e-12);
    let z =
        surface.height(e.centre(&sim.scenario().vehicle)[0], e.centre(&sim.scenario().vehicle)[1]).expect("on road");
    assert!((e.z - z).abs() < 0.05, "heave {} vs surface {z}", e.z);
    // A pose places the body centre.
    let params = sim.scenario().vehicle;
    let c = sim.ego().centre(&params);
    let (cx, cy) = (c[0] + 3.0, c[1] + 0.5);
    sim.impose(&ego, Some(simulation::External::Pose([cx, cy, 0.0, 0.0, 0.0, 0.1]))).expect("pose");
    sim.step();
    let c = sim.ego().centre(&params);
    assert!((c[0] - cx).abs() < 1e-9 && (c[1] - cy).abs() < 1e-9, "centre at {c:?}, posed at ({cx}, {cy})");
    assert!((sim.ego().heading - 0.1).abs() < 1e-12);
    assert!(sim.ego_record().st.is_some(), "still on the road");
    // Bad values are refused and change nothing.
    assert!(sim.impose(&ego, Some(simulation::External::Velocity([f64::NAN, 0.0, 0.0]))).is_err());
    assert!(sim.impose("nobody", None).is_err());
    // Handed back, the driver moves it on.
    sim.impose(&ego, None).expect("release");
    let before = sim.ego().odometer;
    for _ in 0..100 {
        sim.step();
    }
    assert!(sim.ego().odometer > before + 0.5, "the driver drove on");
}

/// The demo road's right curb (its 0.12 m curb mark, at the outer border of lane -1): the ego
/// steered off lane -1 touches it once (`wall:curb:1:-2:0`, at its speed); a state saved
/// while it touches and resumed reports nothing again and ends in the same state; a
/// pedestrian walking across it reports nothing; with `walls = false` the ego reports nothing.
#[test]
fn a_curb_is_touched_once_and_a_resumed_contact_is_not_reported_again() {
    let odr = demo_road();
    let surface = RoadSurface::new(&odr.roads[0]);
    let mut sc = Scenario { duration: 3.0, ..Scenario::default() };
    (sc.ego.s, sc.ego.lane, sc.ego.speed) = (5.0, -1, 8.0);
    sc.script = vec![Command { time: 0.0, target: "ego".into(), variable: Variable::Steering, value: -0.05 }];
    let collisions = |ev: &[Event]| -> Vec<simulation::ContactReport> {
        ev.iter()
            .filter_map(|e| match e {
                Event::Collision(c) => Some(c.clone()),
                _ => None,
            })
            .collect()
    };
    let mut whole = Simulation::new(&surface, sc.clone()).expect("scenario");
    assert_eq!(whole.walls().lines().len(), 2, "a curb each side");
    let hits = collisions(&whole.run());
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].ids, ["ego".to_string(), "wall:curb:1:-2:0".to_string()]);
    assert!((hits[0].relative_speed - 8.0).abs() < 0.1, "{}", hits[0].relative_speed);
    // Saved two ticks into the contact.
    let k = hits[0].tick + 2;
    let mut first = Simulation::new(&surface, sc.clone()).expect("scenario");
    for _ in 0..k {
        first.step();
    }
    assert!(first.state().contacts.iter().any(|c| c[1].starts_with("wall:curb")), "in contact at the save");
    let saved = first.save().expect("save");
    let mut second = Simulation::new(&surface, sc.clone()).expect("scenario");
    second.resume(&saved).expect("resume");
    assert!(collisions(&second.run()).is_empty(), "the resumed contact is not a new one");
    assert_eq!(second.save().expect("save"), whole.save().expect("save"));

    let off = Scenario { walls: false, ..sc.clone() };
    let mut none = Simulation::new(&surface, off).expect("scenario");
    assert!(none.walls().is_empty());
    assert!(collisions(&none.run()).is_empty());

    // A pedestrian from the middle of lane -1 across the right curb onto the sidewalk.
    let road = surface.road();
    let p = road.sth_to_xyz(60.0, -1.6, 0.0);
    let hdg = road.pose(60.0).hdg - std::f64::consts::FRAC_PI_2;
    let mut walk = Scenario { duration: 4.0, ..Scenario::default() };
    walk.actors =
        vec![Spawn { id: "walker".into(), prefab: "pedestrian".into(), x: p[0], y: p[1], heading: hdg, speed: 1.2 }];
    let mut sim = Simulation::new(&surface, walk).expect("scenario");
    assert!(collisions(&sim.run()).is_empty(), "pedestrians step over curbs");
    let w = sim.state().actors.get("walker").expect("walker");
    let t = surface.planar_st(w.x, w.y).expect("on the road").1;
    assert!(t < -3.5, "the walker crossed the curb line: t = {t}");
}

/// tunnels.xodr (esmini): the three barriers of its first road are `<repeat>`s of distance 0
/// from s = 400 m, 150 m long: two tunnel walls 10 m wide about t = 13 m and t = -16.5 m,
/// 5 m tall, and the roof 39.5 m wide about t = -1.75 m, from 5 to 7 m up. Each becomes the
/// outline of its strip (`wall:object:<id>`): every point on one of its edges (the road's
/// inverse: t within 1 cm of the record's t +- width / 2, s within the repeat), its band the
/// road's surface there plus zOffset and zOffset + height (1 mm); none is also a box. A
/// pedestrian walking from
/// t = 5 m toward the left wall touches it at t = 8 m (1 cm); the ego following lane -1
/// through the tunnel (under the roof, between the walls) touches none of them.
#[test]
#[roadscan_tests::needs_shared_data]
fn continuous_objects_of_tunnels_are_walls_on_their_records() {
    let path = roadscan_tests::shared_data().join("opendrive/esmini/tunnels.xodr");
    let odr = opendrive::read_file(&path).expect("tunnels.xodr");
    let surface = RoadSurface::new(&odr.roads[0]);
    let road = surface.road();
    let walls = simulation::walls::object_walls(&surface);
    let ids: Vec<&str> = walls.iter().map(|w| w.id.as_str()).collect();
    assert_eq!(ids, ["wall:object:2", "wall:object:3", "wall:object:4"]);
    // (t, width, zOffset, height) of the records.
    let records = [(13.0, 10.0, 0.0, 5.0), (-16.5, 10.0, 0.0, 5.0), (-1.75, 39.5, 5.0, 2.0)];
    for (w, (t0, width, z0, h)) in walls.iter().zip(records) {
        assert!(w.points.len() > 600, "{}: {} points", w.id, w.points.len());
        assert_eq!(w.points.first(), w.points.last(), "{}: closed", w.id);
        let mut worst = 0.0f64;
        for (p, z) in w.points.iter().zip(&w.z) {
            let c = road.xy_to_st(p[0], p[1], 60.0).expect("near the road");
            let off = (c.t - (t0 - 0.5 * width)).abs().min((c.t - (t0 + 0.5 * width)).abs());
            worst = worst.max(off);
            assert!(off <= 0.01, "{}: point at s {} t {} is {off} m off its edges", w.id, c.s, c.t);
            assert!(c.s >= 400.0 - 0.01 && c.s <= 550.0 + 0.01, "{}: s {}", w.id, c.s);
            let ground = road.sth_to_xyz(c.s, c.t, 0.0)[2];
            assert!((z[0] - ground - z0).abs() < 1e-3 && (z[1] - ground - z0 - h).abs() < 1e-3, "{}: {z:?}", w.id);
        }
        eprintln!("{}: {} points, at most {worst:.2e} m off the record's edges", w.id, w.points.len());
    }
    // Given a size (length 150 m is there), the barrier is still no box: its repeat is it.
    let mut sized = odr.clone();
    for o in &mut sized.roads[0].objects.objects {
        (o.width, o.height) = (Some(10.0), Some(5.0));
    }
    let boxes = simulation::collide::scene_bodies(&RoadSurface::new(&sized.roads[0]));
    assert!(boxes.is_empty(), "{boxes:?}");
    // A walker into the left wall.
    let p = road.sth_to_xyz(450.0, 5.0, 0.0);
    let hits = walker_hits(&surface, 10.0, [p[0], p[1]], road.pose(450.0).hdg + std::f64::consts::FRAC_PI_2);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].ids, ["walker".to_string(), "wall:object:2".to_string()]);
    let c = road.xy_to_st(hits[0].position[0], hits[0].position[1], 60.0).expect("on the road");
    eprintln!("walker: contact at s {:.3}, t {:.4}", c.s, c.t);
    assert!((c.t - 8.0).abs() <= 0.01 && (c.s - 450.0).abs() < 0.3, "contact at s {} t {}", c.s, c.t);
    // The ego through the tunnel.
    let (_, _, events) = follow(&odr, -1, 120.0);
    let walls_hit: Vec<_> =
        events.iter().filter(|e| matches!(e, Event::Collision(c) if c.ids[1].starts_with("wall:object:"))).collect();
    assert!(walls_hit.is_empty(), "{walls_hit:?}");
    assert_eq!(completed(&events), 1);
}

/// parking_demo.xodr (esmini), its first road (200 m): trees 100 (radius 0.3 m) and 101
/// (4 x 2.5 m) are `<repeat>`s every 40 m from s = 10 m over 200 m at t = -14 m, 4 m tall
/// (the repeat's height, not the object's 3 m): five boxes each (s = 10 to 170 m; 210 m is past
/// the road's end), `object:<id>:<k>`, each centred on its record's (s, t) (the road's
/// inverse, 1 cm) with its size and 4 m tall; the parking spaces' repeats are no boxes.
#[test]
#[roadscan_tests::needs_shared_data]
fn repeated_objects_of_parking_demo_are_boxes_on_their_records() {
    let path = roadscan_tests::shared_data().join("opendrive/esmini/parking_demo.xodr");
    let odr = opendrive::read_file(&path).expect("parking_demo.xodr");
    let surface = RoadSurface::new(&odr.roads[0]);
    let road = surface.road();
    let boxes = simulation::collide::scene_bodies(&surface);
    let ids: Vec<&str> = boxes.iter().map(|b| b.id.as_str()).collect();
    let want: Vec<String> =
        ["100", "101"].iter().flat_map(|o| (0..5).map(move |k| format!("object:{o}:{k}"))).collect();
    assert_eq!(ids, want);
    for (n, b) in boxes.iter().enumerate() {
        let c = road.xy_to_st(b.centre[0], b.centre[1], 30.0).expect("near the road");
        let s = 10.0 + 40.0 * (n % 5) as f64;
        assert!((c.s - s).abs() <= 0.01 && (c.t + 14.0).abs() <= 0.01, "{}: s {} t {}", b.id, c.s, c.t);
        let half = if n < 5 { [0.3, 0.3] } else { [2.0, 1.25] };
        assert_eq!(b.half, half, "{}", b.id);
        assert!((b.z[1] - b.z[0] - 4.0).abs() < 1e-12, "{}: {:?}", b.id, b.z);
    }
}

/// stationary_objects.xodr (esmini, OpenDRIVE 1.6): its straight road (from the origin at a
/// heading of 0.5 rad, level) has four objects with an `<outline>` and no repeat, each its
/// walls along that outline (`wall:object:<id>`) and no box: the corners where the standard
/// and libOpenDRIVE place them, within 1e-6 m (`cornerRoad` at the road's (s, t);
/// `cornerLocal` at the object's (s, t) plus (u, v) turned by the road's heading and the
/// object's `hdg`), closed but for `closed="false"`, bands from the surface plus dz (or
/// zOffset + z) to height above. A walker (1.8 m tall) crossing under the local box (2.5 to
/// 4.5 m up) into the road-cornered one (0.5 to 2.5 m up) touches that one only, at its edge
/// t = -9 m (1 cm), at the tick (within one) its box reaches that edge.
#[test]
#[roadscan_tests::needs_shared_data]
fn outlines_of_stationary_objects_are_walls_on_their_corners() {
    use opendrive::model::Corner;
    let path = roadscan_tests::shared_data().join("opendrive/esmini/stationary_objects.xodr");
    let odr = opendrive::read_file(&path).expect("stationary_objects.xodr");
    let surface = RoadSurface::new(&odr.roads[0]);
    let walls = simulation::walls::object_walls(&surface);
    let ids: Vec<&str> = walls.iter().map(|w| w.id.as_str()).collect();
    assert_eq!(ids, ["wall:object:20", "wall:object:21", "wall:object:11", "wall:object:12"]);
    let boxes: Vec<String> = simulation::collide::scene_bodies(&surface).into_iter().map(|b| b.id).collect();
    assert_eq!(boxes, ["object:8", "object:5"], "outlined objects are no boxes");
    // The road in closed form: a line from the origin at 0.5 rad.
    let (sn, cs) = 0.5f64.sin_cos();
    let at = |s: f64, t: f64| [s * cs - t * sn, s * sn + t * cs];
    let mut worst = 0.0f64;
    for w in &walls {
        let id = w.id.trim_start_matches("wall:object:");
        let o = odr.roads[0].objects.objects.iter().find(|o| o.id == id).expect("the object");
        let outline = &o.outlines[0];
        let n = outline.corners.len();
        let closed = outline.closed != Some(false);
        assert_eq!(w.points.len(), n + usize::from(closed), "{}", w.id);
        if closed {
            assert_eq!(w.points[0], w.points[n], "{}: closed", w.id);
        }
        for (k, c) in outline.corners.iter().enumerate() {
            let (want, band) = match *c {
                Corner::Road { s, t, dz, height, .. } => (at(s, t), [dz, dz + height]),
                Corner::Local { u, v, z, height, .. } => {
                    let o0 = at(o.s, o.t);
                    let (hs, hc) = (0.5 + o.hdg.unwrap_or(0.0)).sin_cos();
                    ([o0[0] + u * hc - v * hs, o0[1] + u * hs + v * hc], [o.z_offset + z, o.z_offset + z + height])
                }
            };
            let d = (w.points[k][0] - want[0]).hypot(w.points[k][1] - want[1]);
            worst = worst.max(d);
            assert!(d <= 1e-6, "{} corner {k}: {:?} vs {want:?}", w.id, w.points[k]);
            assert!(
                (w.z[k][0] - band[0]).abs() <= 1e-9 && (w.z[k][1] - band[1]).abs() <= 1e-9,
                "{}: {:?}",
                w.id,
                w.z[k]
            );
        }
    }
    eprintln!("outline corners at most {worst:.2e} m from their places");
    // The walker from t = -5 m at s = 25 m, walking to -t.
    let hits = walker_hits(&surface, 45.0, at(25.0, -5.0), 0.5 - std::f64::consts::FRAC_PI_2);
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0].ids, ["walker".to_string(), "wall:object:21".to_string()]);
    let c = &hits[0];
    let (s, t) = (c.position[0] * cs + c.position[1] * sn, -c.position[0] * sn + c.position[1] * cs);
    // Its front (0.25 m ahead of its centre) reaches t = -9 m after 3.75 m.
    let first = (3.75f64 / (1.2 * 0.01)).ceil() as u64;
    eprintln!("walker: contact at tick {} (reach at {first}), s {s:.4}, t {t:.4}", c.tick);
    assert!(c.tick.abs_diff(first) <= 1, "tick {} vs {first}", c.tick);
    assert!((t + 9.0).abs() <= 0.01 && (s - 25.0).abs() <= 0.01, "contact at s {s} t {t}");
}
