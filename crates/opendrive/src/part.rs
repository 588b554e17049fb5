//! The part of a road over an s range, as a road of its own whose s starts at 0.
//!
//! [`road_part`] keeps what the road says over `s0..s1` and nothing else: evaluated at
//! `s - s0`, the part gives the road's reference line (pose and curvature), elevation,
//! superelevation, lane offset and lane borders at `s` (to rounding, 1e-9 m), and the same
//! road marks, lane heights, speeds, materials and access records. How each element is cut:
//!
//! * planView: the records over the range; the first and the last are cut. A line, arc or
//!   spiral starts at the pose of the cut point (a spiral's curvStart and curvEnd are the
//!   curvatures at its cut points). A cut poly3 or paramPoly3 becomes a paramPoly3 with
//!   pRange normalized whose cubics are the original cubics re-expanded on the kept parameter
//!   interval, in the original record's frame (its x, y, hdg), so the curve is the same curve.
//! * elevation, superelevation, laneOffset, lane widths and borders: the record in force at
//!   the cut starts there, its cubic Taylor-shifted; records before it are dropped.
//! * lateral shapes: the shapes in force at the cut points (interpolated linearly in s between
//!   two shape groups, as the standard interpolates them) are added there.
//! * lane sections, road types, roadMark, material, speed, height, access and rule records:
//!   the record in force at the cut starts there (a roadMark's `<type>` lines keep their dash
//!   phase, its `<explicit>` lines are moved and trimmed).
//! * objects, signals, their references, tunnels and bridges: kept when their s lies in the
//!   range, with s re-based.
//! * surface CRG links: sStart and sEnd re-based and clipped to the range; dropped when they
//!   do not overlap it. The CRG file's own u axis is not changed.
//! * link: the predecessor is kept only when the part starts at the road's start, the
//!   successor only when it ends at the road's end; likewise the lane links of the first and
//!   the last lane section.
//!
//! Records at or after the part's end are dropped, except when the part ends at the road's end:
//! then the road's records are kept as they are, so the part 0..length is the road itself.
//!
//! # Units
//! Metres and radians.

use crate::eval::Curve;
use crate::model::*;

/// Why [`road_part`] could not cut a road.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PartError {
    /// An end of the range is NaN or infinite.
    #[error("road {road}: the part {s0}..{s1} is not a finite range")]
    NotFinite {
        /// Road id.
        road: String,
        /// Start of the range asked for, m.
        s0: f64,
        /// End of the range asked for, m.
        s1: f64,
    },
    /// The range is empty or reversed.
    #[error("road {road}: the part {s0}..{s1} is empty")]
    Empty {
        /// Road id.
        road: String,
        /// Start, m.
        s0: f64,
        /// End, m.
        s1: f64,
    },
    /// Clamped to the road, nothing of the range is left.
    #[error("road {road}: the part {s0}..{s1} lies outside the road's s range 0..{length}")]
    Outside {
        /// Road id.
        road: String,
        /// Start, m.
        s0: f64,
        /// End, m.
        s1: f64,
        /// The road's length, m.
        length: f64,
    },
    /// The road has no reference line to cut, or its length is not a positive number.
    #[error("road {road}: no part {s0}..{s1} of a road without geometry (length {length})")]
    NoGeometry {
        /// Road id.
        road: String,
        /// Start, m.
        s0: f64,
        /// End, m.
        s1: f64,
        /// The road's length, m.
        length: f64,
    },
}

