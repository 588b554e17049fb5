//! Walls: curbs and facades as plan polylines with a height band, tested against the moving
//! bodies through a plan grid.
//!
//! A [`WallLine`] is a polyline in plan (file frame) with a bottom and a top z at each point.
//! It is cut into pieces of at most [`MAX_PIECE`] m, each a plan segment with the height band
//! of its two ends (the lower bottom to the higher top). A body touches a piece when their
//! height bands overlap and the segment meets the body's rectangle (closed: touching counts);
//! it touches the line when it touches any of its pieces. Contacts are per line, so a body
//! sliding along a curb is one contact however many pieces it passes.
//!
//! The index: each piece is filed in the grid cell of its midpoint (square cells of at least
//! [`CELL`] m, larger when the walls' extent would need more than [`MAX_CELLS`] cells); a
//! body looks at the cells its plan box (grown by half a piece) covers, so a tick tests only
//! the walls near each body.
//!
//! Walls of the road itself ([`curb_walls`]): at each station the height step across the
//! inner border of every lane, where
//! - either side has `<height>` records: the lane's `inner` height minus its inner
//!   neighbour's `outer` (the centre lane at 0), a wall where the step is 1 cm or more either
//!   way;
//! - else a walkway lane (`sidewalk`, `walking`, `curb`) whose inner neighbour is not one, with
//!   a `curb` road mark of a height on it or on that neighbour: a curb of that height (how the
//!   demo road marks its curbs);
//! - else a `curb` lane whose inner neighbour is not a walkway: a curb of
//!   [`DEFAULT_CURB_HEIGHT`];
//! - and at the outer border of a lane that is no walkway, with a `curb` road mark of a height
//!   (the standard's place for a lane's mark; how `build` marks the curbs it finds), a curb of
//!   that height where that border has no step already.
//!
//! The wall stands on the road's OpenDRIVE surface at the border (`RoadEval::sth_to_xyz`,
//! stations every [`CURB_STEP`] m and at each lane section's start), from the lower side to
//! the higher. Its id is `wall:curb:<road>:<lane>:<k>`, `<lane>` the lane on the outer side
//! of the step (one past the outermost lane for a curb at its outer border), k counting that
//! border's runs of stations with a step from 0. Facades come from the world (a designed scene's building
//! fronts) as lines of their own (`wall:facade:<k>`), and so does a built world's roadside
//! (the outlines of the voxel columns standing beside the road, `wall:roadside:<k>`) and what
//! stands on its carriageway (the outlines of the groups of voxel columns over the lanes that
//! reach down to the road surface, `obstacle:built:<k>`, kind [`WallKind::Obstacle`]).
//!
//! The road's continuous objects (an `<object>`'s `<repeat>` of distance 0: guard rails,
//! walls, fences, barriers) are walls too ([`object_walls`], `wall:object:<id>`), and so are
//! the objects with an `<outline>` (`<cornerRoad>` or `<cornerLocal>` corners), along it.
//!
//! Pedestrians step over curbs: a curb is an obstacle to the ego, cars and boxes; a facade, a
//! continuous object, an outline, a roadside wall or a built obstacle is one to every body.

use crate::collide::Body;
use crate::surface::RoadSurface;

/// Longest piece a line is cut into, m.
pub const MAX_PIECE: f64 = 1.0;
/// Smallest grid cell, m.
pub const CELL: f64 = 4.0;
/// Most grid cells.
pub const MAX_CELLS: usize = 1 << 20;
/// Spacing of the stations a curb is sampled at, m (a chord of 0.5 m on a 10 m radius strays
/// 3 mm from the arc).
pub const CURB_STEP: f64 = 0.5;
/// Height of a `curb` lane without a height record or a curb mark's height, m.
pub const DEFAULT_CURB_HEIGHT: f64 = 0.12;
/// The smallest height step that is a wall, m.
pub const MIN_STEP: f64 = 0.01;
/// Most stations a curb is sampled at over the road (the spacing grows on longer roads).
const MAX_STATIONS: f64 = 400_000.0;

/// What a wall is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WallKind {
    /// A curb (a height step between lanes): pedestrians step over it.
    Curb,
    /// A building front.
    Facade,
    /// A continuous object of the road (an `<object>`'s `<repeat>` of distance 0: a guard
    /// rail, wall, fence, barrier), or an object's `<outline>`.
    Object,
    /// Something standing beside the road that a survey found (a built world's roadside
    /// voxels: building fronts, walls, poles, trees, parked things).
    Roadside,
    /// Something standing on the carriageway that a survey found (a built world's voxel
    /// columns over the lanes, in groups that reach down to the road surface: parked cars,
    /// bollards, people).
    Obstacle,
}

/// A wall: a plan polyline with its height band at each point.
#[derive(Debug, Clone, PartialEq)]
pub struct WallLine {
    /// Its id (`wall:curb:<road>:<lane>:<k>`, `wall:facade:<k>`, `wall:roadside:<k>`,
    /// `obstacle:built:<k>`, `wall:object:<id>`).
    pub id: String,
    /// What it is.
    pub kind: WallKind,
    /// Plan points, file frame, m.
    pub points: Vec<[f64; 2]>,
    /// Bottom and top z at each point, m.
    pub z: Vec<[f64; 2]>,
}

