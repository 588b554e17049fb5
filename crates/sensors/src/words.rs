//! The seed's compact LiDAR frames: one 32-bit word per beam ([`crate::reflect::word`]: range
//! in 2 mm units in bits 31..12, reflectivity × 4095 in bits 11..0, 0 = no return).
//!
//! File layout, little-endian: the 4 bytes `RSWD`, u32 version (1), u32 lasers per firing, f64
//! revolutions a second; then per firing: f64 time (s), u16 azimuth of its first laser (0.01
//! degree, 0..35999), u16 zero, and one u32 word per laser in laser id order. A firing of the
//! HDL-32E is 140 bytes, 3.0 MB a second.

use crate::lidar::Firing;
use crate::packet::azimuth_units;
use crate::reflect::{unword, word};

/// Bytes of the header.
pub const HEADER_BYTES: usize = 20;

/// The header for `lasers` lasers spun at `rate_hz`.
pub fn header(lasers: u32, rate_hz: f64) -> [u8; HEADER_BYTES] {
    let mut h = [0u8; HEADER_BYTES];
    h[..4].copy_from_slice(b"RSWD");
    h[4..8].copy_from_slice(&1u32.to_le_bytes());
    h[8..12].copy_from_slice(&lasers.to_le_bytes());
    h[12..20].copy_from_slice(&rate_hz.to_le_bytes());
    h
}

/// Appends firing `f`'s record to `out`.
pub fn record(f: &Firing, out: &mut Vec<u8>) {
    out.extend_from_slice(&f.time.to_le_bytes());
    out.extend_from_slice(&azimuth_units(f.azimuth).to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    for r in &f.returns {
        let w = if r.is_some() { word(r.range, r.reflectivity) } else { 0 };
        out.extend_from_slice(&w.to_le_bytes());
    }
}

/// One firing read back: time, azimuth (0.01 degree) and per laser (range m, reflectivity) or None.
pub type Decoded = (f64, u16, Vec<Option<(f64, f64)>>);

/// Reads a words file; None when it is not one or its length does not fit whole firings.
pub fn read(bytes: &[u8]) -> Option<(u32, f64, Vec<Decoded>)> {
    if bytes.len() < HEADER_BYTES || &bytes[..4] != b"RSWD" || bytes[4..8] != 1u32.to_le_bytes() {
        return None;
    }
    let lasers = u32::from_le_bytes(bytes[8..12].try_into().ok()?);
    let rate = f64::from_le_bytes(bytes[12..20].try_into().ok()?);
    let size = 12 + 4 * lasers as usize;
    let body = &bytes[HEADER_BYTES..];
    if lasers == 0 || !body.len().is_multiple_of(size) {
        return None;
    }
    let firings = body
        .chunks(size)
        .map(|c| {
            let t = f64::from_le_bytes(c[..8].try_into().unwrap_or([0; 8]));
            let az = u16::from_le_bytes([c[8], c[9]]);
            let w = c[12..].chunks(4).map(|b| unword(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))).collect();
            (t, az, w)
        })
        .collect();
    Some((lasers, rate, firings))
}
