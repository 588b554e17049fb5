//! Lanes from the borders either side of the centre line (marking lines, curbs, the paved edge):
//! the sides the axis declares lanes on, line borders with a gap joined and bridged straight, lane
//! widths fitted per section, and sections cut where a border starts or ends or a lane narrows to
//! nothing.

use super::{
    edge::paved_edge,
    in_surface,
    markings::{centre_line, divided},
    median,
    profile::robust_profile,
    Curb, Finding, MarkingLine, SurveyOptions,
};
use crate::section::SectionGrid;
use opendrive::fit::{fit_profile, FitOptions};
use opendrive::{Extras, Lane, LaneSection, LaneSide, Lanes, Poly3, Road, RoadMark};

/// A lane border: samples of t(s), its extent, and the mark drawn on it.
struct Border {
    samples: Vec<(f64, f64)>,
    s_range: (f64, f64),
    mark: RoadMark,
    /// The type of the lane it bounds on the outside.
    kind: &'static str,
}

impl Border {
    /// Mean distance of its samples from the centre line, m.
    fn mean_t(&self) -> f64 {
        self.samples.iter().map(|p| p.1).sum::<f64>() / self.samples.len().max(1) as f64
    }
}

fn road_mark(kind: &str, width: f64, height: Option<f64>) -> RoadMark {
    RoadMark {
        s_offset: 0.0,
        kind: kind.into(),
        weight: (kind != "curb").then(|| "standard".into()),
        color: if kind == "curb" { "standard" } else { "white" }.into(),
        width: Some(width),
        lane_change: (kind != "curb").then(|| if kind == "broken" { "both" } else { "none" }.into()),
        height,
        ..Default::default()
    }
}

/// The sides of the reference line the axis road declares lanes on: both (a road of two
/// directions, or an axis that says nothing, like one fitted to a trajectory), or one (a
/// one-way road or ramp whose reference line is its edge).
/// Only road lanes count: a border, a sidewalk beside a one-way road's reference line is no
/// side of its own; the centre is then the axis's lane offset.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum LaneSides {
    /// Both, and the axis's lane offset records (where it says the centre is).
    Both(Vec<Poly3>),
    /// Only left (+1) or only right (-1), and the axis's lane offset records.
    One(f64, Vec<Poly3>),
}

impl LaneSides {
    pub(super) fn of(road: &Road) -> LaneSides {
        let secs = &road.lanes.lane_sections;
        let has = |left: bool| {
            secs.iter().any(|sec| {
                let side = if left { &sec.left } else { &sec.right };
                side.as_ref().is_some_and(|l| {
                    l.lanes.iter().any(|lane| {
                        let kind = lane.kind.as_deref().unwrap_or("none");
                        !matches!(kind, "border" | "none" | "sidewalk" | "walking" | "curb" | "median")
                    })
                })
            })
        };
        let one = |side: f64| LaneSides::One(side, road.lanes.lane_offsets.clone());
        match (has(true), has(false)) {
            (true, false) => one(1.0),
            (false, true) => one(-1.0),
            _ => LaneSides::Both(road.lanes.lane_offsets.clone()),
        }
    }
}

