//! The root and the top-level elements: the header, each road with its link, types, plan view
//! (geometry records), elevation and lateral profiles, and each junction with its connections.

use super::attrs::{all_extras_attrs, check_ascending, extras, poly3, Attrs};
use super::lanes::lanes;
use super::objects::{objects, road_crg, signal};
use super::{Cx, ReadOptions};
use crate::error::{ErrorKind, Result};
use crate::model::*;
use crate::xml::Raw;

pub(super) fn opendrive(cx: &Cx, root: Raw, options: &ReadOptions) -> Result<OpenDrive> {
    let mut odr =
        OpenDrive { extras: Extras { attributes: root.owned_attributes(), elements: vec![] }, ..Default::default() };
    let mut header_seen = false;
    for child in root.elements() {
        match child.name {
            "header" => {
                odr.header = header(cx, child, options)?;
                header_seen = true;
            }
            "road" => odr.roads.push(road(cx, child)?),
            "controller" => odr.controllers.push(child.owned()),
            "junction" => odr.junctions.push(junction(cx, child)?),
            _ => odr.extras.elements.push(child.owned()),
        }
    }
    if !header_seen {
        return Err(cx.err(root, ErrorKind::MissingElement { parent: "OpenDRIVE".into(), child: "header" }));
    }
    Ok(odr)
}

fn header(cx: &Cx, el: Raw, options: &ReadOptions) -> Result<Header> {
    let mut a = Attrs::new(cx, el);
    let rev_major = a.u32("revMajor")?;
    if rev_major != 1 && !options.any_major_version {
        return Err(a.invalid("revMajor", &rev_major.to_string(), "only OpenDRIVE 1.x is supported"));
    }
    let rev_minor = a.u32("revMinor")?;
    let mut h = Header {
        rev_major,
        rev_minor,
        name: a.opt_string("name"),
        version: a.opt_string("version"),
        date: a.opt_string("date"),
        north: a.opt_f64("north")?,
        south: a.opt_f64("south")?,
        east: a.opt_f64("east")?,
        west: a.opt_f64("west")?,
        vendor: a.opt_string("vendor"),
        geo_reference: None,
        offset: None,
        extras: Extras::default(),
    };
    h.extras = extras(a);
    for child in el.elements() {
        match child.name {
            "geoReference" => h.geo_reference = Some(child.text()),
            "offset" => {
                let mut a = Attrs::new(cx, child);
                h.offset = Some(HeaderOffset { x: a.f64("x")?, y: a.f64("y")?, z: a.f64("z")?, hdg: a.f64("hdg")? });
            }
            _ => h.extras.elements.push(child.owned()),
        }
    }
    Ok(h)
}