/// The part of `road` over `s0..s1` (clamped to `0..road.length`) as a road of its own whose
/// s starts at 0: at s the part is what the road is at `s + s0` (see the module
/// documentation). Its id, name, junction, rule and unknown elements are the road's.
pub fn road_part(road: &Road, s0: f64, s1: f64) -> Result<Road, PartError> {
    let id = || road.id.clone();
    if !s0.is_finite() || !s1.is_finite() {
        return Err(PartError::NotFinite { road: id(), s0, s1 });
    }
    if s0 >= s1 {
        return Err(PartError::Empty { road: id(), s0, s1 });
    }
    let length = road.length;
    if road.plan_view.geometries.is_empty() || !length.is_finite() || length <= 0.0 {
        return Err(PartError::NoGeometry { road: id(), s0, s1, length });
    }
    let (a, b) = (s0.max(0.0), s1.min(length));
    if a >= b {
        return Err(PartError::Outside { road: id(), s0, s1, length });
    }
    // The end of the part, or None when it is the road's end (everything there is kept).
    let end = (b < length).then_some(b);
    let mut part = road.clone();
    part.length = b - a;
    part.plan_view.geometries = cut_plan_view(&road.plan_view.geometries, a, b, end.is_some());
    part.elevation_profile.elevations = cut_poly3(&road.elevation_profile.elevations, a, end);
    part.lateral_profile.superelevations = cut_poly3(&road.lateral_profile.superelevations, a, end);
    part.lateral_profile.shapes = cut_shapes(&road.lateral_profile.shapes, a, end);
    part.lanes.lane_offsets = cut_poly3(&road.lanes.lane_offsets, a, end);
    part.lanes.lane_sections = cut_sections(&road.lanes.lane_sections, a, end);
    part.types = cut_in_force(&road.types, a, end, |t| t.s, |t, s| t.s = s);
    if let Some(link) = &mut part.link {
        if a > 0.0 {
            link.predecessor = None;
        }
        if end.is_some() {
            link.successor = None;
        }
    }
    let inside = |s: f64| (a == 0.0 || s >= a) && end.is_none_or(|e| s <= e);
    let overlaps = |r: &Repeat| (a == 0.0 || r.s + r.length >= a) && end.is_none_or(|e| r.s <= e);
    part.objects.objects = road
        .objects
        .objects
        .iter()
        .filter(|o| inside(o.s) || o.repeats.iter().any(overlaps))
        .map(|o| {
            let mut o = o.clone();
            // An object kept for its repeats stands at the part's end nearest to it.
            o.s = if inside(o.s) { o.s - a } else { (o.s - a).clamp(0.0, b - a) };
            o.repeats = o.repeats.iter().filter(|r| overlaps(r)).map(|r| cut_repeat(r, a, end)).collect();
            for outline in &mut o.outlines {
                for c in &mut outline.corners {
                    if let Corner::Road { s, .. } = c {
                        *s -= a;
                    }
                }
            }
            o
        })
        .collect();
    part.objects.extras.elements = cut_elements(&road.objects.extras.elements, a, &inside);
    part.signals.signals =
        road.signals.signals.iter().filter(|sg| inside(sg.s)).map(|sg| Signal { s: sg.s - a, ..sg.clone() }).collect();
    part.signals.extras.elements = cut_elements(&road.signals.extras.elements, a, &inside);
    part.surface.crgs = road
        .surface
        .crgs
        .iter()
        .filter_map(|c| {
            let (from, to) = (c.s_start.min(c.s_end), c.s_start.max(c.s_end));
            let (lo, hi) = (if a > 0.0 { from.max(a) } else { from }, end.map_or(to, |e| to.min(e)));
            // Dropped when it does not overlap the part (a link of no length only when outside).
            if lo > hi || lo == hi && from < to {
                return None;
            }
            let (s_start, s_end) = if c.s_start <= c.s_end { (lo, hi) } else { (hi, lo) };
            Some(RoadCrg { s_start: s_start - a, s_end: s_end - a, ..c.clone() })
        })
        .collect();
    Ok(part)
}

