//! A road network from ways (OpenStreetMap's model: polylines sharing nodes): roads split at
//! the nodes where three or more branches meet, each such node a junction whose area the
//! roads end at, the junction's connecting roads generated from the lanes
//! ([`opendrive::connect`]), and roads that meet end to end linked directly.
//!
//! Each road's reference line is fitted (lines, arcs and clothoids) to its way's vertices cut
//! back by the junction's radius at junction ends; its lanes come from the way's lane counts and
//! width (OSM's `lanes`, `lanes:forward`, `lanes:backward`, `oneway`, `width`; defaults in
//! [`NetworkOptions`]). There is no elevation: the survey gives it. All in the map frame, the
//! file frame's origin in the header's `<offset>`.

use crate::axis::origin_of;
use opendrive::connect::{regenerate, ConnectOptions};
use opendrive::fit::{fit_polyline, FitOptions};
use opendrive::{
    Extras, Header, HeaderOffset, Junction, Lane, LaneSection, LaneSide, Lanes, LinkTarget, OpenDrive, PlanView, Poly3,
    Road, RoadLink, RoadMark,
};
use std::collections::HashMap;

/// One way: its id, its nodes' ids and map (x, y), and its lanes.
#[derive(Debug, Clone, PartialEq)]
pub struct Way {
    /// Id (the road's id when the way is not split).
    pub id: String,
    /// Node ids, in order.
    pub nodes: Vec<String>,
    /// Map x, y of each node, m.
    pub xy: Vec<[f64; 2]>,
    /// Lanes in the way's direction (right of the reference line).
    pub forward: usize,
    /// Lanes against it (left).
    pub backward: usize,
    /// Width of each lane, m.
    pub lane_width: f64,
}

/// Settings of [`network_from_ways`].
#[derive(Debug, Clone)]
pub struct NetworkOptions {
    /// Fit of the reference lines (lines, arcs, clothoids within a tolerance, m).
    pub fit: FitOptions,
    /// A junction's roads end this far beyond the widest half of its roads, m.
    pub junction_margin: f64,
    /// `<geoReference>` text.
    pub geo_reference: Option<String>,
    /// Where the survey drove: each road's line moved onto the passes' lines that run along
    /// it within `snap` m (the ways' topology kept, their geometry the survey's).
    pub driven: Option<std::sync::Arc<crate::traces::Driven>>,
    /// How far a way's line is moved onto the passes' at most, m.
    pub snap: f64,
}

impl Default for NetworkOptions {
    fn default() -> Self {
        NetworkOptions {
            fit: FitOptions { tolerance: 0.02, min_length: 2.0 },
            junction_margin: 3.0,
            geo_reference: None,
            driven: None,
            snap: 5.0,
        }
    }
}

/// What [`network_from_ways`] made, besides the map.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NetworkNotes {
    /// Roads (ways or their pieces) and junctions.
    pub roads: usize,
    /// Junctions.
    pub junctions: usize,
    /// Connecting roads generated.
    pub connecting: usize,
    /// Pieces of ways left out (too short once cut back for their junctions), by way id.
    pub dropped: Vec<String>,
    /// With [`NetworkOptions::driven`]: each road's id and the share of its line moved onto
    /// the passes' (the rest keeps the ways' geometry).
    pub driven: Vec<(String, f64)>,
}

