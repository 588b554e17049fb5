//! What a WKT text says of its horizontal CRS: its name, EPSG code (from its authority, or
//! matched to the built-in table by its projection and parameters), linear unit, and a PROJ
//! string built from its projection method, parameters and datum.

use super::proj_terms::{projection_key, same_parameters, terms, US_FOOT};
use super::wkt::{horizontal, Node};
use proj4rs::proj::Proj;

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

/// The codes the built-in table has (projected and geographic) lie below this.
const TABLE_CODES: std::ops::RangeInclusive<u16> = 1024..=32766;

/// The EPSG code of the built-in table's one entry with the projection, parameters, ellipsoid,
/// unit and (where several have those) TOWGS84 of a PROJ string.
pub(crate) fn epsg_of_proj(proj: &str) -> Option<u32> {
    match_epsg(proj, None, None)
}

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
pub(super) mod tests {
    use super::*;
    use crate::{CrsDef, Reprojection};

    /// The WKT of PDAL's autzen_trim.las: no AUTHORITY of the CRS, ESRI names, feet.
    pub(in crate::crs) const AUTZEN_WKT: &str = r#"PROJCS["NAD_1983_HARN_Lambert_Conformal_Conic",GEOGCS["GCS_North_American_1983_HARN",DATUM["NAD83_High_Accuracy_Regional_Network",SPHEROID["GRS_1980",6378137,298.257222101,AUTHORITY["EPSG","7019"]],AUTHORITY["EPSG","6152"]],PRIMEM["Greenwich",0],UNIT["degree",0.0174532925199433]],PROJECTION["Lambert_Conformal_Conic_2SP"],PARAMETER["standard_parallel_1",43],PARAMETER["standard_parallel_2",45.5],PARAMETER["latitude_of_origin",41.75],PARAMETER["central_meridian",-120.5],PARAMETER["false_easting",1312335.958005249],PARAMETER["false_northing",0],UNIT["foot",0.3048,AUTHORITY["EPSG","9002"]]]"#;

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
}
