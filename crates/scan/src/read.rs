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

use crate::Error;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

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

    /// Keeps the points from `at` on whose `keep` is true, in every column decoded; returns how
    /// many went.
    fn keep_from(&mut self, at: usize, keep: &[bool]) -> usize {
        retain_from(&mut self.x, at, keep);
        retain_from(&mut self.y, at, keep);
        retain_from(&mut self.z, at, keep);
        retain_from(&mut self.intensity, at, keep);
        retain_from(&mut self.class, at, keep);
        retain_from(&mut self.return_number, at, keep);
        retain_from(&mut self.number_of_returns, at, keep);
        retain_from(&mut self.scan_angle_deg, at, keep);
        retain_from(&mut self.source, at, keep);
        retain_from(&mut self.gps_time, at, keep);
        retain_from(&mut self.rgb, at, keep);
        keep.iter().filter(|&&k| !k).count()
    }

    fn clear(&mut self) {
        self.x.clear();
        self.y.clear();
        self.z.clear();
        self.intensity.clear();
        self.class.clear();
        self.return_number.clear();
        self.number_of_returns.clear();
        self.scan_angle_deg.clear();
        self.source.clear();
        self.gps_time.clear();
        self.rgb.clear();
        self.kept.clear();
    }
}

/// Size of the base record of each point format.
const FORMAT_SIZE: [u16; 11] = [20, 28, 26, 34, 57, 63, 30, 36, 38, 59, 67];

enum Source {
    Raw(std::io::BufReader<std::fs::File>),
    Laz(Laz),
}

