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

/// The map `truth`'s pavement (every road's carriageway, junctions included, 10 cm inside its
/// borders, every 0.5 m along and 0.2 m across) under a height of one of the CRGs of
/// `built` (a build's road.xodr, its links relative to `out`), both placed by their headers'
/// offsets: (nodes, covered, nodes in junctions, covered there).
pub fn pavement_under_crgs(
    truth: &opendrive::OpenDrive,
    built: &opendrive::OpenDrive,
    out: &std::path::Path,
) -> (usize, usize, usize, usize) {
    use opendrive::RoadEval;
    let tiles: Vec<(RoadEval, Vec<opencrg::Surface>)> = built
        .roads
        .iter()
        .map(|r| {
            let crgs: Vec<opencrg::Surface> = r
                .surface
                .crgs
                .iter()
                .map(|c| opencrg::Surface::new(&opencrg::read_file(out.join(&c.file)).unwrap(), false).unwrap())
                .collect();
            (RoadEval::new(r), crgs)
        })
        .collect();
    let (ours, theirs) = (built.header.offset.unwrap_or_default(), truth.header.offset.unwrap_or_default());
    let (mut nodes, mut covered, mut junction_nodes, mut junction_covered) = (0usize, 0usize, 0usize, 0usize);
    for t in &truth.roads {
        let te = RoadEval::new(t);
        let along = ((t.length - 0.2) / 0.5).floor().max(0.0) as usize;
        for k in 0..=along {
            let s = 0.1 + 0.5 * k as f64;
            let (lo, hi) = carriageway_t(&te, s);
            let across = ((hi - lo - 0.2) / 0.2).floor().max(0.0) as usize;
            for j in 0..=across {
                let p = te.sth_to_xyz(s, lo + 0.1 + 0.2 * j as f64, 0.0);
                let (x, y) = (p[0] + theirs.x - ours.x, p[1] + theirs.y - ours.y);
                let hit = tiles.iter().any(|(ev, crgs)| {
                    ev.xy_to_st_all(x, y, 15.0)
                        .iter()
                        .any(|c| crgs.iter().any(|f| f.uv_to_z(c.s, c.t).is_some_and(f64::is_finite)))
                });
                nodes += 1;
                covered += usize::from(hit);
                if t.junction != "-1" {
                    junction_nodes += 1;
                    junction_covered += usize::from(hit);
                }
            }
        }
    }
    (nodes, covered, junction_nodes, junction_covered)
}

/// The largest height difference between the surface of `built`'s roads outside junctions
/// (on their reference lines, every metre, outside their last `end_skip` m) and the surface
/// of the map `truth`'s road outside junctions under the same point (the one whose reference
/// line is nearest, within 5 m, a metre inside its ends), both placed by their headers' offsets: (largest
/// difference m, points compared).
pub fn elevation_against(truth: &opendrive::OpenDrive, built: &opendrive::OpenDrive, end_skip: f64) -> (f64, usize) {
    use opendrive::RoadEval;
    let (ours, theirs) = (built.header.offset.unwrap_or_default(), truth.header.offset.unwrap_or_default());
    let mains: Vec<(&opendrive::Road, RoadEval)> =
        truth.roads.iter().filter(|r| r.junction == "-1").map(|r| (r, RoadEval::new(r))).collect();
    let (mut worst, mut compared) = (0.0f64, 0usize);
    for r in built.roads.iter().filter(|r| r.junction == "-1") {
        let ev = RoadEval::new(r);
        let n = r.length.ceil() as usize;
        for i in 0..=n {
            let s = r.length * i as f64 / n as f64;
            if s < end_skip || s > r.length - end_skip {
                continue;
            }
            let p = ev.sth_to_xyz(s, 0.0, 0.0);
            let (x, y, z) = (p[0] + ours.x - theirs.x, p[1] + ours.y - theirs.y, p[2] + ours.z - theirs.z);
            let under = mains
                .iter()
                .filter_map(|(t, te)| {
                    let c = te.xy_to_st(x, y, 5.0)?;
                    (c.s > 1.0 && c.s < t.length - 1.0).then(|| (c.t.abs(), te.sth_to_xyz(c.s, c.t, 0.0)[2]))
                })
                .min_by(|a, b| a.0.total_cmp(&b.0));
            if let Some((_, tz)) = under {
                worst = worst.max((z - tz).abs());
                compared += 1;
            }
        }
    }
    (worst, compared)
}

