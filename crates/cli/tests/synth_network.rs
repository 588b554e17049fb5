//! `roadscan synth` over a network (issue 26): a file of several roads without `--road` is
//! surveyed whole. Checked on two shared sample maps through the opendrive and opencrg crates:
//! every road (connecting roads included) has pavement points and trajectory passes over its
//! whole length, the pavement points lie on the OpenDRIVE surface of a road, each road's truth
//! CRG is that road's surface, and a `--road` survey keeps the single-road layout.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::RoadEval;
mod common;
use common::{carriageway_t, map, roadscan, stderr};
use roadscan_tests::Scratch;
use std::path::{Path, PathBuf};

/// The default range noise of `synth`, 1 sigma, m.
const RANGE_NOISE: f64 = 0.002;

/// The networks surveyed: a junction of four roads and six connecting roads (250 m of road in
/// all), and a junction of four roads with sidewalks behind curbs and twelve connecting roads
/// (690 m).
const NETWORKS: [&str; 2] = ["lane_offset_intersection", "fabriksgatan"];

/// A network survey of the map `name` with the coarse scanner for the test `test`: (test dir,
/// survey dir).
fn survey_network(name: &str, test: &str) -> (Scratch, PathBuf) {
    let d = Scratch::new(&format!("cli-synth-network-{test}-{name}"));
    let out = d.join("net");
    let map = map(name);
    let o =
        roadscan(&[&["synth", "--scene", map.to_str().unwrap(), "--out", out.to_str().unwrap()][..], &COARSE].concat());
    assert!(o.status.success(), "{name}: {}", stderr(&o));
    (d, out)
}

/// A coarse scanner, so the survey takes seconds: 64 points a revolution, 50 revolutions a second.
const COARSE: [&str; 5] = ["--points-per-rev", "64", "--rate", "50", "-q"];

/// x, y, z (map), class and point source id of every point of `las`.
fn points(las: &Path) -> Vec<([f64; 3], u8, u16)> {
    let mut r = scan::LasReader::open(las).unwrap();
    let mut p = scan::Points::default();
    let mut out = Vec::new();
    while r.read(&mut p, 100_000).unwrap() > 0 {
        out.extend((0..p.len()).map(|i| ([p.x[i], p.y[i], p.z[i]], p.class[i], p.source[i])));
    }
    out
}

/// The t range of a road's lanes at s (outermost borders, the lane offset within), m.
fn lanes_t(road: &RoadEval, s: f64) -> (f64, f64) {
    let c = road.lane_offset(s);
    road.lane_borders(s).iter().fold((c, c), |(lo, hi), &(_, t)| (lo.min(t), hi.max(t)))
}

/// The road (s, t) of the file-frame point `f` within 40 m of the reference line; at a road's
/// ends also up to 2 mm beyond them (the scan's 1 mm coordinates put points of the last
/// profile just past the end).
fn on_road(road: &RoadEval, f: [f64; 3]) -> Vec<(f64, f64)> {
    let found: Vec<(f64, f64)> = road.xy_to_st_all(f[0], f[1], 40.0).iter().map(|c| (c.s, c.t)).collect();
    if !found.is_empty() {
        return found;
    }
    [0.0, road.length()]
        .into_iter()
        .filter_map(|s| {
            let p = road.pose(s);
            let (sin, cos) = p.hdg.sin_cos();
            let (dx, dy) = (f[0] - p.x, f[1] - p.y);
            let along = dx * cos + dy * sin;
            (along.abs() <= 0.002).then_some((s, -dx * sin + dy * cos))
        })
        .collect()
}

/// The largest step between sorted stations and from the ends 0 and `len`, m.
fn largest_gap(stations: &mut [f64], len: f64) -> f64 {
    stations.sort_by(f64::total_cmp);
    let mut gap = stations.first().map_or(len, |&s| s);
    for w in stations.windows(2) {
        gap = gap.max(w[1] - w[0]);
    }
    gap.max(len - stations.last().copied().unwrap_or(0.0))
}

