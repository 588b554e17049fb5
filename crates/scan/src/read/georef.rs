//! The CRS of a file from its VLRs: the OGC WKT (2112) or the GeoTIFF keys (34735), which
//! one first by the WKT bit and the point format; the EPSG code, linear and vertical units,
//! and the PROJ string, taken from the WKT's top-level elements, the keys, or the built-in
//! EPSG table.

use super::{text, u16_at, Crs};

/// The CRS from the VLRs: WKT first when `prefer_wkt`, else GeoTIFF keys.
pub(super) fn crs_from_vlrs(vlrs: &[(String, u16, Vec<u8>)], prefer_wkt: bool, warnings: &mut Vec<String>) -> Crs {
    let wkt = vlrs.iter().find(|(u, r, _)| u == "LASF_Projection" && *r == 2112).map(|(_, _, d)| text(d)).filter(|w| {
        let ok = w.contains('[');
        if !ok {
            let shown: String = w.chars().take(40).collect();
            warnings.push(format!("the WKT VLR (2112) is empty or not WKT ('{shown}'); ignored"));
        }
        ok
    });
    let geotiff = vlrs.iter().find(|(u, r, _)| u == "LASF_Projection" && *r == 34735).map(|(_, _, d)| geo_keys(d));
    let from_wkt = wkt.as_deref().map(|w| {
        let mut c = parse_wkt(w);
        // What the WKT's projection and parameters say (an EPSG code where it names none).
        match crate::crs::recognise_wkt(w) {
            Ok(r) => {
                c.compound = r.compound;
                if c.epsg.is_none() {
                    c.epsg = r.epsg;
                }
                c.epsg_by = c.epsg.map(|_| r.epsg_by.unwrap_or("authority"));
                c.unit = c.unit.or(r.unit);
                c.proj = r.proj;
                if let Some(n) = r.note {
                    warnings.push(format!("the WKT VLR (2112): {n}; only its EPSG code and unit are used"));
                }
            }
            Err(e) => warnings.push(format!("the WKT VLR (2112): {e}")),
        }
        c
    });
    let mut crs = match (from_wkt, geotiff) {
        (Some(w), g) if prefer_wkt || g.is_none() => Crs { wkt, source: "wkt", ..w },
        (w, Some(g)) => {
            let mut crs = Crs { wkt, source: "geotiff", ..g };
            crs.epsg_by = crs.epsg.map(|_| "geotiff");
            if let Some(w) = w {
                // GeoTIFF keys without a unit: take the WKT's.
                if crs.unit.is_none() {
                    crs.unit = w.unit;
                }
                // A user-defined projection in the keys (no code, as PDAL's autzen_trim.las):
                // what the WKT says of it.
                if crs.epsg.is_none() {
                    (crs.epsg, crs.epsg_by, crs.proj, crs.name) = (w.epsg, w.epsg_by, w.proj, w.name);
                    crs.compound = w.compound;
                    crs.vertical_epsg = crs.vertical_epsg.or(w.vertical_epsg);
                }
            }
            crs
        }
        _ => Crs { source: "none", ..Default::default() },
    };
    // No unit given (a GeoTIFF key 3072 in feet without key 3076): the EPSG code's own.
    if crs.unit.is_none() {
        crs.unit = crs.epsg.and_then(crate::crs::unit_of_epsg);
    }
    // The table's PROJ string and name of the code.
    if let Some(code) = crs.epsg {
        if let Some(p) = u16::try_from(code).ok().and_then(crs_definitions::from_code) {
            crs.proj = Some(p.proj4.trim().to_string());
        }
        if crs.name.is_none() {
            crs.name = crate::CrsDef::wkt_of(code).and_then(|w| quoted(w.split_once('[')?.1));
        }
    }
    crs
}

