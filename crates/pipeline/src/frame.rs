//! Points into the planar road frame (s, t) of an OpenDRIVE road, incrementally.
//!
//! The reference line is tabulated every 5 cm (position, heading, curvature). A point is
//! projected on the osculating circle of the nearest table entry: over half a step the
//! direction of a clothoid's normal departs from the circle's by ½·dκ/ds·0.025², so the foot
//! point moves by that times |t| (3e-6 m at t = 30 m on the demo road's clothoid, whose
//! curvature changes by 1/60 m over 30 m): exact to well below the points' millimetre
//! quantisation. Survey points arrive in scan order, each near
//! the previous one along the road, so the search starts at the last entry and walks a few
//! steps; only the first point, or one that jumps, looks the nearest entry up in a 10 m grid
//! index of the table.

use opendrive::RoadEval;

const STEP: f64 = 0.05;

/// One entry of the reference-line table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Station {
    /// m.
    pub s: f64,
    /// File frame, m.
    pub x: f64,
    /// m.
    pub y: f64,
    /// Tangent (cos, sin of the heading).
    pub tangent: [f64; 2],
    /// 1/m, left positive.
    pub curvature: f64,
    /// 1 / curvature, m (infinite on a straight line).
    pub radius: f64,
}

/// The tabulated reference line of one road and the last station used.
#[derive(Debug, Clone)]
pub struct RoadFrame {
    table: Vec<Station>,
    length: f64,
    last: Option<usize>,
    /// Table entries by 10 m cell of the file frame: where a search starts or recovers.
    index: std::collections::HashMap<(i64, i64), Vec<u32>>,
    /// The entries' bounding box: min x, min y, max x, max y.
    bounds: [f64; 4],
}

/// How far outside its band [`RoadFrame::project_within`] wants a point's t on the tangent
/// before it rejects the point, m: far above what the tangent departs from the line by.
const TANGENT_SLACK: f64 = 0.01;

/// Cell size of the index, m.
const CELL: f64 = 10.0;

impl RoadFrame {
    /// Tabulates the road's reference line.
    pub fn new(road: &RoadEval) -> RoadFrame {
        let length = road.length();
        let n = (length / STEP).ceil().max(1.0) as usize;
        let table = (0..=n)
            .map(|i| {
                let s = (i as f64 * STEP).min(length);
                let p = road.pose(s);
                let (tangent, curvature) = ([p.hdg.cos(), p.hdg.sin()], p.curvature);
                Station { s, x: p.x, y: p.y, tangent, curvature, radius: 1.0 / curvature }
            })
            .collect();
        let table: Vec<Station> = table;
        let mut index: std::collections::HashMap<(i64, i64), Vec<u32>> = std::collections::HashMap::new();
        for (i, st) in table.iter().enumerate() {
            index.entry(((st.x / CELL).floor() as i64, (st.y / CELL).floor() as i64)).or_default().push(i as u32);
        }
        let bounds = table
            .iter()
            .fold([f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY], |[a, b, c, d], st| {
                [a.min(st.x), b.min(st.y), c.max(st.x), d.max(st.y)]
            });
        RoadFrame { table, length, last: None, index, bounds }
    }

    /// Reference-line length, m.
    pub fn length(&self) -> f64 {
        self.length
    }

    /// Largest |curvature| of the reference line (of the table), 1/m.
    pub fn max_curvature(&self) -> f64 {
        self.table.iter().map(|st| st.curvature.abs()).fold(0.0, f64::max)
    }

    /// (s, t) of the file-frame point (x, y): the foot point on the reference line nearest the
    /// previous point's, or `None` when the foot lies beyond the road's ends.
    pub fn project(&mut self, x: f64, y: f64) -> Option<(f64, f64)> {
        let mut last = self.last;
        let st = self.project_from(&mut last, x, y);
        self.last = last;
        st
    }

    /// [`RoadFrame::project`] with the last station kept by the caller (`None`: look it up),
    /// so that several runs of points can be projected at once.
    pub fn project_from(&self, last: &mut Option<usize>, x: f64, y: f64) -> Option<(f64, f64)> {
        let mut i = match *last {
            Some(i) => i,
            None => self.nearest(x, y),
        };
        // Walk to the entry whose half-step holds the foot point (a few steps for scan-ordered
        // points); a long walk means a jump: search the table instead.
        let mut walked = 0;
        let (ds, t) = loop {
            let (ds, t) = local(&self.table[i], x, y);
            match self.toward(i, ds) {
                Some(j) => i = j,
                None => break (ds, t),
            }
            walked += 1;
            if walked == 256 {
                i = self.nearest(x, y);
                // Settle from the nearest entry without another restart.
                for _ in 0..8 {
                    match self.toward(i, local(&self.table[i], x, y).0) {
                        Some(j) => i = j,
                        None => break,
                    }
                }
                break local(&self.table[i], x, y);
            }
        };
        *last = Some(i);
        self.on_road(self.table[i].s + ds, t)
    }

