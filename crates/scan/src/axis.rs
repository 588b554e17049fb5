//! Where a road's axis comes from: a polyline (CSV `x,y[,z]`, GeoJSON LineString), a vehicle
//! trajectory (CSV with a header; one pass, shifted sideways to the road centre) or an
//! OpenStreetMap way (XML, lon/lat). Vertices come out in order, in the file's CRS; the caller
//! reprojects. Hostile text is an error naming the file and the line (and byte, for bytes that
//! are not UTF-8): non-finite coordinates or beyond ±1e9, fewer than 2 distinct vertices
//! (consecutive repeats are left out), JSON nested deeper than 128, XML entities (not
//! expanded); a line costs no more memory than itself, however many fields it holds.

use crate::Error;
use std::collections::HashMap;
use std::path::Path;

/// Vertices of an axis, in order along the road.
#[derive(Debug, Clone, PartialEq)]
pub struct Polyline {
    /// x, y (or lon, lat in degrees) and z (NaN when the source has none).
    pub xyz: Vec<[f64; 3]>,
    /// The CRS the source states ("EPSG:4326" for GeoJSON and OSM), if any.
    pub crs: Option<String>,
}

impl Polyline {
    /// Whether every vertex has a height.
    pub fn has_z(&self) -> bool {
        !self.xyz.is_empty() && self.xyz.iter().all(|p| p[2].is_finite())
    }
}

fn text_err(path: &Path, line: usize, message: impl Into<String>) -> Error {
    Error::Text { path: path.to_path_buf(), line, message: message.into() }
}

/// The file as text: an error naming the line and byte of the first byte that is not UTF-8
/// (a byte-order mark at the start is skipped). Memory: the file's size.
fn read_text(path: &Path) -> Result<String, Error> {
    let mut bytes = std::fs::read(path).map_err(|e| Error::Io { path: path.to_path_buf(), message: e.to_string() })?;
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let b = e.as_bytes();
        let line = 1 + b[..at].iter().filter(|&&c| c == b'\n').count();
        let column = at - b[..at].iter().rposition(|&c| c == b'\n').map_or(0, |p| p + 1) + 1;
        text_err(path, line, format!("byte {at} (column {column}): not UTF-8 (0x{:02X})", b[at]))
    })
}

/// Splits a CSV line on commas, semicolons, tabs or spaces: at most `most` fields (a longer
/// line gives `most` and the caller's count check fails), so a huge line costs no more than
/// itself.
fn fields(line: &str, most: usize) -> Vec<&str> {
    line.split([',', ';', '\t', ' ']).map(str::trim).filter(|f| !f.is_empty()).take(most).collect()
}

/// Map coordinates (metres or feet) and heights beyond this are no place on Earth.
const MAX_COORDINATE: f64 = 1e9;

fn number(path: &Path, line: usize, field: &str, what: &str) -> Result<f64, Error> {
    let shown = || {
        let mut s: String = field.chars().take(40).collect();
        if s.len() < field.len() {
            s.push_str("...");
        }
        s
    };
    match field.parse::<f64>() {
        Ok(v) if v.abs() <= MAX_COORDINATE => Ok(v),
        Ok(v) if v.is_finite() => {
            Err(text_err(path, line, format!("{what} '{}' is beyond ±{MAX_COORDINATE:e}", shown())))
        }
        _ => Err(text_err(path, line, format!("{what} '{}' is not a finite number", shown()))),
    }
}

/// The vertices with consecutive repeats (same x and y) left out; an error at `line` when
/// fewer than 2 remain.
fn distinct(path: &Path, line: usize, mut xyz: Vec<[f64; 3]>, what: &str) -> Result<Vec<[f64; 3]>, Error> {
    let n = xyz.len();
    xyz.dedup_by(|b, a| a[0] == b[0] && a[1] == b[1]);
    if xyz.len() < 2 {
        let repeats = if n > xyz.len() { format!(" (of {n}, repeats left out)") } else { String::new() };
        return Err(text_err(path, line, format!("{} {what}{repeats}; an axis needs at least 2", xyz.len())));
    }
    Ok(xyz)
}

