//! The virtual scanner: exact hits on the designed scene, the configured noise, the scan
//! pattern, determinism.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use sim::scanner::{scan, Class, Pass, ScannerConfig};
use sim::Scene;

fn pass() -> Pass {
    Pass { t: -1.625, speed: 10.0, s_start: 40.0, s_end: 70.0, id: 1 }
}

#[test]
fn hits_lie_exactly_on_the_designed_surface_and_the_noise_is_as_configured() {
    let scene = Scene::demo(2);
    let road = scene.road();
    let cfg = ScannerConfig::default();
    let pts = scan(&scene, &cfg, &pass(), 9);
    let (mut n_ground, mut sum, mut sq, mut n_faces, mut n_curb) = (0usize, 0.0, 0.0, 0usize, 0usize);
    for p in &pts {
        if p.class == Class::Curb {
            // The curb class is the curb's face and its top: within curb_width of the road edge,
            // on the sidewalk side.
            let b = scene.borders(&road, p.s);
            let w = scene.surface.curb_width;
            let on_left = p.t >= b.road_left - 1e-6 && p.t <= b.road_left + w + 1e-6;
            let on_right = p.t <= b.road_right + 1e-6 && p.t >= b.road_right - w - 1e-6;
            assert!(on_left || on_right, "curb point at t {} (edges {} {})", p.t, b.road_left, b.road_right);
            n_curb += 1;
        }
        if p.class == Class::Building {
            let (fl, fr) = (scene.facades.left, scene.facades.right);
            assert!((p.t - fl).abs() < 1e-9 || (p.t - fr).abs() < 1e-9, "facade hit at t {}", p.t);
            continue;
        }
        if matches!(p.class, Class::Vegetation | Class::Pole | Class::Car) {
            continue; // objects: see objects_are_hit_where_they_stand
        }
        if let Some(z) = scene.z(&road, p.s, p.t) {
            // Exact hit on the designed surface (bisection to 1e-9 m along the ray), or on a
            // vertical face where the surface steps (curbs, sett joints, manhole rim).
            assert_eq!(
                scene.on_surface(&road, p.s, p.t, p.truth[2]),
                Some(true),
                "hit z {} vs surface {z} at (s {}, t {})",
                p.truth[2],
                p.s,
                p.t
            );
            if (p.truth[2] - z).abs() >= 1e-6 {
                n_faces += 1;
            }
            // Range residual: measured range against the distance from the scanner to the hit.
            n_ground += 1;
            sum += p.noise;
            sq += p.noise * p.noise;
        }
    }
    assert!(n_ground > 50_000, "{n_ground} ground points");
    assert!(n_curb > 500, "{n_curb} curb points");
    // Curb faces, paint edges and sett joints catch a few per cent of the rays.
    assert!(n_faces < n_ground / 20, "{n_faces} hits on vertical faces of {n_ground}");
    let rms = (sq / n_ground as f64).sqrt();
    let mean = sum / n_ground as f64;
    assert!((rms - cfg.range_noise).abs() < 0.1 * cfg.range_noise, "rms {rms}");
    assert!(mean.abs() < 0.0002, "mean {mean}");
    // The measured point is the truth moved along the ray by the noise.
    for p in pts.iter().step_by(97) {
        let d = ((p.xyz[0] - p.truth[0]).powi(2) + (p.xyz[1] - p.truth[1]).powi(2) + (p.xyz[2] - p.truth[2]).powi(2))
            .sqrt();
        assert!((d - p.noise.abs()).abs() < 1e-9, "{d} vs {}", p.noise);
    }
}

#[test]
fn scan_pattern_spacing_and_points_per_profile() {
    let scene = Scene::demo(2);
    let cfg = ScannerConfig { points_per_rev: 720, ..Default::default() };
    let pts = scan(&scene, &cfg, &pass(), 1);
    // Profiles are speed / rate apart along the road.
    let mut stations: Vec<f64> = pts.iter().map(|p| p.s).collect();
    stations.dedup();
    for w in stations.windows(2) {
        assert!((w[1] - w[0] - 10.0 / 200.0).abs() < 1e-9);
    }
    assert_eq!(stations.len(), (30.0 / 10.0 * 200.0) as usize + 1);
    // Every ray below the horizon returns (road, sidewalks, facades); above the facades, sky.
    let per_profile = pts.len() as f64 / stations.len() as f64;
    assert!(per_profile > 0.5 * 720.0 && per_profile < 720.0, "{per_profile}");
    // Time increases within the pass.
    assert!(pts.windows(2).all(|w| w[1].time > w[0].time));
    // Classes present.
    for c in [Class::Road, Class::Marking, Class::Sidewalk, Class::Building] {
        assert!(pts.iter().any(|p| p.class == c), "{c:?} missing");
    }
}

