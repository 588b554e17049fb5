//! `roadscan axis --osm area.osm` (no `--way`): a road network from OSM ways (issue 26,
//! source (b)), held against the sample maps the ways are made from.
//!
//! Each map's roads outside junctions become ways as OSM draws them: the carriageway's centre
//! line (the centre lane's line, reference line plus lane offset) in vertices every 5 m, two
//! roads linked end to end share their end node, and every road into a junction runs on to one
//! node at the junction's centre (the mean of its roads' ends); the lane counts and width where
//! the road meets a junction are tags. The network built from them must hold every road of the map with its id, join every
//! pair of roads the map joins (through a junction or end to end), give every lane that drives
//! into a junction a lane link to each road its road is joined to, and lie near the map's
//! centre lines (5 m vertices cut corners by decimetres before the fit smooths them; no survey
//! corrects them here).
//!
//! With `ROADSCAN_QC_OUT` set, the networks are also written there for qc-opendrive (.ci/run).

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

mod common;
use common::{elevation_against, pavement_under_crgs};
use opendrive::{OpenDrive, RoadEval};
use roadscan_tests::Scratch;
use scan::{CrsDef, Reprojection};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

/// How far from a road's ends its centre line is not compared, m.
const END_SKIP: f64 = 5.0;

/// Reference lines moved onto the survey's passes: the largest distance from the map's, m.
const DRIVEN_LINE: f64 = 0.05;
/// A point of ours is compared with the map's road whose reference line is nearest within
/// this, m (farther: ours crosses a junction area).
const COMPARE: f64 = 3.0;
/// Roads shorter than this may keep the ways' geometry, m.
const SHORT: f64 = 20.0;
/// Elevation of a build's roads: the largest difference from the map's, m.
const ELEVATION: f64 = 0.005;
/// The share of the map's pavement, junctions included, under a CRG height of a build.
const COVERAGE: f64 = 0.95;

/// Where the maps are placed in UTM zone 33 (EPSG:32633): file (x, y) + this.
const PLACE: [f64; 2] = [500_000.0, 5_300_000.0];

/// The centre line of `road` at s in the file frame: the centre lane's line.
fn centre(ev: &RoadEval, s: f64) -> [f64; 2] {
    let p = ev.sth_to_xyz(s, ev.lane_offset(s), 0.0);
    [p[0], p[1]]
}

/// Driving lanes right (along s) and left of the centre lane at s, and their mean width.
fn lanes_at(ev: &RoadEval, s: f64) -> (usize, usize, f64) {
    let Some(sec) = ev.lane_section(s) else { return (0, 0, 0.0) };
    let borders = ev.lane_borders(s);
    let (mut right, mut left, mut width) = (0, 0, 0.0);
    for lane in sec.lanes().filter(|l| l.id != 0 && l.kind.as_deref() == Some("driving")) {
        let outer = borders.iter().find(|b| b.0 == lane.id).map_or(0.0, |b| b.1);
        let inner = if lane.id.abs() == 1 {
            ev.lane_offset(s)
        } else {
            borders.iter().find(|b| b.0 == lane.id - lane.id.signum()).map_or(0.0, |b| b.1)
        };
        width += (outer - inner).abs();
        if lane.id < 0 {
            right += 1;
        } else {
            left += 1;
        }
    }
    (right, left, if right + left > 0 { width / (right + left) as f64 } else { 0.0 })
}