/// EPSG codes and units from a GeoKeyDirectory (VLR 34735).
fn geo_keys(d: &[u8]) -> Crs {
    let n = u16_at(d, 6) as usize;
    let mut crs = Crs::default();
    let mut geographic = None;
    let mut vertical_datum = None;
    for k in 0..n {
        let at = 8 + 8 * k;
        if at + 8 > d.len() {
            break;
        }
        let (id, location, value) = (u16_at(d, at), u16_at(d, at + 2), u16_at(d, at + 6));
        if location != 0 {
            continue; // a value stored elsewhere (doubles, ASCII): not a code
        }
        match id {
            3072 if value > 0 && value < 32767 => crs.epsg = Some(value as u32),
            2048 if value > 0 && value < 32767 => geographic = Some(value as u32),
            3076 => crs.unit = unit_of_code(value),
            4096 if value > 0 && value < 32767 => crs.vertical_epsg = Some(value as u32),
            4098 if value > 0 && value < 32767 => vertical_datum = Some(value as u32),
            4099 => crs.vertical_unit = unit_of_code(value),
            _ => {}
        }
    }
    if crs.epsg.is_none() {
        crs.epsg = geographic;
    }
    // Some writers swap the vertical CRS (4096) and its datum (4098): 4_6_crop.las of PDAL
    // has 4096 = 5103 (the datum North American Vertical Datum 1988) and 4098 = 5703 (the CRS
    // NAVD88 height). EPSG codes 5100-5199 are vertical datums, never CRSs.
    let is_datum = |c: u32| (5100..=5199).contains(&c);
    if let (Some(v), Some(d)) = (crs.vertical_epsg, vertical_datum) {
        if is_datum(v) && !is_datum(d) {
            crs.vertical_epsg = Some(d);
        }
    }
    crs
}

fn unit_of_code(code: u16) -> Option<f64> {
    match code {
        9001 => Some(1.0),
        9002 => Some(0.3048),
        9003 => Some(1200.0 / 3937.0),
        9036 => Some(1000.0),
        _ => None,
    }
}

/// Name, EPSG code, unit and vertical code of a WKT (1 or 2), from its top-level elements.
fn parse_wkt(w: &str) -> Crs {
    let mut crs = Crs::default();
    // Top-level element and its direct children, by bracket depth.
    let bytes = w.as_bytes();
    let mut depth = 0usize;
    let mut start_of_word = 0usize;
    let mut compound = false;
    let mut in_horizontal = false;
    for (i, &c) in bytes.iter().enumerate() {
        match c {
            b'[' | b'(' => {
                let word = w[start_of_word..i].trim().trim_start_matches(',').trim().to_ascii_uppercase();
                if depth == 0 {
                    compound = word == "COMPD_CS" || word == "COMPOUNDCRS";
                    crs.name = quoted(&w[i + 1..]);
                }
                // In a compound CRS the horizontal CRS is one level down.
                if compound && depth == 1 {
                    in_horizontal = matches!(word.as_str(), "PROJCS" | "PROJCRS" | "GEOGCS" | "GEOGCRS" | "GEODCRS");
                }
                let horizontal_depth = if compound { 2 } else { 1 };
                if depth == horizontal_depth && (!compound || in_horizontal) {
                    match word.as_str() {
                        "UNIT" | "LENGTHUNIT" => {
                            if let Some(f) = unit_factor(&w[i + 1..]) {
                                crs.unit = Some(f);
                            }
                        }
                        "AUTHORITY" | "ID" => {
                            if let Some(code) = epsg_code(&w[i + 1..]) {
                                crs.epsg = Some(code);
                            }
                        }
                        _ => {}
                    }
                }
                if compound && depth == 1 && (word == "VERT_CS" || word == "VERTCRS") {
                    crs.vertical_epsg = last_authority(&w[i + 1..]);
                }
                depth += 1;
                start_of_word = i + 1;
            }
            b']' | b')' => {
                depth = depth.saturating_sub(1);
                start_of_word = i + 1;
            }
            b',' => start_of_word = i + 1,
            _ => {}
        }
    }
    crs
}

fn quoted(s: &str) -> Option<String> {
    let s = s.trim_start();
    let rest = s.strip_prefix('"')?;
    Some(rest[..rest.find('"')?].to_string())
}

/// `"name",factor` -> factor.
fn unit_factor(s: &str) -> Option<f64> {
    let rest = s.trim_start().strip_prefix('"')?;
    let rest = &rest[rest.find('"')? + 1..];
    let rest = rest.trim_start().strip_prefix(',')?;
    let end = rest.find([',', ']', ')']).unwrap_or(rest.len());
    rest[..end].trim().parse().ok().filter(|f: &f64| f.is_finite() && *f > 0.0)
}