/// Lanes between the borders of each side of the centre line (the lane offset); sections
/// where a border starts or ends, within the surveyed s range `surveyed` (the first section
/// from s = 0 and the last to the road's end hold the lanes of the surveyed part). On an axis
/// with lanes on one side only, the centre is the reference line and the other side has no
/// lanes. A side with no marking line or curb gets one lane to the edge of the paved surface;
/// a finding when the points ran out before the pavement was seen to end.
///
/// The cross sections, curbs and edges are in plan (the grid's t, along the horizontal normal);
/// OpenDRIVE measures t along the superelevated surface, as `markings` already are
/// ([`super::in_surface`]). `plan(s)` is how far in plan one metre of the axis's t lies at s,
/// and the curbs' and edges' samples are divided by it first, so a 60° bank's lanes are written
/// twice as wide as they lie in plan, and the CRG, which takes them back into plan, covers
/// what was seen.
#[allow(clippy::too_many_arguments)]
pub(super) fn lanes(
    g: &SectionGrid,
    length: f64,
    lines: &[Option<[f64; 2]>],
    surveyed: (f64, f64),
    markings: &[MarkingLine],
    curbs: &[Option<Curb>; 2],
    sides_declared: &LaneSides,
    plan: &dyn Fn(f64) -> f64,
    opts: &SurveyOptions,
    findings: &mut Vec<Finding>,
) -> Lanes {
    let (s_lo, s_hi) = surveyed;
    let to_t = |samples: &[(f64, f64)]| -> Vec<(f64, f64)> {
        samples.iter().map(|&(s, t)| (s, in_surface(plan, s, t))).collect()
    };
    let curbs: [Option<Curb>; 2] = curbs.clone().map(|c| {
        c.map(|c| {
            let samples = to_t(&c.samples);
            let mid = samples.get(samples.len() / 2).map_or(0.5 * (s_lo + s_hi), |p| p.0);
            Curb { t: in_surface(plan, mid, c.t), samples, ..c }
        })
    });
    let curbs = &curbs;
    let edge_of = |sign: f64| {
        let mut e = paved_edge(g, lines, sign, opts.max_spread);
        e.samples = to_t(&e.samples);
        e
    };
    let (centre_samples, centre) = match sides_declared {
        LaneSides::Both(declared) if !divided(markings) => {
            centre_line(markings, |s| opendrive::eval::profile_value(declared, s))
        }
        LaneSides::Both(_) => (Vec::new(), None),
        // The centre lane's mark: a line along the reference line, if any.
        LaneSides::One(..) => {
            let on_line = |m: &&MarkingLine| m.samples.iter().filter(|p| p.1.abs() < 0.3).count() * 2 > m.samples.len();
            (Vec::new(), markings.iter().filter(on_line).max_by_key(|m| m.samples.len()))
        }
    };
    let width_fit = FitOptions { tolerance: opts.width_tolerance, min_length: 5.0 };
    let lane_offsets: Vec<Poly3> = if let LaneSides::One(_, declared) = &sides_declared {
        declared.clone()
    } else if centre_samples.len() >= 10 {
        let (s, t): (Vec<f64>, Vec<f64>) = centre_samples.iter().copied().unzip();
        let fit = fit_profile(&s, &t, &width_fit).map(|f| f.held(length)).unwrap_or_default();
        // A centre on the reference line needs no lane offset.
        if fit.iter().all(|p| p.a.abs() < 0.02 && p.b.abs() < 1e-4 && p.c.abs() < 1e-6 && p.d.abs() < 1e-8) {
            Vec::new()
        } else {
            fit
        }
    } else {
        Vec::new()
    };
    // (No records: 0.)
    let tc = |s: f64| opendrive::eval::profile_value(&lane_offsets, s);
    let centre_rows: std::collections::HashSet<i64> =
        centre_samples.iter().map(|p| (p.0 * 1000.0).round() as i64).collect();
    let mut sides: [Vec<Border>; 2] = [Vec::new(), Vec::new()];
    // Samples as distances from the centre line, on one side.
    let relative = |samples: &[(f64, f64)], sign: f64| -> Vec<(f64, f64)> {
        samples.iter().map(|&(s, t)| (s, t - tc(s))).filter(|p| p.1 * sign >= 0.5).map(|(s, d)| (s, d.abs())).collect()
    };
    for (k, sign) in [(0usize, 1.0f64), (1, -1.0)] {
        if matches!(sides_declared, LaneSides::One(side, _) if *side != sign) {
            continue;
        }
        let curb = curbs[k].as_ref();
        for m in markings {
            // The centre line itself, or a line mostly on the other side.
            let on_centre = m.samples.iter().filter(|p| {
                let key = (p.0 * 1000.0).round() as i64;
                centre_rows.contains(&key) && (p.1 - tc(p.0)).abs() < 0.3
            });
            if on_centre.count() * 2 > m.samples.len() || curb.is_some_and(|c| (c.t - m.t).abs() < 0.35) {
                continue;
            }
            let rel = relative(&m.samples, sign);
            if rel.len() * 2 <= m.samples.len() || rel.len() < 10 {
                continue;
            }
            let s_range = (rel[0].0 - 0.5 * g.ds, rel[rel.len() - 1].0 + 0.5 * g.ds);
            sides[k].push(Border { samples: rel, s_range, mark: road_mark(m.kind, m.width, None), kind: "driving" });
        }
        join_gaps(&mut sides[k]);
        if let Some(c) = curb {
            // The curb's border carries the mark of a line along it, if any.
            let line = markings.iter().find(|m| (c.t - m.t).abs() < 0.35);
            let mark =
                line.map_or_else(|| road_mark("curb", 0.15, Some(c.height)), |m| road_mark(m.kind, m.width, None));
            let rel = relative(&c.samples, sign);
            if !rel.is_empty() {
                sides[k].push(Border { samples: rel, s_range: (s_lo, s_hi), mark, kind: "driving" });
            }
        }
        if curb.is_none() && !sides[k].is_empty() {
            // Pavement seen to run on beyond the outermost line by a lane's width or more (an
            // unmarked outer lane, a hard shoulder) gets a lane to its edge: a shoulder beyond a
            // solid line, a driving lane beyond a broken one.
            let outer = sides[k].iter().max_by(|a, b| a.mean_t().total_cmp(&b.mean_t()));
            let edge = edge_of(sign);
            let rel: Vec<(f64, f64)> = edge.samples.iter().map(|&(s, t)| (s, (t - tc(s)) * sign)).collect();
            let t = median(&mut rel.iter().map(|p| p.1).collect::<Vec<_>>());
            if let (Some(outer), Some(t), true) = (outer, t, edge.seen) {
                if t >= outer.mean_t() + UNMARKED_LANE {
                    let kind = if outer.mark.kind == "solid" { "shoulder" } else { "driving" };
                    sides[k].push(Border {
                        samples: rel,
                        s_range: (s_lo, s_hi),
                        mark: road_mark("none", 0.12, None),
                        kind,
                    });
                }
            }
        }
        if sides[k].is_empty() {
            let edge = edge_of(sign);
            let rel: Vec<(f64, f64)> =
                edge.samples.iter().map(|&(s, t)| (s, (t - tc(s)) * sign)).filter(|p| p.1 >= MIN_LANE_WIDTH).collect();
            let side = if sign > 0.0 { "left" } else { "right" };
            let t = median(&mut rel.iter().map(|p| p.1).collect::<Vec<_>>());
            // A pavement seen to end (at gravel, grass or a step) bounds the road as a line
            // would; only an edge where the points ran out, or none at all, is a finding.
            let detail = match t {
                Some(_) if edge.seen => None,
                None if edge.seen && edge.samples.is_empty() => None,
                Some(t) => Some(format!(
                    "no marking line or curb on the {side}: one lane to where the points end, {t:.2} m from the centre ({} rows)",
                    rel.len()
                )),
                None => Some(format!("no marking line, curb or paved surface on the {side}: no lane")),
            };
            if let Some(detail) = detail {
                findings.push(Finding { check: "lanes from marking lines or curbs", detail });
            }
            if !rel.is_empty() {
                sides[k].push(Border {
                    samples: rel,
                    s_range: (s_lo, s_hi),
                    mark: road_mark("none", 0.12, None),
                    kind: "driving",
                });
            }
        }
        sides[k].sort_by(|a, b| a.mean_t().total_cmp(&b.mean_t()));
    }
    // Section starts: the road's start and where a border starts or ends (5 m inside).
    let mut cuts = vec![0.0];
    for b in sides.iter().flatten() {
        for s in [b.s_range.0, b.s_range.1] {
            if s > s_lo + 5.0 && s < s_hi - 5.0 && s < length - 5.0 {
                cuts.push(s);
            }
        }
    }
    cuts.sort_by(f64::total_cmp);
    cuts.dedup_by(|a, b| (*a - *b).abs() < 5.0);
    let mut sections = Vec::new();
    // Sections, then more where a lane narrows to nothing or grows from nothing within one
    // ([`narrowing_cuts`]), a few rounds (each cut refits the widths either side).
    for _ in 0..4 {
        sections.clear();
        for (i, &a) in cuts.iter().enumerate() {
            let b = cuts.get(i + 1).copied().unwrap_or(length);
            // The borders active in the middle of the section's surveyed part (a survey of part of
            // the road has its lanes from that part).
            let mid = if a < s_hi && b > s_lo { 0.5 * (a.max(s_lo) + b.min(s_hi)) } else { 0.5 * (a + b) };
            let side_lanes = |k: usize, sign: f64| -> Vec<Lane> {
                let active: Vec<&Border> =
                    sides[k].iter().filter(|br| br.s_range.0 <= mid && br.s_range.1 >= mid).collect();
                let mut out = Vec::new();
                for br in active.iter().copied() {
                    // Width: |t| of this border less the outer border of the lanes made so far
                    // (their fitted widths, which bridge the gaps between a broken line's
                    // dashes and where it was hidden or ended), in the section's rows.
                    let inner = |x: f64| -> f64 {
                        out.iter().map(|l: &Lane| opendrive::eval::profile_value(&l.widths, x)).sum()
                    };
                    let (ss, ws): (Vec<f64>, Vec<f64>) =
                        within(&br.samples, a, b, g.ds).into_iter().map(|(s, t)| (s - a, t - inner(s - a))).unzip();
                    // A border closer than a lane can be to the previous one (a double line, a
                    // stray detection in a sparse survey) makes no lane of its own: its width
                    // would be noise about zero.
                    if median(&mut ws.clone()).is_none_or(|w| w < MIN_LANE_WIDTH) {
                        continue;
                    }
                    // Gaps (a dash pattern, a parked car) bridged straight, stray samples left out
                    // and no record beyond the samples' range (`robust_profile`).
                    let widths = robust_profile(&ss, &ws, opts.width_tolerance, g.ds, 5.0)
                        .map(|f| f.held(b - a))
                        .unwrap_or_else(|| {
                            let w = median(&mut ws.clone()).unwrap_or(3.0);
                            vec![Poly3 { s: 0.0, a: w, b: 0.0, c: 0.0, d: 0.0 }]
                        });
                    out.push(Lane {
                        id: (out.len() as i32 + 1) * sign as i32,
                        kind: Some(br.kind.into()),
                        level: Some(false),
                        widths,
                        road_marks: vec![br.mark.clone()],
                        ..Default::default()
                    });
                }
                out
            };
            let (left, right) = (side_lanes(0, 1.0), side_lanes(1, -1.0));
            let centre_mark =
                centre.map_or_else(|| road_mark("none", 0.12, None), |m| road_mark(m.kind, m.width, None));
            let centre_lane =
                Lane { id: 0, kind: Some("none".into()), road_marks: vec![centre_mark], ..Default::default() };
            let wrap = |lanes: Vec<Lane>| (!lanes.is_empty()).then(|| LaneSide { lanes, extras: Extras::default() });
            let mut left = left;
            left.reverse();
            sections.push(LaneSection {
                s: a,
                left: wrap(left),
                center: Some(LaneSide { lanes: vec![centre_lane], extras: Extras::default() }),
                right: wrap(right),
                ..Default::default()
            });
        }
        let before = cuts.len();
        cuts.extend(narrowing_cuts(&sections, length, surveyed));
        cuts.sort_by(f64::total_cmp);
        cuts.dedup_by(|a, b| (*a - *b).abs() < 5.0);
        if cuts.len() == before {
            break;
        }
    }
    Lanes { lane_offsets, lane_sections: sections, ..Default::default() }
}

