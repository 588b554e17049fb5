//! XML text -> [`OpenDrive`] model. One function per element; unknown attributes and elements
//! go into [`Extras`]. A missing required attribute is an error, optional ones follow the
//! standard's defaults (stated where applied).

use crate::error::{Error, ErrorKind, Position, Result};
use crate::model::*;
use crate::xml::{self, Raw};
use std::path::Path;

/// Options for [`read_with`].
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// Accept revMajor other than 1 (the model may then be wrong).
    pub any_major_version: bool,
}

/// Parses an OpenDRIVE document (revisions 1.4 to 1.8, 1.9 read as far as it is the same).
pub fn read(text: &str) -> Result<OpenDrive> {
    read_with(text, &ReadOptions::default())
}

/// Parses an OpenDRIVE document with options.
pub fn read_with(text: &str, options: &ReadOptions) -> Result<OpenDrive> {
    let doc = xml::parse(text)?;
    let root = doc.root();
    let cx = Cx { text };
    if root.name != "OpenDRIVE" {
        return Err(cx.err(root, ErrorKind::NotOpenDrive { found: root.name.to_string() }));
    }
    opendrive(&cx, root, options)
}

/// Reads and parses a file; errors name the file.
///
/// The file is read a chunk at a time and each chunk is checked as it comes: bytes that are
/// not UTF-8 (a UTF-16 file, a Latin-1 one, binary data) and characters XML 1.0 forbids (NUL
/// and the other control characters but tab, line feed and carriage return) are errors with
/// the line, column and byte of the first one, and reading stops there. At most
/// [`MAX_FILE_BYTES`] are read: a regular file that is larger is refused by its size before
/// anything is read, and anything else (a pipe, a device such as `/dev/zero`) is read up to
/// that many bytes, then refused. Pipes stay readable (`roadscan check <(gunzip -c map.xodr.gz)`):
/// the bound, not the kind of file, is what keeps the memory finite.
pub fn read_file(path: impl AsRef<Path>) -> Result<OpenDrive> {
    let path = path.as_ref();
    let text = read_text(path, MAX_FILE_BYTES).map_err(|e| e.with_path(path))?;
    read(&text).map_err(|e| e.with_path(path))
}

/// Largest OpenDRIVE file read, bytes: 2 GiB. The largest published maps are a few hundred
/// MB; the parse tree of a file costs a multiple of its size (see [`xml::element_limit`]), so
/// a larger file would not fit in memory anyway, and a file that never ends (a device, an
/// endless pipe) must stop somewhere.
pub const MAX_FILE_BYTES: u64 = 1 << 31;

/// Bytes read (and checked) at a time by [`read_file`].
const CHUNK: usize = 1 << 16;

/// The text of a file, checked to be UTF-8 XML characters as it is read, at most `max`
/// ([`MAX_FILE_BYTES`]) bytes of it (see [`read_file`]).
fn read_text(path: &Path, max: u64) -> Result<String> {
    use std::io::Read;
    let io = |e: std::io::Error| Error::new(ErrorKind::Io(e.to_string()));
    let mut file = std::fs::File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if meta.is_dir() {
        return Err(Error::new(ErrorKind::Io("is a directory, not an OpenDRIVE file".into())));
    }
    if meta.is_file() && meta.len() > max {
        return Err(Error::new(ErrorKind::Limit(format!(
            "the file is {} bytes long; OpenDRIVE files over {max} bytes are not read",
            meta.len()
        ))));
    }
    let mut buf: Vec<u8> = Vec::with_capacity(if meta.is_file() { meta.len() as usize + 1 } else { CHUNK });
    // buf[..valid] is UTF-8 and free of forbidden characters; a multi-byte sequence cut by
    // the chunk's end waits for the next chunk.
    let mut valid = 0usize;
    loop {
        let n = file.by_ref().take(CHUNK as u64).read_to_end(&mut buf).map_err(io)?;
        if valid == 0 {
            if let Some(e) = utf16_error(&buf, n == 0) {
                return Err(e);
            }
        }
        let ended = n == 0;
        match std::str::from_utf8(&buf[valid..]) {
            Ok(s) => {
                check_chars(&buf, valid, s)?;
                valid = buf.len();
            }
            Err(e) => {
                let good = valid + e.valid_up_to();
                // The part before the bad (or cut) sequence is UTF-8.
                let s = std::str::from_utf8(&buf[valid..good]).unwrap_or_default();
                check_chars(&buf, valid, s)?;
                if e.error_len().is_some() || ended {
                    return Err(not_utf8(&buf, good, ended && e.error_len().is_none()));
                }
                valid = good;
            }
        }
        if ended {
            break;
        }
        if buf.len() as u64 > max {
            return Err(Error::new(ErrorKind::Limit(format!(
                "more than {max} bytes read and the input goes on; OpenDRIVE files over {max} bytes are not read (is \
                 it a device or an endless pipe?)"
            ))));
        }
    }
    // valid == buf.len(): all of it was checked above.
    String::from_utf8(buf).map_err(|e| not_utf8(e.as_bytes(), e.utf8_error().valid_up_to(), false))
}