#[test]
fn same_seed_same_points() {
    let scene = Scene::demo(2);
    let cfg = ScannerConfig { points_per_rev: 200, ..Default::default() };
    let a = scan(&scene, &cfg, &pass(), 5);
    let b = scan(&scene, &cfg, &pass(), 5);
    assert_eq!(a, b);
    let c = scan(&scene, &cfg, &pass(), 6);
    assert_ne!(a, c);
}

#[test]
fn objects_are_hit_where_they_stand() {
    let scene = Scene::demo(2);
    let road = scene.road();
    let cfg = ScannerConfig { points_per_rev: 2000, ..Default::default() };
    let pass = Pass { t: -1.625, speed: 10.0, s_start: 40.0, s_end: 135.0, id: 1 };
    let pts = scan(&scene, &cfg, &pass, 4);
    for c in [Class::Vegetation, Class::Pole, Class::Car] {
        assert!(pts.iter().any(|p| p.class == c), "{c:?} missing");
    }
    // Pole hits lie on the pole's surface: horizontal distance from its axis = radius.
    let poles: Vec<_> = scene.objects.iter().filter(|o| matches!(o.kind, sim::ObjectKind::Pole { .. })).collect();
    let mut n = 0;
    for p in pts.iter().filter(|p| p.class == Class::Pole) {
        let o = poles.iter().min_by(|a, b| (a.s - p.s).abs().total_cmp(&(b.s - p.s).abs())).unwrap();
        let sim::ObjectKind::Pole { radius, height } = o.kind else { unreachable!() };
        let k = road.pose(p.s).curvature;
        let d = ((o.s - p.s) * (1.0 - k * o.t)).hypot(p.t - o.t);
        assert!((d - radius).abs() < 1e-6, "pole hit {d} m from the axis, radius {radius}");
        // The pole stands on the sidewalk at its own (s, t): hits between that ground and its top.
        let ground = scene.z(&road, o.s, o.t).unwrap();
        assert!(p.truth[2] >= ground - 1e-9 && p.truth[2] <= ground + height + 1e-9, "pole hit at z {}", p.truth[2]);
        n += 1;
    }
    assert!(n > 10, "{n} pole hits");
}

#[test]
fn mount_offset_and_roll_move_the_beam_origin_and_directions() {
    let scene = Scene::demo(2);
    let road = scene.road();
    let (lateral, roll, height) = (0.4, 0.25, 2.5);
    let cfg = ScannerConfig { points_per_rev: 360, lateral, roll, height, ..Default::default() };
    let pass = Pass { t: -1.625, speed: 10.0, s_start: 20.0, s_end: 30.0, id: 1 };
    let pts = scan(&scene, &cfg, &pass, 8);
    let mut n = 0;
    for p in &pts {
        // The exact hit lies on the beam from the scanner centre: back along the beam by the
        // true range (measured minus noise) is (pass.t + lateral, ground + height).
        let r = p.range - p.noise;
        let t_c = p.t - r * p.angle.sin();
        assert!((t_c - (pass.t + lateral)).abs() < 1e-6, "beam origin at t {t_c}");
        let z_c = p.truth[2] + r * p.angle.cos();
        let ground = scene.z(&road, p.s, pass.t).unwrap();
        assert!((z_c - (ground + height)).abs() < 1e-6, "beam origin {z_c} vs {}", ground + height);
        n += 1;
    }
    assert!(n > 1000);
    // The beams are the mirror angles turned by the roll: 360 per turn, the first at -pi + roll.
    let first = pts.iter().map(|p| p.angle).fold(f64::INFINITY, f64::min);
    let step = std::f64::consts::TAU / 360.0;
    let k = ((first - (-std::f64::consts::PI + roll)) / step).round();
    assert!((first - (-std::f64::consts::PI + roll + k * step)).abs() < 1e-9);
}