/// Map x, y of a road's reference line at s (file frame plus the header's offset).
pub fn at(odr: &opendrive::OpenDrive, ev: &opendrive::RoadEval, s: f64) -> [f64; 2] {
    let p = ev.pose(s);
    let o = odr.header.offset.unwrap_or_default();
    [p.x + o.x, p.y + o.y]
}

/// A road's reference line every 0.1 m in map x, y.
pub fn line_of(odr: &opendrive::OpenDrive, road: &opendrive::Road) -> Vec<[f64; 2]> {
    let ev = opendrive::RoadEval::new(road);
    let n = (road.length * 10.0).ceil().max(1.0) as usize;
    (0..=n).map(|i| at(odr, &ev, road.length * i as f64 / n as f64)).collect()
}

/// Distance from `p` to polyline `l` and the fraction along it of the nearest point.
pub fn nearest(l: &[[f64; 2]], p: [f64; 2]) -> (f64, f64) {
    let mut best = (f64::INFINITY, 0.0);
    for (i, w) in l.windows(2).enumerate() {
        let (a, b) = (w[0], w[1]);
        let d = [b[0] - a[0], b[1] - a[1]];
        let len2 = d[0] * d[0] + d[1] * d[1];
        let f = if len2 > 0.0 { (((p[0] - a[0]) * d[0] + (p[1] - a[1]) * d[1]) / len2).clamp(0.0, 1.0) } else { 0.0 };
        let q = [a[0] + f * d[0], a[1] + f * d[1]];
        let dist = (p[0] - q[0]).hypot(p[1] - q[1]);
        if dist < best.0 {
            best = (dist, (i as f64 + f) / (l.len() - 1) as f64);
        }
    }
    best
}

/// The roads outside junctions of `odr` with their lines.
pub fn main_roads(odr: &opendrive::OpenDrive) -> Vec<(&opendrive::Road, Vec<[f64; 2]>)> {
    odr.roads.iter().filter(|r| r.junction == "-1").map(|r| (r, line_of(odr, r))).collect()
}

/// The map's road under point p: the one whose reference line is nearest, with p inside its
/// ends (a metre in), within `within`; its id, the distance and s there.
pub fn truth_road_at<'a>(
    truth: &'a [(&opendrive::Road, Vec<[f64; 2]>)],
    p: [f64; 2],
    within: f64,
) -> Option<(&'a str, f64, f64)> {
    truth
        .iter()
        .filter_map(|(r, l)| {
            let (d, f) = nearest(l, p);
            let s = f * r.length;
            (s > 1.0 && s < r.length - 1.0 && d <= within).then_some((r.id.as_str(), d, s))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
}

/// The map `name` (an esmini sample, or `town07_part`) surveyed as a network by `synth` into
/// `dir`/survey with `points_per_rev` and `extra` flags; the survey directory.
pub fn network_survey(name: &str, dir: &std::path::Path, points_per_rev: &str, extra: &[&str]) -> std::path::PathBuf {
    let m = if name == "town07_part" {
        let m = dir.join("town07_part.xodr");
        opendrive::write_file(&town07_part(), &m, &Default::default()).unwrap();
        m
    } else {
        map(name)
    };
    let survey = dir.join("survey");
    let mut args = vec![
        "synth",
        "--scene",
        m.to_str().unwrap(),
        "--out",
        survey.to_str().unwrap(),
        "--points-per-rev",
        points_per_rev,
        "-q",
    ];
    args.extend_from_slice(extra);
    let o = roadscan(&args);
    assert!(o.status.success(), "synth {name}: {}", stderr(&o));
    survey
}

/// The largest distance of the reference lines of `ours`'s roads outside junctions (every
/// metre, outside their last `end_skip` m) from the reference line of the map `truth`'s road
/// alongside (the nearest within `within` m, a metre inside its ends), both placed by their
/// headers' offsets: (largest distance m, points compared).
pub fn reference_lines_against(
    truth: &opendrive::OpenDrive,
    ours: &opendrive::OpenDrive,
    within: f64,
    end_skip: f64,
) -> (f64, usize) {
    let t_main = main_roads(truth);
    let (mut worst, mut compared) = (0.0f64, 0usize);
    for r in ours.roads.iter().filter(|r| r.junction == "-1") {
        let ev = opendrive::RoadEval::new(r);
        let n = r.length.ceil() as usize;
        for i in 0..=n {
            let s = r.length * i as f64 / n as f64;
            if s < end_skip || s > r.length - end_skip {
                continue;
            }
            if let Some((_, d, _)) = truth_road_at(&t_main, at(ours, &ev, s), within) {
                worst = worst.max(d);
                compared += 1;
            }
        }
    }
    (worst, compared)
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
