//! PROJ strings: their terms, the metres per unit they say, the parameters that decide the
//! coordinates, and the EPSG code of the built-in table's entry with the same projection,
//! parameters, ellipsoid, unit and datum.

/// Metres in a US survey foot.
pub const US_FOOT: f64 = 1200.0 / 3937.0;

/// The terms of a PROJ string as (key, value) ("" for a flag).
pub(super) fn terms(proj: &str) -> Vec<(&str, &str)> {
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
pub(super) fn projection_key(proj: &str) -> Option<(String, Vec<(&'static str, f64)>)> {
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

pub(super) fn same_parameters(a: &[(&'static str, f64)], b: &[(&'static str, f64)]) -> bool {
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
