//! [`OpenDrive`] model -> XML text. Mirrors `read.rs` element for element: the model becomes an
//! [`Element`] tree in the standard's child order, which is then printed.
//!
//! Numbers are printed in the shortest form that reads back to the same `f64`, so
//! read -> write -> read gives an equal model.

use crate::error::{Error, ErrorKind, Result};
use crate::model::*;
use crate::xml::{Element, Node};
use std::path::Path;

/// Which revision to write. Our files are written as 1.8 unless asked otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Version {
    /// OpenDRIVE 1.6.
    V1_6,
    /// OpenDRIVE 1.7.
    V1_7,
    /// OpenDRIVE 1.8.
    #[default]
    V1_8,
}

impl Version {
    /// revMinor.
    pub fn minor(self) -> u32 {
        match self {
            Version::V1_6 => 6,
            Version::V1_7 => 7,
            Version::V1_8 => 8,
        }
    }
    /// Parses "1.6", "1.7", "1.8".
    pub fn parse(s: &str) -> Option<Version> {
        match s.trim() {
            "1.6" => Some(Version::V1_6),
            "1.7" => Some(Version::V1_7),
            "1.8" => Some(Version::V1_8),
            _ => None,
        }
    }
}

/// Options for [`write()`].
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// Revision written into the header.
    pub version: Version,
}