/// Why a network could not be made.
#[derive(Debug, thiserror::Error)]
pub enum NetworkError {
    /// A way's nodes and coordinates disagree, or a coordinate is not finite.
    #[error("way {0}: {1}")]
    Way(String, String),
    /// A road could not be fitted.
    #[error("way {way}: the reference line of s {from:.1}..{to:.1} m: {error}")]
    Fit {
        /// The way.
        way: String,
        /// Its piece's start along the way, m.
        from: f64,
        /// Its end, m.
        to: f64,
        /// Why.
        error: opendrive::fit::FitError,
    },
    /// A junction's connecting roads could not be generated.
    #[error(transparent)]
    Connect(#[from] opendrive::connect::ConnectError),
}

/// A piece of a way between two nodes where it ends or meets a junction.
struct Piece {
    way: usize,
    /// Vertex range [a, b] of the way.
    a: usize,
    b: usize,
    id: String,
}

/// The road network of `ways` (see the module's documentation).
pub fn network_from_ways(ways: &[Way], opts: &NetworkOptions) -> Result<(OpenDrive, NetworkNotes), NetworkError> {
    for w in ways {
        if w.nodes.len() != w.xy.len() {
            return Err(NetworkError::Way(w.id.clone(), format!("{} nodes, {} positions", w.nodes.len(), w.xy.len())));
        }
        if let Some(i) = w.xy.iter().position(|p| !(p[0].is_finite() && p[1].is_finite())) {
            return Err(NetworkError::Way(w.id.clone(), format!("node {}: position not finite", w.nodes[i])));
        }
    }
    // Branches at each node: 1 for a way's end, 2 for an inner node.
    let mut branches: HashMap<&str, usize> = HashMap::new();
    for w in ways.iter().filter(|w| w.nodes.len() >= 2) {
        for (i, n) in w.nodes.iter().enumerate() {
            *branches.entry(n.as_str()).or_default() += if i == 0 || i + 1 == w.nodes.len() { 1 } else { 2 };
        }
    }
    let is_junction = |n: &str| branches.get(n).copied().unwrap_or(0) >= 3;
    // Pieces: each way split at its inner junction nodes.
    let mut pieces: Vec<Piece> = Vec::new();
    for (wi, w) in ways.iter().enumerate().filter(|(_, w)| w.nodes.len() >= 2) {
        let cuts: Vec<usize> = (1..w.nodes.len() - 1).filter(|&i| is_junction(&w.nodes[i])).collect();
        let mut bounds = vec![0];
        bounds.extend(cuts);
        bounds.push(w.nodes.len() - 1);
        let split = bounds.len() > 2;
        for (k, ab) in bounds.windows(2).enumerate() {
            let id = if split { format!("{}_{}", w.id, k + 1) } else { w.id.clone() };
            pieces.push(Piece { way: wi, a: ab[0], b: ab[1], id });
        }
    }
    // Each junction's radius: the widest half of its roads plus the margin, and more where two
    // of its branches leave at a small angle, so that their ends lie side by side, apart.
    let half = |w: &Way| (w.forward.max(w.backward) as f64) * w.lane_width;
    let mut branch: HashMap<&str, Vec<(f64, [f64; 2])>> = HashMap::new();
    for p in &pieces {
        let w = &ways[p.way];
        for (at, inward) in [(p.a, true), (p.b, false)] {
            let n = &w.nodes[at];
            if is_junction(n) {
                let piece: Vec<[f64; 2]> =
                    if inward { w.xy[p.a..=p.b].to_vec() } else { w.xy[p.a..=p.b].iter().rev().copied().collect() };
                branch.entry(n.as_str()).or_default().push((half(w), direction_from(&piece, BRANCH_LOOK)));
            }
        }
    }
    let mut radius: HashMap<&str, f64> = HashMap::new();
    for (n, b) in &branch {
        let mut r: f64 = b.iter().map(|x| x.0 + opts.junction_margin).fold(0.0, f64::max);
        for (i, x) in b.iter().enumerate() {
            for y in &b[i + 1..] {
                let cos = (x.1[0] * y.1[0] + x.1[1] * y.1[1]).clamp(-1.0, 1.0);
                let sin_half = ((1.0 - cos) / 2.0).sqrt().max(0.05);
                r = r.max((x.0 + y.0 + opts.junction_margin) / (2.0 * sin_half));
            }
        }
        radius.insert(n, r.min(MAX_JUNCTION_RADIUS));
    }
    // A junction too tight for a turn's path (a radius below 1 m) gets a larger area.
    let mut tries = 0;
    let mut fits = HashMap::new();
    loop {
        match assemble(ways, &pieces, &radius, &is_junction, opts, &mut fits) {
            Ok(made) => return Ok(made),
            Err(Assembly::Tight(tight)) => {
                tries += 1;
                for (node, error) in tight {
                    if tries > JUNCTION_TRIES {
                        return Err(error.into());
                    }
                    if let Some(r) = radius.get_mut(node.as_str()) {
                        *r += JUNCTION_STEP;
                    }
                }
            }
            Err(Assembly::Failed(e)) => return Err(e),
        }
    }
}

/// How many times a junction's area grows before its tight turn is an error.
const JUNCTION_TRIES: usize = 8;

/// How far along a branch its direction from the junction's node is taken, m.
const BRANCH_LOOK: f64 = 10.0;
/// The largest radius of a junction's area, m.
const MAX_JUNCTION_RADIUS: f64 = 40.0;

/// The unit direction from `xy[0]` to the point `look` metres along `xy` (or its end).
fn direction_from(xy: &[[f64; 2]], look: f64) -> [f64; 2] {
    let total = polyline_length(xy);
    let p = cut_polyline(xy, 0.0, look.min(total));
    let (a, b) = (xy[0], p.last().copied().unwrap_or(xy[0]));
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let l = dx.hypot(dy);
    if l > 0.0 {
        [dx / l, dy / l]
    } else {
        [1.0, 0.0]
    }
}

/// The largest angle between a way's line and a pass's line it is moved onto, degrees: a
/// way bends towards its junction's node (off the road's line where the node is).
const SNAP_DEG: f64 = 30.0;
/// Over how many metres a move onto the passes' lines fades out where they stop, m.
const FADE: f64 = 20.0;

/// `part` (the local frame: the map's less `origin`) moved onto the lines of `driven` where
/// they run along it within `within` m, the move faded out over [`FADE`] m where they stop;
/// and the share of its points moved.
fn onto_driven(
    part: &[[f64; 2]],
    origin: [f64; 2],
    driven: &crate::traces::Driven,
    within: f64,
) -> (Vec<[f64; 2]>, f64) {
    let n = part.len();
    let mut along = vec![0.0; n];
    for i in 1..n {
        along[i] = along[i - 1] + (part[i][0] - part[i - 1][0]).hypot(part[i][1] - part[i - 1][1]);
    }
    let moves: Vec<Option<[f64; 2]>> = (0..n)
        .map(|i| {
            let (a, b) = (part[i.saturating_sub(1)], part[(i + 1).min(n - 1)]);
            let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
            let l = dx.hypot(dy);
            if l <= 0.0 {
                return None;
            }
            let p = [part[i][0] + origin[0], part[i][1] + origin[1]];
            let q = driven.snap(p, [dx / l, dy / l], within, SNAP_DEG)?;
            Some([q[0] - p[0], q[1] - p[1]])
        })
        .collect();
    let moved = moves.iter().filter(|m| m.is_some()).count();
    // The nearest move on either side, faded with the distance to it.
    let mut out = part.to_vec();
    let mut last: Option<(f64, [f64; 2])> = None;
    let mut before: Vec<Option<(f64, [f64; 2])>> = vec![None; n];
    for i in 0..n {
        if let Some(m) = moves[i] {
            last = Some((along[i], m));
        }
        before[i] = last;
    }
    let mut next: Option<(f64, [f64; 2])> = None;
    for i in (0..n).rev() {
        if let Some(m) = moves[i] {
            next = Some((along[i], m));
        }
        let m = match (before[i], next) {
            (Some((sa, ma)), Some((sb, mb))) if moves[i].is_none() && sb - sa <= 2.0 * FADE => {
                // In a short gap between two moves: from one to the other.
                let f = if sb > sa { (along[i] - sa) / (sb - sa) } else { 0.0 };
                [ma[0] + f * (mb[0] - ma[0]), ma[1] + f * (mb[1] - ma[1])]
            }
            _ => {
                let near = [before[i], next]
                    .into_iter()
                    .flatten()
                    .min_by(|a, b| (a.0 - along[i]).abs().total_cmp(&(b.0 - along[i]).abs()));
                match near {
                    Some((sm, m)) => {
                        let w = (1.0 - (along[i] - sm).abs() / FADE).max(0.0);
                        [m[0] * w, m[1] * w]
                    }
                    None => [0.0, 0.0],
                }
            }
        };
        out[i] = [part[i][0] + m[0], part[i][1] + m[1]];
    }
    (out, moved as f64 / n.max(1) as f64)
}

/// How much larger a junction's area grows when a turn does not fit, m.
const JUNCTION_STEP: f64 = 2.0;

/// Why [`assemble`] stopped.
enum Assembly {
    /// Junctions (their nodes) too tight for a turn.
    Tight(Vec<(String, opendrive::connect::ConnectError)>),
    /// Anything else.
    Failed(NetworkError),
}

impl From<NetworkError> for Assembly {
    fn from(e: NetworkError) -> Assembly {
        Assembly::Failed(e)
    }
}

/// The network with the junctions' areas `radius` (by node).
fn assemble(
    ways: &[Way],
    pieces: &[Piece],
    radius: &HashMap<&str, f64>,
    is_junction: &dyn Fn(&str) -> bool,
    opts: &NetworkOptions,
    fits: &mut HashMap<(usize, u64, u64), (Vec<opendrive::Geometry>, f64)>,
) -> Result<(OpenDrive, NetworkNotes), Assembly> {
    let all: Vec<[f64; 3]> = ways.iter().flat_map(|w| w.xy.iter().map(|p| [p[0], p[1], f64::NAN])).collect();
    let origin = origin_of(&all);
    let mut notes = NetworkNotes::default();
    let mut roads: Vec<Road> = Vec::new();
    // Per road: its start and end node and whether each is a junction.
    let mut ends: Vec<(String, [String; 2])> = Vec::new();
    for (pi, p) in pieces.iter().enumerate() {
        let w = &ways[p.way];
        let xy: Vec<[f64; 2]> = w.xy[p.a..=p.b].iter().map(|q| [q[0] - origin[0], q[1] - origin[1]]).collect();
        let (na, nb) = (&w.nodes[p.a], &w.nodes[p.b]);
        let len = polyline_length(&xy);
        let cut_a = if is_junction(na) { radius[na.as_str()] } else { 0.0 };
        let cut_b = if is_junction(nb) { radius[nb.as_str()] } else { 0.0 };
        if len - cut_a - cut_b < opts.fit.min_length.max(1.0) {
            notes.dropped.push(p.id.clone());
            continue;
        }
        let key = (pi, cut_a.to_bits(), cut_b.to_bits());
        let (geometries, share) = match fits.get(&key) {
            Some(g) => g.clone(),
            None => {
                // Vertices at most 1 m apart: the fit takes a lone vertex after a bend (where a way
                // turns to its junction's node) for an outlier.
                let mut part = densify(&cut_polyline(&xy, cut_a, len - cut_b), 1.0);
                let mut share = f64::NAN;
                if let Some(d) = &opts.driven {
                    (part, share) = onto_driven(&part, [origin[0], origin[1]], d, opts.snap);
                }
                let geometries = match fit_polyline(&part, &opts.fit) {
                    Ok(fit) => fit.geometries,
                    // Too short for the fit (a few metres between two ways' ends): a line.
                    Err(opendrive::fit::FitError::TooShort(..)) if part.len() >= 2 => {
                        let (a, b) = (part[0], part[part.len() - 1]);
                        let length = (b[0] - a[0]).hypot(b[1] - a[1]);
                        vec![opendrive::Geometry {
                            s: 0.0,
                            x: a[0],
                            y: a[1],
                            hdg: (b[1] - a[1]).atan2(b[0] - a[0]),
                            length,
                            kind: opendrive::GeometryKind::Line,
                            extras: Extras::default(),
                        }]
                    }
                    Err(error) => {
                        return Err(Assembly::Failed(NetworkError::Fit {
                            way: w.id.clone(),
                            from: cut_a,
                            to: len - cut_b,
                            error,
                        }))
                    }
                };
                fits.insert(key, (geometries.clone(), share));
                (geometries, share)
            }
        };
        if opts.driven.is_some() {
            notes.driven.push((p.id.clone(), share));
        }
        let mut road = two_way_road(&p.id, w);
        road.length = geometries.iter().map(|g| g.length).sum();
        road.plan_view = PlanView::default();
        for g in geometries {
            road.plan_view.push(g);
        }
        roads.push(road);
        ends.push((p.id.clone(), [na.clone(), nb.clone()]));
    }
    // Links: a junction node links to its junction; a node two roads end at links them.
    let mut at_node: HashMap<&str, Vec<(usize, bool)>> = HashMap::new();
    for (ri, (_, nodes)) in ends.iter().enumerate() {
        at_node.entry(nodes[0].as_str()).or_default().push((ri, true));
        at_node.entry(nodes[1].as_str()).or_default().push((ri, false));
    }
    let mut junction_ids: Vec<String> = Vec::new();
    let mut junction_nodes: Vec<String> = Vec::new();
    let mut links: Vec<RoadLink> = vec![RoadLink::default(); roads.len()];
    let mut nodes_sorted: Vec<&&str> = at_node.keys().collect();
    nodes_sorted.sort();
    for node in nodes_sorted {
        let here = &at_node[*node];
        let target = |t: LinkTarget, (ri, start): (usize, bool), links: &mut Vec<RoadLink>| {
            if start {
                links[ri].predecessor = Some(t);
            } else {
                links[ri].successor = Some(t);
            }
        };
        if is_junction(node) {
            // Numbered in the nodes' order (readers take junction ids for integers).
            let id = (junction_ids.len() + 1).to_string();
            for &e in here {
                target(
                    LinkTarget { element_type: "junction".into(), element_id: id.clone(), ..Default::default() },
                    e,
                    &mut links,
                );
            }
            junction_ids.push(id);
            junction_nodes.push(node.to_string());
        } else if here.len() == 2 {
            let (a, b) = (here[0], here[1]);
            let contact = |start: bool| Some(if start { "start" } else { "end" }.to_string());
            let to = |(ri, start): (usize, bool)| LinkTarget {
                element_type: "road".into(),
                element_id: ends[ri].0.clone(),
                contact_point: contact(start),
                ..Default::default()
            };
            target(to(b), a, &mut links);
            target(to(a), b, &mut links);
        }
    }
    for (road, link) in roads.iter_mut().zip(links) {
        if link.predecessor.is_some() || link.successor.is_some() {
            road.link = Some(link);
        }
    }
    let header = Header {
        name: Some("roadscan network".into()),
        vendor: Some("roadscan".into()),
        geo_reference: opts.geo_reference.clone(),
        offset: Some(HeaderOffset { x: origin[0], y: origin[1], z: 0.0, hdg: 0.0 }),
        ..Header::default()
    };
    let junctions = junction_ids.iter().map(|id| Junction { id: id.clone(), ..Default::default() }).collect();
    let mut odr = OpenDrive { header, roads, junctions, ..Default::default() };
    notes.roads = odr.roads.len();
    let copts = ConnectOptions::default();
    let mut tight = Vec::new();
    for (id, node) in junction_ids.iter().zip(&junction_nodes) {
        match regenerate(&mut odr, id, &copts) {
            Ok(made) => notes.connecting += made.len(),
            Err(e @ opendrive::connect::ConnectError::Path { .. }) => tight.push((node.clone(), e)),
            Err(e) => return Err(Assembly::Failed(e.into())),
        }
    }
    if !tight.is_empty() {
        return Err(Assembly::Tight(tight));
    }
    notes.junctions = junction_ids.len();
    // A junction none of whose roads drive into another gets no connecting roads: dropped.
    let empty: Vec<String> = odr.junctions.iter().filter(|j| j.connections.is_empty()).map(|j| j.id.clone()).collect();
    odr.junctions.retain(|j| !j.connections.is_empty());
    if !empty.is_empty() {
        for road in &mut odr.roads {
            if let Some(l) = &mut road.link {
                for t in [&mut l.predecessor, &mut l.successor] {
                    if t.as_ref().is_some_and(|t| t.element_type == "junction" && empty.contains(&t.element_id)) {
                        *t = None;
                    }
                }
            }
        }
        notes.junctions -= empty.len();
    }
    Ok((odr, notes))
}

fn polyline_length(xy: &[[f64; 2]]) -> f64 {
    xy.windows(2).map(|w| (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1])).sum()
}

