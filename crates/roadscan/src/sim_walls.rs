//! The walls of the worlds of `roadscan sim` beyond the road file's curbs: a designed
//! scene's raised verges as OpenDRIVE lane heights (so the simulation's curbs stand where the
//! designed surface steps up) and its building fronts as facade walls; a build's voxels as the
//! outlines of the columns that stand up beside the road (roadside) and of those that stand on
//! its lanes (obstacles; [`built_walls`] has the rules).

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

/// Smallest height over the local ground, m, at which an occupied voxel makes its column a
/// roadside wall (a voxel's centre over the ground voxel's centre).
pub const ROADSIDE_MIN_HEIGHT: f64 = 0.3;
/// Most wall pieces (of at most [`simulation::walls::MAX_PIECE`] m) the roadside and the
/// obstacles on the road give together; the obstacles and the outlines nearest the road are
/// kept first.
pub const MAX_ROADSIDE_PIECES: usize = 200_000;
/// Highest the bottom of a column's lowest voxel over the lanes may lie over the road's surface,
/// less one voxel, for the column to stand on the road (an obstacle), m; higher up it is an
/// overhang.
pub const OBSTACLE_MAX_CLEARANCE: f64 = 0.5;
/// Farthest a column's ground is looked for around it when it has none of its own, in voxels.
pub const GROUND_CELLS: i64 = 4;
/// Farthest from the reference line a column is looked up on the road, m.
const ROAD_REACH: f64 = 500.0;

/// A column of voxels: its lowest and highest roadside layer, its surface layers.
#[derive(Debug, Default)]
struct Column {
    lo: Option<i64>,
    hi: i64,
    surface: Vec<i64>,
}

/// A closed outline: its group, its corners (the first again at the end) and their bands.
type Loop = (u32, Vec<(i64, i64)>, Vec<(i64, i64)>);
/// A closed outline as [`Loop`], with its group's nearest distance from the line for the group.
type Outline = (f64, Vec<(i64, i64)>, Vec<(i64, i64)>);

/// A boundary edge of a standing column, the column on its left: from corner `a` one cell
/// in direction `dir` (0 +i, 1 +j, 2 -i, 3 -j); `band` the column's lowest and highest
/// roadside layer.
#[derive(Debug, Clone, Copy)]
struct Edge {
    a: (i64, i64),
    dir: u8,
    band: (i64, i64),
    group: u32,
}

impl Edge {
    fn b(&self) -> (i64, i64) {
        let (i, j) = self.a;
        match self.dir {
            0 => (i + 1, j),
            1 => (i, j + 1),
            2 => (i - 1, j),
            _ => (i, j - 1),
        }
    }
}