/// A piece of a line.
#[derive(Debug, Clone, Copy)]
struct Piece {
    a: [f64; 2],
    b: [f64; 2],
    /// Plan box.
    lo: [f64; 2],
    hi: [f64; 2],
    z: [f64; 2],
    line: u32,
}

/// Where a body touches a wall line.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WallHit {
    /// The line's index in [`Walls::lines`].
    pub line: usize,
    /// The middle of the stretch of the line inside the body's rectangle (the pieces' stretches
    /// weighted by their lengths), plan; z the higher of the body's and the wall's bottoms.
    pub position: [f64; 3],
}

/// Wall lines and their grid.
#[derive(Debug, Clone, Default)]
pub struct Walls {
    lines: Vec<WallLine>,
    pieces: Vec<Piece>,
    origin: [f64; 2],
    cell: f64,
    dims: [usize; 2],
    /// Pieces of cell i: `order[starts[i]..starts[i + 1]]`.
    starts: Vec<u32>,
    order: Vec<u32>,
}

impl Walls {
    /// The walls of `lines` (points that are not finite, and lines of fewer than two points
    /// or with a z per point missing, are left out).
    pub fn new(lines: Vec<WallLine>) -> Walls {
        let lines: Vec<WallLine> = lines
            .into_iter()
            .filter(|l| l.points.len() >= 2 && l.z.len() == l.points.len())
            .filter(|l| l.points.iter().flatten().chain(l.z.iter().flatten()).all(|v| v.is_finite()))
            .collect();
        let mut pieces = Vec::new();
        for (i, l) in lines.iter().enumerate() {
            for k in 1..l.points.len() {
                let (a, b, za, zb) = (l.points[k - 1], l.points[k], l.z[k - 1], l.z[k]);
                let len = (b[0] - a[0]).hypot(b[1] - a[1]);
                let n = (len / MAX_PIECE).ceil().clamp(1.0, 1e6) as usize;
                let at = |f: f64| {
                    (
                        [a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])],
                        [za[0] + f * (zb[0] - za[0]), za[1] + f * (zb[1] - za[1])],
                    )
                };
                for j in 0..n {
                    let ((p, zp), (q, zq)) = (at(j as f64 / n as f64), at((j + 1) as f64 / n as f64));
                    pieces.push(Piece {
                        a: p,
                        b: q,
                        lo: [p[0].min(q[0]), p[1].min(q[1])],
                        hi: [p[0].max(q[0]), p[1].max(q[1])],
                        z: [zp[0].min(zq[0]).min(zp[1]), zp[1].max(zq[1]).max(zq[0])],
                        line: i as u32,
                    });
                }
            }
        }
        let mut w = Walls { lines, pieces, ..Walls::default() };
        w.index();
        w
    }

    fn index(&mut self) {
        let mid = |p: &Piece| [0.5 * (p.a[0] + p.b[0]), 0.5 * (p.a[1] + p.b[1])];
        let (mut lo, mut hi) = ([f64::INFINITY; 2], [f64::NEG_INFINITY; 2]);
        for p in &self.pieces {
            let m = mid(p);
            for k in 0..2 {
                lo[k] = lo[k].min(m[k]);
                hi[k] = hi[k].max(m[k]);
            }
        }
        if self.pieces.is_empty() {
            return;
        }
        let extent = [hi[0] - lo[0], hi[1] - lo[1]];
        let mut cell = CELL.max(((extent[0] + CELL) * (extent[1] + CELL) / MAX_CELLS as f64).sqrt());
        let dims = loop {
            let d = [(extent[0] / cell) as usize + 1, (extent[1] / cell) as usize + 1];
            if d[0].saturating_mul(d[1]) <= MAX_CELLS {
                break d;
            }
            cell *= 2.0;
        };
        let key = |m: [f64; 2]| {
            let i = (((m[0] - lo[0]) / cell) as usize).min(dims[0] - 1);
            let j = (((m[1] - lo[1]) / cell) as usize).min(dims[1] - 1);
            j * dims[0] + i
        };
        let mut counts = vec![0u32; dims[0] * dims[1] + 1];
        for p in &self.pieces {
            counts[key(mid(p)) + 1] += 1;
        }
        for i in 1..counts.len() {
            counts[i] += counts[i - 1];
        }
        let mut fill = counts.clone();
        let mut order = vec![0u32; self.pieces.len()];
        for (n, p) in self.pieces.iter().enumerate() {
            let k = key(mid(p));
            order[fill[k] as usize] = n as u32;
            fill[k] += 1;
        }
        (self.origin, self.cell, self.dims, self.starts, self.order) = (lo, cell, dims, counts, order);
    }

    /// The lines.
    pub fn lines(&self) -> &[WallLine] {
        &self.lines
    }

    /// Whether there are no walls.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The lines `body` touches (of the kinds `kinds` accepts), in order of the lines, added to
    /// `out` (cleared first).
    pub fn touching(&self, body: &Body, kinds: impl Fn(WallKind) -> bool, out: &mut Vec<WallHit>) {
        self.touching_sc(body, body.heading.sin_cos(), kinds, out);
    }

    /// [`Walls::touching`] with the body heading's (sin, cos) given.
    pub(crate) fn touching_sc(
        &self,
        body: &Body,
        (sn, cs): (f64, f64),
        kinds: impl Fn(WallKind) -> bool,
        out: &mut Vec<WallHit>,
    ) {
        out.clear();
        if self.pieces.is_empty() {
            return;
        }
        let [ha, hb] = body.half;
        let reach = [cs.abs() * ha + sn.abs() * hb, sn.abs() * ha + cs.abs() * hb];
        let (blo, bhi) = (
            [body.centre[0] - reach[0], body.centre[1] - reach[1]],
            [body.centre[0] + reach[0], body.centre[1] + reach[1]],
        );
        let pad = 0.5 * MAX_PIECE + 1e-9;
        let cell_of = |v: f64, k: usize| floor((v - self.origin[k]) / self.cell);
        let range = |k: usize| {
            let a = cell_of(blo[k] - pad, k).max(0.0);
            let b = cell_of(bhi[k] + pad, k).min(self.dims[k] as f64 - 1.0);
            (a <= b).then_some((a as usize, b as usize))
        };
        let (Some((i0, i1)), Some((j0, j1))) = (range(0), range(1)) else { return };
        let mut acc: Vec<Stretch> = Vec::new();
        for j in j0..=j1 {
            let row = j * self.dims[0];
            let (a, b) = (self.starts[row + i0] as usize, self.starts[row + i1 + 1] as usize);
            for &n in &self.order[a..b] {
                let p = &self.pieces[n as usize];
                if p.hi[0] < blo[0] || p.lo[0] > bhi[0] || p.hi[1] < blo[1] || p.lo[1] > bhi[1] {
                    continue;
                }
                if p.z[1] < body.z[0] || body.z[1] < p.z[0] {
                    continue;
                }
                let line = p.line as usize;
                if !kinds(self.lines[line].kind) {
                    continue;
                }
                let Some((t0, t1)) = clip(body, cs, sn, p.a, p.b) else { continue };
                let at = |t: f64| [p.a[0] + t * (p.b[0] - p.a[0]), p.a[1] + t * (p.b[1] - p.a[1])];
                let (q0, q1) = (at(t0), at(t1));
                let len = (q1[0] - q0[0]).hypot(q1[1] - q0[1]);
                let m = [0.5 * (q0[0] + q1[0]), 0.5 * (q0[1] + q1[1])];
                match acc.iter_mut().find(|e| e.line == line) {
                    Some(e) => {
                        e.weighted = [e.weighted[0] + m[0] * len, e.weighted[1] + m[1] * len];
                        e.length += len;
                        e.plain = [e.plain[0] + m[0], e.plain[1] + m[1]];
                        e.count += 1.0;
                        e.bottom = e.bottom.min(p.z[0]);
                    }
                    None => acc.push(Stretch {
                        line,
                        weighted: [m[0] * len, m[1] * len],
                        length: len,
                        plain: m,
                        count: 1.0,
                        bottom: p.z[0],
                    }),
                }
            }
        }
        acc.sort_by_key(|e| e.line);
        out.extend(acc.into_iter().map(|e| {
            let p = if e.length > 1e-12 {
                [e.weighted[0] / e.length, e.weighted[1] / e.length]
            } else {
                [e.plain[0] / e.count, e.plain[1] / e.count]
            };
            WallHit { line: e.line, position: [p[0], p[1], body.z[0].max(e.bottom)] }
        }));
    }
}