/// The part of polyline `xy` between arc lengths `from` and `to`.
fn cut_polyline(xy: &[[f64; 2]], from: f64, to: f64) -> Vec<[f64; 2]> {
    let mut out = Vec::new();
    let mut s = 0.0;
    let lerp = |a: [f64; 2], b: [f64; 2], f: f64| [a[0] + f * (b[0] - a[0]), a[1] + f * (b[1] - a[1])];
    for w in xy.windows(2) {
        let l = (w[1][0] - w[0][0]).hypot(w[1][1] - w[0][1]);
        let (s0, s1) = (s, s + l);
        if l > 0.0 {
            if out.is_empty() && from >= s0 && from <= s1 {
                out.push(lerp(w[0], w[1], (from - s0) / l));
            }
            if !out.is_empty() {
                if to <= s1 {
                    out.push(lerp(w[0], w[1], (to - s0) / l));
                    return out;
                }
                out.push(w[1]);
            }
        }
        s = s1;
    }
    out
}

/// `xy` with points added so that none are more than `step` apart (at most
/// [`DENSIFY_MAX`] to a segment, so the work stays bounded by the input's size): on the
/// centripetal Catmull-Rom spline through the vertices (on a curve the true line, not the
/// chords, which 5 m vertices leave 0.3 m inside a 10 m radius).
const DENSIFY_MAX: f64 = 200.0;

