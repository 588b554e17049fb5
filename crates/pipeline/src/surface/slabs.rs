//! Gridding a slab: the gridding thread hands out the slabs in row order, a few at a time on the
//! shared thread pool, and sends them on in order ([`grid_slabs`]); a slab's candidates are sorted
//! by node, cut to their low envelope and estimated node by node or block by block
//! ([`estimate_rows`]), the same bits on any number of threads.

use super::{
    datum::{far_key, Profile},
    envelope::{bucket_sort, envelope_bands, low_envelope, median, slab_first_row, Envelope},
    estimator::{
        disc_half, Columns, DiscSize, Local, Moments, BLOCK, BLOCK_OFFSETS, LS_MIN_POINTS, NEAR_SMOOTH_SIGMA, ROW_RUN,
        SMOOTH_SIGMA,
    },
    fits::{near_median, nearest, quadratic_height, round_index, within, Disc},
    grid::slab_of_row,
    options::{Estimator, SurfaceOptions},
    rows::{Geometry, Window},
    spill::{SlabPoint, Slabs, SLAB},
};
use std::collections::BTreeMap;

/// One gridded slab: its rows, their heights, and how many candidates it kept.
#[derive(Debug)]
pub(super) struct Gridded {
    pub(super) rows: (usize, usize),
    pub(super) z: Vec<f32>,
    pub(super) kept: u64,
}

/// The gridding thread: grids the slabs in row order, a few at once on the shared thread pool
/// (each slab's preparation on one thread, its rows on any; a new slab starts as soon as one
/// is done), and sends them to `tx` in order; stops when the receiver is gone or a slab failed.
/// Slabs the rows skip (before the grid's start) are dropped.
pub(super) fn grid_slabs(
    mut slabs: Slabs,
    g: Geometry,
    o: &SurfaceOptions,
    profile: &Profile,
    w: Window,
    tx: &std::sync::mpsc::SyncSender<Result<Gridded, crate::Error>>,
) {
    // Enough slabs in flight that one's serial preparation overlaps another's rows.
    let at_once = crate::par::threads() + 1;
    let (done_tx, done_rx) = std::sync::mpsc::channel::<(usize, Result<Gridded, crate::Error>)>();
    let g = &g;
    // This thread hands out the slabs and puts the results in order; the pool grids them.
    rayon::in_place_scope(|scope| {
        let mut iu = w.rows.0;
        let (mut started, mut sent) = (0usize, 0usize);
        let mut done = BTreeMap::new();
        let mut stop = false;
        loop {
            // At most `at_once` slabs gridded at a time, and as many more waiting for their turn
            // to be sent.
            while !stop && started - sent - done.len() < at_once && started - sent < 2 * at_once && iu < w.rows.1 {
                let k = slab_of_row(g.s0, g.cell, iu);
                let end = slab_first_row(g, k + 1.0).clamp(iu + 1, w.rows.1);
                let (slab, rows, done_tx) = (slabs.take(k as i64), (iu, end), done_tx.clone());
                let far = slabs.take(far_key(k as i64));
                let index = started;
                scope.spawn(move |_| {
                    let d = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        // Where the road surface is the OpenDRIVE surface, its near candidates
                        // (as without a search); else those within `max_height` of the road
                        // surface found.
                        let cands = if profile.zero_around(k as i64) {
                            far.discard();
                            slab.load()?
                        } else {
                            let (near, far) = (slab.load()?, far.load()?);
                            let at = |p: &SlabPoint| profile.at(k * SLAB + p.ds as f64);
                            near.into_iter().chain(far).filter(|p| (p.h as f64 - at(p)).abs() <= o.max_height).collect()
                        };
                        let (z, kept) = estimate_rows(cands, g, rows, o, w.count);
                        Ok(Gridded { rows, z, kept })
                    }));
                    let _ =
                        done_tx.send((index, d.unwrap_or(Err(crate::Error::Thread { which: "a gridding thread" }))));
                });
                started += 1;
                iu = end;
            }
            if sent + done.len() == started {
                break;
            }
            let Ok((index, d)) = done_rx.recv() else { break };
            done.insert(index, d);
            while let Some(d) = done.remove(&sent) {
                sent += 1;
                let failed = d.is_err();
                if !stop && (tx.send(d).is_err() || failed) {
                    // Let the slabs in flight finish (the scope waits for them), start no more.
                    stop = true;
                }
            }
        }
    });
}

