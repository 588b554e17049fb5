//! The incremental projection recovers planar (s, t) exactly, for points in scan order and for
//! points that jump along the road.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use pipeline::RoadFrame;

#[test]
fn projection_recovers_s_and_t_in_scan_order_and_after_jumps() {
    let odr = opendrive::read(sim::scene::DEMO_XODR).unwrap();
    let road = opendrive::RoadEval::new(&odr.roads[0]);
    let mut frame = RoadFrame::new(&road);
    let mut worst: f64 = 0.0;
    let mut check = |frame: &mut RoadFrame, s: f64, t: f64| {
        let p = road.pose(s);
        let (x, y) = (p.x - t * p.hdg.sin(), p.y + t * p.hdg.cos());
        let (gs, gt) = frame.project(x, y).unwrap();
        worst = worst.max((gs - s).abs()).max((gt - t).abs());
    };
    // Profiles across the road every 5 cm (line, clothoids, arc), |t| up to 30 m.
    for k in 0..3000 {
        let s = 0.5 + k as f64 * 0.0498;
        for j in 0..60 {
            check(&mut frame, s, -30.0 + j as f64 * 1.013);
        }
    }
    // Jumps back and forth.
    for k in 0..500 {
        let s = (k as f64 * 37.7) % 149.0 + 0.5;
        check(&mut frame, s, ((k % 13) as f64 - 6.0) * 1.7);
    }
    assert!(worst < 1e-5, "worst {worst} m");
    // Beyond the road's ends: none.
    let p = road.pose(0.0);
    assert!(frame.project(p.x - 2.0 * p.hdg.cos(), p.y - 2.0 * p.hdg.sin()).is_none());
}

/// An OpenDRIVE file of one road of `length` m with the plan view `geometries`.
fn road_of(length: f64, geometries: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<OpenDRIVE>
  <header revMajor="1" revMinor="8" name="test" version="1"/>
  <road name="test" length="{length}" id="1" junction="-1">
    <planView>{geometries}</planView>
    <lanes><laneSection s="0"><center><lane id="0" type="none" level="false"/></center></laneSection></lanes>
  </road>
</OpenDRIVE>"#
    )
}

/// A line, a kink of 0.2 rad into an arc of radius 20 m, and a line on from the arc's end (a
/// jump of curvature).
const KINKED: &str = r#"
      <geometry s="0.0" x="0.0" y="0.0" hdg="0.0" length="20.0"><line/></geometry>
      <geometry s="20.0" x="20.0" y="0.0" hdg="0.2" length="20.0"><arc curvature="0.05"/></geometry>
      <geometry s="40.0" x="34.6673951034433" y="12.35417646729136" hdg="1.2" length="20.0"><line/></geometry>"#;

/// A line and an arc of radius 20 m that starts 3 cm to the right of the line's end, with the
/// line's heading: a gap, no kink.
const GAPPED: &str = r#"
      <geometry s="0.0" x="0.0" y="0.0" hdg="0.0" length="20.0"><line/></geometry>
      <geometry s="20.0" x="20.0" y="-0.03" hdg="0.0" length="20.0"><arc curvature="0.05"/></geometry>"#;

#[test]
fn rejecting_on_the_tangent_drops_only_points_outside_the_band() {
    let band = (-5.3, 6.1);
    // At the kink and where the curvature jumps, the circles of the entries either side put the
    // foot apart, and which one the walk settles on depends on where it starts: a limit of the
    // frame (its results differ there), not of the tangent (rejected points stay outside).
    let roads = [
        (sim::scene::DEMO_XODR.to_string(), &[][..]),
        (road_of(60.0, KINKED), &[20.0, 40.0][..]),
        (road_of(40.0, GAPPED), &[20.0][..]),
    ];
    for (xodr, breaks) in roads {
        let odr = opendrive::read(&xodr).unwrap();
        let road = opendrive::RoadEval::new(&odr.roads[0]);
        let frame = RoadFrame::new(&road);
        let (mut fast, mut exact) = (None, None);
        let (mut rejected, mut kept) = (0, 0);
        let mut check = |x: f64, y: f64| {
            let want = frame.project_from(&mut exact, x, y);
            match (frame.project_within(&mut fast, x, y, band), want) {
                (None, Some((s, t))) => {
                    assert!(t < band.0 || t > band.1, "({x}, {y}) rejected, but s {s} t {t} lies in the band");
                    rejected += 1;
                }
                (Some((s, t)), Some((ws, wt))) => {
                    let differ = (s - ws).abs() > 1e-6 || (t - wt).abs() > 1e-6;
                    let near_break = breaks.iter().any(|b: &f64| (ws - b).abs() < 10.0);
                    assert!(!differ || near_break, "({x}, {y}): ({s}, {t}) vs ({ws}, {wt})");
                    kept += 1;
                }
                (Some(st), None) => panic!("({x}, {y}): {st:?}, but the foot lies beyond the road"),
                (None, None) => {}
            }
        };
        // Profiles across the road every 3 cm in scan order, out to 40 m either side (beyond the
        // arc's centre too), then jumps along the road.
        let length = road.length();
        for k in 0..(length / 0.03) as usize {
            let p = road.pose(k as f64 * 0.03);
            let near_edges =
                [band.0, band.1].map(|e| [-0.5, -0.05, -0.004, -0.0005, 0.0005, 0.004, 0.05, 0.5].map(|d| e + d));
            let across = (0..400).map(|j| -40.0 + j as f64 * 0.2003);
            for (j, t) in across.chain(near_edges.into_iter().flatten()).enumerate() {
                check(p.x - t * p.hdg.sin() + 0.011 * j as f64 % 0.05, p.y + t * p.hdg.cos());
            }
        }
        for k in 0..2000 {
            let p = road.pose((k as f64 * 37.7) % length);
            let t = ((k % 29) as f64 - 14.0) * 0.73;
            check(p.x - t * p.hdg.sin(), p.y + t * p.hdg.cos());
        }
        // On the kinked road: a profile just past the kink out to 6.13 m, then a point the arc's
        // tangent there puts as far out, 2 cm back along it, while the line before the kink
        // holds its foot, 6.00 m across: the walk leaves the kink's entry, so must the shortcut.
        let p = road.pose(20.001);
        let (c, sn) = (p.hdg.cos(), p.hdg.sin());
        for t in [-2.0, 0.0, 2.0, 4.0, 6.13] {
            check(p.x - t * sn, p.y + t * c);
        }
        check(p.x - 0.02 * c - 6.13 * sn, p.y - 0.02 * sn + 6.13 * c);
        // Points up to 1 km away (a tile reaching beyond the road): rejected, many on the
        // entries' bounding box alone.
        let c = road.pose(0.5 * length);
        for i in -20..=20 {
            for j in -20..=20 {
                check(c.x + i as f64 * 50.0, c.y + j as f64 * 50.0);
            }
        }
        // Most points outside the band are rejected on the tangent, and the test covers both.
        assert!(rejected > 100_000 && kept > 10_000, "{rejected} rejected, {kept} kept");
    }
}
