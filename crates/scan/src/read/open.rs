//! Opening a LAS/LAZ file: the header's fields checked against the file, the VLRs walked up
//! to the point data, the CRS taken from them, what follows the points (waveform packets,
//! EVLRs, points by return) checked as notes, and the points present counted (LAS by the file
//! size, LAZ by its checked chunk table).

use super::georef::crs_from_vlrs;
use super::laz::{laz_info, no_laszip_vlr, Checked, Laz, LazLayout, VlrWalk, BATCH_BYTES};
use super::{f64_at, text, u16_at, u32_at, u64_at, Fields, Header, LasReader, Source, Waves};
use crate::Error;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Size of the base record of each point format.
const FORMAT_SIZE: [u16; 11] = [20, 28, 26, 34, 57, 63, 30, 36, 38, 59, 67];

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
