//! The drive path from the points alone, on virtual surveys of a sample map: the scanner's
//! track found from GPS time and scan angles lies on the pass's designed track.

#![allow(clippy::panic, clippy::unwrap_used, clippy::expect_used)] // tests fail loudly

use pipeline::drive_path::{DrivePathBuilder, DrivePathOptions};
use sim::scanner::ScannerConfig;
use sim::survey::Survey;
use sim::Scene;

/// esmini's curves.xodr road 1 over s 100..250 (clothoid and arc), surveyed as `synth` does
/// (two passes in opposite directions), with the given mount; points rounded to the LAS
/// file's millimetre and its scan angle's 0.006 degrees.
fn curves_survey(mount: ScannerConfig) -> (Scene, Survey, Vec<scan::LasPoint>) {
    let data = roadscan_tests::shared_data();
    let odr = opendrive::read_file(data.join("opendrive/esmini/curves.xodr")).unwrap();
    let scene = Scene::from_road(&odr, "1", Some((100.0, 250.0)), 1).unwrap();
    let mut survey = Survey::along(&scene, 1);
    survey.scanner = ScannerConfig { points_per_rev: 300, ..mount };
    let (mut pts, _, _) = sim::survey::measure(&scene, &survey);
    let mm = |v: f64| (v * 1000.0).round() / 1000.0;
    for p in &mut pts {
        (p.x, p.y, p.z) = (mm(p.x), mm(p.y), mm(p.z));
        p.scan_angle_deg = ((p.scan_angle_deg as f64 / 0.006).round() * 0.006) as f32;
    }
    (scene, survey, pts)
}

fn drive_path(pts: &[scan::LasPoint]) -> pipeline::drive_path::DrivePath {
    let mut b = DrivePathBuilder::new(DrivePathOptions::default()).unwrap();
    for c in pts.chunks(10_000) {
        let col = |f: fn(&scan::LasPoint) -> f64| c.iter().map(f).collect::<Vec<f64>>();
        let angle: Vec<f32> = c.iter().map(|p| p.scan_angle_deg).collect();
        b.add(&col(|p| p.x), &col(|p| p.y), &col(|p| p.z), &col(|p| p.gps_time), &angle);
    }
    b.finish().unwrap()
}

/// Each pass's samples against the designed track: (largest lateral error, largest height
/// error of the scanner, the sensor height estimated).
fn errors(scene: &Scene, survey: &Survey, path: &pipeline::drive_path::DrivePath) -> Vec<(f64, f64, f64)> {
    let road = scene.road();
    let place = scene.odr.header.offset.unwrap_or_default().placement();
    let (s0, s1) = scene.s_range;
    path.passes
        .iter()
        .zip(&survey.passes)
        .map(|(p, pass)| {
            let (mut lat, mut up) = (0.0f64, 0.0f64);
            for smp in &p.samples {
                let f = place.to_file(smp.xyz);
                let st = road.xy_to_st(f[0], f[1], 20.0).expect("on the road");
                if st.s < s0 + 1.0 || st.s > s1 - 1.0 {
                    continue;
                }
                let track = pass.t + survey.scanner.lateral;
                lat = lat.max((st.t - track).abs());
                let station = scene.station(&road, st.s);
                let z = scene.z_at(&station, pass.t).unwrap_or_else(|| station.base_z(pass.t)) + survey.scanner.height;
                up = up.max((f[2] - z).abs());
            }
            (lat, up, p.sensor_height().unwrap())
        })
        .collect()
}

#[roadscan_tests::needs_shared_data]
#[test]
fn curves_drive_path_within_5_cm_of_both_passes() {
    let (scene, survey, pts) = curves_survey(ScannerConfig::default());
    let path = drive_path(&pts);
    assert_eq!(path.passes.len(), 2, "two passes, 60 s apart");
    assert_eq!(path.rejected, 0, "{} of {} windows left out", path.rejected, path.windows);
    for (i, (lat, up, h)) in errors(&scene, &survey, &path).into_iter().enumerate() {
        eprintln!("pass {}: lateral {:.1} mm, height {:.1} mm, sensor height {h:.4} m", i + 1, lat * 1e3, up * 1e3);
        assert!(lat < 0.05, "pass {}: {lat} m off the track", i + 1);
        assert!(up < 0.05, "pass {}: {up} m off in height", i + 1);
        assert!((h - 2.2).abs() < 0.02, "pass {}: sensor height {h}", i + 1);
        assert!(path.passes[i].length > 140.0, "{}", path.passes[i].length);
    }
}

/// A scanner mounted 0.8 m to the side, 3 m up and rolled by 10 degrees: the path is the
/// scanner's, the height the mount's.
#[roadscan_tests::needs_shared_data]
#[test]
fn curves_drive_path_with_an_offset_rolled_mount() {
    let mount = ScannerConfig { height: 3.0, lateral: 0.8, roll: 10f64.to_radians(), ..Default::default() };
    let (scene, survey, pts) = curves_survey(mount);
    let path = drive_path(&pts);
    assert_eq!(path.passes.len(), 2);
    for (i, (lat, up, h)) in errors(&scene, &survey, &path).into_iter().enumerate() {
        eprintln!("pass {}: lateral {:.1} mm, height {:.1} mm, sensor height {h:.4} m", i + 1, lat * 1e3, up * 1e3);
        assert!(lat < 0.05, "pass {}: {lat} m off the track", i + 1);
        assert!(up < 0.05, "pass {}: {up} m off in height", i + 1);
        assert!((h - 3.0).abs() < 0.03, "pass {}: sensor height {h}", i + 1);
    }
}
