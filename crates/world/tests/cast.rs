//! The world's casts against brute force, and the heightfield against the OpenCRG evaluation.

use world::{Aabb, CrgLink, Heightfield, MaterialTable, Part, Ray, Tag, TriMesh, World, V3};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// Möller-Trumbore, written again plainly for the brute force.
fn brute(o: V3, d: V3, tri: &[V3; 3]) -> Option<f64> {
    let sub = |a: V3, b: V3| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let cross = |a: V3, b: V3| [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
    let dot = |a: V3, b: V3| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let (e1, e2) = (sub(tri[1], tri[0]), sub(tri[2], tri[0]));
    let p = cross(d, e2);
    let det = dot(e1, p);
    if det.abs() < 1e-300 {
        return None;
    }
    let s = sub(o, tri[0]);
    let u = dot(s, p) / det;
    let q = cross(s, e1);
    let v = dot(d, q) / det;
    let t = dot(e2, q) / det;
    (u >= 0.0 && v >= 0.0 && u + v <= 1.0 && t > 0.0).then_some(t)
}

fn nearest(o: V3, d: V3, tris: &[[V3; 3]]) -> Option<f64> {
    tris.iter().filter_map(|t| brute(o, d, t)).min_by(f64::total_cmp)
}

/// [`nearest`] with the casts' barycentric slack of 1e-9 (a ray along an edge hits it).
fn nearest_with_slack(o: V3, d: V3, tris: &[[V3; 3]]) -> Option<f64> {
    let sub = |a: V3, b: V3| [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
    let cross = |a: V3, b: V3| [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
    let dot = |a: V3, b: V3| a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
    let hit = |tri: &[V3; 3]| {
        let (e1, e2) = (sub(tri[1], tri[0]), sub(tri[2], tri[0]));
        let p = cross(d, e2);
        let det = dot(e1, p);
        if det.abs() < 1e-300 {
            return None;
        }
        let s = sub(o, tri[0]);
        let (u, q) = (dot(s, p) / det, cross(s, e1));
        let (v, t) = (dot(d, q) / det, dot(e2, q) / det);
        let e = 1e-9;
        (u >= -e && v >= -e && u + v <= 1.0 + e && t > 0.0).then_some(t)
    };
    tris.iter().filter_map(hit).min_by(f64::total_cmp)
}

fn random_soup(rng: &mut Rng, n: usize) -> (Vec<V3>, Vec<[u32; 3]>) {
    let mut v = Vec::new();
    let mut f = Vec::new();
    for i in 0..n {
        let c = [rng.range(-50.0, 50.0), rng.range(-50.0, 50.0), rng.range(-5.0, 5.0)];
        let size = rng.range(0.05, 3.0);
        for _ in 0..3 {
            v.push([c[0] + rng.range(-size, size), c[1] + rng.range(-size, size), c[2] + rng.range(-size, size)]);
        }
        f.push([3 * i as u32, 3 * i as u32 + 1, 3 * i as u32 + 2]);
    }
    (v, f)
}

fn random_ray(rng: &mut Rng) -> Ray {
    let o = [rng.range(-60.0, 60.0), rng.range(-60.0, 60.0), rng.range(-10.0, 10.0)];
    let target = [rng.range(-50.0, 50.0), rng.range(-50.0, 50.0), rng.range(-5.0, 5.0)];
    Ray::new(o, [target[0] - o[0], target[1] - o[1], target[2] - o[2]])
}

#[test]
fn mesh_cast_equals_brute_force() {
    let mut rng = Rng(7);
    let (v, f) = random_soup(&mut rng, 3000);
    let mesh = TriMesh::new(&v, &f, vec![Tag::default()], &[]).expect("mesh");
    assert_eq!(mesh.len(), 3000);
    let tris: Vec<[V3; 3]> = f.iter().map(|t| [v[t[0] as usize], v[t[1] as usize], v[t[2] as usize]]).collect();
    let world = World::new(vec![Part::Mesh(mesh)], MaterialTable::standard());
    let (mut hits, mut n) = (0, 0);
    for _ in 0..3000 {
        let r = random_ray(&mut rng);
        let want = nearest(r.origin, r.dir, &tris);
        let got = world.cast(&r).map(|h| h.t);
        n += 1;
        match (want, got) {
            (Some(a), Some(b)) => {
                hits += 1;
                assert!((a - b).abs() < 1e-9, "ray {n}: brute force {a} m, tree {b} m");
            }
            (None, None) => {}
            // A ray through an edge shared by nothing can differ by the edge slack only.
            (a, b) => panic!("ray {n}: brute force {a:?}, tree {b:?}"),
        }
    }
    assert!(hits > 300, "only {hits} of {n} rays hit: the test does not test");
}

#[test]
fn invalid_and_empty_give_no_hit() {
    let world = World::new(Vec::new(), MaterialTable::standard());
    assert!(world.cast(&Ray::new([0.0; 3], [1.0, 0.0, 0.0])).is_none());
    assert!(world.bounds().is_empty());
    let (v, f) = random_soup(&mut Rng(1), 10);
    let world =
        World::new(vec![Part::Mesh(TriMesh::new(&v, &f, vec![], &[]).expect("mesh"))], MaterialTable::standard());
    for r in [
        Ray::new([f64::NAN, 0.0, 0.0], [1.0, 0.0, 0.0]),
        Ray::new([0.0; 3], [0.0, 0.0, 0.0]),
        Ray { t_min: 5.0, t_max: 1.0, ..Ray::new([0.0; 3], [1.0, 0.0, 0.0]) },
    ] {
        assert!(world.cast(&r).is_none());
    }
    // A triangle naming a vertex it does not have is an error, not a panic.
    assert!(TriMesh::new(&v, &[[0, 1, 99]], vec![], &[]).is_err());
}

fn demo_road() -> opendrive::OpenDrive {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/opendrive/demo.xodr");
    opendrive::read_file(path).expect("demo.xodr")
}

/// A smooth surface with a dip: z(u, v) in metres, and its grid on the demo road.
fn surface_z(u: f64, v: f64) -> f64 {
    0.01 * (u * 0.7).sin() + 0.005 * (v * 1.3).cos() - 0.04 * (-((u - 30.0).powi(2) + (v + 1.5).powi(2)) / 0.3).exp()
}

fn grid(u0: f64, du: f64, nu: usize, v0: f64, dv: f64, nv: usize, holes: bool) -> opencrg::Crg {
    let mut z = Vec::with_capacity(nu * nv);
    for iu in 0..nu {
        for iv in 0..nv {
            let (u, v) = (u0 + iu as f64 * du, v0 + iv as f64 * dv);
            let hole = holes && (10.0..11.0).contains(&u) && (0.0..1.0).contains(&v);
            z.push(if hole { f32::NAN } else { surface_z(u, v) as f32 });
        }
    }
    let mut crg = opencrg::Crg::new_grid(u0, du, nu, v0, dv, nv, (0.0, 0.0, 0.0), None, z);
    if holes {
        // Keep NaN (mode 0), so holes stay holes.
        let mut m = crg.modifiers.clone().unwrap_or_default();
        m.grid_nan_mode = Some(0);
        crg.modifiers = Some(m);
    }
    crg
}

fn link(s0: f64, s1: f64) -> CrgLink {
    CrgLink { s_start: s0, s_end: s1, same: true, on_surface: true, t_offset: 0.0, z_offset: 0.0, z_scale: 1.0 }
}

#[test]
fn heightfield_nodes_are_the_road_plus_the_crg() {
    let odr = demo_road();
    let road = opendrive::RoadEval::new(&odr.roads[0]);
    let crg = grid(0.0, 0.05, 801, -4.0, 0.05, 161, false);
    let surf = opencrg::Surface::new(&crg, true).expect("surface");
    let hf = Heightfield::new(&road, &link(0.0, 40.0), &surf, Tag::default()).expect("heightfield");
    let st = hf.stats();
    assert_eq!((st.rows, st.columns, st.holes), (801, 161, 0));
    assert_eq!(st.cells, 800 * 160);
    for (iu, iv) in [(0, 0), (400, 80), (800, 160), (123, 17)] {
        let (s, t) = (iu as f64 * 0.05, -4.0 + iv as f64 * 0.05);
        let want = road.sth_to_xyz(s, t, 0.0);
        let p = hf.node(iu, iv).expect("node");
        let crg_z = surf.uv_to_z(s, t).expect("uv_to_z");
        // Plan position: the road frame's (s, t); height: the surface plus the CRG's z (the
        // frame's point lies on the superelevated surface, so h = 0 there).
        assert!(
            (p[0] - want[0]).abs() < 1e-9 && (p[1] - want[1]).abs() < 1e-9,
            "node ({iu}, {iv}) plan {p:?} vs {want:?}"
        );
        let surface = road.elevation(s) + t * road.planar_cross_slope(s);
        assert!((p[2] - (surface + crg_z)).abs() < 1e-6, "node ({iu}, {iv}) z {} vs {}", p[2], surface + crg_z);
    }
}

#[test]
fn heightfield_cast_equals_brute_force_and_the_crg_height() {
    let odr = demo_road();
    let road = opendrive::RoadEval::new(&odr.roads[0]);
    let crg = grid(0.0, 0.05, 801, -4.0, 0.05, 161, true);
    let surf = opencrg::Surface::new(&crg, true).expect("surface");
    let hf = Heightfield::new(&road, &link(0.0, 40.0), &surf, Tag::default()).expect("heightfield");
    assert!(hf.stats().holes > 300, "the hole is in the grid");
    let tris: Vec<[V3; 3]> = hf.triangles().collect();
    let world = World::new(vec![Part::Heightfield(hf)], MaterialTable::standard());
    let mut rng = Rng(11);
    let mut hits = 0;
    for k in 0..1500 {
        // From a sensor 2 m above the surface, towards a point on it.
        let (s, t) = (rng.range(1.0, 39.0), rng.range(-3.9, 3.9));
        let from = road.sth_to_xyz(rng.range(0.0, 40.0), rng.range(-2.0, 2.0), 2.0);
        let to = road.sth_to_xyz(s, t, 0.0);
        let r = Ray::new(from, [to[0] - from[0], to[1] - from[1], to[2] - from[2]]);
        let want = nearest(r.origin, r.dir, &tris);
        let got = world.cast(&r).map(|h| h.t);
        match (want, got) {
            (Some(a), Some(b)) => {
                hits += 1;
                assert!((a - b).abs() < 1e-9, "ray {k}: brute force {a} m, heightfield {b} m");
            }
            (None, None) => {}
            (a, b) => panic!("ray {k}: brute force {a:?}, heightfield {b:?}"),
        }
    }
    assert!(hits > 1300, "{hits} of 1500 rays hit");
    // Straight down: the hit lies on the road plus the CRG's bilinear height within 0.2 mm
    // (triangles vs bilinear on a 5 cm grid of this smooth surface), and holes let rays through.
    for k in 0..500 {
        let (s, t) = (rng.range(1.0, 39.0), rng.range(-3.9, 3.9));
        let p = road.sth_to_xyz(s, t, 0.0);
        let r = Ray::new([p[0], p[1], p[2] + 3.0], [0.0, 0.0, -1.0]);
        let h = world.cast(&r);
        let in_hole = (10.05..10.95).contains(&s) && (0.05..0.95).contains(&t);
        if in_hole {
            assert!(h.is_none(), "ray {k} at s {s} t {t} hit a hole");
            continue;
        }
        if (9.9..11.1).contains(&s) && (-0.1..1.1).contains(&t) {
            continue;
        }
        let h = h.unwrap_or_else(|| panic!("ray {k} at s {s} t {t} missed"));
        // The plumb line through p meets the road at p only up to the superelevation's lean;
        // compare at the hit's own (s, t).
        let st = road.xy_to_st(h.point[0], h.point[1], 10.0).expect("on the road");
        let surface = road.elevation(st.s) + st.t * road.planar_cross_slope(st.s);
        let want = surface + surf.uv_to_z(st.s, st.t).expect("uv_to_z");
        assert!((h.point[2] - want).abs() < 2e-4, "ray {k}: z {} vs {want}", h.point[2]);
        assert!(h.normal[2] > 0.9, "the normal faces up: {:?}", h.normal);
    }
}

#[test]
fn paint_is_where_the_marks_are() {
    let odr = demo_road();
    let road = opendrive::RoadEval::new(&odr.roads[0]);
    let crg = grid(0.0, 0.02, 1001, -4.0, 0.02, 401, false);
    let surf = opencrg::Surface::new(&crg, true).expect("surface");
    let l = link(0.0, 20.0);
    let asphalt = Tag { material: world::MaterialId(0), class: 11, object: 0 };
    let paint = Tag { material: world::MaterialId(1), class: 11, object: 0 };
    let mut hf = Heightfield::new(&road, &l, &surf, asphalt).expect("heightfield");
    let lines = opendrive::eval::marks::paint_lines(road.road(), (0.0, 20.0));
    assert!(!lines.is_empty(), "the demo road has marks");
    hf.paint(&road, &l, &surf, &lines, paint);
    let world = World::new(vec![Part::Heightfield(hf)], MaterialTable::standard());
    let down = |s: f64, t: f64| {
        let p = road.sth_to_xyz(s, t, 0.0);
        world.cast(&Ray::new([p[0], p[1], p[2] + 2.0], [0.0, 0.0, -1.0])).expect("hit").material
    };
    let mut painted = 0;
    for s in [0.5, 1.5, 5.0, 12.0, 19.5] {
        let bands = road.painted_at(&lines, s);
        for (lo, hi) in &bands {
            if (-3.9..3.9).contains(lo) {
                assert_eq!(down(s, 0.5 * (lo + hi)), paint.material, "s {s}: a mark's centre at t {}", 0.5 * (lo + hi));
                painted += 1;
            }
        }
        // Half a lane from any mark: asphalt.
        let far = (-3.5..3.5)
            .step_by_f(0.25)
            .into_iter()
            .find(|t| bands.iter().all(|(lo, hi)| *t < lo - 0.3 || *t > hi + 0.3));
        if let Some(t) = far {
            assert_eq!(down(s, t), asphalt.material, "s {s} t {t}");
        }
    }
    assert!(painted >= 5, "{painted} mark centres checked");
}

trait StepBy {
    fn step_by_f(self, step: f64) -> Vec<f64>;
}
impl StepBy for std::ops::Range<f64> {
    fn step_by_f(self, step: f64) -> Vec<f64> {
        let n = ((self.end - self.start) / step).floor() as usize;
        (0..=n).map(|i| self.start + i as f64 * step).collect()
    }
}

#[test]
fn bounds_hold_the_parts() {
    let (v, f) = random_soup(&mut Rng(3), 100);
    let mesh = TriMesh::new(&v, &f, vec![], &[]).expect("mesh");
    let b: Aabb = mesh.bounds();
    for p in &v {
        assert!(p.iter().zip(b.min.iter().zip(&b.max)).all(|(c, (lo, hi))| c >= lo && c <= hi), "{p:?} outside {b:?}");
    }
}

/// A grid whose sizes are multiples of neither the leaf (4 cells) nor the chunk (256 rows):
/// 522 x 30 cells with a hole, on the demo road's curve.
fn odd_heightfield(holes: bool) -> (Heightfield, opendrive::OpenDrive) {
    let odr = demo_road();
    let road = opendrive::RoadEval::new(&odr.roads[0]);
    let crg = grid(0.0, 0.05, 523, -1.0, 0.07, 31, holes);
    let surf = opencrg::Surface::new(&crg, true).expect("surface");
    let l = link(60.0, 60.0 + 522.0 * 0.05);
    let hf = Heightfield::new(&road, &l, &surf, Tag::default()).expect("heightfield");
    (hf, odr)
}

#[test]
fn odd_sized_grid_across_chunks_and_leaves_equals_brute_force() {
    let (hf, odr) = odd_heightfield(true);
    let road = opendrive::RoadEval::new(&odr.roads[0]);
    let st = hf.stats();
    assert_eq!((st.rows, st.columns), (523, 31));
    assert!(st.holes > 0);
    let tris: Vec<[V3; 3]> = hf.triangles().collect();
    assert_eq!(tris.len(), 2 * st.cells);
    let mut rng = Rng(5);
    let mut hits = 0;
    for k in 0..1500 {
        // Steep and grazing rays, from above the road towards anywhere on the grid (its last
        // rows and columns, the chunk seams at 256 and 512 rows and the hole included).
        let s = if k % 3 == 0 { 60.0 + rng.range(12.0, 13.0) } else { 60.0 + rng.range(0.0, 26.1) };
        let (t, h) = (rng.range(-1.0, 1.1), if k % 2 == 0 { 0.3 } else { 3.0 });
        let from = road.sth_to_xyz(rng.range(55.0, 90.0), rng.range(-4.0, 4.0), h);
        let to = road.sth_to_xyz(s, t, 0.0);
        let r = Ray::new(from, [to[0] - from[0], to[1] - from[1], to[2] - from[2]]);
        let mut best = f64::INFINITY;
        let got = hf.cast(&r, &mut best).map(|h| h.t);
        match (nearest(r.origin, r.dir, &tris), got) {
            (Some(a), Some(b)) => {
                hits += 1;
                assert!((a - b).abs() < 1e-9, "ray {k}: brute force {a} m, heightfield {b} m");
            }
            (None, None) => {}
            (a, b) => panic!("ray {k}: brute force {a:?}, heightfield {b:?}"),
        }
    }
    assert!(hits > 1000, "{hits} of 1500 rays hit");
}

#[test]
fn rays_through_nodes_edges_and_diagonals_find_no_crack() {
    let (hf, _) = odd_heightfield(false);
    let st = hf.stats();
    let mut checked = 0;
    // Every node, edge midpoint and diagonal midpoint near the leaf (4) and chunk (256) seams
    // and the grid's last row and column, from a point above and from a grazing angle.
    let rows: Vec<usize> = [0, 1, 3, 4, 5, 7, 8, 127, 128, 255, 256, 257, 259, 260, 511, 512, 513, 520, 521].to_vec();
    let cols: Vec<usize> = (0..st.columns - 1).collect();
    for &iu in &rows {
        for &iv in &cols {
            let (Some(a), Some(b), Some(c), Some(d)) =
                (hf.node(iu, iv), hf.node(iu + 1, iv), hf.node(iu + 1, iv + 1), hf.node(iu, iv + 1))
            else {
                continue;
            };
            let mid = |p: V3, q: V3| [(p[0] + q[0]) / 2.0, (p[1] + q[1]) / 2.0, (p[2] + q[2]) / 2.0];
            for target in [a, mid(a, b), mid(a, d), mid(a, c), mid(b, d), c] {
                // Straight down, slanted, and along the cell's diagonal (its vertical plane
                // holds the diagonal a-c) at 2 degrees.
                let diag = [c[0] - a[0], c[1] - a[1]];
                let n = (diag[0] * diag[0] + diag[1] * diag[1]).sqrt();
                let back = 5.0 / n;
                let grazing = [target[0] - diag[0] * back, target[1] - diag[1] * back, target[2] + 5.0 * 0.035];
                for from in [
                    [target[0], target[1], target[2] + 2.0],
                    [target[0] + 0.7, target[1] - 0.4, target[2] + 1.5],
                    grazing,
                ] {
                    let dir = [target[0] - from[0], target[1] - from[1], target[2] - from[2]];
                    let dist = (dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]).sqrt();
                    let r = Ray::new(from, dir);
                    let mut best = f64::INFINITY;
                    let h = hf.cast(&r, &mut best);
                    let h = h.unwrap_or_else(|| panic!("a crack at cell ({iu}, {iv}): {target:?} from {from:?}"));
                    // It may hit a bump before the target, never pass it.
                    assert!(h.t <= dist + 1e-9, "cell ({iu}, {iv}): hit at {} m, the target at {dist} m", h.t);
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 3000, "{checked} rays");
}

#[test]
fn rays_grazing_along_cell_and_leaf_edges_equal_brute_force() {
    // Rays whose vertical plane holds a grid line (a row's or a column's edges, across leaf
    // seams at multiples of 4 and the chunk seam at 256), skimming the surface at a fraction of
    // a degree: the leaf's tests of which side of that plane the nodes lie must keep every cell
    // the ray can hit.
    let (hf, _) = odd_heightfield(true);
    let st = hf.stats();
    let tris: Vec<[V3; 3]> = hf.triangles().collect();
    let (mut hits, mut rays) = (0, 0);
    for &iu in &[0usize, 3, 4, 7, 8, 252, 254, 255, 256, 257, 260, 515] {
        for iv in [0usize, 3, 4, 5, 8, 12, 16, 27, 29, 30] {
            for (du, dv) in [(4usize, 0usize), (0, 4), (6, 0), (0, 6)] {
                let (Some(a), Some(b)) = (hf.node(iu, iv), hf.node(iu + du, (iv + dv).min(st.columns - 1))) else {
                    continue;
                };
                for (lift, drop) in [(0.004, 0.0), (0.002, 0.003), (0.0005, 0.0005), (0.01, 0.02)] {
                    // From just above node a towards just below node b, and back; the plan
                    // line passes through both nodes (an edge shared by two cells).
                    for (p, q) in [(a, b), (b, a)] {
                        let from = [p[0], p[1], p[2] + lift];
                        let to = [q[0], q[1], q[2] - drop];
                        let r = Ray::new(from, [to[0] - from[0], to[1] - from[1], to[2] - from[2]]);
                        let mut best = f64::INFINITY;
                        let got = hf.cast(&r, &mut best).map(|h| h.t);
                        rays += 1;
                        match (nearest_with_slack(r.origin, r.dir, &tris), got) {
                            (Some(x), Some(y)) => {
                                hits += 1;
                                assert!(
                                    (x - y).abs() < 1e-9,
                                    "({iu}, {iv}) +({du}, {dv}): brute force {x} m, heightfield {y} m"
                                );
                            }
                            (None, None) => {}
                            (x, y) => panic!("({iu}, {iv}) +({du}, {dv}): brute force {x:?}, heightfield {y:?}"),
                        }
                    }
                }
            }
        }
    }
    assert!(rays > 1000 && hits > rays / 2, "{hits} of {rays} rays hit");
}

#[test]
fn bad_rays_and_empty_grids_give_no_hit() {
    let (hf, _) = odd_heightfield(true);
    let c = hf.bounds().centre();
    for r in [
        Ray { origin: [f64::NAN, c[1], c[2] + 1.0], dir: [0.0, 0.0, -1.0], t_min: 0.0, t_max: 10.0, time: 0.0 },
        Ray { origin: [c[0], c[1], c[2] + 1.0], dir: [f64::NAN; 3], t_min: 0.0, t_max: 10.0, time: 0.0 },
        Ray { origin: [c[0], c[1], c[2] + 1.0], dir: [0.0; 3], t_min: 0.0, t_max: 10.0, time: 0.0 },
        Ray { origin: [f64::INFINITY, c[1], c[2] + 1.0], dir: [-1.0, 0.0, 0.0], t_min: 0.0, t_max: 10.0, time: 0.0 },
    ] {
        let mut best = r.t_max;
        assert!(hf.cast(&r, &mut best).is_none(), "{r:?}");
    }
    // A grid of holes only: no cell, no tree, no hit.
    let odr = demo_road();
    let road = opendrive::RoadEval::new(&odr.roads[0]);
    let mut crg = grid(0.0, 0.05, 40, -1.0, 0.05, 9, true);
    for z in crg.z.iter_mut() {
        *z = f32::NAN;
    }
    let mut m = crg.modifiers.clone().unwrap_or_default();
    m.grid_nan_mode = Some(0);
    crg.modifiers = Some(m);
    let surf = opencrg::Surface::new(&crg, true).expect("surface");
    let hf = Heightfield::new(&road, &link(0.0, 2.0), &surf, Tag::default()).expect("heightfield");
    assert_eq!(hf.stats().cells, 0);
    assert!(hf.bounds().is_empty());
    let p = road.sth_to_xyz(1.0, 0.0, 0.0);
    let mut best = f64::INFINITY;
    assert!(hf.cast(&Ray::new([p[0], p[1], p[2] + 1.0], [0.0, 0.0, -1.0]), &mut best).is_none());
}
