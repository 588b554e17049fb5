//! Road-surface CRGs from virtual surveys against the designed surface (the truth): height RMS,
//! pothole depth, manhole outline, coverage; the per-cell median baseline side by side.

#![allow(clippy::panic, clippy::unwrap_used)] // tests fail loudly

mod common;
use common::{grid, height, survey, versus_truth};

use pipeline::{grid_surface, Estimator, SurfaceBuilder, SurfaceGrid, SurfaceOptions, SurfaceScope, SurfaceStorage};
use sim::Scene;

/// A builder of the demo road's surface offered `pts` in chunks of 10,000, as a reader hands
/// them.
fn offered<'a>(scene: &'a Scene, pts: &[[f64; 3]], opts: SurfaceOptions) -> SurfaceBuilder<'a> {
    offered_with(scene, pts, opts, &SurfaceStorage::default(), SurfaceScope::default()).unwrap()
}

/// A builder of `pts` kept as `storage` says, over `scope`.
fn offered_with<'a>(
    scene: &'a Scene,
    pts: &[[f64; 3]],
    opts: SurfaceOptions,
    storage: &SurfaceStorage,
    scope: SurfaceScope,
) -> Result<SurfaceBuilder<'a>, pipeline::Error> {
    let mut b = SurfaceBuilder::with(&scene.odr.roads[0], scene.odr.header.offset, opts, storage, scope)?;
    for c in pts.chunks(10_000) {
        let (x, y, z): (Vec<f64>, Vec<f64>, Vec<f64>) =
            (c.iter().map(|p| p[0]).collect(), c.iter().map(|p| p[1]).collect(), c.iter().map(|p| p[2]).collect());
        b.add(&x, &y, &z)?;
    }
    Ok(b)
}

#[test]
fn asphalt_and_markings_within_1_mm_rms_with_95_percent_coverage() {
    for seed in [1, 2] {
        let (scene, pts) = survey(seed, 30.0, 40.0);
        let robust = grid(&scene, &pts, (30.0, 40.0), (-3.2, 3.2), Estimator::Robust);
        let median = grid(&scene, &pts, (30.0, 40.0), (-3.2, 3.2), Estimator::Median);
        let (rms, mean, n) = versus_truth(&scene, &robust);
        let (rms_m, _, n_m) = versus_truth(&scene, &median);
        eprintln!(
            "seed {seed}: robust RMS {:.3} mm mean {:.3} mm over {n} nodes, coverage {:.3}; median RMS {:.3} mm, coverage {:.3}",
            rms * 1e3,
            mean * 1e3,
            robust.coverage,
            rms_m * 1e3,
            median.coverage
        );
        let _ = n_m;
        assert!(rms <= 1.0e-3, "RMS {rms}");
        assert!(robust.coverage >= 0.95, "coverage {}", robust.coverage);
        assert!(rms < rms_m, "the estimator must beat the per-cell median");
    }
}

/// Grid height at (s, t) by the nearest node.
fn at(g: &SurfaceGrid, s: f64, t: f64) -> f64 {
    let c = &g.crg;
    let iu = ((s - c.u_first()) / c.du()).round() as usize;
    let iv = ((t - c.road.v_right.unwrap()) / c.du()).round() as usize;
    height(c, iu, iv)
}