/// `x.floor()`, without the library call where x is small (the grid's cells): the same value
/// but for the sign of a zero (-0.0 gives 0.0).
fn floor(x: f64) -> f64 {
    if x.abs() < 4.0e15 {
        let f = x as i64 as f64;
        if f > x {
            f - 1.0
        } else {
            f
        }
    } else {
        x.floor()
    }
}

/// What a body's pieces of one line add up to.
struct Stretch {
    line: usize,
    /// Sum of (stretch midpoint x length) and of the lengths.
    weighted: [f64; 2],
    length: f64,
    /// Sum of the midpoints and their count (for stretches of no length: a corner touching).
    plain: [f64; 2],
    count: f64,
    /// The lowest bottom of the pieces.
    bottom: f64,
}

/// The part of segment a-b inside the body's closed rectangle, as parameters 0..1 along it
/// (Liang-Barsky in the body's frame); `None` when they do not meet.
fn clip(body: &Body, cs: f64, sn: f64, a: [f64; 2], b: [f64; 2]) -> Option<(f64, f64)> {
    let local = |p: [f64; 2]| {
        let d = [p[0] - body.centre[0], p[1] - body.centre[1]];
        [d[0] * cs + d[1] * sn, -d[0] * sn + d[1] * cs]
    };
    let (p, q) = (local(a), local(b));
    let d = [q[0] - p[0], q[1] - p[1]];
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for k in 0..2 {
        let h = body.half[k];
        // -h <= p + t d <= h
        for (num, den) in [(h - p[k], d[k]), (h + p[k], -d[k])] {
            if den.abs() < 1e-15 {
                if num < 0.0 {
                    return None;
                }
            } else {
                let t = num / den;
                if den > 0.0 {
                    t1 = t1.min(t);
                } else {
                    t0 = t0.max(t);
                }
            }
        }
    }
    (t0 <= t1).then_some((t0, t1))
}

