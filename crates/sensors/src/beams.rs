//! Beam tables: the lasers of a rotating sensor, their firing timing and range limits.

/// One laser.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Laser {
    /// Elevation above the sensor's horizontal plane, rad.
    pub elevation: f64,
    /// Azimuth offset from the head's angle, rad (0 on Velodyne's 32E and VLP-16 tables).
    pub azimuth_offset: f64,
}

/// A rotating multi-beam sensor: lasers in firing order, timing and limits.
#[derive(Debug, Clone, PartialEq)]
pub struct BeamTable {
    /// Its name (`hdl32e`, `vlp16`, or a table's own).
    pub name: String,
    /// Lasers by id; id = position in a firing = firing order.
    pub lasers: Vec<Laser>,
    /// Time between two lasers of a firing, s.
    pub laser_dt: f64,
    /// Time between two firings (a firing cycle, recharge included), s.
    pub cycle: f64,
    /// Firings per data block (1 for the HDL-32E, 2 for the VLP-16: 32 channels a block).
    pub firings_per_block: usize,
    /// Data blocks per firing (1, but 2 for the HDL-64E: an upper and a lower block of 32).
    pub blocks_per_firing: usize,
    /// Product id byte of its data packets.
    pub product_id: u8,
    /// Range resolution, m.
    pub range_step: f64,
    /// Nearest range it reports, m.
    pub min_range: f64,
    /// Farthest range it reports, m.
    pub max_range: f64,
}

/// HDL-32E elevations by laser id, degrees: even ids from -30.67 up, odd ids from -9.33 up, in
/// 1.33 degree steps (Velodyne's calibration, as every decoder has it).
const HDL32E_DEG: [f64; 32] = [
    -30.67, -9.33, -29.33, -8.00, -28.00, -6.67, -26.67, -5.33, -25.33, -4.00, -24.00, -2.67, -22.67, -1.33, -21.33,
    0.00, -20.00, 1.33, -18.67, 2.67, -17.33, 4.00, -16.00, 5.33, -14.67, 6.67, -13.33, 8.00, -12.00, 9.33, -10.67,
    10.67,
];

impl BeamTable {
    /// Velodyne HDL-32E: 32 lasers 1.152 us apart, a firing every 46.08 us (21,701 a second),
    /// 2 mm range steps, 1 m to 100 m, product id 0x21.
    pub fn hdl32e() -> BeamTable {
        BeamTable {
            name: "hdl32e".into(),
            lasers: HDL32E_DEG.iter().map(|d| Laser { elevation: d.to_radians(), azimuth_offset: 0.0 }).collect(),
            laser_dt: 1.152e-6,
            cycle: 46.08e-6,
            firings_per_block: 1,
            blocks_per_firing: 1,
            product_id: 0x21,
            range_step: 0.002,
            min_range: 1.0,
            max_range: 100.0,
        }
    }

    /// Velodyne VLP-16: 16 lasers 2.304 us apart, a firing every 55.296 us, two firings a block,
    /// id i at -15 + i degrees (even) or i degrees (odd), 100 m, product id 0x22.
    pub fn vlp16() -> BeamTable {
        BeamTable {
            name: "vlp16".into(),
            lasers: (0..16)
                .map(|i| {
                    let deg = if i % 2 == 0 { -15.0 + i as f64 } else { i as f64 };
                    Laser { elevation: f64::to_radians(deg), azimuth_offset: 0.0 }
                })
                .collect(),
            laser_dt: 2.304e-6,
            cycle: 55.296e-6,
            firings_per_block: 2,
            blocks_per_firing: 1,
            product_id: 0x22,
            range_step: 0.002,
            min_range: 0.5,
            max_range: 100.0,
        }
    }

    /// Velodyne HDL-64E (S2/S3) with its nominal elevations: 64 lasers, ids 0..31 the upper
    /// block from +2 degrees down to -8.33 in 1/3 degree steps, ids 32..63 the lower block from
    /// -8.83 down to -24.33 in 1/2 degree steps (a real head's calibration file moves each by
    /// up to a few tenths of a degree and adds azimuth offsets; these are the data sheet's).
    ///
    /// Timing: 3,472 data packets a second (1,333,312 points / 384 a packet, as the ROS driver
    /// has it) of 6 firings (an upper and a lower block of 32 each), so a firing every 48 us.
    /// The head fires an upper and a lower laser together every 1.5 us; here the 64 fire in id
    /// order 0.75 us apart, which puts the lower block up to 24 us (0.09 degrees at 10 Hz)
    /// later than the real head. 50 cm to 120 m, 2 mm steps. Its packets carry status bytes
    /// where the 32E has a product id, which [`crate::packet`] does not write: the product id
    /// here (0) is a placeholder.
    pub fn hdl64e() -> BeamTable {
        let deg = |i: usize| if i < 32 { 2.0 - i as f64 / 3.0 } else { -8.83 - 0.5 * (i - 32) as f64 };
        BeamTable {
            name: "hdl64e".into(),
            lasers: (0..64).map(|i| Laser { elevation: deg(i).to_radians(), azimuth_offset: 0.0 }).collect(),
            laser_dt: 0.75e-6,
            cycle: 48.0e-6,
            firings_per_block: 1,
            blocks_per_firing: 2,
            product_id: 0,
            range_step: 0.002,
            min_range: 0.5,
            max_range: 120.0,
        }
    }

