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

/// Town07's junctions 749, 721, 350 and 479 (a chain of four at x -105..-89, y 37..103) with
/// their connecting roads and the roads into them (9 roads of 1 to 35 m, three of them
/// joining two of the four); links to what is left out are dropped, with the lane links of
/// those ends.
pub fn town07_part() -> opendrive::OpenDrive {
    const JUNCTIONS: [&str; 4] = ["749", "721", "350", "479"];
    let mut odr =
        opendrive::read_file(roadscan_tests::shared_data().join("opendrive/libOpenDRIVE/Town07.xodr")).unwrap();
    odr.junctions.retain(|j| JUNCTIONS.contains(&j.id.as_str()));
    let keep: std::collections::BTreeSet<String> = odr
        .junctions
        .iter()
        .flat_map(|j| &j.connections)
        .flat_map(|c| [c.incoming_road.clone(), c.connecting_road.clone()])
        .flatten()
        .collect();
    odr.roads.retain(|r| keep.contains(&r.id));
    for r in &mut odr.roads {
        let Some(link) = &mut r.link else { continue };
        let kept = |t: &opendrive::model::LinkTarget| match t.element_type.as_str() {
            "junction" => JUNCTIONS.contains(&t.element_id.as_str()),
            _ => keep.contains(&t.element_id),
        };
        let (lost_before, lost_after) =
            (link.predecessor.as_ref().is_some_and(|t| !kept(t)), link.successor.as_ref().is_some_and(|t| !kept(t)));
        if lost_before {
            link.predecessor = None;
        }
        if lost_after {
            link.successor = None;
        }
        let n = r.lanes.lane_sections.len();
        for (k, sec) in r.lanes.lane_sections.iter_mut().enumerate() {
            for side in [&mut sec.left, &mut sec.center, &mut sec.right].into_iter().flatten() {
                for l in side.lanes.iter_mut().filter_map(|l| l.link.as_mut()) {
                    if lost_before && k == 0 {
                        l.predecessors.clear();
                    }
                    if lost_after && k + 1 == n {
                        l.successors.clear();
                    }
                }
            }
        }
    }
    odr
}
