//! The co-simulation bridges on a running simulation: a REQ client spawns, sets, ticks, saves
//! and stops through the ZeroMQ server; bad messages get error replies and the run goes on;
//! UDP velocity in moves the ego; UDP out and the state segment carry the ticks.

#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use bridges::udp::{self, Format};
use bridges::wire::{Instruction, Reply};
use roadscan::cosim::{Cosim, CosimConfig, STATE_FIELDS};
use roadscan::simulate::Flow;
use simulation::{RoadSurface, Scenario, Simulation};
use std::time::Duration;

const ROAD: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<OpenDRIVE>
  <header revMajor="1" revMinor="6" name="straight" version="1"/>
  <road name="r" length="300" id="1" junction="-1">
    <planView><geometry s="0" x="0" y="0" hdg="0" length="300"><line/></geometry></planView>
    <lanes><laneSection s="0">
      <left><lane id="1" type="driving" level="false"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></left>
      <center><lane id="0" type="none" level="false"/></center>
      <right><lane id="-1" type="driving" level="false"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></right>
    </laneSection></lanes>
  </road>
</OpenDRIVE>"#;

fn road() -> opendrive::OpenDrive {
    opendrive::read(ROAD).expect("road")
}

/// Runs `sim` with the bridges until a stop or the end; returns the ticks run.
fn drive(sim: &mut Simulation, mut cs: Cosim) -> u64 {
    while !sim.finished() {
        if cs.before_tick(sim).unwrap() == Flow::Stop {
            break;
        }
        let ev = sim.step();
        cs.after_tick(sim, &ev).unwrap();
    }
    cs.finish(sim).unwrap();
    sim.tick()
}