    /// (s, t) when s lies on the road (to a nanometre), `None` beyond its ends.
    #[inline(always)]
    fn on_road(&self, s: f64, t: f64) -> Option<(f64, f64)> {
        (s >= -1e-9 && s <= self.length + 1e-9).then_some((s.clamp(0.0, self.length), t))
    }

    /// [`RoadFrame::project_from`] for callers that keep only points with t within `band`:
    /// `None` also for a point the tangent of the entry nearest its foot puts more than
    /// [`TANGENT_SLACK`] outside the band. Most points of a survey (facades, trees) lie outside
    /// the road's band; the tangent needs no square root, division or arc tangent, and the walk
    /// to the entry takes the tangent's steps too.
    ///
    /// Exact: nearer the line than half the radius (|b·κ| ≤ ½), the arc on an entry's
    /// osculating circle to the foot point is at most a / (1 - b·κ) (less where the arc
    /// tangent bends it), so the walk takes the entries' steps in a scaled by that; where it
    /// stops, within half a step that way (|a| ≤ 3.75 cm), the exact walk from the same entry
    /// stops too, and t on that circle departs from b by at most a²·|κ| (35 µm at κ = 1/40 m).
    /// There, a kept point's (s, t) on that circle come from the tangent's a and b at once.
    /// (Where the reference line has a kink or a gap, which entry's circle claims a point
    /// depends on where a walk starts, here as in [`RoadFrame::project_from`].)
    #[inline(always)]
    pub fn project_within(&self, last: &mut Option<usize>, x: f64, y: f64, band: (f64, f64)) -> Option<(f64, f64)> {
        if let Some(mut i) = *last {
            for _ in 0..8 {
                let st = &self.table[i];
                let (dx, dy) = (x - st.x, y - st.y);
                let [c, sn] = st.tangent;
                let b = -dx * sn + dy * c;
                if (b * st.curvature).abs() > 0.5 {
                    break;
                }
                let a = dx * c + dy * sn;
                let half = 0.5 * STEP * (1.0 - b * st.curvature);
                if a > half && i + 1 < self.table.len() {
                    i += 1;
                } else if a < -half && i > 0 {
                    i -= 1;
                } else {
                    if a.abs() <= half {
                        *last = Some(i);
                        if b < band.0 - TANGENT_SLACK || b > band.1 + TANGENT_SLACK {
                            return None;
                        }
                        // Where the exact walk from this entry stops too: its projection.
                        let (ds, t) = on_circle(st, a, b);
                        if self.toward(i, ds).is_none() {
                            return self.on_road(st.s + ds, t);
                        }
                    }
                    break;
                }
            }
            *last = Some(i);
        }
        // A point farther than the band's reach from the entries' bounding box (plus a step:
        // the entry nearest a point within the band lies at most half a step along the line
        // from its foot) is outside the band: rejected without a walk or a search of the
        // table (points of a tile reaching far beyond the road cost 55 µs each that way).
        let reach = band.0.abs().max(band.1.abs()) + TANGENT_SLACK + STEP;
        let [x0, y0, x1, y1] = self.bounds;
        if x < x0 - reach || x > x1 + reach || y < y0 - reach || y > y1 + reach {
            return None;
        }
        self.project_from(last, x, y)
    }

    /// The neighbouring entry towards the foot point when it lies `ds` from entry `i`, beyond
    /// that entry's half-step (and there is one); `None` when entry `i` holds it.
    fn toward(&self, i: usize, ds: f64) -> Option<usize> {
        if ds > 0.5 * STEP && i + 1 < self.table.len() {
            Some(i + 1)
        } else if ds < -0.5 * STEP && i > 0 {
            Some(i - 1)
        } else {
            None
        }
    }

    /// The entry nearest (x, y): rings of index cells around the point until no nearer entry
    /// can lie further out (within 300 m), else every entry.
    fn nearest(&self, x: f64, y: f64) -> usize {
        let (cx, cy) = ((x / CELL).floor() as i64, (y / CELL).floor() as i64);
        let mut best = (f64::INFINITY, usize::MAX);
        let d2 = |i: usize| (self.table[i].x - x).powi(2) + (self.table[i].y - y).powi(2);
        for k in 0..=30i64 {
            // Every point of ring k is at least (k - 1) cells away.
            if best.1 != usize::MAX && ((k - 1).max(0) as f64 * CELL).powi(2) > best.0 {
                return best.1;
            }
            for i in -k..=k {
                for j in -k..=k {
                    if i.abs() != k && j.abs() != k {
                        continue;
                    }
                    for &e in self.index.get(&(cx + i, cy + j)).map_or(&[][..], |v| v.as_slice()) {
                        let d = d2(e as usize);
                        if d < best.0 {
                            best = (d, e as usize);
                        }
                    }
                }
            }
        }
        // Far from the road: every entry.
        (0..self.table.len()).min_by(|&a, &b| d2(a).total_cmp(&d2(b))).unwrap_or(0)
    }
}