/// The standing things of a built world as walls, in the file frame of `odr` (whose road
/// `road` is driven): beside the lanes its roadside (`wall:roadside:<k>`, kind
/// [`WallKind::Roadside`]), on them what stands on the carriageway (`obstacle:built:<k>`, kind
/// [`WallKind::Obstacle`]):
///
/// - A column is the voxels (i, j, *) of one plan cell. Its ground is its highest voxel of a
///   surface class ([`crate::world_source::SURFACE_CLASSES`]: ground, road, marking,
///   sidewalk, curb) not above its lowest voxel of another class; else the lowest such ground
///   of the columns within 1 m (at most [`GROUND_CELLS`] cells); else its own lowest voxel.
/// - It stands when a voxel of another class has its centre [`ROADSIDE_MIN_HEIGHT`] or more
///   above the ground voxel's centre (with 1 m voxels: something in a layer above the
///   ground's).
/// - A standing column whose centre does not lie over a lane of the road that is not a
///   walkway (`sidewalk`, `walking`, `curb`, or `border` / `none`) is roadside: poles on a
///   sidewalk, fronts, trees.
/// - A standing column over such a lane reaches down when the bottom of its lowest voxel of
///   another class lies at most [`OBSTACLE_MAX_CLEARANCE`] plus a voxel over the road's
///   OpenDRIVE surface at its centre (a car's lowest 25 cm may share a voxel with the road and
///   lose it to the road's class, hence the voxel); its band then reaches down to the bottom
///   of the voxel layer that holds the surface: nothing passes under it. The standing columns
///   over the lanes joined by a side to one that reaches down are obstacles: parked cars
///   (whose roof hides all below it, so only their sides reach down), bollards, people. The
///   other groups are overhangs (a tree crown, a sign) that a car drives under, and the road's
///   paint is of a surface class: both are no walls. With voxels of size d a thing whose
///   bottom is less than 2 d + the clearance over the surface may count as reaching down
///   (2.5 m with 1 m voxels, 1 m with 0.25 m ones); a column's band still starts at its own
///   lowest voxel, so a crown joined to a person under it stays over a car's roof.
/// - Standing columns of one kind joined by a side (4-neighbours) are a group; the outer edges
///   of its cells (a side with no standing neighbour of its kind), merged into polylines that
///   run round the group (holes too), are its walls, so a car half on the sidewalk is an
///   obstacle closed on the lane's side and a roadside outline beyond. A wall point's height
///   band is the columns' beside it: from the bottom of their lowest voxel of a non-surface
///   class to the top of their highest, so a tree crown is over a car's roof, not in its way.
/// - At most [`MAX_ROADSIDE_PIECES`] pieces: the obstacles first, then the groups nearest the
///   reference line.
///
/// Ids count each kind's lines in the order of their first cell (by j, then i); obstacles come
/// first in the list.
pub fn built_walls(vox: &crate::world_source::BuildVoxels, odr: &opendrive::OpenDrive, road: usize) -> Vec<WallLine> {
    use std::collections::HashMap;
    let size = vox.size;
    let Some(road) = odr.roads.get(road) else { return Vec::new() };
    if !(size.is_finite() && size > 0.0) || vox.origin.iter().any(|v| !v.is_finite()) {
        return Vec::new();
    }
    let mut cols: HashMap<(i64, i64), Column> = HashMap::new();
    for &([i, j, k], class) in &vox.cells {
        let c = cols.entry((i, j)).or_default();
        if crate::world_source::SURFACE_CLASSES.contains(&class) {
            c.surface.push(k);
        } else {
            c.hi = if c.lo.is_some() { c.hi.max(k) } else { k };
            c.lo = Some(c.lo.map_or(k, |lo| lo.min(k)));
        }
    }
    // Each column's own ground layer.
    let own_ground = |c: &Column| match c.lo {
        Some(lo) => c.surface.iter().copied().filter(|&k| k <= lo).max(),
        None => c.surface.iter().copied().max(),
    };
    let grounds: HashMap<(i64, i64), i64> =
        cols.iter().filter_map(|(key, c)| own_ground(c).map(|g| (*key, g))).collect();
    let reach = GROUND_CELLS.min(((1.0 / size).ceil() as i64).max(1));
    let eval = opendrive::RoadEval::new(road);
    let place = odr.header.offset.map(|o| o.placement());
    let to_file = |p: [f64; 3]| place.as_ref().map_or(p, |pl| pl.to_file(p));
    let z_off = odr.header.offset.map_or(0.0, |o| o.z);
    let z = |k: i64| vox.origin[2] + k as f64 * size - z_off;
    let unpaved = |k: Option<&str>| matches!(k, Some("sidewalk" | "walking" | "curb" | "border" | "none") | None);
    // The standing columns of each kind (sorted by j, then i) with their bands and distance
    // from the line.
    let mut keys: Vec<(i64, i64)> = cols.iter().filter(|(_, c)| c.lo.is_some()).map(|(k, _)| *k).collect();
    keys.sort_unstable_by_key(|&(i, j)| (j, i));
    let (mut roadside, mut over) = (Columns::default(), Columns::default());
    let mut reaching = Vec::new();
    for (i, j) in keys {
        let c = &cols[&(i, j)];
        let Some(lo) = c.lo else { continue };
        let ground = grounds.get(&(i, j)).copied().or_else(|| {
            let mut g: Option<i64> = None;
            for dj in -reach..=reach {
                for di in -reach..=reach {
                    if let Some(&k) = grounds.get(&(i + di, j + dj)) {
                        g = Some(g.map_or(k, |g| g.min(k)));
                    }
                }
            }
            g
        });
        let ground = ground.unwrap_or(lo);
        if ((c.hi - ground) as f64) * size < ROADSIDE_MIN_HEIGHT - 1e-9 {
            continue;
        }
        let centre = to_file([vox.origin[0] + (i as f64 + 0.5) * size, vox.origin[1] + (j as f64 + 0.5) * size, 0.0]);
        let mut distance = f64::INFINITY;
        if let Some(st) = eval.xy_to_st(centre[0], centre[1], ROAD_REACH) {
            distance = st.t.abs();
            if over_lanes(&eval, st.s, st.t, unpaved) {
                // Whether it reaches down to the road's surface (no surface: it does not).
                let surface = eval.sth_to_xyz(st.s, st.t, 0.0)[2];
                let layer = ((surface + z_off - vox.origin[2]) / size).floor();
                let down = layer.is_finite() && layer.abs() < 1e15 && z(lo) <= surface + OBSTACLE_MAX_CLEARANCE + size;
                let band = if down { (lo.min(layer as i64), c.hi) } else { (lo, c.hi) };
                over.band.insert((i, j), (band, distance));
                over.order.push((i, j));
                if down {
                    reaching.push((i, j));
                }
                continue;
            }
        }
        roadside.band.insert((i, j), ((lo, c.hi), distance));
        roadside.order.push((i, j));
    }
    // The obstacles: the groups over the lanes with a column that reaches down.
    let mut obstacles = Columns::default();
    let mut stack = reaching;
    let mut seen: std::collections::HashSet<(i64, i64)> = stack.iter().copied().collect();
    while let Some((i, j)) = stack.pop() {
        for n in [(i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)] {
            if over.band.contains_key(&n) && seen.insert(n) {
                stack.push(n);
            }
        }
    }
    for key in over.order {
        if seen.contains(&key) {
            obstacles.band.insert(key, over.band[&key]);
            obstacles.order.push(key);
        }
    }
    let mut budget = MAX_ROADSIDE_PIECES;
    let mut out = Vec::new();
    for (columns, prefix, kind) in
        [(obstacles, "obstacle:built", WallKind::Obstacle), (roadside, "wall:roadside", WallKind::Roadside)]
    {
        let loops = outlines(&columns);
        // The cap: groups nearest the line first, then in order.
        let pieces = |c: &[(i64, i64)]| -> usize {
            c.windows(2)
                .map(|w| {
                    let len = ((w[1].0 - w[0].0).abs() + (w[1].1 - w[0].1).abs()) as f64 * size;
                    (len / simulation::walls::MAX_PIECE).ceil().max(1.0) as usize
                })
                .sum()
        };
        let mut rank: Vec<usize> = (0..loops.len()).collect();
        rank.sort_by(|&a, &b| loops[a].0.total_cmp(&loops[b].0).then(a.cmp(&b)));
        let mut keep = vec![false; loops.len()];
        for n in rank {
            let p = pieces(&loops[n].1);
            if p > budget {
                break;
            }
            budget -= p;
            keep[n] = true;
        }
        out.extend(loops.into_iter().zip(keep).filter(|(_, k)| *k).enumerate().map(|(k, ((_, corners, bands), _))| {
            WallLine {
                id: format!("{prefix}:{k}"),
                kind,
                points: corners
                    .iter()
                    .map(|&(i, j)| {
                        let p = to_file([vox.origin[0] + i as f64 * size, vox.origin[1] + j as f64 * size, 0.0]);
                        [p[0], p[1]]
                    })
                    .collect(),
                z: bands.iter().map(|&(lo, hi)| [z(lo), z(hi + 1)]).collect(),
            }
        }));
    }
    out
}