/// The OSM text of `odr`'s roads outside junctions (see the module's documentation), the file
/// frame placed at `place` in `crs`.
fn osm_of(odr: &OpenDrive, crs: &str, place: [f64; 2]) -> String {
    let to_lonlat = Reprojection::new(CrsDef::parse(crs).unwrap(), CrsDef::parse("EPSG:4326").unwrap()).unwrap();
    let mut nodes: BTreeMap<String, [f64; 2]> = BTreeMap::new();
    let mut ways = String::new();
    // The centre of each junction: the mean of its roads' end points.
    let mut sums: BTreeMap<String, ([f64; 2], usize)> = BTreeMap::new();
    let end_of = |r: &opendrive::Road, start: bool| centre(&RoadEval::new(r), if start { 0.0 } else { r.length });
    for r in odr.roads.iter().filter(|r| r.junction == "-1") {
        let Some(link) = &r.link else { continue };
        for (t, start) in [(&link.predecessor, true), (&link.successor, false)] {
            if let Some(t) = t.as_ref().filter(|t| t.element_type == "junction") {
                let p = end_of(r, start);
                let e = sums.entry(t.element_id.clone()).or_insert(([0.0; 2], 0));
                e.0[0] += p[0];
                e.0[1] += p[1];
                e.1 += 1;
            }
        }
    }
    for (j, (sum, n)) in &sums {
        nodes.insert(format!("j{j}"), [sum[0] / *n as f64, sum[1] / *n as f64]);
    }
    for r in odr.roads.iter().filter(|r| r.junction == "-1") {
        let ev = RoadEval::new(r);
        let k = (r.length / 5.0).ceil().max(1.0) as usize;
        let mut refs: Vec<String> = Vec::new();
        let link = r.link.clone().unwrap_or_default();
        let end_node = |t: &Option<opendrive::LinkTarget>, start: bool| -> Option<String> {
            let t = t.as_ref()?;
            match t.element_type.as_str() {
                "junction" => Some(format!("j{}", t.element_id)),
                "road" => {
                    // One node for both roads' ends: named by the pair.
                    let me = format!("{}:{}", r.id, if start { "start" } else { "end" });
                    let them = format!("{}:{}", t.element_id, t.contact_point.as_deref().unwrap_or("start"));
                    Some(if me < them { format!("{me}={them}") } else { format!("{them}={me}") })
                }
                _ => None,
            }
        };
        let (first, last) = (end_node(&link.predecessor, true), end_node(&link.successor, false));
        if let Some(j) = first.as_ref().filter(|n| n.starts_with('j')) {
            refs.push(j.clone());
        }
        for i in 0..=k {
            let s = r.length * i as f64 / k as f64;
            let id = match (i, &first, &last) {
                (0, Some(n), _) if !n.starts_with('j') => n.clone(),
                (i, _, Some(n)) if i == k && !n.starts_with('j') => n.clone(),
                _ => format!("r{}_{i}", r.id),
            };
            nodes.entry(id.clone()).or_insert_with(|| centre(&ev, s));
            refs.push(id);
        }
        if let Some(j) = last.as_ref().filter(|n| n.starts_with('j')) {
            refs.push(j.clone());
        }
        // OSM gives a way one lane count: the map's at the end the road meets a junction with
        // (where the turns start), else halfway.
        let at_junction = |t: &Option<opendrive::LinkTarget>| t.as_ref().is_some_and(|t| t.element_type == "junction");
        let s_lanes = if at_junction(&link.successor) {
            r.length - 1e-6
        } else if at_junction(&link.predecessor) {
            0.0
        } else {
            r.length / 2.0
        };
        let (right, left, width) = lanes_at(&ev, s_lanes);
        if right + left == 0 {
            continue;
        }
        ways.push_str(&format!("  <way id=\"{}\">\n", r.id));
        for n in &refs {
            ways.push_str(&format!("    <nd ref=\"{n}\"/>\n"));
        }
        ways.push_str(&format!(
            "    <tag k=\"highway\" v=\"residential\"/>\n    <tag k=\"lanes\" v=\"{}\"/>\n    \
             <tag k=\"lanes:forward\" v=\"{right}\"/>\n    <tag k=\"lanes:backward\" v=\"{left}\"/>\n    \
             <tag k=\"width\" v=\"{:.2}\"/>\n",
            right + left,
            width * (right + left) as f64
        ));
        if left == 0 {
            ways.push_str("    <tag k=\"oneway\" v=\"yes\"/>\n");
        }
        ways.push_str("  </way>\n");
    }
    let ids: Vec<String> = nodes.keys().cloned().collect();
    let (mut x, mut y): (Vec<f64>, Vec<f64>) = nodes.values().map(|p| (p[0] + place[0], p[1] + place[1])).unzip();
    to_lonlat.apply(&mut x, &mut y).unwrap();
    let mut text =
        String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<osm version=\"0.6\" generator=\"roadscan test\">\n");
    for (id, (lon, lat)) in ids.iter().zip(x.iter().zip(&y)) {
        text.push_str(&format!("  <node id=\"{id}\" lat=\"{lat:.10}\" lon=\"{lon:.10}\"/>\n"));
    }
    text.push_str(&ways);
    text.push_str("</osm>\n");
    text
}

/// The unordered pairs of roads outside junctions that `odr` joins, through a junction's
/// connecting road or end to end.
fn joined(odr: &OpenDrive) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    let mut add = |a: &str, b: &str| {
        if a != b {
            out.insert(if a < b { (a.to_string(), b.to_string()) } else { (b.to_string(), a.to_string()) });
        }
    };
    for r in &odr.roads {
        let Some(l) = &r.link else { continue };
        let road_of = |t: &Option<opendrive::LinkTarget>| {
            t.as_ref().filter(|t| t.element_type == "road").map(|t| t.element_id.clone())
        };
        let (p, s) = (road_of(&l.predecessor), road_of(&l.successor));
        if r.junction != "-1" {
            if let (Some(p), Some(s)) = (p, s) {
                add(&p, &s);
            }
        } else {
            for o in [p, s].into_iter().flatten() {
                if odr.road(&o).is_some_and(|o| o.junction == "-1") {
                    add(&r.id, &o);
                }
            }
        }
    }
    out
}