/// A LAZ file's decoding.
struct Laz {
    vlr: laz::LazVlr,
    /// How many points are decoded at once: several LAZ chunks, which the parallel decoder
    /// decodes side by side; the reader serves them as asked.
    batch: usize,
    /// Whether the parallel decoder may be used: the chunk table is sound and no chunk holds
    /// more than [`BATCH_BYTES`] of records (the parallel decoder holds the rest of a chunk).
    parallel: bool,
    /// The decoder, built at the first read, and the fields it decodes.
    decoder: Option<(Box<dyn LazDecoder + Send>, Fields)>,
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

/// The two laz decompressors behind one call.
trait LazDecoder {
    fn decompress_many(&mut self, out: &mut [u8]) -> Result<(), String>;
}

impl<R: Read + Seek + Send> LazDecoder for laz::ParLasZipDecompressor<R> {
    fn decompress_many(&mut self, out: &mut [u8]) -> Result<(), String> {
        laz::ParLasZipDecompressor::decompress_many(self, out).map_err(|e| e.to_string())
    }
}

impl<R: Read + Seek + Send + Sync> LazDecoder for laz::LasZipDecompressor<'static, R> {
    fn decompress_many(&mut self, out: &mut [u8]) -> Result<(), String> {
        laz::LasZipDecompressor::decompress_many(self, out).map_err(|e| e.to_string())
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
    /// Opens `path` and checks its header and VLRs.
    pub fn open(path: impl AsRef<Path>) -> Result<LasReader, Error> {
        let path = path.as_ref().to_path_buf();
        let fail = |byte: Option<u64>, message: String| Error::Format { path: path.clone(), byte, message };
        let io = |e: std::io::Error| Error::Io { path: path.clone(), message: e.to_string() };
        let mut file = std::fs::File::open(&path).map_err(io)?;
        let file_len = file.metadata().map_err(io)?.len();
        let mut head = vec![0u8; 375.min(file_len as usize)];
        file.read_exact(&mut head).map_err(io)?;
        if head.len() < 227 || &head[0..4] != b"LASF" {
            return Err(fail(Some(0), "not a LAS file (no LASF signature and 227-byte header)".into()));
        }
        let version = (head[24], head[25]);
        if version.0 != 1 || version.1 > 4 {
            return Err(fail(Some(24), format!("LAS version {}.{} (1.0-1.4 are read)", version.0, version.1)));
        }
        let header_size = u16_at(&head, 94) as u64;
        let min_header = match version.1 {
            0..=2 => 227,
            3 => 235,
            _ => 375,
        };
        if header_size < min_header || header_size > file_len {
            return Err(fail(Some(94), format!("header size {header_size} (LAS 1.{} needs {min_header})", version.1)));
        }
        let offset_to_points = u32_at(&head, 96) as u64;
        if offset_to_points < header_size || offset_to_points > file_len {
            return Err(fail(
                Some(96),
                format!("offset to point data {offset_to_points} outside the file (header {header_size}, file {file_len} bytes)"),
            ));
        }
        let n_vlrs = u32_at(&head, 100);
        let format_byte = head[104];
        let compressed = format_byte & 0xC0 != 0;
        let point_format = format_byte & 0x3F;
        if point_format > 10 {
            return Err(fail(Some(104), format!("point data format {point_format} (0-10 exist)")));
        }
        let record_length = u16_at(&head, 105);
        let base = FORMAT_SIZE[point_format as usize];
        if record_length < base {
            return Err(fail(
                Some(105),
                format!("point record length {record_length} is below the {base} bytes of point format {point_format}"),
            ));
        }
        let legacy_count = u32_at(&head, 107) as u64;
        let count64 = if version.1 >= 4 { u64_at(&head, 247) } else { 0 };
        let mut warnings = Vec::new();
        let header_point_count = if version.1 >= 4 && count64 > 0 {
            if legacy_count != 0 && legacy_count != count64 {
                warnings.push(format!(
                    "legacy point count {legacy_count} differs from the 64-bit count {count64}; using the latter"
                ));
            }
            count64
        } else {
            legacy_count
        };
        let mut scale = [0.0; 3];
        let mut offset = [0.0; 3];
        for k in 0..3 {
            scale[k] = f64_at(&head, 131 + 8 * k);
            offset[k] = f64_at(&head, 155 + 8 * k);
            if !(scale[k].is_finite() && scale[k] != 0.0) {
                return Err(fail(
                    Some(131 + 8 * k as u64),
                    format!("{} scale factor {}", ["x", "y", "z"][k], scale[k]),
                ));
            }
            if !offset[k].is_finite() {
                return Err(fail(Some(155 + 8 * k as u64), format!("{} offset {}", ["x", "y", "z"][k], offset[k])));
            }
        }
        let max = [f64_at(&head, 179), f64_at(&head, 195), f64_at(&head, 211)];
        let min = [f64_at(&head, 187), f64_at(&head, 203), f64_at(&head, 219)];
        let global_encoding = u16_at(&head, 6);

        // VLRs: each bounded by the start of the point data.
        let mut vlrs = Vec::new();
        let mut vlr_data: Vec<(String, u16, Vec<u8>)> = Vec::new();
        let mut at = header_size;
        // Where the laszip VLR's data start.
        let mut laszip_at = None;
        // Why the walk stopped before the header's count of VLRs (for a LAZ error).
        let mut vlr_stop = None;
        file.seek(SeekFrom::Start(at)).map_err(io)?;
        for i in 0..n_vlrs {
            if at + 54 > offset_to_points {
                warnings.push(format!(
                    "header says {n_vlrs} VLRs, {i} fit before the point data at byte {offset_to_points}; the rest are ignored"
                ));
                vlr_stop = warnings.last().cloned();
                break;
            }
            let mut vh = [0u8; 54];
            file.read_exact(&mut vh).map_err(io)?;
            let len = u16_at(&vh, 20) as u64;
            if at + 54 + len > offset_to_points {
                warnings.push(format!(
                    "VLR {i} at byte {at} ({len} bytes) runs past the point data at byte {offset_to_points}; it and the rest are ignored"
                ));
                vlr_stop = warnings.last().cloned();
                break;
            }
            let mut data = vec![0u8; len as usize];
            file.read_exact(&mut data).map_err(io)?;
            let user = text(&vh[2..18]);
            let record = u16_at(&vh, 18);
            if user == "laszip encoded" && record == 22204 && laszip_at.is_none() {
                laszip_at = Some(at + 54);
            }
            vlrs.push((user.clone(), record, data.len()));
            vlr_data.push((user, record, data));
            at += 54 + len;
        }
        let crs = crs_from_vlrs(&vlr_data, global_encoding & 0x10 != 0 || point_format >= 6, &mut warnings);

        // Points present: LAS by the file size, LAZ by its chunk table (checked against the
        // file before the decoder sees it).
        let stride = record_length as u64;
        // What follows the points: the waveform data packets and the EVLRs, and the points by
        // return; each fault a note for `summarize` (nothing here is needed to read the points).
        let points_end = if compressed {
            offset_to_points + 8
        } else {
            offset_to_points + header_point_count.min((file_len - offset_to_points) / stride) * stride
        };
        let mut notes = Vec::new();
        let waves = check_tail(&mut file, file_len, &head, points_end, point_format, &mut notes).map_err(io)?;
        let points_by_return: Vec<u64> = if version.1 >= 4 {
            (0..15).map(|k| u64_at(&head, 255 + 8 * k)).collect()
        } else {
            (0..5).map(|k| u32_at(&head, 111 + 4 * k) as u64).collect()
        };
        let by_return = points_by_return.iter().fold(0u64, |a, &n| a.saturating_add(n));
        if by_return != 0 && by_return != header_point_count {
            notes.push(format!(
                "the points by return ({}) sum to {by_return}, the header's point count is {header_point_count}",
                points_by_return.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
            ));
        }
        let (point_count, source) = if compressed {
            let Some((_, _, data)) = vlr_data.iter().find(|(u, r, _)| u == "laszip encoded" && *r == 22204) else {
                let walk = VlrWalk { header_size, min_header, offset_to_points, end: at, stop: vlr_stop, format_byte };
                let (byte, message) =
                    no_laszip_vlr(&mut file, &walk, &vlrs, file_len, header_point_count, stride).map_err(io)?;
                return Err(fail(Some(byte), message));
            };
            let vlr_at = laszip_at.unwrap_or(header_size);
            let info = laz_info(data, vlr_at, record_length).map_err(|(b, m)| fail(Some(b), m))?;
            let layout = LazLayout::check(&mut file, file_len, offset_to_points, &info, header_point_count).map_err(
                |e| match e {
                    Checked::Io(e) => io(e),
                    Checked::Bad(b, m) => fail(Some(b), m),
                },
            )?;
            if layout.point_count < header_point_count {
                warnings.push(format!(
                    "header says {header_point_count} points, the LAZ chunk table holds at most {}; reading {}",
                    layout.point_count, layout.point_count
                ));
            }
            // laspy reads the same bytes with the same checks (its lazrs is this crate).
            let vlr = laz::LazVlr::from_buffer(data).map_err(|e| fail(Some(vlr_at), format!("laszip VLR: {e}")))?;
            // Four chunks of the usual 50,000 points at a time (variable chunks: as many), two
            // for each of two cores, and at most 64 MiB of decoded records.
            let batch = match info.chunk_size {
                None => 200_000,
                Some(c) => (4 * c as usize).min(1 << 20),
            }
            .min((BATCH_BYTES / stride as usize).max(1));
            let point_count = layout.point_count;
            (point_count, Source::Laz(Laz { vlr, batch, parallel: layout.parallel, decoder: None }))
        } else {
            let fit = (file_len - offset_to_points) / stride;
            let count = if header_point_count > fit {
                warnings.push(format!(
                    "header says {header_point_count} points, the file holds {fit} whole records after byte {offset_to_points}; reading {fit}"
                ));
                fit
            } else {
                header_point_count
            };
            file.seek(SeekFrom::Start(offset_to_points)).map_err(io)?;
            (count, Source::Raw(std::io::BufReader::with_capacity(1 << 20, file)))
        };
        let header = Header {
            version,
            point_format,
            record_length,
            point_count,
            header_point_count,
            offset_to_points,
            scale,
            offset,
            min,
            max,
            compressed,
            gps_standard_time: global_encoding & 1 != 0,
            crs,
            system: text(&head[26..58]),
            software: text(&head[58..90]),
            vlrs,
            points_by_return,
        };
        Ok(LasReader {
            path,
            header,
            warnings,
            source,
            read: 0,
            buf: Vec::new(),
            buf_at: 0,
            fields: Fields { xyz_only: false, noise: false },
            dropped: 0,
            waves,
            notes,
        })
    }

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

    /// Replaces `out` by the next up to `max` points; returns how many (0 at the end).
    pub fn read(&mut self, out: &mut Points, max: usize) -> Result<usize, Error> {
        out.clear();
        let left = self.header.point_count - self.read;
        let mut n = left.min(max as u64) as usize;
        if n == 0 {
            return Ok(0);
        }
        let stride = self.header.record_length as usize;
        let first = self.read;
        let fail = |message: String| Error::Format { path: self.path.clone(), byte: None, message };
        // Where the records served lie in `buf`.
        let at = match &mut self.source {
            Source::Raw(r) => {
                self.buf.resize(n * stride, 0);
                r.read_exact(&mut self.buf).map_err(|e| Error::Point {
                    path: self.path.clone(),
                    index: first as usize,
                    message: format!("reading points {first}..{}: {e}", first + n as u64),
                })?;
                0
            }
            Source::Laz(z) => {
                if z.decoder.as_ref().is_some_and(|(_, f)| !f.covers(self.fields)) {
                    // More columns asked for than are decoded (all after x, y, z only).
                    z.decoder = None;
                    self.buf.clear();
                    self.buf_at = 0;
                }
                if self.buf_at * stride >= self.buf.len() {
                    let m = left.min(z.batch as u64) as usize;
                    // The first read (or the first after a failure, or after the columns
                    // changed) builds a decoder for the columns asked for and skips the points
                    // served.
                    let (mut d, fields, skip) = match z.decoder.take() {
                        Some((d, fields)) => (d, fields, 0),
                        None => {
                            let d =
                                laz_decoder(&self.path, self.header.offset_to_points, &z.vlr, z.parallel, self.fields)?;
                            (d, self.fields, first)
                        }
                    };
                    self.buf.resize(m * stride, 0);
                    self.buf_at = 0;
                    let (buf, batch) = (&mut self.buf, z.batch);
                    // A corrupt stream can make the third-party decoder panic: report it as an
                    // error.
                    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        let mut scratch = Vec::new();
                        let mut skip = skip as usize;
                        while skip > 0 {
                            let k = skip.min(batch);
                            scratch.resize(k * stride, 0);
                            d.decompress_many(&mut scratch)?;
                            skip -= k;
                        }
                        d.decompress_many(buf)
                    }));
                    let what = || format!("LAZ points {first}..{} of {}", first + m as u64, self.header.point_count);
                    let error = match result {
                        Ok(Ok(())) => None,
                        // laspy (lazrs) fails on these too: the points decoded cannot be told
                        // from garbage after the data end.
                        Ok(Err(e)) if e.contains("failed to fill whole buffer") => Some(format!(
                            "{}: the compressed data end before the header's {} points (a point count larger than the data, or a cut file): {e}",
                            what(),
                            self.header.point_count
                        )),
                        Ok(Err(e)) => Some(format!("{}: {e}", what())),
                        Err(_) => Some(format!("{}: the decoder failed on corrupt data", what())),
                    };
                    if let Some(message) = error {
                        // Nothing of the failed batch is served, and the decoder is dropped.
                        self.buf.clear();
                        return Err(fail(message));
                    }
                    z.decoder = Some((d, fields));
                }
                let at = self.buf_at;
                n = n.min(self.buf.len() / stride - at);
                self.buf_at += n;
                at
            }
        };
        out.first = first;
        let records = &self.buf[at * stride..(at + n) * stride];
        if let Some(w) = &mut self.waves {
            for (i, r) in records.chunks_exact(stride).enumerate() {
                // Descriptor index 0: no packet.
                let (index, offset, size) = (r[w.at - 1], u64_at(r, w.at), u32_at(r, w.at + 8) as u64);
                if index != 0 && !matches!(offset.checked_add(size), Some(end) if end <= w.len) {
                    if w.bad == 0 {
                        w.first = first + i as u64;
                    }
                    w.bad += 1;
                }
            }
        }
        self.dropped += decode(&self.header, records, n, self.fields, out) as u64;
        self.read += n as u64;
        Ok(n)
    }
}

