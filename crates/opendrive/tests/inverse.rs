//! `xy_to_st(sth_to_xyz(s, t, 0))` gives back (s, t) within 1e-6 m on every road of every
//! sample map, for random points with |t| up to 20 m and points at the road ends, checked
//! against a seeded brute-force oracle: dense sampling of s (1 cm) for sign changes of the
//! cross product between the lateral direction and the offset to the query, then bisection.
//! Where another part of a winding road is nearer than the original point, the oracle's
//! nearest solution is the expected answer.

#![allow(clippy::panic, clippy::unwrap_used)] // tests and benches fail loudly

use opendrive::RoadEval;

const TOL: f64 = 1e-6;
const MAX_T: f64 = 20.0;
const SEARCH: f64 = 25.0;

struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// (g, t*) at s: g = cross(L, Q - P) (0 at a solution), t* = the t that puts the surface point
/// nearest to Q along the lateral direction L.
fn g_at(ev: &RoadEval, q: [f64; 2], s: f64) -> (f64, f64) {
    let p0 = ev.sth_to_xyz(s, 0.0, 0.0);
    let p1 = ev.sth_to_xyz(s, 1.0, 0.0);
    let l = [p1[0] - p0[0], p1[1] - p0[1]];
    let d = [q[0] - p0[0], q[1] - p0[1]];
    (l[0] * d[1] - l[1] * d[0], (d[0] * l[0] + d[1] * l[1]) / (l[0] * l[0] + l[1] * l[1]))
}

