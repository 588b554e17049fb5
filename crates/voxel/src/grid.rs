//! A sparse voxel grid filled from streamed points.

use crate::part::{PartError, Reader, Writer};
use crate::Error;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// Cells per axis either side of the origin: x and y in 24 bits, z in 16 (signed).
const XY_LIMIT: i64 = 1 << 23;
const Z_LIMIT: i64 = 1 << 15;
/// The grid is split into this many shards by key (fixed, so the layout does not depend on
/// the thread count); each filling thread owns whole shards.
const SHARDS: usize = 16;

/// What one voxel holds. Sums are integers, so the order points arrive in does not matter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Voxel {
    /// Points in the voxel.
    pub count: u32,
    /// Sum of their intensities.
    pub intensity_sum: u64,
    /// Sums of their red, green, blue (16-bit LAS colour; zero when the input has none).
    pub rgb_sum: [u64; 3],
    classes: Classes,
}

impl Voxel {
    /// Adds another voxel's points to this one.
    fn merge(&mut self, o: &Voxel) {
        self.count += o.count;
        self.intensity_sum += o.intensity_sum;
        for (a, b) in self.rgb_sum.iter_mut().zip(o.rgb_sum) {
            *a += b;
        }
        for (c, n) in o.classes.iter() {
            self.classes.add(c, n);
        }
    }

    /// Mean intensity.
    pub fn intensity(&self) -> f64 {
        self.intensity_sum as f64 / self.count.max(1) as f64
    }

    /// Mean colour, 16-bit per channel.
    pub fn rgb(&self) -> [u16; 3] {
        self.rgb_sum.map(|c| (c as f64 / self.count.max(1) as f64).round() as u16)
    }

    /// The most frequent class (ties: the lower code).
    pub fn class(&self) -> u8 {
        self.classes.majority()
    }
}

/// Class counts: four inline (most voxels hold one or two classes), the rest boxed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Classes {
    inline: [(u8, u32); 4],
    len: u8,
    // Boxed: 8 bytes per voxel instead of 24 for what few voxels need.
    #[allow(clippy::box_collection)]
    more: Option<Box<Vec<(u8, u32)>>>,
}

impl Classes {
    fn add(&mut self, class: u8, n: u32) {
        for e in &mut self.inline[..self.len as usize] {
            if e.0 == class {
                e.1 += n;
                return;
            }
        }
        if (self.len as usize) < self.inline.len() {
            self.inline[self.len as usize] = (class, n);
            self.len += 1;
            return;
        }
        let more = self.more.get_or_insert_with(Default::default);
        match more.iter_mut().find(|e| e.0 == class) {
            Some(e) => e.1 += n,
            None => more.push((class, n)),
        }
    }

    fn iter(&self) -> impl Iterator<Item = (u8, u32)> + '_ {
        self.inline[..self.len as usize].iter().chain(self.more.iter().flat_map(|m| m.iter())).copied()
    }

    fn majority(&self) -> u8 {
        self.iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))).map_or(0, |e| e.0)
    }
}

/// Multiplicative hashing of the packed keys (they are not attacker-chosen).
#[derive(Debug, Default, Clone, Copy)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

type Shard = HashMap<u64, Voxel, BuildHasherDefault<KeyHasher>>;

fn pack(k: [i64; 3]) -> u64 {
    ((k[0] as u64 & 0xFF_FFFF) << 40) | ((k[1] as u64 & 0xFF_FFFF) << 16) | (k[2] as u64 & 0xFFFF)
}

fn unpack(p: u64) -> [i32; 3] {
    let x = ((p >> 40) as i64) << 40 >> 40;
    let y = (((p >> 16) & 0xFF_FFFF) as i64) << 40 >> 40;
    let z = ((p & 0xFFFF) as i64) << 48 >> 48;
    [x as i32, y as i32, z as i32]
}

fn shard_of(p: u64) -> usize {
    (p.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as usize % SHARDS
}

/// A voxel's key in a grid (its packed index), from [`Lattice::key`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VoxelKey(u64);

/// Where a grid's voxels are: cubes of side `size`, axis-aligned in the local frame (map minus
/// `origin`); voxel (i, j, k) spans `origin + [i, j, k] · size` to `origin + [i+1, j+1, k+1] ·
/// size`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lattice {
    size: f64,
    origin: [f64; 3],
}

impl Lattice {
    /// Voxel side, m.
    pub fn size(&self) -> f64 {
        self.size
    }

    /// Map coordinates of the local frame's origin.
    pub fn origin(&self) -> [f64; 3] {
        self.origin
    }

    /// Map coordinates of a voxel's centre.
    pub fn centre(&self, index: [i32; 3]) -> [f64; 3] {
        [0, 1, 2].map(|a| self.origin[a] + (index[a] as f64 + 0.5) * self.size)
    }

    /// Local coordinates of a lattice corner (a voxel's lowest corner), m.
    pub fn local(&self, corner: [i32; 3]) -> [f64; 3] {
        corner.map(|c| c as f64 * self.size)
    }