fn densify(xy: &[[f64; 2]], step: f64) -> Vec<[f64; 2]> {
    let n = xy.len();
    let mut out = Vec::with_capacity(n);
    let d = |a: [f64; 2], b: [f64; 2]| (b[0] - a[0]).hypot(b[1] - a[1]);
    for i in 0..n.saturating_sub(1) {
        let (p1, p2) = (xy[i], xy[i + 1]);
        // End tangents mirrored where the polyline ends.
        let p0 = if i > 0 { xy[i - 1] } else { [2.0 * p1[0] - p2[0], 2.0 * p1[1] - p2[1]] };
        let p3 = if i + 2 < n { xy[i + 2] } else { [2.0 * p2[0] - p1[0], 2.0 * p2[1] - p1[1]] };
        let l = d(p1, p2);
        let k = (l / step).ceil().clamp(1.0, DENSIFY_MAX) as usize;
        // Knot intervals: the square roots of the chord lengths (centripetal).
        let (t01, t12, t23) = (d(p0, p1).sqrt().max(1e-9), l.sqrt().max(1e-9), d(p2, p3).sqrt().max(1e-9));
        let m1: [f64; 2] =
            std::array::from_fn(|c| (p2[c] - p1[c]) + t12 * ((p1[c] - p0[c]) / t01 - (p2[c] - p0[c]) / (t01 + t12)));
        let m2: [f64; 2] =
            std::array::from_fn(|c| (p2[c] - p1[c]) + t12 * ((p3[c] - p2[c]) / t23 - (p3[c] - p1[c]) / (t12 + t23)));
        for j in 0..k {
            let u = j as f64 / k as f64;
            let (u2, u3) = (u * u, u * u * u);
            let (h00, h10, h01, h11) = (2.0 * u3 - 3.0 * u2 + 1.0, u3 - 2.0 * u2 + u, -2.0 * u3 + 3.0 * u2, u3 - u2);
            out.push(std::array::from_fn(|c| h00 * p1[c] + h10 * m1[c] + h01 * p2[c] + h11 * m2[c]));
        }
    }
    out.extend(xy.last());
    out
}