/// A CSV polyline: rows `x,y` or `x,y,z` (commas, semicolons, tabs or spaces), an optional
/// header line, `#` comments.
pub fn read_polyline_csv(path: &Path) -> Result<Polyline, Error> {
    let text = read_text(path)?;
    let mut xyz = Vec::new();
    let mut width = None;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let f = fields(line, 4);
        // A first line that is not numbers is a header.
        if xyz.is_empty() && width.is_none() && f.first().is_some_and(|v| v.parse::<f64>().is_err()) {
            width = Some(0);
            continue;
        }
        if f.len() < 2 || f.len() > 3 {
            let found = if f.len() > 3 { "more than 3".to_string() } else { f.len().to_string() };
            return Err(text_err(path, n, format!("expected x,y or x,y,z, found {found} fields")));
        }
        let z = if f.len() == 3 { number(path, n, f[2], "z")? } else { f64::NAN };
        xyz.push([number(path, n, f[0], "x")?, number(path, n, f[1], "y")?, z]);
    }
    let xyz = distinct(path, text.lines().count().max(1), xyz, "vertices")?;
    Ok(Polyline { xyz, crs: None })
}

/// A GeoJSON LineString: the geometry itself, a Feature, or the first LineString of a
/// FeatureCollection. Coordinates are lon/lat (RFC 7946), so the CRS is EPSG:4326, unless a
/// top-level `crs` member (GeoJSON 2008) names an EPSG code. Nesting deeper than 128 levels is
/// an error (serde_json's recursion limit).
pub fn read_geojson(path: &Path) -> Result<Polyline, Error> {
    let text = read_text(path)?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| text_err(path, e.line().max(1), format!("not JSON: {e}")))?;
    fn line_string(v: &serde_json::Value) -> Option<&Vec<serde_json::Value>> {
        match v.get("type")?.as_str()? {
            "LineString" => v.get("coordinates")?.as_array(),
            "Feature" => line_string(v.get("geometry")?),
            "FeatureCollection" => v.get("features")?.as_array()?.iter().find_map(line_string),
            _ => None,
        }
    }
    let crs = match v.get("crs") {
        None | Some(serde_json::Value::Null) => "EPSG:4326".to_string(),
        Some(c) => {
            let name = c.get("properties").and_then(|p| p.get("name")).and_then(serde_json::Value::as_str);
            match name.and_then(geojson_crs) {
                Some(code) => format!("EPSG:{code}"),
                None => {
                    let shown: String = c.to_string().chars().take(80).collect();
                    return Err(text_err(
                        path,
                        1,
                        format!("crs {shown}: expected a name EPSG:N, urn:ogc:def:crs:EPSG::N or OGC CRS84"),
                    ));
                }
            }
        }
    };
    let lon_lat = crs == "EPSG:4326";
    let coords =
        line_string(&v).ok_or_else(|| text_err(path, 1, "no LineString (a geometry, Feature or FeatureCollection)"))?;
    let mut xyz = Vec::with_capacity(coords.len());
    for (i, c) in coords.iter().enumerate() {
        let bad = |m: &str| text_err(path, 1, format!("coordinate {i}: {m}"));
        let Some(p) = c.as_array().and_then(|a| a.iter().map(serde_json::Value::as_f64).collect::<Option<Vec<f64>>>())
        else {
            return Err(bad("not an array of numbers [lon, lat] or [lon, lat, z]"));
        };
        let p = match p.as_slice() {
            [x, y] => [*x, *y, f64::NAN],
            [x, y, z, ..] => [*x, *y, *z],
            _ => return Err(bad("fewer than 2 numbers")),
        };
        if !p.iter().take(2).chain(p.get(2).filter(|z| !z.is_nan())).all(|v| v.abs() <= MAX_COORDINATE) {
            return Err(bad(&format!("{:?} beyond ±{MAX_COORDINATE:e}", p)));
        }
        if lon_lat && (p[0].abs() > 180.0 || p[1].abs() > 90.0) {
            return Err(bad(&format!("lon {}, lat {} out of range (GeoJSON is lon/lat)", p[0], p[1])));
        }
        xyz.push(p);
    }
    let xyz = distinct(path, 1, xyz, "vertices")?;
    Ok(Polyline { xyz, crs: Some(crs) })
}