#[roadscan_tests::needs_shared_data]
#[test]
fn a_network_survey_covers_every_road_and_keeps_the_truth_per_road() {
    for name in NETWORKS {
        println!("{name}:");
        covers_every_road_and_keeps_the_truth_per_road(name);
    }
}

fn covers_every_road_and_keeps_the_truth_per_road(name: &str) {
    let (_d, out) = survey_network(name, "covers");
    let src = opendrive::read_file(map(name)).unwrap();
    let net = opendrive::read_file(out.join("truth/network.xodr")).unwrap();
    let ids: Vec<&str> = net.roads.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, src.roads.iter().map(|r| r.id.as_str()).collect::<Vec<_>>());
    assert!(net.roads.iter().filter(|r| r.junction != "-1").count() >= 6, "connecting roads kept");
    let place = net.header.offset.unwrap().placement();
    let roads: Vec<RoadEval> = net.roads.iter().map(RoadEval::new).collect();

    // Pavement points (road 11, marking 64): in the lanes of a road, over every road's whole
    // length, and the road surface's (11) on the OpenDRIVE surface of such a road.
    let pts = points(&out.join("scan.las"));
    let mut stations: Vec<Vec<f64>> = vec![Vec::new(); roads.len()];
    let mut counts = vec![0usize; roads.len()];
    let (mut worst, mut pavement, mut off_roads) = (0.0f64, 0usize, 0usize);
    for (m, class, _) in &pts {
        if !matches!(class, 11 | 64) {
            continue;
        }
        pavement += 1;
        let f = place.to_file(*m);
        let mut best = f64::INFINITY;
        for (i, road) in roads.iter().enumerate() {
            for (s, t) in on_road(road, f) {
                let (lo, hi) = lanes_t(road, s);
                if t < lo - 0.05 || t > hi + 0.05 {
                    continue;
                }
                stations[i].push(s);
                counts[i] += 1;
                best = best.min((f[2] - road.sth_to_xyz(s, t, 0.0)[2]).abs());
            }
        }
        if best.is_finite() {
            // Lines also lie on level verges, whose gravel is 1 cm RMS rough: the asphalt alone.
            if *class == 11 {
                worst = worst.max(best);
            }
        } else {
            off_roads += 1;
        }
    }
    println!(
        "{pavement} pavement points of {}; road surface farthest from a road's {:.4} m; {off_roads} in no road's lanes",
        pts.len(),
        worst
    );
    assert!(pavement > 10_000, "{pavement} pavement points");
    assert_eq!(off_roads, 0, "pavement points outside every road's lanes");
    assert!(worst <= 0.01 + 3.0 * RANGE_NOISE, "a road surface point {worst} m from every road's surface");
    for (i, road) in roads.iter().enumerate() {
        let gap = largest_gap(&mut stations[i], road.length());
        println!(
            "road {}: {:.1} m, {} pavement points, largest gap along s {gap:.2} m",
            ids[i],
            road.length(),
            counts[i]
        );
        assert!(counts[i] > 0 && gap <= 2.0, "road {}: {} points, a gap of {gap} m", ids[i], counts[i]);
    }

    // The trajectory: each road driven over its whole length by the passes survey.json gives it.
    let survey: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("survey.json")).unwrap()).unwrap();
    let pass_road: Vec<(u64, String)> = survey["passes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_u64().unwrap(), p["road"].as_str().unwrap().to_string()))
        .collect();
    let traj = std::fs::read_to_string(out.join("trajectory.csv")).unwrap();
    let rows: Vec<Vec<f64>> =
        traj.lines().skip(1).map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
    for (i, road) in roads.iter().enumerate() {
        let passes: Vec<u64> = pass_road.iter().filter(|(_, r)| r == ids[i]).map(|(p, _)| *p).collect();
        assert!(!passes.is_empty(), "road {} has no pass", ids[i]);
        let mut s_on: Vec<f64> = rows
            .iter()
            .filter(|r| passes.contains(&(r[7] as u64)))
            .filter_map(|r| {
                let f = place.to_file([r[1], r[2], r[3]]);
                road.xy_to_st(f[0], f[1], 10.0).map(|c| c.s)
            })
            .collect();
        let gap = largest_gap(&mut s_on, road.length());
        assert!(gap <= 0.5, "road {}: passes {passes:?} leave a gap of {gap} m", ids[i]);
    }
    assert_eq!(pass_road.len(), rows.iter().map(|r| r[7] as u64).collect::<std::collections::BTreeSet<_>>().len());

    // The truth per road: the index names each road's directory, whose road.xodr is that road
    // and whose CRG is its surface over the carriageway (the asphalt's 1 mm texture and 1 mm
    // paint on it: 1 mm on average, a few millimetres at most).
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("truth/features.json")).unwrap()).unwrap();
    let listed = index["roads"].as_array().unwrap();
    assert_eq!(listed.len(), roads.len());
    let (mut worst_crg, mut sum, mut n) = (0.0f64, 0.0, 0usize);
    for (i, road) in roads.iter().enumerate() {
        assert_eq!(listed[i]["id"].as_str(), Some(ids[i]));
        let dir = out.join("truth").join(listed[i]["dir"].as_str().unwrap());
        let own = opendrive::read_file(dir.join("road.xodr")).unwrap();
        assert_eq!(own.roads.len(), 1);
        assert_eq!(own.roads[0].id, ids[i]);
        assert!(dir.join("features.json").is_file());
        let crg = opencrg::read_file(dir.join("surface.crg")).unwrap();
        let surface = opencrg::Surface::new(&crg, false).unwrap();
        let len = road.length();
        for k in 0..=20 {
            let s = (len * k as f64 / 20.0).clamp(0.01, len - 0.01);
            let (lo, hi) = carriageway_t(road, s);
            for j in 0..=10 {
                let t = lo + 0.05 + (hi - lo - 0.1) * j as f64 / 10.0;
                let want = road.sth_to_xyz(s, t, 0.0)[2];
                let got = surface.uv_to_z(s, t).filter(|z| z.is_finite());
                let got = got.unwrap_or_else(|| panic!("road {}: no CRG height at {s}, {t}", ids[i]));
                worst_crg = worst_crg.max((got - want).abs());
                sum += got - want;
                n += 1;
            }
        }
    }
    let mean = sum / n as f64;
    println!("truth CRGs: {n} samples, mean height over the OpenDRIVE surface {mean:.5} m, largest {worst_crg:.4} m");
    assert!(mean.abs() <= 0.001, "the truth CRGs lie {mean} m off their roads' surfaces on average");
    assert!(worst_crg <= 0.006, "a truth CRG height {worst_crg} m off its road's surface");
}

