//! Clutter and trajectory noise of a virtual survey (issue 23): overhanging trees, cars parked
//! half on the road, people on it, multipath returns below the surface, a smooth random
//! GNSS/IMU error; all seeded, and none of it unless asked for.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use sim::scanner::{ground_z, scan, Class, Pass, ScanPoint, ScannerConfig};
use sim::survey::{measure, Survey};
use sim::{ObjectKind, Scene, SceneObject, Zone};

/// Road `id` of sample map `file` (below shared/data/opendrive) over `range`.
fn sample(file: &str, id: &str, range: Option<(f64, f64)>) -> Scene {
    let data = roadscan_tests::shared_data();
    let odr = opendrive::read_file(data.join("opendrive").join(file)).unwrap();
    Scene::from_road(&odr, id, range, 11).unwrap()
}

/// The scene with clutter, and the objects the clutter added.
fn cluttered(mut scene: Scene) -> (Scene, Vec<SceneObject>) {
    let before = scene.objects.len();
    scene.add_clutter();
    let added = scene.objects[before..].to_vec();
    (scene, added)
}

/// Checks where the clutter stands on `scene` and that a pass sees it over the road: trees
/// overhanging the carriageway by 1 to 2 m with the crown's bottom 3 to 5 m above it, cars
/// centred on a road edge, people on the road; everything within the s range.
fn check_clutter(name: &str, scene: Scene) {
    let (scene, added) = cluttered(scene);
    let road = scene.road();
    let (s0, s1) = scene.s_range;
    let count = |f: fn(&ObjectKind) -> bool| added.iter().filter(|o| f(&o.kind)).count();
    let trees = count(|k| matches!(k, ObjectKind::Tree { .. }));
    let cars = count(|k| matches!(k, ObjectKind::Car { .. }));
    let people = count(|k| matches!(k, ObjectKind::Person { .. }));
    let per_100 = (s1 - s0) / 100.0;
    assert!(trees >= 1 && trees as f64 >= 2.0 * per_100, "{name}: {trees} trees over {} m", s1 - s0);
    assert!(cars >= 1 && people >= 2, "{name}: {cars} cars, {people} people");
    for o in &added {
        let b = scene.borders(&road, o.s);
        let centre = road.lane_offset(o.s);
        match o.kind {
            ObjectKind::Tree { trunk_radius, crown_radius, crown_height, .. } => {
                assert!(o.s - crown_radius >= s0 - 1e-9 && o.s + crown_radius <= s1 + 1e-9, "{name}: {o:?}");
                // The trunk beside the road, the crown reaching over it.
                let (edge, sign) = if o.t > b.road_left { (b.road_left, 1.0) } else { (b.road_right, -1.0) };
                assert!((o.t - edge) * sign > trunk_radius, "{name}: trunk on the road: {o:?} {b:?}");
                assert_ne!(scene.zone(&road, o.s, o.t - sign * trunk_radius), Zone::Road, "{name}: {o:?}");
                let over = crown_radius - (o.t - edge).abs();
                assert!((1.0 - 1e-9..=2.0 + 1e-9).contains(&over), "{name}: crown {over} m over the road: {o:?}");
                let inner = edge - sign * over;
                assert_eq!(scene.zone(&road, o.s, inner - sign * 0.01), Zone::Road, "{name}: {o:?} {b:?}");
                let bottom = ground_z(&scene, &road, o.s, o.t) + crown_height - crown_radius;
                let above = bottom - scene.z(&road, o.s, inner).unwrap();
                assert!((3.0 - 1e-9..=5.0 + 1e-9).contains(&above), "{name}: crown bottom {above} m up: {o:?}");
            }
            ObjectKind::Car { length, width, .. } => {
                assert!(o.s - length / 2.0 >= s0 && o.s + length / 2.0 <= s1, "{name}: {o:?}");
                // Half its width over the outermost lane of a side with lanes.
                let left = (o.t - b.road_left).abs() < 1e-9 && b.road_left - centre >= 2.5;
                let right = (o.t - b.road_right).abs() < 1e-9 && centre - b.road_right >= 2.5;
                assert!(left || right, "{name}: car not on a road edge: {o:?} {b:?}");
                assert_eq!(scene.zone(&road, o.s, o.t - (o.t - centre).signum() * width / 4.0), Zone::Road);
            }
            ObjectKind::Person { radius, height } => {
                assert!((radius - 0.25).abs() < 1e-12 && (height - 1.8).abs() < 1e-12);
                assert!(o.s >= s0 && o.s <= s1, "{name}: {o:?}");
                for dt in [-radius, 0.0, radius] {
                    assert_eq!(scene.zone(&road, o.s, o.t + dt), Zone::Road, "{name}: person off the road: {o:?}");
                }
            }
            ObjectKind::Pole { .. } => panic!("{name}: clutter adds no poles"),
        }
    }
    // A pass sees the crowns over the carriageway, the cars and the people.
    let survey = Survey::along(&scene, 3);
    let cfg = ScannerConfig { rate: 50.0, points_per_rev: 360, ..Default::default() };
    let pts = scan(&scene, &cfg, &survey.passes[0], 3);
    let over_road = pts
        .iter()
        .filter(|p| p.class == Class::Vegetation && scene.zone(&road, p.s, p.t) == Zone::Road)
        .filter(|p| {
            let h = p.truth[2] - scene.z(&road, p.s, p.t).unwrap();
            (3.0 - 1e-6..12.0).contains(&h)
        })
        .count();
    assert!(over_road > 20, "{name}: {over_road} vegetation points 3 m and more over the road");
    for c in [Class::Car, Class::Person] {
        let n = pts.iter().filter(|p| p.class == c && scene.zone(&road, p.s, p.t) == Zone::Road).count();
        assert!(n > 5, "{name}: {n} {c:?} points over the road");
    }
}

