//! Roadside products from a virtual survey of the demo road: voxel occupancy against a
//! brute-force count, the facades in the ribbons at their designed offsets, the sky empty.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use pipeline::{PointColumns, RibbonOptions, Roadside, RoadsideBuilder, RoadsideOptions};
use sim::scanner::Pass;
use sim::survey::Survey;
use sim::Scene;
use std::collections::BTreeMap;

/// Two passes over s 20..60 of the demo road, 2000 points per revolution (facade points
/// about 6 cm apart up to 12 m), in the LAS
/// file's millimetres.
fn survey() -> (Scene, Vec<scan::LasPoint>) {
    let scene = Scene::demo(4);
    let mut sv = Survey::demo(4);
    sv.scanner.points_per_rev = 2000;
    sv.passes = vec![
        Pass { t: -1.625, speed: 10.0, s_start: 20.0, s_end: 60.0, id: 1 },
        Pass { t: 1.625, speed: 10.0, s_start: 60.0, s_end: 20.0, id: 2 },
    ];
    let (mut pts, _, _) = sim::survey::measure(&scene, &sv);
    let mm = |v: f64| (v * 1000.0).round() / 1000.0;
    for p in &mut pts {
        (p.x, p.y, p.z) = (mm(p.x), mm(p.y), mm(p.z));
    }
    (scene, pts)
}

fn build(scene: &Scene, pts: &[scan::LasPoint], opts: &RoadsideOptions) -> Roadside {
    let mut b = RoadsideBuilder::new(&scene.odr.roads[0], scene.odr.header.offset, opts).unwrap();
    // In chunks, as the CLI streams them.
    for chunk in pts.chunks(50_000) {
        let x: Vec<f64> = chunk.iter().map(|p| p.x).collect();
        let y: Vec<f64> = chunk.iter().map(|p| p.y).collect();
        let z: Vec<f64> = chunk.iter().map(|p| p.z).collect();
        let i: Vec<u16> = chunk.iter().map(|p| p.intensity).collect();
        let c: Vec<u8> = chunk.iter().map(|p| p.class).collect();
        b.add(PointColumns { x: &x, y: &y, z: &z, intensity: &i, class: &c, rgb: None }).unwrap();
    }
    b.finish().unwrap()
}

#[test]
fn voxel_occupancy_equals_a_brute_force_count() {
    let (scene, pts) = survey();
    for size in [1.0, 0.25] {
        // A buffer wider than the scene: every point is kept, so the brute force needs no
        // road frame.
        let opts = RoadsideOptions { buffer: 100.0, voxel_size: Some(size), ..Default::default() };
        let side = build(&scene, &pts, &opts);
        let grid = side.grid.as_ref().unwrap();
        assert_eq!(side.points, pipeline::RoadsidePoints { offered: pts.len() as u64, kept: pts.len() as u64 });
        let o = grid.lattice().origin();
        let mut brute: BTreeMap<[i32; 3], (u32, u64, BTreeMap<u8, u32>)> = BTreeMap::new();
        for p in &pts {
            let k = [
                ((p.x - o[0]) / size).floor() as i32,
                ((p.y - o[1]) / size).floor() as i32,
                ((p.z - o[2]) / size).floor() as i32,
            ];
            let e = brute.entry(k).or_default();
            e.0 += 1;
            e.1 += p.intensity as u64;
            *e.2.entry(p.class).or_default() += 1;
        }
        let got = grid.sorted();
        assert_eq!(got.len(), brute.len(), "{size} m: occupied voxels");
        for ((k, v), (bk, (n, isum, classes))) in got.iter().zip(&brute) {
            assert_eq!(k, bk);
            assert_eq!(v.count, *n, "count of {k:?}");
            assert_eq!(v.intensity_sum, *isum);
            let major = classes.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0))).unwrap().0;
            assert_eq!(v.class(), *major, "class of {k:?}");
        }
        // Stations of the centres: on the road near the surveyed part.
        let stations = side.stations(got.iter().map(|(k, _)| grid.lattice().centre(*k)));
        let on_road = stations.iter().flatten().filter(|(s, t)| (15.0..65.0).contains(s) && t.abs() < 12.0).count();
        assert!(on_road as f64 > 0.9 * stations.len() as f64, "{on_road} of {}", stations.len());
        eprintln!("{size} m: {} voxels from {} points", got.len(), pts.len());
    }
}

