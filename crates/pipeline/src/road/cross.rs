//! The road surface across one row of cross sections: its line h = a + b·t through the cells near
//! the reference line by Tukey's biweight (cells whose heights spread left out), the heights above
//! it (the median of five rows), and the curb on either side as the first rise of 6 cm within 0.3 m
//! outward from road level.

use super::{median, Curb};
use crate::section::SectionGrid;

/// The line h = a + b·t through the row's cells with t in `band`, by Tukey's biweight; cells
/// whose heights spread more than `max_spread` (a branch over the road, an echo below it) are
/// left out, and the cells the line keeps must span at least 1 m across (a handful of cells at
/// one place, a pole's foot, fixes no crossfall).
pub(super) fn surface_line(
    g: &SectionGrid,
    r: usize,
    band: (f64, f64),
    max_spread: f64,
    prior: f64,
) -> Option<[f64; 2]> {
    let pts: Vec<(f64, f64)> = (0..g.cols)
        .filter(|&c| (band.0..=band.1).contains(&g.t_of(c)))
        .filter(|&c| g.spread_h(r, c).is_some_and(|v| v <= max_spread))
        .filter_map(|c| g.mean_h(r, c).map(|h| (g.t_of(c), h)))
        .collect();
    if pts.len() < 10 {
        return None;
    }
    // Cells count once each (a car roof holds many more points than the road beside it);
    // the start is the median height on the axis's own crossfall (`prior`), so the road's
    // majority wins.
    let mut w: Vec<f64> = vec![1.0; pts.len()];
    let mut line = [median(&mut pts.iter().map(|p| p.1 - prior * p.0).collect::<Vec<_>>())?, prior];
    for it in 0..10 {
        if it == 0 {
            let mut res: Vec<f64> = pts.iter().map(|p| (p.1 - line[0] - prior * p.0).abs()).collect();
            let c = 4.685 * (1.4826 * median(&mut res)?).max(0.002);
            for (p, wi) in pts.iter().zip(w.iter_mut()) {
                let u = (p.1 - line[0] - prior * p.0) / c;
                *wi = if u.abs() < 1.0 { (1.0 - u * u).powi(2) } else { 0.0 };
            }
        }
        let (mut sw, mut st, mut sh, mut stt, mut sth) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for (p, wi) in pts.iter().zip(&w) {
            sw += wi;
            st += wi * p.0;
            sh += wi * p.1;
            stt += wi * p.0 * p.0;
            sth += wi * p.0 * p.1;
        }
        let det = sw * stt - st * st;
        if sw <= 0.0 || det.abs() < 1e-12 {
            return None;
        }
        line = [(sh * stt - st * sth) / det, (sw * sth - st * sh) / det];
        let mut res: Vec<f64> = pts.iter().map(|p| (p.1 - line[0] - line[1] * p.0).abs()).collect();
        let scale = (1.4826 * median(&mut res)?).max(0.002);
        let c = 4.685 * scale;
        for (p, wi) in pts.iter().zip(w.iter_mut()) {
            let u = (p.1 - line[0] - line[1] * p.0) / c;
            *wi = if u.abs() < 1.0 { (1.0 - u * u).powi(2) } else { 0.0 };
        }
    }
    let kept = || pts.iter().zip(&w).filter(|(_, &wi)| wi > 0.0).map(|(p, _)| p.0);
    let (lo, hi) = (kept().fold(f64::INFINITY, f64::min), kept().fold(f64::NEG_INFINITY, f64::max));
    (kept().count() >= 10 && hi - lo >= 1.0).then_some(line)
}

/// Heights above the row's surface line, per column (NaN where empty or no line); the median
/// of five rows.
fn residuals(g: &SectionGrid, lines: &[Option<[f64; 2]>], r: usize) -> Vec<f64> {
    let (lo, hi) = (r.saturating_sub(2), (r + 3).min(g.rows));
    (0..g.cols)
        .map(|c| {
            let mut v: Vec<f64> = (lo..hi)
                .filter_map(|rr| Some(g.mean_h(rr, c)? - lines[rr].map(|l| l[0] + l[1] * g.t_of(c))?))
                .collect();
            median(&mut v).unwrap_or(f64::NAN)
        })
        .collect()
}

/// Samples either side of a curb sample in the line that judges it.
const CURB_WINDOW: usize = 15;

/// Siegel's repeated-median line through `(s, t)` samples, evaluated at `s0`: per sample the
/// median slope to the others, the line's slope the median of those, its value at `s0` the
/// median of the samples carried there along it. None for fewer than two distinct s.
fn repeated_median_at(w: &[(f64, f64)], s0: f64) -> Option<f64> {
    let mut slopes: Vec<f64> = w
        .iter()
        .filter_map(|a| {
            let mut to: Vec<f64> = w.iter().filter(|b| b.0 != a.0).map(|b| (b.1 - a.1) / (b.0 - a.0)).collect();
            median(&mut to)
        })
        .collect();
    let slope = median(&mut slopes)?;
    median(&mut w.iter().map(|p| p.1 + slope * (s0 - p.0)).collect::<Vec<_>>())
}

