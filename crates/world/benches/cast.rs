//! Casting speed: a virtual HDL-32E driven along lane -1 of the demo road over a 1 cm CRG
//! heightfield (150 m x 7.43 m), a voxel-like mesh of unit cubes and a ground mesh.
//!
//! Plain timing, one thread, the median of 5 runs. Run with `cargo bench -p world --bench cast`.
//! With `CAST_BENCH_QUICK=1`: one run of one revolution (for cachegrind, whose counts are
//! steadier than timings on a busy machine).
//! Besides the speeds it prints the hit count and the sum of hit distances of each pass, so a
//! change that alters any result shows.

use std::time::Instant;
use world::{CrgLink, Heightfield, LanePath, MaterialTable, Part, Ray, Tag, Trajectory, TriMesh, World, V3};

/// HDL-32E elevations, degrees (as crates/sensors/src/beams.rs).
const HDL32E_DEG: [f64; 32] = [
    -30.67, -9.33, -29.33, -8.00, -28.00, -6.67, -26.67, -5.33, -25.33, -4.00, -24.00, -2.67, -22.67, -1.33, -21.33,
    0.00, -20.00, 1.33, -18.67, 2.67, -17.33, 4.00, -16.00, 5.33, -14.67, 6.67, -13.33, 8.00, -12.00, 9.33, -10.67,
    10.67,
];

/// SplitMix64 hash of an integer, uniform in [0, 1).
fn hash(i: u64) -> f64 {
    let mut z = i.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
}

/// A few mm of texture and a 4 cm pothole at u = 60 m, v = -1.6 m.
fn texture(iu: usize, iv: usize, u: f64, v: f64) -> f32 {
    let smooth = 0.002 * (u * 3.1).sin() * (v * 2.3).cos() + 0.001 * (u * 0.37 + v * 0.11).sin();
    let grain = 0.0015 * (hash((iu as u64) << 20 | iv as u64) - 0.5);
    let r2 = (u - 60.0).powi(2) + (v + 1.6).powi(2);
    let pothole = if r2 < 0.09 { -0.04 * (1.0 - r2 / 0.09) } else { 0.0 };
    (smooth + grain + pothole) as f32
}

/// This thread's CPU time, s (from /proc/thread-self/schedstat, so other processes on a busy
/// machine do not count; the wall clock where that file is missing).
fn cpu_seconds(wall: Instant) -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|ns| ns.parse::<f64>().ok()))
        .map_or_else(|| wall.elapsed().as_secs_f64(), |ns| ns * 1e-9)
}