/// Standing columns of one kind: each one's band (lowest and highest layer of a non-surface
/// class) and distance from the reference line, and their order (by j, then i).
#[derive(Debug, Default)]
struct Columns {
    band: std::collections::HashMap<(i64, i64), ((i64, i64), f64)>,
    order: Vec<(i64, i64)>,
}

/// The closed outlines of the groups of `columns` (see [`built_walls`]): each with its
/// group's nearest distance from the line, its corners (the first again at the end) and
/// their bands, in the order of the groups' first edges.
fn outlines(columns: &Columns) -> Vec<Outline> {
    use std::collections::HashMap;
    let (standing, order) = (&columns.band, &columns.order);
    // Groups: 4-connected, numbered in the order of their first column.
    let mut group: HashMap<(i64, i64), u32> = HashMap::new();
    let mut nearest: Vec<f64> = Vec::new();
    for &start in order {
        if group.contains_key(&start) {
            continue;
        }
        let g = nearest.len() as u32;
        let mut d = f64::INFINITY;
        let mut stack = vec![start];
        group.insert(start, g);
        while let Some((i, j)) = stack.pop() {
            d = d.min(standing[&(i, j)].1);
            for n in [(i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)] {
                if standing.contains_key(&n) && !group.contains_key(&n) {
                    group.insert(n, g);
                    stack.push(n);
                }
            }
        }
        nearest.push(d);
    }
    // The outer edges, counter-clockwise round each column (its inside on the left).
    let mut edges: Vec<Edge> = Vec::new();
    let mut from: HashMap<(i64, i64), Vec<u32>> = HashMap::new();
    for &(i, j) in order {
        let band = standing[&(i, j)].0;
        let g = group[&(i, j)];
        for (n, a, dir) in [
            ((i, j - 1), (i, j), 0u8),
            ((i + 1, j), (i + 1, j), 1),
            ((i, j + 1), (i + 1, j + 1), 2),
            ((i - 1, j), (i, j + 1), 3),
        ] {
            if !standing.contains_key(&n) {
                from.entry(a).or_default().push(edges.len() as u32);
                edges.push(Edge { a, dir, band, group: g });
            }
        }
    }
    // Loops: from each edge to the one leaving its end, turning left where two leave (two
    // columns touching at a corner only are not joined there).
    let next = |e: &Edge| -> Option<u32> {
        let out = from.get(&e.b())?;
        [(e.dir + 1) % 4, e.dir, (e.dir + 3) % 4]
            .into_iter()
            .find_map(|d| out.iter().copied().find(|&n| edges[n as usize].dir == d))
    };
    let mut used = vec![false; edges.len()];
    let mut loops: Vec<Loop> = Vec::new();
    for first in 0..edges.len() {
        if used[first] {
            continue;
        }
        let mut cycle = Vec::new();
        let mut e = first as u32;
        while !used[e as usize] {
            used[e as usize] = true;
            cycle.push(e);
            match next(&edges[e as usize]) {
                Some(n) => e = n,
                None => break,
            }
        }
        let key = |n: u32| (edges[n as usize].dir, edges[n as usize].band);
        // Start where a run starts (the direction or band changes), merge each run.
        let m = cycle.len();
        let Some(s) = (0..m).find(|&k| key(cycle[k]) != key(cycle[(k + m - 1) % m])) else { continue };
        cycle.rotate_left(s);
        // Runs: (first corner, band); a corner's band is the two runs' it joins.
        let mut runs: Vec<((i64, i64), (i64, i64))> = Vec::new();
        for (k, &n) in cycle.iter().enumerate() {
            if k == 0 || key(n) != key(cycle[k - 1]) {
                runs.push((edges[n as usize].a, edges[n as usize].band));
            }
        }
        let r = runs.len();
        let mut corners: Vec<(i64, i64)> = runs.iter().map(|x| x.0).collect();
        let mut bands: Vec<(i64, i64)> = (0..r)
            .map(|k| {
                let (a, b) = (runs[k].1, runs[(k + r - 1) % r].1);
                (a.0.min(b.0), a.1.max(b.1))
            })
            .collect();
        corners.push(corners[0]);
        bands.push(bands[0]);
        loops.push((edges[first].group, corners, bands));
    }
    loops.into_iter().map(|(g, corners, bands)| (nearest[g as usize], corners, bands)).collect()
}

