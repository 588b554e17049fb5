//! The surface table (elevation and planar cross slope as cubic pieces) against the profiles
//! on every road of every sample map: 1e-9 relative on the elevation, 1e-11 on the cross slope.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

use opendrive::{RoadEval, SurfaceTable};

#[test]
fn the_surface_table_is_the_profiles_on_every_sample_road() {
    let Some(data) = roadscan_tests::shared_data() else { return };
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
            let eval = RoadEval::new(road);
            let table = SurfaceTable::new(&eval).unwrap_or_else(|| panic!("{}: road {}", map.display(), road.id));
            let n = (road.length / 0.0137).ceil() as usize;
            for k in 0..=n {
                let s = (k as f64 * 0.0137).min(road.length);
                let (z, c) = table.at(s);
                let (want_z, want_c) = (eval.elevation(s), eval.planar_cross_slope(s));
                let what = format!("{} road {} s {s}", map.display(), road.id);
                assert!((z - want_z).abs() <= 1e-9 * want_z.abs().max(1.0), "{what}: elevation {z} vs {want_z}");
                assert!((c - want_c).abs() <= 1e-11, "{what}: cross slope {c} vs {want_c}");
                rolled += usize::from(want_c != 0.0);
            }
            points += n + 1;
        }
    }
    // Superelevated roads among them (the cross slope is not just zero).
    assert!(points > 100_000 && rolled > 10_000, "{points} points, {rolled} with a cross slope");
}
