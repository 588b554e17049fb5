//! Shared by the CLI tests.

#![allow(dead_code)] // each test file uses part of it

/// The points of a chunk read with all columns, for a `scan::LasWriter`.
pub fn las_points(p: &scan::Points) -> Vec<scan::LasPoint> {
    (0..p.len())
        .map(|i| scan::LasPoint {
            x: p.x[i],
            y: p.y[i],
            z: p.z[i],
            gps_time: p.gps_time[i],
            intensity: p.intensity[i],
            scan_angle_deg: p.scan_angle_deg[i],
            source: p.source[i],
            class: p.class[i],
        })
        .collect()
}

/// Runs the `roadscan` binary of this build with `args` (no backtraces asked).
pub fn roadscan(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_roadscan"))
        .args(args)
        .env_remove("RUST_BACKTRACE")
        .output()
        .expect("run roadscan")
}

/// What a run wrote to stderr.
pub fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A sample map of esmini's.
pub fn map(name: &str) -> std::path::PathBuf {
    roadscan_tests::shared_data().join(format!("opendrive/esmini/{name}.xodr"))
}

/// The t range of a road's carriageway at s: out to the outer borders of its lanes for
/// vehicles (all types but border, none, sidewalk, walking and curb), the lane offset within.
pub fn carriageway_t(road: &opendrive::RoadEval, s: f64) -> (f64, f64) {
    let c = road.lane_offset(s);
    let kind =
        |id: i32| road.lane_section(s).and_then(|sec| sec.lanes().find(|l| l.id == id)).and_then(|l| l.kind.clone());
    road.lane_borders(s)
        .iter()
        .filter(|&&(id, _)| {
            !matches!(kind(id).as_deref(), None | Some("border" | "none" | "sidewalk" | "walking" | "curb"))
        })
        .fold((c, c), |(lo, hi), &(_, t)| (lo.min(t), hi.max(t)))
}
