//! Coordinate reference systems by EPSG code or PROJ string, and horizontal reprojection
//! between them: in pure Rust (proj4rs with its EPSG table) by default, with the C PROJ
//! library under the cargo feature `proj`.
//!
//! proj4rs does the projection maths exactly (UTM, transverse Mercator, EOV's oblique
//! Mercator, Lambert, stereographic: within 1 mm of PROJ, see `shared/specs/las.md`); datum
//! shifts are only the `+towgs84` parameters of the EPSG table (no grids). A round trip EOV ->
//! UTM 34N -> EOV returns within 0.4 mm with either backend (the datum shift is not inverted
//! exactly). Heights are not transformed between vertical datums, only converted to metres.

use proj4rs::proj::Proj;

/// A CRS we can transform from or to.
#[derive(Debug)]
pub struct CrsDef {
    /// How it was given ("EPSG:23700" or the PROJ string).
    pub label: String,
    /// Its EPSG code, when given by one.
    pub epsg: Option<u32>,
    /// The proj4rs form (None for a code only PROJ knows, with the feature `proj`).
    proj: Option<Proj>,
}

impl CrsDef {
    /// `EPSG:NNNN`, `NNNN` or a PROJ string (`+proj=...`).
    pub fn parse(s: &str) -> Result<CrsDef, String> {
        let s = s.trim();
        let code = s.strip_prefix("EPSG:").or_else(|| s.strip_prefix("epsg:")).unwrap_or(s);
        if let Ok(code) = code.parse::<u32>() {
            return CrsDef::from_epsg(code);
        }
        if s.starts_with('+') {
            let proj = Proj::from_proj_string(s).map_err(|e| format!("PROJ string '{s}': {e}"))?;
            return Ok(CrsDef { label: s.to_string(), epsg: None, proj: Some(proj) });
        }
        Err(format!("CRS '{s}': expected EPSG:NNNN or a PROJ string (+proj=...)"))
    }

    /// The CRS of an EPSG code in proj4rs' table.
    pub fn from_epsg(code: u32) -> Result<CrsDef, String> {
        let label = format!("EPSG:{code}");
        match u16::try_from(code).ok().and_then(crs_definitions::from_code) {
            Some(def) => {
                let proj = Proj::from_proj_string(def.proj4).map_err(|e| format!("{label}: {e}"))?;
                Ok(CrsDef { label, epsg: Some(code), proj: Some(proj) })
            }
            #[cfg(feature = "proj")]
            None => {
                proj::Proj::new(&label).map_err(|e| format!("{label}: {e}"))?;
                Ok(CrsDef { label, epsg: Some(code), proj: None })
            }
            #[cfg(not(feature = "proj"))]
            None => Err(format!("{label} is not in the built-in CRS table (the feature `proj` knows every code)")),
        }
    }

    /// OGC WKT of an EPSG code, from the built-in table.
    pub fn wkt_of(code: u32) -> Option<&'static str> {
        u16::try_from(code).ok().and_then(crs_definitions::from_code).map(|d| d.wkt)
    }

    /// The PROJ string (from the built-in table for an EPSG code), for an OpenDRIVE
    /// `<geoReference>`; None for a code only the C PROJ library knows.
    pub fn proj_string(&self) -> Option<String> {
        match self.epsg {
            Some(code) => {
                u16::try_from(code).ok().and_then(crs_definitions::from_code).map(|d| d.proj4.trim().to_string())
            }
            None => Some(self.label.clone()),
        }
    }

    /// Whether coordinates are longitude/latitude (degrees), as far as proj4rs knows.
    pub fn is_geographic(&self) -> bool {
        self.proj.as_ref().is_some_and(|p| p.is_latlong())
    }

    /// A CRS from an OGC WKT (1 or 2; for a compound CRS its horizontal part): by its EPSG
    /// code where it names one or the built-in table has an entry with its projection and
    /// parameters (see [`recognise_wkt`]), else by the PROJ string built from it.
    pub fn from_wkt(wkt: &str) -> Result<CrsDef, String> {
        let w = recognise_wkt(wkt)?;
        if let Some(code) = w.epsg {
            if let Ok(def) = CrsDef::from_epsg(code) {
                return Ok(def);
            }
        }
        match w.proj {
            Some(p) => CrsDef::parse(&p),
            None => Err(w.note.unwrap_or_else(|| "WKT: no CRS we can use".into())),
        }
    }

    /// Metres per unit of the coordinates (1 for metres, 0.3048 for feet, 1200/3937 for US
    /// survey feet); None for a geographic CRS or a code only the C PROJ library knows.
    pub fn unit(&self) -> Option<f64> {
        self.proj_string().and_then(|p| unit_of_proj(&p))
    }

    /// The same CRS with coordinates in metres: itself (parsed again) when they are, else its
    /// PROJ string with `+units=m` (false easting and northing are metres in PROJ strings
    /// whatever the unit, so only the unit changes). OpenDRIVE coordinates are metres: an axis
    /// or a point cloud in a CRS in feet is reprojected into this one. An error for a
    /// geographic CRS or a code without a PROJ string.
    pub fn in_metres(&self) -> Result<CrsDef, String> {
        let proj = self.proj_string().ok_or_else(|| format!("{}: no PROJ string to set in metres", self.label))?;
        match unit_of_proj(&proj) {
            None => Err(format!("{}: a geographic CRS has no linear unit", self.label)),
            Some(u) if (u - 1.0).abs() < 1e-12 => CrsDef::parse(&self.label),
            Some(_) => {
                let mut out: Vec<&str> = proj
                    .split_whitespace()
                    .filter(|t| !(t.starts_with("+units=") || t.starts_with("+to_meter=") || *t == "+no_defs"))
                    .collect();
                out.extend(["+units=m", "+no_defs"]);
                CrsDef::parse(&out.join(" "))
            }
        }
    }

    /// Whether both are the same CRS (the same EPSG code or the same PROJ string).
    pub fn same_as(&self, other: &CrsDef) -> bool {
        match (self.epsg, other.epsg) {
            (Some(a), Some(b)) => a == b,
            // An EPSG code and the PROJ string of its table entry (as `roadscan axis` writes
            // into geoReference) are the same CRS.
            _ => {
                let norm = |c: &CrsDef| c.proj_string().map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "));
                self.label == other.label || norm(self).is_some_and(|a| Some(a) == norm(other))
            }
        }
    }
}

/// Metres per unit of a projected CRS's coordinates, from its PROJ string in the built-in table
/// (`+units=ft`, `+units=us-ft`, `+units=m`, `+to_meter=`); None for a geographic CRS or an
/// unknown code.
pub(crate) fn unit_of_epsg(code: u32) -> Option<f64> {
    let def = u16::try_from(code).ok().and_then(crs_definitions::from_code)?;
    unit_of_proj(def.proj4)
}

