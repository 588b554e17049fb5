//! Profiles through survey samples (elevation, superelevation, a lane's width) that stay within the
//! samples' range: clutter off a running line or parabola left out, gaps bridged straight, cubic
//! records by least squares within a tolerance, or a monotone cubic Hermite through window medians
//! where those records overshoot.

use super::median;
use opendrive::fit::{fit_profile, FitOptions, ProfileFit};
use opendrive::Poly3;

/// A profile (elevation, superelevation, a lane width) through samples (s ascending) that
/// stays within their range: samples far from the running line through nine (clutter a row's
/// line did not shed) are left out, gaps bridged straight every `step`, then cubic records
/// within `tol` by least squares; where a record leaves the range of the samples about it by
/// more than `tol` (an overshoot between samples), the whole profile is instead a monotone
/// cubic Hermite (Fritsch-Carlson) through the medians of 5 m windows, which never leaves the
/// range of the knots beside it. Fewer than four samples give their median, level.
pub fn robust_profile(s: &[f64], v: &[f64], tol: f64, step: f64, min_length: f64) -> Option<ProfileFit> {
    robust(s, v, tol, step, min_length, false)
}

/// [`robust_profile`] for a profile with vertical curves (elevation, superelevation ramps):
/// clutter is what stands off a running parabola, not a running line.
pub fn robust_curved_profile(s: &[f64], v: &[f64], tol: f64, step: f64, min_length: f64) -> Option<ProfileFit> {
    robust(s, v, tol, step, min_length, true)
}

fn robust(s: &[f64], v: &[f64], tol: f64, step: f64, min_length: f64, curved: bool) -> Option<ProfileFit> {
    let n = s.len().min(v.len());
    if n == 0 {
        return None;
    }
    // The running line: through the nine samples about each (the window shifted inward at
    // the ends, so a ramp's first samples are not taken for outliers), Theil-Sen; when
    // `curved`, through what a parabola leaves whose curvature is the median of the second
    // divided differences of the window's triples. A line alone sits off a vertical curve by
    // half its curvature (times 1 m²): 6 mm on a 170 m crest, more than the tolerance.
    let run: Vec<f64> = (0..n)
        .map(|i| {
            let lo = i.saturating_sub(4).min(n.saturating_sub(9));
            let hi = (lo + 9).min(n);
            let mut second = Vec::with_capacity(84);
            for a in (lo..hi).filter(|_| curved) {
                for b in a + 1..hi {
                    for c in b + 1..hi {
                        if s[b] > s[a] && s[c] > s[b] {
                            let (d1, d2) = ((v[b] - v[a]) / (s[b] - s[a]), (v[c] - v[b]) / (s[c] - s[b]));
                            second.push(2.0 * (d2 - d1) / (s[c] - s[a]));
                        }
                    }
                }
            }
            let q = 0.5 * median(&mut second).unwrap_or(0.0);
            let w: Vec<f64> = (lo..hi).map(|j| v[j] - q * (s[j] - s[i]).powi(2)).collect();
            let mut slopes = Vec::with_capacity(36);
            for a in 0..w.len() {
                for b in a + 1..w.len() {
                    let (sa, sb) = (s[lo + a], s[lo + b]);
                    if sb > sa {
                        slopes.push((w[b] - w[a]) / (sb - sa));
                    }
                }
            }
            let k = median(&mut slopes).unwrap_or(0.0);
            let mut at: Vec<f64> = w.iter().enumerate().map(|(j, wj)| wj - k * (s[lo + j] - s[i])).collect();
            median(&mut at).unwrap_or(v[i])
        })
        .collect();
    let mut dev: Vec<f64> = (0..n).map(|i| (v[i] - run[i]).abs()).collect();
    let scale = 1.4826 * median(&mut dev).unwrap_or(0.0);
    let keep: Vec<usize> = (0..n).filter(|&i| (v[i] - run[i]).abs() <= (4.0 * scale).max(tol)).collect();
    let (ks, kv): (Vec<f64>, Vec<f64>) = keep.iter().map(|&i| (s[i], v[i])).unzip();
    let rejected = n - ks.len();
    let stats = |records: &[Poly3]| -> (f64, f64) {
        let r: Vec<f64> = ks.iter().zip(&kv).map(|(&x, &y)| opendrive::eval::profile_value(records, x) - y).collect();
        let max = r.iter().fold(0.0f64, |a, e| a.max(e.abs()));
        (max, (r.iter().map(|e| e * e).sum::<f64>() / r.len().max(1) as f64).sqrt())
    };
    let s_last = s[n - 1];
    let done = |mut records: Vec<Poly3>| {
        // Hermite pieces between equal knots are one level record (qc-opendrive: redundant).
        opendrive::fit::merge_redundant(&mut records, s_last, 0.0);
        let (max, rms) = stats(&records);
        ProfileFit { records, max, rms, noise: 0.0, rejected, s_last, searched: 0 }
    };
    if ks.len() < 4 {
        let m = median(&mut kv.clone()).unwrap_or(v[0]);
        return Some(done(vec![Poly3 { s: s[0], a: m, b: 0.0, c: 0.0, d: 0.0 }]));
    }
    let (bs, bv) = bridge(&ks, &kv, step);
    if let Ok(f) = fit_profile(&bs, &bv, &FitOptions { tolerance: tol, min_length }) {
        if !overshoots(&f.records, &ks, &kv, s_last, tol) {
            let (max, rms) = stats(&f.records);
            return Some(ProfileFit {
                max,
                rms,
                noise: f.noise,
                rejected: rejected + f.rejected,
                s_last,
                records: f.records,
                searched: f.searched,
            });
        }
    }
    Some(done(monotone_hermite(&ks, &kv, 5.0)))
}