/// A decoder of `path`'s points from their start, of x, y and z only if asked (LAS 1.4 layered
/// LAZ then skips the other fields' layers; older formats decode everything anyway): the
/// parallel one, or without a chunk table the sequential one.
fn laz_decoder(
    path: &Path,
    offset_to_points: u64,
    vlr: &laz::LazVlr,
    parallel: bool,
    fields: Fields,
) -> Result<Box<dyn LazDecoder + Send>, Error> {
    let io = |e: std::io::Error| Error::Io { path: path.to_path_buf(), message: e.to_string() };
    let selection = match fields {
        Fields { xyz_only: false, .. } => laz::DecompressionSelection::all(),
        Fields { xyz_only: true, noise: false } => laz::DecompressionSelection::base().decompress_z(),
        Fields { xyz_only: true, noise: true } => {
            laz::DecompressionSelection::base().decompress_z().decompress_classification().decompress_flags()
        }
    };
    let open = || -> Result<std::io::BufReader<std::fs::File>, Error> {
        let mut f = std::fs::File::open(path).map_err(io)?;
        f.seek(SeekFrom::Start(offset_to_points)).map_err(io)?;
        Ok(std::io::BufReader::with_capacity(1 << 20, f))
    };
    let par = if parallel { laz::ParLasZipDecompressor::selective(open()?, vlr.clone(), selection).ok() } else { None };
    Ok(match par {
        Some(d) => Box::new(d),
        // Chunks too large to hold one (or the point-wise compressor): the sequential decoder.
        None => Box::new(laz::LasZipDecompressor::selective(open()?, vlr.clone(), selection).map_err(|e| {
            Error::Format { path: path.to_path_buf(), byte: Some(offset_to_points), message: format!("LAZ: {e}") }
        })?),
    })
}

/// Checks what follows the points against the file, as notes: the start of the waveform
/// data packets (LAS 1.3+) and the EVLRs (LAS 1.4: start and count, each EVLR's length);
/// returns where the packets of a waveform format's points may lie when they are in the file.
/// `head` is the header, `points_end` the byte the points reach.
fn check_tail(
    file: &mut std::fs::File,
    file_len: u64,
    head: &[u8],
    points_end: u64,
    point_format: u8,
    notes: &mut Vec<String>,
) -> std::io::Result<Option<Waves>> {
    let minor = head[25];
    let mut waves = None;
    if minor >= 3 {
        let start = u64_at(head, 227);
        let internal = u16_at(head, 6) & 0x02 != 0;
        let wave_at = match point_format {
            4 => Some(29),
            5 => Some(35),
            9 => Some(31),
            10 => Some(37),
            _ => None,
        };
        if start != 0 || (internal && wave_at.is_some()) {
            if start < points_end || start.saturating_add(60) > file_len {
                notes.push(format!(
                    "the waveform data packets start at byte {start} (header byte 227), outside the {file_len}-byte file after the points (byte {points_end})"
                ));
            } else if let (true, Some(at)) = (internal, wave_at) {
                waves = Some(Waves { at, len: file_len - start - 60, bad: 0, first: 0 });
            }
        }
    }
    if minor >= 4 {
        let (start, count) = (u64_at(head, 235), u32_at(head, 243) as u64);
        if count > 0 {
            if start < points_end || start.saturating_add(60) > file_len {
                notes.push(format!(
                    "header says {count} EVLRs from byte {start} (header byte 235), outside the {file_len}-byte file after the points (byte {points_end})"
                ));
            } else {
                // Each EVLR: a 60-byte header whose bytes 20..28 give its data length.
                let (mut at, mut k) = (start, 0u64);
                let mut h = [0u8; 60];
                while k < count && at.saturating_add(60) <= file_len {
                    file.seek(SeekFrom::Start(at))?;
                    file.read_exact(&mut h)?;
                    let len = u64_at(&h, 20);
                    match (at + 60).checked_add(len) {
                        Some(end) if end <= file_len => at = end,
                        _ => {
                            notes.push(format!(
                                "EVLR {k} at byte {at} says {len} bytes of data, past the end of the {file_len}-byte file"
                            ));
                            break;
                        }
                    }
                    k += 1;
                }
                if k < count && at.saturating_add(60) > file_len {
                    notes.push(format!(
                        "header says {count} EVLRs from byte {start}, {k} fit in the {file_len}-byte file; the rest are ignored"
                    ));
                }
            }
        }
    }
    Ok(waves)
}