/// Horizontal reprojection from one CRS to another.
pub struct Reprojection {
    from: CrsDef,
    to: CrsDef,
}

// `proj::Proj` holds raw pointers to a PROJ context of its own, so it is neither `Send` nor
// `Sync`, yet readers hand their reprojection to a reading thread. Each thread that applies a
// reprojection makes its own PROJ transformation, once, and keeps it here (by CRS labels).
#[cfg(feature = "proj")]
thread_local! {
    static PROJ_BY_THREAD: std::cell::RefCell<std::collections::HashMap<(String, String), proj::Proj>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// Calls `f` with this thread's PROJ transformation from `from` to `to`, made on first use.
#[cfg(feature = "proj")]
fn with_proj<T>(from: &CrsDef, to: &CrsDef, f: impl FnOnce(&proj::Proj) -> T) -> Result<T, String> {
    PROJ_BY_THREAD.with(|cache| {
        let mut cache = cache.borrow_mut();
        let key = (from.label.clone(), to.label.clone());
        if !cache.contains_key(&key) {
            let pj = proj::Proj::new_known_crs(&from.label, &to.label, None)
                .map_err(|e| format!("{} to {}: {e}", from.label, to.label))?;
            cache.insert(key.clone(), pj);
        }
        Ok(f(&cache[&key]))
    })
}

impl std::fmt::Debug for Reprojection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reprojection").field("from", &self.from.label).field("to", &self.to.label).finish()
    }
}

impl Reprojection {
    /// From `from` to `to`.
    pub fn new(from: CrsDef, to: CrsDef) -> Result<Reprojection, String> {
        #[cfg(feature = "proj")]
        {
            with_proj(&from, &to, |_| ())?;
            Ok(Reprojection { from, to })
        }
        #[cfg(not(feature = "proj"))]
        {
            if from.proj.is_none() || to.proj.is_none() {
                return Err(format!("{} to {}: not in the built-in CRS table", from.label, to.label));
            }
            Ok(Reprojection { from, to })
        }
    }

    /// Whether the transformation does nothing.
    pub fn is_identity(&self) -> bool {
        self.from.same_as(&self.to)
    }

    /// The CRSs, from and to.
    pub fn crs(&self) -> (&CrsDef, &CrsDef) {
        (&self.from, &self.to)
    }

    /// Transforms the points (x, y) in place (degrees for a geographic CRS); the index of a
    /// point that cannot be transformed is in the error.
    pub fn apply(&self, x: &mut [f64], y: &mut [f64]) -> Result<(), String> {
        if self.is_identity() {
            return Ok(());
        }
        #[cfg(feature = "proj")]
        {
            with_proj(&self.from, &self.to, |pj| {
                for (i, (x, y)) in x.iter_mut().zip(y.iter_mut()).enumerate() {
                    let (px, py) = pj.convert((*x, *y)).map_err(|e| {
                        format!("point {i} ({x}, {y}) from {} to {}: {e}", self.from.label, self.to.label)
                    })?;
                    if !(px.is_finite() && py.is_finite()) {
                        return Err(format!("point {i} ({x}, {y}) has no image in {}", self.to.label));
                    }
                    *x = px;
                    *y = py;
                }
                Ok(())
            })?
        }
        #[cfg(not(feature = "proj"))]
        self.apply_proj4rs(x, y)
    }