    /// The table named `name` (`hdl32e`, `vlp16`, `hdl64e`).
    pub fn named(name: &str) -> Option<BeamTable> {
        match name.to_ascii_lowercase().replace(['-', '_'], "").as_str() {
            "hdl32e" => Some(BeamTable::hdl32e()),
            "vlp16" => Some(BeamTable::vlp16()),
            "hdl64e" => Some(BeamTable::hdl64e()),
            _ => None,
        }
    }

    /// True when its data packets have the HDL-32E/VLP-16 layout [`crate::packet`] writes:
    /// 32 channels a block, one block a firing or less.
    pub fn has_32_channel_blocks(&self) -> bool {
        self.blocks_per_firing == 1 && self.lasers.len() * self.firings_per_block == 32
    }

    /// Firings a second.
    pub fn firing_rate(&self) -> f64 {
        1.0 / self.cycle
    }
    /// Firings in one data packet (12 blocks; at least 1).
    pub fn firings_per_packet(&self) -> usize {
        (12 * self.firings_per_block / self.blocks_per_firing.max(1)).max(1)
    }
    /// Data packets a second.
    pub fn packet_rate(&self) -> f64 {
        self.firing_rate() / self.firings_per_packet() as f64
    }
    /// Ring of each laser: its rank by elevation (ring 0 lowest), as decoders number them.
    pub fn rings(&self) -> Vec<u16> {
        let mut idx: Vec<usize> = (0..self.lasers.len()).collect();
        idx.sort_by(|&a, &b| self.lasers[a].elevation.total_cmp(&self.lasers[b].elevation).then(a.cmp(&b)));
        let mut ring = vec![0u16; self.lasers.len()];
        for (r, &i) in idx.iter().enumerate() {
            ring[i] = r as u16;
        }
        ring
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hdl32e_counts_and_rates() {
        let b = BeamTable::hdl32e();
        assert_eq!(b.lasers.len(), 32);
        assert!((b.firing_rate() - 21_701.39).abs() < 0.01);
        assert!((b.packet_rate() - 1_808.45).abs() < 0.01);
        // 2,170 firings and 180.8 packets per revolution at 10 Hz.
        assert!((b.firing_rate() / 10.0 - 2_170.14).abs() < 0.01);
        assert!((b.packet_rate() / 10.0 - 180.84).abs() < 0.01);
        // 32 lasers fit in a cycle with the recharge left over.
        assert!(32.0 * b.laser_dt < b.cycle);
        let rings = b.rings();
        assert_eq!((rings[0], rings[1], rings[31], rings[30]), (0, 16, 31, 15));
        assert!((b.lasers[15].elevation).abs() < 1e-12);
        assert!((b.lasers[5].elevation.to_degrees() + 6.67).abs() < 1e-12);
    }

    #[test]
    fn vlp16_table() {
        let b = BeamTable::vlp16();
        let deg: Vec<f64> = b.lasers.iter().map(|l| l.elevation.to_degrees()).collect();
        assert!((deg[0] + 15.0).abs() < 1e-9 && (deg[1] - 1.0).abs() < 1e-9 && (deg[15] - 15.0).abs() < 1e-9);
        assert_eq!(b.firings_per_packet(), 24);
        assert!((b.packet_rate() - 753.6).abs() < 0.1);
        assert_eq!(BeamTable::named("HDL-32E").map(|b| b.name), Some("hdl32e".into()));
    }

    #[test]
    fn hdl64e_nominal_table() {
        let b = BeamTable::named("HDL-64E").expect("named");
        let deg: Vec<f64> = b.lasers.iter().map(|l| l.elevation.to_degrees()).collect();
        assert_eq!(deg.len(), 64);
        // Upper block +2 to -8.33 in 1/3 degree, lower -8.83 to -24.33 in 1/2 degree.
        assert!((deg[0] - 2.0).abs() < 1e-12 && (deg[31] + 8.333_333).abs() < 1e-5, "{deg:?}");
        assert!((deg[32] + 8.83).abs() < 1e-12 && (deg[63] + 24.33).abs() < 1e-12);
        for i in 1..64 {
            let step = if i < 32 {
                1.0 / 3.0
            } else if i == 32 {
                0.5 - 1.0 / 300.0
            } else {
                0.5
            };
            assert!((deg[i - 1] - deg[i] - step).abs() < 1e-9, "{i}: {} {}", deg[i - 1], deg[i]);
        }
        // 6 firings a packet, 3,472 packets a second (the ROS driver's 3472.17).
        assert_eq!(b.firings_per_packet(), 6);
        assert!((b.packet_rate() - 3472.2).abs() < 0.1, "{}", b.packet_rate());
        assert!(64.0 * b.laser_dt <= b.cycle);
        assert!(!b.has_32_channel_blocks() && BeamTable::hdl32e().has_32_channel_blocks());
        assert!(BeamTable::vlp16().has_32_channel_blocks());
        // Rings: the lowest laser (63) is ring 0, the highest (0) ring 63.
        let r = b.rings();
        assert_eq!((r[63], r[0], r[32], r[31]), (0, 63, 31, 32));
    }
}