/// At most this many bytes of decoded LAZ records are held at once: the reader's batch, and a
/// chunk the parallel decoder keeps the rest of (larger chunks are decoded sequentially).
const BATCH_BYTES: usize = 64 << 20;

/// The laszip VLR (22204), read and checked here before the `laz` crate sees it.
#[derive(Debug, Clone, PartialEq)]
struct LazInfo {
    /// 1: point-wise (one stream, no chunks), 2: point-wise chunked, 3: layered chunked.
    compressor: u16,
    /// Points per chunk; `None` for variable chunks (the table gives each chunk's count).
    chunk_size: Option<u32>,
    /// Bytes of a decoded record.
    items_size: u64,
    /// Layer sizes (u32 each) at the start of a layered chunk, after its first point and count.
    layers: u64,
}

/// Reads and checks the laszip VLR `d` (its data at byte `at` of the file): a known compressor,
/// every item of its own size, the sizes summing to the header's `record_length`. The error is
/// (byte, message).
fn laz_info(d: &[u8], at: u64, record_length: u16) -> Result<LazInfo, (u64, String)> {
    if d.len() < 34 {
        return Err((at, format!("laszip VLR of {} bytes (34 and 6 per item needed)", d.len())));
    }
    let compressor = u16_at(d, 0);
    if !(1..=3).contains(&compressor) {
        return Err((at, format!("laszip VLR: compressor {compressor} (1, 2 or 3 are read)")));
    }
    let chunk_size = match u32_at(d, 12) {
        0 | u32::MAX => None,
        c => Some(c),
    };
    let n = u16_at(d, 32) as usize;
    if d.len() != 34 + 6 * n {
        return Err((at + 32, format!("laszip VLR lists {n} items in {} bytes (needs {})", d.len(), 34 + 6 * n)));
    }
    let (mut items_size, mut layers) = (0u64, 0u64);
    for k in 0..n {
        let (ty, size) = (u16_at(d, 34 + 6 * k), u16_at(d, 36 + 6 * k));
        // (size the item must have (None: any, extra bytes), layers in a layered chunk).
        let (want, l) = match ty {
            0 => (None, 0),
            6 => (Some(20), 0),
            7 => (Some(8), 0),
            8 => (Some(6), 0),
            9 | 13 => (Some(29), 1),
            10 => (Some(30), 9),
            11 => (Some(6), 1),
            12 => (Some(8), 2),
            14 => (None, size as u64),
            _ => return Err((at + 34 + 6 * k as u64, format!("laszip VLR: item {k} of unknown type {ty}"))),
        };
        if want.is_some_and(|w| w != size) || size == 0 {
            return Err((at + 36 + 6 * k as u64, format!("laszip VLR: item {k} (type {ty}) of {size} bytes")));
        }
        if (compressor == 3) != (10..=14).contains(&ty) {
            return Err((
                at + 34 + 6 * k as u64,
                format!("laszip VLR: item type {ty} does not go with compressor {compressor}"),
            ));
        }
        items_size += size as u64;
        layers += l;
    }
    if items_size != record_length as u64 {
        return Err((105, format!("laszip VLR describes {items_size}-byte points, the header {record_length}")));
    }
    Ok(LazInfo { compressor, chunk_size, items_size, layers })
}

/// Where the VLRs of a file were looked for: from the header's end to where the walk ended
/// (`end`), before the point data; `stop` says why the walk ended early, if it did.
struct VlrWalk {
    header_size: u64,
    min_header: u64,
    offset_to_points: u64,
    end: u64,
    stop: Option<String>,
    format_byte: u8,
}

