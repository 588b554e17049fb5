//! Coordinate reference systems by EPSG code or PROJ string, and horizontal reprojection
//! between them, in pure Rust (proj4rs with its EPSG table).
//!
//! proj4rs does the projection maths exactly (UTM, transverse Mercator, EOV's oblique
//! Mercator, Lambert, stereographic: within 1 mm of PROJ, see `shared/specs/las.md`); datum
//! shifts are only the `+towgs84` parameters of the EPSG table (no grids), and a round trip
//! through a datum shift returns within 0.4 mm (the geocentric inverse iterates to that); heights
//! are not transformed between vertical datums, only converted to metres.

use proj4rs::proj::Proj;

/// A CRS we can transform from or to.
#[derive(Debug)]
pub struct CrsDef {
    /// How it was given ("EPSG:23700" or the PROJ string).
    pub label: String,
    /// Its EPSG code, when given by one.
    pub epsg: Option<u32>,
    proj: Proj,
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
            return Ok(CrsDef { label: s.to_string(), epsg: None, proj });
        }
        Err(format!("CRS '{s}': expected EPSG:NNNN or a PROJ string (+proj=...)"))
    }

    /// The CRS of an EPSG code in proj4rs' table.
    pub fn from_epsg(code: u32) -> Result<CrsDef, String> {
        let def = u16::try_from(code)
            .ok()
            .and_then(crs_definitions::from_code)
            .ok_or_else(|| format!("EPSG:{code} is not in the built-in CRS table"))?;
        let proj = Proj::from_proj_string(def.proj4).map_err(|e| format!("EPSG:{code}: {e}"))?;
        Ok(CrsDef { label: format!("EPSG:{code}"), epsg: Some(code), proj })
    }

    /// OGC WKT of an EPSG code, from the built-in table.
    pub fn wkt_of(code: u32) -> Option<&'static str> {
        u16::try_from(code).ok().and_then(crs_definitions::from_code).map(|d| d.wkt)
    }

    /// Whether coordinates are longitude/latitude (degrees).
    pub fn is_geographic(&self) -> bool {
        self.proj.is_latlong()
    }

    /// Whether both are the same CRS (the same EPSG code or the same PROJ string).
    pub fn same_as(&self, other: &CrsDef) -> bool {
        match (self.epsg, other.epsg) {
            (Some(a), Some(b)) => a == b,
            _ => self.label == other.label,
        }
    }
}

/// Horizontal reprojection from one CRS to another.
#[derive(Debug)]
pub struct Reprojection {
    from: CrsDef,
    to: CrsDef,
}

impl Reprojection {
    /// From `from` to `to`.
    pub fn new(from: CrsDef, to: CrsDef) -> Reprojection {
        Reprojection { from, to }
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
        let (src_geo, dst_geo) = (self.from.is_geographic(), self.to.is_geographic());
        for (i, (x, y)) in x.iter_mut().zip(y.iter_mut()).enumerate() {
            let mut p = if src_geo { (x.to_radians(), y.to_radians(), 0.0) } else { (*x, *y, 0.0) };
            proj4rs::transform::transform(&self.from.proj, &self.to.proj, &mut p)
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
    use super::*;

    #[test]
    fn budapest_in_eov_and_back_through_utm() {
        // PROJ 9.5 (pyproj): lon 19.04, lat 47.50 -> EOV 649439.112, 239562.881.
        let r = Reprojection::new(CrsDef::parse("EPSG:4326").unwrap(), CrsDef::parse("EPSG:23700").unwrap());
        let (mut x, mut y) = ([19.04], [47.50]);
        r.apply(&mut x, &mut y).unwrap();
        assert!((x[0] - 649439.112).abs() < 1e-3 && (y[0] - 239562.881).abs() < 1e-3, "{} {}", x[0], y[0]);
        // EOV -> UTM 34N -> EOV.
        let to = Reprojection::new(CrsDef::from_epsg(23700).unwrap(), CrsDef::from_epsg(32634).unwrap());
        let back = Reprojection::new(CrsDef::from_epsg(32634).unwrap(), CrsDef::from_epsg(23700).unwrap());
        let (mut x, mut y) = (vec![650012.5, 651000.0], vec![239996.0, 241000.0]);
        let (x0, y0) = (x.clone(), y.clone());
        to.apply(&mut x, &mut y).unwrap();
        assert!((x[0] - x0[0]).abs() > 1000.0);
        back.apply(&mut x, &mut y).unwrap();
        // proj4rs' datum shift (geocentric, iterated back to latitude) returns within 0.4 mm.
        for i in 0..2 {
            assert!((x[i] - x0[i]).abs() < 1e-3 && (y[i] - y0[i]).abs() < 1e-3, "{} {}", x[i] - x0[i], y[i] - y0[i]);
        }
        assert!(CrsDef::parse("EPSG:99999").unwrap_err().contains("not in the built-in CRS table"));
        assert!(CrsDef::parse("WGS84").is_err());
    }
}
