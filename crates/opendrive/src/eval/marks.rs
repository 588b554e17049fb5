//! Where a road's `<roadMark>`s put paint: lines along lane borders, solid or dashed.

use super::RoadEval;
use crate::model::Road;

/// Dash and gap of a `broken` mark, m (the standard's pattern does not fix it; 3 m and 6 m is
/// the common rural one and what the virtual survey paints).
pub const BROKEN: (f64, f64) = (3.0, 6.0);

/// Width of a mark that gives none, m.
pub const DEFAULT_WIDTH: f64 = 0.12;

/// A painted line along a lane's outer border.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PaintLine {
    /// The lane whose outer border the line follows (0: the centre lane, at the lane offset).
    pub lane: i32,
    /// Centre of the line relative to that border, m (lateral, positive to the left).
    pub t: f64,
    /// Start, m (dashes start here).
    pub s0: f64,
    /// End, m.
    pub s1: f64,
    /// Width, m.
    pub width: f64,
    /// Dash and gap lengths, m; `None` = solid.
    pub dash: Option<(f64, f64)>,
}

impl PaintLine {
    /// True when a dash (or the solid line) covers station `s`.
    pub fn on_at(&self, s: f64) -> bool {
        s >= self.s0 && s < self.s1 && self.dash.is_none_or(|(d, g)| (s - self.s0).rem_euclid(d + g) < d)
    }
}

/// The lines `road`'s roadMarks paint within `range` of s: each mark on its lane's outer border
/// from its sOffset to the next mark or the section's end; `solid`, `broken` and the double
/// types (two lines of the mark's width, one width apart, the first towards the road's centre).
/// Other types (botts dots, grass, curb, none) paint nothing.
pub fn paint_lines(road: &Road, range: (f64, f64)) -> Vec<PaintLine> {
    let mut out = Vec::new();
    let secs = &road.lanes.lane_sections;
    for (i, sec) in secs.iter().enumerate() {
        let sec_end = secs.get(i + 1).map_or(road.length, |n| n.s);
        for lane in sec.lanes() {
            for (k, rm) in lane.road_marks.iter().enumerate() {
                let a = sec.s + rm.s_offset;
                let b = lane.road_marks.get(k + 1).map_or(sec_end, |n| sec.s + n.s_offset);
                let (a, b) = (a.max(range.0), b.min(range.1));
                if b <= a {
                    continue;
                }
                let w = rm.width.filter(|w| *w > 0.0).unwrap_or(DEFAULT_WIDTH);
                let broken = Some(BROKEN);
                let lines: &[(f64, Option<(f64, f64)>)] = match rm.kind.as_str() {
                    "solid" => &[(0.0, None)],
                    "broken" => &[(0.0, broken)],
                    "solid solid" => &[(-1.0, None), (1.0, None)],
                    "solid broken" => &[(-1.0, None), (1.0, broken)],
                    "broken solid" => &[(-1.0, broken), (1.0, None)],
                    "broken broken" => &[(-1.0, broken), (1.0, broken)],
                    _ => &[],
                };
                let outward = if lane.id < 0 { -1.0 } else { 1.0 };
                for &(side, dash) in lines {
                    out.push(PaintLine { lane: lane.id, t: side * outward * w + 0.0, s0: a, s1: b, width: w, dash });
                }
            }
        }
    }
    out
}

impl RoadEval<'_> {
    /// The t intervals (low, high) that `lines` paint at station `s`.
    pub fn painted_at(&self, lines: &[PaintLine], s: f64) -> Vec<(f64, f64)> {
        let mut borders: Option<Vec<(i32, f64)>> = None;
        let mut out = Vec::new();
        for l in lines.iter().filter(|l| l.on_at(s)) {
            let base = if l.lane == 0 {
                self.lane_offset(s)
            } else {
                let b = borders.get_or_insert_with(|| self.lane_borders(s));
                match b.iter().find(|x| x.0 == l.lane) {
                    Some(x) => x.1,
                    None => continue,
                }
            };
            let c = base + l.t;
            out.push((c - l.width / 2.0, c + l.width / 2.0));
        }
        out
    }
}
