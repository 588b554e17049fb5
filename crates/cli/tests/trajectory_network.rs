//! `roadscan axis --trajectory` without `--pass` over a network survey (issue 26, source
//! (c)): the passes `synth` drives over every road of a sample map (each road on its own,
//! junctions' connecting roads included; each pass moved to its road's reference line by the
//! offset survey.json records for it) become the network they drive. Checked against the
//! map the survey was made from, by position only (the network's ids are its own):
//! - every road of the map outside junctions lies under a road of ours (within
//!   [`REFERENCE_LINE`]) over most of its length, except roads shorter than a junction area
//!   between two junctions, which the output must name as left out;
//! - our reference lines lie within [`REFERENCE_LINE`] of the map's, outside our roads' last
//!   [`END_SKIP`] (where ours run on into what the map makes a junction);
//! - every pair of roads the map joins through a junction, ours joins (roads merged into one
//!   of ours count as joined), and every lane into a junction reaches a lane out of it.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

mod common;
use common::{
    at, elevation_against, main_roads, nearest, network_survey, pavement_under_crgs, reference_lines_against, roadscan,
    stderr, truth_road_at,
};
use opendrive::{OpenDrive, RoadEval};
use roadscan_tests::Scratch;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Reference lines: the largest distance of ours from the map's, m.
const REFERENCE_LINE: f64 = 0.05;
/// Reference lines from passes with 3 cm RMS error in plan: the largest distance, m.
const NOISY_REFERENCE_LINE: f64 = 0.12;
/// Our roads' ends left out of the comparison, m.
const END_SKIP: f64 = 5.0;
/// A road of the map counts as present when this share of its length (outside its last
/// metre) lies within [`REFERENCE_LINE`] of one of ours.
const PRESENT: f64 = 0.5;

/// The unordered pairs of roads `odr` joins through its junctions' connecting roads.
fn through_junctions(odr: &OpenDrive) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for r in odr.roads.iter().filter(|r| r.junction != "-1") {
        let Some(l) = &r.link else { continue };
        let road_of = |t: &Option<opendrive::LinkTarget>| {
            t.as_ref().filter(|t| t.element_type == "road").map(|t| t.element_id.clone())
        };
        if let (Some(a), Some(b)) = (road_of(&l.predecessor), road_of(&l.successor)) {
            if a != b {
                out.insert(if a < b { (a, b) } else { (b, a) });
            }
        }
    }
    out
}

/// The unordered pairs of roads outside junctions `odr` joins end to end or through a
/// junction.
fn joined_any(odr: &OpenDrive) -> BTreeSet<(String, String)> {
    let mut out = through_junctions(odr);
    for r in odr.roads.iter().filter(|r| r.junction == "-1") {
        let Some(l) = &r.link else { continue };
        for t in [&l.predecessor, &l.successor].into_iter().flatten().filter(|t| t.element_type == "road") {
            let (a, b) = (r.id.clone(), t.element_id.clone());
            if a != b {
                out.insert(if a < b { (a, b) } else { (b, a) });
            }
        }
    }
    out
}