/// A curb's points and their z bands so far.
type Run = (Vec<[f64; 2]>, Vec<[f64; 2]>);

/// The curbs of the road (see the module): one line per run of stations where a lane's inner
/// border has a height step.
pub fn curb_walls(surface: &RoadSurface) -> Vec<WallLine> {
    let road = surface.road();
    let rid = &road.road().id;
    let len = road.length();
    let sections = &road.road().lanes.lane_sections;
    if !(len.is_finite() && len > 0.0) {
        return Vec::new();
    }
    let step = CURB_STEP.max(len / MAX_STATIONS);
    // Stations: every `step` within each section, each section's start, the road's end.
    let mut stations = Vec::new();
    for (i, sec) in sections.iter().enumerate() {
        let a = sec.s.clamp(0.0, len);
        let b = sections.get(i + 1).map_or(len, |n| n.s.clamp(0.0, len));
        if b.partial_cmp(&a) != Some(std::cmp::Ordering::Greater) {
            continue;
        }
        let n = ((b - a) / step).ceil().max(1.0) as usize;
        stations.extend((0..n).map(|k| a + (b - a) * k as f64 / n as f64));
    }
    stations.push(len);
    // Open runs by lane id: (points, z) and the count of runs closed.
    let mut open: std::collections::BTreeMap<i32, Run> = Default::default();
    let mut runs: std::collections::BTreeMap<i32, usize> = Default::default();
    let mut out = Vec::new();
    let mut close = |id: i32, run: Run, out: &mut Vec<WallLine>| {
        let k = runs.entry(id).or_default();
        if run.0.len() >= 2 {
            out.push(WallLine {
                id: format!("wall:curb:{rid}:{id}:{k}"),
                kind: WallKind::Curb,
                points: run.0,
                z: run.1,
            });
            *k += 1;
        }
    };
    for &s in &stations {
        let steps = steps_at(surface, s);
        let ids: Vec<i32> = open.keys().copied().collect();
        for id in ids {
            if !steps.iter().any(|(i, ..)| *i == id) {
                if let Some(run) = open.remove(&id) {
                    close(id, run, &mut out);
                }
            }
        }
        for (id, t, lo, hi) in steps {
            let p = road.sth_to_xyz(s, t, 0.0);
            let e = open.entry(id).or_default();
            e.0.push([p[0], p[1]]);
            e.1.push([p[2] + lo, p[2] + hi]);
        }
    }
    for (id, run) in std::mem::take(&mut open) {
        close(id, run, &mut out);
    }
    out.sort_by(|a, b| a.id.cmp(&b.id));
    out
}

/// The height steps at station s: (lane, t of its inner border, low and high side above the
/// road surface).
fn steps_at(surface: &RoadSurface, s: f64) -> Vec<(i32, f64, f64, f64)> {
    let road = surface.road();
    let Some(sec) = road.lane_section(s) else { return Vec::new() };
    let ds = s - sec.s;
    let borders = road.lane_borders(s);
    let offset = road.lane_offset(s);
    let lane = |id: i32| sec.lanes().find(|l| l.id == id);
    let kind = |id: i32| lane(id).and_then(|l| l.kind.as_deref()).unwrap_or("none");
    let walkway = |id: i32| matches!(kind(id), "sidewalk" | "walking" | "curb");
    // (inner, outer) height of a lane with height records.
    let height = |id: i32| {
        let l = lane(id)?;
        let i = l.heights.partition_point(|h| h.s_offset <= ds).max(1) - 1;
        l.heights.get(i).map(|h| (h.inner, h.outer)).filter(|(a, b)| a.is_finite() && b.is_finite())
    };
    let curb_mark = |id: i32| {
        lane(id)?
            .road_marks
            .iter()
            .rev()
            .filter(|m| m.kind == "curb" && m.s_offset <= ds + 1e-9)
            .filter_map(|m| m.height)
            .find(|h| h.is_finite() && *h > 0.0)
    };
    let mut out = Vec::new();
    for &(id, _) in &borders {
        let inner_id = id - id.signum();
        let t = if inner_id == 0 {
            offset
        } else {
            match borders.iter().find(|b| b.0 == inner_id) {
                Some(b) => b.1,
                None => continue,
            }
        };
        if !t.is_finite() {
            continue;
        }
        let (here, there) = (height(id), if inner_id == 0 { None } else { height(inner_id) });
        let (low, high) = if here.is_some() || there.is_some() {
            let (a, b) = (here.map_or(0.0, |h| h.0), there.map_or(0.0, |h| h.1));
            (a.min(b), a.max(b))
        } else if walkway(id) && !walkway(inner_id) {
            match curb_mark(id).or_else(|| curb_mark(inner_id)) {
                Some(h) => (0.0, h),
                None if kind(id) == "curb" => (0.0, DEFAULT_CURB_HEIGHT),
                None => continue,
            }
        } else {
            continue;
        };
        if high - low >= MIN_STEP {
            out.push((id, t, low, high));
        }
    }
    // A curb mark of a height on a lane that is not a walkway: a curb at its outer border (the
    // standard's place for a lane's mark; how a build marks the curbs it found), unless that
    // border has a step already.
    for &(id, t) in &borders {
        let outside = id + id.signum();
        if walkway(id) || !t.is_finite() || out.iter().any(|o| o.0 == outside) {
            continue;
        }
        if let Some(h) = curb_mark(id).filter(|h| *h >= MIN_STEP) {
            out.push((outside, t, 0.0, h));
        }
    }
    out
}