/// The position of byte `at` of `buf`, whose bytes before `at` are UTF-8.
fn position_in(buf: &[u8], at: usize) -> Position {
    let at = at.min(buf.len());
    let before = std::str::from_utf8(&buf[..at]).unwrap_or_default();
    Position::locate(before, at)
}

/// A character XML 1.0 forbids in `s`, which starts at byte `start` of `buf`.
fn check_chars(buf: &[u8], start: usize, s: &str) -> Result<()> {
    match xml::forbidden_char(s) {
        Some((i, c)) => Err(Error::at(ErrorKind::Xml(xml::forbidden_message(c)), position_in(buf, start + i))),
        None => Ok(()),
    }
}

/// The error for the bytes at `at` that are not UTF-8 (`cut`: the file ends inside a sequence).
fn not_utf8(buf: &[u8], at: usize, cut: bool) -> Error {
    let byte = buf.get(at).copied().unwrap_or(0);
    let what = if cut {
        format!("the file ends inside a UTF-8 sequence (byte 0x{byte:02X} at byte {at})")
    } else {
        format!("byte 0x{byte:02X} at byte {at} is not UTF-8")
    };
    let declared = declared_encoding(buf)
        .filter(|e| !e.eq_ignore_ascii_case("UTF-8") && !e.eq_ignore_ascii_case("UTF8"))
        .map(|e| format!(" (the XML declaration says encoding=\"{e}\")"))
        .unwrap_or_default();
    Error::at(ErrorKind::Xml(format!("{what}{declared}; OpenDRIVE files are UTF-8")), position_in(buf, at))
}

/// The `encoding` of the XML declaration, if the file starts with one.
fn declared_encoding(buf: &[u8]) -> Option<String> {
    let head = &buf[..buf.len().min(256)];
    let head = String::from_utf8_lossy(head);
    let decl = &head[head.find("<?xml")?..];
    let decl = &decl[..decl.find("?>")?];
    let at = decl.find("encoding")? + "encoding".len();
    let rest = decl[at..].trim_start().strip_prefix('=')?.trim_start();
    let quote = rest.chars().next().filter(|&q| q == '"' || q == '\'')?;
    let rest = &rest[1..];
    Some(rest[..rest.find(quote)?].to_string())
}

/// A UTF-16 file (by its byte order mark, or a `<` as its first 16-bit unit) is named as one.
fn utf16_error(buf: &[u8], ended: bool) -> Option<Error> {
    if buf.len() < 2 && !ended {
        return None;
    }
    let order = match buf.get(..2)? {
        [0xFF, 0xFE] => "little-endian, byte order mark FF FE",
        [0xFE, 0xFF] => "big-endian, byte order mark FE FF",
        [b'<', 0] => "little-endian, no byte order mark",
        [0, b'<'] => "big-endian, no byte order mark",
        _ => return None,
    };
    Some(Error::at(
        ErrorKind::Xml(format!(
            "the file is UTF-16 ({order}); OpenDRIVE files are UTF-8: convert it (e.g. iconv -f UTF-16 -t UTF-8)"
        )),
        Position { line: 1, column: 1, byte: 0 },
    ))
}