/// The EPSG code of a GeoJSON `crs` name: `EPSG:N`, `urn:ogc:def:crs:EPSG::N` (any version),
/// `urn:ogc:def:crs:OGC:1.3:CRS84` (4326).
fn geojson_crs(name: &str) -> Option<u32> {
    let n = name.trim();
    if n.ends_with("CRS84") {
        return Some(4326);
    }
    let code = n.strip_prefix("EPSG:").or_else(|| {
        let rest = n.strip_prefix("urn:ogc:def:crs:EPSG:")?;
        Some(&rest[rest.rfind(':')? + 1..])
    })?;
    code.parse().ok().filter(|&c| c > 0)
}

/// A vehicle trajectory: a CSV whose header names the columns `x` (or `easting`), `y` (or
/// `northing`), optionally `z` (`height`, `alt`) and `pass`. Rows of one pass (`pass`, default
/// the first row's) in file order, each moved `offset` metres to the left of the direction of
/// travel (taken over ±`window` m of track), so a drive in a lane gives the road's centre.
pub fn read_trajectory(path: &Path, pass: Option<&str>, offset: f64) -> Result<Polyline, Error> {
    let (text, mut passes) = trajectory_rows(path, pass.map(str::to_string), true)?;
    let (id, xyz) = passes.pop().unwrap_or_default();
    let which = if id.is_empty() { String::new() } else { format!(" of pass {id}") };
    let mut xyz = distinct(path, text.lines().count().max(1), xyz, &format!("rows{which}"))?;
    if offset != 0.0 {
        shift_left(&mut xyz, offset, 1.0);
    }
    Ok(Polyline { xyz, crs: None })
}

/// One pass of a trajectory: its id and its rows' x, y, z.
pub type Pass = (String, Vec<[f64; 3]>);

/// Every pass of a vehicle trajectory (as [`read_trajectory`] reads one): its id (empty
/// without a `pass` column) and its rows in file order, passes in the order they first
/// appear; not moved. A pass's rows need not be contiguous.
pub fn read_trajectory_passes(path: &Path) -> Result<Vec<Pass>, Error> {
    let (text, passes) = trajectory_rows(path, None, false)?;
    let lines = text.lines().count().max(1);
    passes
        .into_iter()
        .map(|(id, xyz)| {
            let which = if id.is_empty() { String::new() } else { format!(" of pass {id}") };
            Ok((id.clone(), distinct(path, lines, xyz, &format!("rows{which}"))?))
        })
        .collect()
}

/// The text of trajectory `path` and its rows by pass: only pass `want` (default: the first
/// row's) when `one`, else every pass.
fn trajectory_rows(path: &Path, mut want: Option<String>, one: bool) -> Result<(String, Vec<Pass>), Error> {
    let text = read_text(path)?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim().starts_with('#'));
    let (hn, header) = lines.next().ok_or_else(|| text_err(path, 1, "empty: expected a header line"))?;
    const MOST: usize = 256;
    let names: Vec<String> = fields(header, MOST + 1).iter().map(|f| f.to_ascii_lowercase()).collect();
    if names.len() > MOST {
        return Err(text_err(path, hn + 1, format!("a header of more than {MOST} columns")));
    }
    let col = |keys: &[&str]| names.iter().position(|n| keys.contains(&n.as_str()));
    let (Some(cx), Some(cy)) = (col(&["x", "easting", "e"]), col(&["y", "northing", "n"])) else {
        return Err(text_err(path, hn + 1, "header must name columns x and y (or easting and northing)"));
    };
    let cz = col(&["z", "height", "alt", "altitude", "h"]);
    let cp = col(&["pass", "pass_id", "line", "source"]);
    let mut passes: Vec<Pass> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (i, line) in lines {
        let n = i + 1;
        let f = fields(line, names.len() + 1);
        if f.len() != names.len() {
            let found = if f.len() > names.len() { format!("more than {}", names.len()) } else { f.len().to_string() };
            return Err(text_err(path, n, format!("{found} fields, the header names {}", names.len())));
        }
        let id = cp.map_or("", |c| f[c]);
        if one {
            let wanted = want.get_or_insert_with(|| id.to_string());
            if cp.is_some() && id != wanted.as_str() {
                continue;
            }
        }
        let z = cz.map_or(Ok(f64::NAN), |c| number(path, n, f[c], "z"))?;
        let p = [number(path, n, f[cx], "x")?, number(path, n, f[cy], "y")?, z];
        let k = *index.entry(id.to_string()).or_insert_with(|| {
            passes.push((id.to_string(), Vec::new()));
            passes.len() - 1
        });
        passes[k].1.push(p);
    }
    if one && passes.is_empty() {
        passes.push((want.unwrap_or_default(), Vec::new()));
    }
    Ok((text, passes))
}

