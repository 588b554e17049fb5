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
