//! Road-surface CRGs against an axis whose elevation is missing or wrong: the surface builder
//! finds the road surface in the points (`SurfaceOptions::search_height`) and grids the same
//! heights as against the true axis; a grid that comes out nearly empty is an error.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

mod common;
use common::survey;

use opendrive::Road;
use pipeline::{grid_surface, SurfaceGrid, SurfaceOptions, ZMode};
use sim::Scene;

/// The demo road without its elevation profile (a 2-D axis: elevation 0 in the file frame, the
/// points 0.6 to 2.5 m above it on the demo's grade).
fn flat(scene: &Scene) -> Road {
    let mut r = scene.odr.roads[0].clone();
    r.elevation_profile.elevations.clear();
    r
}

/// The demo road with its elevation `dz` metres off.
fn shifted(scene: &Scene, dz: f64) -> Road {
    let mut r = scene.odr.roads[0].clone();
    for e in &mut r.elevation_profile.elevations {
        e.a += dz;
    }
    r
}

fn grid(scene: &Scene, road: &Road, pts: &[[f64; 3]], opts: SurfaceOptions) -> Result<SurfaceGrid, pipeline::Error> {
    grid_surface(road, scene.odr.header.offset, pts, opts)
}

/// RMS of (grid - truth) over the covered nodes, m, and their count.
fn versus_truth(scene: &Scene, g: &SurfaceGrid) -> (f64, usize) {
    let road = scene.road();
    let crg = &g.crg;
    let (u0, du, nv) = (crg.u_first(), crg.du(), crg.nv());
    let v0 = crg.road.v_right.unwrap();
    let (mut sq, mut n) = (0.0, 0usize);
    for iu in 0..crg.nu {
        let st = scene.station(&road, u0 + iu as f64 * du);
        for iv in 0..nv {
            let z = crg.road.start_z.unwrap_or(0.0) + crg.z_at(iu, iv) as f64;
            let Some(want) = scene.z_at(&st, v0 + iv as f64 * du) else { continue };
            if z.is_nan() {
                continue;
            }
            sq += (z - want) * (z - want);
            n += 1;
        }
    }
    ((sq / n as f64).sqrt(), n)
}

fn bits(g: &SurfaceGrid) -> Vec<u32> {
    g.crg.z.iter().map(|z| z.to_bits()).collect()
}

#[test]
fn an_axis_without_or_with_a_wrong_elevation_grids_the_true_heights() {
    let (scene, pts) = survey(1, 30.0, 40.0);
    let opts = SurfaceOptions { v_range: Some((-3.2, 3.2)), ..Default::default() };
    let truth = grid(&scene, &scene.odr.roads[0], &pts, opts.clone()).unwrap();
    let (rms_true, n_true) = versus_truth(&scene, &truth);
    eprintln!(
        "true axis: RMS {:.3} mm over {n_true} nodes, coverage {:.4}, s {:?}",
        rms_true * 1e3,
        truth.coverage,
        truth.s_range
    );
    for (what, road) in [("no elevation", flat(&scene)), ("elevation +3 m", shifted(&scene, 3.0))] {
        // Without the search, the points lie beyond max_height: nothing (or next to nothing).
        let none = grid(&scene, &road, &pts, SurfaceOptions { search_height: 0.0, ..opts.clone() });
        assert!(none.is_err(), "{what}: gridded without a search: {:?}", none.map(|g| g.covered));
        let g = grid(&scene, &road, &pts, opts.clone()).unwrap();
        let (rms, n) = versus_truth(&scene, &g);
        eprintln!(
            "{what}: RMS {:.3} mm over {n} nodes ({:.2} % of the true axis' {n_true}), coverage {:.4}, s {:?}, datum {:?}",
            rms * 1e3,
            100.0 * n as f64 / n_true as f64,
            g.coverage,
            g.s_range,
            g.crg.road.start_z
        );
        assert!(rms <= 1.0e-3, "{what}: RMS {rms}");
        assert!(n as f64 >= 0.95 * n_true as f64, "{what}: {n} nodes of {n_true}");
        assert!(g.coverage >= 0.95 * truth.coverage, "{what}: coverage {} vs {}", g.coverage, truth.coverage);
        // The same grid: the extent found from the same points, the datum the road surface's.
        assert_eq!((g.crg.nu, g.crg.nv()), (truth.crg.nu, truth.crg.nv()), "{what}");
        assert_eq!(g.crg.road.start_z, truth.crg.road.start_z, "{what}");
    }
}

