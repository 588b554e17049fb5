//! The vehicle model: closed forms of the steps, the stop at 0, wheels on the surface.

mod common;

use common::*;
use simulation::actors::Variable;
use simulation::scenario::Command;
use simulation::vehicle::{DragModel, Longitudinal, Regression};
use simulation::{RoadSurface, Scenario, Simulation, VehicleParams, VehicleState};

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

fn set(time: f64, variable: Variable, value: f64) -> Command {
    Command { time, target: "ego".into(), variable, value }
}

/// Throttle 60 % for 3 s from rest, then brake 20 % to a stop, on a straight road along x:
/// speed and position equal the regression's closed form within 1e-9 relative at every tick.
#[test]
fn throttle_and_brake_steps_are_the_closed_form() {
    let odr = straight(300.0, 0.0, 0.0, "");
    let surface = RoadSurface::new(&odr.roads[0]);
    let dt = 0.01;
    let sc = Scenario {
        tick: dt,
        duration: 12.0,
        script: vec![
            set(0.0, Variable::Throttle, 60.0),
            set(3.0, Variable::Throttle, 0.0),
            set(3.0, Variable::Brake, 20.0),
        ],
        ..Scenario::default()
    };
    let mut sim = Simulation::new(&surface, sc).expect("scenario");
    let x0 = sim.ego().x;
    assert!((sim.ego().y + 1.75).abs() < 1e-12, "lane -1's centre");
    let a1 = (0.129 * 60.0 - 0.190) / 3.6;
    let a2 = (-0.549 * 20.0 - 0.190) / 3.6;
    let (v1, d1) = (a1 * 3.0, 0.5 * a1 * 9.0);
    let t_stop = 3.0 + v1 / -a2;
    let mut stopped_ticks = 0;
    while !sim.finished() {
        sim.step();
        let t = sim.time();
        let (v, d) = if t <= 3.0 + 1e-12 {
            (a1 * t, 0.5 * a1 * t * t)
        } else if t < t_stop {
            let u = t - 3.0;
            (v1 + a2 * u, d1 + v1 * u + 0.5 * a2 * u * u)
        } else {
            (0.0, d1 + v1 * v1 / (-2.0 * a2))
        };
        let e = sim.ego();
        if v == 0.0 {
            stopped_ticks += 1;
            assert_eq!(e.speed, 0.0, "t = {t}: stopped");
        } else {
            assert!(rel(e.speed, v) < 1e-9, "t = {t}: speed {} vs {v}", e.speed);
        }
        assert!(rel(e.x - x0, d) < 1e-9, "t = {t}: distance {} vs {d}", e.x - x0);
        assert!(rel(e.odometer, d) < 1e-9, "t = {t}: odometer {} vs {d}", e.odometer);
    }
    assert!(stopped_ticks > 100, "the car stopped and stayed stopped ({stopped_ticks} ticks)");
}

/// Full brake from 25 m/s: speed never below 0, exactly 0 once stopped, the stopping distance
/// v²/2|a| within 1e-9; at rest without pedals the constant drag does not move the car back.
#[test]
fn full_brake_never_makes_speed_negative() {
    let odr = straight(300.0, 0.0, 0.0, "");
    let surface = RoadSurface::new(&odr.roads[0]);
    let p = VehicleParams::default();
    let m = Regression::default();
    let mut v = VehicleState::at(&p, &surface, 10.0, -1.75, 0.0, 25.0);
    v.brake = 100.0;
    let a = (-0.549 * 100.0 - 0.190) / 3.6;
    for _ in 0..500 {
        v.step(&p, &m, &surface, 0.01);
        assert!(v.speed >= 0.0, "speed {}", v.speed);
    }
    assert_eq!(v.speed, 0.0);
    assert!(rel(v.x - 10.0, 25.0 * 25.0 / (-2.0 * a)) < 1e-9, "stopping distance {}", v.x - 10.0);
    let x = v.x;
    v.brake = 0.0;
    for _ in 0..100 {
        v.step(&p, &m, &surface, 0.01);
    }
    assert_eq!((v.speed, v.x), (0.0, x), "the drag term does not push a stopped car backwards");
}

/// RK4 with tiny steps of v' = a(v).
fn rk4(m: &dyn Longitudinal, v0: f64, th: f64, b: f64, t: f64) -> (f64, f64) {
    let n = 200_000;
    let h = t / n as f64;
    let (mut v, mut d) = (v0, 0.0);
    let f = |v: f64| m.acceleration(v, th, b);
    for _ in 0..n {
        let k1 = f(v);
        let k2 = f(v + 0.5 * h * k1);
        let k3 = f(v + 0.5 * h * k2);
        let k4 = f(v + h * k3);
        d += h * (v + h * (k1 + k2 + k3) / 6.0);
        v += h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0;
    }
    (v, d)
}