#[test]
fn pothole_depth_within_2_mm_and_manhole_outline_within_1_cm() {
    for seed in [1, 3] {
        let (scene, pts) = survey(seed, 53.0, 77.0);
        let road = scene.road();
        // Pothole at s 75, t 1.6: depth = mean height of a ring of road around it minus the mean
        // of its flat bottom, in the grid and in the truth.
        let p = scene.surface.potholes[0];
        let g = grid(&scene, &pts, (73.5, 76.5), (0.0, 3.0), Estimator::Robust);
        let gm = grid(&scene, &pts, (73.5, 76.5), (0.0, 3.0), Estimator::Median);
        let depth = |f: &dyn Fn(f64, f64) -> f64| {
            let (mut ring, mut nr, mut bottom, mut nb) = (0.0, 0, 0.0, 0);
            for i in 0..200 {
                for j in 0..200 {
                    let (a, b) = (-1.6 + 3.2 * i as f64 / 199.0, -1.6 + 3.2 * j as f64 / 199.0);
                    let r = a.hypot(b);
                    let (s, t) = (p.s + a * p.radius_s, p.t + b * p.radius_t);
                    if r < 0.6 {
                        bottom += f(s, t);
                        nb += 1;
                    } else if (1.2..1.5).contains(&r) {
                        ring += f(s, t);
                        nr += 1;
                    }
                }
            }
            ring / nr as f64 - bottom / nb as f64
        };
        let want = depth(&|s, t| scene.z(&road, s, t).unwrap());
        let got = depth(&|s, t| at(&g, s, t));
        let got_m = depth(&|s, t| at(&gm, s, t));
        eprintln!(
            "seed {seed}: pothole depth truth {:.2} mm, robust {:.2} mm, median {:.2} mm",
            want * 1e3,
            got * 1e3,
            got_m * 1e3
        );
        assert!((got - want).abs() <= 0.002, "depth {got} vs {want}");
        // Not asserted: that the estimator's depth beats the per-cell median's. Both are within
        // 0.12 mm of the truth here and neither wins on every seed (errors robust/median, mm:
        // seed 1 0.100/0.113, 2 0.023/0.037, 3 0.066/0.016, 4 0.017/0.018, 5 0.076/0.096,
        // 6 0.002/0.000).

        // Manhole at s 55, t -1.6, r 0.3, raised 8 mm: along 72 rays from its centre, the
        // first radius where the height falls below half the offset above the OpenDRIVE
        // surface, in the grid and in the truth.
        let m = scene.surface.manholes[0];
        let g = grid(&scene, &pts, (54.0, 56.0), (-3.0, -0.2), Estimator::Robust);
        let edge = |f: &dyn Fn(f64, f64) -> f64, a: f64| {
            (0..=700)
                .map(|i| 0.1 + i as f64 * 0.0005)
                .find(|r| {
                    let (s, t) = (m.s + r * a.cos(), m.t + r * a.sin());
                    f(s, t) - scene.base_z(&road, s, t) < m.offset / 2.0
                })
                .unwrap_or(f64::NAN)
        };
        // The outline: a circle fitted to the 72 edge points (algebraic fit), its centre and
        // radius against the cover's; and every ray's edge against the truth's.
        let (mut sx, mut sy, mut sxx, mut syy, mut sxy, mut sz, mut sxz, mut syz, mut n) =
            (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        let mut errs = Vec::new();
        for k in 0..72 {
            let a = k as f64 * std::f64::consts::TAU / 72.0;
            let want = edge(&|s, t| scene.z(&road, s, t).unwrap(), a);
            let got = edge(&|s, t| at(&g, s, t), a);
            errs.push((got - want).abs());
            let (x, y) = (got * a.cos(), got * a.sin());
            let z = x * x + y * y;
            sx += x;
            sy += y;
            sxx += x * x;
            syy += y * y;
            sxy += x * y;
            sz += z;
            sxz += x * z;
            syz += y * z;
            n += 1.0;
        }
        // Solve [sxx sxy sx; sxy syy sy; sx sy n] [A B C] = -[sxz syz sz]; centre (-A/2, -B/2).
        let mat = [[sxx, sxy, sx], [sxy, syy, sy], [sx, sy, n]];
        let r = [-sxz, -syz, -sz];
        let det = |m: &[[f64; 3]; 3]| {
            m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
        };
        let d = det(&mat);
        let mut sol = [0.0; 3];
        for k in 0..3 {
            let mut mk = mat;
            for i in 0..3 {
                mk[i][k] = r[i];
            }
            sol[k] = det(&mk) / d;
        }
        let (cx, cy) = (-sol[0] / 2.0, -sol[1] / 2.0);
        let radius = (cx * cx + cy * cy - sol[2]).sqrt();
        errs.sort_by(f64::total_cmp);
        let worst = cx.hypot(cy).max((radius - m.radius).abs());
        eprintln!("seed {seed}: manhole fitted centre off by {:.1} mm, radius {:.1} mm vs {:.0}; per ray median {:.1} mm, 95th percentile {:.1} mm, max {:.1} mm", cx.hypot(cy) * 1e3, radius * 1e3, m.radius * 1e3, errs[36] * 1e3, errs[68] * 1e3, errs[71] * 1e3);
        assert!(worst <= 0.01, "manhole outline {worst} m off");
        // Every ray: 1 cm, plus half a node's diagonal (7.1 mm) by which reading the grid at the
        // nearest node (`at`) can move an edge (the truth read that way is up to 6 mm off).
        // The outline is not within 1 cm on every ray, nor on 95 % of them: the rays along s
        // find the edge 1.0 to 1.5 cm inside the cover (seeds 1 and 3: median 4.5 mm, 95th
        // percentile 10.5 and 13.5 mm, max 15 mm); only the fitted circle is within 1 cm.
        // errs[71] is NaN, and fails, where a ray found no edge.
        let tol = 0.01 + 0.5 * std::f64::consts::SQRT_2 * g.crg.du();
        assert!(errs[71] <= tol, "a ray's edge {} m off (tolerance {tol} m)", errs[71]);
    }
}

#[test]
fn setts_and_joints_are_resolved() {
    // Setts of 12 x 14 cm with 1.5 cm joints 1.2 cm deep and 6 mm domes, at 1 cm nodes: nodes
    // within a few millimetres of a sett edge cannot be right (the edge moves with the range
    // noise), so the RMS is larger than on asphalt; the joints must still show.
    let (scene, pts) = survey(1, 104.0, 108.0);
    let road = scene.road();
    let g = grid(&scene, &pts, (104.0, 108.0), (-3.2, 3.2), Estimator::Robust);
    let gm = grid(&scene, &pts, (104.0, 108.0), (-3.2, 3.2), Estimator::Median);
    let (rms, mean, n) = versus_truth(&scene, &g);
    let (rms_m, _, _) = versus_truth(&scene, &gm);
    eprintln!(
        "setts: robust RMS {:.2} mm, mean {:.2} mm over {n} nodes; per-cell median RMS {:.2} mm",
        rms * 1e3,
        mean * 1e3,
        rms_m * 1e3
    );
    // 3.30 mm with the median of the six nearest points where a disc is not smooth (3.83 mm
    // with the robust fits over three radii it replaced).
    assert!(rms < 3.6e-3 && mean.abs() < 0.5e-3, "RMS {rms}, mean {mean}");
    // Joint centres vs sett centres: 12 mm + the dome apart in the truth.
    let (mut joint, mut nj, mut top, mut nt) = (0.0, 0, 0.0, 0);
    let c = scene.surface.cobbles.unwrap();
    for iu in 0..g.crg.nu {
        let s = g.crg.u_first() + iu as f64 * g.crg.du();
        for iv in 0..g.crg.nv() {
            let t = g.crg.road.v_right.unwrap() + iv as f64 * g.crg.du();
            let h = scene.height(&road, s, t).unwrap().0;
            let z = height(&g.crg, iu, iv) - scene.base_z(&road, s, t);
            if z.is_nan() {
                continue;
            }
            if h <= -c.joint_depth + 1e-9
                && scene.height(&road, s + 0.005, t).unwrap().0 <= -c.joint_depth + 1e-9
                && scene.height(&road, s - 0.005, t).unwrap().0 <= -c.joint_depth + 1e-9
            {
                joint += z;
                nj += 1;
            } else if h > 0.8 * c.dome {
                top += z;
                nt += 1;
            }
        }
    }
    let step = top / nt as f64 - joint / nj as f64;
    eprintln!("setts: sett centres {step:.4} m above joint centres ({nj} joint nodes)");
    assert!(step > 0.008, "joints not resolved: {step}");
}

#[test]
fn tiles_and_spilled_candidates_give_the_same_grid() {
    let (scene, pts) = survey(4, 20.0, 32.0);
    let road = &scene.odr.roads[0];
    let base = SurfaceOptions { v_range: Some((-3.2, 3.2)), ..Default::default() };
    let one = grid_surface(road, scene.odr.header.offset, &pts, base.clone()).unwrap();
    // Spilling to disk after every 5000 candidates changes nothing.
    let dir = roadscan_tests::Scratch::new("spill-test");
    let spilled = SurfaceStorage { spill_after: 5000, spill_dir: Some(dir.to_path_buf()) };
    let two = offered_with(&scene, &pts, base.clone(), &spilled, SurfaceScope::default()).unwrap().finish().unwrap();
    assert!(one.crg.z.iter().zip(&two.crg.z).all(|(a, b)| a.to_bits() == b.to_bits()), "spilled grid differs");
    // Tiles of 4 m: each tile holds the rows of the single grid, neighbours share a row.
    let b = offered(&scene, &pts, base.clone());
    let (_, paths) = b.write_tiles(4.0, |k, _| dir.join(format!("t_{k}.crg"))).unwrap();
    assert!(paths.len() >= 3);
    let nv = one.crg.nv();
    for p in &paths {
        let t = opencrg::read_file(p).unwrap();
        let first = ((t.u_first() - one.crg.u_first()) / 0.01).round() as usize;
        assert_eq!(t.nv(), nv);
        for iu in 0..t.nu {
            for iv in 0..nv {
                assert_eq!(
                    t.z_at(iu, iv).to_bits(),
                    one.crg.z_at(first + iu, iv).to_bits(),
                    "{} row {iu}",
                    p.display()
                );
            }
        }
    }
    // Nothing left in the spill directory.
    let left = || -> Vec<_> {
        let all = std::fs::read_dir(&dir).unwrap().flatten();
        all.filter(|e| e.file_name().to_string_lossy().starts_with(".roadscan")).map(|e| e.path()).collect()
    };
    assert!(left().is_empty(), "{:?}", left());
    // Nor when writing a tile fails while later slabs are still being gridded.
    let b = offered_with(&scene, &pts, base.clone(), &spilled, SurfaceScope::default()).unwrap();
    let err = b.write_tiles(4.0, |k, _| dir.join("missing").join(format!("t_{k}.crg"))).unwrap_err();
    assert!(err.to_string().contains("missing"), "{err}");
    assert!(left().is_empty(), "{:?}", left());
    // Spilling where no directory can be made fails with the path, not later with a grid
    // missing points.
    let file = dir.join("a-file");
    std::fs::write(&file, b"x").unwrap();
    let bad = SurfaceStorage { spill_after: 5000, spill_dir: Some(file.join("sub")) };
    let err = offered_with(&scene, &pts, base, &bad, SurfaceScope::default()).and_then(|b| b.finish()).unwrap_err();
    assert!(matches!(&err, pipeline::Error::Spill { path, .. } if path.starts_with(&file)), "{err:?}");
    assert!(err.to_string().contains("a-file"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn residual_heights_are_the_absolute_ones_less_the_opendrive_surface() {
    let (scene, pts) = survey(5, 60.0, 63.0);
    let road = scene.road();
    let opts = SurfaceOptions { s_range: Some((60.0, 63.0)), v_range: Some((-3.0, 3.0)), ..Default::default() };
    let abs = grid_surface(&scene.odr.roads[0], scene.odr.header.offset, &pts, opts.clone()).unwrap();
    let res = grid_surface(
        &scene.odr.roads[0],
        scene.odr.header.offset,
        &pts,
        SurfaceOptions { z: pipeline::ZMode::Residual, ..opts },
    )
    .unwrap();
    let mut n = 0;
    for iu in 0..abs.crg.nu {
        for iv in 0..abs.crg.nv() {
            let (s, t) = (60.0 + iu as f64 * 0.01, -3.0 + iv as f64 * 0.01);
            let (a, r) = (height(&abs.crg, iu, iv), height(&res.crg, iu, iv));
            if a.is_nan() {
                assert!(r.is_nan());
                continue;
            }
            // float32 storage: 1e-5 m at heights of a few metres.
            assert!((a - r - scene.base_z(&road, s, t)).abs() < 2e-5, "({s}, {t}): {a} vs {r}");
            assert!(r.abs() < 0.06, "residual {r} at ({s}, {t})");
            n += 1;
        }
    }
    assert!(n > 150_000);
    // Absolute heights lie above a datum, the road's elevation at the grid's start to the metre
    // (the OpenDRIVE file frame); residual ones above none.
    let datum = road.elevation(60.0).round();
    assert_eq!((abs.crg.road.start_z, res.crg.road.start_z), (Some(datum), None));
}

#[test]
fn the_coverage_map_counts_the_nodes_with_heights_block_by_block() {
    // The grid wider than the survey's points (16 m either side), so blocks range from empty to
    // full; 3.05 m long, so the last block row is a partial one.
    let (scene, pts) = survey(7, 60.0, 63.05);
    let g = grid(&scene, &pts, (60.0, 63.05), (-16.0, 16.0), Estimator::Robust);
    let (m, c) = (&g.coverage_map, &g.crg);
    let (nu, nv, b) = (c.nu, c.nv(), m.block);
    assert_eq!((m.width, m.height, m.share.len()), (nu.div_ceil(b), nv.div_ceil(b), nu.div_ceil(b) * nv.div_ceil(b)));
    let mut seen = [false; 3];
    for i in 0..m.width {
        for j in 0..m.height {
            let (us, vs) = (i * b..((i + 1) * b).min(nu), j * b..((j + 1) * b).min(nv));
            let n = us.len() * vs.len();
            let have =
                us.flat_map(|iu| vs.clone().map(move |iv| (iu, iv))).filter(|&(iu, iv)| !c.z_at(iu, iv).is_nan());
            let want = (have.count() as f64 / n as f64 * 255.0).round() as u8;
            assert_eq!(m.share[i * m.height + j], want, "block ({i}, {j})");
            seen[usize::from(want > 0) + usize::from(want == 255)] = true;
        }
    }
    assert_eq!(seen, [true; 3], "empty, partial and full blocks");
}

/// A road frame tabulated only near the points' box grids the same bits as one over the
/// whole road: the part's stations are the whole table's.
#[test]
fn a_frame_covering_the_points_box_grids_the_same_bits_as_the_whole_road() {
    let (scene, pts) = survey(4, 60.0, 66.0);
    let b = pts.iter().fold([f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY], |b, p| {
        [b[0].min(p[0]), b[1].min(p[1]), b[2].max(p[0]), b[3].max(p[1])]
    });
    let opts = SurfaceOptions { s_range: Some((60.0, 66.0)), ..Default::default() };
    let whole = offered(&scene, &pts, opts.clone()).finish().unwrap();
    let scope = SurfaceScope { points_box: Some(b), unit: None };
    let part = offered_with(&scene, &pts, opts, &SurfaceStorage::default(), scope).unwrap().finish().unwrap();
    assert_eq!(whole.crg.nu, part.crg.nu);
    let bits = |g: &SurfaceGrid| {
        (0..g.crg.nu)
            .flat_map(|u| (0..g.crg.nv()).map(move |v| (u, v)))
            .map(|(u, v)| g.crg.z_at(u, v).to_bits())
            .collect::<Vec<_>>()
    };
    assert_eq!(bits(&whole), bits(&part));
    assert_eq!(whole.points, part.points);
}

/// A road whose second geometry record starts 0.1 mm beside the first one's end (as in many
/// maps): the CRG's reference line follows the road's headings across the gap, with no kink
/// that would fold the grid (a chord across the gap turns 0.01 rad in 1 cm).
#[test]
fn a_gap_between_geometry_records_bends_no_crg_reference_line() {
    let text = r#"<?xml version="1.0"?><OpenDRIVE><header revMajor="1" revMinor="6"/>
<road id="1" length="40" junction="-1"><planView>
<geometry s="0" x="0" y="0" hdg="0" length="20"><line/></geometry>
<geometry s="20" x="20" y="0.0001" hdg="0" length="20"><line/></geometry>
</planView><lanes><laneSection s="0"><center><lane id="0" type="none"/></center>
<right><lane id="-1" type="driving"><width sOffset="0" a="3" b="0" c="0" d="0"/></lane></right>
</laneSection></lanes></road></OpenDRIVE>"#;
    let odr = opendrive::read(text).unwrap();
    let mut pts = Vec::new();
    for i in 0..400 {
        for j in 0..300 {
            pts.push([0.1 * i as f64, -0.01 * j as f64, 0.0]);
        }
    }
    let opts = SurfaceOptions { s_range: Some((0.0, 39.9)), v_range: Some((-3.0, 0.0)), ..Default::default() };
    let g = grid_surface(&odr.roads[0], None, &pts, opts).unwrap();
    let phi = g.crg.phi.as_ref().unwrap();
    let turn = phi.windows(2).map(|w| (w[1] - w[0]).abs()).fold(0.0f64, f64::max);
    assert!(turn < 1e-6, "the CRG's line turns {turn} rad between nodes");
}