/// Spacing of a continuous object's stations, m.
pub const OBJECT_STEP: f64 = 0.5;

/// The continuous objects of the road as walls: each `<repeat>` of an `<object>` with
/// `distance` 0 (a guard rail, wall, fence, barrier along s; objects of the road surface,
/// `roadSurface`, `roadMark`, `crosswalk`, `parkingSpace`, are none) and a positive height
/// somewhere, from its `s` over its `length` (within the road), with t, height and zOffset
/// linear from their start to their end values. Stations every [`OBJECT_STEP`] m and at its
/// end; at each the wall stands on the road's OpenDRIVE surface at (s, t) from zOffset to
/// zOffset + height. Without a `widthStart`/`widthEnd` (or of width 0) it is the line t(s);
/// with a width it is the closed outline of the strip t(s) +- width(s) / 2. Its id is
/// `wall:object:<id>` (`wall:object:<id>:<n>` for an object's n-th repeat after its first).
///
/// An object without repeats that has an `<outline>` standing up ([`stands_by_outline`]) is
/// its outlines instead (the standard's shape of it, its length, width and radius a bounding
/// box only): each outline of two or more corners, some of a height other than 0 (and at most
/// [`MAX_OUTLINE`] m long), is a line
/// through its corners, closed unless it says `closed="false"`, ids as for repeats:
/// - `<cornerRoad s t dz height>` stands at the road's (s, t) (`RoadEval::sth_to_xyz`), from
///   the OpenDRIVE surface there plus dz to height above that;
/// - `<cornerLocal u v z height>` lies in the object's frame: origin at the road's (s, t) of
///   the object, its z the surface there plus zOffset, u along the road's heading at s plus
///   the object's `hdg`, v to the left of u; from that z plus the corner's z to height above.
///
/// Outlines stand vertically in plan: the object's pitch and roll, and the road's grade and
/// superelevation, do not tilt them (libOpenDRIVE places a local corner in the road's surface
/// frame; on a level road the two agree).
pub fn object_walls(surface: &RoadSurface) -> Vec<WallLine> {
    let road = surface.road();
    let len = road.length();
    let mut out = Vec::new();
    if !(len.is_finite() && len > 0.0) {
        return out;
    }
    for o in &road.road().objects.objects {
        if lies_flat(o) {
            continue;
        }
        if stands_by_outline(o) {
            out.extend(outline_walls(road, o));
            continue;
        }
        for (n, r) in o.repeats.iter().enumerate() {
            let width = |name: &str| {
                r.extras.attributes.iter().find(|(k, _)| k == name).and_then(|(_, v)| v.trim().parse::<f64>().ok())
            };
            let (w0, w1) = (width("widthStart").unwrap_or(0.0), width("widthEnd").unwrap_or(0.0));
            let nums = [
                r.s,
                r.length,
                r.t_start,
                r.t_end,
                r.height_start,
                r.height_end,
                r.z_offset_start,
                r.z_offset_end,
                w0,
                w1,
            ];
            if r.distance != 0.0 || nums.iter().any(|v| !v.is_finite()) || r.height_start.max(r.height_end) <= 0.0 {
                continue;
            }
            let (a, b) = (r.s.clamp(0.0, len), (r.s + r.length).clamp(0.0, len));
            if b - a <= 0.0 {
                continue;
            }
            let count = ((b - a) / OBJECT_STEP.max((b - a) / MAX_STATIONS)).ceil().max(1.0) as usize;
            let lerp = |u: f64, v0: f64, v1: f64| v0 + (v1 - v0) * u;
            // (s, t of its centre, half width, bottom and top above the surface) per station.
            let stations: Vec<(f64, f64, f64, f64, f64)> = (0..=count)
                .map(|k| {
                    let s = a + (b - a) * k as f64 / count as f64;
                    let u = if r.length > 0.0 { ((s - r.s) / r.length).clamp(0.0, 1.0) } else { 0.0 };
                    let z = lerp(u, r.z_offset_start, r.z_offset_end);
                    let h = lerp(u, r.height_start, r.height_end).max(0.0);
                    (s, lerp(u, r.t_start, r.t_end), 0.5 * lerp(u, w0, w1).max(0.0), z, z + h)
                })
                .collect();
            let at = |s: f64, t: f64, z0: f64, z1: f64| {
                let p = road.sth_to_xyz(s, t, 0.0);
                ([p[0], p[1]], [p[2] + z0, p[2] + z1])
            };
            let (mut points, mut z) = (Vec::new(), Vec::new());
            let wide = stations.iter().any(|st| st.2 > 0.0);
            let mut push = |(p, zz): ([f64; 2], [f64; 2])| {
                points.push(p);
                z.push(zz);
            };
            if wide {
                for &(s, t, hw, z0, z1) in &stations {
                    push(at(s, t - hw, z0, z1));
                }
                for &(s, t, hw, z0, z1) in stations.iter().rev() {
                    push(at(s, t + hw, z0, z1));
                }
                push(at(stations[0].0, stations[0].1 - stations[0].2, stations[0].3, stations[0].4));
            } else {
                for &(s, t, _, z0, z1) in &stations {
                    push(at(s, t, z0, z1));
                }
            }
            let id = if n == 0 { format!("wall:object:{}", o.id) } else { format!("wall:object:{}:{n}", o.id) };
            out.push(WallLine { id, kind: WallKind::Object, points, z });
        }
    }
    out
}

