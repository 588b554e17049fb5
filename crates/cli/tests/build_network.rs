//! `roadscan build --axis network.xodr` without `--road` (issue 26, source (a)): a network
//! surveyed by `synth` and built with its truth network as the axis gives one road.xodr with
//! every road and junction of the truth (same ids, links and junction connections), reference
//! lines within 5 cm and elevation within 5 mm of the truth where surveyed, each road's lane ids
//! as the truth's (on these maps every road keeps the network's lanes: connecting roads by
//! design, main roads because the survey's lane ids at their ends differ; the report says which),
//! CRG heights on at least 95 % of each road's carriageway (less where `SPARSE` says the coarse
//! survey does not reach) and no error from our `check`. A road
//! no point reaches is kept as the axis has it.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::RoadEval;
mod common;
use common::{carriageway_t, roadscan, stderr};
use roadscan_tests::Scratch;
use std::path::PathBuf;
use std::time::Instant;

/// The id of the road no point reaches.
const FAR: &str = "far";

/// The survey: 300 points a revolution at the default 200 revolutions a second (10 m/s, so
/// profiles 5 cm apart per pass): 40 MB of points for lane_offset_intersection's 250 m of
/// road, 110 MB for fabriksgatan's 690 m.
const POINTS_PER_REV: &str = "300";
/// The build's CRG cell, m: 10 cm, for the scanner's spacing (a survey for 1 cm cells takes
/// about 1000 points a revolution, too slow for a test).
const CELL: &str = "0.1";
/// Roads whose carriageway the coarse survey does not reach in full, with the coverage they
/// must still have: multi_intersections' road 202 has two driving lanes on its left whose
/// outer edge lies 5.6 m beside the nearest pass, where 300 points a revolution from 2.2 m up
/// fall 0.34 m apart across the road, so 10 cm cells there have gaps in stripes (89.1 %; 92.9 %
/// at 450 points a revolution).
const SPARSE: [(&str, &str, f64); 1] = [("multi_intersections", "202", 0.85)];

/// Reference lines: the largest distance from the truth's at the same s, m.
const REFERENCE_LINE: f64 = 0.05;
/// Elevation: the largest difference from the truth's where surveyed, m.
const ELEVATION: f64 = 0.005;
/// CRG coverage of each surveyed road's carriageway (the truth's lanes for vehicles, 10 cm
/// inside their outer borders), at least.
const COVERAGE: f64 = 0.95;

/// A network survey of `name` (coarse scanner) built with its truth network as the axis:
/// (test dir, survey dir, build dir, seconds of the build).
fn survey_and_build(name: &str, points_per_rev: &str) -> (Scratch, PathBuf, PathBuf, f64) {
    let d = Scratch::new(&format!("cli-build-network-{name}"));
    let survey = common::network_survey(name, &d, points_per_rev, &[]);
    let out = d.join("out");
    std::fs::create_dir_all(&out).unwrap();
    // The axis: the truth network and a copy of its first road 2 km away, which no point
    // reaches (kept as the axis has it, not failing the build).
    let mut axis_odr = opendrive::read_file(survey.join("truth/network.xodr")).unwrap();
    let mut far = axis_odr.roads[0].clone();
    far.id = FAR.into();
    far.link = None;
    far.junction = "-1".into();
    for g in &mut far.plan_view.geometries {
        g.x += 2000.0;
    }
    axis_odr.roads.push(far);
    let axis = d.join("axis.xodr");
    opendrive::write_file(&axis_odr, &axis, &Default::default()).unwrap();
    let t = Instant::now();
    let las = survey.join("scan.las");
    let o = roadscan(&[
        "build",
        "--axis",
        axis.to_str().unwrap(),
        "--input",
        las.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--cell",
        CELL,
        "-q",
    ]);
    let secs = t.elapsed().as_secs_f64();
    // 0, or 1 when a check failed (the products are written all the same; the report says).
    assert!(matches!(o.status.code(), Some(0 | 1)), "build {name}: {}", stderr(&o));
    (d, survey, out, secs)
}

