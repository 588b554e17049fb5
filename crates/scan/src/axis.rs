//! Where a road's axis comes from: a polyline (CSV `x,y[,z]`, GeoJSON LineString), a vehicle
//! trajectory (CSV with a header; one pass, shifted sideways to the road centre) or an
//! OpenStreetMap way (XML, lon/lat). Vertices come out in order, in the file's CRS; the caller
//! reprojects.

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

fn read_text(path: &Path) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|e| Error::Io { path: path.to_path_buf(), message: e.to_string() })
}

/// Splits a CSV line on commas, semicolons, tabs or spaces.
fn fields(line: &str) -> Vec<&str> {
    line.split([',', ';', '\t', ' ']).map(str::trim).filter(|f| !f.is_empty()).collect()
}

fn number(path: &Path, line: usize, field: &str, what: &str) -> Result<f64, Error> {
    match field.parse::<f64>() {
        Ok(v) if v.is_finite() => Ok(v),
        _ => Err(text_err(path, line, format!("{what} '{field}' is not a finite number"))),
    }
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
        let f = fields(line);
        // A first line that is not numbers is a header.
        if xyz.is_empty() && width.is_none() && f.first().is_some_and(|v| v.parse::<f64>().is_err()) {
            width = Some(0);
            continue;
        }
        if f.len() < 2 || f.len() > 3 {
            return Err(text_err(path, n, format!("expected x,y or x,y,z, found {} fields", f.len())));
        }
        let z = if f.len() == 3 { number(path, n, f[2], "z")? } else { f64::NAN };
        xyz.push([number(path, n, f[0], "x")?, number(path, n, f[1], "y")?, z]);
    }
    if xyz.len() < 2 {
        return Err(text_err(path, text.lines().count(), format!("{} vertices; an axis needs at least 2", xyz.len())));
    }
    Ok(Polyline { xyz, crs: None })
}

/// A GeoJSON LineString: the geometry itself, a Feature, or the first LineString of a
/// FeatureCollection. Coordinates are lon/lat (RFC 7946), so the CRS is EPSG:4326.
pub fn read_geojson(path: &Path) -> Result<Polyline, Error> {
    let text = read_text(path)?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| text_err(path, e.line(), format!("not JSON: {e}")))?;
    fn line_string(v: &serde_json::Value) -> Option<&Vec<serde_json::Value>> {
        match v.get("type")?.as_str()? {
            "LineString" => v.get("coordinates")?.as_array(),
            "Feature" => line_string(v.get("geometry")?),
            "FeatureCollection" => v.get("features")?.as_array()?.iter().find_map(line_string),
            _ => None,
        }
    }
    let coords =
        line_string(&v).ok_or_else(|| text_err(path, 1, "no LineString (a geometry, Feature or FeatureCollection)"))?;
    let mut xyz = Vec::with_capacity(coords.len());
    for (i, c) in coords.iter().enumerate() {
        let p: Option<Vec<f64>> = c.as_array().map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect());
        match p.as_deref() {
            Some([x, y]) if x.is_finite() && y.is_finite() => xyz.push([*x, *y, f64::NAN]),
            Some([x, y, z, ..]) if x.is_finite() && y.is_finite() && z.is_finite() => xyz.push([*x, *y, *z]),
            _ => return Err(text_err(path, 1, format!("coordinate {i} is not [lon, lat] or [lon, lat, z]"))),
        }
    }
    if xyz.len() < 2 {
        return Err(text_err(path, 1, format!("{} vertices; an axis needs at least 2", xyz.len())));
    }
    Ok(Polyline { xyz, crs: Some("EPSG:4326".into()) })
}