/// The drag model's exact step (tanh, coth, 1/(1+kvt), tan) against a fine numerical
/// integration, in each regime, within 1e-8 relative.
#[test]
fn the_drag_model_step_is_its_ode_solved() {
    let m = DragModel { regression: Regression::default(), k: 0.002 };
    // (v0, throttle, brake, t): below and above the terminal speed, coasting at zero pedal
    // force, and braking without reaching 0.
    let coast_th = 0.190 / 0.129;
    for (v0, th, b, t) in
        [(5.0, 80.0, 0.0, 2.0), (60.0, 30.0, 0.0, 2.0), (20.0, coast_th, 0.0, 3.0), (20.0, 0.0, 10.0, 1.0)]
    {
        let (v, d) = m.advance(v0, th, b, t);
        let (vr, dr) = rk4(&m, v0, th, b, t);
        assert!(rel(v, vr) < 1e-8 && rel(d, dr) < 1e-8, "v0 {v0} th {th} b {b}: ({v}, {d}) vs ({vr}, {dr})");
    }
    // Braking to a stop: the distance is ln(1/cos c)/k with c = atan(v0 / w).
    let (v, d) = m.advance(8.0, 0.0, 50.0, 10.0);
    let a = (-0.549 * 50.0 - 0.190) / 3.6;
    let w = (-a / m.k).sqrt();
    let want = -(8.0f64 / w).atan().cos().ln() / m.k;
    assert_eq!(v, 0.0);
    assert!(rel(d, want) < 1e-12, "{d} vs {want}");
    assert!(d < 8.0 * 8.0 / (-2.0 * a), "drag shortens the stop");
}

/// A wheel over a 5 cm pothole of a CRG on a road with grade and crossfall stands 5 cm lower
/// (within 2 mm) than without the CRG; the other wheels do not move.
#[test]
fn a_wheel_over_a_pothole_drops_by_its_depth() {
    let odr = straight(100.0, 0.02, 0.03, "");
    let depth = 0.05;
    // Pothole at s 20..21 m, t -1.2..-0.4 m: on lane -1 (centre t = -1.75) heading +x the
    // left wheels run at t = -1.75 + 0.79 = -0.96, the right ones at -2.54.
    let crg = pothole_crg(depth, (20.0, 21.0), (-1.2, -0.4));
    let prepared = opencrg::Surface::new(&crg, true).expect("crg");
    let with = RoadSurface::new(&odr.roads[0]).with_crg(link(0.0, 40.0), &prepared).expect("link");
    let without = RoadSurface::new(&odr.roads[0]);
    let p = VehicleParams::default();
    // Front axle at s = 20.5.
    let sample = |surface: &RoadSurface| {
        let xy = surface.st_to_xy(20.5 - p.wheelbase, -1.75);
        VehicleState::at(&p, surface, xy[0], xy[1], 0.0, 0.0).wheels
    };
    let (a, b) = (sample(&with), sample(&without));
    // Wheels: front left, front right, rear left, rear right.
    let drop: Vec<f64> = (0..4).map(|k| b[k] - a[k]).collect();
    assert!((drop[0] - depth).abs() < 0.002, "front left wheel drops {} m", drop[0]);
    for k in [1, 2, 3] {
        assert!(drop[k].abs() < 1e-9, "wheel {k} moves by {}", drop[k]);
    }
    // Driving through at 5 m/s: the largest drop of the front left wheel is the depth, and
    // the rear left wheel drops by it too, a wheelbase later.
    let xy = with.st_to_xy(5.0, -1.75);
    let mut v = VehicleState::at(&p, &with, xy[0], xy[1], 0.0, 5.0);
    let m = Regression::default();
    let (mut front, mut rear) = (0.0f64, 0.0f64);
    for _ in 0..500 {
        v.step(&p, &m, &with, 0.01);
        let w = simulation::vehicle::wheel_positions(&p, v.x, v.y, v.heading);
        let bare = |k: usize| without.height(w[k][0], w[k][1]).expect("on the road");
        front = front.max(bare(0) - v.wheels[0]);
        rear = rear.max(bare(2) - v.wheels[2]);
        assert!((bare(1) - v.wheels[1]).abs() < 1e-9, "the right wheels stay on the road");
    }
    assert!((front - depth).abs() < 0.002 && (rear - depth).abs() < 0.002, "deepest drops {front}, {rear}");
}

