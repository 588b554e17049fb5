//! A network of scenes: every road of a shared sample map, one placement, a plan that drives
//! every road, truth directories named after the road ids, errors that name the road.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::RoadEval;
use sim::network::Network;

fn map() -> opendrive::OpenDrive {
    let path = roadscan_tests::shared_data().join("opendrive/esmini/lane_offset_intersection.xodr");
    opendrive::read_file(path).unwrap()
}

#[roadscan_tests::needs_shared_data]
#[test]
fn every_road_is_a_scene_in_one_placement_and_every_road_is_driven() {
    let odr = map();
    let net = Network::new(&odr, 1).unwrap();
    assert_eq!(net.scenes.len(), odr.roads.len());
    let offset = net.odr.header.offset.unwrap();
    for (scene, road) in net.scenes.iter().zip(&odr.roads) {
        assert_eq!(scene.odr.roads[0].id, road.id);
        assert_eq!(scene.odr.header.offset, Some(offset));
        // The whole road, however short (road 3 is 5.2 m), and no furniture.
        let len = RoadEval::new(road).length();
        assert!((scene.s_range.1 - len).abs() < 1e-9 && scene.s_range.0 == 0.0, "road {}", road.id);
        assert!(scene.objects.is_empty() && scene.surface.potholes.is_empty() && !scene.facades.exist());
        // The same file frame as the source: the road's start where the file puts it.
        let (a, b) = (RoadEval::new(road).pose(0.0), scene.road().pose(0.0));
        assert!((a.x - b.x).abs() < 1e-12 && (a.y - b.y).abs() < 1e-12);
    }
    let plan = net.survey(1).unwrap();
    assert_eq!(plan.roads.len(), plan.survey.passes.len());
    for (i, p) in plan.survey.passes.iter().enumerate() {
        assert_eq!(usize::from(p.id), i + 1);
        let (s0, s1) = net.scenes[plan.roads[i]].s_range;
        assert!((p.s_start.min(p.s_end) - s0).abs() < 1e-9 && (p.s_start.max(p.s_end) - s1).abs() < 1e-9);
    }
    for i in 0..net.scenes.len() {
        assert!(plan.roads.contains(&i), "road {} not driven", odr.roads[i].id);
    }
}

#[roadscan_tests::needs_shared_data]
#[test]
fn truth_directories_are_safe_names_and_distinct() {
    let mut odr = map();
    odr.roads[1].id = "a/b".into();
    odr.roads[2].id = "a_b".into();
    odr.roads[3].id = "..".into();
    let dirs = Network::new(&odr, 1).unwrap().truth_dirs();
    assert_eq!(&dirs[..4], ["1", "a_b", "a_b~3", "__"]);
    let mut unique = dirs.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), dirs.len());
}

#[roadscan_tests::needs_shared_data]
#[test]
fn errors_name_the_road() {
    let mut odr = map();
    odr.roads.clear();
    assert!(matches!(Network::new(&odr, 1), Err(sim::Error::NoRoads)));
    let mut odr = map();
    // A lane that turns inside out on road 7.
    let road = odr.roads.iter_mut().find(|r| r.id == "7").unwrap();
    let side = road.lanes.lane_sections[0].left.as_mut().unwrap();
    let lane = side.lanes.iter_mut().find(|l| l.id == 1).unwrap();
    lane.widths[0].b = -1.0;
    let e = Network::new(&odr, 1).unwrap_err().to_string();
    assert!(e.starts_with("road 7: lane 1 at s = ") && e.contains("must not be negative"), "{e}");
}

#[roadscan_tests::needs_shared_data]
#[test]
fn a_plan_that_does_not_match_the_network_is_an_error_before_anything_is_written() {
    let net = Network::new(&map(), 1).unwrap();
    let mut plan = net.survey(1).unwrap();
    plan.roads[0] = net.scenes.len();
    let out = std::env::temp_dir().join(format!("sim-network-bad-plan-{}", std::process::id()));
    let e = sim::network::run(&net, &plan, &out, false).unwrap_err();
    assert!(matches!(e, sim::Error::PlanRoads { scenes: 10, .. }), "{e}");
    assert!(!out.exists());
    plan.roads.pop();
    assert!(sim::network::run(&net, &plan, &out, false).is_err());
}
