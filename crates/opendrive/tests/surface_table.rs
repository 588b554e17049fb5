//! The surface table (elevation and planar cross slope as cubic pieces) against the profiles,
//! every 1.37 cm: 1e-9 relative on the elevation, 1e-11 on the cross slope; on made-up roads
//! and on every road of every sample map. Looked up from the last station's piece, the same
//! bits as searched.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::{Poly3, Road, RoadEval, SurfaceTable};

/// Checks the table of `road` against its profiles: the points checked and those with a cross
/// slope; `None` without a table.
fn check(road: &Road, what: &str) -> Option<(usize, usize)> {
    let eval = RoadEval::new(road);
    let table = SurfaceTable::new(&eval)?;
    let n = (road.length / 0.0137).ceil() as usize;
    let mut rolled = 0;
    for k in 0..=n {
        let s = (k as f64 * 0.0137).min(road.length);
        let (z, c) = table.at(s);
        let (want_z, want_c) = (eval.elevation(s), eval.planar_cross_slope(s));
        assert!((z - want_z).abs() <= 1e-9 * want_z.abs().max(1.0), "{what} s {s}: elevation {z} vs {want_z}");
        assert!((c - want_c).abs() <= 1e-11, "{what} s {s}: cross slope {c} vs {want_c}");
        rolled += usize::from(want_c != 0.0);
    }
    // From the last station's piece, in order, out of order and off the road: the same bits.
    let mut piece = 0;
    let order = (0..=n).chain((0..=n).rev()).chain((0..=n).map(|k| k * 7919 % (n + 1)));
    let off = [-1.0, f64::NAN, road.length + 5.0, 0.0, f64::INFINITY];
    for s in order.map(|k| (k as f64 * 0.0137).min(road.length)).chain(off) {
        let (want, got) = (table.at(s), table.at_from(&mut piece, s));
        assert!(got.0.to_bits() == want.0.to_bits() && got.1.to_bits() == want.1.to_bits(), "{what} s {s}");
    }
    Some((n + 1, rolled))
}

#[test]
fn the_surface_table_is_the_profiles() {
    let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/opendrive/demo.xodr");
    let demo = opendrive::read_file(&demo).unwrap();
    let points: usize = demo.roads.iter().map(|r| check(r, "demo").unwrap().0).sum();
    assert!(points > 1000);
    // No profiles; records starting inside pieces, a steep grade (its square root, not the
    // series); records out of order, or a broken file's length: no table.
    let mut road = Road { length: 30.0, ..Default::default() };
    assert_eq!(SurfaceTable::new(&RoadEval::new(&road)).map(|t| t.at(7.3)), Some((0.0, 0.0)));
    road.elevation_profile.elevations =
        vec![Poly3 { s: 0.0, a: 3.0, b: 0.02, c: 0.0, d: 1e-4 }, Poly3 { s: 12.3, a: 3.5, b: 0.15, c: -1e-3, d: 0.0 }];
    road.lateral_profile.superelevations =
        vec![Poly3 { s: 0.0, a: 0.0, b: 0.0, c: 3e-4, d: -1e-5 }, Poly3 { s: 20.07, a: 0.06, b: 0.0, c: 0.0, d: 0.0 }];
    assert!(check(&road, "records inside pieces").unwrap().0 > 2000);
    road.lateral_profile.superelevations.swap(0, 1);
    assert!(SurfaceTable::new(&RoadEval::new(&road)).is_none());
    let far = Road { length: 2e6, ..Default::default() };
    assert!(SurfaceTable::new(&RoadEval::new(&far)).is_none());
}

#[roadscan_tests::needs_shared_data]
#[test]
fn the_surface_table_is_the_profiles_on_every_sample_road() {
    let data = roadscan_tests::shared_data();
    let mut maps = Vec::new();
    for dir in ["opendrive/esmini", "opendrive/libOpenDRIVE", "opendrive/libopendrive-rs"] {
        for e in std::fs::read_dir(data.join(dir)).unwrap().flatten() {
            if e.path().extension().is_some_and(|x| x == "xodr") {
                maps.push(e.path());
            }
        }
    }
    maps.sort();
    assert!(maps.len() >= 15, "{} maps", maps.len());
    let (mut points, mut rolled) = (0usize, 0usize);
    for map in &maps {
        let odr = opendrive::read_file(map).unwrap_or_else(|e| panic!("{e}"));
        for road in &odr.roads {
            let what = format!("{} road {}", map.display(), road.id);
            let (n, r) = check(road, &what).unwrap_or_else(|| panic!("{what}: no table"));
            (points, rolled) = (points + n, rolled + r);
        }
    }
    // Superelevated roads among them (the cross slope is not just zero).
    assert!(points > 100_000 && rolled > 10_000, "{points} points, {rolled} with a cross slope");
}