/// Points where roads overlap are consistent: on any road's carriageway every return is
/// pavement (no ground another road's scene extends beyond its verges) and lies no more than
/// the overlap tolerance (1 cm) plus 3 sigma of range noise below that road's truth surface.
#[roadscan_tests::needs_shared_data]
#[test]
fn a_network_survey_hides_no_point_below_another_roads_surface() {
    for name in NETWORKS {
        print!("{name}: ");
        hides_no_point_below_another_roads_surface(name);
    }
}

fn hides_no_point_below_another_roads_surface(name: &str) {
    let (_d, out) = survey_network(name, "hides");
    let net = opendrive::read_file(out.join("truth/network.xodr")).unwrap();
    let place = net.header.offset.unwrap().placement();
    let index: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("truth/features.json")).unwrap()).unwrap();
    let crgs: Vec<opencrg::Crg> = index["roads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| opencrg::read_file(out.join("truth").join(r["dir"].as_str().unwrap()).join("surface.crg")).unwrap())
        .collect();
    let surfaces: Vec<opencrg::Surface> = crgs.iter().map(|c| opencrg::Surface::new(c, false).unwrap()).collect();
    let roads: Vec<RoadEval> = net.roads.iter().map(RoadEval::new).collect();
    let (mut below, mut not_pavement, mut overlapping, mut deepest) = (0usize, 0usize, 0usize, 0.0f64);
    for (m, class, _) in points(&out.join("scan.las")) {
        let f = place.to_file(m);
        let mut on = 0;
        for (road, surface) in roads.iter().zip(&surfaces) {
            for c in road.xy_to_st_all(f[0], f[1], 40.0) {
                // 5 cm inside the carriageway: every return there is pavement, on or above
                // the road's truth surface (the return's own road may lie up to 1 cm lower).
                let (lo, hi) = carriageway_t(road, c.s);
                if c.t < lo + 0.05 || c.t > hi - 0.05 {
                    continue;
                }
                let Some(z) = surface.uv_to_z(c.s, c.t).filter(|z| z.is_finite()) else { continue };
                on += 1;
                not_pavement += usize::from(!matches!(class, 11 | 64));
                deepest = deepest.max(z - f[2]);
                if z - f[2] > 0.01 + 3.0 * RANGE_NOISE {
                    below += 1;
                }
            }
        }
        overlapping += usize::from(on > 1);
    }
    println!("{overlapping} points where carriageways overlap; {not_pavement} not pavement on a carriageway; deepest below a road's truth {deepest:.4} m");
    assert!(overlapping > 1000, "only {overlapping} points where roads overlap");
    assert_eq!(not_pavement, 0, "returns of another class on a road's carriageway");
    assert_eq!(below, 0, "points below another road's surface (deepest {deepest} m)");
}

