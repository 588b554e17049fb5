//! Marking lines: bright runs of road-level cells per row, tracked along s into lines (across gaps
//! at their heading), solid or broken from their dash pattern; the centre line chosen among them
//! row by row, and whether the lines are those of a divided road about its reference line.

use super::{in_surface, median, Curb, MarkingLine, SurveyOptions};
use crate::section::SectionGrid;

/// Marking hits per row, tracked into lines. Hits are found in plan (the grid's t) and tracked
/// in OpenDRIVE's t ([`in_surface`], `plan` as there): a line at constant t on a road whose bank
/// changes moves across the rows in plan (on the velodrome's ramp from 59° to 19°, 1.3 m over
/// 60 m), and would not be followed across a gap between dashes.
pub(super) fn find_markings(
    g: &SectionGrid,
    lines: &[Option<[f64; 2]>],
    curbs: &[Option<Curb>; 2],
    plan: &dyn Fn(f64) -> f64,
    opts: &SurveyOptions,
) -> Vec<MarkingLine> {
    let reach = |c: &Option<Curb>| c.as_ref().map_or(f64::INFINITY, |c| c.t.abs() + 0.1);
    let (left_max, right_max) = (reach(&curbs[0]), reach(&curbs[1]));
    let win = (0.6 / g.dt).round() as usize;
    struct Track {
        hits: Vec<(usize, f64, f64)>,
    }
    let mut tracks: Vec<Track> = Vec::new();
    for (r, line) in lines.iter().enumerate() {
        let Some(line) = *line else { continue };
        let inten: Vec<f64> = (0..g.cols)
            .map(|c| {
                let t = g.t_of(c);
                let inside = if t >= 0.0 { t <= left_max } else { -t <= right_max };
                let level = g.mean_h(r, c).is_some_and(|h| (h - line[0] - line[1] * t).abs() < 0.05);
                if inside && level {
                    g.mean_intensity(r, c).unwrap_or(f64::NAN)
                } else {
                    f64::NAN
                }
            })
            .collect();
        let bright = |c: usize| -> Option<f64> {
            let i = inten[c];
            if !i.is_finite() {
                return None;
            }
            let mut bg: Vec<f64> = inten[c.saturating_sub(win)..(c + win + 1).min(g.cols)]
                .iter()
                .copied()
                .filter(|v| v.is_finite())
                .collect();
            let b = median(&mut bg)?;
            (b > 0.0 && i > opts.contrast * b).then_some(i - b)
        };
        // Runs of bright cells; empty cells (far from the scanner, cells are sparse) neither
        // end nor widen a run, and its edges lie halfway to the dark cells beside it.
        let state: Vec<Option<bool>> = (0..g.cols).map(|c| inten[c].is_finite().then(|| bright(c).is_some())).collect();
        let mut hits = Vec::new();
        let mut c = 0;
        while c < g.cols {
            if state[c] != Some(true) {
                c += 1;
                continue;
            }
            let (first, mut last) = (c, c);
            let (mut sw, mut swt) = (0.0, 0.0);
            let mut k = c;
            while k < g.cols && state[k] != Some(false) && (k - last) as f64 * g.dt <= 0.1 {
                if state[k] == Some(true) {
                    let e = bright(k).unwrap_or(0.0);
                    sw += e;
                    swt += e * g.t_of(k);
                    last = k;
                }
                k += 1;
            }
            let dark_before = (0..first).rev().find(|&j| state[j] == Some(false));
            let dark_after = (last + 1..g.cols).find(|&j| state[j] == Some(false));
            let lo = dark_before.map_or(g.t_of(first) - 0.5 * g.dt, |j| 0.5 * (g.t_of(j) + g.t_of(first)));
            let hi = dark_after.map_or(g.t_of(last) + 0.5 * g.dt, |j| 0.5 * (g.t_of(j) + g.t_of(last)));
            let width = hi - lo;
            if (0.06..=0.6).contains(&width) && sw > 0.0 {
                hits.push((swt / sw, width));
            }
            c = last + 1;
        }
        let k = in_surface(plan, g.s_of(r), 1.0);
        for (t, w) in hits.into_iter().map(|(t, w)| (t * k, w * k)) {
            // How far a track's line is from t at this row: from where it was last seen, or,
            // across a gap of more than 2 m (between dashes, behind a car), from where it
            // heads (a line that tapers or splays crosses the rows obliquely). Not within 2 m:
            // two lines of a double line would swap hits.
            let off = |tr: &Track| {
                tr.hits.last().map_or(f64::INFINITY, |h| {
                    let seen = (h.1 - t).abs();
                    if (r - h.0) as f64 * g.ds <= 2.0 {
                        seen
                    } else {
                        seen.min((track_ahead(&tr.hits, r, g.ds) - t).abs())
                    }
                })
            };
            let near = tracks
                .iter_mut()
                // Across 20 m of lost sight, or 40 m (an occlusion, cobbles) right on line.
                .filter_map(|tr| {
                    let (gap, dt) = ((r - tr.hits.last()?.0) as f64 * g.ds, off(tr));
                    ((gap <= 20.0 && dt < 0.2) || (gap <= 40.0 && dt < 0.08)).then_some((dt, tr))
                })
                .min_by(|a, b| a.0.total_cmp(&b.0))
                .map(|(_, tr)| tr);
            match near {
                Some(tr) if tr.hits.last().is_some_and(|h| h.0 != r) => tr.hits.push((r, t, w)),
                _ => tracks.push(Track { hits: vec![(r, t, w)] }),
            }
        }
    }
    let mut out: Vec<MarkingLine> = tracks
        .into_iter()
        .filter(|tr| tr.hits.len() >= 10 && (tr.hits[tr.hits.len() - 1].0 - tr.hits[0].0) as f64 * g.ds >= 10.0)
        .map(|tr| {
            let (r0, r1) = (tr.hits[0].0, tr.hits[tr.hits.len() - 1].0);
            // Runs of rows with and without the line.
            let mut present = vec![false; r1 - r0 + 1];
            for h in &tr.hits {
                present[h.0 - r0] = true;
            }
            let (mut on, mut off) = (Vec::new(), Vec::new());
            let mut run = (present[0], 0usize);
            for &p in &present {
                if p == run.0 {
                    run.1 += 1;
                } else {
                    if run.0 {
                        on.push(run.1)
                    } else {
                        off.push(run.1)
                    }
                    run = (p, 1);
                }
            }
            if run.0 {
                on.push(run.1);
            }
            let absent = present.iter().filter(|p| !**p).count() as f64 / present.len() as f64;
            let broken = off.iter().filter(|&&n| n >= 2).count() >= 3 && (0.25..0.85).contains(&absent);
            let to_m = |v: Vec<usize>| median(&mut v.into_iter().map(|n| n as f64 * g.ds).collect::<Vec<_>>());
            let dash_gap = if broken { to_m(on).zip(to_m(off)) } else { None };
            let mut ts: Vec<f64> = tr.hits.iter().map(|h| h.1).collect();
            let mut ws: Vec<f64> = tr.hits.iter().map(|h| h.2).collect();
            MarkingLine {
                t: median(&mut ts).unwrap_or(0.0),
                s_range: (g.s0 + r0 as f64 * g.ds, g.s0 + (r1 + 1) as f64 * g.ds),
                kind: if broken { "broken" } else { "solid" },
                width: (median(&mut ws).unwrap_or(0.12) * 100.0).round() / 100.0,
                dash_gap,
                samples: tr.hits.iter().map(|h| (g.s_of(h.0), h.1)).collect(),
            }
        })
        .collect();
    out.sort_by(|a, b| a.t.total_cmp(&b.t));
    out
}

