//! Where the road surface lies: a run of points' candidates by slab ([`Found`], near and far ones
//! apart), what the candidates say of their slab (counts, s extents and a histogram of heights near
//! the reference line, [`SlabStats`]), and the road surface's height above the OpenDRIVE surface
//! along s found from them ([`Profile`]), zero where the OpenDRIVE surface is right.

use super::{
    fits::floor,
    options::{SurfaceOptions, SurfaceUnit},
    slabs::pad_rows,
    spill::{Candidate, SlabPoint, SLAB},
};
use std::collections::BTreeMap;

/// The candidates of a run of points by slab, in order, and what the run adds to what a
/// builder saw.
pub(super) struct Found {
    /// Candidates by slab key (see [`far_key`]), in order.
    pub(super) slabs: Vec<(i64, Vec<SlabPoint>)>,
    /// The slabs that get candidates.
    slab_range: (i64, i64),
    /// How far a slab's nodes reach into its neighbours, m.
    reach: f64,
    /// The s range a counting pass counts.
    counted: Option<(f64, f64)>,
    /// Near and far candidates: an s range whose candidates go to one slab only, the `slabs`
    /// entry at the index (empty: none yet): the interior of the last slab a candidate went to
    /// alone.
    only: [(f64, f64, usize); 2],
    /// What the candidates say of their own slabs (the last one used most likely first).
    pub(super) stats: Vec<(i64, SlabStats)>,
    /// The band of t whose heights the slabs' histograms count, m.
    hist_t: (f64, f64),
}

impl Found {
    /// Nothing found yet, for the slabs of `slab_range`; histograms of the heights of the
    /// candidates within `hist_t`.
    pub(super) fn new(
        opts: &SurfaceOptions,
        unit: Option<SurfaceUnit>,
        slab_range: (i64, i64),
        hist_t: (f64, f64),
    ) -> Found {
        let counted = match unit {
            Some(SurfaceUnit::Count(a, b)) => Some((a, b)),
            _ => None,
        };
        Found {
            slabs: Vec::new(),
            slab_range,
            // The pad's rows and the half cell a point lies from its node, and some.
            reach: (pad_rows(opts) as f64 + 1.0) * opts.cell,
            counted,
            only: [(f64::INFINITY, f64::NEG_INFINITY, 0); 2],
            stats: Vec::new(),
            hist_t,
        }
    }

    /// Puts candidate `c` (`far`: beyond `max_height`, within `search_height`) into the slabs
    /// that get it: its own, and a neighbour when that slab's nodes reach it.
    #[inline(always)]
    pub(super) fn add(&mut self, c: Candidate, far: bool) {
        // Most candidates lie inside the slab of the last one, beyond its neighbours' reach.
        let (a, b, index) = self.only[usize::from(far)];
        if c.s >= a && c.s < b {
            let (k, v) = &mut self.slabs[index];
            v.push(SlabPoint { ds: (c.s - slab_of_key(*k) as f64 * SLAB) as f32, t: c.t, h: c.h });
        } else {
            self.add_by_slab(c, far);
        }
        // A counting pass counts its share only (and keeps none: its slab range is empty);
        // every pass counts the heights of every candidate it sees.
        let counted = !matches!(self.counted, Some((a, b)) if c.s < a || c.s >= b);
        let hist = c.t as f64 >= self.hist_t.0 && c.t as f64 <= self.hist_t.1;
        if counted || hist {
            let k = floor(c.s / SLAB) as i64;
            let st = self.stats_of(k);
            if counted {
                st.count(c.s, far);
            }
            if hist {
                st.add_height(c.h);
            }
        }
    }

    /// The stats of slab `k`.
    #[inline(always)]
    fn stats_of(&mut self, k: i64) -> &mut SlabStats {
        let i = match self.stats.last() {
            Some((j, _)) if *j == k => self.stats.len() - 1,
            _ => match self.stats.iter().position(|(j, _)| *j == k) {
                Some(i) => {
                    // The last used last.
                    let e = self.stats.remove(i);
                    self.stats.push(e);
                    self.stats.len() - 1
                }
                None => {
                    self.stats.push((k, SlabStats::default()));
                    self.stats.len() - 1
                }
            },
        };
        &mut self.stats[i].1
    }