    /// The key of the voxel holding a map point, or an error when it lies beyond what a grid
    /// indexes (±8.3 M cells across, ±32 k up) or is not finite.
    pub fn key(&self, x: f64, y: f64, z: f64) -> Result<VoxelKey, Error> {
        let inv = 1.0 / self.size;
        let (i, j, k) = ((x - self.origin[0]) * inv, (y - self.origin[1]) * inv, (z - self.origin[2]) * inv);
        let xy = XY_LIMIT as f64;
        if !(i.abs() < xy && j.abs() < xy && k.abs() < Z_LIMIT as f64) {
            return Err(Error::Invalid(format!(
                "point ({x}, {y}, {z}) is too far from the voxel origin {:?} for {} m voxels",
                self.origin, self.size
            )));
        }
        // floor() of values this small, without a libm call on baseline x86-64.
        let floor = |v: f64| {
            let t = v as i64;
            t - ((t as f64) > v) as i64
        };
        Ok(VoxelKey(pack([floor(i), floor(j), floor(k)])))
    }
}

/// A sparse grid of voxels on a [`Lattice`].
#[derive(Debug, Clone)]
pub struct VoxelGrid {
    lattice: Lattice,
    shards: Vec<Shard>,
    has_rgb: bool,
    points: u64,
}

impl VoxelGrid {
    /// An empty grid; `size` in metres (at least 1 mm).
    pub fn new(size: f64, origin: [f64; 3]) -> Result<VoxelGrid, Error> {
        if !(size.is_finite() && size >= 0.001) {
            return Err(Error::Invalid(format!("voxel size {size}: must be at least 0.001 m")));
        }
        if origin.iter().any(|o| !o.is_finite()) {
            return Err(Error::Invalid(format!("voxel origin {origin:?}: not finite")));
        }
        let lattice = Lattice { size, origin };
        Ok(VoxelGrid { lattice, shards: vec![Shard::default(); SHARDS], has_rgb: false, points: 0 })
    }

    /// Where the voxels are (and the keys of map points, apart from the grid, so keys can be
    /// computed while the grid fills).
    pub fn lattice(&self) -> Lattice {
        self.lattice
    }

    /// Whether any added points carried colour.
    pub fn has_rgb(&self) -> bool {
        self.has_rgb
    }

    /// Occupied voxels.
    pub fn len(&self) -> usize {
        self.shards.iter().map(|s| s.len()).sum()
    }

    /// No voxel occupied.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Points added.
    pub fn points(&self) -> u64 {
        self.points
    }

    /// Adds points (map coordinates, with intensity, class and optionally colour; all slices as
    /// long as `x`), on up to `threads` threads. An error names the first point (index within
    /// the call) that cannot be placed; nothing of the call is added then.
    #[allow(clippy::too_many_arguments)]
    pub fn add(
        &mut self,
        x: &[f64],
        y: &[f64],
        z: &[f64],
        intensity: &[u16],
        class: &[u8],
        rgb: Option<&[[u16; 3]]>,
        threads: usize,
    ) -> Result<(), Error> {
        let n = x.len();
        if y.len() != n || z.len() != n {
            return Err(Error::Invalid("point columns of different lengths".into()));
        }
        // Keys first, so a bad point leaves the grid untouched.
        let keys: Vec<VoxelKey> = (0..n)
            .map(|i| self.lattice.key(x[i], y[i], z[i]).map_err(|e| Error::Invalid(format!("point {i}: {e}"))))
            .collect::<Result<_, _>>()?;
        self.add_keyed(&keys, intensity, class, rgb, threads)
    }

    /// Adds points by their keys (from [`Lattice::key`] of this grid's lattice), with intensity, class
    /// and optionally colour (all slices as long as `keys`), on up to `threads` threads, each
    /// filling its own shards.
    pub fn add_keyed(
        &mut self,
        keys: &[VoxelKey],
        intensity: &[u16],
        class: &[u8],
        rgb: Option<&[[u16; 3]]>,
        threads: usize,
    ) -> Result<(), Error> {
        let n = keys.len();
        if intensity.len() != n || class.len() != n || rgb.is_some_and(|c| c.len() != n) {
            return Err(Error::Invalid("point columns of different lengths".into()));
        }
        let threads = threads.clamp(1, SHARDS);
        let per = SHARDS.div_ceil(threads);
        std::thread::scope(|sc| {
            for (t, shards) in self.shards.chunks_mut(per).enumerate() {
                sc.spawn(move || {
                    // Successive points mostly fall in the same voxel: a run of one key is
                    // summed here and merged into the map once.
                    let (first, mine) = (t * per, shards.len());
                    let mut run: Option<(u64, Voxel)> = None;
                    let mut flush = |run: &mut Option<(u64, Voxel)>| {
                        if let Some((key, v)) = run.take() {
                            shards[shard_of(key) - first].entry(key).or_default().merge(&v);
                        }
                    };
                    for (i, &VoxelKey(key)) in keys.iter().enumerate() {
                        let s = shard_of(key);
                        if s < first || s >= first + mine {
                            continue;
                        }
                        if run.as_ref().is_none_or(|r| r.0 != key) {
                            flush(&mut run);
                            run = Some((key, Voxel::default()));
                        }
                        if let Some((_, v)) = run.as_mut() {
                            v.count += 1;
                            v.intensity_sum += intensity[i] as u64;
                            if let Some(c) = rgb {
                                for (sum, c) in v.rgb_sum.iter_mut().zip(c[i]) {
                                    *sum += c as u64;
                                }
                            }
                            v.classes.add(class[i], 1);
                        }
                    }
                    flush(&mut run);
                });
            }
        });
        self.has_rgb |= rgb.is_some() && n > 0;
        self.points += n as u64;
        Ok(())
    }

