//! LAS 1.4 / LAZ output, point format 6 (GPS time, 16-bit intensity, scan angle, point source
//! id, classification), coordinates in the projected CRS with a 1 mm scale, the CRS as an OGC
//! WKT VLR (and the global-encoding WKT bit). Written to a temporary file beside the target
//! ([`atomic::TempFile`]), synced and renamed.

use crate::Error;
use std::path::{Path, PathBuf};

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
    let mut w = LasWriter::create(path, options)?;
    w.write(points)?;
    w.finish()
}

/// A LAS/LAZ file being written in chunks: the points go to a temporary file beside `path`
/// ([`atomic::TempFile`]), which [`LasWriter::finish`] completes (header counts and bounds),
/// syncs and renames; dropped unfinished, it removes the temporary file, so `path` is never
/// half written.
pub struct LasWriter {
    path: PathBuf,
    /// The temporary file; the las writer writes through a handle of its own on it.
    tmp: Option<atomic::TempFile>,
    options: LasOptions,
    writer: Option<las::Writer<std::io::BufWriter<std::fs::File>>>,
    written: usize,
}

impl LasWriter {
    /// Starts writing `path` (LAZ when the extension is `.laz`).
    pub fn create(path: &Path, options: &LasOptions) -> Result<LasWriter, Error> {
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
        // The las writer owns a second handle on the temporary file, so the `TempFile` stays here
        // to commit the file, or to remove it whatever became of the las writer (on an error
        // below, or when it is forgotten after a failure).
        let tmp = atomic::TempFile::beside(path).map_err(|e| io(e.to_string()))?;
        let file = tmp.file().try_clone().map_err(|e| io(e.to_string()))?;
        let writer = las::Writer::new(std::io::BufWriter::new(file), header).map_err(|e| io(e.to_string()))?;
        Ok(LasWriter {
            path: path.to_path_buf(),
            tmp: Some(tmp),
            options: options.clone(),
            writer: Some(writer),
            written: 0,
        })
    }

    /// Appends `points`. Every point is checked before any is written: a point that cannot be
    /// stored is an error naming its index in the file, and nothing of the chunk is written.
    pub fn write(&mut self, points: &[LasPoint]) -> Result<(), Error> {
        let o = &self.options;
        for (i, p) in points.iter().enumerate() {
            let fits = |v: f64, off: f64| {
                let n = ((v - off) / o.scale).round();
                n.is_finite() && n >= i32::MIN as f64 && n <= i32::MAX as f64
            };
            let ok = fits(p.x, o.offset[0])
                && fits(p.y, o.offset[1])
                && fits(p.z, o.offset[2])
                && p.gps_time.is_finite()
                && p.class < 128;
            if !ok {
                return Err(Error::Point {
                    path: self.path.clone(),
                    index: self.written + i,
                    message: format!(
                        "({}, {}, {}) class {} at GPS time {} cannot be stored with scale {} and offset {:?}",
                        p.x, p.y, p.z, p.class, p.gps_time, o.scale, o.offset
                    ),
                });
            }
        }
        let Some(writer) = self.writer.as_mut() else {
            return Err(Error::Io { path: self.path.clone(), message: "written after a failure".into() });
        };
        for (i, p) in points.iter().enumerate() {
            let point = las::Point {
                x: p.x,
                y: p.y,
                z: p.z,
                intensity: p.intensity,
                return_number: 1,
                number_of_returns: 1,
                // Checked above: below 128 is a valid class.
                classification: las::point::Classification::new(p.class).unwrap_or_default(),
                scan_angle: p.scan_angle_deg,
                point_source_id: p.source,
                gps_time: Some(p.gps_time),
                ..Default::default()
            };
            if let Err(e) = writer.write_point(point) {
                // Dropping a las writer after a failure panics inside the las crate: forget it.
                if let Some(w) = self.writer.take() {
                    std::mem::forget(w);
                }
                return Err(Error::Point { path: self.path.clone(), index: self.written + i, message: e.to_string() });
            }
        }
        self.written += points.len();
        Ok(())
    }