/// Line borders of one side that are one border with a gap: one starts at most
/// [`BORDER_GAP`] after another ends, within 1 m of where that one was last seen (a line that
/// crosses the rows obliquely where a 2+1 road changes sides, worn away, under a car): joined,
/// so the lanes either side run on across the gap (their widths bridged straight) instead of
/// a section of its own in which they are one lane.
fn join_gaps(borders: &mut Vec<Border>) {
    borders.sort_by(|a, b| a.s_range.0.total_cmp(&b.s_range.0));
    let mut i = 0;
    while i < borders.len() {
        let (end, last) = (borders[i].s_range.1, borders[i].samples.last().map_or(f64::NAN, |p| p.1));
        let next = (i + 1..borders.len()).find(|&j| {
            let b = &borders[j];
            let gap = b.s_range.0 - end;
            (0.0..=BORDER_GAP).contains(&gap) && b.samples.first().is_some_and(|p| (p.1 - last).abs() <= 1.0)
        });
        match next {
            Some(j) => {
                let b = borders.remove(j);
                let a = &mut borders[i];
                a.samples.extend(b.samples);
                a.s_range.1 = b.s_range.1;
            }
            None => i += 1,
        }
    }
}

/// The samples of a border (s ascending) from `a` to `b`; where it has none there (it runs
/// through the section unseen: a worn line, cars), points every `step` on the straight line
/// between its last sample before and its first after, when they are at most twice
/// [`BORDER_GAP`] apart.
fn within(samples: &[(f64, f64)], a: f64, b: f64, step: f64) -> Vec<(f64, f64)> {
    let (i, j) = (samples.partition_point(|p| p.0 < a), samples.partition_point(|p| p.0 <= b));
    if i < j {
        return samples[i..j].to_vec();
    }
    match (i.checked_sub(1).and_then(|k| samples.get(k)), samples.get(j)) {
        (Some(&(s0, t0)), Some(&(s1, t1))) if s1 - s0 <= 2.0 * BORDER_GAP && s1 > s0 => {
            let n = ((b - a) / step).floor() as usize;
            (0..=n).map(|k| a + k as f64 * step).map(|s| (s, t0 + (t1 - t0) * (s - s0) / (s1 - s0))).collect()
        }
        _ => Vec::new(),
    }
}

