//! The low envelope of a slab's points: coarse cells of about 0.2 m along by 0.05 m across, in
//! whole nodes from each slab's first row, whose points at most a layer above the cell's 10th
//! percentile (from the lowest dense layer up) stay, compacted in place in the counting sort by
//! node that serves the estimator too ([`bucket_sort`]).

use super::{grid::slab_of_row, rows::Geometry, spill::SLAB};

/// Along and across, m: the low envelope's coarse cells, in whole nodes.
const ENVELOPE_CELL: [f64; 2] = [0.2, 0.05];

/// A dense layer of a coarse cell: this many heights (m) within this many points, for
/// [`low_envelope`] (road points lie within millimetres of each other; multipath echoes scatter
/// over 0.2-1 m below the surface).
const DENSE_LAYER: (f64, usize) = (0.015, 3);

/// The grid's nodes across, its cell and the envelope's layer, for [`low_envelope`].
pub(super) struct Envelope {
    pub(super) nv: usize,
    pub(super) cell: f64,
    pub(super) layer: f64,
}

/// The first row of slab `k` (by the rows' s; can lie before the grid's start).
pub(super) fn slab_first_row(g: &Geometry, k: f64) -> usize {
    ((k * SLAB - g.s0) / g.cell - 1e-9).ceil().max(0.0) as usize
}

/// The low envelope's coarse rows over grid rows `lo..hi`, as local rows from `lo`: the starts
/// of runs of about [`ENVELOPE_CELL`] along, counted from each slab's first row (so a slab's
/// own rows lie in whole coarse rows, however its neighbours are gridded), and `hi - lo` last.
pub(super) fn envelope_bands(g: &Geometry, lo: usize, hi: usize) -> Vec<usize> {
    let cu = ((ENVELOPE_CELL[0] / g.cell).round() as usize).max(1);
    let mut bands = Vec::new();
    let mut r = lo;
    while r < hi {
        let k = slab_of_row(g.s0, g.cell, r);
        let (first, next) = (slab_first_row(g, k).min(r), slab_first_row(g, k + 1.0).max(r + 1));
        bands.push(r - lo);
        r = (first + ((r - first) / cu + 1) * cu).min(next).min(hi);
    }
    bands.push(hi - lo);
    bands
}

/// Keeps the points at most `layer` (and twice the cell's median less its 10th percentile, up
/// to another `layer`: see [`SurfaceOptions::layer`](super::options::SurfaceOptions::layer)) above the 10th percentile of the heights
/// of their coarse cell (the rows of a band of `bands`, see [`envelope_bands`], by whole nodes of about
/// [`ENVELOPE_CELL`] across from the grid's first column; the first and last bands hold the
/// points the slab has of them), compacting the points sorted by node (`start`, `pts`: CSR
/// over rows of `nv` nodes) in place, in their order.
pub(super) fn low_envelope(start: &mut [u32], pts: &mut Vec<[f32; 3]>, bands: &[usize], e: Envelope) {
    let cv = ((ENVELOPE_CELL[1] / e.cell).round() as usize).max(1);
    let n_rows = (start.len() - 1) / e.nv;
    let mut top = vec![0f64; e.nv.div_ceil(cv)];
    let mut hs: Vec<f32> = Vec::new();
    // Compaction: points are written at `write` (never past where they are read).
    let mut write = 0usize;
    let mut read = start[0] as usize;
    for band in bands.windows(2) {
        // A band of rows within one coarse row; its cells' thresholds, then its points.
        let (r0, r1) = (band[0], band[1].min(n_rows));
        for (c, top) in top.iter_mut().enumerate() {
            let (c0, c1) = (c * cv, ((c + 1) * cv).min(e.nv));
            hs.clear();
            for r in r0..r1 {
                let run = start[r * e.nv + c0] as usize..start[r * e.nv + c1] as usize;
                hs.extend(pts[run].iter().map(|p| p[2]));
            }
            *top = if hs.is_empty() {
                f64::INFINITY
            } else {
                // The 10th percentile, then the median among the heights above it.
                let (n, k) = (hs.len(), hs.len() / 10);
                let (_, &mut p10, above) = hs.select_nth_unstable_by(k, f32::total_cmp);
                let p50 = match (n / 2).checked_sub(k + 1) {
                    Some(k50) if k50 < above.len() => *above.select_nth_unstable_by(k50, f32::total_cmp).1,
                    _ => p10,
                };
                let (mut p10, mut p50) = (p10 as f64, p50 as f64);
                // A 10th percentile on no dense layer is a few low strays (multipath echoes
                // below the surface, which come alone): the percentiles are taken from the
                // lowest dense layer up instead, or the strays would be all the cell keeps.
                let dense = hs.iter().filter(|&&h| h as f64 >= p10 && h as f64 <= p10 + DENSE_LAYER.0).count();
                if n >= DENSE_LAYER.1 && dense < DENSE_LAYER.1 {
                    hs.sort_unstable_by(f32::total_cmp);
                    let m = DENSE_LAYER.1 - 1;
                    if let Some(i) = (0..n - m).find(|&i| (hs[i + m] - hs[i]) as f64 <= DENSE_LAYER.0) {
                        let up = &hs[i..];
                        (p10, p50) = (up[up.len() / 10] as f64, up[up.len() / 2] as f64);
                    }
                }
                p10 + e.layer + (2.0 * (p50 - p10)).min(e.layer)
            };
        }
        for r in r0..r1 {
            for (c, &top) in top.iter().enumerate() {
                for node in r * e.nv + c * cv..r * e.nv + ((c + 1) * cv).min(e.nv) {
                    let end = start[node + 1] as usize;
                    start[node] = write as u32;
                    for i in read..end {
                        let p = pts[i];
                        if p[2] as f64 <= top {
                            pts[write] = p;
                            write += 1;
                        }
                    }
                    read = end;
                }
            }
        }
    }
    start[n_rows * e.nv] = write as u32;
    pts.truncate(write);
}