fn mark(kind: &str) -> RoadMark {
    RoadMark { kind: kind.into(), color: "standard".into(), width: Some(0.12), ..Default::default() }
}

/// A road with the way's lanes, in one lane section (plan view and length set by the caller).
fn two_way_road(id: &str, w: &Way) -> Road {
    let lane = |id: i32, outer: bool| Lane {
        id,
        kind: Some("driving".into()),
        level: Some(false),
        widths: vec![Poly3::constant(0.0, w.lane_width)],
        road_marks: vec![mark(if outer { "solid" } else { "broken" })],
        ..Default::default()
    };
    let side = |n: usize, sign: i32| {
        (n > 0).then(|| LaneSide {
            lanes: (1..=n).map(|k| lane(sign * k as i32, k == n)).collect(),
            extras: Extras::default(),
        })
    };
    let centre_mark = if w.forward > 0 && w.backward > 0 { "solid" } else { "none" };
    let centre = Lane { id: 0, kind: Some("none".into()), road_marks: vec![mark(centre_mark)], ..Default::default() };
    let section = LaneSection {
        s: 0.0,
        left: side(w.backward, 1),
        center: Some(LaneSide { lanes: vec![centre], extras: Extras::default() }),
        right: side(w.forward, -1),
        ..Default::default()
    };
    let mut road = Road {
        id: id.to_string(),
        junction: "-1".into(),
        lanes: Lanes { lane_sections: vec![section], ..Default::default() },
        ..Default::default()
    };
    road.elevation_profile.elevations = vec![Poly3::constant(0.0, 0.0)];
    road.lateral_profile.superelevations = vec![Poly3::constant(0.0, 0.0)];
    road
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn way(id: &str, nodes: &[(&str, [f64; 2])]) -> Way {
        Way {
            id: id.into(),
            nodes: nodes.iter().map(|n| n.0.to_string()).collect(),
            xy: nodes.iter().map(|n| n.1).collect(),
            forward: 1,
            backward: 1,
            lane_width: 3.5,
        }
    }

    #[test]
    fn a_crossing_becomes_four_roads_and_a_junction_of_twelve_turns() {
        // Two straight ways crossing at node c; a third way continuing the first's east end.
        let ways = vec![
            way("1", &[("w", [0.0, 0.0]), ("c", [50.0, 0.0]), ("e", [100.0, 0.0])]),
            way("2", &[("s", [50.0, -50.0]), ("c", [50.0, 0.0]), ("n", [50.0, 50.0])]),
            way("3", &[("e", [100.0, 0.0]), ("f", [150.0, 0.0])]),
        ];
        let (odr, notes) = network_from_ways(&ways, &NetworkOptions::default()).unwrap();
        assert_eq!(notes.junctions, 1);
        assert_eq!(odr.junctions[0].id, "1");
        // Four roads into the junction (1_1, 1_2, 2_1, 2_2), one beyond; 4 x 3 turns of one lane.
        assert_eq!(odr.roads.iter().filter(|r| r.junction == "-1").count(), 5);
        assert_eq!(notes.connecting, 12);
        // Road 1_1 ends the junction radius before the crossing: two branches at right angles
        // lie side by side (3.5 + 3.5 m, 3 m apart) at (3.5 + 3.5 + 3) / (2 sin 45°) m.
        let r = odr.road("1_1").unwrap();
        let radius = 10.0 / (2.0 * std::f64::consts::FRAC_PI_4.sin());
        assert!((r.length - (50.0 - radius)).abs() < 0.02, "{}", r.length);
        // 1_2 and 3 meet end to start at node e.
        let l = odr.road("1_2").unwrap().link.clone().unwrap();
        let s = l.successor.unwrap();
        assert_eq!(
            (s.element_type.as_str(), s.element_id.as_str(), s.contact_point.as_deref()),
            ("road", "3", Some("start"))
        );
        assert_eq!(l.predecessor.unwrap().element_id, "1");
    }

    #[test]
    fn densified_ways_follow_the_curve_and_stay_bounded() {
        // Vertices every 5 m on a circle of 10 m radius: the spline between them (the end
        // segments aside, whose outer tangents are guessed) stays within 2 cm of the circle where
        // the chords lie 0.31 m inside it.
        let xy: Vec<[f64; 2]> =
            (0..=12).map(|k| (k as f64 * 0.5).sin_cos()).map(|(s, c)| [10.0 * c, 10.0 * s]).collect();
        let d = densify(&xy, 0.25);
        let per = d.len() / 12;
        let worst = d[per..d.len() - per].iter().map(|p| (p[0].hypot(p[1]) - 10.0).abs()).fold(0.0, f64::max);
        assert!(worst < 0.02, "{worst}");
        // A segment of 10,000 km (a hostile file's node) gets at most DENSIFY_MAX points.
        let far = densify(&[[0.0, 0.0], [1e7, 0.0]], 1.0);
        assert_eq!(far.len(), DENSIFY_MAX as usize + 1);
    }
}
