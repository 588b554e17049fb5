//! The demo scene is what it says it is, and its truth CRG holds exactly the scene's heights on
//! the scene's reference line.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use sim::{Material, Scene, Zone};

#[test]
fn demo_scene_features_are_where_and_how_deep_they_are_stated() {
    let scene = Scene::demo(1);
    let road = scene.road();
    assert!((road.length() - 150.0).abs() < 1e-9);
    let m = &scene.surface;
    // Pothole: the flat bottom is `depth` below the asphalt texture.
    let p = m.potholes[0];
    let (h, mat) = scene.height(&road, p.s, p.t).unwrap();
    assert_eq!(mat, Material::Asphalt);
    assert!((h - (m.asphalt.at(p.s, p.t) - p.depth)).abs() < 1e-12);
    // Manhole: flat cover at its offset, its own material, plain road just outside.
    let mh = m.manholes[0];
    assert_eq!(scene.height(&road, mh.s, mh.t).unwrap(), (mh.offset, Material::Manhole));
    assert_eq!(scene.height(&road, mh.s + mh.radius + 0.01, mh.t).unwrap().1, Material::Asphalt);
    // Curbs at the outer borders of lanes 1 and -1, sidewalks to lanes 2 and -2.
    for s in [10.0, 60.0, 110.0, 140.0] {
        let b = road.lane_borders(s);
        let t1 = b.iter().find(|x| x.0 == 1).unwrap().1;
        let tm1 = b.iter().find(|x| x.0 == -1).unwrap().1;
        assert_eq!(scene.zone(&road, s, t1 - 0.01), Zone::Road);
        assert_eq!(scene.zone(&road, s, t1 + 0.01), Zone::Sidewalk);
        assert_eq!(scene.zone(&road, s, tm1 - 0.01), Zone::Sidewalk);
        assert_eq!(scene.zone(&road, s, t1 + 2.01), Zone::Outside);
        let (h, mat) = scene.height(&road, s, t1 + 0.5).unwrap();
        assert_eq!(mat, Material::Concrete);
        assert!((h - m.curb_height).abs() < 0.005, "sidewalk height {h}");
    }
    // Dashed centre line: paint on a dash, none in a gap (outside the cobbles).
    assert_eq!(scene.height(&road, 1.0, 0.0).unwrap().1, Material::Marking);
    assert_eq!(scene.height(&road, 5.0, 0.0).unwrap().1, Material::Asphalt);
}

#[test]
fn asphalt_texture_has_the_stated_rms() {
    let scene = Scene::demo(3);
    let road = scene.road();
    let mut sq = 0.0;
    let mut n = 0;
    for i in 0..200 {
        for j in 0..40 {
            let (s, t) = (5.0 + i as f64 * 0.2313, -2.9 + j as f64 * 0.0703);
            let (h, mat) = scene.height(&road, s, t).unwrap();
            if mat == Material::Asphalt {
                sq += h * h;
                n += 1;
            }
        }
    }
    let rms = (sq / n as f64).sqrt();
    assert!((rms - scene.surface.asphalt_rms).abs() < 0.1 * scene.surface.asphalt_rms, "rms {rms} over {n}");
}

#[test]
fn cobbles_have_joints_and_domes() {
    let scene = Scene::demo(1);
    let road = scene.road();
    let c = scene.surface.cobbles.unwrap();
    let (mut joints, mut n, mut top) = (0, 0, f64::MIN);
    for i in 0..500 {
        for j in 0..50 {
            let (h, mat) = scene.height(&road, c.s0 + 1.0 + i as f64 * 0.0137, -2.0 + j as f64 * 0.0311).unwrap();
            assert_eq!(mat, Material::Cobble);
            n += 1;
            if (h + c.joint_depth).abs() < 1e-12 {
                joints += 1;
            }
            top = top.max(h);
        }
    }
    // Joint area fraction 1 - (l w) / ((l + j)(w + j)).
    let want = 1.0 - (c.length * c.width) / ((c.length + c.joint) * (c.width + c.joint));
    let got = joints as f64 / n as f64;
    assert!((got - want).abs() < 0.03, "joint fraction {got} vs {want}");
    assert!((top - c.dome).abs() < 0.1 * c.dome, "dome top {top}");
}