/// A vehicle trajectory: a CSV whose header names the columns `x` (or `easting`), `y` (or
/// `northing`), optionally `z` (`height`, `alt`) and `pass`. Rows of one pass (`pass`, default
/// the first row's) in file order, each moved `offset` metres to the left of the direction of
/// travel (taken over ±`window` m of track), so a drive in a lane gives the road's centre.
pub fn read_trajectory(path: &Path, pass: Option<&str>, offset: f64) -> Result<Polyline, Error> {
    let text = read_text(path)?;
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty() && !l.trim().starts_with('#'));
    let (hn, header) = lines.next().ok_or_else(|| text_err(path, 1, "empty: expected a header line"))?;
    let names: Vec<String> = fields(header).iter().map(|f| f.to_ascii_lowercase()).collect();
    let col = |keys: &[&str]| names.iter().position(|n| keys.contains(&n.as_str()));
    let (Some(cx), Some(cy)) = (col(&["x", "easting", "e"]), col(&["y", "northing", "n"])) else {
        return Err(text_err(path, hn + 1, "header must name columns x and y (or easting and northing)"));
    };
    let cz = col(&["z", "height", "alt", "altitude", "h"]);
    let cp = col(&["pass", "pass_id", "line", "source"]);
    let mut xyz = Vec::new();
    let mut wanted: Option<String> = pass.map(str::to_string);
    for (i, line) in lines {
        let n = i + 1;
        let f = fields(line);
        if f.len() != names.len() {
            return Err(text_err(path, n, format!("{} fields, the header names {}", f.len(), names.len())));
        }
        if let Some(cp) = cp {
            let id = wanted.get_or_insert_with(|| f[cp].to_string());
            if f[cp] != id.as_str() {
                continue;
            }
        }
        let z = cz.map_or(Ok(f64::NAN), |c| number(path, n, f[c], "z"))?;
        xyz.push([number(path, n, f[cx], "x")?, number(path, n, f[cy], "y")?, z]);
    }
    if xyz.len() < 2 {
        let which = wanted.map_or(String::new(), |p| format!(" of pass {p}"));
        return Err(text_err(
            path,
            text.lines().count(),
            format!("{} rows{which}; an axis needs at least 2", xyz.len()),
        ));
    }
    if offset != 0.0 {
        shift_left(&mut xyz, offset, 1.0);
    }
    Ok(Polyline { xyz, crs: None })
}

/// Moves each vertex `offset` to the left of the direction of travel there (the chord over
/// ±`window` m of track).
fn shift_left(xyz: &mut [[f64; 3]], offset: f64, window: f64) {
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

/// An OpenStreetMap way from an OSM XML file: its nodes' lon/lat in order (EPSG:4326).
pub fn read_osm_way(path: &Path, way: &str) -> Result<Polyline, Error> {
    use quick_xml::events::Event;
    let text = read_text(path)?;
    let line_at =
        |byte: u64| text.as_bytes()[..(byte as usize).min(text.len())].iter().filter(|&&c| c == b'\n').count() + 1;
    let mut reader = quick_xml::Reader::from_str(&text);
    let mut nodes: HashMap<String, [f64; 2]> = HashMap::new();
    let mut refs: Option<Vec<String>> = None;
    let mut in_way = false;
    loop {
        let pos = reader.buffer_position();
        let ev = reader.read_event().map_err(|e| text_err(path, line_at(pos), format!("not XML: {e}")))?;
        let attr = |e: &quick_xml::events::BytesStart, key: &[u8]| -> Option<String> {
            e.attributes()
                .flatten()
                .find(|a| a.key.as_ref() == key)
                .and_then(|a| a.unescape_value().ok())
                .map(|v| v.into_owned())
        };
        match ev {
            Event::Start(e) | Event::Empty(e) => match e.name().as_ref() {
                b"node" => {
                    let (Some(id), Some(lat), Some(lon)) = (attr(&e, b"id"), attr(&e, b"lat"), attr(&e, b"lon")) else {
                        return Err(text_err(path, line_at(pos), "<node> without id, lat and lon"));
                    };
                    let n = line_at(pos);
                    let (lat, lon) = (number(path, n, &lat, "lat")?, number(path, n, &lon, "lon")?);
                    if lat.abs() > 90.0 || lon.abs() > 180.0 {
                        return Err(text_err(path, n, format!("node {id}: lat {lat}, lon {lon} out of range")));
                    }
                    nodes.insert(id, [lon, lat]);
                }
                b"way" => {
                    in_way = attr(&e, b"id").as_deref() == Some(way);
                    if in_way {
                        refs = Some(Vec::new());
                    }
                }
                b"nd" if in_way => {
                    let r = attr(&e, b"ref").ok_or_else(|| text_err(path, line_at(pos), "<nd> without ref"))?;
                    refs.get_or_insert_with(Vec::new).push(r);
                }
                _ => {}
            },
            Event::End(e) if e.name().as_ref() == b"way" => in_way = false,
            Event::Eof => break,
            _ => {}
        }
    }
    let refs = refs.ok_or_else(|| text_err(path, line_at(text.len() as u64), format!("no way with id {way}")))?;
    let mut xyz = Vec::with_capacity(refs.len());
    for r in &refs {
        let p = nodes.get(r).ok_or_else(|| text_err(path, 1, format!("way {way}: node {r} is not in the file")))?;
        xyz.push([p[0], p[1], f64::NAN]);
    }
    if xyz.len() < 2 {
        return Err(text_err(path, 1, format!("way {way} has {} nodes; an axis needs at least 2", xyz.len())));
    }
    Ok(Polyline { xyz, crs: Some("EPSG:4326".into()) })
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
}
