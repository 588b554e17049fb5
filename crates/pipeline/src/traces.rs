//! Ways from vehicle traces (issue 26, source (c)): the passes of a survey through a network,
//! each a road centre line as driven (a trajectory moved to the reference line by the lane
//! the pass drove), merged into one graph, split at the junction areas where they branch and
//! cross, and returned as [`Way`]s sharing a node per junction for
//! [`network_from_ways`](crate::network::network_from_ways).
//!
//! # The graph
//! Each trace is split where two of its rows lie more than 50 m apart (nothing is sampled over
//! a jump) and resampled every [`TraceOptions::step`] metres, 1,000,000 samples at most. The longest trace comes first;
//! a sample of a later trace joins an earlier vertex when it lies within
//! [`TraceOptions::merge`] of it across its direction and the two run parallel (either way),
//! and starts new vertices otherwise. A vertex's position is the mean across-track position of
//! the samples that joined it. A trace that crosses an earlier one at an angle (and within
//! [`TraceOptions::clearance`] in height where both have heights: a bridge is no junction)
//! gets an edge to it at the crossing.
//!
//! # Junctions and roads
//! Dead ends shorter than [`TraceOptions::min_spur`] that leave a branch (a pass that ran on
//! beyond where the others turned) are removed. Vertices where three or more edges meet are
//! branch points; branch points closer than [`TraceOptions::junction_link`] to each other
//! (through a chain of them) make one junction area. The chains of vertices between branch
//! points and ends are the roads, except chains with both ends in the same junction area: the
//! paths the passes took through a junction, which the generated junction replaces. A
//! junction's node is the point nearest (least squares) to the lines its roads arrive on.
//! A road's lanes: one each way where passes drove it both ways, one where they drove one way.

use crate::network::Way;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// One pass: its id and the road's reference line along it, in driving order (map x, y, z;
/// z NaN where unknown).
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// The pass id.
    pub id: String,
    /// Map x, y, z of the reference line under the vehicle, m.
    pub xyz: Vec<[f64; 3]>,
}

/// Settings of [`ways_from_traces`].
#[derive(Debug, Clone)]
pub struct TraceOptions {
    /// Resampling step along each trace, m.
    pub step: f64,
    /// Largest distance across a vertex's direction at which a sample joins it, m.
    pub merge: f64,
    /// Largest angle between a sample's and a vertex's direction for it to join, degrees.
    pub parallel_deg: f64,
    /// Branch points this close together belong to one junction area, m.
    pub junction_link: f64,
    /// Dead ends shorter than this leaving a branch point are removed, m.
    pub min_spur: f64,
    /// Traces crossing with heights further apart than this do not meet (a bridge), m.
    pub clearance: f64,
    /// Lane width of the ways, m.
    pub lane_width: f64,
    /// A pass's end this close to another pass's line is joined to it, m.
    pub gap: f64,
}

impl Default for TraceOptions {
    fn default() -> Self {
        TraceOptions {
            step: 1.0,
            merge: 0.75,
            parallel_deg: 15.0,
            junction_link: 10.0,
            min_spur: 8.0,
            clearance: 3.0,
            lane_width: 3.5,
            gap: 4.0,
        }
    }
}

/// What [`ways_from_traces`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TraceNotes {
    /// Traces read (with at least two distinct points).
    pub traces: usize,
    /// Vertices of the merged graph.
    pub vertices: usize,
    /// Junction areas (three or more roads meet).
    pub junctions: usize,
    /// Ways made.
    pub ways: usize,
    /// Paths through junction areas left to the generated junctions.
    pub inside_junctions: usize,
    /// Dead ends removed.
    pub spurs: usize,
    /// Places where traces cross at an angle.
    pub crossings: usize,
    /// Pass ends joined to a line beside them.
    pub joined_ends: usize,
}

/// Why the traces give no ways.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The options are out of range.
    #[error("trace options: {0}")]
    Options(String),
    /// More samples than the bound.
    #[error("the traces are {length:.3e} m long in all: more than {max} samples of {step} m")]
    TooLong {
        /// Total length, m.
        length: f64,
        /// The bound on samples.
        max: usize,
        /// The step, m.
        step: f64,
    },
}

/// The most samples over all traces (1,000 km of passes at 1 m, about 300 MB of graph).
const MAX_SAMPLES: usize = 1_000_000;
/// A pass is split where two rows lie farther apart than this, m (a 1 Hz GNSS row at
/// 180 km/h is 50 m on).
const MAX_JUMP: f64 = 50.0;

/// A resampled point of a trace.
#[derive(Debug, Clone, Copy)]
struct Sample {
    p: [f64; 2],
    z: f64,
    dir: [f64; 2],
}

/// A vertex of the merged graph.
#[derive(Debug, Clone)]
struct Vertex {
    p: [f64; 2],
    z: f64,
    dir: [f64; 2],
    /// The run of new vertices it was made in, and its place there.
    line: usize,
    idx: usize,
    /// Sum of the across-track offsets of the samples that joined it, and their count (its own
    /// included).
    shift: f64,
    n: u32,
    alive: bool,
}