/// The lane ids of a road's lane section at s, sorted.
fn lane_ids(road: &RoadEval, s: f64) -> Vec<i32> {
    let mut v: Vec<i32> = road.lane_section(s).map(|sec| sec.lanes().map(|l| l.id).collect()).unwrap_or_default();
    v.sort_unstable();
    v
}

/// fabriksgatan: four roads with sidewalks behind curbs, one junction of twelve connecting roads.
#[roadscan_tests::needs_shared_data]
#[test]
fn fabriksgatan_is_updated_from_its_survey() {
    updated_from_its_survey("fabriksgatan", POINTS_PER_REV);
}

/// lane_offset_intersection: four roads with lane offsets, one junction of six connecting roads.
#[roadscan_tests::needs_shared_data]
#[test]
fn lane_offset_intersection_is_updated_from_its_survey() {
    updated_from_its_survey("lane_offset_intersection", POINTS_PER_REV);
}

/// multi_intersections: 63 roads, five junctions of 6 and 12 connections, roads of up to five
/// lanes a side (one of them reached by the survey in part: [`SPARSE`]); 566 MB of points, read
/// in 12 batches of roads.
#[roadscan_tests::needs_shared_data]
#[test]
fn multi_intersections_is_updated_from_its_survey() {
    updated_from_its_survey("multi_intersections", POINTS_PER_REV);
}

/// A road's plan box its carriageway can reach: its reference line every metre, widened by
/// 20 m.
fn reach_box(r: &RoadEval) -> [f64; 4] {
    let n = r.length().ceil().max(1.0) as usize;
    (0..=n)
        .map(|k| r.pose(r.length() * k as f64 / n as f64))
        .fold([f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY], |b, p| {
            [b[0].min(p.x - 20.0), b[1].min(p.y - 20.0), b[2].max(p.x + 20.0), b[3].max(p.y + 20.0)]
        })
}

/// Whether another road of the truth (`roads`, `boxes` from [`reach_box`]; not `own`) has its
/// carriageway somewhere across road `own`'s at s (every 0.5 m) at a height more than
/// [`ELEVATION`] from `own`'s there: two designed surfaces on the same ground (Town07's
/// overlapping connecting roads disagree by up to 3.5 cm), of which a survey sees the nearer,
/// so the road's elevation there has no one truth.
fn truth_disagrees(roads: &[RoadEval], boxes: &[[f64; 4]], own: usize, s: f64) -> bool {
    let r = &roads[own];
    let (lo, hi) = carriageway_t(r, s);
    let n = ((hi - lo) / 0.5).ceil().max(1.0) as usize;
    (0..=n).any(|k| {
        let t = lo + (hi - lo) * k as f64 / n as f64;
        let p = r.pose(s);
        let (sn, cs) = p.hdg.sin_cos();
        let (x, y) = (p.x - t * sn, p.y + t * cs);
        let z = r.elevation(s) + t * r.planar_cross_slope(s);
        roads.iter().zip(boxes).enumerate().any(|(k, (o, b))| {
            k != own
                && x >= b[0]
                && y >= b[1]
                && x <= b[2]
                && y <= b[3]
                && o.xy_to_st(x, y, 20.0).is_some_and(|c| {
                    let (olo, ohi) = carriageway_t(o, c.s);
                    let h = o.elevation(c.s) + c.t * o.planar_cross_slope(c.s);
                    c.t >= olo && c.t <= ohi && (h - z).abs() > ELEVATION
                })
        })
    })
}

/// The part of CARLA's Town07 (libOpenDRIVE's copy, a hilly rural map) the test surveys.
const TOWN07_PART: &str = "town07_part";

