//! What a laser return measures: reflectivity by the Phong model, intensity, and the 32-bit
//! word of range and reflectivity.
//!
//! The seed's model has no ambient term and a transmitter beside the receiver. With `l` the
//! unit vector from the hit back to the sensor, `n` the unit normal turned towards it and
//! cos θ = n·l, the mirror direction is r = 2(n·l)n - l, and the specular term looks along l:
//! r·l = 2cos²θ - 1 = cos 2θ. So R = kd cos θ + ks max(0, cos 2θ)^α. (The seed prints the
//! reflection with the normalised positions P and C in place of l; with unit vectors of
//! incidence and reflection it is the form above.)

use world::Material;

/// Phong reflectivity of `m` at incidence cosine `cos_i` (clamped to 0..1).
pub fn phong(m: &Material, cos_i: f64) -> f64 {
    let c = cos_i.clamp(0.0, 1.0);
    let spec = (2.0 * c * c - 1.0).max(0.0);
    m.kd * c + if m.ks > 0.0 { m.ks * spec.powf(m.alpha) } else { 0.0 }
}

/// Intensity byte of reflectivity `r` (255 at 1 and above).
pub fn intensity(r: f64) -> u8 {
    (255.0 * r.clamp(0.0, 1.0)).round() as u8
}

/// Range units of the word, m.
pub const WORD_RANGE_STEP: f64 = 0.002;
/// Bits of range in the word (the high bits): 20, so up to 2,097 m.
pub const WORD_RANGE_BITS: u32 = 20;
/// Bits of reflectivity in the word (the low bits): 12.
pub const WORD_REFLECTIVITY_BITS: u32 = 12;

/// The 32-bit word of a return: range in 2 mm units in bits 31..12, reflectivity × 4095 in bits
/// 11..0; 0 = no return.
pub fn word(range: f64, reflectivity: f64) -> u32 {
    if !(range > 0.0 && range.is_finite()) {
        return 0;
    }
    let max_range = (1u32 << WORD_RANGE_BITS) - 1;
    let r = ((range / WORD_RANGE_STEP).round() as u64).min(max_range as u64) as u32;
    let q = (4095.0 * reflectivity.clamp(0.0, 1.0)).round() as u32;
    (r << WORD_REFLECTIVITY_BITS) | q
}

/// Range (m) and reflectivity of a word; None for 0 (no return).
pub fn unword(w: u32) -> Option<(f64, f64)> {
    (w != 0).then(|| ((w >> WORD_REFLECTIVITY_BITS) as f64 * WORD_RANGE_STEP, (w & 0xFFF) as f64 / 4095.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use world::MaterialTable;

    #[test]
    fn phong_by_hand() {
        let t = MaterialTable::standard();
        let m = |n: &str| t.get(t.id(n).expect("material")).clone();
        let cos = |deg: f64| deg.to_radians().cos();
        // R = kd cos θ + ks max(0, cos 2θ)^α, worked by hand at 0, 30 and 60 degrees.
        for (name, want) in [
            ("asphalt", [0.14, 0.105_173, 0.06]),
            ("paint", [1.15, 0.649_519, 0.375]),
            ("steel", [0.70, 0.259_808, 0.15]),
        ] {
            for (deg, w) in [0.0, 30.0, 60.0].iter().zip(want) {
                let r = phong(&m(name), cos(*deg));
                assert!((r - w).abs() < 1e-6, "{name} at {deg} deg: {r} vs {w}");
            }
        }
        for deg in [0.0, 10.0, 30.0, 45.0, 60.0, 80.0] {
            assert!(phong(&m("paint"), cos(deg)) > phong(&m("asphalt"), cos(deg)), "paint is brighter at {deg} deg");
        }
    }

    #[test]
    fn words_round_trip() {
        for (r, q) in [(1.0, 0.0), (12.345, 0.5), (99.998, 1.0), (2000.0, 0.25)] {
            let (r2, q2) = unword(word(r, q)).expect("a return");
            assert!((r2 - r).abs() <= 0.001 + 1e-12, "{r} -> {r2}");
            assert!((q2 - q).abs() <= 0.5 / 4095.0 + 1e-12);
        }
        assert_eq!(word(f64::NAN, 0.5), 0);
        assert_eq!(word(0.0, 0.5), 0);
        assert_eq!(unword(0), None);
        assert_eq!(word(1e9, 0.0) >> 12, (1 << 20) - 1, "ranges saturate");
        assert_eq!(intensity(1.15), 255);
        assert_eq!(intensity(0.5), 128);
    }
}