#[test]
fn clutter_stands_beside_over_and_on_the_road_of_the_demo() {
    check_clutter("demo", Scene::demo(4));
}

/// Velodrome has lanes on its right side only: the trees of the left side stand beyond the
/// reference line and reach over the right lanes; cars and people keep to the right.
#[roadscan_tests::needs_shared_data]
#[test]
fn clutter_on_a_one_sided_road() {
    let scene = sample("esmini/velodrome.xodr", "1", Some((400.0, 520.0)));
    let road = scene.road();
    let b = scene.borders(&road, 450.0);
    assert!((b.road_left - road.lane_offset(450.0)).abs() < 1e-9, "velodrome is not one-sided: {b:?}");
    let (c, added) = cluttered(scene.clone());
    assert!(added.iter().any(|o| matches!(o.kind, ObjectKind::Tree { .. }) && o.t > c.borders(&road, o.s).road_left));
    assert!(added.iter().filter(|o| !matches!(o.kind, ObjectKind::Tree { .. })).all(|o| o.t < 0.0));
    check_clutter("velodrome", scene);
}

#[roadscan_tests::needs_shared_data]
#[test]
fn clutter_on_sample_roads_and_partial_ranges() {
    for (file, id, range) in [
        ("esmini/two_plus_one.xodr", "1", None),
        ("esmini/curves.xodr", "1", Some((100.0, 250.0))),
        ("esmini/straight_500_superelevation_elevation_curve.xodr", "1", Some((300.0, 340.0))),
    ] {
        let scene = sample(file, id, range);
        check_clutter(file, scene);
    }
}

/// A short scene (the shortest allowed, 10 m) keeps every object within its range.
#[test]
fn clutter_of_a_short_range_stays_inside_it() {
    let demo = Scene::demo(1);
    let scene = Scene::from_road(&demo.odr, "1", Some((70.0, 80.0)), 2).unwrap();
    let (scene, added) = cluttered(scene);
    assert!(!added.is_empty());
    for o in &added {
        assert!(o.s >= 70.0 && o.s <= 80.0, "{o:?}");
    }
    assert!(scene.clutter.is_some());
}