/// Moves each vertex `offset` to the left of the direction of travel there (the chord over
/// ±`window` m of track).
pub fn shift_left(xyz: &mut [[f64; 3]], offset: f64, window: f64) {
    let n = xyz.len();
    let mut cum = vec![0.0; n];
    for i in 1..n {
        cum[i] = cum[i - 1] + (xyz[i][0] - xyz[i - 1][0]).hypot(xyz[i][1] - xyz[i - 1][1]);
    }
    let orig: Vec<[f64; 3]> = xyz.to_vec();
    let (mut a, mut b) = (0, 0);
    for i in 0..n {
        while cum[i] - cum[a] > window && a < i {
            a += 1;
        }
        while b + 1 < n && cum[b] - cum[i] < window {
            b += 1;
        }
        let (p, q) = (orig[a.min(i.saturating_sub(1))], orig[b.max((i + 1).min(n - 1))]);
        let (dx, dy) = (q[0] - p[0], q[1] - p[1]);
        let len = dx.hypot(dy);
        if len > 0.0 {
            xyz[i][0] -= offset * dy / len;
            xyz[i][1] += offset * dx / len;
        }
    }
}

/// The ways of an OSM XML file with their nodes (lon/lat, EPSG:4326) and tags.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OsmMap {
    /// Every node by id: lon, lat in degrees.
    pub nodes: HashMap<String, [f64; 2]>,
    /// Every way in file order.
    pub ways: Vec<OsmWay>,
}

/// One OSM way.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OsmWay {
    /// Its id.
    pub id: String,
    /// Its nodes' ids in order, each with the line of its `<nd>`.
    pub refs: Vec<(String, usize)>,
    /// Its tags (k, v) in file order.
    pub tags: Vec<(String, String)>,
    /// The line of its `<way>`.
    pub line: usize,
}

impl OsmWay {
    /// The value of tag `k`.
    pub fn tag(&self, k: &str) -> Option<&str> {
        self.tags.iter().find(|t| t.0 == k).map(|t| t.1.as_str())
    }
}

impl OsmMap {
    /// Way `w`'s nodes in order, each id with its lon/lat, a node at the place of the one
    /// before it left out (an error names a node the file lacks, or a way of fewer than 2
    /// places).
    pub fn way_nodes<'w>(&self, path: &Path, w: &'w OsmWay) -> Result<Vec<(&'w str, [f64; 2])>, Error> {
        let mut nodes: Vec<(&str, [f64; 2])> = Vec::with_capacity(w.refs.len());
        for (r, n) in &w.refs {
            let p = self
                .nodes
                .get(r)
                .ok_or_else(|| text_err(path, *n, format!("way {}: node {r} is not in the file", w.id)))?;
            nodes.push((r.as_str(), *p));
        }
        let xyz: Vec<[f64; 3]> = nodes.iter().map(|(_, p)| [p[0], p[1], f64::NAN]).collect();
        let line = w.refs.first().map_or(w.line, |r| r.1);
        // The same repeats as `distinct` leaves out, and its error.
        distinct(path, line, xyz, &format!("nodes in way {}", w.id))?;
        nodes.dedup_by(|b, a| a.1 == b.1);
        Ok(nodes)
    }

    /// The lon/lat of way `w`'s nodes, in order ([`OsmMap::way_nodes`]).
    pub fn polyline(&self, path: &Path, w: &OsmWay) -> Result<Polyline, Error> {
        let xyz = self.way_nodes(path, w)?.iter().map(|(_, p)| [p[0], p[1], f64::NAN]).collect();
        Ok(Polyline { xyz, crs: Some("EPSG:4326".into()) })
    }
}