/// Largest distance of `ours`'s reference line (every metre) from `truth`'s centre line, both
/// in the map frame, where `truth` runs alongside, m.
fn distance(ours: &opendrive::Road, ours_offset: [f64; 2], truth: &opendrive::Road) -> f64 {
    let (a, b) = (RoadEval::new(ours), RoadEval::new(truth));
    let n = ours.length.ceil() as usize;
    let mut worst: f64 = 0.0;
    for i in 0..=n {
        let p = a.pose(ours.length * i as f64 / n as f64);
        let q = [p.x + ours_offset[0] - PLACE[0], p.y + ours_offset[1] - PLACE[1]];
        // The nearest point of the truth's centre line (dense samples, then refined).
        let m = (truth.length * 10.0).ceil() as usize;
        let (j, best) = (0..=m)
            .map(|j| {
                let c = centre(&b, truth.length * j as f64 / m as f64);
                (j, (c[0] - q[0]).hypot(c[1] - q[1]))
            })
            .fold((0, f64::INFINITY), |a, b| if b.1 < a.1 { b } else { a });
        // Beyond the map's road (in its junction's area, where the ways run on to the
        // junction's node) there is no centre line to compare with, and within its last metres
        // the fit rounds the way's bend onto that leg.
        let st = truth.length * j as f64 / m as f64;
        if st > END_SKIP && st < truth.length - END_SKIP {
            worst = worst.max(best);
        }
    }
    worst
}