/// `"EPSG","1234"` or `"EPSG",1234` -> 1234.
fn epsg_code(s: &str) -> Option<u32> {
    let rest = s.trim_start().strip_prefix("\"EPSG\"")?;
    let rest = rest.trim_start().strip_prefix(',')?.trim_start().trim_start_matches('"');
    let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The EPSG code of the last AUTHORITY/ID at the top of an element's body.
fn last_authority(body: &str) -> Option<u32> {
    let mut depth = 0i32;
    let mut code = None;
    for (i, c) in body.char_indices() {
        match c {
            '[' | '(' => {
                if depth == 0 {
                    let head = body[..i].trim_end();
                    if head.ends_with("AUTHORITY") || head.ends_with("ID") {
                        code = epsg_code(&body[i + 1..]).or(code);
                    }
                }
                depth += 1;
            }
            ']' | ')' => {
                if depth == 0 {
                    break;
                }
                depth -= 1;
            }
            _ => {}
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GeoKeyDirectory VLR of the (key, value) codes.
    fn geo_key_vlr(keys: &[(u16, u16)]) -> (String, u16, Vec<u8>) {
        let mut d: Vec<u8> = [1u16, 1, 0, keys.len() as u16].iter().flat_map(|v| v.to_le_bytes()).collect();
        for &(id, value) in keys {
            d.extend([id, 0, 1, value].iter().flat_map(|v| v.to_le_bytes()));
        }
        ("LASF_Projection".into(), 34735, d)
    }

    #[test]
    fn geotiff_keys_without_a_unit_take_the_epsg_code_s() {
        let mut w = Vec::new();
        // Oregon GIC Lambert (ft) with no key 3076; with 3076 = metre (9001), as said.
        let c = crs_from_vlrs(&[geo_key_vlr(&[(3072, 2994)])], false, &mut w);
        assert_eq!((c.epsg, c.unit, c.source), (Some(2994), Some(0.3048), "geotiff"));
        let c = crs_from_vlrs(&[geo_key_vlr(&[(3072, 2994), (3076, 9001), (4099, 9003)])], false, &mut w);
        assert_eq!((c.unit, c.vertical_unit), (Some(1.0), Some(1200.0 / 3937.0)));
        // A geographic CRS has no linear unit.
        let c = crs_from_vlrs(&[geo_key_vlr(&[(2048, 4326)])], false, &mut w);
        assert_eq!((c.epsg, c.unit), (Some(4326), None));
    }

    #[test]
    fn wkt_names_codes_and_units() {
        let eov = crate::EOV_WKT;
        let c = parse_wkt(eov);
        assert_eq!((c.epsg, c.unit, c.name.as_deref()), (Some(23700), Some(1.0), Some("HD72 / EOV")));
        let ft = r#"PROJCS["NAD83(HARN) / Oregon GIC Lambert (ft)",GEOGCS["NAD83(HARN)",DATUM["NAD83_High_Accuracy_Reference_Network",SPHEROID["GRS 1980",6378137,298.257222101]],UNIT["degree",0.0174532925199433]],PROJECTION["Lambert_Conformal_Conic_2SP"],UNIT["foot",0.3048,AUTHORITY["EPSG","9002"]],AUTHORITY["EPSG","2994"]]"#;
        let c = parse_wkt(ft);
        assert_eq!((c.epsg, c.unit), (Some(2994), Some(0.3048)));
        let compound = r#"COMPD_CS["NAD83 / NM + NAVD88",PROJCS["NAD83(HARN) / New Mexico Central (ftUS)",GEOGCS["x",UNIT["degree",0.01745]],UNIT["US survey foot",0.304800609601219],AUTHORITY["EPSG","2903"]],VERT_CS["NAVD88 height",VERT_DATUM["North American Vertical Datum 1988",2005],UNIT["metre",1],AUTHORITY["EPSG","5703"]]]"#;
        let c = parse_wkt(compound);
        assert_eq!((c.epsg, c.vertical_epsg), (Some(2903), Some(5703)));
        assert!((c.unit.unwrap() - 0.304800609601219).abs() < 1e-15);
    }
}