/// Longest gap between two line borders [`join_gaps`] joins, m.
const BORDER_GAP: f64 = 20.0;

/// Where sections should be cut because a lane of one is narrower than [`MIN_LANE_WIDTH`]
/// over 5 m or more at its end (two borders that converge: a lane that ends) or at its start
/// (one that begins), within the surveyed s range `surveyed` and 5 m inside the section: the
/// lane then has a section of its own without it, instead of a width that runs on about zero,
/// or below it, to the section's end.
fn narrowing_cuts(sections: &[LaneSection], length: f64, surveyed: (f64, f64)) -> Vec<f64> {
    let mut out = Vec::new();
    for (i, sec) in sections.iter().enumerate() {
        let end = sections.get(i + 1).map_or(length, |n| n.s);
        let (a, b) = (sec.s.max(surveyed.0), end.min(surveyed.1));
        if b - a < 10.0 {
            continue;
        }
        let n = ((b - a) / 0.5).floor() as usize;
        let xs: Vec<f64> = (0..=n).map(|k| a + (b - a) * k as f64 / n as f64).collect();
        for lane in sec.left.iter().chain(&sec.right).flat_map(|side| &side.lanes) {
            let narrow: Vec<bool> =
                xs.iter().map(|&x| opendrive::eval::profile_value(&lane.widths, x - sec.s) < MIN_LANE_WIDTH).collect();
            // Narrow from the first sample of the last run to the end, or from the start to the
            // last sample of the first run.
            let tail = narrow.iter().rev().take_while(|&&q| q).count();
            let head = narrow.iter().take_while(|&&q| q).count();
            if tail > 0 && tail < narrow.len() {
                let x = xs[narrow.len() - tail];
                if b - x >= 5.0 && x - sec.s >= 5.0 {
                    out.push(x);
                }
            }
            if head > 0 && head < narrow.len() {
                let x = xs[head - 1];
                if x - a >= 5.0 && end - x >= 5.0 {
                    out.push(x);
                }
            }
        }
    }
    out
}

