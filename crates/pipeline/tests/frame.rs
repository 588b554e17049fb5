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