/// Where a tracked line (hits: row, t, width) is at row `r`: its last t carried on at its
/// heading over the last [`HEADING_SPAN`] of hits (held straight when they span less than
/// half of it, and at most 0.35 m a metre: a taper), so a line that tapers or splays is
/// followed across a gap between its dashes or a car.
fn track_ahead(hits: &[(usize, f64, f64)], r: usize, ds: f64) -> f64 {
    let Some(&(r1, t1, _)) = hits.last() else { return f64::NAN };
    let span = (HEADING_SPAN / ds).round() as usize;
    let first = hits.iter().rev().take_while(|h| r1 - h.0 <= span).last().copied();
    match first {
        Some((r0, t0, _)) if (r1 - r0) * 2 >= span => {
            let slope = ((t1 - t0) / ((r1 - r0) as f64 * ds)).clamp(-0.35, 0.35);
            t1 + slope * (r.saturating_sub(r1)) as f64 * ds
        }
        _ => t1,
    }
}

/// Hits along s over which a tracked line's heading is taken, m.
const HEADING_SPAN: f64 = 3.0;

/// The centre line: per row, among the lines seen there, an inner one (not the outermost on
/// either side; a lone line within 0.5 m of the reference line where only two are seen):
/// one within 0.5 m of the centre the axis declares (`declared`, its lane offset: a designed
/// road's reference line is its centre line, whatever the lines' types), else solid before
/// broken, then the nearest to the previous row's choice; the middle of a double line. A row
/// whose candidates all lie more than [`CENTRE_JUMP`] from the previous choice, made within
/// the last 20 m, gives no sample: in a gap of a broken centre line an inner lane line is
/// seen, not the centre. Its samples, and the line chosen most often (for the centre lane's
/// mark).
pub(super) fn centre_line(
    markings: &[MarkingLine],
    declared: impl Fn(f64) -> f64,
) -> (Vec<(f64, f64)>, Option<&MarkingLine>) {
    let mut rows: std::collections::BTreeMap<i64, Vec<(f64, usize)>> = std::collections::BTreeMap::new();
    for (k, m) in markings.iter().enumerate() {
        for &(s, t) in &m.samples {
            rows.entry((s * 1000.0).round() as i64).or_default().push((t, k));
        }
    }
    let (mut out, mut votes) = (Vec::new(), vec![0usize; markings.len()]);
    // The previous choice: (s, t).
    let mut prev: Option<(f64, f64)> = None;
    for (key, mut hits) in rows {
        let s = key as f64 / 1000.0;
        let c0 = declared(s);
        hits.sort_by(|a, b| a.0.total_cmp(&b.0));
        let cands: Vec<(f64, usize)> = if hits.len() >= 3 {
            hits[1..hits.len() - 1].to_vec()
        } else {
            hits.iter().copied().filter(|h| (h.0 - c0).abs() < 0.5).collect()
        };
        let recent = prev.filter(|p| s - p.0 <= 20.0);
        let cands: Vec<(f64, usize)> =
            cands.into_iter().filter(|h| recent.is_none_or(|p| (h.0 - p.1).abs() <= CENTRE_JUMP)).collect();
        let last_t = prev.map_or(c0, |p| p.1);
        let pick = cands.iter().min_by(|a, b| {
            let rank =
                |h: &(f64, usize)| ((h.0 - c0).abs() >= 0.5, markings[h.1].kind != "solid", (h.0 - last_t).abs());
            let (ra, rb) = (rank(a), rank(b));
            ra.0.cmp(&rb.0).then(ra.1.cmp(&rb.1)).then(ra.2.total_cmp(&rb.2))
        });
        if let Some(&(t, k)) = pick {
            // A double line: the centre is between its two lines.
            let pair = hits
                .iter()
                .find(|h| h.1 != k && (h.0 - t).abs() <= DOUBLE_LINE && markings[h.1].kind == markings[k].kind);
            let t = pair.map_or(t, |h| 0.5 * (t + h.0));
            out.push((s, t));
            votes[k] += 1;
            prev = Some((s, t));
        }
    }
    let best = votes.iter().enumerate().filter(|v| *v.1 > 0).max_by_key(|v| *v.1).map(|v| &markings[v.0]);
    (out, best)
}

