//! Trajectory time to UTC.

/// UTC of the trajectory's time 0, seconds since 1970-01-01T00:00:00Z.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Epoch(pub f64);

impl Default for Epoch {
    /// 2026-01-01T00:00:00Z.
    fn default() -> Self {
        Epoch(1_767_225_600.0)
    }
}

impl Epoch {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z`.
    pub fn parse(text: &str) -> Option<Epoch> {
        let t = text.trim().strip_suffix('Z')?;
        let (date, time) = t.split_once('T')?;
        let mut d = date.split('-');
        let (y, m, dd): (i64, u32, u32) = (d.next()?.parse().ok()?, d.next()?.parse().ok()?, d.next()?.parse().ok()?);
        let mut h = time.split(':');
        let (hh, mm): (u32, u32) = (h.next()?.parse().ok()?, h.next()?.parse().ok()?);
        let ss: f64 = h.next()?.parse().ok()?;
        if d.next().is_some()
            || h.next().is_some()
            || !(1..=12).contains(&m)
            || !(1..=31).contains(&dd)
            || hh > 23
            || mm > 59
            || !(0.0..61.0).contains(&ss)
        {
            return None;
        }
        let days = days_from_civil(y, m, dd);
        Some(Epoch(days as f64 * 86400.0 + (hh * 3600 + mm * 60) as f64 + ss))
    }
    /// UTC seconds of trajectory time `t`.
    pub fn utc(&self, t: f64) -> f64 {
        self.0 + t
    }
    /// GPS time of trajectory time `t`: seconds since 1980-01-06T00:00:00Z on the satellites'
    /// clock, which counts the leap seconds UTC inserted since (18 since 2017-01-01).
    pub fn gps(&self, t: f64) -> f64 {
        let u = self.utc(t);
        u - GPS_EPOCH_UNIX + LEAP_SECONDS.iter().filter(|&&at| u >= at).count() as f64
    }
    /// Adjusted standard GPS time (GPS time minus 10^9 s) of trajectory time `t`, as LAS 1.4
    /// stores it when bit 0 of the header's global encoding is set.
    pub fn adjusted_gps(&self, t: f64) -> f64 {
        self.gps(t) - 1e9
    }
    /// Microseconds past the UTC hour at trajectory time `t` (what Velodyne packets carry).
    pub fn micros_past_hour(&self, t: f64) -> u32 {
        let s = self.utc(t).rem_euclid(3600.0);
        ((s * 1e6).floor() as u64).min(3_599_999_999) as u32
    }
    /// (year, month, day, hour, minute, second) at trajectory time `t`.
    pub fn civil(&self, t: f64) -> (i64, u32, u32, u32, u32, f64) {
        let u = self.utc(t);
        let days = (u / 86400.0).floor();
        let secs = u - days * 86400.0;
        let (y, m, d) = civil_from_days(days as i64);
        let h = (secs / 3600.0).floor();
        let mi = ((secs - h * 3600.0) / 60.0).floor();
        (y, m, d, h as u32, mi as u32, secs - h * 3600.0 - mi * 60.0)
    }
}

/// 1980-01-06T00:00:00Z, the start of GPS time, in Unix seconds.
const GPS_EPOCH_UNIX: f64 = 315_964_800.0;

/// Unix seconds (UTC) from which GPS time runs one more second ahead of UTC: the leap seconds
/// after 1980 (IERS Bulletin C; none since 2017-01-01).
const LEAP_SECONDS: [f64; 18] = [
    362_793_600.0,   // 1981-07-01
    394_329_600.0,   // 1982-07-01
    425_865_600.0,   // 1983-07-01
    489_024_000.0,   // 1985-07-01
    567_993_600.0,   // 1988-01-01
    631_152_000.0,   // 1990-01-01
    662_688_000.0,   // 1991-01-01
    709_948_800.0,   // 1992-07-01
    741_484_800.0,   // 1993-07-01
    773_020_800.0,   // 1994-07-01
    820_454_400.0,   // 1996-01-01
    867_715_200.0,   // 1997-07-01
    915_148_800.0,   // 1999-01-01
    1_136_073_600.0, // 2006-01-01
    1_230_768_000.0, // 2009-01-01
    1_341_100_800.0, // 2012-07-01
    1_435_708_800.0, // 2015-07-01
    1_483_228_800.0, // 2017-01-01
];

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn epochs_round_trip() {
        let e = Epoch::parse("2026-01-01T00:00:00Z").expect("parse");
        assert_eq!(e, Epoch::default());
        assert_eq!(e.civil(3723.5), (2026, 1, 1, 1, 2, 3.5));
        assert_eq!(Epoch::parse("2024-02-29T12:00:00Z").map(|e| e.civil(0.0).2), Some(29));
        assert_eq!(e.micros_past_hour(3600.25), 250_000);
        assert!(Epoch::parse("2026-13-01T00:00:00Z").is_none());
        assert!(Epoch::parse("yesterday").is_none());
        // GPS time: 18 leap seconds ahead of UTC since 2017; none on 1980-01-06.
        assert_eq!(e.gps(0.0), 1_767_225_600.0 - 315_964_800.0 + 18.0);
        assert_eq!(e.adjusted_gps(0.5), 451_260_818.5);
        assert_eq!(Epoch::parse("1980-01-06T00:00:00Z").map(|e| e.gps(0.0)), Some(0.0));
        // The table's dates are the leap seconds' own days.
        for (at, date) in LEAP_SECONDS.iter().zip([
            "1981-07-01",
            "1982-07-01",
            "1983-07-01",
            "1985-07-01",
            "1988-01-01",
            "1990-01-01",
            "1991-01-01",
            "1992-07-01",
            "1993-07-01",
            "1994-07-01",
            "1996-01-01",
            "1997-07-01",
            "1999-01-01",
            "2006-01-01",
            "2009-01-01",
            "2012-07-01",
            "2015-07-01",
            "2017-01-01",
        ]) {
            assert_eq!(Epoch::parse(&format!("{date}T00:00:00Z")).map(|e| e.0), Some(*at), "{date}");
        }
        // The second before 2017 is one leap second behind the second after.
        let before = Epoch(1_483_228_799.0);
        assert_eq!(before.gps(1.0) - before.gps(0.0), 2.0);
    }
}
