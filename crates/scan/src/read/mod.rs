//! Streaming LAS 1.0-1.4 / LAZ reader: point formats 0-10, points in column chunks.
//!
//! The header and the VLRs are parsed here, bounded by the file and by the offset to the point
//! data, so the pitfalls of real files (see `shared/specs/las.md`) give a warning or an error
//! naming the file and the byte, never a panic or an allocation the file cannot back:
//! - the record length may exceed the format's size (extra bytes are skipped); smaller is an
//!   error;
//! - LAS 1.4 takes the 64-bit point count, older files the legacy one; a count larger than the
//!   data present is cut to the complete records with a warning (as laspy reads them);
//! - the points are read from the offset to the point data, whatever lies between the VLRs and
//!   there;
//! - a VLR count larger than what fits before the points stops at the last whole VLR, with a
//!   warning;
//! - the CRS comes from the WKT VLR (2112) when the WKT bit is set or the format is 6-10, else
//!   from the GeoTIFF keys (projected before geographic), with the linear unit (metre, foot, US
//!   survey foot) and a vertical CRS when given;
//! - the GPS time type (week seconds or adjusted standard time) is reported;
//! - waveform formats (4, 5, 9, 10): the points are read, the wave packets ignored; a packet
//!   start (header) or a point's packet outside the file is a problem `summarize` reports, as
//!   are EVLRs (start, count, lengths) the file cannot hold and points by return that do not
//!   sum to the point count or differ from the points' return numbers.
//!
//! LAZ is decoded by the `laz` crate, chunks in parallel. The laszip VLR, the chunk table
//! (its offset, count and entries) and the layer sizes of every layered chunk are checked
//! against the file first, so no count the crate allocates by exceeds what the file backs; a
//! chunk holding more than 64 MiB of records is decoded sequentially (the parallel decoder holds
//! a chunk's rest).
//!
//! The reader's parts: `open` parses and checks the header, the VLRs and what follows the
//! points; `laz` checks the laszip VLR and chunk table and builds the LAZ decoder; `decode`
//! serves the points in column chunks; `georef` finds the CRS in the VLRs; `summary` makes
//! one pass over a file for `roadscan info`.

use std::path::{Path, PathBuf};

mod decode;
mod georef;
mod laz;
mod open;
mod summary;

use laz::Laz;
pub use summary::{summarize, Density, IntensityStats, Summary, DENSITY_CELLS};

/// Where the coordinate reference system of a file comes from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Crs {
    /// OGC WKT (VLR 2112), when present and not empty.
    pub wkt: Option<String>,
    /// EPSG code of the horizontal CRS (from the WKT's authority or the GeoTIFF keys).
    pub epsg: Option<u32>,
    /// EPSG code of a vertical CRS (GeoTIFF key 4096 or a compound WKT), as the file gives it.
    pub vertical_epsg: Option<u32>,
    /// Metres per unit of z, when the file says (GeoTIFF key 4099); else take `unit`.
    pub vertical_unit: Option<f64>,
    /// Name of the horizontal CRS, when the WKT gives one.
    pub name: Option<String>,
    /// Metres per unit of the horizontal coordinates (1 for metres, 0.3048 for feet,
    /// 1200/3937 for US survey feet); `None` when the file does not say.
    pub unit: Option<f64>,
    /// "wkt", "geotiff" or "none".
    pub source: &'static str,
    /// How `epsg` was found: "authority" (the WKT's AUTHORITY/ID), "geotiff" (a GeoTIFF key),
    /// "parameters" (a WKT without one, matched to the built-in EPSG table by its projection,
    /// parameters, ellipsoid, unit and datum).
    pub epsg_by: Option<&'static str>,
    /// The horizontal CRS as a PROJ string: the EPSG table's for `epsg`, else built from the
    /// WKT's projection and parameters (in the file's unit: `+units=ft` for feet).
    pub proj: Option<String>,
    /// Whether the WKT is a compound CRS (COMPD_CS, COMPOUNDCRS): `epsg`, `unit` and `proj`
    /// are its horizontal part's.
    pub compound: bool,
}

impl Crs {
    /// The horizontal CRS to reproject from: by its EPSG code, else by its PROJ string; None
    /// when the file gives neither.
    pub fn def(&self) -> Option<Result<crate::CrsDef, String>> {
        match (self.epsg, &self.proj) {
            (Some(code), _) => Some(crate::CrsDef::from_epsg(code)),
            (None, Some(p)) => Some(crate::CrsDef::parse(p)),
            (None, None) => None,
        }
    }

    /// A label for messages: `EPSG:NNNN`, else the PROJ string, else "none".
    pub fn label(&self) -> String {
        match (self.epsg, &self.proj) {
            (Some(code), _) => format!("EPSG:{code}"),
            (None, Some(p)) => p.clone(),
            (None, None) => "none".into(),
        }
    }
}