/// A repeat clipped to the part (`a`, `end`) and re-based: its start moves to the part's start
/// (to the first repeated instance there when it repeats at a distance) and its end to the
/// part's end, its linear attributes (t, height, zOffset and the xStart/xEnd pairs it keeps
/// as extras) taken at the new ends.
fn cut_repeat(r: &Repeat, a: f64, end: Option<f64>) -> Repeat {
    let mut new = r.clone();
    let mut from = r.s;
    if a > 0.0 && r.s < a {
        from = if r.distance > 0.0 { r.s + ((a - r.s) / r.distance).ceil() * r.distance } else { a };
    }
    let to = end.map_or(r.s + r.length, |e| (r.s + r.length).min(e)).max(from);
    if from != r.s || to != r.s + r.length {
        let at = |f: f64| if r.length > 0.0 { (f - r.s) / r.length } else { 0.0 };
        let (f0, f1) = (at(from), at(to));
        let lerp = |x0: f64, x1: f64, f: f64| x0 + f * (x1 - x0);
        (new.t_start, new.t_end) = (lerp(r.t_start, r.t_end, f0), lerp(r.t_start, r.t_end, f1));
        (new.height_start, new.height_end) =
            (lerp(r.height_start, r.height_end, f0), lerp(r.height_start, r.height_end, f1));
        (new.z_offset_start, new.z_offset_end) =
            (lerp(r.z_offset_start, r.z_offset_end, f0), lerp(r.z_offset_start, r.z_offset_end, f1));
        let pair = |name: &str| -> Option<(f64, f64)> {
            let stem = name.strip_suffix("Start")?;
            let get = |n: &str| {
                r.extras.attributes.iter().find(|(k, _)| k == n).and_then(|(_, v)| v.trim().parse::<f64>().ok())
            };
            Some((get(name)?, get(&format!("{stem}End"))?))
        };
        let starts: Vec<String> = r.extras.attributes.iter().map(|(k, _)| k.clone()).collect();
        for name in starts {
            if let Some((x0, x1)) = pair(&name) {
                let stem = name.trim_end_matches("Start");
                let end_name = format!("{stem}End");
                for (k, v) in &mut new.extras.attributes {
                    if *k == name {
                        *v = crate::format_f64(lerp(x0, x1, f0));
                    } else if *k == end_name {
                        *v = crate::format_f64(lerp(x0, x1, f1));
                    }
                }
            }
        }
        new.length = to - from;
    }
    new.s = from - a;
    new
}

/// The index of the record in force at `s`: the last whose start is `<= s`, or the first
/// (0 when there are none), as the evaluator looks records up.
fn in_force<T>(records: &[T], s: f64, start: impl Fn(&T) -> f64) -> usize {
    records.partition_point(|r| start(r) <= s).max(1) - 1
}

/// The plan view over `a..b`, s from 0. `cut_end`: the last record is cut at `b`.
fn cut_plan_view(geoms: &[Geometry], a: f64, b: f64, cut_end: bool) -> Vec<Geometry> {
    let first = in_force(geoms, a, |g| g.s);
    let mut out = Vec::new();
    for (i, g) in geoms.iter().enumerate().skip(first) {
        if i > first && cut_end && g.s >= b {
            break;
        }
        let next = geoms.get(i + 1).map(|n| n.s);
        // Cut at the start when the part starts inside the record (not before it: a first
        // record that starts late is moved, as the evaluator extends it backwards).
        let ds_a = if i == first && g.s < a { a - g.s } else { 0.0 };
        // Cut at the end when this is the last record of the part and it reaches beyond b.
        let last = next.is_none_or(|n| n >= b);
        let ds_b = if cut_end && last && g.s + g.length > b { b - g.s } else { g.length };
        let mut new = g.clone();
        new.s = g.s.max(a) - a;
        let end_cut = ds_b < g.length;
        if ds_a > 0.0 || end_cut {
            // Where the declared length ends before the cut (a record shorter than the gap to
            // the next), keep the range the record is evaluated over.
            let ds_b = if ds_b > ds_a { ds_b } else { next.unwrap_or(b).min(b) - g.s };
            cut_geometry(g, &mut new, ds_a, ds_b, end_cut);
        }
        out.push(new);
    }
    out
}

/// Makes `new` the piece of the record `g` from `ds_a` to `ds_b` along it.
/// `end_cut`: the curve ends at `ds_b` (else a cubic keeps the rest of its parameter range,
/// where the evaluator goes beyond the declared length).
fn cut_geometry(g: &Geometry, new: &mut Geometry, ds_a: f64, ds_b: f64, end_cut: bool) {
    let curve = Curve::new(g);
    new.length = ds_b - ds_a;
    match g.kind {
        GeometryKind::Line | GeometryKind::Arc { .. } | GeometryKind::Spiral { .. } => {
            let start = curve.pose(ds_a);
            (new.x, new.y, new.hdg) = (start.x, start.y, start.hdg);
            if let GeometryKind::Spiral { curv_start, curv_end } = g.kind {
                let rate = if g.length > 0.0 { (curv_end - curv_start) / g.length } else { 0.0 };
                new.kind =
                    GeometryKind::Spiral { curv_start: curv_start + rate * ds_a, curv_end: curv_start + rate * ds_b };
            }
        }
        GeometryKind::Poly3 { .. } | GeometryKind::ParamPoly3 { .. } => {
            let (Some((u, v, p_a)), Some((_, _, p_b))) =
                (curve.cubic_at(ds_a), curve.cubic_at(if end_cut { ds_b } else { f64::INFINITY }))
            else {
                return;
            };
            // p = p_a + w·q, q in [0, 1]: the same curve in the same frame.
            let w = p_b - p_a;
            let expand = |c: [f64; 4]| {
                let value = c[0] + p_a * (c[1] + p_a * (c[2] + p_a * c[3]));
                let slope = c[1] + p_a * (2.0 * c[2] + 3.0 * p_a * c[3]);
                [value, slope * w, (c[2] + 3.0 * c[3] * p_a) * w * w, c[3] * w * w * w]
            };
            new.kind = GeometryKind::ParamPoly3 { u: expand(u), v: expand(v), p_range: PRange::Normalized };
        }
    }
}

