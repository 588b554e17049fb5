//! LAS header layout (ASPRS LAS 1.0-1.4) for setting fields in place, and tiny hand-built LAS
//! files. Offsets are the specification's; every setter ignores a field past the end of a
//! truncated buffer rather than growing it.

/// Byte offsets of the public header block's fields.
pub mod at {
    /// Version major (u8), minor (u8).
    pub const VERSION_MAJOR: usize = 24;
    pub const VERSION_MINOR: usize = 25;
    /// File creation day of year, year (u16 each).
    pub const DAY: usize = 90;
    pub const YEAR: usize = 92;
    /// Header size (u16).
    pub const HEADER_SIZE: usize = 94;
    /// Offset to point data (u32).
    pub const OFFSET_TO_POINTS: usize = 96;
    /// Number of VLRs (u32).
    pub const VLR_COUNT: usize = 100;
    /// Point data format (u8; bit 7: LAZ).
    pub const POINT_FORMAT: usize = 104;
    /// Point record length (u16).
    pub const RECORD_LENGTH: usize = 105;
    /// Legacy number of point records (u32).
    pub const LEGACY_COUNT: usize = 107;
    /// Legacy points by return (5 x u32).
    pub const LEGACY_BY_RETURN: usize = 111;
    /// X, Y, Z scale factors (f64).
    pub const SCALE: [usize; 3] = [131, 139, 147];
    /// X, Y, Z offsets (f64).
    pub const OFFSET: [usize; 3] = [155, 163, 171];
    /// Max X, min X, max Y, min Y, max Z, min Z (f64).
    pub const BOUNDS: [usize; 6] = [179, 187, 195, 203, 211, 219];
    /// LAS 1.3: start of the waveform data packet record (u64).
    pub const WAVEFORM_START: usize = 227;
    /// LAS 1.4: start of the first EVLR (u64), number of EVLRs (u32), number of point records
    /// (u64), points by return (15 x u64).
    pub const EVLR_START: usize = 235;
    pub const EVLR_COUNT: usize = 243;
    pub const POINT_COUNT: usize = 247;
}

/// Writes `v` at `at` (little-endian) if the buffer holds it.
pub fn put(b: &mut [u8], at: usize, v: &[u8]) {
    if let Some(dst) = b.get_mut(at..at + v.len()) {
        dst.copy_from_slice(v);
    }
}

/// Reads a little-endian u16 at `at` (0 past the end).
pub fn u16_at(b: &[u8], at: usize) -> u16 {
    b.get(at..at + 2).map_or(0, |s| u16::from_le_bytes([s[0], s[1]]))
}

/// Reads a little-endian u32 at `at` (0 past the end).
pub fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4).map_or(0, |s| u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Reads a little-endian u64 at `at` (0 past the end).
pub fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at + 8).map_or(0, |s| {
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        u64::from_le_bytes(a)
    })
}

/// Reads a little-endian f64 at `at` (NaN past the end).
pub fn f64_at(b: &[u8], at: usize) -> f64 {
    if b.len() < at + 8 {
        return f64::NAN;
    }
    f64::from_bits(u64_at(b, at))
}

/// The header's bounds (min x, min y, min z, max x, max y, max z).
pub fn bounds(b: &[u8]) -> [f64; 6] {
    let f = |i: usize| f64_at(b, at::BOUNDS[i]);
    [f(1), f(3), f(5), f(0), f(2), f(4)]
}

/// Where the VLRs are: (offset of each VLR header, its user id, record id, payload length).
pub fn vlrs(b: &[u8]) -> Vec<(usize, String, u16, usize)> {
    let mut out = Vec::new();
    let mut at = u16_at(b, at::HEADER_SIZE) as usize;
    for _ in 0..u32_at(b, at::VLR_COUNT).min(64) {
        if at + 54 > b.len() {
            break;
        }
        let user = String::from_utf8_lossy(&b[at + 2..at + 18]).trim_end_matches('\0').to_string();
        let record = u16_at(b, at + 18);
        let len = u16_at(b, at + 20) as usize;
        out.push((at, user, record, len));
        at += 54 + len;
    }
    out
}

/// A LAS 1.2 file of point format 1 (28-byte records, GPS time), no VLRs, no CRS, with
/// `points` (x, y, z in metres) at a 1 mm scale about `offset`.
pub fn las12(points: &[[f64; 3]], offset: [f64; 3]) -> Vec<u8> {
    let mut b = vec![0u8; 227];
    b[0..4].copy_from_slice(b"LASF");
    b[at::VERSION_MAJOR] = 1;
    b[at::VERSION_MINOR] = 2;
    put(&mut b, 26, b"hostile");
    put(&mut b, 58, b"hostile gen");
    put(&mut b, at::DAY, &1u16.to_le_bytes());
    put(&mut b, at::YEAR, &2024u16.to_le_bytes());
    put(&mut b, at::HEADER_SIZE, &227u16.to_le_bytes());
    put(&mut b, at::OFFSET_TO_POINTS, &227u32.to_le_bytes());
    b[at::POINT_FORMAT] = 1;
    put(&mut b, at::RECORD_LENGTH, &28u16.to_le_bytes());
    put(&mut b, at::LEGACY_COUNT, &(points.len() as u32).to_le_bytes());
    put(&mut b, at::LEGACY_BY_RETURN, &(points.len() as u32).to_le_bytes());
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for (i, p) in points.iter().enumerate() {
        for k in 0..3 {
            let q = ((p[k] - offset[k]) / 0.001).round();
            b.extend_from_slice(&(q as i32).to_le_bytes());
            let v = q * 0.001 + offset[k];
            lo[k] = lo[k].min(v);
            hi[k] = hi[k].max(v);
        }
        b.extend_from_slice(&(100 + (i % 900) as u16).to_le_bytes()); // intensity
        b.push(0b0000_1001); // return 1 of 1
        b.push(if i % 10 == 0 { 6 } else { 2 }); // class
        b.push(0); // scan angle
        b.push(0); // user data
        b.extend_from_slice(&1u16.to_le_bytes()); // point source
        b.extend_from_slice(&(i as f64 * 0.001).to_le_bytes()); // GPS time
    }
    for k in 0..3 {
        put(&mut b, at::SCALE[k], &0.001f64.to_le_bytes());
        put(&mut b, at::OFFSET[k], &offset[k].to_le_bytes());
        put(&mut b, at::BOUNDS[2 * k], &hi[k].to_le_bytes());
        put(&mut b, at::BOUNDS[2 * k + 1], &lo[k].to_le_bytes());
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handmade_las12_has_a_consistent_header() {
        let b = las12(&[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [0.0, 0.0, 0.0]);
        assert_eq!(b.len(), 227 + 2 * 28);
        assert_eq!(u32_at(&b, at::LEGACY_COUNT), 2);
        assert_eq!(bounds(&b), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        assert!(vlrs(&b).is_empty());
    }
}