impl Vertex {
    /// Its position: the mean across-track position of its samples.
    fn at(&self) -> [f64; 2] {
        let s = self.shift / f64::from(self.n.max(1));
        [self.p[0] - s * self.dir[1], self.p[1] + s * self.dir[0]]
    }
}

/// Samples every `step` m along `xyz` (its last point included), with directions.
fn resample(xyz: &[[f64; 3]], step: f64) -> Vec<Sample> {
    let pts: Vec<[f64; 3]> = xyz.iter().copied().filter(|p| p[0].is_finite() && p[1].is_finite()).collect::<Vec<_>>();
    let mut out: Vec<([f64; 2], f64)> = Vec::new();
    let Some(first) = pts.first() else { return Vec::new() };
    out.push(([first[0], first[1]], first[2]));
    let mut carry = 0.0; // distance since the last sample
    for w in pts.windows(2) {
        let (a, b) = (w[0], w[1]);
        let len = (b[0] - a[0]).hypot(b[1] - a[1]);
        if len <= 0.0 {
            continue;
        }
        let mut d = step - carry;
        while d <= len {
            let f = d / len;
            out.push(([a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])], a[2] + f * (b[2] - a[2])));
            d += step;
        }
        carry = len - (d - step);
    }
    let last = pts[pts.len() - 1];
    if carry > step * 0.25 {
        out.push(([last[0], last[1]], last[2]));
    }
    let n = out.len();
    if n < 2 {
        return Vec::new();
    }
    (0..n)
        .map(|i| {
            let (a, b) = (out[i.saturating_sub(1)].0, out[(i + 1).min(n - 1)].0);
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let l = dx.hypot(dy).max(1e-12);
            Sample { p: out[i].0, z: out[i].1, dir: [dx / l, dy / l] }
        })
        .collect()
}

/// The merged graph of the traces.
#[derive(Debug, Clone)]
struct Graph {
    vertices: Vec<Vertex>,
    /// Vertex ids of each run of new vertices, in order.
    lines: Vec<Vec<usize>>,
    grid: HashMap<(i64, i64), Vec<usize>>,
    cell: f64,
    /// Undirected edges (low id, high id) with how often they were driven low to high and back.
    edges: BTreeMap<(usize, usize), [u32; 2]>,
    crossings: BTreeSet<(usize, usize)>,
    /// Each vertex's neighbours (from `edges`, once every trace is in).
    adj: Vec<BTreeSet<usize>>,
}

impl Graph {
    fn key(&self, p: [f64; 2]) -> (i64, i64) {
        ((p[0] / self.cell).floor() as i64, (p[1] / self.cell).floor() as i64)
    }