/// All (s, t) with the surface point (s, t, 0) horizontally at q and |t| <= SEARCH.
fn brute_force(ev: &RoadEval, q: [f64; 2]) -> Vec<(f64, f64)> {
    let len = ev.length();
    let mut out = Vec::new();
    let n_coarse = (len.ceil() as usize).max(1);
    let mut fine: Vec<f64> = Vec::new();
    for i in 0..=n_coarse {
        let s = len * i as f64 / n_coarse as f64;
        let p = ev.pose(s);
        if (p.x - q[0]).hypot(p.y - q[1]) <= SEARCH + 2.0 {
            let a = len * i.saturating_sub(1) as f64 / n_coarse as f64;
            let b = len * (i + 1).min(n_coarse) as f64 / n_coarse as f64;
            let n = ((b - a) / 0.01).ceil().max(1.0) as usize;
            for j in 0..=n {
                fine.push(a + (b - a) * j as f64 / n as f64);
            }
        }
    }
    fine.sort_by(f64::total_cmp);
    fine.dedup();
    for w in fine.windows(2) {
        let (ga, _) = g_at(ev, q, w[0]);
        let (gb, _) = g_at(ev, q, w[1]);
        if ga == 0.0 || (ga < 0.0) != (gb < 0.0) {
            let (mut lo, mut hi) = (w[0], w[1]);
            for _ in 0..80 {
                let mid = 0.5 * (lo + hi);
                let (gm, _) = g_at(ev, q, mid);
                if (gm < 0.0) == (ga < 0.0) && ga != 0.0 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            let s = if ga == 0.0 { w[0] } else { 0.5 * (lo + hi) };
            let (g, t) = g_at(ev, q, s);
            let surf = ev.sth_to_xyz(s, t, 0.0);
            let res = (surf[0] - q[0]).hypot(surf[1] - q[1]);
            // A sign change across a jump between records is not a solution.
            if t.abs() <= SEARCH && res < 1e-4 && g.is_finite() {
                out.push((s, t));
            }
        }
    }
    // Roots exactly at the ends, which a sign test between samples can miss.
    for s in [0.0, len] {
        let (_, t) = g_at(ev, q, s);
        let surf = ev.sth_to_xyz(s, t, 0.0);
        if t.abs() <= SEARCH
            && (surf[0] - q[0]).hypot(surf[1] - q[1]) < 1e-9
            && !out.iter().any(|o| (o.0 - s).abs() < 1e-6)
        {
            out.push((s, t));
        }
    }
    out.sort_by(|a, b| a.1.abs().total_cmp(&b.1.abs()));
    out
}

#[roadscan_tests::needs_shared_data]
#[test]
fn xy_to_st_inverts_sth_to_xyz_on_every_road() {
    let mut rng = Lcg(20261121);
    let (mut n_queries, mut n_other_nearer) = (0usize, 0usize);
    let mut worst = 0.0f64;
    let maps = roadscan_tests::sample_maps();
    if maps.is_empty() {
        return; // no shared data outside CI (a message was printed)
    }
    for path in maps {
        let odr = opendrive::read_file(&path).unwrap_or_else(|e| panic!("{e}"));
        let per_road = if odr.roads.len() > 40 { 3 } else { 12 };
        for road in &odr.roads {
            let ev = RoadEval::new(road);
            let len = road.length;
            let mut queries: Vec<(f64, f64)> =
                (0..per_road).map(|_| (rng.next() * len, (2.0 * rng.next() - 1.0) * MAX_T)).collect();
            // The ends, and just inside them.
            queries.extend([(0.0, 3.0), (len.min(1e-3), -7.5), ((len - 1e-3).max(0.0), 12.0), (len, -1.5)]);
            for (s, t) in queries {
                let xyz = ev.sth_to_xyz(s, t, 0.0);
                let q = [xyz[0], xyz[1]];
                let got = ev.xy_to_st(q[0], q[1], SEARCH);
                let brute = brute_force(&ev, q);
                let where_ = format!("{} road {} (s {s}, t {t})", path.display(), road.id);
                let best = brute.first().copied();
                // The original point is a solution, so the nearest one is at most |t| away.
                let Some((bs, bt)) = best else {
                    // Only possible where the point sits in a gap between records at an end.
                    assert!(
                        got.is_none() || (got.is_some_and(|g| g.residual < 1e-4)),
                        "{where_}: brute force found nothing, we found {got:?}"
                    );
                    continue;
                };
                let got = got.unwrap_or_else(|| panic!("{where_}: no solution, brute force has ({bs}, {bt})"));
                n_queries += 1;
                let original_is_nearest = (bs - s).abs() < 1e-5 && (bt - t).abs() < 1e-5;
                let (ws, wt) = if original_is_nearest { (s, t) } else { (bs, bt) };
                if !original_is_nearest {
                    n_other_nearer += 1;
                }
                // Ties in |t| between two solutions (symmetric crests, U-turns): either is
                // right if it is one of the brute force's solutions.
                let tie = brute.iter().filter(|b| (b.1.abs() - bt.abs()).abs() < 1e-6).count() > 1;
                if tie && brute.iter().any(|b| (b.0 - got.s).abs() < TOL && (b.1 - got.t).abs() < TOL) {
                    continue;
                }
                let d = (got.s - ws).abs().max((got.t - wt).abs());
                worst = worst.max(d);
                assert!(d < TOL, "{where_}: got ({}, {}), expected ({ws}, {wt}); brute force {brute:?}", got.s, got.t);
                // Every candidate we list is a true solution, and the brute force's are all listed.
                let all = ev.xy_to_st_all(q[0], q[1], SEARCH);
                for c in &all {
                    let p = ev.sth_to_xyz(c.s, c.t, 0.0);
                    assert!((p[0] - q[0]).hypot(p[1] - q[1]) < 1e-4, "{where_}: candidate {c:?} is not a solution");
                }
                for &(bs, bt) in brute.iter().filter(|b| b.1.abs() < SEARCH - 0.5) {
                    assert!(
                        all.iter().any(|c| (c.s - bs).abs() < 1e-4 && (c.t - bt).abs() < 1e-4),
                        "{where_}: brute-force solution ({bs}, {bt}) missing from {all:?}"
                    );
                }
            }
        }
    }
    eprintln!("{n_queries} queries, {n_other_nearer} where another part of the road was nearer; worst {worst:e} m");
    assert!(n_queries > 1000);
}