#[test]
fn a_right_axis_grids_the_same_bits_with_and_without_the_search() {
    // The search keeps the points beyond max_height aside (cars, trees, facades within the
    // grid's width); where the axis' surface is the road's, the grid is the one without it:
    // same extent, same bits, same counts. s 120..132 holds a parked car and setts.
    let (scene, pts) = survey(2, 120.0, 132.0);
    let road = &scene.odr.roads[0];
    for z in [ZMode::Absolute, ZMode::Residual] {
        let opts = SurfaceOptions { z, ..Default::default() };
        let with = grid(&scene, road, &pts, opts.clone()).unwrap();
        let without = grid(&scene, road, &pts, SurfaceOptions { search_height: 0.0, ..opts }).unwrap();
        assert_eq!((with.s_range, with.crg.nu, with.crg.nv()), (without.s_range, without.crg.nu, without.crg.nv()));
        assert!(bits(&with) == bits(&without), "{z:?}: the grids differ");
        assert_eq!(with.points, without.points);
        assert_eq!(with.crg.road.start_z, without.crg.road.start_z);
    }
}

#[test]
fn coverage_counts_the_surveyed_pavement_and_a_nearly_empty_grid_is_an_error() {
    let (scene, pts) = survey(3, 60.0, 64.0);
    let road = &scene.odr.roads[0];
    // A grid 20 m either side: the survey reaches about 8 m of it; coverage measures those
    // columns, not the grid.
    let wide = SurfaceOptions { v_range: Some((-20.0, 20.0)), ..Default::default() };
    let g = grid(&scene, road, &pts, wide.clone()).unwrap();
    let all = g.crg.z.iter().filter(|z| !z.is_nan()).count();
    let share = all as f64 / g.crg.z.len() as f64;
    eprintln!("grid 40 m wide: {:.1} % of its nodes, {:.1} % of the surveyed ones", 100.0 * share, 100.0 * g.coverage);
    assert!(share < 0.5, "{share}");
    assert!(g.coverage >= 0.9, "coverage {}", g.coverage);
    assert_eq!(g.coverage, g.covered.with_height as f64 / g.covered.nodes as f64);
    // The surveyed pavement: the columns from the first to the last where at least a tenth of
    // the nodes have a height.
    let rows = g.crg.nu;
    let a = g.column_coverage.iter().position(|&c| c >= 0.1).unwrap();
    let b = g.column_coverage.iter().rposition(|&c| c >= 0.1).unwrap();
    assert_eq!(g.covered.nodes, (b - a + 1) * rows);
    eprintln!("surveyed columns: v {:.2}..{:.2}", -20.0 + a as f64 * 0.01, -20.0 + b as f64 * 0.01);
    // A grid of the points 1 m below the axis' surface, without the search: only a few points
    // (poles, a tree) lie within max_height; an error that says what to check, not a grid.
    let low = shifted(&scene, 1.0);
    let e = match grid(&scene, &low, &pts, SurfaceOptions { search_height: 0.0, ..wide.clone() }) {
        Ok(g) => panic!("a grid of coverage {} ({:?})", g.coverage, g.covered),
        Err(e) => e,
    };
    eprintln!("{e}");
    // A caller can tell a nearly empty grid from other errors, and read its coverage.
    assert!(matches!(&e, pipeline::Error::LowCoverage(lc) if lc.coverage < lc.min), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("nearly empty") && e.contains("elevation"), "{e}");
    // With the search, the road surface is found 1 m below the axis'.
    let found = grid(&scene, &low, &pts, wide.clone()).unwrap();
    assert!(found.coverage >= 0.95 * g.coverage, "{} vs {}", found.coverage, g.coverage);
    // The check can be switched off.
    let off = SurfaceOptions { search_height: 0.0, min_coverage: 0.0, ..wide };
    let g = grid(&scene, &low, &pts, off).unwrap();
    assert!(g.coverage < 0.1, "{}", g.coverage);
}