    fn near(&self, p: [f64; 2]) -> impl Iterator<Item = usize> + '_ {
        let (kx, ky) = self.key(p);
        (-1..=1).flat_map(move |dx| {
            (-1..=1).flat_map(move |dy| self.grid.get(&(kx + dx, ky + dy)).into_iter().flatten().copied())
        })
    }

    fn add_vertex(&mut self, s: &Sample, line: usize, idx: usize) -> usize {
        let id = self.vertices.len();
        self.vertices.push(Vertex { p: s.p, z: s.z, dir: s.dir, line, idx, shift: 0.0, n: 1, alive: true });
        let k = self.key(s.p);
        self.grid.entry(k).or_default().push(id);
        id
    }

    fn drive(&mut self, a: usize, b: usize) {
        if a == b {
            return;
        }
        let e = self.edges.entry((a.min(b), a.max(b))).or_default();
        e[usize::from(a > b)] += 1;
    }

    /// The vertex sample `s` joins, if any (`prev`: the vertex the sample before joined).
    fn join(&self, s: &Sample, prev: Option<usize>, o: &TraceOptions, sin_par: f64) -> Option<usize> {
        let mut best: Option<(f64, usize)> = None;
        for v in self.near(s.p) {
            let w = &self.vertices[v];
            let d = [s.p[0] - w.p[0], s.p[1] - w.p[1]];
            let along = d[0] * w.dir[0] + d[1] * w.dir[1];
            let across = -d[0] * w.dir[1] + d[1] * w.dir[0];
            let sin = (s.dir[0] * w.dir[1] - s.dir[1] * w.dir[0]).abs();
            // Staying on the line the sample before joined is easier than joining one.
            let stay = prev.is_some_and(|p| {
                let q = &self.vertices[p];
                q.line == w.line && q.idx.abs_diff(w.idx) <= 3
            });
            let limit = if stay { o.merge * 1.5 } else { o.merge };
            let level = !(s.z.is_finite() && w.z.is_finite()) || (s.z - w.z).abs() <= o.clearance;
            if along.abs() <= o.step * 0.6 && across.abs() <= limit && sin <= sin_par && level {
                let score = along * along + across * across;
                if best.is_none_or(|(b, id)| score < b || (score == b && v < id)) {
                    best = Some((score, v));
                }
            }
        }
        best.map(|(_, v)| v)
    }

    /// Adds trace `samples`: joins, new vertices, edges and crossings.
    fn add_trace(&mut self, samples: &[Sample], o: &TraceOptions, sin_par: f64) {
        let before = self.vertices.len();
        let mut joined: Vec<Option<usize>> = Vec::with_capacity(samples.len());
        for s in samples {
            let prev = joined.last().copied().flatten();
            joined.push(self.join(s, prev, o, sin_par));
        }
        // A short gap between two joins to one line is noise, not a branch: it joins too.
        let mut i = 0;
        while i < joined.len() {
            if joined[i].is_some() {
                i += 1;
                continue;
            }
            let start = i;
            while i < joined.len() && joined[i].is_none() {
                i += 1;
            }
            if start == 0 || i == joined.len() || i - start > 3 {
                continue;
            }
            let (a, b) = (&self.vertices[joined[start - 1].unwrap_or(0)], &self.vertices[joined[i].unwrap_or(0)]);
            if a.line == b.line && a.idx.abs_diff(b.idx) <= i - start + 4 {
                let line = &self.lines[a.line];
                for (k, slot) in joined[start..i].iter_mut().enumerate() {
                    let f = (k + 1) as f64 / (i - start + 1) as f64;
                    let idx = (a.idx as f64 + f * (b.idx as f64 - a.idx as f64)).round() as usize;
                    *slot = line.get(idx).copied();
                }
            }
        }
        // New vertices for the runs that joined nothing; the path over all of them.
        let mut path: Vec<usize> = Vec::with_capacity(samples.len());
        let mut run: Option<usize> = None;
        for (s, j) in samples.iter().zip(&joined) {
            let v = match j {
                Some(v) => {
                    run = None;
                    let w = &mut self.vertices[*v];
                    let d = [s.p[0] - w.p[0], s.p[1] - w.p[1]];
                    w.shift += -d[0] * w.dir[1] + d[1] * w.dir[0];
                    w.n += 1;
                    *v
                }
                None => {
                    let line = *run.get_or_insert_with(|| {
                        self.lines.push(Vec::new());
                        self.lines.len() - 1
                    });
                    let idx = self.lines[line].len();
                    let v = self.add_vertex(s, line, idx);
                    self.lines[line].push(v);
                    v
                }
            };
            if let Some(&u) = path.last() {
                if u == v {
                    continue;
                }
                // Along one line, the vertices skipped are driven too.
                let (a, b) = (&self.vertices[u], &self.vertices[v]);
                if a.line == b.line && a.idx.abs_diff(b.idx) > 1 && a.idx.abs_diff(b.idx) <= 6 {
                    let (line, ai, bi) = (a.line, a.idx, b.idx);
                    let between: Vec<usize> = if ai < bi {
                        (ai + 1..bi).map(|k| self.lines[line][k]).collect()
                    } else {
                        (bi + 1..ai).rev().map(|k| self.lines[line][k]).collect()
                    };
                    for w in between {
                        let last = *path.last().unwrap_or(&w);
                        self.drive(last, w);
                        path.push(w);
                    }
                }
                let last = *path.last().unwrap_or(&v);
                self.drive(last, v);
            }
            path.push(v);
        }
        // Crossings of the new vertices' segments with earlier lines' segments.
        for w in path.windows(2) {
            let (a, b) = (w[0], w[1]);
            if a < before && b < before {
                continue;
            }
            let (pa, pb) = (self.vertices[a].p, self.vertices[b].p);
            let mid = [(pa[0] + pb[0]) / 2.0, (pa[1] + pb[1]) / 2.0];
            let mut found: Vec<(usize, usize)> = Vec::new();
            for c in self.near(mid) {
                if c >= before {
                    continue;
                }
                let vc = &self.vertices[c];
                let Some(&d) = self.lines[vc.line].get(vc.idx + 1) else { continue };
                let vd = &self.vertices[d];
                let level = !(vc.z.is_finite() && self.vertices[a].z.is_finite())
                    || (vc.z - self.vertices[a].z).abs() <= o.clearance;
                if !level {
                    continue;
                }
                let Some((t, u)) = segment_cross(pa, pb, vc.p, vd.p) else { continue };
                let sin = (self.vertices[a].dir[0] * vc.dir[1] - self.vertices[a].dir[1] * vc.dir[0]).abs();
                if sin <= sin_par {
                    continue;
                }
                let here = if t < 0.5 { a } else { b };
                let there = if u < 0.5 { c } else { d };
                if here != there {
                    found.push((here, there));
                }
            }
            for (here, there) in found {
                if self.crossings.insert((here.min(there), here.max(there))) {
                    self.edges.entry((here.min(there), here.max(there))).or_default();
                }
            }
        }
    }
}