/// Largest road length, geometry length or station along a road that is read, m: 10 000 km,
/// a quarter of the equator. Longer is not a road but a broken or hostile file, and every
/// consumer that tabulates a road by its length (frames, grids, checks) would be asked for
/// work and memory in proportion; refused at read time, with the file, line and column.
pub const MAX_STATION: f64 = 1e7;

const STATION_REASON: &str = "more than 1e7 m (10 000 km) along a road: no road is that long";

struct Cx<'a> {
    text: &'a str,
}

impl Cx<'_> {
    fn err(&self, el: Raw, kind: ErrorKind) -> Error {
        Error::at(kind, Position::locate(self.text, el.pos))
    }
}

/// Reads the attributes of one element and remembers which ones were used.
struct Attrs<'c, 'e> {
    cx: &'c Cx<'c>,
    el: Raw<'e>,
    /// Bit i: attribute i was read. Lookups see only the first 64 attributes; any further
    /// ones (no element of the standard has that many) are kept as extras.
    used: u64,
}

impl<'c, 'e> Attrs<'c, 'e> {
    fn new(cx: &'c Cx<'c>, el: Raw<'e>) -> Self {
        Attrs { cx, el, used: 0 }
    }
    fn raw(&mut self, name: &str) -> Option<&'e str> {
        let i = self.el.attributes.iter().take(64).position(|(k, _)| *k == name)?;
        self.used |= 1 << i;
        Some(&self.el.attributes[i].1)
    }
    fn missing(&self, attribute: &'static str) -> Error {
        self.cx.err(self.el, ErrorKind::MissingAttribute { element: self.el.name.to_string(), attribute })
    }
    fn invalid(&self, attribute: &str, value: &str, reason: &str) -> Error {
        self.cx.err(
            self.el,
            ErrorKind::InvalidAttribute {
                element: self.el.name.to_string(),
                attribute: attribute.to_string(),
                value: value.to_string(),
                reason: reason.to_string(),
            },
        )
    }
    fn string(&mut self, name: &'static str) -> Result<String> {
        self.raw(name).map(str::to_string).ok_or_else(|| self.missing(name))
    }
    fn opt_string(&mut self, name: &str) -> Option<String> {
        self.raw(name).map(str::to_string)
    }
    fn parse_f64(&self, name: &str, v: &str) -> Result<f64> {
        match v.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            Ok(_) => Err(self.invalid(name, v, "not a finite number")),
            Err(_) => Err(self.invalid(name, v, "not a number")),
        }
    }
    fn f64(&mut self, name: &'static str) -> Result<f64> {
        let v = self.raw(name).ok_or_else(|| self.missing(name))?;
        self.parse_f64(name, v)
    }
    /// An optional number; `default` is the standard's default when absent.
    fn f64_or(&mut self, name: &str, default: f64) -> Result<f64> {
        Ok(self.opt_f64(name)?.unwrap_or(default))
    }
    fn opt_f64(&mut self, name: &str) -> Result<Option<f64>> {
        match self.raw(name) {
            Some(v) => self.parse_f64(name, v).map(Some),
            None => Ok(None),
        }
    }
    fn non_negative(&mut self, name: &'static str) -> Result<f64> {
        let x = self.f64(name)?;
        if x < 0.0 {
            let v = self.raw(name).unwrap_or_default();
            return Err(self.invalid(name, v, "must not be negative"));
        }
        Ok(x)
    }
    /// A station or length along a road, m: finite and within [`MAX_STATION`].
    fn station(&mut self, name: &'static str) -> Result<f64> {
        let x = self.f64(name)?;
        if x.abs() > MAX_STATION {
            let v = self.raw(name).unwrap_or_default();
            return Err(self.invalid(name, v, STATION_REASON));
        }
        Ok(x)
    }
    /// A length along a road or a station from its start, m: in [0, [`MAX_STATION`]].
    fn length(&mut self, name: &'static str) -> Result<f64> {
        let x = self.non_negative(name)?;
        if x > MAX_STATION {
            let v = self.raw(name).unwrap_or_default();
            return Err(self.invalid(name, v, STATION_REASON));
        }
        Ok(x)
    }
    fn i32(&mut self, name: &'static str) -> Result<i32> {
        let v = self.raw(name).ok_or_else(|| self.missing(name))?;
        v.trim().parse::<i32>().map_err(|_| self.invalid(name, v, "not an integer"))
    }
    fn u32(&mut self, name: &'static str) -> Result<u32> {
        let v = self.raw(name).ok_or_else(|| self.missing(name))?;
        v.trim().parse::<u32>().map_err(|_| self.invalid(name, v, "not a non-negative integer"))
    }
    fn opt_bool(&mut self, name: &str) -> Result<Option<bool>> {
        match self.raw(name) {
            None => Ok(None),
            Some(v) => match v.trim() {
                "true" | "1" => Ok(Some(true)),
                "false" | "0" => Ok(Some(false)),
                _ => Err(self.invalid(name, v, "not a boolean (true or false)")),
            },
        }
    }
    /// The attributes that were not read, for [`Extras`].
    fn rest(self) -> Vec<(String, String)> {
        self.el
            .attributes
            .iter()
            .enumerate()
            .filter(|(i, _)| *i >= 64 || self.used & (1 << i) == 0)
            .map(|(_, (k, v))| (k.to_string(), v.to_string()))
            .collect()
    }
}

