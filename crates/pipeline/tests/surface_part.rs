//! The CRG of a part of the road the points were collected on (issue 23): retargeted with the
//! s shift of `opendrive::road_part`, the grid's u is the part's s, its heights the whole
//! road's, clipped to the part; the roadside cut to the part likewise.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

mod common;
use common::survey;

use pipeline::{RoadsideBuilder, RoadsideOptions, SurfaceBuilder, SurfaceGrid, SurfaceOptions, ZMode};
use sim::Scene;

/// The residual grid of `pts` on the demo road, retargeted to `target` from s `shift` on.
fn gridded(
    scene: &Scene,
    pts: &[[f64; 3]],
    target: &opendrive::Road,
    shift: f64,
) -> Result<SurfaceGrid, pipeline::Error> {
    let road = &scene.odr.roads[0];
    let opts = SurfaceOptions { v_range: Some((-3.2, 3.2)), z: ZMode::Residual, ..Default::default() };
    let mut b = SurfaceBuilder::new(road, scene.odr.header.offset, opts).unwrap();
    for c in pts.chunks(10_000) {
        let (x, y, z): (Vec<f64>, Vec<f64>, Vec<f64>) =
            (c.iter().map(|p| p[0]).collect(), c.iter().map(|p| p[1]).collect(), c.iter().map(|p| p[2]).collect());
        b.add(&x, &y, &z).unwrap();
    }
    b.retarget(target, Some((-3.2, 3.2)), shift)?;
    b.finish()
}

#[test]
fn a_grid_retargeted_to_a_part_of_the_road_is_in_the_parts_s() {
    let (scene, pts) = survey(1, 30.0, 40.0);
    let road = &scene.odr.roads[0];
    let whole = gridded(&scene, &pts, road, 0.0).unwrap();
    let (wu, wnu) = (whole.crg.u_first(), whole.crg.nu);

    // A part wider than the grid: the same nodes, u moved by the shift.
    let wide = opendrive::road_part(road, 28.0, 42.0).unwrap();
    let g = gridded(&scene, &pts, &wide, 28.0).unwrap();
    assert_eq!((g.crg.nu, g.crg.nv()), (wnu, whole.crg.nv()));
    assert!((g.crg.u_first() - (wu - 28.0)).abs() < 1e-9, "u {} vs {}", g.crg.u_first(), wu);
    assert!((g.s_range.0 - (whole.s_range.0 - 28.0)).abs() < 1e-9, "{:?}", g.s_range);
    let mut most = 0f64;
    for iu in 0..wnu {
        for iv in 0..g.crg.nv() {
            let (a, b) = (g.crg.z_at(iu, iv), whole.crg.z_at(iu, iv));
            assert_eq!(a.is_nan(), b.is_nan(), "node {iu}, {iv}");
            if a.is_finite() {
                most = most.max((a - b).abs() as f64);
            }
        }
    }
    assert!(most < 1e-6, "heights differ by {most} m");

    // A part narrower than the grid: clipped to it, u from 0.
    let narrow = opendrive::road_part(road, 32.0, 38.0).unwrap();
    let g = gridded(&scene, &pts, &narrow, 32.0).unwrap();
    let (u0, u1) = (g.crg.u_first(), g.crg.u_last());
    assert!(u0.abs() < 1e-9 && (u1 - 6.0).abs() < 1e-9, "u {u0}..{u1}");
    let k = ((32.0 - wu) / 0.01).round() as usize;
    // The same heights, to the few candidates that fall into the neighbouring node from a
    // grid whose nodes start elsewhere (s 32 against 28.99 + 301 cells, both rounded).
    let (mut sq, mut n) = (0.0, 0usize);
    for iu in 0..g.crg.nu {
        for iv in 0..g.crg.nv() {
            let (a, b) = (g.crg.z_at(iu, iv) as f64, whole.crg.z_at(k + iu, iv) as f64);
            if a.is_finite() && b.is_finite() {
                sq += (a - b).powi(2);
                n += 1;
            }
        }
    }
    let rms = (sq / n.max(1) as f64).sqrt();
    assert!(n >= g.crg.nu * g.crg.nv() * 9 / 10 && rms < 3e-4, "{n} nodes, RMS {rms}");

    // A shift that does not put the part on the road's reference line, or past its end.
    let e = gridded(&scene, &pts, &narrow, 31.0).unwrap_err();
    assert!(matches!(&e, pipeline::Error::OtherReferenceLine { its_s, .. } if *its_s == 31.0), "{e:?}");
    assert!(e.to_string().contains("does not share the reference line"), "{e}");
    let e = gridded(&scene, &pts, &narrow, road.length - 1.0).unwrap_err();
    assert!(matches!(&e, pipeline::Error::NotWithin { shift, .. } if *shift == road.length - 1.0), "{e:?}");
    assert!(e.to_string().contains("does not lie within"), "{e}");
}

#[test]
fn clipping_a_grid_to_a_part_twice_changes_nothing() {
    use pipeline::surface::clip_grid;
    for (range, cut) in [((29.99, 40.01), (32.0, 38.0)), ((29.99, 40.01), (27.99, 38.123)), ((1.0, 2.0), (0.0, 5.0))] {
        let once = clip_grid(range, cut, 0.01).unwrap();
        assert!(once.0 >= cut.0 - 1e-9 && once.1 <= cut.1 + 1e-9 && once.0 >= range.0 && once.1 <= range.1);
        assert_eq!(clip_grid(once, cut, 0.01).unwrap(), once, "{range:?} {cut:?}");
    }
    assert!(clip_grid((1.0, 2.0), (5.0, 6.0), 0.01).is_err());
}

