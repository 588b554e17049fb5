//! Junctions of the sample maps regenerated from the roads that end at them: every connecting
//! road stripped, new ones generated from the incoming and outgoing lanes
//! (`opendrive::connect`), and the result held against the map's own junctions.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::connect::{junction_ends, regenerate, unreached_lanes, ConnectOptions};
use opendrive::validate::{check, CheckOptions, Severity};
use opendrive::{OpenDrive, RoadEval};
use std::collections::BTreeSet;

/// The unordered pairs of roads a junction joins, from its connecting roads' links.
fn joined(odr: &OpenDrive, junction: &str) -> BTreeSet<(String, String)> {
    let mut out = BTreeSet::new();
    for r in odr.roads.iter().filter(|r| r.junction == junction) {
        let Some(link) = &r.link else { continue };
        let (Some(p), Some(s)) = (&link.predecessor, &link.successor) else { continue };
        if p.element_type == "road" && s.element_type == "road" && p.element_id != s.element_id {
            let (a, b) = (p.element_id.clone(), s.element_id.clone());
            out.insert(if a < b { (a, b) } else { (b, a) });
        }
    }
    out
}

/// Junctions whose roads all end at them (the generator's input), of "default" kind.
fn regenerable(odr: &OpenDrive) -> Vec<String> {
    odr.junctions
        .iter()
        .filter(|j| j.kind.as_deref().is_none_or(|k| k == "default"))
        .filter(|j| junction_ends(odr, &j.id).len() >= 2)
        .map(|j| j.id.clone())
        .collect()
}

#[roadscan_tests::needs_shared_data]
#[test]
fn every_sample_junction_regenerates_with_continuous_lanes() {
    let opts = ConnectOptions::default();
    let (mut n_junctions, mut n_roads, mut same, mut extra, mut missing) = (0, 0, 0, 0, 0);
    let (mut worst_gap, mut worst_hdg, mut worst_z, mut worst_w, mut worst_k): (f64, f64, f64, f64, f64) =
        (0.0, 0.0, 0.0, 0.0, 0.0);
    for path in roadscan_tests::sample_maps() {
        let Ok(odr) = opendrive::read_file(&path) else { continue };
        for jid in regenerable(&odr) {
            let truth = joined(&odr, &jid);
            let mut made = odr.clone();
            let fits = match regenerate(&mut made, &jid, &opts) {
                Ok(f) => f,
                Err(e) => panic!("{}: junction {jid}: {e}", path.display()),
            };
            n_junctions += 1;
            n_roads += fits.len();
            for f in &fits {
                assert!(
                    f.gap < 1e-6 && f.heading < 1e-6,
                    "{}: junction {jid}: a reference line {:.2e} m, {:.2e} rad off its lanes",
                    path.display(),
                    f.gap,
                    f.heading
                );
                worst_gap = worst_gap.max(f.gap);
                worst_hdg = worst_hdg.max(f.heading);
                worst_k = worst_k.max(f.curvature);
            }
            // The pavement meets: the connecting lane's inner and outer borders at both ends
            // on the incoming and outgoing lanes' borders, in 3-D.
            for c in made.roads.iter().filter(|r| r.junction == jid) {
                let ev = RoadEval::new(c);
                let link = c.link.as_ref().unwrap();
                let lane = &c.lanes.lane_sections[0].right.as_ref().unwrap().lanes[0];
                let ll = lane.link.as_ref().unwrap();
                for (target, s_c, other_lane) in
                    [(&link.predecessor, 0.0, ll.predecessors[0]), (&link.successor, c.length, ll.successors[0])]
                {
                    let t = target.as_ref().unwrap();
                    let road = made.road(&t.element_id).unwrap();
                    let rv = RoadEval::new(road);
                    let s_r = if t.contact_point.as_deref() == Some("start") { 0.0 } else { road.length };
                    let borders = rv.lane_borders(s_r);
                    let outer = borders.iter().find(|b| b.0 == other_lane).unwrap().1;
                    let inner = if other_lane.abs() == 1 {
                        rv.lane_offset(s_r)
                    } else {
                        borders.iter().find(|b| b.0 == other_lane - other_lane.signum()).unwrap().1
                    };
                    let c_out = ev.lane_borders(s_c).iter().find(|b| b.0 == -1).unwrap().1;
                    for (tc, tr) in [(0.0, inner), (c_out, outer)] {
                        let a = ev.sth_to_xyz(s_c, tc, 0.0);
                        let b = rv.sth_to_xyz(s_r, tr, 0.0);
                        let dxy = (a[0] - b[0]).hypot(a[1] - b[1]);
                        worst_w = worst_w.max(dxy);
                        worst_z = worst_z.max((a[2] - b[2]).abs());
                        // The outer border: the lane's own border meets the road's at the
                        // reference line's normal, the connecting road's at the lane border's
                        // normal (they differ where the lane widens): 5 mm.
                        assert!(
                            dxy < 0.005 && (a[2] - b[2]).abs() < 0.001,
                            "{}: junction {jid}: road {} (t {tc:.3}, s {s_c:.3}) meets road {} lane {other_lane} {dxy:.4} m apart in plan, {:.4} m in z",
                            path.display(),
                            c.id,
                            road.id,
                            (a[2] - b[2]).abs()
                        );
                    }
                }
            }
            // No new finding of the checks on the generated roads.
            for d in check(&made, &CheckOptions::default()) {
                let generated = d.road.as_ref().is_some_and(|r| made.road(r).is_some_and(|r| r.junction == jid));
                assert!(!(generated && d.severity == Severity::Error), "{}: junction {jid}: {d}", path.display());
            }
            // From every lane into the junction, every road it joins the lane's road to.
            let unreached = unreached_lanes(&made, &jid);
            assert!(unreached.is_empty(), "{}: junction {jid}: {unreached:?}", path.display());
            let got = joined(&made, &jid);
            same += truth.intersection(&got).count();
            extra += got.difference(&truth).count();
            missing += truth.difference(&got).count();
            if truth != got {
                eprintln!(
                    "{}: junction {jid}: missing {:?}, extra {:?}",
                    path.file_name().unwrap().to_string_lossy(),
                    truth.difference(&got).collect::<Vec<_>>(),
                    got.difference(&truth).collect::<Vec<_>>()
                );
            }
        }
    }
    eprintln!(
        "{n_junctions} junctions, {n_roads} connecting roads: pairs same {same}, extra {extra}, missing {missing}; \
         worst gap {worst_gap:.2e} m, heading {worst_hdg:.2e} rad, border in plan {worst_w:.2e} m, in z {worst_z:.2e} m, curvature {worst_k:.3} 1/m"
    );
    assert!(n_junctions >= 30, "only {n_junctions} junctions regenerated");
    // Every pair of roads the maps join is joined; the generator also joins pairs some maps
    // leave out (turns the map forbids, which the lanes alone do not say).
    assert_eq!(missing, 0, "pairs of roads the maps join that the generated junctions do not");
    assert!(same >= 100, "{same} pairs");
}
