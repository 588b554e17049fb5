//! Serving the points: a chunk of records read (LAS) or taken from a decoded batch (LAZ),
//! checked for waveform packets outside the file, and decoded into the columns of [`Points`],
//! the points classified as noise or withheld left out when asked.

use super::laz::laz_decoder;
use super::{f64_at, u16_at, u32_at, u64_at, Fields, Header, LasReader, Points, Source};
use crate::Error;
use std::io::Read;

impl LasReader {
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

impl Points {
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