/// `name`'s network survey (with GNSS/IMU error `noise`, synth's --traj-noise) built back from
/// its passes alone, reference lines within `tolerance` of the map's.
fn passes_build_back(name: &str, noise: &str, tolerance: f64) {
    let d = Scratch::new(&format!("cli-trajectory-network-{name}-{noise}"));
    // The passes are all the axis needs: a sparse scanner makes the survey quick.
    let survey = network_survey(name, &d, "8", &["--traj-noise", noise]);
    let out = d.join("network.xodr");
    let traj = survey.join("trajectory.csv");
    let o = roadscan(&["axis", "--trajectory", traj.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let said = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{name}: {said}");
    println!("{name}: {said}");
    if let Ok(qc) = std::env::var("ROADSCAN_QC_OUT") {
        std::fs::create_dir_all(&qc).unwrap();
        std::fs::copy(&out, Path::new(&qc).join(format!("passes-{name}.xodr"))).unwrap();
    }
    let truth = opendrive::read_file(survey.join("truth/network.xodr")).unwrap();
    let ours = opendrive::read_file(&out).unwrap();
    let (t_main, o_main) = (main_roads(&truth), main_roads(&ours));
    assert!(!ours.junctions.is_empty(), "{name}: no junction");

    // Our reference lines against the map's, outside our roads' last END_SKIP (the map's
    // road alongside within 3 m: beyond, ours crosses a junction).
    let (worst, compared) = reference_lines_against(&truth, &ours, 3.0, END_SKIP);
    println!("{name}: reference lines within {:.4} m of the map's ({compared} points)", worst);
    assert!(compared > 20, "{name}: {compared} points compared");
    assert!(worst <= tolerance, "{name}: reference lines {worst:.4} m from the map's");

    // Every road of the map under one of ours, or too short and said to be left out.
    let mut missing = Vec::new();
    for (t, l) in &t_main {
        let inner: Vec<[f64; 2]> = l
            .iter()
            .enumerate()
            .filter(|(i, _)| (*i as f64 * 0.1) > 1.0 && (*i as f64 * 0.1) < t.length - 1.0)
            .map(|(_, p)| *p)
            .collect();
        let under = inner.iter().filter(|p| o_main.iter().any(|(_, ol)| nearest(ol, **p).0 <= tolerance)).count();
        let share = under as f64 / inner.len().max(1) as f64;
        if share < PRESENT {
            missing.push((t.id.clone(), t.length, share));
        }
    }
    println!("{name}: roads of the map not under ours: {missing:?}");
    for (id, len, share) in &missing {
        // Only a road shorter than a junction area may be missing (between two junctions
        // closer than that, the passes make one).
        assert!(*len < 10.0, "{name}: road {id} ({len:.1} m): {:.0} % under ours", 100.0 * share);
    }

    // Pairs joined through junctions: ours mapped to the map's roads at our roads' junction
    // ends (the first met going in: ours run on into the map's junction areas).
    let end_road = |id: &str, at_start: bool| -> Option<String> {
        let r = ours.road(id)?;
        let ev = RoadEval::new(r);
        // The first of the map's roads met going inwards from the end, a metre at a time.
        (0..=r.length.floor() as usize).find_map(|k| {
            let s = if at_start { k as f64 } else { r.length - k as f64 };
            truth_road_at(&t_main, at(&ours, &ev, s), 0.5).map(|(t, _, _)| t.to_string())
        })
    };
    let mut ours_joined: BTreeSet<(String, String)> = BTreeSet::new();
    for c in ours.roads.iter().filter(|r| r.junction != "-1") {
        let l = c.link.as_ref().unwrap();
        let (p, s) = (l.predecessor.as_ref().unwrap(), l.successor.as_ref().unwrap());
        let a = end_road(&p.element_id, p.contact_point.as_deref() == Some("start"));
        let b = end_road(&s.element_id, s.contact_point.as_deref() == Some("start"));
        if let (Some(a), Some(b)) = (a, b) {
            if a != b {
                ours_joined.insert(if a < b { (a, b) } else { (b, a) });
            }
        }
    }
    // Roads that meet end to end, and the map's roads one of ours covers, are joined too.
    for r in &ours.roads {
        let Some(l) = r.link.as_ref().filter(|_| r.junction == "-1") else { continue };
        for (t, at_start) in [(&l.predecessor, true), (&l.successor, false)] {
            let Some(t) = t.as_ref().filter(|t| t.element_type == "road") else { continue };
            let a = end_road(&r.id, at_start);
            let b = end_road(&t.element_id, t.contact_point.as_deref() == Some("start"));
            if let (Some(a), Some(b)) = (a, b) {
                if a != b {
                    ours_joined.insert(if a < b { (a, b) } else { (b, a) });
                }
            }
        }
    }
    for (r, l) in &o_main {
        let n = r.length.ceil() as usize;
        let under: BTreeSet<String> = (0..=n)
            .filter_map(|i| truth_road_at(&t_main, l[(i * 10).min(l.len() - 1)], tolerance))
            .map(|(t, _, _)| t.to_string())
            .collect();
        for a in &under {
            for b in &under {
                if a < b {
                    ours_joined.insert((a.clone(), b.clone()));
                }
            }
        }
    }
    let gone: BTreeSet<String> = missing.iter().map(|m| m.0.clone()).collect();
    let truth_any = joined_any(&truth);
    let truth_joined: BTreeSet<(String, String)> =
        through_junctions(&truth).into_iter().filter(|(a, b)| !gone.contains(a) && !gone.contains(b)).collect();
    let lost: Vec<_> = truth_joined.difference(&ours_joined).collect();
    let extra: Vec<_> = ours_joined.difference(&truth_joined).filter(|p| !truth_any.contains(*p)).collect();
    println!(
        "{name}: {} pairs joined through junctions, {} lost, {} extra: {extra:?}",
        truth_joined.len(),
        lost.len(),
        extra.len()
    );
    assert!(lost.is_empty(), "{name}: pairs the map joins and ours does not: {lost:?}");
    let unreached: Vec<_> =
        ours.junctions.iter().flat_map(|j| opendrive::connect::unreached_lanes(&ours, &j.id)).collect();
    assert!(unreached.is_empty(), "{name}: lanes reaching no lane out: {unreached:?}");
}

#[roadscan_tests::needs_shared_data]
#[test]
fn lane_offset_intersection_passes_build_its_network() {
    passes_build_back("lane_offset_intersection", "0,0", REFERENCE_LINE);
}

#[roadscan_tests::needs_shared_data]
#[test]
fn fabriksgatan_passes_build_its_network() {
    passes_build_back("fabriksgatan", "0,0", REFERENCE_LINE);
}

#[roadscan_tests::needs_shared_data]
#[test]
fn multi_intersections_passes_build_its_network() {
    passes_build_back("multi_intersections", "0,0", REFERENCE_LINE);
}

#[roadscan_tests::needs_shared_data]
#[test]
fn a_part_of_town07_passes_build_its_network() {
    passes_build_back("town07_part", "0,0", REFERENCE_LINE);
}

/// Noisy passes: a GNSS/IMU error of 3 cm RMS in plan (5 cm in height) wandering over 10-30 s,
/// different on every pass. The same network; the reference lines within 4 sigma.
#[roadscan_tests::needs_shared_data]
#[test]
fn noisy_passes_build_multi_intersections() {
    passes_build_back("multi_intersections", "0.03,0.05", NOISY_REFERENCE_LINE);
}

/// Elevation of the build's roads: the largest difference from the map's, m.
const ELEVATION: f64 = 0.005;
/// The share of the map's pavement, junctions included, under a CRG height of the build.
const COVERAGE: f64 = 0.95;

/// A survey of lane_offset_intersection built from its points and trajectory alone (`build
/// --trajectory` without --pass): the network of its passes (as `axis --trajectory` makes it,
/// written as OUT/axis.xodr) with every road surveyed into one road.xodr, its junctions as
/// made, and the main roads' elevation within [`ELEVATION`] of the map's where they run along it.
#[roadscan_tests::needs_shared_data]
#[test]
fn a_survey_builds_over_the_network_of_its_passes() {
    survey_builds_over_its_passes("lane_offset_intersection");
}

/// fabriksgatan (one junction of twelve connecting roads, sidewalks behind curbs) likewise.
#[roadscan_tests::needs_shared_data]
#[test]
fn fabriksgatan_builds_over_the_network_of_its_passes() {
    survey_builds_over_its_passes("fabriksgatan");
}

/// multi_intersections (five junctions, 1.5 km of road) likewise: 90 s on 2 cores, left out of
/// CI's time (its passes' network is checked above); `cargo test --profile test -p cli --test
/// trajectory_network -- --ignored` runs it.
#[roadscan_tests::needs_shared_data]
#[test]
#[ignore = "90 s: the largest sample network; run with --ignored"]
fn multi_intersections_builds_over_the_network_of_its_passes() {
    survey_builds_over_its_passes("multi_intersections");
}

/// A part of Town07 (four junctions in a chain, on a grade) likewise.
#[roadscan_tests::needs_shared_data]
#[test]
fn a_part_of_town07_builds_over_the_network_of_its_passes() {
    survey_builds_over_its_passes("town07_part");
}

fn survey_builds_over_its_passes(name: &str) {
    let dir = Scratch::new(&format!("trajectory-network-build-{name}"));
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_roadscan")).args(args).output().unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let survey = network_survey(name, &dir, "300", &[]);
    let traj = survey.join("trajectory.csv");
    let net = dir.join("network.xodr");
    let (code, err) = run(&["axis", "--trajectory", traj.to_str().unwrap(), "--out", net.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{err}");
    let out = dir.join("out");
    let las = survey.join("scan.las");
    let (code, err) = run(&[
        "build",
        "--trajectory",
        traj.to_str().unwrap(),
        "--input",
        las.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--cell",
        "0.1",
        "-q",
    ]);
    assert!(matches!(code, Some(0 | 1)), "{err}");
    assert_eq!(std::fs::read(out.join("axis.xodr")).unwrap(), std::fs::read(&net).unwrap());
    let network = opendrive::read_file(&net).unwrap();
    let built = opendrive::read_file(out.join("road.xodr")).unwrap();
    let ids = |o: &OpenDrive| o.roads.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&built), ids(&network));
    assert_eq!(built.junctions, network.junctions);
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    let rows = report["roads"].as_array().unwrap();
    assert_eq!(rows.len(), network.roads.len());
    for row in rows {
        eprintln!(
            "road {:>3} (junction {:>2}): CRG coverage {:.1} %, lanes {}",
            row["id"].as_str().unwrap_or("?"),
            row["junction"].as_str().unwrap_or("?"),
            100.0 * row["crg_coverage"].as_f64().unwrap_or(0.0),
            row["lanes"].as_str().unwrap_or("?")
        );
        assert_eq!(row["surveyed"].as_bool(), Some(true), "{row}");
    }
    // Elevation: the main roads' against the map's, every metre outside their last END_SKIP.
    let truth = opendrive::read_file(survey.join("truth/network.xodr")).unwrap();
    let (worst, compared) = elevation_against(&truth, &built, END_SKIP);
    let (nodes, covered, junction_nodes, junction_covered) = pavement_under_crgs(&truth, &built, &out);
    let share = |a: usize, b: usize| 100.0 * a as f64 / b.max(1) as f64;
    eprintln!(
        "{name}: CRG heights on {:.1} % of the map's pavement ({nodes} nodes), {:.1} % in its junctions",
        share(covered, nodes),
        share(junction_covered, junction_nodes)
    );
    assert!(covered as f64 >= COVERAGE * nodes as f64, "CRG coverage {:.1} %", share(covered, nodes));
    eprintln!("{name}: elevation within {worst:.4} m of the map's ({compared} points)");
    assert!(compared > 50, "{compared} points compared");
    assert!(worst <= ELEVATION, "elevation {worst:.4} m from the map's");
}

/// Passes over two roads 200 m apart that meet nowhere: no network and no one axis; the build
/// says so in one line, before reading any point.
#[test]
fn passes_over_roads_that_never_meet_are_refused_in_one_line() {
    let d = Scratch::new("trajectory-network-apart");
    let mut csv = String::from("time,x,y,z,pass\n");
    for (pass, y) in [(1, 0.0), (2, 200.0)] {
        for i in 0..=1000 {
            csv.push_str(&format!("{},{},{},100,{pass}\n", i as f64 * 0.01, 650000.0 + i as f64 * 0.1, 240000.0 + y));
        }
    }
    std::fs::write(d.join("trajectory.csv"), csv).unwrap();
    std::fs::write(
        d.join("survey.json"),
        r#"{"passes": [{"id": 1, "road": "a", "axis_offset_m": 0}, {"id": 2, "road": "b", "axis_offset_m": 0}],
           "axis": {"offset_m": 0, "sensor_height_m": 2.2, "pass": "1"}}"#,
    )
    .unwrap();
    let o = roadscan(&[
        "build",
        "--trajectory",
        d.join("trajectory.csv").to_str().unwrap(),
        "--input",
        d.join("none.las").to_str().unwrap(),
        "--out",
        d.join("out").to_str().unwrap(),
    ]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.contains("meet at no junction") && e.lines().count() == 1, "{e}");
    assert!(!d.join("out").exists());
    // One pass of them builds (its road alone): the refusal names --pass.
    assert!(e.contains("--pass"), "{e}");
}