    /// Puts candidate `c` into the slabs that get it, and notes the interior of its own slab
    /// when only that one does (see `only`).
    fn add_by_slab(&mut self, c: Candidate, far: bool) {
        let (reach, (lo, hi)) = (self.reach, self.slab_range);
        let wanted = |k: i64| (lo..=hi).contains(&k);
        let k = floor(c.s / SLAB);
        let ki = k as i64;
        let key = |k: i64| if far { far_key(k) } else { k };
        let own = wanted(ki).then(|| self.put(key(ki), ki, c));
        let mut alone = true;
        if c.s - k * SLAB < reach && wanted(ki - 1) {
            self.put(key(ki - 1), ki - 1, c);
            alone = false;
        }
        if (k + 1.0) * SLAB - c.s < reach && wanted(ki + 1) {
            self.put(key(ki + 1), ki + 1, c);
            alone = false;
        }
        if let (true, Some(index)) = (alone, own) {
            // Both neighbours' reach, and a micrometre more (far above the rounding of these
            // sums), is outside this range: whatever the neighbours' range, the tests above
            // put its candidates into slab `ki` alone.
            let margin = reach + 1e-6;
            self.only[usize::from(far)] = (k * SLAB + margin, (k + 1.0) * SLAB - margin, index);
        }
    }

    /// Appends candidate `c` to the run of slab `k` under `key` (the last one is the
    /// likeliest); returns the run's index in `slabs`.
    #[inline(always)]
    fn put(&mut self, key: i64, k: i64, c: Candidate) -> usize {
        let p = SlabPoint { ds: (c.s - k as f64 * SLAB) as f32, t: c.t, h: c.h };
        match self.slabs.iter().rposition(|(j, _)| *j == key) {
            Some(i) => {
                self.slabs[i].1.push(p);
                i
            }
            None => {
                self.slabs.push((key, vec![p]));
                self.slabs.len() - 1
            }
        }
    }
}

/// Slab keys of far candidates (see [`SurfaceOptions::search_height`]) are the slab's plus
/// this: slabs lie within |k| < 2^40 (s up to 2.2e12 m; `RoadFrame` keeps s on the road).
const FAR: i64 = 1 << 41;

/// The key of slab `k`'s far candidates.
pub(super) fn far_key(k: i64) -> i64 {
    k + FAR
}

/// The slab of a key.
fn slab_of_key(key: i64) -> i64 {
    if key >= FAR / 2 {
        key - FAR
    } else {
        key
    }
}

/// Height bins of the slabs' histograms, m.
const HIST_BIN: f64 = 0.05;

/// What the candidates say of their slab: counts and s extents of the near ones (within
/// `max_height` of the OpenDRIVE surface) and of all, and a histogram of the heights (above the
/// OpenDRIVE surface) of those near the reference line, in bins of [`HIST_BIN`].
#[derive(Debug, Clone)]
pub(crate) struct SlabStats {
    pub(super) near: u64,
    pub(super) all: u64,
    pub(super) near_s: (f64, f64),
    pub(super) all_s: (f64, f64),
    /// (bin, count), in no order.
    hist: Vec<(i32, u32)>,
    /// The index in `hist` of the last bin added to.
    last: usize,
}

impl Default for SlabStats {
    fn default() -> Self {
        let none = (f64::INFINITY, f64::NEG_INFINITY);
        SlabStats { near: 0, all: 0, near_s: none, all_s: none, hist: Vec::new(), last: 0 }
    }
}

impl SlabStats {
    /// Counts a candidate at `s` (`far`: not near).
    #[inline(always)]
    fn count(&mut self, s: f64, far: bool) {
        // Comparisons, not min and max: s is never NaN (`RoadFrame` keeps it on the road).
        let ext = |e: &mut (f64, f64)| {
            if s < e.0 {
                e.0 = s;
            }
            if s > e.1 {
                e.1 = s;
            }
        };
        self.all += 1;
        ext(&mut self.all_s);
        if !far {
            self.near += 1;
            ext(&mut self.near_s);
        }
    }