/// Why a file whose point format says LAZ has no laszip VLR, with the byte to name: where the
/// VLRs were searched, why the walk stopped, and what the bytes say instead. A laszip VLR
/// header ("laszip encoded" at bytes 2..18) found where the walk has no VLR names the field
/// that is off: the header size (a walk from the version's header size reaches it), the length
/// of the VLR before it, or the offset to the points (its data run past them). None at all and
/// uncompressed records that fill the file exactly mean a LAS file with the compression bit
/// set. At most 1 MiB before the points is searched.
fn no_laszip_vlr(
    file: &mut std::fs::File,
    walk: &VlrWalk,
    vlrs: &[(String, u16, usize)],
    file_len: u64,
    point_count: u64,
    stride: u64,
) -> std::io::Result<(u64, String)> {
    let VlrWalk { header_size, min_header, offset_to_points, end, format_byte, .. } = *walk;
    let span = format!("from the header size, byte 94, to the points at byte {offset_to_points}, byte 96");
    let searched = match vlrs.len() {
        0 => format!("the VLR walk from byte {header_size} ({span}) found no whole VLR, so none is"),
        n => format!("the {n} VLR(s) at bytes {header_size}..{end} ({span}) hold none that is"),
    };
    let mut message = format!(
        "compressed (LAZ): the point format byte is 0x{format_byte:02X} (byte 104), but {searched} the laszip VLR \
         (user \"laszip encoded\", record 22204)"
    );
    if let Some(stop) = &walk.stop {
        message.push_str(&format!("; {stop}"));
    }
    // Search from the smallest header (227 bytes) on: a header size that is too large skips
    // the first VLR's start.
    let from = 227u64.min(header_size);
    let to = offset_to_points.min(from + (1 << 20));
    let mut area = vec![0u8; (to - from) as usize];
    file.seek(SeekFrom::Start(from))?;
    file.read_exact(&mut area)?;
    // A VLR header's record id and length, when it lies in the area.
    let field = |at: u64, k: u64| at.checked_sub(from).map_or(0, |i| u16_at(&area, (i + k) as usize));
    let sig = b"laszip encoded";
    let found = area.windows(sig.len()).position(|w| w == sig).map(|i| from + i as u64).filter(|&i| i >= from + 2);
    // The VLRs the walk passed (start, length), and the one it stopped at if it ran past the
    // points (its header read, its data not).
    let mut walked = Vec::with_capacity(vlrs.len() + 1);
    let mut at = header_size;
    for (_, _, len) in vlrs {
        walked.push((at, *len as u64));
        at += 54 + *len as u64;
    }
    if walk.stop.is_some() && end + 54 <= offset_to_points {
        walked.push((end, field(end, 20) as u64));
    }
    // Whether walking the VLRs from `start` lands on `target`.
    let reaches = |mut start: u64, target: u64| {
        while start < target && start + 54 <= to {
            start += 54 + field(start, 20) as u64;
        }
        start == target
    };
    let byte = match found {
        Some(sig_at) => {
            let vlr = sig_at - 2;
            let (record, len) = (field(vlr, 18), field(vlr, 20) as u64);
            message.push_str(&format!("; a laszip VLR header (record {record}, {len} bytes) stands at byte {vlr}"));
            let before = walked.iter().rev().find(|&&(a, _)| a < vlr).copied();
            if walked.iter().any(|&(a, _)| a == vlr) {
                if record != 22204 {
                    message.push_str(&format!(", of record {record}, not 22204"));
                }
            } else if header_size != min_header && reaches(min_header, vlr) {
                message.push_str(&format!(
                    ", where a walk from byte {min_header} (the LAS header size of this version) arrives: the header \
                     size {header_size} (byte 94) is off by {}",
                    header_size.abs_diff(min_header)
                ));
            } else if let Some((a, l)) = before {
                message.push_str(&format!(
                    ", where no VLR starts: it would follow the VLR at byte {a} if that one's length (bytes {}..{}) were \
                     {}, not {l}",
                    a + 20,
                    a + 22,
                    vlr - a - 54
                ));
            } else {
                message.push_str(&format!(", before the header's end at byte {header_size} (byte 94)"));
            }
            if vlr + 54 + len > offset_to_points {
                message.push_str(&format!(
                    "; its data would end at byte {}, past the offset to the points {offset_to_points} (byte 96)",
                    vlr + 54 + len
                ));
            }
            vlr
        }
        None => {
            message.push_str(&format!("; no \"laszip encoded\" VLR header in bytes {from}..{to}"));
            if point_count > 0 && file_len.checked_sub(offset_to_points) == point_count.checked_mul(stride) {
                message.push_str(&format!(
                    ", and the {point_count} uncompressed {stride}-byte records fill the file exactly: an uncompressed \
                     LAS file with the compression bit (0x80 or 0x40) set"
                ));
            }
            104
        }
    };
    Ok((byte, message))
}

/// Why a LAZ layout check failed.
enum Checked {
    Io(std::io::Error),
    /// The byte of the bad field, and what is wrong.
    Bad(u64, String),
}

impl From<std::io::Error> for Checked {
    fn from(e: std::io::Error) -> Checked {
        Checked::Io(e)
    }
}

/// What the LAZ chunk table allows.
#[derive(Debug, Clone, PartialEq)]
struct LazLayout {
    /// Points the chunks can hold: the header's count, cut to the table's.
    point_count: u64,
    /// Whether the parallel decoder may be used (see [`Laz::parallel`]).
    parallel: bool,
}

impl LazLayout {
    /// Checks the chunk table of the LAZ points that start at `data_start` (the 8-byte offset
    /// to the table, then the chunks) against the file, as the `laz` crate will read it: the
    /// offset (or, as the crate does when it is not past the data start, the file's last 8
    /// bytes) inside the file, the chunk count within what the bytes between can hold (every
    /// chunk starts with a raw point), every chunk's byte count inside them, and the layer
    /// sizes at the start of every layered chunk inside its chunk. So no count the crate
    /// allocates by exceeds what the file backs.
    fn check(
        file: &mut std::fs::File,
        file_len: u64,
        data_start: u64,
        info: &LazInfo,
        header_point_count: u64,
    ) -> Result<LazLayout, Checked> {
        let bad = |at: u64, m: String| Err(Checked::Bad(at, m));
        if info.compressor == 1 {
            // One stream of points, no chunks and no table: decoded sequentially, as far as the
            // data go.
            return Ok(LazLayout { point_count: header_point_count, parallel: false });
        }
        let read_i64 = |file: &mut std::fs::File, at: u64| -> std::io::Result<Option<i64>> {
            if at + 8 > file_len {
                return Ok(None);
            }
            let mut b = [0u8; 8];
            file.seek(SeekFrom::Start(at))?;
            file.read_exact(&mut b)?;
            Ok(Some(i64::from_le_bytes(b)))
        };
        let Some(first) = read_i64(file, data_start)? else {
            return bad(data_start, "LAZ point data shorter than the 8-byte offset to the chunk table".into());
        };
        let (field, table) = if first > data_start as i64 {
            (data_start, first as u64)
        } else {
            // Not updated by the writer: the crate looks in the file's last 8 bytes.
            match read_i64(file, file_len.saturating_sub(8))? {
                Some(last) if last > data_start as i64 => (file_len - 8, last as u64),
                _ => {
                    return bad(
                        data_start,
                        format!("no LAZ chunk table (offset {first}, nor one in the file's last 8 bytes): the points cannot be decoded"),
                    )
                }
            }
        };
        let chunks_start = data_start + 8;
        if table < chunks_start || table.saturating_add(8) > file_len {
            return bad(
                field,
                format!(
                    "LAZ chunk table offset {table} outside the compressed points (bytes {chunks_start}..{file_len})"
                ),
            );
        }
        let mut head = [0u8; 8];
        file.seek(SeekFrom::Start(table))?;
        file.read_exact(&mut head)?;
        let count = u32_at(&head, 4) as u64;
        // Every chunk starts with its first point, raw; a layered one then with its count and
        // layer sizes.
        let min_chunk = info.items_size + if info.compressor == 3 { 4 + 4 * info.layers } else { 0 };
        let area = table - chunks_start;
        let most = area / min_chunk.max(1);
        if count > most {
            return bad(
                table + 4,
                format!(
                    "LAZ chunk table counts {count} chunks; the {area} bytes of compressed points before it hold at most {most}"
                ),
            );
        }
        if count == 0 {
            return if header_point_count == 0 {
                Ok(LazLayout { point_count: 0, parallel: false })
            } else {
                bad(table + 4, format!("LAZ chunk table lists no chunks for {header_point_count} points"))
            };
        }
        // The entries, as the crate decodes them, from at most the bytes an entry can take
        // (two 32-bit numbers, arithmetic coded) or the rest of the file.
        let len = (file_len - table).min(8 + 16 * count + 64);
        let mut bytes = vec![0u8; len as usize];
        file.seek(SeekFrom::Start(table))?;
        file.read_exact(&mut bytes)?;
        let variable = info.chunk_size.is_none();
        let entries = match laz::laszip::ChunkTable::read(&mut std::io::Cursor::new(&bytes), variable) {
            Ok(t) => t,
            Err(e) => return bad(table + 8, format!("LAZ chunk table of {count} chunks unreadable: {e}")),
        };
        let (mut at, mut points, mut biggest) = (chunks_start, 0u64, 0u64);
        let mut head = vec![0u8; min_chunk as usize];
        for (i, e) in entries.as_ref().iter().enumerate() {
            // A negative 32-bit count reads as a huge one.
            let n = info.chunk_size.map_or(e.point_count, u64::from);
            if e.byte_count < min_chunk || e.byte_count > table - at || n > u32::MAX as u64 {
                return bad(
                    table,
                    format!(
                        "LAZ chunk table: chunk {i} at byte {at} of {} bytes and {n} points (the chunks end at byte {table}; a chunk has at least {min_chunk} bytes)",
                        e.byte_count
                    ),
                );
            }
            if info.compressor == 3 {
                // The first point, the point count, then the layer sizes: the decoder
                // allocates each layer before reading it.
                file.seek(SeekFrom::Start(at))?;
                file.read_exact(&mut head)?;
                let sizes_at = (info.items_size + 4) as usize;
                let layers: u64 = (0..info.layers as usize).map(|l| u32_at(&head, sizes_at + 4 * l) as u64).sum();
                if min_chunk + layers > e.byte_count {
                    return bad(
                        at + sizes_at as u64,
                        format!(
                            "LAZ chunk {i}: its layers of {layers} bytes do not fit in its {} bytes",
                            e.byte_count - min_chunk
                        ),
                    );
                }
            }
            at += e.byte_count;
            points = points.saturating_add(n);
            biggest = biggest.max(n);
        }
        let parallel = biggest.saturating_mul(info.items_size) <= BATCH_BYTES as u64;
        Ok(LazLayout { point_count: header_point_count.min(points), parallel })
    }
}