/// Counting sort of `items` by `keys` (each below `buckets`), stable: the start of every
/// bucket (and the end of the last) and the items bucket by bucket.
pub(super) fn bucket_sort<T: Copy>(items: &[T], keys: &[u32], buckets: usize) -> (Vec<u32>, Vec<T>) {
    let mut start = vec![0u32; buckets + 1];
    for &k in keys {
        start[k as usize + 1] += 1;
    }
    for i in 0..buckets {
        start[i + 1] += start[i];
    }
    let mut sorted = Vec::with_capacity(items.len());
    // Every slot is written once below; fill with the first item to start.
    if let Some(&first) = items.first() {
        sorted.resize(items.len(), first);
    }
    // Each bucket's start serves as its next free slot, and so ends as the next one's start.
    for (item, &k) in items.iter().zip(keys) {
        sorted[start[k as usize] as usize] = *item;
        start[k as usize] += 1;
    }
    if buckets > 0 {
        start.copy_within(0..buckets - 1, 1);
        start[0] = 0;
    }
    (start, sorted)
}

pub(super) fn median(v: &mut [f32]) -> Option<f32> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable_by(f32::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 { v[n / 2] } else { 0.5 * (v[n / 2 - 1] + v[n / 2]) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The points of one coarse cell (one band of 20 rows, 5 nodes across) that the low
    /// envelope keeps, of heights `hs` (spread over its nodes in turn).
    fn kept_by_envelope(hs: &[f32]) -> Vec<f32> {
        let (nv, rows) = (5, 20);
        let nodes: Vec<u32> = (0..hs.len()).map(|i| (i % (nv * rows)) as u32).collect();
        let items: Vec<[f32; 3]> = hs.iter().map(|&h| [0.0, 0.0, h]).collect();
        let (mut start, mut pts) = bucket_sort(&items, &nodes, nv * rows);
        low_envelope(&mut start, &mut pts, &[0, rows], Envelope { nv, cell: 0.01, layer: 0.04 });
        pts.iter().map(|p| p[2]).collect()
    }

    #[test]
    fn the_low_envelope_keeps_a_rough_surface_and_drops_what_stands_on_a_flat_one() {
        // Setts: heights evenly from 0 to 6 cm within the cell (measured setts rise up to
        // 6.5 cm above a coarse cell's 10th percentile). A fixed 4 cm layer kept those up to
        // 4.6 cm only.
        let setts: Vec<f32> = (0..200).map(|i| i as f32 * 0.0003).collect();
        assert_eq!(kept_by_envelope(&setts).len(), setts.len());
        // Asphalt (±3 mm) with a third of the points on a kerbstone-high object (10 cm) or a
        // car's sill (30 cm) standing on it: those go, the surface stays.
        for top in [0.1f32, 0.3] {
            let hs: Vec<f32> =
                (0..300).map(|i| if i % 3 == 2 { top } else { (i % 7) as f32 * 0.001 - 0.003 }).collect();
            let kept = kept_by_envelope(&hs);
            assert_eq!(kept.len(), 200, "object at {top} m");
            assert!(kept.iter().all(|&h| h.abs() <= 0.003));
        }
    }

    #[test]
    fn multipath_below_the_surface_does_not_become_the_low_envelope() {
        // Asphalt (±3 mm), 16 points, with 2 echoes 24 and 26 cm below (as at nadir in
        // a corpus survey): before, the 10th percentile was an echo and the envelope kept only
        // the echoes.
        let mut hs: Vec<f32> = (0..16).map(|i| (i % 7) as f32 * 0.001 - 0.003).collect();
        hs.extend([-0.264f32, -0.240]);
        let kept = kept_by_envelope(&hs);
        assert!(kept.iter().filter(|h| h.abs() <= 0.003).count() == 16, "{kept:?}");
        // The echoes stay candidates (below the layer): the estimator rejects them.
        assert_eq!(kept.len(), 18);
    }

    #[test]
    fn bucket_sort_is_a_stable_sort_with_bucket_starts() {
        for (n, buckets) in [(0, 0), (0, 3), (1, 1), (500, 7), (2000, 1)] {
            let keys: Vec<u32> = (0..n).map(|i| ((i * 7919 + 13) % 101 % buckets.max(1)) as u32).collect();
            let items: Vec<usize> = (0..n).collect();
            let (start, sorted) = bucket_sort(&items, &keys, buckets);
            let mut want = items.clone();
            want.sort_by_key(|&i| keys[i]);
            assert_eq!(sorted, want, "{n} items in {buckets} buckets");
            assert_eq!(start.len(), buckets + 1);
            for b in 0..buckets {
                let run = &sorted[start[b] as usize..start[b + 1] as usize];
                assert!(run.iter().all(|&i| keys[i] as usize == b), "bucket {b}");
            }
        }
    }
}