/// Where segments a-b and c-d cross: the fractions along each, or None.
fn segment_cross(a: [f64; 2], b: [f64; 2], c: [f64; 2], d: [f64; 2]) -> Option<(f64, f64)> {
    let r = [b[0] - a[0], b[1] - a[1]];
    let s = [d[0] - c[0], d[1] - c[1]];
    let den = r[0] * s[1] - r[1] * s[0];
    if den.abs() < 1e-12 {
        return None;
    }
    let q = [c[0] - a[0], c[1] - a[1]];
    let t = (q[0] * s[1] - q[1] * s[0]) / den;
    let u = (q[0] * r[1] - q[1] * r[0]) / den;
    ((0.0..=1.0).contains(&t) && (0.0..=1.0).contains(&u)).then_some((t, u))
}

/// How much a path through a junction turns at least, degrees.
const TURN_DEG: f64 = 30.0;
/// The longest path through a junction, in junction links.
const TURN_LENGTH: f64 = 4.0;

/// The unit direction of chain `c` from its start (or its end, `at_end`) to the point a few
/// metres along it.
fn direction_along(g: &Graph, c: &[usize], at_end: bool) -> [f64; 2] {
    let pts: Vec<[f64; 2]> = if at_end {
        c.iter().rev().map(|&v| g.vertices[v].p).collect()
    } else {
        c.iter().map(|&v| g.vertices[v].p).collect()
    };
    let mut acc = 0.0;
    let mut far = pts[pts.len() - 1];
    for w in pts.windows(2) {
        acc += (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1]);
        if acc >= 3.0 {
            far = w[1];
            break;
        }
    }
    let (dx, dy) = (far[0] - pts[0][0], far[1] - pts[0][1]);
    let l = dx.hypot(dy).max(1e-12);
    [dx / l, dy / l]
}

/// Union-find root.
fn root(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// The passes merged into one graph (the first step of [`ways_from_traces`]), with its
/// adjacency, and what was found so far.
fn merged(traces: &[Trace], o: &TraceOptions) -> Result<(Graph, TraceNotes), TraceError> {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !(positive(o.step)
        && positive(o.merge)
        && positive(o.junction_link)
        && positive(o.lane_width)
        && positive(o.gap))
        || !(o.min_spur.is_finite() && o.min_spur >= 0.0 && o.clearance > 0.0)
        || !(o.parallel_deg > 0.0 && o.parallel_deg < 90.0)
    {
        return Err(TraceError::Options(format!("{o:?}")));
    }
    // Each pass split where it jumps (a GNSS outage, a drive not recorded, a wrong row):
    // nothing is sampled over a jump.
    let mut runs: Vec<&[[f64; 3]]> = Vec::new();
    for t in traces {
        let mut start = 0;
        for i in 1..=t.xyz.len() {
            let jump = i == t.xyz.len() || {
                let (a, b) = (t.xyz[i - 1], t.xyz[i]);
                let d = (b[0] - a[0]).hypot(b[1] - a[1]);
                d.is_nan() || d > MAX_JUMP
            };
            if jump {
                runs.push(&t.xyz[start..i]);
                start = i;
            }
        }
    }
    let length: f64 =
        runs.iter().flat_map(|r| r.windows(2)).map(|w| (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1])).sum();
    if length.is_nan() || length / o.step > MAX_SAMPLES as f64 {
        return Err(TraceError::TooLong { length, max: MAX_SAMPLES, step: o.step });
    }
    let sin_par = o.parallel_deg.to_radians().sin();
    let mut sampled: Vec<(usize, Vec<Sample>)> =
        runs.iter().map(|r| resample(r, o.step)).enumerate().filter(|(_, s)| s.len() >= 2).collect();
    // Longest first (ties in the file's order).
    sampled.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then(a.0.cmp(&b.0)));
    let mut notes = TraceNotes { traces: sampled.len(), ..Default::default() };
    let mut g = Graph {
        vertices: Vec::new(),
        lines: Vec::new(),
        grid: HashMap::new(),
        cell: (o.merge * 1.5 + o.step).max(o.step * 2.0),
        edges: BTreeMap::new(),
        crossings: BTreeSet::new(),
        adj: Vec::new(),
    };
    for (_, s) in &sampled {
        g.add_trace(s, o, sin_par);
    }
    notes.vertices = g.vertices.len();
    notes.crossings = g.crossings.len();
    g.adj = vec![BTreeSet::new(); g.vertices.len()];
    for &(a, b) in g.edges.keys() {
        g.adj[a].insert(b);
        g.adj[b].insert(a);
    }
    Ok((g, notes))
}

/// Where the passes drove: their merged reference lines, to move other lines (an OSM way's)
/// onto them.
#[derive(Debug, Clone)]
pub struct Driven {
    g: Graph,
}

