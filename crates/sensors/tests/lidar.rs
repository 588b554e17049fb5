//! The LiDAR over worlds whose answers are known: a flat ground, a wall, the demo road.

use sensors::{packet, BeamTable, Epoch, Firing, Lidar};
use world::{MaterialTable, Part, Pose, Tag, Trajectory, TriMesh, World};

/// A square of ground at z = 0, 400 m across, asphalt.
fn ground() -> World {
    let v = [[-200.0, -200.0, 0.0], [200.0, -200.0, 0.0], [200.0, 200.0, 0.0], [-200.0, 200.0, 0.0]];
    let mesh = TriMesh::new(&v, &[[0, 1, 2], [0, 2, 3]], vec![Tag { class: 11, ..Tag::default() }], &[]).expect("mesh");
    World::new(vec![Part::Mesh(mesh)], MaterialTable::standard())
}

/// Standing still at the origin, facing +x.
struct Still;
impl Trajectory for Still {
    fn pose(&self, _t: f64) -> Pose {
        Pose::IDENTITY
    }
    fn span(&self) -> (f64, f64) {
        (0.0, 1e9)
    }
}

/// Driving along +x at `v` m/s.
struct Straight(f64);
impl Trajectory for Straight {
    fn pose(&self, t: f64) -> Pose {
        Pose { position: [self.0 * t, 0.0, 0.0], ..Pose::IDENTITY }
    }
    fn span(&self) -> (f64, f64) {
        (0.0, 1e9)
    }
}

fn run(l: &Lidar, w: &World, path: &dyn Trajectory, secs: f64, threads: usize) -> (Vec<Firing>, sensors::Summary) {
    let mut all = Vec::new();
    let s = l
        .run(w, path, (0.0, secs), threads, &mut |f| {
            all.extend_from_slice(f);
            Ok(())
        })
        .expect("run");
    (all, s)
}

#[test]
fn ranges_on_flat_ground_are_exact() {
    let l = Lidar::hdl32e();
    let (firings, s) = run(&l, &ground(), &Still, 0.1, 2);
    // 0.1 s: 180 whole packets of 12 firings.
    assert_eq!((s.packets, s.firings), (180, 2160));
    assert!((s.revolutions - 0.99533).abs() < 1e-4, "{}", s.revolutions);
    let mut checked = 0;
    for f in &firings {
        for (j, r) in f.returns.iter().enumerate() {
            let e = l.beams.lasers[j].elevation;
            if e >= 0.0 {
                assert!(!r.is_some(), "laser {j} looks up and sees nothing");
                continue;
            }
            let want = 1.8 / (-e).sin();
            if want > l.beams.max_range {
                continue;
            }
            // Cast within 1 mm of the exact intersection (it is within 1e-9 m), reported in 2 mm steps.
            assert!((r.cast - want).abs() < 1e-9, "laser {j}: {} vs {want}", r.cast);
            assert!((r.distance as f64 * 0.002 - want).abs() <= 0.001 + 1e-9);
            assert_eq!(r.class, 11);
            checked += 1;
        }
    }
    assert!(checked > 30_000, "{checked} returns checked");
}

#[test]
fn timing_azimuths_and_packets() {
    let l = Lidar::hdl32e();
    let (firings, _) = run(&l, &ground(), &Still, 0.2, 1);
    let step = 360.0 * 10.0 * 46.08e-6;
    for w in firings.windows(2) {
        assert!((w[1].time - w[0].time - 46.08e-6).abs() < 1e-12);
        let d = (w[1].azimuth - w[0].azimuth).to_degrees().rem_euclid(360.0);
        assert!((d - step).abs() < 1e-9, "azimuth step {d}");
    }
    let epoch = Epoch::default();
    let p = packet::data_packet(&l.beams, &firings[12..24], &epoch).expect("packet");
    for b in 0..12 {
        assert_eq!(&p[b * 100..b * 100 + 2], &[0xFF, 0xEE]);
        let az = u16::from_le_bytes([p[b * 100 + 2], p[b * 100 + 3]]);
        assert_eq!(az, packet::azimuth_units(firings[12 + b].azimuth));
    }
    assert_eq!((p[1204], p[1205]), (0x37, 0x21));
    let ts = u32::from_le_bytes([p[1200], p[1201], p[1202], p[1203]]);
    assert_eq!(ts, (12.0 * 46.08f64).floor() as u32, "microseconds past the hour of the first firing");
    assert!(packet::data_packet(&l.beams, &firings[..11], &epoch).is_none());
    assert!(packet::data_packet(&BeamTable::vlp16(), &firings[..12], &epoch).is_none());
}

