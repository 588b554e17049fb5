//! Packets of rays (`World::cast_packet`) against the same rays cast one at a time: camera-like
//! tiles from one point (the packet's frustum bounds the walk), rays from many points, axis-
//! parallel and invalid rays, and rays that stop short (`t_min`, `t_max`).

use world::{CrgLink, Heightfield, Hit, MaterialTable, Part, Ray, Tag, TriMesh, World, LANES, V3};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

/// The demo road with a 1 cm-textured 40 m x 6 m CRG on it (two chunks and a seam), unit
/// cubes beside it and a wall across its end.
fn world() -> (World, opendrive::OpenDrive) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/opendrive/demo.xodr");
    let odr = opendrive::read_file(path).expect("demo.xodr");
    let road = opendrive::RoadEval::new(&odr.roads[0]);
    let (nu, nv, du, v0) = (4001usize, 601usize, 0.01, -3.0);
    let mut z = Vec::with_capacity(nu * nv);
    for iu in 0..nu {
        for iv in 0..nv {
            let (u, v) = (iu as f64 * du, v0 + iv as f64 * du);
            let pothole = (-((u - 20.0).powi(2) + (v + 1.5).powi(2)) / 0.05).exp();
            z.push((0.003 * (u * 5.1).sin() * (v * 3.7).cos() - 0.04 * pothole) as f32);
        }
    }
    let crg = opencrg::Crg::new_grid(0.0, du, nu, v0, du, nv, (0.0, 0.0, 0.0), None, z);
    let surf = opencrg::Surface::from_owned(crg, true).expect("surface");
    let link = CrgLink {
        s_start: 10.0,
        s_end: 50.0,
        same: true,
        on_surface: true,
        t_offset: 0.0,
        z_offset: 0.0,
        z_scale: 1.0,
    };
    let hf = Heightfield::new(&road, &link, &surf, Tag::default()).expect("heightfield");
    let (mut v, mut f) = (Vec::<V3>::new(), Vec::<[u32; 3]>::new());
    let mut rng = Rng(3);
    for i in 0..300 {
        let s = rng.range(10.0, 50.0);
        let t = if i % 2 == 0 { rng.range(3.5, 8.0) } else { -rng.range(3.5, 8.0) };
        let p = road.sth_to_xyz(s, t, rng.range(0.0, 2.0));
        let k = v.len() as u32;
        for c in 0..8 {
            v.push([p[0] + (c & 1) as f64, p[1] + (c >> 1 & 1) as f64, p[2] + (c >> 2 & 1) as f64]);
        }
        for q in [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]] {
            f.push([k + q[0], k + q[1], k + q[2]]);
            f.push([k + q[0], k + q[2], k + q[3]]);
        }
    }
    let k = v.len() as u32;
    v.extend([-8.0, 8.0].into_iter().flat_map(|t| [road.sth_to_xyz(52.0, t, -1.0), road.sth_to_xyz(52.0, t, 6.0)]));
    f.extend([[k, k + 1, k + 3], [k, k + 3, k + 2]]);
    let mesh = TriMesh::new(&v, &f, vec![Tag { class: 6, ..Tag::default() }], &[]).expect("mesh");
    let world = World::new(vec![Part::Heightfield(hf), Part::Mesh(mesh)], MaterialTable::standard());
    drop(road);
    (world, odr)
}

/// Every lane's hit equals the single ray's: the same distance (1e-12 m) and class; the same
/// point and normal where the distance is the same.
fn same(world: &World, rays: &[Ray]) -> usize {
    let mut hits: Vec<Option<Hit>> = vec![None; rays.len()];
    world.cast_packet(rays, &mut hits);
    let mut n = 0;
    for (i, (r, got)) in rays.iter().zip(&hits).enumerate() {
        match (world.cast(r), got) {
            (Some(a), Some(b)) => {
                assert!((a.t - b.t).abs() <= 1e-12, "lane {i}: one ray {} m, packet {} m", a.t, b.t);
                assert_eq!(a.class, b.class, "lane {i}");
                n += 1;
            }
            (None, None) => {}
            (a, b) => assert_eq!(a.map(|h| h.t), b.map(|h| h.t), "lane {i} ({r:?}): one ray, packet"),
        }
    }
    n
}