impl Driven {
    /// The passes `traces` merged as [`ways_from_traces`] merges them.
    pub fn new(traces: &[Trace], o: &TraceOptions) -> Result<Driven, TraceError> {
        Ok(Driven { g: merged(traces, o)?.0 })
    }

    /// The point of the passes' lines nearest to `p` that runs within `max_deg` of direction
    /// `dir` (either way) and lies within `within` m, if any.
    pub fn snap(&self, p: [f64; 2], dir: [f64; 2], within: f64, max_deg: f64) -> Option<[f64; 2]> {
        let g = &self.g;
        let sin_max = max_deg.to_radians().sin();
        let reach = (within / g.cell).ceil().clamp(1.0, 64.0) as i64;
        let (kx, ky) = g.key(p);
        let mut best: Option<(f64, [f64; 2])> = None;
        for dx in -reach..=reach {
            for dy in -reach..=reach {
                for &v in g.grid.get(&(kx + dx, ky + dy)).into_iter().flatten() {
                    let w = &g.vertices[v];
                    if (dir[0] * w.dir[1] - dir[1] * w.dir[0]).abs() > sin_max {
                        continue;
                    }
                    // The foot on the segments to the vertex's neighbours along its line.
                    let line = &g.lines[w.line];
                    let a = w.at();
                    for other in [w.idx.checked_sub(1), Some(w.idx + 1)].into_iter().flatten() {
                        let Some(&u) = line.get(other) else { continue };
                        let b = g.vertices[u].at();
                        let d = [b[0] - a[0], b[1] - a[1]];
                        let l2 = d[0] * d[0] + d[1] * d[1];
                        if l2 <= 0.0 {
                            continue;
                        }
                        // A foot beyond the line's end is no foot: the line stops there.
                        let f = ((p[0] - a[0]) * d[0] + (p[1] - a[1]) * d[1]) / l2;
                        if !(-0.01..=1.01).contains(&f) {
                            continue;
                        }
                        let f = f.clamp(0.0, 1.0);
                        let q = [a[0] + f * d[0], a[1] + f * d[1]];
                        let dist = (q[0] - p[0]).hypot(q[1] - p[1]);
                        if dist <= within && best.is_none_or(|(b, _)| dist < b) {
                            best = Some((dist, q));
                        }
                    }
                }
            }
        }
        best.map(|(_, q)| q)
    }
}

/// The ways of the network the traces drive (see the module's documentation).
pub fn ways_from_traces(traces: &[Trace], o: &TraceOptions) -> Result<(Vec<Way>, TraceNotes), TraceError> {
    let (mut g, mut notes) = merged(traces, o)?;
    notes.joined_ends = g.join_ends(o);
    notes.spurs = g.prune_spurs(o);
    let chains = g.chains();
    let area = g.areas(&chains, o);
    // Roads: chains not inside one junction area.
    let mut roads: Vec<Road> = Vec::new();
    for c in chains {
        let (a, b) = (area.get(&c[0]).copied(), area.get(&c[c.len() - 1]).copied());
        if (a.is_some() && a == b) || g.length(&c) < o.step * 2.0 {
            notes.inside_junctions += 1;
            continue;
        }
        roads.push(Road { chain: c, ends: [a, b] });
    }
    let nodes = g.junction_nodes(&roads, o);
    let ways: Vec<Way> = roads.iter().enumerate().map(|(i, r)| g.way(i, r, &nodes, o)).collect();
    notes.junctions = nodes.values().filter(|n| n.0 >= 3).count();
    notes.ways = ways.len();
    Ok((ways, notes))
}

/// A chain of the graph that is a road: its vertices and the junction area at each end.
struct Road {
    chain: Vec<usize>,
    ends: [Option<usize>; 2],
}

/// A road's end at a junction area: its position and its direction into the area.
type Arrival = ([f64; 2], [f64; 2]);

impl Graph {
    fn dist(&self, a: usize, b: usize) -> f64 {
        let (p, q) = (self.vertices[a].p, self.vertices[b].p);
        (p[0] - q[0]).hypot(p[1] - q[1])
    }

    fn length(&self, c: &[usize]) -> f64 {
        c.windows(2).map(|w| self.dist(w[0], w[1])).sum()
    }