#[test]
fn truth_crg_holds_the_scene_heights_on_the_scene_reference_line() {
    let scene = Scene::demo(5);
    let road = scene.road();
    let (du, dv, v0, v1) = (0.05, 0.05, -7.0, 6.0);
    let crg = sim::truth::surface_crg(&scene, du, dv, v0, v1);
    let dir = roadscan_tests::Scratch::new("sim");
    let path = dir.join("surface.crg");
    opencrg::write_file(&crg, &path, opencrg::Format::Krbi).unwrap();
    let back = opencrg::read_file(&path).unwrap();
    let surf = opencrg::Surface::new(&back, false).unwrap();
    let (x, y) = surf.reference_line();
    let mut nodes = 0;
    for iu in (0..back.nu).step_by(7) {
        let s = iu as f64 * du;
        let p = road.pose(s);
        // The C-API's Euler integration of the chord headings meets the reference line; steps
        // of du along chords that are du³κ²/24 shorter add up to 3e-6 m over the 60 m arc at
        // du = 5 cm (2e-7 m at the 1 cm of real grids).
        assert!((x[iu] - p.x).hypot(y[iu] - p.y) < 1e-5, "s {s}: ({}, {}) vs ({}, {})", x[iu], y[iu], p.x, p.y);
        for iv in 0..back.nv() {
            let v = v0 + iv as f64 * dv;
            let want = scene.z(&road, s, v);
            // The stored node (float32); evaluation at a node next to a NaN node is NaN in
            // the C-API (0 x NaN), so the nodes are compared as stored.
            let got = back.z_at(iu, iv) as f64;
            match want {
                Some(w) => {
                    assert!((got - w).abs() < 5e-7, "(s {s}, t {v}): CRG {got} vs scene {w}");
                    nodes += 1;
                }
                None => assert!(got.is_nan(), "(s {s}, t {v}) outside the sidewalks must be NaN, got {got}"),
            }
        }
    }
    assert!(nodes > 10_000);
    // Same seed, same bytes.
    let again = dir.join("again.crg");
    opencrg::write_file(&sim::truth::surface_crg(&Scene::demo(5), du, dv, v0, v1), &again, opencrg::Format::Krbi)
        .unwrap();
    assert!(std::fs::read(&path).unwrap() == std::fs::read(&again).unwrap());
    // Written a block of rows at a time (flat memory): the same bytes.
    let streamed = dir.join("streamed.crg");
    sim::truth::write_surface_crg(&Scene::demo(5), (du, dv, v0, v1), &streamed).unwrap();
    assert!(std::fs::read(&path).unwrap() == std::fs::read(&streamed).unwrap());
    let other = sim::truth::surface_crg(&Scene::demo(6), du, dv, v0, v1);
    assert_ne!(other.z, back.z);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A straight 20 m road with one right lane whose width record is `width` (attributes of
/// `<width sOffset="0" .../>`) and a lane offset `offset` (a, b).
fn one_lane_road(width: &str, offset: (&str, &str)) -> opendrive::OpenDrive {
    let (a, b) = offset;
    opendrive::read(&format!(
        r#"<?xml version="1.0"?>
<OpenDRIVE><header revMajor="1" revMinor="6"/>
<road id="1" length="20" junction="-1"><planView><geometry s="0" x="0" y="0" hdg="0" length="20"><line/></geometry></planView>
<lanes><laneOffset s="0" a="{a}" b="{b}" c="0" d="0"/><laneSection s="0"><center><lane id="0" type="driving"/></center>
<right><lane id="-1" type="driving"><width sOffset="0" {width}/></lane></right></laneSection></lanes></road>
</OpenDRIVE>"#
    ))
    .unwrap()
}

/// A lane that starts at zero width (esmini's lane_width_and_offset.xodr): where the road has
/// no width its verges meet, and the scanner's clamp between them panicked ("min > max").
#[test]
fn a_road_of_zero_width_somewhere_scans_without_panic() {
    let odr = one_lane_road(r#"a="0" b="0.5" c="0" d="0""#, ("0", "0"));
    let scene = Scene::from_road(&odr, "1", None, 1).unwrap();
    let road = scene.road();
    let b = scene.borders(&road, 0.0);
    assert_eq!((b.walk_left, b.walk_right), (0.0, 0.0));
    let pass = sim::scanner::Pass { t: -1.0, speed: 10.0, s_start: 0.0, s_end: 12.0, id: 1 };
    let cfg = sim::scanner::ScannerConfig { points_per_rev: 200, ..Default::default() };
    let pts = sim::scanner::scan(&scene, &cfg, &pass, 3);
    // Profiles at s = 0 (no width) and beyond (the lane widens) all return ground.
    assert!(pts.iter().any(|p| p.s == 0.0) && pts.iter().any(|p| p.s > 10.0), "{} points", pts.len());
    assert!(pts.iter().all(|p| p.xyz.iter().all(|v| v.is_finite())));
}

/// Lanes no scene can be built of are errors naming the lane and the station, in bounded
/// time: a lane 4e13 m wide hung the scanner (texture rows across the whole width at every
/// profile), a negative width overlaps the zones, a lane offset of 1e308 m is no road.
#[test]
fn lanes_too_wide_negative_or_far_off_are_errors_naming_lane_and_station() {
    let t = std::time::Instant::now();
    let odr = one_lane_road(r#"a="0" b="1" c="4294967296" d="0""#, ("0", "0"));
    let e = Scene::from_road(&odr, "1", None, 1).map(|_| ()).unwrap_err();
    assert!(matches!(e, sim::Error::LaneTooFar { lane: -1, .. }), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("lane -1 at s = ") && e.contains("more than 1000 m from the reference line"), "{e}");
    assert!(t.elapsed().as_secs() < 5, "{:?}", t.elapsed());

    let odr = one_lane_road(r#"a="3" b="-0.5" c="0" d="0""#, ("0", "0"));
    let e = Scene::from_road(&odr, "1", None, 1).map(|_| ()).unwrap_err();
    assert!(matches!(e, sim::Error::NegativeWidth { lane: -1, s, .. } if s == 6.5), "{e:?}");
    let e = e.to_string();
    // The width 3 - 0.5 s turns negative after s = 6 m: the first station sampled past it.
    assert!(e.contains("lane -1 at s = 6.500 m is -0.2500 m wide") && e.contains("must not be negative"), "{e}");

    let odr = one_lane_road(r#"a="3" b="0" c="0" d="0""#, ("1e308", "0"));
    let e = Scene::from_road(&odr, "1", None, 1).map(|_| ()).unwrap_err();
    assert!(matches!(e, sim::Error::LaneOffsetFar { offset, .. } if offset == 1e308), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("lane offset is 1e308 m"), "{e}");

    // A lane 3 m wide is a scene.
    let odr = one_lane_road(r#"a="3" b="0" c="0" d="0""#, ("0", "0"));
    Scene::from_road(&odr, "1", None, 1).unwrap();
}

/// A measured grid draped on the road: its heights at the nodes (less its plane), bilinear
/// between them, mirrored (so continuous) beyond its edges, and only from s0 to s1.
#[test]
fn a_draped_grid_gives_its_heights_mirrored_beyond_its_edges() {
    let (nu, nv) = (4, 3);
    let z: Vec<f32> = (0..nu * nv).map(|i| if i == 5 { 0.01 } else { 0.0 }).collect();
    let crg = opencrg::Crg::new_grid(0.0, 0.01, nu, -0.01, 0.01, nv, (0.0, 0.0, 0.0), None, z);
    let d = sim::Drape::from_crg(&crg, 10.0, 20.0, 1.0).unwrap();
    // Node (1, 2) is the bump, 1 cm over the rest before the plane (mean and tilts) is taken
    // off; 6.8 mm over the node (3, 0) after.
    let bump = d.at(10.01, 1.02) - d.at(10.03, 1.0);
    assert!((bump - 0.0068333).abs() < 1e-6, "{bump}");
    assert!((d.at(10.005, 1.02) - 0.5 * (d.at(10.0, 1.02) + d.at(10.01, 1.02))).abs() < 1e-9);
    // Mirrored at u = 3 cells: s = 10.04 is s = 10.02.
    assert!((d.at(10.04, 1.01) - d.at(10.02, 1.01)).abs() < 1e-9);
    assert!((d.at(9.99, 1.01) - d.at(10.01, 1.01)).abs() < 1e-9);
    let mut scene = Scene::demo(1);
    scene.surface.drape = Some(d);
    let road = scene.road();
    let (h, m) = scene.height(&road, 10.01, 1.02).unwrap();
    assert_eq!(m, Material::Cobble);
    assert!((h - scene.surface.drape.as_ref().unwrap().at(10.01, 1.02)).abs() < 1e-12);
    assert_eq!(scene.height(&road, 25.0, 1.02).unwrap().1, Material::Asphalt);
}
