//! The survey: trajectory errors move every point and the trajectory by the same amount.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use sim::scanner::{Pass, ScannerConfig};
use sim::survey::{measure, Survey};
use sim::Scene;

#[test]
fn trajectory_offset_and_drift_move_points_and_trajectory_alike() {
    let scene = Scene::demo(3);
    let mut survey = Survey::demo(5);
    survey.scanner = ScannerConfig { points_per_rev: 90, ..Default::default() };
    survey.passes = vec![
        Pass { t: -1.625, speed: 10.0, s_start: 20.0, s_end: 30.0, id: 1 },
        Pass { t: 1.625, speed: 10.0, s_start: 60.0, s_end: 50.0, id: 2 },
    ];
    let (clean, clean_traj, n) = measure(&scene, &survey);
    let (offset, drift) = ([0.12, -0.07, 0.03], [0.02, 0.01, -0.005]);
    survey.trajectory_offset = offset;
    survey.trajectory_drift = drift;
    let (moved, moved_traj, m) = measure(&scene, &survey);
    assert_eq!(n, m);
    assert!(n.points > 1000, "{} points", n.points);
    // Pass k starts at start_time + 60 s * k + the earlier passes' durations (1 s each here).
    let pass_start =
        |gps: f64| if gps < survey.start_time + 30.0 { survey.start_time } else { survey.start_time + 61.0 };
    for (a, b) in clean.iter().zip(&moved) {
        assert_eq!(a.gps_time, b.gps_time);
        let t = a.gps_time - pass_start(a.gps_time);
        // A point is timed within its revolution, so the last one ends 1 / rate after the last profile.
        assert!((0.0..=1.0 + 1.0 / 200.0).contains(&t), "{t} s into the pass");
        for (k, (pa, pb)) in [(a.x, b.x), (a.y, b.y), (a.z, b.z)].into_iter().enumerate() {
            let want = offset[k] + drift[k] * t;
            assert!((pb - pa - want).abs() < 1e-9, "axis {k}: moved {} m, want {want} m", pb - pa);
        }
    }
    // The trajectory rows (4 decimals) move alike.
    let rows = |s: &str| -> Vec<Vec<f64>> {
        s.lines().skip(1).map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect()
    };
    let (ra, rb) = (rows(&clean_traj), rows(&moved_traj));
    assert_eq!(ra.len(), n.profiles);
    for (a, b) in ra.iter().zip(&rb) {
        let t = a[0] - pass_start(a[0]);
        for k in 0..3 {
            let want = offset[k] + drift[k] * t;
            assert!((b[k + 1] - a[k + 1] - want).abs() < 1.5e-4, "row {a:?} moved to {b:?}");
        }
    }
}

/// The number after `"key": ` in a JSON text (the first one).
fn number_after(text: &str, key: &str) -> f64 {
    let at = text.find(&format!("\"{key}\": ")).unwrap_or_else(|| panic!("no {key} in {text}")) + key.len() + 4;
    let rest = &text[at..];
    let end = rest.find([',', '}', '\n']).unwrap();
    rest[..end].trim().parse().unwrap_or_else(|e| panic!("{key}: {e}"))
}

/// `survey.json` records the mount, and its axis offset turns the trajectory of pass 1 into
/// the reference line, also with the scanner mounted off the vehicle's track (the offset was
/// nowhere to be read: `build --trajectory` needed it as a flag).
#[test]
fn survey_json_records_the_mount_and_the_axis_offset() {
    let demo = Scene::demo(3);
    let scene = Scene::from_road(&demo.odr, &demo.odr.roads[0].id, Some((20.0, 40.0)), 3).unwrap();
    let mut survey = Survey::along(&scene, 5);
    survey.scanner = ScannerConfig { points_per_rev: 60, height: 2.4, lateral: 0.4, roll: 0.05, ..Default::default() };
    let dir = roadscan_tests::Scratch::new("sim-survey-json");
    sim::survey::run(&scene, &survey, &dir, false).unwrap();
    let text = std::fs::read_to_string(dir.join("survey.json")).unwrap();
    assert!(text.contains("\"format\": \"roadscan survey 1\""), "{text}");
    assert_eq!(number_after(&text, "height_m"), 2.4);
    assert_eq!(number_after(&text, "lateral_m"), 0.4);
    assert!((number_after(&text, "roll_deg") - 0.05f64.to_degrees()).abs() < 1e-12);
    let axis = &text[text.find("\"axis\": {\"pass\": \"1\"").unwrap()..];
    let offset = number_after(axis, "offset_m");
    assert!((offset + survey.passes[0].t + 0.4).abs() < 1e-12, "{offset}");
    assert_eq!(number_after(&text, "sensor_height_m"), 2.4);
    // The trajectory of pass 1 moved by the offset lies on the reference line.
    let line = scan::axis::read_trajectory(&dir.join("trajectory.csv"), Some("1"), offset).unwrap();
    let road = scene.road();
    let place = scene.odr.header.offset.unwrap_or_default().placement();
    assert!(line.xyz.len() > 100);
    // The ends are shifted along a shortened chord; the rest within 1 mm.
    for p in &line.xyz[2..line.xyz.len() - 2] {
        let f = place.to_file(*p);
        let st = road.xy_to_st(f[0], f[1], 10.0).unwrap();
        assert!(st.t.abs() < 1e-3, "t = {} at s = {}", st.t, st.s);
    }
    // Without the lateral mount the offset would miss the line by 0.4 m.
    assert!((offset + survey.passes[0].t).abs() > 0.39);
}