/// `--road` keeps the single-road survey: its layout, no road per pass, and a file of one road
/// surveyed alike with and without `--road`. Network-only flags fail naming the file.
#[roadscan_tests::needs_shared_data]
#[test]
fn road_keeps_the_single_road_survey_and_network_errors_name_the_file() {
    let d = Scratch::new("cli-synth-network-road");
    let map = map(NETWORKS[0]);
    let one = d.join("one");
    let o = roadscan(
        &[&["synth", "--scene", map.to_str().unwrap(), "--road", "6", "--out", one.to_str().unwrap()][..], &COARSE]
            .concat(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let mut files: Vec<String> = Vec::new();
    let mut stack = vec![one.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p.strip_prefix(&one).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    files.sort();
    let want =
        ["scan.las", "survey.json", "trajectory.csv", "truth/features.json", "truth/road.xodr", "truth/surface.crg"];
    assert_eq!(files, want);
    let json = std::fs::read_to_string(one.join("survey.json")).unwrap();
    assert!(!json.contains("\"road\""), "{json}");
    let features = std::fs::read_to_string(one.join("truth/features.json")).unwrap();
    assert!(features.contains("\"road\": \"6\"") && features.contains("\"facades\": [{"), "{features}");

    // A file of one road: the same bytes with and without --road.
    let demo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/opendrive/demo.xodr");
    let run = |name: &str, road: &[&str]| {
        let out = d.join(name);
        let args = ["synth", "--scene", demo.to_str().unwrap(), "--s-range", "20..40", "--out", out.to_str().unwrap()];
        let o = roadscan(&[&args[..], road, &COARSE].concat());
        assert!(o.status.success(), "{}", stderr(&o));
        out
    };
    let (a, b) = (run("a", &[]), run("b", &["--road", "1"]));
    for f in want {
        assert!(std::fs::read(a.join(f)).unwrap() == std::fs::read(b.join(f)).unwrap(), "{f} differs");
    }

    for (extra, says) in [
        (&["--s-range", "0..20"][..], "--s-range needs --road in a file of 10 roads"),
        (&["--clutter"][..], "--clutter needs --road"),
    ] {
        let out = d.join("bad");
        let o = roadscan(
            &[&["synth", "--scene", map.to_str().unwrap(), "--out", out.to_str().unwrap()][..], extra, &COARSE]
                .concat(),
        );
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let e = stderr(&o);
        assert!(e.contains(map.to_str().unwrap()) && e.contains(says), "{e}");
    }
}