/// Writes the model as an XML document.
pub fn write(odr: &OpenDrive, options: &WriteOptions) -> Result<String> {
    let root = opendrive(odr, options)?;
    let mut out = String::with_capacity(1 << 16);
    out.push_str("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    print(&root, 0, &mut out);
    Ok(out)
}

/// Writes the model to a file atomically: a temporary file beside it, then a rename, so no
/// half-written file is ever left under `path`.
pub fn write_file(odr: &OpenDrive, path: impl AsRef<Path>, options: &WriteOptions) -> Result<()> {
    let path = path.as_ref();
    let text = write(odr, options).map_err(|e| e.with_path(path))?;
    atomic::write_bytes_atomic(path, text.as_bytes())
        .map_err(|e| Error::new(ErrorKind::Io(e.to_string())).with_path(path))
}

/// Formats a number in the shortest text that parses back to the same value.
pub fn format_f64(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 || (1e-5..1e16).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

/// Builds elements; every number passes a finiteness check naming where it is.
struct B {
    el: Element,
}

impl B {
    fn new(name: &str) -> Self {
        B { el: Element::new(name) }
    }
    fn s(mut self, k: &str, v: impl Into<String>) -> Self {
        self.el.attributes.push((k.to_string(), v.into()));
        self
    }
    fn os(self, k: &str, v: &Option<String>) -> Self {
        match v {
            Some(v) => self.s(k, v.clone()),
            None => self,
        }
    }
    fn f(self, k: &str, v: f64) -> Result<Self> {
        if !v.is_finite() {
            return Err(Error::new(ErrorKind::Write(format!(
                "<{}> attribute {k} is {v}, not a finite number",
                self.el.name
            ))));
        }
        Ok(self.s(k, format_f64(v)))
    }
    fn of(self, k: &str, v: Option<f64>) -> Result<Self> {
        match v {
            Some(v) => self.f(k, v),
            None => Ok(self),
        }
    }
    fn ob(self, k: &str, v: Option<bool>) -> Self {
        match v {
            Some(v) => self.s(k, if v { "true" } else { "false" }),
            None => self,
        }
    }
    fn child(mut self, c: Element) -> Self {
        self.el.children.push(Node::Element(c));
        self
    }
    fn children(mut self, cs: impl IntoIterator<Item = Element>) -> Self {
        self.el.children.extend(cs.into_iter().map(Node::Element));
        self
    }
    /// Adds unknown attributes and elements, then orders the children stably by `order` (the
    /// standard's sequence); other names go last.
    fn extras(mut self, ex: &Extras, order: &[&str]) -> Element {
        for (k, v) in &ex.attributes {
            if !self.el.attributes.iter().any(|(n, _)| n == k) {
                self.el.attributes.push((k.clone(), v.clone()));
            }
        }
        self.el.children.extend(ex.elements.iter().cloned().map(Node::Element));
        // The standard's additional data (dataQuality, include, userData) stand where the
        // sequence has "+AD", by default last.
        let ad = order.iter().position(|o| *o == "+AD").unwrap_or(order.len());
        let rank = |n: &Node| match n {
            Node::Element(e) => match order.iter().position(|o| *o == e.name) {
                Some(i) => i,
                None if matches!(e.name.as_str(), "dataQuality" | "include" | "userData") => ad,
                None => order.len(),
            },
            _ => 0,
        };
        self.el.children.sort_by_key(rank);
        self.el
    }
    fn done(self) -> Element {
        self.el
    }
}

fn poly3(name: &str, s_name: &str, p: &Poly3) -> Result<Element> {
    Ok(B::new(name).f(s_name, p.s)?.f("a", p.a)?.f("b", p.b)?.f("c", p.c)?.f("d", p.d)?.done())
}

fn opendrive(odr: &OpenDrive, options: &WriteOptions) -> Result<Element> {
    let mut b = B::new("OpenDRIVE").child(header(&odr.header, options)?);
    for r in &odr.roads {
        b = b.child(road(r).map_err(|e| context(e, &format!("road {}", r.id)))?);
    }
    b = b.children(odr.controllers.iter().cloned());
    for j in &odr.junctions {
        b = b.child(junction(j).map_err(|e| context(e, &format!("junction {}", j.id)))?);
    }
    Ok(b.extras(
        &odr.extras,
        &["header", "road", "controller", "junction", "junctionGroup", "station", "+AD", "vmsGroup"],
    ))
}

fn context(mut e: Error, what: &str) -> Error {
    if let ErrorKind::Write(msg) = e.kind_mut() {
        *msg = format!("{what}: {msg}");
    }
    e
}

fn header(h: &Header, options: &WriteOptions) -> Result<Element> {
    let mut b = B::new("header")
        .s("revMajor", "1")
        .s("revMinor", options.version.minor().to_string())
        .os("name", &h.name)
        .os("version", &h.version)
        .os("date", &h.date)
        .of("north", h.north)?
        .of("south", h.south)?
        .of("east", h.east)?
        .of("west", h.west)?
        .os("vendor", &h.vendor);
    if let Some(g) = &h.geo_reference {
        let mut el = Element::new("geoReference");
        el.children.push(Node::CData(g.clone()));
        b = b.child(el);
    }
    if let Some(o) = &h.offset {
        b = b.child(B::new("offset").f("x", o.x)?.f("y", o.y)?.f("z", o.z)?.f("hdg", o.hdg)?.done());
    }
    Ok(b.extras(&h.extras, &["geoReference", "offset", "license", "+AD", "defaultRegulations"]))
}

fn road(r: &Road) -> Result<Element> {
    let mut b = B::new("road")
        .os("name", &r.name)
        .f("length", r.length)?
        .s("id", r.id.clone())
        .s("junction", r.junction.clone())
        .os("rule", &r.rule);
    if let Some(l) = &r.link {
        let mut lb = B::new("link");
        for (name, t) in [("predecessor", &l.predecessor), ("successor", &l.successor)] {
            if let Some(t) = t {
                let e = B::new(name)
                    .s("elementType", t.element_type.clone())
                    .s("elementId", t.element_id.clone())
                    .os("contactPoint", &t.contact_point)
                    .extras(&t.extras, &[]);
                lb = lb.child(e);
            }
        }
        b = b.child(lb.extras(&l.extras, &["predecessor", "successor"]));
    }
    for t in &r.types {
        let mut tb = B::new("type").f("s", t.s)?.s("type", t.kind.clone()).os("country", &t.country);
        if let Some((max, unit)) = &t.speed {
            tb = tb.child(B::new("speed").s("max", max.clone()).os("unit", unit).done());
        }
        b = b.child(tb.extras(&t.extras, &["speed"]));
    }
    let mut pv = B::new("planView");
    for (i, g) in r.plan_view.geometries.iter().enumerate() {
        pv = pv.child(geometry(g).map_err(|e| context(e, &format!("geometry {i} (s={})", g.s)))?);
    }
    b = b.child(pv.extras(&r.plan_view.extras, &["geometry"]));

    let ep = &r.elevation_profile;
    if !ep.elevations.is_empty() || !ep.extras.is_empty() {
        let mut e = B::new("elevationProfile");
        for p in &ep.elevations {
            e = e.child(poly3("elevation", "s", p)?);
        }
        b = b.child(e.extras(&ep.extras, &["elevation"]));
    }
    let lp = &r.lateral_profile;
    if !lp.superelevations.is_empty() || !lp.shapes.is_empty() || !lp.extras.is_empty() {
        let mut e = B::new("lateralProfile");
        for p in &lp.superelevations {
            e = e.child(poly3("superelevation", "s", p)?);
        }
        for s in &lp.shapes {
            e = e.child(
                B::new("shape").f("s", s.s)?.f("t", s.t)?.f("a", s.a)?.f("b", s.b)?.f("c", s.c)?.f("d", s.d)?.done(),
            );
        }
        b = b.child(e.extras(&lp.extras, &["superelevation", "crossfall", "shape"]));
    }
    b = b.child(lanes(&r.lanes)?);
    let ob = &r.objects;
    if !ob.objects.is_empty() || !ob.extras.is_empty() {
        let mut e = B::new("objects");
        for o in &ob.objects {
            e = e.child(object(o).map_err(|err| context(err, &format!("object {}", o.id)))?);
        }
        b = b.child(e.extras(&ob.extras, &["object", "objectReference", "tunnel", "bridge"]));
    }
    let sg = &r.signals;
    if !sg.signals.is_empty() || !sg.extras.is_empty() {
        let mut e = B::new("signals");
        for s in &sg.signals {
            e = e.child(signal(s).map_err(|err| context(err, &format!("signal {}", s.id)))?);
        }
        b = b.child(e.extras(&sg.extras, &["signal", "signalReference"]));
    }
    let sf = &r.surface;
    if !sf.crgs.is_empty() || !sf.extras.is_empty() {
        let mut e = B::new("surface");
        for c in &sf.crgs {
            e = e.child(
                B::new("CRG")
                    .s("file", c.file.clone())
                    .f("sStart", c.s_start)?
                    .f("sEnd", c.s_end)?
                    .s("orientation", c.orientation.clone())
                    .s("mode", c.mode.clone())
                    .os("purpose", &c.purpose)
                    .of("sOffset", c.s_offset)?
                    .of("tOffset", c.t_offset)?
                    .of("zOffset", c.z_offset)?
                    .of("zScale", c.z_scale)?
                    .of("hOffset", c.h_offset)?
                    .extras(&c.extras, &[]),
            );
        }
        b = b.child(e.extras(&sf.extras, &["CRG"]));
    }
    Ok(b.extras(
        &r.extras,
        &[
            "link",
            "type",
            "planView",
            "elevationProfile",
            "lateralProfile",
            "lanes",
            "objects",
            "signals",
            "surface",
            "railroad",
        ],
    ))
}

fn geometry(g: &Geometry) -> Result<Element> {
    let curve = match g.kind {
        GeometryKind::Line => B::new("line").done(),
        GeometryKind::Arc { curvature } => B::new("arc").f("curvature", curvature)?.done(),
        GeometryKind::Spiral { curv_start, curv_end } => {
            B::new("spiral").f("curvStart", curv_start)?.f("curvEnd", curv_end)?.done()
        }
        GeometryKind::Poly3 { a, b, c, d } => B::new("poly3").f("a", a)?.f("b", b)?.f("c", c)?.f("d", d)?.done(),
        GeometryKind::ParamPoly3 { u, v, p_range } => B::new("paramPoly3")
            .f("aU", u[0])?
            .f("bU", u[1])?
            .f("cU", u[2])?
            .f("dU", u[3])?
            .f("aV", v[0])?
            .f("bV", v[1])?
            .f("cV", v[2])?
            .f("dV", v[3])?
            .s("pRange", p_range.as_str())
            .done(),
    };
    Ok(B::new("geometry")
        .f("s", g.s)?
        .f("x", g.x)?
        .f("y", g.y)?
        .f("hdg", g.hdg)?
        .f("length", g.length)?
        .child(curve)
        .extras(&g.extras, &[]))
}

fn lanes(l: &Lanes) -> Result<Element> {
    let mut b = B::new("lanes");
    for p in &l.lane_offsets {
        b = b.child(poly3("laneOffset", "s", p)?);
    }
    for sec in &l.lane_sections {
        let mut sb = B::new("laneSection").f("s", sec.s)?.ob("singleSide", sec.single_side);
        for (name, side) in [("left", &sec.left), ("center", &sec.center), ("right", &sec.right)] {
            if let Some(side) = side {
                let mut lb = B::new(name);
                for ln in &side.lanes {
                    lb = lb.child(lane(ln).map_err(|e| context(e, &format!("lane {} of section s={}", ln.id, sec.s)))?);
                }
                sb = sb.child(lb.extras(&side.extras, &["lane"]));
            }
        }
        b = b.child(sb.extras(&sec.extras, &["left", "center", "right"]));
    }
    Ok(b.extras(&l.extras, &["laneOffset", "laneSection"]))
}

fn lane(l: &Lane) -> Result<Element> {
    let mut b = B::new("lane").s("id", l.id.to_string()).os("type", &l.kind).ob("level", l.level);
    if let Some(link) = &l.link {
        let mut lb = B::new("link");
        for p in &link.predecessors {
            lb = lb.child(B::new("predecessor").s("id", p.to_string()).done());
        }
        for p in &link.successors {
            lb = lb.child(B::new("successor").s("id", p.to_string()).done());
        }
        b = b.child(lb.extras(&link.extras, &["predecessor", "successor"]));
    }
    for w in &l.borders {
        b = b.child(poly3("border", "sOffset", w)?);
    }
    for w in &l.widths {
        b = b.child(poly3("width", "sOffset", w)?);
    }
    for m in &l.road_marks {
        b = b.child(
            B::new("roadMark")
                .f("sOffset", m.s_offset)?
                .s("type", m.kind.clone())
                .os("weight", &m.weight)
                .s("color", m.color.clone())
                .os("material", &m.material)
                .of("width", m.width)?
                .os("laneChange", &m.lane_change)
                .of("height", m.height)?
                .extras(&m.extras, &["sway", "type", "explicit"]),
        );
    }
    for m in &l.materials {
        b = b.child(
            B::new("material")
                .f("sOffset", m.s_offset)?
                .os("surface", &m.surface)
                .f("friction", m.friction)?
                .of("roughness", m.roughness)?
                .extras(&m.extras, &[]),
        );
    }
    for m in &l.speeds {
        b = b.child(
            B::new("speed").f("sOffset", m.s_offset)?.f("max", m.max)?.os("unit", &m.unit).extras(&m.extras, &[]),
        );
    }
    for m in &l.heights {
        b = b.child(
            B::new("height").f("sOffset", m.s_offset)?.f("inner", m.inner)?.f("outer", m.outer)?.extras(&m.extras, &[]),
        );
    }
    Ok(b.extras(&l.extras, &["link", "border", "width", "roadMark", "material", "speed", "access", "height", "rule"]))
}

fn object(o: &Object) -> Result<Element> {
    let mut b = B::new("object")
        .s("id", o.id.clone())
        .f("s", o.s)?
        .f("t", o.t)?
        .f("zOffset", o.z_offset)?
        .os("type", &o.kind)
        .os("subtype", &o.subtype)
        .os("name", &o.name)
        .os("orientation", &o.orientation)
        .of("hdg", o.hdg)?
        .of("pitch", o.pitch)?
        .of("roll", o.roll)?
        .of("length", o.length)?
        .of("width", o.width)?
        .of("height", o.height)?
        .of("radius", o.radius)?
        .of("validLength", o.valid_length)?;
    for r in &o.repeats {
        b = b.child(
            B::new("repeat")
                .f("s", r.s)?
                .f("length", r.length)?
                .f("distance", r.distance)?
                .f("tStart", r.t_start)?
                .f("tEnd", r.t_end)?
                .f("heightStart", r.height_start)?
                .f("heightEnd", r.height_end)?
                .f("zOffsetStart", r.z_offset_start)?
                .f("zOffsetEnd", r.z_offset_end)?
                .extras(&r.extras, &[]),
        );
    }
    if !o.outlines.is_empty() {
        let mut ob = B::new("outlines");
        for ol in &o.outlines {
            let mut e = B::new("outline")
                .os("id", &ol.id)
                .os("fillType", &ol.fill_type)
                .ob("outer", ol.outer)
                .ob("closed", ol.closed)
                .os("laneType", &ol.lane_type);
            for c in &ol.corners {
                e = e.child(match c {
                    Corner::Road { s, t, dz, height, id } => B::new("cornerRoad")
                        .f("s", *s)?
                        .f("t", *t)?
                        .f("dz", *dz)?
                        .f("height", *height)?
                        .os("id", id)
                        .done(),
                    Corner::Local { u, v, z, height, id } => B::new("cornerLocal")
                        .f("u", *u)?
                        .f("v", *v)?
                        .f("z", *z)?
                        .f("height", *height)?
                        .os("id", id)
                        .done(),
                });
            }
            ob = ob.child(e.extras(&ol.extras, &["cornerRoad", "cornerLocal"]));
        }
        b = b.child(ob.done());
    }
    if !o.crgs.is_empty() {
        let mut sb = B::new("surface");
        for c in &o.crgs {
            sb = sb.child(
                B::new("CRG")
                    .s("file", c.file.clone())
                    .ob("hideRoadSurfaceCRG", c.hide_road_surface_crg)
                    .of("zScale", c.z_scale)?
                    .extras(&c.extras, &[]),
            );
        }
        b = b.child(sb.done());
    }
    Ok(b.extras(
        &o.extras,
        &[
            "repeat",
            "outline",
            "outlines",
            "material",
            "validity",
            "parkingSpace",
            "markings",
            "borders",
            "+AD",
            "surface",
            "skeleton",
        ],
    ))
}

fn signal(s: &Signal) -> Result<Element> {
    Ok(B::new("signal")
        .f("s", s.s)?
        .f("t", s.t)?
        .s("id", s.id.clone())
        .os("name", &s.name)
        .s("dynamic", s.dynamic.clone())
        .s("orientation", s.orientation.clone())
        .f("zOffset", s.z_offset)?
        .os("country", &s.country)
        .s("type", s.kind.clone())
        .s("subtype", s.subtype.clone())
        .of("value", s.value)?
        .os("unit", &s.unit)
        .of("height", s.height)?
        .of("width", s.width)?
        .os("text", &s.text)
        .of("hOffset", s.h_offset)?
        .extras(
            &s.extras,
            &[
                "validity",
                "dependency",
                "reference",
                "positionInertial",
                "positionRoad",
                "+AD",
                "semantics",
                "staticBoard",
                "vmsBoard",
            ],
        ))
}

fn junction(j: &Junction) -> Result<Element> {
    let mut b = B::new("junction").s("id", j.id.clone()).os("name", &j.name).os("type", &j.kind);
    for c in &j.connections {
        let mut cb = B::new("connection")
            .s("id", c.id.clone())
            .os("incomingRoad", &c.incoming_road)
            .os("connectingRoad", &c.connecting_road)
            .os("linkedRoad", &c.linked_road)
            .os("contactPoint", &c.contact_point);
        for l in &c.lane_links {
            cb = cb.child(
                B::new("laneLink").s("from", l.from.to_string()).s("to", l.to.to_string()).extras(&l.extras, &[]),
            );
        }
        b = b.child(cb.extras(&c.extras, &["predecessor", "successor", "laneLink"]));
    }
    Ok(b.extras(&j.extras, &["connection", "priority", "controller", "surface"]))
}

fn print(el: &Element, depth: usize, out: &mut String) {
    let indent = "    ".repeat(depth);
    out.push_str(&indent);
    out.push('<');
    out.push_str(&el.name);
    for (k, v) in &el.attributes {
        out.push(' ');
        out.push_str(k);
        out.push_str("=\"");
        escape(v, true, out);
        out.push('"');
    }
    if el.children.is_empty() {
        out.push_str("/>\n");
        return;
    }
    out.push('>');
    let has_elements = el.children.iter().any(|c| matches!(c, Node::Element(_)));
    if has_elements {
        out.push('\n');
    }
    for c in &el.children {
        match c {
            Node::Element(e) => print(e, depth + 1, out),
            Node::Text(t) => escape(t, false, out),
            Node::CData(t) => {
                out.push_str("<![CDATA[");
                out.push_str(&t.replace("]]>", "]]]]><![CDATA[>"));
                out.push_str("]]>");
            }
        }
    }
    if has_elements {
        out.push_str(&indent);
    }
    out.push_str("</");
    out.push_str(&el.name);
    out.push_str(">\n");
}

fn escape(s: &str, attribute: bool, out: &mut String) {
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' if attribute => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::path::PathBuf;

    #[test]
    fn write_file_replaces_whole_or_fails_naming_the_file_and_leaves_nothing_behind() {
        let text =
            std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../data/opendrive/demo.xodr"))
                .unwrap();
        let odr = crate::read(&text).unwrap();
        let dir = std::env::temp_dir().join(format!("odr-write-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let names = || {
            let mut n: Vec<String> = std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            n.sort();
            n
        };
        // Over an old file: replaced whole.
        let path = dir.join("road.xodr");
        std::fs::write(&path, "old").unwrap();
        write_file(&odr, &path, &Default::default()).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), write(&odr, &Default::default()).unwrap());
        // Over a directory that holds something: the rename fails, the error names the target and
        // no temporary file is left.
        let busy = dir.join("busy.xodr");
        std::fs::create_dir(&busy).unwrap();
        std::fs::write(busy.join("x"), "x").unwrap();
        let err = write_file(&odr, &busy, &Default::default()).unwrap_err();
        assert!(matches!(err.kind(), ErrorKind::Io(_)), "{err}");
        assert!(err.to_string().starts_with(&format!("{}: ", busy.display())), "{err}");
        assert_eq!(names(), ["busy.xodr", "road.xodr"]);
        // Into a directory that does not exist: an error naming the file, never a panic.
        let missing = dir.join("no").join("road.xodr");
        let err = write_file(&odr, &missing, &Default::default()).unwrap_err();
        assert!(err.to_string().starts_with(&format!("{}: ", missing.display())), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
