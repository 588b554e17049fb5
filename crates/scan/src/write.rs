//! LAS 1.4 / LAZ output, point format 6 (GPS time, 16-bit intensity, scan angle, point source
//! id, classification), coordinates in the projected CRS with a 1 mm scale, the CRS as an OGC
//! WKT VLR (and the global-encoding WKT bit). Written to a temporary file and renamed.

use crate::Error;
use std::path::Path;

/// One point to write.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LasPoint {
    /// Map coordinates, m.
    pub x: f64,
    /// m.
    pub y: f64,
    /// m.
    pub z: f64,
    /// GPS time, s (standard GPS time or seconds of the survey).
    pub gps_time: f64,
    /// 0..65535.
    pub intensity: u16,
    /// Scan angle, degrees (LAS 1.4: -180..180 in steps of 0.006).
    pub scan_angle_deg: f32,
    /// Point source id (the pass).
    pub source: u16,
    /// ASPRS class code.
    pub class: u8,
}

/// How to write.
#[derive(Debug, Clone)]
pub struct LasOptions {
    /// OGC WKT of the CRS.
    pub wkt: String,
    /// Offsets of the integer coordinates (a round number near the data), m.
    pub offset: [f64; 3],
    /// Scale of the integer coordinates, m (0.001 = 1 mm).
    pub scale: f64,
    /// System identifier in the header.
    pub system: String,
}

/// Writes `points` to `path` (LAZ when the extension is `.laz`).
pub fn write_las(path: &Path, points: &[LasPoint], options: &LasOptions) -> Result<(), Error> {
    let io = |message: String| Error::Io { path: path.to_path_buf(), message };
    let compress = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("laz"));
    let mut builder = las::Builder::from((1, 4));
    builder.point_format = las::point::Format::new(6).map_err(|e| io(e.to_string()))?;
    builder.point_format.is_compressed = compress;
    builder.generating_software = "roadscan".into();
    builder.system_identifier = options.system.chars().take(32).collect();
    builder.has_wkt_crs = true;
    builder.gps_time_type = las::GpsTimeType::Standard;
    let t = |o: f64| las::Transform { scale: options.scale, offset: o };
    builder.transforms = las::Vector { x: t(options.offset[0]), y: t(options.offset[1]), z: t(options.offset[2]) };
    let mut wkt = options.wkt.clone().into_bytes();
    wkt.push(0);
    builder.vlrs.push(las::Vlr {
        user_id: "LASF_Projection".into(),
        record_id: 2112,
        description: "OGC WKT coordinate system".into(),
        data: wkt,
    });
    let header = builder.into_header().map_err(|e| io(e.to_string()))?;
    // Check every point first: the las writer cannot be dropped cleanly after a failed point.
    for (index, p) in points.iter().enumerate() {
        let fits = |v: f64, o: f64| {
            let n = ((v - o) / options.scale).round();
            n.is_finite() && n >= i32::MIN as f64 && n <= i32::MAX as f64
        };
        let ok = fits(p.x, options.offset[0])
            && fits(p.y, options.offset[1])
            && fits(p.z, options.offset[2])
            && p.gps_time.is_finite();
        if !ok {
            return Err(Error::Point {
                path: path.to_path_buf(),
                index,
                message: format!(
                    "({}, {}, {}) at GPS time {} cannot be stored with scale {} and offset {:?}",
                    p.x, p.y, p.z, p.gps_time, options.scale, options.offset
                ),
            });
        }
    }
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp{}", std::process::id()));
    let result = (|| -> Result<(), Error> {
        let file = std::fs::File::create(&tmp).map_err(|e| io(e.to_string()))?;
        let mut writer = las::Writer::new(std::io::BufWriter::new(file), header).map_err(|e| io(e.to_string()))?;
        for (index, p) in points.iter().enumerate() {
            let point = las::Point {
                x: p.x,
                y: p.y,
                z: p.z,
                intensity: p.intensity,
                return_number: 1,
                number_of_returns: 1,
                classification: las::point::Classification::new(p.class).map_err(|e| Error::Point {
                    path: path.to_path_buf(),
                    index,
                    message: e.to_string(),
                })?,
                scan_angle: p.scan_angle_deg,
                point_source_id: p.source,
                gps_time: Some(p.gps_time),
                ..Default::default()
            };
            if let Err(e) = writer.write_point(point) {
                // Dropping a writer after a failure panics inside the las crate: forget it.
                std::mem::forget(writer);
                return Err(Error::Point { path: path.to_path_buf(), index, message: e.to_string() });
            }
        }
        writer.close().map_err(|e| io(e.to_string()))?;
        drop(writer);
        std::fs::rename(&tmp, path).map_err(|e| io(e.to_string()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}