fn network_of(name: &str, map: &Path, dir: &Scratch) -> (OpenDrive, OpenDrive, String) {
    let truth = opendrive::read_file(map).unwrap();
    let osm = dir.join(format!("{name}.osm"));
    std::fs::write(&osm, osm_of(&truth, "EPSG:32633", PLACE)).unwrap();
    let out = dir.join(format!("{name}.xodr"));
    let o = Command::new(env!("CARGO_BIN_EXE_roadscan"))
        .args(["axis", "--osm", osm.to_str().unwrap(), "--crs", "EPSG:32633", "--out", out.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{name}: {err}");
    if let Ok(qc) = std::env::var("ROADSCAN_QC_OUT") {
        std::fs::create_dir_all(&qc).unwrap();
        std::fs::copy(&out, Path::new(&qc).join(format!("{name}.xodr"))).unwrap();
    }
    (truth, opendrive::read_file(&out).unwrap(), err)
}

#[roadscan_tests::needs_shared_data]
#[test]
fn osm_ways_of_the_sample_networks_build_the_same_networks() {
    let data = roadscan_tests::shared_data();
    let dir = Scratch::new("osm-network");
    let mut summary = Vec::new();
    for (name, rel) in [
        ("fabriksgatan", "opendrive/esmini/fabriksgatan.xodr"),
        ("lane_offset_intersection", "opendrive/esmini/lane_offset_intersection.xodr"),
        ("multi_intersections", "opendrive/esmini/multi_intersections.xodr"),
        ("town07", "opendrive/libOpenDRIVE/Town07.xodr"),
    ] {
        let (truth, ours, said) = network_of(name, &data.join(rel), &dir);
        let offset = ours.header.offset.map_or([0.0; 2], |o| [o.x, o.y]);
        // Every road of the map outside junctions, with its id.
        let mut worst: (f64, String) = (0.0, String::new());
        for t in truth.roads.iter().filter(|r| r.junction == "-1") {
            if lanes_at(&RoadEval::new(t), t.length / 2.0).0 + lanes_at(&RoadEval::new(t), t.length / 2.0).1 == 0 {
                continue;
            }
            let Some(r) = ours.road(&t.id) else {
                // A road shorter than its junctions' radii is left out, and said.
                assert!(said.contains("left out") && said.contains(&t.id), "{name}: road {} missing: {said}", t.id);
                continue;
            };
            // A short road is all ends (see END_SKIP).
            if t.length < 4.0 * END_SKIP {
                continue;
            }
            let d = distance(r, offset, t);
            if d > worst.0 {
                worst = (d, t.id.clone());
            }
        }
        // Every pair of roads the map joins is joined.
        let (want, got) = (joined(&truth), joined(&ours));
        let present = |p: &(String, String)| ours.road(&p.0).is_some() && ours.road(&p.1).is_some();
        let missing: Vec<_> = want.iter().filter(|p| present(p) && !got.contains(*p)).collect();
        assert!(missing.is_empty(), "{name}: pairs the map joins, not joined: {missing:?}");
        let extra = got.difference(&want).count();
        // No road's lanes are unreachable: from every lane into a junction, every joined road.
        for j in &ours.junctions {
            let unreached = opendrive::connect::unreached_lanes(&ours, &j.id);
            assert!(unreached.is_empty(), "{name}: junction {}: {unreached:?}", j.id);
        }
        // Near the map's centre lines: the 5 m vertices' chords and the fit, no survey.
        // The fit's tolerance (5 cm for an OSM network), and on Town07's hairpins the 5 m
        // vertices, which the spline through them follows to a decimetre.
        let limit = if name == "town07" { 0.2 } else { 0.06 };
        assert!(worst.0 <= limit, "{name}: road {} lies {:.3} m from the map's centre line", worst.1, worst.0);
        summary.push(format!(
            "{name}: {} roads, {} junctions ({} in the map), {} joined pairs ({} more than the map), centre lines within {:.3} m (road {})",
            ours.roads.iter().filter(|r| r.junction == "-1").count(),
            ours.junctions.len(),
            truth.junctions.len(),
            got.len(),
            extra,
            worst.0,
            worst.1
        ));
    }
    eprintln!("{}", summary.join("\n"));
}

/// A survey of lane_offset_intersection built over the network of its OSM ways (`build --osm`,
/// the network as `axis --osm` makes it): every road of the OSM network, connecting roads
/// included, surveyed and in the one road.xodr.
#[roadscan_tests::needs_shared_data]
#[test]
fn a_survey_builds_over_the_network_of_its_osm_ways() {
    survey_builds_over_osm_ways("lane_offset_intersection", false);
}

/// fabriksgatan built over its OSM ways moved onto its passes (`build --osm --trajectory`):
/// the same checks.
#[roadscan_tests::needs_shared_data]
#[test]
fn fabriksgatan_builds_over_its_osm_ways_moved_onto_its_passes() {
    survey_builds_over_osm_ways("fabriksgatan", true);
}

/// A part of Town07 likewise.
#[roadscan_tests::needs_shared_data]
#[test]
fn a_part_of_town07_builds_over_its_osm_ways_moved_onto_its_passes() {
    survey_builds_over_osm_ways("town07_part", true);
}

/// `name` surveyed at 300 points a revolution and built over the network of its OSM ways
/// (with `passes`, moved onto the survey's passes), checked as the module says.
fn survey_builds_over_osm_ways(name: &str, passes: bool) {
    let dir = Scratch::new(&format!("osm-network-build-{name}"));
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let survey = common::network_survey(name, &dir, "300", &[]);
    let traj = survey.join("trajectory.csv");
    let with_passes: Vec<&str> = if passes { vec!["--trajectory", traj.to_str().unwrap()] } else { vec![] };
    // The truth network as the survey placed it (EOV, its header's offset).
    let truth = opendrive::read_file(survey.join("truth/network.xodr")).unwrap();
    let offset = truth.header.offset.map_or([0.0; 2], |o| [o.x, o.y]);
    let osm = dir.join("ways.osm");
    std::fs::write(&osm, osm_of(&truth, "EPSG:23700", offset)).unwrap();
    let net = dir.join("network.xodr");
    let mut args = vec!["axis", "--osm", osm.to_str().unwrap(), "--crs", "EPSG:23700", "--out", net.to_str().unwrap()];
    args.extend(&with_passes);
    let (code, err) = run(&args);
    assert_eq!(code, Some(0), "{err}");
    let out = dir.join("out");
    let las = survey.join("scan.las");
    // `build --osm` makes the same network and writes it as OUT/axis.xodr.
    let mut args = vec![
        "build",
        "--osm",
        osm.to_str().unwrap(),
        "--crs",
        "EPSG:23700",
        "--input",
        las.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--cell",
        "0.1",
        "-q",
    ];
    args.extend(&with_passes);
    let (code, err) = run(&args);
    assert!(matches!(code, Some(0 | 1)), "{err}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let rows = report["roads"].as_array().unwrap();
    assert_eq!(std::fs::read(out.join("axis.xodr")).unwrap(), std::fs::read(&net).unwrap());
    let network = opendrive::read_file(&net).unwrap();
    assert_eq!(rows.len(), network.roads.len());
    // What the build found, said (its checks fail where OSM's lanes are not the survey's).
    for row in rows {
        eprintln!(
            "road {:>3} (junction {:>2}): CRG coverage {:.1} %, lanes {}",
            row["id"].as_str().unwrap_or("?"),
            row["junction"].as_str().unwrap_or("?"),
            100.0 * row["crg_coverage"].as_f64().unwrap_or(0.0),
            row["lanes"].as_str().unwrap_or("?")
        );
    }
    for row in rows {
        assert_eq!(row["surveyed"].as_bool(), Some(true), "{row}");
    }
    let built = opendrive::read_file(out.join("road.xodr")).unwrap();
    let ids = |o: &OpenDrive| o.roads.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&built), ids(&network));
    assert_eq!(built.junctions, network.junctions);
    // The map's pavement, junctions included, under the build's CRGs.
    let (nodes, covered, junction_nodes, junction_covered) = pavement_under_crgs(&truth, &built, &out);
    let share = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    eprintln!(
        "{name}: CRG heights on {:.1} % of the map's pavement ({nodes} nodes), {:.1} % in its junctions",
        share(covered, nodes),
        share(junction_covered, junction_nodes)
    );
    assert!(covered as f64 >= COVERAGE * nodes as f64, "CRG coverage {:.1} %", share(covered, nodes));
    // Elevation: the main roads' against the map's, every metre outside their last END_SKIP.
    let (worst, compared) = elevation_against(&truth, &built, END_SKIP);
    eprintln!("{name}: elevation within {worst:.4} m of the map's ({compared} points)");
    assert!(compared > 50, "{compared} points compared");
    assert!(worst <= ELEVATION, "elevation {worst:.4} m from the map's");
}

/// OSM ways with the survey's passes (`axis --osm --trajectory`, issue 26 source (b): the
/// topology the ways', the geometry the survey's where it drove): the sample maps surveyed
/// (every road, junctions' connecting roads included), their ways as OSM draws them (centre
/// lines every 5 m), and the network's reference lines moved onto the passes lie within
/// [`DRIVEN_LINE`] of the map's outside their last [`END_SKIP`]; every road of the map keeps
/// its id; the output says no road kept the ways' geometry.
#[roadscan_tests::needs_shared_data]
#[test]
fn osm_ways_moved_onto_the_passes_lie_on_the_maps_reference_lines() {
    for name in ["lane_offset_intersection", "fabriksgatan", "multi_intersections", "town07_part"] {
        let dir = Scratch::new(&format!("osm-driven-{name}"));
        let survey = common::network_survey(name, &dir, "8", &[]);
        let truth = opendrive::read_file(survey.join("truth/network.xodr")).unwrap();
        let offset = truth.header.offset.map_or([0.0; 2], |o| [o.x, o.y]);
        let osm = dir.join("ways.osm");
        std::fs::write(&osm, osm_of(&truth, "EPSG:23700", offset)).unwrap();
        let out = dir.join("network.xodr");
        let traj = survey.join("trajectory.csv");
        let o = common::roadscan(&[
            "axis",
            "--osm",
            osm.to_str().unwrap(),
            "--trajectory",
            traj.to_str().unwrap(),
            "--crs",
            "EPSG:23700",
            "--out",
            out.to_str().unwrap(),
        ]);
        let said = common::stderr(&o);
        assert_eq!(o.status.code(), Some(0), "{name}: {said}");
        println!("{name}: {said}");
        // Roads whose line the passes do not cover keep the ways' geometry, and are named: only
        // short ones here (at a junction's end, the passes turn off before their end).
        let kept: Vec<&str> = said
            .split_once("less than 90 % of: ")
            .map(|(_, list)| list.split(", ").filter_map(|k| k.split_once(" (").map(|(id, _)| id)).collect())
            .unwrap_or_default();
        for id in &kept {
            let len = truth.road(id).map_or(0.0, |r| r.length);
            assert!(len < SHORT, "{name}: road {id} ({len:.1} m) keeps the ways' geometry");
        }
        let ours = opendrive::read_file(&out).unwrap();
        let (worst, compared) = common::reference_lines_against(&truth, &ours, COMPARE, END_SKIP);
        println!("{name}: reference lines within {worst:.4} m of the map's ({compared} points)");
        assert!(compared > 20, "{name}: {compared} points");
        assert!(worst <= DRIVEN_LINE, "{name}: {worst:.4} m");
        for t in truth.roads.iter().filter(|r| r.junction == "-1") {
            let short = said.contains("left out") && t.length < 40.0;
            assert!(ours.road(&t.id).is_some() || short, "{name}: road {} missing", t.id);
        }
    }
}