/// Runs per pass: 5, or 1 with `CAST_BENCH_QUICK` set.
fn run_count() -> usize {
    if std::env::var_os("CAST_BENCH_QUICK").is_some() {
        1
    } else {
        5
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

/// Casts every ray 5 times with `cast`; prints and returns the median rays per CPU second.
fn time(what: &str, rays: &[Ray], mut cast: impl FnMut(&Ray) -> Option<f64>) -> f64 {
    let mut runs = Vec::new();
    let mut check = (0usize, 0.0f64);
    for _ in 0..run_count() {
        let wall = Instant::now();
        let t0 = cpu_seconds(wall);
        let (mut n, mut sum) = (0usize, 0.0f64);
        for r in rays {
            if let Some(t) = cast(r) {
                n += 1;
                sum += t;
            }
        }
        runs.push(rays.len() as f64 / (cpu_seconds(wall) - t0));
        check = (n, sum);
    }
    let m = median(runs);
    println!("{what:<12} {:>8.3} M rays/s  ({} hits, sum of t {:.6} m)", m * 1e-6, check.0, check.1);
    m
}

/// The 12 triangles of an axis-aligned unit cube at `c` (its lower corner).
fn cube(c: V3, v: &mut Vec<V3>, f: &mut Vec<[u32; 3]>) {
    let k = v.len() as u32;
    for i in 0..8 {
        v.push([c[0] + (i & 1) as f64, c[1] + ((i >> 1) & 1) as f64, c[2] + ((i >> 2) & 1) as f64]);
    }
    for q in [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]] {
        f.push([k + q[0], k + q[1], k + q[2]]);
        f.push([k + q[0], k + q[2], k + q[3]]);
    }
}

fn main() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/opendrive/demo.xodr");
    let odr = opendrive::read_file(path).expect("demo.xodr");
    let road = opendrive::RoadEval::new(&odr.roads[0]);
    let link = CrgLink::of(&odr.roads[0].surface.crgs[0]).expect("the demo road's CRG link");

    // The CRG: u 0..150 m, v -4.17..3.26 m, 1 cm both ways.
    let (nu, nv, du, v0) = (15_001usize, 744usize, 0.01, -4.17);
    let mut z = Vec::with_capacity(nu * nv);
    for iu in 0..nu {
        for iv in 0..nv {
            z.push(texture(iu, iv, iu as f64 * du, v0 + iv as f64 * du));
        }
    }
    let crg = opencrg::Crg::new_grid(0.0, du, nu, v0, du, nv, (0.0, 0.0, 0.0), None, z);
    let surf = opencrg::Surface::from_owned(crg, true).expect("surface");
    let asphalt = Tag { material: world::MaterialId(0), class: 11, object: 0 };
    let wall = Instant::now();
    let t0 = cpu_seconds(wall);
    let hf = Heightfield::new(&road, &link, &surf, asphalt).expect("heightfield");
    let build = cpu_seconds(wall) - t0;
    let st = hf.stats();
    println!(
        "heightfield  {} x {} nodes, {} cells, {} tree nodes: built in {build:.3} s, {} bytes ({:.1} MB)",
        st.rows,
        st.columns,
        st.cells,
        st.tree_nodes,
        st.bytes,
        st.bytes as f64 / 1e6
    );

    // 5,000 unit cubes 5 to 15 m either side of the road, stacked up to 3 m.
    let (mut v, mut f) = (Vec::new(), Vec::new());
    for i in 0..5000u64 {
        let s = 150.0 * hash(4 * i);
        let side = if hash(4 * i + 1) < 0.5 { -1.0 } else { 1.0 };
        let t = side * (5.25 + 5.0 + 10.0 * hash(4 * i + 2));
        let p = road.sth_to_xyz(s, t, 0.0);
        let up = (3.0 * hash(4 * i + 3)).floor();
        cube([p[0].floor(), p[1].floor(), p[2].floor() + up], &mut v, &mut f);
    }
    let t0 = Instant::now();
    let voxels = TriMesh::new(&v, &f, vec![Tag::default()], &[]).expect("voxel mesh");
    println!("voxel mesh   {} triangles, built in {:.3} s", voxels.len(), t0.elapsed().as_secs_f64());

    // Ground: the road's surface outside the CRG and 15 m beyond, 0.5 m x 0.5 m quads.
    let (mut v, mut f) = (Vec::new(), Vec::new());
    let ts: Vec<f64> = (0..=32).map(|j| -20.0 + j as f64 * (20.0 - 4.17) / 32.0).collect();
    let ts2: Vec<f64> = (0..=34).map(|j| 3.26 + j as f64 * (20.0 - 3.26) / 34.0).collect();
    for i in 0..300 {
        let (s0, s1) = (i as f64 * 0.5, (i + 1) as f64 * 0.5);
        for band in [&ts, &ts2] {
            for w in band.windows(2) {
                let k = v.len() as u32;
                v.extend([
                    road.sth_to_xyz(s0, w[0], 0.0),
                    road.sth_to_xyz(s1, w[0], 0.0),
                    road.sth_to_xyz(s1, w[1], 0.0),
                    road.sth_to_xyz(s0, w[1], 0.0),
                ]);
                f.extend([[k, k + 1, k + 2], [k, k + 2, k + 3]]);
            }
        }
    }
    let ground = TriMesh::new(&v, &f, vec![Tag::default()], &[]).expect("ground mesh");
    println!("ground mesh  {} triangles", ground.len());

    // One sensor second: 10 revolutions at 10 Hz, 2,169 firings of 32 lasers each, the
    // sensor 1.8 m above lane -1's centre, spread over s 5..145 m (14 m a revolution).
    let lane = LanePath::new(opendrive::RoadEval::new(&odr.roads[0]), -1, 5.0, 14.0, 10.0).expect("lane -1");
    let mut rays = Vec::new();
    let firings = (360.0f64 / 0.166).round() as usize;
    for k in 0..if run_count() == 1 { 1 } else { 10 } {
        for j in 0..firings {
            let time = k as f64 + j as f64 * 46.08e-6;
            let pose = lane.pose(time);
            let o = pose.point([0.0, 0.0, 1.8]);
            let az = (j as f64 * 0.166).to_radians();
            for e in HDL32E_DEG {
                let e = e.to_radians();
                let d = pose.direction([e.cos() * az.cos(), e.cos() * az.sin(), e.sin()]);
                rays.push(Ray { time, ..Ray::new(o, d).up_to(100.0) });
            }
        }
    }
    println!("rays         {} ({} firings x 32 x 10 revolutions)", rays.len(), firings);

    let cast_part = |p: &dyn Fn(&Ray, &mut f64) -> Option<world::Hit>, r: &Ray| {
        let mut best = r.t_max;
        p(r, &mut best).map(|h| h.t)
    };
    let h = time("heightfield", &rays, |r| cast_part(&|r, b| hf.cast(r, b), r));
    let m = time("voxel mesh", &rays, |r| cast_part(&|r, b| voxels.cast(r, b), r));
    let g = time("ground mesh", &rays, |r| cast_part(&|r, b| ground.cast(r, b), r));
    let world =
        World::new(vec![Part::Heightfield(hf), Part::Mesh(voxels), Part::Mesh(ground)], MaterialTable::standard());
    let w = time("world", &rays, |r| world.cast(r).map(|h| h.t));

    // A 640 x 480 pinhole camera (90 degrees across) 1.6 m above lane -1's centre, level and
    // facing along the lane, at 5 stations: each pixel's ray alone, then tiles of pixels as
    // packets (`World::cast_packet`); the hits must be the same.
    let (cw, ch) = (640usize, 480usize);
    // Tiles of tw x th pixels (CAST_TILE=WxH; 8x8 by default, as the camera casts).
    let (tw, th) = std::env::var("CAST_TILE")
        .ok()
        .and_then(|v| v.split_once('x').and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?))))
        .filter(|&(a, b): &(usize, usize)| a * b >= 1 && a * b <= 64)
        .unwrap_or((8, 8));
    let f = (cw as f64 / 2.0) / 45f64.to_radians().tan();
    let mut frames = Vec::new();
    for k in 0..if run_count() == 1 { 1 } else { 5 } {
        let pose = lane.pose(1.0 + 2.0 * k as f64);
        let o = pose.point([0.0, 0.0, 1.6]);
        let mut tiles = Vec::new();
        for r0 in (0..ch).step_by(th) {
            for c0 in (0..cw).step_by(tw) {
                let mut tile = Vec::with_capacity(64);
                for r in r0..(r0 + th).min(ch) {
                    for c in c0..(c0 + tw).min(cw) {
                        let (x, y) =
                            ((c as f64 - (cw as f64 - 1.0) / 2.0) / f, (r as f64 - (ch as f64 - 1.0) / 2.0) / f);
                        // Camera (right, down, forward) to the body's (forward, left, up).
                        let d = pose.direction([1.0, -x, -y]);
                        tile.push(Ray::new(o, d).up_to(200.0));
                    }
                }
                tiles.push(tile);
            }
        }
        frames.push(tiles);
    }
    let camera_rays: Vec<Ray> = frames.iter().flatten().flatten().copied().collect();
    let cs = time("camera 1 ray", &camera_rays, |r| world.cast(r).map(|h| h.t));
    let mut runs = Vec::new();
    let mut check = (0usize, 0.0f64);
    let mut hits = vec![None; 64];
    for _ in 0..run_count() {
        let wall = Instant::now();
        let t0 = cpu_seconds(wall);
        let (mut n, mut sum) = (0usize, 0.0f64);
        for tile in frames.iter().flatten() {
            world.cast_packet(tile, &mut hits);
            for hit in hits.iter().flatten() {
                n += 1;
                sum += hit.t;
            }
        }
        runs.push(camera_rays.len() as f64 / (cpu_seconds(wall) - t0));
        check = (n, sum);
    }
    let cp = median(runs);
    println!("{:<12} {:>8.3} M rays/s  ({} hits, sum of t {:.6} m)", "camera tiles", cp * 1e-6, check.0, check.1);
    let mut differ = 0;
    for tile in frames.iter().flatten() {
        world.cast_packet(tile, &mut hits);
        for (r, hit) in tile.iter().zip(&hits) {
            if world.cast(r).map(|x| x.t) != hit.map(|x| x.t) {
                differ += 1;
            }
        }
    }
    println!(
        "camera: {} rays in {} frames, tiles of {tw}x{th} {:.2}x one ray at a time, {differ} rays with another hit",
        camera_rays.len(),
        frames.len(),
        cp / cs
    );

    println!(
        "summary: build {build:.3} s, {} bytes, heightfield {:.3}, mesh {:.3}, ground {:.3}, world {:.3} M rays/s",
        st.bytes,
        h * 1e-6,
        m * 1e-6,
        g * 1e-6,
        w * 1e-6
    );
}