    /// Adds a height to the histogram.
    #[inline(always)]
    pub(crate) fn add_height(&mut self, h: f32) {
        let b = (h as f64 / HIST_BIN).floor().clamp(i32::MIN as f64, i32::MAX as f64) as i32;
        self.add_bin(b, 1);
    }

    fn add_bin(&mut self, b: i32, n: u32) {
        if let Some(e) = self.hist.get_mut(self.last).filter(|e| e.0 == b) {
            e.1 += n;
            return;
        }
        match self.hist.iter().position(|e| e.0 == b) {
            Some(i) => {
                self.hist[i].1 += n;
                self.last = i;
            }
            None => {
                self.hist.push((b, n));
                self.last = self.hist.len() - 1;
            }
        }
    }

    /// The median of the heights within `half` of `centre` (m), interpolated within the bins:
    /// the middle of a layer [`SlabStats::layer`] found (whose lowest bin leans low).
    pub(crate) fn median_near(&self, centre: f64, half: f64) -> Option<f64> {
        let (lo, hi) = (((centre - half) / HIST_BIN).floor() as i64, ((centre + half) / HIST_BIN).floor() as i64);
        let mut bins: Vec<(i32, u32)> =
            self.hist.iter().copied().filter(|e| (lo..=hi).contains(&(e.0 as i64))).collect();
        bins.sort_unstable();
        let total: u64 = bins.iter().map(|b| b.1 as u64).sum();
        if total == 0 {
            return None;
        }
        let half_n = total as f64 / 2.0;
        let mut below = 0.0;
        for &(b, n) in &bins {
            if below + n as f64 >= half_n {
                return Some((b as f64 + (half_n - below) / n as f64) * HIST_BIN);
            }
            below += n as f64;
        }
        None
    }

    /// Adds what another run saw of the same slab.
    pub(super) fn merge(&mut self, o: &SlabStats) {
        self.near += o.near;
        self.all += o.all;
        self.near_s = (self.near_s.0.min(o.near_s.0), self.near_s.1.max(o.near_s.1));
        self.all_s = (self.all_s.0.min(o.all_s.0), self.all_s.1.max(o.all_s.1));
        for &(b, n) in &o.hist {
            self.add_bin(b, n);
        }
    }

    /// The height of the road surface near the reference line above the OpenDRIVE surface:
    /// the lowest dense layer of the histogram (the lowest bin whose three bins around it hold
    /// at least 1/[`LAYER_SHARE`] as many heights as the densest three: multipath below the
    /// surface is sparser, a car roof above it may be denser), as the mean of those bins' centres weighted by
    /// their counts. `None` with fewer than [`HIST_MIN`] heights.
    pub(crate) fn layer(&self) -> Option<f64> {
        let mut bins = self.hist.clone();
        bins.sort_unstable();
        let total: u64 = bins.iter().map(|b| b.1 as u64).sum();
        if total < HIST_MIN {
            return None;
        }
        let count = |b: i64| -> u64 {
            let Ok(b) = i32::try_from(b) else { return 0 };
            bins.binary_search_by_key(&b, |e| e.0).map_or(0, |i| bins[i].1 as u64)
        };
        let window = |b: i32| (b as i64 - 1..=b as i64 + 1).map(count).sum::<u64>();
        let peak = bins.iter().map(|e| window(e.0)).max()?;
        let low = bins.iter().map(|e| e.0).find(|&b| LAYER_SHARE * window(b) >= peak)?;
        let (mut sum, mut n) = (0.0, 0.0);
        for b in low as i64 - 1..=low as i64 + 1 {
            let c = count(b) as f64;
            sum += c * (b as f64 + 0.5) * HIST_BIN;
            n += c;
        }
        Some(sum / n)
    }
}

/// A layer is dense with at least 1/this of the densest one's heights.
const LAYER_SHARE: u64 = 4;

/// Heights a slab's histogram needs for its layer to count.
const HIST_MIN: u64 = 20;

/// Slabs either side whose layers the road surface's profile takes the median of.
const PROFILE_HALF: i64 = 2;

/// Half the width of the band of t (within the grid's width) whose heights find the road
/// surface, m.
pub(crate) const PROFILE_T: f64 = 2.0;

