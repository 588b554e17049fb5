//! A virtual survey over a real sample road (esmini curves.xodr, road 1, s 100..250): the scene
//! follows the file's lanes and roadMarks, the scanner hits the designed surface exactly, and the
//! truth CRG (u = s from 100 m) holds the scene's heights on the road's reference line.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use sim::scanner::{scan, Class, ScannerConfig};
use sim::{Material, Scene, Zone};

fn curves_scene() -> Scene {
    let data = roadscan_tests::shared_data();
    let odr = opendrive::read_file(data.join("opendrive/esmini/curves.xodr")).unwrap();
    Scene::from_road(&odr, "1", Some((100.0, 250.0)), 7).unwrap()
}

#[roadscan_tests::needs_shared_data]
#[test]
fn scene_follows_the_lanes_and_road_marks_of_the_file() {
    let scene = curves_scene();
    let road = scene.road();
    assert_eq!(scene.s_range, (100.0, 250.0));
    // Lanes 1 and -1 (driving, 3.07 m) are the road; the border lanes beyond it (5 m + 6 m) a
    // level verge, no curb.
    for s in [100.0, 137.3, 181.0, 249.9] {
        let b = scene.borders(&road, s);
        assert!((b.road_left - 3.07).abs() < 1e-9 && (b.road_right + 3.07).abs() < 1e-9, "{b:?}");
        assert!((b.walk_left - 14.07).abs() < 1e-9 && (b.walk_right + 14.07).abs() < 1e-9, "{b:?}");
        assert!(!b.curb_left && !b.curb_right);
        assert_eq!(scene.zone(&road, s, 3.0), Zone::Road);
        assert_eq!(scene.zone(&road, s, 3.2), Zone::Sidewalk);
        assert_eq!(scene.zone(&road, s, 14.2), Zone::Outside);
        // Level verge: gravel, rougher than the road (1 cm RMS), not a curb up.
        let (h, m) = scene.height(&road, s, 6.0).unwrap();
        assert!(h.abs() < 0.05 && m == Material::Gravel, "{h} {m:?}");
    }
    // Solid lines 12 cm wide centred on the outer borders of lanes 1 and -1 (on the road and
    // on the verge), broken 3 m / 6 m centre line from s = 100 (the mark's start in the range).
    for s in [101.0, 140.0, 190.0] {
        for t in [3.07 - 0.05, 3.07 + 0.05, -3.07 + 0.05, -3.07 - 0.05] {
            assert_eq!(scene.height(&road, s, t).unwrap().1, Material::Marking, "s {s} t {t}");
        }
        assert_ne!(scene.height(&road, s, 3.07 - 0.07).unwrap().1, Material::Marking);
    }
    assert_eq!(scene.height(&road, 101.0, 0.0).unwrap().1, Material::Marking);
    assert_eq!(scene.height(&road, 105.0, 0.0).unwrap().1, Material::Asphalt);
    // The furniture lies in the range; pothole and manhole on the road.
    let p = scene.surface.potholes[0];
    assert!(p.s > 100.0 && p.s < 250.0 && scene.zone(&road, p.s, p.t) == Zone::Road);
    let m = scene.surface.manholes[0];
    assert_eq!(scene.height(&road, m.s, m.t).unwrap(), (m.offset, Material::Manhole));
    assert!(scene.objects.iter().all(|o| o.s >= 100.0 && o.s <= 250.0));
    assert!(scene.facades.left > 14.07 && scene.facades.right < -14.07);
}

#[roadscan_tests::needs_shared_data]
#[test]
fn scan_of_a_file_road_hits_its_surface_and_classes() {
    let scene = curves_scene();
    let road = scene.road();
    let survey = sim::survey::Survey::along(&scene, 7);
    assert_eq!(survey.passes.len(), 2);
    assert!((survey.passes[0].t + 1.535).abs() < 1e-9 && (survey.passes[1].t - 1.535).abs() < 1e-9);
    let cfg = ScannerConfig { points_per_rev: 500, ..Default::default() };
    let mut pass = survey.passes[0].clone();
    pass.s_start = 160.0;
    pass.s_end = 190.0;
    let pts = scan(&scene, &cfg, &pass, 3);
    let mut n = 0;
    for p in pts.iter().filter(|p| matches!(p.class, Class::Road | Class::Marking | Class::Ground)) {
        // On the surface, or on the vertical face of a step in it (paint edge, pothole rim).
        if let Some(on) = scene.on_surface(&road, p.s, p.t, p.truth[2]) {
            assert!(on, "hit {} off the surface at s {} t {}", p.truth[2], p.s, p.t);
            n += 1;
        }
    }
    assert!(n > 10_000, "{n} surface hits");
    for c in [Class::Road, Class::Marking, Class::Ground, Class::Building, Class::Pole] {
        assert!(pts.iter().any(|p| p.class == c), "{c:?} missing");
    }
    assert!(!pts.iter().any(|p| matches!(p.class, Class::Curb | Class::Sidewalk)), "a level verge has no curb");
}

#[roadscan_tests::needs_shared_data]
#[test]
fn truth_crg_of_a_file_road_starts_at_the_range() {
    let scene = curves_scene();
    let road = scene.road();
    let crg = sim::truth::surface_crg(&scene, 0.05, 0.05, -5.5, 5.5);
    assert!((crg.u_first() - 100.0).abs() < 1e-12);
    let surf = opencrg::Surface::new(&crg, false).unwrap();
    let (x, y) = surf.reference_line();
    for iu in (0..crg.nu).step_by(97) {
        let s = 100.0 + iu as f64 * 0.05;
        let p = road.pose(s);
        assert!((x[iu] - p.x).hypot(y[iu] - p.y) < 1e-5, "s {s}");
        for iv in (0..crg.nv()).step_by(11) {
            let v = -5.5 + iv as f64 * 0.05;
            let want = scene.z(&road, s, v).unwrap();
            assert!((crg.z_at(iu, iv) as f64 - want).abs() < 5e-7, "(s {s}, t {v})");
        }
    }
}

#[roadscan_tests::needs_shared_data]
#[test]
fn bad_road_or_range_is_a_clear_error() {
    let data = roadscan_tests::shared_data();
    let odr = opendrive::read_file(data.join("opendrive/esmini/curves.xodr")).unwrap();
    let e = Scene::from_road(&odr, "9", None, 1).unwrap_err().to_string();
    assert!(e.contains("no road with id '9'") && e.contains("roads: 1"), "{e}");
    let e = Scene::from_road(&odr, "1", Some((1100.0, 1200.0)), 1).unwrap_err().to_string();
    assert!(e.contains("1100..1200"), "{e}");
}