/// Whether an object lies in the road's surface (`roadSurface`, `roadMark`, `crosswalk`,
/// `parkingSpace`): neither a wall nor a box.
pub(crate) fn lies_flat(o: &opendrive::model::Object) -> bool {
    matches!(o.kind.as_deref(), Some("roadSurface" | "roadMark" | "crosswalk" | "parkingSpace"))
}

/// Whether an object stands as its outlines (see [`object_walls`]): it has no `<repeat>`, is
/// not of the road surface (`roadSurface`, `roadMark`, `crosswalk`, `parkingSpace`), and has
/// an outline of two or more corners with a finite height other than 0.
pub fn stands_by_outline(o: &opendrive::model::Object) -> bool {
    use opendrive::model::Corner;
    let height = |c: &Corner| match c {
        Corner::Road { height, .. } | Corner::Local { height, .. } => *height,
    };
    !lies_flat(o)
        && o.repeats.is_empty()
        && o.outlines
            .iter()
            .any(|l| l.corners.len() >= 2 && l.corners.iter().any(|c| height(c).is_finite() && height(c) != 0.0))
}

/// Longest outline made a wall, m (its pieces are held in memory; an outline longer than a
/// road's reach is no object's).
pub const MAX_OUTLINE: f64 = 100_000.0;