/// Rows of nodes beyond a slab's own whose points its nodes' discs reach (with a row to
/// spare): a node's fit pools the points of the nodes within `reach` rows (twice that where
/// sparse; [`disc_half`] needs fewer); a block's, those
/// within R + one cell of its centre (2R + one cell where sparse), and a block row's centre
/// lies up to a row outside the rows it covers.
pub(super) fn pad_rows(o: &SurfaceOptions) -> usize {
    let reach = (o.radius / o.cell).ceil() as usize;
    let block_half = ((o.radius + o.cell) / o.cell + 0.5).ceil() as usize;
    let sparse_r = 2.0 * o.radius + o.cell;
    (2 * reach + 1).max(disc_half(sparse_r, o.cell) as usize + 1).max(block_half + BLOCK / 2)
}

/// Heights of rows `rows.0..rows.1` of the grid from the candidates of their slab (with the
/// neighbours' margins; s from the slab's start); and how many candidates the low envelope
/// kept in those of the rows within `count`.
fn estimate_rows(
    cands: Vec<SlabPoint>,
    g: &Geometry,
    rows: (usize, usize),
    o: &SurfaceOptions,
    count: (usize, usize),
) -> (Vec<f32>, u64) {
    let (cell, nv) = (g.cell, g.nv);
    // A block's fit pools the points within R + one cell of its centre (2R + one cell where
    // sparse). The nodes its sums visit follow from that radius in f64: single precision
    // rounds 3.5 cells up, which would add a ring of nodes (a third more work).
    let block_radius = o.radius + cell;
    let block_r = block_radius as f32;
    let block_half = ((o.radius + cell) / cell + 0.5).ceil() as isize;
    let sparse_r = 2.0 * o.radius + cell;
    let (block_disc, sparse_disc) = (DiscSize::new(block_radius, cell), DiscSize::new(sparse_r, cell));
    let (node_disc, wide_disc) = (DiscSize::new(o.radius, cell), DiscSize::new(2.0 * o.radius, cell));
    let pad = pad_rows(o);
    // Local rows lu = iu - lo cover the whole slab's rows (whatever part of it `rows` is: a work
    // unit may start or end inside a slab) and the padding the windows reach: what is kept
    // and fitted depends on the slab alone.
    let k = slab_of_row(g.s0, cell, rows.0);
    let slab = (slab_first_row(g, k).min(rows.0), slab_first_row(g, k + 1.0).max(rows.1));
    let lo = slab.0.saturating_sub(pad);
    let hi = (slab.1 + pad).min(g.nu);
    let n_local = hi - lo;
    // Points sorted by the node they are nearest (CSR over the local rows): x from the point's
    // row of nodes, y from column 0, height. Points off the grid's columns reach no node's
    // disc.
    let mut nodes: Vec<u32> = Vec::with_capacity(cands.len());
    let mut items: Vec<[f32; 3]> = Vec::with_capacity(cands.len());
    for p in &cands {
        let s = k * SLAB + p.ds as f64;
        let iu = round_index((s - g.s0) / cell);
        let iv = round_index((p.t as f64 - g.vr) / cell);
        if iu < lo as i64 || iu >= hi as i64 || iv < 0 || iv >= nv as i64 {
            continue;
        }
        let (iu, iv) = (iu as usize, iv as usize);
        let du = (s - (g.s0 + iu as f64 * cell)) as f32;
        let dv = (p.t as f64 - (g.vr + iv as f64 * cell)) as f32;
        nodes.push(((iu - lo) * nv + iv) as u32);
        items.push([du, dv + (iv as f64 * cell) as f32, p.h]);
    }
    drop(cands);
    let (mut start, mut pts) = bucket_sort(&items, &nodes, n_local * nv);
    drop((items, nodes));
    low_envelope(&mut start, &mut pts, &envelope_bands(g, lo, hi), Envelope { nv, cell, layer: o.layer });
    // Kept: the candidates of the rows gridded here that are counted.
    let k0 = rows.0.max(count.0).min(rows.1);
    let k1 = rows.1.min(count.1).max(k0);
    let kept = (start[(k1 - lo) * nv] - start[(k0 - lo) * nv]) as u64;

    // Node estimates, rows in parallel (each node on its own: same bits on any threads).
    let n_rows = rows.1 - rows.0;
    let mut h = vec![f32::NAN; n_rows * nv];
    // Runs of rows for whichever thread is free, split where block rows start (a block row's
    // planes are fitted once).
    let mut runs: Vec<(usize, &mut [f32])> = Vec::new();
    let mut rest = h.as_mut_slice();
    let mut first = rows.0;
    while first < rows.1 {
        let end = ((first / ROW_RUN + 1) * ROW_RUN).min(rows.1);
        let (run, tail) = rest.split_at_mut((end - first) * nv);
        runs.push((first, run));
        rest = tail;
        first = end;
    }
    let mut cols = Columns::default();
    cols.fill(&pts);
    drop(pts);
    let local = Local { cols: &cols, start: &start, nv, n_local, cell };
    {
        use rayon::prelude::*;
        runs.into_par_iter().for_each(|(first, chunk)| {
            let (start, local) = (&start, &local);
            let (mut node_cols, mut wide_cols) = (Columns::default(), Columns::default());
            let mut wide: Vec<[f32; 3]> = Vec::new();
            let mut scratch = Disc::default();
            let mut sums: Vec<Moments> = Vec::new();
            let r = o.radius as f32;
            let scale = o.robust_scale as f32;
            // Block planes of the current block row (none yet).
            let mut block_row = usize::MAX;
            // Whether the last node's own fit needed the disc of 2R.
            let mut wide_last = false;
            let mut blocks: Vec<Option<[f64; 3]>> = vec![None; nv.div_ceil(BLOCK)];
            for (k, row) in chunk.chunks_mut(nv).enumerate() {
                let lu = first + k - lo;
                if o.estimator == Estimator::Median {
                    for (iv, out) in row.iter_mut().enumerate() {
                        let node = lu * nv + iv;
                        let mut zs: Vec<f32> = local.cols.h[start[node] as usize..start[node + 1] as usize].to_vec();
                        *out = median(&mut zs).unwrap_or(f32::NAN);
                    }
                    continue;
                }
                // Smooth surface: the plane of the node's block. Otherwise the node's own fits
                // on the points of its disc of R; where that holds too few points for a fit
                // (sparse surveys, far from the scanner), of 2R.
                let iu = lu + lo;
                if iu / BLOCK != block_row {
                    block_row = iu / BLOCK;
                    let cu = (block_row * BLOCK + BLOCK / 2) as isize - lo as isize;
                    local.block_moments(cu, block_disc, &mut sums);
                    for (bv, plane) in blocks.iter_mut().enumerate() {
                        // The least-squares plane of the block's disc when its residuals are
                        // the noise's; with too few points for it (sparse surveys), that of
                        // the disc of 2R + one cell, where the block's nodes would fit their
                        // own of 2R; otherwise its robust plane when that is smooth, tried
                        // where the block is sparse or its least-squares plane is level with
                        // residuals near the noise's (a step or joint in the disc leaves larger
                        // ones or tilts the plane, and its robust fit rejects too many points
                        // to be smooth; a steep smooth block with an outlier goes node by node).
                        let cv = (bv * BLOCK + BLOCK / 2) as isize;
                        let sparse = sums[bv].count() < LS_MIN_POINTS;
                        let ls = sums[bv].least_squares(block_r as f64, o.robust_scale);
                        *plane = ls
                            .filter(|ls| ls.within(SMOOTH_SIGMA * o.robust_scale))
                            .map(|ls| ls.plane)
                            .or_else(|| {
                                sparse.then(|| {
                                    local.disc_moments(cu, cv, sparse_disc).smooth_plane(sparse_r, o.robust_scale)
                                })?
                            })
                            .or_else(|| {
                                let near = ls.is_some_and(|ls| ls.within(NEAR_SMOOTH_SIGMA * o.robust_scale));
                                if !(sparse || near) {
                                    return None;
                                }
                                // Only the disc's points count, in the fit and in where it
                                // starts (`nearest`).
                                local.gather(cu, cv, block_half, block_r, &mut wide);
                                let (w, radius, start) = nearest(&mut wide, block_r, 96)?;
                                scratch.pack(w, start as f32);
                                let f = scratch.fit(radius, scale, start)?;
                                f.smooth(scale).then_some([f.h, f.bx, f.by])
                            });
                    }
                }
                if o.estimator == Estimator::Quadratic {
                    // The disc of R + one cell (a block's): a quadratic needs more points than a
                    // plane, and its centre height has no curvature bias to grow with R.
                    for (iv, out) in row.iter_mut().enumerate() {
                        local.gather_columns(lu as isize, iv as isize, block_disc, &mut node_cols);
                        *out = quadratic_height(node_cols.points(), block_radius)
                            .map(|h| h as f32)
                            .or_else(|| near_median(node_cols.points()))
                            .unwrap_or(f32::NAN);
                    }
                    continue;
                }
                let du = (iu % BLOCK) as f64 - (BLOCK / 2) as f64;
                for (bv, outs) in row.chunks_mut(BLOCK).enumerate() {
                    if let Some(p) = blocks[bv] {
                        for (out, dv) in outs.iter_mut().zip(BLOCK_OFFSETS) {
                            *out = (p[0] + (p[1] * du + p[2] * dv) * cell) as f32;
                        }
                        continue;
                    }
                    for (j, out) in outs.iter_mut().enumerate() {
                        let iv = bv * BLOCK + j;
                        // The disc of R, and that of 2R only where it holds too few points; or
                        // 2R at once where the last node needed it (sparse points), the disc of
                        // R from it the same (in the same order: row by row, node by node).
                        let (lu, iv) = (lu as isize, iv as isize);
                        let mut radius = r;
                        if wide_last {
                            local.gather_columns(lu, iv, wide_disc, &mut wide_cols);
                            node_cols.clear();
                            for p in wide_cols.points().filter(|p| within(p, r)) {
                                node_cols.push(p);
                            }
                        } else {
                            local.gather_columns(lu, iv, node_disc, &mut node_cols);
                        }
                        if node_cols.len() < 6 {
                            radius = 2.0 * r;
                            if !wide_last {
                                local.gather_columns(lu, iv, wide_disc, &mut wide_cols);
                            }
                            std::mem::swap(&mut node_cols, &mut wide_cols);
                        }
                        wide_last = radius > r;
                        // The plane where the disc is smooth, else the median of the six nearest.
                        let est = match node_cols.moments(radius as f64).smooth_plane(radius as f64, o.robust_scale) {
                            Some(p) => Some(p[0] as f32),
                            None => near_median(node_cols.points()),
                        };
                        *out = est.unwrap_or(f32::NAN);
                    }
                }
            }
        });
    }
    (h, kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Candidates of the slab of s 2..4 over s `a..b` on 20 columns: a noisy plane every `ds` m
    /// along (`per` points across), 6 cm lower where `low(s)`.
    fn surface(a: f64, b: f64, ds: f64, per: usize, low: impl Fn(f64) -> bool) -> Vec<SlabPoint> {
        let mut k = 12345u32;
        let mut c = Vec::new();
        let mut s = a;
        while s < b {
            for i in 0..per {
                k = k.wrapping_mul(1664525).wrapping_add(1013904223);
                let noise = (k >> 8) as f32 / (1u32 << 24) as f32 * 0.002 - 0.001;
                let t = (i as f64 + 0.37) * 0.2 / per as f64;
                let h = 0.01 * s as f32 + 0.03 * t as f32 + noise - if low(s) { 0.06 } else { 0.0 };
                c.push(SlabPoint { ds: (s - SLAB) as f32, t: t as f32, h });
            }
            s += ds;
        }
        c
    }

    #[test]
    fn a_slab_grids_the_same_whatever_part_of_it_a_unit_takes() {
        // The grid starts at s 0.37, so the slab of s 2..4 is rows 163..363, and its low
        // envelope's coarse rows do not start where the grid's do. A work unit may grid any
        // part of it; the rows they share must have the same bits (envelope, discs of 2R +
        // one cell at R 2 cm, margins).
        let g = Geometry { s0: 0.37, s1: 6.37, cell: 0.01, nu: 601, vr: 0.0, nv: 20 };
        for (radius, ds, per) in [(0.025, 0.0025, 20), (0.02, 0.03, 12)] {
            let o = SurfaceOptions { radius, ..Default::default() };
            let c = surface(1.85, 4.15, ds, per, |s| (2.03..2.06).contains(&s) || (3.8..3.83).contains(&s));
            let (whole, _) = estimate_rows(c.clone(), &g, (163, 363), &o, (0, 601));
            let n = whole.iter().filter(|z| z.is_finite()).count();
            assert!(n > 2500, "R {radius}: {n} nodes estimated");
            for part in [(163, 170), (170, 363), (250, 300), (361, 363)] {
                let (z, _) = estimate_rows(c.clone(), &g, part, &o, (0, 601));
                let want = &whole[(part.0 - 163) * g.nv..(part.1 - 163) * g.nv];
                assert!(z.iter().zip(want).all(|(a, b)| a.to_bits() == b.to_bits()), "R {radius}, rows {part:?}");
            }
        }
        // Rows counted (a unit counts from its gap filling's reach on) beyond the part gridded:
        // none of them.
        let c = surface(1.85, 4.15, 0.0025, 20, |_| false);
        let o = SurfaceOptions::default();
        assert_eq!(estimate_rows(c.clone(), &g, (163, 166), &o, (200, 400)).1, 0);
        assert!(estimate_rows(c, &g, (163, 363), &o, (200, 400)).1 > 0);
    }
}