/// Every node and way of an OSM XML file (relations are skipped). A document type's entities
/// are not expanded (quick-xml reads no DTD): an attribute using one is an error naming the
/// line.
pub fn read_osm(path: &Path) -> Result<OsmMap, Error> {
    use quick_xml::events::Event;
    let text = read_text(path)?;
    // Lines counted as the reader moves on (once over the file).
    let (mut line, mut counted) = (1usize, 0usize);
    let mut line_at = |byte: u64| {
        let to = (byte as usize).min(text.len());
        if to > counted {
            line += text.as_bytes()[counted..to].iter().filter(|&&c| c == b'\n').count();
            counted = to;
        }
        line
    };
    let mut reader = quick_xml::Reader::from_str(&text);
    let mut map = OsmMap::default();
    let mut in_way = false;
    loop {
        let pos = reader.buffer_position();
        let ev = match reader.read_event() {
            Ok(ev) => ev,
            Err(e) => return Err(text_err(path, line_at(reader.error_position()), format!("not XML: {e}"))),
        };
        let n = line_at(pos);
        let attr = |e: &quick_xml::events::BytesStart, key: &str| -> Result<Option<String>, Error> {
            for a in e.attributes() {
                let a = a.map_err(|err| text_err(path, n, format!("bad attribute: {err}")))?;
                if a.key.as_ref() == key.as_bytes() {
                    let v = a.unescape_value().map_err(|err| text_err(path, n, format!("attribute {key}: {err}")))?;
                    return Ok(Some(v.into_owned()));
                }
            }
            Ok(None)
        };
        let empty = matches!(ev, Event::Empty(_));
        match ev {
            Event::Start(e) | Event::Empty(e) => match e.name().as_ref() {
                b"node" => {
                    let (Some(id), Some(lat), Some(lon)) = (attr(&e, "id")?, attr(&e, "lat")?, attr(&e, "lon")?) else {
                        return Err(text_err(path, n, "<node> without id, lat and lon"));
                    };
                    let (lat, lon) = (number(path, n, &lat, "lat")?, number(path, n, &lon, "lon")?);
                    if lat.abs() > 90.0 || lon.abs() > 180.0 {
                        return Err(text_err(path, n, format!("node {id}: lat {lat}, lon {lon} out of range")));
                    }
                    map.nodes.insert(id, [lon, lat]);
                }
                b"way" => {
                    let id = attr(&e, "id")?.ok_or_else(|| text_err(path, n, "<way> without id"))?;
                    map.ways.push(OsmWay { id, line: n, ..Default::default() });
                    in_way = !empty;
                }
                b"nd" if in_way => {
                    let r = attr(&e, "ref")?.ok_or_else(|| text_err(path, n, "<nd> without ref"))?;
                    if let Some(w) = map.ways.last_mut() {
                        w.refs.push((r, n));
                    }
                }
                b"tag" if in_way => {
                    let (Some(k), Some(v)) = (attr(&e, "k")?, attr(&e, "v")?) else {
                        return Err(text_err(path, n, "<tag> without k and v"));
                    };
                    if let Some(w) = map.ways.last_mut() {
                        w.tags.push((k, v));
                    }
                }
                _ => {}
            },
            Event::End(e) if e.name().as_ref() == b"way" => in_way = false,
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(map)
}

/// An OpenStreetMap way from an OSM XML file: its nodes' lon/lat in order (EPSG:4326) (see
/// [`read_osm`]).
pub fn read_osm_way(path: &Path, way: &str) -> Result<Polyline, Error> {
    let map = read_osm(path)?;
    let Some(w) = map.ways.iter().find(|w| w.id == way) else {
        let last = std::fs::read(path).map_or(1, |b| 1 + b.iter().filter(|&&c| c == b'\n').count());
        return Err(text_err(path, last, format!("no way with id {way}")));
    };
    map.polyline(path, w)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A file `name` holding `text`, in a scratch directory removed with the returned guard.
    fn temp(name: &str, text: &str) -> (roadscan_tests::Scratch, std::path::PathBuf) {
        let dir = roadscan_tests::Scratch::new(&format!("axis-{name}"));
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        (dir, p)
    }

    #[test]
    fn csv_polylines_with_and_without_header_and_z() {
        let (_d, p) = temp("a.csv", "x,y,z\n0,0,1\n10;0;2\n# c\n20 5 3\n");
        let l = read_polyline_csv(&p).unwrap();
        assert_eq!(l.xyz, vec![[0.0, 0.0, 1.0], [10.0, 0.0, 2.0], [20.0, 5.0, 3.0]]);
        assert!(l.has_z());
        let (_e, p) = temp("b.csv", "0,0\n1,nan\n");
        let e = read_polyline_csv(&p).unwrap_err().to_string();
        assert!(e.ends_with("b.csv:2: y 'nan' is not a finite number"), "{e}");
    }

    #[test]
    fn a_trajectory_pass_is_moved_to_the_road_centre() {
        // Driving east along y = -1.5, then back west along y = 1.5.
        let mut t = String::from("time,x,y,z,heading,pass\n");
        for i in 0..=20 {
            t += &format!("{i},{},-1.5,100,0,1\n", i as f64);
        }
        for i in 0..=20 {
            t += &format!("{},{},1.5,100,3.14159,2\n", 30 + i, 20.0 - i as f64);
        }
        let (_d, p) = temp("t.csv", &t);
        let l = read_trajectory(&p, None, 1.5).unwrap();
        assert_eq!(l.xyz.len(), 21);
        assert!(l.xyz.iter().all(|v| v[1].abs() < 1e-12 && v[2] == 100.0), "{:?}", l.xyz);
        let l = read_trajectory(&p, Some("2"), 1.5).unwrap();
        assert!(l.xyz.iter().all(|v| v[1].abs() < 1e-12) && l.xyz[0][0] == 20.0);
        let e = read_trajectory(&p, Some("3"), 0.0).unwrap_err().to_string();
        assert!(e.contains("0 rows of pass 3"), "{e}");
    }

    #[test]
    fn osm_ways_and_geojson_lines() {
        let osm = r#"<?xml version="1.0"?><osm version="0.6">
<node id="1" lat="47.5" lon="19.0"/><node id="2" lat="47.501" lon="19.001"/>
<way id="7"><nd ref="2"/><nd ref="1"/><tag k="highway" v="primary"/></way></osm>"#;
        let (_d, m) = temp("m.osm", osm);
        let l = read_osm_way(&m, "7").unwrap();
        assert_eq!(l.xyz.iter().map(|p| [p[0], p[1]]).collect::<Vec<_>>(), vec![[19.001, 47.501], [19.0, 47.5]]);
        assert!(read_osm_way(&m, "8").unwrap_err().to_string().contains("no way with id 8"));
        let gj = r#"{"type":"Feature","geometry":{"type":"LineString","coordinates":[[19,47.5],[19.001,47.5,120]]}}"#;
        let (_g, g) = temp("g.geojson", gj);
        let l = read_geojson(&g).unwrap();
        assert_eq!(l.xyz.len(), 2);
        assert!(!l.has_z());
        assert_eq!(l.crs.as_deref(), Some("EPSG:4326"));
    }

    /// Writes `bytes` as `name` and returns the reader's error (all four readers by the
    /// extension: csv polyline, traj.csv trajectory, geojson, osm way 7).
    fn error_of(name: &str, bytes: &[u8]) -> String {
        let dir = roadscan_tests::Scratch::new(&format!("axis-hostile-{name}"));
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        let r = if name.ends_with(".traj.csv") {
            read_trajectory(&p, None, 1.0)
        } else if name.ends_with(".csv") {
            read_polyline_csv(&p)
        } else if name.ends_with(".geojson") {
            read_geojson(&p)
        } else {
            read_osm_way(&p, "7")
        };
        match r {
            Ok(l) => format!("ok {:?} {:?}", l.xyz, l.crs),
            Err(e) => e.to_string(),
        }
    }

    fn expect(name: &str, bytes: &[u8], parts: &[&str]) {
        let e = error_of(name, bytes);
        assert!(e.contains(name) || e.starts_with("ok"), "{e}");
        assert!(parts.iter().all(|p| e.contains(p)), "{name}: {e}");
    }

    #[test]
    fn hostile_text_gives_errors_naming_file_and_place() {
        // Empty files, one vertex, repeated vertices.
        expect("e.csv", b"", &["e.csv:1: 0 vertices; an axis"]);
        expect("e.traj.csv", b"", &["e.traj.csv:1: empty"]);
        expect("e.geojson", b"", &["e.geojson:1: not JSON"]);
        expect("e.osm", b"", &["e.osm:1: no way with id 7"]);
        expect("one.csv", b"1,2\n", &["one.csv:1: 1 vertices; an axis"]);
        expect("same.csv", b"1,2\n1,2,5\n1,2\n", &["same.csv:3: 1 vertices (of 3, repeats left out)"]);
        expect("rep.csv", b"0,0\n0,0\n3,4\n3,4\n", &["ok [[0.0, 0.0, NaN], [3.0, 4.0, NaN]]"]);
        expect("one.traj.csv", b"x,y\n5,5\n5,5\n", &["one.traj.csv:3: 1 rows (of 2, repeats left out)"]);
        let gj = br#"{"type":"LineString","coordinates":[[19,47],[19,47]]}"#;
        expect("same.geojson", gj, &["same.geojson:1: 1 vertices (of 2"]);
        // Non-finite and huge coordinates.
        expect("inf.csv", b"0,0\ninf,1\n", &["inf.csv:2: x 'inf' is not a finite number"]);
        expect("big.csv", b"0,0\n1e308,1\n", &["big.csv:2: x '1e308' is beyond"]);
        expect("big.traj.csv", b"x,y\n0,0\n1,-1e300\n", &["big.traj.csv:3: y '-1e300' is beyond"]);
        expect("nan.geojson", br#"{"type":"LineString","coordinates":[[1,2],[NaN,2]]}"#, &["nan.geojson:1: not JSON"]);
        expect(
            "big.geojson",
            br#"{"type":"LineString","coordinates":[[1,2],[1e308,2]]}"#,
            &["coordinate 1:", "beyond"],
        );
        expect(
            "huge.geojson",
            br#"{"type":"LineString","coordinates":[[1,2],[1e400,2]]}"#,
            &["huge.geojson:1: not JSON"],
        );
        expect(
            "str.geojson",
            br#"{"type":"LineString","coordinates":[[1,2],[3,"4"]]}"#,
            &["coordinate 1: not an array"],
        );
        expect(
            "lat.geojson",
            br#"{"type":"LineString","coordinates":[[1,2],[3,95]]}"#,
            &["coordinate 1: lon 3, lat 95"],
        );
        let osm = |lat: &str| {
            format!(
                r#"<osm><node id="1" lat="1" lon="1"/>{}<node id="2" lat="{lat}" lon="2"/><way id="7"><nd ref="1"/><nd ref="2"/></way></osm>"#,
                "\n"
            )
        };
        expect("nan.osm", osm("NaN").as_bytes(), &["nan.osm:2: lat 'NaN' is not a finite number"]);
        expect("big.osm", osm("1e308").as_bytes(), &["big.osm:2: lat '1e308' is beyond"]);
        expect("ok.osm", osm("1.5").as_bytes(), &["ok [[1.0, 1.0, NaN], [2.0, 1.5, NaN]]"]);
        let missing = "<osm>\n<node id=\"1\" lat=\"1\" lon=\"1\"/>\n<way id=\"7\">\n<nd ref=\"1\"/>\n<nd ref=\"9\"/>\n</way></osm>";
        expect("missing.osm", missing.as_bytes(), &["missing.osm:5: way 7: node 9 is not in the file"]);
        // Not UTF-8: the line and byte.
        expect("latin1.csv", b"x,y\n0,0\n1,\xff2\n", &["latin1.csv:3: byte 10 (column 3): not UTF-8 (0xFF)"]);
        expect("latin1.osm", b"<osm>\n<node id=\"\xe9\"/>", &["latin1.osm:2: byte 16 (column 11): not UTF-8"]);
        expect("bom.csv", b"\xEF\xBB\xBFx,y\n0,0\n1,1\n", &["ok [[0.0, 0.0, NaN], [1.0, 1.0, NaN]]"]);
        // Deep nesting: serde_json's recursion limit; XML nesting costs no stack.
        let deep = "[".repeat(100_000);
        expect("deep.geojson", deep.as_bytes(), &["deep.geojson:1: not JSON: recursion limit exceeded"]);
        let deep = "<a>".repeat(100_000);
        expect("deep.osm", deep.as_bytes(), &["deep.osm:"]);
        // Entities: a document type's are not expanded (billion laughs); an attribute using one
        // is an error at its line.
        let laughs = r#"<?xml version="1.0"?>
<!DOCTYPE osm [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
<!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">]>
<osm><node id="1" lat="&lol3;" lon="1"/></osm>"#;
        expect("laughs.osm", laughs.as_bytes(), &["laughs.osm:4: attribute lat:"]);
        let xxe = "<!DOCTYPE osm [<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n<osm><way id=\"7\"><nd ref=\"&x;\"/></way></osm>";
        expect("xxe.osm", xxe.as_bytes(), &["xxe.osm:2: attribute ref:"]);
        // CRS: a GeoJSON crs member is honoured, or an error when it names no EPSG code.
        let crs = |name: &str| {
            format!(
                r#"{{"type":"LineString","crs":{{"type":"name","properties":{{"name":"{name}"}}}},"coordinates":[[650000,240000],[650010,240000]]}}"#
            )
        };
        expect("c1.geojson", crs("urn:ogc:def:crs:EPSG::23700").as_bytes(), &["ok", "Some(\"EPSG:23700\")"]);
        expect("c2.geojson", crs("EPSG:3857").as_bytes(), &["ok", "Some(\"EPSG:3857\")"]);
        expect("c3.geojson", crs("EPSG:abc").as_bytes(), &["c3.geojson:1: crs", "EPSG:abc"]);
        expect("c4.geojson", crs("urn:ogc:def:crs:OGC:1.3:CRS84").as_bytes(), &["coordinate 0: lon 650000"]);
        // Huge lines: the fields of a line are not all split out (a 20 MB line of numbers).
        let mut long = b"x,y\n0,0\n".to_vec();
        long.extend("1,".repeat(10_000_000).as_bytes());
        expect("long.csv", &long, &["long.csv:3: expected x,y or x,y,z, found more than 3 fields"]);
        let mut long = b"x,y\n0,0\n".to_vec();
        long.extend("1,".repeat(10_000_000).as_bytes());
        expect("long.traj.csv", &long, &["long.traj.csv:3: more than 2 fields, the header names 2"]);
        let mut wide = "c,".repeat(10_000_000).into_bytes();
        wide.extend(b"\n0,0\n");
        expect("wide.traj.csv", &wide, &["wide.traj.csv:1: a header of more than 256 columns"]);
        let mut long = "1".repeat(20_000_000).into_bytes();
        long.extend(b",0\n0,0\n");
        expect(
            "digits.csv",
            &long,
            &["digits.csv:1: x '1111111111111111111111111111111111111111...' is not a finite number"],
        );
    }
}