fn road(cx: &Cx, el: Raw) -> Result<Road> {
    let mut a = Attrs::new(cx, el);
    let mut r = Road {
        id: a.string("id")?,
        name: a.opt_string("name"),
        length: a.length("length")?,
        junction: a.string("junction")?,
        rule: a.opt_string("rule"),
        ..Default::default()
    };
    r.extras = extras(a);
    let mut plan_view_seen = false;
    for child in el.elements() {
        match child.name {
            "link" => r.link = Some(road_link(cx, child)?),
            "type" => r.types.push(road_type(cx, child)?),
            "planView" => {
                r.plan_view = plan_view(cx, child)?;
                plan_view_seen = true;
            }
            "elevationProfile" => {
                let mut p = ElevationProfile { extras: all_extras_attrs(child), ..Default::default() };
                for c in child.elements() {
                    match c.name {
                        "elevation" => {
                            let rec = poly3(cx, c, "s")?;
                            check_ascending(cx, c, rec.s, p.elevations.last().map(|r| r.s))?;
                            p.elevations.push(rec);
                        }
                        _ => p.extras.elements.push(c.owned()),
                    }
                }
                r.elevation_profile = p;
            }
            "lateralProfile" => {
                let mut p = LateralProfile { extras: all_extras_attrs(child), ..Default::default() };
                for c in child.elements() {
                    match c.name {
                        "superelevation" => {
                            let rec = poly3(cx, c, "s")?;
                            check_ascending(cx, c, rec.s, p.superelevations.last().map(|r| r.s))?;
                            p.superelevations.push(rec);
                        }
                        "shape" => {
                            let mut a = Attrs::new(cx, c);
                            p.shapes.push(Shape {
                                s: a.station("s")?,
                                t: a.f64("t")?,
                                a: a.f64("a")?,
                                b: a.f64("b")?,
                                c: a.f64("c")?,
                                d: a.f64("d")?,
                            });
                        }
                        _ => p.extras.elements.push(c.owned()),
                    }
                }
                r.lateral_profile = p;
            }
            "lanes" => r.lanes = lanes(cx, child)?,
            "objects" => r.objects = objects(cx, child)?,
            "signals" => {
                let mut s = Signals { extras: all_extras_attrs(child), ..Default::default() };
                for c in child.elements() {
                    match c.name {
                        "signal" => s.signals.push(signal(cx, c)?),
                        _ => s.extras.elements.push(c.owned()),
                    }
                }
                r.signals = s;
            }
            "surface" => {
                let mut s = Surface { extras: all_extras_attrs(child), ..Default::default() };
                for c in child.elements() {
                    match c.name {
                        "CRG" => s.crgs.push(road_crg(cx, c)?),
                        _ => s.extras.elements.push(c.owned()),
                    }
                }
                r.surface = s;
            }
            _ => r.extras.elements.push(child.owned()),
        }
    }
    if !plan_view_seen {
        return Err(cx.err(el, ErrorKind::MissingElement { parent: "road".into(), child: "planView" }));
    }
    Ok(r)
}

fn road_link(cx: &Cx, el: Raw) -> Result<RoadLink> {
    let mut l = RoadLink { extras: all_extras_attrs(el), ..Default::default() };
    for c in el.elements() {
        match c.name {
            "predecessor" | "successor" => {
                let mut a = Attrs::new(cx, c);
                let mut t = LinkTarget {
                    element_type: a.string("elementType")?,
                    element_id: a.string("elementId")?,
                    contact_point: a.opt_string("contactPoint"),
                    extras: Extras::default(),
                };
                t.extras = extras(a);
                t.extras.elements = c.elements().map(|e| e.owned()).collect();
                if c.name == "predecessor" {
                    l.predecessor = Some(t);
                } else {
                    l.successor = Some(t);
                }
            }
            _ => l.extras.elements.push(c.owned()),
        }
    }
    Ok(l)
}

fn road_type(cx: &Cx, el: Raw) -> Result<RoadType> {
    let mut a = Attrs::new(cx, el);
    let mut t = RoadType {
        s: a.f64("s")?,
        kind: a.string("type")?,
        country: a.opt_string("country"),
        speed: None,
        extras: Extras::default(),
    };
    t.extras = extras(a);
    for c in el.elements() {
        match c.name {
            "speed" => {
                let mut a = Attrs::new(cx, c);
                t.speed = Some((a.string("max")?, a.opt_string("unit")));
            }
            _ => t.extras.elements.push(c.owned()),
        }
    }
    Ok(t)
}

fn plan_view(cx: &Cx, el: Raw) -> Result<PlanView> {
    let mut pv = PlanView { extras: all_extras_attrs(el), ..Default::default() };
    for c in el.elements() {
        match c.name {
            "geometry" => {
                let g = geometry(cx, c)?;
                check_ascending(cx, c, g.s, pv.geometries.last().map(|g| g.s))?;
                pv.geometries.push(g);
            }
            _ => pv.extras.elements.push(c.owned()),
        }
    }
    Ok(pv)
}