/// On a road of constant grade 0.03 and superelevation 0.04 rad, pitch = atan(grade) and roll
/// = atan(cross slope) = atan(tan 0.04 / √(1 + g²)) within 0.001 rad, driving either way.
#[test]
fn roll_and_pitch_follow_the_grade_and_crossfall() {
    let (g, phi) = (0.03f64, 0.04f64);
    let odr = straight(100.0, g, phi, "");
    let surface = RoadSurface::new(&odr.roads[0]);
    let p = VehicleParams::default();
    let c = phi.tan() / (1.0 + g * g).sqrt();
    for (t, heading, sign) in [(-1.75, 0.0, 1.0), (1.75, std::f64::consts::PI, -1.0)] {
        let xy = surface.st_to_xy(50.0, t);
        let v = VehicleState::at(&p, &surface, xy[0], xy[1], heading, 0.0);
        assert!((v.pitch - sign * g.atan()).abs() < 0.001, "pitch {} vs {}", v.pitch, sign * g.atan());
        assert!((v.roll - sign * c.atan()).abs() < 0.001, "roll {} vs {}", v.roll, sign * c.atan());
        assert!((v.roll - sign * phi).abs() < 0.001, "roll {} vs the superelevation {phi}", v.roll);
    }
}

/// The surface's (x, y) -> planar (s, t) inverts the CRG's placement `P(s) + t N(s)` on the
/// demo road (superelevated and graded from s = 70 m) within 1e-9 m, where the road frame's t
/// differs by t (1 - cos φ) (over a millimetre).
#[test]
fn planar_st_inverts_the_crg_placement_on_a_superelevated_road() {
    let odr = demo_road();
    let surface = RoadSurface::new(&odr.roads[0]);
    let mut worst_frame: f64 = 0.0;
    for i in 0..200 {
        let s = 1.0 + i as f64 * 0.74;
        let t = -4.0 + (i as f64 * 0.37).sin().abs() * 8.0;
        let xy = surface.st_to_xy(s, t);
        let (s2, t2) = surface.planar_st(xy[0], xy[1]).expect("on the road");
        assert!((s2 - s).abs() < 1e-9 && (t2 - t).abs() < 1e-9, "({s}, {t}) -> ({s2}, {t2})");
        let frame = surface.road().xy_to_st(xy[0], xy[1], 50.0).expect("on the road");
        worst_frame = worst_frame.max((frame.t - t).abs());
    }
    assert!(worst_frame > 1e-3, "the road frame's t differs there ({worst_frame} m)");
}

/// The warm start from a nearby s (a wheel a tick ago) finds the same (s, t) as the full
/// search within 1e-9 m, on the superelevated, curved demo road and on esmini's curves.xodr;
/// a wrong hint (half the road away) still gives the nearest foot point; a point beyond the
/// road's reach gives None with and without a hint.
#[test]
#[roadscan_tests::needs_shared_data]
fn a_warm_started_inverse_equals_the_full_search() {
    let curves =
        opendrive::read_file(roadscan_tests::shared_data().join("opendrive/esmini/curves.xodr")).expect("curves");
    for odr in [demo_road(), curves] {
        let surface = RoadSurface::new(&odr.roads[0]);
        let len = surface.road().length();
        let mut warm = 0;
        for i in 0..400 {
            let s = 0.5 + (len - 1.0) * i as f64 / 400.0;
            let t = -3.0 + (i as f64 * 0.61).sin() * 2.5;
            let xy = surface.st_to_xy(s, t);
            let full = surface.planar_st(xy[0], xy[1]).expect("on the road");
            for hint in [[s - 0.12, t], [s + 0.3, 0.0], [s, t + 0.2], [len - s, -t]] {
                let got = surface.planar_st_from(xy[0], xy[1], Some(hint)).expect("on the road");
                assert!(
                    (got.0 - full.0).abs() < 1e-9 && (got.1 - full.1).abs() < 1e-9,
                    "({s}, {t}) from {hint:?}: {got:?} vs {full:?}"
                );
            }
            warm += usize::from((full.0 - s).abs() < 1e-9);
        }
        assert_eq!(warm, 400, "the full search inverts the placement");
        // Beyond the reach: nothing, hinted or not.
        let far = surface.st_to_xy(0.5 * len, surface.reach() + 5.0);
        assert!(surface.planar_st(far[0], far[1]).is_none());
        assert!(surface.planar_st_from(far[0], far[1], Some([0.5 * len, 0.0])).is_none());
        assert!(surface.planar_st_from(far[0], far[1], Some(simulation::surface::OFF_ROAD)).is_none());
    }
}

/// The surface's reach follows the road: its outermost lane border plus the margin (the demo
/// road's lanes reach 8 to 12 m), not the 50 m cap.
#[test]
fn the_reach_is_the_outermost_lane_border_plus_the_margin() {
    let odr = demo_road();
    let surface = RoadSurface::new(&odr.roads[0]);
    let road = surface.road();
    let widest = (0..=150)
        .map(|k| road.lane_borders(k as f64 * road.length() / 150.0).iter().map(|(_, t)| t.abs()).fold(0.0, f64::max))
        .fold(0.0, f64::max);
    assert!(widest > 3.0, "the demo road has lanes ({widest} m)");
    let want = widest + simulation::surface::REACH_MARGIN;
    assert!((surface.reach() - want).abs() < 0.5, "reach {} vs {want}", surface.reach());
    assert!(surface.reach() < simulation::surface::DEFAULT_REACH);
}
