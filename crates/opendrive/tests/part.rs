//! `road_part`: the part of a road over s0..s1 is that road, re-based to s = 0. Checked on
//! every road of every sample map, for parts at the start, the middle and the end, and parts
//! that start inside spirals, poly3 and paramPoly3 records.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::validate::{check, CheckOptions, Severity};
use opendrive::{road_part, GeometryKind, OpenDrive, PartError, Road, RoadEval, WriteOptions};

fn angle_diff(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(std::f64::consts::TAU);
    d.min(std::f64::consts::TAU - d)
}

/// Compares the part (from `s0`) with the road every 0.25 m over the part; returns the number
/// of samples.
fn assert_same(road: &Road, part: &Road, s0: f64, what: &str) -> usize {
    let (old, new) = (RoadEval::new(road), RoadEval::new(part));
    let n = (part.length / 0.25).ceil() as usize;
    let mut checked = 0;
    for i in 0..n {
        let s = i as f64 * 0.25;
        let (p, q) = (new.pose(s), old.pose(s + s0));
        let at = format!("{what}: s {s} (road s {})", s + s0);
        assert!((p.x - q.x).abs() < 1e-6 && (p.y - q.y).abs() < 1e-6, "{at}: xy {p:?} vs {q:?}");
        assert!(angle_diff(p.hdg, q.hdg) < 1e-9, "{at}: hdg {} vs {}", p.hdg, q.hdg);
        assert!((p.curvature - q.curvature).abs() < 1e-9, "{at}: curvature {} vs {}", p.curvature, q.curvature);
        let (z, zo) = (new.elevation(s), old.elevation(s + s0));
        assert!((z - zo).abs() < 1e-6, "{at}: z {z} vs {zo}");
        let (r, ro) = (new.superelevation(s), old.superelevation(s + s0));
        assert!((r - ro).abs() < 1e-9, "{at}: superelevation {r} vs {ro}");
        let (o, oo) = (new.lane_offset(s), old.lane_offset(s + s0));
        assert!((o - oo).abs() < 1e-6, "{at}: lane offset {o} vs {oo}");
        let (b, bo) = (new.lane_borders(s), old.lane_borders(s + s0));
        assert_eq!(b.len(), bo.len(), "{at}: lanes {b:?} vs {bo:?}");
        for (x, y) in b.iter().zip(&bo) {
            assert!(x.0 == y.0 && (x.1 - y.1).abs() < 1e-6, "{at}: borders {b:?} vs {bo:?}");
        }
        // Road marks, lane heights, speeds, materials in force: the same records.
        let (sec, seco) = (new.lane_section(s).unwrap(), old.lane_section(s + s0).unwrap());
        let (ds, dso) = (s - sec.s, s + s0 - seco.s);
        for (l, lo) in sec.lanes().zip(seco.lanes()) {
            assert_eq!(l.id, lo.id, "{at}");
            let mark = |lane: &opendrive::Lane, ds: f64| {
                lane.road_marks
                    .iter()
                    .rfind(|m| m.s_offset <= ds + 1e-9)
                    .map(|m| (m.kind.clone(), m.color.clone(), m.width))
            };
            assert_eq!(mark(l, ds), mark(lo, dso), "{at}: lane {} road mark", l.id);
            let speed =
                |lane: &opendrive::Lane, ds: f64| lane.speeds.iter().rfind(|m| m.s_offset <= ds + 1e-9).map(|m| m.max);
            assert_eq!(speed(l, ds), speed(lo, dso), "{at}: lane {} speed", l.id);
            let height = |lane: &opendrive::Lane, ds: f64| {
                lane.heights.iter().rfind(|m| m.s_offset <= ds + 1e-9).map(|m| (m.inner, m.outer))
            };
            assert_eq!(height(l, ds), height(lo, dso), "{at}: lane {} height", l.id);
            let material = |lane: &opendrive::Lane, ds: f64| {
                lane.materials.iter().rfind(|m| m.s_offset <= ds + 1e-9).map(|m| m.friction)
            };
            assert_eq!(material(l, ds), material(lo, dso), "{at}: lane {} material", l.id);
            // Access records in force: all that share the largest sOffset <= ds.
            let access = |lane: &opendrive::Lane, ds: f64| {
                let off = |e: &opendrive::Element| e.attribute("sOffset").and_then(|v| v.parse::<f64>().ok());
                let recs: Vec<_> = lane.extras.elements.iter().filter(|e| e.name == "access").collect();
                let from = recs.iter().filter_map(|e| off(e)).filter(|&o| o <= ds + 1e-9).fold(f64::NAN, f64::max);
                let mut out: Vec<(Option<String>, Option<String>)> = recs
                    .iter()
                    .filter(|e| off(e) == Some(from))
                    .map(|e| (e.attribute("rule").map(str::to_owned), e.attribute("restriction").map(str::to_owned)))
                    .collect();
                out.sort();
                out
            };
            assert_eq!(access(l, ds), access(lo, dso), "{at}: lane {} access", l.id);
        }
        checked += 1;
    }
    checked
}