fn geometry(cx: &Cx, el: Raw) -> Result<Geometry> {
    let mut a = Attrs::new(cx, el);
    let s = a.length("s")?;
    let x = a.f64("x")?;
    let y = a.f64("y")?;
    let hdg = a.f64("hdg")?;
    let length = a.length("length")?;
    let mut ex = extras(a);
    let mut kind = None;
    for c in el.elements() {
        let k = match c.name {
            "line" => Some(GeometryKind::Line),
            "arc" => Some(GeometryKind::Arc { curvature: Attrs::new(cx, c).f64("curvature")? }),
            "spiral" => {
                let mut a = Attrs::new(cx, c);
                Some(GeometryKind::Spiral { curv_start: a.f64("curvStart")?, curv_end: a.f64("curvEnd")? })
            }
            "poly3" => {
                let mut a = Attrs::new(cx, c);
                Some(GeometryKind::Poly3 { a: a.f64("a")?, b: a.f64("b")?, c: a.f64("c")?, d: a.f64("d")? })
            }
            "paramPoly3" => {
                let mut a = Attrs::new(cx, c);
                let u = [a.f64("aU")?, a.f64("bU")?, a.f64("cU")?, a.f64("dU")?];
                let v = [a.f64("aV")?, a.f64("bV")?, a.f64("cV")?, a.f64("dV")?];
                // pRange is optional before 1.8; the standard's default is "normalized".
                let p_range = match a.raw("pRange") {
                    None => PRange::Normalized,
                    Some("arcLength") => PRange::ArcLength,
                    Some("normalized") => PRange::Normalized,
                    Some(other) => return Err(a.invalid("pRange", other, "expected arcLength or normalized")),
                };
                Some(GeometryKind::ParamPoly3 { u, v, p_range })
            }
            _ => None,
        };
        match (k, kind) {
            (Some(k), None) => kind = Some(k),
            (Some(_), Some(_)) => {
                return Err(cx.err(
                    c,
                    ErrorKind::InvalidAttribute {
                        element: "geometry".into(),
                        attribute: c.name.to_string(),
                        value: String::new(),
                        reason: "a geometry has exactly one curve element".into(),
                    },
                ))
            }
            (None, _) => ex.elements.push(c.owned()),
        }
    }
    let kind = kind.ok_or_else(|| {
        let found: Vec<&str> = el.elements().map(|c| c.name).collect();
        let detail = if found.is_empty() { String::new() } else { format!(" (found <{}>)", found.join(">, <")) };
        cx.err(el, ErrorKind::UnknownGeometry(detail))
    })?;
    Ok(Geometry { s, x, y, hdg, length, kind, extras: ex })
}

fn junction(cx: &Cx, el: Raw) -> Result<Junction> {
    let mut a = Attrs::new(cx, el);
    let mut j =
        Junction { id: a.string("id")?, name: a.opt_string("name"), kind: a.opt_string("type"), ..Default::default() };
    j.extras = extras(a);
    for c in el.elements() {
        match c.name {
            "connection" => {
                let mut a = Attrs::new(cx, c);
                let mut con = Connection {
                    id: a.string("id")?,
                    incoming_road: a.opt_string("incomingRoad"),
                    connecting_road: a.opt_string("connectingRoad"),
                    linked_road: a.opt_string("linkedRoad"),
                    contact_point: a.opt_string("contactPoint"),
                    ..Default::default()
                };
                con.extras = extras(a);
                for l in c.elements() {
                    match l.name {
                        "laneLink" => {
                            let mut a = Attrs::new(cx, l);
                            let mut ll =
                                LaneLinkPair { from: a.i32("from")?, to: a.i32("to")?, extras: Extras::default() };
                            ll.extras = extras(a);
                            con.lane_links.push(ll);
                        }
                        _ => con.extras.elements.push(l.owned()),
                    }
                }
                j.connections.push(con);
            }
            _ => j.extras.elements.push(c.owned()),
        }
    }
    Ok(j)
}
