//! The lanes of a road: lane offsets, lane sections in ascending s, and each lane with its
//! link, widths or borders, road marks, speeds, materials and heights.

use super::attrs::{all_extras_attrs, check_ascending, extras, poly3, Attrs};
use super::Cx;
use crate::error::Result;
use crate::model::*;
use crate::xml::Raw;

pub(super) fn lanes(cx: &Cx, el: Raw) -> Result<Lanes> {
    let mut l = Lanes { extras: all_extras_attrs(el), ..Default::default() };
    for c in el.elements() {
        match c.name {
            "laneOffset" => {
                let rec = poly3(cx, c, "s")?;
                check_ascending(cx, c, rec.s, l.lane_offsets.last().map(|r| r.s))?;
                l.lane_offsets.push(rec);
            }
            "laneSection" => {
                let sec = lane_section(cx, c)?;
                check_ascending(cx, c, sec.s, l.lane_sections.last().map(|r| r.s))?;
                l.lane_sections.push(sec);
            }
            _ => l.extras.elements.push(c.owned()),
        }
    }
    Ok(l)
}

fn lane_section(cx: &Cx, el: Raw) -> Result<LaneSection> {
    let mut a = Attrs::new(cx, el);
    let mut sec = LaneSection { s: a.station("s")?, single_side: a.opt_bool("singleSide")?, ..Default::default() };
    sec.extras = extras(a);
    for c in el.elements() {
        let side = match c.name {
            "left" | "center" | "right" => {
                let mut side = LaneSide { extras: all_extras_attrs(c), ..Default::default() };
                for l in c.elements() {
                    match l.name {
                        "lane" => side.lanes.push(lane(cx, l)?),
                        _ => side.extras.elements.push(l.owned()),
                    }
                }
                side
            }
            _ => {
                sec.extras.elements.push(c.owned());
                continue;
            }
        };
        match c.name {
            "left" => sec.left = Some(side),
            "center" => sec.center = Some(side),
            _ => sec.right = Some(side),
        }
    }
    Ok(sec)
}

fn lane(cx: &Cx, el: Raw) -> Result<Lane> {
    let mut a = Attrs::new(cx, el);
    let id = a.i32("id")?;
    // `type` is required on side lanes; the centre lane may omit it (1.8 schema).
    let kind = if id == 0 { a.opt_string("type") } else { Some(a.string("type")?) };
    let mut lane = Lane { id, kind, level: a.opt_bool("level")?, ..Default::default() };
    lane.extras = extras(a);
    for c in el.elements() {
        match c.name {
            "link" => {
                let mut link = LaneLink { extras: all_extras_attrs(c), ..Default::default() };
                for p in c.elements() {
                    match p.name {
                        "predecessor" => link.predecessors.push(Attrs::new(cx, p).i32("id")?),
                        "successor" => link.successors.push(Attrs::new(cx, p).i32("id")?),
                        _ => link.extras.elements.push(p.owned()),
                    }
                }
                lane.link = Some(link);
            }
            "width" => {
                let rec = poly3(cx, c, "sOffset")?;
                check_ascending(cx, c, rec.s, lane.widths.last().map(|r| r.s))?;
                lane.widths.push(rec);
            }
            "border" => {
                let rec = poly3(cx, c, "sOffset")?;
                check_ascending(cx, c, rec.s, lane.borders.last().map(|r| r.s))?;
                lane.borders.push(rec);
            }
            "roadMark" => {
                let mut a = Attrs::new(cx, c);
                let mut m = RoadMark {
                    s_offset: a.f64("sOffset")?,
                    kind: a.string("type")?,
                    weight: a.opt_string("weight"),
                    // color is required from 1.5 on; older writers omit it. The 1.4 default is "standard".
                    color: a.opt_string("color").unwrap_or_else(|| "standard".into()),
                    material: a.opt_string("material"),
                    width: a.opt_f64("width")?,
                    lane_change: a.opt_string("laneChange"),
                    height: a.opt_f64("height")?,
                    extras: Extras::default(),
                };
                m.extras = extras(a);
                m.extras.elements = c.elements().map(|e| e.owned()).collect();
                lane.road_marks.push(m);
            }
            "material" => {
                let mut a = Attrs::new(cx, c);
                let mut m = LaneMaterial {
                    s_offset: a.f64("sOffset")?,
                    surface: a.opt_string("surface"),
                    friction: a.f64("friction")?,
                    roughness: a.opt_f64("roughness")?,
                    extras: Extras::default(),
                };
                m.extras = extras(a);
                lane.materials.push(m);
            }
            "speed" => {
                let mut a = Attrs::new(cx, c);
                let mut m = LaneSpeed {
                    s_offset: a.f64("sOffset")?,
                    max: a.f64("max")?,
                    unit: a.opt_string("unit"),
                    extras: Extras::default(),
                };
                m.extras = extras(a);
                lane.speeds.push(m);
            }
            "height" => {
                let mut a = Attrs::new(cx, c);
                let mut m = LaneHeight {
                    s_offset: a.f64("sOffset")?,
                    // inner/outer default to 0 per the standard.
                    inner: a.f64_or("inner", 0.0)?,
                    outer: a.f64_or("outer", 0.0)?,
                    extras: Extras::default(),
                };
                m.extras = extras(a);
                lane.heights.push(m);
            }
            _ => lane.extras.elements.push(c.owned()),
        }
    }
    Ok(lane)
}