/// Road `points` of one pass over the demo with clutter, and that scene.
fn multipath_scan() -> (Scene, Vec<ScanPoint>) {
    let (scene, _) = cluttered(Scene::demo(6));
    let cfg = ScannerConfig { points_per_rev: 1000, ..Default::default() };
    let pass = Pass { t: -1.625, speed: 10.0, s_start: 10.0, s_end: 40.0, id: 1 };
    let pts = scan(&scene, &cfg, &pass, 8);
    (scene, pts)
}

#[test]
fn multipath_returns_lie_beyond_the_road_along_the_beam() {
    let (scene, pts) = multipath_scan();
    let road = scene.road();
    let on_road: Vec<&ScanPoint> = pts.iter().filter(|p| matches!(p.class, Class::Road | Class::Marking)).collect();
    let multi: Vec<&ScanPoint> = pts.iter().filter(|p| p.multipath > 0.0).collect();
    // 0.3 % of the road returns (some 250 of 80 000), and only road returns.
    let share = multi.len() as f64 / on_road.len() as f64;
    assert!(on_road.len() > 50_000 && (0.002..0.004).contains(&share), "{} of {}", multi.len(), on_road.len());
    for p in &multi {
        // The class of what the beam hit, which lies on the surface.
        assert!(matches!(p.class, Class::Road | Class::Marking), "{p:?}");
        assert_eq!(scene.on_surface(&road, p.s, p.t, p.truth[2]), Some(true));
        assert!((0.2..=1.0).contains(&p.multipath), "{p:?}");
        // The point is the hit moved along the beam by the noise and the extra path: below
        // the surface.
        let d = (0..3).map(|k| (p.xyz[k] - p.truth[k]).powi(2)).sum::<f64>().sqrt();
        assert!((d - p.noise - p.multipath).abs() < 1e-9, "{d} vs {} + {}", p.noise, p.multipath);
        let below = p.truth[2] - p.xyz[2];
        assert!(below > 0.2 * p.angle.cos() - 0.01 && below <= 1.0 + 0.01, "{below} m below, beam {}", p.angle);
    }
    // Most of them are well below: the beams under the vehicle are steep.
    let deep = multi.iter().filter(|p| p.truth[2] - p.xyz[2] >= 0.2).count();
    assert!(deep * 2 > multi.len(), "{deep} of {} at least 0.2 m below", multi.len());
    // Every other return is direct.
    assert!(pts.iter().filter(|p| p.multipath == 0.0).all(|p| {
        let d = (0..3).map(|k| (p.xyz[k] - p.truth[k]).powi(2)).sum::<f64>().sqrt();
        (d - p.noise.abs()).abs() < 1e-9
    }));
}

/// The rows of `trajectory.csv`.
fn rows(s: &str) -> Vec<Vec<f64>> {
    s.lines().skip(1).map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect()
}

fn rms(v: &[f64]) -> f64 {
    (v.iter().map(|x| x * x).sum::<f64>() / v.len() as f64).sqrt()
}

/// Autocorrelation of `v` (samples `dt` apart) at a lag of `lag` seconds.
fn autocorrelation(v: &[f64], dt: f64, lag: f64) -> f64 {
    let k = (lag / dt).round() as usize;
    let n = v.len() - k;
    let c: f64 = (0..n).map(|i| v[i] * v[i + k]).sum::<f64>() / n as f64;
    c / (v.iter().map(|x| x * x).sum::<f64>() / v.len() as f64)
}