#[test]
fn facades_appear_at_their_offsets_and_the_sky_is_empty() {
    let (scene, pts) = survey();
    let cell = 0.1;
    let opts = RoadsideOptions {
        voxel_size: None,
        ribbons: Some(RibbonOptions { cell, h_range: (-2.0, 20.0), min_depth: 0.0 }),
        ..Default::default()
    };
    let side = build(&scene, &pts, &opts);
    let [left, right] = side.ribbons.as_ref().unwrap();
    // The designed facades: planes at t = +8.5 and -9.5, 12 m high. Between 9 and 11.5 m
    // (above the trees and poles) every pixel of the surveyed part sees the facade, within
    // one cell.
    for (rib, want) in [(left, scene.facades.left), (right, -scene.facades.right)] {
        let (mut n, mut worst) = (0, 0.0f64);
        for col in 0..rib.ns {
            let s = rib.s0 + (col as f64 + 0.5) * cell;
            if !(22.0..58.0).contains(&s) {
                continue;
            }
            for row in 0..rib.nh {
                let h = rib.h_top() - (row as f64 + 0.5) * cell;
                if (9.0..11.5).contains(&h) {
                    let d = rib.depth(col, row).unwrap_or_else(|| panic!("{:?}: empty at s {s}, h {h}", rib.side));
                    worst = worst.max((d as f64 - want).abs());
                    n += 1;
                }
                // Sky: nothing above the facades' tops.
                if h > 13.0 {
                    assert!(rib.depth(col, row).is_none(), "{:?}: a point in the sky at s {s}, h {h}", rib.side);
                }
            }
        }
        eprintln!("{:?}: facade at {want} m, {n} pixels, worst {worst:.4} m", rib.side);
        assert!(n > 5000);
        assert!(worst <= cell, "{:?}: facade off by {worst} m", rib.side);
    }
}

#[test]
fn the_corridor_shortcut_keeps_exactly_the_points_inside() {
    // Voxels alone skip the projection of points near an anchor well inside the corridor;
    // with ribbons every point is projected. A buffer and an s range that cut through the
    // survey must keep the same points either way.
    let (scene, pts) = survey();
    let voxels =
        RoadsideOptions { buffer: 6.0, s_range: Some((30.0, 50.0)), voxel_size: Some(0.5), ..Default::default() };
    let both = RoadsideOptions { ribbons: Some(RibbonOptions::default()), ..voxels.clone() };
    let (a, b) = (build(&scene, &pts, &voxels), build(&scene, &pts, &both));
    assert_eq!(a.points, b.points);
    assert!(a.points.kept < a.points.offered * 9 / 10, "the corridor must cut: {:?}", a.points);
    let (ga, gb) = (a.grid.unwrap(), b.grid.unwrap());
    assert!(ga.sorted() == gb.sorted(), "different voxels");
}

/// Errors a caller can match: the point (by its index in the chunk) a voxel grid cannot place,
/// a bad option with its value, and a part that does not read with the byte where it stopped;
/// the messages are the ones users read.
#[test]
fn errors_carry_the_point_the_option_and_the_byte() {
    let (scene, pts) = survey();
    let road = &scene.odr.roads[0];
    let offset = scene.odr.header.offset;
    // 1 mm voxels reach 32 m up from the origin: a point 100 m up, kept by the corridor, is
    // too far for the grid.
    let opts = RoadsideOptions { voxel_size: Some(0.001), ..Default::default() };
    let mut b = RoadsideBuilder::new(road, offset, &opts).unwrap();
    // A point of the median height (the road surface, most of the points), three times.
    let mut by_z: Vec<_> = pts.iter().collect();
    by_z.sort_by(|a, b| a.z.total_cmp(&b.z));
    let p = by_z[by_z.len() / 2];
    let (x, y, z) = ([p.x; 3], [p.y; 3], [p.z, p.z, p.z + 100.0]);
    let e = b.add(PointColumns { x: &x, y: &y, z: &z, intensity: &[0; 3], class: &[0; 3], rgb: None }).unwrap_err();
    assert!(matches!(e, pipeline::Error::Point { index: 2, .. }), "{e:?}");
    assert!(e.to_string().starts_with("point 2 of the chunk: point ("), "{e}");

    let bad = RoadsideOptions { buffer: -1.0, ..Default::default() };
    let e = RoadsideBuilder::new(road, offset, &bad).unwrap_err();
    assert!(matches!(e, pipeline::Error::BadOption { name: "buffer", value, .. } if value == -1.0), "{e:?}");
    assert_eq!(e.to_string(), "buffer -1: must be a positive number of metres");

    let opts = RoadsideOptions { s_range: Some((30.0, 40.0)), voxel_size: Some(1.0), ..Default::default() };
    let part = build(&scene, &pts[..20_000], &opts).to_part();
    let mut whole = build(&scene, &pts[..0], &opts);
    let e = whole.merge_part(b"not a part").unwrap_err();
    assert!(matches!(e, pipeline::Error::NotAPart), "{e:?}");
    // Cut inside the voxels: the error names the part's byte and the voxels' offset.
    let e = whole.merge_part(&part[..part.len() - 3]).unwrap_err();
    let pipeline::Error::Part { what: "voxels", at, error: voxel::PartError::Truncated { offset, .. } } = &e else {
        panic!("{e:?}")
    };
    let (at, offset) = (*at, *offset);
    assert_eq!(at, offset + 24, "the body follows the 24-byte magic");
    assert!(e.to_string().starts_with(&format!("byte {at}: truncated at byte {offset} (")), "{e}");
    // A byte too many: left over after the last grid.
    let mut long = part.clone();
    long.push(0);
    let e = whole.merge_part(&long).unwrap_err();
    assert!(matches!(e, pipeline::Error::PartBody(voxel::PartError::LeftOver { left: 1, .. })), "{e:?}");
    whole.merge_part(&part).unwrap();
}