/// The cubic `p` re-based to start `h` metres later.
fn shifted(p: &Poly3, h: f64) -> Poly3 {
    Poly3 { s: 0.0, a: p.value(h), b: p.slope(h), c: p.c + 3.0 * p.d * h, d: p.d }
}

/// Cubic records re-based to start at `cut` (new s = s − cut): the record in force at `cut`
/// is shifted to start there, those before it dropped, and those starting at or after `end`
/// (when given) dropped.
fn cut_poly3(records: &[Poly3], cut: f64, end: Option<f64>) -> Vec<Poly3> {
    let first = in_force(records, cut, |r| r.s);
    // Records that the one in force shadows (same start) are kept when the cut does not move
    // it: a part from a record's start keeps what the road has there.
    let from = match records.get(first) {
        Some(f) if f.s >= cut => records[..first].iter().rposition(|r| r.s != f.s).map_or(0, |k| k + 1),
        _ => first,
    };
    let mut out = Vec::new();
    for (i, r) in records.iter().enumerate().skip(from) {
        if i > first && end.is_some_and(|e| r.s >= e) {
            continue;
        }
        out.push(if i == first && r.s < cut { shifted(r, cut - r.s) } else { Poly3 { s: r.s - cut, ..*r } });
    }
    out
}

/// Records that hold from their start on (lane sections, road types, roadMark, speed, ...)
/// re-based to `cut`: those in force at `cut` (all that share the start in force) start at 0,
/// earlier ones are dropped, those starting at or after `end` (when given) too.
/// The records need not be in order: the start in force is the largest start `<= cut`.
fn cut_in_force<T: Clone>(
    records: &[T],
    cut: f64,
    end: Option<f64>,
    start: impl Fn(&T) -> f64,
    set: impl Fn(&mut T, f64),
) -> Vec<T> {
    let from = start_in_force(records, cut, &start);
    records
        .iter()
        .filter(|r| {
            let s = start(r);
            Some(s) == from || s > cut && end.is_none_or(|e| s < e)
        })
        .map(|r| {
            let mut r = r.clone();
            let s = start(&r);
            set(&mut r, if s < cut { 0.0 } else { s - cut });
            r
        })
        .collect()
}

/// The largest start `<= cut`, if any.
fn start_in_force<T>(records: &[T], cut: f64, start: impl Fn(&T) -> f64) -> Option<f64> {
    records.iter().map(start).filter(|&s| s <= cut).max_by(f64::total_cmp)
}

/// Lane sections re-based to `cut`; inside the section in force at `cut`, the lanes' records
/// are cut where the part starts; records at or after `end` are dropped.
fn cut_sections(sections: &[LaneSection], cut: f64, end: Option<f64>) -> Vec<LaneSection> {
    let first = in_force(sections, cut, |l| l.s);
    let mut out: Vec<LaneSection> = Vec::new();
    for (i, sec) in sections.iter().enumerate().skip(first) {
        if i > first && end.is_some_and(|e| sec.s >= e) {
            break;
        }
        let delta = if sec.s < cut { cut - sec.s } else { 0.0 };
        let end_rel = end.map(|e| e - sec.s);
        let mut new = sec.clone();
        new.s = sec.s.max(cut) - cut;
        for side in [&mut new.left, &mut new.center, &mut new.right].into_iter().flatten() {
            for lane in &mut side.lanes {
                cut_lane(lane, delta, end_rel);
            }
        }
        out.push(new);
    }
    // Lane links into sections (or roads) that are not part of the part.
    if cut > 0.0 {
        if let Some(sec) = out.first_mut() {
            for side in [&mut sec.left, &mut sec.center, &mut sec.right].into_iter().flatten() {
                for lane in &mut side.lanes {
                    if let Some(link) = &mut lane.link {
                        link.predecessors.clear();
                    }
                }
            }
        }
    }
    if end.is_some() {
        if let Some(sec) = out.last_mut() {
            for side in [&mut sec.left, &mut sec.center, &mut sec.right].into_iter().flatten() {
                for lane in &mut side.lanes {
                    if let Some(link) = &mut lane.link {
                        link.successors.clear();
                    }
                }
            }
        }
    }
    out
}