#[test]
fn a_zeromq_client_spawns_sets_ticks_saves_and_stops() {
    let odr = road();
    let surface = RoadSurface::new(&odr.roads[0]);
    let dir = std::env::temp_dir().join(format!("roadscan-cosim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sc = Scenario { duration: 1000.0, route: vec![], ..Scenario::default() };
    let mut sim = Simulation::new(&surface, sc).unwrap();
    let cfg = CosimConfig {
        zmq_bind: Some("tcp://127.0.0.1:0".into()),
        zmq_timeout: Some(Duration::from_secs(20)),
        state_file: Some(dir.join("state.json")),
        ..Default::default()
    };
    let cs = Cosim::open(&cfg).unwrap();
    let endpoint = cs.endpoint().unwrap().to_string();
    let client = std::thread::spawn(move || {
        let mut c = bridges::zmq::Client::connect(&endpoint, Duration::from_secs(20)).unwrap();
        let mut ask = |m: Vec<u8>| Reply::decode(&c.request(m).unwrap()).unwrap();
        let spawn = Instruction::Spawn { prefab: 1, instance: 7, x: 50.0, y: -1.75 };
        let first = ask(spawn.encode());
        let again = ask(spawn.encode());
        let truncated = ask(spawn.encode()[..9].to_vec());
        let set = ask(Instruction::Set { instance: 7, values: vec![(1, 0.7), (2, -0.2)] }.encode());
        let set_ego = ask(Instruction::Set { instance: 0, values: vec![(3, 30.0)] }.encode());
        let mut ticks = Vec::new();
        for _ in 0..100 {
            ticks.push(ask(Instruction::Tick(1).encode()));
        }
        let saved = ask(Instruction::Save(None).encode());
        let escape = ask(Instruction::Save(Some("../x.json".into())).encode());
        let stop = ask(Instruction::Stop.encode());
        (first, again, truncated, set, set_ego, ticks, saved, escape, stop)
    });
    let ticks = drive(&mut sim, cs);
    let (first, again, truncated, set, set_ego, replies, saved, escape, stop) = client.join().unwrap();
    assert!(matches!(first, Reply::Ok(ref f) if f.objects.len() == 2 && f.objects[1].id == 7), "{first:?}");
    assert!(matches!(again, Reply::Error(ref m) if m.contains('7')), "duplicate id: {again:?}");
    assert!(matches!(truncated, Reply::Error(ref m) if m.contains("21 bytes")), "{truncated:?}");
    assert!(matches!(set, Reply::Ok(_)), "{set:?}");
    assert!(matches!(set_ego, Reply::Ok(_)), "{set_ego:?}");
    assert_eq!(ticks, 100, "100 ticks run, then the stop");
    // Each tick reply is that tick's frame: the ego (throttle 30 %) accelerates along x.
    let mut last_x = f64::NEG_INFINITY;
    for (k, r) in replies.iter().enumerate() {
        let Reply::Ok(f) = r else { panic!("tick {k}: {r:?}") };
        assert_eq!(f.tick, k as u64 + 1);
        assert!(f.objects[0].position[0] >= last_x);
        last_x = f.objects[0].position[0];
    }
    let Reply::Ok(f) = &replies[99] else { panic!() };
    assert!((f.time - 100.0 * sim.dt()).abs() < 1e-12);
    assert!(f.objects[0].speed > 0.0, "the ego moves");
    // The actor (steering 0.7, acceleration -0.2 from rest) does not move backwards.
    assert!((f.objects[1].position[0] - 50.0).abs() < 1e-9);
    assert!(matches!(saved, Reply::Ok(_)), "{saved:?}");
    assert!(matches!(escape, Reply::Error(ref m) if m.contains("without directories")), "{escape:?}");
    assert!(matches!(stop, Reply::Ok(_)));
    let state = std::fs::read_to_string(dir.join("state.json")).unwrap();
    let mut again =
        Simulation::new(&surface, Scenario { duration: 1000.0, route: vec![], ..Scenario::default() }).unwrap();
    again.resume(&state).unwrap();
    assert_eq!(again.tick(), 100);
    assert_eq!(again.save().unwrap(), sim.save().unwrap(), "the saved state is the state at the save");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn udp_velocity_moves_the_ego_and_udp_out_and_the_state_segment_carry_each_tick() {
    let odr = road();
    let surface = RoadSurface::new(&odr.roads[0]);
    let dir = std::env::temp_dir().join(format!("roadscan-cosim-shm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let listen = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    listen.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    // A free port for the input.
    let port = std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let cfg = CosimConfig {
        udp_in: vec![format!("127.0.0.1:{port}")],
        udp_out: vec![listen.local_addr().unwrap().to_string()],
        udp_format: Format::Text,
        shm: Some("cosimtest".into()),
        shm_dir: Some(dir.clone()),
        ..Default::default()
    };
    let mut cs = Cosim::open(&cfg).unwrap();
    let sc = Scenario { duration: 1.0, route: vec![], ..Scenario::default() };
    let mut sim = Simulation::new(&surface, sc).unwrap();
    let x0 = sim.ego().x;
    let tx = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    tx.send_to(b"1,0,0", ("127.0.0.1", port)).unwrap();
    tx.send_to(b"not,a,number", ("127.0.0.1", port)).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    let state = bridges::shm::Segment::open(&dir.join("cosimtest.state")).unwrap();
    let mut ticks = 0;
    while !sim.finished() {
        cs.before_tick(&mut sim).unwrap();
        let ev = sim.step();
        cs.after_tick(&sim, &ev).unwrap();
        ticks += 1;
        let snap = state.read(100).unwrap().unwrap();
        let v = bridges::shm::f64_values(&snap.payload);
        assert_eq!(v.len(), STATE_FIELDS.len());
        assert_eq!((v[0], snap.tick), (ticks as f64, ticks));
    }
    assert_eq!(cs.refused, 1, "the bad datagram");
    cs.finish(&sim).unwrap();
    assert!(!dir.join("cosimtest.state").exists(), "segments removed at the end");
    let moved = sim.ego().x - x0;
    assert!((moved - 1.0).abs() < 1e-9, "1 m/s for 1 s moved {moved} m");
    // One pose update a tick for the ego.
    let mut buf = [0u8; 512];
    let mut poses = 0;
    while let Ok(n) = listen.recv(&mut buf) {
        let v = Format::Text.decode(&buf[..n]).unwrap();
        assert_eq!(v[0], udp::kind::POSE);
        poses += 1;
        if poses == ticks {
            break;
        }
    }
    assert_eq!(poses, ticks);
    std::fs::remove_dir_all(&dir).unwrap();
}