fn errors(odr: &OpenDrive, road: &str) -> usize {
    check(odr, &CheckOptions::default())
        .iter()
        .filter(|d| d.severity == Severity::Error && d.road.as_deref() == Some(road))
        .count()
}

/// The parts of a road the test cuts: thirds, the middle half, and parts starting inside
/// curved records (spirals, poly3, paramPoly3: the first three of each road).
fn parts(road: &Road) -> Vec<(f64, f64)> {
    let l = road.length;
    let mut out = vec![(0.0, l / 3.0), (l / 4.0, 3.0 * l / 4.0), (2.0 * l / 3.0, l)];
    let curved = road.plan_view.geometries.iter().filter(|g| {
        matches!(g.kind, GeometryKind::Spiral { .. } | GeometryKind::Poly3 { .. } | GeometryKind::ParamPoly3 { .. })
    });
    for g in curved.take(3) {
        let s0 = g.s + 0.37 * g.length;
        // Ends inside a later record (or the same one) too.
        out.push((s0, (s0 + 0.5 * g.length + 7.3).min(l)));
    }
    out.retain(|&(a, b)| b > a);
    out
}

#[roadscan_tests::needs_shared_data]
#[test]
fn parts_of_every_sample_road_are_the_road() {
    let maps = roadscan_tests::sample_maps();
    let mut n_parts = 0;
    let mut n_samples = 0;
    let (mut n_spiral, mut n_cubic) = (0, 0);
    for path in &maps {
        let odr = opendrive::read_file(path).unwrap_or_else(|e| panic!("{e}"));
        for road in &odr.roads {
            if road.plan_view.geometries.is_empty() || road.length <= 0.0 {
                continue;
            }
            // The whole road is the road.
            let whole = road_part(road, 0.0, road.length).unwrap();
            if &whole != road {
                let w = format!("{whole:#?}");
                let r = format!("{road:#?}");
                let diff: Vec<String> = w
                    .lines()
                    .zip(r.lines())
                    .enumerate()
                    .filter(|(_, (x, y))| x != y)
                    .take(6)
                    .map(|(i, (x, y))| format!("line {i}: {x} vs {y}"))
                    .collect();
                panic!(
                    "{}: road {}: the part 0..length differs: {diff:#?} {} vs {} lines",
                    path.display(),
                    road.id,
                    w.lines().count(),
                    r.lines().count()
                );
            }
            // Validated on its own (with the map's header and junctions): a map of the road alone.
            let alone = |r: &Road| OpenDrive {
                header: odr.header.clone(),
                roads: vec![r.clone()],
                junctions: odr.junctions.clone(),
                ..OpenDrive::default()
            };
            let base_errors = errors(&alone(road), &road.id);
            for (s0, s1) in parts(road) {
                let what = format!("{}: road {} part {s0}..{s1}", path.display(), road.id);
                let part = road_part(road, s0, s1).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(part.length, s1 - s0, "{what}");
                assert_eq!(part.plan_view.geometries[0].s, 0.0, "{what}");
                let end = part.plan_view.end_s();
                assert!((end - part.length).abs() < 1e-6, "{what}: geometry ends at {end}");
                n_samples += assert_same(road, &part, s0, &what);
                n_parts += 1;
                // Parts whose first record is a cut spiral or cubic (a cubic becomes a paramPoly3).
                let cut_from = road.plan_view.geometries.iter().rfind(|g| g.s < s0).map(|g| g.kind);
                match cut_from {
                    Some(GeometryKind::Spiral { .. }) if s0 > 0.0 => n_spiral += 1,
                    Some(GeometryKind::ParamPoly3 { .. } | GeometryKind::Poly3 { .. }) if s0 > 0.0 => n_cubic += 1,
                    _ => {}
                }
                // Written and read back: the same road; no new validation error.
                let map = alone(&part);
                let text = opendrive::write(&map, &WriteOptions::default()).unwrap_or_else(|e| panic!("{what}: {e}"));
                let back = opendrive::read(&text).unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(back.roads[0], part, "{what}: differs after writing and reading");
                let e = errors(&map, &road.id);
                assert!(e <= base_errors, "{what}: {e} validation errors, the road has {base_errors}: {:?}", {
                    check(&map, &CheckOptions::default())
                        .into_iter()
                        .filter(|d| d.severity == Severity::Error && d.road.as_deref() == Some(&road.id))
                        .map(|d| d.to_string())
                        .collect::<Vec<_>>()
                });
            }
        }
    }
    if !maps.is_empty() {
        assert!(n_parts > 300, "{n_parts} parts");
        assert!(n_spiral > 20 && n_cubic > 20, "parts starting inside {n_spiral} spirals, {n_cubic} cubics");
        eprintln!("{n_parts} parts, {n_samples} samples, starting inside {n_spiral} spirals and {n_cubic} cubics");
    }
}