/// A lane's records re-based to `delta` metres into its section (`end`: the part's end from
/// the section start).
fn cut_lane(lane: &mut Lane, delta: f64, end: Option<f64>) {
    lane.widths = cut_poly3(&lane.widths, delta, end);
    lane.borders = cut_poly3(&lane.borders, delta, end);
    // The marks in force at the cut start `moved` metres later than they did: their lines
    // move back.
    let mut marks = std::mem::take(&mut lane.road_marks);
    if let Some(from) = start_in_force(&marks, delta, |m| m.s_offset) {
        if from < delta {
            for m in marks.iter_mut().filter(|m| m.s_offset == from) {
                for e in &mut m.extras.elements {
                    shift_mark_lines(e, delta - from);
                }
            }
        }
    }
    lane.road_marks = cut_in_force(&marks, delta, end, |m| m.s_offset, |m, s| m.s_offset = s);
    lane.materials = cut_in_force(&lane.materials, delta, end, |m| m.s_offset, |m, s| m.s_offset = s);
    lane.speeds = cut_in_force(&lane.speeds, delta, end, |m| m.s_offset, |m, s| m.s_offset = s);
    lane.heights = cut_in_force(&lane.heights, delta, end, |m| m.s_offset, |m, s| m.s_offset = s);
    // access, rule and other records with an sOffset, each kind on its own, in file order.
    let elements = std::mem::take(&mut lane.extras.elements);
    let offset = |e: &Element| attr_f64(e, "sOffset");
    let mut names: Vec<&str> = Vec::new();
    for e in elements.iter().filter(|e| offset(e).is_some()) {
        if !names.contains(&e.name.as_str()) {
            names.push(e.name.as_str());
        }
    }
    let mut kept: Vec<(usize, Element)> =
        elements.iter().enumerate().filter(|(_, e)| offset(e).is_none()).map(|(i, e)| (i, e.clone())).collect();
    for name in names {
        let group: Vec<(usize, Element)> = elements
            .iter()
            .enumerate()
            .filter(|(_, e)| e.name == name && offset(e).is_some())
            .map(|(i, e)| (i, e.clone()))
            .collect();
        kept.extend(cut_in_force(
            &group,
            delta,
            end,
            |(_, e)| offset(e).unwrap_or(0.0),
            |(_, e), s| set_attr_f64(e, "sOffset", s),
        ));
    }
    kept.sort_by_key(|(i, _)| *i);
    lane.extras.elements = kept.into_iter().map(|(_, e)| e).collect();
}

/// A roadMark child moved `moved` metres along: `<type>` lines keep their dash phase,
/// `<explicit>` lines move back and are trimmed at the mark's new start.
fn shift_mark_lines(e: &mut Element, moved: f64) {
    let explicit = match e.name.as_str() {
        "type" => false,
        "explicit" => true,
        _ => return,
    };
    let mut children = Vec::new();
    for node in std::mem::take(&mut e.children) {
        let Node::Element(mut line) = node else {
            children.push(node);
            continue;
        };
        if line.name == "line" {
            let (Some(off), Some(len)) = (attr_f64(&line, "sOffset"), attr_f64(&line, "length")) else {
                children.push(Node::Element(line));
                continue;
            };
            if explicit {
                let off = off - moved;
                if off + len <= 0.0 {
                    continue;
                }
                if off < 0.0 {
                    set_attr_f64(&mut line, "length", off + len);
                }
                set_attr_f64(&mut line, "sOffset", off.max(0.0));
            } else {
                let period = len + attr_f64(&line, "space").unwrap_or(0.0);
                if period > 0.0 && period.is_finite() {
                    set_attr_f64(&mut line, "sOffset", (off - moved).rem_euclid(period));
                }
            }
        }
        children.push(Node::Element(line));
    }
    e.children = children;
}

