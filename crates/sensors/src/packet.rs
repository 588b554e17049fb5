//! Velodyne's UDP payloads: the 1,206-byte data packet and the 512-byte position packet.
//!
//! Data packet (little-endian): 12 blocks of 100 bytes, each `FF EE`, the azimuth of its first
//! firing in 0.01 degree (u16, 0..35999), then 32 channels of (distance u16 in the table's
//! steps, 0 = no return; intensity u8); then the time of the packet's first firing in
//! microseconds past the UTC hour (u32, byte 1200), the return mode (byte 1204, 0x37 strongest)
//! and the product id (byte 1205, 0x21 HDL-32E, 0x22 VLP-16). A block holds one firing of 32
//! lasers or two of 16. Tables whose firings take more than one block (the HDL-64E's upper
//! and lower blocks, `0xEEFF` and `0xDDFF`, with status bytes instead of the product id) are
//! not written: [`data_packet`] returns None for them.
//!
//! Position packet: 512 bytes, zero but for the time (u32 at byte 198), the PPS status (byte
//! 202, 2 = locked) and a NUL-terminated `$GPRMC` sentence at byte 206.

use crate::beams::BeamTable;
use crate::lidar::Firing;
use crate::time::Epoch;

/// Bytes of a data packet.
pub const DATA_BYTES: usize = 1206;
/// Bytes of a position packet.
pub const POSITION_BYTES: usize = 512;
/// Return mode byte: strongest return.
pub const STRONGEST: u8 = 0x37;

/// The block azimuth of a head angle (rad): 0.01 degree units, 0..35999.
pub fn azimuth_units(azimuth: f64) -> u16 {
    ((azimuth.to_degrees() * 100.0).round() as i64).rem_euclid(36000) as u16
}

/// The data packet of `firings` (one packet's worth, [`BeamTable::firings_per_packet`]), the
/// first fired at trajectory time `firings[0].time`. None when the count or the channels do
/// not fit the layout.
pub fn data_packet(table: &BeamTable, firings: &[Firing], epoch: &Epoch) -> Option<[u8; DATA_BYTES]> {
    let per_block = table.firings_per_block;
    if firings.len() != 12 * per_block || !table.has_32_channel_blocks() {
        return None;
    }
    let mut p = [0u8; DATA_BYTES];
    for (b, block) in firings.chunks(per_block).enumerate() {
        let at = b * 100;
        p[at] = 0xFF;
        p[at + 1] = 0xEE;
        p[at + 2..at + 4].copy_from_slice(&azimuth_units(block[0].azimuth).to_le_bytes());
        for (k, r) in block.iter().flat_map(|f| f.returns.iter()).enumerate() {
            let c = at + 4 + 3 * k;
            p[c..c + 2].copy_from_slice(&r.distance.to_le_bytes());
            p[c + 2] = if r.is_some() { r.intensity } else { 0 };
        }
    }
    p[1200..1204].copy_from_slice(&epoch.micros_past_hour(firings[0].time).to_le_bytes());
    p[1204] = STRONGEST;
    p[1205] = table.product_id;
    Some(p)
}

/// A `$GPRMC` sentence (with its checksum and CR LF) at trajectory time `t`: position in
/// degrees (None: status V, void, no position), speed over ground in m/s, course in degrees
/// clockwise from north.
pub fn gprmc(epoch: &Epoch, t: f64, lat_lon: Option<(f64, f64)>, speed: f64, course: f64) -> String {
    let (y, mo, d, h, mi, s) = epoch.civil(t);
    let hms = format!("{h:02}{mi:02}{:05.2}", (s * 100.0).floor() / 100.0);
    let date = format!("{d:02}{mo:02}{:02}", y.rem_euclid(100));
    let body = match lat_lon {
        Some((lat, lon)) => {
            let (lat_h, lon_h) = (if lat < 0.0 { 'S' } else { 'N' }, if lon < 0.0 { 'W' } else { 'E' });
            let dm = |v: f64| {
                let v = v.abs();
                let deg = v.floor();
                (deg, (v - deg) * 60.0)
            };
            let ((ad, am), (od, om)) = (dm(lat), dm(lon));
            format!(
                "GPRMC,{hms},A,{:02}{:07.4},{lat_h},{:03}{:07.4},{lon_h},{:.1},{:.1},{date},,,A",
                ad as u32,
                am,
                od as u32,
                om,
                speed.max(0.0) * 3600.0 / 1852.0,
                course.rem_euclid(360.0)
            )
        }
        None => format!("GPRMC,{hms},V,,,,,,,{date},,,N"),
    };
    let sum = body.bytes().fold(0u8, |a, b| a ^ b);
    format!("${body}*{sum:02X}\r\n")
}

/// The position packet at trajectory time `t` carrying `nmea`.
pub fn position_packet(epoch: &Epoch, t: f64, nmea: &str) -> [u8; POSITION_BYTES] {
    let mut p = [0u8; POSITION_BYTES];
    p[198..202].copy_from_slice(&epoch.micros_past_hour(t).to_le_bytes());
    p[202] = 2;
    let n = nmea.len().min(POSITION_BYTES - 206 - 1);
    p[206..206 + n].copy_from_slice(&nmea.as_bytes()[..n]);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gprmc_has_a_valid_checksum() {
        let e = Epoch::default();
        let s = gprmc(&e, 3723.25, Some((47.5, -19.25)), 10.0, 45.0);
        assert!(s.starts_with("$GPRMC,010203.25,A,4730.0000,N,01915.0000,W,19.4,45.0,010126,,,A*"), "{s}");
        assert!(s.ends_with("\r\n"));
        let (body, sum) = s[1..s.len() - 2].split_once('*').expect("checksum");
        assert_eq!(u8::from_str_radix(sum, 16).ok(), Some(body.bytes().fold(0, |a, b| a ^ b)));
        let p = position_packet(&e, 3723.25, &s);
        assert_eq!(u32::from_le_bytes([p[198], p[199], p[200], p[201]]), 123_250_000);
        assert_eq!(&p[206..212], b"$GPRMC");
        assert_eq!(p[206 + s.len()], 0);
    }

    #[test]
    fn azimuths_wrap() {
        assert_eq!(azimuth_units(0.0), 0);
        assert_eq!(azimuth_units(std::f64::consts::TAU - 1e-9), 0);
        assert_eq!(azimuth_units(std::f64::consts::PI), 18000);
        assert_eq!(azimuth_units(-0.5f64.to_radians()), 35950);
    }
}