/// What one pass over a file found: for `roadscan info`.
#[derive(Debug, Clone, PartialEq)]
pub struct Summary {
    /// Points read.
    pub points: u64,
    /// Bounds of the points (x, y, z).
    pub min: [f64; 3],
    /// Bounds of the points.
    pub max: [f64; 3],
    /// (class, count) of every class present.
    pub classes: Vec<(u8, u64)>,
    /// GPS time range (infinite when there is none).
    pub gps: (f64, f64),
    /// The reader's warnings and what the pass found (bounds outside the header's, no CRS).
    pub problems: Vec<String>,
    /// Intensity statistics (None without points).
    pub intensity: Option<IntensityStats>,
    /// Points by return number 1-15 (index 0 is return 1; return number 0, which the
    /// specification forbids, is not counted).
    pub return_numbers: [u64; 15],
    /// Points by their pulse's number of returns 1-15 (index 0: single returns).
    pub numbers_of_returns: [u64; 15],
    /// Scan angle range, degrees (None without points).
    pub scan_angle: Option<(f32, f32)>,
    /// Point density (None without points, or for a geographic CRS).
    pub density: Option<Density>,
}

/// Intensity of the points: range, mean and percentiles (exact, from a 65,536-bin histogram).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IntensityStats {
    /// Smallest.
    pub min: u16,
    /// Largest.
    pub max: u16,
    /// Mean.
    pub mean: f64,
    /// 5th, 50th (median) and 95th percentiles (nearest rank).
    pub p5_p50_p95: [u16; 3],
}

/// Points per square metre, two ways.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Density {
    /// Points over the area of the header's x-y bounds (lasinfo's and PDAL's figure); None
    /// when the bounds have no area.
    pub over_bounds: Option<f64>,
    /// Points over the area of the occupied cells of a grid on the header's x-y bounds (the
    /// points per m² where there are points): a swath's density, not diluted by empty corners.
    pub over_cells: f64,
    /// The cells' side, m: 1 m, or coarser where 1 m cells over the bounds would exceed
    /// [`DENSITY_CELLS`] (memory stays at most 2 MiB).
    pub cell: f64,
    /// Occupied cells.
    pub cells: u64,
    /// Points counted in cells (those outside the header's bounds are not).
    pub points: u64,
    /// Whether metres per unit were assumed 1 because the file does not say.
    pub unit_assumed: bool,
}

/// The most cells of the occupancy grid behind [`Density::over_cells`] (one bit each).
pub const DENSITY_CELLS: u64 = 1 << 24;

/// Which cells of a grid over the header's x-y bounds hold points: one bit a cell.
struct Occupancy {
    x0: f64,
    y0: f64,
    /// Cell side in the file's unit.
    cell: f64,
    /// Cell side, m.
    metres: f64,
    nx: u64,
    ny: u64,
    bits: Vec<u64>,
    cells: u64,
    points: u64,
}

impl Occupancy {
    /// A grid of cells of `metres` (at least 1 m) on the bounds, with `unit` metres a unit.
    fn new(h: &Header, unit: f64) -> Option<Occupancy> {
        let (w, d) = (h.max[0] - h.min[0], h.max[1] - h.min[1]);
        if !(w.is_finite() && d.is_finite() && w >= 0.0 && d >= 0.0 && unit > 0.0) {
            return None;
        }
        let (wm, dm) = (w * unit, d * unit);
        // 1 m cells, coarser when there would be too many.
        let mut metres: f64 = 1.0;
        while ((wm / metres).floor() + 1.0) * ((dm / metres).floor() + 1.0) > DENSITY_CELLS as f64 {
            metres *= 2.0;
        }
        let cell = metres / unit;
        let nx = (w / cell).floor() as u64 + 1;
        let ny = (d / cell).floor() as u64 + 1;
        let words = (nx * ny).div_ceil(64) as usize;
        Some(Occupancy { x0: h.min[0], y0: h.min[1], cell, metres, nx, ny, bits: vec![0; words], cells: 0, points: 0 })
    }

