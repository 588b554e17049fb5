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

/// The type of an extra-bytes field: the `data_type` of LAS 1.4 R15, table 24 (scalars only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExtraType {
    /// `unsigned char`.
    U8,
    /// `char`.
    I8,
    /// `unsigned short`.
    U16,
    /// `short`.
    I16,
    /// `unsigned long`.
    U32,
    /// `long`.
    I32,
    /// `unsigned long long`.
    U64,
    /// `long long`.
    I64,
    /// `float`.
    F32,
    /// `double`.
    F64,
}

impl ExtraType {
    /// The `data_type` code (1 = unsigned char ... 10 = double).
    pub fn code(self) -> u8 {
        match self {
            ExtraType::U8 => 1,
            ExtraType::I8 => 2,
            ExtraType::U16 => 3,
            ExtraType::I16 => 4,
            ExtraType::U32 => 5,
            ExtraType::I32 => 6,
            ExtraType::U64 => 7,
            ExtraType::I64 => 8,
            ExtraType::F32 => 9,
            ExtraType::F64 => 10,
        }
    }
    /// Bytes a value takes in a point record.
    pub fn size(self) -> usize {
        match self {
            ExtraType::U8 | ExtraType::I8 => 1,
            ExtraType::U16 | ExtraType::I16 => 2,
            ExtraType::U32 | ExtraType::I32 | ExtraType::F32 => 4,
            ExtraType::U64 | ExtraType::I64 | ExtraType::F64 => 8,
        }
    }
}

/// One extra-bytes field of every point record, described in the Extra Bytes VLR (user id
/// `LASF_Spec`, record id 4). Fields follow the point format's own bytes in the order given,
/// little-endian.
#[derive(Debug, Clone, PartialEq)]
pub struct ExtraField {
    /// Its name (ASCII, 1 to 32 bytes), as readers show it (laspy's dimension name).
    pub name: String,
    /// Its type.
    pub data_type: ExtraType,
    /// What it holds (ASCII, up to 32 bytes).
    pub description: String,
    /// The value is the stored number times this scale (options bit 3); None: stored as is.
    pub scale: Option<f64>,
}

impl ExtraField {
    /// The 192-byte descriptor of LAS 1.4 R15's Extra Bytes VLR: `reserved[2]`, `data_type`,
    /// `options`, `name[32]`, `unused[4]`, `no_data` (8 + 16 deprecated), `min` (8 + 16),
    /// `max` (8 + 16), `scale` (8 + 16), `offset` (8 + 16), `description[32]`. Only the scale is set
    /// (options bit 3); unused fields are zero, as the standard asks.
    pub fn descriptor(&self) -> [u8; 192] {
        let mut d = [0u8; 192];
        d[2] = self.data_type.code();
        let name = self.name.as_bytes();
        d[4..4 + name.len().min(32)].copy_from_slice(&name[..name.len().min(32)]);
        if let Some(scale) = self.scale {
            d[3] |= 1 << 3;
            // no_data at 40, min at 64, max at 88, scale at 112, offset at 136 (each 8 + 16).
            d[112..120].copy_from_slice(&scale.to_le_bytes());
        }
        let text = self.description.as_bytes();
        d[160..160 + text.len().min(32)].copy_from_slice(&text[..text.len().min(32)]);
        d
    }
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
    /// Extra bytes per point record.
    extra: usize,
}

impl LasWriter {
    /// Starts writing `path` (LAZ when the extension is `.laz`).
    pub fn create(path: &Path, options: &LasOptions) -> Result<LasWriter, Error> {
        LasWriter::with_extra_bytes(path, options, &[])
    }

