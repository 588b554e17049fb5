//! Seeded noise that depends only on (seed, firing, laser), never on evaluation order.

/// SplitMix64 of a key.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform number in (0, 1) for (seed, firing, laser, stream).
pub(crate) fn uniform(seed: u64, firing: u64, laser: u32, stream: u32) -> f64 {
    let h = mix(mix(mix(seed) ^ firing) ^ ((laser as u64) << 32 | stream as u64));
    ((h >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// A standard normal number for (seed, firing, laser) (Box-Muller).
pub(crate) fn normal(seed: u64, firing: u64, laser: u32) -> f64 {
    let (a, b) = (uniform(seed, firing, laser, 1), uniform(seed, firing, laser, 2));
    (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
}