    /// Points written so far.
    pub fn len(&self) -> usize {
        self.written
    }

    /// Whether no point has been written.
    pub fn is_empty(&self) -> bool {
        self.written == 0
    }

    /// Completes the file (header counts and bounds), syncs it and moves it to its path.
    pub fn finish(mut self) -> Result<(), Error> {
        let io = |path: &Path, e: String| Error::Io { path: path.to_path_buf(), message: e };
        let (Some(mut writer), Some(tmp)) = (self.writer.take(), self.tmp.take()) else {
            return Err(io(&self.path, "written after a failure".into()));
        };
        if let Err(e) = writer.close() {
            std::mem::forget(writer);
            return Err(io(&self.path, e.to_string()));
        }
        // Closed: taking the stream back neither closes again nor panics; its buffer is flushed
        // here, where an error is seen (a drop would ignore it).
        let stream = writer.into_inner().map_err(|e| io(&self.path, e.to_string()))?;
        drop(stream.into_inner().map_err(|e| io(&self.path, e.error().to_string()))?);
        tmp.commit().map_err(|e| io(&self.path, e.to_string()))
    }
}

impl std::fmt::Debug for LasWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LasWriter").field("path", &self.path).field("written", &self.written).finish_non_exhaustive()
    }
}

impl Drop for LasWriter {
    fn drop(&mut self) {
        if let Some(w) = self.writer.take() {
            // Unfinished: the las writer would complete the header on drop and panic if that
            // fails (a full disk); forget it instead (one writer's buffers and file handle
            // leak). The temporary file is removed when `tmp` drops.
            std::mem::forget(w);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn options() -> LasOptions {
        LasOptions { wkt: crate::EOV_WKT.into(), offset: [650_000.0, 240_000.0, 0.0], scale: 0.001, system: "t".into() }
    }

    fn points(n: usize) -> Vec<LasPoint> {
        (0..n)
            .map(|i| LasPoint {
                x: 650_000.0 + i as f64 * 0.01,
                y: 240_000.0,
                z: 100.0,
                gps_time: 3.0e8 + i as f64,
                intensity: 7,
                scan_angle_deg: 0.0,
                source: 1,
                class: 11,
            })
            .collect()
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<String> =
            std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        n.sort();
        n
    }

    #[test]
    fn the_temporary_is_marked_and_any_failure_leaves_nothing_behind() {
        let d = std::env::temp_dir().join(format!("scan-las-writer-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        for name in ["a.las", "a.laz"] {
            // While writing: only the marked temporary beside the target.
            let path = d.join(name);
            let mut w = LasWriter::create(&path, &options()).unwrap();
            w.write(&points(100)).unwrap();
            assert_eq!(names(&d), [format!(".{name}{}{}", atomic::TMP_MARK, std::process::id())]);
            w.finish().unwrap();
            assert_eq!(names(&d), [name]);
            let mut r = las::Reader::from_path(&path).unwrap();
            assert_eq!(r.header().number_of_points(), 100);
            assert_eq!(r.points().count(), 100);
            std::fs::remove_file(&path).unwrap();
            // The rename onto a directory that holds something fails: an error naming the
            // target, and the temporary is gone.
            std::fs::create_dir(&path).unwrap();
            std::fs::write(path.join("x"), "x").unwrap();
            let mut w = LasWriter::create(&path, &options()).unwrap();
            w.write(&points(10)).unwrap();
            let e = w.finish().unwrap_err();
            assert!(matches!(&e, Error::Io { path: p, .. } if *p == path), "{e}");
            assert_eq!(names(&d), [name]);
            std::fs::remove_dir_all(&path).unwrap();
        }
        // A directory that does not exist: an error naming the file.
        let missing = d.join("no").join("b.las");
        let e = LasWriter::create(&missing, &options()).unwrap_err();
        assert!(matches!(&e, Error::Io { path: p, .. } if *p == missing), "{e}");
        assert!(names(&d).is_empty());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
