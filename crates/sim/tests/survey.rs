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