fn road(text: &str) -> Road {
    opendrive::read(text).unwrap().roads.remove(0)
}

const ROAD: &str = r#"<?xml version="1.0"?>
<OpenDRIVE><header revMajor="1" revMinor="8"/>
  <road id="7" length="90" junction="-1">
    <link><predecessor elementType="road" elementId="6" contactPoint="end"/><successor elementType="road" elementId="8" contactPoint="start"/></link>
    <planView>
      <geometry s="0" x="10" y="5" hdg="0.3" length="30"><line/></geometry>
      <geometry s="30" x="38.659" y="13.866" hdg="0.3" length="30"><paramPoly3 aU="0" bU="30" cU="0" dU="0" aV="0" bV="0" cV="2" dV="-0.5" pRange="normalized"/></geometry>
      <geometry s="60" x="67" y="24" hdg="0.4" length="30"><poly3 a="0" b="0" c="0.002" d="-0.00003"/></geometry>
    </planView>
    <elevationProfile><elevation s="0" a="1" b="0.02" c="0.001" d="-1e-5"/><elevation s="50" a="3" b="0" c="0" d="0"/></elevationProfile>
    <lateralProfile>
      <superelevation s="0" a="0.01" b="0.001" c="0" d="0"/>
      <shape s="20" t="-3" a="0" b="0.02" c="0" d="0"/><shape s="20" t="0" a="0" b="0.01" c="0" d="0"/>
      <shape s="60" t="-2" a="0.1" b="0.03" c="0.001" d="0"/>
    </lateralProfile>
    <lanes>
      <laneOffset s="0" a="0.5" b="0.01" c="0" d="0"/>
      <laneSection s="0">
        <center><lane id="0" type="none"/></center>
        <right><lane id="-1" type="driving"><link><predecessor id="-1"/></link>
          <width sOffset="0" a="3" b="0.01" c="0" d="0"/><width sOffset="25" a="3.25" b="0" c="0.001" d="0"/>
          <roadMark sOffset="0" type="broken" color="white" width="0.12"><type name="b"><line length="3" space="9" sOffset="1" tOffset="0" width="0.12"/></type></roadMark>
          <roadMark sOffset="20" type="solid" color="white" width="0.15"/>
          <speed sOffset="0" max="50" unit="km/h"/><speed sOffset="30" max="70" unit="km/h"/>
          <access sOffset="0" rule="allow" restriction="car"/><access sOffset="0" rule="allow" restriction="bus"/><access sOffset="35" rule="deny" restriction="bus"/>
        </lane></right>
      </laneSection>
      <laneSection s="45">
        <center><lane id="0" type="none"/></center>
        <right><lane id="-1" type="driving"><link><successor id="-1"/></link><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></right>
      </laneSection>
    </lanes>
    <objects><object id="o1" s="10" t="-5" zOffset="0"/><object id="o2" s="40" t="-5" zOffset="0"/><objectReference s="41" t="0" id="o9" orientation="none"/></objects>
    <signals><signal id="g1" s="42" t="-4" zOffset="2" dynamic="no" orientation="+" type="274" subtype="-1" country="DE"/></signals>
    <surface><CRG file="a.crg" sStart="5" sEnd="80" orientation="same" mode="attached"/></surface>
  </road>