    /// Joins each pass's end to the nearest vertex of another line within `o.gap` (a road's
    /// end at a junction, where the paths through it start a lane's width aside). Returns
    /// how many were joined.
    fn join_ends(&mut self, o: &TraceOptions) -> usize {
        let ends: Vec<usize> = (0..self.vertices.len()).filter(|&v| self.adj[v].len() == 1).collect();
        let reach = (o.gap / self.cell).ceil() as i64;
        let mut joined = 0;
        for v in ends {
            let (p, z, line, idx) =
                (self.vertices[v].p, self.vertices[v].z, self.vertices[v].line, self.vertices[v].idx);
            let mut best: Option<(f64, usize)> = None;
            let (kx, ky) = self.key(p);
            for dx in -reach..=reach {
                for dy in -reach..=reach {
                    for &w in self.grid.get(&(kx + dx, ky + dy)).into_iter().flatten() {
                        let q = &self.vertices[w];
                        if (q.line == line && q.idx.abs_diff(idx) <= 10) || self.adj[v].contains(&w) || w == v {
                            continue;
                        }
                        let level = !(q.z.is_finite() && z.is_finite()) || (q.z - z).abs() <= o.clearance;
                        let d = (q.p[0] - p[0]).hypot(q.p[1] - p[1]);
                        if level && d <= o.gap && best.is_none_or(|(b, id)| d < b || (d == b && w < id)) {
                            best = Some((d, w));
                        }
                    }
                }
            }
            if let Some((_, w)) = best {
                self.adj[v].insert(w);
                self.adj[w].insert(v);
                self.edges.entry((v.min(w), v.max(w))).or_default();
                joined += 1;
            }
        }
        joined
    }

    /// Removes dead ends shorter than `o.min_spur` that leave a branch point; returns how many.
    fn prune_spurs(&mut self, o: &TraceOptions) -> usize {
        let mut spurs = 0;
        for _ in 0..32 {
            let mut removed = false;
            for start in 0..self.vertices.len() {
                if !self.vertices[start].alive || self.adj[start].len() != 1 {
                    continue;
                }
                let mut chain = vec![start];
                let (mut len, mut cur, mut prev) = (0.0, start, usize::MAX);
                while let Some(&next) = self.adj[cur].iter().find(|&&x| x != prev) {
                    len += self.dist(cur, next);
                    prev = cur;
                    cur = next;
                    if self.adj[cur].len() != 2 || len >= o.min_spur {
                        break;
                    }
                    chain.push(cur);
                }
                if self.adj[cur].len() >= 3 && len < o.min_spur {
                    let last = *chain.last().unwrap_or(&start);
                    self.adj[cur].remove(&last);
                    for &v in &chain {
                        for x in std::mem::take(&mut self.adj[v]) {
                            self.adj[x].remove(&v);
                        }
                        self.vertices[v].alive = false;
                    }
                    spurs += 1;
                    removed = true;
                }
            }
            if !removed {
                break;
            }
        }
        spurs
    }

    /// The chains of vertices between branch points and ends (a loop without either is left
    /// out).
    fn chains(&self) -> Vec<Vec<usize>> {
        let adj = &self.adj;
        let mut seen: BTreeSet<(usize, usize)> = BTreeSet::new();
        let mut chains: Vec<Vec<usize>> = Vec::new();
        for start in 0..self.vertices.len() {
            if !self.vertices[start].alive || adj[start].is_empty() || adj[start].len() == 2 {
                continue;
            }
            for &first in &adj[start] {
                if seen.contains(&(start, first)) {
                    continue;
                }
                let mut chain = vec![start, first];
                let (mut prev, mut cur) = (start, first);
                while adj[cur].len() == 2 {
                    let Some(&next) = adj[cur].iter().find(|&&x| x != prev) else { break };
                    chain.push(next);
                    prev = cur;
                    cur = next;
                    if cur == start {
                        break;
                    }
                }
                seen.insert((start, first));
                seen.insert((cur, prev));
                chains.push(chain);
            }
        }
        chains
    }

    /// The junction area of each branch point (vertex -> area id): branch points within
    /// `o.junction_link` of each other, and the two ends of a chain that turns like a path
    /// through a junction, share one.
    fn areas(&self, chains: &[Vec<usize>], o: &TraceOptions) -> HashMap<usize, usize> {
        let branch: Vec<usize> =
            (0..self.vertices.len()).filter(|&v| self.vertices[v].alive && self.adj[v].len() >= 3).collect();
        let mut parent: Vec<usize> = (0..branch.len()).collect();
        let unite = |parent: &mut Vec<usize>, i: usize, j: usize| {
            let (ri, rj) = (root(parent, i), root(parent, j));
            parent[ri.max(rj)] = ri.min(rj);
        };
        let cell = o.junction_link;
        let key = |p: [f64; 2]| ((p[0] / cell).floor() as i64, (p[1] / cell).floor() as i64);
        let mut grid: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
        for (i, &v) in branch.iter().enumerate() {
            grid.entry(key(self.vertices[v].p)).or_default().push(i);
        }
        for (i, &v) in branch.iter().enumerate() {
            let (kx, ky) = key(self.vertices[v].p);
            for dx in -1..=1 {
                for dy in -1..=1 {
                    for &j in grid.get(&(kx + dx, ky + dy)).into_iter().flatten() {
                        if j > i && self.dist(v, branch[j]) <= o.junction_link {
                            unite(&mut parent, i, j);
                        }
                    }
                }
            }
        }
        // A chain that turns between two branch points, no longer than a path through a
        // junction, is one: its ends are in the same junction area.
        let place: HashMap<usize, usize> = branch.iter().enumerate().map(|(i, &v)| (v, i)).collect();
        let cos_turn = TURN_DEG.to_radians().cos();
        for c in chains {
            let (Some(&i), Some(&j)) = (place.get(&c[0]), place.get(&c[c.len() - 1])) else { continue };
            if self.length(c) > o.junction_link * TURN_LENGTH {
                continue;
            }
            let (d0, d1) = (direction_along(self, c, false), direction_along(self, c, true));
            // d1 points back along the chain from its end: a straight chain has d0 = -d1.
            if -(d0[0] * d1[0] + d0[1] * d1[1]) <= cos_turn {
                unite(&mut parent, i, j);
            }
        }
        branch.iter().enumerate().map(|(i, &v)| (v, root(&mut parent, i))).collect()
    }

