//! End-to-end tests of `roadscan axis`: a virtual survey's trajectory over a real road back to
//! its designed reference line, an OpenStreetMap way made here, bad input.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::eval::Curve;
use opendrive::{GeometryKind, RoadEval};
use roadscan_tests::Scratch;
use std::path::Path;
use std::process::{Command, Output, Stdio};

fn roadscan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_roadscan"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

fn tmp(name: &str) -> Scratch {
    Scratch::new(&format!("cli-axis-{name}"))
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The pose of a written road at s, in the map frame.
fn map_pose(odr: &opendrive::OpenDrive, eval: &RoadEval, s: f64) -> [f64; 3] {
    let p = eval.pose(s);
    let m = odr.header.offset.unwrap_or_default().placement().to_map([p.x, p.y, eval.elevation(s)]);
    [m[0], m[1], m[2]]
}

/// esmini's curves.xodr road 1 (line, clothoids, arcs), surveyed over s 0..600 along lane -1;
/// the trajectory of the first pass, moved to the reference line by the lane's offset, gives
/// back the designed line within 1 cm with at most 1.5x its records, curvature continuous.
#[roadscan_tests::needs_shared_data]
#[test]
fn a_survey_trajectory_gives_back_the_designed_reference_line() {
    let data = roadscan_tests::shared_data();
    let curves = data.join("opendrive/esmini/curves.xodr");
    let d = tmp("traj");
    let survey = d.join("survey");
    let o = roadscan(&[
        "synth",
        "--scene",
        s(&curves),
        "--road",
        "1",
        "--s-range",
        "0..600",
        "--out",
        s(&survey),
        "--points-per-rev",
        "8",
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let truth_odr = opendrive::read_file(survey.join("truth/road.xodr")).unwrap();
    let truth_road = truth_odr.road("1").unwrap();
    let truth = RoadEval::new(truth_road);
    let tplace = truth_odr.header.offset.unwrap_or_default().placement();
    // The drive's lateral offset, as the survey crew knows it: the first row against the road.
    let traj = std::fs::read_to_string(survey.join("trajectory.csv")).unwrap();
    let row: Vec<f64> = traj.lines().nth(1).unwrap().split(',').map(|v| v.parse().unwrap()).collect();
    let f = tplace.to_file([row[1], row[2], row[3]]);
    let offset = -truth.xy_to_st(f[0], f[1], 10.0).unwrap().t;
    let out = d.join("axis.xodr");
    let o = roadscan(&[
        "axis",
        "--trajectory",
        s(&survey.join("trajectory.csv")),
        "--offset",
        &offset.to_string(),
        "--sensor-height",
        "2.2",
        "--crs",
        "EPSG:23700",
        "--out",
        s(&out),
    ]);
    let report = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{report}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(report.contains("plan view: max"), "{report}");
    let odr = opendrive::read_file(&out).unwrap();
    assert!(odr.header.geo_reference.as_deref().unwrap().starts_with("+proj=somerc"), "EOV's PROJ string");
    let road = &odr.roads[0];
    let eval = RoadEval::new(road);
    // Every 0.25 m of the fitted line within 1 cm of the designed one; heights within 1 cm.
    let n = (road.length / 0.25).ceil() as usize;
    let (mut worst, mut worst_z) = (0.0f64, 0.0f64);
    for i in 0..=n {
        let m = map_pose(&odr, &eval, (i as f64 * 0.25).min(road.length));
        let f = tplace.to_file(m);
        // A fitted end a fraction of a millimetre before the design's start projects onto no
        // s of it: measured from the design's start.
        let st = truth.xy_to_st(f[0], f[1], 5.0).unwrap_or_else(|| {
            let p = truth.pose(0.0);
            let d = (f[0] - p.x).hypot(f[1] - p.y);
            assert!(d < 0.01, "fitted point {f:?} {d} m from the design and beyond its ends");
            opendrive::eval::StCandidate { s: 0.0, t: d, residual: 0.0 }
        });
        worst = worst.max(st.t.abs());
        worst_z = worst_z.max((m[2] - tplace.to_map([0.0, 0.0, truth.elevation(st.s)])[2]).abs());
    }
    eprintln!("{report}fitted vs designed: max {worst:.4} m, heights {worst_z:.4} m");
    assert!(worst <= 0.01, "{worst} m from the designed line");
    assert!(worst_z <= 0.01, "heights {worst_z} m off");
    // The designed records over s 0..600 (those that start before it ends).
    let designed = truth_road.plan_view.geometries.iter().filter(|g| g.s < road.length).count();
    let records = road.plan_view.geometries.len();
    assert!(records as f64 <= 1.5 * designed as f64, "{records} records for {designed}");
    // Position, heading and curvature continuous at every joint.
    let curves: Vec<Curve> = road.plan_view.geometries.iter().map(Curve::new).collect();
    for w in curves.windows(2) {
        let (a, b) = (w[0].pose(w[0].length), w[1].pose(0.0));
        assert!((a.x - b.x).hypot(a.y - b.y) < 1e-6, "gap");
        assert!((a.hdg - b.hdg).abs() < 1e-9 && (a.curvature - b.curvature).abs() < 1e-9, "kink at a joint");
    }
    // The first designed record is a 50 m line; so is ours, within 0.5 m.
    let g0 = &road.plan_view.geometries[0];
    assert!(matches!(g0.kind, GeometryKind::Line) && (g0.length - 50.0).abs() < 0.5, "{g0:?}");
    // No two adjacent records of one equation (qc-opendrive's strict run fails on them), by
    // `check` as by the rule itself.
    let errors: Vec<_> = opendrive::validate::check(&odr, &Default::default())
        .into_iter()
        .filter(|d| d.severity == opendrive::validate::Severity::Error || d.message.contains("redundant"))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");
    let elev = &road.elevation_profile.elevations;
    assert!(elev.windows(2).all(|w| !w[0].same_equation(&w[1])), "{elev:?}");
    // The same for the refit of the designed road (resampled, fitted again), as CI runs it.
    let refit = d.join("refit.xodr");
    let design = data.join("opendrive/esmini/curves.xodr");
    let o = roadscan(&["axis", "--xodr", s(&design), "--road", "1", "--out", s(&refit)]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let odr = opendrive::read_file(&refit).unwrap();
    let errors: Vec<_> = opendrive::validate::check(&odr, &Default::default())
        .into_iter()
        .filter(|d| d.severity == opendrive::validate::Severity::Error || d.message.contains("redundant"))
        .collect();
    assert!(errors.is_empty(), "refit: {errors:?}");
    let elev = &odr.roads[0].elevation_profile.elevations;
    assert!(elev.windows(2).all(|w| !w[0].same_equation(&w[1])), "refit: {elev:?}");
}

/// A way along UTM zone 33's central meridian (15° E) from 45° N: in EPSG:32633 it starts at
/// E 500000, N 4982950.40 (0.9996 of the WGS84 meridian arc) and runs north for 222.17 m.
#[test]
fn an_osm_way_is_projected_into_the_project_crs() {
    let d = tmp("osm");
    let osm = d.join("map.osm");
    std::fs::write(
        &osm,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<osm version="0.6" generator="roadscan test">
  <node id="10" lat="45.0" lon="15.0"/>
  <node id="11" lat="45.001" lon="15.0"/>
  <node id="12" lat="45.002" lon="15.0"/>
  <node id="99" lat="46.0" lon="16.0"/>
  <way id="5"><nd ref="10"/><nd ref="11"/><nd ref="12"/><tag k="highway" v="secondary"/></way>
</osm>"#,
    )
    .unwrap();
    let out = d.join("axis.xodr");
    let o = roadscan(&["axis", "--osm", s(&osm), "--way", "5", "--crs", "EPSG:32633", "--out", s(&out), "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let odr = opendrive::read_file(&out).unwrap();
    let eval = RoadEval::new(&odr.roads[0]);
    let start = map_pose(&odr, &eval, 0.0);
    assert!((start[0] - 500_000.0).abs() < 0.01 && (start[1] - 4_982_950.40).abs() < 0.01, "{start:?}");
    assert!((eval.pose(0.0).hdg - std::f64::consts::FRAC_PI_2).abs() < 1e-6);
    assert!((odr.roads[0].length - 222.175).abs() < 0.01, "{}", odr.roads[0].length);
    // lon/lat without a projected --crs is refused.
    let o = roadscan(&["axis", "--osm", s(&osm), "--way", "5", "--out", s(&d.join("no.xodr"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("give a projected --crs"));
    assert!(!d.join("no.xodr").exists());
}

#[test]
fn the_json_report_parses_and_lists_every_record() {
    let d = tmp("json");
    let csv = d.join("line.csv");
    // A quarter circle of radius 50 m after 30 m of straight, every metre.
    let mut text = String::from("x,y\n");
    for i in 0..=30 {
        text += &format!("{},0\n", i);
    }
    for i in 1..=78 {
        let a = i as f64 / 50.0;
        text += &format!("{},{}\n", 30.0 + 50.0 * a.sin(), 50.0 - 50.0 * a.cos());
    }
    std::fs::write(&csv, text).unwrap();
    let out = d.join("axis.xodr");
    let o = roadscan(&["axis", "--polyline", s(&csv), "--out", s(&out), "--json", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let records = v["records"].as_array().unwrap();
    let odr = opendrive::read_file(&out).unwrap();
    assert_eq!(records.len(), odr.roads[0].plan_view.geometries.len());
    assert!(v["max_m"].as_f64().unwrap() <= 0.01);
    // A line and an arc, joined by a clothoid at most (the data have a curvature jump).
    let kinds: Vec<&str> = records.iter().map(|r| r["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"line"), "{kinds:?}");
    assert_eq!(kinds.last(), Some(&"arc"), "{kinds:?}");
    assert!(records.len() <= 4, "{kinds:?}");
    let k = records.last().unwrap()["curv_start"].as_f64().unwrap();
    assert!((k - 0.02).abs() < 2e-4, "arc curvature {k}");
}

#[test]
fn bad_polylines_are_one_line_errors_and_leave_no_file() {
    let d = tmp("bad");
    let csv = d.join("line.csv");
    std::fs::write(&csv, "x,y\n0,0\n10,0\n20,inf\n").unwrap();
    let out = d.join("axis.xodr");
    let o = roadscan(&["axis", "--polyline", s(&csv), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("line.csv:4: y 'inf' is not a finite number"), "{err}");
    assert!(!out.exists());
    // Two distinct points 1 m apart: too short for records of 1 m.
    std::fs::write(&csv, "0,0\n1,0\n1,0\n").unwrap();
    let o = roadscan(&["axis", "--polyline", s(&csv), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("too few to fit"), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!out.exists());
}

/// A surveyed polyline: 100 m of straight then 100 m of arc (radius 200 m), every 0.5 m,
/// 3 mm of Gaussian noise in x and y and every 97th vertex 0.5 m off. The fit estimates the
/// noise, leaves the outliers out, follows the true line within 1 cm with a few records and
/// reports all of it; it used to chase the noise with a record per metre and miss the
/// tolerance at single vertices.
#[test]
fn a_noisy_polyline_gives_few_records_and_reports_its_noise() {
    let d = tmp("noisy");
    let csv = d.join("line.csv");
    let mut state = 5u64;
    let mut uni = move || {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let mut gauss = move || {
        let (a, b) = (uni(), uni());
        (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
    };
    let truth = |s: f64| -> [f64; 2] {
        if s <= 100.0 {
            [s, 0.0]
        } else {
            let a = (s - 100.0) / 200.0;
            [100.0 + 200.0 * a.sin(), 200.0 - 200.0 * a.cos()]
        }
    };
    let mut text = String::from("x,y\n");
    let mut outliers = 0;
    for i in 0..=400 {
        let p = truth(i as f64 * 0.5);
        let (x, mut y) = (p[0] + 0.003 * gauss(), p[1] + 0.003 * gauss());
        if i % 97 == 50 {
            y += 0.5;
            outliers += 1;
        }
        text += &format!("{x},{y}\n");
    }
    std::fs::write(&csv, text).unwrap();
    let out = d.join("axis.xodr");
    let o = roadscan(&["axis", "--polyline", s(&csv), "--out", s(&out), "--json", "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let noise = v["noise_m"].as_f64().unwrap();
    assert!((noise - 0.003).abs() < 0.0006, "noise {noise}");
    assert_eq!(v["outliers"].as_u64(), Some(outliers), "{v}");
    assert!(v["deviation_m"].as_f64().unwrap() <= 0.01);
    let records = v["records"].as_array().unwrap();
    assert!(records.len() <= 4, "{} records", records.len());
    // The written line within 1 cm of the true one.
    let odr = opendrive::read_file(&out).unwrap();
    let road = &odr.roads[0];
    let eval = RoadEval::new(road);
    let mut worst = 0.0f64;
    let n = (road.length / 0.5) as usize;
    for i in 0..=n {
        let m = map_pose(&odr, &eval, (i as f64 * 0.5).min(road.length));
        let d = if m[0] <= 100.0 { m[1].abs() } else { ((m[0] - 100.0).hypot(m[1] - 200.0) - 200.0).abs() };
        worst = worst.max(d);
    }
    assert!(worst <= 0.01, "{worst} m from the true line");
    // The text report says it too.
    let o = roadscan(&["axis", "--polyline", s(&csv), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(0));
    let report = String::from_utf8_lossy(&o.stdout);
    assert!(report.contains(&format!("mm estimated, {outliers} outliers left out")), "{report}");
}

/// `axis --points`: the drive path found in a survey's LAS (two passes in opposite
/// directions; no trajectory) is written as a road whose line lies on pass 1's track (as
/// survey.json records it) within 5 cm, its elevation on the road within 5 cm; what was
/// estimated is printed.
#[roadscan_tests::needs_shared_data]
#[test]
fn the_points_alone_give_the_drive_path() {
    let data = roadscan_tests::shared_data();
    let curves = data.join("opendrive/esmini/curves.xodr");
    let d = tmp("points");
    let survey = d.join("survey");
    let o = roadscan(&[
        "synth",
        "--scene",
        s(&curves),
        "--road",
        "1",
        "--s-range",
        "100..250",
        "--out",
        s(&survey),
        "--points-per-rev",
        "300",
        "-q",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = d.join("axis.xodr");
    let o = roadscan(&["axis", "--points", s(&survey.join("scan.las")), "--out", s(&out)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("follows pass 1 of 2") && err.contains("sensor height estimated 2.200 m"), "{err}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(survey.join("survey.json")).unwrap()).unwrap();
    let track = json["passes"][0]["track_t_m"].as_f64().unwrap();
    let odr = opendrive::read_file(&out).unwrap();
    let truth = opendrive::read_file(survey.join("truth/road.xodr")).unwrap();
    let (road, troad) = (&odr.roads[0], &truth.roads[0]);
    assert!((road.length - 150.0).abs() < 3.0, "{}", road.length);
    let (eval, teval) = (RoadEval::new(road), RoadEval::new(troad));
    let tplace = truth.header.offset.unwrap_or_default().placement();
    let (mut lateral, mut height) = (0.0f64, 0.0f64);
    let mut sv = 0.5;
    while sv < road.length - 0.5 {
        let m = map_pose(&odr, &eval, sv);
        let f = tplace.to_file(m);
        let st = teval.xy_to_st(f[0], f[1], 20.0).unwrap();
        lateral = lateral.max((st.t - track).abs());
        height = height.max((f[2] - teval.elevation(st.s)).abs());
        sv += 1.0;
    }
    eprintln!("axis --points: {:.2} mm from the track, elevation {:.1} mm", lateral * 1e3, height * 1e3);
    assert!(lateral < 0.05, "{lateral} m from pass 1's track");
    assert!(height < 0.05, "elevation {height} m off the road");
}

/// The real Jakarto sample (0.02 s, no scan angles): a one-line error naming the file and
/// what is missing, nothing written, never a panic.
#[roadscan_tests::needs_shared_data]
#[test]
fn the_points_without_scan_angles_are_a_clear_error() {
    let data = roadscan_tests::shared_data();
    let d = tmp("points-jakarto");
    let out = d.join("axis.xodr");
    let las = data.join("las/jakarto_montreal_mls_0.02s.las");
    let o = roadscan(&["axis", "--points", s(&las), "--out", s(&out)]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("jakarto_montreal_mls_0.02s.las") && err.contains("scan angle"), "{err}");
    assert!(!out.exists());
}