#[test]
fn trajectory_noise_is_smooth_has_the_requested_rms_and_moves_the_points_alike() {
    let scene = Scene::demo(3);
    let mut survey = Survey::demo(5);
    // A 20-minute drive (0.125 m/s over 150 m), 5 profiles a second.
    survey.scanner = ScannerConfig { rate: 5.0, points_per_rev: 16, ..Default::default() };
    survey.passes = vec![Pass { t: -1.625, speed: 0.125, s_start: 0.0, s_end: 150.0, id: 1 }];
    let (clean, clean_traj, n) = measure(&scene, &survey);
    let sigma = [0.03, 0.05];
    survey.trajectory_noise = sigma;
    let (noisy, noisy_traj, m) = measure(&scene, &survey);
    assert_eq!(n, m);
    let (a, b) = (rows(&clean_traj), rows(&noisy_traj));
    assert_eq!(a.len(), 6001);
    for (k, want) in [(1, sigma[0]), (2, sigma[0]), (3, sigma[1])] {
        let e: Vec<f64> = a.iter().zip(&b).map(|(a, b)| b[k] - a[k]).collect();
        let r = rms(&e);
        assert!((r - want).abs() < 0.2 * want, "axis {k}: RMS {r} m, asked for {want} m");
        // Smooth: nearly the same a second later, mostly forgotten after a minute.
        let (near, far) = (autocorrelation(&e, 0.2, 1.0), autocorrelation(&e, 0.2, 60.0));
        assert!(near > 0.95 && far < 0.6, "axis {k}: autocorrelation {near} at 1 s, {far} at 60 s");
    }
    // Every point moved by the trajectory's error at its time.
    assert!(clean.len() > 50_000);
    for (p, q) in clean.iter().zip(&noisy).step_by(7) {
        assert_eq!(p.gps_time, q.gps_time);
        let e = sim::survey::trajectory_noise(survey.seed, sigma, p.gps_time - survey.start_time);
        for (k, (u, v)) in [(p.x, q.x), (p.y, q.y), (p.z, q.z)].into_iter().enumerate() {
            assert!((v - u - e[k]).abs() < 1e-6, "axis {k}: moved {} m, error {} m", v - u, e[k]);
        }
    }
    // Another seed, another error; z alone leaves x and y.
    let other = sim::survey::trajectory_noise(6, sigma, 100.0);
    assert_ne!(other, sim::survey::trajectory_noise(5, sigma, 100.0));
    let z_only = sim::survey::trajectory_noise(5, [0.0, 0.05], 100.0);
    assert!(z_only[0] == 0.0 && z_only[1] == 0.0 && z_only[2] != 0.0);
}

/// Every file of a survey, by name.
fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for f in
        ["scan.las", "trajectory.csv", "survey.json", "truth/road.xodr", "truth/surface.crg", "truth/features.json"]
    {
        out.push((f.to_string(), std::fs::read(dir.join(f)).unwrap()));
    }
    out
}

fn small_survey(scene: &Scene, seed: u64) -> Survey {
    let mut survey = Survey::along(scene, seed);
    survey.scanner.points_per_rev = 200;
    survey.trajectory_noise = [0.03, 0.05];
    survey
}

#[test]
fn same_seed_same_bytes_with_clutter_and_trajectory_noise() {
    let demo = Scene::demo(1);
    let make = |seed: u64| {
        let mut scene = Scene::from_road(&demo.odr, "1", Some((60.0, 90.0)), seed).unwrap();
        scene.add_clutter();
        scene
    };
    let dirs: Vec<roadscan_tests::Scratch> =
        (0..3).map(|i| roadscan_tests::Scratch::new(&format!("sim-clutter-seed-{i}"))).collect();
    for (dir, seed) in dirs.iter().zip([4, 4, 5]) {
        let scene = make(seed);
        sim::survey::run(&scene, &small_survey(&scene, seed), dir, false).unwrap();
    }
    let (a, b, c) = (files(&dirs[0]), files(&dirs[1]), files(&dirs[2]));
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "{name} differs between two runs of the same seed");
    }
    for name in ["scan.las", "trajectory.csv", "truth/features.json"] {
        let i = a.iter().position(|f| f.0 == name).unwrap();
        assert_ne!(a[i].1, c[i].1, "{name} is the same for another seed");
    }
    // survey.json records the noise and the clutter; features.json the clutter and its objects.
    let json = String::from_utf8(a[2].1.clone()).unwrap();
    assert!(json.contains("\"noise_rms_m\": {\"xy\": 0.03, \"z\": 0.05"), "{json}");
    assert!(json.contains("\"clutter\": {\"multipath_fraction\": 0.003"), "{json}");
    let features = String::from_utf8(a[5].1.clone()).unwrap();
    assert!(features.contains("\"type\": \"person\"") && features.contains("\"69\": \"person\""), "{features}");
    assert!(features.contains("\"clutter\": {"), "{features}");
}