/// (Δs, t) of (x, y) on the osculating circle (or the tangent) at `st`.
fn local(st: &Station, x: f64, y: f64) -> (f64, f64) {
    let (dx, dy) = (x - st.x, y - st.y);
    let [c, s] = st.tangent;
    // Along the tangent, along the left normal.
    on_circle(st, dx * c + dy * s, -dx * s + dy * c)
}

/// (Δs, t) on the osculating circle (or the tangent) at `st` of the point `a` along its
/// tangent and `b` along its left normal.
#[inline(always)]
fn on_circle(st: &Station, a: f64, b: f64) -> (f64, f64) {
    let k = st.curvature;
    if k.abs() * (a.abs() + b.abs()) < 1e-12 {
        return (a, b);
    }
    // The point seen from the circle's centre: (1 - κb)·r towards the station, a across; the
    // angle's tangent q. Near the station (|q| < 0.01), the arc r·atan(q) and t = r - sign(r)·
    // √(a² + (r - b)²) as series in q (the rest below 1e-14 of them), without a square root, an
    // arc tangent or a second division.
    let e = 1.0 - k * b;
    if e > 0.0 {
        let d = 1.0 / e;
        let q = k * a * d;
        if q.abs() < 0.01 {
            let q2 = q * q;
            let ds = a * d * (1.0 - q2 * (1.0 / 3.0 - q2 * (1.0 / 5.0 - q2 / 7.0)));
            let t = b - 0.5 * k * a * a * d * (1.0 - q2 * (0.25 - q2 * 0.125));
            return (ds, t);
        }
    }
    // Centre at (0, r) in the local frame; the arc from the station to the foot point.
    let r = st.radius;
    let (ca, cb) = (a, b - r);
    let dist = (ca * ca + cb * cb).sqrt();
    let angle = (r * ca).atan2(-r * cb);
    // t = r - sign(r)·dist, without the cancellation of two radii.
    (r * angle, (2.0 * r * b - a * a - b * b) / (r + r.signum() * dist))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_finds_the_nearest_entry() {
        let odr = opendrive::read(sim::scene::DEMO_XODR).unwrap_or_default();
        let road = RoadEval::new(&odr.roads[0]);
        let f = RoadFrame::new(&road);
        let brute = |x: f64, y: f64| {
            f.table.iter().map(|st| (st.x - x).powi(2) + (st.y - y).powi(2)).fold(f64::INFINITY, f64::min)
        };
        // Points around the road out to 400 m (beyond the 300 m ring search too).
        for k in 0..2000 {
            let a = k as f64 * 0.7391;
            let r = (k % 97) as f64 * 4.2;
            let (x, y) = (60.0 + r * a.cos(), 40.0 + r * a.sin());
            let i = f.nearest(x, y);
            let d = (f.table[i].x - x).powi(2) + (f.table[i].y - y).powi(2);
            assert!((d - brute(x, y)).abs() < 1e-9, "({x}, {y}): {d} vs {}", brute(x, y));
        }
    }

    #[test]
    fn the_series_near_a_station_is_the_circle() {
        // (Δs, t) on the circle of radius r through the station, centre (0, r): the arc to the
        // foot from atan2, and r - sign(r)·hypot(a, b - r) (as (r² - hypot²) / (r + sign(r)·
        // hypot): no cancellation of two radii).
        let exact = |r: f64, a: f64, b: f64| {
            let d = a.hypot(b - r);
            (r * (a / r).atan2(1.0 - b / r), (2.0 * r * b - a * a - b * b) / (r + r.signum() * d))
        };
        let mut worst: f64 = 0.0;
        for r in [-25.0, -400.0, 7.0, 60.0, 1e5] {
            let st = Station { s: 0.0, x: 0.0, y: 0.0, tangent: [1.0, 0.0], curvature: 1.0 / r, radius: r };
            for i in 0..400 {
                // Across out to half the radius (where the walk takes the circle), along to the
                // series' end, |q| < 0.01.
                let b = (i as f64 / 200.0 - 1.0) * 0.5 * r.abs().min(40.0);
                let a = ((i * 37 % 101) as f64 / 50.0 - 1.0) * 0.0099 * (r - b).abs().min(1.0);
                let (ds, t) = on_circle(&st, a, b);
                let (ws, wt) = exact(r, a, b);
                worst = worst.max((ds - ws).abs()).max((t - wt).abs());
            }
        }
        assert!(worst < 1e-12, "worst {worst} m");
    }
}