#[test]
fn the_same_bytes_at_any_thread_count() {
    let mut l = Lidar::hdl32e();
    l.range_noise = 0.02;
    l.dropout = 0.1;
    let w = ground();
    let (a, _) = run(&l, &w, &Straight(10.0), 0.15, 1);
    let (b, _) = run(&l, &w, &Straight(10.0), 0.15, 2);
    let (c, _) = run(&l, &w, &Straight(10.0), 0.15, 5);
    // Bit for bit (NaN for no hit compares by its bits).
    let bits = |f: &[Firing]| -> Vec<u64> {
        f.iter()
            .flat_map(|f| {
                let head = [f.time.to_bits(), f.azimuth.to_bits(), f.pose.position[0].to_bits()];
                let rets: Vec<u64> = f
                    .returns
                    .iter()
                    .flat_map(|r| {
                        [
                            r.cast.to_bits(),
                            r.range.to_bits(),
                            r.distance as u64,
                            r.intensity as u64,
                            r.point[2].to_bits(),
                        ]
                    })
                    .collect();
                head.into_iter().chain(rets)
            })
            .collect()
    };
    assert!(bits(&a) == bits(&b), "1 and 2 threads differ");
    assert!(bits(&a) == bits(&c), "1 and 5 threads differ");
    // A closed-loop simulation's way: a tick's firings at a time (217 at 100 Hz), on any
    // thread count, the same as all at once on one.
    let n = a.len();
    let whole = l.cast_firings(&w, &Straight(10.0), 0, n, 1).expect("firings");
    assert_eq!(whole.len(), n);
    for threads in [2, 5] {
        let mut pieces = Vec::new();
        let mut first = 0;
        while first < n {
            let count = 217.min(n - first);
            pieces.extend(l.cast_firings(&w, &Straight(10.0), first as u64, count, threads).expect("firings"));
            first += count;
        }
        assert!(bits(&whole) == bits(&pieces), "{threads} threads, 217 firings at a time");
    }
    // Noise and dropouts did something, at about the rates asked.
    let rets: Vec<_> = a.iter().flat_map(|f| f.returns.iter()).filter(|r| r.cast.is_finite()).collect();
    let lost = rets.iter().filter(|r| !r.is_some()).count() as f64 / rets.len() as f64;
    assert!((lost - 0.1).abs() < 0.01, "dropout rate {lost}");
    let kept: Vec<f64> = rets.iter().filter(|r| r.is_some()).map(|r| r.range - r.cast).collect();
    let sd = (kept.iter().map(|d| d * d).sum::<f64>() / kept.len() as f64).sqrt();
    assert!((sd - 0.02).abs() < 0.002, "range noise {sd}");
}

#[test]
fn each_firing_sees_from_where_the_sensor_is_then() {
    // Driving at 20 m/s towards a wall at x = 30 m: the horizontal laser's range shrinks by
    // the distance driven between its firings.
    let v = [[30.0, -50.0, -5.0], [30.0, 50.0, -5.0], [30.0, 50.0, 20.0], [30.0, -50.0, 20.0]];
    let wall = TriMesh::new(&v, &[[0, 1, 2], [0, 2, 3]], vec![], &[]).expect("wall");
    let w = World::new(vec![Part::Mesh(wall)], MaterialTable::standard());
    let l = Lidar::hdl32e();
    let (firings, _) = run(&l, &w, &Straight(20.0), 0.3, 2);
    let mut n = 0;
    for f in firings.iter().filter(|f| f.azimuth.to_degrees() < 1.0 || f.azimuth.to_degrees() > 359.0) {
        let r = &f.returns[15]; // elevation 0
        let t = f.time + 15.0 * l.beams.laser_dt;
        let phi = l.azimuth(t);
        let want = (30.0 - 20.0 * t) / phi.cos();
        assert!((r.cast - want).abs() < 1e-6, "t {t}: {} vs {want}", r.cast);
        n += 1;
    }
    assert!(n >= 3, "{n} firings looked at the wall");
}

#[test]
fn words_frames_round_trip() {
    let l = Lidar::hdl32e();
    let (firings, _) = run(&l, &ground(), &Still, 0.05, 2);
    let mut bytes = sensors::words::header(32, 10.0).to_vec();
    firings.iter().for_each(|f| sensors::words::record(f, &mut bytes));
    assert_eq!(bytes.len(), 20 + firings.len() * 140, "140 bytes an HDL-32E firing");
    let (lasers, rate, back) = sensors::words::read(&bytes).expect("a words file");
    assert_eq!((lasers, rate, back.len()), (32, 10.0, firings.len()));
    for (f, (t, az, words)) in firings.iter().zip(&back) {
        assert_eq!((*t, *az), (f.time, packet::azimuth_units(f.azimuth)));
        for (r, w) in f.returns.iter().zip(words) {
            match w {
                Some((range, refl)) => {
                    assert!((range - r.range).abs() <= 0.001 + 1e-12, "{range} vs {}", r.range);
                    assert!((refl - r.reflectivity.min(1.0)).abs() <= 0.5 / 4095.0 + 1e-12);
                }
                None => assert!(!r.is_some()),
            }
        }
    }
    assert!(sensors::words::read(&bytes[..bytes.len() - 1]).is_none(), "a cut file is refused");
    assert!(sensors::words::read(b"RSWX").is_none());
}