/// A part of Town07: four junctions in a chain, on a grade. Its connecting roads overlap with
/// surfaces up to 3.5 cm apart; the elevation is compared where they agree
/// ([`truth_disagrees`]).
#[roadscan_tests::needs_shared_data]
#[test]
fn a_part_of_town07_is_updated_from_its_survey() {
    updated_from_its_survey(TOWN07_PART, POINTS_PER_REV);
}

fn updated_from_its_survey(name: &str, points_per_rev: &str) {
    let (_d, survey, out, secs) = survey_and_build(name, points_per_rev);
    println!("{name}: built in {secs:.1} s");
    let truth = opendrive::read_file(survey.join("truth/network.xodr")).unwrap();
    let built = opendrive::read_file(out.join("road.xodr")).unwrap();
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();

    // Every road and junction with the truth's ids, links and connections; the road no point
    // reaches kept as the axis has it, and the report says so.
    let ids = |o: &opendrive::OpenDrive| o.roads.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&built)[..truth.roads.len()], ids(&truth)[..]);
    let axis = opendrive::read_file(out.with_file_name("axis.xodr")).unwrap();
    assert_eq!(built.roads.last(), axis.roads.last(), "the road no point reaches is kept");
    let rows = report["roads"].as_array().unwrap();
    assert_eq!(rows.len(), truth.roads.len() + 1);
    let far = &rows[truth.roads.len()];
    assert_eq!((far["id"].as_str(), far["surveyed"].as_bool()), (Some(FAR), Some(false)), "{far}");
    assert!(far["kept"].as_str().unwrap().contains("no points within"), "{far}");
    let warned = report["checks"].as_array().unwrap().iter().any(|c| {
        c["name"].as_str().unwrap().starts_with(&format!("road {FAR}:")) && c["pass"].as_bool() == Some(false)
    });
    assert!(warned, "no failed check names road {FAR}");
    // The report's plan view draws every road, the one kept in red.
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert_eq!(html.matches("<polyline").count(), truth.roads.len() + 1);
    assert_eq!(html.matches("stroke=\"#d22\"").count(), 1);
    assert!(!truth.junctions.is_empty() && truth.roads.iter().filter(|r| r.junction != "-1").count() >= 6);
    assert_eq!(built.junctions, truth.junctions, "the junctions are kept unchanged");
    for (b, t) in built.roads.iter().zip(&truth.roads) {
        assert_eq!(b.link, t.link, "road {}: links", t.id);
        assert_eq!(b.junction, t.junction, "road {}: junction", t.id);
    }

    let mut failures = Vec::new();
    let mut surveyed_lanes = 0;
    let evals: Vec<RoadEval> = truth.roads.iter().map(RoadEval::new).collect();
    let boxes: Vec<[f64; 4]> = evals.iter().map(reach_box).collect();
    let (mut checked, mut ambiguous) = (0usize, 0usize);
    for (own, ((b, t), row)) in built.roads.iter().zip(&truth.roads).zip(rows).enumerate() {
        assert_eq!(row["id"].as_str(), Some(t.id.as_str()));
        assert_eq!(row["surveyed"].as_bool(), Some(true), "road {}: {}", t.id, row["kept"]);
        let (be, te) = (RoadEval::new(b), RoadEval::new(t));
        assert!((be.length() - te.length()).abs() < 1e-9, "road {}: kept whole", t.id);
        let len = te.length();
        // Reference line and elevation every 0.5 m; elevation 1 m inside the ends (the cross
        // sections' rows are 0.5 m long, the surveyed range within them).
        let n = (len / 0.5).ceil() as usize;
        let (mut plan, mut elev) = (0.0f64, 0.0f64);
        for k in 0..=n {
            let s = len * k as f64 / n as f64;
            let (pb, pt) = (be.pose(s), te.pose(s));
            plan = plan.max((pb.x - pt.x).hypot(pb.y - pt.y));
            if s >= 1.0 && s <= len - 1.0 {
                checked += 1;
                if truth_disagrees(&evals, &boxes, own, s) {
                    ambiguous += 1;
                } else {
                    elev = elev.max((be.elevation(s) - te.elevation(s)).abs());
                }
            }
        }
        // Lanes: the truth's ids every 2 m.
        let m = (len / 2.0).ceil() as usize;
        let lanes_differ = (0..=m)
            .map(|k| (len * k as f64 / m as f64).clamp(0.0, len - 1e-6))
            .find(|&s| lane_ids(&be, s) != lane_ids(&te, s));
        let lanes = row["lanes"].as_str().unwrap();
        surveyed_lanes += usize::from(lanes.starts_with("surveyed"));
        // CRG coverage: the truth carriageway every 0.25 m along and 0.1 m across, 10 cm inside
        // its borders and 0.5 m inside the road's ends, where a tile of the road has a height.
        let crgs: Vec<opencrg::Crg> =
            b.surface.crgs.iter().map(|c| opencrg::read_file(out.join(&c.file)).unwrap()).collect();
        let surfaces: Vec<opencrg::Surface> = crgs.iter().map(|c| opencrg::Surface::new(c, false).unwrap()).collect();
        let (mut nodes, mut covered) = (0usize, 0usize);
        let along = ((len - 1.0) / 0.25).floor() as usize;
        for k in 0..=along {
            let s = 0.5 + 0.25 * k as f64;
            let (lo, hi) = carriageway_t(&te, s);
            let across = ((hi - lo - 0.2) / 0.1).floor().max(0.0) as usize;
            for j in 0..=across {
                let tv = lo + 0.1 + 0.1 * j as f64;
                nodes += 1;
                covered += usize::from(surfaces.iter().any(|f| f.uv_to_z(s, tv).is_some_and(f64::is_finite)));
            }
        }
        let coverage = covered as f64 / nodes.max(1) as f64;
        println!(
            "road {:>4} ({:>5.1} m, junction {:>3}): reference line {:.4} m, elevation {:.4} m, CRG coverage {:.1} % of the carriageway (report: {:.1} % of its lanes), lanes {lanes}",
            t.id,
            len,
            t.junction,
            plan,
            elev,
            100.0 * coverage,
            100.0 * row["crg_coverage"].as_f64().unwrap_or(f64::NAN)
        );
        if plan > REFERENCE_LINE {
            failures.push(format!("road {}: reference line {plan} m off", t.id));
        }
        if elev > ELEVATION {
            failures.push(format!("road {}: elevation {elev} m off", t.id));
        }
        let least = SPARSE.iter().find(|k| k.0 == name && k.1 == t.id).map_or(COVERAGE, |k| k.2);
        if coverage < least {
            failures.push(format!("road {}: CRG coverage {coverage}", t.id));
        }
        if let Some(s) = lanes_differ {
            failures.push(format!(
                "road {}: lanes {:?} at s {s}, the truth's {:?}",
                t.id,
                lane_ids(&be, s),
                lane_ids(&te, s)
            ));
        }
        // Each road's CRG links name tiles of its own build that exist.
        if b.surface.crgs.is_empty() {
            failures.push(format!("road {}: no CRG link", t.id));
        }
    }
    println!("{surveyed_lanes} of {} roads with their lanes from the points", truth.roads.len());
    // Most of the network's elevation has one truth.
    println!("elevation: {ambiguous} of {checked} samples where other roads' surfaces disagree with the road's own");
    assert!(ambiguous * 4 <= checked, "{ambiguous} of {checked} elevation samples left out");
    assert!(failures.is_empty(), "{failures:#?}");

    // Our check of the network: no error.
    let o = roadscan(&["check", out.join("road.xodr").to_str().unwrap()]);
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), stderr(&o));
    assert!(o.status.success(), "check: {text}");
    assert!(text.contains(" 0 errors"), "check: {text}");
}