fn extras(attrs: Attrs<'_, '_>) -> Extras {
    Extras { attributes: attrs.rest(), elements: Vec::new() }
}

fn check_ascending(cx: &Cx, el: Raw, s: f64, previous: Option<f64>) -> Result<()> {
    if let Some(p) = previous {
        if s < p {
            return Err(cx.err(el, ErrorKind::DescendingS { element: el.name.to_string(), s, previous: p }));
        }
    }
    Ok(())
}

fn opendrive(cx: &Cx, root: Raw, options: &ReadOptions) -> Result<OpenDrive> {
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

fn all_extras_attrs(el: Raw) -> Extras {
    Extras { attributes: el.owned_attributes(), elements: Vec::new() }
}

fn poly3(cx: &Cx, el: Raw, s_name: &'static str) -> Result<Poly3> {
    let mut a = Attrs::new(cx, el);
    Ok(Poly3 { s: a.station(s_name)?, a: a.f64("a")?, b: a.f64("b")?, c: a.f64("c")?, d: a.f64("d")? })
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

fn lanes(cx: &Cx, el: Raw) -> Result<Lanes> {
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

fn objects(cx: &Cx, el: Raw) -> Result<Objects> {
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

fn signal(cx: &Cx, el: Raw) -> Result<Signal> {
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

fn road_crg(cx: &Cx, el: Raw) -> Result<RoadCrg> {
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

#[cfg(test)]
mod bound_tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn a_regular_file_over_the_bound_is_refused_by_its_size() {
        let path = std::env::temp_dir().join(format!("roadscan-odr-bound-{}.xodr", std::process::id()));
        std::fs::write(&path, "<OpenDRIVE>".repeat(20)).unwrap();
        let r = read_text(&path, 100);
        let _ = std::fs::remove_file(&path);
        let e = r.unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Limit(m) if m.contains("220 bytes long")), "{e}");
    }

    /// /proc files say they are regular and 0 bytes long: what they hold is only found by
    /// reading, as for a pipe or a device; the bound stops the read.
    #[cfg(target_os = "linux")]
    #[test]
    fn an_input_of_unknown_size_is_read_up_to_the_bound_only() {
        let path = Path::new("/proc/self/maps");
        let whole = read_text(path, MAX_FILE_BYTES).unwrap();
        assert!(whole.len() > 100);
        let e = read_text(path, 100).unwrap_err();
        assert!(matches!(e.kind(), ErrorKind::Limit(m) if m.contains("the input goes on")), "{e}");
    }
}