/// The road surface's height above the OpenDRIVE surface along s: a value per slab (at its
/// middle), interpolated linearly between; zero where the OpenDRIVE surface is right (within
/// a third of `max_height`), so that the band of `max_height` is the OpenDRIVE surface's and
/// the grid the same bits as without a search.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Profile {
    /// The first slab, and the value of each slab from it.
    k0: i64,
    off: Vec<f64>,
}

impl Profile {
    /// The profile of the slabs' histograms: each slab's layer, the median of those of the
    /// slabs within [`PROFILE_HALF`] (a car hiding the road in one slab, a sparse slab at the
    /// survey's end, leave it), zero when within `zero` of the OpenDRIVE surface; a slab
    /// without a layer near takes the nearest slab's value.
    pub(super) fn of(stats: &BTreeMap<i64, SlabStats>, zero: f64) -> Profile {
        let (Some((&k0, _)), Some((&k1, _))) = (stats.first_key_value(), stats.last_key_value()) else {
            return Profile::default();
        };
        let n = (k1 - k0 + 1) as usize;
        let raw: Vec<Option<f64>> = (k0..=k1).map(|k| stats.get(&k).and_then(SlabStats::layer)).collect();
        let mut smooth: Vec<Option<f64>> = Vec::with_capacity(n);
        let mut near = Vec::new();
        for i in 0..n {
            near.clear();
            let (a, b) = (i.saturating_sub(PROFILE_HALF as usize), (i + PROFILE_HALF as usize + 1).min(n));
            near.extend(raw[a..b].iter().flatten().copied());
            smooth.push(if near.is_empty() {
                None
            } else {
                near.sort_unstable_by(f64::total_cmp);
                let m = near.len();
                Some(if m % 2 == 1 { near[m / 2] } else { 0.5 * (near[m / 2 - 1] + near[m / 2]) })
            });
        }
        // Slabs without a value: the nearest one's (the lower on a tie), zero without any.
        let mut next: Vec<Option<usize>> = vec![None; n];
        for i in (0..n).rev() {
            next[i] = if smooth[i].is_some() { Some(i) } else { next.get(i + 1).copied().flatten() };
        }
        let mut prev = None;
        let mut off = vec![0.0; n];
        for (i, o) in off.iter_mut().enumerate() {
            if smooth[i].is_some() {
                prev = Some(i);
            }
            let j = match (prev, next[i]) {
                (Some(p), Some(q)) => Some(if i - p <= q - i { p } else { q }),
                (p, q) => p.or(q),
            };
            *o = j.and_then(|j| smooth[j]).filter(|v| v.abs() > zero).unwrap_or(0.0);
        }
        Profile { k0, off }
    }

    /// The value of slab `k` (the first's or the last's beyond them).
    pub(super) fn value(&self, k: i64) -> f64 {
        if self.off.is_empty() {
            return 0.0;
        }
        let i = (k - self.k0).clamp(0, self.off.len() as i64 - 1) as usize;
        self.off[i]
    }

    /// The road surface's height above the OpenDRIVE surface at `s`.
    pub(super) fn at(&self, s: f64) -> f64 {
        let x = s / SLAB - 0.5;
        let k = floor(x);
        let f = x - k;
        let (a, b) = (self.value(k as i64), self.value(k as i64 + 1));
        if a == b {
            a
        } else {
            a + (b - a) * f
        }
    }