/// Paved surface beyond the outermost marking line by this much or more is a lane of its own
/// (unmarked, or a shoulder), m: a lane is at least 2.5 m wide, a strip beyond an edge line
/// (0.3-1 m) is not.
const UNMARKED_LANE: f64 = 2.5;

/// Narrower lanes are not lanes (the borders are one line seen twice, or noise), m.
const MIN_LANE_WIDTH: f64 = 0.3;

#[cfg(test)]
mod tests {
    use super::super::markings::tests::line;
    use super::*;

    #[test]
    fn a_lane_that_narrows_to_nothing_gets_a_section_without_it() {
        // Lane -2 tapers from 3.5 m at s 30 to nothing at s 60 and runs on about zero (two
        // borders that met) to the section's end at 100: a cut where it is narrower than a lane
        // can be, not before it tapers nor where it is still wide.
        let lane = |id: i32, widths: Vec<Poly3>| Lane { id, widths, ..Default::default() };
        let w2 = vec![
            Poly3 { s: 0.0, a: 3.5, b: 0.0, c: 0.0, d: 0.0 },
            Poly3 { s: 30.0, a: 3.5, b: -3.5 / 30.0, c: 0.0, d: 0.0 },
            Poly3 { s: 60.0, a: 0.0, b: 0.0, c: 0.0, d: 0.0 },
        ];
        let side = |lanes: Vec<Lane>| Some(LaneSide { lanes, extras: Extras::default() });
        let sec = LaneSection {
            s: 0.0,
            right: side(vec![lane(-1, vec![Poly3 { s: 0.0, a: 3.5, b: 0.0, c: 0.0, d: 0.0 }]), lane(-2, w2)]),
            ..Default::default()
        };
        let cuts = narrowing_cuts(std::slice::from_ref(&sec), 100.0, (0.0, 100.0));
        assert_eq!(cuts.len(), 1, "{cuts:?}");
        // Narrower than 0.3 m from s 57.4 on (3.5 - 3.5 (s - 30) / 30 < 0.3).
        assert!((cuts[0] - 57.5).abs() <= 0.5, "{cuts:?}");
        // Outside the surveyed range, or too near the section's ends, no cut.
        assert!(narrowing_cuts(std::slice::from_ref(&sec), 100.0, (0.0, 55.0)).is_empty());
        assert!(narrowing_cuts(std::slice::from_ref(&sec), 61.0, (0.0, 61.0)).is_empty());
    }