#[test]
fn a_roadside_cut_to_a_part_is_in_the_parts_s() {
    let (scene, pts) = survey(1, 30.0, 40.0);
    let road = &scene.odr.roads[0];
    let opts = RoadsideOptions {
        buffer: 10.0,
        s_range: None,
        voxel_size: Some(1.0),
        origin: None,
        ribbons: Some(pipeline::RibbonOptions { cell: 0.1, ..Default::default() }),
        sections: None,
        part: None,
        points_box: None,
        clip_to_points: false,
    };
    let mut b = RoadsideBuilder::new(road, scene.odr.header.offset, &opts).unwrap();
    let n = pts.len();
    let (x, y, z): (Vec<f64>, Vec<f64>, Vec<f64>) =
        (pts.iter().map(|p| p[0]).collect(), pts.iter().map(|p| p[1]).collect(), pts.iter().map(|p| p[2]).collect());
    let (intensity, class) = (vec![100u16; n], vec![11u8; n]);
    let cols = pipeline::PointColumns { x: &x, y: &y, z: &z, intensity: &intensity, class: &class, rgb: None };
    b.add(cols).unwrap();
    let mut side = b.finish().unwrap();
    let [left, _] = side.ribbons.as_ref().unwrap();
    let filled = left.filled() * left.ns as f64;
    // A point on the reference line at s 35 and one at s 20 (outside the part).
    let eval = opendrive::RoadEval::new(road);
    let place = scene.odr.header.offset.unwrap_or_default().placement();
    let at = |s: f64| {
        let p = eval.pose(s);
        place.to_map([p.x, p.y, 0.0])
    };
    let before = side.stations([at(35.0), at(20.0)]);
    assert!((before[0].unwrap().0 - 35.0).abs() < 1e-6);

    side.cut_to((28.0, 42.0)).unwrap();
    assert_eq!(side.s_range, (0.0, 14.0));
    let [left, right] = side.ribbons.as_ref().unwrap();
    assert!(left.s0.abs() < 1e-9 && left.ns == 140 && right.ns == 140, "{} {}", left.s0, left.ns);
    // Every filled pixel (the points lie within s 29..41) is kept.
    assert!((left.filled() * left.ns as f64 - filled).abs() < 1e-6, "{} of {filled}", left.filled() * left.ns as f64);
    let after = side.stations([at(35.0), at(20.0)]);
    assert!((after[0].unwrap().0 - 7.0).abs() < 1e-6 && after[1].is_none(), "{after:?}");
    assert!(side.cut_to((1.0, 2.0)).is_err(), "cut once only");
}

/// `road` with one lane each side, `width` wide, in every section.
fn with_lanes(road: &opendrive::Road, width: f64) -> opendrive::Road {
    let mut r = road.clone();
    for sec in &mut r.lanes.lane_sections {
        for (side, id) in [(&mut sec.left, 1), (&mut sec.right, -1)] {
            if let Some(side) = side.as_mut() {
                side.lanes.retain(|l| l.id == id);
                for l in &mut side.lanes {
                    l.widths = vec![opendrive::Poly3 { s: 0.0, a: width, b: 0.0, c: 0.0, d: 0.0 }];
                    l.borders.clear();
                }
            }
        }
    }
    r.lanes.lane_offsets.clear();
    r
}

#[test]
fn coverage_is_of_the_nodes_between_the_outermost_lane_borders() {
    let (scene, pts) = survey(1, 30.0, 40.0);
    let road = &scene.odr.roads[0];
    // Lanes 2 m wide each side on a grid 3.2 m wide each side: the band is -1.9..1.9 (0.1 m
    // inside the borders), 381 of the grid's 641 columns.
    let narrow = with_lanes(road, 2.0);
    let g = gridded(&scene, &pts, &narrow, 0.0).unwrap();
    let vs = g.crg.v_positions();
    let (mut covered, mut nodes) = (0usize, 0usize);
    for iu in 0..g.crg.nu {
        for (iv, v) in vs.iter().enumerate() {
            if v.abs() <= 1.9 + 1e-6 {
                nodes += 1;
                covered += usize::from(g.crg.z_at(iu, iv).is_finite());
            }
        }
    }
    assert_eq!(nodes, 381 * g.crg.nu);
    // Columns on the band's edges may fall either way by a rounding of v.
    let pipeline::surface::Covered { with_height: c, nodes: n } = g.lane_covered;
    assert!(
        n.abs_diff(nodes) <= 2 * g.crg.nu && c.abs_diff(covered) <= 2 * g.crg.nu,
        "{:?} vs {covered}, {nodes}",
        g.lane_covered
    );
    assert!((g.coverage - c as f64 / n as f64).abs() < 1e-12, "{}", g.coverage);
    assert!(g.coverage > 0.95, "{}", g.coverage);

    // Without lanes the coverage is that of the columns the survey reached.
    let mut bare = road.clone();
    for sec in &mut bare.lanes.lane_sections {
        (sec.left, sec.right) = (None, None);
    }
    let g = gridded(&scene, &pts, &bare, 0.0).unwrap();
    assert_eq!(g.lane_covered, pipeline::surface::Covered::default());
    assert!((g.coverage - g.covered.with_height as f64 / g.covered.nodes as f64).abs() < 1e-12);
}