    #[cfg(not(feature = "proj"))]
    fn apply_proj4rs(&self, x: &mut [f64], y: &mut [f64]) -> Result<(), String> {
        let (Some(src), Some(dst)) = (&self.from.proj, &self.to.proj) else {
            return Err(format!("{} to {}: not in the built-in CRS table", self.from.label, self.to.label));
        };
        let (src_geo, dst_geo) = (self.from.is_geographic(), self.to.is_geographic());
        for (i, (x, y)) in x.iter_mut().zip(y.iter_mut()).enumerate() {
            let mut p = if src_geo { (x.to_radians(), y.to_radians(), 0.0) } else { (*x, *y, 0.0) };
            proj4rs::transform::transform(src, dst, &mut p)
                .map_err(|e| format!("point {i} ({}, {}) from {} to {}: {e}", x, y, self.from.label, self.to.label))?;
            if dst_geo {
                p.0 = p.0.to_degrees();
                p.1 = p.1.to_degrees();
            }
            if !(p.0.is_finite() && p.1.is_finite()) {
                return Err(format!("point {i} ({x}, {y}) has no image in {}", self.to.label));
            }
            *x = p.0;
            *y = p.1;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// WKT: a small tree, the horizontal CRS of it, a PROJ string built from its projection and
// parameters, and the EPSG code of the table entry with the same parameters.
// ---------------------------------------------------------------------------------------------

/// An element of a WKT text: `KEYWORD[args]`.
#[derive(Debug, Clone, PartialEq)]
struct Node {
    key: String,
    args: Vec<Arg>,
}

#[derive(Debug, Clone, PartialEq)]
enum Arg {
    Text(String),
    Num(f64),
    Word(String),
    Node(Node),
}

/// The deepest nesting a WKT may have (real ones reach 6 or 7).
const MAX_WKT_DEPTH: usize = 32;

impl Node {
    /// Parses one element (leading and trailing blanks allowed; a NUL ends the text).
    fn parse(text: &str) -> Result<Node, String> {
        let text = text.split('\0').next().unwrap_or_default();
        let b = text.as_bytes();
        let mut at = 0;
        let node = parse_node(b, &mut at, 0)?;
        skip_blank(b, &mut at);
        if at < b.len() {
            return Err(format!("WKT: text after the element at byte {at}"));
        }
        Ok(node)
    }

    fn children(&self) -> impl Iterator<Item = &Node> {
        self.args.iter().filter_map(|a| if let Arg::Node(n) = a { Some(n) } else { None })
    }

    /// The first child whose keyword is one of `keys`.
    fn child(&self, keys: &[&str]) -> Option<&Node> {
        self.children().find(|n| keys.contains(&n.key.as_str()))
    }

    /// The first text argument (the element's name).
    fn name(&self) -> Option<&str> {
        self.args.iter().find_map(|a| if let Arg::Text(t) = a { Some(t.as_str()) } else { None })
    }

    /// The `i`-th numeric argument.
    fn num(&self, i: usize) -> Option<f64> {
        self.args.iter().filter_map(|a| if let Arg::Num(v) = a { Some(*v) } else { None }).nth(i)
    }

    /// The EPSG code of the element's own AUTHORITY or ID.
    fn epsg(&self) -> Option<u32> {
        self.children().filter(|n| n.key == "AUTHORITY" || n.key == "ID").find_map(|n| {
            if !n.name()?.eq_ignore_ascii_case("EPSG") {
                return None;
            }
            n.args.iter().skip(1).find_map(|a| match a {
                Arg::Num(v) if *v >= 1.0 && *v < 4.0e9 && v.fract() == 0.0 => Some(*v as u32),
                Arg::Text(t) => t.trim().parse().ok(),
                _ => None,
            })
        })
    }
}

fn skip_blank(b: &[u8], at: &mut usize) {
    while *at < b.len() && b[*at].is_ascii_whitespace() {
        *at += 1;
    }
}

fn parse_node(b: &[u8], at: &mut usize, depth: usize) -> Result<Node, String> {
    if depth > MAX_WKT_DEPTH {
        return Err(format!("WKT: nested deeper than {MAX_WKT_DEPTH} at byte {at}"));
    }
    skip_blank(b, at);
    let start = *at;
    while *at < b.len() && (b[*at].is_ascii_alphanumeric() || b[*at] == b'_') {
        *at += 1;
    }
    let key = String::from_utf8_lossy(&b[start..*at]).to_ascii_uppercase();
    skip_blank(b, at);
    let close = match b.get(*at) {
        Some(b'[') => b']',
        Some(b'(') => b')',
        _ if key.is_empty() => return Err(format!("WKT: expected an element at byte {start}")),
        _ => return Err(format!("WKT: expected '[' after {key} at byte {at}")),
    };
    *at += 1;
    let mut args = Vec::new();
    loop {
        skip_blank(b, at);
        match b.get(*at) {
            None => return Err(format!("WKT: {key} not closed at the end of the text")),
            Some(&c) if c == close => {
                *at += 1;
                return Ok(Node { key, args });
            }
            Some(b',') if !args.is_empty() => *at += 1,
            Some(_) if !args.is_empty() => return Err(format!("WKT: expected ',' or the end of {key} at byte {at}")),
            Some(_) => {}
        }
        skip_blank(b, at);
        match b.get(*at) {
            Some(b'"') => {
                // A quoted text; "" is a quote.
                let mut s = Vec::new();
                *at += 1;
                loop {
                    match b.get(*at) {
                        None => return Err(format!("WKT: a text in {key} not closed")),
                        Some(b'"') if b.get(*at + 1) == Some(&b'"') => {
                            s.push(b'"');
                            *at += 2;
                        }
                        Some(b'"') => {
                            *at += 1;
                            break;
                        }
                        Some(&c) => {
                            s.push(c);
                            *at += 1;
                        }
                    }
                }
                args.push(Arg::Text(String::from_utf8_lossy(&s).into_owned()));
            }
            Some(c) if c.is_ascii_digit() || matches!(c, b'-' | b'+' | b'.') => {
                let s = *at;
                while *at < b.len() && (b[*at].is_ascii_alphanumeric() || matches!(b[*at], b'-' | b'+' | b'.')) {
                    *at += 1;
                }
                let t = String::from_utf8_lossy(&b[s..*at]);
                let v: f64 = t.parse().map_err(|_| format!("WKT: '{t}' in {key} at byte {s} is not a number"))?;
                args.push(Arg::Num(v));
            }
            Some(c) if c.is_ascii_alphabetic() => {
                // A word (EAST, NORTH) or an element.
                let s = *at;
                let mut e = s;
                while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'_') {
                    e += 1;
                }
                let mut after = e;
                skip_blank(b, &mut after);
                if matches!(b.get(after), Some(b'[') | Some(b'(')) {
                    args.push(Arg::Node(parse_node(b, at, depth + 1)?));
                } else {
                    args.push(Arg::Word(String::from_utf8_lossy(&b[s..e]).into_owned()));
                    *at = e;
                }
            }
            _ => return Err(format!("WKT: unexpected character in {key} at byte {at}")),
        }
    }
}

/// The horizontal CRS of a WKT CRS: itself, or the horizontal part of a compound CRS (and the
/// source CRS of a WKT2 bound CRS).
fn horizontal(node: &Node) -> Option<&Node> {
    const HORIZONTAL: [&str; 6] = ["PROJCS", "PROJCRS", "GEOGCS", "GEOGCRS", "GEODCRS", "GEOCCS"];
    match node.key.as_str() {
        k if HORIZONTAL.contains(&k) => Some(node),
        "COMPD_CS" | "COMPOUNDCRS" => node.children().find_map(horizontal),
        "BOUNDCRS" => node.child(&["SOURCECRS"]).and_then(|s| s.children().find_map(horizontal)),
        _ => None,
    }
}

/// What a WKT text says of its horizontal CRS.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct WktCrs {
    /// The horizontal CRS's name.
    pub name: Option<String>,
    /// Its EPSG code: its own AUTHORITY/ID, else the code of the built-in table's entry with
    /// the same projection, parameters, ellipsoid, unit (and datum where the WKT names one).
    pub epsg: Option<u32>,
    /// How `epsg` was found: "authority" or "parameters".
    pub epsg_by: Option<&'static str>,
    /// Metres per unit of the horizontal coordinates (None for a geographic CRS).
    pub unit: Option<f64>,
    /// The PROJ string: the table's for `epsg`, else built from the WKT (None when the WKT's
    /// projection is not one we know).
    pub proj: Option<String>,
    /// Whether the WKT is a compound CRS (horizontal + vertical).
    pub compound: bool,
    /// What could not be understood (e.g. a projection method we do not know).
    pub note: Option<String>,
}

/// Reads the horizontal CRS of a WKT (1 or 2, plain, compound or bound).
pub fn recognise_wkt(wkt: &str) -> Result<WktCrs, String> {
    let root = Node::parse(wkt)?;
    let compound = matches!(root.key.as_str(), "COMPD_CS" | "COMPOUNDCRS");
    let h = horizontal(&root).ok_or_else(|| format!("WKT: no horizontal CRS in {}[...]", root.key))?;
    let mut out = WktCrs { name: h.name().map(str::to_string), compound, ..Default::default() };
    let geographic = !matches!(h.key.as_str(), "PROJCS" | "PROJCRS");
    out.unit = if geographic { None } else { Some(linear_unit(h)) };
    let built = if geographic { build_geographic(h) } else { build_projected(h) };
    if let Some(code) = h.epsg() {
        out.epsg = Some(code);
        out.epsg_by = Some("authority");
        out.proj = table_proj(code).or_else(|| built.as_ref().ok().cloned());
        return Ok(out);
    }
    match built {
        Ok(proj) => {
            if !geographic {
                if let Some(code) = match_epsg(&proj, datum_of(h).and_then(Node::epsg), h.name()) {
                    out.epsg = Some(code);
                    out.epsg_by = Some("parameters");
                    out.proj = table_proj(code);
                    return Ok(out);
                }
            }
            out.proj = Some(proj);
        }
        Err(e) => out.note = Some(e),
    }
    Ok(out)
}

fn table_proj(code: u32) -> Option<String> {
    u16::try_from(code).ok().and_then(crs_definitions::from_code).map(|d| d.proj4.trim().to_string())
}

/// Metres per unit of a projected CRS element (its UNIT, LENGTHUNIT, or the first axis'
/// LENGTHUNIT in WKT2); metres when it names none.
fn linear_unit(h: &Node) -> f64 {
    let direct = h.child(&["UNIT", "LENGTHUNIT"]);
    let in_cs = || h.children().filter(|n| n.key == "AXIS").find_map(|a| a.child(&["LENGTHUNIT", "UNIT"]));
    direct.or_else(in_cs).and_then(|u| u.num(0)).filter(|f| f.is_finite() && *f > 0.0).unwrap_or(1.0)
}

/// The geographic CRS under a projected one (or the element itself).
fn base_geographic(h: &Node) -> &Node {
    h.child(&["GEOGCS", "BASEGEOGCRS", "BASEGEODCRS", "GEOGCRS", "GEODCRS"]).unwrap_or(h)
}

fn datum_of(h: &Node) -> Option<&Node> {
    base_geographic(h).child(&["DATUM", "GEODETICDATUM", "TRF", "ENSEMBLE"])
}

/// `+a +rf +towgs84 +pm` of a horizontal CRS element.
fn datum_terms(h: &Node) -> Result<String, String> {
    let g = base_geographic(h);
    let datum = datum_of(h);
    let ellipsoid = datum
        .and_then(|d| d.child(&["SPHEROID", "ELLIPSOID"]))
        .or_else(|| g.child(&["SPHEROID", "ELLIPSOID"]))
        .ok_or("WKT: no ellipsoid")?;
    let (a, rf) = (ellipsoid.num(0).unwrap_or(f64::NAN), ellipsoid.num(1).unwrap_or(f64::NAN));
    // WKT2 may give the axis in another unit (rare): LENGTHUNIT inside the ellipsoid.
    let a = a * ellipsoid.child(&["LENGTHUNIT"]).and_then(|u| u.num(0)).unwrap_or(1.0);
    if !(a.is_finite() && a > 0.0 && rf.is_finite() && rf >= 0.0) {
        return Err(format!("WKT: ellipsoid {} with a = {a}, 1/f = {rf}", ellipsoid.name().unwrap_or("?")));
    }
    let mut s = if rf == 0.0 { format!("+a={a} +b={a}") } else { format!("+a={a} +rf={rf}") };
    if let Some(t) = datum.and_then(|d| d.child(&["TOWGS84"])) {
        let v: Vec<String> = (0..7).map_while(|i| t.num(i)).map(|v| v.to_string()).collect();
        if v.len() == 3 || v.len() == 7 {
            s.push_str(&format!(" +towgs84={}", v.join(",")));
        }
    }
    if let Some(pm) = g.child(&["PRIMEM", "PRIMEMERIDIAN"]).and_then(|p| p.num(0)).filter(|v| *v != 0.0) {
        s.push_str(&format!(" +pm={pm}"));
    }
    Ok(s)
}

fn build_geographic(h: &Node) -> Result<String, String> {
    Ok(format!("+proj=longlat {} +no_defs", datum_terms(h)?))
}

/// Lowercase letters and digits only: WKT 1, ESRI and WKT 2 names compare alike.
fn squash(s: &str) -> String {
    s.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_lowercase()).collect()
}

