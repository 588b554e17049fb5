//! GPS: position (file and map frame), speed from the change of position over the tick (as the
//! seed's GPS does), heading, seeded noise, WGS84 latitude/longitude through a conversion the
//! caller supplies, and NMEA GGA/RMC sentences.
//!
//! Noise is a hash of (seed, tick, channel) (SplitMix64, Box-Muller), so it does not depend on
//! the order of evaluation or on anything before the tick: a resumed run draws the same noise.
//! Speed is the distance between the antenna's true positions of this tick and the last,
//! divided by the tick, plus its own noise (so position noise does not multiply into it).

use serde::{Deserialize, Serialize};

/// Map (x, y, z) -> WGS84 (latitude, longitude) in degrees, `None` where it cannot convert.
/// The roadscan library has one from the map's geoReference (proj4rs, crate `scan`).
pub trait ToWgs84 {
    /// Latitude and longitude, degrees.
    fn to_wgs84(&self, map: [f64; 3]) -> Option<[f64; 2]>;
}

impl<F: Fn([f64; 3]) -> Option<[f64; 2]>> ToWgs84 for F {
    fn to_wgs84(&self, map: [f64; 3]) -> Option<[f64; 2]> {
        self(map)
    }
}

/// GPS settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GpsConfig {
    /// Whether the GPS runs.
    pub enabled: bool,
    /// Fixes per second (a fix at every tick whose index is a multiple of the period in ticks).
    pub rate: f64,
    /// Antenna in the body frame (x forward from the rear axle, y left, z up from the road), m.
    pub antenna: [f64; 3],
    /// Horizontal noise, standard deviation per axis, m.
    pub sigma_xy: f64,
    /// Vertical noise, m.
    pub sigma_z: f64,
    /// Speed noise, m/s.
    pub sigma_speed: f64,
    /// Seed of the noise.
    pub seed: u64,
    /// UTC of time 0, seconds since 1970-01-01 (for NMEA times and dates).
    pub utc_start: f64,
}

impl Default for GpsConfig {
    fn default() -> Self {
        GpsConfig {
            enabled: true,
            rate: 10.0,
            antenna: [1.4, 0.0, 1.5],
            sigma_xy: 0.0,
            sigma_z: 0.0,
            sigma_speed: 0.0,
            seed: 1,
            utc_start: 1_700_000_000.0,
        }
    }
}

/// One GPS fix.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GpsFix {
    /// Simulation time, s.
    pub time: f64,
    /// UTC, seconds since 1970.
    pub utc: f64,
    /// Position in the road file's frame, m.
    pub file: [f64; 3],
    /// Position in the map frame (file frame + header offset), m.
    pub map: [f64; 3],
    /// WGS84 latitude and longitude, degrees, when a conversion was supplied.
    pub wgs84: Option<[f64; 2]>,
    /// Speed over ground, m/s.
    pub speed: f64,
    /// Heading, rad counter-clockwise from the map's x axis.
    pub heading: f64,
}

/// What the GPS keeps between ticks.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct GpsState {
    /// The antenna's true position (file frame) at the last tick.
    pub last: Option<[f64; 3]>,
}

/// SplitMix64 of a key.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform number in (0, 1) for (seed, tick, stream).
pub fn uniform(seed: u64, tick: u64, stream: u32) -> f64 {
    let h = mix(mix(mix(seed) ^ tick) ^ stream as u64);
    ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// A standard normal number for (seed, tick, channel) (Box-Muller).
pub fn normal(seed: u64, tick: u64, channel: u32) -> f64 {
    let (a, b) = (uniform(seed, tick, 2 * channel), uniform(seed, tick, 2 * channel + 1));
    (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
}

impl GpsConfig {
    /// Ticks between fixes (at least 1).
    pub fn period_ticks(&self, dt: f64) -> u64 {
        if self.rate.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
            || dt.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
        {
            return 1;
        }
        let n = (1.0 / (self.rate * dt)).round();
        if n.is_finite() && n >= 1.0 {
            n.min(1e12) as u64
        } else {
            1
        }
    }
}

/// Civil date (year, month, day) of a day count since 1970-01-01 (Howard Hinnant's algorithm).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// The checksum of an NMEA sentence body (XOR of the bytes between `$` and `*`).
pub fn nmea_checksum(body: &str) -> u8 {
    body.bytes().fold(0, |a, b| a ^ b)
}

fn sentence(body: String) -> String {
    format!("${body}*{:02X}", nmea_checksum(&body))
}

/// hhmmss.ss of a UTC time, and its day count.
fn utc_parts(utc: f64) -> (String, i64) {
    let utc = if utc.is_finite() { utc } else { 0.0 };
    let days = (utc / 86_400.0).floor();
    let mut sec = utc - days * 86_400.0;
    // Rounded to the hundredth first, so 59.999 does not print as 60.00.
    sec = (sec * 100.0).round() / 100.0;
    let (mut days, mut sec) = (days as i64, sec);
    if sec >= 86_400.0 {
        days += 1;
        sec -= 86_400.0;
    }
    let h = (sec / 3600.0).floor();
    let m = ((sec - h * 3600.0) / 60.0).floor();
    let s = sec - h * 3600.0 - m * 60.0;
    (format!("{:02}{:02}{:05.2}", h as u32, m as u32, s.max(0.0)), days)
}

/// ddmm.mmmmm (or dddmm.mmmmm) and the hemisphere letter.
fn angle(value: f64, width: usize, pos: char, neg: char) -> (String, char) {
    let a = value.abs();
    let mut deg = a.floor();
    let mut min = ((a - deg) * 60.0 * 100_000.0).round() / 100_000.0;
    if min >= 60.0 {
        deg += 1.0;
        min -= 60.0;
    }
    (format!("{:0width$}{:08.5}", deg as u32, min, width = width), if value < 0.0 { neg } else { pos })
}

impl GpsFix {
    /// Course over ground, degrees clockwise from the map's y axis (grid north), 0..360.
    pub fn course_deg(&self) -> f64 {
        (90.0 - self.heading.to_degrees()).rem_euclid(360.0)
    }

    /// `$GPGGA` (fix quality 1, 8 satellites, HDOP 1.0, altitude = map z), or `None` without
    /// latitude/longitude.
    pub fn gga(&self) -> Option<String> {
        let [lat, lon] = self.wgs84?;
        let (time, _) = utc_parts(self.utc);
        let (la, ns) = angle(lat, 2, 'N', 'S');
        let (lo, ew) = angle(lon, 3, 'E', 'W');
        Some(sentence(format!("GPGGA,{time},{la},{ns},{lo},{ew},1,08,1.0,{:.3},M,0.0,M,,", self.map[2])))
    }

    /// `$GPRMC` (status A, speed in knots, course, date), or `None` without latitude/longitude.
    pub fn rmc(&self) -> Option<String> {
        let [lat, lon] = self.wgs84?;
        let (time, days) = utc_parts(self.utc);
        let (y, m, d) = civil_from_days(days);
        let (la, ns) = angle(lat, 2, 'N', 'S');
        let (lo, ew) = angle(lon, 3, 'E', 'W');
        let knots = self.speed * 3600.0 / 1852.0;
        Some(sentence(format!(
            "GPRMC,{time},A,{la},{ns},{lo},{ew},{knots:.3},{:.2},{d:02}{m:02}{:02},,,A",
            self.course_deg(),
            y.rem_euclid(100)
        )))
    }
}
