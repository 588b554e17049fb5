//! Coordinate reference systems by EPSG code or PROJ string, and horizontal reprojection
//! between them: in pure Rust (proj4rs with its EPSG table) by default, with the C PROJ
//! library under the cargo feature `proj`.
//!
//! proj4rs does the projection maths exactly (UTM, transverse Mercator, EOV's oblique
//! Mercator, Lambert, stereographic: within 1 mm of PROJ, see `shared/specs/las.md`); datum
//! shifts are only the `+towgs84` parameters of the EPSG table (no grids). A round trip EOV ->
//! UTM 34N -> EOV returns within 0.4 mm with either backend (the datum shift is not inverted
//! exactly). Heights are not transformed between vertical datums, only converted to metres.
//!
//! The WKT side lives in submodules: `wkt` parses a WKT text into a small tree,
//! `recognise` reads the horizontal CRS of it as a PROJ string and an EPSG code, and
//! `proj_terms` reads PROJ strings and matches them to the built-in EPSG table.

mod proj_terms;
mod recognise;
mod wkt;

pub(crate) use proj_terms::unit_of_proj;
pub use proj_terms::US_FOOT;
pub use recognise::{recognise_wkt, WktCrs};

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

    /// Its OGC WKT from the built-in table: the entry of its EPSG code, or of the one entry with
    /// its PROJ string's projection, parameters and ellipsoid; None when there is none.
    pub fn wkt(&self) -> Option<&'static str> {
        let code = match self.epsg {
            Some(code) => code,
            None => recognise::epsg_of_proj(&self.label)?,
        };
        CrsDef::wkt_of(code)
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

#[cfg(test)]
mod tests {
    use super::recognise::tests::AUTZEN_WKT;
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
        // Its WKT from the table, by the code or by the PROJ string's parameters.
        assert_eq!(eov.wkt(), CrsDef::wkt_of(23700));
        assert_eq!(again.wkt(), CrsDef::wkt_of(23700));
        assert!(again.wkt().is_some_and(|w| w.contains("EOV")));
        let odd =
            CrsDef::parse("+proj=tmerc +lat_0=1.234 +lon_0=5.678 +k=1 +x_0=7 +y_0=0 +ellps=GRS80 +units=m").unwrap();
        assert_eq!(odd.wkt(), None, "no table entry has these parameters");
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