#[test]
fn camera_tiles_hit_what_single_rays_hit() {
    let (world, odr) = world();
    let road = opendrive::RoadEval::new(&odr.roads[0]);
    let mut hits = 0;
    let mut rays_cast = 0;
    // A 90-degree pinhole 1.6 m above lane -1 at three stations, every fourth 8 x 8 tile of a
    // 320 x 240 image (road, pothole, cubes, wall and sky), and a camera looking back.
    for (s, back) in [(12.0, false), (18.5, false), (35.0, false), (45.0, true)] {
        let o = road.sth_to_xyz(s, -1.6, 1.6);
        let p = road.pose(s);
        let hdg = if back { p.hdg + std::f64::consts::PI } else { p.hdg };
        let (sn, cs) = hdg.sin_cos();
        let (fwd, left) = ([cs, sn, 0.0], [-sn, cs, 0.0]);
        let f = 160.0;
        for (tile, (r0, c0)) in (0..240).step_by(8).flat_map(|r| (0..320).step_by(8).map(move |c| (r, c))).enumerate() {
            if tile % 4 != 0 {
                continue;
            }
            let mut rays = Vec::with_capacity(LANES);
            for r in r0..r0 + 8 {
                for c in c0..c0 + 8 {
                    let (x, y) = ((c as f64 - 159.5) / f, (r as f64 - 119.5) / f);
                    let d = [0, 1, 2].map(|a| fwd[a] - x * left[a] - y * [0.0, 0.0, 1.0][a]);
                    rays.push(Ray::new(o, d).up_to(80.0));
                }
            }
            rays_cast += rays.len();
            hits += same(&world, &rays);
        }
    }
    assert!(hits > rays_cast / 3 && hits < rays_cast, "{hits} of {rays_cast} rays hit");
}

#[test]
fn scattered_axis_parallel_short_and_invalid_rays_in_one_packet() {
    let (world, odr) = world();
    let road = opendrive::RoadEval::new(&odr.roads[0]);
    let mut rng = Rng(11);
    let mut hits = 0;
    for k in 0..200 {
        let n = 1 + k % LANES;
        let mut rays = Vec::with_capacity(n);
        // Half the packets from one point (with a frustum), half from many.
        let shared = road.sth_to_xyz(rng.range(10.0, 50.0), rng.range(-3.0, 3.0), rng.range(0.2, 3.0));
        for j in 0..n {
            let o = if k % 2 == 0 {
                shared
            } else {
                road.sth_to_xyz(rng.range(5.0, 55.0), rng.range(-6.0, 6.0), rng.range(0.1, 4.0))
            };
            let to = road.sth_to_xyz(rng.range(8.0, 52.0), rng.range(-4.0, 4.0), rng.range(-0.05, 0.5));
            let mut d = [to[0] - o[0], to[1] - o[1], to[2] - o[2]];
            match j % 9 {
                // Straight down, straight along x, and level along y: zero components.
                0 => d = [0.0, 0.0, -1.0],
                1 => d = [1.0, 0.0, 0.0],
                2 => d = [0.0, -1.0, 0.0],
                _ => {}
            }
            let mut r = Ray::new(o, d).up_to(rng.range(1.0, 60.0));
            match j % 7 {
                3 => r.t_min = rng.range(0.0, 5.0),
                4 => r.origin[0] = f64::NAN,
                5 => r.dir = [0.0; 3],
                6 => r.t_max = r.t_min,
                _ => {}
            }
            rays.push(r);
        }
        hits += same(&world, &rays);
    }
    assert!(hits > 1000, "{hits} rays hit");
}

#[test]
fn more_rays_than_lanes_and_fewer_hits_than_rays_are_safe() {
    let (world, odr) = world();
    let road = opendrive::RoadEval::new(&odr.roads[0]);
    let o = road.sth_to_xyz(20.0, 0.0, 2.0);
    let rays: Vec<Ray> = (0..100).map(|i| Ray::new(o, [(i as f64).cos(), (i as f64).sin(), -0.5])).collect();
    // Only the first LANES rays are cast; hits past them stay None.
    let mut hits = vec![None; 100];
    world.cast_packet(&rays, &mut hits);
    assert!(hits[..LANES].iter().any(|h| h.is_some()));
    assert!(hits[LANES..].iter().all(|h| h.is_none()));
    // Fewer slots than rays: the rays beyond them are not cast, and nothing panics.
    let mut few = vec![None; 5];
    world.cast_packet(&rays, &mut few);
    for (r, h) in rays.iter().zip(&few) {
        assert_eq!(world.cast(r).map(|x| x.t), h.map(|x| x.t));
    }
    // Through the trait, any number of rays.
    let mut all = vec![None; 100];
    world::Cast::cast_many(&world, &rays, &mut all);
    for (r, h) in rays.iter().zip(&all) {
        assert_eq!(world.cast(r).map(|x| x.t), h.map(|x| x.t));
    }
}