/// Two lines of a kind this close or closer are a double line (0.1-0.15 m lines with a gap
/// of 0.1-0.2 m between them), m.
const DOUBLE_LINE: f64 = 0.4;

/// How far the centre line moves from one row to the next at most (a lane offset changes
/// over tens of metres), m.
const CENTRE_JUMP: f64 = 1.0;

/// Whether the lines are those of a divided road about its reference line: none within 1 m of
/// it, and every line mirrored (within 0.3 m) on the other side. The centre is then the
/// reference line in the median, which no line marks.
pub(super) fn divided(markings: &[MarkingLine]) -> bool {
    let long: Vec<f64> = markings.iter().filter(|m| m.samples.len() >= 10).map(|m| m.t).collect();
    long.len() >= 2
        && long.iter().all(|t| t.abs() >= 1.0)
        && long.iter().all(|t| long.iter().any(|u| (t + u).abs() < 0.3))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A line every 0.5 m over `s` (dashes of 3 m every 9 m when `broken`) at t(s).
    pub(in crate::road) fn line(kind: &'static str, s: (f64, f64), t: impl Fn(f64) -> f64) -> MarkingLine {
        let samples: Vec<(f64, f64)> = (0..)
            .map(|i| s.0 + 0.5 * f64::from(i))
            .take_while(|&x| x <= s.1)
            .filter(|&x| kind == "solid" || (x - s.0).rem_euclid(9.0) < 3.0)
            .map(|x| (x, t(x)))
            .collect();
        MarkingLine { t: t(s.0), s_range: s, kind, width: 0.12, dash_gap: None, samples }
    }

    #[test]
    fn centre_is_the_line_on_the_designed_reference_line() {
        // esmini's tunnels road: a broken centre line on the reference line and a solid line
        // between the two lanes of the right side; the solid one was taken for the centre.
        let m = vec![
            line("solid", (0.0, 100.0), |_| -6.5),
            line("solid", (0.0, 100.0), |_| -3.0),
            line("broken", (0.0, 100.0), |_| 0.0),
            line("solid", (0.0, 100.0), |_| 3.0),
        ];
        let (samples, best) = centre_line(&m, |_| 0.0);
        assert!(samples.len() > 50);
        assert!(samples.iter().all(|p| p.1.abs() < 0.01), "{:?}", samples.iter().find(|p| p.1.abs() >= 0.01));
        assert_eq!(best.map(|b| b.kind), Some("broken"));
    }

    #[test]
    fn centre_keeps_off_a_lane_line_in_the_gaps_of_its_dashes() {
        // Three lanes: in the gaps of the broken centre line only the lane lines are seen, the
        // inner one of which was taken for the centre (the lane offset jumped by 3.6 m). The
        // lane line's dashes lie in the centre line's gaps (from s 4.5).
        let m = vec![
            line("solid", (0.0, 100.0), |_| -7.1),
            line("broken", (4.5, 100.0), |_| -3.6),
            line("broken", (0.0, 100.0), |_| 0.0),
            line("solid", (0.0, 100.0), |_| 3.6),
        ];
        let (samples, _) = centre_line(&m, |_| 0.0);
        assert!(samples.iter().all(|p| p.1.abs() < 0.01), "{:?}", samples.iter().find(|p| p.1.abs() >= 0.01));
    }

    #[test]
    fn centre_of_a_double_line_is_between_its_lines() {
        // CARLA's Town07: a double solid line 0.26 m apart; the centre swapped between them.
        let m = vec![
            line("broken", (0.0, 100.0), |_| -3.2),
            line("solid", (0.0, 100.0), |_| -0.13),
            line("solid", (0.0, 100.0), |_| 0.13),
            line("broken", (0.0, 100.0), |_| 3.2),
        ];
        let (samples, _) = centre_line(&m, |_| 0.0);
        assert!(samples.len() > 150);
        assert!(samples.iter().all(|p| p.1.abs() < 0.01), "{:?}", samples.iter().find(|p| p.1.abs() >= 0.01));
    }

    #[test]
    fn a_tapering_line_is_followed_across_a_gap() {
        // A line splaying outward at 0.24 m a metre, last seen 4 m (8 rows) back: where it
        // heads is within 2 cm, where it was last seen a metre off.
        let hits: Vec<(usize, f64, f64)> = (0..10).map(|r| (r, -3.57 - 0.12 * r as f64, 0.12)).collect();
        let ahead = track_ahead(&hits, 17, 0.5);
        assert!((ahead - (-3.57 - 0.12 * 17.0)).abs() < 0.02, "{ahead}");
        // A straight line is held straight, also with a few millimetres of noise.
        let level: Vec<(usize, f64, f64)> = (0..10).map(|r| (r, 3.0 + 0.004 * (r % 2) as f64, 0.12)).collect();
        assert!((track_ahead(&level, 40, 0.5) - 3.0).abs() < 0.05);
    }
}
