//! The walls of a designed scene for `roadscan sim`: its raised verges as OpenDRIVE lane
//! heights (so the simulation's curbs stand where the designed surface steps up), and its
//! building fronts as facade walls.

use opendrive::model::LaneHeight;
use simulation::{WallKind, WallLine};

/// Spacing of a facade's stations, m (a chord of 0.5 m on the demo's 60 m arc strays 0.5 mm).
const FACADE_STEP: f64 = 0.5;

/// Gives each verge of `road` (the scene's road) that the scene raises by its curb height
/// (see [`sim::Scene::borders`]: a verge that starts with a sidewalk, walking or curb lane)
/// `<height>` records of that height on all its lanes, where they have none.
pub fn raise_verges(scene: &sim::Scene, road: &mut opendrive::Road) {
    let h = scene.surface.curb_height;
    if !(h.is_finite() && h > 0.0) {
        return;
    }
    let walkway = |k: Option<&str>| matches!(k, Some("sidewalk" | "walking" | "curb"));
    let road_lane = |k: Option<&str>| !(walkway(k) || matches!(k, Some("border" | "none") | None));
    for sec in &mut road.lanes.lane_sections {
        for side in [&mut sec.left, &mut sec.right].into_iter().flatten() {
            let mut lanes: Vec<&mut opendrive::model::Lane> = side.lanes.iter_mut().filter(|l| l.id != 0).collect();
            lanes.sort_by_key(|l| l.id.abs());
            let beyond = lanes.iter().rposition(|l| road_lane(l.kind.as_deref())).map_or(0, |i| i + 1);
            if !lanes.get(beyond).is_some_and(|l| walkway(l.kind.as_deref())) {
                continue;
            }
            for l in lanes.into_iter().skip(beyond) {
                if l.heights.is_empty() {
                    l.heights.push(LaneHeight { s_offset: 0.0, inner: h, outer: h, ..Default::default() });
                }
            }
        }
    }
}

/// The scene's building fronts (at t = `facades.left` and `facades.right` over its stations,
/// standing on the ground there, `facades.height` tall) as `wall:facade:0` (left) and
/// `wall:facade:1` (right), in the road's file frame.
pub fn facades(scene: &sim::Scene) -> Vec<WallLine> {
    let road = scene.road();
    let (s0, s1) = scene.s_range;
    let f = scene.facades;
    if !(s1 > s0 && f.height.is_finite() && f.height > 0.0) {
        return Vec::new();
    }
    let n = ((s1 - s0) / FACADE_STEP).ceil().max(1.0) as usize;
    let mut out = Vec::new();
    for (k, t) in [(0, f.left), (1, f.right)] {
        if !(t.is_finite() && t != 0.0) {
            continue;
        }
        let (mut points, mut z) = (Vec::with_capacity(n + 1), Vec::with_capacity(n + 1));
        for i in 0..=n {
            let s = (s0 + (s1 - s0) * i as f64 / n as f64).min(s1);
            let p = road.pose(s);
            let (sn, cs) = p.hdg.sin_cos();
            let g = sim::scanner::ground_z(scene, &road, s, t);
            points.push([p.x - t * sn, p.y + t * cs]);
            z.push([g, g + f.height]);
        }
        out.push(WallLine { id: format!("wall:facade:{k}"), kind: WallKind::Facade, points, z });
    }
    out
}