    /// A line border along `s` every 0.5 m at `t`.
    fn border(s: (f64, f64), t: f64) -> Border {
        let samples = line("solid", s, |_| t).samples;
        Border { samples, s_range: s, mark: road_mark("solid", 0.12, None), kind: "driving" }
    }

    #[test]
    fn a_line_border_with_a_gap_is_one_border() {
        // two_plus_one: the line between the right lanes unseen over 16 m made a section in
        // which the two lanes were one, 6.76 m wide.
        let mut b = vec![border((50.0, 100.0), 3.4), border((0.0, 40.0), 3.5), border((45.0, 90.0), 6.0)];
        join_gaps(&mut b);
        assert_eq!(b.len(), 2, "{:?}", b.iter().map(|x| x.s_range).collect::<Vec<_>>());
        assert_eq!(b[0].s_range, (0.0, 100.0));
        assert_eq!(b[1].s_range, (45.0, 90.0));
        // Too far apart along s (30 m), or across (1.5 m): left apart.
        let mut b = vec![border((0.0, 40.0), 3.5), border((70.0, 100.0), 3.5), border((50.0, 60.0), 5.0)];
        join_gaps(&mut b);
        assert_eq!(b.len(), 3);
    }

    #[test]
    fn a_border_unseen_through_a_section_is_bridged_straight() {
        let samples = vec![(10.0, 3.0), (12.0, 3.0), (40.0, 4.0), (41.0, 4.0)];
        // Samples in the range: those.
        assert_eq!(within(&samples, 11.0, 13.0, 0.5), vec![(12.0, 3.0)]);
        // None in it: points on the line from s 12 to s 40.
        let p = within(&samples, 20.0, 30.0, 0.5);
        assert_eq!(p.len(), 21);
        assert!(p.iter().all(|&(s, t)| (t - (3.0 + (s - 12.0) / 28.0)).abs() < 1e-9), "{p:?}");
        // Nothing after it, or the samples either side more than 40 m apart: nothing.
        assert!(within(&samples, 50.0, 60.0, 0.5).is_empty());
        assert!(within(&[(0.0, 3.0), (45.0, 3.0)], 20.0, 30.0, 0.5).is_empty());
    }
}
