//! What stands on and beside a road: objects with their outlines and repeats, signals, and
//! the OpenCRG surfaces a road refers to.

use super::attrs::{all_extras_attrs, extras, Attrs};
use super::Cx;
use crate::error::Result;
use crate::model::*;
use crate::xml::Raw;

pub(super) fn objects(cx: &Cx, el: Raw) -> Result<Objects> {
    let mut o = Objects { extras: all_extras_attrs(el), ..Default::default() };
    for c in el.elements() {
        match c.name {
            "object" => o.objects.push(object(cx, c)?),
            _ => o.extras.elements.push(c.owned()),
        }
    }
    Ok(o)
}

fn object(cx: &Cx, el: Raw) -> Result<Object> {
    let mut a = Attrs::new(cx, el);
    let mut o = Object {
        id: a.string("id")?,
        s: a.f64("s")?,
        t: a.f64("t")?,
        z_offset: a.f64_or("zOffset", 0.0)?,
        kind: a.opt_string("type"),
        subtype: a.opt_string("subtype"),
        name: a.opt_string("name"),
        orientation: a.opt_string("orientation"),
        hdg: a.opt_f64("hdg")?,
        pitch: a.opt_f64("pitch")?,
        roll: a.opt_f64("roll")?,
        length: a.opt_f64("length")?,
        width: a.opt_f64("width")?,
        height: a.opt_f64("height")?,
        radius: a.opt_f64("radius")?,
        valid_length: a.opt_f64("validLength")?,
        ..Default::default()
    };
    o.extras = extras(a);
    for c in el.elements() {
        match c.name {
            "repeat" => {
                let mut a = Attrs::new(cx, c);
                let mut r = Repeat {
                    s: a.f64("s")?,
                    length: a.f64("length")?,
                    distance: a.f64("distance")?,
                    t_start: a.f64("tStart")?,
                    t_end: a.f64("tEnd")?,
                    height_start: a.f64("heightStart")?,
                    height_end: a.f64("heightEnd")?,
                    z_offset_start: a.f64("zOffsetStart")?,
                    z_offset_end: a.f64("zOffsetEnd")?,
                    extras: Extras::default(),
                };
                r.extras = extras(a);
                o.repeats.push(r);
            }
            "outline" => o.outlines.push(outline(cx, c)?),
            "outlines" => {
                for oc in c.elements() {
                    match oc.name {
                        "outline" => o.outlines.push(outline(cx, oc)?),
                        _ => o.extras.elements.push(oc.owned()),
                    }
                }
            }
            "surface" => {
                for sc in c.elements() {
                    if sc.name == "CRG" {
                        let mut a = Attrs::new(cx, sc);
                        let mut crg = ObjectCrg {
                            file: a.string("file")?,
                            hide_road_surface_crg: a.opt_bool("hideRoadSurfaceCRG")?,
                            z_scale: a.opt_f64("zScale")?,
                            extras: Extras::default(),
                        };
                        crg.extras = extras(a);
                        o.crgs.push(crg);
                    } else {
                        o.extras.elements.push(sc.owned());
                    }
                }
            }
            _ => o.extras.elements.push(c.owned()),
        }
    }
    Ok(o)
}

fn outline(cx: &Cx, el: Raw) -> Result<Outline> {
    let mut a = Attrs::new(cx, el);
    let mut o = Outline {
        id: a.opt_string("id"),
        fill_type: a.opt_string("fillType"),
        outer: a.opt_bool("outer")?,
        closed: a.opt_bool("closed")?,
        lane_type: a.opt_string("laneType"),
        ..Default::default()
    };
    o.extras = extras(a);
    for c in el.elements() {
        match c.name {
            "cornerRoad" => {
                let mut a = Attrs::new(cx, c);
                o.corners.push(Corner::Road {
                    s: a.f64("s")?,
                    t: a.f64("t")?,
                    dz: a.f64("dz")?,
                    height: a.f64("height")?,
                    id: a.opt_string("id"),
                });
            }
            "cornerLocal" => {
                let mut a = Attrs::new(cx, c);
                o.corners.push(Corner::Local {
                    u: a.f64("u")?,
                    v: a.f64("v")?,
                    z: a.f64("z")?,
                    height: a.f64("height")?,
                    id: a.opt_string("id"),
                });
            }
            _ => o.extras.elements.push(c.owned()),
        }
    }
    Ok(o)
}

pub(super) fn signal(cx: &Cx, el: Raw) -> Result<Signal> {
    let mut a = Attrs::new(cx, el);
    let mut s = Signal {
        id: a.string("id")?,
        s: a.f64("s")?,
        t: a.f64("t")?,
        z_offset: a.f64_or("zOffset", 0.0)?,
        dynamic: a.opt_string("dynamic").unwrap_or_else(|| "no".into()),
        orientation: a.opt_string("orientation").unwrap_or_else(|| "none".into()),
        kind: a.opt_string("type").unwrap_or_else(|| "-1".into()),
        subtype: a.opt_string("subtype").unwrap_or_else(|| "-1".into()),
        name: a.opt_string("name"),
        country: a.opt_string("country"),
        value: a.opt_f64("value")?,
        unit: a.opt_string("unit"),
        height: a.opt_f64("height")?,
        width: a.opt_f64("width")?,
        text: a.opt_string("text"),
        h_offset: a.opt_f64("hOffset")?,
        extras: Extras::default(),
    };
    s.extras = extras(a);
    s.extras.elements = el.elements().map(|e| e.owned()).collect();
    Ok(s)
}

pub(super) fn road_crg(cx: &Cx, el: Raw) -> Result<RoadCrg> {
    let mut a = Attrs::new(cx, el);
    let mut c = RoadCrg {
        file: a.string("file")?,
        s_start: a.f64("sStart")?,
        s_end: a.f64("sEnd")?,
        // Required up to 1.8; 1.9 makes it optional (it only matters for attached modes).
        orientation: a.opt_string("orientation").unwrap_or_else(|| "same".into()),
        mode: a.string("mode")?,
        purpose: a.opt_string("purpose"),
        s_offset: a.opt_f64("sOffset")?,
        t_offset: a.opt_f64("tOffset")?,
        z_offset: a.opt_f64("zOffset")?,
        z_scale: a.opt_f64("zScale")?,
        h_offset: a.opt_f64("hOffset")?,
        extras: Extras::default(),
    };
    c.extras = extras(a);
    c.extras.elements = el.elements().map(|e| e.owned()).collect();
    Ok(c)
}