/// What a LAS/LAZ header says, after the checks.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// (major, minor).
    pub version: (u8, u8),
    /// Point data record format, 0-10 (compression bits removed).
    pub point_format: u8,
    /// Bytes per point record (format size plus extra bytes).
    pub record_length: u16,
    /// Points the file holds (the header's count, cut to the data present).
    pub point_count: u64,
    /// The count the header states.
    pub header_point_count: u64,
    /// Byte where the points start.
    pub offset_to_points: u64,
    /// Scale of the integer coordinates.
    pub scale: [f64; 3],
    /// Offset of the integer coordinates.
    pub offset: [f64; 3],
    /// Header bounds (min x, y, z).
    pub min: [f64; 3],
    /// Header bounds (max x, y, z).
    pub max: [f64; 3],
    /// LAZ.
    pub compressed: bool,
    /// Global encoding bit 0: GPS times are adjusted standard GPS time (else GPS week seconds).
    pub gps_standard_time: bool,
    /// Coordinate reference system.
    pub crs: Crs,
    /// System identifier.
    pub system: String,
    /// Generating software.
    pub software: String,
    /// The VLRs read: (user id, record id, data length).
    pub vlrs: Vec<(String, u16, usize)>,
    /// Points by return as the header states them (5 counts, 15 in LAS 1.4; zeros when the
    /// writer left them out).
    pub points_by_return: Vec<u64>,
}

impl Header {
    /// Whether the format carries GPS time.
    pub fn has_gps_time(&self) -> bool {
        !matches!(self.point_format, 0 | 2)
    }

    /// Whether the format carries RGB.
    pub fn has_rgb(&self) -> bool {
        matches!(self.point_format, 2 | 3 | 5 | 7 | 8 | 10)
    }
}

/// A chunk of points as columns (map coordinates de-scaled to f64); only x, y and z from a
/// reader set to [`LasReader::set_xyz_only`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Points {
    /// m (or the file's unit).
    pub x: Vec<f64>,
    /// m.
    pub y: Vec<f64>,
    /// m.
    pub z: Vec<f64>,
    /// Intensity.
    pub intensity: Vec<u16>,
    /// Classification (0-31 in formats 0-5, 0-255 in 6-10).
    pub class: Vec<u8>,
    /// Return number.
    pub return_number: Vec<u8>,
    /// Number of returns of the pulse.
    pub number_of_returns: Vec<u8>,
    /// Scan angle, degrees.
    pub scan_angle_deg: Vec<f32>,
    /// Point source id.
    pub source: Vec<u16>,
    /// GPS time, s (NaN in formats without it).
    pub gps_time: Vec<f64>,
    /// Red, green, blue (empty in formats without colour).
    pub rgb: Vec<[u16; 3]>,
    /// Index in the file of the chunk's first record.
    first: u64,
    /// When records were left out as noise: for each point, its record's index in the chunk.
    kept: Vec<u32>,
}

impl Points {
    /// Number of points.
    pub fn len(&self) -> usize {
        self.x.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.x.is_empty()
    }

    /// Index in the file of point `i` of a chunk read by [`LasReader::read`] (the points left
    /// out as noise counted): for errors that name a point.
    pub fn file_index(&self, i: usize) -> u64 {
        self.first + self.kept.get(i).map_or(i as u64, |&k| k as u64)
    }
}

enum Source {
    Raw(std::io::BufReader<std::fs::File>),
    Laz(Laz),
}

/// The fields a read decodes: all, or x, y and z only (LAS 1.4 layered LAZ then skips the
/// other fields' layers), with the class and flags when noise is left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fields {
    xyz_only: bool,
    noise: bool,
}

impl Fields {
    /// Whether a decoder of these fields has what `need` asks for.
    fn covers(self, need: Fields) -> bool {
        !self.xyz_only || (need.xyz_only && (self.noise || !need.noise))
    }
}

/// An open LAS/LAZ file, read a chunk at a time.
pub struct LasReader {
    path: PathBuf,
    header: Header,
    warnings: Vec<String>,
    source: Source,
    read: u64,
    buf: Vec<u8>,
    /// Of a LAZ file: the first record of `buf` (a batch of decoded chunks) not served yet.
    buf_at: usize,
    fields: Fields,
    /// Points left out as noise (see [`LasReader::set_drop_noise`]).
    dropped: u64,
    /// Of a waveform format with its packets in this file: the bytes of packet data there are,
    /// the points whose packet lies outside them, and the first such point.
    waves: Option<Waves>,
    /// Faults of what the points do not need (EVLRs, waveform packets, points by return):
    /// problems for `summarize`, not warnings of every read.
    notes: Vec<String>,
}

/// Where the waveform data packets of the points may lie, and the points whose do not.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Waves {
    /// Byte of the point's packet offset and size in a record.
    at: usize,
    /// Bytes of packet data in the file (after the record header at the waveform start).
    len: u64,
    /// Points whose packet (with a descriptor) lies outside them.
    bad: u64,
    /// Index of the first of them.
    first: u64,
}

impl std::fmt::Debug for LasReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LasReader").field("path", &self.path).field("read", &self.read).finish_non_exhaustive()
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2).map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4).map_or(0, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8).map_or(0, |s| {
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        u64::from_le_bytes(a)
    })
}
fn f64_at(b: &[u8], at: usize) -> f64 {
    f64::from_bits(u64_at(b, at))
}
fn text(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).trim().to_string()
}

impl LasReader {
    /// The checked header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// What was wrong but could be read around (e.g. a VLR count larger than the VLRs).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Points read so far.
    pub fn points_read(&self) -> u64 {
        self.read
    }

    /// From now on, decodes x, y and z only (the other columns of [`Points`] stay empty): less
    /// work for what needs the coordinates only.
    pub fn set_xyz_only(&mut self, xyz_only: bool) {
        self.fields.xyz_only = xyz_only;
    }

    /// From now on, leaves out the points classified as noise (7, low point; 18, high noise)
    /// and those flagged withheld (to be left out of processing, as the LAS specification
    /// says); [`LasReader::dropped`] counts them.
    pub fn set_drop_noise(&mut self, drop: bool) {
        self.fields.noise = drop;
    }

    /// Points left out as noise so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}