</OpenDRIVE>"#;

#[test]
fn a_part_keeps_what_lies_in_its_range() {
    let r = road(ROAD);
    let part = road_part(&r, 33.0, 70.0).unwrap();
    assert_same(&r, &part, 33.0, "synthetic");
    // Starting and ending inside the poly3 record.
    let inner = road_part(&r, 65.0, 85.0).unwrap();
    assert!(matches!(
        inner.plan_view.geometries[..],
        [opendrive::Geometry { kind: GeometryKind::ParamPoly3 { .. }, .. }]
    ));
    assert!(assert_same(&r, &inner, 65.0, "inside poly3") == 80);
    assert_eq!(part.length, 37.0);
    // Both cubic records became normalized paramPoly3s in their original frames.
    let g = &part.plan_view.geometries;
    assert_eq!(g.len(), 2);
    assert!(
        matches!(g[0].kind, GeometryKind::ParamPoly3 { .. }) && (g[0].x, g[0].y, g[0].hdg) == (38.659, 13.866, 0.3)
    );
    assert!(
        matches!(g[1].kind, GeometryKind::ParamPoly3 { .. }) && g[1].s == 27.0 && (g[1].length - 10.0).abs() < 1e-12
    );
    // Links: neither end is the road's.
    let link = part.link.as_ref().unwrap();
    assert!(link.predecessor.is_none() && link.successor.is_none());
    // Objects and signals inside, re-based; the reference too.
    let ids: Vec<(&str, f64)> = part.objects.objects.iter().map(|o| (o.id.as_str(), o.s)).collect();
    assert_eq!(ids, [("o2", 7.0)]);
    assert_eq!(part.objects.extras.elements[0].attribute("s"), Some("8"));
    assert_eq!(part.signals.signals[0].s, 9.0);
    assert_eq!((part.surface.crgs[0].s_start, part.surface.crgs[0].s_end), (0.0, 37.0));
    // Lanes: the first section's records in force at 33 start at 0.
    let lane = &part.lanes.lane_sections[0].right.as_ref().unwrap().lanes[0];
    assert_eq!(lane.widths.len(), 1);
    assert_eq!(lane.road_marks.len(), 1);
    assert_eq!(lane.road_marks[0].kind, "solid");
    assert_eq!(lane.speeds.iter().map(|s| (s.s_offset, s.max)).collect::<Vec<_>>(), [(0.0, 70.0)]);
    let access: Vec<(Option<&str>, Option<&str>)> =
        lane.extras.elements.iter().map(|e| (e.attribute("sOffset"), e.attribute("restriction"))).collect();
    assert_eq!(access, [(Some("0"), Some("car")), (Some("0"), Some("bus")), (Some("2"), Some("bus"))]);
    assert!(lane.link.as_ref().unwrap().predecessors.is_empty());
    assert_eq!(part.lanes.lane_sections[1].s, 12.0);
    let last = &part.lanes.lane_sections[1].right.as_ref().unwrap().lanes[0];
    assert!(last.link.as_ref().unwrap().successors.is_empty());
    // Shapes: interpolated at 33 (between the groups at 20 and 60), the group at 60 kept.
    let shapes = &part.lateral_profile.shapes;
    assert!(shapes.iter().any(|s| s.s == 27.0 && s.t == -2.0));
    assert!(shapes.iter().filter(|s| s.s == 0.0).count() == 3, "{shapes:?}");
    // At t = -3 at the cut: 13/40 of the way from (0.02·0) .. let the numbers speak.
    let w = 13.0 / 40.0;
    let h_at = |t: f64| {
        let g: Vec<_> = shapes.iter().filter(|s| s.s == 0.0).collect();
        let sh = g.iter().rev().find(|s| s.t <= t).unwrap_or(&g[0]);
        let dt = t - sh.t;
        sh.a + dt * (sh.b + dt * (sh.c + dt * sh.d))
    };
    let h20 = |t: f64| if t < 0.0 { 0.02 * (t + 3.0) } else { 0.01 * t };
    let h60 = |t: f64| 0.1 + 0.03 * (t + 2.0) + 0.001 * (t + 2.0) * (t + 2.0);
    for t in [-3.0, -2.5, -1.0, 0.0, 2.0] {
        let want = (1.0 - w) * h20(t) + w * h60(t);
        assert!((h_at(t) - want).abs() < 1e-12, "t {t}: {} vs {want}", h_at(t));
    }
}