/// A PROJ string of a projected CRS element from its projection method and parameters.
fn build_projected(h: &Node) -> Result<String, String> {
    let unit = linear_unit(h);
    // WKT 1: PROJECTION and PARAMETERs beside it; WKT 2: CONVERSION[METHOD, PARAMETER...].
    let conversion = h.child(&["CONVERSION", "DERIVINGCONVERSION"]);
    let method = match conversion {
        Some(c) => c.child(&["METHOD", "PROJECTION"]),
        None => h.child(&["PROJECTION"]),
    }
    .and_then(Node::name)
    .ok_or("WKT: no projection method")?;
    let angle_unit = base_geographic(h)
        .child(&["UNIT", "ANGLEUNIT"])
        .and_then(|u| u.num(0))
        .filter(|f| f.is_finite() && *f > 0.0)
        .unwrap_or(std::f64::consts::PI / 180.0);
    let mut p: Vec<(&'static str, f64)> = Vec::new();
    for param in conversion.unwrap_or(h).children().filter(|n| n.key == "PARAMETER") {
        let (Some(name), Some(v)) = (param.name(), param.num(0)) else { continue };
        let key = match squash(name).as_str() {
            "latitudeoforigin"
            | "latitudeofcenter"
            | "latitudeofnaturalorigin"
            | "latitudeoffalseorigin"
            | "latitudeofprojectioncentre"
            | "latitudeofprojectioncenter" => "lat_0",
            "centralmeridian"
            | "longitudeofcenter"
            | "longitudeoforigin"
            | "longitudeofnaturalorigin"
            | "longitudeoffalseorigin"
            | "longitudeofprojectioncentre"
            | "longitudeofprojectioncenter" => "lon_0",
            "standardparallel1" | "latitudeof1ststandardparallel" => "lat_1",
            "standardparallel2" | "latitudeof2ndstandardparallel" => "lat_2",
            "latitudeofstandardparallel" | "standardparallel" => "lat_ts",
            "scalefactor"
            | "scalefactoratnaturalorigin"
            | "scalefactoroninitialline"
            | "scalefactoronpseudostandardparallel" => "k_0",
            "falseeasting" | "eastingatfalseorigin" | "eastingatprojectioncentre" => "x_0",
            "falsenorthing" | "northingatfalseorigin" | "northingatprojectioncentre" => "y_0",
            "azimuth" | "azimuthofinitialline" => "alpha",
            "rectifiedgridangle" | "anglefromrectifiedtoskewgrid" => "gamma",
            _ => continue,
        };
        let v = match key {
            // Lengths in the parameter's own unit (WKT 2), else the CRS's.
            "x_0" | "y_0" => v * param.child(&["LENGTHUNIT", "UNIT"]).and_then(|u| u.num(0)).unwrap_or(unit),
            "k_0" => v * param.child(&["SCALEUNIT"]).and_then(|u| u.num(0)).unwrap_or(1.0),
            _ => {
                let f = param.child(&["ANGLEUNIT", "UNIT"]).and_then(|u| u.num(0)).unwrap_or(angle_unit);
                // Degrees stay as written (no round trip through radians).
                if (f - std::f64::consts::PI / 180.0).abs() < 1e-15 {
                    v
                } else {
                    (v * f).to_degrees()
                }
            }
        };
        if !v.is_finite() {
            return Err(format!("WKT: parameter {name} = {v}"));
        }
        p.push((key, v));
    }
    let get = |k: &str| p.iter().rev().find(|(n, _)| *n == k).map(|(_, v)| *v);
    let m = squash(method);
    let proj = match m.as_str() {
        "transversemercator" | "gausskruger" => "tmerc",
        "lambertconformalconic2sp" | "lambertconicconformal2sp" | "lambertconformalconic" => "lcc",
        "lambertconformalconic1sp" | "lambertconicconformal1sp" => "lcc1",
        "mercator1sp" | "mercatorvarianta" | "mercator" => "merc",
        "mercator2sp" | "mercatorvariantb" => "merc2",
        "obliquestereographic" | "doublestereographic" => "sterea",
        "polarstereographic" | "polarstereographicvarianta" | "polarstereographicvariantb" => "stere",
        "albersconicequalarea" | "albersequalarea" => "aea",
        "lambertazimuthalequalarea" => "laea",
        "hotineobliquemercatorazimuthcenter" | "hotineobliquemercatorvariantb" | "obliquemercator" => "omerc",
        "hotineobliquemercator" | "hotineobliquemercatorvarianta" => "omerc_a",
        "swissobliquecylindrical" | "swissobliquemercator" => "somerc",
        "cassinisoldner" | "cassini" => "cass",
        _ => return Err(format!("WKT: projection method '{method}' is not one we know")),
    };
    let mut terms: Vec<(&str, f64)> = Vec::new();
    let mut name = proj;
    let mut extra = "";
    let lat_0 = get("lat_0").unwrap_or(0.0);
    match proj {
        "lcc1" => {
            name = "lcc";
            terms.extend([("lat_1", lat_0), ("lat_0", lat_0)]);
        }
        "lcc" => {
            let lat_1 = get("lat_1").unwrap_or(lat_0);
            terms.extend([("lat_1", lat_1), ("lat_2", get("lat_2").unwrap_or(lat_1)), ("lat_0", lat_0)]);
        }
        "aea" => terms.extend([("lat_1", get("lat_1").unwrap_or(0.0)), ("lat_2", get("lat_2").unwrap_or(0.0))]),
        "merc2" => {
            name = "merc";
            terms.push(("lat_ts", get("lat_1").or(get("lat_ts")).unwrap_or(0.0)));
        }
        "stere" => {
            let pole = if get("lat_ts").or(get("lat_0")).unwrap_or(90.0) < 0.0 { -90.0 } else { 90.0 };
            terms.push(("lat_0", pole));
            if let Some(ts) = get("lat_ts").or(get("lat_0")).filter(|v| v.abs() != 90.0) {
                terms.push(("lat_ts", ts));
            }
        }
        "omerc" | "omerc_a" => {
            if proj == "omerc_a" {
                extra = " +no_uoff";
            }
            name = "omerc";
            terms.extend([("lat_0", lat_0), ("lonc", get("lon_0").unwrap_or(0.0))]);
            terms.push(("alpha", get("alpha").unwrap_or(0.0)));
            if let Some(g) = get("gamma") {
                terms.push(("gamma", g));
            }
        }
        _ => {}
    }
    if !terms.iter().any(|(k, _)| *k == "lat_0") && !matches!(name, "stere" | "merc") {
        terms.push(("lat_0", lat_0));
    }
    if name != "omerc" {
        terms.push(("lon_0", get("lon_0").unwrap_or(0.0)));
    }
    let scaled = name != "lcc" || proj == "lcc1" || get("k_0").is_some_and(|k| k != 1.0);
    if scaled && !matches!(name, "aea" | "laea" | "cass") {
        terms.push(("k_0", get("k_0").unwrap_or(1.0)));
    }
    terms.extend([("x_0", get("x_0").unwrap_or(0.0)), ("y_0", get("y_0").unwrap_or(0.0))]);
    let mut s = format!("+proj={name}");
    for (k, v) in terms {
        s.push_str(&format!(" +{k}={v}"));
    }
    s.push_str(extra);
    s.push(' ');
    s.push_str(&datum_terms(h)?);
    s.push_str(&format!(" {} +no_defs", units_term(unit)));
    Ok(s)
}

/// `+units=m`, `+units=ft`, `+units=us-ft` or `+to_meter=F`.
fn units_term(unit: f64) -> String {
    if (unit - 1.0).abs() < 1e-12 {
        "+units=m".into()
    } else if (unit - 0.3048).abs() < 1e-12 {
        "+units=ft".into()
    } else if (unit - US_FOOT).abs() < 1e-12 {
        "+units=us-ft".into()
    } else {
        format!("+to_meter={unit}")
    }
}

/// Metres in a US survey foot.
pub const US_FOOT: f64 = 1200.0 / 3937.0;

/// The terms of a PROJ string as (key, value) ("" for a flag).
fn terms(proj: &str) -> Vec<(&str, &str)> {
    proj.split_whitespace().filter_map(|t| t.strip_prefix('+')).map(|t| t.split_once('=').unwrap_or((t, ""))).collect()
}

/// Metres per unit of a PROJ string; None for longitude/latitude.
pub(crate) fn unit_of_proj(proj: &str) -> Option<f64> {
    let mut unit = 1.0;
    for (k, v) in terms(proj) {
        match (k, v) {
            ("proj", "longlat" | "latlong" | "lonlat" | "latlon") => return None,
            ("units", "m") => unit = 1.0,
            ("units", "ft") => unit = 0.3048,
            ("units", "us-ft") => unit = US_FOOT,
            ("units", "km") => unit = 1000.0,
            ("units", "cm") => unit = 0.01,
            ("units", "mm") => unit = 0.001,
            ("units", "yd") => unit = 0.9144,
            ("units", "us-yd") => unit = 3600.0 / 3937.0,
            ("units", "link") => unit = 0.201168,
            ("units", "ind-ft") => unit = 0.30479841,
            ("to_meter", v) => unit = v.parse().ok().filter(|f: &f64| f.is_finite() && *f > 0.0)?,
            _ => {}
        }
    }
    Some(unit)
}

/// The projection parameters of a PROJ string that decide the coordinates, with PROJ's
/// defaults, UTM as transverse Mercator: (projection, sorted (key, value)).
fn projection_key(proj: &str) -> Option<(String, Vec<(&'static str, f64)>)> {
    let t = terms(proj);
    let get = |k: &str| t.iter().rev().find(|(n, _)| *n == k).and_then(|(_, v)| v.parse::<f64>().ok());
    let mut name = t.iter().find(|(k, _)| *k == "proj").map(|(_, v)| v.to_string())?;
    let mut v: Vec<(&'static str, f64)> = Vec::new();
    if name == "utm" {
        let zone = get("zone")?;
        let south = t.iter().any(|(k, _)| *k == "south");
        name = "tmerc".into();
        v.extend([("lat_0", 0.0), ("lon_0", zone * 6.0 - 183.0), ("k_0", 0.9996), ("x_0", 500000.0)]);
        v.push(("y_0", if south { 10_000_000.0 } else { 0.0 }));
    } else {
        if name == "etmerc" {
            name = "tmerc".into();
        }
        let lat_0 = get("lat_0").unwrap_or(0.0);
        let lat_1 = get("lat_1").unwrap_or(lat_0);
        v.push(("lat_0", lat_0));
        v.push(("lon_0", get("lon_0").or(get("lonc")).unwrap_or(0.0)));
        v.push(("k_0", get("k_0").or(get("k")).unwrap_or(1.0)));
        v.push(("x_0", get("x_0").unwrap_or(0.0)));
        v.push(("y_0", get("y_0").unwrap_or(0.0)));
        if matches!(name.as_str(), "lcc" | "aea" | "eqdc") {
            v.push(("lat_1", lat_1));
            v.push(("lat_2", get("lat_2").unwrap_or(lat_1)));
        }
        for k in ["lat_ts", "alpha", "gamma"] {
            if let Some(x) = get(k) {
                v.push((k, x));
            }
        }
    }
    v.push(("unit", unit_of_proj(proj)?));
    Some((name, v))
}

fn same_parameters(a: &[(&'static str, f64)], b: &[(&'static str, f64)]) -> bool {
    let get = |v: &[(&'static str, f64)], k: &str| v.iter().find(|(n, _)| *n == k).map(|(_, x)| *x);
    let keys = a.iter().chain(b).map(|(k, _)| *k);
    keys.into_iter().all(|k| {
        let (x, y) = (get(a, k), get(b, k));
        let tol = match k {
            "x_0" | "y_0" => 1e-3,
            "k_0" => 1e-9,
            "unit" => 1e-12,
            _ => 1e-7,
        };
        match (x, y) {
            (Some(x), Some(y)) => (x - y).abs() <= tol,
            // gamma defaults to alpha in omerc; lat_ts to 0.
            (Some(x), None) | (None, Some(x)) => match k {
                "gamma" => {
                    get(if get(a, k).is_some() { b } else { a }, "alpha").is_some_and(|al| (al - x).abs() <= tol)
                }
                _ => x.abs() <= tol,
            },
            (None, None) => true,
        }
    })
}

/// The codes the built-in table has (projected and geographic) lie below this.
const TABLE_CODES: std::ops::RangeInclusive<u16> = 1024..=32766;

/// The EPSG code of the table entry with the projection, parameters, ellipsoid and unit of
/// `proj`; where several have them, the one of the datum `datum` (an EPSG datum code), then the
/// one of the same TOWGS84, then of the same name; None when that leaves more than one.
fn match_epsg(proj: &str, datum: Option<u32>, name: Option<&str>) -> Option<u32> {
    let (pname, params) = projection_key(proj)?;
    let ours = Proj::from_proj_string(proj).ok()?;
    let (a, b) = ours.ellipse_parameters();
    let mut found: Vec<(u32, &'static str, &'static str)> = Vec::new();
    for code in TABLE_CODES {
        let Some(def) = crs_definitions::from_code(code) else { continue };
        let likely = if pname == "tmerc" {
            def.proj4.contains("merc") || def.proj4.contains("utm")
        } else {
            def.proj4.contains(pname.as_str())
        };
        if !likely {
            continue;
        }
        let Some((n, v)) = projection_key(def.proj4) else { continue };
        if n != pname || !same_parameters(&params, &v) {
            continue;
        }
        let Ok(theirs) = Proj::from_proj_string(def.proj4) else { continue };
        let (ta, tb) = theirs.ellipse_parameters();
        if (ta - a).abs() > 1e-3 || (tb - b).abs() > 1e-3 {
            continue;
        }
        found.push((code as u32, def.proj4, def.wkt));
    }
    let towgs = |p: &str| terms(p).into_iter().find(|(k, _)| *k == "towgs84").map(|(_, v)| v.to_string());
    let datum_code =
        |wkt: &str| Node::parse(wkt).ok().and_then(|n| horizontal(&n).and_then(datum_of).and_then(Node::epsg));
    let name_of = |wkt: &str| Node::parse(wkt).ok().and_then(|n| n.name().map(squash));
    type Candidate<'a> = (u32, &'a str, &'a str);
    let narrowings: [&dyn Fn(&Candidate) -> bool; 3] = [
        &|c| datum.is_some() && datum_code(c.2) == datum,
        &|c| towgs(proj).is_some() && towgs(c.1) == towgs(proj),
        &|c| name.is_some_and(|n| name_of(c.2) == Some(squash(n))),
    ];
    for keep in narrowings {
        if found.len() <= 1 {
            break;
        }
        let narrowed: Vec<_> = found.iter().copied().filter(|c| keep(c)).collect();
        if !narrowed.is_empty() {
            found = narrowed;
        }
    }
    match found.as_slice() {
        [(code, _, _)] => Some(*code),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_of_epsg_codes_from_their_proj_strings() {
        // NAD83(HARN) / Oregon GIC Lambert (ft), NAD83(HARN) / New Mexico Central (ftUS), EOV,
        // WGS 84.
        assert_eq!(unit_of_epsg(2994), Some(0.3048));
        assert_eq!(unit_of_epsg(2903), Some(1200.0 / 3937.0));
        assert_eq!(unit_of_epsg(23700), Some(1.0));
        assert_eq!(unit_of_epsg(4326), None);
    }

    #[test]
    fn budapest_in_eov_and_back_through_utm() {
        // PROJ 9.5 (pyproj): lon 19.04, lat 47.50 -> EOV 649439.112, 239562.881.
        let r = Reprojection::new(CrsDef::parse("EPSG:4326").unwrap(), CrsDef::parse("EPSG:23700").unwrap()).unwrap();
        let (mut x, mut y) = ([19.04], [47.50]);
        r.apply(&mut x, &mut y).unwrap();
        assert!((x[0] - 649439.112).abs() < 1e-3 && (y[0] - 239562.881).abs() < 1e-3, "{} {}", x[0], y[0]);
        // EOV -> UTM 34N -> EOV.
        let to = Reprojection::new(CrsDef::from_epsg(23700).unwrap(), CrsDef::from_epsg(32634).unwrap()).unwrap();
        let back = Reprojection::new(CrsDef::from_epsg(32634).unwrap(), CrsDef::from_epsg(23700).unwrap()).unwrap();
        let (mut x, mut y) = (vec![650012.5, 651000.0], vec![239996.0, 241000.0]);
        let (x0, y0) = (x.clone(), y.clone());
        to.apply(&mut x, &mut y).unwrap();
        assert!((x[0] - x0[0]).abs() > 1000.0);
        back.apply(&mut x, &mut y).unwrap();
        // Through HD72 -> WGS 84 and back: within 0.4 mm (PROJ does the same).
        for i in 0..2 {
            assert!((x[i] - x0[i]).abs() < 1e-3 && (y[i] - y0[i]).abs() < 1e-3, "{} {}", x[i] - x0[i], y[i] - y0[i]);
        }
        assert!(CrsDef::parse("EPSG:99999").is_err());
        assert!(CrsDef::parse("WGS84").is_err());
    }

    #[test]
    fn an_epsg_code_and_its_proj_string_are_the_same_crs() {
        let eov = CrsDef::from_epsg(23700).unwrap();
        let text = eov.proj_string().unwrap();
        assert!(text.starts_with("+proj=somerc"), "{text}");
        let again = CrsDef::parse(&text).unwrap();
        assert!(again.same_as(&eov) && eov.same_as(&again));
        assert!(!again.same_as(&CrsDef::from_epsg(32634).unwrap()));
    }

    #[cfg(feature = "proj")]
    #[test]
    fn proj_backend_agrees_with_proj4rs_and_knows_more_codes() {
        // Within a millimetre of the pure-Rust path on EOV -> UTM 34N.
        let pj = Reprojection::new(CrsDef::from_epsg(23700).unwrap(), CrsDef::from_epsg(32634).unwrap()).unwrap();
        let (mut x, mut y) = (vec![650012.5], vec![239996.0]);
        pj.apply(&mut x, &mut y).unwrap();
        let src = Proj::from_proj_string(crs_definitions::EPSG_23700.proj4).unwrap();
        let dst = Proj::from_proj_string(crs_definitions::EPSG_32634.proj4).unwrap();
        let mut p = (650012.5, 239996.0, 0.0);
        proj4rs::transform::transform(&src, &dst, &mut p).unwrap();
        assert!(
            (x[0] - p.0).abs() < 1e-3 && (y[0] - p.1).abs() < 1e-3,
            "PROJ {} {} vs proj4rs {} {}",
            x[0],
            y[0],
            p.0,
            p.1
        );
        // A code PROJ does not know is an error naming it.
        assert!(CrsDef::from_epsg(99999).unwrap_err().contains("EPSG:99999"));
        // Readers hand their reprojection to a reading thread: there it gives the same bits.
        let (mut x2, mut y2) = (vec![650012.5], vec![239996.0]);
        std::thread::spawn(move || {
            pj.apply(&mut x2, &mut y2).unwrap();
            (x2, y2)
        })
        .join()
        .map(|(x2, y2)| assert!(x2[0].to_bits() == x[0].to_bits() && y2[0].to_bits() == y[0].to_bits()))
        .unwrap();
    }

    /// Wrong CRS strings are errors naming the string, never a panic; what parses reprojects
    /// a point without one either.
    #[test]
    fn wrong_crs_strings_are_errors() {
        let long = format!("+proj=utm +zone=33 {}", "+x=1 ".repeat(100_000));
        for s in [
            "",
            " ",
            "EPSG:",
            "EPSG:0",
            "EPSG:-1",
            "EPSG:4294967296",
            "EPSG:99999",
            "epsg:abc",
            "+",
            "+proj",
            "+proj=",
            "+proj=nonsense",
            "+proj=utm +zone=999",
            "+proj=utm +zone=-3",
            "+proj=tmerc +k=0",
            "+proj=lcc +lat_1=91 +lat_2=-91",
            "+proj=longlat +a=-1",
            "+proj=longlat +ellps=nope",
            "+proj=omerc",
            "+proj=tmerc +lat_0=NaN",
            "+proj=tmerc +x_0=inf",
            "é",
            "\u{0}",
            &long,
        ] {
            let Ok(def) = CrsDef::parse(s) else { continue };
            // A projected CRS that parses: a point through it gives numbers or an error.
            if let (Ok(wgs), false) = (CrsDef::from_epsg(4326), def.is_geographic()) {
                if let Ok(r) = Reprojection::new(wgs, def) {
                    let (mut x, mut y) = ([19.0], [47.5]);
                    let _ = r.apply(&mut x, &mut y);
                }
            }
        }
        for s in ["", "EPSG:", "epsg:abc", "+proj", "EPSG:4294967296"] {
            let e = CrsDef::parse(s).err().unwrap_or_default();
            assert!(e.contains(s.trim()) && !e.is_empty(), "'{s}': {e}");
        }
    }

    /// The WKT of PDAL's autzen_trim.las: no AUTHORITY of the CRS, ESRI names, feet.
    const AUTZEN_WKT: &str = r#"PROJCS["NAD_1983_HARN_Lambert_Conformal_Conic",GEOGCS["GCS_North_American_1983_HARN",DATUM["NAD83_High_Accuracy_Regional_Network",SPHEROID["GRS_1980",6378137,298.257222101,AUTHORITY["EPSG","7019"]],AUTHORITY["EPSG","6152"]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],PROJECTION["Lambert_Conformal_Conic_2SP"],PARAMETER["standard_parallel_1",43],PARAMETER["standard_parallel_2",45.5],PARAMETER["latitude_of_origin",41.75],PARAMETER["central_meridian",-120.5],PARAMETER["false_easting",1312335.958005249],PARAMETER["false_northing",0],UNIT["foot",0.3048,AUTHORITY["EPSG","9002"]]]"#;

    #[test]
    fn a_wkt_without_authority_is_matched_to_its_epsg_code_by_parameters() {
        let w = recognise_wkt(AUTZEN_WKT).unwrap();
        // NAD83(HARN) / Oregon GIC Lambert (ft); EPSG:2992 has the same parameters on NAD83:
        // the datum's code decides.
        assert_eq!((w.epsg, w.epsg_by, w.unit, w.compound), (Some(2994), Some("parameters"), Some(0.3048), false));
        assert_eq!(w.name.as_deref(), Some("NAD_1983_HARN_Lambert_Conformal_Conic"));
        // Without the datum's code, two entries remain (NAD83 and NAD83(HARN)): no code, and the
        // PROJ string built from the WKT.
        let no_datum = AUTZEN_WKT.replace(r#",AUTHORITY["EPSG","6152"]"#, "");
        let w = recognise_wkt(&no_datum).unwrap();
        assert_eq!(w.epsg, None, "{w:?}");
        let p = w.proj.unwrap();
        assert!(p.starts_with("+proj=lcc +lat_1=43 +lat_2=45.5 +lat_0=41.75 +lon_0=-120.5"), "{p}");
        assert!(p.contains("+units=ft"), "{p}");
        // The built string and the EPSG code put a point at the same place (within 1 mm).
        let built = CrsDef::parse(&p).unwrap();
        let r = Reprojection::new(built, CrsDef::from_epsg(2994).unwrap()).unwrap();
        let (mut x, mut y) = ([637_000.0], [851_000.0]);
        r.apply(&mut x, &mut y).unwrap();
        assert!((x[0] - 637_000.0).abs() < 3e-3 && (y[0] - 851_000.0).abs() < 3e-3, "{} {}", x[0], y[0]);
        // Metres as 1: EPSG:2993 (NAD83(HARN) / Oregon GIC Lambert, metres).
        let m = AUTZEN_WKT
            .replace(r#"UNIT["foot",0.3048,AUTHORITY["EPSG","9002"]]"#, r#"UNIT["metre",1]"#)
            .replace("1312335.958005249", "400000");
        assert_eq!(recognise_wkt(&m).unwrap().epsg, Some(2993));
    }

    #[test]
    fn compound_and_wkt2_crss_give_their_horizontal_part() {
        let compound = format!(
            r#"COMPD_CS["x + NAVD88",{AUTZEN_WKT},VERT_CS["NAVD88 height",VERT_DATUM["North American Vertical Datum 1988",2005],UNIT["foot",0.3048],AUTHORITY["EPSG","5703"]]]"#
        );
        let w = recognise_wkt(&compound).unwrap();
        assert_eq!((w.epsg, w.unit, w.compound), (Some(2994), Some(0.3048), true));
        // WKT 2 (PROJ 9 output for EPSG:2903, US survey feet, ID at the end), in a compound CRS.
        let wkt2 = r#"COMPOUNDCRS["NAD83(HARN) / New Mexico Central (ftUS) + NAVD88 height (ftUS)",PROJCRS["NAD83(HARN) / New Mexico Central (ftUS)",BASEGEOGCRS["NAD83(HARN)",DATUM["NAD83 (High Accuracy Reference Network)",ELLIPSOID["GRS 1980",6378137,298.257222101,LENGTHUNIT["metre",1]]],PRIMEM["Greenwich",0,ANGLEUNIT["degree",0.0174532925199433]]],CONVERSION["SPCS83 New Mexico Central zone (US Survey feet)",METHOD["Transverse Mercator",ID["EPSG",9807]],PARAMETER["Latitude of natural origin",31,ANGLEUNIT["degree",0.0174532925199433]],PARAMETER["Longitude of natural origin",-106.25,ANGLEUNIT["degree",0.0174532925199433]],PARAMETER["Scale factor at natural origin",0.9999,SCALEUNIT["unity",1]],PARAMETER["False easting",1640416.667,LENGTHUNIT["US survey foot",0.304800609601219]],PARAMETER["False northing",0,LENGTHUNIT["US survey foot",0.304800609601219]]],CS[Cartesian,2],AXIS["easting (X)",east,LENGTHUNIT["US survey foot",0.304800609601219]],AXIS["northing (Y)",north,LENGTHUNIT["US survey foot",0.304800609601219]]],VERTCRS["NAVD88 height (ftUS)",VDATUM["North American Vertical Datum 1988"],CS[vertical,1],AXIS["gravity-related height (H)",up,LENGTHUNIT["US survey foot",0.304800609601219]],ID["EPSG",6360]]]"#;
        let w = recognise_wkt(wkt2).unwrap();
        assert!((w.unit.unwrap() - US_FOOT).abs() < 1e-12 && w.compound, "{w:?}");
        // Without the ID of the projected CRS: found by its parameters (NAD83 / New Mexico
        // Central (ftUS) shares them; the datum has no code here, the CRS's name decides).
        assert_eq!((w.epsg, w.epsg_by), (Some(2903), Some("parameters")), "{w:?}");
        let p = w.proj.clone().unwrap();
        assert!(p.contains("+proj=tmerc") && p.contains("+units=us-ft") && p.contains("+k=0.9999"), "{w:?}");
        // Broken WKT is an error naming the place, never a panic.
        for bad in ["", "PROJCS[", "PROJCS[\"a\",", "X", "PROJCS[\"a\"]]", &"A[".repeat(100)] {
            assert!(recognise_wkt(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_crs_in_feet_has_a_twin_in_metres() {
        let ft = CrsDef::from_epsg(2994).unwrap();
        assert_eq!(ft.unit(), Some(0.3048));
        let m = ft.in_metres().unwrap();
        assert_eq!(m.unit(), Some(1.0));
        assert!(m.label.contains("+units=m") && !m.label.contains("+units=ft"), "{}", m.label);
        assert!(!m.same_as(&ft));
        // Feet to its metre twin: x and y times 0.3048 (false easting is metres in both). From
        // the PROJ string the twin is made of: with the C PROJ library, EPSG:2994 itself
        // carries its datum's own transformation, which the string's +towgs84 does not.
        let from = CrsDef::parse(&ft.proj_string().unwrap()).unwrap();
        let r = Reprojection::new(from, m).unwrap();
        let (mut x, mut y) = ([1_312_335.958 + 1000.0], [500_000.0]);
        r.apply(&mut x, &mut y).unwrap();
        assert!((x[0] - (400_000.0 + 304.8)).abs() < 1e-3 && (y[0] - 152_400.0).abs() < 1e-3, "{} {}", x[0], y[0]);
        // US survey feet likewise; metres stay as they are; degrees have no twin.
        assert!((CrsDef::from_epsg(2903).unwrap().unit().unwrap() - US_FOOT).abs() < 1e-15);
        assert_eq!(CrsDef::from_epsg(2903).unwrap().in_metres().unwrap().unit(), Some(1.0));
        let eov = CrsDef::from_epsg(23700).unwrap().in_metres().unwrap();
        assert_eq!(eov.epsg, Some(23700));
        assert!(CrsDef::from_epsg(4326).unwrap().in_metres().is_err());
        // From a WKT: the code it names or matches.
        assert_eq!(CrsDef::from_wkt(AUTZEN_WKT).unwrap().epsg, Some(2994));
        assert_eq!(CrsDef::from_wkt(crate::EOV_WKT).unwrap().epsg, Some(23700));
    }
}