/// The outlines of `o` as walls (see [`object_walls`]); corners with a number that is not
/// finite are left out, and so are outlines longer than [`MAX_OUTLINE`].
fn outline_walls(road: &opendrive::RoadEval, o: &opendrive::model::Object) -> Vec<WallLine> {
    use opendrive::model::Corner;
    let z_offset = if o.z_offset.is_finite() { o.z_offset } else { 0.0 };
    let origin = road.sth_to_xyz(o.s, o.t, 0.0);
    let (sn, cs) = (road.pose(o.s).hdg + o.hdg.filter(|h| h.is_finite()).unwrap_or(0.0)).sin_cos();
    let mut out = Vec::new();
    let mut n = 0;
    for l in &o.outlines {
        let (mut points, mut z) = (Vec::new(), Vec::new());
        for c in &l.corners {
            let (p, bottom, height) = match *c {
                Corner::Road { s, t, dz, height, .. } => {
                    let p = road.sth_to_xyz(s, t, 0.0);
                    ([p[0], p[1]], p[2] + dz, height)
                }
                Corner::Local { u, v, z, height, .. } => {
                    ([origin[0] + u * cs - v * sn, origin[1] + u * sn + v * cs], origin[2] + z_offset + z, height)
                }
            };
            if p.iter().chain([&bottom, &height]).all(|v| v.is_finite()) {
                points.push(p);
                z.push([bottom.min(bottom + height), bottom.max(bottom + height)]);
            }
        }
        if points.len() < 2 || z.iter().all(|b| b[1] - b[0] == 0.0) {
            continue;
        }
        if l.closed != Some(false) && points.len() > 2 && points.first() != points.last() {
            points.push(points[0]);
            z.push(z[0]);
        }
        let length: f64 = points.windows(2).map(|w| (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1])).sum();
        if !length.is_finite() || length > MAX_OUTLINE {
            continue;
        }
        let id = if n == 0 { format!("wall:object:{}", o.id) } else { format!("wall:object:{}:{n}", o.id) };
        n += 1;
        out.push(WallLine { id, kind: WallKind::Object, points, z });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(c: [f64; 2], h: f64, half: [f64; 2]) -> Body {
        Body { id: "b".into(), centre: c, heading: h, half, z: [0.0, 1.5], velocity: [0.0; 2] }
    }

    /// The grid's floor is the library's, but for the sign of zero: at and around integers,
    /// fractions, both signs, large and non-finite values.
    #[test]
    fn floor_is_the_library_floor() {
        let mut xs = vec![0.0, -0.0, 0.5, -0.5, 1e-300, -1e-300, 3.999_999_999_999_999, -4.000_000_000_000_001];
        xs.extend([1e15, -1e15 - 0.5, 4.1e15, -9e18, 1e300, f64::INFINITY, f64::NEG_INFINITY]);
        for k in -2000..2000 {
            let v = k as f64 * 0.37;
            xs.extend([v, v.next_up(), v.next_down(), k as f64, (k as f64).next_down()]);
        }
        for x in xs {
            let (got, want) = (floor(x), x.floor());
            assert!(got == want, "floor({x}) = {got}, library {want}");
        }
        assert!(floor(f64::NAN).is_nan());
    }

    fn line(points: Vec<[f64; 2]>) -> WallLine {
        let z = vec![[0.0, 0.12]; points.len()];
        WallLine { id: "w".into(), kind: WallKind::Curb, points, z }
    }

    /// The grid finds exactly what a test of every piece finds: boxes at every place, heading
    /// and size over a wall of 400 pieces, its stretch inside the box on the wall.
    #[test]
    fn the_grid_misses_no_piece() {
        let pts: Vec<[f64; 2]> = (0..=200).map(|i| [i as f64 * 0.5, 3.0 * (i as f64 * 0.05).sin()]).collect();
        let walls = Walls::new(vec![line(pts.clone())]);
        let mut hits = Vec::new();
        let (mut n, mut touching) = (0, 0);
        for i in 0..120 {
            for j in 0..25 {
                for k in 0..4 {
                    let b = body([i as f64 * 0.85 - 1.0, j as f64 * 0.4 - 5.0], k as f64 * 0.7, [2.3, 0.9]);
                    walls.touching(&b, |_| true, &mut hits);
                    let want = pts.windows(2).any(|w| {
                        let (sn, cs) = b.heading.sin_cos();
                        clip(&b, cs, sn, w[0], w[1]).is_some()
                    });
                    assert_eq!(!hits.is_empty(), want, "box at {:?} heading {}", b.centre, b.heading);
                    if let Some(h) = hits.first() {
                        assert!(
                            b.contains([h.position[0], h.position[1]]) || {
                                let g = Body { half: [b.half[0] + 1e-9, b.half[1] + 1e-9], ..b.clone() };
                                g.contains([h.position[0], h.position[1]])
                            }
                        );
                    }
                    touching += usize::from(want);
                    n += 1;
                }
            }
        }
        assert!(touching > n / 20 && touching < n / 2, "{touching} of {n}");
    }

    /// A box across a straight wall reports the middle of the stretch inside it; a box beside
    /// the wall (1 mm off), above it, or of a kind not asked for, reports nothing; a corner
    /// exactly on the wall touches.
    #[test]
    fn a_box_touches_a_wall_where_the_wall_runs_through_it() {
        let walls = Walls::new(vec![line(vec![[-10.0, 0.0], [10.0, 0.0]])]);
        let mut hits = Vec::new();
        walls.touching(&body([1.0, 0.5], 0.0, [2.0, 1.0]), |_| true, &mut hits);
        assert_eq!(hits.len(), 1);
        assert!((hits[0].position[0] - 1.0).abs() < 1e-9 && hits[0].position[1].abs() < 1e-12, "{hits:?}");
        walls.touching(&body([1.0, 1.001], 0.0, [2.0, 1.0]), |_| true, &mut hits);
        assert!(hits.is_empty());
        walls.touching(&body([1.0, 1.0], 0.0, [2.0, 1.0]), |_| true, &mut hits);
        assert_eq!(hits.len(), 1, "touching counts");
        let high = Body { z: [0.13, 1.6], ..body([1.0, 0.5], 0.0, [2.0, 1.0]) };
        walls.touching(&high, |_| true, &mut hits);
        assert!(hits.is_empty(), "a body above the curb");
        walls.touching(&body([1.0, 0.5], 0.0, [2.0, 1.0]), |k| k == WallKind::Facade, &mut hits);
        assert!(hits.is_empty(), "curbs not asked for");
        // A rotated box whose corner alone crosses: the contact is near that corner.
        let h = 0.3f64;
        let b = body([0.0, 0.0], h, [2.0, 1.0]);
        let corner_y = b.corners().iter().map(|c| c[1]).fold(f64::INFINITY, f64::min);
        let b = body([0.0, -corner_y - 0.01], h, [2.0, 1.0]);
        walls.touching(&b, |_| true, &mut hits);
        assert_eq!(hits.len(), 1);
        let low = b.corners().into_iter().min_by(|p, q| p[1].total_cmp(&q[1])).unwrap();
        let d = (hits[0].position[0] - low[0]).hypot(hits[0].position[1] - low[1]);
        assert!(d < 0.05, "contact {:?} vs corner {low:?}", hits[0].position);
    }

    /// The demo road's curb marks (0.12 m on its sidewalks) give one curb on each side along
    /// the inner border of lanes 2 and -2; lane height records override them.
    #[test]
    fn the_demo_road_has_a_curb_each_side() {
        let odr = opendrive::read(include_str!("../../../data/opendrive/demo.xodr")).unwrap();
        let surface = RoadSurface::new(&odr.roads[0]);
        let walls = curb_walls(&surface);
        let ids: Vec<&str> = walls.iter().map(|w| w.id.as_str()).collect();
        assert_eq!(ids, ["wall:curb:1:-2:0", "wall:curb:1:2:0"]);
        let road = surface.road();
        for w in &walls {
            for (p, z) in w.points.iter().zip(&w.z) {
                let (s, t) = surface.planar_st(p[0], p[1]).unwrap();
                // Lane -1's outer border: twice its centre (the lane offset is 0).
                let want =
                    if w.id.contains(":-2:") { 2.0 * crate::driver::lane_centre_t(road, -1, s).unwrap() } else { 3.25 };
                let planar = want * road.superelevation(s).cos();
                // Within 0.1 mm: the superelevated frame's point lies a millimetre off its
                // station in planar s, where lane -1 widens by up to 1.2 cm a metre.
                assert!((t - planar).abs() < 1e-4, "{}: t {t} vs {planar} at s {s}", w.id);
                assert!((z[1] - z[0] - 0.12).abs() < 1e-12);
            }
        }
        // A lane height record of 0.2 m on lane -2 wins over its mark.
        let mut odr2 = odr.clone();
        for sec in &mut odr2.roads[0].lanes.lane_sections {
            for side in [&mut sec.right].into_iter().flatten() {
                for l in &mut side.lanes {
                    if l.id == -2 {
                        l.heights = vec![opendrive::model::LaneHeight { inner: 0.2, outer: 0.2, ..Default::default() }];
                    }
                }
            }
        }
        let surface = RoadSurface::new(&odr2.roads[0]);
        let raised = curb_walls(&surface);
        let right = raised.iter().find(|w| w.id == "wall:curb:1:-2:0").expect("the right curb");
        assert!(right.z.iter().all(|z| (z[1] - z[0] - 0.2).abs() < 1e-12));
        // As a build writes a curb: the outermost driving lane carries the curb mark (0.15 m),
        // no sidewalk beyond: a curb along its outer border, the same line as before.
        let mut odr3 = odr.clone();
        for sec in &mut odr3.roads[0].lanes.lane_sections {
            if let Some(side) = &mut sec.right {
                side.lanes.retain(|l| l.id != -2);
                for l in &mut side.lanes {
                    l.road_marks[0].kind = "curb".into();
                    l.road_marks[0].height = Some(0.15);
                }
            }
        }
        let built = curb_walls(&RoadSurface::new(&odr3.roads[0]));
        let right3 = built.iter().find(|w| w.id == "wall:curb:1:-2:0").expect("the built curb");
        let mark = walls.iter().find(|w| w.id == "wall:curb:1:-2:0").expect("the right curb");
        assert_eq!(right3.points, mark.points);
        assert!(right3.z.iter().all(|z| (z[1] - z[0] - 0.15).abs() < 1e-12));
    }

    /// An outline of corners far away (a perimeter of 4e9 m) or all of height 0 gives no wall
    /// and no box; a small one beside it does, closed.
    #[test]
    fn outlines_too_long_or_flat_are_left_out() {
        let corners = |d: f64, h: f64| {
            format!(
                r#"<outline id="0"><cornerLocal u="0" v="0" z="0" height="{h}"/><cornerLocal u="{d}" v="0" z="0" height="{h}"/><cornerLocal u="{d}" v="{d}" z="0" height="{h}"/></outline>"#
            )
        };
        let xml = format!(
            r#"<OpenDRIVE><header revMajor="1" revMinor="4"/>
            <road id="r" length="100" junction="-1"><planView>
            <geometry s="0" x="0" y="0" hdg="0" length="100"><line/></geometry></planView>
            <lanes><laneSection s="0"><center><lane id="0" type="none"/></center>
            <right><lane id="-1" type="driving"><width sOffset="0" a="3.5" b="0" c="0" d="0"/></lane></right>
            </laneSection></lanes><objects>
            <object id="far" s="10" t="-5" length="2" width="2" height="1">{}</object>
            <object id="flat" s="20" t="-5" length="2" width="2" height="1">{}</object>
            <object id="small" s="30" t="-5" length="2" width="2" height="1">{}</object>
            </objects></road></OpenDRIVE>"#,
            corners(1e9, 1.0),
            corners(2.0, 0.0),
            corners(2.0, 1.0)
        );
        let odr = opendrive::read(&xml).expect("road");
        let surface = RoadSurface::new(&odr.roads[0]);
        let walls = object_walls(&surface);
        let ids: Vec<&str> = walls.iter().map(|w| w.id.as_str()).collect();
        assert_eq!(ids, ["wall:object:small"]);
        assert_eq!(walls[0].points.len(), 4);
        assert_eq!(walls[0].points[0], walls[0].points[3]);
        // The flat one's box stands (its outline is no shape of height); the others are outlines.
        let boxes: Vec<String> = crate::collide::scene_bodies(&surface).into_iter().map(|b| b.id).collect();
        assert_eq!(boxes, ["object:flat"]);
    }
}
