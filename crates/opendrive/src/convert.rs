//! Upgrading a model read from an older (or newer) file so that it is valid in the revision
//! it will be written as. The reader and writer never change content on their own; this is
//! the one place that does, and every change is reported.
//!
//! What 1.8 forbids that older files have (found in the sample maps): `userData` and width
//! records on the centre lane, `userData` next to the curve inside `<geometry>`, `userData`
//! without `code`, roadMark `<type>` with zero width, object types outside the enumeration,
//! object and signal ids reused across roads, zero-length geometry records, lanes with both
//! width and border records, 1.9 attributes (`xOffset`/`yOffset` on a road CRG).

use crate::model::*;
use crate::write::Version;
use crate::xml::{Element, Node};
use std::collections::HashSet;

/// Object types of the 1.8 enumeration.
const OBJECT_TYPES_1_8: &[&str] = &[
    "none",
    "obstacle",
    "car",
    "pole",
    "tree",
    "vegetation",
    "barrier",
    "building",
    "parkingSpace",
    "patch",
    "railing",
    "trafficIsland",
    "crosswalk",
    "streetLamp",
    "gantry",
    "soundBarrier",
    "van",
    "bus",
    "trailer",
    "bike",
    "motorbike",
    "tram",
    "train",
    "pedestrian",
    "wind",
    "roadMark",
    "roadSurface",
];