fn attr_f64(e: &Element, name: &str) -> Option<f64> {
    e.attribute(name).and_then(|v| v.trim().parse::<f64>().ok()).filter(|v| v.is_finite())
}

fn set_attr_f64(e: &mut Element, name: &str, value: f64) {
    if attr_f64(e, name) == Some(value) {
        return; // unchanged: keep the text as written
    }
    let text = crate::format_f64(value);
    if let Some(slot) = e.attributes.iter_mut().find(|(k, _)| k == name) {
        slot.1 = text;
    } else {
        e.attributes.push((name.to_string(), text));
    }
}

/// Elements with an `s` attribute (objectReference, signalReference, tunnel, bridge, ...) kept
/// when `inside` their s, re-based by `cut`; others kept as they are.
fn cut_elements(elements: &[Element], cut: f64, inside: &impl Fn(f64) -> bool) -> Vec<Element> {
    elements
        .iter()
        .filter_map(|e| match attr_f64(e, "s") {
            Some(s) if inside(s) => {
                let mut e = e.clone();
                set_attr_f64(&mut e, "s", s - cut);
                Some(e)
            }
            Some(_) => None,
            None => Some(e.clone()),
        })
        .collect()
}

/// Lateral shapes over the part: the groups (shapes sharing an s) inside it re-based, and
/// where the part starts or ends between two groups, the group interpolated there.
fn cut_shapes(shapes: &[Shape], cut: f64, end: Option<f64>) -> Vec<Shape> {
    if shapes.is_empty() {
        return Vec::new();
    }
    let mut starts: Vec<f64> = shapes.iter().map(|sh| sh.s).collect();
    starts.sort_by(f64::total_cmp);
    starts.dedup();
    let group = |s: f64| -> Vec<Shape> {
        let mut g: Vec<Shape> = shapes.iter().filter(|sh| sh.s == s).copied().collect();
        g.sort_by(|x, y| x.t.total_cmp(&y.t));
        g
    };
    let mut out = Vec::new();
    // At the start.
    let before = starts.iter().rev().find(|&&s| s <= cut).copied();
    let after = starts.iter().find(|&&s| s > cut).copied();
    match (before, after) {
        (Some(s), _) if s == cut || cut == 0.0 && s < cut => {}
        (Some(s), Some(n)) => out.extend(interpolate_shapes(&group(s), &group(n), (cut - s) / (n - s), cut)),
        (Some(s), None) => out.extend(group(s).into_iter().map(|sh| Shape { s: cut, ..sh })),
        (None, _) => {}
    }
    for &s in &starts {
        let keep_before = cut == 0.0 && s < 0.0;
        if (s >= cut || keep_before) && end.is_none_or(|e| s <= e) {
            out.extend(group(s));
        }
    }
    if let Some(e) = end {
        let before = starts.iter().rev().find(|&&s| s <= e).copied();
        let after = starts.iter().find(|&&s| s > e).copied();
        if let (Some(s), Some(n)) = (before, after) {
            if s != e {
                out.extend(interpolate_shapes(&group(s), &group(n), (e - s) / (n - s), e));
            }
        }
    }
    for sh in &mut out {
        sh.s -= cut;
    }
    out
}

/// The shape group `(1 − w)·A + w·B` at `s`: one cubic piece per break of either group.
fn interpolate_shapes(a: &[Shape], b: &[Shape], w: f64, s: f64) -> Vec<Shape> {
    let mut breaks: Vec<f64> = a.iter().chain(b).map(|sh| sh.t).collect();
    breaks.sort_by(f64::total_cmp);
    breaks.dedup();
    let at = |g: &[Shape], t: f64| -> Poly3 {
        let k = in_force(g, t, |sh| sh.t);
        g.get(k).map_or(Poly3::default(), |sh| {
            let p = Poly3 { s: sh.t, a: sh.a, b: sh.b, c: sh.c, d: sh.d };
            shifted(&p, t - sh.t)
        })
    };
    breaks
        .into_iter()
        .map(|t| {
            let (pa, pb) = (at(a, t), at(b, t));
            let mix = |x: f64, y: f64| (1.0 - w) * x + w * y;
            Shape { s, t, a: mix(pa.a, pb.a), b: mix(pa.b, pb.b), c: mix(pa.c, pb.c), d: mix(pa.d, pb.d) }
        })
        .collect()
}
