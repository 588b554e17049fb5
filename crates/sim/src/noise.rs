//! Seeded, deterministic random fields for surface micro-texture.
//!
//! Value noise on a unit lattice (an integer hash of the lattice corner and the seed, smoothly
//! interpolated), summed over octaves. [`Texture`] scales it to a stated RMS over a stated
//! correlation length. Same seed, same field, on every platform (integer hashing, no global
//! state).

/// SplitMix64-style hash of a lattice corner.
fn hash(seed: u64, ix: i64, iy: i64) -> f64 {
    let mut z =
        seed ^ (ix as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (iy as u64).wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    // Uniform in [-1, 1).
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// `x.floor()` and its integer, for |x| < 2^62 (the lattice coordinates of any road); `floor`
/// is a library call on baseline x86-64, this is two instructions. Same value as `floor`.
#[inline]
fn floor_i(x: f64) -> (f64, i64) {
    let i = x as i64;
    let i = if (i as f64) > x { i - 1 } else { i };
    (i as f64, i)
}

fn smooth(t: f64) -> f64 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

/// Value noise at (x, y), in [-1, 1].
pub fn value_noise(seed: u64, x: f64, y: f64) -> f64 {
    let ((fx, ix), (fy, iy)) = (floor_i(x), floor_i(y));
    let (tx, ty) = (smooth(x - fx), smooth(y - fy));
    let a = hash(seed, ix, iy);
    let b = hash(seed, ix + 1, iy);
    let c = hash(seed, ix, iy + 1);
    let d = hash(seed, ix + 1, iy + 1);
    let ab = a + (b - a) * tx;
    let cd = c + (d - c) * tx;
    ab + (cd - ab) * ty
}

/// Sum of `octaves` value-noise layers, each at twice the frequency and half the amplitude.
pub fn fbm(seed: u64, x: f64, y: f64, octaves: u32) -> f64 {
    let (mut sum, mut amp, mut f) = (0.0, 1.0, 1.0);
    for o in 0..octaves {
        sum += amp * value_noise(seed.wrapping_add(o as u64 * 0x1000_0000_01B3), x * f, y * f);
        amp *= 0.5;
        f *= 2.0;
    }
    sum
}

/// A random height field with a stated RMS (m) and correlation length (m).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Texture {
    seed: u64,
    scale: f64,
    correlation: f64,
    octaves: u32,
}

impl Texture {
    /// A texture whose RMS over a large area is `rms` m; `correlation` m is the lattice spacing
    /// of the coarsest octave.
    pub fn new(seed: u64, rms: f64, correlation: f64, octaves: u32) -> Texture {
        // The raw RMS of the sum, measured once on a fixed sample of 40,000 points.
        let mut sq = 0.0;
        let n = 200;
        for i in 0..n {
            for j in 0..n {
                let v = fbm(seed, i as f64 * 0.731 + 0.1, j as f64 * 0.619 + 0.3, octaves);
                sq += v * v;
            }
        }
        let raw = (sq / (n * n) as f64).sqrt();
        Texture { seed, scale: if raw > 0.0 { rms / raw } else { 0.0 }, correlation, octaves }
    }

    /// A bound on |height|, m: every octave's noise lies in [-1, 1].
    pub fn max_abs(&self) -> f64 {
        self.scale * (0..self.octaves).map(|o| 0.5f64.powi(o as i32)).sum::<f64>()
    }

    /// Height at (x, y), m.
    pub fn at(&self, x: f64, y: f64) -> f64 {
        self.scale * fbm(self.seed, x / self.correlation, y / self.correlation, self.octaves)
    }
}

/// A [`Texture`] along one line x = const, y in a range: per octave, the lattice values
/// interpolated in x, computed when first needed and kept, so a height costs one interpolation
/// per octave instead of four hashes. Same arithmetic as [`Texture::at`], so the same bits;
/// outside the range it falls back to it. Not `Sync` (the columns fill in as it is used).
#[derive(Debug, Clone, PartialEq)]
pub struct TextureLine {
    texture: Texture,
    x: f64,
    /// Per octave: seed, lattice x index, x weight, lattice y index of `cols[0]`, the columns
    /// (NaN until computed).
    octaves: Vec<LineOctave>,
}

#[derive(Debug, Clone, PartialEq)]
struct LineOctave {
    seed: u64,
    ix: i64,
    tx: f64,
    j0: i64,
    cols: Vec<std::cell::Cell<f64>>,
}

impl LineOctave {
    fn col(&self, k: usize) -> Option<f64> {
        let c = self.cols.get(k)?;
        let v = c.get();
        if !v.is_nan() {
            return Some(v);
        }
        let iy = self.j0 + k as i64;
        let a = hash(self.seed, self.ix, iy);
        let b = hash(self.seed, self.ix + 1, iy);
        let v = a + (b - a) * self.tx;
        c.set(v);
        Some(v)
    }
}

impl Texture {
    /// The texture along x = `x` for y in [y0, y1].
    pub fn line(&self, x: f64, y0: f64, y1: f64) -> TextureLine {
        let (xs, ys0, ys1) = (x / self.correlation, y0 / self.correlation, y1 / self.correlation);
        let mut octaves = Vec::with_capacity(self.octaves as usize);
        let mut f = 1.0;
        for o in 0..self.octaves {
            let xf = xs * f;
            let (fx, ix) = floor_i(xf);
            let (j0, j1) = (floor_i(ys0 * f).1, floor_i(ys1 * f).1 + 1);
            let n = usize::try_from(j1 - j0 + 1).unwrap_or(0).min(1 << 24);
            octaves.push(LineOctave {
                seed: self.seed.wrapping_add(o as u64 * 0x1000_0000_01B3),
                ix,
                tx: smooth(xf - fx),
                j0,
                cols: vec![std::cell::Cell::new(f64::NAN); n],
            });
            f *= 2.0;
        }
        TextureLine { texture: *self, x, octaves }
    }
}

impl TextureLine {
    /// Height at (x, y), m; equal to `Texture::at(x, y)`.
    pub fn at(&self, y: f64) -> f64 {
        let ys = y / self.texture.correlation;
        let (mut sum, mut amp, mut f) = (0.0, 1.0, 1.0);
        for oct in &self.octaves {
            let yf = ys * f;
            let (fy, iy) = floor_i(yf);
            let cols = usize::try_from(iy.wrapping_sub(oct.j0)).ok().and_then(|k| Some((oct.col(k)?, oct.col(k + 1)?)));
            let Some((ab, cd)) = cols else {
                return self.texture.at(self.x, y);
            };
            let ty = smooth(yf - fy);
            sum += amp * (ab + (cd - ab) * ty);
            amp *= 0.5;
            f *= 2.0;
        }
        self.texture.scale * sum
    }
}

/// A uniform variate in (0, 1] for a key of four integers (SplitMix64 finaliser).
pub fn uniform(seed: u64, a: u64, b: u64, c: u64) -> f64 {
    let mut z = seed
        ^ a.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ b.wrapping_mul(0xC2B2_AE3D_27D4_EB4F)
        ^ c.wrapping_mul(0x1656_67B1_9E37_79F9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    ((z >> 11) + 1) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texture_has_the_stated_rms_and_is_deterministic() {
        let t = Texture::new(7, 0.001, 0.05, 4);
        // RMS over an area independent of the calibration sample (different spacing and offset).
        let mut sq = 0.0;
        let n = 300;
        for i in 0..n {
            for j in 0..n {
                let v = t.at(i as f64 * 0.0173 + 11.0, j as f64 * 0.0191 - 3.0);
                sq += v * v;
            }
        }
        let rms = (sq / (n * n) as f64).sqrt();
        assert!((rms - 0.001).abs() < 0.1e-3, "rms {rms}");
        assert_eq!(t.at(1.234, 5.678), Texture::new(7, 0.001, 0.05, 4).at(1.234, 5.678));
        assert_ne!(t.at(1.234, 5.678), Texture::new(8, 0.001, 0.05, 4).at(1.234, 5.678));
    }

    #[test]
    fn texture_line_gives_the_same_bits() {
        let t = Texture::new(3, 0.001, 0.05, 4);
        for x in [-7.31, 0.0, 12.345, 1234.5678] {
            let line = t.line(x, -6.4, 5.3);
            for i in 0..5000 {
                let y = -7.0 + i as f64 * 0.002713;
                assert_eq!(line.at(y).to_bits(), t.at(x, y).to_bits(), "({x}, {y})");
            }
        }
    }

    #[test]
    fn uniform_is_in_the_unit_interval_and_flat() {
        let n = 100_000;
        let (mut sum, mut lo, mut hi) = (0.0, 1.0f64, 0.0f64);
        for i in 0..n {
            let u = uniform(5, 1, i, 7);
            sum += u;
            lo = lo.min(u);
            hi = hi.max(u);
        }
        assert!(lo > 0.0 && hi <= 1.0);
        assert!((sum / n as f64 - 0.5).abs() < 0.005);
    }
}