/// Makes `odr` valid for `version` where the content allows it; returns one note per change.
pub fn upgrade(odr: &mut OpenDrive, version: Version) -> Vec<String> {
    let mut notes = Vec::new();
    let v18 = version == Version::V1_8;
    let mut object_ids: HashSet<String> = HashSet::new();
    let mut signal_ids: HashSet<String> = HashSet::new();
    for road in &mut odr.roads {
        let rid = road.id.clone();
        // userData may not stand beside the curve in <geometry> (any revision): move it up.
        let mut moved = 0;
        let before = road.plan_view.geometries.len();
        road.plan_view.geometries.retain(|g| g.length > 0.0);
        if road.plan_view.geometries.len() != before {
            notes.push(format!(
                "road {rid}: removed {} zero-length geometry record(s)",
                before - road.plan_view.geometries.len()
            ));
        }
        for g in &mut road.plan_view.geometries {
            moved += g.extras.elements.len();
            road.plan_view.extras.elements.append(&mut g.extras.elements);
        }
        if moved > 0 {
            notes.push(format!("road {rid}: moved {moved} element(s) from <geometry> to <planView>"));
        }
        for sec in &mut road.lanes.lane_sections {
            let s = sec.s;
            if let Some(center) = &mut sec.center {
                for lane in &mut center.lanes {
                    if v18 {
                        let n = lane.extras.elements.len();
                        if n > 0 {
                            sec.extras.elements.append(&mut lane.extras.elements);
                            notes.push(format!("road {rid} section s={s}: moved {n} element(s) from the centre lane to <laneSection> (1.8 allows only link and roadMark there)"));
                        }
                        let dropped = lane.widths.len()
                            + lane.borders.len()
                            + lane.materials.len()
                            + lane.speeds.len()
                            + lane.heights.len();
                        if dropped > 0 {
                            lane.widths.clear();
                            lane.borders.clear();
                            lane.materials.clear();
                            lane.speeds.clear();
                            lane.heights.clear();
                            notes.push(format!("road {rid} section s={s}: removed {dropped} width/border/material/speed/height record(s) of the centre lane (it has no width)"));
                        }
                    }
                }
            }
            for lane in [&mut sec.left, &mut sec.right, &mut sec.center]
                .into_iter()
                .flatten()
                .flat_map(|side| side.lanes.iter_mut())
            {
                let where_ = format!("road {rid} section s={s} lane {}", lane.id);
                if v18 && !lane.widths.is_empty() && !lane.borders.is_empty() {
                    notes.push(format!(
                        "{where_}: removed {} border record(s); 1.8 takes either width or border",
                        lane.borders.len()
                    ));
                    lane.borders.clear();
                }
                for m in &mut lane.road_marks {
                    let before = m.extras.elements.len();
                    m.extras.elements.retain(|e| e.name != "type" || positive(e.attribute("width")));
                    if m.extras.elements.len() != before {
                        notes
                            .push(format!("{where_}: removed a roadMark <type> of zero width (its width must be > 0)"));
                    }
                    for t in m.extras.elements.iter_mut().filter(|e| e.name == "type") {
                        for line in t.children.iter_mut().filter_map(|n| match n {
                            Node::Element(e) if e.name == "line" => Some(e),
                            _ => None,
                        }) {
                            let before = line.attributes.len();
                            line.attributes.retain(|(k, v)| k != "width" || positive(Some(v)));
                            if line.attributes.len() != before {
                                notes.push(format!(
                                    "{where_}: removed width=0 of a roadMark line (optional, must be > 0)"
                                ));
                            }
                        }
                    }
                }
            }
        }
        for o in &mut road.objects.objects {
            if let Some(kind) = &o.kind {
                let known = OBJECT_TYPES_1_8.contains(&kind.as_str()) && (v18 || kind != "roadSurface");
                if !known {
                    notes.push(format!(
                        "road {rid} object {}: type \"{kind}\" is not an object type of 1.{}; written as type \"none\", subtype \"{kind}\"",
                        o.id,
                        version.minor()
                    ));
                    if o.subtype.is_none() {
                        o.subtype = Some(kind.clone());
                    }
                    o.kind = Some("none".into());
                }
            }
            if !object_ids.insert(o.id.clone()) {
                let new = unique_id(&o.id, &rid, &object_ids);
                notes.push(format!("road {rid}: object id {} is used on another road too; renamed to {new}", o.id));
                object_ids.insert(new.clone());
                o.id = new;
            }
        }
        for sg in &mut road.signals.signals {
            if !signal_ids.insert(sg.id.clone()) {
                let new = unique_id(&sg.id, &rid, &signal_ids);
                notes.push(format!("road {rid}: signal id {} is used on another road too; renamed to {new}", sg.id));
                signal_ids.insert(new.clone());
                sg.id = new;
            }
        }
        for c in &mut road.surface.crgs {
            let before = c.extras.attributes.len();
            c.extras.attributes.retain(|(k, _)| k != "xOffset" && k != "yOffset");
            if c.extras.attributes.len() != before {
                notes.push(format!(
                    "road {rid} CRG {}: dropped xOffset/yOffset, which exist only from OpenDRIVE 1.9",
                    c.file
                ));
            }
        }
    }
    if !v18 {
        downgrade(odr, version, &mut notes);
    }
    let mut missing_code = 0;
    visit_extras(odr, &mut |ex| {
        for e in &mut ex.elements {
            missing_code += fix_user_data_code(e);
        }
    });
    if missing_code > 0 {
        notes.push(format!(
            "gave {missing_code} userData element(s) without the required code the name of their first child as code"
        ));
    }
    notes
}

/// What 1.6 and 1.7 lack: the centre lane needs a type; `laneLink@overlapZone` is 1.8; direct
/// junctions (`linkedRoad`, `type="direct"`) and object `<surface><CRG>` are 1.7+.
fn downgrade(odr: &mut OpenDrive, version: Version, notes: &mut Vec<String>) {
    let v16 = version == Version::V1_6;
    for road in &mut odr.roads {
        let rid = road.id.clone();
        for sec in &mut road.lanes.lane_sections {
            for lane in sec.center.iter_mut().flat_map(|c| c.lanes.iter_mut()) {
                if lane.kind.is_none() {
                    lane.kind = Some("none".into());
                    notes.push(format!(
                        "road {rid} section s={}: centre lane given type \"none\" (required before 1.8)",
                        sec.s
                    ));
                }
            }
        }
        if v16 {
            for o in &mut road.objects.objects {
                if !o.crgs.is_empty() {
                    notes.push(format!(
                        "road {rid} object {}: dropped {} surface CRG(s), which 1.6 cannot hold",
                        o.id,
                        o.crgs.len()
                    ));
                    o.crgs.clear();
                }
            }
        }
    }
    for j in &mut odr.junctions {
        if v16 && j.kind.as_deref() == Some("direct") {
            notes.push(format!("junction {}: type \"direct\" exists from 1.7 on; written without a type", j.id));
            j.kind = None;
        }
        for c in &mut j.connections {
            if v16 {
                if let Some(r) = c.linked_road.take() {
                    notes.push(format!("junction {} connection {}: dropped linkedRoad {r} (1.7+)", j.id, c.id));
                }
            }
            for l in &mut c.lane_links {
                let before = l.extras.attributes.len();
                l.extras.attributes.retain(|(k, _)| k != "overlapZone");
                if l.extras.attributes.len() != before {
                    notes.push(format!("junction {} connection {}: dropped laneLink overlapZone (1.8)", j.id, c.id));
                }
            }
        }
    }
}