/// Whether (s, t) lies over a lane of the road (between its borders) whose type `unpaved`
/// does not accept; nothing beyond the road's ends is over it.
fn over_lanes(eval: &opendrive::RoadEval, s: f64, t: f64, unpaved: impl Fn(Option<&str>) -> bool) -> bool {
    if !(s > 0.0 && s < eval.length() && t.is_finite()) {
        return false;
    }
    let Some(sec) = eval.lane_section(s) else { return false };
    let borders = eval.lane_borders(s);
    let offset = eval.lane_offset(s);
    borders.iter().any(|&(id, outer)| {
        let inner =
            if id.abs() == 1 { Some(offset) } else { borders.iter().find(|b| b.0 == id - id.signum()).map(|b| b.1) };
        let kind = sec.lanes().find(|l| l.id == id).and_then(|l| l.kind.as_deref());
        match inner {
            Some(inner) if !unpaved(kind) => t >= inner.min(outer) && t <= inner.max(outer),
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world_source::BuildVoxels;

    /// A straight road along +x from the origin: lanes 1 and -1 driving (3.5 m), -2 a
    /// sidewalk (2 m).
    fn road() -> opendrive::OpenDrive {
        opendrive::read(
            r#"<OpenDRIVE><header revMajor="1" revMinor="8"/>
            <road id="r" length="100" junction="-1"><planView>
            <geometry s="0" x="0" y="0" hdg="0" length="100"><line/></geometry></planView>
            <lanes><laneSection s="0">
            <left><lane id="1" type="driving"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></left>
            <center><lane id="0" type="none"/></center>
            <right><lane id="-1" type="driving"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane>
            <lane id="-2" type="sidewalk"><width sOffset="0" a="2" b="0" c="0" d="0"/></lane></right>
            </laneSection></lanes></road></OpenDRIVE>"#,
        )
        .expect("road")
    }

    /// 1 m voxels over ground at layer 0 (class 2) everywhere but under the hidden column:
    /// an L of facade columns, two columns touching at a corner only, a tree crown, a column
    /// whose ground is hidden, a pole on the sidewalk, a car over lane -1 (four columns, one
    /// of them over the sidewalk, and one more seen only at its roof, 2 m up), a crown over
    /// lane 1 (its bottom 2 m up) and a low thing in the ground's layer.
    fn voxels() -> BuildVoxels {
        let mut cells = Vec::new();
        for j in -12..12 {
            for i in 0..40 {
                if (i, j) != (30, -8) {
                    cells.push(([i, j, 0], 2));
                }
            }
        }
        let column = |cells: &mut Vec<([i64; 3], u8)>, i: i64, j: i64, k: std::ops::RangeInclusive<i64>, class: u8| {
            cells.extend(k.map(|k| ([i, j, k], class)));
        };
        for i in 10..=13 {
            column(&mut cells, i, -8, 1..=3, 6);
        }
        column(&mut cells, 13, -9, 1..=2, 6);
        column(&mut cells, 2, -10, 1..=2, 6);
        column(&mut cells, 3, -11, 1..=2, 6);
        column(&mut cells, 20, -10, 4..=6, 5);
        column(&mut cells, 30, -8, 3..=6, 6);
        column(&mut cells, 15, -5, 0..=5, 66);
        column(&mut cells, 8, -2, 0..=1, 67);
        column(&mut cells, 8, -3, 0..=1, 67);
        column(&mut cells, 8, -4, 0..=1, 67);
        column(&mut cells, 8, -5, 0..=1, 67);
        column(&mut cells, 9, -2, 2..=2, 67);
        column(&mut cells, 25, 2, 2..=4, 5);
        column(&mut cells, 5, -8, 0..=0, 66);
        BuildVoxels { size: 1.0, origin: [0.0, 0.0, 0.0], cells }
    }

    /// The outlines: one closed polyline per group, in the order of their first cells, corners
    /// where the direction or the band changes, the bands of the columns beside each corner;
    /// the car over lane -1 is an obstacle (its column over the sidewalk roadside), the crown
    /// over lane 1 and the low thing give none.
    #[test]
    fn roadside_columns_become_their_outlines() {
        let all = built_walls(&voxels(), &road(), 0);
        let square = |i: f64, j: f64| vec![[i, j], [i + 1.0, j], [i + 1.0, j + 1.0], [i, j + 1.0], [i, j]];
        // The car: its three columns over lane -1 (borders at 0 and -3.5 m, the third's
        // centre on the outer one), from the bottom of layer 0 to the top of layer 1, and the
        // roof's column joined to them (it does not reach down itself: its band is its own).
        let obstacles: Vec<&WallLine> = all.iter().filter(|w| w.kind == WallKind::Obstacle).collect();
        assert_eq!(obstacles.len(), 1, "{obstacles:?}");
        assert_eq!(obstacles[0].id, "obstacle:built:0");
        let car = [[8., -4.], [9., -4.], [9., -2.], [10., -2.], [10., -1.], [9., -1.], [8., -1.], [8., -4.]];
        assert_eq!(obstacles[0].points, car);
        let z = &obstacles[0].z;
        assert_eq!(z, &[[0., 2.], [0., 2.], [0., 3.], [2., 3.], [2., 3.], [0., 3.], [0., 2.], [0., 2.]]);
        // Alone, the roof's column is an overhang.
        let mut roof = voxels();
        roof.cells.retain(|c| !(c.1 == 67 && c.0[0] == 8));
        assert!(built_walls(&roof, &road(), 0).iter().all(|w| w.kind != WallKind::Obstacle));
        let walls: Vec<WallLine> = all.into_iter().filter(|w| w.kind == WallKind::Roadside).collect();
        let ids: Vec<&str> = walls.iter().map(|w| w.id.as_str()).collect();
        assert_eq!(ids, (0..7).map(|k| format!("wall:roadside:{k}")).collect::<Vec<_>>());
        // The corner pair: two squares.
        assert_eq!(walls[0].points, square(3.0, -11.0));
        assert_eq!(walls[1].points, square(2.0, -10.0));
        // The crown: from the bottom of layer 4 to the top of layer 6.
        assert_eq!(walls[2].points, square(20.0, -10.0));
        assert!(walls[2].z.iter().all(|z| *z == [4.0, 7.0]), "{:?}", walls[2].z);
        // The L, its short column 3 m tall, the others 4 m (layer 0 of ground under them).
        let l = [[13., -9.], [14., -9.], [14., -8.], [14., -7.], [10., -7.], [10., -8.], [13., -8.], [13., -9.]];
        assert_eq!(walls[3].points, l);
        let z: Vec<[f64; 2]> = walls[3].z.clone();
        assert_eq!(z, [[1., 3.], [1., 3.], [1., 4.], [1., 4.], [1., 4.], [1., 4.], [1., 4.], [1., 3.]]);
        // The column without ground of its own stands on its neighbours'.
        assert_eq!(walls[4].points, square(30.0, -8.0));
        assert_eq!(walls[4].z[0], [3.0, 7.0]);
        // The car's column over the sidewalk, and the pole there.
        assert_eq!(walls[5].points, square(8.0, -5.0));
        assert_eq!(walls[6].points, square(15.0, -5.0));
        // With 0.25 m voxels (moved 40 m right of the road, over no lane), one layer over
        // the ground is not enough (the car's column, and the low thing), two are.
        let mut fine = voxels();
        (fine.size, fine.origin) = (0.25, [0.0, -40.0, 0.0]);
        let n = built_walls(&fine, &road(), 0).len();
        assert_eq!(n, 8, "0.25 m voxels (the car's roof two layers up stands)");
        fine.cells.retain(|c| c.0 != [13, -9, 2] && c.0 != [2, -10, 2]);
        let thin = built_walls(&fine, &road(), 0);
        assert_eq!(thin.len(), 7, "one layer of 0.25 m over the ground does not stand");
    }

    /// Clutter's trees reach 1 to 2 m over the carriageway with their crowns' bottom 3 to 5 m
    /// up: with 0.25 m voxels a crown over lane -1 from 3 m (and one from 3 m over lane 1,
    /// touching a person 1.8 m tall standing under its edge) leaves the crown alone no wall; the
    /// person is an obstacle, with the crown joined to it above 3 m, so a car 1.5 m tall
    /// beside the person under the crown touches nothing and one against the person does.
    #[test]
    fn a_car_passes_under_an_overhanging_crown() {
        let mut cells = Vec::new();
        for j in -20..20 {
            for i in 0..80 {
                cells.push(([i, j, 0], 11));
            }
        }
        let column = |cells: &mut Vec<([i64; 3], u8)>, i: i64, j: i64, k: std::ops::RangeInclusive<i64>, class: u8| {
            cells.extend(k.map(|k| ([i, j, k], class)));
        };
        for i in 20..32 {
            for j in -10..-2 {
                column(&mut cells, i, j, 12..=20, 5);
            }
            for j in 2..10 {
                column(&mut cells, i + 20, j, 12..=20, 5);
            }
        }
        for i in 40..42 {
            column(&mut cells, i, 0, 1..=7, 69);
            column(&mut cells, i, 1, 1..=7, 69);
        }
        let vox = BuildVoxels { size: 0.25, origin: [0.0, 0.0, 0.0], cells };
        let walls = built_walls(&vox, &road(), 0);
        let ids: Vec<&str> = walls.iter().map(|w| w.id.as_str()).collect();
        assert_eq!(ids, ["obstacle:built:0"], "{walls:?}");
        let lines = simulation::Walls::new(walls);
        let car = |x: f64, y: f64| simulation::collide::Body {
            id: "car".into(),
            centre: [x, y],
            heading: 0.0,
            half: [2.25, 0.9],
            z: [0.0, 1.5],
            velocity: [0.0; 2],
        };
        let mut hits = Vec::new();
        // Under the crown over lane -1, and under the other one beside the person.
        for (x, y) in [(6.5, -1.6), (13.0, 1.7), (12.5, 2.0)] {
            lines.touching(&car(x, y), |_| true, &mut hits);
            assert!(hits.is_empty(), "a car at ({x}, {y}): {hits:?}");
        }
        lines.touching(&car(8.0, 0.2), |_| true, &mut hits);
        assert_eq!(hits.len(), 1, "a car against the person");
    }
}