/// Whether `records` leave the range of the samples about them (those within 2 m of a record,
/// and the nearest one on each side) by more than `tol` anywhere from the first record to
/// `end`.
fn overshoots(records: &[Poly3], s: &[f64], v: &[f64], end: f64, tol: f64) -> bool {
    for (k, rec) in records.iter().enumerate() {
        let (a, b) = (rec.s, records.get(k + 1).map_or(end, |n| n.s));
        if b <= a {
            continue;
        }
        let (i0, i1) = (s.partition_point(|&x| x < a - 2.0), s.partition_point(|&x| x <= b + 2.0));
        let (i0, i1) = (i0.saturating_sub(1), (i1 + 1).min(s.len()));
        let (lo, hi) = v[i0..i1].iter().fold((f64::INFINITY, f64::NEG_INFINITY), |r, &x| (r.0.min(x), r.1.max(x)));
        if lo > hi {
            continue;
        }
        let steps = ((b - a) / 0.1).ceil().max(1.0) as usize;
        for j in 0..=steps {
            let x = opendrive::eval::profile_value(records, a + (b - a) * j as f64 / steps as f64);
            if !(x >= lo - tol && x <= hi + tol) {
                return true;
            }
        }
    }
    false
}

/// Cubic Hermite records through the medians (of s and of v) of windows of `window` metres,
/// with Fritsch-Carlson slopes: monotone between knots, level at a knot that is a local
/// extreme, so no record leaves the range of its two knots.
fn monotone_hermite(s: &[f64], v: &[f64], window: f64) -> Vec<Poly3> {
    let mut knots: Vec<(f64, f64)> = Vec::new();
    let mut i = 0;
    while i < s.len() {
        let j = s.partition_point(|&x| x < s[i] + window).max(i + 1);
        if let (Some(ks), Some(kv)) = (median(&mut s[i..j].to_vec()), median(&mut v[i..j].to_vec())) {
            knots.push((ks, kv));
        }
        i = j;
    }
    // Knots at the first and the last sample too, on the line through the window there (a
    // median knot lies mid-window: a ramp to the survey's end would be cut short).
    let line_at = |lo: usize, hi: usize, x: f64| -> Option<f64> {
        let n = (hi - lo) as f64;
        let (ms, mv) = (s[lo..hi].iter().sum::<f64>() / n, v[lo..hi].iter().sum::<f64>() / n);
        let sxx: f64 = s[lo..hi].iter().map(|a| (a - ms) * (a - ms)).sum();
        let sxy: f64 = s[lo..hi].iter().zip(&v[lo..hi]).map(|(a, b)| (a - ms) * (b - mv)).sum();
        (sxx > 0.0).then(|| mv + sxy / sxx * (x - ms))
    };
    if knots.len() >= 2 {
        let (n, first, last) = (s.len(), s[0], s[s.len() - 1]);
        let head = s.partition_point(|&x| x < first + window);
        let tail = s.partition_point(|&x| x <= last - window);
        if let Some(y) = line_at(0, head, first).filter(|_| first < knots[0].0 - 1e-6) {
            knots.insert(0, (first, y));
        }
        if let Some(y) = line_at(tail, n, last).filter(|_| last > knots[knots.len() - 1].0 + 1e-6) {
            knots.push((last, y));
        }
    }
    let m = knots.len();
    if m < 2 {
        return knots.first().map(|k| vec![Poly3 { s: k.0, a: k.1, b: 0.0, c: 0.0, d: 0.0 }]).unwrap_or_default();
    }
    let h: Vec<f64> = knots.windows(2).map(|w| w[1].0 - w[0].0).collect();
    let d: Vec<f64> = knots.windows(2).zip(&h).map(|(w, h)| (w[1].1 - w[0].1) / h).collect();
    let mut slope = vec![0.0; m];
    slope[0] = d[0];
    slope[m - 1] = d[m - 2];
    for k in 1..m - 1 {
        if d[k - 1] * d[k] > 0.0 {
            // Weighted harmonic mean (Fritsch-Butland), within the monotone region.
            let (w1, w2) = (2.0 * h[k] + h[k - 1], h[k] + 2.0 * h[k - 1]);
            slope[k] = (w1 + w2) / (w1 / d[k - 1] + w2 / d[k]);
        }
    }
    // End slopes within 3x the secant, so the end pieces are monotone too.
    for (k, dk) in [(0, d[0]), (m - 1, d[m - 2])] {
        if slope[k] * dk <= 0.0 {
            slope[k] = 0.0;
        } else if slope[k].abs() > 3.0 * dk.abs() {
            slope[k] = 3.0 * dk;
        }
    }
    (0..m - 1)
        .map(|k| {
            let (y0, m0, m1, hk) = (knots[k].1, slope[k], slope[k + 1], h[k]);
            Poly3 {
                s: knots[k].0,
                a: y0,
                b: m0,
                c: (3.0 * d[k] - 2.0 * m0 - m1) / hk,
                d: (m0 + m1 - 2.0 * d[k]) / (hk * hk),
            }
        })
        // Level from the last knot on (no cubic carried past it).
        .chain(std::iter::once(Poly3 { s: knots[m - 1].0, a: knots[m - 1].1, b: 0.0, c: 0.0, d: 0.0 }))
        .collect()
}