    /// Counts a point; `tol` (in cells) is how far outside the bounds a point is still taken
    /// into the edge cells (headers round their bounds).
    fn add(&mut self, x: f64, y: f64, tol: f64) {
        let (fx, fy) = ((x - self.x0) / self.cell, (y - self.y0) / self.cell);
        let (nx, ny) = (self.nx as f64, self.ny as f64);
        // Outside the bounds (a bad header) or not a number: not counted.
        if !(fx >= -tol && fy >= -tol && fx < nx + tol && fy < ny + tol) {
            return;
        }
        let (ix, iy) = ((fx.max(0.0) as u64).min(self.nx - 1), (fy.max(0.0) as u64).min(self.ny - 1));
        let k = iy * self.nx + ix;
        let (w, b) = ((k / 64) as usize, k % 64);
        if let Some(word) = self.bits.get_mut(w) {
            self.points += 1;
            if *word & (1 << b) == 0 {
                *word |= 1 << b;
                self.cells += 1;
            }
        }
    }
}

/// Reads every point of `r` and summarises them.
pub fn summarize(r: &mut LasReader) -> Result<Summary, Error> {
    // Every column is summarised.
    r.set_xyz_only(false);
    let mut p = Points::default();
    let mut counts = [0u64; 256];
    // Points by return number 1-15, as read.
    let mut returns = [0u64; 15];
    let mut numbers = [0u64; 15];
    // Intensity histogram (512 KiB) for exact percentiles.
    let mut intensity = vec![0u64; 1 << 16];
    let mut intensity_sum = 0u128;
    let mut angle = (f32::INFINITY, f32::NEG_INFINITY);
    let h = r.header();
    // Metres per unit: the file's; a geographic CRS has none (no density); a file without a CRS
    // is taken to be in metres.
    let geographic = h.crs.epsg.is_some_and(|c| crate::CrsDef::from_epsg(c).is_ok_and(|d| d.is_geographic()))
        || h.crs.proj.as_deref().is_some_and(|p| crate::crs::unit_of_proj(p).is_none());
    let unit = match (h.crs.unit, geographic) {
        (Some(u), _) => Some((u, false)),
        (None, false) => Some((1.0, true)),
        (None, true) => None,
    };
    let mut occupancy = unit.and_then(|(u, _)| Occupancy::new(h, u));
    let tol = occupancy.as_ref().map_or(0.0, |o| h.scale[0].abs().max(h.scale[1].abs()) / o.cell);
    let mut s = Summary {
        points: 0,
        min: [f64::INFINITY; 3],
        max: [f64::NEG_INFINITY; 3],
        classes: Vec::new(),
        gps: (f64::INFINITY, f64::NEG_INFINITY),
        problems: r.warnings().iter().chain(&r.notes).cloned().collect(),
        intensity: None,
        return_numbers: [0; 15],
        numbers_of_returns: [0; 15],
        scan_angle: None,
        density: None,
    };
    while r.read(&mut p, 1 << 16)? > 0 {
        s.points += p.len() as u64;
        for i in 0..p.len() {
            for (k, v) in [p.x[i], p.y[i], p.z[i]].into_iter().enumerate() {
                s.min[k] = s.min[k].min(v);
                s.max[k] = s.max[k].max(v);
            }
            counts[p.class[i] as usize] += 1;
            if let Some(c) = p.return_number.get(i).and_then(|&r| returns.get_mut((r as usize).wrapping_sub(1))) {
                *c += 1;
            }
            if let Some(c) = p.number_of_returns.get(i).and_then(|&r| numbers.get_mut((r as usize).wrapping_sub(1))) {
                *c += 1;
            }
            let t = p.gps_time[i];
            if t.is_finite() {
                s.gps = (s.gps.0.min(t), s.gps.1.max(t));
            }
            let v = p.intensity[i];
            intensity[v as usize] += 1;
            intensity_sum += v as u128;
            let a = p.scan_angle_deg[i];
            angle = (angle.0.min(a), angle.1.max(a));
            if let Some(o) = occupancy.as_mut() {
                o.add(p.x[i], p.y[i], tol);
            }
        }
    }
    if s.points > 0 {
        let rank = |q: f64| {
            // Nearest rank: the smallest value with at least q of the points at or below it.
            let want = ((q * s.points as f64).ceil() as u64).max(1);
            let mut seen = 0;
            for (v, &n) in intensity.iter().enumerate() {
                seen += n;
                if seen >= want {
                    return v as u16;
                }
            }
            u16::MAX
        };
        let min = intensity.iter().position(|&n| n > 0).unwrap_or(0) as u16;
        let max = intensity.iter().rposition(|&n| n > 0).unwrap_or(0) as u16;
        s.intensity = Some(IntensityStats {
            min,
            max,
            mean: intensity_sum as f64 / s.points as f64,
            p5_p50_p95: [rank(0.05), rank(0.5), rank(0.95)],
        });
        s.scan_angle = Some(angle);
        if let (Some((u, assumed)), Some(o)) = (unit, occupancy) {
            let h = r.header();
            let area = (h.max[0] - h.min[0]) * (h.max[1] - h.min[1]) * u * u;
            let cell = o.metres;
            s.density = Some(Density {
                over_bounds: (area > 0.0).then(|| s.points as f64 / area),
                over_cells: if o.cells > 0 { o.points as f64 / (o.cells as f64 * cell * cell) } else { 0.0 },
                cell,
                cells: o.cells,
                points: o.points,
                unit_assumed: assumed,
            });
        }
    }
    s.return_numbers = returns;
    s.numbers_of_returns = numbers;
    s.classes = counts.iter().enumerate().filter(|(_, &n)| n > 0).map(|(c, &n)| (c as u8, n)).collect();
    let h = r.header();
    if s.points > 0 {
        for k in 0..3 {
            let tol = h.scale[k];
            if s.min[k] < h.min[k] - tol || s.max[k] > h.max[k] + tol {
                s.problems.push(format!(
                    "{} of the points spans {}..{}, the header says {}..{}",
                    ["x", "y", "z"][k],
                    s.min[k],
                    s.max[k],
                    h.min[k],
                    h.max[k]
                ));
            }
        }
    }
    // The header's points by return against those read, when it gives them and every point
    // was read.
    let stated = &h.points_by_return;
    if stated.iter().any(|&n| n > 0) && s.points == h.header_point_count {
        let read = &returns[..stated.len()];
        if read != stated.as_slice() {
            let list = |v: &[u64]| v.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
            s.problems.push(format!(
                "the header's points by return ({}) differ from the points' return numbers ({})",
                list(stated),
                list(read)
            ));
        }
    }
    if let Some(w) = r.waves.filter(|w| w.bad > 0) {
        s.problems.push(format!(
            "{} points (the first is point {}) have a waveform data packet outside the {} bytes of packet data in the file",
            w.bad, w.first, w.len
        ));
    }
    if h.crs.source == "none" {
        s.problems.push(
            "no CRS in the file: its coordinates are taken to be in the CRS of the axis they are used with".into(),
        );
    }
    Ok(s)
}