/// The curb on one side (`side` +1 left, -1 right): per row the first rise of 6 cm within
/// 0.3 m outward from 1 m, where the 0.3 m before it are at road level.
pub(super) fn find_curb(g: &SectionGrid, lines: &[Option<[f64; 2]>], side: f64) -> Option<Curb> {
    let cols: Vec<usize> = {
        let mut c: Vec<usize> = (0..g.cols).filter(|&c| g.t_of(c) * side >= 1.0).collect();
        if side < 0.0 {
            c.reverse();
        }
        c
    };
    let (before, after) = ((0.3 / g.dt).round() as usize, (0.3 / g.dt).round() as usize);
    let mut samples = Vec::new();
    let mut heights = Vec::new();
    for r in 0..g.rows {
        if lines[r].is_none() {
            continue;
        }
        let res = residuals(g, lines, r);
        let prof: Vec<f64> = cols.iter().map(|&c| res[c]).collect();
        for j in before..prof.len().saturating_sub(after) {
            let mut b: Vec<f64> = prof[j - before..j].iter().copied().filter(|v| v.is_finite()).collect();
            let mut a: Vec<f64> = prof[j..j + after].iter().copied().filter(|v| v.is_finite()).collect();
            if b.len() < before / 2 || a.len() < after / 2 {
                continue;
            }
            let (mb, ma) = (median(&mut b).unwrap_or(f64::NAN), median(&mut a).unwrap_or(f64::NAN));
            if mb.abs() < 0.03 && ma - mb >= 0.06 {
                // The step: the first column past half the rise.
                let mid = 0.5 * (ma + mb);
                let k = (j.saturating_sub(before / 2)..j + after).find(|&k| prof[k] > mid).unwrap_or(j);
                samples.push((g.s_of(r), g.t_of(cols[k]) - 0.5 * g.dt * side));
                heights.push(ma - mb);
                break;
            }
        }
    }
    // A curb is seen along most of the rows that have a surface.
    let rows_with = lines.iter().filter(|l| l.is_some()).count();
    if samples.len() < 10 || samples.len() * 2 < rows_with {
        return None;
    }
    // Drop samples far from the curb's line through their neighbours (a car's sill, a bin): a
    // repeated-median line (Siegel's, which holds while fewer than half the samples are wild)
    // over 31 samples, so a parked car (4.5 m, 9 or 10 rows) is a third of them, and a curb
    // that turns out to a bus bay or back is followed to the end of the rows (a running
    // median lags a sloping curb by half its window there).
    let kept: Vec<(f64, f64)> = samples
        .iter()
        .enumerate()
        .filter(|&(i, p)| {
            let w = &samples[i.saturating_sub(CURB_WINDOW)..(i + CURB_WINDOW + 1).min(samples.len())];
            repeated_median_at(w, p.0).is_some_and(|m| (p.1 - m).abs() < 0.1)
        })
        .map(|(_, p)| *p)
        .collect();
    let t = median(&mut kept.iter().map(|p| p.1).collect::<Vec<_>>())?;
    let height = median(&mut heights)?;
    Some(Curb { t, height, samples: kept })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A curb that turns out to a bus bay and back (the demo scene's lane -1: 0.93 m out at
    /// most, back at 0.1 m/m at the end) with a parked car's side in 10 of its rows: the line
    /// through the samples about each keeps none of the car's, the last rows of the curb and
    /// nearly all its other samples.
    #[test]
    fn the_curb_line_follows_a_bay_and_leaves_out_a_car() {
        let curb = |s: f64| {
            let d = (s - 100.0).max(0.0);
            -3.25 - 0.0025 * d * d + 0.00005 * d * d * d
        };
        let car = |s: f64| (125.5..130.5).contains(&s);
        let samples: Vec<(f64, f64)> = (0..300)
            .map(|i| {
                let s = 0.25 + 0.5 * i as f64;
                (s, if car(s) { -2.18 } else { curb(s) })
            })
            .collect();
        let kept: Vec<bool> = (0..samples.len())
            .map(|i| {
                let w = &samples[i.saturating_sub(CURB_WINDOW)..(i + CURB_WINDOW + 1).min(samples.len())];
                repeated_median_at(w, samples[i].0).is_some_and(|m| (samples[i].1 - m).abs() < 0.1)
            })
            .collect();
        let (cars, curbs): (Vec<_>, Vec<_>) = samples.iter().zip(&kept).partition(|(p, _)| car(p.0));
        assert!(cars.iter().all(|(_, &k)| !k), "a car sample kept");
        assert!(kept[kept.len() - 6..].iter().all(|&k| k), "the curb's last 3 m not kept");
        let n = curbs.iter().filter(|(_, &k)| k).count();
        assert!(n + 3 >= curbs.len(), "{n} of {} curb samples kept", curbs.len());
        assert_eq!(repeated_median_at(&[(1.0, 2.0)], 1.0), None);
    }
}