    /// Starts writing `path` with `extra` fields after each point's format-6 bytes, described
    /// in an Extra Bytes VLR; [`LasWriter::write_extra`] then takes their bytes. Without
    /// fields it is [`LasWriter::create`], byte for byte.
    pub fn with_extra_bytes(path: &Path, options: &LasOptions, extra: &[ExtraField]) -> Result<LasWriter, Error> {
        let io = |message: String| Error::Io { path: path.to_path_buf(), message };
        for f in extra {
            let ascii = |s: &str, max: usize| s.is_ascii() && s.len() <= max && !s.contains('\0');
            if f.name.is_empty() || !ascii(&f.name, 32) || !ascii(&f.description, 32) {
                return Err(io(format!(
                    "extra bytes field '{}' ({}): name and description must be ASCII of up to 32 bytes, the name not empty",
                    f.name, f.description
                )));
            }
            if extra.iter().filter(|g| g.name == f.name).count() > 1 {
                return Err(io(format!("extra bytes field '{}' named twice", f.name)));
            }
        }
        let record_extra: usize = extra.iter().map(|f| f.data_type.size()).sum();
        // A VLR's data is at most 65,535 bytes: 341 descriptors.
        if extra.len() > 341 {
            return Err(io(format!("{} extra bytes fields: at most 341 fit in the VLR", extra.len())));
        }
        let compress = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("laz"));
        let mut builder = las::Builder::from((1, 4));
        builder.point_format = las::point::Format::new(6).map_err(|e| io(e.to_string()))?;
        builder.point_format.is_compressed = compress;
        // At most 341 fields of at most 8 bytes: fits.
        builder.point_format.extra_bytes = record_extra as u16;
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
        if !extra.is_empty() {
            builder.vlrs.push(las::Vlr {
                user_id: "LASF_Spec".into(),
                record_id: 4,
                description: "Extra Bytes".into(),
                data: extra.iter().flat_map(|f| f.descriptor()).collect(),
            });
        }
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
            extra: record_extra,
        })
    }

    /// Appends `points`. Every point is checked before any is written: a point that cannot be
    /// stored is an error naming its index in the file, and nothing of the chunk is written.
    /// A writer with extra bytes takes its points through [`LasWriter::write_extra`].
    pub fn write(&mut self, points: &[LasPoint]) -> Result<(), Error> {
        self.write_extra(points, &[])
    }

    /// Appends `points` with their extra bytes: `extra` holds each point's fields in the
    /// order of [`LasWriter::with_extra_bytes`], little-endian, point after point (its length
    /// is the points' count times the fields' bytes, else an error and nothing is written).
    pub fn write_extra(&mut self, points: &[LasPoint], extra: &[u8]) -> Result<(), Error> {
        if extra.len() != points.len() * self.extra {
            return Err(Error::Point {
                path: self.path.clone(),
                index: self.written,
                message: format!(
                    "{} bytes of extra fields for {} points of {} extra bytes each",
                    extra.len(),
                    points.len(),
                    self.extra
                ),
            });
        }
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
                extra_bytes: extra[i * self.extra..(i + 1) * self.extra].to_vec(),
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
    fn extra_bytes_are_described_and_stored_after_each_record() {
        let d = std::env::temp_dir().join(format!("scan-las-extra-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        let fields = [
            ExtraField { name: "ring".into(), data_type: ExtraType::U8, description: "ring".into(), scale: None },
            ExtraField {
                name: "azimuth".into(),
                data_type: ExtraType::U16,
                description: "0.01 deg".into(),
                scale: Some(0.01),
            },
            ExtraField { name: "range".into(), data_type: ExtraType::F32, description: "m".into(), scale: None },
        ];
        let record = 1 + 2 + 4;
        for name in ["e.las", "e.laz"] {
            let path = d.join(name);
            let pts = points(50);
            let extra: Vec<u8> = (0..50u16)
                .flat_map(|i| {
                    let mut b = vec![i as u8];
                    b.extend_from_slice(&(i * 700).to_le_bytes());
                    b.extend_from_slice(&(i as f32 * 0.5).to_le_bytes());
                    b
                })
                .collect();
            let mut w = LasWriter::with_extra_bytes(&path, &options(), &fields).unwrap();
            // The wrong number of extra bytes, or none at all: an error, nothing written.
            assert!(w.write_extra(&pts, &extra[..extra.len() - 1]).is_err());
            assert!(w.write(&pts).is_err());
            assert_eq!(w.len(), 0);
            w.write_extra(&pts, &extra).unwrap();
            w.finish().unwrap();
            let mut r = las::Reader::from_path(&path).unwrap();
            let h = r.header().clone();
            assert_eq!(h.point_format().extra_bytes as usize, record);
            assert_eq!(h.point_format().len() as usize, 30 + record);
            let vlr = h.all_vlrs().find(|v| v.user_id == "LASF_Spec" && v.record_id == 4).unwrap();
            assert_eq!(vlr.data.len(), 3 * 192);
            let az = &vlr.data[192..384];
            assert_eq!((az[0], az[1], az[2], az[3]), (0, 0, 3, 8), "reserved, data_type 3, options: scale");
            assert_eq!(&az[4..12], b"azimuth\0");
            assert_eq!(f64::from_le_bytes(az[112..120].try_into().unwrap()), 0.01);
            assert!(az[40..112].iter().chain(&az[120..160]).all(|&b| b == 0), "no_data, min, max, offset unset");
            assert_eq!(&az[160..169], b"0.01 deg\0");
            assert_eq!(vlr.data[2], 1);
            assert_eq!(vlr.data[384 + 2], 9);
            let back: Vec<las::Point> = r.points().map(|p| p.unwrap()).collect();
            assert_eq!(back.len(), 50);
            for (i, p) in back.iter().enumerate() {
                assert_eq!(p.extra_bytes, extra[i * record..(i + 1) * record], "point {i}");
            }
        }
        // A name longer than 32 bytes, or twice the same name: refused before any file exists.
        let long = ExtraField { name: "x".repeat(33), ..fields[0].clone() };
        assert!(LasWriter::with_extra_bytes(&d.join("f.las"), &options(), &[long]).is_err());
        assert!(
            LasWriter::with_extra_bytes(&d.join("f.las"), &options(), &[fields[0].clone(), fields[0].clone()]).is_err()
        );
        assert!(!d.join("f.las").exists());
        std::fs::remove_dir_all(&d).unwrap();
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