/// x, y and z of the first `m` records of `buf` (each `stride` bytes), de-scaled, into the
/// columns (of `m` values each). A function of its own: the loop stays tight whatever
/// `decode` grows into.
fn decode_xyz(
    buf: &[u8],
    stride: usize,
    m: usize,
    ([sx, sy, sz], [ox, oy, oz]): ([f64; 3], [f64; 3]),
    (xs, ys, zs): (&mut [f64], &mut [f64], &mut [f64]),
) {
    let xyz = xs.iter_mut().zip(ys.iter_mut()).zip(zs.iter_mut());
    for (r, ((x, y), z)) in buf.chunks_exact(stride).take(m).zip(xyz) {
        let Some(b) = r.get(..12) else { continue };
        let ix = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let iy = i32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        let iz = i32::from_le_bytes([b[8], b[9], b[10], b[11]]);
        (*x, *y, *z) = (ix as f64 * sx + ox, iy as f64 * sy + oy, iz as f64 * sz + oz);
    }
}

/// Whether a record of a legacy format (0-5) is noise (class 7 or 18) or withheld.
#[inline(always)]
fn legacy_noise(r: &[u8]) -> bool {
    let c = r[15] & 0x1F;
    c == 7 || c == 18 || r[15] & 0x80 != 0
}

/// Whether a record of format 6-10 is noise (class 7 or 18) or withheld.
#[inline(always)]
fn noise(r: &[u8]) -> bool {
    r[16] == 7 || r[16] == 18 || r[15] & 0x04 != 0
}

/// Decodes `n` records of `buf` into `out` (the fields `fields` asks for); returns how many
/// were left out as noise.
fn decode(h: &Header, buf: &[u8], n: usize, fields: Fields, out: &mut Points) -> usize {
    let stride = h.record_length as usize;
    let new = h.point_format >= 6;
    // x, y and z in one pass over the records, into columns sized first (no capacity checks
    // per value); the other fields column by column, each pass a simple loop.
    let recs = || buf.chunks_exact(stride).take(n);
    let m = recs().len();
    let at = out.x.len();
    for col in [&mut out.x, &mut out.y, &mut out.z] {
        col.resize(at + m, 0.0);
    }
    decode_xyz(buf, stride, m, (h.scale, h.offset), (&mut out.x[at..], &mut out.y[at..], &mut out.z[at..]));
    // Noise: one pass over the class bytes finds whether a chunk has any (rarely); then the
    // columns are compacted. Records are at least 20 bytes (checked with the header).
    let keep: Option<Vec<bool>> = match (fields.noise, new) {
        (false, _) => None,
        (true, true) => recs().any(noise).then(|| recs().map(|r| !noise(r)).collect()),
        (true, false) => recs().any(legacy_noise).then(|| recs().map(|r| !legacy_noise(r)).collect()),
    };
    if !fields.xyz_only {
        decode_other(h, buf, n, out);
    }
    match &keep {
        Some(keep) => {
            // Which records the points are, by index among the records decoded here.
            out.kept.extend(keep.iter().enumerate().filter(|(_, &k)| k).map(|(j, _)| (at + j) as u32));
            out.keep_from(at, keep)
        }
        None => 0,
    }
}

/// The fields of `n` records of `buf` besides x, y and z, appended to their columns.
fn decode_other(h: &Header, buf: &[u8], n: usize, out: &mut Points) {
    let stride = h.record_length as usize;
    let f = h.point_format;
    let new = f >= 6;
    let gps_at = match f {
        0 | 2 => None,
        1 | 3 | 4 | 5 => Some(20),
        _ => Some(22),
    };
    let rgb_at = match f {
        2 => Some(20),
        3 | 5 => Some(28),
        7 | 8 | 10 => Some(30),
        _ => None,
    };
    let recs = || buf.chunks_exact(stride).take(n);
    out.intensity.extend(recs().map(|r| u16_at(r, 12)));
    if new {
        out.return_number.extend(recs().map(|r| r[14] & 0x0F));
        out.number_of_returns.extend(recs().map(|r| r[14] >> 4));
        out.class.extend(recs().map(|r| r[16]));
        out.scan_angle_deg.extend(recs().map(|r| i16::from_le_bytes([r[18], r[19]]) as f32 * 0.006));
        out.source.extend(recs().map(|r| u16_at(r, 20)));
    } else {
        out.return_number.extend(recs().map(|r| r[14] & 0x07));
        out.number_of_returns.extend(recs().map(|r| (r[14] >> 3) & 0x07));
        out.class.extend(recs().map(|r| r[15] & 0x1F));
        out.scan_angle_deg.extend(recs().map(|r| r[16] as i8 as f32));
        out.source.extend(recs().map(|r| u16_at(r, 18)));
    }
    match gps_at {
        Some(a) => out.gps_time.extend(recs().map(|r| f64_at(r, a))),
        None => out.gps_time.resize(out.gps_time.len() + recs().count(), f64::NAN),
    }
    if let Some(a) = rgb_at {
        out.rgb.extend(recs().map(|r| [u16_at(r, a), u16_at(r, a + 2), u16_at(r, a + 4)]));
    }
}

/// Keeps the values of `col` from `at` on whose `keep` is true, if it holds one for each
/// (columns not decoded are empty).
fn retain_from<T: Copy>(col: &mut Vec<T>, at: usize, keep: &[bool]) {
    if col.len() != at + keep.len() {
        return;
    }
    let mut w = at;
    for (i, &k) in keep.iter().enumerate() {
        if k {
            col[w] = col[at + i];
            w += 1;
        }
    }
    col.truncate(w);
}

/// The CRS from the VLRs: WKT first when `prefer_wkt`, else GeoTIFF keys.
fn crs_from_vlrs(vlrs: &[(String, u16, Vec<u8>)], prefer_wkt: bool, warnings: &mut Vec<String>) -> Crs {
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