    /// Whether the profile is zero over slab `k` and its neighbours' margins.
    pub(super) fn zero_around(&self, k: i64) -> bool {
        (k - 1..=k + 1).all(|j| self.value(j) == 0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_go_to_the_slabs_whose_nodes_reach_them() {
        // Two passes over slabs -2..=5 (of which 0..=3 get candidates), steps of 3 mm with a
        // few landing exactly on slab ends and reach limits, and some jumps back.
        let opts = SurfaceOptions::default();
        let mut found = Found::new(&opts, None, (0, 3), (0.0, 0.0));
        let reach = found.reach;
        let mut s_all = Vec::new();
        for pass in 0..2 {
            let mut s = -3.0 + 0.0011 * pass as f64;
            while s < 11.0 {
                s_all.push(s);
                s += 0.003;
                if s_all.len() % 997 == 0 {
                    s -= 0.05;
                }
            }
        }
        for k in -2..=5 {
            let k = k as f64 * SLAB;
            s_all.extend([k, k + reach, k - reach, k + reach + 1e-6, k - reach - 1e-6]);
        }
        let mut want: BTreeMap<i64, Vec<(f32, f32)>> = BTreeMap::new();
        for (i, &s) in s_all.iter().enumerate() {
            let c = Candidate { s, t: i as f32, h: 0.0 };
            found.add(c, false);
            // The rule: its own slab, and a neighbour whose nodes reach it; slabs 0..=3 only.
            let k = (s / SLAB).floor();
            for (j, gets) in [(k, true), (k - 1.0, s - k * SLAB < reach), (k + 1.0, (k + 1.0) * SLAB - s < reach)] {
                if gets && (0.0..=3.0).contains(&j) {
                    want.entry(j as i64).or_default().push(((s - j * SLAB) as f32, c.t));
                }
            }
        }
        let mut got: BTreeMap<i64, Vec<(f32, f32)>> = BTreeMap::new();
        for (k, v) in &found.slabs {
            assert!(!got.contains_key(k), "slab {k} twice");
            got.insert(*k, v.iter().map(|p| (p.ds, p.t)).collect());
        }
        assert_eq!(got.keys().collect::<Vec<_>>(), [&0, &1, &2, &3]);
        for (k, w) in &want {
            let g = &got[k];
            assert_eq!(g.len(), w.len(), "slab {k}");
            assert!(g.iter().zip(w).all(|(a, b)| a.0.to_bits() == b.0.to_bits() && a.1 == b.1), "slab {k}");
        }
        assert_eq!(found.stats.iter().map(|(_, st)| st.near).sum::<u64>(), s_all.len() as u64);
    }

    #[test]
    fn the_road_surface_is_the_lowest_dense_layer_and_the_profile_its_median() {
        // A road 2.4 m above the axis' surface (crossfall spreads it over 8 cm), sparse
        // multipath 1 m below it, a car roof 1.5 m above it with more points than the road.
        let mut st = SlabStats::default();
        for i in 0..400 {
            st.add_height(2.4 + (i % 9) as f32 * 0.01);
        }
        for i in 0..30 {
            st.add_height(1.4 + (i % 3) as f32 * 0.05);
        }
        for i in 0..900 {
            st.add_height(3.9 + (i % 4) as f32 * 0.01);
        }
        let layer = st.layer().unwrap();
        assert!((layer - 2.44).abs() < 0.05, "{layer}");
        // Too few heights: none.
        let mut few = SlabStats::default();
        (0..19).for_each(|_| few.add_height(0.0));
        assert_eq!(few.layer(), None);
        // Slabs 0..=9: the road at 2.4 m, but slab 4 sees only a car roof and slab 7 nothing
        // near the reference line; slabs 0..=9 of a right axis are zero.
        let mut stats = BTreeMap::new();
        for k in 0..10 {
            let mut st = SlabStats::default();
            let h = match k {
                4 => 3.9,
                7 => continue,
                _ => 2.4 + 0.01 * k as f32,
            };
            (0..100).for_each(|_| st.add_height(h));
            stats.insert(k, st);
        }
        let p = Profile::of(&stats, 0.1);
        for k in 0..10 {
            assert!((p.value(k) - 2.42).abs() < 0.1, "slab {k}: {}", p.value(k));
        }
        // Interpolated between the slabs' middles, held beyond the ends.
        let (a, b) = (p.value(2), p.value(3));
        assert!((p.at(6.0) - 0.5 * (a + b)).abs() < 1e-12);
        assert_eq!((p.at(-50.0), p.at(500.0)), (p.value(0), p.value(9)));
        assert!(!p.zero_around(5));
        let right: BTreeMap<i64, SlabStats> = stats
            .keys()
            .map(|&k| {
                let mut st = SlabStats::default();
                (0..100).for_each(|i| st.add_height(-0.02 + 0.0004 * i as f32));
                (k, st)
            })
            .collect();
        let p = Profile::of(&right, 0.1);
        assert!((-3..13).all(|k| p.zero_around(k)) && p.at(7.3) == 0.0);
    }
}