#[test]
fn a_broken_mark_keeps_its_dash_phase() {
    let r = road(ROAD);
    let part = road_part(&r, 5.5, 15.0).unwrap();
    let lane = &part.lanes.lane_sections[0].right.as_ref().unwrap().lanes[0];
    let line = lane.road_marks[0].extras.elements[0].elements().next().unwrap();
    // Dashes started at 1, 13, 25 ... of the road: at 13 - 5.5 = 7.5 of the part.
    assert_eq!(line.attribute("sOffset"), Some("7.5"));
    // The part ends at 15: the solid mark from 20 is not part of it, nor the second section.
    assert_eq!(lane.road_marks.len(), 1);
    assert_eq!(part.lanes.lane_sections.len(), 1);
    let link = part.link.as_ref().unwrap();
    assert!(link.predecessor.is_none() && link.successor.is_none());
    // From the start: the predecessor stays; to the end: the successor.
    let head = road_part(&r, -5.0, 15.0).unwrap();
    assert_eq!(head.length, 15.0);
    assert!(head.link.as_ref().unwrap().predecessor.is_some() && head.link.as_ref().unwrap().successor.is_none());
    let tail = road_part(&r, 50.0, 1e9).unwrap();
    assert_eq!(tail.length, 40.0);
    assert!(tail.link.as_ref().unwrap().predecessor.is_none() && tail.link.as_ref().unwrap().successor.is_some());
    assert_same(&r, &tail, 50.0, "tail");
}

#[test]
fn bad_ranges_are_refused_with_the_road_and_the_range() {
    let r = road(ROAD);
    for (s0, s1) in [(f64::NAN, 5.0), (0.0, f64::INFINITY)] {
        assert!(matches!(road_part(&r, s0, s1), Err(PartError::NotFinite { .. })));
    }
    assert!(matches!(road_part(&r, 5.0, 5.0), Err(PartError::Empty { .. })));
    assert!(matches!(road_part(&r, 9.0, 5.0), Err(PartError::Empty { .. })));
    let e = road_part(&r, 95.0, 120.0).unwrap_err();
    assert!(matches!(e, PartError::Outside { .. }));
    let msg = e.to_string();
    assert!(msg.contains("road 7") && msg.contains("95..120") && msg.contains("90"), "{msg}");
    assert!(matches!(road_part(&r, -20.0, -1.0), Err(PartError::Outside { .. })));
    let mut bare = r.clone();
    bare.plan_view.geometries.clear();
    assert!(matches!(road_part(&bare, 1.0, 5.0), Err(PartError::NoGeometry { .. })));
}