/// Samples (x ascending) with every gap wider than `step` filled by points every `step` on
/// the straight line across it.
fn bridge(x: &[f64], y: &[f64], step: f64) -> (Vec<f64>, Vec<f64>) {
    let (mut ox, mut oy) = (Vec::with_capacity(x.len()), Vec::with_capacity(y.len()));
    for i in 0..x.len() {
        if i > 0 {
            let gap = x[i] - x[i - 1];
            let n = (gap / step).round() as usize;
            for k in 1..n {
                let f = k as f64 / n as f64;
                ox.push(x[i - 1] + f * gap);
                oy.push(y[i - 1] + f * (y[i] - y[i - 1]));
            }
        }
        ox.push(x[i]);
        oy.push(y[i]);
    }
    (ox, oy)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profile_through_a_step_stays_within_the_samples() {
        // A level run, a 0.1 rad step (a change the least-squares cubics ring across), level.
        let s: Vec<f64> = (0..200).map(|i| i as f64 * 0.5).collect();
        let v: Vec<f64> = s.iter().map(|&x| if x < 50.0 { 0.0 } else { 0.1 }).collect();
        let f = robust_profile(&s, &v, 0.002, 0.5, 1.0).unwrap();
        for k in 0..=1000 {
            let x = opendrive::eval::profile_value(&f.records, k as f64 * 0.1);
            assert!((-0.002..=0.102).contains(&x), "{x} at s {}", k as f64 * 0.1);
        }
    }

    #[test]
    fn a_ramp_keeps_its_first_samples() {
        // A 2 % grade from s 0.25 (the demo road's start): a running median took the first
        // rows for outliers (2.5 cm off) and held the elevation level over the first 1.75 m.
        let s: Vec<f64> = (0..100).map(|i| 0.25 + i as f64 * 0.5).collect();
        let v: Vec<f64> = s.iter().map(|&x| 0.02 * x).collect();
        let f = robust_profile(&s, &v, 0.01, 0.5, 1.0).unwrap();
        assert_eq!(f.rejected, 0);
        assert!((opendrive::eval::profile_value(&f.held(60.0), 0.0)).abs() < 1e-3);
    }

    #[test]
    fn profile_leaves_out_a_spike_and_holds_few_samples_level() {
        let s: Vec<f64> = (0..100).map(|i| i as f64 * 0.5).collect();
        let mut v: Vec<f64> = s.iter().map(|&x| 0.02 + 0.0001 * x).collect();
        v[40] = 0.9; // a facade row
        let f = robust_profile(&s, &v, 0.002, 0.5, 1.0).unwrap();
        assert!(f.rejected >= 1);
        let x = opendrive::eval::profile_value(&f.records, 20.0);
        assert!((x - 0.022).abs() < 0.002, "{x}");
        let two = robust_profile(&[20.25, 20.75], &[0.04, 0.05], 0.002, 0.5, 1.0).unwrap();
        assert_eq!(two.records.len(), 1);
        assert!((two.records[0].a - 0.045).abs() < 1e-12 && two.records[0].b == 0.0);
    }

    #[test]
    fn a_crest_keeps_its_samples_and_a_spike_on_it_goes() {
        // Town07 road 20's crest: grades of +8.2 % and -7.8 % joined by a 30 m parabola
        // (curvature -0.0053 /m), surveyed every 0.5 m. A running line sits 2.7 mm off the
        // crest's samples: with a 2 mm tolerance it took them all for clutter.
        let z = |x: f64| {
            let u = (x - 20.0).clamp(0.0, 30.0);
            0.082 * x - 0.002_673_5 * u * u - if x > 50.0 { 0.002_673_5 * 2.0 * 30.0 * (x - 50.0) } else { 0.0 }
        };
        let s: Vec<f64> = (0..140).map(|i| 0.25 + i as f64 * 0.5).collect();
        let mut v: Vec<f64> = s.iter().map(|&x| z(x)).collect();
        v[70] += 0.05; // a car's roof in one row
        let f = robust_curved_profile(&s, &v, 0.002, 0.5, 1.0).unwrap();
        assert_eq!(f.rejected, 1, "{f:?}");
        for k in 0..=690 {
            let x = 0.5 + k as f64 * 0.1;
            let e = opendrive::eval::profile_value(&f.records, x) - z(x);
            assert!(e.abs() < 0.002, "{e} at s {x}");
        }
        let line = robust_profile(&s, &v, 0.002, 0.5, 1.0).unwrap();
        assert!(line.rejected > 20, "{line:?}");
    }
}