    /// Appends the grid (lattice, voxels in key order) to `w`, for [`VoxelGrid::merge_part`].
    pub fn write_part(&self, w: &mut Writer) {
        w.f64(self.lattice.size);
        self.lattice.origin.iter().for_each(|&o| w.f64(o));
        w.u8(u8::from(self.has_rgb));
        w.u64(self.points);
        let mut keys: Vec<(&u64, &Voxel)> = self.shards.iter().flat_map(|s| s.iter()).collect();
        keys.sort_unstable_by_key(|e| *e.0);
        w.u64(keys.len() as u64);
        for (&k, v) in keys {
            w.u64(k);
            w.u32(v.count);
            w.u64(v.intensity_sum);
            v.rgb_sum.iter().for_each(|&c| w.u64(c));
            let classes: Vec<(u8, u32)> = v.classes.iter().collect();
            w.u16(classes.len() as u16);
            for (c, n) in classes {
                w.u8(c);
                w.u32(n);
            }
        }
    }

    /// Adds the voxels of a part written by [`VoxelGrid::write_part`] of a grid on the same
    /// lattice: the sums are integers, so the parts of any split of the points add up to the
    /// grid of all of them.
    pub fn merge_part(&mut self, r: &mut Reader) -> Result<(), PartError> {
        let size = r.f64()?;
        let origin = [r.f64()?, r.f64()?, r.f64()?];
        if size.to_bits() != self.lattice.size.to_bits()
            || origin.map(f64::to_bits) != self.lattice.origin.map(f64::to_bits)
        {
            return Err(PartError::OtherLattice {
                size,
                origin,
                expected_size: self.lattice.size,
                expected_origin: self.lattice.origin,
            });
        }
        self.has_rgb |= r.u8()? != 0;
        self.points += r.u64()?;
        let n = r.u64()?;
        for _ in 0..n {
            let key = r.u64()?;
            let mut v = Voxel { count: r.u32()?, intensity_sum: r.u64()?, ..Voxel::default() };
            for c in &mut v.rgb_sum {
                *c = r.u64()?;
            }
            for _ in 0..r.u16()? {
                let (c, k) = (r.u8()?, r.u32()?);
                v.classes.add(c, k);
            }
            self.shards[shard_of(key)].entry(key).or_default().merge(&v);
        }
        Ok(())
    }

    /// The voxel at an index.
    pub fn get(&self, index: [i32; 3]) -> Option<&Voxel> {
        let key = pack(index.map(i64::from));
        self.shards[shard_of(key)].get(&key)
    }

    /// Every voxel with its index, sorted by index (x, then y, then z).
    pub fn sorted(&self) -> Vec<([i32; 3], &Voxel)> {
        let mut v: Vec<([i32; 3], &Voxel)> =
            self.shards.iter().flat_map(|s| s.iter().map(|(k, v)| (unpack(*k), v))).collect();
        v.sort_unstable_by_key(|e| e.0);
        v
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn keys_pack_and_unpack_with_sign() {
        for k in [[0, 0, 0], [-1, -1, -1], [8_388_607, -8_388_608, 32_767], [-5, 7, -32_768]] {
            assert_eq!(unpack(pack(k.map(i64::from))), k);
        }
    }

    #[test]
    fn classes_count_exactly_beyond_four() {
        let mut c = Classes::default();
        for (class, n) in [(1, 2), (2, 1), (3, 1), (4, 1), (5, 3), (6, 1), (5, 1)] {
            c.add(class, n);
        }
        assert_eq!(c.majority(), 5);
        c.add(1, 2);
        assert_eq!(c.majority(), 1, "tie of 4 and 4: the lower code");
        assert_eq!(c.iter().map(|e| e.1).sum::<u32>(), 12);
    }

    #[test]
    fn far_points_are_an_error_and_leave_the_grid_untouched() {
        let mut g = VoxelGrid::new(0.01, [0.0; 3]).unwrap();
        let r = g.add(&[1.0, 1e6], &[0.0, 0.0], &[0.0, 0.0], &[1, 1], &[2, 2], None, 2);
        assert!(r.is_err_and(|e| e.to_string().contains("point 1")));
        assert!(g.is_empty());
    }
}