/// Clutter is not pavement: the truth is that of the clean scene, byte for byte.
#[test]
fn clutter_leaves_the_truth_of_the_pavement() {
    let demo = Scene::demo(1);
    let clean = Scene::from_road(&demo.odr, "1", Some((100.0, 130.0)), 4).unwrap();
    let mut messy = clean.clone();
    messy.add_clutter();
    let (d0, d1) = (roadscan_tests::Scratch::new("sim-truth-clean"), roadscan_tests::Scratch::new("sim-truth-messy"));
    let mut survey = Survey::along(&clean, 4);
    survey.scanner.points_per_rev = 60;
    sim::survey::run(&clean, &survey, &d0, false).unwrap();
    sim::survey::run(&messy, &survey, &d1, false).unwrap();
    for f in ["truth/road.xodr", "truth/surface.crg"] {
        assert!(std::fs::read(d0.join(f)).unwrap() == std::fs::read(d1.join(f)).unwrap(), "{f} changed");
    }
}

/// Without clutter and trajectory noise nothing changes: the survey files carry none of their
/// keys, and with clutter every return that hit no clutter object and is direct is the very
/// return of the clean scene (the clutter draws no random numbers the clean scan uses).
#[test]
fn without_the_options_the_survey_is_unchanged() {
    let clean = Scene::demo(6);
    let survey = Survey::demo(8);
    assert_eq!(survey.trajectory_noise, [0.0, 0.0]);
    assert!(clean.clutter.is_none());
    let json = sim::survey::survey_json(&survey, None, "scan.las");
    assert!(!json.contains("noise_rms_m") && !json.contains("clutter"), "{json}");
    let features = sim::survey::features_json(&clean);
    assert!(!features.contains("person") && !features.contains("clutter"), "{features}");

    let (messy, added) = cluttered(clean.clone());
    let cfg = ScannerConfig { points_per_rev: 500, ..Default::default() };
    let pass = Pass { t: -1.625, speed: 10.0, s_start: 10.0, s_end: 60.0, id: 1 };
    let (a, b) = (scan(&clean, &cfg, &pass, 8), scan(&messy, &cfg, &pass, 8));
    let key = |p: &ScanPoint| (p.time.to_bits(), p.angle.to_bits());
    let by_ray: std::collections::HashMap<_, &ScanPoint> = b.iter().map(|p| (key(p), p)).collect();
    let road = clean.road();
    let near_clutter = |p: &ScanPoint| {
        added.iter().any(|o| {
            let k = road.pose(p.s).curvature;
            ((o.s - p.s) * (1.0 - k * o.t)).abs() < 4.0
        })
    };
    let (mut same, mut changed) = (0usize, 0usize);
    for p in &a {
        match by_ray.get(&key(p)) {
            Some(q) if *q == p => same += 1,
            Some(q) if q.multipath > 0.0 => {
                // The same hit, reached by a longer path.
                assert_eq!((q.truth, q.class, q.noise), (p.truth, p.class, p.noise));
                changed += 1;
            }
            // A ray stopped by a clutter object, near one, or one that now misses it (none here:
            // clutter only adds obstacles).
            Some(q) => {
                assert!(matches!(q.class, Class::Vegetation | Class::Car | Class::Person), "{p:?} -> {q:?}");
                assert!(near_clutter(p), "{p:?} -> {q:?}");
                changed += 1;
            }
            None => panic!("a ray lost its return: {p:?}"),
        }
    }
    assert!(same > 20 * changed && changed > 100, "{same} rays the same, {changed} changed");
}