    /// Where road `c` arrives at its start's (or end's, `at_end`) junction area.
    fn arrival(&self, c: &[usize], at_end: bool, o: &TraceOptions) -> Arrival {
        let look = 5.0_f64.max(2.0 * o.step);
        let pts: Vec<[f64; 2]> = if at_end {
            c.iter().rev().map(|&v| self.vertices[v].at()).collect()
        } else {
            c.iter().map(|&v| self.vertices[v].at()).collect()
        };
        let end = pts[0];
        let mut back = pts[pts.len() - 1];
        let mut acc = 0.0;
        for w in pts.windows(2) {
            acc += (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1]);
            if acc >= look {
                back = w[1];
                break;
            }
        }
        let (dx, dy) = (end[0] - back[0], end[1] - back[1]);
        let l = dx.hypot(dy).max(1e-12);
        (end, [dx / l, dy / l])
    }

    /// Each junction area's road ends and node: the point nearest (least squares) to the
    /// lines its roads arrive on, or their ends' centroid where those lines are near parallel.
    fn junction_nodes(&self, roads: &[Road], o: &TraceOptions) -> BTreeMap<usize, (usize, [f64; 2])> {
        let mut ends_at: BTreeMap<usize, Vec<Arrival>> = BTreeMap::new();
        for r in roads {
            for (k, at_end) in [(r.ends[0], false), (r.ends[1], true)] {
                if let Some(k) = k {
                    ends_at.entry(k).or_default().push(self.arrival(&r.chain, at_end, o));
                }
            }
        }
        let mut nodes = BTreeMap::new();
        for (&k, ends) in &ends_at {
            let m = ends.len() as f64;
            let centroid = [ends.iter().map(|e| e.0[0]).sum::<f64>() / m, ends.iter().map(|e| e.0[1]).sum::<f64>() / m];
            let (mut a11, mut a12, mut a22, mut b1, mut b2) = (0.0, 0.0, 0.0, 0.0, 0.0);
            for (p, d) in ends {
                let nrm = [-d[1], d[0]];
                let dot = nrm[0] * (p[0] - centroid[0]) + nrm[1] * (p[1] - centroid[1]);
                a11 += nrm[0] * nrm[0];
                a12 += nrm[0] * nrm[1];
                a22 += nrm[1] * nrm[1];
                b1 += nrm[0] * dot;
                b2 += nrm[1] * dot;
            }
            let (det, tr) = (a11 * a22 - a12 * a12, a11 + a22);
            let mut p = centroid;
            if det > 0.05 * tr * tr / 4.0 {
                let x = [(b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det];
                if x[0].hypot(x[1]) <= 2.0 * o.junction_link {
                    p = [centroid[0] + x[0], centroid[1] + x[1]];
                }
            }
            nodes.insert(k, (ends.len(), p));
        }
        nodes
    }

    /// Road `i` as a way: its vertices, the junction node at an end where two or more roads
    /// meet, and its lanes from the directions it was driven in (a way driven one way only
    /// runs that way).
    fn way(&self, i: usize, r: &Road, nodes: &BTreeMap<usize, (usize, [f64; 2])>, o: &TraceOptions) -> Way {
        let (mut along, mut against) = (0u32, 0u32);
        for w in r.chain.windows(2) {
            let e = self.edges.get(&(w[0].min(w[1]), w[0].max(w[1]))).copied().unwrap_or_default();
            let (fw, bw) = if w[0] < w[1] { (e[0], e[1]) } else { (e[1], e[0]) };
            along += fw;
            against += bw;
        }
        let id = (i + 1).to_string();
        let junction = |k: Option<usize>| k.and_then(|k| nodes.get(&k).filter(|n| n.0 >= 2).map(|n| (k, n.1)));
        let mut ids: Vec<String> = Vec::with_capacity(r.chain.len() + 2);
        let mut xy: Vec<[f64; 2]> = Vec::with_capacity(r.chain.len() + 2);
        if let Some((k, p)) = junction(r.ends[0]) {
            ids.push(format!("j{k}"));
            xy.push(p);
        }
        for (n, &v) in r.chain.iter().enumerate() {
            ids.push(format!("w{id}n{n}"));
            xy.push(self.vertices[v].at());
        }
        if let Some((k, p)) = junction(r.ends[1]) {
            ids.push(format!("j{k}"));
            xy.push(p);
        }
        let (forward, backward) = match (along > 0, against > 0) {
            (true, true) => (1, 1),
            (false, true) => {
                ids.reverse();
                xy.reverse();
                (1, 0)
            }
            _ => (1, 0),
        };
        Way { id, nodes: ids, xy, forward, backward, lane_width: o.lane_width }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(id: &str, from: [f64; 2], to: [f64; 2]) -> Trace {
        let n = 200;
        let xyz = (0..=n)
            .map(|i| {
                let f = i as f64 / n as f64;
                [from[0] + f * (to[0] - from[0]), from[1] + f * (to[1] - from[1]), f64::NAN]
            })
            .collect();
        Trace { id: id.into(), xyz }
    }

    #[test]
    fn one_road_driven_both_ways_is_one_two_way_way() {
        let t = [line("1", [0.0, 0.0], [100.0, 0.0]), line("2", [100.0, 0.02], [0.0, 0.02])];
        let (ways, notes) = ways_from_traces(&t, &TraceOptions::default()).unwrap();
        assert_eq!(ways.len(), 1, "{notes:?}");
        assert_eq!((ways[0].forward, ways[0].backward), (1, 1));
        assert_eq!(notes.junctions, 0);
        // The mean of the two passes, within a millimetre.
        assert!(ways[0].xy.iter().all(|p| (p[1] - 0.01).abs() < 1e-3), "{:?}", &ways[0].xy[..3]);
    }

    #[test]
    fn a_crossing_is_one_junction_of_four_roads() {
        let t = [line("1", [-100.0, 0.0], [100.0, 0.0]), line("2", [0.0, -100.0], [0.0, 100.0])];
        let (ways, notes) = ways_from_traces(&t, &TraceOptions::default()).unwrap();
        assert_eq!(notes.junctions, 1, "{notes:?}");
        assert_eq!(ways.len(), 4, "{notes:?}");
        // Every way ends at the junction's node, the crossing, within 5 cm.
        for w in &ways {
            let j = w.nodes.iter().position(|n| n.starts_with('j')).expect("a junction node");
            let p = w.xy[j];
            assert!(p[0].hypot(p[1]) < 0.05, "{p:?}");
            assert_eq!((w.forward, w.backward), (1, 0));
        }
    }

    #[test]
    fn a_bridge_is_no_junction() {
        let mut over = line("2", [0.0, -100.0], [0.0, 100.0]);
        over.xyz.iter_mut().for_each(|p| p[2] = 8.0);
        let mut under = line("1", [-100.0, 0.0], [100.0, 0.0]);
        under.xyz.iter_mut().for_each(|p| p[2] = 0.0);
        let (ways, notes) = ways_from_traces(&[under, over], &TraceOptions::default()).unwrap();
        assert_eq!((ways.len(), notes.junctions), (2, 0), "{notes:?}");
    }

    #[test]
    fn bad_options_and_empty_traces_give_errors_or_nothing() {
        let o = TraceOptions { step: f64::NAN, ..Default::default() };
        assert!(ways_from_traces(&[], &o).is_err());
        let t = [Trace { id: "1".into(), xyz: vec![[f64::NAN, 0.0, 0.0], [1e300, 1e300, 0.0]] }];
        let (ways, _) = ways_from_traces(&t, &TraceOptions::default()).unwrap_or_default();
        assert!(ways.is_empty());
    }
}
#[cfg(test)]
mod hostile {
    use super::*;

    /// A pass there and back with rows thousands of kilometres away (the fuzzer's find: 2 GB
    /// of samples over the jumps): the jumps split the pass, nothing is sampled over them.
    #[test]
    fn far_rows_split_a_pass_and_are_not_sampled() {
        let a = [650012.5, 239996.0, 102.2];
        let b = [650021.9, 239999.4, 102.4];
        let far = [6500021.9, 239999.4, 102.4];
        let tiny = [650021.9, 1e-300, 102.4];
        let t = [Trace { id: "1".into(), xyz: vec![a, b, far, b, tiny, b, a] }];
        let (g, notes) = merged(&t, &TraceOptions::default()).unwrap();
        assert!(g.vertices.len() < 100, "{notes:?}");
        assert!(ways_from_traces(&t, &TraceOptions::default()).is_ok());
        // Over the bound of samples: an error, not an allocation.
        let long: Vec<[f64; 3]> = (0..=60_000).map(|i| [i as f64 * 40.0, 0.0, 0.0]).collect();
        let t = [Trace { id: "1".into(), xyz: long }];
        assert!(matches!(ways_from_traces(&t, &TraceOptions::default()), Err(TraceError::TooLong { .. })));
    }
}