/// Calls `f` on every [`Extras`] of the model.
pub fn visit_extras(odr: &mut OpenDrive, f: &mut impl FnMut(&mut Extras)) {
    f(&mut odr.extras);
    f(&mut odr.header.extras);
    for r in &mut odr.roads {
        f(&mut r.extras);
        if let Some(l) = &mut r.link {
            f(&mut l.extras);
            for t in [&mut l.predecessor, &mut l.successor].into_iter().flatten() {
                f(&mut t.extras);
            }
        }
        for t in &mut r.types {
            f(&mut t.extras);
        }
        f(&mut r.plan_view.extras);
        for g in &mut r.plan_view.geometries {
            f(&mut g.extras);
        }
        f(&mut r.elevation_profile.extras);
        f(&mut r.lateral_profile.extras);
        f(&mut r.lanes.extras);
        for sec in &mut r.lanes.lane_sections {
            f(&mut sec.extras);
            for side in [&mut sec.left, &mut sec.center, &mut sec.right].into_iter().flatten() {
                f(&mut side.extras);
                for lane in &mut side.lanes {
                    f(&mut lane.extras);
                    if let Some(l) = &mut lane.link {
                        f(&mut l.extras);
                    }
                    for m in &mut lane.road_marks {
                        f(&mut m.extras);
                    }
                    for m in &mut lane.materials {
                        f(&mut m.extras);
                    }
                    for m in &mut lane.speeds {
                        f(&mut m.extras);
                    }
                    for m in &mut lane.heights {
                        f(&mut m.extras);
                    }
                }
            }
        }
        f(&mut r.objects.extras);
        for o in &mut r.objects.objects {
            f(&mut o.extras);
            for x in &mut o.repeats {
                f(&mut x.extras);
            }
            for x in &mut o.outlines {
                f(&mut x.extras);
            }
            for x in &mut o.crgs {
                f(&mut x.extras);
            }
        }
        f(&mut r.signals.extras);
        for s in &mut r.signals.signals {
            f(&mut s.extras);
        }
        f(&mut r.surface.extras);
        for c in &mut r.surface.crgs {
            f(&mut c.extras);
        }
    }
    for j in &mut odr.junctions {
        f(&mut j.extras);
        for c in &mut j.connections {
            f(&mut c.extras);
            for l in &mut c.lane_links {
                f(&mut l.extras);
            }
        }
    }
}

fn positive(v: Option<&str>) -> bool {
    v.and_then(|v| v.trim().parse::<f64>().ok()).is_some_and(|x| x > 0.0)
}

fn unique_id(id: &str, road: &str, used: &HashSet<String>) -> String {
    let base = format!("{id}_road{road}");
    let mut candidate = base.clone();
    let mut k = 2;
    while used.contains(&candidate) {
        candidate = format!("{base}_{k}");
        k += 1;
    }
    candidate
}

/// `userData@code` is required from 1.5 on; old RoadRunner files omit it. Use the name of the
/// first child element (e.g. "vectorLane") as the code, in this element and all below it.
fn fix_user_data_code(e: &mut Element) -> usize {
    let mut n = 0;
    if e.name == "userData" && e.attribute("code").is_none() {
        let code = e.elements().next().map_or_else(|| "userData".to_string(), |c| c.name.clone());
        e.attributes.insert(0, ("code".into(), code));
        n += 1;
    }
    for c in e.children.iter_mut() {
        if let Node::Element(c) = c {
            n += fix_user_data_code(c);
        }
    }
    n
}
