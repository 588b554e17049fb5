//! LAZ: the laszip VLR (22204) and the chunk table are checked against the file before the
//! `laz` crate sees them, so no count it allocates by exceeds what the file backs; a missing
//! laszip VLR is explained by what the bytes say instead; the decoder (parallel, or sequential
//! for the point-wise compressor and chunks too large to hold) is built for the fields asked.

use super::{u16_at, u32_at, Fields};
use crate::Error;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// A LAZ file's decoding.
pub(super) struct Laz {
    pub(super) vlr: laz::LazVlr,
    /// How many points are decoded at once: several LAZ chunks, which the parallel decoder
    /// decodes side by side; the reader serves them as asked.
    pub(super) batch: usize,
    /// Whether the parallel decoder may be used: the chunk table is sound and no chunk holds
    /// more than [`BATCH_BYTES`] of records (the parallel decoder holds the rest of a chunk).
    pub(super) parallel: bool,
    /// The decoder, built at the first read, and the fields it decodes.
    pub(super) decoder: Option<(Box<dyn LazDecoder + Send>, Fields)>,
}

/// The two laz decompressors behind one call.
pub(super) trait LazDecoder {
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

/// A decoder of `path`'s points from their start, of x, y and z only if asked (LAS 1.4 layered
/// LAZ then skips the other fields' layers; older formats decode everything anyway): the
/// parallel one, or without a chunk table the sequential one.
pub(super) fn laz_decoder(
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

/// At most this many bytes of decoded LAZ records are held at once: the reader's batch, and a
/// chunk the parallel decoder keeps the rest of (larger chunks are decoded sequentially).
pub(super) const BATCH_BYTES: usize = 64 << 20;

/// The laszip VLR (22204), read and checked here before the `laz` crate sees it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct LazInfo {
    /// 1: point-wise (one stream, no chunks), 2: point-wise chunked, 3: layered chunked.
    compressor: u16,
    /// Points per chunk; `None` for variable chunks (the table gives each chunk's count).
    pub(super) chunk_size: Option<u32>,
    /// Bytes of a decoded record.
    items_size: u64,
    /// Layer sizes (u32 each) at the start of a layered chunk, after its first point and count.
    layers: u64,
}

/// Reads and checks the laszip VLR `d` (its data at byte `at` of the file): a known compressor,
/// every item of its own size, the sizes summing to the header's `record_length`. The error is
/// (byte, message).
pub(super) fn laz_info(d: &[u8], at: u64, record_length: u16) -> Result<LazInfo, (u64, String)> {
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
pub(super) struct VlrWalk {
    pub(super) header_size: u64,
    pub(super) min_header: u64,
    pub(super) offset_to_points: u64,
    pub(super) end: u64,
    pub(super) stop: Option<String>,
    pub(super) format_byte: u8,
}

/// Why a file whose point format says LAZ has no laszip VLR, with the byte to name: where the
/// VLRs were searched, why the walk stopped, and what the bytes say instead. A laszip VLR
/// header ("laszip encoded" at bytes 2..18) found where the walk has no VLR names the field
/// that is off: the header size (a walk from the version's header size reaches it), the length
/// of the VLR before it, or the offset to the points (its data run past them). None at all and
/// uncompressed records that fill the file exactly mean a LAS file with the compression bit
/// set. At most 1 MiB before the points is searched.
pub(super) fn no_laszip_vlr(
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
pub(super) enum Checked {
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
pub(super) struct LazLayout {
    /// Points the chunks can hold: the header's count, cut to the table's.
    pub(super) point_count: u64,
    /// Whether the parallel decoder may be used (see [`Laz::parallel`]).
    pub(super) parallel: bool,
}

impl LazLayout {
    /// Checks the chunk table of the LAZ points that start at `data_start` (the 8-byte offset
    /// to the table, then the chunks) against the file, as the `laz` crate will read it: the
    /// offset (or, as the crate does when it is not past the data start, the file's last 8
    /// bytes) inside the file, the chunk count within what the bytes between can hold (every
    /// chunk starts with a raw point), every chunk's byte count inside them, and the layer
    /// sizes at the start of every layered chunk inside its chunk. So no count the crate
    /// allocates by exceeds what the file backs.
    pub(super) fn check(
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
